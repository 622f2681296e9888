"""Second-order transforms of gradients through a loop inside an ``if``.

The bug these pin (issue 21, item 18): in ``if a < 20: for i in range(3): a = a * a``
the loop left its result under the name it entered with, a name bound before the
``if``, so the IR's ``If`` listed no join for it.  Reverse mode reconciled such names
itself; forward mode and vmap only follow joins, so the value's tangent (or batch
axis) set in the branch was dropped after the ``if``:

* ``s2s.jvp(s2s.grad(f), ...)`` raised IndexError in the emitted code: the gradient's
  tape got its tangent list ``tape_dot`` in the branch, and the backward sweep's
  ``if`` started a new empty one (``tape_dot_2[-1]``);
* ``s2s.hessian(f)`` / ``s2s.jacfwd(s2s.grad(f))`` refused the emitted JVP (``tape_dot``
  bound on one path only), and ``jvp`` of ``y[i] = a * i`` written in such a loop
  returned 0 (silently);
* ``jacrev(grad(f))`` of an ``if`` in a loop around such a loop batched the
  accumulated cotangent once per outer iteration ([[6.86]] for 6.86).

Now the normalizer gives the loop's carried value a name of the branch's own (an array
or list written in place gets a new version after the loop, spelled with its name),
which the ``if`` joins (``LoopLowerer.own_entries``, ``versions_after_loop``), and the
list cotangents and tangents such joins carry keep one name (a copy would be an alias
of the list, refused when the code is transformed again).  Expected values are JAX's
(jax.jvp / jax.hessian / jax.jacfwd / jax.jacrev / jax.grad of the same source with
``np`` bound to jax.numpy), or central differences where the function writes into an
array.
"""

from __future__ import annotations

import numpy as np
import pytest

import jvp_grad_control_fns as F
import s2s
from support import jax_twin

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
J = jax_twin(F)

SCALAR = ["loop_in_if", "loop_in_if_sin", "while_in_if", "loop_in_else", "loops_in_both",
          "nested_ifs", "loop_in_nested_if", "break_in_loop_in_if", "nested_loops_in_if",
          "loop_in_if_in_loop", "two_ifs_one_test"]
VECTOR = ["vector_loop_in_if", "vector_while_in_if"]
# 0.7, 2.0, -0.8 take the branch with the loop (or its other branches), 30.0 does not
POINTS = {"while_in_if": [0.7, 2.0, 30.0]}  # (a negative start never reaches 50)
VECTOR_POINTS = [np.array([0.3, -0.5, 0.8]), np.array([10.0, 10.0, 1.0])]

CASES = [(n, x) for n in SCALAR for x in POINTS.get(n, [0.7, 2.0, -0.8, 30.0])] + [
    (n, x) for n in VECTOR for x in VECTOR_POINTS]
IDS = [f"{n}-{np.asarray(x).ravel()[0]}" for n, x in CASES]

TRANSFORMS = {
    "jvp_of_grad": (lambda f, x: s2s.jvp(s2s.grad(f), (x,), (_direction(x),)),
                    lambda f, x: jax.jvp(jax.grad(f), (x,), (_direction(x),))),
    "hessian": (lambda f, x: s2s.hessian(f)(x), lambda f, x: jax.hessian(f)(x)),
    "jacfwd_of_grad": (lambda f, x: s2s.jacfwd(s2s.grad(f))(x),
                       lambda f, x: jax.jacfwd(jax.grad(f))(x)),
    "jacrev_of_grad": (lambda f, x: s2s.jacrev(s2s.grad(f))(x),
                       lambda f, x: jax.jacrev(jax.grad(f))(x)),
    "grad_of_grad": (lambda f, x: s2s.grad(s2s.grad(f))(x),  # (scalar x only)
                     lambda f, x: jax.grad(jax.grad(f))(x)),
}


def _direction(x):
    return np.cos(np.arange(np.size(x)) + 1.0).reshape(np.shape(x)) if np.ndim(x) else 1.0


def close(got, want) -> None:
    for g, w in zip(*(t if isinstance(t, tuple) else (t,) for t in (got, want))):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, (g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("transform", list(TRANSFORMS))
@pytest.mark.parametrize("name,x", CASES, ids=IDS)
def test_matches_jax(name, x, transform) -> None:
    if transform == "grad_of_grad" and np.ndim(x):
        pytest.skip("grad of a vector-valued gradient: jacrev_of_grad covers it")
    ours, theirs = TRANSFORMS[transform]
    close(ours(getattr(F, name), x), theirs(getattr(J, name), x))


@pytest.mark.slow
def test_the_issue_example() -> None:
    """The reported calls: each raised (IndexError, or a refusal located in emitted
    code) before."""
    f, jf = F.loop_in_if, J.loop_in_if
    close(s2s.jvp(s2s.grad(f), (2.0,), (1.0,)), jax.jvp(jax.grad(jf), (2.0,), (1.0,)))
    assert float(s2s.hessian(f)(2.0)) == 56 * 2.0 ** 6  # d2/da2 a**8
    assert float(s2s.jacfwd(s2s.grad(f))(2.0)) == 56 * 2.0 ** 6
    close(s2s.hessian(f)(30.0), jax.hessian(jf)(30.0))  # a < 20 false: a, so 0


def test_the_if_joins_the_loops_result() -> None:
    """The IR states what each path leaves: the loop's value and the gradient's tape
    (a version of the list, spelled with its name) are joins of the `if`."""
    from s2s.ir.nodes import If
    from s2s.frontend.normalize import normalize

    (first,) = [s for s in normalize(F.loop_in_if).body if isinstance(s, If)]
    assert first.joins
    g = s2s.grad(F.loop_in_if)
    g(2.0)
    emitted = normalize(g._last[1])
    first = next(s for s in emitted.body if isinstance(s, If))
    assert any(emitted.aliases.get(j) == "tape" for j in first.joins)
    assert "tape = tape" not in g._last[0]  # (the version is no code)


@pytest.mark.parametrize("name", ["decided_by_c", "decided_by_c_while"])
@pytest.mark.parametrize("c", [2.0, 30.0])
def test_vmap_of_grad(name, c) -> None:
    """The `if` on an unbatched value (in_axes None), the loop's values batched."""
    xs = np.array([0.7, 1.1, 2.0])
    got = s2s.vmap(s2s.grad(getattr(F, name)), in_axes=(0, None))(xs, c)
    want = np.stack([jax.grad(getattr(J, name))(x, c) for x in xs])
    close(got, want)


def test_vmap_of_grad_on_a_batched_test_is_refused() -> None:
    """JAX cannot vmap a Python `if` on a batched value either
    (TracerBoolConversionError); s2s refuses it with a located TransformError."""
    with pytest.raises(s2s.TransformError):
        s2s.vmap(s2s.grad(F.loop_in_if))(np.array([0.7, 30.0]))


# ---- writes into an array in the loop (JAX arrays are immutable: differences) ----------


@pytest.mark.slow
@pytest.mark.parametrize("a", [0.7, 2.0, -0.8, 30.0])
def test_writes_in_loop_in_if(a) -> None:
    f = F.writes_in_loop_in_if
    h = 1e-4
    fd1 = (f(a + h) - f(a - h)) / (2 * h)
    fd2 = (f(a + h) - 2 * f(a) + f(a - h)) / h**2
    value, tangent = s2s.jvp(f, (a,), (1.0,))  # was 0 on the taken path
    assert value == f(a)
    np.testing.assert_allclose(tangent, fd1, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(s2s.grad(f)(a), fd1, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(s2s.jvp(s2s.grad(f), (a,), (1.0,))[1], fd2, rtol=1e-5,
                               atol=1e-7)
    np.testing.assert_allclose(s2s.hessian(f)(a), fd2, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(s2s.grad(s2s.grad(f))(a), fd2, rtol=1e-5, atol=1e-7)


# ---- lists built on both paths, grown in a loop on one --------------------------------

LISTS = ["appends_in_loop_in_if", "list_grown_in_else", "list_grown_in_if", "list_literal_or_grown",
         "list_literal_appended_or_grown", "grown_or_list_literal"]


@pytest.mark.parametrize("a", [0.7, 2.0, 30.0])
@pytest.mark.parametrize("name", LISTS)
def test_lists_joined_with_grown_lists(name, a) -> None:
    """After the `if` the list is a grown one (its cotangent one Python list); on the
    path that built it of known length its items' cotangents are that list's items.
    Before: grad gave 0.0 for 1.0, or an AssertionError, and jvp a NameError, an
    AttributeError ('ndarray' has no 'append'), or lost the literal's items (0.0 for
    60.0)."""
    f, jf = getattr(F, name), getattr(J, name)
    close(s2s.grad(f)(a), jax.grad(jf)(a))
    close(s2s.jvp(f, (a,), (1.0,)), jax.jvp(jf, (a,), (1.0,)))


@pytest.mark.slow
@pytest.mark.parametrize("name", LISTS)
def test_lists_second_order_right_or_refused(name) -> None:
    """Second order through those lists is matched or refused, never wrong."""
    f, jf = getattr(F, name), getattr(J, name)
    for ours, theirs in TRANSFORMS.values():
        for a in (0.7, 30.0):
            try:
                got = ours(f, a)
            except s2s.TransformError:
                continue
            close(got, theirs(jf, a))
