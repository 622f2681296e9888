"""Issue 23, the thirteenth newcomer probe: 53 everyday functions in domains and styles
the twelve earlier probes did not cover (newcomer_probe13_fns.py): signal processing (a
Hann-windowed FFT's magnitudes with ``np.fft.rfftfreq``, an FIR filter by slicing,
autocorrelation, ``np.correlate``, an exponential smoother by a list, an ``irfft``
low-pass, ``np.polyfit`` detrending), statistics (Student-t and von Mises
log-likelihoods, a kernel density, Huber/Tukey chosen by a string in an ``elif`` chain
ending in ``raise``, the median absolute deviation, ``np.cov(aweights=)``, a probit
likelihood by ``scipy.special.log_ndtr``, ``logsumexp(b=)``), geometry (quaternions,
barycentric coordinates, the shoelace area, signed distance functions with Python
``min``/``max``, point-to-segment distance, haversine), finance (Black-Scholes by
``erf`` in a lambda, portfolio variance, compound interest in a counted ``while``, the
Sharpe ratio, a seeded Monte-Carlo price), classic ML (SVM hinge, a GMM E-step, soft
k-means with a keyword-only temperature, PCA by SVD, kernel ridge, a dict-of-parameters
MLP), small simulators (Verlet with energies every fifth step, the periodic 2-D heat
equation, a soft Ising energy, a wave equation by tuple swaps, Lotka-Volterra over a
dict) and Python styles (early returns, ``elif`` chains on config strings, a bisection
in a counted ``while``, a walrus in an ``if``, ``match`` with a capture, nested helpers
with keyword-only defaults, ``continue``, ``sorted`` dict items in a ``zip``, ``for ...
else``, a dict of lambdas, ``enumerate(start=)``, ``*`` unpacking of an array in a
call, ``isinstance`` on a parameter, ``__slots__``), through grad at calls 1, 3 and 10,
value_and_grad, jvp, vmap of grad, hessian, jit of grad on both backends, grad at
special inputs (also after ten ordinary calls), vmap of grad there and the caller
writing into every transform's results; in float64 and float32 against JAX on the same
source (``newcomer_harness.twin``) or central differences where JAX cannot run a stage.

The sweep (``-m slow``: each function compiles dozens of JAX programs) pins each
function's class (``python tools/probe_tally.py`` counts them).  The default tier runs a
cheap subset against central differences (no JAX)."""

from __future__ import annotations

import newcomer_harness as H  # (pytest puts this directory on sys.path)
import newcomer_probe13_cases as C

# the probe's classes (newcomer_harness.classify), per function; every function not
# named here is accepted and correct under every transform tried, in both dtypes
EXPECTED: dict[str, str] = {
    # jit of grad on the JAX backend: Python's `min(max(q[0], q[1]), 0.0)` on traced
    # values, refused by s2s and by jax.jit alike (vmap of grad was an internal
    # TypeError, `np.where` of a value and a path's None, until this probe)
    "sdf_union": "both refuse",
    # (wave_leapfrog_swap: ok since lists18, split_like of a list batched by its items'
    # kinds; vmap of grad and hessian of `np.concatenate([edge, u[2:] - ..., edge])`
    # carried by the tuple swap `u_prev, u = u, 2 * u - u_prev + c2 * lap` were refused:
    # "`split_like` of a list the function did not build")
}
# float32 only
EXPECTED_F32: dict[str, str] = {
    # value_and_grad's value and jvp's float64 where JAX's are float32, as NumPy's own
    # function gives: `* np.sqrt(periods)` of the int 252 is a float64 scalar
    "sharpe_ratio": "dtype",
    # likewise: `u * np.arange(u.size).reshape(u.shape)` (float32 times int64) is float64
    "heat_2d_periodic": "dtype",
    # likewise: `y * np.arange(1, x.shape[0] + 1)` (float32 times int64) is float64
    # (refused until a last `case other:` joined match_case.py's literal chain)
    "match_string_capture": "dtype",
}
# Until this probe (fixed in it, tests/frontend/test_probe13_fixes.py):
# windowed_fft_magnitude WRONG (grad at ones(6): np.abs of a complex zero bin had
# derivative 1, JAX's 0) and refused (`np.fft.rfftfreq`); robust_loss_by_name,
# elif_chain_optimizer refused (`else: raise` in an `elif` chain); probit_log_ndtr
# refused (`scipy.special.log_ndtr`); black_scholes_call refused on the JAX backend
# (`scipy.special.erf` in a lambda read SciPy's); sorted_items_zip refused
# (`sorted(WEIGHTS.items())` of a module dict in a zip); sdf_union internal (above).
# After it: weighted_cov_aweights refused (`np.cov(pts, aweights=w)`: "got an unexpected
# keyword argument 'aweights'") until np.cov's weights became a form (test_weighted_cov.py).
# match_string_capture refused under jvp of a lambda (`match kind:` ending in `case other:
# raise`, `kind` a helper's parameter: "a value known only when the function runs") until
# a last capture case joined the literal chain (test_match_capture.py).
# detrend_polyfit refused (`np.polyfit(t, x, 1)`: "has no derivative rule in s2s yet")
# until np.polyfit became a form of vander and pinv (test_polyfit_form.py).
# star_unpack_call refused (`combine(*np.sin(x))`, `combine(x[0], *x[1:3], d=x[3])`: "`*`
# here spreads a value whose length s2s does not know") until star_items.py took any
# spread expression and trailing parameters named by keyword (test_star_spread_expr.py).


test_probe_sweep = H.sweep_test(C, EXPECTED, EXPECTED_F32)


def test_cheap_subset_against_central_differences() -> None:
    """The default tier's share of the probe (no JAX): grad of a Lotka-Volterra step
    over a dict state built by a dict comprehension, and of a function with keyword-only
    parameters, three calls each, against central differences."""
    H.check_grad_against_fd(C.PROBE, ("lotka_volterra_dict", "kwonly_scale_shift"))
