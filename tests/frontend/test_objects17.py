"""Issue 23: objects made again and iterated (tests/frontend/objects17_fns.py): a
NamedTuple walked by value (it walked its field names: ``for v in p`` read ``"w"``, a
TypeError from emitted code), ``Params(*[f(v) for v in p[:2]])``, ``p._replace(...)``
(built here, an argument, in a method), ``dataclasses.replace`` of a default object,
``reversed(s)`` read once, ``sum(c.out)`` of a list field; and the refusals that keep
Python's meaning: a generator expression bound to a name and read twice (a WRONG
gradient before: ``r = (np.sin(v) for v in x); sum(r) + sum(r)`` gave twice
``cos(x)``, where Python's second sum is 0), ``reversed`` read twice, an object rebound
by its method in a differentiated loop.  And ``a.out.append(v)`` into a list field,
and ``c.out = c.out + [v]`` (a WRONG gradient before: NumPy's ``+``).

The default tier checks the wrong gradients (refused; fixed) and two of the forms against
central differences; the slow tier runs every form against central differences at
calls 1, 3 and 10, and through grad, value_and_grad, jvp, vmap of grad, hessian, jit
of grad on NumPy and on JAX, float64 and float32, against JAX on the same source
(``replace_default``: its vmap of grad and hessian were refused before refused19a)."""

from __future__ import annotations

import newcomer_harness as H  # (pytest puts this directory on sys.path)
import numpy as np
import objects17_fns as F
import pytest
from support import HAVE_JAX, central_grad

import s2s

X4 = np.array([0.3, -0.7, 0.45, 1.2])
P = F.Params(np.array([0.4, -0.2]), np.array([1.1, 0.3]), 1.5)
RUNS = ("named_tuple_walked", "spread_then_replace", "replace_default",
        "reversed_into_a_constructor", "replace_in_a_method", "sum_of_a_list_field",
        "concatenated_into_a_field", "appended_into_a_field")
STAGES = ("grad", "value_and_grad", "jvp", "vmap_grad", "hessian", "jit", "jit_jax",
          "alias")
# (replace_default's vmap of grad and hessian, of a lambda calling it, run since
# refused19a: tests/frontend/test_defaults19.py; appended_into_a_field's hessian is
# refused, located: "vmap cannot batch this: the rank of `joined_4_dot_0` is unknown",
# its other stages match JAX)
SWEPT = tuple(name for name in RUNS if name != "appended_into_a_field")
PROBE = H.Probe(F, {name: ((X4,), {}) for name in RUNS}, STAGES, tol64=(1e-6, 1e-8))


def _against_differences(fn, calls=(1, 3, 10), last=10) -> None:
    g = s2s.grad(fn)
    for call in range(1, last + 1):
        x = X4 * (1.0 + 0.07 * call * (-1) ** call)
        before = x.copy()
        got = g(x)
        if call in calls:
            np.testing.assert_allclose(got, H.fd_grad(fn, (x,), 1e-6), rtol=1e-6,
                                       atol=1e-8)
        assert not np.shares_memory(got, x) and np.array_equal(x, before)


def test_a_generator_read_twice_is_refused_where_it_is_read_again() -> None:
    """``r = (np.sin(v) for v in x)`` then ``sum(r)`` twice: s2s's list of the items gave
    them twice (gradient ``2 cos x``; Python's second sum is 0, gradient ``cos x``).
    Refused at the second read, located; ``reversed(xs)`` bound to a name likewise."""
    for fn, text in ((F.generator_read_twice, "return t + sum(r)"),
                     (F.reversed_read_twice, "return a + sum(10.0 * v for v in r)")):
        with pytest.raises(s2s.UnsupportedSyntaxError) as err:
            s2s.grad(fn)(X4)
        assert "read again" in str(err.value) and "`r`" in str(err.value)
        assert err.value.loc is not None and text in err.value.loc.text


def test_a_named_tuple_is_walked_by_its_values() -> None:
    """``for v in p``, ``list(p)``, ``zip(p, ...)``, ``enumerate(tuple(p))`` of a
    NamedTuple the function built walked its field names (a TypeError from emitted
    code: ``"w" * 2.0``); its values, as Python's tuple, against central differences."""
    _against_differences(F.named_tuple_walked, calls=(1, 3), last=3)


def test_replace_of_a_named_tuple_in_a_method() -> None:
    """``self.p._replace(w=...)`` in a method of an object given a NamedTuple (refused
    before: "the array method `._replace()`"), against central differences."""
    _against_differences(F.replace_in_a_method, calls=(1, 3), last=3)


def test_concatenation_into_a_list_field() -> None:
    """``c.out = c.out + [np.sin(x)]; c.out = c.out + [x * x]`` of a field the
    constructor set to ``[]``: NumPy's ``+`` of the two before (a WRONG gradient, twice
    ``cos x + 2x`` at ``np.sum(c.out[1])``); Python's concatenation, against central
    differences."""
    _against_differences(F.concatenated_into_a_field, calls=(1, 3), last=3)


@pytest.mark.slow
@pytest.mark.parametrize("name", RUNS)
def test_against_central_differences(name) -> None:
    _against_differences(getattr(F, name))


@pytest.mark.slow
def test_replace_of_a_named_tuple_argument() -> None:
    """``p._replace(b=...)`` of a NamedTuple argument: grad in ``x`` and in ``p``
    against central differences, two NamedTuples; the argument unchanged."""
    fn = F.replace_argument
    for s in (1.0, -0.6):
        p = F.Params(P.w * s, P.b, P.scale * s)
        kept = [np.copy(v) for v in p[:2]]
        x = X4 * s
        np.testing.assert_allclose(s2s.grad(fn, argnums=1)(p, x), H.fd_grad(
            lambda v: fn(p, v), (x,), 1e-6), rtol=1e-6, atol=1e-8)
        gp = s2s.grad(fn)(p, x)
        for field in ("w", "b"):
            v = getattr(p, field)
            want = H.fd_grad(lambda u: fn(p._replace(**{field: u}), x), (v,), 1e-6)
            np.testing.assert_allclose(getattr(gp, field), want, rtol=1e-6, atol=1e-8)
        assert all(np.array_equal(a, b) for a, b in zip(p[:2], kept))


@pytest.mark.slow
def test_replace_of_a_default_changed_between_calls() -> None:
    """``dataclasses.replace(cfg, ...)`` of the default object, whose fields the caller
    changes between calls (read at each call).  Of one the caller passes (by position
    or keyword) it is still refused, located: the transform made per call's arity does
    not see the object's class (what is missing, not a wrong number)."""
    fn = F.replace_default
    g = s2s.grad(fn)
    cfg = fn.__defaults__[0]
    x = X4[:3]
    try:
        for lr in (0.1, 0.05, 0.2):
            cfg.lr = lr
            np.testing.assert_allclose(g(x), H.fd_grad(fn, (x,), 1e-6), rtol=1e-6, atol=1e-8)
    finally:
        cfg.lr = 0.1
    other = F.Cfg(lr=0.3, steps=1, decay=0.5)
    for call in (lambda: s2s.grad(fn)(x, other), lambda: s2s.grad(fn)(x, cfg=other)):
        with pytest.raises(s2s.UnsupportedSyntaxError) as err:
            call()
        assert err.value.loc is not None and "dataclasses.replace(cfg" in err.value.loc.text


@pytest.mark.slow
def test_list_fields_grown_in_a_loop_run() -> None:
    """``a.out.append(v)`` in a loop, and ``a.out = a.out + [v]`` in a loop then after
    it (a WRONG gradient on main before objects17: the second ``+`` was NumPy's; then
    refused, located, until audit19 read the field as the list the loop grows): grad,
    jvp and vmap against central differences and Python."""
    for fn in (F.appended_in_a_loop, F.concatenated_after_a_loop):
        want = central_grad(fn, X4)
        np.testing.assert_allclose(s2s.grad(fn)(X4), want, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(s2s.jvp(fn, (X4,), (X4,))[1], want @ X4, rtol=1e-6)
        np.testing.assert_allclose(s2s.vmap(fn)(np.stack([X4, -X4])), [fn(X4), fn(-X4)],
                                   rtol=1e-12)


@pytest.mark.slow
def test_an_object_rebound_by_its_method_in_a_loop() -> None:
    """``d = d.scaled(0.9)`` in a differentiated loop (refused until this stop: an
    object carried by the loop): calls 1 to 10 with new values against central
    differences and the closed form 2 * 0.9 ** 6 * x."""
    g = s2s.grad(F.object_rebound_in_a_loop)
    for call in range(1, 11):
        x = X4 * (1.0 + 0.3 * call) - 0.1 * call
        h = 1e-6 * np.eye(4)
        fd = [(F.object_rebound_in_a_loop(x + e) - F.object_rebound_in_a_loop(x - e)) / 2e-6
              for e in h]
        got = g(x)
        np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(got, 2 * 0.9 ** 6 * x, rtol=1e-12)


@pytest.mark.slow
@pytest.mark.every_case
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", SWEPT)
def test_objects17_against_jax(name, dtype) -> None:
    label, verdicts = H.classify(PROBE, name, H.twin(F), dtype)
    assert label == "ok", verdicts
