"""The closure property over the whole corpus: what s2s emits is input s2s transforms.

For every corpus function JAX can run, each of four emitted functions (the
gradient, the two Jacobians and the batched function) is transformed again by
each of three transforms (``vjp``, ``jvp`` and ``vmap``), and the twelve compositions
are compared with JAX's same composition on the same arguments and the same random
cotangents, tangents and batches, in float64.  Loops and their tapes, in-place
writes, calls, lists and dicts all pass through a second transform this way.

By default every twelfth (case, inner, outer) triple runs (a few seconds each is JAX's
eager tracing); ``-m slow`` runs all of them.  A known gap is a strict xfail naming it.
"""

from __future__ import annotations

import numpy as np
import pytest

import corpus_fns
import s2s
from corpus import CASES
from oracle import attr_name
from support import HAVE_JAX, jax, jax_twin, leaves, rng_tree

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

TOL = {"rtol": 1e-7, "atol": 1e-9}


def _floats(tree) -> bool:
    return all(np.issubdtype(np.result_type(x), np.floating) for x in leaves(tree))


# cases whose arguments are all floating point (a tangent for every argument), with
# JAX twins, no keyword arguments and no auxiliary output
MATRIX_CASES = [c for c in CASES if c.jax and not c.kwargs and not c.has_aux
                and _floats(c.args())]

INNER = ("grad", "jacfwd", "jacrev", "vmap")
OUTER = ("vjp", "jvp", "vmap")

# (case, inner, outer) -> why it fails today (strict: an xpass means it closed)
GAPS: dict[tuple[str, str, str], str] = {}


def inner_pair(case, inner: str):
    """The emitted function and JAX's, transformed the same way."""
    twin = getattr(jax_twin(corpus_fns), attr_name(case))
    if inner == "grad":
        return (s2s.grad(case.fn, argnums=case.argnums),
                jax.grad(twin, argnums=case.argnums))
    if inner in ("jacfwd", "jacrev"):
        return (getattr(s2s, inner)(case.fn, argnums=case.argnums),
                getattr(jax, inner)(twin, argnums=case.argnums))
    axes = (0,) + (None,) * (len(case.args()) - 1)
    # JAX's vmap refuses a Python `if` on a batched value: the loop is the oracle
    # (jax.vjp and jax.jvp of the loop trace with concrete primals, so `if` runs)
    tm = jax.tree_util.tree_map

    def loop(xs, *rest):
        n = len(leaves(xs)[0])
        outs = [twin(tm(lambda a: a[k], xs), *rest) for k in range(n)]
        return tm(lambda *ys: jax.numpy.stack(ys), *outs)

    return s2s.vmap(case.fn, in_axes=axes), loop


def inner_args(case, inner: str) -> tuple:
    args = case.args()
    if inner != "vmap":
        return args
    r = np.random.default_rng(7)
    batch = [args[0]] + [jax.tree_util.tree_map(
        lambda a: np.asarray(a) + 0.01 * r.normal(size=np.shape(a)), args[0])
        for _ in range(2)]
    return (jax.tree_util.tree_map(lambda *xs: np.stack(xs), *batch),) + tuple(args[1:])


def compare(got, expected) -> None:
    got, expected = leaves(got), leaves(expected)
    assert len(got) == len(expected), (len(got), len(expected))
    for g, e in zip(got, expected):
        e_dtype, g_dtype = np.asarray(e).dtype, np.asarray(g).dtype
        if e_dtype == jax.dtypes.float0:
            continue
        f32 = np.float32 in (e_dtype, g_dtype)
        tol = {"rtol": 1e-4, "atol": 1e-5} if f32 else TOL
        scale = max(1.0, float(np.max(np.abs(np.asarray(e, float)), initial=0.0)))
        np.testing.assert_allclose(np.asarray(g, float), np.asarray(e, float),
                                   rtol=tol["rtol"], atol=tol["atol"] * scale)


def run_outer(outer: str, fn, jfn, args: tuple) -> None:
    r = np.random.default_rng(11)
    if outer == "vjp":
        out, pullback = s2s.vjp(fn, *args)
        jout, jpullback = jax.vjp(jfn, *args)
        compare(out, jout)
        cot = rng_tree(jax.tree_util.tree_map(np.asarray, jout), r)
        compare(pullback(cot), jpullback(cot))
    elif outer == "jvp":
        tangents = rng_tree(args, r)
        compare(s2s.jvp(fn, args, tangents), jax.jvp(jfn, args, tangents))
    else:  # a batch of two: the first argument moved a little, the rest shared
        first = args[0]
        moved = jax.tree_util.tree_map(
            lambda a: np.stack([np.asarray(a), np.asarray(a) * 1.01 + 0.001]), first)
        axes = (0,) + (None,) * (len(args) - 1)
        loop = [jfn(jax.tree_util.tree_map(lambda a: a[k], moved), *args[1:])
                for k in range(2)]  # (JAX's vmap refuses a Python `if` on a batched value)
        compare(s2s.vmap(fn, in_axes=axes)(moved, *args[1:]),
                jax.tree_util.tree_map(lambda *xs: np.stack(xs), *loop))


def params() -> list:
    out = []
    k = 0
    for case in MATRIX_CASES:
        for inner in INNER:
            for outer in OUTER:
                key = (case.name, inner, outer)
                marks = [] if k % 12 == 0 else [pytest.mark.slow]
                if key in GAPS:
                    marks.append(pytest.mark.xfail(strict=True, reason=GAPS[key]))
                out.append(pytest.param(case, inner, outer, id="-".join(key), marks=marks))
                k += 1
    return out


@pytest.mark.parametrize("case, inner, outer", params())
def test_emitted_code_transforms_again(case, inner, outer) -> None:
    fn, jfn = inner_pair(case, inner)
    run_outer(outer, fn, jfn, inner_args(case, inner))
