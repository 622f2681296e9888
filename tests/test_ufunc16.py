"""Issue 23 (ufunc16): three calls of probe 10 that s2s refused where jax.grad runs them.

* ``np.logaddexp.reduce`` / ``np.logaddexp2.reduce``: a primitive (the stable
  log-sum-exp: the gradient is the softmax, NaN at a row all ``-inf`` as JAX's); the
  other ufuncs' ``.reduce``/``.accumulate`` are ``np.sum``... (``primitives/forms.py``);
* ``np.bincount(labels, weights=w, minlength=n)``: a primitive linear in ``w`` (its
  cotangent ``g[labels]``), whose length is the labels' values' (computed when the code
  runs; the specializer leaves code with it generic); batched labels refused;
* ``np.finfo(x.dtype).eps`` (``.max``, ``np.iinfo``...) and ``x.dtype.type(v)``: read
  when the code runs, so each call gets its own dtype's constants.

Oracles: central differences and Python loops (default tier), ``jax.grad`` of the same
source on jax.numpy (``-m slow``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import ufunc16_fns as F
from support import HAVE_JAX, assert_close_to, central_grad, fd_grad, jax_twin

import s2s

M = np.array([[0.3, -1.0, 2.0], [0.5, 0.7, -0.2]])
W = np.array([0.3, -1.0, 2.0, 0.5, 0.7])


def _fd(f, x, *rest):
    return fd_grad(lambda v: f(v, *rest), (np.asarray(x, np.float64),), 0)[0]


# ---- default tier: central differences, Python loops -------------------------------------


@pytest.mark.slow  # (the default tier's budget: the special values below stay there)
def test_logaddexp_reduce_against_central_differences() -> None:
    """axis 0 (the default), -1 with keepdims, None, a tuple, logaddexp2, ``initial=``:
    grad at calls 1, 2, 3 of one transform (values changing) against central
    differences, float64; float32's gradient float32 and close to it."""
    g = s2s.grad(F.logaddexp_forms)
    for c in (1.0, -1.7, 3.1):
        np.testing.assert_allclose(g(M * c), _fd(F.logaddexp_forms, M * c), rtol=1e-6,
                                   atol=1e-8)
    g32 = g(M.astype(np.float32))
    assert g32.dtype == np.float32
    np.testing.assert_allclose(g32, _fd(F.logaddexp_forms, M), rtol=2e-4, atol=1e-5)
    np.testing.assert_allclose(s2s.grad(F.logaddexp_initial)(M),
                               _fd(F.logaddexp_initial, M), rtol=1e-6, atol=1e-8)


def _softmax_rows(m):
    """A Python loop: each row's exp(x - max) / sum (the oracle's softmax)."""
    out = np.zeros_like(m)
    for i, row in enumerate(m):
        top = max(row)
        e = [math.exp(v - top) for v in row]
        out[i] = [v / sum(e) for v in e]
    return out


def test_logaddexp_reduce_special_values() -> None:
    """An element at -inf weighs 0; huge values (1000: exp overflows) give the
    softmax; a row all -inf gives NaN, as jax.grad of jnp.logaddexp.reduce (checked
    in the slow tier)."""
    w = np.array([1.0, -2.0, 0.5])
    m = np.array([[-np.inf, 0.3, 1.0], [1000.0, 1000.0, 999.0], [-np.inf, -np.inf, -np.inf]])
    t = s2s.grad(F.logaddexp_rows)
    for _ in range(2):  # (the first call's code, then the signature's specialized code)
        g = t(m)
        want = _softmax_rows(m[:2]) * w[:2, None]
        np.testing.assert_allclose(g[:2], want, rtol=1e-12)
        assert g[0, 0] == 0.0 and np.isnan(g[2]).all()


@pytest.mark.slow  # (the default tier's budget)
def test_logaddexp_reduce_size_one_and_zero_axes() -> None:
    """A size-1 axis weighs 1; a size-0 axis gives an empty gradient, and the value
    NumPy's own (-inf per row)."""
    one = s2s.grad(F.logaddexp_rows)(np.array([[0.7], [-3.0]]))
    np.testing.assert_array_equal(one, [[1.0], [-2.0]])
    value, empty = s2s.value_and_grad(F.logaddexp_rows)(np.zeros((2, 0)))
    assert empty.shape == (2, 0)
    np.testing.assert_equal(value, F.logaddexp_rows(np.zeros((2, 0))))  # (-inf + inf)


def test_bincount_weights_against_central_differences() -> None:
    """Labels changing between calls (the counts' length with them: 3, 5, then 3 from
    minlength; a label left out): grad at each against central differences (float32
    in the slow tier's sweep)."""
    g = s2s.grad(F.bincount_sums)
    for labels, c in ((np.array([0, 2, 0, 1, 2]), 1.0), (np.array([4, 0, 4, 1, 1]), -0.6),
                      (np.array([1, 1, 1, 1, 1]), 1.3)):
        np.testing.assert_allclose(g(W * c, labels), _fd(F.bincount_sums, W * c, labels),
                                   rtol=1e-6, atol=1e-8)


@pytest.mark.slow  # (the default tier's budget)
def test_bincount_under_vmap() -> None:
    """vmap of grad over batched weights (labels shared) against each example's own
    central differences; batched labels refused, located (each example's counts would
    have their own length)."""
    labels = np.array([3, 0, 0, 3, 1])
    batch = np.stack([W, -2.0 * W, W[::-1]])
    got = s2s.vmap(s2s.grad(F.bincount_positional), in_axes=(0, None))(batch, labels)
    for row, w in zip(got, batch):
        np.testing.assert_allclose(row, _fd(F.bincount_positional, w, labels), rtol=1e-6)
    with pytest.raises(s2s.TransformError, match=r"(?s)differ per example.*np\.bincount.*"
                       r"labels unbatched"):
        s2s.vmap(s2s.grad(F.bincount_positional))(batch, np.stack([labels] * 3))


def test_finfo_follows_the_calls_dtype() -> None:
    """``np.sum(x) * np.finfo(x.dtype).eps``: the gradient is the call's own eps,
    float64 then float32 then float64 through one transform (the specialized code of
    each signature), never the first call's."""
    g = s2s.grad(F.eps_scaled)
    for dtype in (np.float64, np.float32, np.float64):
        got = g(np.array([0.5, -2.0], dtype))
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, np.full(2, np.finfo(dtype).eps, dtype))


@pytest.mark.slow  # (the default tier's budget)
def test_finfo_under_jit_and_dtype_type_cast() -> None:
    """s2s.jit (NumPy backend) of the same: each call's own eps; ``x.dtype.type(v)`` a
    cast whose derivative flows (central differences; JAX's twin cannot run it: a
    NumPy scalar type of a tracer)."""
    jitted = s2s.jit(s2s.grad(F.eps_scaled))
    for dtype in (np.float32, np.float64, np.float32):
        got = jitted(np.array([0.5, -2.0], dtype))
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, np.full(2, np.finfo(dtype).eps, dtype))
    x = np.array([0.4, -1.5, 2.0])
    for t in (s2s.grad(F.dtype_cast), s2s.jit(s2s.grad(F.dtype_cast))):
        np.testing.assert_allclose(t(x), central_grad(F.dtype_cast, x), rtol=1e-7)
    got32 = s2s.grad(F.dtype_cast)(x.astype(np.float32))
    assert got32.dtype == np.float32


# ---- slow tier: jax.grad (and jvp, vmap, hessian) of the same source on jax.numpy --------

M_TIES = np.array([[1.0, 1.0, 0.5], [1.0, -2.0, 1.0]])  # (max/min ties: shared evenly)
LABELS = np.array([0, 4, 1, 1, 0])
CASES = {  # name: (the differentiated array, the other arguments)
    "logaddexp_forms": (M, ()),
    "logaddexp_rows": (M, ()),
    "ufunc_methods": (M, ()),
    "ufunc_methods_ties": (M_TIES, ()),
    "bincount_sums": (W, (LABELS,)),
    "bincount_positional": (W, (LABELS,)),
    "finfo_consts": (np.array([0.3, -1.0, 2.0]), ()),
}
SPECIAL = np.array([[-np.inf, 0.3, 1.0], [1000.0, 1000.0, 999.0], [-np.inf, -np.inf, -np.inf]])


def _fn(module, name):
    return getattr(module, name.replace("_ties", ""))


def _in_axes(f):
    return (0, None, None)[:f.__code__.co_argcount]  # (the labels: shared)


def _transforms():
    """name: (s2s's, JAX's), each made of the function and called as ``t(x, *rest)``."""
    import jax

    return {
        "grad": (s2s.grad, jax.grad),
        "vmap_grad": (lambda f: s2s.vmap(s2s.grad(f), in_axes=_in_axes(f)),
                      lambda f: jax.vmap(jax.grad(f), in_axes=_in_axes(f))),
        "jvp": (lambda f: lambda x, *r: s2s.jvp(lambda v: f(v, *r), (x,), (np.cos(x),)),
                lambda f: lambda x, *r: jax.jvp(lambda v: f(v, *r), (x,), (np.cos(x),))),
        "hessian": (s2s.hessian, jax.hessian),
        "jit_numpy": (lambda f: s2s.jit(s2s.grad(f)), jax.grad),
        "jit_jax": (lambda f: s2s.jit(s2s.grad(f), backend="jax"), jax.grad),
    }


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("key", ["grad", "vmap_grad", "jvp", "hessian", "jit_numpy",
                                 "jit_jax"])
@pytest.mark.parametrize("name", list(CASES))
def test_against_jax(name, key, dtype) -> None:
    """Each function under each transform, at calls 1, 2, 3 of one transform object
    (values changing), against JAX on the same source; float32 within float32's
    rounding, dtypes JAX's (NumPy's bincount sums float32 weights as float64: the jvp's
    value and tangent there are NumPy's own function's, float64).  s2s.jit on JAX of
    bincount: its labels are traced, so the counts' length is unknown there: refused,
    located (JAX's own jit refuses alike)."""
    J = jax_twin(F)
    x0, rest = CASES[name]
    mine, theirs = _transforms()[key]
    f, jf = _fn(F, name), _fn(J, name)
    if key == "jit_jax" and name.startswith("bincount"):
        with pytest.raises(s2s.TransformError, match=r"(?s)ufunc16_fns\.py.*np\.bincount"):
            mine(f)(x0.astype(dtype), *rest)
        return
    t, jt = mine(f), theirs(jf)
    for c in (1.0, -0.7, 1.3):
        x = (x0 * c).astype(dtype)
        if key == "vmap_grad":
            x = np.stack([x, (x * 0.5 - 0.1).astype(dtype)])
        got, want = t(x, *rest), jt(x, *rest)
        bincount_jvp = key == "jvp" and name.startswith("bincount")
        assert_close_to(got, want, dtype, check_dtype=not bincount_jvp, f32=2e-3,
                        scale_atol=True)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
def test_special_values_against_jax() -> None:
    """-inf elements, huge values, a row all -inf (NaN, JAX's too), a size-1 and a
    size-0 axis: grad of logaddexp.reduce against jax.grad, NaN where JAX's is."""
    import jax

    J = jax_twin(F)
    for m in (SPECIAL, SPECIAL[:2, :1], np.zeros((2, 0))):
        got = s2s.grad(F.logaddexp_rows)(m)
        want = np.asarray(jax.grad(J.logaddexp_rows)(m))
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
