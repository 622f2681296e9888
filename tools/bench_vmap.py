"""Benchmark: per-example gradients, ``s2s.vmap(s2s.grad(f))``, against the
hand-vectorised per-example gradient formula, a Python loop of ``s2s.grad``, and JAX.

    python tools/bench_vmap.py [--batch 256] [--repeats 30]

Workloads: the squared error of a linear model, and a 2-layer tanh MLP.  Every result is
checked against the hand formula before it is timed; medians of interleaved repeats;
BLAS pinned to one thread.  Ratios are to the hand formula.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

import numpy as np  # noqa: E402

import s2s  # noqa: E402


def linreg(w, x, y):
    return (x @ w - y) ** 2


def linreg_hand(w, xs, ys):
    """d/dw (x.w - y)^2 = 2 (x.w - y) x, for every example at once."""
    return 2.0 * (xs @ w - ys)[:, None] * xs


def mlp(params, x, y):
    h = np.tanh(x @ params["w1"])
    out = h @ params["w2"]
    return np.sum((out - y) ** 2)


def mlp_hand(params, xs, ys):
    h = np.tanh(xs @ params["w1"])  # (B, H)
    out = h @ params["w2"]  # (B, O)
    d_out = 2.0 * (out - ys)  # (B, O)
    d_w2 = h[:, :, None] * d_out[:, None, :]  # (B, H, O)
    d_h = (d_out @ params["w2"].T) * (1 - h**2)  # (B, H)
    d_w1 = xs[:, :, None] * d_h[:, None, :]  # (B, D, H)
    return {"w1": d_w1, "w2": d_w2}


def leaves(t):
    if isinstance(t, dict):
        return [t[k] for k in sorted(t)]
    return [t]


def median_times(systems: dict, args: tuple, repeats: int) -> dict:
    times = {name: [] for name in systems}
    for _ in range(repeats):
        for name, fn in systems.items():
            start = time.perf_counter()
            fn(*args)
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=30)
    opts = parser.parse_args()
    r = np.random.default_rng(0)
    B = opts.batch
    cases = {
        "linreg": (linreg, linreg_hand,
                   (r.normal(size=16), r.normal(size=(B, 16)), r.normal(size=B))),
        "mlp": (mlp, mlp_hand,
                ({"w1": r.normal(size=(16, 32)), "w2": r.normal(size=(32, 4))},
                 r.normal(size=(B, 16)), r.normal(size=(B, 4)))),
    }
    try:
        import jax

        jax.config.update("jax_enable_x64", True)
        jax.config.update("jax_platforms", "cpu")
        import jax.numpy as jnp
    except ImportError:
        jax = None
    print(f"per-example gradients, batch {B}, median of {opts.repeats}; ratio to hand")
    for name, (f, hand, args) in cases.items():
        per_example = s2s.vmap(s2s.grad(f), in_axes=(None, 0, 0))
        g = s2s.grad(f)

        def loop(w, xs, ys):
            return [g(w, x, y) for x, y in zip(xs, ys)]

        systems = {"hand": hand, "s2s.vmap(grad)": per_example, "loop of s2s.grad": loop}
        if jax is not None:
            src = {"linreg": lambda w, x, y: (x @ w - y) ** 2,
                   "mlp": lambda p, x, y: jnp.sum((jnp.tanh(x @ p["w1"]) @ p["w2"] - y) ** 2)}
            jv = jax.jit(jax.vmap(jax.grad(src[name]), in_axes=(None, 0, 0)))
            systems["jax.jit(vmap(grad))"] = lambda *a: jax.block_until_ready(jv(*a))
        expected = hand(*args)
        got = per_example(*args)
        for a, b in zip(leaves(got), leaves(expected)):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
        times = median_times(systems, args, opts.repeats)
        base = times["hand"]
        for sys_name, t in times.items():
            print(f"  {name:7s} {sys_name:22s} {t * 1e6:10.1f} us   {t / base:7.2f}x")


if __name__ == "__main__":
    main()
