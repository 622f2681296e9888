"""Benchmark: what a user waits for, call by call, from a cold interpreter.

    python tools/bench_latency.py            # every workload, both specializing modes
    python tools/bench_latency.py --quick    # one run each instead of three

Each measurement runs in a fresh Python process (nothing imported, no cache warm;
modules' bytecode written as any install has it, PYTHONDONTWRITEBYTECODE unset):
``import s2s``, then 20 gradient calls of one workload of ``tools/bench_workloads.py``
at its small size, each timed.  Reported, in milliseconds (the median over runs):
the import, the first call (parse, transform, emit, compile, run), the second call,
the slowest of calls 3-20, and the steady state (the median of calls 11-20).

Modes (``S2S_SPECIALIZE``): ``1``, the default, specializes on a thread the second
call starts; ``sync`` specializes inside the second call, as s2s did before.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORKLOADS = ("chain", "mlp2", "softmax_xent", "rosenbrock", "loop50")

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import s2s
t1 = time.perf_counter()
sys.path.insert(0, {here!r})
import numpy as np
import bench_workloads as w
fn = getattr(w, {name!r})
args = w.make_args({name!r}, min(n for k, n in w.CASES if k == {name!r}))
g = s2s.grad(fn)
times = []
for _ in range(20):
    a = time.perf_counter()
    g(*args)
    times.append(time.perf_counter() - a)
print(json.dumps({{"import": t1 - t0, "calls": times}}))
"""


def run_once(name: str, mode: str) -> dict:
    env = dict(os.environ, S2S_SPECIALIZE=mode, OMP_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an install has its modules' bytecode
    out = subprocess.run([sys.executable, "-c", CHILD.format(here=str(HERE), name=name)],
                         capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(name: str, mode: str, runs: int) -> dict[str, float]:
    rows = [run_once(name, mode) for _ in range(runs)]

    def med(f) -> float:
        return statistics.median(f(r) for r in rows) * 1e3

    return {"import": med(lambda r: r["import"]),
            "call 1": med(lambda r: r["calls"][0]),
            "call 2": med(lambda r: r["calls"][1]),
            "max 3-20": med(lambda r: max(r["calls"][2:])),
            "steady": med(lambda r: statistics.median(r["calls"][10:]))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="one run per cell")
    opts = ap.parse_args()
    runs = 1 if opts.quick else 3
    cols = ("import", "call 1", "call 2", "max 3-20", "steady")
    print("| workload | mode | " + " | ".join(f"{c} (ms)" for c in cols) + " |")
    print("|---|---|" + "---:|" * len(cols))
    for name in WORKLOADS:
        for mode in ("1", "sync"):
            m = measure(name, mode, runs)
            label = "background" if mode == "1" else "sync"
            print(f"| {name} | {label} | " + " | ".join(f"{m[c]:.1f}" for c in cols) + " |")


if __name__ == "__main__":
    main()
