"""Issue 23 (audit19): a method that sets attributes of an object the function built
and reads a ``@property`` (a subclass's own too) or an attribute of the class body
(``eps``; ``count = 0`` that the method then sets on the object), and a property's
setter run by ``self.w = w`` in ``__init__`` or a method.  Before: "the dict has no
key 'scale'" (an internal-looking error at the method's line), and for the setter in
``__init__`` a wrong number (the value stored as the field ``w``, the setter's
``self._w = np.sin(v)`` never run, the getter never called).

The sweep (``-m slow``) runs stateful19_fns.py's functions through grad at calls 1, 3
and 10, value_and_grad, jvp, vmap of grad, hessian, jit of grad on NumPy and on JAX,
special inputs and the caller writing into results, in float64 and float32, against
JAX on the same source.  The default tier: central differences over calls, a class
attribute changed by the caller between calls, and the refusals, located."""

from __future__ import annotations

import newcomer_harness as H  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
import stateful19_fns as F
from support import HAVE_JAX, central_grad

import s2s

X4 = np.array([0.3, -0.7, 0.45, 1.2])
SPECIAL = {"zeros": np.zeros(4), "one": np.array([0.3])}
CASES = {name: ((X4,), SPECIAL) for name in (
    "property_read_in_a_stateful_call", "subclass_property_in_a_stateful_call",
    "class_default_shadowed_by_a_field", "setter_in_init", "setter_in_a_stateful_method",
    "in_a_callee")}
PROBE = H.Probe(F, CASES, ("grad", "value_and_grad", "jvp", "vmap_grad", "hessian", "jit",
                           "jit_jax", "special", "alias", "alias_all"), tol64=(1e-6, 1e-8))


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", list(CASES))
def test_against_jax(name, dtype) -> None:
    label, verdicts = H.classify(PROBE, name, H.twin(F), dtype)
    assert label == "ok", verdicts


@pytest.mark.parametrize("name", list(CASES))
def test_against_central_differences(name) -> None:
    f = getattr(F, name)
    got = s2s.grad(f)(X4)
    np.testing.assert_allclose(got, central_grad(f, X4), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s.value_and_grad(f)(X4)[0], f(X4), rtol=1e-12)


def test_a_class_attribute_changed_between_calls_is_read_at_each_call() -> None:
    """``Norm.eps`` and ``Norm.momentum`` (read as ``self.eps`` in the stateful
    ``__call__``) changed by the caller between calls 1, 3 and 10: each call's
    gradient is Python's with the values of that moment."""
    f = F.property_read_in_a_stateful_call
    g = s2s.grad(f)
    saved = F.Norm.eps, F.Norm.momentum
    try:
        for call in (1, 3, 10):
            F.Norm.eps, F.Norm.momentum = 0.1 * call, 0.05 * call
            x = X4 * (1 + 0.07 * call)
            np.testing.assert_allclose(g(x), central_grad(f, x), rtol=1e-6, atol=1e-8,
                                       err_msg=f"call {call}")
    finally:
        F.Norm.eps, F.Norm.momentum = saved


def _local_class():
    class Local:
        eps = 0.5

        def __init__(self, n):
            self.mean = np.zeros(n)

        def __call__(self, x):
            self.mean = self.mean + x
            return x * self.eps

    def uses_local(x):
        b = Local(x.size)
        y = b(x)
        return np.sum(y * b.mean)

    return uses_local


class NoSetter:
    def __init__(self, w):
        self._w = w

    @property
    def w(self):
        return self._w

    def bump(self, v):
        self.w = self._w + v
        return v


class InPlace(F.Stored):
    def bump(self, v):
        self.w += v
        return v


def sets_a_property_without_setter(x):
    p = NoSetter(x)
    y = p.bump(x)
    return np.sum(y)


def updates_a_property_in_place(x):
    p = InPlace(x)
    y = p.bump(x)
    return np.sum(y * p.w)


@pytest.mark.parametrize("make, says, quoted", [
    (_local_class, "which its module does not name", "y = b(x)"),
    (lambda: sets_a_property_without_setter, "has no setter", "y = p.bump(x)"),
    (lambda: updates_a_property_in_place, "in place", "y = p.bump(x)"),
])
def test_what_cannot_be_written_so_is_refused_located(make, says, quoted) -> None:
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(make())(X4)
    message = str(info.value)
    assert says in message and quoted in message and "<s2s" not in message, message
