"""Issue 23 (strings15): a ``match`` on a dict a callee is given, a last ``case _:``
that raises, strings made from shapes deciding a branch, ``math.floor``'s dtype.

- A tuple-of-dicts default (``specs=({"kind": "l2", "weight": 0.5}, ...)``) walked by a
  generator or a ``for`` is unrolled per its items' keys, so ``penalty(w, s)`` is a
  copy for one dict's keys deciding ``case {"kind": "l2", "weight": lam}`` (the
  values compared where the code runs); also a module list of dicts, a
  ``functools.partial``, a dict with an array value.  Changed between calls (values,
  keys, in place), the numbers follow.
- ``case _: raise ValueError(...)`` fires with the user's error at the user's line.
- ``f"{rows}x{cols}"``, ``"shape={}".format(x.shape)``, ``.endswith``, ``str(x.shape)``
  are computed where the code runs: a call with another shape takes the other branch.
- ``x * math.floor(v)`` keeps float32 float32 (Python and ``jnp.floor`` do).

Oracles: a Python loop of the closed form, and (slow tier) JAX on the same source
(``newcomer_harness.twin``), float64 and float32."""

from __future__ import annotations

import math
import traceback

import newcomer_harness as H  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
import strings15_fns as F
from support import HAVE_JAX

import s2s

W = np.array([0.3, -0.5, 0.2, 0.1])


def _penalty_grad(w, specs):
    """The closed form of ``sum(penalty(w, s) for s in specs)``'s gradient."""
    g = np.zeros_like(w)
    for s in specs:
        if s.get("kind") == "l2" and "weight" in s:
            g = g + 2 * s["weight"] * w
        elif s.get("kind") == "l1" and "weight" in s:
            g = g + s["weight"] * np.sign(w)
    return g


@pytest.mark.slow  # (the default tier's budget: ~10 transforms, one per structure)
def test_a_tuple_of_dicts_default_decides_its_callees_match() -> None:
    """Probe 8's form: grad at calls 1, 3, 10 with changing values, the tuple passed
    with other values, keys, length 0 and 1; an unknown kind raises the user's
    ValueError from the user's ``raise`` line.  (Refused before: "this `match`
    tests `spec`, a value known only when the function runs".)"""
    g = s2s.grad(F.specs_default)
    specs = F.specs_default.__defaults__[0]
    for call in (1, 3, 10):
        w = W * (1.0 + 0.1 * call)
        np.testing.assert_allclose(g(w), _penalty_grad(w, specs) + np.cos(w), rtol=1e-12)
    for other in [({"kind": "l1", "weight": 2.0}, {"kind": "l2", "weight": 0.25}),
                  ({"kind": "none"},), ({"kind": "l2", "weight": 3.0, "note": "x"},), ()]:
        np.testing.assert_allclose(g(W, other), _penalty_grad(W, other) + np.cos(W),
                                   rtol=1e-12, err_msg=str(other))
    with pytest.raises(ValueError, match="unknown penalty") as info:
        g(W, ({"kind": "l2", "weight": 1.0}, {"kind": "l3", "weight": 1.0}))
    last = traceback.extract_tb(info.value.__traceback__)[-1]
    assert last.filename == F.__file__ and last.line.startswith("raise ValueError(")


def _shape_tag_grad(x):
    rows, cols = x.shape
    w = np.arange(1.0, cols + 1) if (rows, cols) == (2, 3) else np.ones(cols)
    return (1 - np.tanh(x) ** 2) * w


@pytest.mark.slow  # (the default tier's: the shape (2, 3) -> (3, 3) -> (2, 3) case below)
def test_a_shape_string_branch_follows_each_calls_shape() -> None:
    """``f"{rows}x{cols}" == "2x3"`` and ``desc.endswith("(2, 3)")`` decide ``w``: the
    same transform called with (2, 3), (3, 3), (2, 3), ... takes the branch of each
    call's shape (a string computed once for the first shape would be a wrong
    number); size-0 and size-1 axes.  (Refused before: "an f-string of values known
    only when the function runs".)"""
    g = s2s.grad(F.shape_tag)
    rng = np.random.default_rng(0)
    for call, shape in enumerate([(2, 3), (3, 3), (2, 3), (3, 2), (2, 3), (1, 1), (0, 3),
                                  (2, 0), (2, 3), (1, 3)], 1):
        x = rng.normal(size=shape)
        np.testing.assert_allclose(g(x), _shape_tag_grad(x), rtol=1e-12,
                                   err_msg=f"call {call}, shape {shape}")


def test_one_transform_follows_the_shape_and_the_dict_of_each_call() -> None:
    """The default tier's two cases: ``shape_tag`` called with (2, 3), (3, 3), (2, 3)
    takes each call's branch; the probe's ``penalty`` matched on the items of a
    tuple-of-dicts default, ``case _: raise`` firing at the user's line."""
    g = s2s.grad(F.shape_tag)
    for shape in [(2, 3), (3, 3), (2, 3)]:
        x = np.linspace(-0.5, 0.7, shape[0] * shape[1]).reshape(shape)
        np.testing.assert_allclose(g(x), _shape_tag_grad(x), rtol=1e-12, err_msg=str(shape))
    g = s2s.grad(F.specs_default)
    np.testing.assert_allclose(g(W), _penalty_grad(W, F.specs_default.__defaults__[0]) +
                               np.cos(W), rtol=1e-12)
    with pytest.raises(ValueError, match="unknown penalty") as info:  # (the same keys:
        g(W, ({"kind": "l3", "weight": 1.0}, {"kind": "l1", "weight": 0.1},  # the same
              {"kind": "none"}))  # code, its run-time test of "kind" fires)
    last = traceback.extract_tb(info.value.__traceback__)[-1]
    assert last.filename == F.__file__ and last.line.startswith("raise ValueError(")


def test_a_string_of_array_values_stays_refused_at_its_line() -> None:
    with pytest.raises(s2s.TransformError, match="f-string of values known only") as info:
        s2s.grad(F.value_string)(W)
    assert "strings15_fns.py" in str(info.value) and 'f"{x[0]:.1f}"' in str(info.value)


# ---- the slow tier: changes between calls, other callers, JAX ------------------------


@pytest.mark.slow
def test_module_and_default_dicts_changed_between_calls() -> None:
    """A module list of dicts (``SPECS``) and the tuple-of-dicts default changed in
    place between calls (a value, a kind, a key added, an item appended), read
    directly and through a caller (``lambda v: f(v)``): each call's numbers follow.
    (The default's values were stale before, also for a plain read of it: the
    emitted signature held a literal copy of the tuple.)"""
    saved = [dict(s) for s in F.SPECS]
    try:
        g = s2s.grad(F.module_specs)
        for step, change in enumerate([lambda: None,
                                       lambda: F.SPECS[0].update(weight=3.0),
                                       lambda: F.SPECS[1].update(kind="l2"),
                                       lambda: F.SPECS.append({"kind": "l1", "weight": 1.0}),
                                       lambda: F.SPECS.__setitem__(0, {"kind": "none"})]):
            change()
            np.testing.assert_allclose(g(W), _penalty_grad(W, F.SPECS) + 3 * W ** 2,
                                       rtol=1e-12, err_msg=f"step {step}")
    finally:
        F.SPECS[:] = saved
    specs = F.specs_default.__defaults__[0]
    saved = [dict(s) for s in specs]
    try:
        for g in (s2s.grad(F.specs_default), s2s.grad(lambda v: F.specs_default(v))):
            for step, change in enumerate([lambda: None,
                                           lambda: specs[0].update(weight=3.0),
                                           lambda: specs[1].update(kind="l2"),
                                           lambda: specs[2].update(kind="l1", weight=1.0)]):
                change()
                np.testing.assert_allclose(g(W), _penalty_grad(W, specs) + np.cos(W),
                                           rtol=1e-12, err_msg=f"step {step}")
            for s, old in zip(specs, saved):
                s.clear()
                s.update(old)
    finally:
        for s, old in zip(specs, saved):
            s.clear()
            s.update(old)


@pytest.mark.slow
def test_a_dict_a_partial_or_a_closure_binds_into_a_matching_callee() -> None:
    """``functools.partial(penalty, spec={...})``, a closure's dict, a ``match`` on a
    string parameter with a raising ``case _:``, against the closed forms."""
    np.testing.assert_allclose(s2s.grad(F.partial_spec)(W), 0.25 * np.sign(W) + 2 * W)
    spec = {"kind": "l2", "weight": 2.0}
    np.testing.assert_allclose(s2s.grad(lambda v: F.penalty(v, spec))(W), 4 * W)
    g = s2s.grad(F.kind_default)
    np.testing.assert_allclose(g(W), np.sin(W) + W * np.cos(W))
    np.testing.assert_allclose(g(W, "tanh"), np.tanh(W) + W * (1 - np.tanh(W) ** 2))
    with pytest.raises(ValueError, match="unknown activation 'relu'"):
        g(W, "relu")


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", ["specs_default", "specs_loop", "module_specs",
                                  "partial_spec", "kind_default", "shape_tag",
                                  "shape_words"])
def test_against_jax_under_every_transform(name, dtype) -> None:
    """grad at calls 1/3/10, jvp, vmap of grad, hessian, jit of grad on both backends,
    against JAX's on the same source."""
    import jax

    ours, theirs = getattr(F, name), getattr(H.twin(F), name)
    tol = dict(rtol=2e-3, atol=2e-4) if dtype == np.float32 else dict(rtol=1e-9, atol=1e-12)
    shape = (2, 3) if name.startswith("shape") else (4,)
    base = np.linspace(-0.7, 0.9, int(np.prod(shape))).reshape(shape).astype(dtype)

    def same(a, b):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), **tol)
        assert np.asarray(a).dtype == np.asarray(b).dtype, (np.asarray(a).dtype,
                                                            np.asarray(b).dtype)

    g = s2s.grad(ours)
    for call in (1, 3, 10):
        x = (base * (1.0 + 0.1 * call)).astype(dtype)
        same(g(x), jax.grad(theirs)(x))
    t = np.cos(np.arange(base.size)).reshape(shape).astype(dtype)
    for a, b in zip(s2s.jvp(ours, (base,), (t,)), jax.jvp(theirs, (base,), (t,))):
        same(a, b)
    batch = np.stack([base, base * 0.5, -base]).astype(dtype)
    same(s2s.vmap(s2s.grad(ours))(batch), jax.vmap(jax.grad(theirs))(batch))
    if name not in ("specs_default", "partial_spec"):  # (|w|: no second derivative at 0)
        same(s2s.hessian(ours)(base), jax.hessian(theirs)(base))
    for backend in ("numpy", "jax"):
        same(s2s.jit(s2s.grad(ours), backend=backend)(base), jax.grad(theirs)(base))
    if name == "shape_tag":  # (the other branch, on the same transforms)
        other = np.linspace(-0.5, 0.5, 9).reshape(3, 3).astype(dtype)
        same(g(other), jax.grad(theirs)(other))
        same(s2s.jit(s2s.grad(ours), backend="jax")(other), jax.grad(theirs)(other))


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
def test_a_dicts_array_value_is_read_where_the_code_runs() -> None:
    """``penalty(w * lam, {"kind": "l2", "weight": lam[0]})``: keys decided, the
    value an array the derivative flows through, against JAX."""
    import jax

    lam = np.array([0.5, 2.0, 1.0, 1.5])
    theirs = H.twin(F).weight_array
    for a, b in zip(s2s.grad(F.weight_array, argnums=(0, 1))(W, lam),
                    jax.grad(theirs, argnums=(0, 1))(W, lam)):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def floor_scaled(x, v):
    return np.sum(x * math.floor(v)) + math.ceil(v) * x[0] + np.sum(x) * math.floor(-v)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
def test_math_floor_keeps_float32_float32() -> None:
    """``x * math.floor(v)`` of a float32 ``x`` and a Python float ``v``: float32 in
    Python (math gives an int) and in JAX (``jnp.floor``: a weak float); s2s gave
    float64 (``np.floor(v)``, a NumPy float64 scalar, is strong).  Now ``np.floor(v)``
    is made a Python float, weak, as math.log's result is (``python_float``)."""
    import jax
    import jax.numpy as jnp

    x = np.array([0.5, -1.5, 2.0], np.float32)

    def twin(x, v):
        return jnp.sum(x * jnp.floor(v)) + jnp.ceil(v) * x[0] + jnp.sum(x) * jnp.floor(-v)

    value, grad = s2s.value_and_grad(floor_scaled)(x, 2.7)
    want_value, want_grad = jax.value_and_grad(twin)(x, 2.7)
    assert np.asarray(value).dtype == np.asarray(floor_scaled(x, 2.7)).dtype == np.float32
    assert grad.dtype == np.float32
    np.testing.assert_allclose(value, want_value, rtol=1e-6)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-6)
    assert s2s.jit(floor_scaled)(x, 2.7).dtype == np.float32
