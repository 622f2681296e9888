"""Benchmark: s2s gradients against a hand-written NumPy gradient, autograd and JAX.

    python tools/bench.py               # all workloads, small and large sizes
    python tools/bench.py --quick       # fewer repeats
    python tools/bench.py --markdown    # the tables of docs/performance.md

Every system's gradient is checked against the hand-written one before it is timed.
Times are medians over interleaved repeats (each repeat times every system once, in
turn, so drift in machine load hits all of them alike).  BLAS is pinned to one thread.
Ratios are to the hand-written NumPy gradient: 1.00 means as fast as a careful person.

Systems: ``s2s.grad`` is what a user gets (from the second call with a signature on,
the code specialized to it, see s2s/optimize/specialize.py); ``s2s.grad (as emitted)`` is the
generic emitted code (``g.specialize = False``); ``s2s.jit(grad, jax)`` runs the same
emitted code under jax.jit.  Also reported: emitted gradient length against the
hand-written one, and transform latency (cold and from the cache).
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import os
import statistics
import sys
import tempfile
import time

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]  # this tree's s2s, not an installed one

import bench_workloads as W  # noqa: E402

import s2s  # noqa: E402

S2S = "s2s.grad"
GENERIC = "s2s.grad (as emitted)"


def optional_systems(fn_name: str) -> dict:
    systems = {}
    try:
        import autograd

        fn = W.twin(__import__("autograd.numpy").numpy)[fn_name]
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
        systems["jax.jit(grad)"] = lambda *a: jax.block_until_ready(jitted(*a))
        s2s_jitted = s2s.jit(s2s.grad(getattr(W, fn_name)), backend="jax")
        systems["s2s.jit(grad, jax)"] = lambda *a: jax.block_until_ready(s2s_jitted(*a))
    except ImportError:
        pass
    return systems


def leaves(tree):
    if isinstance(tree, dict):
        return [tree[k] for k in sorted(tree)]
    return [tree]


def time_call(fn, args, number: int) -> float:
    start = time.perf_counter()
    for _ in range(number):
        fn(*args)
    return (time.perf_counter() - start) / number


def run(quick: bool) -> tuple[list[tuple], dict]:
    rows = []
    failed: dict[str, str] = {}
    for name, size in W.CASES:
        args = W.make_args(name, size)
        f = getattr(W, name)
        hand = getattr(W, name + "_hand")
        generic = s2s.grad(f)
        generic.specialize = False
        systems = {"forward": f, "hand-written": hand, S2S: s2s.grad(f), GENERIC: generic}
        systems.update(optional_systems(name))
        expected = leaves(hand(*args))
        for sys_name, fn in list(systems.items()):
            if sys_name == "forward":
                continue
            try:
                for _ in range(3):  # s2s specializes at the second call
                    got = leaves(fn(*args))
                for g, e in zip(got, expected):
                    np.testing.assert_allclose(np.asarray(g), e, rtol=1e-8, atol=1e-10)
            except Exception as exc:  # a system that fails is reported, not timed
                failed[f"{sys_name} on {name}"] = f"{type(exc).__name__}: {exc}"[:200]
                del systems[sys_name]
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
        SPREAD[(name, size)] = spread(samples.get(S2S), samples["hand-written"])
    return rows, failed


# (workload, size) -> the least and greatest s2s.grad / hand-written ratio of one repeat
SPREAD: dict[tuple, tuple[float, float]] = {}


def spread(mine: list[float] | None, hand: list[float]) -> tuple[float, float]:
    """The range of the per-repeat ratios (each repeat timed both, one after the
    other): how far one run's ratio may stray from the median."""
    if not mine:
        return (float("nan"), float("nan"))
    ratios = [a / b for a, b in zip(mine, hand)]
    return (min(ratios), max(ratios))


def code_lines(text: str) -> int:
    """Lines of a function's body, without comments, blank lines and the def line."""
    body = [ln for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    body = [ln for ln in body if not ln.startswith(("import ", "from "))]
    return len([ln for ln in body if not ln.startswith("def ")])


def lengths() -> list[tuple]:
    out = []
    for name in dict.fromkeys(n for n, _ in W.CASES):
        args = W.make_args(name, next(s for n, s in W.CASES if n == name))
        g = s2s.grad(getattr(W, name))
        g(*args)
        g(*args)
        hand = code_lines(inspect.getsource(getattr(W, name + "_hand")))
        emitted = code_lines(g.source)
        spec = code_lines(g.specialized_source) if g.specialized_source else None
        out.append((name, hand, emitted, spec))
    return out


TEN_LINES = '''
import numpy as np


def f(w, x, y):
    h = np.tanh(x @ w)
    z = h * {k}.0 + np.sin(h)
    a = np.exp(-z)
    b = a / (1 + a)
    c = np.log(b + 1.0)
    d = c * y
    e = np.sum(d ** 2)
    return e + np.mean(h)
'''


def latency() -> dict:
    """Cold transform (a function never seen, in a fresh module) and a repeated
    transform of the same function (served from the caches)."""
    args = (np.full((4, 3), 0.1), np.ones((5, 4)), np.ones((5, 3)))
    tmp = tempfile.mkdtemp()
    cold = []
    fn = None
    for i in range(12):
        path = os.path.join(tmp, f"ten_{i}.py")
        with open(path, "w") as fh:
            fh.write(TEN_LINES.replace("{k}", str(i + 2)))
        spec = importlib.util.spec_from_file_location(f"ten_{i}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        fn = module.f
        start = time.perf_counter()
        s2s.grad(fn)(*args)  # parse, normalize, emit, format, compile, first call
        cold.append(time.perf_counter() - start)
    kinds = (s2s.api.transformed.LEAF,) * 3
    blocks = []  # (the least of five blocks: on a shared machine one long block
    for _ in range(5):  # reads whatever else ran meanwhile)
        start = time.perf_counter()
        for _ in range(400):
            s2s.grad(fn)._generate(kinds, (0,), False)
        blocks.append((time.perf_counter() - start) / 400)
    cached = min(blocks)
    return {"cold_ms": statistics.median(cold[2:]) * 1e3, "cached_ms": cached * 1e3}


def summary(rows: list[tuple]) -> dict:
    ratios = [res[S2S][1] for _, _, res in rows if S2S in res]
    small = {}
    for name, size, res in rows:
        if size == min(s for n, s in W.CASES if n == name) and "autograd" in res:
            small[name] = res["autograd"][0] / res[S2S][0]
    worst = max(((res[S2S][1], f"{name} {size}") for name, size, res in rows))
    return {"median": statistics.median(ratios), "worst": worst, "vs_autograd_small": small}


def print_text(rows, failed, lens, lat, summ) -> None:
    systems = list(dict.fromkeys(k for _, _, res in rows for k in res))
    width = max(len(s) for s in systems) + 2
    print(f"{'workload':<14}{'size':>9}  " + "".join(f"{s:>{width}}" for s in systems))
    for name, size, res in rows:
        cells = "".join(
            f"{res[s][0]*1e6:>{width - 7}.1f}us {res[s][1]:>4.2f}x"[-width:].rjust(width)
            if s in res else " " * width for s in systems)
        print(f"{name:<14}{size:>9}  {cells}")
    print("\n(time per gradient call, and ratio to the hand-written NumPy gradient)")
    print(f"\ns2s.grad / hand-written: median {summ['median']:.2f}, worst {summ['worst'][0]:.2f}"
          f" ({summ['worst'][1]})")
    print("small sizes, autograd time / s2s.grad time: " + ", ".join(
        f"{k} {v:.1f}x" for k, v in summ["vs_autograd_small"].items()))
    print("\nlines (body, no comments): workload, hand-written, emitted, specialized")
    for name, hand, emitted, spec in lens:
        print(f"  {name:<14}{hand:>4}{emitted:>5} ({emitted / hand:.2f}x)"
              + (f"{spec:>5} ({spec / hand:.2f}x)" if spec else "    -"))
    print(f"\ntransform latency: cold {lat['cold_ms']:.1f} ms (10-line function), "
          f"repeated {lat['cached_ms']:.4f} ms")
    for k, v in failed.items():
        print(f"FAILED {k}: {v}")


def print_markdown(rows, failed, lens, lat, summ) -> None:
    systems = list(dict.fromkeys(k for _, _, res in rows for k in res))
    print("| workload | size | " + " | ".join(systems) + " |")
    print("|---|---:|" + "---:|" * len(systems))
    for name, size, res in rows:
        cells = [f"{res[s][0]*1e6:.1f} µs ({res[s][1]:.2f}×)" if s in res else "fails"
                 for s in systems]
        print(f"| {name} | {size} | " + " | ".join(cells) + " |")
    print(f"\ns2s.grad / hand-written: median **{summ['median']:.2f}**, worst "
          f"**{summ['worst'][0]:.2f}** ({summ['worst'][1]}).  Small sizes, autograd time / "
          "s2s.grad time: " + ", ".join(f"{k} {v:.1f}×"
                                         for k, v in summ["vs_autograd_small"].items()) + ".")
    print("\n| workload | hand-written lines | emitted | specialized |")
    print("|---|---:|---:|---:|")
    for name, hand, emitted, spec in lens:
        print(f"| {name} | {hand} | {emitted} ({emitted / hand:.2f}×) | "
              + (f"{spec} ({spec / hand:.2f}×)" if spec else "not specialized") + " |")
    print(f"\nTransform latency: cold **{lat['cold_ms']:.1f} ms** for a 10-line function "
          f"(parse, normalize, emit, black, compile, first call); repeated transform of the "
          f"same function **{lat['cached_ms'] * 1e3:.1f} µs**.")
    for k, v in failed.items():
        print(f"\n- fails: {k}: {v}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--ablate", action="store_true",
                        help="only: each specialization pass switched off in turn "
                             "(S2S_PASSES_OFF; tools/bench_ablate.py)")
    args = parser.parse_args()
    if args.ablate:  # (tools/bench_ablate.py: the wide benchmark's workloads too)
        import bench_ablate

        rows, wrong = bench_ablate.ablate(args.quick, which="bench")
        print(bench_ablate.table(rows, args.markdown))
        for w in wrong:
            print(f"VALUES DIFFER: {w}")
        return
    rows, failed = run(args.quick)
    lens = lengths()
    lat = latency()
    summ = summary(rows)
    (print_markdown if args.markdown else print_text)(rows, failed, lens, lat, summ)


if __name__ == "__main__":
    main()
