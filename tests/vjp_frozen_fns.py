"""The functions of tests/test_vjp_frozen.py: ``vjp`` (or ``linearize``) called, then
what the function reads changed (a closure variable, the primal in place, a module
global, an object's attribute), then the pullback called.  Written once against the
transform passed in, so the JAX twin (tests/support.py ``jax_twin``: this source with
``jax.numpy``) runs the same text under ``jax.vjp`` / ``jax.linearize``."""

import numpy as np
import vjp_frozen_cfg

import s2s

SCALE = 2.0  # (rebound by the scenarios, restored after)


def scaled(w):
    return SCALE * np.sum(np.sin(w))


def scaled_aux(w):
    return SCALE * np.sum(np.sin(w)), SCALE


def written(a):
    """Write zeros into ``a`` where it can be written (a JAX array cannot)."""
    try:
        a[...] = 0
    except (TypeError, ValueError, AttributeError):
        pass


def comprehension(vjp, w, xs, ct):
    """Each lambda's closure cell is the comprehension's one ``x``: rebound by it."""
    pbs = [vjp(lambda w: np.sin(x @ w), w)[1] for x in xs]
    return [pb(ct)[0] for pb in pbs]


def primal_written(vjp, w, x, ct):
    w = w.copy()
    y, pb = vjp(lambda w: np.sin(x @ w), w)
    w[:] = 0
    first = pb(ct)[0]
    w[:] = 7
    return [first, pb(ct)[0], y]


def global_rebound(vjp, w, ct):
    global SCALE
    old = SCALE
    try:
        SCALE = 2.0
        y, pb = vjp(scaled, w)
        SCALE = 5.0
        return [pb(ct)[0], y]
    finally:
        SCALE = old


def aux_global(vjp, w, ct):
    global SCALE
    old = SCALE
    try:
        SCALE = 3.0
        y, pb, aux = vjp(scaled_aux, w, has_aux=True)
        SCALE = 0.5
        return [pb(ct)[0], y, aux]
    finally:
        SCALE = old


class Model:
    def __init__(self, a, x):
        self.a = a
        self.x = x

    def apply(self, w):
        return self.a * np.sin(self.x @ w)


def method_rebound(vjp, w, x, ct):
    m = Model(2.0, x)
    y, pb = vjp(m.apply, w)
    m.a = -1.0
    m.x = x * 3.0
    return [pb(ct)[0], y]


def twice_and_later(vjp, w, x1, x2, ct):
    """The pullback called twice (its first result and the primal output written
    into between), and again after a later vjp of the same function."""
    x = x1

    def f(w):
        return np.sin(x @ w)

    y1, pb1 = vjp(f, w)
    first = pb1(ct)[0]
    keep = first + 0
    written(first)
    written(y1)
    again = pb1(ct)[0]
    x = x2
    y2, pb2 = vjp(f, w)
    return [keep, again, pb2(ct)[0], pb1(ct)[0], y2, pb1(ct * 2)[0]]


def steps(vjp, w, xs, ct):
    """A loop of vjps of a new lambda per step over a new batch; the pullbacks of
    steps 1, 3 and 10 called after the loop (the batch's rows change at 3 and 10)."""
    kept, one = [], np.ones((), w.dtype)  # (a float32 output's cotangent: float32)
    for i, x in enumerate(xs):
        y, pb = vjp(lambda w: np.sum(np.sin(x @ w) * ct[: x.shape[0]]), w)
        if i in (0, 2, 9):
            kept.append(pb)
        w = w - 0.1 * pb(one)[0]
    return [pb(one)[0] for pb in kept]


def lin_closure(linearize, w, xs, v):
    fs = [linearize(lambda w: np.sin(x @ w), w)[1] for x in xs]
    return [f(v) for f in fs]


def lin_primal(linearize, w, x, v):
    w = w.copy()
    y, f = linearize(lambda w: np.sin(x @ w), w)
    w[:] = 0
    return [f(v), y]


def lin_method(linearize, w, x, v):
    m = Model(2.0, x)
    y, f = linearize(m.apply, w)
    m.a = -1.0
    m.x = x * 3.0
    return [f(v), y]


def rebound_in_body(w, a, b):
    """``s2s.jit`` of a function that rebinds a closure variable between its vjp and
    the pullback call."""
    x = a
    y, pb = s2s.vjp(lambda w: np.sin(x @ w), w)
    x = b
    return pb(np.ones(a.shape[0], a.dtype))[0]


def scaled_at(w, x):
    return SCALE * np.sum(np.sin(x @ w))


def inner_transforms(vjp, grad, jit, w, x1, x2, v):
    """vjp of a grad (a closure variable, then a module global rebound after it) and
    of a jit (a closure variable rebound)."""
    global SCALE
    x = x1
    y, pb1 = vjp(grad(lambda w: np.sum(np.sin(x @ w))), w)
    y, pb3 = vjp(jit(lambda w: np.sin(x @ w)), w)
    x = x2
    old = SCALE
    try:
        SCALE = 2.0
        y, pb2 = vjp(grad(lambda w: scaled_at(w, x1)), w)
        SCALE = 7.0
        return [pb1(v)[0], pb2(v)[0], pb3(np.ones(x1.shape[0], x1.dtype))[0]]
    finally:
        SCALE = old


class Holder:
    def __init__(self):
        self.s = 2.0
        self.inner = {"k": 3.0}


CFG = Holder()
TABLE = {"a": 2.0}


def read_objects(w):
    return CFG.s * CFG.inner["k"] * TABLE["a"] * np.sum(np.sin(w))


def objects_rebound(vjp, w, ct):
    """A module object's attribute, its dict's item and a module dict's item rebound
    after vjp (the pullback reads them as they were)."""
    saved = (CFG.s, CFG.inner["k"], TABLE["a"])
    try:
        y, pb = vjp(read_objects, w)
        CFG.s, CFG.inner["k"], TABLE["a"] = 5.0, 1.0, -1.0
        return [pb(ct)[0], y]
    finally:
        CFG.s, CFG.inner["k"], TABLE["a"] = saved


def read_module_attribute(w):
    return vjp_frozen_cfg.SCALE * np.sum(np.sin(w))


def module_attribute_rebound(vjp, w, ct):
    saved = vjp_frozen_cfg.SCALE
    try:
        y, pb = vjp(read_module_attribute, w)
        vjp_frozen_cfg.SCALE = 7.0
        return [pb(ct)[0], y]
    finally:
        vjp_frozen_cfg.SCALE = saved
