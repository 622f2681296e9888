"""Methods of an argument's class: a method calling another method of ``self``
(``__call__`` calling ``apply``), a base class's method, a ``@property`` and a
``@staticmethod`` read through ``self``, on a NamedTuple, a dataclass registered with
``register_dataclass`` and a class registered with ``register_pytree_node_class``.
grad, value_and_grad, jvp, vjp, vmap of grad over x, and s2s.jit on both backends (of the
function, of its grad, of vmap of grad); a classmethod called through ``self`` is
refused, located.

Expected values: JAX on the same source (``jax_twin``), float64 and float32.  The
classes s2s.jit runs on JAX are registered with JAX too (as a JAX user registers
them); s2s's own registry is what the NumPy side reads."""

from __future__ import annotations

from functools import partial

import function_param_fns as F  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX, assert_close_to, compiled, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)
    for _cls, _register in ((F.Layer, lambda c: jax.tree_util.register_dataclass(
            c, data_fields=["w", "b"], meta_fields=[])),
            (F.Cell, jax.tree_util.register_pytree_node_class)):
        try:
            _register(_cls)
        except ValueError:  # (registered already, by another test module)
            pass

DTYPES = [np.float64, np.float32]
W = np.array([0.5, -0.2, 0.3])
B = np.array([0.1, 0.0, -0.3])
X = np.array([0.3, -0.7, 1.2])


close = partial(assert_close_to, f64=1e-8, f32=5e-4)


def values(step, dtype):
    scale = 1 + 0.1 * step
    return (W * scale).astype(dtype), B.astype(dtype), (X + 0.05 * step).astype(dtype)


CASES = {  # (class name, function): methods calling methods, of each kind of class
    "NamedTuple __call__ -> apply": ("Affine", "called"),
    "dataclass, inherited method": ("Layer", "layered"),
    "registered class": ("Cell", "layered"),
    "property and staticmethod": ("Scaler", "layered"),
}


@pytest.mark.slow  # (~5 s a case; the default tier: the replaced-method test's jit)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(CASES))
def test_transforms_of_methods_calling_methods(case, dtype) -> None:
    cname, fname = CASES[case]
    ours, theirs = getattr(F, fname), getattr(J, fname)
    mine_cls, jax_cls = getattr(F, cname), getattr(J, cname)
    w, b, x = values(0, dtype)
    mine, jaxs = mine_cls(w, b), jax_cls(w, b)
    batch = np.stack([x, -x, 0.5 * x])
    expected = compiled(jax.grad(theirs))(jaxs, x)
    got = s2s.grad(ours)(mine, x)
    assert type(got) is mine_cls
    close(got, expected, dtype)
    close(s2s.value_and_grad(ours)(mine, x), jax.value_and_grad(theirs)(jaxs, x), dtype)
    close(s2s.jvp(ours, (mine, x), (mine, x[::-1].copy())),
          jax.jvp(theirs, (jaxs, x), (jaxs, x[::-1])), dtype)
    out, back = s2s.vjp(ours, mine, x)
    out_jax, back_jax = jax.vjp(theirs, jaxs, x)
    close(out, out_jax, dtype)
    cotangent = np.asarray(1.5, dtype)
    close(back(cotangent), back_jax(jax.numpy.asarray(cotangent)), dtype)
    expected_batch = jax.vmap(jax.grad(theirs, argnums=1), in_axes=(None, 0))(jaxs, batch)
    close(s2s.vmap(s2s.grad(ours, argnums=1), in_axes=(None, 0))(mine, batch),
          expected_batch, dtype)
    for backend in ("numpy", "jax"):
        close(s2s.jit(s2s.grad(ours), backend=backend)(mine, x), expected, dtype)
        close(s2s.jit(ours, backend=backend)(mine, x), theirs(jaxs, x), dtype)
        close(s2s.jit(s2s.vmap(s2s.grad(ours, argnums=1), in_axes=(None, 0)),
                      backend=backend)(mine, batch), expected_batch, dtype)


@pytest.mark.slow
def test_classes_alternating_and_results_written_into() -> None:
    """One transform over ten calls whose argument's class alternates (NamedTuple,
    dataclass, registered class), values changing; the caller writes into each
    gradient it gets, which changes no later result."""
    classes = [(F.Scaler, J.Scaler), (F.Layer, J.Layer), (F.Cell, J.Cell)]
    g = s2s.grad(F.layered)
    on_jax = s2s.jit(s2s.grad(F.layered), backend="jax")
    for step in range(10):
        mine_cls, jax_cls = classes[step % 3]
        w, b, x = values(step, np.float64)
        expected = jax.grad(J.layered)(jax_cls(w, b), x)
        got = g(mine_cls(w, b), x)
        close(got, expected, np.float64)
        close(on_jax(mine_cls(w, b), x), expected, np.float64)
        got.w[...] = np.nan  # (the caller's to keep: no cache holds it)


@pytest.mark.parametrize("backend", ["numpy", pytest.param("jax", marks=pytest.mark.slow)])
def test_a_method_replaced_on_the_class_between_calls(backend) -> None:
    """The class's method is read at each call: replacing it is seen at the next
    (grad, and jit; on JAX, ``__call__`` calling ``self.apply`` runs both on JAX)."""
    w, b, x = values(0, np.float64)
    g = s2s.grad(F.called)
    jitted = {backend: s2s.jit(s2s.grad(F.called), backend=backend)}
    for f in jitted.values():
        close(f(F.Affine(w, b), x), jax.grad(J.called)(J.Affine(w, b), x), np.float64)
    saved, saved_jax = F.Affine.apply, J.Affine.apply
    try:
        first = g(F.Affine(w, b), x)
        F.Affine.apply = F.Scaled.apply  # (sin instead of tanh)
        J.Affine.apply = J.Scaled.apply
        expected = jax.grad(J.called)(J.Affine(w, b), x)
        close(g(F.Affine(w, b), x), expected, np.float64)
        for f in jitted.values():
            close(f(F.Affine(w, b), x), expected, np.float64)
    finally:
        F.Affine.apply = saved
        J.Affine.apply = saved_jax
    close(g(F.Affine(w, b), x), first, np.float64)


def test_a_classmethod_through_self_is_refused_located() -> None:
    w, b, x = values(0, np.float64)
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(F.shifted)(F.Scaler(w, b), x)
    message = str(info.value)
    assert "function_param_fns.py" in message and "self.offset(self.b)" in message, message
    assert "classmethod" in message and "@staticmethod" in message, message


def test_two_threads_calling_with_other_functions_and_classes() -> None:
    """The per-call dispatcher (no lock on a hit) from two threads at once, each
    alternating the function it passes, and a third alternating classes: each call
    gets its own function's gradient (checked against the same call run alone)."""
    import threading

    x = X[:3].copy()
    g, gp = s2s.grad(F.layer), s2s.grad(F.called)
    fns = [np.sin, F.relu, np.tanh]
    alone = {f: g(x, f) for f in fns}
    objs = [F.Affine(W, B), F.Scaled(W, B)]
    alone_obj = [gp(p, x) for p in objs]
    errors = []

    def run(k):
        try:
            for i in range(12):
                f = fns[(i + k) % 3]
                # (the 2nd call on may run the specialized code: equal to rounding)
                np.testing.assert_allclose(g(x, f), alone[f], rtol=1e-12, atol=1e-14)
                j = (i + k) % 2
                got = gp(objs[j], x)
                assert type(got) is type(objs[j])
                np.testing.assert_allclose(got.w, alone_obj[j].w, rtol=1e-12, atol=1e-14)
        except Exception as err:  # (reported by the main thread)
            errors.append(err)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
