"""The conformance corpus (s2s/tools/conformance.py, tests/fixtures/conformance/, recorded
from JAX by tools/capture_fixtures.py): replayed without JAX, compared live with it.

docs/conformance.md is the record of every case's status: a case passes unless the
document lists it (as ``fail`` or ``unsupported``, with the reason).  The default run
replays a fixed sample of the corpus and checks each status against the document,
checks that the document was generated from these fixtures, replays a few cases in a
process where ``import jax`` fails, and compares a few live against JAX.  ``-m slow``
replays every case and regenerates the document (it must be unchanged).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from s2s.tools import conformance as C

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "conformance.md"
# the fixtures beside this file, wherever s2s is installed from
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "conformance"
ENV = {**os.environ, "S2S_CONFORMANCE_FIXTURES": str(FIXTURES)}
SAMPLE_EVERY = 240  # default run: every 240th case (about 27; -m slow replays them all)


@pytest.fixture(scope="module")
def corpus() -> C.Corpus:
    return C.load(FIXTURES)


def documented() -> dict[str, str]:
    """case id -> status, for the cases the document lists as not passing."""
    rows = re.findall(r"^\| `([^`]+)` \| (fail|unsupported) \|", DOC.read_text(), re.M)
    return dict(rows)


def expected_status(case_id: str, listed: dict[str, str]) -> str:
    return listed.get(case_id, "pass")


def test_corpus_has_at_least_3000_cases(corpus) -> None:
    m = corpus.manifest
    assert m["count"] == len(corpus.cases) >= 3000
    assert m["x64"] and m["jax_version"] and m["produced_by"]
    assert len({c["id"] for c in corpus.cases}) == len(corpus.cases)
    transforms = {c["transform"] for c in corpus.cases}
    assert transforms == set(C.TRANSFORMS)
    size = sum(p.stat().st_size for p in FIXTURES.iterdir())
    assert size < 6_500_000, f"fixtures take {size} bytes"


def test_every_case_says_how_jax_produced_it(corpus) -> None:
    for c in corpus.cases:
        assert c["jax_how"] and c["module"] and c["function"], c["id"]
        assert (corpus.root / c["module"]).exists(), c["module"]


def test_document_is_from_these_fixtures(corpus) -> None:
    text = DOC.read_text()
    assert f"corpus digest `{corpus.manifest['digest']}`" in text, (
        "docs/conformance.md is stale: python -m s2s conformance --markdown -j 2 "
        "> docs/conformance.md")
    assert re.search(rf"^{len(corpus.cases)} cases: ", text, re.M)
    ids = {c["id"] for c in corpus.cases}
    assert set(documented()) <= ids


@pytest.mark.slow
def test_replay_sample_matches_document(corpus) -> None:
    listed = documented()
    sample = corpus.cases[::SAMPLE_EVERY]
    wrong = [(r.id, r.status, expected_status(r.id, listed), r.detail)
             for r in C.run(corpus, sample)
             if r.status != expected_status(r.id, listed)]
    assert not wrong, "status differs from docs/conformance.md (regenerate it if a fix " \
        f"or a regression is intended): {wrong}"


@pytest.mark.slow
def test_replay_all_regenerates_the_document(corpus) -> None:
    out = subprocess.run([sys.executable, "-m", "s2s", "conformance", "--markdown",
                          "-j", "2"], capture_output=True, text=True, cwd=ROOT, env=ENV)
    assert out.returncode == 0, out.stderr
    assert out.stdout == DOC.read_text(), "docs/conformance.md is stale"


# ---- without JAX -----------------------------------------------------------------

BLOCK_JAX = """
import sys
class NoJax:
    def find_spec(self, name, path=None, target=None):
        if name == "jax" or name.startswith(("jax.", "jaxlib")):
            raise ImportError(f"blocked: {name}")
sys.meta_path.insert(0, NoJax())
from s2s.tools.cli import main
code = main(sys.argv[1:])
assert not any(m == "jax" or m.startswith("jax.") for m in sys.modules), "jax imported"
sys.exit(code)
"""


def run_without_jax(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", BLOCK_JAX, "conformance", *args],
                          capture_output=True, text=True, cwd=ROOT, env=ENV)


@pytest.mark.slow
def test_replay_runs_without_jax(corpus) -> None:
    out = run_without_jax("--json", "-k", "corpus/loop_carried")
    assert out.returncode in (0, 1), out.stderr
    data = json.loads(out.stdout)
    listed = documented()
    assert data["count"] >= 8
    for case in data["cases"]:
        assert case["status"] == expected_status(case["id"], listed), case
    assert run_without_jax("--live").returncode == 2  # says it needs JAX


@pytest.mark.slow
def test_count() -> None:
    out = run_without_jax("--count")
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) == len(C.load(FIXTURES).cases)


# ---- live against JAX --------------------------------------------------------------


@pytest.mark.slow  # runs JAX again on a sample: the drift check belongs to the slow tier
def test_live_sample_matches_recording_and_document(corpus) -> None:
    pytest.importorskip("jax")
    listed = documented()
    sample = corpus.cases[7::250]  # about 25, every transform and family
    results = C.run(corpus, sample, live=True)
    assert not [r.id for r in results if r.jax_drift], [
        (r.id, r.jax_drift) for r in results if r.jax_drift]
    wrong = [(r.id, r.status, r.detail) for r in results
             if r.status != expected_status(r.id, listed)]
    assert not wrong


@pytest.mark.slow
def test_drift_is_reported_apart_from_s2s(corpus) -> None:
    """A recording that differs from live JAX is JAX drift, not an s2s failure; a
    replay against the altered recording is an s2s failure."""
    pytest.importorskip("jax")
    case = next(c for c in corpus.cases if c["id"] == "row/sin-matrix/jvp")
    altered = C.Corpus(corpus.manifest, dict(corpus.arrays), corpus.root, [case])
    key = case["expected"]["t"][1]["a"]
    altered.arrays[key] = altered.arrays[key] + 1.0
    live = C.run_case(altered, case, live=True)
    assert live.status == "pass" and live.jax_drift and "max abs error" in live.jax_drift
    replay = C.run_case(altered, case)
    assert replay.status == "fail" and replay.jax_drift is None


@pytest.mark.slow
def test_the_default_corpus_is_found_in_a_checkout_and_its_cases_run(tmp_path) -> None:
    """Without --fixtures or the variable (the suite sets it elsewhere), from another
    directory: `s2s conformance` finds the checkout's corpus and runs its cases, e2e
    ones too (they load the suite's modules beside the corpus)."""
    env = {k: v for k, v in os.environ.items() if k != "S2S_CONFORMANCE_FIXTURES"}
    out = subprocess.run([sys.executable, "-m", "s2s", "conformance", "--json", "-k",
                          "e2e/f_T/"], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    data = json.loads(out.stdout)
    assert data["summary"]["pass"] == data["count"] >= 9, data["summary"]


def test_without_a_corpus_the_message_says_where_one_is(tmp_path, monkeypatch) -> None:
    """Installed from a wheel, there is no corpus beside the package: the error says
    why and what to run instead (tests/test_wheel.py runs it from a real wheel, in the
    slow tier); a folder the user names that holds none is named as such."""
    monkeypatch.delenv("S2S_CONFORMANCE_FIXTURES", raising=False)
    monkeypatch.setattr(C, "fixture_dir", lambda: tmp_path / "tests" / "fixtures" / "conformance")
    with pytest.raises(FileNotFoundError) as err:
        C.load()
    text = str(err.value)
    assert "not part of the installed package" in text, text
    assert "`s2s conformance --fixtures SOURCE/tests/fixtures/conformance`" in text, text
    with pytest.raises(FileNotFoundError, match=r"at .*nowhere \(no such folder\)"):
        C.load(tmp_path / "nowhere")
    with pytest.raises(FileNotFoundError, match=r"holds no manifest\.json"):
        C.load(tmp_path)
