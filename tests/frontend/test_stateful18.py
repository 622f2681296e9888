"""Issue 23: a method that sets attributes of an object the function built and returns
a value (``y = bn(x, training=True)``, ``m = avg.add(v)``, ``bn(x, training=True)`` as
a statement): the method written returning ``(value, fields)``, the object's name
then holding the fields it leaves (s2s/frontend/stateful.py).

The sweep (``-m slow``) runs stateful18_fns.py's functions through grad at calls 1, 3
and 10, value_and_grad, jvp, vmap of grad, hessian, jit of grad on NumPy and on JAX,
grad at special inputs and the caller writing into the results, in float64 and
float32, against JAX on the same source.  The default tier checks them against
central differences over three calls, and the refusals, located."""

from __future__ import annotations

import newcomer_harness as H  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
import stateful18_fns as F
from support import HAVE_JAX, central_grad

import s2s

M32 = np.array([[0.3, -0.7], [0.45, 1.2], [-0.2, 0.8]])
X4 = np.array([0.3, -0.7, 0.45, 1.2])

CASES = {
    "norm_train_then_eval": ((M32,), {"const_col": np.array([[1.0, 0.3], [1.0, -0.2],
                                                             [1.0, 0.5]])}),
    "running_mean_loop": ((X4,), {"zeros": np.zeros(4), "one": np.array([0.3])}),
    "called_for_its_effect": ((M32,), {"one_row": np.array([[0.3, -0.4]])}),
    "new_object_each_iteration": ((X4,), {"zeros": np.zeros(4), "one": np.array([0.3])}),
}
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
def test_against_central_differences_over_calls(name) -> None:
    """Grad at three calls of changing values (the object is built afresh at each
    call: its statistics start from the constructor's), the caller writing into the
    previous result."""
    f = getattr(F, name)
    g = s2s.grad(f)
    x0 = CASES[name][0][0]
    previous = None
    for c in (1, 3, 10):
        x = x0 * (1.0 + 0.07 * c)
        got = g(x)
        np.testing.assert_allclose(got, central_grad(f, x), rtol=1e-6, atol=1e-8,
                                   err_msg=f"{name} call {c}")
        if previous is not None:
            previous[...] = np.nan  # (the caller writes into what it was given)
        previous = got
    np.testing.assert_allclose(s2s.value_and_grad(f)(x0)[0], f(x0), rtol=1e-12)


class Holder:
    def __init__(self, w):
        self.w = w

    def bump(self, v):
        self.w = self.w + v
        return self.w * 2.0

    def twice(self, v, flag):
        if flag:
            self.w = self.w * v
            return v
        self.w = self.w + v
        return v * 3.0


def held_by_another_name(x):
    h = Holder(np.cos(x))
    other = h
    y = h.bump(x)
    return np.sum(y * other.w)


def passed_then_called(h, x):
    y = h.bump(x)
    return np.sum(y)


def called_in_a_callee(x):
    return passed_then_called(Holder(np.cos(x)), x)


def returns_from_two_places(x):
    h = Holder(np.cos(x))
    y = h.twice(x, True)
    return np.sum(y * h.w)


@pytest.mark.parametrize("fn, says, quoted", [
    (held_by_another_name, "another name, a container", "y = h.bump(x)"),
    (called_in_a_callee, "the caller passed it", "y = h.bump(x)"),
    (returns_from_two_places, "returns from more than one place", "y = h.twice(x, True)"),
])
def test_where_python_would_see_the_change_elsewhere_refused_located(fn, says, quoted):
    """Another name holding the object would see Python's change, as would the
    caller of a function given the object: refused, located at your line."""
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(fn)(X4)
    message = str(info.value)
    assert says in message and quoted in message and "<s2s" not in message, message


def read_before_the_call(x):
    h = Holder(np.cos(x))
    return np.sum(h.w) + np.sum(h.bump(x))


def read_after_the_call(x):
    h = Holder(np.cos(x))
    return np.sum(h.bump(x)) + np.sum(h.w)


def test_a_call_inside_an_expression_runs_first_only_where_python_runs_it_first():
    """``np.sum(h.bump(x)) + np.sum(h.w)``: the call runs first (Python reads ``h.w``
    after it: the new field); ``np.sum(h.w) + np.sum(h.bump(x))`` reads ``h.w``
    before the call: refused, located."""
    x = X4 * 1.3
    np.testing.assert_allclose(s2s.grad(read_after_the_call)(x), central_grad(
        read_after_the_call, x), rtol=1e-6, atol=1e-8)
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(read_before_the_call)(X4)
    assert "inside an expression" in str(info.value), str(info.value)


class Squares:
    def __init__(self, w):
        self.w = w

    def f(self):
        return np.sum(self.w ** 2)


class Sines:
    def __init__(self, w):
        self.w = w

    def f(self):
        return np.sum(np.sin(self.w))


def class_changes_in_a_loop(x):
    m = Squares(x)
    t = 0.0
    for _ in range(3):
        t = t + m.f()
        m = Sines(m.w * 1.1)
    return t + m.f()


@pytest.mark.parametrize("transform", ["grad", "jvp", "vmap"])
def test_an_object_whose_class_a_loop_changes_is_refused_located(transform) -> None:
    """``m = Sines(m.w)`` in a loop over a ``Squares`` made before it: the body's
    ``m.f()`` is ``Squares.f`` only in the first iteration.  Before probe 18 grad, jvp
    and vmap all gave wrong numbers (each iteration ran ``Squares.f``)."""
    run = {"grad": lambda: s2s.grad(class_changes_in_a_loop)(X4),
           "jvp": lambda: s2s.jvp(class_changes_in_a_loop, (X4,), (X4,)),
           "vmap": lambda: s2s.vmap(class_changes_in_a_loop)(np.stack([X4, X4]))}
    with pytest.raises(s2s.TransformError) as info:
        run[transform]()
    message = str(info.value)
    assert "holds a `Squares` object where the loop starts and a `Sines` object" in (
        message) and "for _ in range(3):" in message, message
