"""Functions for test_defaults19.py: a callee's parameter left at a dataclass default
(``def step(w, cfg=Cfg())`` called as ``step(x)``) through a lambda and a caller,
and defaults the caller changes in place or replaces between calls."""

from __future__ import annotations

import dataclasses

import numpy as np


@dataclasses.dataclass
class Cfg:
    lr: float = 0.1
    steps: int = 2
    decay: float = 0.9


@dataclasses.dataclass
class Doubled:
    """Cfg's fields, ``lr`` doubled by ``__post_init__`` (which ``replace`` runs)."""

    lr: float = 0.1
    steps: int = 2
    decay: float = 0.9

    def __post_init__(self):
        self.lr = self.lr * 2.0


def step(w, cfg=Cfg()):
    fine = dataclasses.replace(cfg, lr=cfg.lr * 0.5, steps=3)
    for c in (cfg, fine):
        for _ in range(c.steps):
            w = w - c.lr * (w ** 3 - np.cos(w))
            c = dataclasses.replace(c, lr=c.lr * c.decay)
    return np.sum(w ** 2)


def scaled(w, cfg=Cfg(), scale=1.5):
    return scale * np.sum(np.sin(w) * cfg.lr) + cfg.decay * np.sum(w ** 2)


def caller(x):
    return 2.0 * step(x) + np.sum(np.tanh(x))


def keyword_after(x):
    return scaled(x, scale=-0.5) + scaled(x)
