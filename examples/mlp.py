"""A small two-layer MLP fitted to sin(3x) with emitted gradients.

The parameters are a dict; ``s2s.grad`` returns a dict of gradients with the same
keys, from one emitted NumPy function (print it with ``s2s.source(loss_grad)``).
"""

import numpy as np

import s2s


def predict(params, x):
    h = np.tanh(x @ params["W1"] + params["b1"])
    return h @ params["W2"] + params["b2"]


def loss(params, x, y):
    return np.mean((predict(params, x) - y) ** 2)


loss_grad = s2s.grad(loss)


def init(rng, hidden):
    return {
        "W1": rng.normal(size=(1, hidden)),
        "b1": np.zeros(hidden),
        "W2": rng.normal(size=(hidden, 1)) / np.sqrt(hidden),
        "b2": np.zeros(1),
    }


def main(quick=False):
    rng = np.random.default_rng(0)
    x = np.linspace(-1, 1, 32 if quick else 128)[:, None]
    y = np.sin(3 * x)
    params = init(rng, 8 if quick else 32)
    # Adam, written out
    m = {k: np.zeros_like(v) for k, v in params.items()}
    v = {k: np.zeros_like(p) for k, p in params.items()}
    first = loss(params, x, y)
    steps = 150 if quick else 2000
    for t in range(1, steps + 1):
        g = loss_grad(params, x, y)
        for k in params:
            m[k] = 0.9 * m[k] + 0.1 * g[k]
            v[k] = 0.999 * v[k] + 0.001 * g[k] ** 2
            mhat, vhat = m[k] / (1 - 0.9**t), v[k] / (1 - 0.999**t)
            params[k] = params[k] - 0.02 * mhat / (np.sqrt(vhat) + 1e-8)
        if t % 500 == 0:
            print(f"step {t:4d}  loss {loss(params, x, y):.5f}")
    final = loss(params, x, y)
    print(f"loss {first:.4f} -> {final:.5f}")
    if not quick:
        print(s2s.source(loss_grad))
    return {"first": first, "final": final}


if __name__ == "__main__":
    main()
