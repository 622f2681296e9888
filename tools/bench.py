"""Benchmark: s2s gradients against a hand-written NumPy gradient, autograd and JAX.

    python tools/bench.py            # all workloads, small and large sizes
    python tools/bench.py --quick    # fewer repeats

Every system's gradient is checked against the hand-written one before it is timed.
Times are medians over interleaved repeats (each repeat times every system once, in
turn, so drift in machine load hits all of them alike).  BLAS is pinned to one thread.
Ratios are to the hand-written NumPy gradient: 1.00 means as fast as a careful person.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_workloads as W  # noqa: E402

import s2s  # noqa: E402


def optional_systems(fn_name: str) -> dict:
    systems = {}
    try:
        import autograd
        import autograd.numpy as anp

        fn = W.twin(anp)[fn_name]
        systems["autograd"] = autograd.grad(fn)
    except ImportError:
        pass
    try:
        import jax

        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp

        fn = W.twin(jnp)[fn_name]
        systems["jax.grad"] = jax.grad(fn)
        jitted = jax.jit(jax.grad(fn))
        systems["jax.jit(grad)"] = lambda *a: jitted(*a).block_until_ready()
    except ImportError:
        pass
    return systems


def time_call(fn, args, number: int) -> float:
    start = time.perf_counter()
    for _ in range(number):
        fn(*args)
    return (time.perf_counter() - start) / number


def run(quick: bool) -> list[tuple]:
    rows = []
    for name, size in W.CASES:
        args = W.make_args(name, size)
        f = getattr(W, name)
        hand = getattr(W, name + "_hand")
        systems = {"forward": f, "hand-written": hand, "s2s.grad": s2s.grad(f)}
        systems.update(optional_systems(name))
        expected = hand(*args)
        for sys_name, fn in systems.items():
            if sys_name == "forward":
                continue
            np.testing.assert_allclose(np.asarray(fn(*args)), expected, rtol=1e-8, atol=1e-10)
        # calibrate so each timing takes ~20 ms
        number = max(1, int(0.02 / max(time_call(hand, args, 3), 1e-7)))
        repeats = 5 if quick else 15
        samples = {k: [] for k in systems}
        for _ in range(repeats):
            for k, fn in systems.items():
                samples[k].append(time_call(fn, args, number))
        med = {k: statistics.median(v) for k, v in samples.items()}
        base = med["hand-written"]
        rows.append((name, size, {k: (v, v / base) for k, v in med.items()}))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rows = run(args.quick)
    systems = list(rows[0][2])
    print(f"{'workload':<22}{'size':>8}  " + "".join(f"{s:>16}" for s in systems))
    for name, size, res in rows:
        cells = "".join(f"{res[s][0]*1e6:>9.1f}us {res[s][1]:>4.2f}x" if s in res else " " * 16
                        for s in systems)
        print(f"{name:<22}{size:>8}  {cells}")
    print("\n(time per gradient call, and ratio to the hand-written NumPy gradient)")


if __name__ == "__main__":
    main()
