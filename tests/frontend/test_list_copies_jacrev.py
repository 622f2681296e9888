"""``jacrev``/``hessian`` of a loop that copies the list it grows (``q = list(parts)``,
``q.append(v)``, ``parts = q``; also ``parts.copy()``, ``parts[:]``, ``[*parts]``, a
list of pairs), docs/python-subset.md, "Containers".

The VJP of such a loop gives the copy's cotangent list to the list it copied (one
list, popped and appended in place), so it saves no list on its tape and binds no
second cotangent list per iteration: vmap batches it (jacrev, hessian, vmap(grad)).
Every expected value comes from JAX on the same source (``jax_twin``), in float64 and
float32; the values and the loop's count change between calls, and the 1st, 3rd and
10th calls of one transform object are checked (the third runs specialized code:
tests/conftest.py's S2S_SPECIALIZE=sync)."""

from __future__ import annotations

import functools
from functools import partial

import list_copy_fns as F  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX, assert_close_to, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax
    import jax.numpy as jnp

    J = jax_twin(F)

X = np.array([0.3, -0.7, 1.2, 0.5, 0.8])
DTYPES = [np.float64, np.float32]
NAMES = ["copy_list", "copy_method", "copy_slice", "copy_starred", "copy_pairs",
         "read_in_if", "read_in_inner_loop", "pop_then_read", "pop_then_guarded_read",
         "stack_in_loop", "copy_after_loop"]
COUNTS = [5, 4, 3, 5, 4, 2, 5, 4, 3, 4]  # the loop's count at calls 1 to 10
CHECKED = (1, 3, 10)  # the calls compared with JAX (each call runs)
FROM_ONE = ["copy_list", "copy_method", "copy_slice", "copy_pairs", "read_in_if",
            "read_in_inner_loop", "stack_in_loop"]  # (their loops: range(1, n))


close = partial(assert_close_to, f64=1e-8, f32=2e-4, scale_atol=True)


def test_the_issue_function() -> None:
    """The row's function: jacrev against JAX (float64; hessian, float32 and the
    variants: the sweeps below), and its VJP reads neither the list it copies nor its
    length (no list on the tape: each iteration's is another length, which vmap
    cannot batch as one structure) and binds one cotangent list."""
    x = X[:4].copy()
    close(s2s.jacrev(F.issue)(x), jax.jacrev(J.issue)(x), np.float64)
    assert np.array_equal(x, X[:4])  # (the caller's array untouched)
    _, pullback = s2s.vjp(F.issue, x)
    code = s2s.source(pullback)
    assert "tape.append((parts_m1, sin_x_i, x_i))" in code, code
    for text in ("zeros_list(", "np.shape(parts)", "parts_bar_2"):
        assert text not in code, code


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
def test_the_issue_function_hessian(dtype) -> None:
    """hessian, jacfwd(jacrev) and s2s.jit(jacrev) on both backends of the row's
    function, against JAX."""
    x = X[:4].astype(dtype)
    close(s2s.hessian(lambda y: np.sum(F.issue(y) ** 2))(x),
          jax.hessian(lambda y: jnp.sum(J.issue(y) ** 2))(x), dtype)
    close(s2s.jacfwd(s2s.jacrev(F.issue))(x), jax.jacfwd(jax.jacrev(J.issue))(x), dtype)
    for backend in ("numpy", "jax"):
        close(s2s.jit(s2s.jacrev(F.issue), backend=backend)(x * 2.0),
              jax.jacrev(J.issue)(x * 2.0), dtype)


@pytest.mark.every_case
@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_copies_against_jax(name, dtype) -> None:
    """jacrev and s2s.jit(jacrev) (one object each, called ten times; the caller
    writes NaN into each result it checked), hessian, jacfwd and vmap(grad) at the
    1st, 3rd and 10th calls; s2s.jit(jacrev) on the JAX backend, grad, jvp and vmap
    at the first."""
    ours, theirs = getattr(F, name), getattr(J, name)
    jr = s2s.jacrev(ours)
    jitted = s2s.jit(jr)
    for call, n in enumerate(COUNTS, 1):
        x = (X * (1.0 + 0.37 * call) * (-1) ** call).astype(dtype)
        got = jr(x, n)
        jitted(x, n)
        if call not in CHECKED:
            continue
        p, q = functools.partial(ours, n=n), functools.partial(theirs, n=n)
        close(got, jax.jacrev(q)(x), dtype)
        again = jitted(x, n)
        close(again, jax.jacrev(q)(x), dtype)
        got[...], again[...] = np.nan, np.nan  # (no later result may share them)
        close(s2s.hessian(lambda y: np.sum(p(y) ** 2))(x),
              jax.hessian(lambda y: jnp.sum(q(y) ** 2))(x), dtype)
        close(s2s.jacfwd(p)(x), jax.jacfwd(q)(x), dtype)
        batch = np.stack([x, np.sin(x), -x])
        close(s2s.vmap(s2s.grad(lambda y: np.sum(np.sin(p(y)) * y[0])))(batch),
              jax.vmap(jax.grad(lambda y: jnp.sum(jnp.sin(q(y)) * y[0])))(batch), dtype)
        if call == 1:
            close(s2s.jit(s2s.jacrev(p), backend="jax")(x), jax.jacrev(q)(x), dtype)
            close(s2s.grad(lambda y: np.sum(np.sin(p(y)) * y[0]))(x),
                  jax.grad(lambda y: jnp.sum(jnp.sin(q(y)) * y[0]))(x), dtype)
            close(s2s.jvp(p, (x,), (np.cos(x),)), jax.jvp(q, (x,), (jnp.cos(x),)), dtype)
            close(s2s.vmap(p)(batch), jax.vmap(q)(batch), dtype)


def first_call(jr, x, n, expected) -> None:
    """A Jacobian object's first call: JAX's Jacobian, or a located refusal where
    vmap's probe (the first example) never computed a value the loop (or one branch
    of an `if` in it) makes, so its rank is unknown: as for any loop, grown list or
    not ("make the first example take every branch and loop the others take")."""
    try:
        got = jr(x, n)
    except s2s.TransformError as info:
        err = str(info)
        assert f'File "{F.__file__}", line ' in err and "<s2s:" not in err, err
        assert "first example never computed it" in err, err
        return
    close(got, expected, np.float64)


@pytest.mark.slow
@pytest.mark.parametrize("name", FROM_ONE)
def test_one_and_zero_iterations(name) -> None:
    """One iteration (``n = 2``) and none (``n = 1``): grad, jvp and vjp against JAX;
    jacrev's first call (JAX's, or refused at the user's line: first_call), and after
    a call that ran the loop with both branches, the same object gives JAX's
    Jacobian at one and no iteration; hessian at two (both branches of read_in_if's
    `if`: with one iteration, vmap's probe of hessian never computes the other one)."""
    ours, theirs = getattr(F, name), getattr(J, name)
    x = X.copy()
    for n in (2, 1):
        p, q = functools.partial(ours, n=n), functools.partial(theirs, n=n)
        close(s2s.grad(lambda y: np.sum(np.sin(p(y)) * y[0]))(x),
              jax.grad(lambda y: jnp.sum(jnp.sin(q(y)) * y[0]))(x), np.float64)
        close(s2s.jvp(p, (x,), (np.cos(x),)), jax.jvp(q, (x,), (jnp.cos(x),)), np.float64)
        out = np.cos(np.arange(n))
        close(s2s.vjp(p, x)[1](out), jax.vjp(q, x)[1](jnp.asarray(out)), np.float64)
        first_call(s2s.jacrev(ours), x, n, jax.jacrev(q)(x))
        jr = s2s.jacrev(ours)
        jr(x, 4)
        close(jr(x * 0.5, n), jax.jacrev(q)(x * 0.5), np.float64)
    p, q = functools.partial(ours, n=3), functools.partial(theirs, n=3)
    close(s2s.hessian(lambda y: np.sum(p(y) ** 2))(x),
          jax.hessian(lambda y: jnp.sum(q(y) ** 2))(x), np.float64)


def test_copies_are_lists() -> None:
    """``ys.copy()``, ``ys[:]`` and ``[*ys]`` of a list built here are new lists (the
    copy grows, the original does not: as Python), where NumPy's ``copy`` made an
    array of it and ``append`` was refused; of an array, ``x.copy()`` is still one."""
    x = X.copy()
    for name in ("copy_method", "copy_slice", "copy_starred"):
        f = functools.partial(getattr(F, name), n=4)
        np.testing.assert_allclose(s2s.jit(f)(x), f(x), rtol=1e-12)
        p, t = s2s.jvp(f, (x,), (np.ones_like(x),))
        np.testing.assert_allclose(p, f(x), rtol=1e-12)
        step = 1e-6
        fd = (f(x + step) - f(x - step)) / (2 * step)
        np.testing.assert_allclose(t, fd, rtol=1e-6, atol=1e-8)
