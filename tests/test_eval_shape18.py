"""s2s.eval_shape of functions with keyword-only parameters left at their defaults
(values, as ``jax.eval_shape``, which traces only what the call passes) and of
``s2s.jit(f)`` (f's shapes; a static argument a value, as ``jax.jit`` makes it), against
``jax.eval_shape`` on the same source in float64 and float32, pytrees of outputs."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import eval_shape18_fns as F  # noqa: E402
from support import jax_twin  # noqa: E402

import s2s  # noqa: E402
from s2s.errors import TransformError  # noqa: E402

jax.config.update("jax_enable_x64", True)
J = jax_twin(F)
DTYPES = [np.float64, np.float32]


def same(got, want) -> None:
    """The same tree of shapes and dtypes (s2s's leaves are ShapeDtypeStructs)."""
    gl, gs = jax.tree_util.tree_flatten(got)
    wl, ws = jax.tree_util.tree_flatten(want)
    assert gs == ws, (got, want)
    assert all(isinstance(g, s2s.ShapeDtypeStruct) for g in gl), got
    for g, w in zip(gl, wl):
        assert (tuple(g.shape), np.dtype(g.dtype)) == (tuple(w.shape), np.dtype(w.dtype)), \
            (got, want)


@pytest.mark.every_case
@pytest.mark.parametrize("dtype", DTYPES)
def test_keyword_only_defaults_are_values(dtype) -> None:
    x = np.ones((4, 5), dtype)
    same(s2s.eval_shape(F.kwonly, x), jax.eval_shape(J.kwonly, x))
    same(s2s.eval_shape(F.kwonly_tuple, x[0]), jax.eval_shape(J.kwonly_tuple, x[0]))
    w = np.ones(5, dtype)
    same(s2s.eval_shape(F.kwonly_required, x, w=w), jax.eval_shape(J.kwonly_required, x, w=w))
    # a dict, None, a tuple, a dtype left at their defaults (None passed: nothing traced)
    six = np.ones(6, dtype)
    same(s2s.eval_shape(F.kwonly_objects, six), jax.eval_shape(J.kwonly_objects, six))
    same(s2s.eval_shape(F.kwonly_objects, six, k=None),
         jax.eval_shape(J.kwonly_objects, six, k=None))
    # passed by keyword: abstract, as JAX traces it (an array, a float)
    scale = np.ones(5, np.float32)
    same(s2s.eval_shape(F.kwonly, x, scale=scale), jax.eval_shape(J.kwonly, x, scale=scale))
    same(s2s.eval_shape(F.kwonly, x, scale=0.5), jax.eval_shape(J.kwonly, x, scale=0.5))
    # the default the call reads is the function's own now (1st, 3rd, 10th calls)
    saved = F.kwonly.__kwdefaults__.copy(), J.kwonly.__kwdefaults__.copy()
    try:
        for k in range(10):
            if k in (2, 9):
                for f in (F.kwonly, J.kwonly):
                    f.__kwdefaults__.update(n=k + 1, axis=k % 2)
            # (a new lambda: JAX's trace cache keeps a function's first defaults)
            same(s2s.eval_shape(F.kwonly, x), jax.eval_shape(lambda x: J.kwonly(x), x))
    finally:
        F.kwonly.__kwdefaults__, J.kwonly.__kwdefaults__ = saved


@pytest.mark.every_case
@pytest.mark.parametrize("dtype", DTYPES)
def test_eval_shape_of_jit(dtype) -> None:
    x, w = np.ones((3, 4), dtype), np.ones(4, dtype)
    for backend in ("numpy", "jax"):
        same(s2s.eval_shape(s2s.jit(F.plain, backend=backend), x, w),
             jax.eval_shape(jax.jit(J.plain), x, w))
    same(s2s.eval_shape(s2s.jit(s2s.grad(F.loss)), w, x),
         jax.eval_shape(jax.jit(jax.grad(J.loss)), w, x))
    same(s2s.eval_shape(s2s.jit(s2s.vmap(F.loss, (None, 0))), w, np.ones((6, 3, 4), dtype)),
         jax.eval_shape(jax.jit(jax.vmap(J.loss, (None, 0))), w, np.ones((6, 3, 4), dtype)))
    same(s2s.eval_shape(s2s.jit(F.kwonly), x), jax.eval_shape(jax.jit(J.kwonly), x))
    # static arguments: values (by position, negative, by name; keyword-only by name)
    for nums in (1, -1):
        same(s2s.eval_shape(s2s.jit(F.static_count, static_argnums=nums), w, 3),
             jax.eval_shape(jax.jit(J.static_count, static_argnums=nums), w, 3))
    same(s2s.eval_shape(s2s.jit(F.static_count, static_argnames="n"), w, n=2),
         jax.eval_shape(jax.jit(J.static_count, static_argnames="n"), w, n=2))
    for kw in ({}, {"n": 1}, {"n": 3, "mode": "max"}):
        same(s2s.eval_shape(s2s.jit(F.static_kw, static_argnames=("n", "mode")), x, **kw),
             jax.eval_shape(jax.jit(J.static_kw, static_argnames=("n", "mode")), x, **kw))


def test_a_passed_keyword_a_shape_needs_is_refused_located() -> None:
    """n=4 passed is abstract (JAX raises its ConcretizationTypeError): a located
    refusal at the user's line; static through jit, it is a value."""
    x = np.ones((4, 5))
    with pytest.raises(TransformError) as err:
        s2s.eval_shape(F.kwonly, x, n=4)
    assert err.value.loc is not None and "eval_shape18_fns.py" in err.value.loc.file
    with pytest.raises(Exception):
        jax.eval_shape(J.kwonly, x, n=4)
    same(s2s.eval_shape(s2s.jit(F.kwonly, static_argnames="n"), x, n=4),
         jax.eval_shape(jax.jit(J.kwonly, static_argnames="n"), x, n=4))


def test_static_argnums_of_a_jitted_grad() -> None:
    """jit(grad(f), static_argnums=1): the static argument a value (its signature read
    through the transform, as the jit reads it)."""
    x = np.ones(3)
    got = s2s.eval_shape(s2s.jit(s2s.grad(F.static_sum), static_argnums=1), x, 2)
    want = jax.eval_shape(jax.jit(jax.grad(J.static_sum), static_argnums=1), x, 2)
    same(got, want)
