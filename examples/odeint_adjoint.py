"""Parameter sensitivities of an ODE solved by ``scipy.integrate.odeint``, by the
adjoint method.

The Lotka-Volterra system is solved by SciPy's LSODA; ``s2s.grad`` of a loss on the
solution gives d loss / d (y0, alpha, beta) in one backward solve: the emitted code
holds ``lotka_volterra_adjoint``, the adjoint ODE built from s2s's own reverse mode of
``lotka_volterra``, which the runtime integrates backward in time with the same solver.
Finite differences of SciPy's solution check it.
"""

import numpy as np
from scipy.integrate import odeint

import s2s


def lotka_volterra(y, t, alpha, beta):
    prey, predator = y[0], y[1]
    return np.array([alpha * prey - beta * prey * predator,
                     0.5 * beta * prey * predator - predator])


def misfit(y0, alpha, beta, t, observed):
    ys = odeint(lotka_volterra, y0, t, args=(alpha, beta), rtol=1e-10, atol=1e-10)
    return np.sum((ys - observed) ** 2)


gradient = s2s.grad(misfit, argnums=(0, 1, 2))


def main(quick=False):
    t = np.linspace(0.0, 2.0 if quick else 10.0, 5 if quick else 50)
    truth = odeint(lotka_volterra, np.array([2.0, 1.0]), t, args=(1.0, 0.4))
    y0, alpha, beta = np.array([1.8, 1.1]), 0.9, 0.5
    g = gradient(y0, alpha, beta, t, truth)
    eps = 1e-6
    args = [y0, alpha, beta]
    fd = []
    for i, value in enumerate(args):
        steps = np.eye(2) if i == 0 else [1.0]
        for step in steps:
            hi, lo = list(args), list(args)
            hi[i], lo[i] = value + eps * step, value - eps * step
            fd.append((misfit(*hi, t, truth) - misfit(*lo, t, truth)) / (2 * eps))
    flat = np.concatenate([np.ravel(v) for v in g])
    adjoint = s2s.source(gradient).split("def lotka_volterra_adjoint")[1]
    print("def lotka_volterra_adjoint" + adjoint.split("def misfit_grad")[0].rstrip())
    for name, gi, fi in zip(("y0[0]", "y0[1]", "alpha", "beta"), flat, fd):
        print(f"d misfit / d {name:<6} = {gi: .8f}   (finite differences {fi: .8f})")
    return {"grad": flat, "fd": np.array(fd)}


if __name__ == "__main__":
    main()
