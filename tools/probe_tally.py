"""Tally of the newcomer probes' pinned classes (issue 23's measure).

Each probe (tests/frontend/newcomer_probeN_{fns,cases}.py, test_newcomer_probeN.py;
probes 4 to 10 classify with the shared tests/frontend/newcomer_harness.py; 9 and 10
also check every transform's results for aliasing, ``alias_all``) runs
everyday functions through grad at calls 1, 3 and 10, jvp, vmap of grad, hessian and
jit of grad on both backends, and compares with JAX on the same source (or central
differences); every test_newcomer_probeN.py found is counted; its slow sweep (``python -m pytest -m slow tests/frontend/
test_newcomer_probeN.py``) pins each function's class, the worst over every stage:

- ``ok``: every stage ran and matched the oracle;
- ``dtype``: values matched, a float32 result's dtype differed from JAX's;
- ``both refuse``: some stage was refused by s2s and by JAX alike (a traced ``while``
  under jit, say), every other stage ``ok``;
- ``refused``: s2s refused (located) a stage JAX runs;
- ``internal``, ``WRONG``, ``alias``: an internal error, a wrong number, a result
  sharing memory with an input.

This script reads the pinned classes (the ``EXPECTED`` dicts; a function not named
there is ``ok``) without running anything:

    python tools/probe_tally.py
"""

from __future__ import annotations

import importlib
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FRONTEND = ROOT / "tests" / "frontend"


def _functions(number: int) -> list[str]:
    """The probe's function names: its cases module's ``CASES`` keys."""
    cases = importlib.import_module(f"newcomer_probe{number}_cases")
    return list(cases.CASES)


def _pinned(number: int, name: str) -> dict[str, str]:
    test = importlib.import_module(f"test_newcomer_probe{number}")
    return dict(getattr(test, name, {}))


def tally(number: int) -> tuple[int, Counter, dict[str, str]]:
    names = _functions(number)
    pinned = _pinned(number, "EXPECTED")
    f32 = _pinned(number, "EXPECTED_F32")
    classes = {n: pinned.get(n, f32.get(n, "ok")) for n in names}
    return len(names), Counter(classes.values()), {n: c for n, c in classes.items()
                                                   if c != "ok"}


def main() -> int:
    sys.path[:0] = [str(FRONTEND), str(ROOT / "tests")]
    numbers = sorted(int(m.group(1)) for p in FRONTEND.glob("test_newcomer_probe*.py")
                     if (m := re.fullmatch(r"test_newcomer_probe(\d+)\.py", p.name)))
    total: Counter = Counter()
    count = 0
    for number in numbers:
        n, counts, others = tally(number)
        count += n
        total += counts
        row = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        print(f"probe {number}: {n} functions: {row}")
        for name, label in sorted(others.items()):
            print(f"    {name}: {label}")
    row = ", ".join(f"{k} {v}" for k, v in sorted(total.items()))
    print(f"all probes: {count} functions: {row}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
