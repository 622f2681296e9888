"""The rule table's vocabulary: a row, and drawers of valid arguments.

``test_rules.py`` holds the core rows; each ``tests/rule_rows_<family>.py`` adds a
family's rows as a module-level ``ROWS`` list, gathered automatically, so families can
be extended independently.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
import sys
from typing import Callable

import numpy as np

from s2s.primitives import PRIMITIVES


def rng_for(key: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(key.encode()))


# ---- drawing arguments --------------------------------------------------------------


def normal(*shape):
    return lambda r: r.normal(size=shape)


def uniform(lo, hi):
    return lambda *shape: lambda r: r.uniform(lo, hi, size=shape)


def nonzero(*shape):
    return lambda r: r.uniform(0.5, 2.0, size=shape) * r.choice([-1.0, 1.0], size=shape)


def mask(*shape):
    return lambda r: r.random(shape) < 0.5


def const(value):
    return lambda r: value


# ---- the table -----------------------------------------------------------------------


@dataclass
class Row:
    prim: str
    variant: str
    args: tuple[Callable, ...]  # one drawer per positional parameter, in order
    params: dict = field(default_factory=dict)  # keyword parameters (axis, keepdims)
    wrt: tuple[str, ...] | None = None  # default: all of the primitive's diff params
    # the same function in JAX: a dotted path under jax (default jnp.<prim>), or a callable
    jax: str | Callable | None = None

    @property
    def id(self) -> str:
        return f"{self.prim}-{self.variant}"

    @property
    def primitive(self):
        return PRIMITIVES[self.prim]

    def wrt_names(self) -> tuple[str, ...]:
        return self.wrt if self.wrt is not None else self.primitive.diff




@dataclass
class E2ECase:
    """One function run through s2s.grad, against jax.grad of the same source."""

    fn: Callable
    prims: tuple[str, ...]  # the primitives it exercises (checked against its IR)
    args: tuple[Callable, ...] = (normal(2, 3),)  # drawers of the differentiated args
    static: tuple = ()  # further arguments, not differentiated (an axis)
    jax: bool = True  # False where JAX cannot trace the source
    fd: bool = True  # False where the derivative is a convention differences cannot see

    @property
    def id(self) -> str:
        return self.fn.__name__

    def draw(self, dtype=np.float64) -> tuple:
        r = rng_for(self.id)
        return tuple(np.asarray(d(r), dtype=dtype) for d in self.args) + self.static

    @property
    def argnums(self) -> tuple[int, ...]:
        return tuple(range(len(self.args)))




def twin_of(fn: Callable) -> Callable:
    """The same function from its module's JAX twin (see support.jax_twin)."""
    from support import jax_twin

    module = sys.modules[fn.__module__]
    twin = _TWINS.get(module.__name__)
    if twin is None:
        twin = _TWINS[module.__name__] = jax_twin(module)
    return getattr(twin, fn.__name__)


_TWINS: dict = {}
