"""Issue 23, the fourteenth newcomer probe: 52 everyday functions in territory the
thirteen earlier probes did not cover (newcomer_probe14_fns.py): optimisers written as
functions of the parameters (RMSProp, Adagrad over a dict state, Nesterov, Lion's sign
update, clipping by value, a damped Newton step), losses (Crammer-Singer hinge by an
``np.eye(dtype=bool)`` mask, log-cosh, Jensen-Shannon with ``np.where``, 1-D
Wasserstein by ``np.sort``, ranking and cosine-embedding hinges, a full-covariance
Gaussian KL by ``slogdet``), physics (orbital energy with ``np.cross``, an FPU chain,
an XY-model energy, an inertia tensor by ``np.einsum``, masked pairwise gravity, a soft
integrate-and-fire neuron), statistics (a Poisson mixture by ``np.logaddexp.reduce``,
Laplace, zero-inflated Poisson, AR(1), Gamma by ``xlogy``, robust kernels chosen by a
string with early returns ending in ``raise``, a smooth KS statistic), signal
processing (``np.convolve`` moving averages, ``np.diff`` chains, Hamming-windowed
frames, a soft argmax), geometry (squared distances by the Gram trick, Rodrigues'
rotation, a mesh area, Procrustes by SVD, ``np.hypot``/``np.arctan2``) and Python
styles (``@staticmethod``/``@classmethod`` callees, ``while True`` with ``break``,
helpers with ``**opts``, ``enumerate`` and ``zip`` over dict items, ``cfg = cfg or
{...}`` read by ``.get``, combined masks, ``np.einsum`` strings, ``np.clip(..., None,
hi)``, ``sum(..., start=)``, parameters unflattened by a dict of shapes,
``np.diag(k=)``, ``np.piecewise``, ``np.array_split``, ``list.sort(key=)``, a
hand-written ``scan``, ``np.argmin`` assignments), through grad at calls 1, 3 and 10,
value_and_grad, jvp, vmap of grad, hessian, jit of grad on both backends, grad at
special inputs (also after ten ordinary calls), vmap of grad there and the caller
writing into every transform's results; in float64 and float32 against JAX on the same
source (``newcomer_harness.twin``) or central differences where JAX cannot run a stage.

The sweep (``-m slow``: each function compiles dozens of JAX programs) pins each
function's class (``python tools/probe_tally.py`` counts them).  The default tier runs a
cheap subset against central differences (no JAX)."""

from __future__ import annotations

import newcomer_harness as H  # (pytest puts this directory on sys.path)
import newcomer_probe14_cases as C

# the probe's classes (newcomer_harness.classify), per function; every function not
# named here is accepted and correct under every transform tried, in both dtypes
EXPECTED: dict[str, str] = {
    # vmap of grad and hessian: `np.clip(_quad_grad(w), -limit, limit)` with `limit` a
    # parameter's default: np.clip's rules test `a_min is None` on the run-time value
    # `-limit`, an `if` whose paths bind `a_share` as 1.0 or an array, in the step loop:
    # "vmap cannot batch this: `a_share` bound here has 1 dimension(s) per example, and 0
    # on the other path of its `if`" (grad, jvp, jit run; a constant bound folds the test)
    "clip_by_value_sgd": "refused",
}
# float32 only
EXPECTED_F32: dict[str, str] = {
    # value_and_grad's value float64 where JAX's is float32, as NumPy's own function
    # gives: `w @ np.arange(n)` (float32 times int64) is float64
    "soft_argmax_peak": "dtype",
}
# Until this probe (fixed in it, tests/frontend/test_probe14_fixes.py):
# zip_dict_items_layers internal (`for (name, (w, b)), scale in zip(LAYERS.items(), ...)`
# of a module dict: TypeError 'dict_items' object is not subscriptable; its values, tuples
# of arrays of two shapes, also an internal ValueError of np.ndim in analysis.is_scalar);
# handwritten_scan refused (`carry, ys = init, []` then `ys.append(y)`: "needs a list this
# function built itself"); unflatten_params_dict refused (`params, offset = {}, 0` then
# `params[name] = ...`: "may share memory with an argument"; JAX refuses its
# `int(np.prod(shape))` of a tuple, central differences are grad's oracle);
# masked_gravity_potential, crammer_singer_hinge refused (`np.eye(n, dtype=bool)`: "got
# an unexpected keyword argument 'dtype'"); robust_kernel_by_name refused (`if ...:
# return` twice, then `raise`: "`raise` is kept only as the whole body of an `if` with no
# `else`"); string_keyed_config_get refused (`cfg = cfg or {...}` then `cfg.get(...)`:
# "the array method `.get()` is not supported"); hamming_frames refused (`np.hamming`:
# "has no derivative rule in s2s yet"); array_split_uneven refused (`enumerate` of
# `np.array_split(x, 2)` in a generator: "a tuple, list or dict argument can only be
# indexed with a constant key here"); list_sort_key_lambda refused (`items.sort(key=...)`:
# "an expression statement is evaluated only for its side effect"); fpu_chain_energy
# internal under vmap of grad (`np.concatenate([[0.0], q, [0.0]])`: the constant list
# repeated along the batch with one unit axis too many, an internal ValueError; JAX's
# jnp.concatenate refuses a list item, so central differences are grad's oracle).
# Measured on this branch with grad at calls 1, 3, 10, value_and_grad, jvp, vmap of grad
# and the special inputs in float64 and float32 (clip_by_value_sgd also under every
# stage in float64); the full slow sweep's other stages (hessian, jit of grad on both
# backends, warm and vmapped specials, aliasing) were not run for every function here.


test_probe_sweep = H.sweep_test(C, EXPECTED, EXPECTED_F32)


def test_cheap_subset_against_central_differences() -> None:
    """The default tier's share of the probe (no JAX): grad of a loop over
    ``zip(LAYERS.items(), (1.0, 0.5))`` unpacking each value, and of a hand-written
    ``scan`` starting ``carry, ys = init, []``, three calls each, against central
    differences."""
    H.check_grad_against_fd(C.PROBE, ("zip_dict_items_layers", "handwritten_scan"))
