"""Instructions per call (valgrind's callgrind: a loaded machine does not disturb the
count) of ``s2s.grad`` calls that issue 27 found slow, and of the code they run:

* ``list:N`` / ``loop:N``: a function of a list of N arrays of 3
  (``sum(np.sum(y**2) for y in ys)``; a ``for y in ys`` loop), the call against the
  (specialized) code it runs;
* ``specs``, ``spec``, ``default``: ``np.sum(np.sin(x) ** 2) * SPECS[0]["w"]`` (a
  module tuple of dicts), ``* SPEC["w"]`` (a module dict), ``* specs[0]["w"]`` (a
  callee's tuple-of-dicts default), x of 8.

    PYTHONPATH=<tree> python tools/bench_reduce16.py list:10 list:100 specs spec  # (s2s from <tree>)

Each case is transformed, called until specialized (S2S_SPECIALIZE=sync) and warmed
up uninstrumented, then ``--calls`` calls are counted, ``--rounds`` times (the least
is reported).  Needs valgrind and a C compiler (tools/bench_jit_instructions.py's
client library switches counting on and off).
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SPECS = ({"w": 2.0, "b": 1.0}, {"w": 3.0})
SPEC = {"w": 2.0}


def list_loss(ys):
    return sum(np.sum(y**2) for y in ys)


def loop_loss(ys):
    t = 0.0
    for y in ys:
        t = t + np.sum(y**2)
    return t


def specs_loss(x):
    return np.sum(np.sin(x) ** 2) * SPECS[0]["w"]


def spec_loss(x):
    return np.sum(np.sin(x) ** 2) * SPEC["w"]


def weighted(x, specs=({"w": 2.0},)):
    return np.sum(np.sin(x) ** 2) * specs[0]["w"]


def default_loss(x):
    return weighted(x)


def case(name: str) -> tuple:
    """``(function, args)`` of a case."""
    kind, _, size = name.partition(":")
    if kind in ("list", "loop"):
        rng = np.random.default_rng(0)
        ys = [rng.random(3) for _ in range(int(size))]
        return {"list": list_loss, "loop": loop_loss}[kind], (ys,)
    fn = {"specs": specs_loss, "spec": spec_loss, "default": default_loss}[kind]
    return fn, (np.linspace(0.1, 0.8, 8),)


def count(cases: list[str], calls: int, rounds: int, library: str) -> None:
    os.environ["S2S_SPECIALIZE"] = "sync"
    import s2s

    cg = ctypes.CDLL(library)
    for name in cases:
        fn, args = case(name)
        grad = s2s.grad(fn)
        for _ in range(5):
            grad(*args)
        grad.wait_specialized()
        entries = [e for e in grad._by_signature.values() if not e.pending]
        ran = entries[-1].fn if entries else grad._last[1]  # (the code the call runs)
        for _ in range(5):
            ran(*args)
        for round_ in range(rounds):
            for label, f in (("call", grad), ("code", ran)):
                cg.cg_start()
                for _ in range(calls):
                    f(*args)
                cg.cg_dump(f"{name}|{label}|{round_}".encode())
                cg.cg_stop()


def report(folder: str, calls: int, cases: list[str]) -> None:
    found: dict = {}
    for path in glob.glob(os.path.join(folder, "callgrind.out.*")):
        with open(path) as f:
            text = f.read()
        trigger = re.search(r"Trigger: Client Request: (\S+)", text)
        totals = re.search(r"^totals: (\d+)", text, re.M)
        if trigger and totals:
            name, label, _ = trigger.group(1).split("|")
            found.setdefault(name, {}).setdefault(label, []).append(
                int(totals.group(1)) / calls)
    print(f"instructions per call (callgrind, {calls} calls, least of the counts)")
    print(f"{'case':12s} {'s2s.grad call':>14s} {'its code':>10s} {'overhead':>10s}")
    for name in cases:
        got = found.get(name, {})
        if len(got) < 2:
            print(f"{name:12s} (no count)")
            continue
        c, r = min(got["call"]), min(got["code"])
        print(f"{name:12s} {c / 1e3:>13.1f}k {r / 1e3:>9.1f}k {(c - r) / 1e3:>9.1f}k")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cases", nargs="*", default=["list:10", "list:100", "specs", "spec",
                                                 "default"])
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--inside", help=argparse.SUPPRESS)
    opts = ap.parse_args()
    if opts.inside:
        count(opts.cases, opts.calls, opts.rounds, opts.inside)
        return
    sys.path.insert(0, HERE)
    from bench_jit_instructions import client_library

    with tempfile.TemporaryDirectory() as folder:
        library = client_library(folder)
        subprocess.run(["valgrind", "--tool=callgrind", "--instr-atstart=no", "-q",
                        f"--callgrind-out-file={folder}/callgrind.out.%p", sys.executable,
                        os.path.abspath(__file__), "--calls", str(opts.calls), "--rounds",
                        str(opts.rounds), "--inside", library, *opts.cases], check=True)
        report(folder, opts.calls, opts.cases)


if __name__ == "__main__":
    main()
