"""Batching rules for every primitive: each rule-table function (``E2E`` in
test_rules.py and the rule_rows_* files) and its gradient, vmapped over a batch of its
first argument, against the loop oracle ``np.stack([f(x_i) for x_i in xs])``."""

from __future__ import annotations

import numpy as np
import pytest

import s2s
from rule_table import rng_for
from test_rules import E2E, E2E_BY_ID, e2e_params

BATCH = 3

# rule-table functions vmap refuses, with a clear error (per-example shapes that differ)
REFUSED: set[str] = {
    "f_extract_data_dependent",  # np.extract(x > 0, x): a count per example
    # np.polyval([p[0], 2 * p[1], p[2]], x): a list of computed arrays where an array
    # is expected; vmap's probe knows its items' ranks, not the list's
    "f_polyval_coefficient_list",
    "f_multi_dot_matrices",  # np.linalg.multi_dot(x) of an array of matrices
}


# Known gaps, each must fail today (strict xfail): an xpass means the gap closed.
SYNTAX = "the emitted gradient uses syntax the normalizer does not read yet"
# (f_vstack, a batched 2-D and an unbatched 1-D piece, closed: batching.batched_items
# gives unbatched pieces the leading unit axes of a row)
GAPS_FORWARD: dict = {}
# A join of an array's rows (np.vstack(x)) or of list(x): the gradient's split_like
# has a count of results known only when it runs, which reverse.py's kinds refuse
ROWS_JOINED = ("reverse.py refuses split_like of an array (or of list(x)): its count "
               "of results is known only when the code runs")
GAPS_GRAD: dict = {name: ROWS_JOINED for name in (
    "f_vstack_rows", "f_hstack_rows", "f_column_stack_rows", "f_dstack_rows",
    "f_concatenate_rows", "f_multi_dot_matrices")}


def gap_params(gaps: dict) -> list:
    return [pytest.param(c, id=c.id, marks=[pytest.mark.xfail(strict=True, reason=gaps[c.id])]
                         if c.id in gaps else []) for c in E2E]


def batch(case_id: str):
    case = E2E_BY_ID[case_id]
    args = case.draw()
    r = rng_for("batch-" + case_id)
    # small moves keep each example inside the drawer's valid domain
    xs = np.stack([args[0] * (1.0 + 0.01 * r.normal(size=np.shape(args[0])))
                   for _ in range(BATCH)])
    return case, args, xs


def loop(fn, args, xs):
    outs = [fn(x, *args[1:]) for x in xs]
    if isinstance(outs[0], tuple):
        return tuple(np.stack(z) for z in zip(*outs))
    return np.stack(outs)


def compare(got, expected):
    got = got if isinstance(got, tuple) else (got,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    for g, e in zip(got, expected):
        assert np.shape(g) == np.shape(e)
        np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-11)


def in_axes(args):
    return (0,) + (None,) * (len(args) - 1)


@pytest.mark.parametrize("case", gap_params(GAPS_FORWARD))
def test_vmap_of_each_primitive(case) -> None:
    case, args, xs = batch(case.id)
    v = s2s.vmap(case.fn, in_axes=in_axes(args))
    if case.id in REFUSED:
        with pytest.raises(s2s.TransformError, match="vmap cannot batch this"):
            v(xs, *args[1:])
        return
    compare(v(xs, *args[1:]), loop(case.fn, args, xs))


@pytest.mark.parametrize("case", gap_params(GAPS_GRAD))
def test_vmap_of_grad_of_each_primitive(case) -> None:
    """Per-example gradients: the batching rules of the emitted gradient's helpers."""
    case, args, xs = batch(case.id)
    argnums = case.argnums
    g = s2s.grad(case.fn, argnums=argnums)
    v = s2s.vmap(g, in_axes=in_axes(args))
    if case.id in REFUSED:
        with pytest.raises(s2s.TransformError, match="vmap cannot batch this"):
            v(xs, *args[1:])
        return
    compare(v(xs, *args[1:]), loop(g, args, xs))
