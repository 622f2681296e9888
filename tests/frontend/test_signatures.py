"""Signatures (issue 23, item 4): ``*args`` and ``**kwargs`` in the transformed
function and in callees, calls spreading ``*xs``/``**kw``, keyword-only parameters of
callees, and defaults that are arrays or containers.  Expected values come from JAX
on the same source (``jax_twin``) or finite differences; float64 and float32."""

from __future__ import annotations

import numpy as np
import pytest
import signature_fns as S  # (pytest puts this directory on sys.path)
from support import HAVE_JAX, fd_grad, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(S)

X = np.array([0.3, -0.7, 1.2])
Y = np.array([1.0, 2.0, -0.5])
BATCH = np.array([[0.3, -0.7, 1.2], [0.1, 0.4, -0.9]])
DTYPES = [np.float64, np.float32]

# (function, positional arguments, keyword arguments)
CASES = {
    "star_args": ((X, Y), {}),
    "named_and_star": ((X, Y, X), {}),
    "star_kwargs": ((X,), {"scale": 2.0}),
    "uses_kwonly": ((X,), {}),
    "uses_kwonly_required": ((X,), {}),
    "calls_variadic": ((X,), {}),
    "calls_star": ((X,), {}),
    "calls_kwstar": ((X,), {}),
    "calls_star_into_numpy": ((X,), {}),
    "with_array_default": ((X,), {}),
    "calls_array_default": ((X,), {}),
    "with_tuple_default": ((X,), {}),
    "calls_tuple_default": ((X,), {}),
    "calls_forwarder": ((X,), {}),
}


def tol(dtype):
    return dict(rtol=1e-9, atol=1e-11) if dtype == np.float64 else dict(rtol=2e-4, atol=2e-5)


def close(got, expected, dtype):
    for g, e in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(expected)):
        assert np.shape(g) == np.shape(e)
        if np.ndim(g):
            assert np.asarray(g).dtype == dtype, np.asarray(g).dtype
        np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(e, np.float64),
                                   **tol(dtype))


def cast(args, dtype):
    return tuple(np.asarray(a, dtype) for a in args)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", list(CASES))
def test_grad_value_and_grad_jvp_jit(name, dtype) -> None:
    args, kwargs = CASES[name]
    args = cast(args, dtype)
    ours, theirs = getattr(S, name), getattr(J, name)
    for argnums in range(len(args)):  # argnums index positional arguments, as in JAX
        close(s2s.grad(ours, argnums=argnums)(*args, **kwargs),
              jax.grad(theirs, argnums=argnums)(*args, **kwargs), dtype)
    close(s2s.value_and_grad(ours)(*args, **kwargs),
          jax.value_and_grad(theirs)(*args, **kwargs), dtype)
    close(s2s.jit(ours)(*args, **kwargs), theirs(*args, **kwargs), dtype)
    if not kwargs:
        tangents = tuple(np.ones_like(a) for a in args)
        close(s2s.jvp(ours, args, tangents), jax.jvp(theirs, args, tangents), dtype)


@pytest.mark.parametrize("name", [n for n, (_, kw) in CASES.items() if not kw])
def test_jacobians_and_vmap(name) -> None:
    args, _ = CASES[name]
    ours, theirs = getattr(S, name), getattr(J, name)
    close(s2s.jacfwd(ours)(*args), jax.jacfwd(theirs)(*args), np.float64)
    close(s2s.jacrev(ours)(*args), jax.jacrev(theirs)(*args), np.float64)
    batch = tuple(np.stack([a, a * 0.5 + 0.1]) for a in args)
    close(s2s.vmap(ours)(*batch), jax.vmap(theirs)(*batch), np.float64)
    close(s2s.vmap(s2s.grad(ours))(*batch), jax.vmap(jax.grad(theirs))(*batch), np.float64)


def test_variadic_function_arity_is_per_call() -> None:
    """One transform of ``f(*xs)`` called with two and with three arrays: code per
    call signature, as JAX traces per signature."""
    g = s2s.grad(S.named_and_star, argnums=2)
    close(g(X, Y, X), jax.grad(J.named_and_star, argnums=2)(X, Y, X), np.float64)
    close(g(X, Y, X, Y), jax.grad(J.named_and_star, argnums=2)(X, Y, X, Y), np.float64)
    assert "def named_and_star_grad" in g.source


def test_an_array_default_changed_in_place_is_read_at_each_call() -> None:
    """``w=W0``: the default is the function object's array; changed in place between
    calls (1st, 2nd = specialized, 10th), the next call reads it, as Python would
    (finite differences of the function as it is then)."""
    g = s2s.grad(S.calls_array_default)
    saved = S.W0.copy()
    try:
        for call in range(1, 11):
            S.W0[:] = saved * call
            expected = fd_grad(S.calls_array_default, (X,), 0)[0]
            np.testing.assert_allclose(g(X), expected, rtol=1e-6, atol=1e-8)
    finally:
        S.W0[:] = saved


def spreads_an_array(x):
    return np.sum(np.add(*x))


def spreads_a_module_dict(x):
    return np.sum(x, **OPTIONS)


OPTIONS = {"axis": 0}


def test_spreading_what_has_no_known_length_is_refused_at_the_line() -> None:
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(spreads_an_array)(X)
    err = str(info.value)
    assert "s2s does not know" in err and __file__ in err and "Instead:" in err, err


def test_spreading_a_module_dict_reads_it_at_each_call() -> None:
    """``np.sum(x, **OPTIONS)`` over a module dict (refused until the third newcomer
    probe): its keys decide the call, its values are read at each call."""
    saved = dict(OPTIONS)
    g = s2s.grad(spreads_a_module_dict)
    try:
        np.testing.assert_allclose(g(X), np.ones_like(X))
        OPTIONS["axis"] = None
        np.testing.assert_allclose(g(X), np.ones_like(X))
    finally:
        OPTIONS.clear()
        OPTIONS.update(saved)
