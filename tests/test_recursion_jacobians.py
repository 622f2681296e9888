"""Recursive functions whose derivatives return containers: the emitted JVP of a
recursive helper returns a (value, tangent) pair, and a recursive function may itself
return a tuple or dict.  The structure a recursive call returns is the fixed point
reverse.py's kind analysis finds (base cases first, every path checked against it).

Oracle: JAX on the same source (the corpus's twin module, or this file's functions
run again with ``np`` bound to ``jax.numpy``), float64."""

from __future__ import annotations

import types

import numpy as np
import pytest

import s2s
import corpus_fns
from corpus import CASES
from s2s.api import float0
from s2s.transforms.analysis import KindSolver
from support import HAVE_JAX, jax, jax_twin, jnp, leaves

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle here")

TOL = {"rtol": 1e-10, "atol": 1e-12}
X = np.array([0.3, -0.7, 1.1])
V = np.array([0.5, 0.2, -1.0])
NO_TANGENT = np.zeros((), float0)  # an int argument's tangent


# ---- recursive functions returning containers -------------------------------------


def pair_tower(x, n):
    """Returns a pair; its parts are joined one by one (the tuple is built after)."""
    if n == 0:
        a = x
        b = np.cos(x)
    else:
        a, b = pair_tower(x, n - 1)
        a, b = np.sin(a) * b, a + x * b
    return a, b


def pair_loss(x, n):
    a, b = pair_tower(x, n)
    return np.sum(a * b)


def pair_in_branches(x, n):
    """Returns a pair from each branch; the base case is the `else`."""
    if n > 0:
        a, b = pair_in_branches(np.sin(x), n - 1)
        return a * x, b + a
    return x, x**2


def ping(x, n):
    """Mutual recursion: the base case is here, not in pong."""
    if n == 0:
        return x, np.sin(x)
    a, b = pong(x, n - 1)
    return a * b, b + x


def pong(x, n):
    a, b = ping(np.cos(x), n)
    return b, a * x


def ping_loss(x, n):
    a, b = pong(x, n)
    return np.sum(a * b)


def loop_base(x, n):
    """The base case is a loop that runs zero times."""
    y = x
    z = x * 2.0
    for i in range(n):
        a, b = loop_base(y, i)
        y = np.sin(a) * b
        z = z + b
    return y, z


def loop_loss(x, n):
    y, z = loop_base(x, n)
    return np.sum(y * z)


def carried_pair(x, n):
    """A loop carries the recursive call's pair (before it: the base case's)."""
    y = (x, x * 2.0)
    for i in range(n):
        y = carried_pair(np.sin(y[0]) * y[1], i)
        y = (y[0] + x, y[1] * y[0])
    return y


# refused, with the reason at the function


def nested_deeper(x, n):
    if n == 0:
        return x
    return nested_deeper(x, n - 1), x


def no_base_case(x, n):
    return no_base_case(np.sin(x), n - 1) * x


def no_base_loss(x, n):
    return np.sum(no_base_case(x, n))


def growing(x, n):
    if n == 0:
        return x
    return growing((x, x), n - 1)[0]


def growing_loss(x, n):
    return np.sum(growing(x, n))


_FUNCTIONS = (pair_tower, pair_loss, pair_in_branches, ping, pong, ping_loss,
              loop_base, loop_loss, carried_pair)


def _twins() -> types.SimpleNamespace:
    """This file's functions again, their ``np`` being jax.numpy."""
    namespace = dict(globals())
    namespace["np"] = jnp
    for f in _FUNCTIONS:
        namespace[f.__name__] = types.FunctionType(f.__code__, namespace, f.__name__)
    return types.SimpleNamespace(**{f.__name__: namespace[f.__name__] for f in _FUNCTIONS})


def fresh(f):
    """A new function object for ``f``'s code: s2s caches emitted code per function
    object, and a vmapped function's code depends on the first call's example."""
    return types.FunctionType(f.__code__, f.__globals__, f.__name__, f.__defaults__,
                              f.__closure__)


def close(got, expected) -> None:
    got, expected = leaves(got), leaves(expected)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert np.shape(g) == np.shape(e)
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), **TOL)


# ---- the corpus's recursive_sum (through the recursive helper `tower`) -------------

TWIN = None


def corpus_twin():
    global TWIN
    if TWIN is None:
        TWIN = jax_twin(corpus_fns)
    return TWIN


def corpus_case(name: str):
    case = next(c for c in CASES if c.name == name)
    return case, fresh(case.fn), corpus_twin().recursive_sum


# vmap runs the first example to learn ranks; with n == 0 the recursive branch never
# runs.  A call it never made gets, as its example, the caller's own arguments (the
# same function) or the caller's arguments of the callee's parameter names (a
# gradient's forward call; others by place), where their ranks match (s2s/transforms/vmap.py
# `_unprobed_call`), and its result the callee's return ranks.


def corpus_params(transforms: tuple[str, ...]) -> list:
    out = []
    for name in ("recursion", "recursion_base_case"):
        for t in transforms:
            out.append(pytest.param(name, t, id=f"{name}-{t}"))
    return out


@pytest.mark.parametrize("name,transform",
                         corpus_params(("jacfwd", "hessian", "jacrev_grad")))
def test_corpus_recursion_jacobians(name: str, transform: str) -> None:
    case, fn, twin = corpus_case(name)
    x, n = case.args()
    if transform == "jacrev_grad":
        ours, theirs = s2s.jacrev(s2s.grad(fn)), jax.jacrev(jax.grad(twin))
    else:
        ours, theirs = getattr(s2s, transform)(fn), getattr(jax, transform)(twin)
    close(ours(x, n), theirs(x, n))


def tower_sum(x):
    return corpus_fns.recursive_sum(x, 3)


def tower_sum_jvp(x, v):
    """A function calling s2s.jvp of the recursive corpus function: vmap batches it."""
    return s2s.jvp(tower_sum, (x,), (v,))


def base_case_sum(x):
    return corpus_fns.recursive_sum(x, 0)


def base_case_sum_jvp(x, v):
    return s2s.jvp(base_case_sum, (x,), (v,))


@pytest.mark.parametrize("wrapper,depth", [
    pytest.param(tower_sum_jvp, 3, id="recursion"),
    pytest.param(base_case_sum_jvp, 0, id="recursion_base_case"),
])
def test_vmap_of_a_jvp_of_recursion(wrapper, depth: int) -> None:
    twin = corpus_twin().recursive_sum
    tangents = np.stack([V, 2.0 * V, np.eye(3)[1]])
    got = s2s.vmap(fresh(wrapper), in_axes=(None, 0))(X, tangents)
    expected = jax.vmap(lambda v: jax.jvp(lambda y: twin(y, depth), (X,), (v,)),
                        in_axes=0)(tangents)
    close(got, expected)


# ---- recursive functions that return containers themselves ---------------------------


CONTAINER_RESULTS = ["pair_tower", "pair_in_branches", "ping", "pong", "loop_base"]


@pytest.mark.parametrize("n", [3, 0])
@pytest.mark.parametrize("name", CONTAINER_RESULTS + ["carried_pair"])
def test_jvp_of_a_container_result(name: str, n: int) -> None:
    f, twin = fresh(globals()[name]), getattr(_twins(), name)
    close(s2s.jvp(f, (X, n), (V, NO_TANGENT)), jax.jvp(lambda y: twin(y, n), (X,), (V,)))


@pytest.mark.parametrize("n", [3, 0])
@pytest.mark.parametrize("name", CONTAINER_RESULTS)
def test_vjp_of_a_container_result(name: str, n: int) -> None:
    f, twin = fresh(globals()[name]), getattr(_twins(), name)
    cotangent = f(X, n)
    _, pullback = s2s.vjp(f, X, n)
    close(pullback(cotangent)[0], jax.vjp(lambda y: twin(y, n), X)[1](cotangent)[0])


@pytest.mark.parametrize("n", [3, 0])
@pytest.mark.parametrize("name", ["pair_loss", "ping_loss", "loop_loss"])
def test_grad_through_a_container_result(name: str, n: int) -> None:
    f, twin = fresh(globals()[name]), getattr(_twins(), name)
    close(s2s.grad(f)(X, n), jax.grad(twin)(X, n))


# (pair_in_branches and ping join a tuple at an `if`: vmap, under jacfwd, reads its
# leaves by their place, not through one branch's `make_tuple`, and gives a batch axis
# only to the leaves the other path batched; tests/test_vmap_joins.py)


@pytest.mark.parametrize("name,n", [
    pytest.param("pair_tower", 3, id="pair_tower-3"),
    pytest.param("pair_tower", 0, id="pair_tower-0"),
    pytest.param("pair_in_branches", 3, id="pair_in_branches-3"),
    pytest.param("ping", 3, id="ping-3"),
])
@pytest.mark.slow
def test_jacfwd_of_a_container_result(name: str, n: int) -> None:
    f, twin = fresh(globals()[name]), getattr(_twins(), name)
    close(s2s.jacfwd(f)(X, n), jax.jacfwd(twin)(X, n))


def test_too_many_paths_to_tell_apart(monkeypatch) -> None:
    """Past max_paths the structure is a fixed point from an array: the same here."""
    monkeypatch.setattr(KindSolver, "max_paths", 1)
    twins = _twins()
    for name in ("pair_tower", "ping"):
        f, twin = fresh(globals()[name]), getattr(twins, name)
        close(s2s.jvp(f, (X, 3), (V, NO_TANGENT)),
              jax.jvp(lambda y: twin(y, 3), (X,), (V,)))


# ---- refusals -------------------------------------------------------------------------


def test_returns_of_different_structures_are_refused() -> None:
    with pytest.raises(s2s.TransformError, match="returns have different structures"):
        s2s.jvp(fresh(nested_deeper), (X, 2), (V, NO_TANGENT))


def test_recursion_without_a_base_case_is_refused() -> None:
    with pytest.raises(s2s.TransformError, match="no base case") as info:
        s2s.grad(fresh(no_base_loss))(X, 2)
    assert "no_base_case" in str(info.value)


def test_argument_structures_growing_with_depth_are_refused() -> None:
    assert growing_loss(X, 3) == np.sum(X)  # it runs: each level nests its argument
    with pytest.raises(s2s.TransformError, match="structure changes with each call"):
        s2s.grad(fresh(growing_loss))(X, 3)
