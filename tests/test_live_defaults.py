"""A parameter left out of a call takes the default the function object has now.

``f.__defaults__ = (4,)`` after the ``def`` changes what ``f(x)`` computes; JAX traces
that call, so ``jax.grad(f)`` follows.  s2s read the defaults once, when it first
normalized ``f`` (kept even by a new ``s2s.grad(f)``), and a callee's default was a
constant in its caller's IR.  Here each transform is called before, around and long
after a change (the 1st, 2nd, 3rd and 10th call: the second call of a signature
specializes it, later ones go straight to the specialized code), and compared with
JAX on a twin whose defaults are changed the same way.
"""

from __future__ import annotations

import numpy as np
import pytest

import s2s
from support import HAVE_JAX, jax, jax_twin, jnp

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

@pytest.fixture()
def fns():
    """A fresh copy of tests/live_defaults_fns.py for each test (their defaults are
    changed), and its twin in jax.numpy (a dict of its functions)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).with_name("live_defaults_fns.py")
    spec = importlib.util.spec_from_file_location("live_defaults_fns", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, vars(jax_twin(module))


X = np.array([0.5, -1.25, 2.0])


def transforms(f, jf):
    """Pairs (s2s's call, JAX's call) of each transform at X."""
    v = np.array([1.0, -2.0, 0.5])
    xs = np.stack([X, X * 0.5])
    return {
        "grad": (lambda g=s2s.grad(f): g(X), lambda: jax.grad(jf)(X)),
        "value_and_grad": (lambda g=s2s.value_and_grad(f): g(X),
                           lambda: jax.value_and_grad(jf)(X)),
        "vjp": (lambda: s2s.vjp(f, X)[1](1.0), lambda: jax.vjp(jf, X)[1](1.0)),
        "jvp": (lambda: s2s.jvp(f, (X,), (v,)), lambda: jax.jvp(jf, (X,), (v,))),
        "vmap(grad)": (lambda g=s2s.vmap(s2s.grad(f)): g(xs),
                       lambda: jax.vmap(jax.grad(jf))(xs)),
        "hessian": (lambda h=s2s.hessian(f): h(X), lambda: jax.hessian(jf)(X)),
        "jacfwd(grad)": (lambda h=s2s.jacfwd(s2s.grad(f)): h(X),
                         lambda: jax.jacfwd(jax.grad(jf))(X)),
    }


def close(a, b):
    a, b = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    assert len(a) == len(b)
    for u, w in zip(a, b):
        np.testing.assert_allclose(np.asarray(u), np.asarray(w), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name, attr, values", [
    ("power", "__defaults__", [(3,), (4,), (2,)]),
    ("scaled", "__kwdefaults__", [{"s": 2.0}, {"s": -0.5}, {"s": 3.0}]),
    ("weighted", "__defaults__", [None, (np.array([0.5, 0.25, -1.0]),),
                                  (np.array([2.0, 2.0, 2.0]),)]),
    ("caller", "__defaults__", [(3,), (4,), (2,)]),  # power's, read by its caller
    ("caller_of_caller", "__defaults__", [(3,), (4,), (2,)]),
], ids=["defaults", "kwdefaults", "array-default", "callee", "callee-of-callee"])
@pytest.mark.slow
def test_replaced_defaults_are_used_from_the_next_call_on(fns, name, attr, values):
    module, twin = fns
    owner = "power" if name.startswith("caller") else name
    f, jf = getattr(module, name), twin[name]

    def set_defaults(value):
        if value is None:
            return
        setattr(getattr(module, owner), attr, value)
        jvalue = jax.tree_util.tree_map(jnp.asarray, value) if owner == "weighted" \
            else value
        setattr(twin[owner], attr, jvalue)

    set_defaults(values[0])
    made = transforms(f, jf)  # transforms made before any change
    for key, (ours, theirs) in made.items():
        expected = None  # (JAX's answer, computed again after each change of defaults)
        for call in range(1, 13):
            if call in (3, 8):
                set_defaults(values[1 if call == 3 else 2])
                expected = None
            if call in (1, 2, 3, 4, 7, 8, 10, 12):
                if expected is None:
                    expected = theirs()
                close(ours(), expected)
        set_defaults(values[0])
    set_defaults(values[1])  # a new transform after a change, of every kind
    for key, (ours, theirs) in transforms(f, jf).items():
        close(ours(), theirs())


def test_a_default_added_after_the_def_is_used(fns):
    module, twin = fns
    g = s2s.grad(module.required)
    close(g(X, 2), jax.grad(twin["required"])(X, 2))
    module.required.__defaults__ = (3,)
    twin["required"].__defaults__ = (3,)
    close(g(X), jax.grad(twin["required"])(X))
    close(s2s.grad(module.required)(X), jax.grad(twin["required"])(X))


def test_the_emitted_signature_spells_the_default_in_use(fns):
    module, _ = fns
    g = s2s.grad(module.power)
    g(X)
    assert "n=3" in g.source
    module.power.__defaults__ = (5,)
    g(X)
    assert "n=5" in g.source and "n=3" not in g.source
    assert "n=5" in s2s.grad(module.power).source


def test_the_same_default_in_a_new_object_changes_nothing(fns):
    module, twin = fns
    g = s2s.grad(module.weighted)
    for _ in range(3):
        close(g(X), jax.grad(twin["weighted"])(X))
    module.weighted.__defaults__ = (np.array([1.0, 2.0, 3.0]),)
    for _ in range(3):
        close(g(X), jax.grad(twin["weighted"])(X))
