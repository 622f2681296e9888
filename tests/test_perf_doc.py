"""The one command that regenerates docs/performance.md's measured tables
(tools/perf_doc.py) and the ablation it runs (tools/bench_ablate.py): the page has
every block the command writes, a block is replaced and nothing else, and (slow tier)
the ablation of one workload runs every variant, checks its values and gives a ratio
for each."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import perf_doc  # noqa: E402


def test_the_page_has_every_block_the_command_writes() -> None:
    page = (ROOT / "docs" / "performance.md").read_text()
    for name in perf_doc.BLOCKS:
        start, end = f"<!-- perf_doc:{name} -->\n", f"<!-- /perf_doc:{name} -->"
        assert page.count(start) == 1 and page.count(end) == 1, name
        assert page.index(start) < page.index(end), name


def test_a_block_is_replaced_and_the_prose_kept() -> None:
    page = ("intro\n<!-- perf_doc:grad -->\nold table\n<!-- /perf_doc:grad -->\nmiddle\n"
            "<!-- perf_doc:wide -->\nold wide\n<!-- /perf_doc:wide -->\nend\n")
    new = perf_doc.replace_blocks(page, {"grad": "| new | table |\n"})
    assert new == page.replace("old table", "| new | table |")
    with pytest.raises(KeyError, match="machine"):
        perf_doc.replace_blocks(page, {"machine": "x"})


def test_the_machine_block_says_the_load() -> None:
    text = perf_doc.machine((9.5, 8.0, 7.0), (3.0, 2.0, 1.0), 125.0, quick=True)
    assert "9.50, 8.00, 7.00" in text and "3.00, 2.00, 1.00" in text and "--quick" in text


@pytest.mark.slow
def test_the_ablation_of_one_workload_runs_every_variant() -> None:
    import bench_ablate

    from s2s.optimize.specialize import PASSES

    rows, wrong = bench_ablate.ablate(quick=True, only="softmax_xent", which="bench")
    assert not wrong
    assert [label for label, _ in rows] == ["softmax_xent 10", "softmax_xent 100000"]
    names = set(rows[0][1])
    assert names == {"all passes", "all off", "as emitted"} | {f"without {p}" for p in PASSES}
    assert all(r > 0 for _, ratios in rows for r in ratios.values())
    assert "\n| median | " in bench_ablate.table(rows, markdown=True)
