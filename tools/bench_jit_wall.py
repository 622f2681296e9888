"""Wall-clock (or CPU) time of ``s2s.jit(..., backend="jax")`` against ``jax.jit``,
cell by cell, in many short interleaved rounds.

    PYTHONPATH=<tree> python tools/bench_jit_wall.py                  # the wide cells
    PYTHONPATH=<tree> python tools/bench_jit_wall.py --per-example    # + vmap(grad)
    PYTHONPATH=<tree> python tools/bench_jit_wall.py xent_int:grad linreg:b8 --rounds 80
    PYTHONPATH=<tree> python tools/bench_jit_wall.py --all-float32 --thread  # float32

The cells are ``tools/bench_jit_instructions.py``'s (the wide workloads as
``tools/bench_wide.py`` makes them, and ``tools/bench_vmap.py``'s per-example
gradients at a batch size).  Each round times ``--calls`` calls of each system (the
order alternating between rounds), every call waited on; printed per cell: the least
per-call time of each, the ratio of the least times, and the median and quartiles of
the per-round ratios (a neighbour's process that preempts one round moves its ratio,
not the median).  ``--cpu`` times by the process's CPU time instead of the wall clock;
``--thread`` by the calling thread's CPU time with JAX computing on that thread
(``jax_cpu_enable_async_dispatch`` off: the measure of the three another process's
load disturbs least, beside the instruction counts); ``--unwaited`` calls without
waiting on the results, the way ``tools/bench_wide.py`` timed JAX before (each
order's ratio printed apart: the computation of one system's calls runs into the time
of the next).  BLAS and XLA run on one thread.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"
os.environ["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]  # this tree's s2s, not an installed one

import bench_jit_instructions as BI  # noqa: E402
import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cells", nargs="*", help="name:kind[:f32] as bench_jit_instructions.py")
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--round-ms", type=float, default=4.0, help="about this long a round")
    ap.add_argument("--per-example", action="store_true")
    ap.add_argument("--all-float32", action="store_true",
                    help="every cell with its float64 arguments as float32 (name:kind:f32)")
    ap.add_argument("--small", action="store_true",
                    help="the wide cells at the small sizes of make_small_args")
    ap.add_argument("--cpu", action="store_true", help="process CPU time, not wall clock")
    ap.add_argument("--thread", action="store_true",
                    help="the calling thread's CPU time, JAX dispatching synchronously "
                    "(the computation runs on that thread)")
    ap.add_argument("--unwaited", action="store_true",
                    help="no call waited on (as tools/bench_wide.py timed JAX before): the "
                    "ratio printed separately for the rounds where jax.jit ran first and "
                    "those where s2s.jit did")
    opts = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} at the start")
    cells = opts.cells or [
        c + (":small" if opts.small and c in BI.CELLS else "") +
        (":f32" if opts.all_float32 else "")
        for c in BI.CELLS + (BI.PER_EXAMPLE if opts.per_example else [])]
    clock = (time.thread_time if opts.thread else time.process_time if opts.cpu
             else time.perf_counter)
    if opts.thread:
        jax.config.update("jax_cpu_enable_async_dispatch", False)
    what = "thread CPU" if opts.thread else "CPU" if opts.cpu else "wall"
    print(f"s2s.jit(jax) / jax.jit, {opts.rounds} interleaved rounds, {what} time per call")
    print(f"{'cell':22s} {'jax.jit':>9s} {'s2s.jit':>9s} {'least':>6s} {'median':>7s} quartiles")
    medians = []
    for cell in cells:
        args, theirs, ours = BI.cell_pair(cell)
        block = jax.block_until_ready
        wait = (lambda out: out) if opts.unwaited else block

        def per_call(fn, calls: int) -> float:
            t0 = clock()
            for _ in range(calls):
                wait(fn(*args))
            return (clock() - t0) / calls

        for _ in range(20):
            block(theirs(*args))
            block(ours(*args))
        calls = max(1, int(opts.round_ms * 1e-3 / max(per_call(theirs, 20), 1e-7)))
        times: dict[str, list[float]] = {"jax": [], "s2s": []}
        for k in range(opts.rounds):
            pair = (("jax", theirs), ("s2s", ours))
            for label, fn in pair if k % 2 == 0 else pair[::-1]:
                times[label].append(per_call(fn, calls))
        ratios = sorted(s / j for j, s in zip(times["jax"], times["s2s"]))
        q = len(ratios) // 4
        median = statistics.median(ratios)
        medians.append((median, cell))
        print(f"{cell:22s} {min(times['jax']) * 1e6:>7.1f}us {min(times['s2s']) * 1e6:>7.1f}us "
              f"{min(times['s2s']) / min(times['jax']):>6.3f} {median:>7.3f} "
              f"{ratios[q]:.3f}-{ratios[-q - 1]:.3f}", flush=True)
        if opts.unwaited:
            for first, parity in (("jax.jit", 0), ("s2s.jit", 1)):
                some = [s / j for k, (j, s) in enumerate(zip(times["jax"], times["s2s"]))
                        if k % 2 == parity]
                print(f"{'':22s} {first} first: median {statistics.median(some):.3f}")
                ORDERED.setdefault(first, []).append(statistics.median(some))
    medians.sort()
    print(f"median of the cells' medians {medians[len(medians) // 2][0]:.3f}, "
          f"worst {medians[-1][0]:.3f} ({medians[-1][1]})")
    for first, some in ORDERED.items():
        print(f"{first} first: median of the cells' medians {statistics.median(some):.3f}")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


ORDERED: dict[str, list[float]] = {}  # (--unwaited: each order's per-cell medians)


if __name__ == "__main__":
    main()
