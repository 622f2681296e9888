"""The rule registries are write-once and complete.

A second registration of a built-in name raises (``override=True`` replaces on
purpose), so import order never picks a rule.  The 36 names that two batching rules
used to register keep the rule that ran before (the later import's, read from the
registry of the code before the change), and every primitive has a batching rule, a
family default, a structural rule in vmap, or a stated refusal."""

from __future__ import annotations

import pytest

import s2s  # noqa: F401  (registers everything)
from s2s.primitives import PRIMITIVES, load_all
from s2s.primitives import batching as B
from s2s.primitives import registry
from s2s.transforms.vmap import HANDLED

load_all()

# Which rule batched each of these names when two rules registered it (the registry of
# commit ad476ff, before the registrations were made unique; then in batching_linalg.py
# and batching_shape.py, now beside each primitive's defprim).
FORMER_DOUBLES = {
    **{n: "reduction_rule" for n in (
        "all any average count_nonzero max mean median min nanmax nanmean nanmin nanstd "
        "nansum nanvar prod ptp std sum var").split()},
    **{n: "cumulative_rule" for n in (
        "cumprod cumsum cumulative_prod cumulative_sum nancumprod nancumsum").split()},
    "argsort": "sort_rule",
    "sort": "sort_rule",
    "dot": "dot_rule",
    "dot_lhs_bar": "dot_bars_rule",
    "dot_rhs_bar": "dot_bars_rule",
    "einsum": "einsum_rule",
    "full_like": "full_like_rule",
    "getitem": "getitem_batched_rule",
    "inner": "inner_rule",
    "linalg.vecdot": "vecdot_rule",
    "vecdot": "vecdot_rule",
}


def _name(rule) -> str:
    """A rule by its function's name (rules keep it when they move beside their
    primitive's defprim)."""
    return rule.__qualname__


def test_the_former_double_registrations_keep_the_rule_that_ran() -> None:
    assert len(FORMER_DOUBLES) == 36
    got = {n: _name(B.rule_for(n)) for n in FORMER_DOUBLES}
    assert got == FORMER_DOUBLES


def test_a_second_batching_rule_for_a_name_raises() -> None:
    before = dict(B.RULES)
    with pytest.raises(ValueError, match="'reshape' already has the batching rule"):
        B.batch_rule("reshape")(lambda b, s: "")
    with pytest.raises(ValueError, match="already has the batching rule"):
        B.batch_rule("a_name_nobody_registered", "reshape")(lambda b, s: "")
    assert B.RULES == before  # nothing registered, not even the first (new) name


def test_override_replaces_a_batching_rule() -> None:
    original = B.RULES["reshape"]

    def mine(b, s):
        return original(b, s)

    try:
        assert B.batch_rule("reshape", override=True)(mine) is mine
        assert B.rule_for("reshape") is mine
    finally:
        B.RULES["reshape"] = original


def test_a_rule_under_its_own_name_wins_over_the_declared_default() -> None:
    """``sum`` declares the reducer default; a rule registered for it replaces that."""
    assert "sum" not in B.RULES and PRIMITIVES["sum"].batch == "reducer"
    default = B.rule_for("sum")

    def mine(b, s):
        return default(b, s)

    try:
        assert B.batch_rule("sum")(mine) is mine and B.rule_for("sum") is mine
    finally:
        del B.RULES["sum"]
    assert B.rule_for("sum") is default


def test_a_second_defprim_defvjp_or_defjvp_of_a_builtin_raises() -> None:
    sin = PRIMITIVES["sin"]
    vjp, jvps = sin.vjp, dict(sin.jvps)
    with pytest.raises(ValueError, match="'sin' is already registered"):
        registry.defprim("sin", None, "(x)", family="elementwise")
    with pytest.raises(ValueError, match="sin already has the VJP rule"):
        registry.defvjp("sin")(lambda g, ans, x: g)
    with pytest.raises(ValueError, match="sin already has the JVP rule"):
        registry.defjvp("sin", "x")(lambda x_dot, ans, x: x_dot)
    assert PRIMITIVES["sin"] is sin and sin.vjp is vjp and sin.jvps == jvps


def test_every_primitive_batches_or_says_why_not() -> None:
    """A rule, a family default (broadcasting), vmap's structural handling, or a family
    that vmap refuses batched operands for (arrays made from shapes and constants)."""
    missing = sorted(  # (a user's primitive without elementwise=True is refused: its doc)
        p for p in PRIMITIVES
        if PRIMITIVES[p].builtin and B.rule_for(p) is None and p not in HANDLED
        and PRIMITIVES[p].batch != registry.REFUSED
    )
    assert missing == []
    assert any(PRIMITIVES[p].batch == registry.REFUSED for p in PRIMITIVES)


def test_every_declared_default_exists() -> None:
    declared = {p.batch for p in PRIMITIVES.values()} - {None, registry.REFUSED}
    assert declared <= set(B.DEFAULTS), declared - set(B.DEFAULTS)


def test_a_default_is_never_also_registered_by_name_for_its_primitive() -> None:
    """A name list (or registry filter) beside a declared default would be two sources."""
    both = sorted(n for n, r in B.RULES.items()
                  if n in PRIMITIVES and B.DEFAULTS.get(PRIMITIVES[n].batch) is r)
    assert both == []


def test_a_primitive_from_an_unbatched_family_refuses_a_batched_operand() -> None:
    import numpy as np

    def f(x, n):
        return np.sum(x) * np.ones(n)

    with pytest.raises(s2s.TransformError, match="batching rule"):
        s2s.vmap(f, in_axes=(0, 0))(np.ones((3, 2)), np.array([2, 2, 2]))


def test_every_primitive_keeps_the_batching_rule_it_had() -> None:
    """The rule vmap finds for each built-in primitive, by function name, is the one it
    found before the rules moved beside their primitives (tests/fixtures/
    batch_rules.json, dumped from the registry of 5a2e1c0, with the rules of primitives
    added since; None: no rule)."""
    import json
    from pathlib import Path

    pinned = json.loads((Path(__file__).parent / "fixtures" / "batch_rules.json").read_text())
    got = {n: getattr(B.rule_for(n), "__qualname__", None)
           for n in PRIMITIVES if PRIMITIVES[n].builtin}
    assert got == pinned


def test_every_batching_rule_sits_beside_its_primitive() -> None:
    """A rule registered under a name is defined in the module whose defprim declared
    that primitive (defaults shared by families live in batching.py)."""
    assert set(B.RULES) <= set(PRIMITIVES), set(B.RULES) - set(PRIMITIVES)
    apart = {n: (r.__module__, PRIMITIVES[n].module) for n, r in B.RULES.items()
             if r.__module__ != PRIMITIVES[n].module}
    assert apart == {}


def test_the_cli_lists_every_primitive_without_a_rule_and_what_batches_it() -> None:
    from s2s.tools.cli import batching_source, without_batching_rule

    listed = {line.split()[0] for line in without_batching_rule()}
    builtin = {n for n, p in PRIMITIVES.items() if p.builtin}
    assert listed == builtin - set(B.RULES)
    assert all(batching_source(n) != "none" for n in listed)
    assert batching_source("sum") == "default reducer"
    assert batching_source("zeros").startswith("refused")
    assert batching_source("reshape") == "rule s2s.primitives.shape.reshape_rule"
