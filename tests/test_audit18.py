"""Audit of merge18 (issues 23, 27): what it found, pinned.

A method of an argument's class named as a dict's or an array's (``st.get("s")``,
``st.items()``, ``st.keys()``) was lowered as that value's method on the object's
fields: ``grad(use_get)(w, Store(2, 3))`` gave ``2 cos(w)`` where Python's
``Store.get`` gives ``30 cos(w)`` (on main for dataclasses, and on merge18 for plain
objects too).  Now refused at the call's line (api/value_methods.py); the class's
function spelled out, or a class known per call, computes the right number (central
differences)."""

from __future__ import annotations

import audit18_fns as F
import numpy as np
import pytest
from support import HAVE_JAX, central_grad, jax, jax_twin

import s2s
from s2s.errors import TransformError

W = np.array([0.3, -0.2, 0.5])


@pytest.mark.parametrize("fn, obj", [(F.use_get, F.Store(2.0, 3.0)),
                                     (F.use_items, F.Pairs(2.0, 3.0)),
                                     (F.use_keys, F.Pairs(2.0, 3.0))])
def test_a_class_method_named_as_a_dicts_is_refused_at_its_line(fn, obj) -> None:
    for make in (s2s.grad, lambda f: s2s.vmap(f, in_axes=(0, None))):
        args = (W if make is s2s.grad else np.stack([W, -W]), obj)
        with pytest.raises(TransformError) as err:
            make(fn)(*args)
        assert err.value.loc is not None and err.value.loc.file.endswith("audit18_fns.py")
        assert f"st.{fn.__name__[4:]}(" in err.value.loc.text
    with pytest.raises(TransformError):
        s2s.vjp(fn, W, obj)


@pytest.mark.slow
def test_the_class_function_spelled_out_or_known_gives_pythons_number() -> None:
    st = F.Store(2.0, 3.0)
    for fn in (F.use_get_as_written, F.use_get_typed):
        for call in range(3):  # (a field changed between calls)
            st.t = 3.0 + call
            np.testing.assert_allclose(s2s.grad(fn)(W, st),
                                       central_grad(lambda w: fn(w, st), W), rtol=1e-7)


@pytest.mark.skipif(not HAVE_JAX, reason="JAX oracle")
def test_eval_shape_of_a_cast_to_a_dtype_class_default() -> None:
    """``x.astype(dtype)`` with ``dtype=np.float32`` left at its default: the shape rule
    broadcast ``np.shape(np.float32)`` (a descriptor) with x's (ShapeError: 'expected a
    sequence of integers'); a jit's static dtype too.  Against jax.eval_shape."""
    twin = jax_twin(F)
    for x in (np.ones(7), np.ones((2, 3), np.float32), np.ones(0)):
        for fn, jfn, kw in ((F.cast, twin.cast, {}), (F.cast_kwonly, twin.cast_kwonly, {})):
            got, want = s2s.eval_shape(fn, x, **kw), jax.eval_shape(jfn, x)
            assert (got.shape, np.dtype(got.dtype)) == (want.shape, np.dtype(want.dtype))
        for dtype in (np.float64, np.int32, np.float32):
            got = s2s.eval_shape(s2s.jit(F.cast, static_argnames="dtype"), x, dtype=dtype)
            want = jax.eval_shape(jax.jit(twin.cast, static_argnames="dtype"), x, dtype=dtype)
            assert (got.shape, np.dtype(got.dtype)) == (want.shape, np.dtype(want.dtype))


def test_eval_shape_of_a_class_passed_is_refused_as_jax_refuses_it() -> None:
    with pytest.raises(TypeError, match="the class `float32`"):  # (was 'getset_descriptor')
        s2s.eval_shape(F.cast_kwonly, np.ones(3), dtype=np.float32)


@pytest.mark.slow
def test_lambdas_made_again_after_a_raising_call_and_with_other_functions() -> None:
    """merge18's family grads (api/family_grads.py): a member whose call raises
    (a closure of another length) leaves the canonical cells as they were, and a
    closed-over function changing between steps is the one called (closed forms)."""
    w = np.array([0.3, -0.7, 1.1])
    grads = [F.make_grad(s2s.grad, np.full(3, 1.0 + i)) for i in range(4)]
    for i, g in enumerate(grads):
        with pytest.raises(Exception):
            F.make_grad(s2s.grad, np.ones(4))(w)
        np.testing.assert_allclose(g(w), np.cos(w) * (1.0 + i), rtol=1e-12)
    acts = [(np.sin, np.cos), (np.tanh, lambda z: 1 - np.tanh(z) ** 2), (np.exp, np.exp)]
    for step in range(9):
        act, dact = acts[step % 3]
        x = np.full(3, 0.5 + step)
        np.testing.assert_allclose(F.act_step(s2s.grad, w, act, x), dact(w * x) * x,
                                   rtol=1e-12)
