# Run: PYTHONPATH=. python tools/bench_function_args.py
"""Per-call time of s2s.grad of layer(x, act) (the per-function dispatcher) vs the same
function with the function hard-coded, and of a method-of-argument call."""
import sys
import timeit

import numpy as np

import s2s

sys.path.insert(0, "tests/frontend")
import function_param_fns as F


def hard(x):
    return np.sum(np.tanh(x) * x)


x = np.array([0.3, -0.7, 1.2, 0.05])
w = np.array([0.5, -0.2, 0.3]); b = np.array([0.1, 0.0, -0.3])
g_param, g_hard, g_obj = s2s.grad(F.layer), s2s.grad(hard), s2s.grad(F.applied)
p = F.Affine(w, b)
cases = {"layer(x) default act": lambda: g_param(x), "layer(x, np.sin)": lambda: g_param(x, np.sin),
         "hard-coded tanh": lambda: g_hard(x), "applied(p, x)": lambda: g_obj(p, x[:3]),
         "dispatch only (for_arguments)": lambda: g_param.for_arguments((x, np.sin), {})}
for f in cases.values():
    f(); f()
for name, f in cases.items():
    n = 20000
    best = min(timeit.repeat(f, number=n, repeat=5)) / n
    print(f"{name:32s} {best * 1e6:7.2f} us/call")
