"""Per-example gradients with ``vmap(grad(...))``, e.g. for clipping in DP-SGD.

``s2s.vmap(s2s.grad(loss), in_axes=(None, 0, 0))`` emits one batched NumPy function:
the parameters are shared (``None``), each example's row of ``x`` and ``y`` is mapped
(``0``), and the result has one gradient per example.  No Python loop runs over the
batch; the emitted code is printed at the end.
"""

import numpy as np

import s2s


def loss(w, x, y):
    """Squared error of a one-hidden-unit model on ONE example."""
    pred = np.tanh(x @ w)
    return (pred - y) ** 2


per_example = s2s.vmap(s2s.grad(loss), in_axes=(None, 0, 0))


def main(quick=False):
    rng = np.random.default_rng(0)
    n, d = (16, 5) if quick else (256, 20)
    w = rng.normal(size=d) / np.sqrt(d)
    x = rng.normal(size=(n, d))
    y = rng.normal(size=n)
    grads = per_example(w, x, y)  # (n, d): one gradient per example
    looped = np.stack([s2s.grad(loss)(w, x[i], y[i]) for i in range(n)])
    error = np.max(np.abs(grads - looped))
    print(f"{grads.shape[0]} per-example gradients; max difference to a loop: {error:.1e}")
    # clip each example's gradient to norm 1, then average (DP-SGD's first step)
    norms = np.linalg.norm(grads, axis=1, keepdims=True)
    clipped = grads / np.maximum(1.0, norms)
    print(f"norms before clipping: max {norms.max():.3f}; after: "
          f"{np.linalg.norm(clipped, axis=1).max():.3f}")
    if not quick:
        print(per_example.source)
    return {"grads": grads, "looped": looped, "clipped": clipped, "w": w, "x": x, "y": y}


if __name__ == "__main__":
    main()
