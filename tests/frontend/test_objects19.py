"""Issue 23 (audit19): a default parameter holding an object of a plain class of yours
(``def f(w, opt=Opt())``) whose attributes the body reads: refused before ("`.lr` is
not an attribute of NumPy arrays"), as a dataclass default was not.  Its attributes
(and its class's data attributes) are read at each call: a default changed in place
by the caller between calls is seen, as Python sees it.

A list field grown in a loop: ``a.out.append(v)`` (refused before) and ``c.out =
c.out + [v]`` of a list the constructor was given (``Box([])``: a wrong number before,
each iteration read the field as the empty list it was before the loop, so the list
ended with the last item only), read after the loop (``np.stack(a.out)``); appended
twice without a loop and stacked (jvp and hessian raised before: ``list(ys)``'s
tangent was the list's where its items' were meant).

The sweep (``-m slow``) runs objects19_fns.py's functions through every stage of the
newcomer harness against JAX on the same source, in float64 and float32."""

from __future__ import annotations

import newcomer_harness as H  # (pytest puts this directory on sys.path)
import numpy as np
import objects19_fns as F
import pytest
from support import HAVE_JAX, central_grad

import s2s

X4 = np.array([0.3, -0.7, 0.45, 1.2])
CASES = {name: ((X4,), {"zeros": np.zeros(4), "one": np.array([0.3])})
         for name in ("default_object_fields", "default_object_in_a_callee",
                      "field_appended_in_a_loop", "field_grown_in_a_loop",
                      "field_appended_beside_a_field_write", "field_appended_twice")}
PROBE = H.Probe(F, CASES, ("grad", "value_and_grad", "jvp", "vjp", "vmap", "vmap_grad",
                           "hessian", "jit_value", "jit", "jit_jax", "special", "alias",
                           "alias_all"))


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", list(CASES))
def test_against_jax(name, dtype) -> None:
    label, verdicts = H.classify(PROBE, name, H.twin(F), dtype)
    assert label == "ok", verdicts


@pytest.mark.slow
def test_a_default_changed_in_place_between_calls_is_seen() -> None:
    """The caller sets ``f.__defaults__[0].lr`` (and the class's ``decay``) between
    calls 1, 3 and 10: each gradient is Python's for the values of that moment."""
    f = F.default_object_fields
    opt = f.__defaults__[0]
    g, jitted = s2s.grad(f), s2s.jit(s2s.grad(f))
    saved = opt.lr, F.Opt.decay
    try:
        for call in (1, 3, 10):
            opt.lr, F.Opt.decay = 0.1 * call, 0.5 + 0.01 * call
            x = X4 * (1 + 0.07 * call)
            want = central_grad(f, x)
            np.testing.assert_allclose(g(x), want, rtol=1e-6, atol=1e-8)
            np.testing.assert_allclose(jitted(x), want, rtol=1e-6, atol=1e-8)
    finally:
        opt.lr, F.Opt.decay = saved


def test_passed_explicitly_it_is_the_callers() -> None:
    f = F.default_object_fields
    other = F.Opt(0.2, 4)
    np.testing.assert_allclose(s2s.grad(f)(X4, other),
                               central_grad(lambda x: f(x, other), X4), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", [
    "field_grown_in_a_loop", *[pytest.param(name, marks=pytest.mark.slow) for name in (
        "field_appended_in_a_loop", "field_appended_beside_a_field_write",
        "field_appended_twice")]])
def test_a_list_field_grown_against_central_differences(name) -> None:
    f = getattr(F, name)
    for call in (1, 3):
        x = X4 * (1 + 0.07 * call)
        np.testing.assert_allclose(s2s.grad(f)(x), central_grad(f, x), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s.jvp(f, (X4,), (X4,))[1], central_grad(f, X4) @ X4,
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s.vmap(f)(np.stack([X4, -X4])), [f(X4), f(-X4)],
                               rtol=1e-12)
