"""Functions for tests/frontend/test_jit_traced_jax.py: control flow on values JAX
traces under ``s2s.jit(..., backend="jax")``, an ``if`` whose paths give a value
different ranks under ``s2s.jit(s2s.vmap(f), backend="jax")``, and ``np.einsum`` of
subscripts known per call.  JAX runs the same source (``jax_twin``).  The tests read
the lines of the statements they expect errors at from this file: keep each marked
statement on the line its comment names."""

import numpy as np

K = "j"  # (a module constant an f-string reads)


def grow(x, n):
    out = []
    for i in range(n):  # GROW_LOOP
        out.append(x * (i + 1.0))
    return np.sum(np.stack(out) ** 2)


def grow_while(x):
    y = np.sum(x)
    out = []
    while y < 10.0:  # GROW_WHILE
        y = y * 2.0
        out.append(y)
    return np.sum(np.stack(out))


def array_if(x):
    if x > 0:  # ARRAY_IF
        return np.sum(x) * 2.0
    return np.sum(x) * 3.0


def array_while(x):
    while x < 10.0:  # ARRAY_WHILE
        x = x * 2.0
    return np.sum(x)


def shapes_if(x):
    y = np.sum(x)
    if y > 0:  # SHAPES_IF
        z = x[:2]
    else:
        z = x
    return np.sum(z**2)


def ranks_if(x, t):
    if t > 0:  # RANKS_IF
        y = x * t
    else:
        y = 0.5
    return np.sum(np.sin(y))


def horner(x, coeffs):
    acc = 0.0
    for c in coeffs:
        acc = acc * x + c
    return np.sum(acc)


def contract(a, b, subs):
    return np.sum(np.tanh(np.einsum(subs, a, b)))


def contract_fstring(a, b):
    subs = f"i{K},{K}->i"
    return np.sum(np.einsum(subs, a, b) ** 2)


def contract_joined(a, b, k):
    subs = "i" + k + "," + k + "->i"
    return np.sum(np.sin(np.einsum(subs, a, b)))


def helper_if(x):
    if x > 0:  # HELPER_IF
        return x * 2.0
    return x


def calls_helper(x):
    return np.sum(helper_if(x) * 3.0)
