"""Instructions per call of det's gradient, ``s2s.grad(np.linalg.det)`` and the runtime
helper ``det_cofactor`` alone, against the hand-written ``det(a) * inv(a).T``, counted
by callgrind (BLAS on one thread; a loaded machine does not disturb a count).

    PYTHONPATH=<tree> python tools/bench_det_cofactor.py            # 3 x 3 and 50 x 50
    PYTHONPATH=<tree> python tools/bench_det_cofactor.py --sizes 3 8 --calls 200
"""

from __future__ import annotations

import argparse
import ctypes
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def det_of(a):
    return np.linalg.det(a)


def systems(n: int) -> tuple:
    import s2s
    import s2s.runtime_linalg as RL

    a = np.random.default_rng(0).normal(size=(n, n))
    d = np.linalg.det(a)
    g = s2s.grad(det_of)
    return a, {"hand": lambda: np.linalg.det(a) * np.linalg.inv(a).T,
               "s2s.grad": lambda: g(a),
               "det_cofactor": lambda: RL.det_cofactor(a, d),
               "inv(a).T": lambda: np.linalg.inv(a).T}


def inside(library: str, sizes: list[int], calls: int) -> None:
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"
    os.environ.setdefault("S2S_SPECIALIZE", "sync")
    sys.path[:0] = [HERE, os.path.dirname(HERE)]
    cg = ctypes.CDLL(library)
    for n in sizes:
        a, fns = systems(n)
        want = fns["hand"]()
        for label, fn in fns.items():
            for _ in range(5):
                got = fn()
            if label != "inv(a).T":
                np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
        for round_ in range(2):
            for label, fn in fns.items():
                cg.cg_start()
                for _ in range(calls):
                    fn()
                cg.cg_dump(f"{n}|{label}|{round_}".encode())
                cg.cg_stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="*", default=[3, 50])
    ap.add_argument("--calls", type=int, default=100)
    ap.add_argument("--inside", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.inside:
        inside(args.inside, args.sizes, args.calls)
        return
    sys.path.insert(0, HERE)
    from bench_jit_instructions import client_library

    with tempfile.TemporaryDirectory() as folder:
        lib = client_library(folder)
        proc = subprocess.run(["valgrind", "--tool=callgrind", "--instr-atstart=no",
                        f"--callgrind-out-file={folder}/callgrind.out.%p",
                        sys.executable, os.path.abspath(__file__), "--inside", lib,
                        "--calls", str(args.calls), "--sizes", *map(str, args.sizes)],
                       check=False, capture_output=True)
        if proc.returncode:
            raise SystemExit(proc.stderr.decode()[-3000:])
        found: dict = {}
        for name in os.listdir(folder):
            if not name.startswith("callgrind.out"):
                continue
            text = open(os.path.join(folder, name)).read()
            trigger = re.search(r"Trigger: Client Request: (\S+)", text)
            totals = re.search(r"^totals: (\d+)", text, re.M)
            if trigger and totals:
                n, label, _ = trigger.group(1).split("|")
                found.setdefault(int(n), {}).setdefault(label, []).append(
                    int(totals.group(1)) / args.calls)
    print(f"instructions per call (callgrind, {args.calls} calls, the least of 2 counts)")
    for n in sorted(found):
        hand = min(found[n]["hand"])
        print(f"{n} x {n}: " + ", ".join(
            f"{label} {min(v) / 1e3:.1f}k ({min(v) / hand:.2f}x)"
            for label, v in found[n].items()))


if __name__ == "__main__":
    main()
