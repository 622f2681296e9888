"""The command line, and docs generated from the registry."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from s2s.tools.cli import primitive_table, primitives_markdown

DOCS = Path(__file__).parent.parent / "docs" / "primitives.md"


@pytest.mark.slow
def test_primitives_json_lists_every_registered_primitive() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "s2s", "primitives", "--json"],
        capture_output=True, text=True, check=True,
    ).stdout
    records = json.loads(out)
    assert records == primitive_table()
    for r in records:
        assert {"name", "jvp", "vjp", "batch", "differentiable"} <= set(r)
        if r["differentiable"] and r["name"] not in WITHOUT_DERIVATIVE_AS_IN_JAX:
            assert r["vjp"] and r["jvp"], r["name"]


# differentiable in principle, with no rule: differentiating them raises s2s's
# missing-rule error, as JAX raises for them (s2s/primitives/collectives.py)
WITHOUT_DERIVATIVE_AS_IN_JAX = {"pmax", "pmin"}


def test_docs_primitives_md_is_up_to_date() -> None:
    assert DOCS.read_text() == primitives_markdown(), (
        "regenerate: python -m s2s primitives --markdown > docs/primitives.md"
    )


@pytest.mark.slow
def test_scipy_rules_register_on_first_use_not_at_import() -> None:
    code = (
        "import sys, numpy as np, s2s\n"
        "assert 'scipy' not in sys.modules, 'import s2s imported SciPy'\n"
        "import rule_fns_special as F\n"
        "g = s2s.grad(F.f_erf_erfc)(np.full((2, 3), 0.3))\n"
        "assert np.all(np.isfinite(g)) and np.any(g != 0)\n"
    )
    subprocess.run(
        [sys.executable, "-c", code], check=True, cwd=Path(__file__).parent,
        env={**__import__("os").environ, "PYTHONPATH": str(Path(__file__).parent)},
    )
