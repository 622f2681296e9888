"""Per-call cost of transforms of a function made again each call (issue 27, hvp15):
``s2s.jvp(lambda w: g(w, x, y), (w,), (v,))`` with ``g = s2s.grad(loss)`` (an HVP as
JAX users write it) and ``s2s.grad(lambda w: loss(w, x, y))(w)``, beside a hand-written
HVP and ``jax.jvp`` eager of the jnp twin.  CPU time (process_time), best of rounds,
the forms interleaved, 1 BLAS thread; specializing synchronous.  A grad of a lambda
made again runs its family's transform (s2s/api/family_grads.py).

    PYTHONPATH=. python tools/bench_fresh_lambda.py        # N=20 calls a round
"""

import os
import time
import timeit

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"
os.environ.setdefault("S2S_SPECIALIZE", "sync")

import numpy as np  # noqa: E402

import s2s  # noqa: E402


def logistic_mean(w, x, y):
    return np.mean(np.log1p(np.exp(-y * (x @ w))))


def hand(w, v, x, y):
    s = 1.0 / (1.0 + np.exp(-y * (x @ w)))
    return x.T @ (s * (1.0 - s) * (x @ v)) / x.shape[0]


def mlp_loss(params, x, y):
    w1, b1, w2, b2 = params
    h = np.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    m = np.max(logits, axis=1, keepdims=True)
    logp = logits - m - np.log(np.sum(np.exp(logits - m), axis=1, keepdims=True))
    return -np.mean(np.sum(y * logp, axis=1))


def hand_grad(w, x, y):
    return x.T @ (-y / (1.0 + np.exp(y * (x @ w)))) / x.shape[0]


def main() -> None:
    rng = np.random.default_rng(0)
    w, v = rng.normal(size=8), rng.normal(size=8)
    x, y = rng.normal(size=(256, 8)), rng.choice([-1.0, 1.0], 256)
    g = s2s.grad(logistic_mean)

    def hvp_lambda():
        return s2s.jvp(lambda w: g(w, x, y), (w,), (v,))[1]

    def grad_lambda():
        return s2s.grad(lambda w: logistic_mean(w, x, y))(w)

    batches = [(x[i::4].copy(), y[i::4].copy()) for i in range(4)]  # (64 rows each)
    step = [0]

    def grad_batch():  # a training step: each batch's arrays new, as a loader's are
        xb, yb = batches[step[0] % 4]
        step[0] += 1
        xb, yb = xb.copy(), yb.copy()
        return s2s.grad(lambda w: logistic_mean(w, xb, yb))(w)

    params = [rng.normal(size=(16, 32)) * 0.1, np.zeros(32), rng.normal(size=(32, 4)) * 0.1,
              np.zeros(4)]
    xm, ym = rng.normal(size=(64, 16)), np.eye(4)[rng.integers(0, 4, 64)]
    g_mlp = s2s.grad(mlp_loss)

    def mlp_lambda():  # (new batch arrays at each step)
        xb, yb = xm.copy(), ym.copy()
        return s2s.grad(lambda p: mlp_loss(p, xb, yb))(params)

    def value_lambda():
        return s2s.value_and_grad(lambda w: logistic_mean(w, x, y))(w)

    forms = {"hand HVP": lambda: hand(w, v, x, y), "s2s.jvp(lambda w: g(w, x, y))": hvp_lambda,
             "s2s.grad(lambda w: loss(w, x, y))(w)": grad_lambda,
             "s2s.grad(loss)(w, x, y) (made once)": lambda: g(w, x, y),
             "s2s.grad(lambda w: loss(w, xb, yb))(w), new batch arrays": grad_batch,
             "s2s.value_and_grad(lambda w: loss(w, x, y))(w)": value_lambda,
             "s2s.vjp(lambda w: loss(w, x, y), w)[1](1.0)": lambda: s2s.vjp(
                 lambda w: logistic_mean(w, x, y), w)[1](1.0)[0],
             "MLP: s2s.grad(mlp_loss)(params, x, y) (made once)": lambda: g_mlp(params, xm, ym),
             "MLP: s2s.grad(lambda p: mlp_loss(p, xb, yb))(params)": mlp_lambda}
    try:
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)

        def jl(w, x, y):
            return jnp.mean(jnp.log1p(jnp.exp(-y * (x @ w))))

        jg = jax.grad(jl)
        forms["jax.jvp eager (lambda)"] = lambda: np.asarray(
            jax.jvp(lambda w: jg(w, x, y), (w,), (v,))[1])
    except ImportError:
        pass
    for name, f in forms.items():
        for _ in range(4):
            r = f()
        if "HVP" in name or "jvp" in name:
            np.testing.assert_allclose(r, hand(w, v, x, y), rtol=1e-9, atol=1e-12)
        elif name.startswith("MLP"):
            for a, b in zip(r, g_mlp(params, xm, ym)):
                np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
        elif "batch" not in name:
            r = r[1] if "value_and_grad" in name else r  # (vjp's: the gradient too)
            np.testing.assert_allclose(r, hand_grad(w, x, y), rtol=1e-9, atol=1e-12)
    n = int(os.environ.get("N", "20"))
    best = {k: 1e9 for k in forms}
    for _ in range(5):
        for k, f in forms.items():
            best[k] = min(best[k], timeit.timeit(f, number=n, timer=time.process_time) / n * 1e6)
    for k in forms:
        print(f"{k}: {best[k]:.1f} us")


if __name__ == "__main__":
    main()
