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
    PYTHONPATH=<tree> python tools/bench_untuned.py --batches  # the mini-batch cells
    PYTHONPATH=<tree> python tools/bench_untuned.py --batches --jax  # + the JAX backend

The mini-batch cells time one step of a loop over 16 batches (new arrays each step):
the gradient of a logistic and of an MLP loss whose batch a module name holds
(``XB, YB = batch`` then ``s2s.grad(loss)(w)``, the grad made once), and the logistic
HVP of a lambda made again over each batch; with ``--jax`` the logistic step also as
``s2s.jit(s2s.grad(loss), backend="jax")`` (the module's batch read at every call:
api/jit_jax_free.py) and as a jit of the loss given the batch as arguments.
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


XB = YB = None  # the batch a mini-batch loop's loss reads (rebound at every step)


def batch_logistic(w):
    return logistic_mean(w, XB, YB)


def logistic_grad_hand(w, x, y):
    return x.T @ (-y / (1.0 + np.exp(y * (x @ w)))) / x.shape[0]


def batch_mlp(w1, w2):
    h = np.tanh(XB @ w1)
    return 0.5 * np.mean(np.sum((h @ w2 - YB) ** 2, axis=1))


def mlp_grad_hand(w1, w2, x, y):
    h = np.tanh(x @ w1)
    r = (h @ w2 - y) / x.shape[0]
    return x.T @ ((r @ w2.T) * (1.0 - h * h)), h.T @ r


def batch_cells(rng) -> list:
    """Each system runs one step over the next of 16 batches per call."""
    global XB, YB
    logistic = [(rng.normal(size=(64, 8)), rng.choice([-1.0, 1.0], 64)) for _ in range(16)]
    mlp = [(rng.normal(size=(32, 16)), rng.normal(size=(32, 4))) for _ in range(16)]
    w = rng.normal(size=8)
    w1, w2 = rng.normal(size=(16, 32)) * 0.3, rng.normal(size=(32, 4)) * 0.3
    g, gm = s2s.grad(batch_logistic), s2s.grad(batch_mlp, argnums=(0, 1))
    gl = s2s.grad(logistic_mean)
    def stepper(batches, run):
        at = [0]  # (each system its own: a check compares the same step's batch)

        def step():
            global XB, YB
            at[0] = (at[0] + 1) % 16
            XB, YB = batches[at[0]]
            return run(XB, YB)
        step.at = at  # (the check sets the hand-written step's to the system's)
        return step

    def hvp_hand(x, y):
        return logistic_hvp_hand(w, w, x, y)

    def hvp_lambda(x, y):
        return s2s.jvp(lambda u: gl(u, x, y), (w,), (w,))[1]

    jax_cells = {}
    if "--jax" in sys.argv[1:]:  # (the JAX backend: the batch a module name holds, read
        jg = s2s.jit(s2s.grad(batch_logistic), backend="jax")  # at every call; and the
        ja = s2s.jit(gl, backend="jax")  # batch passed as arguments)
        jax_cells = {"s2s.jit(jax)": stepper(logistic, lambda x, y: jg(w)),
                     "s2s.jit(jax), batch as arguments": stepper(
                         logistic, lambda x, y: ja(w, x, y))}
    return [("mini-batch logistic grad (64x8)", stepper(logistic, lambda x, y: (
                 logistic_grad_hand(w, x, y))), {"s2s.grad": stepper(logistic, lambda x, y: g(w)),
                                                 **jax_cells}),
            ("mini-batch MLP grad (32x16->32->4)", stepper(mlp, lambda x, y: (
                mlp_grad_hand(w1, w2, x, y))), {"s2s.grad": stepper(mlp, lambda x, y: gm(w1, w2))}),
            ("mini-batch logistic HVP, a lambda per batch", stepper(logistic, hvp_hand),
             {"s2s.jvp(lambda)": stepper(logistic, hvp_lambda)})]


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
    if "--batches" in sys.argv[1:]:
        cells = []
    if "--hvp" not in sys.argv[1:]:
        cells += [(name, (), hand, ours) for name, hand, ours in batch_cells(rng)]
    for name, args, hand, ours in cells:
        for fn in ours.values():
            for n in (4, 1) if args else (33, 1, 5):  # (33: the first step's batch again;
                for _ in range(n):  # then others: a system keeping its first batch fails)
                    got = fn(*args)
                if hasattr(hand, "at"):  # (the same step's batch as fn's last)
                    hand.at[0] = fn.at[0] - 1
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
