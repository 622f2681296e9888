"""Issue 23: objects of your classes through Python's protocols (``obj[k]``,
``len(obj)``, operators and their reflected forms, ``-obj``, ``a += b``), each the
call of the class's own method Python makes (s2s/frontend/object_protocols.py);
refused, located, where Python's choice is not known when s2s transforms.

The sweep (``-m slow``) runs protocols14_fns.py's functions through grad at calls 1, 3
and 10, value_and_grad, jvp, vmap of grad, hessian, jit of grad on NumPy and on JAX,
grad at special inputs and the aliasing check, in float64 and float32, against JAX on
the same source (``newcomer_harness.twin``).  The default tier checks two functions
against central differences, the refusals, module state changed between calls and
aliasing, without JAX compiles."""

from __future__ import annotations

import newcomer_harness as H  # (pytest puts this directory on sys.path)
import numpy as np
import protocols14_fns as F
import pytest
from support import HAVE_JAX

import s2s

X4 = np.array([0.3, -0.7, 0.45, 1.2])

CASES = {
    "getitem_string_key": ((X4,), {"zeros": np.zeros(4), "one": np.array([0.3])}),
    "getitem_runtime_key": ((X4,), {"zeros": np.zeros(4), "one": np.array([0.3])}),
    "len_protocol": ((X4,), {"one": np.array([0.3])}),
    "vec_operators": ((X4,), {"zeros": np.zeros(4)}),
    "subclass_reflected": ((X4,), {"one": np.array([0.3])}),
    "module_state_method": ((X4,), {"zeros": np.zeros(4)}),
    "seq_layers_comprehension": ((X4,), {"one": np.array([0.3])}),
    "getitem_returns_field": ((X4,), {"zeros": np.zeros(4)}),
    "property_setter_loop": ((X4,), {"one": np.array([0.3])}),
    "field_set": ((X4,), {"zeros": np.zeros(4)}),
    "dataclass_literal_factory": ((X4,), {"zeros": np.zeros(4)}),
    "module_object_protocols": ((X4,), {"zeros": np.zeros(4)}),
}
PROBE = H.Probe(F, CASES, ("grad", "value_and_grad", "jvp", "vmap_grad", "hessian", "jit",
                           "jit_jax", "special", "alias"), tol64=(1e-6, 1e-8))


@pytest.mark.slow
@pytest.mark.every_case
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", list(CASES))
def test_protocols_against_jax(name, dtype) -> None:
    label, verdicts = H.classify(PROBE, name, H.twin(F), dtype)
    assert label == "ok", verdicts


@pytest.mark.slow  # (0.25 to 0.7 s of CPU each; the default tier keeps the test below)
@pytest.mark.parametrize("name", ["subclass_reflected", "seq_layers_comprehension",
                                  "property_setter_loop", "dataclass_literal_factory"])
def test_protocols_against_differences(name) -> None:
    """``a - b`` with ``b`` of a subclass overriding ``__rsub__`` (Python calls it
    first; an object held via ``a, b = ...`` was passed to it as a dict: AttributeError
    from emitted code), a field holding a list of objects a comprehension built
    (``net.layers[1].w``: "TypeError: 'Layer' object is not subscriptable" from
    emitted code), ``p.w = ...`` through a setter in a loop ("only names can be
    assigned to"), ``sum(self.scales)`` of a ``default_factory`` list ("`sum` is
    supported over a list or tuple whose length is known"): grad at calls 1, 3 and
    10, values changing."""
    fn, g = getattr(F, name), s2s.grad(getattr(F, name))
    for call in range(1, 11):
        x = X4 * (1.0 + 0.07 * call)
        got = g(x)
        if call in (1, 3, 10):
            np.testing.assert_allclose(got, H.fd_grad(fn, (x,), 1e-6), rtol=1e-6,
                                       atol=1e-8)


@pytest.mark.slow  # (ten calls, a module global changed: ~1 s)
def test_a_method_reads_module_state_at_each_call() -> None:
    """``Scaled.__mul__`` and ``__call__`` read the global ``GAIN``: a change between
    calls (after the 1st, before the 3rd and the 10th) is seen."""
    g = s2s.grad(F.module_state_method)
    try:
        for call in range(1, 11):
            F.GAIN = {1: 1.5, 3: 0.7, 10: -2.0}.get(call, F.GAIN)
            got = g(X4)
            if call in (1, 3, 10):
                np.testing.assert_allclose(got, H.fd_grad(F.module_state_method, (X4,),
                                                          1e-6), rtol=1e-6, atol=1e-8)
    finally:
        F.GAIN = 1.5


def test_a_module_objects_field_changed_between_calls() -> None:
    """``GRID[x]`` (a run-time key: refused before, "subscripts of this constant are
    supported with constant keys only"), ``GRID * x``, ``2.0 * GRID``, ``-GRID`` of a
    module's object (``2.0 * GRID`` raised "TypeError: unsupported operand type(s)"
    from inside s2s): its methods called bound to it, its field read at each call;
    the field replaced before the 3rd and the 10th call (its length too)."""
    g, w = s2s.grad(F.module_object_protocols), F.GRID.w
    try:
        for call in range(1, 11):
            F.GRID.w = {3: np.array([0.5, 1.0, -1.0, 2.0]), 10: np.array([3.0])}.get(
                call, F.GRID.w)
            if call in (1, 3, 10):
                np.testing.assert_allclose(g(X4), H.fd_grad(F.module_object_protocols,
                                                            (X4,), 1e-6), rtol=1e-6,
                                           atol=1e-8)
            else:
                g(X4)
    finally:
        F.GRID.w = w


@pytest.mark.slow  # (the default tier's budget; the sweep's "alias" stage checks it too)
def test_a_field_returned_by_getitem_is_not_shared() -> None:
    """``Holder(x)[0]`` is ``x`` itself in Python; grad's result (``x``) and jit's
    (the value) do not share memory with the argument, and writing into one does not
    change the next."""
    x = X4.copy()
    for f in (s2s.grad(F.getitem_returns_field), s2s.jit(F.getitem_value)):
        out = f(x)
        np.testing.assert_allclose(out, X4)
        assert not np.shares_memory(out, x)
        out[...] = 5.0
        np.testing.assert_allclose(f(x), X4)
    np.testing.assert_array_equal(x, X4)


class Plain:
    def __init__(self, d):
        self.d = d


class Lazy:
    def __init__(self, d):
        self.d = d

    def __mul__(self, other):
        if isinstance(other, Lazy):
            return NotImplemented
        return Lazy(self.d * other)


class Acc:
    def __init__(self, d):
        self.d = d

    def __add__(self, other):
        return Acc(self.d + other.d)

    def __iadd__(self, other):
        self.d = self.d + 2.0 * other.d
        return self


class Sum:
    def __init__(self, d):
        self.d = d

    def __add__(self, other):
        return Sum(self.d + other.d)


def array_left_of_object(x):
    return np.sum((x * F.Vec(x)).data)


def may_return_not_implemented(x):
    return np.sum((Lazy(x) * 2.0).d)


def indexed_without_getitem(x):
    return np.sum(Plain(x)[0])


def sliced_object(x):
    return np.sum(F.Box(x)[1:2])


def in_place_add(x):
    a = Acc(2.0 * x)
    a += Acc(np.cos(x))
    return np.sum(a.d)


def added_in_place_without_iadd(x):
    a = Sum(2.0 * x)
    a += Sum(np.cos(x))
    return np.sum(a.d)


@pytest.mark.parametrize("fn, says, quoted", [  # (one case by default: conftest.py)
    (array_left_of_object, "applies it to each element", "(x * F.Vec(x)).data"),
    (may_return_not_implemented, "may return `NotImplemented`", "(Lazy(x) * 2.0).d"),
    (indexed_without_getitem, "the class defines none", "np.sum(Plain(x)[0])"),
    (sliced_object, "with a slice or several keys", "F.Box(x)[1:2]"),
    (in_place_add, "calls its `__iadd__`", "a += Acc(np.cos(x))"),
])
def test_protocols_python_decides_at_run_time_are_refused_located(fn, says, quoted) -> None:
    """Where Python's choice of method is not known when s2s transforms (NumPy's
    operator of an array and an object works on each element; a method that may return
    ``NotImplemented``), where Python raises (no ``__getitem__``), and where the method
    changes the object in place (``__iadd__``): refused at the user's line."""
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(fn)(X4)
    message = str(info.value)
    assert says in message and "test_protocols14.py" in message, message
    assert quoted in message, message


class Getter:
    def __init__(self, w):
        self._w = w

    @property
    def w(self):
        return self._w

    def me(self):
        return self


class Counted(F.Weights):
    @F.Weights.w.setter
    def w(self, value):
        self._w = value
        self.steps += 1


def set_through_another_name(x):
    p = F.Weights(x)
    q = p
    p.w = 2.0 * x
    return np.sum(q.w)


def set_on_an_object_in_a_list(x):
    p = F.Weights(x)
    ps = [p]
    p.w = 2.0 * x
    return np.sum(ps[0].w)


def set_after_a_method_returned_it(x):
    p = Getter(x)
    q = p.me()
    p._w = 2.0 * x
    return np.sum(q.w)


def set_read_by_a_lambda(x):
    p = F.Weights(x)
    f = lambda: p.w  # noqa: E731
    p.w = 2.0 * x
    return np.sum(f())


def set_without_a_setter(x):
    p = Getter(x)
    p.w = 2.0 * x
    return np.sum(p.w)


def sets_the_callers_object(p, x):
    p.w = x
    return np.sum(p.w)


def set_in_a_callee(x):
    return sets_the_callers_object(F.Weights(x), 3.0 * x)


def setter_adds_in_place(x):
    p = Counted(x)
    p.w = 2.0 * x
    return np.sum(p.w) * p.steps


@pytest.mark.parametrize("fn, says, quoted", [  # (one case by default)
    (set_through_another_name, "another name, a container", "p.w = 2.0 * x"),
    (set_on_an_object_in_a_list, "another name, a container", "p.w = 2.0 * x"),
    (set_after_a_method_returned_it, "a method's result", "p._w = 2.0 * x"),
    (set_read_by_a_lambda, "a nested function or lambda", "p.w = 2.0 * x"),
    (set_without_a_setter, "has no setter", "p.w = 2.0 * x"),
    (set_in_a_callee, "the caller passed it", "p.w = x"),
    (setter_adds_in_place, "would change in place", "self.steps += 1"),
])
def test_a_set_python_would_see_elsewhere_is_refused_located(fn, says, quoted) -> None:
    """``p.w = v`` rebinds ``p`` to the object with its new fields: Python's change of
    the object only where nothing else holds it.  Where another name, a list, a
    method's result, a lambda or the caller holds it, where the property has no setter
    (AttributeError), and where the setter adds into a field in place (an array field
    would change in place in Python): refused, located."""
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(fn)(X4)
    message = str(info.value)
    assert says in message and quoted in message, message


@pytest.mark.slow  # (the default tier's budget)
def test_a_field_set_in_the_function_is_read_by_a_method() -> None:
    """test_built_objects' ``attribute_set_in_function`` (``m.w = x * 3.0``, then
    ``m.energy(x)``, refused before: "only names can be assigned to"): the method
    reads the new field; ``w2``, computed from the old one, keeps its value."""
    import built_object_fns as B

    np.testing.assert_allclose(s2s.grad(B.attribute_set_in_function)(X4), 9.0 * X4 ** 2,
                               rtol=1e-12)


@pytest.mark.slow  # (the default tier's budget)
def test_augmented_assignment_without_iadd_rebinds() -> None:
    """``a += b`` of a class without ``__iadd__`` is Python's ``a = a + b`` (it was
    refused: "would write into an array `a` shares with another name")."""
    np.testing.assert_allclose(s2s.grad(added_in_place_without_iadd)(X4), 2.0 - np.sin(X4),
                               rtol=1e-12)
