"""A wider benchmark: twelve workloads in formulations the optimizer was not tuned for.

    python tools/bench_wide.py            # interleaved repeats, a text table
    python tools/bench_wide.py --quick    # fewer repeats
    python tools/bench_wide.py --markdown # the table of docs/performance.md

Each workload (tools/bench_wide_workloads.py) has a gradient written by hand; every
system's gradient is checked against it before anything is timed. Times are medians
over interleaved repeats (each repeat times every system once, in turn, the order
reversed every other repeat). JAX runs each computation on the calling thread before
the call returns (``jax_cpu_enable_async_dispatch`` off, :func:`sync_jax`), as NumPy
does: dispatched asynchronously, a call returns before its computation has run, which
then runs into the time of the system timed next. BLAS is pinned to one thread. Ratios are to the hand-written gradient.

Systems: ``s2s`` is what a user gets (from the second call on, the code specialized to
the signature); ``s2s (as emitted)`` the generic code; ``s2s.jit`` is
``s2s.jit(..., backend="numpy")`` of the same transform; autograd where installed;
``jax`` and ``jax.jit`` (float64); ``s2s.jit(jax)`` is ``s2s.jit(..., backend="jax")``
of the same transform (the column added after docs/performance.md's table was
measured). Kinds: ``grad`` of the first argument,
``vmap`` (per-example gradients, ``vmap(grad)`` with ``in_axes=(None, 0, 0)``), and
``hvp`` (a Hessian-vector product, ``jvp`` of ``grad``).
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

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]  # this tree's s2s, not an installed one

import bench_wide_workloads as W  # noqa: E402

import s2s  # noqa: E402

WORKLOADS = [("xent_onehot", "grad"), ("xent_int", "grad"), ("smoothed", "grad"),
             ("attention", "grad"), ("attention_masked", "grad"), ("layer_norm", "grad"),
             ("mixture", "grad"), ("gp_nll", "grad"), ("logistic", "vmap"),
             ("tanh_sq", "hvp"), ("mlp_dict", "grad"), ("lstm", "grad")]
SYSTEMS = ["hand", "s2s", "s2s (as emitted)", "s2s.jit", "autograd", "jax", "jax.jit",
           "s2s.jit(jax)"]


def s2s_transform(fn, kind, specialize=True):
    if kind == "grad":
        g = s2s.grad(fn)
    elif kind == "vmap":
        g = s2s.vmap(s2s.grad(fn), in_axes=(None, 0, 0))
    else:
        inner = s2s.grad(fn)
        inner.specialize = specialize

        def g(x, v):
            return s2s.jvp(inner, (x,), (v,))[1]

        def wait():  # (the jvp's own specializing, started by its second call)
            from s2s.api.pushforward import _jvp_transform

            _jvp_transform(inner, False).wait_specialized()
        g.wait_specialized = wait
        return g
    g.specialize = specialize
    return g


def systems_for(name, kind):
    fn = getattr(W, name)
    out = {"hand": getattr(W, name + "_hand"), "s2s": s2s_transform(fn, kind),
           "s2s (as emitted)": s2s_transform(fn, kind, specialize=False)}
    if kind != "hvp":
        out["s2s.jit"] = s2s.jit(s2s_transform(fn, kind), backend="numpy")
    try:
        import autograd

        f = W.twin(__import__("autograd.numpy").numpy)[name]
        if kind == "grad":
            out["autograd"] = autograd.grad(f)
        elif kind == "hvp":
            import autograd.numpy as anp

            out["autograd"] = autograd.grad(lambda x, v: anp.sum(autograd.grad(f)(x) * v))
    except ImportError:
        pass
    try:
        import jax

        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp

        f = W.twin(jnp)[name]
        if kind == "grad":
            j = jax.grad(f)
        elif kind == "vmap":
            j = jax.vmap(jax.grad(f), in_axes=(None, 0, 0))
        else:
            def j(x, v, f=f):
                return jax.jvp(jax.grad(f), (x,), (v,))[1]
        out["jax"] = j
        out["jax.jit"] = jax.jit(j)
        out["s2s.jit(jax)"] = s2s.jit(s2s_transform(fn, kind), backend="jax")
    except ImportError:
        pass
    return out


def leaves(tree):
    if isinstance(tree, dict):
        return [np.asarray(tree[k]) for k in sorted(tree)]
    return [np.asarray(tree)]


# JAX's systems: run synchronously (sync_jax), or else each call waited on
JAX_SYSTEMS = ("jax", "jax.jit", "s2s.jit(jax)")


def sync_jax() -> bool:
    """JAX's CPU client made to run a computation on the calling thread before the
    call returns, as NumPy does (``jax_cpu_enable_async_dispatch`` off), if its
    backend is not made yet; whether it runs so. Dispatched asynchronously, a call
    returns before its computation has run, which then runs into the time of the
    system timed next (the order of the systems decided the ratio of two of them by
    up to 2x, docs/performance.md); waiting on each result instead adds a wake-up of
    JAX's worker thread to both sides, tens of µs on a loaded machine."""
    try:
        import jax
        from jax._src import xla_bridge
    except ImportError:
        return True
    if not xla_bridge._backends:  # (read when the CPU client is made)
        jax.config.update("jax_cpu_enable_async_dispatch", False)
    return not jax.config.read("jax_cpu_enable_async_dispatch")


def time_call(fn, args, number, wait=None):
    t0 = time.perf_counter()
    if wait is None:
        for _ in range(number):
            fn(*args)
    else:
        for _ in range(number):
            wait(fn(*args))
    return (time.perf_counter() - t0) / number


def run(quick):
    rows, failed = [], []
    repeats = 5 if quick else 15
    synchronous = sync_jax()
    for name, kind in WORKLOADS:
        args = W.make_args(name)
        systems = systems_for(name, kind)
        want = leaves(systems["hand"](*args))
        for sname, fn in list(systems.items()):
            try:
                for _ in range(3):  # the second call specializes, the third runs it
                    got = leaves(fn(*args))
                wait = getattr(getattr(fn, "fun", fn), "wait_specialized", None)
                if wait:
                    wait()
                got = leaves(fn(*args))
                ok = all(np.allclose(a, b, rtol=1e-6, atol=1e-9) for a, b in zip(got, want))
            except Exception as exc:  # a system that fails is reported, not timed
                ok, got = False, repr(exc)[:80]
            if not ok:
                failed.append((name, sname, got if isinstance(got, str) else "differs"))
                del systems[sname]
        per = max(time_call(systems["hand"], args, 3), 1e-6)
        number = max(1, int((0.002 if quick else 0.005) / per))
        times = {s: [] for s in systems}
        wait = None if synchronous else _jax_wait()
        order = list(systems.items())
        for repeat in range(repeats):  # (the order reversed every other repeat)
            for sname, fn in order if repeat % 2 == 0 else order[::-1]:
                times[sname].append(time_call(
                    fn, args, number, wait if sname in JAX_SYSTEMS else None))
        rows.append((name, kind, {s: statistics.median(t) for s, t in times.items()}))
        SPREAD[name] = {s: (min(a / b for a, b in zip(t, times["hand"])),
                            max(a / b for a, b in zip(t, times["hand"])))
                        for s, t in times.items() if s in ("s2s", "s2s.jit(jax)")}
        if "jax.jit" in times and "s2s.jit(jax)" in times:
            JIT_RATIOS[name] = sorted(a / b for a, b in zip(times["s2s.jit(jax)"],
                                                            times["jax.jit"]))
    return rows, failed


def _jax_wait():
    import jax

    return jax.block_until_ready


# workload -> {system: the least and greatest per-repeat ratio to hand-written}
SPREAD: dict[str, dict[str, tuple[float, float]]] = {}
# workload -> the per-repeat ratios s2s.jit(jax) / jax.jit, sorted (the two are timed
# next to each other in every repeat)
JIT_RATIOS: dict[str, list[float]] = {}


def cell(t, hand):
    return "—" if t is None else f"{t * 1e6:.1f} µs ({t / hand:.2f}×)"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--only", default="", help="comma-separated workload names")
    opts = ap.parse_args()
    if opts.only:
        WORKLOADS[:] = [w for w in WORKLOADS if w[0] in opts.only.split(",")]
    rows, failed = run(opts.quick)
    if opts.markdown:
        print("| workload | kind | " + " | ".join(SYSTEMS) + " |")
        print("|---|---|" + "---:|" * len(SYSTEMS))
        for name, kind, t in rows:
            print(f"| {name} | {kind} | " + " | ".join(
                cell(t.get(s), t["hand"]) for s in SYSTEMS) + " |")
    else:
        for name, kind, t in rows:
            print(f"{name:18s} {kind:5s} " + "  ".join(
                f"{s}={cell(t.get(s), t['hand'])}" for s in SYSTEMS if s in t))
    ratios = [t["s2s"] / t["hand"] for _, _, t in rows if "s2s" in t]
    if ratios:
        print(f"\ns2s / hand-written: median {statistics.median(ratios):.2f}, "
              f"worst {max(ratios):.2f}")
    jits = [statistics.median(r) for r in JIT_RATIOS.values()]
    if jits:
        print(f"s2s.jit(backend='jax') / jax.jit (the median per-repeat ratio of each "
              f"cell): median {statistics.median(jits):.2f}, worst {max(jits):.2f}")
    for name, sname, why in failed:
        print(f"not timed: {name} {sname}: {why}")


if __name__ == "__main__":
    main()
