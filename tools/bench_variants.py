"""Cells of the wide benchmark written another way (formulations the optimizer was not
tuned for), each against the hand-written gradient of the same mathematics, timed
like tools/bench_cell.py (many short interleaved rounds; the specialized code from
the third call on).

    PYTHONPATH=<tree> python tools/bench_variants.py            # every variant
    PYTHONPATH=<tree> python tools/bench_variants.py relu_mul   # some of them

Variants: the MLP's relu as ``pre * (pre > 0)`` and ``np.where(pre > 0, pre, 0.0)``;
layer norm with ``np.var``; one-hot cross-entropy with ``scipy.special.logsumexp``.
"""

from __future__ import annotations

import os
import sys

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"
os.environ.setdefault("S2S_SPECIALIZE", "sync")

import numpy as np  # noqa: E402
import scipy.special  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]  # this tree's s2s, not an installed one

import bench_wide_workloads as W  # noqa: E402
from bench_cell import paired_rounds, ratio_summary  # noqa: E402

import s2s  # noqa: E402


def relu_mul(params, x, y):
    pre = x @ params["w1"] + params["b1"]
    h = pre * (pre > 0)
    out = h @ params["w2"] + params["b2"]
    return np.mean((out - y) ** 2)


def relu_where(params, x, y):
    pre = x @ params["w1"] + params["b1"]
    h = np.where(pre > 0, pre, 0.0)
    out = h @ params["w2"] + params["b2"]
    return np.mean((out - y) ** 2)


def layer_norm_var(x, gamma, t):
    mu = x.mean(axis=-1, keepdims=True)
    y = (x - mu) / np.sqrt(np.var(x, axis=-1, keepdims=True) + 1e-5) * gamma
    return np.sum(y * t)


def xent_lse(logits, labels):
    logp = logits - scipy.special.logsumexp(logits, axis=1, keepdims=True)
    return -np.mean(np.sum(labels * logp, axis=1))


# variant -> (the workload whose arguments and hand-written gradient it shares)
VARIANTS = {"relu_mul": "mlp_dict", "relu_where": "mlp_dict",
            "layer_norm_var": "layer_norm", "xent_lse": "xent_onehot"}


def leaves(tree):
    return [tree[k] for k in sorted(tree)] if isinstance(tree, dict) else [tree]


def main() -> None:
    names = sys.argv[1:] or list(VARIANTS)
    rounds, calls = 40, 200
    for name in names:
        base = VARIANTS[name]
        args = W.make_args(base)
        hand = getattr(W, base + "_hand")
        g = s2s.grad(globals()[name])
        for _ in range(3):
            got = g(*args)
        assert all(np.allclose(a, b, rtol=1e-6, atol=1e-9)
                   for a, b in zip(leaves(got), leaves(hand(*args)))), name
        hands, ours = paired_rounds(hand, g, args, calls, rounds)
        print(f"{name} (as {base}): hand {min(hands):.2f} us, s2s {min(ours):.2f} us, "
              f"{ratio_summary(hands, ours)}")


if __name__ == "__main__":
    main()
