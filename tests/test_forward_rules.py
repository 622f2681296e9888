"""Forward mode end to end for every primitive: each rule-table function (``E2E`` in
test_rules.py and the rule_rows_* files) through ``s2s.jvp``, against ``jax.jvp`` of
the same source and central differences along the tangent."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import s2s
from rule_table import rng_for, twin_of
from support import HAVE_JAX, jax
from test_rules import E2E, E2E_BY_ID, FAST_COMPILE, e2e_params


def drawn(case_id: str):
    case = E2E_BY_ID[case_id]
    args = case.draw()
    n = len(case.args)
    r = rng_for("tangent-" + case_id)
    tangents = tuple(r.normal(size=np.shape(a)) for a in args[:n])
    return case, args[:n], args[n:], tangents




@pytest.mark.slow
@pytest.mark.parametrize("case", e2e_params([c for c in E2E if c.jax and not c.static]))
def test_e2e_jvp_matches_jax(case) -> None:
    _, primals, _, tangents = drawn(case.id)
    twin = twin_of(case.fn)  # loaded outside the trace: its module constants are arrays
    run = jax.jit(lambda p, t: jax.jvp(twin, p, t), compiler_options=FAST_COMPILE)
    expected = run(primals, tangents)
    got = s2s.jvp(case.fn, primals, tangents)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-10, atol=1e-11)
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("case", e2e_params([c for c in E2E if not c.static and c.fd],
                                             every=2))
def test_e2e_jvp_matches_finite_differences(case) -> None:
    _, primals, _, tangents = drawn(case.id)
    eps = 1e-6
    plus = case.fn(*(p + eps * t for p, t in zip(primals, tangents)))
    minus = case.fn(*(p - eps * t for p, t in zip(primals, tangents)))
    got = s2s.jvp(case.fn, primals, tangents)[1]
    np.testing.assert_allclose(got, (np.asarray(plus) - minus) / (2 * eps),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", [  # every third case by default, the rest with -m slow
    pytest.param(c, id=c.id, marks=[] if k % 3 == 0 else [pytest.mark.slow])
    for k, c in enumerate(c for c in E2E if c.jax and not c.static)])
def test_e2e_jvp_float32_keeps_dtype_and_matches_jax(case) -> None:
    _, primals, _, tangents = drawn(case.id)
    primals = tuple(np.asarray(p, np.float32) for p in primals)
    tangents = tuple(np.asarray(t, np.float32) for t in tangents)
    twin = twin_of(case.fn)
    run = jax.jit(lambda p, t: jax.jvp(twin, p, t), compiler_options=FAST_COMPILE)
    expected = run(primals, tangents)
    got = s2s.jvp(case.fn, primals, tangents)
    for g, e in zip(got, expected):
        assert np.asarray(g).dtype == np.asarray(e).dtype, (np.asarray(g).dtype, e.dtype)
        np.testing.assert_allclose(g, np.asarray(e), rtol=2e-4, atol=2e-4)


@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
def test_polymul_tangent_with_leading_zeros() -> None:
    """np.polymul drops leading zeros; a basis tangent [0, 1, 0] must not shorten the
    product's tangent (jacfwd pushes exactly such directions)."""
    import rule_fns_more as F

    a, b = np.array([0.3, -1.2, 0.8]), np.array([1.1, 0.4, -0.6])
    t = (np.array([0.0, 1.0, 0.0]), np.array([0.0, 0.0, 1.0]))
    got = s2s.jvp(F.f_polymul, (a, b), t)
    expected = jax.jvp(twin_of(F.f_polymul), (a, b), t)
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-12)
