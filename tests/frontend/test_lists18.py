"""Issue 23 (lists18): tuple and list state in loops, and lists read at run-time
positions, where a transform runs them again (tests/frontend/lists18_fns.py):

- a tuple a loop rebinds by a comprehension over it (``state = tuple(... for s, p in
  zip(state, k1))``, ``k1`` a callee's result) is unrolled for its length before the
  loop and carried as its leaves (it was refused: "can only be indexed with a constant
  key", or "the container `state` is rebound in a loop");
- a callee's tuple default read at a loop's run-time counter (``zip(coefs, p)`` with
  ``p`` a list grown in a loop) reads items of one kind (it was refused as a callee);
- a tuple or dict carried as its leaves and left by ``break`` gets the loop's end
  cotangent once (it got it twice: a wrong gradient);
- the gradient of ``np.concatenate`` of a list saved on a loop's tape, or grown in a
  loop of run-time length, batched and differentiated again (vmap of grad, hessian: it
  was refused: "`split_like` of a list the function did not build", "cannot be
  differentiated or batched again").

The default tier checks a few against central differences and per-example loops (no
JAX); the slow sweep runs each function through grad at calls 1, 3 and 10, jvp, vmap of
grad, hessian, jit of grad on both backends, size-1 and 0-size arguments and the
caller writing into results, against JAX on the same source in float64 and float32
(``newcomer_harness.classify``)."""

from __future__ import annotations

import lists18_fns as F
import newcomer_harness as H
import numpy as np
import pytest
from support import HAVE_JAX

import s2s

X2 = np.array([0.3, -0.7])
X4 = np.array([0.3, -0.7, 0.45, 1.2])
ONE, NONE = np.array([0.6]), np.zeros(0)

CASES = {
    "tuple_state_zip_callees": ((X4,), {"one": ONE, "empty": NONE}),
    "tuple_state_generator": ((X4,), {"one": ONE, "empty": NONE}),
    "legendre_callee": ((X4,), {"one": ONE, "empty": NONE, "ones": np.ones(4)}),
    "split_in_loop": ((X2,), {"zeros": np.zeros(2)}),
    "concat_grown_list": ((X4,), {"one": ONE, "empty": NONE}),
    "stack_grown_list": ((X4,), {"one": ONE, "empty": NONE}),
    "tuple_state_break": ((X4,), {"one": ONE, "empty": NONE}),
    "dict_state_while_break": ((X4,), {"one": ONE, "empty": NONE}),
}
PROBE = H.Probe(F, CASES, ("grad", "value_and_grad", "jvp", "vmap_grad", "hessian", "jit",
                           "jit_jax", "special", "warm_special", "vmap_special", "alias",
                           "alias_all"), tol64=(1e-6, 1e-8))


def _fd_agrees(f, x, got, tol=(1e-6, 1e-8)):
    np.testing.assert_allclose(got, H.fd_grad(f, (x,), 1e-6), *tol)


def test_tuple_state_rebound_by_a_comprehension() -> None:
    """``state = tuple(... for s, p, q in zip(state, k1, k2))`` in a loop, ``k1`` a
    callee's tuple: grad at three changing points against central differences."""
    f = F.tuple_state_zip_callees
    g = s2s.grad(f)
    for x in (X4, X4 * -1.3, X4 * 0.2):
        _fd_agrees(f, x, g(x))


@pytest.mark.slow  # (the default tier's budget: a hessian and a vmap generated)
def test_tuple_state_rebound_by_a_comprehension_again() -> None:
    """The same under hessian (its second row against central differences of the
    gradient) and vmap of grad (against a loop of grads)."""
    f = F.tuple_state_zip_callees
    g = s2s.grad(f)
    h = s2s.hessian(f)(X4)
    np.testing.assert_allclose(h[1], H.fd_grad(lambda t: g(t)[1], (X4,), 1e-6), 1e-5, 1e-7)
    np.testing.assert_allclose(s2s.vmap(g)(np.stack([X4, -X4]))[1], g(-X4), 1e-12)


def test_callee_tuple_default_at_a_run_time_counter() -> None:
    """A callee zipping its tuple default with a list it grows (``zip(coefs, p)``):
    grad through a lambda against central differences."""
    f = F.legendre_callee
    _fd_agrees(f, X4, s2s.grad(lambda t: f(t))(X4))


@pytest.mark.slow  # (the default tier's budget)
def test_callee_tuple_default_at_a_run_time_counter_jvp() -> None:
    """The same under jvp, against central differences."""
    f = F.legendre_callee
    _, tangent = s2s.jvp(lambda t: f(t), (X4,), (X4[::-1].copy(),))
    np.testing.assert_allclose(tangent, H.fd_grad(f, (X4,), 1e-6) @ X4[::-1], 1e-6)


@pytest.mark.slow  # (the default tier's budget: hessians and vmaps generated)
def test_joins_of_loop_lists_batched_and_differentiated_again() -> None:
    """The gradient of ``np.concatenate`` of a list a loop saved (``[x, h]``) or grew
    (``range(x.size)`` pieces), under vmap of grad (against a loop of grads) and
    hessian (against central differences of the gradient)."""
    for f, x in ((F.split_in_loop, X2), (F.concat_grown_list, X4)):
        g = s2s.grad(f)
        xs = np.stack([x, -0.5 * x, 2.0 * x])
        np.testing.assert_allclose(s2s.vmap(g)(xs), np.stack([g(r) for r in xs]), 1e-12,
                                   1e-14)
        h = s2s.hessian(f)(x)
        fd = np.stack([H.fd_grad(lambda t, j=j: g(t)[j], (x,), 1e-6) for j in range(x.size)])
        np.testing.assert_allclose(h, fd, 1e-5, 1e-7)


def test_a_container_carried_as_leaves_left_by_break() -> None:
    """A tuple or dict a loop carries as its leaves, left by ``break`` with the body's
    end value: the loop's end cotangent reaches it once (it reached it twice, through
    the break's own reads and the end's: a gradient too large, on main before
    lists18).  grad of the tuple's at two points against central differences (the slow
    sweep: every transform against JAX)."""
    g = s2s.grad(F.tuple_state_break)
    for x in (X4, -0.6 * X4):
        _fd_agrees(F.tuple_state_break, x, g(x))


@pytest.mark.slow  # (the default tier's budget)
def test_a_dict_carried_as_leaves_left_by_break_in_a_while() -> None:
    """The same for a dict a ``while`` carries."""
    g = s2s.grad(F.dict_state_while_break)
    for x in (X4, -0.6 * X4):
        _fd_agrees(F.dict_state_while_break, x, g(x))


def test_a_tuple_the_loop_makes_another_length_is_refused_located() -> None:
    """A comprehension over a tuple the loop rebinds to one of another length: a located
    refusal at the user's line, never items read for the wrong length."""
    def grows(x):
        state = (x, x * 2.0)
        for _ in range(2):
            state = tuple(s * 0.5 for s in state) + (x,)
        return np.sum(state[0])

    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(grows)(X4)
    assert info.value.loc is not None and "test_lists18.py" in info.value.loc.file


def test_a_zipped_callee_result_shorter_than_the_tuple_is_refused_located() -> None:
    """``zip(state, k)`` where the callee's ``k`` has fewer items than ``state``:
    Python's zip would stop early; s2s refuses, located, rather than read past it."""
    def one(s):
        return (s[0] * 2.0,)

    def short(x):
        state = (x, x * 2.0)
        for _ in range(2):
            k = one(state)
            state = tuple(s + p for s, p in zip(state, k))
        return np.sum(state[0])

    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(short)(X4)
    assert info.value.loc is not None and "test_lists18.py" in info.value.loc.file


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", list(CASES))
def test_against_jax(name, dtype) -> None:
    """Every stage of the probe harness agrees with JAX on the same source."""
    label, verdicts = H.classify(PROBE, name, H.twin(F), dtype)
    assert label == "ok", verdicts
