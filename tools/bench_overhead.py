"""Per-call cost of s2s on tiny inputs, where the call's own work is a few µs:
``s2s.grad`` and ``s2s.jit(..., backend="numpy")`` of it against a gradient written
by hand, at a 0-d array, a NumPy scalar, a Python float, a 3-vector and a small
matrix-vector loss; and a Hessian-vector product (``s2s.jvp`` of ``s2s.grad``); then,
where JAX is installed, ``s2s.jit(..., backend="jax")`` against ``jax.jit(jax.grad)`` of
the same source on jax.numpy, and ``s2s.jit(..., backend="numpy")`` against the
transform it jits (``--jit`` for only these).

    python tools/bench_overhead.py             # min over 9 repeats of 3000 calls, µs
    python tools/bench_overhead.py --jit       # the jit comparisons only
    PYTHONPATH=/other/tree python tools/bench_overhead.py   # the same on another tree

Times are minima over repeats (a loaded machine only ever adds time); each system's
result is checked against the hand-written one first.  Specializing waits for its
thread, so every timed call runs the code specialized to the signature.
"""

from __future__ import annotations

import argparse
import os
import sys
import types

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

import numpy as np  # noqa: E402

import s2s  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from call_timing import hvp_hand, least, loss, loss_hand, rounds, tanh_sq, wave, wave_hand  # noqa: E402

CASES = {
    "0-d array": (wave, wave_hand, (np.array(0.7),)),
    "np.float64": (wave, wave_hand, (np.float64(0.7),)),
    "float": (wave, wave_hand, (0.7,)),
    "vector(3)": (wave, wave_hand, (np.arange(3.0),)),
    "matvec(4x3)": (loss, loss_hand, (np.ones(3), np.ones((4, 3)))),
}


def best(fn, args, number=3000, repeat=9) -> float:
    return min(rounds({"fn": fn}, args, number, repeat)["fn"])


def interleaved(systems: dict, args: tuple, number: int = 3000, repeat: int = 15) -> dict:
    """The least CPU time a call (process time: what the machine's other jobs take
    is not counted) of each system over ``repeat`` interleaved rounds, µs."""
    return least(rounds(systems, args, number, repeat, cpu=True))


def jit_overhead() -> None:
    """What s2s.jit adds to a call: on JAX over jax.jit(jax.grad), on NumPy over the
    transform it runs."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        print("(JAX not installed: the JAX comparison is skipped)")
        jax = None
    if jax is not None:
        jax.config.update("jax_enable_x64", True)
    for name, (f, _, args) in CASES.items():
        systems = {"grad": s2s.grad(f), "jit(numpy)": s2s.jit(s2s.grad(f), backend="numpy")}
        if jax is not None:
            twin = types.FunctionType(f.__code__, {**f.__globals__, "np": jnp}, f.__name__)
            systems["jax.jit"] = jax.jit(jax.grad(twin))
            systems["jit(jax)"] = s2s.jit(s2s.grad(f), backend="jax")
        for _ in range(3):
            for fn in systems.values():
                fn(*args)
        systems["grad"].wait_specialized()
        systems["jit(numpy)"].fun.wait_specialized()
        for _ in range(2):
            for k, fn in systems.items():
                np.testing.assert_allclose(np.asarray(fn(*args)), systems["grad"](*args),
                                           rtol=1e-12)
        t = interleaved(systems, args)
        line = (f"{name:12s} s2s.grad {t['grad']:6.2f} µs  s2s.jit(numpy) "
                f"{t['jit(numpy)']:6.2f} µs ({t['jit(numpy)'] - t['grad']:+5.2f})")
        if jax is not None:
            line += (f"  jax.jit {t['jax.jit']:6.2f} µs  s2s.jit(jax) {t['jit(jax)']:6.2f} µs "
                     f"({t['jit(jax)'] - t['jax.jit']:+5.2f})")
        print(line, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description="Per-call cost of s2s on tiny inputs.")
    ap.add_argument("--jit", action="store_true",
                    help="only what s2s.jit adds to jax.jit and to the transform")
    if ap.parse_args().jit:
        return jit_overhead()
    for name, (f, hand, args) in CASES.items():
        g = s2s.grad(f)
        j = s2s.jit(s2s.grad(f), backend="numpy")
        for _ in range(3):
            g(*args), j(*args)
        g.wait_specialized()
        j.fun.wait_specialized()
        want = hand(*args)
        for out in (g(*args), j(*args)):
            np.testing.assert_allclose(out, want, rtol=1e-12)
        t = {k: best(s, args) for k, s in (("hand", hand), ("grad", g), ("jit", j))}
        print(f"{name:12s} hand {t['hand']:6.2f} µs  s2s.grad {t['grad']:6.2f} µs "
              f"(+{t['grad'] - t['hand']:5.2f})  s2s.jit(numpy) {t['jit']:6.2f} µs "
              f"(+{t['jit'] - t['hand']:5.2f})")
    inner = s2s.grad(tanh_sq)

    def hvp(x, v):
        return s2s.jvp(inner, (x,), (v,))[1]

    for n in (10, 1000):
        rng = np.random.default_rng(0)
        x, v = rng.normal(size=n), rng.normal(size=n)
        for _ in range(3):
            hvp(x, v)
        s2s.api.pushforward._jvp_transform(inner, False).wait_specialized()
        np.testing.assert_allclose(hvp(x, v), hvp_hand(x, v), rtol=1e-10)
        th, ts = best(hvp_hand, (x, v), 1000), best(hvp, (x, v), 1000)
        print(f"hvp({n:4d})    hand {th:6.2f} µs  s2s.jvp(s2s.grad) {ts:6.2f} µs "
              f"({ts / th:.2f}x)")
    print("\nwhat s2s.jit adds (least CPU time over 15 interleaved rounds of 3000 calls):")
    jit_overhead()


if __name__ == "__main__":
    sys.exit(main())
