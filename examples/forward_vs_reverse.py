"""A classroom walkthrough: forward mode and reverse mode on the same function.

    f(x) = sum(sin(x) * x) ** 2 / n          (R^n -> R)

Forward mode (``s2s.jvp``) pushes one tangent direction through the function beside
the values: ``y_dot`` right after ``y``.  One pass gives one directional derivative, so
the whole gradient takes n passes (one per basis vector).

Reverse mode (``s2s.grad``) runs the function forwards, then the cotangents ``y_bar``
backwards, from the output to the input: one pass gives the whole gradient.

For a function R -> R^m the counts swap: forward mode needs one pass, reverse m.
Run this file to see both emitted functions and the pass counts.
"""

import numpy as np

import s2s


def f(x):
    y = np.sin(x) * x
    s = np.sum(y)
    return s**2 / np.size(x)


def main(quick=False):
    n = 4 if quick else 6
    x = np.linspace(0.1, 1.0, n)

    print("== forward mode: one jvp per input direction ==")
    columns = []
    for e in np.eye(n):
        _, directional = s2s.jvp(f, (x,), (e,))
        columns.append(directional)
    forward_gradient = np.array(columns)
    print(s2s.source(f, "jvp"))
    print(f"{n} forward passes -> gradient {np.round(forward_gradient, 6)}")

    print("\n== reverse mode: one backward pass ==")
    grad_f = s2s.grad(f)
    reverse_gradient = grad_f(x)
    print(s2s.source(grad_f))
    print(f"1 reverse pass -> gradient {np.round(reverse_gradient, 6)}")

    # by hand: f = s^2 / n with s = sum(x sin x), so df/dx = 2 s / n * (sin x + x cos x)
    s = np.sum(np.sin(x) * x)
    by_hand = 2 * s / n * (np.sin(x) + x * np.cos(x))
    print(f"\nby hand:               {np.round(by_hand, 6)}")
    print(f"max |forward - reverse| = {np.max(np.abs(forward_gradient - reverse_gradient)):.1e}")
    return {"forward": forward_gradient, "reverse": reverse_gradient, "by_hand": by_hand}


if __name__ == "__main__":
    main()
