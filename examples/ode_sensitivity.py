"""Sensitivity of an ODE solution to its parameters, through the integration loop.

The ODE  y' = -k y + sin(omega t)  is integrated with a fixed-step RK4 loop written in
plain Python.  ``s2s.grad`` differentiates the loop itself (reverse mode runs it
backwards, popping what each step saved), giving d y(T) / d (k, omega, y0) in one
backward pass; finite differences check it.
"""

import numpy as np

import s2s


def rhs(y, t, k, omega):
    return -k * y + np.sin(omega * t)


def final_state(theta, steps, T):
    """y(T) for theta = (k, omega, y0), by RK4 with ``steps`` steps."""
    k = theta[0]
    omega = theta[1]
    y = theta[2]
    h = T / steps
    t = 0.0
    for i in range(steps):
        k1 = rhs(y, t, k, omega)
        k2 = rhs(y + 0.5 * h * k1, t + 0.5 * h, k, omega)
        k3 = rhs(y + 0.5 * h * k2, t + 0.5 * h, k, omega)
        k4 = rhs(y + h * k3, t + h, k, omega)
        y = y + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        t = t + h
    return y


sensitivity = s2s.grad(final_state)


def main(quick=False):
    theta = np.array([0.7, 2.0, 1.5])  # k, omega, y0
    steps, T = (20, 2.0) if quick else (200, 5.0)
    g = sensitivity(theta, steps, T)
    eps = 1e-6
    fd = np.array([(final_state(theta + eps * e, steps, T)
                    - final_state(theta - eps * e, steps, T)) / (2 * eps) for e in np.eye(3)])
    print(f"y(T) = {final_state(theta, steps, T):.6f}")
    for name, gi, fi in zip(("k", "omega", "y0"), g, fd):
        print(f"d y(T) / d {name:<5} = {gi: .8f}   (finite differences {fi: .8f})")
    # for this linear ODE, d y(T) / d y0 = exp(-k T) exactly (RK4 approximates it)
    print(f"exp(-k T) = {np.exp(-theta[0] * T):.8f}")
    return {"grad": g, "fd": fd, "theta": theta, "T": T}


if __name__ == "__main__":
    main()
