"""The steady-state fast paths of pytree calls (s2s/api/treecalls.py) and of
``s2s.jit(backend="numpy")`` (s2s/api/hotcalls.py ``jit_call``), tried against what
they assume: the arguments' structure changing between calls (a key added, a dict's
keys reordered, a list where a tuple was, another NamedTuple class with the same
fields), dtypes changing (float64, float32, int), a 0-d array where a Python float
was, the caller writing into its arguments after a call and into the gradients it
got, module state rebound, gradients that are a module's array or one array in two
places.  Every call's gradient is JAX's (``jax.grad`` of the same source on
``jax.numpy``), of the argument's types, dtypes and shapes, writeable, sharing no
memory with the arguments or with each other; checked at the 1st, 3rd and 10th call
of each structure (every call, in fact), through ``s2s.grad`` and ``s2s.jit`` of it."""

from __future__ import annotations

import dataclasses
import types
from typing import NamedTuple

import numpy as np
import pytest

import s2s

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

SCALE = 0.5
TABLE = np.array([0.25, -1.0, 2.0])


class P(NamedTuple):
    w: np.ndarray
    b: np.ndarray


class Q(NamedTuple):  # (P's fields, another class)
    w: np.ndarray
    b: np.ndarray


@dataclasses.dataclass
class Layer:
    w: np.ndarray
    b: np.ndarray


s2s.tree_util.register_dataclass(Layer)
jax.tree_util.register_dataclass(Layer, data_fields=["w", "b"], meta_fields=[])


def by_key(p, x):
    return np.sum(np.tanh(p["w"] * x + p["b"]) ** 2) + SCALE * np.sum(p["w"] ** 2)


def by_position(p, x):
    w, b = p
    return np.sum(np.tanh(w * x + b) ** 2) + SCALE * np.sum(w**2)


def by_field(p, x):
    return np.sum(np.tanh(p.w * x + p.b) ** 2) + SCALE * np.sum(p.w**2)


HEAD = 2


def head(p, x):  # (the specialized code may take HEAD's value for granted: guarded)
    return np.sum(np.sin(p["w"][:HEAD]) * x[:HEAD]) + np.sum(p["b"] ** 2)


def linear(p, x):  # (the gradient of p["w"] is the module's TABLE, unless copied)
    return np.sum(p["w"] * TABLE) + np.sum(np.sin(p["b"]) * x)


_ORACLES: dict = {}


@pytest.fixture(autouse=True)
def _quick_specializing(request, monkeypatch):
    """The default tier specializes without the optimizer's passes (they cost most of
    a signature's specializing, and the paths tested here do not depend on what the
    code was rewritten to: a specialized entry is planned all the same); the tests
    marked slow run with every pass."""
    if request.node.get_closest_marker("slow") is None:
        monkeypatch.setenv("S2S_PASSES_OFF", "all")


def oracle(f, argnums=0, **extra):
    """``jax.jit(jax.grad)`` of ``f``'s source on jax.numpy (the module constants
    ``extra`` rebound), compiled once per structure and dtype."""
    key = (f, argnums, tuple(sorted(extra.items())))
    if key not in _ORACLES:
        glb = {**f.__globals__, "np": jnp, "TABLE": jnp.asarray(TABLE), **extra}
        _ORACLES[key] = jax.jit(jax.grad(types.FunctionType(f.__code__, glb, f.__name__),
                                         argnums))
    return _ORACLES[key]


def leaves_of(tree) -> list:
    return jax.tree_util.tree_leaves(tree)


def check(got, want, primal, args):
    """``got`` is JAX's gradient ``want`` in ``primal``'s own containers (a dict's keys
    in its order), each leaf a writeable array of its primal leaf's dtype and shape,
    sharing memory with no argument and no other leaf."""
    if isinstance(primal, (dict, tuple, list)) or dataclasses.is_dataclass(primal):
        assert type(got) is type(primal)
        if isinstance(primal, dict):
            assert list(got) == list(primal)
            pairs = [(got[k], want[k], primal[k]) for k in primal]
        elif dataclasses.is_dataclass(primal):
            pairs = [(getattr(got, f.name), getattr(want, f.name), getattr(primal, f.name))
                     for f in dataclasses.fields(primal)]
        else:
            assert len(got) == len(primal)
            pairs = list(zip(got, want, primal))
        for g, w, p in pairs:
            check(g, w, p, args)
        mine = leaves_of(got)
        for i, a in enumerate(mine):
            assert not any(np.may_share_memory(a, b) for b in mine[i + 1:])
        return
    assert type(got) is np.ndarray, type(got)
    assert got.dtype == np.result_type(primal) and got.shape == np.shape(primal)
    assert got.flags.writeable
    for a in leaves_of(args) + [TABLE]:
        assert not (isinstance(a, np.ndarray) and np.may_share_memory(got, a))
    tol = 2e-5 if got.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, np.asarray(want), rtol=tol, atol=tol)


_SHARED: dict = {}


def transforms(f, fresh=False):
    """``s2s.grad(f)`` and ``s2s.jit`` of that very transform: the jit's calls of a
    structure the transform has planned must still be counted before they take the
    plan.  The default tier's tests share one pair per function (what one test
    planned, the next one's calls meet: its first calls of a structure may take a
    plan); ``fresh``: a new pair."""
    if fresh or f not in _SHARED:
        g = s2s.grad(f)
        _SHARED[f] = {"grad": g, "jit": s2s.jit(g, backend="numpy")}
    return _SHARED[f]


def as_jax(a):
    """The argument as JAX's oracle takes it: a NamedTuple or dataclass of ``w``
    and ``b`` as a ``P``, a list as a tuple (the function reads them alike; JAX
    compiles once for them all)."""
    if isinstance(a, (P, Q, Layer)):
        return P(jnp.asarray(a.w), jnp.asarray(a.b))
    if isinstance(a, (list, tuple)):
        return tuple(as_jax(x) for x in a)
    if isinstance(a, dict):
        return {k: as_jax(v) for k, v in a.items()}
    return jnp.asarray(a)


def run(g, f, make, calls=10, argnums=0):
    """``calls`` calls of ``g`` on ``make(v)`` for changing values ``v``, each
    against JAX; the caller then writes into the gradient it got."""
    for v in np.linspace(-1.5, 1.5, calls):
        args = make(v)
        got = g(*args)
        want = oracle(f, argnums)(*[as_jax(a) for a in args])
        check(got, want, args[argnums], args)
        for leaf in leaves_of(got):
            leaf[...] = 1e6  # (later calls and the arguments must not see it)


def vec(v, n=3, dtype=np.float64):
    return (np.linspace(-1.0, 1.0, n) * v + 0.3).astype(dtype)


DICT_STRUCTURES = (
    lambda v: ({"w": vec(v), "b": vec(-v)}, vec(1.0)),
    lambda v: ({"w": vec(v), "b": vec(-v), "c": vec(2 * v)}, vec(1.0)),  # a key added
    lambda v: ({"b": vec(-v), "w": vec(v)}, vec(1.0)),  # the keys reordered
    lambda v: ({"w": vec(v), "b": vec(-v)}, vec(1.0)),  # back to the first
)


def test_dict_structure_changes_between_calls():
    both = transforms(by_key)
    for make in DICT_STRUCTURES:
        for g in both.values():
            run(g, by_key, make)


@pytest.mark.slow
def test_dict_structure_and_shape_changes_with_every_pass():
    both = transforms(by_key, fresh=True)
    other_shapes = lambda v: ({"w": vec(v, 4), "b": vec(-v, 4)}, vec(1.0, 4))  # noqa: E731
    for make in DICT_STRUCTURES[:3] + (other_shapes,) + DICT_STRUCTURES:
        for g in both.values():
            run(g, by_key, make)


def test_list_then_tuple_then_list():
    both = transforms(by_position)
    for container in (list, tuple, list):
        for g in both.values():
            run(g, by_position, lambda v: (container([vec(v), vec(-v)]), vec(1.0)), calls=4)


def test_another_namedtuple_class_with_the_same_fields():
    both = transforms(by_field)
    for cls in (P, Q, P):
        for g in both.values():
            run(g, by_field, lambda v: (cls(vec(v), vec(-v)), vec(1.0)), calls=4)


@pytest.mark.slow
def test_namedtuples_and_a_registered_dataclass_with_every_pass():
    both = transforms(by_field, fresh=True)
    for cls in (P, Q, P, Layer, Q, Layer):
        for g in both.values():
            run(g, by_field, lambda v: (cls(vec(v), vec(-v)), vec(1.0)))


def test_dtypes_change_float64_float32_int():
    for g in transforms(by_key).values():
        run(g, by_key, lambda v: ({"w": vec(v), "b": vec(-v)}, vec(1.0)), calls=3)
        run(g, by_key, lambda v: ({"w": vec(v, dtype=np.float32), "b": vec(-v, dtype=np.float32)},
                                  vec(1.0, dtype=np.float32)), calls=4)
        ints = ({"w": np.arange(3), "b": np.ones(3, int)}, vec(1.0))
        for _ in range(3):  # integer parameters: JAX's error, as the checked path raises it
            with pytest.raises(TypeError, match="int64"):
                g(*ints)
            with pytest.raises(TypeError, match="int64"):
                jax.grad(by_key)(*ints)
        run(g, by_key, lambda v: ({"w": vec(v), "b": vec(-v)}, vec(1.0)), calls=3)


@pytest.mark.slow
def test_mixed_dtypes_with_every_pass():
    for g in transforms(by_key, fresh=True).values():
        run(g, by_key, lambda v: ({"w": vec(v, dtype=np.float32), "b": vec(-v)}, vec(1.0)))
        run(g, by_key, lambda v: ({"w": vec(v), "b": vec(-v, dtype=np.float32)},
                                  vec(1.0, dtype=np.float32)))


def test_zero_d_arrays_and_python_floats():
    for g in transforms(by_key).values():
        for make in (
            lambda v: ({"w": np.array(v), "b": np.array(0.1)}, np.array(0.3)),
            lambda v: ({"w": float(v), "b": 0.1}, 0.3),
            lambda v: ({"w": np.array(v), "b": np.array(0.1)}, np.array(0.3)),
        ):
            run(g, by_key, make, calls=4)


@pytest.mark.slow
def test_numpy_scalars_and_mixed_leaves_with_every_pass():
    for g in transforms(by_key, fresh=True).values():
        for make in (
            lambda v: ({"w": np.float64(v), "b": np.float64(0.1)}, 0.3),
            lambda v: ({"w": np.float32(v), "b": np.array(0.1, np.float32)},
                       np.array(0.3, np.float32)),
            lambda v: ({"w": np.array(v), "b": 0.1}, np.array(0.3)),
            lambda v: ({"w": float(v), "b": 0.1}, 0.3),
        ):
            run(g, by_key, make)


def test_the_caller_writes_into_its_arguments_after_each_call():
    for g in transforms(by_key).values():
        p, x = {"w": vec(0.7), "b": vec(-0.2)}, vec(1.0)
        for call in range(10):
            got = g(p, x)
            check(got, oracle(by_key)(p, x), p, (p, x))
            assert got["w"] is not p["w"] and got["b"] is not p["b"]
            p["w"] += 0.25  # in place: the next call reads the new values
            p["b"] *= -1.5
            x[...] = x[::-1]
            before = {k: v.copy() for k, v in p.items()}
            got["w"][...] = np.nan  # the caller's gradient, written into
            assert all(np.array_equal(p[k], before[k]) for k in p)


def test_a_module_array_as_the_gradient_is_never_returned_itself():
    for g in transforms(linear).values():
        for call in range(10):
            p, x = {"w": vec(call), "b": vec(-call)}, vec(1.0)
            got = g(p, x)
            check(got, oracle(linear)(p, x), p, (p, x))
            got["w"][...] = 7.0
        np.testing.assert_array_equal(TABLE, [0.25, -1.0, 2.0])


def test_one_array_in_two_places_gets_two_gradients():
    for g, h in zip(transforms(by_key).values(), transforms(by_field).values()):
        for call in range(10):
            a, x = vec(call), vec(1.0)
            p, lay = {"w": a, "b": a}, Layer(a, a)
            check(g(p, x), oracle(by_key)(p, x), p, (p, x))
            check(h(lay, x), oracle(by_field)(lay, x), lay, (lay, x))


def test_a_rebound_module_integer_with_dict_arguments(monkeypatch):
    """Right values, and the plan's guard seen to work: the first calls after HEAD is
    rebound take the checked path (``_call``), a later one the plan again."""
    both = transforms(head, fresh=True)
    g = both["grad"]
    checked, real = [], g._call
    monkeypatch.setattr(g, "_call", lambda *a, **k: checked.append(a) or real(*a, **k))
    p, x = {"w": vec(0.4), "b": vec(-0.4)}, vec(1.0)
    for n in (2, 3, 2):
        monkeypatch.setitem(head.__globals__, "HEAD", n)
        for call in range(4):
            before = len(checked)
            for t in both.values():
                check(t(p, x), oracle(head, HEAD=n)(p, x), p, (p, x))
            if call == 0 and n != 2 or call == 3:  # (a rebound name seen; then planned)
                assert (len(checked) > before) == (call == 0), (n, call)


@pytest.mark.slow
def test_a_rebound_module_constant_with_dict_arguments(monkeypatch):
    g = s2s.grad(by_key)
    p, x = {"w": vec(0.4), "b": vec(-0.4)}, vec(1.0)
    for scale in (0.5, 0.5, 0.5, 3.0, 3.0, 3.0, -1.0):
        monkeypatch.setitem(by_key.__globals__, "SCALE", scale)
        check(g(p, x), oracle(by_key, SCALE=scale)(p, x), p, (p, x))


@pytest.mark.slow
def test_value_and_grad_and_argnums_of_pytrees():
    vg = s2s.value_and_grad(by_field, argnums=(0, 1))
    jvg = jax.jit(jax.value_and_grad(types.FunctionType(
        by_field.__code__, {**by_field.__globals__, "np": jnp}), argnums=(0, 1)))
    for cls in (P, P, P, Q, Layer, Layer, Layer):
        for call in range(3):
            args = (cls(vec(call), vec(-call)), vec(1.0 + call))
            value, grads = vg(*args)
            want_value, want = jvg(*args)
            np.testing.assert_allclose(value, want_value, rtol=1e-12)
            assert type(grads) is tuple
            check(grads[0], want[0], args[0], args)
            check(grads[1], want[1], args[1], args)


def test_the_plans_are_taken_and_the_jit_counts_its_calls():
    """Not only right: the fast paths run (a plan per structure, the jit's calls on
    them counted as hits), so the tests above test them."""
    g = s2s.grad(by_field)
    j = s2s.jit(g, backend="numpy")
    args = (P(vec(0.1), vec(0.2)), vec(1.0))
    for _ in range(10):
        check(j(*args), oracle(by_field)(*args), args[0], args)
    assert len(g._tree_plans) == 1
    info = j.cache_info()
    assert (info.hits, info.misses) == (9, 1)
    g2 = s2s.grad(by_key)
    for _ in range(3):
        g2({"w": vec(0.1), "b": vec(0.2)}, vec(1.0))
    plan = next(iter(g2._tree_plans.values()))
    assert plan[0].text is not None  # (the specialized code)
