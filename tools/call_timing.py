"""The timing loop the per-call benchmarks share (``bench_overhead.py``,
``bench_small_calls.py``, ``bench_call_cost.py``): systems called in turn, round after
round, so that a change in the machine's load reaches each of them alike; and the tiny
functions they time, with their hand-written gradients.

``rounds`` gives every round's time per call of each system (µs), ``summary`` the
least, the median and the quartiles of those, and ``paired`` the differences of two
systems round by round (the same round's load on both sides of each difference)."""

from __future__ import annotations

import statistics
import time
from typing import Any, Callable

import numpy as np


def wave(x):
    return np.sum(np.sin(x) * x)


def wave_hand(x):
    return np.cos(x) * x + np.sin(x)


def loss(w, x):
    return np.sum((x @ w) ** 2)


def loss_hand(w, x):
    return 2 * x.T @ (x @ w)


def tanh_sq(x):
    return np.sum(np.tanh(x) ** 2)


def hvp_hand(x, v):
    t2 = np.tanh(x) ** 2
    return 2 * (1 - t2) * (1 - 3 * t2) * v


def _ns_per_call(fn: Callable, args: tuple, number: int) -> float:
    """µs per call of ``number`` calls, by ``time.perf_counter_ns`` (wall clock)."""
    t0 = time.perf_counter_ns()
    for _ in range(number):
        fn(*args)
    return (time.perf_counter_ns() - t0) / number / 1e3


def _cpu_per_call(fn: Callable, args: tuple, number: int) -> float:
    """µs of CPU time (``time.process_time_ns``: other processes' time not counted)."""
    t0 = time.process_time_ns()
    for _ in range(number):
        fn(*args)
    return (time.process_time_ns() - t0) / number / 1e3


def rounds(systems: dict[str, Callable], args: tuple, number: int = 1000,
           repeat: int = 25, cpu: bool = False) -> dict[str, list[float]]:
    """Each system's time per call (µs) in each of ``repeat`` rounds of ``number``
    calls; within a round the systems run in turn, starting one later each round."""
    per = _cpu_per_call if cpu else _ns_per_call
    names = list(systems)
    out: dict[str, list[float]] = {k: [] for k in names}
    for r in range(repeat):
        for j in range(len(names)):
            k = names[(r + j) % len(names)]
            out[k].append(per(systems[k], args, number))
    return out


def summary(samples: list[float]) -> dict[str, float]:
    """The least, the quartiles and the median of ``samples``."""
    q1, med, q3 = statistics.quantiles(samples, n=4) if len(samples) > 1 else samples * 3
    return {"min": min(samples), "q1": q1, "median": med, "q3": q3}


def paired(a: list[float], b: list[float]) -> dict[str, float]:
    """``summary`` of ``b - a`` round by round, and how many rounds ``b`` was the
    slower (``slower``, of ``n``)."""
    diffs = [y - x for x, y in zip(a, b)]
    return {**summary(diffs), "slower": sum(d > 0 for d in diffs), "n": len(diffs)}


def least(samples: dict[str, list[float]]) -> dict[str, float]:
    return {k: min(v) for k, v in samples.items()}


def check_all(systems: dict[str, Callable], args: tuple, want: Any, rtol: float = 1e-12,
              calls: int = 4) -> None:
    """Call every system ``calls`` times (the second call specializes), then check
    each one's result against ``want``."""
    for _ in range(calls):
        for fn in systems.values():
            fn(*args)
    for name, fn in systems.items():
        np.testing.assert_allclose(np.asarray(fn(*args)), want, rtol=rtol, err_msg=name)
