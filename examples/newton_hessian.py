"""Newton's method with ``s2s.hessian``: minimise a smooth convex function.

Each step solves ``H(x) p = -g(x)`` with the gradient from ``s2s.grad`` and the
Hessian from ``s2s.hessian`` (forward over reverse: the emitted gradient,
differentiated again in forward mode and vectorised over a basis).  Near the minimum
the gradient's norm falls quadratically: its exponent roughly doubles each step.
"""

import numpy as np

import s2s


def objective(x, a):
    """A log-sum-exp of linear functions plus a quadratic: convex, not quadratic."""
    return np.log(np.sum(np.exp(a @ x))) + 0.5 * np.sum(x**2)


gradient = s2s.grad(objective)
hess = s2s.hessian(objective)


def main(quick=False):
    rng = np.random.default_rng(0)
    d = 3 if quick else 6
    a = rng.normal(size=(2 * d, d))
    x = rng.normal(size=d) * 2
    norms = []
    for it in range(8):
        g = gradient(x, a)
        norms.append(float(np.linalg.norm(g)))
        print(f"step {it}  |grad| = {norms[-1]:.3e}  f = {objective(x, a):.10f}")
        if norms[-1] < 1e-12:
            break
        x = x - np.linalg.solve(hess(x, a), g)
    return {"norms": norms, "x": x, "a": a}


if __name__ == "__main__":
    main()
