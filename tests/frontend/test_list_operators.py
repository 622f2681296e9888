"""Python's operators on a tuple or list (issue 23): ``xs / 2.0``, ``1.0 - xs``, ``xs **
2``, ``xs // 2.0``, ``xs % 2``, ``-xs`` (also of a list built in the function, in a
callee, in an unrolled loop) raise Python's TypeError; s2s computed NumPy's number (the
IR did not tell ``xs / 2`` from ``np.divide(xs, 2)``: grad of ``np.sum(xs / 2.0)`` was
``[0.5, 0.5]``, jvp of a callee's a value).  Now each is refused under every transform
at the line and column where Python raises, its message Python's own.  NumPy's
functions (``np.divide(xs, 2.0)``) and an array operand (``xs / y``) still convert.

Oracles: Python itself (the message and the traceback's position of the same call),
JAX on the ``*_stacked`` twins (float64 and float32)."""

from __future__ import annotations

import traceback

import list_operator_fns as F
import numpy as np
import pytest
import stmt_checks as C
from support import HAVE_JAX, central_grad, jax_twin

import s2s

if HAVE_JAX:
    import jax

    J = jax_twin(F)

XS = [np.array(0.5), np.array(-1.5)]
BATCH = [np.array([0.5, 0.25, 2.0]), np.array([-1.5, 0.75, 1.0])]

RAISES = ["div_arg", "rsub_arg", "pow_arg", "floordiv_arg", "mod_arg", "neg_arg",
          "lists_sub", "literal_div", "grown_sub", "callee_div", "in_loop", "augmented"]


def python_error(f, *args):
    """Python's TypeError for ``f(*args)`` and the position (file, line, 1-based
    column, line text) its traceback gives."""
    with pytest.raises(TypeError) as err:
        f(*args)
    frame = traceback.extract_tb(err.value.__traceback__)[-1]
    return str(err.value), (frame.filename, frame.lineno, frame.colno + 1, frame.line)


def assert_where_python_raises(err, f, *args) -> None:
    """``err``, s2s's refusal, says what Python says where Python raises.  (A vjp, a
    jacrev first run the function as written: Python's own TypeError, its traceback
    at the user's line, is as good.)"""
    says, (file, line, col, text) = python_error(f, *args)
    if not isinstance(err, s2s.TransformError):
        assert isinstance(err, TypeError) and str(err) == says
        frame = traceback.extract_tb(err.__traceback__)[-1]
        assert (frame.filename, frame.lineno, frame.colno + 1) == (file, line, col)
        return
    if "=" not in says:  # (`xs -= 1.0`: Python says `-=`, s2s `-`)
        assert says in err.what, (says, err.what)
    assert (err.loc.file, err.loc.line, err.loc.col) == (file, line, col), str(err)
    assert err.loc.text.strip() == text.strip() and "<s2s" not in str(err)


@pytest.mark.parametrize("kind", [list, tuple])
@pytest.mark.parametrize("name", RAISES)
def test_refused_under_grad_where_python_raises(name, kind) -> None:
    f, xs = getattr(F, name), kind(XS)
    with pytest.raises(s2s.TransformError) as err:
        s2s.grad(f)(xs)
    assert_where_python_raises(err.value, f, xs)


TRANSFORMS = {
    "value_and_grad": lambda f: s2s.value_and_grad(f)(XS),
    "jvp": lambda f: s2s.jvp(f, (XS,), (XS,)),
    "vjp": lambda f: s2s.vjp(f, XS)[1](np.array(1.0)),
    "vmap": lambda f: s2s.vmap(f)(BATCH),
    "jacfwd": lambda f: s2s.jacfwd(f)(XS),
    "jacrev": lambda f: s2s.jacrev(f)(XS),
    "hessian": lambda f: s2s.hessian(f)(XS),
    "vmap(grad)": lambda f: s2s.vmap(s2s.grad(f))(BATCH),
}


@pytest.mark.parametrize("name", ["div_arg", "neg_arg", "literal_div", "callee_div"])
@pytest.mark.parametrize("transform", list(TRANSFORMS))
def test_refused_under_every_transform(name, transform) -> None:
    f = getattr(F, name)
    with pytest.raises((s2s.TransformError, TypeError)) as err:  # (or Python's own)
        TRANSFORMS[transform](f)
    assert_where_python_raises(err.value, f, XS)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_jit_raises_pythons_error_at_the_users_line(backend) -> None:
    """``s2s.jit`` runs the user's code as written: Python's own TypeError."""
    with pytest.raises(TypeError) as err:
        s2s.jit(F.div_arg, backend=backend)(XS)
    frame = traceback.extract_tb(err.value.__traceback__)[-1]
    assert frame.filename == F.__file__ and frame.line.strip() == "return np.sum(xs / 2.0)"


def test_a_value_the_call_may_pass_as_a_number_is_refused() -> None:
    """``xs / s``: Python raises for a float ``s``, NumPy converts for an array; the
    transform knows neither (a leaf argument not differentiated)."""
    with pytest.raises(s2s.TransformError) as err:
        s2s.grad(F.maybe_number)(XS, 2.0)
    assert "may pass as a Python number" in err.value.what
    assert err.value.loc.text.strip() == "return np.sum(xs / s)"
    assert python_error(F.maybe_number, XS, 2.0)[0] in (
        "unsupported operand type(s) for /: 'list' and 'float'")


@pytest.mark.parametrize("name", ["ufuncs", "met_by_array"])
def test_numpy_converts_against_central_differences(name) -> None:
    f, xs, y = getattr(F, f"{name}_list"), [np.array(0.5), np.array(-1.25)], np.array(0.7)
    got = s2s.grad(f, argnums=(0, 1))(xs, y)
    flat = np.array([0.5, -1.25, 0.7])
    want = central_grad(lambda v: f([v[0], v[1]], v[2]), flat)
    np.testing.assert_allclose(np.array([*got[0], got[1]]), want, rtol=1e-6, atol=1e-8)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["ufuncs", "met_by_array"])
def test_numpy_converts_against_jax(name, dtype) -> None:
    """NumPy's functions and an array operand convert the list: computed as before."""
    f, jf = getattr(F, f"{name}_list"), getattr(J, f"{name}_stacked")
    xs, y = [np.asarray(v, dtype=dtype) for v in (0.5, -1.25)], np.asarray(0.7, dtype=dtype)
    for call in (1, 3):
        xs = [v * call for v in xs]
        C.close(f(xs, y), jf(xs, y), dtype, "value")
        for g, w in zip(s2s.grad(f, argnums=(0, 1))(xs, y),
                        jax.grad(jf, argnums=(0, 1))(xs, y)):
            C.close(g, w, dtype, "grad")
        C.close(s2s.jvp(f, (xs, y), (xs, y))[1], jax.jvp(jf, (xs, y), (xs, y))[1], dtype,
                "jvp")
    batch, ys = [np.stack([v, 2 * v]) for v in xs], np.stack([y, -y])
    C.close(s2s.vmap(f)(batch, ys), jax.vmap(jf)(batch, ys), dtype, "vmap")
    C.close(s2s.jit(s2s.grad(f, argnums=1), backend="jax")(xs, y),
            jax.grad(jf, argnums=1)(xs, y), dtype, "jit")
