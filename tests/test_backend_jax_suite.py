"""The transform corpus on the JAX backend: every case of tests/corpus.py under each
transform, run as the NumPy-backend transform and as ``s2s.jit(<transform>,
backend="jax", static_argnums=<the int arguments>)``, compared leaf by leaf.

The oracle is the NumPy backend running the same emitted code (itself checked against
JAX and finite differences in test_corpus.py, test_vmap.py, test_jacobians.py): this
file checks that the JAX backend's passes (jax.numpy, functional updates, control flow
lowered to lax) keep the program's meaning under jax.jit.

Tolerance: float64, rtol 1e-9 (atol 1e-10 for values near zero): the two backends run
the same operations, but XLA's transcendental functions and its reductions (sum, dot
and matmul, which XLA may reassociate) round differently from NumPy's in the last few
bits.  float32 cases: rtol 2e-5.

The default run takes a representative subset (one case of each kind: arithmetic,
pytrees, aux, each control-flow shape, the float32 case) under every transform; the
rest is ``@pytest.mark.slow`` (``-m slow``).  What the JAX backend cannot run is a
strict xfail naming why (KNOWN below): an xpass means the gap closed.
"""

from __future__ import annotations

import dataclasses
import types

import numpy as np
import pytest

import s2s
from corpus import CASES, Case
from s2s.api import float0
from support import leaves

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)

TRANSFORMS = ("grad", "value_and_grad", "jvp", "vjp", "jacfwd", "jacrev", "hessian",
              "vmap", "vmap_grad")

# One of each kind in the default run (several arguments, pytrees, aux, kwargs, a
# branch, loops with and without break, a while, a Python float, float32); the rest
# under -m slow.
DEFAULT = {
    "loss_all_args", "if_else_true", "dict_params", "with_aux", "keyword_args",
    "loop_carried", "loop_continue", "loop_break_taken", "while_break",
    "python_float_input", "float32",
}

# (case or "*", transform) -> why the JAX backend cannot run it (strict xfails).
_FLOAT = "float() of a traced array: its value is known only when the compiled code runs"
_WHILE = ("reverse mode through a `while` whose test is traced needs a tape of unknown "
          "length: refused, as JAX refuses reverse mode through lax.while_loop")
_MASK = "boolean-mask indexing: the result's shape depends on traced values"
KNOWN: dict[tuple[str, str], str] = {
    **{("float_conversion", m): _FLOAT
       for m in ("grad", "value_and_grad", "jvp", "vjp", "jacfwd", "jacrev", "hessian")},
    ("loop_continue", "hessian"): (
        "the JVP of the gradient has an `if` that stays Python (a write into a "
        "container in a branch) on a traced test"),
    **{(c, m): _WHILE for c in ("while_shrinks", "while_never_runs")
       for m in ("grad", "value_and_grad", "vjp")},
    **{("slice_updates", m): _MASK
       for m in ("grad", "value_and_grad", "jvp", "vjp", "jacfwd", "jacrev")},
    **{("while_shrinks", m): _WHILE for m in ("jacrev", "hessian")},
    **{(c, "vmap_grad"): _WHILE for c in ("while_shrinks", "while_never_runs")},
    **{("while_never_runs", m): _WHILE for m in ("jacrev", "hessian")},
}

# The core refuses these on the NumPy backend as well (TransformError): nothing for a
# backend to run.  test_core_refusals_are_still_refused keeps the list current.
CORE_REFUSES = {
    # (slice_updates' `y[x > 0.5] = 0.0` under vmap and vmap_grad runs since alias15:
    # `y[:] = np.where(x_greater_0_5, 0.0, y)`, tests/frontend/test_alias15.py)
    ("slice_updates", "hessian"): "a boolean-mask write in the gradient's JVP",
}


def int_positions(args: tuple) -> tuple[int, ...]:
    """Python ints are static (loop counts, labels): jax.jit would trace them."""
    return tuple(i for i, a in enumerate(args) if type(a) is int)


def argnum_list(case: Case, nargs: int) -> tuple[int, ...]:
    nums = case.argnums if isinstance(case.argnums, tuple) else (case.argnums,)
    return tuple(a % nargs for a in nums)


def floats(tree) -> bool:
    return all(np.issubdtype(np.result_type(x), np.floating) for x in leaves(tree))


def rng_for(case: Case, salt: int) -> np.random.Generator:
    return np.random.default_rng(sum(map(ord, case.name)) + salt)


def like(tree, r: np.random.Generator):
    """Random values of ``tree``'s structure, shapes and dtypes (float0 for ints)."""
    if isinstance(tree, tuple):
        return tuple(like(t, r) for t in tree)
    if isinstance(tree, list):
        return [like(t, r) for t in tree]
    if isinstance(tree, dict):
        return {k: like(v, r) for k, v in tree.items()}
    dtype = np.result_type(tree)
    if not np.issubdtype(dtype, np.inexact):
        return np.zeros(np.shape(tree), float0)
    return np.asarray(r.normal(size=np.shape(tree))).astype(dtype)


def batched(tree, r: np.random.Generator, size: int = 3):
    """``size`` perturbed copies of ``tree``'s array leaves, stacked on axis 0."""
    if isinstance(tree, tuple):
        return tuple(batched(t, r, size) for t in tree)
    if isinstance(tree, list):
        return [batched(t, r, size) for t in tree]
    if isinstance(tree, dict):
        return {k: batched(v, r, size) for k, v in tree.items()}
    a = np.asarray(tree)
    out = np.stack([a + 0.05 * r.normal(size=a.shape) for _ in range(size)])
    return out.astype(a.dtype)


def first_array(case: Case) -> int | None:
    return next((k for k, a in enumerate(case.args())
                 if isinstance(a, np.ndarray) and a.dtype.kind == "f"), None)


def supports(case: Case, mode: str) -> bool:
    """Whether the transform applies to the case (on either backend)."""
    args = case.args()
    nums = argnum_list(case, len(args))
    if (case.name, mode) in CORE_REFUSES:
        return False
    if mode in ("grad", "value_and_grad"):
        return True
    if case.kwargs:
        return False  # jvp/vjp/jacobians/vmap take positional arguments only
    if mode in ("jvp", "vjp"):
        return True
    if mode in ("jacfwd", "jacrev", "hessian"):
        return all(floats(args[i]) for i in nums)
    return first_array(case) is not None


def program(case: Case, mode: str):
    """``(transformed, args, static)``: the NumPy-backend callable, its arguments and
    the positions jax.jit takes as static."""
    fn, args = case.fn, case.args()
    static = int_positions(args)
    if mode in ("grad", "value_and_grad"):
        make = s2s.grad if mode == "grad" else s2s.value_and_grad
        return make(fn, argnums=case.argnums, has_aux=case.has_aux), args, static
    if mode == "jvp":
        # the tangents are arguments too (traced); an int primal's float0 tangent
        # is a constant, as its primal is static
        tangents = like(args, rng_for(case, 1))
        n = len(args)

        def run_jvp(*primals_and_tangents):
            primals, dynamic = primals_and_tangents[:n], primals_and_tangents[n:]
            dots = tuple(tangents[i] if i in static else dynamic[i] for i in range(n))
            return s2s.jvp(fn, primals, dots, has_aux=case.has_aux)

        return run_jvp, (*args, *tangents), static
    if mode == "vjp":
        out = fn(*args)
        cotangent = like(out[0] if case.has_aux else out, rng_for(case, 2))

        def run_vjp(*primals):
            found = s2s.vjp(fn, *primals, has_aux=case.has_aux)
            return found[0], found[1](cotangent), found[2:]

        return run_vjp, args, static
    if mode in ("jacfwd", "jacrev", "hessian"):
        make = getattr(s2s, mode)
        return make(fn, argnums=case.argnums, has_aux=case.has_aux), args, static
    i = first_array(case)
    args = (*args[:i], batched(args[i], rng_for(case, 3)), *args[i + 1:])
    axes = tuple(0 if k == i else None for k in range(len(args)))
    inner = fn if mode == "vmap" else s2s.grad(fn, argnums=case.argnums,
                                               has_aux=case.has_aux)
    return s2s.vmap(inner, in_axes=axes), args, static


def tolerance(case: Case) -> dict:
    if any(np.result_type(x) == np.float32 for x in leaves(case.args())):
        return {"rtol": 2e-5, "atol": 1e-6}
    return {"rtol": 1e-9, "atol": 1e-10}


def check_same(got, expected, case: Case) -> None:
    got, expected = leaves(got), leaves(expected)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        if e is None:
            assert g is None
            continue
        g, e = np.asarray(g), np.asarray(e)
        assert g.shape == e.shape
        if e.dtype == float0:
            assert g.dtype == float0
            continue
        assert g.dtype == e.dtype, (g.dtype, e.dtype)
        np.testing.assert_allclose(g, e, **tolerance(case))


def params() -> list:
    out = []
    for case in CASES:
        for mode in TRANSFORMS:
            if not supports(case, mode):
                continue
            marks = []
            why = KNOWN.get((case.name, mode)) or KNOWN.get(("*", mode))
            if why:
                marks.append(pytest.mark.xfail(strict=True, reason=why))
            if case.name not in DEFAULT:
                marks.append(pytest.mark.slow)
            out.append(pytest.param(case, mode, id=f"{case.name}-{mode}", marks=marks))
    return out


@pytest.mark.parametrize("case,mode", params())
def test_jax_backend_agrees_with_numpy_backend(case: Case, mode: str) -> None:
    transformed, args, static = program(case, mode)
    expected = transformed(*args, **case.kwargs)
    jitted = s2s.jit(transformed, backend="jax", static_argnums=static or None)
    got = jitted(*args, **case.kwargs)
    check_same(got, expected, case)
    again = jitted(*args, **case.kwargs)  # the compiled code, not the trace
    check_same(again, expected, case)


@pytest.mark.parametrize("name,mode", sorted(CORE_REFUSES))
def test_core_refusals_are_still_refused(name: str, mode: str) -> None:
    """Left out of the backend comparison because the NumPy backend refuses them too;
    a pass here means the core learned the case: move it into the comparison."""
    case = next(c for c in CASES if c.name == name)
    # a fresh copy of the function: the core caches code per function, and one of
    # these refusals (vmap's rank probe, loop_zero_trips) depends on whether an
    # earlier call with other arguments made that code already
    fn = types.FunctionType(case.fn.__code__, case.fn.__globals__, case.fn.__name__,
                            case.fn.__defaults__, case.fn.__closure__)
    case = dataclasses.replace(case, fn=fn)
    transformed, args, _ = program(case, mode)
    with pytest.raises(s2s.TransformError):
        transformed(*args, **case.kwargs)
