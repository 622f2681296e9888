"""Benchmark: s2s's emitted gradients compiled by XLA against JAX's own.

    python tools/bench_jit.py            # all workloads of tools/bench_workloads.py
    python tools/bench_jit.py --quick    # fewer repeats

For each workload it times

* steady state: ``s2s.jit(s2s.grad(f), backend="jax")`` against
  ``jax.jit(jax.grad(f))`` on the same source (``f`` with ``np`` bound to jax.numpy
  for JAX), each call waited on (``block_until_ready``), medians over interleaved
  repeats;
* first call: a fresh function object each time (so no cache of either system
  helps), from nothing to the first result: s2s transforms (parse, normalise, emit)
  then JAX traces and XLA compiles; JAX traces and compiles.

Every result is checked against the hand-written gradient before it is timed.  Not a
test: numbers for the closing note of issue 7.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_workloads as W  # noqa: E402

try:
    import jax
except ImportError:  # pragma: no cover
    sys.exit("bench_jit needs JAX: pip install s2s[jax]")

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

import s2s  # noqa: E402


def ready(fn):
    def call(*args):
        return jax.block_until_ready(fn(*args))
    return call


def fresh_s2s(name: str):
    return s2s.jit(s2s.grad(W.twin(np)[name]), backend="jax")


def fresh_jax(name: str):
    return jax.jit(jax.grad(W.twin(jnp)[name]))


def first_call(make, name: str, args: tuple) -> float:
    start = time.perf_counter()
    jax.block_until_ready(make(name)(*args))
    return time.perf_counter() - start


def time_call(fn, args: tuple, number: int) -> float:
    start = time.perf_counter()
    for _ in range(number):
        fn(*args)
    return (time.perf_counter() - start) / number


def run(quick: bool) -> list[tuple]:
    rows = []
    for name, size in W.CASES:
        args = W.make_args(name, size)
        expected = getattr(W, name + "_hand")(*args)
        systems = {"s2s.jit(grad)": ready(fresh_s2s(name)),
                   "jax.jit(grad)": ready(fresh_jax(name))}
        for fn in systems.values():
            jax.tree_util.tree_map(  # (mlp2's gradient is a dict)
                lambda g, e: np.testing.assert_allclose(np.asarray(g), e, rtol=1e-8,
                                                        atol=1e-10), fn(*args), expected)
        number = max(1, int(0.02 / max(time_call(systems["jax.jit(grad)"], args, 5), 1e-7)))
        repeats = 7 if quick else 25
        samples: dict[str, list[float]] = {k: [] for k in systems}
        for _ in range(repeats):
            for k, fn in systems.items():
                samples[k].append(time_call(fn, args, number))
        steady = {k: statistics.median(v) for k, v in samples.items()}
        firsts: dict[str, list[float]] = {"s2s.jit(grad)": [], "jax.jit(grad)": []}
        for _ in range(2 if quick else 3):
            firsts["s2s.jit(grad)"].append(first_call(fresh_s2s, name, args))
            firsts["jax.jit(grad)"].append(first_call(fresh_jax, name, args))
        first = {k: statistics.median(v) for k, v in firsts.items()}
        rows.append((name, size, steady, first))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    options = parser.parse_args()
    print(f"jax {jax.__version__} on {jax.devices()[0].platform}; float64")
    rows = run(options.quick)
    print(f"{'workload':<14}{'size':>9}  {'s2s steady':>12}{'jax steady':>12}{'ratio':>7}"
          f"  {'s2s first':>11}{'jax first':>11}")
    for name, size, steady, first in rows:
        s, j = steady["s2s.jit(grad)"], steady["jax.jit(grad)"]
        print(f"{name:<14}{size:>9}  {s * 1e6:>10.1f}us{j * 1e6:>10.1f}us{s / j:>7.3f}"
              f"  {first['s2s.jit(grad)'] * 1e3:>9.1f}ms"
              f"{first['jax.jit(grad)'] * 1e3:>9.1f}ms")
    print("\nsteady: time per gradient call (median); ratio s2s/jax; "
          "first: transform + trace + compile + first run")


if __name__ == "__main__":
    main()
