"""Batching rules of linear algebra, reductions, special functions and the runtime
helpers of emitted derivatives (beside their defprims in s2s/primitives/linalg*.py, runtime_*.py), against ``jax.vmap`` of the
same source (the module's JAX twin) and the loop oracle:

* every rule-table function that uses one of these primitives batched over its first
  argument, as tests/test_vmap_rules.py does, against ``jax.vmap`` of its twin (and,
  with ``-m slow``, its gradient against ``jax.vmap`` of ``jax.grad``);
* the functions of tests/vmap_linalg_fns.py, batched over each argument in turn and
  over all of them (shape-giving operands batched alone, ranks that differ, both
  operands of a product batched), against the loop oracle and ``jax.vmap``.
"""

from __future__ import annotations

import numpy as np
import pytest

import s2s
import vmap_linalg_fns as V
from rule_rows_linalg import spread
from rule_table import normal, rng_for, twin_of, uniform
from s2s.primitives.batching import rule_for
from s2s.primitives import PRIMITIVES
from support import HAVE_JAX, assert_results_close, jax
from test_rules import E2E, FAST_COMPILE

BATCH = 3
TOL = {"rtol": 1e-8, "atol": 1e-10}

# this module's families; s2s/primitives/runtime_prims.py batches the reshaping helpers
FAMILIES = ("linalg", "reduction", "special", "runtime")
ELSEWHERE = {"weights_along", "rhs_columns", "pad_sources", "zeros_list"}  # (vmap batches zeros_list itself)
OURS = {n for n, p in PRIMITIVES.items() if n not in ELSEWHERE
        and (p.family in FAMILIES or n.startswith("scipy.special."))}
CASES = [c for c in E2E if set(c.prims) & OURS]

# Failures outside these rules, each a strict xfail
MATRICES_OF_ONE_ARRAY = ("np.linalg.multi_dot(x) of one array of matrices: vmap refuses it "
                         "(the rule batches a list the function built), and reverse.py "
                         "refuses multi_dot_bars of an array in the gradient")
BLOCKED: dict = {"f_multi_dot_matrices": MATRICES_OF_ONE_ARRAY}
BLOCKED_GRAD: dict = {"f_multi_dot_matrices": MATRICES_OF_ONE_ARRAY}


def marked(cases, blocked):
    return [pytest.param(c, id=c.id, marks=pytest.mark.xfail(strict=True, reason=blocked[c.id]))
            if c.id in blocked else pytest.param(c, id=c.id) for c in cases]


def jitted_vmap(fn, in_axes, static=()):
    """``jax.vmap`` of ``fn`` over the arrays, compiled, static arguments closed over."""
    return jax.jit(jax.vmap(lambda *a: fn(*a, *static), in_axes=in_axes),
                   compiler_options=FAST_COMPILE)


def stacked(arg, key: str):
    """A batch of examples near ``arg`` (small relative moves keep its zeros, its
    conditioning and its domain)."""
    r = rng_for(key)
    return np.stack([arg * (1.0 + 0.01 * r.normal(size=np.shape(arg)))
                     for _ in range(BATCH)])


def loop(fn, args, axes):
    outs = [fn(*(a[i] if ax == 0 else a for a, ax in zip(args, axes)))
            for i in range(BATCH)]
    if isinstance(outs[0], tuple):
        return tuple(np.stack(z) for z in zip(*outs))
    return np.stack(outs)


def compare(got, expected) -> None:
    assert_results_close(got, expected, **TOL)


def test_every_primitive_of_these_families_has_a_rule() -> None:
    missing = sorted(n for n in OURS if rule_for(n) is None)
    assert not missing, f"no batching rule for {missing}"


# ---- the rule table, batched over the first argument ---------------------------------


def first_batched(case):
    args = case.draw()
    n = len(case.args)
    batched = (stacked(args[0], "batch-" + case.id),) + args[1:n]
    return batched, (0,) + (None,) * (n - 1), args[n:]


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="needs JAX")
@pytest.mark.parametrize("case", marked([c for c in CASES if c.jax], BLOCKED))
def test_rule_table_vmap_matches_jax(case) -> None:
    arrays, axes, static = first_batched(case)
    got = s2s.vmap(case.fn, in_axes=axes + (None,) * len(static))(*arrays, *static)
    compare(got, jitted_vmap(twin_of(case.fn), axes, static)(*arrays))


@pytest.mark.slow  # test_vmap_rules.py checks these against the loop oracle
@pytest.mark.skipif(not HAVE_JAX, reason="needs JAX")
@pytest.mark.parametrize("case", marked([c for c in CASES if c.jax], BLOCKED_GRAD))
def test_rule_table_vmap_of_grad_matches_jax(case) -> None:
    arrays, axes, static = first_batched(case)
    grad = s2s.grad(case.fn, argnums=case.argnums)
    got = s2s.vmap(grad, in_axes=axes + (None,) * len(static))(*arrays, *static)
    expected = jitted_vmap(jax.grad(twin_of(case.fn), argnums=case.argnums), axes,
                           static)(*arrays)
    compare(got, tuple(expected))


# ---- functions batched over each argument --------------------------------------------


def positive(*shape):
    return uniform(0.5, 2.0)(*shape)


def with_zeros(*shape):
    def draw(r):
        x = r.normal(size=shape)
        x.flat[[0, 4]] = 0.0
        return x
    return draw


FNS = [  # function, drawers of its array arguments, static arguments after them
    (V.v_tensordot, (normal(2, 3, 4), normal(4, 3)), ()),
    (V.v_dot_inner, (normal(2, 3, 4), normal(5, 4, 2)), ()),
    (V.v_kron, (normal(2, 3), normal(2)), ()),
    (V.v_diag, (normal(3),), ()),
    (V.v_vecdot_cross, (normal(3, 2), normal(3, 2)), ()),
    (V.v_matvec, (normal(2, 3, 4), normal(4)), ()),
    (V.v_einsum, (normal(2, 3, 4), normal(4, 3)), ()),
    (V.v_multi_dot, (normal(3, 3), normal(3, 3)), ()),
    (V.v_lstsq, (spread(5, 2), normal(5, 3)), ()),
    (V.v_average, (normal(2, 3), positive(3)), ()),
    (V.v_axis_argument, (normal(2, 3),), (-1,)),
    (V.v_axis_argument, (normal(2, 3),), (0,)),
    (V.v_axis_by_name, (normal(2, 3, 3),), (1.0,)),
    (V.v_axis_by_name, (normal(2, 3, 3),), (-1.0,)),
    (V.v_special, (positive(2, 3),), ()),
    (V.v_tensordot_bars, (normal(2, 2), normal(2, 3), normal(3, 2)), ()),
    (V.v_kron_bars, (normal(4, 6), normal(2, 3), normal(2, 2)), ()),
    (V.v_einsum_bars, (normal(2, 2), normal(2, 3), normal(3, 2)), ()),
    (V.v_multi_dot_bars, (normal(2, 2), normal(2, 2), normal(2, 2)), ()),
    (V.v_dot_bars, (normal(3), normal(), normal(3)), ()),
    (V.v_dot_bars_high, (normal(2, 3, 5, 2), normal(2, 3, 4), normal(5, 4, 2)), ()),
    (V.v_products, (with_zeros(2, 3), normal(2, 3)), ()),
    (V.v_jets, (normal(2, 2, 3), normal(2, 2, 3)), ()),
    (V.v_norm_grads, (spread(3, 2),), ()),
]


def fn_params():
    out = []
    for fn, drawers, static in FNS:
        n = len(drawers)
        choices = [tuple(int(i == k) for i in range(n)) for k in range(n)]
        if n > 1:
            choices.append((1,) * n)
        for axes in choices:
            label = "".join("b" if a else "-" for a in axes)
            suffix = f"-{static[0]}" if static else ""
            out.append(pytest.param(fn, drawers, static, axes,
                                    id=f"{fn.__name__}{suffix}[{label}]"))
    return out


@pytest.mark.parametrize("fn, drawers, static, batched", fn_params())
def test_batched_over_each_argument(fn, drawers, static, batched) -> None:
    r = rng_for(fn.__name__)
    args = [d(r) for d in drawers]
    arrays = tuple(stacked(a, f"{fn.__name__}-{k}") if b else np.asarray(a)
                   for k, (a, b) in enumerate(zip(args, batched)))
    axes = tuple(0 if b else None for b in batched)
    v = s2s.vmap(fn, in_axes=axes + (None,) * len(static))
    got = v(*arrays, *static)
    compare(got, loop(lambda *a: fn(*a, *static), arrays, axes))
    if HAVE_JAX:
        compare(got, tuple(jitted_vmap(twin_of(fn), axes, static)(*arrays)))


@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("a_shape, b_shape", [
    ((2, 3, 3), (3,)),  # a stack of matrices, one vector (NumPy 2 reads 1-D b so)
    ((3, 3), (2, 3, 2)),  # b's stack broadcast against one matrix
    ((2, 1, 3, 3), (3, 3, 2)),  # both stacks broadcast
])
@pytest.mark.parametrize("axes", [(0, 0), (0, None), (None, 0)])
def test_vmap_of_solve_broadcasts_the_stacks(a_shape, b_shape, axes) -> None:
    import rule_fns_linalg as L

    r = rng_for(f"solve-{a_shape}-{b_shape}")
    a = r.normal(size=(3,) + a_shape) + 4.0 * np.eye(3)
    b = r.normal(size=(3,) + b_shape)
    args = [a if axes[0] == 0 else a[0], b if axes[1] == 0 else b[0]]
    got = s2s.vmap(L.f_solve_stacks, in_axes=axes)(*args)
    expected = jax.vmap(jax.numpy.linalg.solve, in_axes=axes)(*args)
    np.testing.assert_allclose(got, expected, **TOL)
