"""What keeping a dict's key order costs a call of ``s2s.jit(..., backend="jax")``
(s2s/backends/jax_order.py): per call, ``jax.jit`` of JAX's gradient of the same source,
the s2s jit as it is (a call of arrays and numbers: one Python frame that checks the
arguments' types before JAX's dispatch; a call holding a dict: its dicts passed as
order-keeping nodes and the results' dicts rebuilt), and the same jit's JAX function
called bare (``Jitted._counted``: the frame-free path s2s took before, which walked a
dict in sorted key order).  Interleaved rounds (tools/call_timing.py), every result
checked against JAX's first.

    PYTHONPATH=<tree> python tools/bench_jit_dicts.py [--repeat 25] [--number 2000] [--cpu]
"""

from __future__ import annotations

import argparse
import os
import sys
import types

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import s2s  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from call_timing import loss, paired, rounds, summary, wave  # noqa: E402

jax.config.update("jax_enable_x64", True)


def mlp(params, x):
    h = np.tanh(x @ params["w"] + params["b"])
    return np.mean(h**2)


def _twin(f):
    return types.FunctionType(f.__code__, {**f.__globals__, "np": jnp}, f.__name__)


def cases():
    rng = np.random.default_rng(0)
    params = {"w": rng.normal(size=(3, 4)), "b": rng.normal(size=4)}
    return {
        "wave (plain function, 3-vector)": (wave, False, (rng.normal(size=3),)),
        "grad loss (two arrays)": (loss, True, (rng.normal(size=3), rng.normal(size=(5, 3)))),
        "grad mlp (dict params)": (mlp, True, (params, rng.normal(size=(5, 3)))),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=25)
    ap.add_argument("--number", type=int, default=2000)
    ap.add_argument("--cpu", action="store_true")
    opts = ap.parse_args()
    for name, (f, grad, args) in cases().items():
        ours = s2s.jit(s2s.grad(f) if grad else f, backend="jax")
        theirs = jax.jit(jax.grad(_twin(f)) if grad else _twin(f))
        want = jax.tree_util.tree_leaves(theirs(*args))
        got = ours(*args)
        for g, w in zip(jax.tree_util.tree_leaves(got), want):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-12)
        bare = ours._counted
        bare(*args)
        systems = {"jax.jit": theirs, "s2s.jit": ours, "bare (before)": bare}
        times = rounds(systems, args, opts.number, opts.repeat, opts.cpu)
        print(f"{name}: µs per call ({'CPU' if opts.cpu else 'wall'}, {opts.repeat} rounds "
              f"of {opts.number})")
        for k, v in times.items():
            s = summary(v)
            print(f"  {k:14} median {s['median']:6.2f}  q1 {s['q1']:6.2f}  q3 {s['q3']:6.2f}"
                  f"  min {s['min']:6.2f}")
        d = paired(times["bare (before)"], times["s2s.jit"])
        print(f"  s2s.jit - bare: median {d['median']:+.2f} µs (q1 {d['q1']:+.2f}, "
              f"q3 {d['q3']:+.2f})")


if __name__ == "__main__":
    main()
