"""Forward mode: ``s2s.jvp`` on every corpus function, against ``jax.jvp`` on the same
source and against central differences along the tangent."""

from __future__ import annotations

import numpy as np
import pytest

import s2s
from corpus import CASES, Case
from oracle import attr_name
from support import HAVE_JAX, jax, jax_twin, leaves, rng_tree

import corpus_fns

# keyword arguments are not jvp's business (jax.jvp takes positional primals only)
FORWARD = [c for c in CASES if not c.kwargs]
IDS = [c.name for c in FORWARD]
_TWIN = None


def primals_and_tangents(case: Case) -> tuple[tuple, tuple]:
    primals = case.args()
    return primals, rng_tree(primals, np.random.default_rng(len(case.name)))


def tolerance(case: Case) -> dict:
    if any(np.result_type(x) == np.float32 for x in leaves(case.args())):
        return {"rtol": 2e-5, "atol": 1e-6}
    return {"rtol": 1e-9, "atol": 1e-10}


def s2s_jvp(case: Case):
    primals, tangents = primals_and_tangents(case)
    return s2s.jvp(case.fn, primals, tangents, has_aux=case.has_aux)


@pytest.mark.parametrize("case", FORWARD, ids=IDS)
def test_jvp_matches_jax(case: Case) -> None:
    if not (HAVE_JAX and case.jax):
        pytest.skip("JAX cannot run this source; see the finite-difference test")
    global _TWIN
    if _TWIN is None:
        _TWIN = jax_twin(corpus_fns)
    twin = getattr(_TWIN, attr_name(case))
    primals, tangents = primals_and_tangents(case)
    expected = jax.jvp(twin, primals, tangents, has_aux=case.has_aux)
    got = s2s_jvp(case)
    assert len(got) == len(expected)
    for g, e in zip(leaves(got), leaves(expected)):
        e = np.asarray(e)
        if e.dtype == jax.dtypes.float0:
            assert np.asarray(g).dtype == s2s.api.float0
            continue
        assert np.shape(g) == e.shape
        np.testing.assert_allclose(np.asarray(g), e, **tolerance(case))


@pytest.mark.parametrize("case", FORWARD, ids=IDS)
def test_jvp_matches_finite_differences(case: Case) -> None:
    primals, tangents = primals_and_tangents(case)
    eps = 1e-6

    def at(sign: float):
        moved = _axpy(primals, tangents, sign * eps)
        out = case.fn(*moved)
        return out[0] if case.has_aux else out

    expected = [(np.asarray(p, float) - np.asarray(m, float)) / (2 * eps)
                for p, m in zip(leaves(at(1.0)), leaves(at(-1.0)))]
    got = s2s_jvp(case)[1]
    for g, e in zip(leaves(got), expected):
        if np.asarray(g).dtype == s2s.api.float0:
            continue
        np.testing.assert_allclose(np.asarray(g, float), e, rtol=1e-5, atol=1e-6)


def _axpy(primals, tangents, scale):
    if isinstance(primals, (tuple, list)):
        return type(primals)(_axpy(p, t, scale) for p, t in zip(primals, tangents))
    if isinstance(primals, dict):
        return {k: _axpy(primals[k], tangents[k], scale) for k in primals}
    if np.issubdtype(np.result_type(primals), np.inexact):
        moved = np.asarray(primals, np.float64) + scale * np.asarray(tangents)
        return moved if np.ndim(primals) else float(moved)
    return primals


def accumulate_in_inner_loop(x, n):
    acc = x * 0.0
    for i in range(n):
        for j in range(2):
            acc = acc + np.sin(x) * (j + 1.0)
    return np.sum(acc)


def test_value_only_an_inner_loop_updates_is_carried_by_the_outer_one() -> None:
    """The inner loop leaves ``acc`` under its entry name: the outer loop must still
    hand its tangent from one iteration to the next."""
    x = np.array([0.3, 0.5, -1.0])
    t = np.array([1.0, -2.0, 0.5])
    got = s2s.jvp(accumulate_in_inner_loop, (x, 3), (t, np.zeros((), s2s.api.float0)))[1]
    eps = 1e-6
    expected = (accumulate_in_inner_loop(x + eps * t, 3)
                - accumulate_in_inner_loop(x - eps * t, 3)) / (2 * eps)
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    vm = s2s.vmap(accumulate_in_inner_loop, in_axes=(0, None))
    xs = np.stack([x, t])
    np.testing.assert_allclose(vm(xs, 3), [accumulate_in_inner_loop(v, 3) for v in xs])
