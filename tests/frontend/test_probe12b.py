"""Issue 23, probe 12's refusals made to run (tests/frontend/probe12b_fns.py):
``operator.neg``/``pos``/``abs`` read as NumPy's negative/positive/absolute; ``while (n
:= n - 1) >= 0:`` bound before the loop and at the end of its body (one with a
``continue`` of its own stays refused); ``getattr(np, name)`` of a string known when
transforming (a literal, a loop over a tuple of strings, a str or tuple-of-str
parameter: the transform made per call's strings); str methods (``split``, ``strip``,
``lower``, ``startswith``) of a known string computed then; ``match`` on a tuple default
with ``int(k)`` and a guard; ``match x.shape`` by sequence patterns (an array of no
case's rank raises).  The default tier checks against central differences at
changing values; the slow tier against JAX (float64 and float32)."""

from __future__ import annotations

import numpy as np
import probe12b_fns as F
import pytest
from newcomer_harness import fd_grad
from support import HAVE_JAX

import s2s
from s2s.frontend.passed_structure import STR_ONLY

X4 = np.array([0.3, -0.7, 0.45, 1.2])


def _check(f, xs, *rest, **kw):
    g = s2s.grad(f)
    for x in xs:
        np.testing.assert_allclose(g(x, *rest, **kw), fd_grad(
            lambda v: f(v, *rest, **kw), (x,), 1e-6), rtol=1e-6, atol=1e-8)


def test_operators_and_walrus_while() -> None:
    """``operator.neg/pos/abs`` and a ``:=`` in a ``while`` test (its value after the
    loop too), grad at three points."""
    _check(F.operators_as_functions, [X4, -X4])
    _check(F.walrus_while, [X4, X4 * 2.0])
    assert F.walrus_while(X4) == pytest.approx(s2s.value_and_grad(F.walrus_while)(X4)[0])


def test_walrus_while_with_continue_is_refused_located() -> None:
    """A ``continue`` of the loop would skip the ``:=`` written at the body's end."""
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(F.walrus_while_continue)(X4)
    assert info.value.loc is not None and "n := n - 1" in str(info.value)


def test_getattr_of_known_strings() -> None:
    """``getattr(np, n)`` over a tuple default and the tuple passed by keyword; a str
    parameter given another string; a name NumPy lacks is a located error."""
    _check(F.getattr_loop, [X4, -X4])
    _check(F.getattr_loop, [X4], names=("exp", "cos"))
    _check(F.getattr_param, [X4], "sin")
    with pytest.raises(s2s.TransformError, match="has no attribute `tahn`"):
        s2s.grad(F.getattr_param)(X4, "tahn")


@pytest.mark.slow  # (the default tier's budget)
def test_getattr_more() -> None:
    """The tuple passed positionally, the str default, a callee of both."""
    _check(F.getattr_loop, [X4], ("sin",))
    _check(F.getattr_param, [X4, X4 * 0.7])
    _check(F.getattr_callee, [X4, -X4])


def test_str_methods_of_known_strings() -> None:
    """``spec.split(",")``, ``.strip()``, ``.lower()`` of a str default, the same
    function given another string; ``.startswith()`` deciding a branch."""
    _check(F.spec_string, [X4, X4 * -1.1])
    _check(F.spec_string, [X4], "softplus , tanh")
    np.testing.assert_allclose(s2s.grad(F.spec_startswith)(X4, spec="double"),
                               8.0 * X4)  # (sum((2x)^2))
    assert not STR_ONLY & set(dir(np.ndarray))  # (an array's method is never one)


@pytest.mark.slow  # (the default tier's budget)
def test_str_methods_more() -> None:
    _check(F.spec_startswith, [X4, -X4])
    _check(F.literal_split, [X4, -X4])


def test_match_tuple_guard_and_shape() -> None:
    """``case ("poly", int(k)) if k > 1`` of a tuple default (the other spec passed:
    ``("exp", 0)``, ``("poly", 1)`` whose guard fails) and ``match x.shape`` on a vector
    and a matrix; a 3-D array raises ValueError where Python would go on."""
    _check(F.match_tuple, [X4, X4 * 0.5])
    _check(F.match_tuple, [X4], ("exp", 0))
    _check(F.match_tuple, [X4], spec=("poly", 1))
    g = s2s.grad(F.match_shape)
    for x in (X4, X4.reshape(2, 2)):
        np.testing.assert_allclose(g(x), fd_grad(F.match_shape, (x,), 1e-6), 1e-6, 1e-8)
    with pytest.raises(ValueError, match="no `match` case"):
        g(np.ones((2, 2, 1)))


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", ["operators_as_functions", "walrus_while", "getattr_loop",
                                  "getattr_callee", "spec_string", "spec_startswith",
                                  "match_tuple", "match_shape"])
def test_against_jax(name, dtype) -> None:
    """grad at three points, jvp, vmap of grad and hessian against JAX on the same
    source."""
    import jax
    from support import jax_twin

    jax.config.update("jax_enable_x64", True)
    J = jax_twin(F)
    f, fj = getattr(F, name), getattr(J, name)
    tol = dict(rtol=1e-9, atol=1e-11) if dtype == np.float64 else dict(rtol=2e-4,
                                                                           atol=2e-5)
    xs = [(X4 * s).astype(dtype) for s in (1.0, 0.8, -1.2)]
    g = s2s.grad(f)
    for x in xs:
        np.testing.assert_allclose(g(x), jax.grad(fj)(x), **tol)
    t = np.linspace(-1.0, 1.0, 4).astype(dtype)
    np.testing.assert_allclose(s2s.jvp(f, (xs[0],), (t,))[1],
                               jax.jvp(fj, (xs[0],), (t,))[1], **tol)
    batch = np.stack(xs[:2])
    np.testing.assert_allclose(s2s.vmap(s2s.grad(f))(batch),
                               jax.vmap(jax.grad(fj))(batch), **tol)
    np.testing.assert_allclose(s2s.hessian(f)(xs[1]), jax.hessian(fj)(xs[1]), **tol)
