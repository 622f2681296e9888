"""Measure reverse mode over long loops, with and without s2s.checkpoint.

    python tools/bench_checkpoint.py          # the tables of docs/performance-loops.md
    python tools/bench_checkpoint.py --quick    # smaller sizes, for a smoke run

1. Peak memory (tracemalloc, which sees NumPy's buffers) and time of the gradient of
   a 100 000-iteration loop ``y = y * x + np.sin(y)`` on vectors of 100 and 1000, with
   and without checkpointing.  Time and memory are measured in separate runs (tracing
   allocations slows the run down); times are CPU times of this process.
2. The gradient/forward time ratio of ``f(x, 50)`` (the same loop body) on vectors of
   10 and 100 000, without checkpointing (and with it, for comparison).
3. The emitted gradient of ``f``, verbatim.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import sys
import time
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import s2s  # noqa: E402


def f(x, n):
    y = x
    for i in range(n):
        y = y * x + np.sin(y)
    return np.sum(y)


def best_time(call, repeat: int, number: int = 1) -> float:
    """Fastest of ``repeat`` runs of ``number`` calls, per call, in seconds of this
    process's CPU time (``time.process_time``: the NumPy code here runs on one thread,
    and other processes on a shared machine count less than in wall-clock time)."""
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        t0 = time.process_time()
        for _ in range(number):
            call()
        best = min(best, (time.process_time() - t0) / number)
    return best


def peak_bytes(call) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def long_loop(sizes: list[int], n: int, repeat: int) -> list[str]:
    rows = [
        "| size | gradient | peak memory (MB) | time (s) | forward time (s) |",
        "|---:|---|---:|---:|---:|",
    ]
    print("\n".join(rows), flush=True)
    grads = {
        "no checkpoint": s2s.grad(f),
        "s2s.checkpoint(f)": s2s.grad(s2s.checkpoint(f)),
    }
    for size in sizes:
        x = np.linspace(0.1, 0.5, size)
        forward = best_time(lambda: f(x, n), repeat)
        results = {}
        for label, g in grads.items():
            g(x, 2)  # generate and compile first
            results[label] = g(x, n)
            mem = peak_bytes(lambda: g(x, n))
            t = best_time(lambda: g(x, n), repeat)
            rows.append(
                f"| {size} | {label} | {mem / 1e6:.1f} | {t:.3f} | {forward:.3f} |"
            )
            print(rows[-1], flush=True)
        a, b = results.values()
        assert np.array_equal(a, b), "checkpointed gradient differs"
    return rows


def ratios(sizes: list[int], n: int) -> list[str]:
    rows = [
        "| size | forward (ms) | gradient (ms) | ratio "
        "| checkpointed gradient (ms) | ratio |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    print("\n".join(rows), flush=True)
    g, gc_ = s2s.grad(f), s2s.grad(s2s.checkpoint(f))
    for size in sizes:
        x = np.linspace(0.1, 0.5, size)
        g(x, n), gc_(x, n)
        number = 200 if size <= 1000 else 3
        fw = best_time(lambda: f(x, n), 15, number)
        gr = best_time(lambda: g(x, n), 15, number)
        gk = best_time(lambda: gc_(x, n), 15, number)
        rows.append(
            f"| {size} | {fw * 1e3:.3f} | {gr * 1e3:.3f} | {gr / fw:.1f} | "
            f"{gk * 1e3:.3f} | {gk / fw:.1f} |"
        )
        print(rows[-1], flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke run)")
    args = parser.parse_args()
    n_long = 2_000 if args.quick else 100_000
    long_sizes = [100, 1000]
    ratio_sizes = [10, 10_000] if args.quick else [10, 100_000]
    print(
        f"# numpy {np.__version__}, python {platform.python_version()}, "
        f"{platform.machine()}, {os.cpu_count()} cores, load average "
        f"{os.getloadavg()[0]:.1f} at the start\n"
    )
    print(f"## gradient of a {n_long}-iteration loop\n")
    long_loop(long_sizes, n_long, repeat=3)
    print("\n## gradient / forward time, n = 50\n")
    ratios(ratio_sizes, 50)
    g = s2s.grad(f)
    g(np.linspace(0.1, 0.5, 10), 50)
    print("\n## emitted gradient of f\n")
    print(s2s.source(g))


if __name__ == "__main__":
    main()
