"""Two trees' specialized gradients of the wide benchmark's cells, timed in one process
against the hand-written gradient, in CPU time (``time.process_time``: on a shared,
overloaded machine wall-clock rounds swing by 2x and more; the time the process ran
does not count the time it waited).

    python tools/bench_ab.py /work/main /work/wt/mine                 # every grad cell
    python tools/bench_ab.py /work/main /work/wt/mine mlp_dict,lstm --rounds 60
    python tools/bench_ab.py /work/main /work/wt/mine --wrapped       # through grad()
    python tools/bench_ab.py /work/main /work/wt/mine tanh_sq          # the HVP cell

Each tree's specialized code (``g.specialized_source`` after three calls, with
``S2S_SPECIALIZE=sync``) is dumped by a subprocess running that tree; here both are
executed in the workloads' namespace and timed in turn with the hand-written gradient,
round after round.  Printed: the least time of each, and the median and quartiles of
the per-round ratios to hand-written.  ``--wrapped`` times each tree's ``s2s.grad``
object instead (its per-call wrapper included), a subprocess per tree, alternately.
Cells of tools/bench_variants.py (formulations written another way) are accepted too,
and ``tanh_sq``, the Hessian-vector product (``s2s.jvp`` of ``s2s.grad``): its
specialized forward-over-reverse code, ``[1]`` of its results, against the
hand-written HVP.  Each tree's code is also counted (array operations: calls,
operators, negations; a loop's body times its trips), which no load disturbs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

HERE = os.path.dirname(os.path.abspath(__file__))
CELLS = ["mlp_dict", "layer_norm", "attention", "xent_onehot", "xent_int", "lstm", "mixture"]

DUMP = r"""
import json, os, sys
os.environ["S2S_SPECIALIZE"] = "sync"
sys.path[:0] = [{tree!r}]
import s2s  # (this tree's: bench_variants puts its own tree first on the path)
sys.path[:0] = [{tools!r}]
import bench_variants as V, bench_wide_workloads as W
assert s2s.__file__.startswith({tree!r}), s2s.__file__
out = {{}}
HVPS = {hvps!r}
for name in {names!r}:
    fn = getattr(V, name, None) or getattr(W, name)
    g = s2s.grad(fn)
    args = W.make_args(V.VARIANTS.get(name, name))
    for _ in range(3):
        g(*args) if name not in HVPS else s2s.jvp(g, args[:1], args[1:])
    out[name] = g.specialized_source if name not in HVPS else \
        s2s.api.transformed.JVPS.get(g)[False].specialized_source
print(json.dumps(out))
"""
HVPS = {"tanh_sq"}  # cells timed as s2s.jvp(s2s.grad(f), (x,), (v,))[1]

WRAPPED = r"""
import os, sys, time
os.environ["S2S_SPECIALIZE"] = "sync"
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"
sys.path[:0] = [{tree!r}]
import s2s  # (this tree's: bench_variants puts its own tree first on the path)
sys.path[:0] = [{tools!r}]
import bench_variants as V, bench_wide_workloads as W
assert s2s.__file__.startswith({tree!r}), s2s.__file__
name = {name!r}
g = s2s.grad(getattr(V, name, None) or getattr(W, name))
args = W.make_args(V.VARIANTS.get(name, name))
hand = getattr(W, V.VARIANTS.get(name, name) + "_hand")
if name in {hvps!r}:  # (a Hessian-vector product: jvp of grad, the HVP its result)
    g = (lambda grad: lambda x, v: s2s.jvp(grad, (x,), (v,))[1])(g)
for _ in range(3):
    g(*args)
out = []
for _ in range({rounds}):
    pair = []
    for fn in (hand, g):
        t0 = time.process_time()
        for _ in range(100):
            fn(*args)
        pair.append((time.process_time() - t0) / 100 * 1e6)
    out.append(pair)
print(out)
"""


def dump(tree: str, names: list[str]) -> dict[str, str]:
    code = DUMP.format(tools=HERE, tree=tree, names=names, hvps=sorted(HVPS))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tree, env={**os.environ, "PYTHONPATH": tree}, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def operations(text: str) -> int:
    """Array operations in a module's last function: calls, operators, negations of
    values and in-place adds, a loop's body counted once per trip."""
    import ast

    fn = [n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)][-1]

    def count(body: list, times: int) -> int:
        total = 0
        for stmt in body:
            if isinstance(stmt, ast.For):
                last = stmt.iter.args[-1] if isinstance(stmt.iter, ast.Call) and \
                    stmt.iter.args else None
                trips = last.value if isinstance(last, ast.Constant) else 1
                total += count(stmt.body, times * trips)
                continue
            total += times * sum(isinstance(n, (ast.BinOp, ast.Call, ast.AugAssign)) or (
                isinstance(n, ast.UnaryOp) and not isinstance(n.operand, ast.Constant))
                for n in ast.walk(stmt))
        return total

    return count(fn.body, 1)


def summary(label: str, hands: list[float], ours: list[float]) -> str:
    ratios = sorted(b / a for a, b in zip(hands, ours))
    q = len(ratios) // 4
    return (f"{label} {min(ours):7.1f} us (least {min(ours) / min(hands):.2f}x, per-round "
            f"median {statistics.median(ratios):.2f}, quartiles {ratios[q]:.2f}-"
            f"{ratios[-q - 1]:.2f})")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("names", nargs="?", default=",".join(CELLS))
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--wrapped", action="store_true")
    opts = ap.parse_args()
    names = opts.names.split(",")
    sys.path[:0] = [HERE, opts.after]
    import bench_variants as V
    import bench_wide_workloads as W
    import numpy as np

    if opts.wrapped:
        for name in names:
            got: dict[str, list] = {"before": [], "after": []}
            for _ in range(2):  # alternately, two processes a tree
                for tag in ("before", "after"):
                    tree = getattr(opts, tag)
                    code = WRAPPED.format(tools=HERE, tree=tree, name=name,
                                          rounds=opts.rounds // 2, hvps=sorted(HVPS))
                    done = subprocess.run([sys.executable, "-c", code], capture_output=True,
                                          text=True, cwd=tree, check=True,
                                          env={**os.environ, "PYTHONPATH": tree})
                    got[tag] += eval(done.stdout.splitlines()[-1])  # (a list of pairs)
            hb = [h for h, _ in got["before"]]
            ha = [h for h, _ in got["after"]]
            print(f"{name:15s} hand {min(hb + ha):7.1f} us  " +
                  summary("before", hb, [o for _, o in got["before"]]) + "  " +
                  summary("after", ha, [o for _, o in got["after"]]))
        return
    texts = {tag: dump(getattr(opts, tag), names) for tag in ("before", "after")}
    for name in names:
        base = V.VARIANTS.get(name, name)
        args = W.make_args(base)
        hand = getattr(W, base + "_hand")
        fns = {}
        for tag in ("before", "after"):
            ns = dict(W.__dict__)
            ns.update(V.__dict__)
            exec(compile(texts[tag][name], f"<{tag}:{name}>", "exec"), ns)
            if name in HVPS:
                fns[tag] = (lambda f: lambda *a: f(*a)[1])(ns[name + "_grad_jvp"])
            else:
                fns[tag] = ns[name + "_grad"]
            print(f"{name:15s} {tag}: {operations(texts[tag][name])} array operations")
            want, got = hand(*args), fns[tag](*args)
            pairs = [(want[k], got[k]) for k in want] if isinstance(want, dict) else \
                [(want, got)]
            assert all(np.allclose(a, b, rtol=1e-9, atol=1e-12) for a, b in pairs), (name, tag)
        times: dict[str, list[float]] = {"hand": [], "before": [], "after": []}
        for _ in range(opts.rounds):
            for tag, fn in (("hand", hand), ("before", fns["before"]), ("after", fns["after"])):
                t0 = time.process_time()
                for _ in range(100):
                    fn(*args)
                times[tag].append((time.process_time() - t0) / 100 * 1e6)
        print(f"{name:15s} hand {min(times['hand']):7.1f} us  " +
              summary("before", times["hand"], times["before"]) + "  " +
              summary("after", times["hand"], times["after"]))


if __name__ == "__main__":
    main()
