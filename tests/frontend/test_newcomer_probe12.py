"""Issue 23, the twelfth newcomer probe: 49 everyday functions in styles the eleven
earlier probes did not cover (newcomer_probe12_fns.py): training-loop fragments (a
momentum optimizer object with a dict of velocities, clipping by a global norm, a
schedule left by ``break``, a ``SimpleNamespace`` config, Sinkhorn, a VAE ELBO), physics
(a spring chain, RK4 over a tuple state, pair energies by ``np.triu``, rotations built by
``np.array`` of scalars), statistics (``scipy.linalg.solve_triangular`` in a Gaussian
log-likelihood, robust losses, Poisson regression, soft k-means, ``np.nansum`` of a
NaN-masked residual), signal processing (``np.cumsum`` of ``np.insert``, ``np.gradient``,
pooling by ``reshape``, a 2-D convolution by a comprehension, an FFT, a ``deque``), small
layers (an LSTM cell by ``np.split``, batch norm on an object), string-driven code
(``getattr(np, name)``, ``str.split``, ``getattr(self, f"...")``) and Python idioms
(``itertools``, ``functools.reduce`` with ``operator``, walrus, ``match``, chained
comparisons, star unpacking, ``dict(zip(...))``, ``defaultdict``, ``with``, tuple-swap
and list recurrences, ``np.nonzero`` of constants, complex intermediates, ``None``
defaults), through grad at calls 1, 3 and 10, value_and_grad, jvp, vmap of grad, hessian,
jit of grad on both backends, grad at special inputs (also after ten ordinary calls),
vmap of grad there and the caller writing into every transform's results; in float64
and float32 against JAX on the same source (``newcomer_harness.twin``) or central
differences where JAX cannot run a stage.

The sweep (``-m slow``: each function compiles dozens of JAX programs) pins each
function's class (``python tools/probe_tally.py`` counts them).  The default tier runs a
cheap subset against central differences (no JAX)."""

from __future__ import annotations

import newcomer_harness as H  # (pytest puts this directory on sys.path)
import newcomer_probe12_cases as C

# the probe's classes (newcomer_harness.classify), per function; every function not
# named here is accepted and correct under every transform tried, in both dtypes
EXPECTED: dict[str, str] = {
    # `self.velocity[k] = v` in a method of an optimizer object built in the function (an
    # item written into a dict field): "only a local array can be assigned into" (its
    # `self.lr, self.beta = lr, beta` in `__init__` runs since this probe; since objects18
    # `params = opt.step(params, grads)`, a method setting attributes and returning a
    # value, is lowered; left: the item write, and the loop then carries `velocity`
    # growing from `{}` to `{"a", "b"}`, refused even for a local dict: "changes
    # structure inside the loop"; since refused19a a local dict's `vel.get(k, 0.0)` and
    # `vel[k] = v` in one `for k, p in params.items()` run, test_dict_keys19.py)
    "momentum_object_dict": "refused",
    # (rk4_tuple_state: ok since lists18, the step loop's `state = tuple(... for s, p, q,
    # r, w in zip(state, k1, ...))` unrolled for the tuple's length before the loop; it
    # was refused: "a tuple, list or dict argument can only be indexed with a constant
    # key here")
    # (deque_window: ok since refused19b, `sum(buf)` of the window in the loop is the sum
    # of `buf[buf_start:]`, frontend/windows.py; it was refused: "the list `buf_2` grown
    # in the loop is not used afterwards", and before containers18 "s2s cannot build
    # `collections.deque` inside the function: it defines `__new__`")
    # (defaultdict_accumulate: ok since refused19b, `for k, v in zip("abab", x)` unrolled
    # over the string's items, each key known, an `x` shorter than it raising at the
    # loop's line, frontend/keyed_zips.py; it was refused: "the key `k` is known only
    # when the function runs", and before containers18 "it defines `__new__`")
    # `with Counted() as c:` of a user context manager: "a `with` over this context: its
    # effect is on something s2s does not follow" (np.errstate, warnings.catch_warnings
    # only). Kept refused (misc18): its `__enter__` changes `c.entered`, which the
    # function returns; running `__enter__`/`__exit__` as forward statements is sound
    # only where they touch nothing the function computes, which s2s does not check
    "with_context_manager": "refused",
    # (lstm_cell_split: ok since lists18, the gradient of `np.concatenate([x, h])` in the
    # loop splits by the list popped from the tape, batched by its items' kinds; vmap of
    # grad and hessian were refused: "`split_like` of a list the function did not build")
    # (`batchnorm_object_train` was refused: `self.mean = ...` in `BatchNorm.__call__`
    # "the caller passed it"; `y = bn(x, training=True)` runs since objects18, the
    # method written returning `(value, fields)`: frontend/stateful.py)
    # (legendre_list_recurrence: ok since lists18, a callee's `zip(coefs, p)` reads its
    # tuple default `coefs` at the loop's run-time counter; it was refused under jvp, vmap
    # of grad, hessian: "a tuple, list or dict argument can only be indexed with a
    # constant key here")
    # (getattr_method_fstring: ok since containers18, a method naming its function by
    # a string field, `getattr(self, f"act_{self.kind}")`, is made per the object's
    # strings and `for layer in layers` of such objects unrolled (named_attrs.py); it was
    # refused: "an f-string of values known only when the function runs")
    # (chain_from_iterable: ok since containers18, `for v in chain.from_iterable(gs)`
    # is a loop in a loop (iterations.py); it was refused: "`itertools.chain.from_iterable`
    # (builtin_function_or_method) is not a function s2s can transform")
}
# float32 only
EXPECTED_F32: dict[str, str] = {
    # value_and_grad's value and jvp's float64 where JAX's are float32, as NumPy's own
    # function gives: `power * np.arange(power.size)` (float32 times int64) is float64
    "fft_power_spectrum": "dtype",
}


test_probe_sweep = H.sweep_test(C, EXPECTED, EXPECTED_F32)


def test_cheap_subset_against_central_differences() -> None:
    """The default tier's share of the probe (no JAX): grad of a chain of tuple-swap
    recurrences (``t0, t1 = t1, 2 * x * t1 - t0``) and of ``dict(zip(...))`` with
    ``dict(lr=0.1, **{...})``, three calls each, against central differences."""
    H.check_grad_against_fd(C.PROBE, ("chebyshev_tuple_swap", "dict_zip_keys"))
