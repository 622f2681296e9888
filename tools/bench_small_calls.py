"""Per-call cost at small sizes, CPU time: a hand-written gradient against s2s and
``s2s.jit(..., backend="numpy")`` of it, for ``grad`` at a 0-d array, a 3-vector and a
4x3 matvec loss, ``vmap(grad)`` of per-example logistic regression (256x8) and
``jvp(grad)`` Hessian-vector products at n = 10 and 1000 (the jit of a user's
function calling ``s2s.jvp``).  Least ``time.process_time`` per call over 25
interleaved rounds of 1,000 calls (what other processes take is not counted, though
a loaded machine still slows every call), values checked first.

    PYTHONPATH=<tree> python tools/bench_small_calls.py [CASE ...]   # (run from <tree>)
"""

import os
import sys

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"
os.environ.setdefault("S2S_SPECIALIZE", "sync")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import s2s  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from call_timing import (  # noqa: E402
    check_all,
    hvp_hand,
    least,
    loss,
    loss_hand,
    rounds,
    tanh_sq,
    wave,
    wave_hand,
)


def logistic(w, x, y):
    return np.log1p(np.exp(-y * (x @ w)))


def logistic_hand(w, xs, ys):
    s = 1.0 / (1.0 + np.exp(ys * (xs @ w)))
    return (-ys * s)[:, None] * xs


G_TANH = s2s.grad(tanh_sq)


def hvp(x, v):
    return s2s.jvp(G_TANH, (x,), (v,))[1]


def main() -> None:
    r = np.random.default_rng(0)
    cases = {
        "0-d": (wave, wave_hand, (np.array(0.7),), "grad"),
        "vector(3)": (wave, wave_hand, (np.arange(3.0),), "grad"),
        "matvec(4x3)": (loss, loss_hand, (np.ones(3), np.ones((4, 3))), "grad"),
        "logistic vmap": (logistic, logistic_hand, (r.normal(size=8), r.normal(size=(256, 8)),
                                                    r.choice([-1.0, 1.0], 256)), "vmap"),
        "hvp(10)": (None, hvp_hand, (r.normal(size=10), r.normal(size=10)), "hvp"),
        "hvp(1000)": (None, hvp_hand, (r.normal(size=1000), r.normal(size=1000)), "hvp"),
    }
    only = sys.argv[1:]
    for name, (f, hand, args, kind) in cases.items():
        if only and name not in only:
            continue
        if kind == "grad":
            plain, jit = s2s.grad(f), s2s.jit(s2s.grad(f), backend="numpy")
        elif kind == "vmap":
            plain = s2s.vmap(s2s.grad(f), in_axes=(None, 0, 0))
            jit = s2s.jit(s2s.vmap(s2s.grad(f), in_axes=(None, 0, 0)), backend="numpy")
        else:
            plain, jit = hvp, s2s.jit(hvp, backend="numpy")
        systems = {"hand": hand, "s2s": plain, "jit": jit}
        check_all(systems, args, hand(*args), rtol=1e-9)
        best = least(rounds(systems, args, number=1000, repeat=25, cpu=True))
        h = best["hand"]
        print(f"{name:14s} hand {h:6.2f} µs  s2s {best['s2s']:6.2f} ({best['s2s'] / h:.2f}x)  "
              f"s2s.jit(numpy) {best['jit']:6.2f} ({best['jit'] / h:.2f}x)", flush=True)
    print(f"({s2s.__file__.rsplit('/s2s/', 1)[0]}, load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
