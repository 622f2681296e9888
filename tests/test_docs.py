"""Every ```python block in README.md and docs/ runs, so the docs cannot drift.

The blocks of one page run in order in one namespace (a page reads top to bottom).
A block may be preceded by a directive, an HTML comment that renders as nothing:

* ``<!-- docs: setup CODE -->`` runs CODE (the inputs a snippet takes as given) first;
* ``<!-- docs: source-of [CODE] EXPR -->``: the block is emitted code, and must equal
  ``s2s.source(EXPR)`` in the page's namespace after CODE runs (EXPR is the last line);
* ``<!-- docs: excerpt -->``: the block is an excerpt (``...`` for what is left out):
  it must parse, and is not run.

Each block is written to a file of its own before it runs, so s2s can read the source
of the functions it defines, as it reads a user's.  The hand-written numbers in docs
that count generated tables are checked against those tables at the end.
"""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

import pytest

import s2s

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"(?:<!-- docs: (?P<kind>setup|source-of|excerpt)(?P<arg>.*?)-->\n)?"
                   r"^```python\n(?P<code>.*?)^```$", re.S | re.M)


def blocks(page: Path) -> list[tuple[int, str, str, str]]:
    """``(line, directive, argument, code)`` for each python block of a page."""
    text = page.read_text()
    return [(text[:m.start("code")].count("\n") + 1, m["kind"] or "run",
             (m["arg"] or "").strip(), m["code"]) for m in FENCE.finditer(text)]


PAGES_WITH_CODE = [p for p in PAGES if blocks(p)]


def _run(code: str, path: Path, namespace: dict) -> None:
    """Run code from a file of its own, so s2s can read the functions it defines."""
    path.write_text(code + "\n")
    exec(compile(code, str(path), "exec"), namespace)


@pytest.mark.every_case  # a few pages: all of them run, not a sample
@pytest.mark.parametrize("page", PAGES_WITH_CODE, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_python_block_runs(page: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # a page may save files
    # the README is read cold; the other pages may use np and s2s as their text does
    namespace: dict = {"__name__": f"docs_{page.stem.replace('-', '_')}"}
    if page.name != "README.md":
        exec("import numpy as np\nimport s2s", namespace)
    for n, (line, kind, arg, code) in enumerate(blocks(page)):
        where = f"{page.relative_to(ROOT)}:{line}"
        if kind == "excerpt":
            ast.parse(textwrap.dedent(code), filename=where)
            continue
        if kind == "source-of":  # CODE lines first (if any), the last line is EXPR
            *setup_lines, expr = arg.splitlines() or [""]
            _run("\n".join(setup_lines), tmp_path / f"block_{n}_setup.py", namespace)
            emitted = eval(expr, namespace)
            assert s2s.source(emitted).strip() == code.strip(), (
                f"{where}: the emitted code shown differs from s2s.source({expr}) now")
            continue
        if kind == "setup":
            _run(arg, tmp_path / f"block_{n}_setup.py", namespace)
        try:
            _run(code, tmp_path / f"block_{n}_line_{line}.py", namespace)
        except Exception as e:  # name the page's line, not the temporary file
            raise AssertionError(f"{where}: the block raised {type(e).__name__}: {e}") from e


def test_pages_count_their_blocks() -> None:
    """Nothing is silently skipped: every block is run, compared, or parsed."""
    counts = {p.relative_to(ROOT).as_posix(): len(blocks(p)) for p in PAGES}
    fences = {p.relative_to(ROOT).as_posix(): p.read_text().count("```python") for p in PAGES}
    assert counts == fences


def test_the_ledger_page_counts_the_matrix() -> None:
    matrix = (ROOT / "docs" / "ledger-matrix.md").read_text()
    total, accepted, rejected = map(int, re.search(
        r"(\d+) cases: (\d+) accepted, (\d+) rejected", matrix).groups())
    page = (ROOT / "docs" / "ledger.md").read_text()
    stated = re.search(r"lists the (\d+) cases that show this: (\d+) valid\s+"
                       r"compositions accepted with evidence, and (\d+) invalid", page)
    assert stated, "docs/ledger.md no longer states the matrix's counts where this test looks"
    assert tuple(map(int, stated.groups())) == (total, accepted, rejected)


def test_the_subset_page_counts_the_primitives() -> None:
    """docs/python-subset.md states how many primitives docs/primitives.md lists."""
    listed = re.search(r"^(\d+) primitives, ", (ROOT / "docs" / "primitives.md").read_text(),
                       flags=re.M)
    stated = re.search(r"lists the (\d+) primitives with rules",
                       (ROOT / "docs" / "python-subset.md").read_text())
    assert listed and stated, "a page no longer states the count where this test looks"
    assert stated.group(1) == listed.group(1)


def _inside(path: Path) -> bool:
    """The path exists in this repository (a clone has nothing beside it)."""
    return path.exists() and path.resolve().is_relative_to(ROOT)


def test_links_and_paths_the_docs_name_exist() -> None:
    """A link ``[..](path)`` and a backquoted repository path (`tests/...`, `s2s/...`,
    `docs/...`, `tools/...`, `examples/...`) name a file of this repository."""
    missing = []
    for page in PAGES:
        text = page.read_text()
        prose = re.sub(r"```.*?```|`[^`]*`", "", text, flags=re.S)
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", prose):
            if "://" not in target and not _inside(page.parent / target):
                missing.append(f"{page.relative_to(ROOT)}: ({target})")
        for path in re.findall(r"`((?:\.\./)*(?:s2s|tests|docs|tools|examples|shared)/[\w./-]+?)"
                               r"(?:::\w+)?`", text):
            if not _inside(ROOT / path):
                missing.append(f"{page.relative_to(ROOT)}: `{path}`")
    assert not missing, missing


def test_every_tool_command_the_docs_name_exists_with_its_flags() -> None:
    """``python tools/X.py --flag`` in a doc: the script is there and takes the flag (its
    source declares it as a string, ``add_argument("--flag")`` or a test of
    ``sys.argv``), so the command that regenerates a table still runs.  (Read, not run:
    ``--help`` of every tool imported JAX in a subprocess each, 7 s of the suite.)"""
    commands: dict[str, set[str]] = {}
    for page in PAGES:
        for script, flags in re.findall(r"python (tools/[\w]+\.py)((?: --?[a-z][\w-]*)*)",
                                        page.read_text()):
            commands.setdefault(script, set()).update(flags.split())
    assert commands, "the docs name no tool commands where this test looks"
    problems = []
    for script, flags in sorted(commands.items()):
        if not (ROOT / script).exists():
            problems.append(f"{script}: no such script")
            continue
        if not flags:
            continue
        source = (ROOT / script).read_text()
        problems += [f"{script} {f}: the script declares no such flag" for f in sorted(flags)
                     if f'"{f}"' not in source and f"'{f}'" not in source]
    assert not problems, problems
