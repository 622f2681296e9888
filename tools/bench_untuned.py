"""Two workloads the per-call work was not tuned on, hand-written against s2s: the
per-example gradients of a two-layer MLP (``s2s.vmap(s2s.grad(loss))`` and
``s2s.jit(..., backend="numpy")`` of it) and the Hessian-vector product of a mean
logistic loss, written two ways: ``s2s.jvp(g, (w, x, y), (v, zeros, zeros))[1]`` of
``g = s2s.grad(loss)`` (the zeros made per call with ``np.zeros_like``, and made once)
and ``s2s.jvp(lambda w: g(w, x, y), (w,), (v,))[1]`` (a closure over the data, a new
lambda per call).  Least CPU time per call over interleaved rounds, BLAS on one
thread; values checked against the hand-written forms first.

    PYTHONPATH=<tree> python tools/bench_untuned.py         # (run from <tree>)
    PYTHONPATH=<tree> python tools/bench_untuned.py --hvp   # the HVP cells only
"""

import os
import sys
import time
import timeit

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"
os.environ.setdefault("S2S_SPECIALIZE", "sync")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import s2s  # noqa: E402


def mlp_loss(w1, w2, x, y):  # one example: x (16,), y (4,)
    h = np.tanh(x @ w1)
    return 0.5 * np.sum((h @ w2 - y) ** 2)


def mlp_hand(w1, w2, xs, ys):  # per-example gradients, batch first
    h = np.tanh(xs @ w1)
    r = h @ w2 - ys
    gh = (r @ w2.T) * (1.0 - h * h)
    return xs[:, :, None] * gh[:, None, :], h[:, :, None] * r[:, None, :]


def logistic_mean(w, x, y):
    return np.mean(np.log1p(np.exp(-y * (x @ w))))


def logistic_hvp_hand(w, v, x, y):
    s = 1.0 / (1.0 + np.exp(-y * (x @ w)))
    return x.T @ (s * (1.0 - s) * (x @ v)) / x.shape[0]


def main() -> None:
    rng = np.random.default_rng(0)
    w1, w2 = rng.normal(size=(16, 32)) * 0.3, rng.normal(size=(32, 4)) * 0.3
    xs, ys = rng.normal(size=(32, 16)), rng.normal(size=(32, 4))
    per_example = s2s.vmap(s2s.grad(mlp_loss, argnums=(0, 1)), in_axes=(None, None, 0, 0))
    jitted = s2s.jit(s2s.vmap(s2s.grad(mlp_loss, argnums=(0, 1)),
                              in_axes=(None, None, 0, 0)), backend="numpy")
    w, v = rng.normal(size=8), rng.normal(size=8)
    x, y = rng.normal(size=(256, 8)), rng.choice([-1.0, 1.0], 256)
    g = s2s.grad(logistic_mean)

    def hvp(w, v, x, y):
        return s2s.jvp(lambda w: g(w, x, y), (w,), (v,))[1]

    def hvp_closed(w, v, x, y):  # (the jvp of grad itself, x and y its arguments)
        return s2s.jvp(g, (w, x, y), (v, np.zeros_like(x), np.zeros_like(y)))[1]

    zx, zy = np.zeros_like(x), np.zeros_like(y)

    def hvp_zeros_once(w, v, x, y):
        return s2s.jvp(g, (w, x, y), (v, zx, zy))[1]

    cells = [("per-example MLP grads (32x16->32->4)", (w1, w2, xs, ys), mlp_hand,
              {"s2s.vmap(grad)": per_example, "s2s.jit(numpy)": jitted}),
             ("logistic-loss HVP (256x8)", (w, v, x, y), logistic_hvp_hand,
              {"s2s.jvp(grad)": hvp_closed, "zeros made once": hvp_zeros_once,
               "closure": hvp})]
    if "--hvp" in sys.argv[1:]:
        cells = cells[1:]
    for name, args, hand, ours in cells:
        for fn in ours.values():
            for _ in range(4):
                got = fn(*args)
            want = hand(*args)
            for a, b in zip(got if isinstance(got, tuple) else (got,),
                            want if isinstance(want, tuple) else (want,)):
                np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
        systems = {"hand": hand, **ours}
        best = {k: float("inf") for k in systems}
        for _ in range(31):
            for k, fn in systems.items():
                t = timeit.timeit(lambda: fn(*args), number=300, timer=time.process_time)
                best[k] = min(best[k], t / 300 * 1e6)
        parts = [f"hand {best['hand']:.2f} µs"] + [
            f"{k} {best[k]:.2f} µs ({best[k] / best['hand']:.2f}x)" for k in ours]
        print(f"{name}: " + ", ".join(parts), flush=True)
    print(f"({s2s.__file__.rsplit('/s2s/', 1)[0]}, load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
