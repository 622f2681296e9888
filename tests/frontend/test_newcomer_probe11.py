"""Issue 23, the eleventh newcomer probe: 50 everyday functions in styles the ten earlier
probes did not cover (newcomer_probe11_fns.py): training steps and pytrees written
without ``jax.tree_util`` (dicts zipped with grads, f-string keys, nested tuples,
``NamedTuple._replace``, ``dataclasses.replace``, a history dict of lists, a callable
class), NumPy idioms (an ``np.einsum`` spec zoo, ``np.where`` chains, ``np.clip`` then
``np.log``, norms of negative order, 1-D ``@``, ``[:, None]`` broadcasting, ragged joins,
``np.roll``/``np.diff``/``np.kron``/``np.tril``/``np.trace`` with their keywords, a
Cholesky log-determinant, ridge regression, activations, RMS and layer norm, padded
attention, ``np.average``/``np.quantile``/``np.cov``/``np.convolve``, ``np.unravel_index``,
``dtype=`` keywords) and Python forms (Newton on Python floats, ``try``/``else``/``finally``,
asserts with ``%`` and ``format``, ``math.*`` on Python floats, ``np.float32(...)``,
keyword-only arguments, ``**{**a, **b}``, ``map``/``sorted``/``min`` with keys,
``divmod``, ``zip(strict=True)``, ``while`` over a counter, in-place rows and overlapping
slices), through grad at calls 1, 3 and 10, value_and_grad, jvp, vmap of grad, hessian,
jit of grad on both backends, grad at special inputs (also after ten ordinary calls),
vmap of grad there and the caller writing into every transform's results; in float64
and float32 against JAX on the same source (``newcomer_harness.twin``) or central
differences where JAX cannot run it.

The sweep (``-m slow``: each function compiles dozens of JAX programs) pins each
function's class (``python tools/probe_tally.py`` counts them); the functions JAX
cannot run as written (``FD_ORACLE``) are checked against central differences under
every transform.  The default tier runs a cheap subset against central differences
(no JAX) and the fixes' tests."""

from __future__ import annotations

import newcomer_harness as H  # (pytest puts this directory on sys.path)
import newcomer_probe11_cases as C
import newcomer_probe11_fns as F
import numpy as np
import pytest
from support import HAVE_JAX

import s2s

DTYPES = [np.float64, np.float32]

# the probe's classes (newcomer_harness.classify), per function; every function not
# named here is accepted and correct under every transform tried, in both dtypes
EXPECTED: dict[str, str] = {
    # (recursive_tuple_map: ok since recursion17, each recursive `_tmap(f, u)` planned
    # for its item's structure, `isinstance(u, tuple)` decided by it (nested_types.py);
    # it was refused: "`f` is a function here, used as a value"; namedtuple_replace_step:
    # ok since objects17, a constant slice of a NamedTuple has a known length)
    # (dataclass_replace_cfg: ok since refused19a, the adapter of `lambda x: f(x)`'s call
    # leaves the default object out as the call did (it passed the view of its fields,
    # a dict, to the function: TypeError from emitted code under grad of the lambda, and
    # vmap of grad and hessian, which transform that code, were refused, located:
    # "`dataclasses.replace` is supported here on a dataclass object this function built
    # or was given"); grad, value_and_grad, jvp, jit ran since objects17)
    # (concat_ragged_loop: ok since lists18, the gradient of `np.concatenate(parts)` of a
    # list grown in a loop is a list as long, batched and differentiated again; hessian
    # and vmap of grad were refused: "cannot be differentiated or batched again")
    # `assert np.all(np.isfinite(x))` under s2s.jit(..., backend="jax"): refused, located
    # (a Python conversion of a traced value), as jax.jit refuses it
    "assert_isfinite_guard": "both refuse",
}
# float32 only
EXPECTED_F32: dict[str, str] = {
    # value_and_grad's value and jvp's float64 where JAX's are float32, as NumPy's own
    # function gives: `np.diff(..., prepend=0.0)` of float32 is float64
    # (docs/python-subset.md)
    "diff_prepend_append": "dtype",
    # likewise: `np.full(x.shape, 0.1 * i)` of a Python float is float64 (JAX's is
    # weak); its `range(n_layers)` runs in a callee too since containers17 (a default
    # int the call knows binds the callee's copy: frontend/bound_params.py `ints_bound`)
    "fstring_keyed_params": "dtype",
    # likewise NumPy's own: `s / np.sqrt(d)` of an int `d` (a NumPy float64 scalar);
    # `np.float_power` (always float64)
    "padded_attention": "dtype",
    "elementwise_zoo": "dtype",
    # (`early_return_named_stage`, `y = y * arg` with `arg` a Python float of a
    # tuple-of-tuples default read at a loop's counter through a callee, gave jvp a
    # float64 value: each position's stack read as an array; now each item as Python
    # reads it, `list_item`, ir/unroll_reads.py: ok, tests/frontend/test_dtype17.py)
}


@pytest.mark.slow
@pytest.mark.every_case
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", list(C.CASES))
def test_probe_sweep(name, dtype) -> None:
    """Each function's class is the one recorded: accepted and correct, or refused
    with a located TransformError (never WRONG, never an internal error)."""
    label, verdicts = C.classify(name, C.twin(), dtype)
    assert label == H.pinned(name, dtype, EXPECTED, EXPECTED_F32), verdicts


# ---- no JAX oracle: central differences of every transform ---------------------------------

TRANSFORMS = {  # name: (make, result -> the gradient's part compared)
    "grad": (s2s.grad, lambda g, x: g(x)),
    "jit": (lambda f: s2s.jit(s2s.grad(f)), lambda g, x: g(x)),
    "value_and_grad": (s2s.value_and_grad, lambda g, x: g(x)[1]),
    "vmap_grad": (lambda f: s2s.vmap(s2s.grad(f)), lambda g, x: g(np.stack([x, -x]))[1]),
    "jvp": (lambda f: f, lambda f, x: s2s.jvp(f, (x,), (np.ones_like(x),))[1]),
    "hessian_row": (s2s.hessian, lambda h, x: h(x).reshape(x.size, -1)[0]),
}


def _expected(key, f, x):
    if key == "hessian_row":
        eps = 1e-4
        e = np.zeros_like(x)
        e.flat[0] = eps
        return ((H.fd_grad(f, (x + e,), 1e-5) - H.fd_grad(f, (x - e,), 1e-5)) / (2 * eps)).ravel()
    if key == "vmap_grad":  # (the second example, -x)
        return H.fd_grad(f, (-x,), 1e-6)
    g = H.fd_grad(f, (x,), 1e-6)
    return np.sum(g) if key == "jvp" else g


def against_fd(f, key, x0, calls):
    make, run = TRANSFORMS[key]
    t = make(f)
    for c in range(1, calls + 1):
        x = x0 * (1.0 + 0.05 * c)
        tol = (1e-4, 1e-4) if key == "hessian_row" else (1e-6, 1e-8)
        np.testing.assert_allclose(run(t, x), _expected(key, f, x), *tol,
                                   err_msg=f"{key} call {c}")


@pytest.mark.slow
@pytest.mark.parametrize("key", list(TRANSFORMS))
@pytest.mark.parametrize("name", sorted(C.FD_ORACLE - set(EXPECTED)))
def test_no_jax_oracle_against_central_differences(name, key) -> None:
    """``y[1:] += y[:-1]`` (NumPy reads the overlapping operand before writing),
    ``np.mean([...])`` of a list of scalars and rows filled into ``np.empty_like``:
    every transform gives the derivative of what NumPy computes, three calls."""
    against_fd(getattr(F, name), key, C.CASES[name][0][0], 3)


def test_cheap_subset_against_central_differences() -> None:
    """The default tier's share of the probe (no JAX): grad of an in-place add of
    overlapping slices and a branch on ``x.ndim`` (a 1-D and a 2-D input: two
    specializations), three calls each, against central differences."""
    for name, xs in (("overlapping_inplace_slices", [C.X5]),
                     ("ndim_branch_promote", [C.X4, C.X4.reshape(2, 2)])):
        f = getattr(F, name)
        g = s2s.grad(f)
        for x0 in xs:
            for c in range(3):
                x = x0 * (1.0 + 0.1 * c)
                np.testing.assert_allclose(g(x), H.fd_grad(f, (x,), 1e-6), rtol=1e-6,
                                           atol=1e-8, err_msg=f"{name} call {c}")
