"""Batching rules with the batch axis at 1 and -1, against jax.vmap of the JAX twin
(the same source run by JAX), for every rule-table function and its gradient.
Axis 0 is tests/test_vmap_rules.py (against a Python loop).  By default one case in
eight runs, at one of the two axes (alternating); ``-m slow`` runs the rest."""

from __future__ import annotations

import numpy as np
import pytest

import s2s
from rule_table import twin_of
from support import assert_results_close
from test_rules import E2E
from test_vmap_rules import GAPS_FORWARD, GAPS_GRAD, REFUSED, batch

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)

CASES = [c for c in E2E if c.jax and c.id not in REFUSED and not c.static]
# known gaps at axes other than 0 (strict: an xpass means the gap closed)
GAPS_AXES: dict[tuple[str, str], str] = {}


def params(gaps: dict) -> list:
    out = []
    for k, case in enumerate(CASES):
        for j, axis in enumerate((1, -1)):
            marks = [] if (k % 32, j) in ((0, 0), (16, 1)) else [pytest.mark.slow]
            reason = gaps.get(case.id) or GAPS_AXES.get((case.id, str(axis)))
            if reason:
                marks.append(pytest.mark.xfail(strict=True, reason=reason))
            out.append(pytest.param(case, axis, id=f"{case.id}-axis{axis}", marks=marks))
    return out


def moved(case_id: str, axis: int):
    case, args, xs = batch(case_id)
    if np.ndim(args[0]) == 0:
        pytest.skip("a scalar argument has only axis 0 to batch")
    return case, args, np.moveaxis(xs, 0, axis)


def compare(got, expected) -> None:
    assert_results_close(got, expected)


@pytest.mark.parametrize("case,axis", params(GAPS_FORWARD))
def test_vmap_at_axis_matches_jax(case, axis) -> None:
    case, args, xs = moved(case.id, axis)
    in_axes = (axis,) + (None,) * (len(args) - 1)
    got = s2s.vmap(case.fn, in_axes=in_axes)(xs, *args[1:])
    compare(got, jax.vmap(twin_of(case.fn), in_axes=in_axes)(xs, *args[1:]))


@pytest.mark.parametrize("case,axis", params(GAPS_GRAD))
def test_vmap_of_grad_at_axis_matches_jax(case, axis) -> None:
    case, args, xs = moved(case.id, axis)
    in_axes = (axis,) + (None,) * (len(args) - 1)
    got = s2s.vmap(s2s.grad(case.fn, argnums=case.argnums), in_axes=in_axes)(xs, *args[1:])
    expected = jax.vmap(jax.grad(twin_of(case.fn), argnums=case.argnums),
                        in_axes=in_axes)(xs, *args[1:])
    compare(got, expected)
