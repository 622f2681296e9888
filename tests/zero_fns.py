"""Spellings of a shifted softmax whose max's cotangent is zero (tests/test_zero_identities.py)."""

import numpy as np


def xent_onehot(logits, labels):
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    logp = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(np.sum(labels * logp, axis=1))


def xent_smoothed(logits, labels):
    shifted = logits - np.max(logits, axis=-1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    soft = 0.9 * labels + 0.1 / 10
    return -np.sum(soft * logp) / logits.shape[0]


def softmax_ratio(x, t):
    e = np.exp(x - np.max(x))
    p = e / np.sum(e)
    return np.sum((p - t) ** 2)


def logsumexp_rows(x):
    m = np.max(x, axis=1, keepdims=True)
    return np.sum(m + np.log(np.sum(np.exp(x - m), axis=1, keepdims=True)))


def xent_label(logits, label):
    shifted = logits - np.max(logits)
    logp = shifted - np.log(np.sum(np.exp(shifted)))
    return -logp[label]
