"""Objects of your own classes built inside the function (issue 23): unregistered
dataclasses (defaults, default_factory, keywords, frozen, __post_init__,
dataclasses.replace), classes whose __init__ computes, calls a helper, reads a module
constant or sets an attribute on a static argument; their attributes (class
attributes too) and methods (__call__, a method calling the others), an object given
to your callee, two instances, objects built in a loop and a comprehension.  Every
value against JAX on the same source (jax_twin: JAX runs the classes as Python
objects while tracing), float64 and float32; vmap against a Python loop."""

from __future__ import annotations

import built_object_fns as F
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
XS = np.stack([X, 0.5 * X, -X])
CASES = ["defaults", "keyword_array_field", "positional_fields", "factory_field",
         "frozen_post_init", "post_init", "computing_init", "method_calls_method",
         "no_argument_init", "helper_and_static_test", "passed_to_a_callee",
         "two_instances", "built_in_a_loop", "built_in_a_comprehension",
         "a_raise_never_taken", "reads_module_constant", "replaced", "field_of_array",
         "calls_another", "method_of_a_call", "passed_through_two_callees",
         "method_returning_an_object", "nested_objects",
         "fields_named_like_array_attributes", "list_of_objects", "dataclass_variants",
         "dataclass_holding_an_object", "with_super", "init_calls_a_method", "star_init",
         "carried_in_a_loop"]  # (the last four were refused: test_constructors.py)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", CASES)
def test_grad_jvp_vjp_against_jax(name, dtype) -> None:
    C.grads(F, J, name, X, (), dtype)


@pytest.mark.slow
@pytest.mark.parametrize("name", CASES)
def test_jacobians_vmap_jit(name) -> None:
    C.jacobians(F, J, name, X, ())
    C.vmapped(F, name, XS, (), np.float64)
    C.jitted(F, J, name, X, ())


@pytest.mark.slow
def test_an_object_chosen_by_a_run_time_test() -> None:
    """`m = Model(x) if np.sum(x) > 0 else Model(-x)`: each path's object, under
    grad, jvp, vjp and jacobians; under vmap the `if` joins the record's fields, each
    selected per example (tests/frontend/test_constructors.py has the rest)."""
    for x in (X, -X):
        C.grads(F, J, "chosen_by_a_test", x, (), np.float64)
    np.testing.assert_allclose(s2s.jacrev(F.chosen_by_a_test)(-X),
                               jax.grad(J.chosen_by_a_test)(-X), rtol=1e-9)
    xs = np.stack([X, -X, 0.5 * X])
    C.close(s2s.vmap(F.chosen_by_a_test)(xs), [F.chosen_by_a_test(x) for x in xs],
            np.float64)


@pytest.mark.slow
def test_values_change_between_calls() -> None:
    """The 1st, 3rd and 10th call of one transform, each with other values."""
    g = s2s.value_and_grad(F.method_calls_method)
    for call in range(1, 11):
        x = X * call + 0.1 * call
        value, grad = g(x)
        want_value, want = jax.value_and_grad(J.method_calls_method)(x)
        C.close(value, want_value, np.float64, f"call {call}")
        C.close(grad, want, np.float64, f"call {call}")


def test_module_constant_read_in_init_changed_between_calls(monkeypatch) -> None:
    g = s2s.grad(F.reads_module_constant)
    C.close(g(X), jax.grad(J.reads_module_constant)(X), np.float64)
    monkeypatch.setattr(F, "SCALE", 5.0)
    monkeypatch.setattr(J, "SCALE", 5.0)
    C.close(g(X), jax.grad(J.reads_module_constant)(X), np.float64, "SCALE = 5")
    C.close(s2s.jit(F.reads_module_constant)(X), F.reads_module_constant(X), np.float64)


def test_module_flag_given_to_a_constructor_changed_between_calls(monkeypatch) -> None:
    """`Flagged(x, squashed=USE_BIAS)`: the flag decides the constructor's branch when
    transforming, so changing it makes s2s generate again (it ran the old branch)."""
    g, j = s2s.value_and_grad(F.flag_from_module), s2s.jit(F.flag_from_module)
    for flag in (True, False, True):
        monkeypatch.setattr(F, "USE_BIAS", flag)
        monkeypatch.setattr(J, "USE_BIAS", flag)
        want_value, want = jax.value_and_grad(J.flag_from_module)(X)
        value, grad = g(X)
        C.close(value, want_value, np.float64, f"USE_BIAS={flag}")
        C.close(grad, want, np.float64, f"USE_BIAS={flag}")
        C.close(j(X), F.flag_from_module(X), np.float64, f"jit, USE_BIAS={flag}")


def test_class_attributes_changed_between_calls(monkeypatch) -> None:
    """`Cfg.wd = 0.5` changes the class attribute, not the dataclass's __init__
    default (Python's own meaning: `Cfg().wd` is still 0.01); a plain class's
    attribute read by `self.scale` is read at each call."""
    vg = s2s.value_and_grad(F.defaults)
    before = vg(X)
    monkeypatch.setattr(F.Cfg, "wd", 0.5)
    value, grad = vg(X)
    C.close(value, F.defaults(X), np.float64)  # Python's value
    C.close(value, before[0], np.float64)
    C.close(grad, before[1], np.float64)
    g = s2s.value_and_grad(F.no_argument_init)
    g(X)
    monkeypatch.setattr(F.Const, "scale", 5.0)
    monkeypatch.setattr(J.Const, "scale", 5.0)
    value, grad = g(X)
    C.close(value, F.no_argument_init(X), np.float64)
    C.close(grad, jax.grad(J.no_argument_init)(X), np.float64)


def test_a_method_replaced_between_calls(monkeypatch) -> None:
    """`Model.energy = cubic_energy` after a first call: the next call (of the same
    transform, a new one, and jit) runs the new method, as Python does."""
    g, j = s2s.value_and_grad(F.computing_init), s2s.jit(F.computing_init)
    g(X), j(X)
    monkeypatch.setattr(F.Model, "energy", F.cubic_energy)
    monkeypatch.setattr(J.Model, "energy", J.cubic_energy)
    want_value, want = jax.value_and_grad(J.computing_init)(X)
    for got in (g(X), s2s.value_and_grad(F.computing_init)(X)):
        C.close(got[0], F.computing_init(X), np.float64)
        C.close(got[0], want_value, np.float64)
        C.close(got[1], want, np.float64)
    C.close(j(X), F.computing_init(X), np.float64)


def test_nan_input_as_jax() -> None:
    x = np.array([0.3, np.nan, 2.0])
    for name in ("computing_init", "frozen_post_init"):
        got = s2s.grad(getattr(F, name))(x)
        want = np.asarray(jax.grad(getattr(J, name))(x))
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        C.close(got[~np.isnan(got)], want[~np.isnan(want)], np.float64, name)


def test_vmap_over_a_field_and_float32() -> None:
    xs = XS.astype(np.float32)
    got = s2s.vmap(s2s.grad(F.field_of_array))(xs)
    assert got.dtype == np.float32
    want = np.stack([np.asarray(jax.grad(J.field_of_array)(x)) for x in xs])
    C.close(got, want, np.float32)


def test_an_object_given_back() -> None:
    """vmap, jit and jvp give back the object (fields stacked, its __init__ not run
    again); vjp of it is refused: it is not a pytree (JAX refuses it too)."""
    got = s2s.vmap(F.returns_one)(XS)
    assert type(got) is F.Model
    C.close(got.w2, np.stack([F.returns_one(x).w2 for x in XS]), np.float64)
    out, tangent = s2s.jvp(F.returns_one, (X,), (np.ones(3),))
    assert type(out) is F.Model and type(tangent) is F.Model
    C.close(tangent.w2, 4.0 * np.ones(3), np.float64)
    jitted = s2s.jit(F.returns_one)
    for _ in range(3):  # (the caller writing into a result changes no later one)
        got = jitted(X)
        C.close(got.w, 2.0 * X, np.float64)
        got.w[:] = 99.0
    with pytest.raises(s2s.TransformError) as err:
        s2s.vjp(F.returns_one, X)
    assert "not a pytree" in str(err.value) and "return its fields" in str(err.value)


def test_jit_on_jax_keeps_isinstance() -> None:
    """On the JAX backend a class is translated (its methods run on JAX): objects of
    the user's own class, and one built there, are still its instances."""
    for _ in range(3):
        C.close(s2s.jit(F.isinstance_tests, backend="jax")(X), F.isinstance_tests(X),
                np.float64)


def test_emitted_code_reads_as_written() -> None:
    text = s2s.grad(F.computing_init).source
    assert "Model_init(x)" in text and "Model_energy_of_objects(m, x)" in text
    assert "def Model_call_vjp(" in text


@pytest.mark.every_case
@pytest.mark.parametrize("name, says, where", [
    ("init_changes_module_state", "a method changes its object", "REGISTRY.append"),
    # (`m.w = v` sets the field now, test_protocols14.py; refused where a list holds m)
    ("mutated_after_escaping", "a container", "m.w = x * 3.0"),
    ("missing_attribute", "`.b` is not a field", "np.sum(c.b)"),
    ("local_class", "`class` definitions inside a transformed function", "class Local"),
    ("global_in_init", "`global` is not supported", "global SCALE"),
    ("frozen_assigns", "Python raises FrozenInstanceError", "FrozenAssigns(x)"),
    ("attribute_hook", "it defines `__setattr__`", "Hooked(x)"),
])
def test_refused_located(name, says, where) -> None:
    """Each refusal names the user's file and quotes the user's line (an error inside
    a constructor too), never emitted code, never an internal exception."""
    with pytest.raises(s2s.TransformError) as err:
        s2s.grad(getattr(F, name))(X)
    text = str(err.value)
    assert says in text and 'built_object_fns.py", line ' in text, text
    assert where in text and "<s2s" not in text, text
