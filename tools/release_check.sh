#!/usr/bin/env bash
# Release check: what users install is what the suite passes.
#
#   tools/release_check.sh              # the default suite against the installed wheel
#   tools/release_check.sh -m slow      # extra arguments go to pytest
#
# 1. `python -m build` makes an sdist and a wheel from this checkout;
# 2. the wheel (with its [dev] extra, pinned by constraints.txt) goes into a fresh
#    virtual environment: no system site-packages, so a dependency missing from
#    setup.cfg fails here;
# 3. the suite runs from a directory outside the source tree, with copies of tests/,
#    docs/, examples/, tools/ and README.md but not s2s/: `import s2s` can only find
#    the installed package, so a module or data file missing from the wheel fails here;
# 4. the sdist is checked to hold the package and setup files.
#
# Needs network access to PyPI (build's isolated environment, the wheel's
# dependencies) and `pip install build`.  S2S_RELEASE_KEEP=1 keeps the work directory.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PYTHON="${PYTHON:-python3.11}"
command -v "$PYTHON" >/dev/null || PYTHON=python3
WORK="$(mktemp -d "${TMPDIR:-/tmp}/s2s_release.XXXXXX")"
if [ "${S2S_RELEASE_KEEP:-0}" = "1" ]; then
    echo "work directory: $WORK"
else
    trap 'rm -rf "$WORK"' EXIT
fi

echo "== python: $("$PYTHON" --version)"
"$PYTHON" - <<'PY'
import sys
if sys.version_info[:2] != (3, 11):
    sys.exit(f"release check is pinned to Python 3.11, got {sys.version.split()[0]}")
PY

echo "== build sdist and wheel"
"$PYTHON" -m build --sdist --wheel --outdir "$WORK/dist" "$ROOT"
WHEEL="$(ls "$WORK"/dist/s2s-*.whl)"
SDIST="$(ls "$WORK"/dist/s2s-*.tar.gz)"
echo "   $(basename "$WHEEL"), $(basename "$SDIST")"

echo "== sdist holds the package and its setup"
tar -tzf "$SDIST" > "$WORK/sdist.txt"
for f in setup.cfg pyproject.toml README.md s2s/__init__.py s2s/py.typed; do
    grep -q "^s2s-[^/]*/$f\$" "$WORK/sdist.txt" || { echo "sdist lacks $f"; exit 1; }
done

echo "== fresh virtual environment with the wheel"
"$PYTHON" -m venv "$WORK/venv"
VPY="$WORK/venv/bin/python"
"$VPY" -m pip install -q --upgrade pip
"$VPY" -m pip install -q -c "$ROOT/constraints.txt" "${WHEEL}[dev]"

echo "== the suite against the installed package, outside the source tree"
mkdir "$WORK/run"
for d in tests docs examples tools; do
    [ -d "$ROOT/$d" ] && cp -r "$ROOT/$d" "$WORK/run/$d"
done
cp "$ROOT/README.md" "$ROOT/pyproject.toml" "$WORK/run/"
find "$WORK/run" -name __pycache__ -prune -exec rm -rf {} +
cd "$WORK/run"
"$VPY" - "$ROOT" <<'PY'
import sys
from pathlib import Path

import s2s

where = Path(s2s.__file__).resolve()
root = Path(sys.argv[1]).resolve()
assert root not in where.parents, f"s2s imported from the source tree: {where}"
assert "site-packages" in where.parts, where
print(f"   s2s {s2s.__version__} from {where.parent}")
PY
"$VPY" -m pytest -q -p no:randomly "$@"
