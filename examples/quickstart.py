"""Quickstart: the gradient of a small regression loss, and the code s2s emitted for it."""

import numpy as np

import s2s


@s2s.grad
def loss(w, x, y):
    pred = np.tanh(x @ w)
    return np.mean((pred - y) ** 2)


def main() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(8, 3))
    w = rng.normal(size=3)
    y = rng.normal(size=8)

    print("gradient of loss with respect to w:")
    print(loss(w, x, y))
    print()
    print("the emitted gradient function (s2s.source(loss)):")
    print(s2s.source(loss))


if __name__ == "__main__":
    main()
