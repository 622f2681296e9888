"""f-strings formatting string arguments into ``np.einsum`` subscripts
(tests/test_fstring_args.py); a twin with ``jax.numpy`` is JAX's oracle."""

import numpy as np

OUT = "i"


def contract(a, b, k):
    return np.sum(np.einsum(f"i{k},{k}->i", a, b) ** 2)


def with_a_module_constant(a, b, k):
    y = np.einsum(f"i{k},{k}->{OUT}", np.sin(a), b)
    return np.sum(np.tanh(y) * y)


def named_twice(a, b, k, out="i"):
    subs = f"{out}{k},{k}->{out}"
    return np.sum(np.einsum(subs, a * a, b) + np.einsum(subs, a, b * b))
