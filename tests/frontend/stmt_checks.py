"""One function through every transform, against JAX on the same source (jax_twin)
or a Python loop: the checks the statement-idiom tests (test_loop_else, test_del,
test_with, test_sets_fstrings, test_list_reads, test_plain_objects) share.

``name`` is a function of the fns module whose first argument is the array to
differentiate; the others are passed as they are (Python values: static)."""

from __future__ import annotations

import functools
import inspect

import numpy as np
from support import HAVE_JAX

import s2s

if HAVE_JAX:
    import jax


def tol(dtype) -> dict:
    return dict(rtol=1e-9, atol=1e-11) if dtype == np.float64 else dict(rtol=3e-4, atol=3e-5)


def cast(x, dtype):
    return np.asarray(x, dtype=dtype)


def close(got, want, dtype, what="") -> None:
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64),
                               np.asarray(want, dtype=np.float64), **tol(dtype),
                               err_msg=what)


def bind(f, rest):
    """``f`` of its first argument, the others given (a partial, by keyword)."""
    names = list(inspect.signature(f).parameters)[1:]
    return functools.partial(f, **dict(zip(names, rest)))


def grads(F, J, name, x, rest, dtype) -> None:
    """value_and_grad, jvp and vjp against JAX's (its grad runs Python control flow
    on concrete values)."""
    f, jf = getattr(F, name), getattr(J, name)
    x = cast(x, dtype)
    value, g = s2s.value_and_grad(f)(x, *rest)
    want_value, want = jax.value_and_grad(jf)(x, *rest)
    close(value, want_value, dtype, "value")
    assert np.asarray(g).dtype == dtype
    close(g, want, dtype, "grad")
    t = cast(np.linspace(-1.0, 1.0, x.size).reshape(x.shape), dtype)
    out, out_dot = s2s.jvp(bind(f, rest), (x,), (t,))
    want_out, want_dot = jax.jvp(lambda v: jf(v, *rest), (x,), (t,))
    close(out, want_out, dtype, "jvp primal")
    close(out_dot, want_dot, dtype, "jvp tangent")
    out, vjp_fn = s2s.vjp(bind(f, rest), x)
    close(vjp_fn(cast(1.5, np.asarray(out).dtype))[0], 1.5 * np.asarray(want), dtype, "vjp")


def jacobians(F, J, name, x, rest) -> None:
    """jacfwd, jacrev and hessian against JAX's grad and jvp row by row (JAX's own
    jacobians vmap, which refuses a Python `if` on a value)."""
    f, jf = getattr(F, name), getattr(J, name)
    n = x.size
    want = np.asarray(jax.grad(jf)(x, *rest))
    np.testing.assert_allclose(s2s.jacfwd(f)(x, *rest), want, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(s2s.jacrev(f)(x, *rest), want, rtol=1e-9, atol=1e-12)
    hess = np.stack([np.asarray(jax.jvp(lambda v: jax.grad(jf)(v, *rest), (x,),
                                        (np.eye(n)[i],))[1]) for i in range(n)])
    np.testing.assert_allclose(s2s.hessian(f)(x, *rest), hess, rtol=1e-8, atol=1e-10)


def vmapped(F, name, xs, rest, dtype) -> None:
    """vmap (and vmap of grad) against a Python loop over the examples."""
    f = getattr(F, name)
    xs = cast(xs, dtype)
    in_axes = (0,) + (None,) * len(rest)
    got = s2s.vmap(f, in_axes=in_axes)(xs, *rest)
    close(got, np.stack([f(x, *rest) for x in xs]), dtype, "vmap")
    got = s2s.vmap(s2s.grad(f), in_axes=in_axes)(xs, *rest)
    close(got, np.stack([s2s.grad(f)(x, *rest) for x in xs]), dtype, "vmap(grad)")


def jitted(F, J, name, x, rest) -> None:
    """s2s.jit on both backends, of the function and of its gradient."""
    f, jf = getattr(F, name), getattr(J, name)
    want, want_g = f(x, *rest), np.asarray(jax.grad(jf)(x, *rest))
    static = tuple(range(1, 1 + len(rest)))  # (the other arguments: Python values)
    for backend in ("numpy", "jax"):
        jf, jg = (s2s.jit(h, backend=backend, static_argnums=static) for h in (
            f, s2s.grad(f)))
        for _ in range(3):  # (the later calls run the specialized code)
            close(jf(x, *rest), want, np.float64, backend)
            close(jg(x, *rest), want_g, np.float64, backend)
