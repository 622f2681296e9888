"""Constructors that call their object's methods (issue 23): super().__init__ chains
through your base classes (a diamond too, Python's MRO), Base.__init__(self, ...),
self.method(...) in __init__ (setting attributes, or reading them for a value), a
keyword for a parameter named like a field, *args/**kwargs in __init__ and forwarded
to super(), InitVar fields, super().__post_init__(), an abc.ABC base; a NamedTuple's
methods called in the function; objects (and dicts, tuples) carried through a loop
being differentiated, and chosen by an `if` on a value (under vmap: per example).

Every value against JAX on the same source (jax_twin: JAX runs the classes as Python
while tracing), float64 and float32; vmap against a Python loop; s2s.jit on both
backends.  The default tier runs ``test_default_tier`` (gradients against central
differences), the emitted-code check and one refusal; every case against JAX runs
under ``-m slow``."""

from __future__ import annotations

from typing import NamedTuple

import constructor_fns as F
import numpy as np
import pytest
import stmt_checks as C
from support import HAVE_JAX, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)

X = np.array([0.3, -0.5, 2.0])
XS = np.stack([X, -X, 0.5 * X, np.array([1.5, 0.2, -0.7])])
BUILT = ["super_chain", "diamond", "explicit_base_init", "inherited_init",
         "init_calls_methods", "keyword_for_a_field_name", "star_args_init",
         "forwarding_init", "initvar_field", "post_init_super", "named_tuple_methods",
         "abstract_base", "registered_class_method", "as_a_callee"]
CARRIED = ["record_carried", "record_carried_with_index", "dict_carried", "tuple_carried",
           "record_in_a_while", "record_carried_with_break", "nested_record_carried"]
CHOSEN = ["record_chosen", "record_chosen_by_if_statement", "dict_chosen",
          "chosen_then_carried", "nested_record_chosen"]
CASES = BUILT + CARRIED + CHOSEN


def _central(f, x, eps=1e-6):
    return np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(x.size)])


def test_default_tier() -> None:
    """The default tier's share (the rest runs under -m slow): a super() chain, methods
    called in __init__, an object carried by a loop, one chosen per example under
    vmap; gradients against central differences, vmap against a Python loop."""
    for name in ("super_chain", "init_calls_methods", "record_carried"):
        f = getattr(F, name)
        np.testing.assert_allclose(s2s.grad(f)(X), _central(f, X), rtol=1e-6, atol=1e-8)
    f = F.record_chosen
    C.close(s2s.vmap(f)(XS), [f(x) for x in XS], np.float64)
    np.testing.assert_allclose(s2s.vmap(s2s.grad(f))(XS), [_central(f, x) for x in XS],
                               rtol=1e-6, atol=1e-8)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", CASES)
def test_grad_jvp_vjp_against_jax(name, dtype) -> None:
    for x in (X, -X) if name in CHOSEN else (X,):  # (each path of the `if`)
        C.grads(F, J, name, x, (), dtype)


class _Pair(NamedTuple):
    w: np.ndarray
    b: np.ndarray

    def three(self):
        a, b, c = self
        return np.sum(a * b * c)

    def beyond(self):
        return np.sum(self[2])


def _three(x):
    p = _Pair(x, np.sin(x))
    return p.three()


def _beyond(x):
    p = _Pair(x, np.sin(x))
    return p.beyond()


def test_named_tuple_unpacked_and_indexed_in_its_method() -> None:
    """``w, b = self`` and ``self[1]`` in a NamedTuple's method read its fields (refused
    before: "`len` ... calls its `__len__`"), at calls 1 and 3 with other values; three
    names, or an index past its fields, refused at the user's line as Python's
    ValueError and IndexError."""
    g = s2s.grad(F.named_tuple_methods)
    for x in (X, 0.5 - X):
        np.testing.assert_allclose(g(x), _central(F.named_tuple_methods, x), rtol=1e-6,
                                   atol=1e-8)
    with pytest.raises(s2s.TransformError, match="expected 3, got 2") as info:
        s2s.grad(_three)(X)
    assert "a, b, c = self" in str(info.value)
    with pytest.raises(s2s.TransformError, match="out of its range") as info:
        s2s.grad(_beyond)(X)
    assert "self[2]" in str(info.value)


@pytest.mark.slow
@pytest.mark.parametrize("name", CASES)
def test_jacobians_vmap_jit(name) -> None:
    C.jacobians(F, J, name, X, ())
    C.vmapped(F, name, XS, (), np.float64)
    C.jitted(F, J, name, X, ())


@pytest.mark.slow
@pytest.mark.parametrize("name", CARRIED + CHOSEN)
def test_vmap_float32_and_jit_of_vmap(name) -> None:
    """Under vmap the examples take the `if` differently (XS holds both signs): each
    field is selected per example; float32 stays float32."""
    f = getattr(F, name)
    xs = XS.astype(np.float32)
    got = s2s.vmap(s2s.grad(f))(xs)
    assert got.dtype == np.float32
    C.close(got, [np.asarray(jax.grad(getattr(J, name))(x)) for x in xs], np.float32)
    C.close(s2s.jit(s2s.vmap(f))(XS), [f(x) for x in XS], np.float64)


@pytest.mark.slow
def test_values_change_between_calls() -> None:
    """The 1st, 3rd and 10th call of one transform (and of jit), other values each."""
    g = s2s.value_and_grad(F.init_calls_methods)
    j = s2s.jit(s2s.grad(F.record_carried), backend="jax")
    for call in range(1, 11):
        x = X * (1.0 + 0.1 * call) - 0.05 * call
        value, grad = g(x)
        if call in (1, 3, 10):
            want_value, want = jax.value_and_grad(J.init_calls_methods)(x)
            C.close(value, want_value, np.float64, f"call {call}")
            C.close(grad, want, np.float64, f"call {call}")
            C.close(j(x), jax.grad(J.record_carried)(x), np.float64, f"jit, call {call}")


@pytest.mark.slow
def test_state_read_by_a_base_constructor_changed_between_calls(monkeypatch) -> None:
    """A module constant and a class attribute a base class's __init__ reads, and a
    base's method, changed between calls: the next call reads them, as Python does."""
    g, j = s2s.value_and_grad(F.super_chain), s2s.jit(F.super_chain)
    g(X), j(X)
    for module in (F, J):
        monkeypatch.setattr(module, "GAIN", 4.0)
        monkeypatch.setattr(module.Base, "shift", -1.0)
    want_value, want = jax.value_and_grad(J.super_chain)(X)
    value, grad = g(X)
    C.close(value, F.super_chain(X), np.float64, "GAIN and shift changed")
    C.close(value, want_value, np.float64)
    C.close(grad, want, np.float64)
    C.close(j(X), F.super_chain(X), np.float64, "jit")


@pytest.mark.slow
def test_a_method_the_constructor_calls_replaced_between_calls(monkeypatch) -> None:
    """`Prepared.prepare` (called in __init__) and `Base.__init__` (called by
    super() two classes up) replaced after a first call: the next call runs them."""
    g = s2s.value_and_grad(F.init_calls_methods)
    h = s2s.grad(F.super_chain)
    g(X), h(X)

    def prepare(self, w):
        self.w2 = np.cos(w) * self.w

    def base_init(self, w):
        self.w = w ** 3

    monkeypatch.setattr(F.Prepared, "prepare", prepare)
    monkeypatch.setattr(F.Base, "__init__", base_init)
    value, grad = g(X)
    C.close(value, F.init_calls_methods(X), np.float64, "prepare replaced")
    eps = 1e-6
    fd = [(F.init_calls_methods(X + eps * e) - F.init_calls_methods(X - eps * e)) / (2 * eps)
          for e in np.eye(3)]
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-8)
    fd = [(F.super_chain(X + eps * e) - F.super_chain(X - eps * e)) / (2 * eps)
          for e in np.eye(3)]
    np.testing.assert_allclose(h(X), fd, rtol=1e-6, atol=1e-8)


@pytest.mark.slow
def test_nan_and_size_one() -> None:
    x = np.array([0.3, np.nan, 2.0])
    for name in ("super_chain", "record_carried"):
        got = s2s.grad(getattr(F, name))(x)
        want = np.asarray(jax.grad(getattr(J, name))(x))
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    one = np.array([0.7])
    C.close(s2s.grad(F.record_chosen)(one), jax.grad(J.record_chosen)(one), np.float64)
    C.close(s2s.vmap(F.record_chosen)(one[:, None]), [F.record_chosen(one)], np.float64)


@pytest.mark.slow
def test_an_object_given_back_from_a_loop_and_an_if() -> None:
    """vmap and jit give back the object the loop (or the `if`) made: fields stacked
    or selected per example, its class the user's; the caller's writes into a result
    change no later one."""
    got = s2s.vmap(F.carried_back)(XS)
    assert type(got) is F.Model
    C.close(got.w2, np.stack([F.carried_back(x).w2 for x in XS]), np.float64)
    got = s2s.vmap(F.chosen_back)(XS)
    assert type(got) is F.Model
    C.close(got.w, np.stack([F.chosen_back(x).w for x in XS]), np.float64)
    jitted = s2s.jit(F.carried_back)
    for _ in range(3):
        got = jitted(X)
        C.close(got.w, F.carried_back(X).w, np.float64)
        got.w[:] = 99.0


def test_emitted_code_reads_as_written() -> None:
    text = s2s.grad(F.init_calls_methods).source
    assert "def Prepared_prepare_vjp(" in text and "def Prepared_norm_vjp(" in text
    text = s2s.grad(F.super_chain).source
    assert "Leaf_init(x)" in text and "def Middle_init_vjp" in text
    text = s2s.grad(F.record_carried).source
    assert "for _ in range(3):" in text and "tape.pop()" in text


@pytest.mark.parametrize("name, says, where", [
    ("with_new", "it defines `__new__`", "WithNew(x)"),
    ("with_metaclass", "its metaclass defines `__call__`", "WithMeta(x)"),
    ("with_getattribute", "it defines `__getattribute__`", "GetAttribute(x)"),
    ("local_class", "`class` definitions inside a transformed function", "class Local"),
    ("recursive_method", "calls `grow`, which calls `grow`, which calls itself",
     "Recursive(x)"),
    ("value_of_a_setter", "sets attributes of the object and returns a value",
     "ValueOfASetter(x)"),
    ("kwargs_method", "calls `setup`, which takes `**kwargs`", "KwargsMethod(x)"),
    ("changes_structure_in_loop", "`m` changes structure inside the loop",
     "for _ in range(2)"),
])
def test_refused_located(name, says, where) -> None:
    """Each refusal names the user's file and line and says why, never emitted
    code, never an internal exception."""
    with pytest.raises(s2s.TransformError) as err:
        s2s.grad(getattr(F, name))(X)
    text = str(err.value)
    assert says in text and 'constructor_fns.py", line ' in text, text
    assert where in text and "<s2s" not in text, text
