"""Logistic regression trained by gradient descent with an emitted gradient.

``s2s.value_and_grad`` emits one NumPy function returning the loss and its gradient;
training calls it like any function.  At the end the gradient is also written as a
standalone module (what ``s2s emit`` does) and reloaded: it needs only NumPy.
"""

import tempfile
from pathlib import Path

import numpy as np

import s2s


def loss(w, b, x, y):
    """Mean binary cross-entropy of a linear classifier, written stably."""
    z = x @ w + b
    # log(1 + exp(-z)) for label 1, log(1 + exp(z)) for label 0
    return np.mean(np.logaddexp(0.0, z) - y * z)


def make_data(n, d, rng):
    true_w = rng.normal(size=d)
    x = rng.normal(size=(n, d))
    y = (x @ true_w + 0.3 * rng.normal(size=n) > 0).astype(float)
    return x, y


def main(quick=False):
    rng = np.random.default_rng(0)
    x, y = make_data(60 if quick else 500, 4, rng)
    w, b = np.zeros(4), 0.0
    step = s2s.value_and_grad(loss, argnums=(0, 1))
    first = None
    for it in range(40 if quick else 300):
        value, (gw, gb) = step(w, b, x, y)
        first = value if first is None else first
        w, b = w - 0.5 * gw, b - 0.5 * gb
        if it % 50 == 0 and not quick:
            print(f"step {it:3d}  loss {value:.4f}")
    final = loss(w, b, x, y)
    accuracy = np.mean(((x @ w + b) > 0) == (y > 0.5))
    print(f"loss {first:.4f} -> {final:.4f}, training accuracy {accuracy:.2%}")

    # the same gradient as a module that runs without s2s: the command
    #   s2s emit examples/logistic_regression.py:loss --argnums 0,1 -o logreg_grad.py
    from s2s.tools.cli import main as s2s_command

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "logreg_grad.py"
        s2s_command(["emit", f"{__file__}:loss", "--argnums", "0,1",
                     "--shapes", "w=4 b=() x=10,4 y=10", "-o", str(path)])
        namespace = {}
        exec(compile(path.read_text(), str(path), "exec"), namespace)
        gw2, gb2 = namespace["loss_grad"](w, b, x, y)
    gw, gb = s2s.grad(loss, argnums=(0, 1))(w, b, x, y)
    print("standalone module agrees:", np.allclose(gw2, gw) and np.allclose(gb2, gb))
    return {"first": first, "final": final, "accuracy": accuracy,
            "standalone_error": max(np.max(np.abs(gw2 - gw)), abs(gb2 - gb))}


if __name__ == "__main__":
    main()
