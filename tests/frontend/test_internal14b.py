"""Issue 23's internal14b pass (``internal14b_fns.py``): errors that surfaced from
emitted code or as raw internal exceptions.

``rest = list(x[1:])`` of one row: ``vmap(grad)`` and ``hessian`` raised NumPy's
"need at least one array to stack" from emitted code (the VJP of ``list(x)`` is now
``np.zeros_like(x)`` where the cotangent list is empty). ``s2s.vjp``'s pullback
given a cotangent of the wrong tree structure said only "unexpected tree structure." (now: the structure expected and the one given, as JAX
says); ``next(iter(zip(a, b)))`` was refused as "`tuple` is a class" (now the tuple
``(a[0], b[0])``), and ``next(iter(...))`` of another iterator is refused naming it.

``jacfwd`` of ``functools.reduce(lambda acc, v: ..., [m] + list(mats), 0.0)``: vmap
appended the unbatched zero tangents of ``mats`` to the batched tangent list, an
AxisError from emitted code (now each is repeated for every direction first).

Expected values: closed forms (the cheap ones in the default tier); JAX on the same source, float64
and float32, under ``-m slow``."""

from __future__ import annotations

from functools import partial

import internal14b_fns as F  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX, assert_close_to, jax_twin

import s2s

DTYPES = [np.float64, np.float32]
close = partial(assert_close_to, f64=1e-9, f32=2e-4, scale_atol=True)


# ---- vjp's pullback given a cotangent of the wrong structure ----------------------------


def test_vjp_cotangent_of_the_wrong_structure_names_both() -> None:
    _, pullback = s2s.vjp(F.scaled_sine, np.ones(3))
    said = r"(?s)unexpected tree structure\.\n.*function.s output, \*, but got \(\*, \*\)"
    with pytest.raises(ValueError, match=said):
        pullback((np.ones(3), np.ones(3)))


# ---- next(iter(zip(a, b))) ------------------------------------------------------------


def test_first_item_of_a_zip() -> None:
    x = np.array([1.3, 2.0])
    close(s2s.grad(F.first_of_zip)(x), np.array([2 * 1.3 + 2.0, 1.3]), np.float64)


def test_first_item_of_enumerate_is_refused_naming_it() -> None:
    with pytest.raises(s2s.TransformError, match=r"next\(iter\(enumerate") as err:
        s2s.grad(F.first_of_enumerate)(np.array([1.0, 2.0]))
    assert "internal14b_fns.py" in str(err.value) and "is a class" not in str(err.value)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_first_item_of_a_zip_against_jax(dtype) -> None:
    import jax

    twin = jax_twin(F)
    for seed in (1, 2, 3):
        x, y = np.random.default_rng(seed).normal(size=(2, 3)).astype(dtype)
        close(s2s.grad(F.first_of_zip)(x), jax.grad(twin.first_of_zip)(x), dtype)
        close(s2s.jacfwd(F.first_of_zip)(x), jax.jacfwd(twin.first_of_zip)(x), dtype)
        got = s2s.grad(F.first_pair_of_zip, argnums=(0, 1))(x, y)
        want = jax.grad(twin.first_pair_of_zip, argnums=(0, 1))(x, y)
        for g, w in zip(got, want):
            close(g, w, dtype)


# ---- the VJP of list(x) of an array with no rows ----------------------------------------


@pytest.mark.slow  # (vmap of grad and hessian: about 3 s of code generation)
def test_list_of_no_rows_under_vmap_of_grad_and_hessian() -> None:
    """``rest = list(x[1:])`` at size 1: ``sum`` over no items is 0, and so is the
    cotangent of ``x[1:]`` (before: NumPy's ValueError from emitted code under vmap,
    EmptyStackError at an emitted line under hessian)."""
    v = np.array([0.3])
    close(s2s.vmap(s2s.grad(F.sine_times_rest))(np.stack([v, 2 * v])), np.zeros((2, 1)),
          np.float64)
    close(s2s.hessian(F.sine_times_rest)(v), np.zeros((1, 1)), np.float64)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_list_of_few_rows_against_jax(dtype) -> None:
    """Sizes 1, 3, 1, 2, 1 over calls: grad, hessian, jacrev(grad), vmap(grad),
    vmap(hessian)."""
    import jax

    f, t = F.sine_times_rest, jax_twin(F).sine_times_rest
    for n in (1, 3, 1, 2, 1):
        x = np.random.default_rng(n).normal(size=n).astype(dtype)
        xs = np.random.default_rng(n + 5).normal(size=(4, n)).astype(dtype)
        close(s2s.grad(f)(x), jax.grad(t)(x), dtype)
        close(s2s.hessian(f)(x), jax.hessian(t)(x), dtype)
        close(s2s.jacrev(s2s.grad(f))(x), jax.jacrev(jax.grad(t))(x), dtype)
        close(s2s.vmap(s2s.grad(f))(xs), jax.vmap(jax.grad(t))(xs), dtype)
        close(s2s.vmap(s2s.hessian(f))(xs), jax.vmap(jax.hessian(t))(xs), dtype)


# ---- a batched list that an unbatched item is appended to ---------------------------------


@pytest.mark.slow  # (about 2 s of code generation)
def test_jacfwd_of_a_lambda_reduce_over_a_list_grown_from_an_argument() -> None:
    """``[m] + list(mats)`` reduced by a lambda: the tangent list starts with ``m``'s
    (batched by jacfwd) and gets ``mats``' zero tangents (not batched), now repeated
    for every direction (before: AxisError from emitted code)."""
    m = np.array([[1.5, -0.5], [0.25, 2.0]])
    close(s2s.jacfwd(F.reduced_with_lambda)(m), 2.0 * m, np.float64)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_jacfwd_of_a_lambda_reduce_against_jax(dtype) -> None:
    import jax

    f, t = F.reduced_with_lambda, jax_twin(F).reduced_with_lambda
    for seed in (1, 2, 3):
        m = np.random.default_rng(seed).normal(size=(2, 2)).astype(dtype)
        close(s2s.jacfwd(f)(m), jax.jacfwd(t)(m), dtype)


# ---- a zip kept in a name, then walked once -----------------------------------------------


def test_kept_zip_walked_once_runs() -> None:
    x = np.array([1.0, 2.0])
    close(s2s.grad(F.kept_zip_walked)(x), 2.0 * x, np.float64)


@pytest.mark.slow
def test_kept_zip_holds_the_operand_it_was_given() -> None:
    x, y = np.array([1.0, 2.0]), np.array([0.5, -0.25])
    got = s2s.grad(F.kept_zip_operand_rebound, argnums=(0, 1))(x, y)
    close(got[0], 3.0 + np.cos(y), np.float64)
    close(got[1], -x * np.sin(y), np.float64)


def test_kept_zip_walked_twice_stays_refused_at_the_zip() -> None:
    with pytest.raises(s2s.TransformError, match="zip") as err:
        s2s.grad(F.kept_zip_walked_twice)(np.array([1.0, 2.0]))
    assert "internal14b_fns.py" in str(err.value)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_kept_zip_against_jax(dtype) -> None:
    """Sizes 1, 3, 2 over calls: grad, jacfwd, hessian, vmap(grad)."""
    import jax

    twin = jax_twin(F)
    for n in (1, 3, 2):
        x, y = np.random.default_rng(n).normal(size=(2, n)).astype(dtype)
        xs = np.random.default_rng(n + 4).normal(size=(3, n)).astype(dtype)
        f, t = F.kept_zip_walked, twin.kept_zip_walked
        close(s2s.grad(f)(x), jax.grad(t)(x), dtype)
        close(s2s.jacfwd(f)(x), jax.jacfwd(t)(x), dtype)
        close(s2s.hessian(f)(x), jax.hessian(t)(x), dtype)
        close(s2s.vmap(s2s.grad(f))(xs), jax.vmap(jax.grad(t))(xs), dtype)
        f, t = F.kept_zip_operand_rebound, twin.kept_zip_operand_rebound
        for g, w in zip(s2s.grad(f, argnums=(0, 1))(x, y), jax.grad(t, argnums=(0, 1))(x, y)):
            close(g, w, dtype)
