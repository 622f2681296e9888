"""What a steady-state call costs besides its code (issue 27, sixth pass): ``g =
s2s.grad(f)`` of a tiny function against ``s2s.jit(g, backend="numpy")`` (the jit of
that very transform, so the difference is what the jit adds) and a hand-written
gradient, at plain arrays (a 0-d array, a 3-vector) and at pytree
parameters (a dict, a tuple, a NamedTuple and a registered dataclass of 3-vectors;
a dict of 0-d arrays; a dict of Python floats).

Wall-clock time per call by ``time.perf_counter_ns``, over ``--repeat`` rounds of
``--number`` calls with the systems in turn (tools/call_timing.py); printed per
system: the median and the quartiles of the rounds, and the least; then
``jit - grad`` round by round (the same round's load on both sides): its median,
quartiles, and in how many rounds the jit was the slower.  Every system's gradient is
checked against the hand-written one first.

    PYTHONPATH=<tree> python tools/bench_call_cost.py [CASE ...] [--repeat 41] [--cpu]

(``--cpu``: CPU time, ``time.process_time_ns``, where a loaded machine's other
processes make the wall clock bimodal.)
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from typing import NamedTuple

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"
os.environ.setdefault("S2S_SPECIALIZE", "sync")

import numpy as np  # noqa: E402

import s2s  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from call_timing import paired, rounds, summary, wave, wave_hand  # noqa: E402


class Params(NamedTuple):
    w: np.ndarray
    b: np.ndarray


@dataclasses.dataclass
class Layer:
    w: np.ndarray
    b: np.ndarray


s2s.tree_util.register_dataclass(Layer)


def by_key(p, x):
    return np.sum(np.tanh(p["w"] * x + p["b"]) ** 2)


def by_position(p, x):
    w, b = p
    return np.sum(np.tanh(w * x + b) ** 2)


def by_field(p, x):
    return np.sum(np.tanh(p.w * x + p.b) ** 2)


def hand(w, b, x):
    t = np.tanh(w * x + b)
    bar = 2 * t * (1 - t**2)
    return bar * x, bar


def hand_dict(p, x):
    gw, gb = hand(p["w"], p["b"], x)
    return {"w": gw, "b": gb}


def hand_tuple(p, x):
    return hand(p[0], p[1], x)


def hand_fields(p, x):
    return type(p)(*hand(p.w, p.b, x))


X = np.linspace(-1.0, 1.0, 3)
CASES = {
    "array 0-d": (wave, wave_hand, (np.array(0.7),)),
    "array(3)": (wave, wave_hand, (X,)),
    "dict(3)": (by_key, hand_dict, ({"w": np.ones(3), "b": np.full(3, 0.1)}, X)),
    "dict 0-d": (by_key, hand_dict, ({"w": np.array(0.5), "b": np.array(0.1)},
                                     np.array(0.3))),
    "dict float": (by_key, hand_dict, ({"w": 0.5, "b": 0.1}, 0.3)),
    "tuple(3)": (by_position, hand_tuple, ((np.ones(3), np.full(3, 0.1)), X)),
    "NamedTuple(3)": (by_field, hand_fields, (Params(np.ones(3), np.full(3, 0.1)), X)),
    "dataclass(3)": (by_field, hand_fields, (Layer(np.ones(3), np.full(3, 0.1)), X)),
}


def leaves(tree) -> list:
    return s2s.tree_util.tree_leaves(tree)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cases", nargs="*", help=f"some of: {', '.join(CASES)}")
    ap.add_argument("--repeat", type=int, default=41, help="rounds (default 41)")
    ap.add_argument("--number", type=int, default=1000, help="calls a round (1000)")
    ap.add_argument("--cpu", action="store_true",
                    help="CPU time (time.process_time_ns) instead of perf_counter_ns")
    opts = ap.parse_args()
    for name, (f, by_hand, args) in CASES.items():
        if opts.cases and name not in opts.cases:
            continue
        g = s2s.grad(f)  # (the jit of this very transform: what the jit adds to it)
        systems = {"hand": by_hand, "grad": g, "jit": s2s.jit(g, backend="numpy")}
        for _ in range(4):  # (the second call specializes)
            for fn in systems.values():
                fn(*args)
        want = by_hand(*args)
        for k, fn in systems.items():
            got = fn(*args)
            assert type(got) is type(want) or np.ndim(want) == 0, (name, k, type(got))
            for g, w in zip(leaves(got), leaves(want), strict=True):
                np.testing.assert_allclose(g, w, rtol=1e-12, err_msg=f"{name}: {k}")
        t = rounds(systems, args, opts.number, opts.repeat, cpu=opts.cpu)
        line = [f"{name:14s}"]
        for k in systems:
            s = summary(t[k])
            line.append(f"{k} {s['median']:5.2f} [{s['q1']:5.2f}, {s['q3']:5.2f}] "
                        f"min {s['min']:5.2f}")
        d = paired(t["grad"], t["jit"])
        line.append(f"jit-grad {d['median'] * 1e3:+5.0f} ns [{d['q1'] * 1e3:+.0f}, "
                    f"{d['q3'] * 1e3:+.0f}] slower in {d['slower']}/{d['n']}")
        print("  ".join(line), flush=True)
    print(f"(µs per call; {s2s.__file__.rsplit('/s2s/', 1)[0]}, load average "
          f"{os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
