"""Issue 23, four refusals of probe 11 (misc17_fns.py):

1. a ``try`` around array code whose ``except`` can never run (the body assigns from
   arithmetic, subscripts and NumPy ufuncs, and no class an ``except`` names is one
   they can raise) is the path on which nothing raises: body, ``else``, ``finally``
   (frontend/array_try.py); any other ``try`` around array code is refused at the
   ``except`` that may run, or at what the body does that s2s cannot vouch for;
2. a ``math`` function with no NumPy rule (``math.isclose(t, 0.3)``) of a float
   parameter runs as Python where the code runs, as JAX runs it on an untraced value;
   refused, located, where the parameter is differentiated or batched;
3. vmap of a position per example mixed with slices (``m[:, j]``, ``t[i, :, j]``);
4. a list built in an ``if`` and read by the gradient's mirror of that ``if``
   (``np.concatenate([x, 2.0 * x])``'s ``split_like``), transformed again by vmap and
   hessian.

Each against central differences or a Python loop over examples (default tier), and
JAX on the same source in float64 and float32 (slow)."""

from __future__ import annotations

import misc17_fns as F
import numpy as np
import pytest
from support import HAVE_JAX, assert_close_to, central_grad, jax, jax_twin, jnp

import s2s

X4 = np.array([0.3, -0.7, 0.45, 1.2])
M32 = np.array([[0.4, -1.1], [0.7, 0.2], [-0.3, 0.9]])


def _calls(x0, n=3):
    """``n`` inputs changing value from call to call (the 1st, 2nd, ... call)."""
    return [x0 * (1.0 + 0.15 * c) - 0.05 * c for c in range(n)]


# ---- default tier: central differences, Python loops ---------------------------------

def test_a_try_whose_except_never_runs_is_its_no_raise_path() -> None:
    """grad of ``try``/``except``/``else``/``finally`` around ``np.log1p(x ** 2)``, three
    calls, against central differences; float32 in, float32 out (several statements,
    ``except ... as``, subscripts: the slow tests, against JAX)."""
    g = s2s.grad(F.try_else_finally)
    for x in _calls(X4):
        np.testing.assert_allclose(g(x), central_grad(F.try_else_finally, x), rtol=1e-6,
                                   atol=1e-8)
    assert g(X4.astype(np.float32)).dtype == np.float32


REFUSED_TRIES = [  # (function, arguments, the message's words, the line quoted)
    (F.try_catches_fpe, (X4,), "`FloatingPointError`, and the `try`'s `np.log(x)` can "
     "raise `FloatingPointError` (under `np.errstate", "except FloatingPointError:"),
    (F.try_bare_except, (X4,), "catches everything (a bare `except:`)", "except:"),
    (F.try_broadcast_fallback, (X4, X4), "`x * w` can raise `ValueError` (of shapes "
     "that do not broadcast)", "except ValueError:"),
    (F.try_divides, (X4,), "`1.0 / x` can raise `ZeroDivisionError`",
     "except ZeroDivisionError:"),
    (F.try_index_error, (X4,), "`x[5]` can raise `IndexError`", "except IndexError:"),
    (F.try_calls_a_function, (X4,), "it cannot tell what this raises",
     "y = np.linalg.norm(x) * x"),
    (F.try_returns, (X4,), "this leaves the `try`'s body early",
     "return np.sum(x ** 2)"),
]


def test_a_try_whose_except_may_run_is_refused_at_the_except() -> None:
    """An ``except`` that could run (FloatingPointError under the caller's
    ``np.errstate``, a bare ``except:``, shapes that do not broadcast, a division by
    zero, an index out of range), a body calling what s2s cannot vouch for, a body
    that returns: each refused at the user's line, saying why, before anything runs."""
    for f, args, says, quoted in REFUSED_TRIES:
        with pytest.raises(s2s.TransformError) as info:
            s2s.grad(f)(*args)
        text = str(info.value)
        assert says in text and quoted in text and "misc17_fns.py" in text, text
        assert "<s2s:" not in text


def test_math_of_a_float_parameter() -> None:
    """``math.isclose(t, 0.3)``, ``math.gamma(t + 2.0)``, ``math.log(t + 1.0, 2)`` of a
    float parameter: its value at each call (the default, positional, keyword,
    another value, the default again), against central differences and the function
    itself; refused, located, where ``t`` is differentiated or batched (JAX's tracers
    refuse math's functions too)."""
    vg = s2s.value_and_grad(F.math_of_a_float)
    for x, args, kw in ((X4, (), {}), (1.1 * X4, (0.5,), {}), (X4, (), {"t": 0.3}),
                        (0.9 * X4, (1.7,), {}), (-X4, (), {})):
        value, grad = vg(x, *args, **kw)
        assert value == pytest.approx(F.math_of_a_float(x, *args, **kw), rel=1e-12)
        want = central_grad(lambda v: F.math_of_a_float(v, *args, **kw), x)
        np.testing.assert_allclose(grad, want, rtol=1e-6, atol=1e-8)
    with pytest.raises(s2s.TransformError, match="`math.isclose` takes Python numbers, and "
                       "an argument here carries a derivative") as info:
        s2s.grad(F.math_of_a_float, argnums=1)(X4, 0.3)
    assert "math.isclose(t, 0.3)" in str(info.value)
    with pytest.raises(s2s.TransformError, match="of values with a batch axis") as info:
        s2s.vmap(F.math_of_a_float, in_axes=(None, 0))(X4, np.array([0.3, 0.5]))
    assert "misc17_fns.py" in str(info.value)


def test_vmap_of_a_position_per_example_mixed_with_slices() -> None:
    """``m[i]``, ``m[:, j]``, ``m[1:, j]`` and ``m[i, j]`` with ``i, j`` each example's
    argmax: vmap of grad against grad example by example, three calls (the third with
    ties); ``m[1:, j]`` of one matrix for a batch of ``j``; a slice whose bounds
    differ per example and a position made by ``np.any`` (a bool) are refused,
    located."""
    g, vg = s2s.grad(F.argmax_row_column), s2s.vmap(s2s.grad(F.argmax_row_column))
    rng = np.random.default_rng(17)
    for batch in (rng.normal(size=(4, 3, 2)), rng.normal(size=(2, 3, 2)),
                  np.stack([np.ones((3, 2)), M32])):
        np.testing.assert_allclose(vg(batch), np.stack([g(m) for m in batch]), rtol=1e-12)
    js = np.array([1, 0, 1, 1])
    got = s2s.vmap(F.column_of_a_matrix, in_axes=(None, 0))(M32, js)
    np.testing.assert_allclose(got, [F.column_of_a_matrix(M32, j) for j in js], rtol=1e-12)
    with pytest.raises(s2s.TransformError, match="a slice whose bounds differ per example"):
        s2s.vmap(F.slice_from, in_axes=(None, 0))(M32, np.array([1, 2]))
    with pytest.raises(s2s.TransformError, match="made by an operation that may not give "
                       "an int") as info:  # (np.any's bool would add an axis)
        s2s.vmap(F.column_of_any)(np.stack([M32, -M32]))
    assert "return np.sum(m[:, b])" in str(info.value)


def test_a_list_built_in_an_if_transformed_again() -> None:
    """``x = np.concatenate([x, 2.0 * x])`` in an ``if`` (a 1-D input made a row
    first): vmap of grad against grad example by example, three calls, and hessian
    against central differences of grad (2-D inputs, jacrev, jvp and vjp of grad,
    s2s.jit of hessian: the slow tests, against JAX)."""
    f = F.ndim_branch_concat
    g, vg = s2s.grad(f), s2s.vmap(s2s.grad(f))
    for x in _calls(X4):
        batch = np.stack([x, -2.0 * x])
        np.testing.assert_allclose(vg(batch), np.stack([g(v) for v in batch]), rtol=1e-12)
    want = np.stack([central_grad(lambda v, k=k: g(v)[k], X4) for k in range(4)])
    np.testing.assert_allclose(s2s.hessian(f)(X4), want, rtol=1e-6, atol=1e-7)


# ---- slow: JAX on the same source, float64 and float32 --------------------------------

DTYPES = [np.float64, np.float32]


@pytest.fixture(scope="module")
def J():
    return jax_twin(F)


def _transforms(name):
    """(s2s transform, JAX transform, input made from x) for each check of ``name``."""
    def pair(make):
        return make(s2s), make(jax)

    jvp = (lambda T: lambda x: T.jvp(fn(T), (x,), (x * 0.5 + 1.0,))[1])
    fn = (lambda T: getattr(F, name) if T is s2s else getattr(_J[0], name))
    return {
        "grad": pair(lambda T: T.grad(fn(T))),
        "jvp": pair(jvp),
        "vmap_grad": pair(lambda T: T.vmap(T.grad(fn(T)))),
        "hessian": pair(lambda T: T.hessian(fn(T))),
        "jacrev_grad": pair(lambda T: T.jacrev(T.grad(fn(T)))),
        "vjp_grad": pair(lambda T: lambda x: T.vjp(T.grad(fn(T)), x)[1](x + 1.0)[0]),
        "jit_grad": (s2s.jit(s2s.grad(getattr(F, name))), jax.grad(fn(jax))),
        "jit_jax_grad": (s2s.jit(s2s.grad(getattr(F, name)), backend="jax"),
                         jax.grad(fn(jax))),
    }


_J: list = []


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name, x0", [
    ("try_else_finally", X4), ("try_several_statements", X4), ("try_subscripts", X4),
    ("math_of_a_float", X4), ("argmax_row_column", M32),
    ("argmax_3d", np.random.default_rng(3).normal(size=(3, 3, 4))),
    ("ndim_branch_concat", X4), ("ndim_branch_concat", X4.reshape(1, 4)),
    ("ndim_branch_concat", X4.reshape(2, 2)), ("stacked_in_a_branch", X4),
    ("stacked_in_a_branch", X4[:2]),
])
def test_against_jax(J, name, x0, dtype) -> None:
    """grad, jvp, vmap of grad, hessian, jacrev and vjp of grad, s2s.jit of grad on both
    backends: three calls with changing values, against JAX on the same source."""
    _J[:] = [J]
    for key, (mine, theirs) in _transforms(name).items():
        for c, x in enumerate(_calls(x0.astype(dtype))):
            x = x.astype(dtype)
            arg = np.stack([x, x[::-1] * 0.5, -x]) if key == "vmap_grad" else x
            got, want = mine(arg), theirs(jnp.asarray(arg))
            assert_close_to(got, want, dtype, f32=2e-3)
            if isinstance(got, np.ndarray):
                got += 1.0  # (the caller writing into a result: the next call's is new)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_math_of_a_float_against_jax(J, dtype) -> None:
    """The parameter passed (positional, keyword, static on JAX's jit), changing over
    calls; the value's dtype is JAX's (math's floats are weak)."""
    x = X4.astype(dtype)
    for t in (0.3, 0.5, 1.7, 0.3):
        want = jax.value_and_grad(J.math_of_a_float)(jnp.asarray(x), t)
        assert_close_to(s2s.value_and_grad(F.math_of_a_float)(x, t), want, dtype)
        assert_close_to(s2s.grad(F.math_of_a_float)(x, t=t), want[1], dtype)
        assert_close_to(s2s.jit(s2s.grad(F.math_of_a_float))(x, t), want[1], dtype)
        jitted = s2s.jit(s2s.grad(F.math_of_a_float), backend="jax", static_argnums=1)
        assert_close_to(jitted(x, t), want[1], dtype)
        assert_close_to(s2s.hessian(F.math_of_a_float)(x, t),
                        jax.hessian(J.math_of_a_float)(jnp.asarray(x), t), dtype)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_position_with_slices_of_one_matrix_against_jax(J, dtype) -> None:
    """vmap over ``j`` alone (``m`` the same for every example), of the function and of
    its gradient in ``m``."""
    m, js = M32.astype(dtype), np.array([1, 0, 1, 1, 0])
    for f in (F.column_of_a_matrix, s2s.grad(F.column_of_a_matrix)):
        twin = J.column_of_a_matrix if f is F.column_of_a_matrix else jax.grad(
            J.column_of_a_matrix)
        assert_close_to(s2s.vmap(f, in_axes=(None, 0))(m, js),
                        jax.vmap(twin, in_axes=(None, 0))(jnp.asarray(m), js), dtype)
