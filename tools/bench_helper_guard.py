"""What guarding a user's helper function costs a JAX-backend jit (issue 27): a loss
that calls a module-level ``def logistic`` (whose rebinding the jit must see, so its
identity is guarded: api/jit_jax_free.py; its call ``jit_calls.guarded_call``,
and "free": the same jit made to call the free path's way, ``jit_calls.free_call``,
as it did before guarded_call) against the same loss written inline, each
``s2s.jit(s2s.grad(loss), backend="jax")``, and ``jax.jit(jax.grad(loss))`` of the
inline loss, in ONE interleaved run (tools/call_timing.rounds: the systems in turn,
one later each round).  Printed per system: median, quartiles and least of the
rounds (µs per call), the path the jit's call took, and ``system - jax.jit`` round
by round.  Every gradient is checked against ``jax.grad`` first.

    PYTHONPATH=<tree> python tools/bench_helper_guard.py [--repeat 31] [--number 300] [--cpu]
"""

from __future__ import annotations

import argparse
import os
import sys

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

import numpy as np  # noqa: E402

import s2s  # noqa: E402
from s2s.api import jit_calls  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from call_timing import paired, rounds, summary  # noqa: E402


def logistic(z):
    return np.log1p(np.exp(-z))


def loss_helper(w, x, y):
    return np.mean(logistic(y * (x @ w)))


def loss_inline(w, x, y):
    return np.mean(np.log1p(np.exp(-(y * (x @ w)))))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=31)
    ap.add_argument("--number", type=int, default=300)
    ap.add_argument("--cpu", action="store_true")
    opts = ap.parse_args()
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(0)
    args = (rng.normal(size=8), rng.normal(size=(64, 8)), rng.choice([-1.0, 1.0], 64))
    systems = {
        "jax.jit(jax.grad)": jax.jit(jax.grad(
            lambda w, x, y: jnp.mean(jnp.log1p(jnp.exp(-(y * (x @ w))))))),
        "s2s inline": s2s.jit(s2s.grad(loss_inline), backend="jax"),
        "s2s helper": s2s.jit(s2s.grad(loss_helper), backend="jax"),
        "s2s helper, free": s2s.jit(s2s.grad(loss_helper), backend="jax"),
    }
    systems["s2s helper, free"](*args)  # (the free path's frame, as merge18 called a
    free = systems["s2s helper, free"]  # jit whose helper is guarded: the before)
    jit_calls.own_call(free, jit_calls.free_call(free))
    want = np.asarray(systems["jax.jit(jax.grad)"](*args))
    for name, fn in systems.items():
        for _ in range(5):
            got = np.asarray(fn(*args))
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14, err_msg=name)
    out = rounds(systems, args, opts.number, opts.repeat, opts.cpu)
    base = out["jax.jit(jax.grad)"]
    print(f"µs per call ({'CPU' if opts.cpu else 'wall'}), {opts.repeat} rounds of "
          f"{opts.number}; load {os.getloadavg()[0]:.1f}")
    for name, samples in out.items():
        s = summary(samples)
        path = getattr(getattr(systems[name], "_call", None), "__name__", "")
        line = (f"{name:20s} median {s['median']:7.2f}  q1 {s['q1']:7.2f}  q3 {s['q3']:7.2f}"
                f"  min {s['min']:7.2f}  {path}")
        if samples is not base:
            d = paired(base, samples)
            line += f"  | - jax.jit: median {d['median']:+6.2f} (q1 {d['q1']:+.2f}, q3 {d['q3']:+.2f})"
        print(line)


if __name__ == "__main__":
    main()
