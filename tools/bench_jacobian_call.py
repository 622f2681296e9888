"""The steady-state call of ``jacrev``/``jacfwd``/``hessian`` of a small function
(a 4-vector in): each call made the ``.source`` text of the code it ran (the forward
listing's parse and symbol table), some 60% of a ``jacrev`` call; the text is now made
when ``.source`` is read.  Prints the median, quartiles and least of ``--repeat``
rounds of ``--number`` calls, per transform, in microseconds per call.

    PYTHONPATH=<tree> python tools/bench_jacobian_call.py [--repeat 21] [--number 200]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"
os.environ.setdefault("S2S_SPECIALIZE", "sync")

import numpy as np  # noqa: E402

import s2s  # noqa: E402


def jacobian_small(x):
    return np.tanh(x) * np.sum(x**2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument("--number", type=int, default=200)
    opts = parser.parse_args()
    x = np.linspace(0.1, 1.0, 4)
    made = {"jacrev": s2s.jacrev(jacobian_small), "jacfwd": s2s.jacfwd(jacobian_small),
            "hessian": s2s.hessian(jacobian_small)}
    times: dict[str, list[float]] = {name: [] for name in made}
    for t in made.values():
        for _ in range(5):  # (the second call specializes; then steady state)
            t(x)
    for _ in range(opts.repeat):
        for name, t in made.items():  # (interleaved: one round's load on all)
            start = time.perf_counter()
            for _ in range(opts.number):
                t(x)
            times[name].append((time.perf_counter() - start) / opts.number * 1e6)
    print(f"s2s from {os.path.dirname(os.path.dirname(s2s.__file__))}")
    for name, ts in times.items():
        q = statistics.quantiles(ts, n=4)
        print(f"{name:8s} median {statistics.median(ts):8.1f} us  quartiles "
              f"{q[0]:.1f}-{q[2]:.1f}  least {min(ts):.1f}")


if __name__ == "__main__":
    main()
