"""Issue 23's dtype defects and one internal error (dtype17): each against NumPy's own
run of the function (its dtype) and JAX (values; dtypes where JAX's rule is NumPy's),
float64 and float32.

* ``y += v`` (any operator) of a float32 array ``y`` (a local, an object's field) and a
  float64 ``v``: NumPy writes into ``y``, so it stays float32; value_and_grad's value,
  jvp and vmap gave float64 (``y = y + v``).  A NumPy scalar ``y`` (``np.sum(x)``) is
  rebound to the promoted value, as NumPy's run does.  JAX's ``+=`` rebinds, so its
  dtype there is float64: the dtype oracle is NumPy's own run.
* A Python float of a tuple-of-tuples default read at a loop's counter through a callee
  (probe 11's ``early_return_named_stage``): jvp gave float64 (each position's stack
  read as an array item), NumPy's and JAX's float32.
* ``zip(x, (1.0, 2.0, 3.0))`` with ``x`` of fewer rows: IndexError from emitted code.
* ``TABLE[k % 4]`` on the JAX backend with ``k`` static: float64 (the table's array).
* ``s2s.eval_shape`` of ``jacfwd``/``jacrev``/``hessian`` with a dict passed by keyword:
  KeyError/AttributeError from inside s2s; of a vmap mapping a 0-d leaf: IndexError.

The default tier checks NumPy's dtypes and central differences; the JAX sweep is slow."""

from __future__ import annotations

import dtype17_fns as F
import numpy as np
import pytest
from support import HAVE_JAX, central_grad, jax_twin

import s2s

X = np.array([0.3, -0.7, 1.2, 0.5])
DTYPES = [np.float64, np.float32]


def _dtypes(tree):
    if isinstance(tree, (tuple, list)):
        return tuple(d for t in tree for d in _dtypes(t))
    return (np.asarray(tree).dtype,)


def _fd(f, x):
    """Central differences of ``f`` (run as written, float64) at ``x``."""
    return central_grad(f, np.asarray(x, np.float64))


# ---- y += v keeps an array's dtype ----------------------------------------------------


@pytest.mark.parametrize("name", ["add_into_local", "add_into_field"])
def test_augmented_assignment_keeps_the_arrays_dtype(name) -> None:
    """value_and_grad, jvp and vmap of a float32 `y += v64`: float32, as NumPy's own run
    (they were float64); values against the function run in float64, the gradient
    against central differences."""
    f = getattr(F, name)
    x = X.astype(np.float32)
    assert np.asarray(f(x)).dtype == np.float32  # (NumPy, as written)
    v, g = s2s.value_and_grad(f)(x)
    p, t = s2s.jvp(f, (x,), (np.ones_like(x),))
    batch = s2s.vmap(f)(np.stack([x, -x]))
    assert _dtypes((v, g, p, t, batch)) == (np.float32,) * 5
    x64 = X.astype(np.float64)
    np.testing.assert_allclose(v, f(x64), rtol=1e-5)
    np.testing.assert_allclose(p, f(x64), rtol=1e-5)
    np.testing.assert_allclose(g, _fd(f, x64), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(t, np.sum(_fd(f, x64)), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(batch, [f(x64), f(-x64)], rtol=1e-5)


def test_a_numpy_scalar_is_rebound_promoted() -> None:
    """`s = np.sum(x); s += v64` of float32 `x`: a NumPy scalar, rebound to float64 by
    NumPy's own run, and by every transform; a float64 call stays float64 too."""
    x = X.astype(np.float32)
    assert np.asarray(F.scalar_rebinds(x)).dtype == np.float64
    v, _ = s2s.value_and_grad(F.scalar_rebinds)(x)
    p, _ = s2s.jvp(F.scalar_rebinds, (x,), (np.ones_like(x),))
    batch = s2s.vmap(F.scalar_rebinds)(np.stack([x, -x]))
    assert _dtypes((v, p, batch)) == (np.float64,) * 3
    np.testing.assert_allclose(batch, [F.scalar_rebinds(x)] * 2, rtol=1e-6)


def test_in_place_loop_accumulator_float64() -> None:
    """`acc += v64 * x ** (i + 1)` in a loop, float64: the values and gradient as
    before (the cast is the identity there)."""
    v, g = s2s.value_and_grad(F.add_into_loop)(X)
    np.testing.assert_allclose(v, F.add_into_loop(X), rtol=1e-12)
    np.testing.assert_allclose(g, _fd(F.add_into_loop, X), rtol=1e-6, atol=1e-8)


# ---- Python numbers of a tuple of tuples stay weak ---------------------------------------


def test_tuple_of_tuples_default_read_through_a_callee_stays_float32() -> None:
    """Probe 11's early_return_named_stage: jvp's primal and tangent were float64."""
    x = X.astype(np.float32)
    assert np.asarray(F.named_stages_called(x)).dtype == np.float32
    p, t = s2s.jvp(F.named_stages_called, (x,), (np.ones_like(x),))
    assert _dtypes((p, t)) == (np.float32,) * 2
    x64 = X.astype(np.float64)
    np.testing.assert_allclose(p, F.named_stages_called(x64), rtol=1e-6)
    np.testing.assert_allclose(t, np.sum(_fd(F.named_stages_called, x64)), rtol=1e-5)


# ---- zip stops at the shorter ------------------------------------------------------------


@pytest.mark.parametrize("rows", [2, 3, 4, 0])
def test_zip_of_rows_and_a_constant_tuple(rows) -> None:
    """`zip(x, (1.0, 2.0, 3.0))` walks min(len(x), 3) pairs, as Python's zip; x of 2
    rows raised IndexError from emitted code.  Values and gradients against the Python
    loop (the function as written) and central differences."""
    x = (np.arange(rows * 3, dtype=np.float64).reshape(rows, 3) + 1.0) / 5.0
    for f in (F.zip_rows, F.enumerate_zip_rows):
        v, g = s2s.value_and_grad(f)(x)
        np.testing.assert_allclose(v, f(x), rtol=1e-12)
        np.testing.assert_allclose(g, _fd(f, x), rtol=1e-6, atol=1e-8)


def test_zip_of_rows_float32() -> None:
    x = (np.arange(6, dtype=np.float32).reshape(2, 3) + 1.0) / 5.0
    v, g = s2s.value_and_grad(F.zip_rows)(x)
    assert _dtypes((v, g)) == (np.asarray(F.zip_rows(x)).dtype, np.float32)
    np.testing.assert_allclose(v, F.zip_rows(x.astype(float)), rtol=1e-6)


# ---- eval_shape with a dict passed by keyword ----------------------------------------------


def test_eval_shape_of_jacrev_with_a_dict_by_keyword() -> None:
    """eval_shape(jacrev(f), x, p=p): the dict's structure, as the call's own result
    (AttributeError from inside s2s before: the dict reached the code as a leaf)."""
    x = X.astype(np.float32)
    p = {"w": np.full(4, 0.5, np.float32), "b": np.float32(0.25)}
    shape = s2s.eval_shape(s2s.jacrev(F.tanh_dict), x, p=p)
    assert (shape.shape, shape.dtype) == ((4, 4), np.float32)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_eval_shape_of_jacobians_with_a_dict_by_keyword(dtype) -> None:
    """eval_shape(jacfwd(f), x, p=p) (jacrev, hessian, grad): the dict's structure, as
    by position and as the call's own result (KeyError / AttributeError from inside s2s
    before)."""
    x = X.astype(dtype)
    p = {"w": np.full(4, 0.5, dtype), "b": dtype(0.25)}
    for make, f in [(s2s.jacfwd, F.tanh_dict), (s2s.jacrev, F.tanh_dict),
                    (s2s.hessian, F.tanh_dict_sum), (s2s.grad, F.tanh_dict_sum)]:
        by_keyword = s2s.eval_shape(make(f), x, p=p)
        assert by_keyword == s2s.eval_shape(make(f), x, p)
        got = make(f)(x, p=p)
        assert (by_keyword.shape, by_keyword.dtype) == (got.shape, got.dtype)


def test_eval_shape_of_vmap_over_a_0d_leaf_raises_vmaps_error() -> None:
    """vmap maps a keyword's leaves at axis 0 (JAX's rule): a 0-d leaf is vmap's
    ValueError under eval_shape as in a call (an IndexError from inside s2s before)."""
    xs = np.stack([X, X])
    p = {"w": np.full(4, 0.5), "b": np.float64(0.25)}
    for run in (lambda: s2s.vmap(F.tanh_dict)(xs, p=p),
                lambda: s2s.eval_shape(s2s.vmap(F.tanh_dict), xs, p=p)):
        with pytest.raises(ValueError, match="rank should be at least 1"):
            run()


def test_eval_shape_reads_a_default_the_call_leaves() -> None:
    """np.bincount of default labels: the default is a value, as NumPy's run (and
    JAX's, which traces only what the call passes) has it: refused before ("the length
    ... depends on the values of its labels"); labels passed stay abstract, refused."""
    w = np.ones(4, np.float32)
    want = F.bincount_default_labels(w)
    got = s2s.eval_shape(F.bincount_default_labels, w)
    assert (got.shape, got.dtype) == (want.shape, want.dtype) == ((4,), np.float64)
    assert s2s.eval_shape(F.bincount_default_labels, w, scale=np.float32(3.0)).dtype == (
        F.bincount_default_labels(w, scale=np.float32(3.0)).dtype)
    with pytest.raises(s2s.TransformError, match="depends on the values of its labels"):
        s2s.eval_shape(F.bincount_default_labels, w, np.array([0, 2, 1, 1]))


# ---- against JAX ------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", ["add_into_local", "add_into_field", "add_into_loop",
                                  "scalar_rebinds", "named_stages_called"])
def test_against_jax(name, dtype) -> None:
    """Every transform's values against JAX's; dtypes against NumPy's own run (JAX's
    `+=` rebinds, promoting: its float64 is not NumPy's), the gradient's the input's."""
    import jax

    jax.config.update("jax_enable_x64", True)
    J = jax_twin(F)
    ours, theirs = getattr(F, name), getattr(J, name)
    x = X.astype(dtype)
    t = np.cos(np.arange(4.0)).astype(dtype)
    batch = np.stack([x, -x, 2 * x])
    value = np.asarray(ours(x)).dtype
    tol = dict(rtol=1e-9, atol=1e-12) if dtype == np.float64 else dict(rtol=2e-5, atol=1e-6)
    for key, got, want, dtypes in [
            ("grad", s2s.grad(ours)(x), jax.grad(theirs)(x), (dtype,)),
            ("value_and_grad", s2s.value_and_grad(ours)(x), jax.value_and_grad(theirs)(x),
             (value, dtype)),
            ("jvp", s2s.jvp(ours, (x,), (t,)), jax.jvp(theirs, (x,), (t,)), (value, value)),
            ("vmap", s2s.vmap(ours)(batch), jax.vmap(theirs)(batch), (value,)),
            ("vmap_grad", s2s.vmap(s2s.grad(ours))(batch), jax.vmap(jax.grad(theirs))(batch),
             (dtype,)),
            ("hessian", s2s.hessian(ours)(x), jax.hessian(theirs)(x), (dtype,)),
            ("jit_jax", s2s.jit(s2s.value_and_grad(ours), backend="jax")(x),
             jax.jit(jax.value_and_grad(theirs))(x), (value, dtype))]:
        assert _dtypes(got) == dtypes, key
        for a, b in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64),
                                       err_msg=key, **tol)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_zip_and_table_against_jax(dtype) -> None:
    """zip of rows and a constant tuple (2, 3, 4 rows: JAX's zip too), and TABLE[k % 4]
    on the JAX backend with k static: values and dtypes JAX's, as NumPy's own run."""
    import jax

    jax.config.update("jax_enable_x64", True)
    J = jax_twin(F)
    tol = dict(rtol=1e-9, atol=1e-12) if dtype == np.float64 else dict(rtol=2e-5, atol=1e-6)
    for rows in (2, 3, 4):
        x = ((np.arange(rows * 3).reshape(rows, 3) + 1.0) / 5.0).astype(dtype)
        for name in ("zip_rows", "enumerate_zip_rows"):
            ours, theirs = getattr(F, name), getattr(J, name)
            for key, got, want in [
                    ("grad", s2s.grad(ours)(x), jax.grad(theirs)(x)),
                    ("jvp", s2s.jvp(ours, (x,), (x,))[1], jax.jvp(theirs, (x,), (x,))[1]),
                    ("vmap", s2s.vmap(ours)(np.stack([x, -x])),
                     jax.vmap(theirs)(np.stack([x, -x]))),
                    ("jit_jax", s2s.jit(s2s.grad(ours), backend="jax")(x),
                     jax.grad(theirs)(x))]:
                assert np.asarray(got).dtype == np.asarray(want).dtype, (name, rows, key)
                np.testing.assert_allclose(got, want, err_msg=f"{name} {rows} {key}", **tol)
    x = X.astype(dtype)
    for k in (1, 6, 3):
        got = s2s.jit(s2s.value_and_grad(F.table_at_step), backend="jax",
                      static_argnums=1)(x, k)
        want = jax.value_and_grad(J.table_at_step)(x, k)
        assert _dtypes(got) == (dtype, dtype) == _dtypes((F.table_at_step(x, k), x))
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, **tol)
