"""Issue 23's float32 pins (probe 10): a Python number read from a list at a run-time
index stays a Python number (weak: `lr * w` of a float32 `w` is float32), as in
NumPy's own run of the function; and second derivatives of `np.prod`, `np.cumprod` and
`np.linalg.slogdet` at special values (zeros, negatives, size-0 and size-1 axes,
singular matrices) against JAX and central differences of s2s's gradient.

The default tier compares with NumPy running the function as written (its dtype) and
with central differences; the JAX sweeps are ``slow``."""

from __future__ import annotations

import dtype16_fns as F
import numpy as np
import pytest
from support import HAVE_JAX, jax_twin

import s2s

X32 = np.array([0.3, -0.7, 1.2, 0.5], np.float32)


def _dtypes(tree):
    if isinstance(tree, (tuple, list)):
        return tuple(d for t in tree for d in _dtypes(t))
    return (np.asarray(tree).dtype,)


# ---- Python numbers read at a run-time index --------------------------------------------


def test_module_list_read_at_a_run_time_index_stays_float32() -> None:
    """`lr = SCHEDULE[STEP % len(SCHEDULE)]`: the value was float64 (the list's array
    read, `np.asarray(SCHEDULE)[i]`, a float64 NumPy scalar); NumPy's own run gives
    float32, and so does every transform now, with its values."""
    assert np.asarray(F.schedule_lr(X32)).dtype == np.float32  # (NumPy, as written)
    v, g = s2s.value_and_grad(F.schedule_lr)(X32)
    assert _dtypes((v, g)) == (np.float32,) * 2
    np.testing.assert_allclose(v, F.schedule_lr(X32.astype(float)), rtol=1e-6)
    np.testing.assert_allclose(g, 2 * 0.25 * X32 + 2 * np.cos(X32), rtol=1e-6)


@pytest.mark.slow
def test_tuple_default_read_in_a_kept_loop_stays_float32() -> None:
    """`for i, s in enumerate(scales)` over a tuple default passed on by a lambda (a
    tuple argument read at the loop's counter, `np.stack(items)[i]`): jvp's primal and
    tangent were float64."""
    f = lambda v: F.scaled_powers(v)  # noqa: E731  (the probe's form: the default passed)
    p, t = s2s.jvp(f, (X32,), (np.ones_like(X32),))
    assert _dtypes((p, t)) == (np.float32,) * 2
    x = X32.astype(float)
    np.testing.assert_allclose(p, F.scaled_powers(x), rtol=1e-6)
    np.testing.assert_allclose(t, np.sum(1.0 + x + 0.75 * x ** 2), rtol=1e-5)


@pytest.mark.slow
def test_an_array_item_keeps_its_dtype() -> None:
    """Items that are not Python numbers keep NumPy's meaning: a tuple of 0-d float64
    arrays makes the value float64, as the function run as written; ints stay ints."""
    scales = (np.array(1.0), np.array(0.5))
    assert np.asarray(F.read_by_counter(X32, scales)).dtype == np.float64
    v, _ = s2s.value_and_grad(F.read_by_counter)(X32, scales)
    assert np.asarray(v).dtype == np.float64
    v, g = s2s.value_and_grad(F.int_table)(X32, 1)
    assert _dtypes((v, g)) == (np.float32,) * 2 and v == np.float32(2 * np.sum(X32 ** 2))


def test_vmap_of_a_table_read_at_a_batched_index() -> None:
    """`SCHEDULE[np.argmax(w)]` under vmap: an internal AttributeError ('Const' object
    has no attribute 'name') before; now each example's item (float64: the batch of
    items is the table's array read, as `jnp.asarray(SCHEDULE)[i]` on JAX)."""
    ws = np.stack([X32, -X32])
    got = s2s.vmap(F.table_at_argmax)(ws)
    np.testing.assert_allclose(got, [F.table_at_argmax(w.astype(float)) for w in ws],
                               rtol=1e-6)


@pytest.mark.xfail(strict=True, reason=(
    "vmap of a Python float table read at a batched index: the batch of items is the "
    "table's float64 array, which promotes a float32 operand; each example's read is a "
    "weak Python float (float32 result, as the loop gives). Needs the items cast to the "
    "dtype NumPy gives the number with the operands it meets (batched_loops._stacked's "
    "way), or a weak-array notion in vmap"))
def test_vmap_of_a_table_read_at_a_batched_index_keeps_float32() -> None:
    """The loop of examples (NumPy's own run of each) is float32; JAX with x64 on
    gives float64 (``jnp.asarray(SCHEDULE)`` is a float64 array, not weak)."""
    ws = np.stack([X32, -X32])
    assert {np.asarray(F.table_at_argmax(w)).dtype for w in ws} == {np.dtype(np.float32)}
    assert s2s.vmap(F.table_at_argmax)(ws).dtype == np.float32


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("name", ["schedule_lr", "scaled_powers", "scaled_powers_called",
                                  "read_by_counter_called"])
def test_weak_items_against_jax(name) -> None:
    """Every transform's dtypes and values against JAX's (x64 on, float32 inputs)."""
    import jax

    jax.config.update("jax_enable_x64", True)
    J = jax_twin(F)
    ours, theirs = getattr(F, name), getattr(J, name)
    t = np.cos(np.arange(4.0)).astype(np.float32)
    batch = np.stack([X32, -X32, 2 * X32])
    for key, got, want in [
            ("grad", s2s.grad(ours)(X32), jax.grad(theirs)(X32)),
            ("value_and_grad", s2s.value_and_grad(ours)(X32), jax.value_and_grad(theirs)(X32)),
            ("jvp", s2s.jvp(ours, (X32,), (t,)), jax.jvp(theirs, (X32,), (t,))),
            ("vjp", s2s.vjp(ours, X32)[0], jax.vjp(theirs, X32)[0]),
            ("vmap", s2s.vmap(ours)(batch), jax.vmap(theirs)(batch)),
            ("vmap_grad", s2s.vmap(s2s.grad(ours))(batch), jax.vmap(jax.grad(theirs))(batch)),
            ("hessian", s2s.hessian(ours)(X32), jax.hessian(theirs)(X32))]:
        assert _dtypes(got) == _dtypes(want), key
        for a, b in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-6, err_msg=key)


# ---- products and slogdet at special values --------------------------------------------

PROD_CASES = {
    "prod_all": [[2.0, 3.0, 0.5], [0.0, 3.0, -2.0], [0.0, 0.0, 2.0, 3.0], [0.0, 0.0, 0.0],
                 [-1.5, 2.0, -3.0], [0.0, 0.0, 0.0, 5.0], [4.0], [0.0], []],
    "prod_rows": [[[0.0, 2.0, 3.0], [1.0, 0.0, 0.0]], [[0.0] * 3] * 2, [[0.0], [2.0]],
                  np.zeros((2, 0)), np.zeros((0, 3)), [[-1.0, 0.0, 2.0], [3.0, -2.0, 0.0]]],
    "prod_cols": [[[0.0, 2.0, 3.0], [1.0, 0.0, 0.0]], [[0.0] * 3] * 2, [[0.0] * 3],
                  np.zeros((0, 3)), np.zeros((3, 0))],
    "cumprod_sum": [[2.0, 3.0, 0.5], [0.0, 3.0, -2.0], [1.0, 0.0, 0.0, 3.0], [0.0] * 3,
                    [-1.5, 2.0, -3.0], [0.0], [], [2.0, 0.0, 3.0, 0.0]],
    "cumprod_rows": [[[0.0, 2.0, 3.0], [1.0, 0.0, 0.0]], [[0.0] * 3] * 2, [[0.0], [0.0]],
                     np.zeros((2, 0)), np.zeros((0, 2))],
    "slogdet_logabs": [[[2.0, 1.0], [1.0, 3.0]], [[-2.0, 1.0], [1.0, 3.0]], [[3.0]],
                       [[-3.0]], np.zeros((0, 0))],
    "slogdet_sign_times": [[[2.0, 1.0], [1.0, 3.0]], [[-2.0, 1.0], [1.0, 3.0]], [[-3.0]],
                           np.zeros((0, 0))],
}
SINGULAR = [[[1.0, 2.0], [2.0, 4.0]], [[0.0, 0.0], [0.0, 0.0]], [[0.0]],
            [[1.0, 2.0, 0.0], [0.0, 0.0, 1.0], [1.0, 2.0, 1.0]]]


def _fd_hessian(grad, x, eps=1e-5):
    """Central differences of a gradient, column by column."""
    cols = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = eps
        e = e.reshape(x.shape)
        cols.append(((np.asarray(grad(x + e)) - np.asarray(grad(x - e))) / (2 * eps)).ravel())
    return np.stack(cols, axis=-1).reshape(x.shape + x.shape)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", list(PROD_CASES))
def test_second_derivatives_at_special_values(name, dtype) -> None:
    """Zeros (one, two, all), negatives, size-1 and size-0 axes: s2s's gradient and
    Hessian are JAX's (finite where JAX's are: the product of the others, to second
    order), and the Hessian is central differences of s2s's gradient."""
    import jax

    jax.config.update("jax_enable_x64", True)
    J = jax_twin(F)
    f, j = getattr(F, name), getattr(J, name)
    tol = dict(rtol=1e-9, atol=1e-12) if dtype == np.float64 else dict(rtol=1e-5, atol=1e-6)
    for x in PROD_CASES[name]:
        x = np.asarray(x, dtype)
        for key, got, want in [("grad", s2s.grad(f)(x), jax.grad(j)(x)),
                               ("hessian", s2s.hessian(f)(x), jax.hessian(j)(x))]:
            assert np.asarray(got).dtype == np.asarray(want).dtype, key
            np.testing.assert_allclose(got, want, **tol, err_msg=f"{name} {key} at {x}")
        h = np.asarray(got)
        assert np.all(np.isfinite(h))
        if x.size and dtype == np.float64:
            np.testing.assert_allclose(h, _fd_hessian(s2s.grad(f), x), rtol=1e-5, atol=1e-6)


def test_hessian_of_slogdet_at_a_singular_matrix_is_located() -> None:
    """JAX's Hessian there is NaN and infinities (its gradient: inf/-inf where the rank
    is n-1, NaN at rank n-2 or less); s2s's gradient refuses with a located
    SingularMatrixError, and its Hessian raised NumPy's bare LinAlgError from vmap's
    probe of the emitted code: now the same located error, at the slogdet line."""
    a = np.array(SINGULAR[0])
    with pytest.raises(s2s.errors.SingularMatrixError) as info:
        s2s.hessian(F.slogdet_logabs)(a)
    assert "np.linalg.slogdet(a)" in str(info.value)


@pytest.mark.slow
@pytest.mark.parametrize("make", ["hessian", "jacfwd_grad", "jacrev_grad", "jacfwd",
                                  "jacrev", "vmap_grad"])
@pytest.mark.parametrize("name", ["slogdet_logabs", "slogdet_sign_times"])
def test_every_transform_at_a_singular_matrix_is_located(name, make) -> None:
    f = getattr(F, name)
    t = {"hessian": s2s.hessian, "jacfwd_grad": lambda g: s2s.jacfwd(s2s.grad(g)),
         "jacrev_grad": lambda g: s2s.jacrev(s2s.grad(g)), "jacfwd": s2s.jacfwd,
         "jacrev": s2s.jacrev, "vmap_grad": lambda g: s2s.vmap(s2s.grad(g))}[make](f)
    for a in SINGULAR:
        a = np.asarray(a)
        with pytest.raises(s2s.errors.SingularMatrixError) as info:
            t(np.stack([a, a]) if make == "vmap_grad" else a)
        assert "dtype16_fns.py" in str(info.value) and "np.linalg.slogdet(a)" in str(
            info.value), str(info.value)
