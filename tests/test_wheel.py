"""What users install is what the suite passes: CI tests the built wheel.

CI runs the README's command (an editable install, then pytest), which tests the
source tree.  This test builds the wheel from a copy of the package, installs it with
no dependencies and no index into a fresh virtual environment that sees the system's
site-packages (numpy, libcst, black, jax, pytest: nothing to download), and runs a
representative part of the suite (grad, jvp, vmap, emitted source, the command line)
from a copy of tests/ outside the source tree, with the venv's python.  A plugin in
that run asserts every ``s2s`` module it imported came from the venv, not from the
checkout: the editable install's finder in the system site-packages is appended to
``sys.meta_path`` after the path finder, and the venv's site-packages precedes the
system's on ``sys.path``, so the installed copy wins; the plugin makes sure of it.
The wheel must also hold every file of the package (``py.typed``; the rule modules'
.py sources, which s2s reads with ``inspect`` to inline them).

``tools/release_check.sh`` is the fuller release check (sdist too, the [dev] extra
resolved from PyPI under constraints.txt, no system site-packages, the whole suite).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "s2s"

# Files covering grad and pytrees (api), jvp (forward), vmap, emitted source (golden)
# and the command line (cli); of the per-program sweeps against JAX, finite
# differences and loops, four programs (the source tree's run has them all).
SUBSET = [
    "test_api.py",
    "test_forward.py",
    "test_vmap.py",
    "test_golden.py",
    "test_cli.py",
]
SELECT = (
    "not (matches_jax or matches_finite_differences or matches_loop)"
    " or two_layers or loop_continue or subscripts or list_append_loop"
)

_PLUGIN = '''
"""Loaded with -p: every s2s module the run imports lies inside the venv."""
import sys
from pathlib import Path

VENV = Path(sys.prefix).resolve()


def _check():
    mods = {n: m for n, m in sys.modules.items() if n == "s2s" or n.startswith("s2s.")}
    assert "s2s" in mods, "the run never imported s2s"
    for name, mod in mods.items():
        f = getattr(mod, "__file__", None)
        if f is None:
            continue
        where = Path(f).resolve()
        assert VENV in where.parents, f"{name} imported from {where}, not {VENV}"
    return Path(mods["s2s"].__file__).resolve()


def pytest_configure(config):
    import s2s  # noqa: F401

    print(f"S2S_FROM {_check()}")


def pytest_sessionfinish(session, exitstatus):
    _check()
    print(f"S2S_CHECKED {sum(1 for n in sys.modules if n.startswith('s2s'))} modules")
'''


def _package_files(base: Path) -> set[str]:
    return {
        p.relative_to(base.parent).as_posix()
        for p in base.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    }


def _build_wheel(src: Path, dist: Path) -> Path:
    """``python -m build --wheel``; without network, a local setuptools>=68 + wheel."""
    pytest.importorskip(
        "build", reason="the 'build' package (the dev extra) is missing"
    )
    cmd = [sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(src)]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=src)
    if r.returncode != 0:
        out = r.stdout + r.stderr
        offline = any(
            s in out
            for s in (
                "No matching distribution",
                "Could not find a version",
                "Failed to establish a new connection",
                "Temporary failure in name",
                "Network is unreachable",
            )
        )
        if not offline:
            pytest.fail(f"python -m build --wheel failed:\n{out[-4000:]}")
        try:  # build's isolated environment could not download setuptools
            import setuptools
            import wheel  # noqa: F401

            local = int(setuptools.__version__.split(".")[0]) >= 68
        except ImportError:
            local = False
        if not local:
            pytest.skip(
                "python -m build has no network for its isolated environment "
                "and no local setuptools>=68 with wheel to build without one"
            )
        r = subprocess.run(
            cmd[:3] + ["--no-isolation"] + cmd[3:],
            capture_output=True,
            text=True,
            cwd=src,
        )
        assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    wheels = list(dist.glob("s2s-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.mark.slow  # builds a wheel and installs it: packaging runs in the slow tier
def test_installed_wheel_passes_the_suite(tmp_path: Path) -> None:
    t0 = time.perf_counter()
    # Build from a copy: never into the shared tree's build/ (stale modules there
    # would reach the wheel), and only what a checkout of the package holds.
    src = tmp_path / "src"
    src.mkdir()
    shutil.copytree(
        PACKAGE, src / "s2s", ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
    )
    for name in (
        "setup.cfg",
        "pyproject.toml",
        "README.md",
        "LICENSE",
        "MANIFEST.in",
        "setup.py",
    ):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, src / name)
    whl = _build_wheel(src, tmp_path / "dist")

    # The wheel holds every file of the package: py.typed, each module's source.
    with zipfile.ZipFile(whl) as z:
        inside = {n for n in z.namelist() if n.startswith("s2s/")}
    assert "s2s/py.typed" in inside
    missing = _package_files(src / "s2s") - inside
    assert (
        not missing
    ), f"files of the package missing from the wheel: {sorted(missing)}"

    venv = tmp_path / "venv"
    try:
        import venv as _venv  # noqa: F401
    except ImportError:  # pragma: no cover - some distributions split venv out
        pytest.skip("the venv module is not available")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "venv",
            "--system-site-packages",
            "--without-pip",
            str(venv),
        ],
        check=True,
        capture_output=True,
    )
    vpy = venv / "bin" / "python"
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONSAFEPATH")
    }
    # The system's pip, run by the venv's python, installs into the venv.
    r = subprocess.run(
        [
            str(vpy),
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--no-index",
            "--disable-pip-version-check",
            "-q",
            str(whl),
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert (
        venv / "bin" / "s2s"
    ).exists(), "the wheel's console script was not installed"

    # Tests from a copy outside the source tree; docs/ and tools/ for the files that
    # read them (docs/primitives.md, tools/bench_vmap.py).
    run = tmp_path / "run"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "tests", run / "tests", ignore=ignore)
    for d in ("docs", "tools"):
        if (ROOT / d).is_dir():
            shutil.copytree(ROOT / d, run / d, ignore=ignore)
    shutil.copy2(ROOT / "pyproject.toml", run / "pyproject.toml")
    (run / "s2s_wheel_check.py").write_text(_PLUGIN)
    assert not (run / "s2s").exists()
    r = subprocess.run(
        [
            str(vpy),
            "-m",
            "pytest",
            "-q",
            "-s",
            "-p",
            "s2s_wheel_check",
            "-k",
            SELECT,
            *[f"tests/{f}" for f in SUBSET],
        ],
        capture_output=True,
        text=True,
        cwd=run,
        env=env,
        timeout=600,
    )
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-6000:]
    where = next(ln for ln in out.splitlines() if ln.startswith("S2S_FROM "))
    assert str(venv.resolve()) in where and str(ROOT) not in where, where
    assert "S2S_CHECKED" in out, out[-2000:]
    passed = re.search(r"(\d+) passed", out)
    assert passed and int(passed[1]) >= 100 and " failed" not in out, out[-2000:]
    print(
        f"wheel build, install and {passed[1]} tests from {len(SUBSET)} files: "
        f"{time.perf_counter() - t0:.1f} s"
    )

    # The console script runs from the venv too.
    r = subprocess.run(
        [str(venv / "bin" / "s2s"), "primitives", "--json"],
        capture_output=True,
        text=True,
        cwd=run,
        env=env,
    )
    assert r.returncode == 0 and r.stdout.lstrip().startswith("["), r.stderr

    # `s2s conformance` from the wheel: the corpus is not in it (its cases call the
    # suite's functions), and the message says where to get it; named, the source
    # tree's corpus replays against the installed s2s
    env = {k: v for k, v in env.items() if k != "S2S_CONFORMANCE_FIXTURES"}
    s2s_cmd = str(venv / "bin" / "s2s")
    r = subprocess.run([s2s_cmd, "conformance", "--count"], capture_output=True, text=True,
                       cwd=tmp_path, env=env)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "not part of the installed package" in r.stderr, r.stderr
    assert "--fixtures SOURCE/tests/fixtures/conformance" in r.stderr, r.stderr
    fixtures = ROOT / "tests" / "fixtures" / "conformance"
    r = subprocess.run([s2s_cmd, "conformance", "--fixtures", str(fixtures), "--json",
                        "-k", "e2e/f_T/"], capture_output=True, text=True, cwd=tmp_path,
                       env=env)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    data = json.loads(r.stdout)
    assert data["summary"]["pass"] == data["count"] >= 9, data["summary"]


def test_the_license_file_is_the_declared_license() -> None:
    import configparser

    meta = configparser.ConfigParser()
    meta.read(ROOT / "setup.cfg")
    assert meta["metadata"]["license"] == "Apache-2.0"
    assert meta["metadata"]["license_files"].strip() == "LICENSE"
    head = " ".join((ROOT / "LICENSE").read_text().split()[:4])
    assert head == "Apache License Version 2.0,", head


@pytest.mark.slow  # builds an sdist: packaging runs in the slow tier
def test_the_sdist_carries_its_tests_and_they_run(tmp_path: Path) -> None:
    """``python -m build --sdist``: the tarball holds the package, the tests with their
    conftest, fixtures and support modules, the docs and examples they read; a part of
    the suite runs from the unpacked sdist, importing s2s from it."""
    import tarfile

    pytest.importorskip("build", reason="the 'build' package (the dev extra) is missing")
    dist = tmp_path / "dist"
    r = subprocess.run([sys.executable, "-m", "build", "--sdist", "--outdir", str(dist),
                        str(ROOT)], capture_output=True, text=True)
    if r.returncode != 0 and "Could not find a version" in r.stdout + r.stderr:
        pytest.skip("python -m build has no index for its isolated environment")
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    (sdist,) = dist.glob("s2s-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = set(tar.getnames())
        tar.extractall(tmp_path / "unpacked", filter="data")
    from s2s.version import __version__

    top = f"s2s-{__version__}"
    for needed in ("LICENSE", "README.md", "setup.cfg", "s2s/runtime.py", "s2s/py.typed",
                   "tests/conftest.py", "tests/support.py", "tests/fixtures/batch_rules.json",
                   "tests/golden", "docs/python-subset.md", "examples/quickstart.py"):
        assert f"{top}/{needed}" in names, needed
    assert not any("__pycache__" in n for n in names)
    here = tmp_path / "unpacked" / top
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:randomly",
                        "tests/test_golden.py", "tests/test_docs.py"], cwd=here,
                       capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(here)})
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    assert re.search(r"\d+ passed", r.stdout), r.stdout[-2000:]
