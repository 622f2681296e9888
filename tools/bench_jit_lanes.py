"""``s2s.jit(..., backend="jax")`` against ``jax.jit`` where the jit's code calls a
user's helper function (guarded by identity at every call: api/jit_jax_free.py), on
each path a call can take (api/jit_calls.py): ``bare`` (``jit(grad(loss))``),
``static`` (a static argument), ``dict`` (a parameter dict: the keyed path), ``vmap``
(``jit(vmap(grad(loss)))``: per-example gradients) and ``vmap_dict`` (both), in
float64 and float32, in ONE interleaved run.

Per cell four systems: ``jax.jit`` of the same source on ``jax.numpy`` (the helper
on it too), ``inline`` (s2s, the helper's body written into the loss: no free name),
``helper`` (s2s, the helper called: the guarded lane of the cell's path,
``jit_calls.guarded_call``) and ``free`` (the same jit made to call the free path's
way, ``jit_calls.free_call``: what a keyed or vmapped jit with a helper did before its
guarded lanes).  Every system's result is checked against ``jax.grad`` first.  Each
round times ``--number`` calls of every system in turn, the order rotated by one each
round; printed per system: the median per-call time and the median and quartiles of
the per-round ratio to ``jax.jit`` (the same round's load on both sides of a ratio).

    PYTHONPATH=<tree> python tools/bench_jit_lanes.py [--rounds 41] [--number 100]
        [--thread | --cpu] [--only bare,dict] [--dtypes f64,f32]

``--thread``: the calling thread's CPU time, JAX computing on that thread
(``jax_cpu_enable_async_dispatch`` off; the measure another process's load disturbs
least); ``--cpu``: the process's; else the wall clock, every call waited on.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import types

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"
os.environ["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE)]  # this tree's s2s, not an installed one

import numpy as np  # noqa: E402

import s2s  # noqa: E402
from s2s.api import jit_calls  # noqa: E402


def logistic(z):
    return np.log1p(np.exp(-z))


def loss_helper(w, x, y):
    return np.mean(logistic(y * (x @ w)))


def loss_inline(w, x, y):
    return np.mean(np.log1p(np.exp(-(y * (x @ w)))))


def static_helper(w, x, y, scale):
    return scale * np.mean(logistic(y * (x @ w)))


def static_inline(w, x, y, scale):
    return scale * np.mean(np.log1p(np.exp(-(y * (x @ w)))))


def dict_helper(p, x, y):
    return np.mean(logistic(y * (x @ p["w"] + p["b"])))


def dict_inline(p, x, y):
    return np.mean(np.log1p(np.exp(-(y * (x @ p["w"] + p["b"])))))


KINDS = ("bare", "static", "dict", "vmap", "vmap_dict")
FUNCTIONS = {"bare": (loss_inline, loss_helper), "static": (static_inline, static_helper),
             "dict": (dict_inline, dict_helper), "vmap": (loss_inline, loss_helper),
             "vmap_dict": (dict_inline, dict_helper)}


def _arguments(kind: str, dtype: type) -> tuple:
    rng = np.random.default_rng(0)
    w = rng.normal(size=8).astype(dtype)
    x = rng.normal(size=(64, 8)).astype(dtype)
    y = rng.choice([-1.0, 1.0], 64).astype(dtype)
    if kind == "static":
        return (w, x, y, 2.0)
    if kind.endswith("dict"):
        return ({"w": w, "b": np.asarray(0.25, dtype)}, x, y)
    return (w, x, y)


def _twin(fn, jnp):
    """``fn``'s code on jax.numpy, its helper too."""
    names = dict(fn.__globals__, np=jnp)
    names["logistic"] = types.FunctionType(logistic.__code__, names, "logistic")
    return types.FunctionType(fn.__code__, names, fn.__name__)


def systems_for(kind: str, only: tuple = ("inline", "helper", "free")) -> dict:
    """``jax.jit`` and the s2s systems ``only`` of one kind of cell."""
    import jax
    import jax.numpy as jnp

    inline, helper = FUNCTIONS[kind]
    statics = dict(static_argnums=3) if kind == "static" else {}

    def ours(fn):
        g = s2s.grad(fn)
        if kind.startswith("vmap"):
            return s2s.jit(s2s.vmap(g, in_axes=(None, 0, 0)), backend="jax")
        return s2s.jit(g, backend="jax", **statics)

    theirs = jax.grad(_twin(inline, jnp))
    if kind.startswith("vmap"):
        theirs = jax.vmap(theirs, in_axes=(None, 0, 0))
    made = {"inline": lambda: ours(inline), "helper": lambda: ours(helper),
            "free": lambda: ours(helper)}
    return {"jax.jit": jax.jit(theirs, **statics), **{k: made[k]() for k in only}}


def _check(systems: dict, args: tuple, dtype: type) -> None:
    import jax

    tol = dict(rtol=1e-10, atol=1e-12) if dtype == np.float64 else dict(rtol=1e-4, atol=1e-5)
    want = jax.tree_util.tree_leaves(systems["jax.jit"](*args))
    for name, fn in systems.items():
        for _ in range(3):
            got = jax.tree_util.tree_leaves(fn(*args))
        for a, b in zip(got, want, strict=True):
            assert np.asarray(a).dtype == np.asarray(b).dtype == dtype, name
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), **tol, err_msg=name)


def pair(kind: str, dtype: type, system: str = "helper") -> tuple:
    """``(args, jax.jit's function, s2s's)`` of one cell, checked (for
    tools/bench_jit_instructions.py's ``lanes:KIND[:f32][:inline|:free]`` cells)."""
    args, systems = _arguments(kind, dtype), systems_for(kind, (system,))
    _check(systems, args, dtype)
    if system == "free":
        jit_calls.own_call(systems["free"], jit_calls.free_call(systems["free"]))
        _check(systems, args, dtype)
    return args, systems["jax.jit"], systems[system]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=41)
    ap.add_argument("--number", type=int, default=100)
    ap.add_argument("--only", default=",".join(KINDS))
    ap.add_argument("--dtypes", default="f64,f32")
    ap.add_argument("--cpu", action="store_true")
    ap.add_argument("--thread", action="store_true")
    opts = ap.parse_args()
    import jax

    jax.config.update("jax_enable_x64", True)
    if opts.thread:
        jax.config.update("jax_cpu_enable_async_dispatch", False)
    clock = (time.thread_time if opts.thread else time.process_time if opts.cpu
             else time.perf_counter)
    block = jax.block_until_ready
    print(f"load average {os.getloadavg()[0]:.2f} at the start; "
          f"{'thread CPU' if opts.thread else 'CPU' if opts.cpu else 'wall'} time, "
          f"{opts.rounds} rounds of {opts.number} calls")
    cells = []
    for kind in opts.only.split(","):
        for d in opts.dtypes.split(","):
            dtype = {"f64": np.float64, "f32": np.float32}[d]
            args, systems = _arguments(kind, dtype), systems_for(kind)
            _check(systems, args, dtype)
            free = systems["free"]
            jit_calls.own_call(free, jit_calls.free_call(free))  # (the before)
            _check(systems, args, dtype)
            cells.append((f"{kind}:{d}", args, systems))
    times = {(c, s): [] for c, _, systems in cells for s in systems}
    for r in range(opts.rounds):
        for cell, args, systems in cells:
            names = list(systems)
            for j in range(len(names)):
                name = names[(r + j) % len(names)]
                fn = systems[name]
                t0 = clock()
                for _ in range(opts.number):
                    out = fn(*args)
                block(out)
                times[cell, name].append((clock() - t0) / opts.number * 1e6)
    print(f"{'cell':14s} {'system':8s} {'µs':>7s} {'/ jax.jit':>9s} quartiles   path")
    worst = []
    for cell, _, systems in cells:
        base = times[cell, "jax.jit"]
        for name, fn in systems.items():
            t = times[cell, name]
            line = f"{cell:14s} {name:8s} {statistics.median(t):7.2f}"
            if name != "jax.jit":
                ratios = sorted(s / b for s, b in zip(t, base))
                q = len(ratios) // 4
                med = statistics.median(ratios)
                line += f" {med:9.3f} {ratios[q]:.3f}-{ratios[-q - 1]:.3f}"
                if name in ("inline", "helper"):
                    worst.append((med, f"{cell} {name}"))
            path = getattr(getattr(fn, "_call", None), "__name__", "")
            print(f"{line:52s} {path}")
    worst.sort()
    print(f"inline and helper cells: median of the medians "
          f"{worst[len(worst) // 2][0]:.3f}, worst {worst[-1][0]:.3f} ({worst[-1][1]})")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
