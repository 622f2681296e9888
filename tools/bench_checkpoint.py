"""Measure reverse mode over long loops, with and without s2s.checkpoint.

    python tools/bench_checkpoint.py          # the tables of docs/performance-loops.md
    python tools/bench_checkpoint.py --quick  # smaller sizes, for a smoke run

1. Peak memory (tracemalloc, which sees NumPy's buffers) and time of the gradient of
   a 100 000-iteration loop ``y = y * x + np.sin(y)`` on vectors of 100 and 1000, with
   and without checkpointing.
2. The gradient/forward time ratio of ``f(x, 50)`` (the same loop body) on vectors of
   10 and 100 000.
3. The emitted gradient of ``f``, verbatim.

Each gradient is measured two ways: the code as emitted (``S2S_SPECIALIZE=0``), and
what repeated calls through the API run (from the second call with one signature
s2s runs the code specialized to its shapes, ``s2s/optimize/specialize.py``; the specializer
skips nested loops, so checkpointed code runs as emitted).  Each table row is
measured in a fresh process; times are this process's CPU time (``time.process_time``:
the NumPy code here runs on one thread, and other processes on a shared machine count
less than in wall-clock time), memory and time in separate runs (tracing allocations
slows a run down).
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import subprocess
import sys
import time
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import s2s  # noqa: E402

# (checkpointed?, specialized?) -> the label of a row
GRADIENTS = {
    "emitted": (False, False, "no checkpoint, as emitted"),
    "specialized": (False, True, "no checkpoint, specialized"),
    "checkpoint": (True, True, "s2s.checkpoint(f)"),
}


def f(x, n):
    y = x
    for i in range(n):
        y = y * x + np.sin(y)
    return np.sum(y)


def best_time(call, repeat: int, number: int = 1) -> float:
    """Fastest of ``repeat`` runs of ``number`` calls, per call, in seconds of this
    process's CPU time."""
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


def ready(which: str, x: np.ndarray, n: int):
    """The gradient as the row measures it: called at ``(x, n)`` until it runs the
    code it will run from then on (the first call generates, the second specializes)."""
    checkpointed, specialized, _ = GRADIENTS[which]
    g = s2s.grad(s2s.checkpoint(f) if checkpointed else f)
    g.specialize = specialized
    g(x, n)
    g(x, n)
    assert (g.specialized_source is not None) == (specialized and not checkpointed)
    return g


def long_cell(size: int, which: str, n: int, repeat: int) -> str:
    """One row of the long-loop table."""
    x = np.linspace(0.1, 0.5, size)
    g = ready(which, x, n)
    mem = peak_bytes(lambda: g(x, n))
    t = best_time(lambda: g(x, n), repeat)
    forward = best_time(lambda: f(x, n), repeat)
    label = GRADIENTS[which][2]
    return f"| {size} | {label} | {mem / 1e6:.1f} | {t:.3f} | {forward:.3f} |"


def ratio_cell(size: int, n: int) -> str:
    """One row of the ratio table: the forward, then each gradient."""
    x = np.linspace(0.1, 0.5, size)
    grads = [ready(which, x, n) for which in GRADIENTS]
    number = 200 if size <= 1000 else 3
    fw = best_time(lambda: f(x, n), 15, number)
    row = f"| {size} | {fw * 1e3:.3f} |"
    for g in grads:
        t = best_time(lambda: g(x, n), 15, number)
        row += f" {t * 1e3:.3f} | {t / fw:.1f} |"
    return row


def in_fresh_process(*cell: str) -> str:
    """Each row is measured in a process of its own, so that nothing an earlier
    measurement left behind (gigabytes of freed tape, generated and specialized code)
    can bias the next.  (Measured in one process after the long loops, the n = 50
    gradient once ran 1.8x slower than in a fresh one; the cause was not found.)"""
    out = subprocess.run(
        [sys.executable, __file__, "--cell", *cell],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return out.strip().splitlines()[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke run)")
    parser.add_argument("--cell", nargs="+", help=argparse.SUPPRESS)  # (internal)
    args = parser.parse_args()
    if args.cell:
        kind, *rest = args.cell
        if kind == "long":
            size, which, n = rest
            print(long_cell(int(size), which, int(n), repeat=3))
        else:
            size, n = rest
            print(ratio_cell(int(size), int(n)))
        return
    n_long = 2_000 if args.quick else 100_000
    ratio_sizes = [10, 10_000] if args.quick else [10, 100_000]
    print(
        f"# numpy {np.__version__}, python {platform.python_version()}, "
        f"{platform.machine()}, {os.cpu_count()} cores, load average "
        f"{os.getloadavg()[0]:.1f} at the start\n"
    )
    x = np.linspace(0.1, 0.5, 100)  # all three gradients agree
    results = [ready(which, x, 500)(x, 500) for which in GRADIENTS]
    assert np.array_equal(results[0], results[2])
    np.testing.assert_allclose(results[1], results[0], rtol=1e-12)
    print(f"## gradient of a {n_long}-iteration loop\n")
    print("| size | gradient | peak memory (MB) | time (s) | forward time (s) |")
    print("|---:|---|---:|---:|---:|", flush=True)
    for size in (100, 1000):
        for which in GRADIENTS:
            print(in_fresh_process("long", str(size), which, str(n_long)), flush=True)
    print("\n## gradient / forward time, n = 50\n")
    print(
        "| size | forward (ms) | as emitted (ms) | ratio | specialized (ms) | ratio "
        "| s2s.checkpoint(f) (ms) | ratio |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|", flush=True)
    for size in ratio_sizes:
        print(in_fresh_process("ratio", str(size), "50"), flush=True)
    g = s2s.grad(f)
    g(np.linspace(0.1, 0.5, 10), 50)
    print("\n## emitted gradient of f\n")
    print(s2s.source(g))


if __name__ == "__main__":
    main()
