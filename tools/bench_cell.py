"""One cell of the wide benchmark, hand-written against s2s, many short interleaved rounds.

    PYTHONPATH=<tree> python tools/bench_cell.py xent_int grad     # (run from <tree>)
    PYTHONPATH=<tree> python tools/bench_cell.py logistic vmap --rounds 120

On a loaded shared machine ``bench_wide.py --quick``'s five repeats of 2 ms swing by
2x and more; this times ``--rounds`` rounds of ``--calls`` calls each, hand-written and
s2s in turn (the specialized code, from the third call on; workloads and transforms as
``bench_wide.py`` makes them; with ``--jax``, ``jax.jit`` and ``s2s.jit(..., backend="jax")``
of the same transform), and prints the least time of each, their ratio (the
least disturbed rounds), and the median and quartiles of the per-round ratios.  To
compare two trees, run it alternately in each (``PYTHONPATH`` and the working directory
pick the tree).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Any

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"
os.environ.setdefault("S2S_SPECIALIZE", "sync")  # (the third call runs the specialized code)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]  # this tree's s2s, not an installed one

import bench_wide as BW  # noqa: E402
import bench_wide_workloads as W  # noqa: E402
import numpy as np  # noqa: E402


def _float32(value):
    if isinstance(value, dict):
        return {k: _float32(v) for k, v in value.items()}
    value = np.asarray(value)
    return value.astype(np.float32) if value.dtype == np.float64 else value


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("name")
    ap.add_argument("kind", choices=("grad", "vmap", "hvp"))
    ap.add_argument("--rounds", type=int, default=60)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--jax", action="store_true",
                    help="time s2s.jit(..., backend='jax') against jax.jit instead")
    ap.add_argument("--float32", action="store_true", help="float64 arguments as float32")
    ap.add_argument("--cpu", action="store_true",
                    help="time by the process's CPU time (time.process_time), not the wall "
                    "clock: other processes' load counts less")
    opts = ap.parse_args()
    args = W.make_args(opts.name)
    if opts.float32:
        args = tuple(_float32(a) for a in args)
    if opts.jax:
        systems = BW.systems_for(opts.name, opts.kind)
        hand, g = systems["jax.jit"], systems["s2s.jit(jax)"]
        names = ("jax.jit", "s2s.jit(jax)")
    else:
        hand = getattr(W, opts.name + "_hand")
        g = BW.s2s_transform(getattr(W, opts.name), opts.kind)
        names = ("hand", "s2s")
    for _ in range(3):
        g(*args)

    clock = time.process_time if opts.cpu else time.perf_counter
    hands, ours = paired_rounds(hand, g, args, opts.calls, opts.rounds, clock)
    print(f"{opts.name} {opts.kind}: {names[0]} {min(hands):.2f} us, {names[1]} "
          f"{min(ours):.2f} us, {ratio_summary(hands, ours)}")


def paired_rounds(first: Any, second: Any, args: tuple, calls: int, rounds: int,
                  clock: Any = time.perf_counter) -> tuple[list[float], list[float]]:
    """µs per call of ``first`` and of ``second``, timed in turn in each round (the
    same round's load on both sides of each ratio)."""
    def per_call(fn: Any) -> float:
        t0 = clock()
        for _ in range(calls):
            fn(*args)
        return (clock() - t0) / calls * 1e6

    firsts, seconds = [], []
    for _ in range(rounds):
        firsts.append(per_call(first))
        seconds.append(per_call(second))
    return firsts, seconds


def ratio_summary(firsts: list[float], seconds: list[float]) -> str:
    """The ratio of the least times, and the median and quartiles of the per-round
    ratios (second / first)."""
    ratios = sorted(b / a for a, b in zip(firsts, seconds))
    q = len(ratios) // 4
    return (f"ratio of the least {min(seconds) / min(firsts):.2f}; per-round ratio median "
            f"{statistics.median(ratios):.2f} (quartiles {ratios[q]:.2f}-{ratios[-q - 1]:.2f})")


if __name__ == "__main__":
    main()
