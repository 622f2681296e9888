"""Ablation of the specializer's passes: what each one buys, on every workload.

    python tools/bench_ablate.py              # every workload of bench.py and bench_wide.py
    python tools/bench_ablate.py --quick      # fewer repeats
    python tools/bench_ablate.py --markdown   # the table of docs/performance.md

Each pass of ``s2s/optimize/specialize.py`` (``PASSES``) is switched off in turn with
the supported switch, ``S2S_PASSES_OFF`` (read when a signature specializes), and the
workload's transform is made and specialized again without it.  Rows: all passes on;
each pass off alone; all off (``S2S_PASSES_OFF=all``: the code is still re-emitted and
called through the signature's fast path, but not rewritten); the code as emitted
(``specialize = False``: no fast path either).  Every variant's result is checked
against the hand-written gradient before it is timed (a pass switched off must not
change the values).  Cells are ratios to the hand-written gradient, medians over
interleaved repeats (each repeat times every variant once, in turn).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"
os.environ.setdefault("S2S_SPECIALIZE", "sync")  # each variant specialized before timing

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]  # this tree's s2s, not an installed one

import bench_wide  # noqa: E402
import bench_wide_workloads as WW  # noqa: E402
import bench_workloads as W  # noqa: E402

import s2s  # noqa: E402
from s2s.optimize.specialize import PASSES  # noqa: E402

ALL, OFF, EMITTED = "all passes", "all off", "as emitted"


def cells(which: str = "both") -> list[tuple[str, object, tuple, object]]:
    """(label, make(specialize: bool) -> the transform, args, hand-written): the
    workloads of tools/bench.py (both sizes; ``which`` "bench") and of
    tools/bench_wide.py ("wide"), or both."""
    out = []
    for name, size in W.CASES if which != "wide" else ():
        f = getattr(W, name)

        def make(spec, f=f):
            g = s2s.grad(f)
            g.specialize = spec
            return g
        out.append((f"{name} {size}", make, W.make_args(name, size),
                    getattr(W, name + "_hand")))
    for name, kind in bench_wide.WORKLOADS if which != "bench" else ():
        fn = getattr(WW, name)
        out.append((f"{name} ({kind})",
                    lambda spec, fn=fn, kind=kind: bench_wide.s2s_transform(fn, kind, spec),
                    WW.make_args(name), getattr(WW, name + "_hand")))
    return out


def _leaves(tree) -> list[np.ndarray]:
    if isinstance(tree, dict):
        return [np.asarray(tree[k]) for k in sorted(tree)]
    return [np.asarray(tree)]


def _time(fn, args, number: int) -> float:
    start = time.perf_counter()
    for _ in range(number):
        fn(*args)
    return (time.perf_counter() - start) / number


def ablate_cell(make, args, hand, repeats: int, budget: float) -> tuple[dict, list]:
    """Ratios to ``hand`` per variant (medians of interleaved repeats), and the
    variants whose values differ from the hand-written gradient's."""
    want = _leaves(hand(*args))
    systems: dict[str, object] = {}
    wrong = []
    before = os.environ.get("S2S_PASSES_OFF")
    for label, off in [(ALL, ""), *((f"without {p}", p) for p in PASSES), (OFF, "all"),
                       (EMITTED, None)]:
        os.environ["S2S_PASSES_OFF"] = off or ""
        fn = make(off is not None)
        for _ in range(3):  # the second call specializes (S2S_SPECIALIZE=sync)
            got = _leaves(fn(*args))
        if not all(np.allclose(a, b, rtol=1e-6, atol=1e-9) for a, b in zip(got, want)):
            wrong.append(label)
        systems[label] = fn
    if before is None:
        os.environ.pop("S2S_PASSES_OFF", None)
    else:
        os.environ["S2S_PASSES_OFF"] = before
    systems = {"hand": hand, **systems}
    number = max(1, int(budget / max(_time(hand, args, 3), 1e-7)))
    samples = {k: [] for k in systems}
    for _ in range(repeats):
        for k, fn in systems.items():
            samples[k].append(_time(fn, args, number))
    base = statistics.median(samples["hand"])
    return {k: statistics.median(v) / base for k, v in samples.items() if k != "hand"}, wrong


def ablate(quick: bool, only: str = "", which: str = "both"
           ) -> tuple[list[tuple[str, dict]], list[str]]:
    from s2s.api import signatures

    # each variant specializes at its second call, on this thread, while
    # S2S_PASSES_OFF says what it says for it (as S2S_SPECIALIZE=sync would have)
    background, signatures.IN_BACKGROUND = signatures.IN_BACKGROUND, False
    try:
        return _ablate(quick, only, which)
    finally:
        signatures.IN_BACKGROUND = background


def _ablate(quick: bool, only: str, which: str) -> tuple[list[tuple[str, dict]], list[str]]:
    rows, wrong = [], []
    for label, make, args, hand in cells(which):
        if only and label.split()[0] not in only.split(","):
            continue
        ratios, bad = ablate_cell(make, args, hand, 5 if quick else 11,
                                  0.005 if quick else 0.02)
        rows.append((label, ratios))
        wrong += [f"{label}: {v}" for v in bad]
    return rows, wrong


def table(rows: list[tuple[str, dict]], markdown: bool) -> str:
    """One row per workload, one column per variant (ratios to hand-written), and a
    last row of medians over the workloads."""
    names = list(rows[0][1])
    short = [n.replace("without ", "−") for n in names]
    lines = []
    if markdown:
        lines.append("| workload | " + " | ".join(short) + " |")
        lines.append("|---|" + "---:|" * len(names))
    else:
        lines.append(f"{'workload':<26}" + "".join(f"{n:>12}" for n in short))
    meds = {n: statistics.median(r[n] for _, r in rows) for n in names}
    for label, r in [*rows, ("median", meds)]:
        if markdown:
            lines.append(f"| {label} | " + " | ".join(f"{r[n]:.2f}" for n in names) + " |")
        else:
            lines.append(f"{label:<26}" + "".join(f"{r[n]:>12.2f}" for n in names))
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--only", default="", help="comma-separated workload names")
    ap.add_argument("--which", choices=("both", "bench", "wide"), default="both",
                    help="the workloads of tools/bench.py, of tools/bench_wide.py, or both")
    opts = ap.parse_args()
    rows, wrong = ablate(opts.quick, opts.only, opts.which)
    print(table(rows, opts.markdown))
    for w in wrong:
        print(f"VALUES DIFFER: {w}")
    if wrong:
        sys.exit(1)


if __name__ == "__main__":
    main()
