"""Functions for tests/frontend/test_zip16.py: ``zip`` of a parameter left at a tuple
default with a tuple literal of another length, and a list grown under an ``if``."""

import numpy as np

L1 = ((np.array([[0.5, -0.2], [0.1, 0.3]]), np.array([0.1, 0.0])),)
L2 = L1 + ((np.array([[1.0, 0.4], [-0.3, 0.8]]), np.array([0.0, -0.2])),)
L3 = L2 + ((np.array([[0.7, 0.1], [0.2, -0.6]]), np.array([-0.1, 0.3])),)
L4 = L3 + ((np.array([[-0.4, 0.9], [0.5, 0.2]]), np.array([0.2, 0.1])),)


def longer(x, layers=L2):
    h = x
    for (w, b), s in zip(layers, (1.0, 0.5, 2.0)):  # the literal is longer
        h = s * np.tanh(h @ w + b)
    return np.sum(h ** 2)


def shorter(x, layers=L2):
    h = x
    for (w, b), s in zip(layers, (1.5,)):  # the literal is shorter
        h = s * np.tanh(h @ w + b)
    return np.sum(h ** 2)


def equal(x, layers=L2):
    h = x
    for s, (w, b) in zip((0.5, 2.0), layers):  # as long (the literal first)
        h = s * np.tanh(h @ w + b)
    return np.sum(h ** 2)


def indexed(x, layers=L2):
    h = x
    for i, ((w, b), s) in enumerate(zip(layers, [1.0, 0.5, 2.0])):
        h = s * np.tanh(h @ w + b) + 0.1 * i
    return np.sum(h ** 2)


def doubled(x):
    if x.shape[0] == 1:
        x = np.concatenate([x, 2.0 * x], axis=0)
    return np.sum(np.sin(x) ** 2)


def doubled_named(x):
    if x.shape[0] == 1:
        parts = [x, 2.0 * x]
        x = np.concatenate(parts, axis=0)
    return np.sum(np.sin(x) ** 2)
