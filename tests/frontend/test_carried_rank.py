"""Loops carrying a value whose rank the first iteration changes (Horner's rule:
``acc = 0.0``, then ``acc = acc * x + c`` of an array ``x``; docs/python-subset.md,
"Control flow").  vmap's batched code gives each value one rank: the loop's first
iteration runs apart (s2s/ir/peel.py), under an ``if`` on the loop's count, whose
other path (no iteration: ``acc`` stays Python's float) gets its own code on the first
call that takes it.  Where vmap batches a gradient's code (``vmap(grad(f))``,
``hessian``), the gradient is made from the user's loop peeled.

Every expected value comes from JAX on the same source (``jax_twin``), float64 and
float32, over ten calls of one transform object whose values and coefficient counts
change (0, 1, 3 and 5 coefficients: the 1st, 3rd and 10th calls compared, the 3rd
running specialized code where there is any), and for size-1 and 0-size ``x``.  The
loops that stay refused (a rank growing at every iteration, a `break`, a loop in a
loop) are refused at the user's line."""

from __future__ import annotations

import carried_rank_fns as F  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX, assert_close_to, compiled, jax_twin

import s2s

if HAVE_JAX:
    import jax

    J = jax_twin(F)

# the functions of (x, coeffs), those of x alone (module constants), the scalar ones
TWO = ["horner", "horner_int_start", "horner_zeros_start", "horner_by_index",
       "horner_two_carried", "horner_out", "via_callee"]
ONE = ["horner_module_list", "horner_module_tuple", "horner_module_array"]
VECTOR_OUT = {"horner_out"}
TRANSFORMS = ["grad", "value_and_grad", "jvp", "vjp", "vmap_x", "vmap_both", "vmap_coeffs",
              "jacfwd", "jacrev", "hessian", "vmap_grad", "jit", "jit_jax"]
SCALAR_ONLY = {"grad", "value_and_grad", "hessian", "vmap_grad"}
PLAIN = {"vmap_x", "vmap_both", "vmap_coeffs", "jit", "jit_jax"}  # (no derivative)
LENGTHS = [3, 5, 0, 1, 5, 3, 0, 1, 5, 3]  # (coefficients, per call)
BATCH = 2


def _pair(transform: str, name: str):
    """(s2s's, JAX's) callables of the call's arrays ``(x, coeffs)`` (``coeffs``
    left out of the functions of ``x`` alone)."""
    f, fj = getattr(F, name), getattr(J, name)
    two = name in TWO
    if transform in ("grad", "value_and_grad", "jacfwd", "jacrev", "hessian"):
        return getattr(s2s, transform)(f), compiled(getattr(jax, transform)(fj))
    if transform == "jvp":
        def jvp(lib, fn):
            return lambda *a: lib.jvp(fn, a, tuple(np.cos(v) for v in a))
        return jvp(s2s, f), jvp(jax, fj)
    if transform == "vjp":
        def vjp(lib, fn):
            def run(*a):
                out, pull = lib.vjp(fn, *a)
                return out, pull(np.ones_like(out) * 0.7)
            return run
        return vjp(s2s, f), vjp(jax, fj)
    if transform.startswith("vmap"):
        axes = {"vmap_x": (0, None), "vmap_both": (0, 0), "vmap_coeffs": (None, 0),
                "vmap_grad": (0, None)}[transform]
        axes = axes if two else axes[0]
        if transform == "vmap_grad":
            return s2s.vmap(s2s.grad(f), in_axes=axes), compiled(
                jax.vmap(jax.grad(fj), in_axes=axes))
        return s2s.vmap(f, in_axes=axes), compiled(jax.vmap(fj, in_axes=axes))
    backend = "jax" if transform == "jit_jax" else None
    return s2s.jit(f, backend=backend), compiled(fj)


def _args(transform: str, name: str, call: int, dtype, size: int = 3) -> tuple:
    """The call's arguments: values that change with the call; a batch of ``x`` or
    of ``coeffs`` where the vmap maps it."""
    r = np.random.default_rng(call)
    n = LENGTHS[call - 1]
    if name == "horner_int_start" and transform not in PLAIN and n == 0:
        n = 2  # (np.sum(0) is an int: JAX differentiates no int output)
    x = 0.8 * r.normal(size=(BATCH, size) if transform in (
        "vmap_x", "vmap_both", "vmap_grad") else (size,))
    c = r.normal(size=(BATCH, n) if transform in ("vmap_both", "vmap_coeffs") else (n,))
    return (x.astype(dtype), c.astype(dtype)) if name in TWO else (x.astype(dtype),)


def _check(name: str, transform: str, dtype, size: int = 3, calls=(1, 3, 10)) -> None:
    ours, theirs = _pair(transform, name)
    for call in range(1, 11):
        args = _args(transform, name, call, dtype, size)
        got = ours(*args)
        if call not in calls:
            continue
        expected = theirs(*args)
        assert_close_to(got, expected, dtype, dtype_of="expected-arrays", scale_atol=True,
                        f64=1e-9, f32=2e-4)
        for leaf in jax.tree_util.tree_leaves(got):  # (no later result may share it)
            if isinstance(leaf, np.ndarray) and leaf.dtype.kind == "f" and leaf.flags.writeable:
                leaf[...] = np.nan


def _cases():
    for name in TWO + ONE:
        for transform in TRANSFORMS:
            if transform in SCALAR_ONLY and name in VECTOR_OUT:
                continue
            if transform in ("vmap_both", "vmap_coeffs") and name not in TWO:
                continue
            yield name, transform


@pytest.mark.slow  # (the default tier: the Python-loop tests below)
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name,transform", list(_cases()))
def test_against_jax(name, transform, dtype) -> None:
    _check(name, transform, dtype)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("size", [1, 0])
@pytest.mark.parametrize("transform", ["vmap_x", "jacfwd", "hessian", "vmap_grad", "grad"])
@pytest.mark.parametrize("name", ["horner", "horner_out", "horner_module_array"])
def test_size_one_and_empty_x(name, transform, size) -> None:
    if transform in SCALAR_ONLY and name in VECTOR_OUT:
        pytest.skip("a vector output: its Jacobians only")
    _check(name, transform, np.float64, size)


def _horner_rows(x, coeffs):
    """Horner's rule by a Python loop, one row of ``x`` at a time."""
    out = []
    for row in x:
        acc = 0.0
        for c in coeffs:
            acc = acc * row + c
        out.append(np.sum(acc))
    return np.array(out)


def test_default_tier_vmap_against_a_python_loop() -> None:
    """The sweeps above against JAX; here vmap and the Python loop, over 0, 1, 3 and
    5 coefficients (the path with no iteration made on the first call that takes it,
    then each path's code kept)."""
    v = s2s.vmap(F.horner, in_axes=(0, None))
    r = np.random.default_rng(0)
    for call, n in enumerate(LENGTHS, 1):
        x, c = r.normal(size=(3, 4)), r.normal(size=n)
        got = v(x, c)
        np.testing.assert_allclose(got, _horner_rows(x, c), rtol=1e-12, atol=1e-14,
                                   err_msg=f"call {call}")
        got[...] = np.nan


def test_default_tier_no_iteration_keeps_pythons_float() -> None:
    """No coefficient: ``acc`` is the 0.0 it started as, broadcast over the batch as
    JAX's vmap broadcasts an unbatched output."""
    v = s2s.vmap(F.horner_out, in_axes=(0, None))
    x = np.ones((2, 3))
    assert v(x, np.ones(2)).shape == (2, 3)
    out = v(x, np.zeros(0))
    assert out.shape == (2,) and out.dtype == np.float64 and not out.any()


def test_emitted_code_peels_the_first_iteration() -> None:
    """The batched code reads as the loop, its first iteration written out before it
    under the loop's count."""
    v = s2s.vmap(F.horner, in_axes=(0, None))
    v(np.ones((2, 3)), np.ones(4))
    assert "if not len_coeffs_greater_0:\n        raise OtherPath(" in v.source
    assert "for k in range(1, len_coeffs):" in v.source and "c_2 = coeffs[k_2]" in v.source


@pytest.mark.parametrize("name", ["rank_grows", pytest.param("with_break", marks=pytest.mark.slow),
                                  pytest.param("nested", marks=pytest.mark.slow)])
def test_still_refused_located(name) -> None:
    """A rank growing at every iteration (no one rank after the first), a loop left by
    a `break`, a loop in a loop (each run of it would need its own path): refused at
    the user's line, as before, never a line of emitted code."""
    f = getattr(F, name)
    x, c = np.array([0.5, 1.5, -2.0]), np.array([1.0, 2.0, 3.0])
    for run in (lambda: s2s.vmap(f, in_axes=(0, None))(np.stack([x, x]), c),
                lambda: s2s.jacfwd(f)(x, c),
                lambda: s2s.vmap(s2s.grad(f), in_axes=(0, None))(np.stack([x, x]), c)):
        with pytest.raises(s2s.TransformError) as info:
            run()
        text = str(info.value)
        assert f'File "{F.__file__}", line ' in text and "<s2s" not in text, text
        assert "rank" in text, text


def test_default_tier_rank_growing_refused_located() -> None:
    """``acc = np.expand_dims(acc, -1) * x + c``: a rank more at every iteration, no
    one rank after the first: refused at the user's loop (the sweep above: jacfwd
    and vmap(grad) too, a `break`, a loop in a loop)."""
    x, c = np.array([0.5, 1.5, -2.0]), np.array([1.0, 2.0, 3.0])
    with pytest.raises(s2s.TransformError) as info:
        s2s.vmap(F.rank_grows, in_axes=(0, None))(np.stack([x, x]), c)
    text = str(info.value)
    assert f'File "{F.__file__}", line 87' in text and "<s2s" not in text, text
    assert "changes rank in the loop (rank 1 before it, 2 after" in text, text


def test_default_tier_jit_of_vmap_on_numpy() -> None:
    """``s2s.jit(s2s.vmap(f))`` on the NumPy backend runs the vmap's code per path
    (the loop's count: 0, 1, 3, 5 coefficients), against the Python loop."""
    j = s2s.jit(s2s.vmap(F.horner, in_axes=(0, None)))
    r = np.random.default_rng(1)
    for call, n in enumerate(LENGTHS, 1):
        x, c = r.normal(size=(2, 3)), r.normal(size=n)
        np.testing.assert_allclose(j(x, c), _horner_rows(x, c), rtol=1e-12, atol=1e-14,
                                   err_msg=f"call {call}")


def test_default_tier_vmap_of_vmap() -> None:
    """``s2s.vmap(s2s.vmap(f))``: the inner vmap's code per path of the loop's count
    too (its guard, ``if not len_coeffs_greater_0: raise OtherPath(...)``, a check
    the outer vmap keeps), against the Python loop."""
    vv = s2s.vmap(s2s.vmap(F.horner, in_axes=(0, None)), in_axes=(0, None))
    r = np.random.default_rng(2)
    for call, n in enumerate(LENGTHS[:5], 1):
        x, c = r.normal(size=(2, 3, 4)), r.normal(size=n)
        want = np.stack([_horner_rows(m, c) for m in x])
        np.testing.assert_allclose(vv(x, c), want, rtol=1e-12, atol=1e-14,
                                   err_msg=f"call {call}")


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_jit_and_vmap_of_vmap_against_jax(dtype) -> None:
    """``s2s.jit(s2s.vmap(f))`` (NumPy) and ``s2s.vmap(s2s.vmap(f))`` of Horner's
    rule and of the vector output, over ten calls whose counts change, against
    JAX's."""
    for name in ("horner", "horner_out"):
        f, fj = getattr(F, name), getattr(J, name)
        pairs = [(s2s.jit(s2s.vmap(f, in_axes=(0, None))), jax.vmap(fj, in_axes=(0, None)),
                  (2, 3)),
                 (s2s.vmap(s2s.vmap(f, in_axes=(0, None)), in_axes=(0, None)),
                  jax.vmap(jax.vmap(fj, in_axes=(0, None)), in_axes=(0, None)), (2, 2, 3))]
        for ours, theirs, shape in pairs:
            for call, n in enumerate(LENGTHS, 1):
                r = np.random.default_rng(call)
                x, c = r.normal(size=shape).astype(dtype), r.normal(size=n).astype(dtype)
                got = ours(x, c)
                if call in (1, 3, 10):
                    assert_close_to(got, theirs(x, c), dtype, scale_atol=True, f64=1e-9,
                                    f32=2e-4)


@pytest.mark.parametrize("transform", [
    "vmap", pytest.param("vmap_grad", marks=pytest.mark.slow)])
def test_module_constant_changed_between_calls(transform) -> None:
    """``COEFFS_A`` rebound between calls (4, 0, 2 coefficients, then 4 again): each
    call reads it, as Python does, and takes the path of its count; vmap against the
    Python loop, vmap(grad) against central differences."""
    f = F.horner_module_array
    t = s2s.vmap(f) if transform == "vmap" else s2s.vmap(s2s.grad(f))
    x = np.array([[0.5, -1.0, 2.0], [0.3, 0.2, -0.1]])
    kept, eps = F.COEFFS_A, 1e-6
    try:
        for coeffs in (kept, np.zeros(0), np.array([1.5, -0.5]), kept):
            F.COEFFS_A = coeffs
            if transform == "vmap":
                want = np.array([f(row) for row in x])
                np.testing.assert_allclose(t(x), want, rtol=1e-12, atol=1e-14)
                continue
            fd = [[(f(row + eps * e) - f(row - eps * e)) / (2 * eps) for e in np.eye(3)]
                  for row in x]
            np.testing.assert_allclose(t(x), fd, rtol=1e-6, atol=1e-8)
    finally:
        F.COEFFS_A = kept


@pytest.mark.skipif(not HAVE_JAX, reason="the JAX backend")
def test_default_tier_under_jax_jit_of_vmap() -> None:
    """``s2s.jit(s2s.vmap(f), backend="jax")``: the loop's count is a shape, known
    while JAX traces, so each signature gets the code of its path (the guard runs as
    Python in the trace; api/jit_jax_paths.py), against the Python loop, 3 and 0
    coefficients twice (tests/frontend/test_jit_traced_jax.py: ten calls against JAX)."""
    j = s2s.jit(s2s.vmap(F.horner, in_axes=(0, None)), backend="jax")
    r = np.random.default_rng(3)
    for call, n in enumerate([3, 0, 3, 0], 1):
        x, c = r.normal(size=(2, 3)), r.normal(size=n)
        np.testing.assert_allclose(j(x, c), _horner_rows(x, c), rtol=1e-12, atol=1e-14,
                                   err_msg=f"call {call}")
