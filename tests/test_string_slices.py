"""A string constant sliced or indexed by a rank (``"ijk"[:a.ndim]``, ``LETTERS[:n]``,
``"ijk"[a.ndim - 1]``), the ``np.einsum`` subscripts people build so: the slice runs
in the emitted code (a string: no derivative), the einsum's rules take subscripts
computed when the code runs.  Against JAX on the same source
(tests/string_slice_fns.py), float64 and float32, at the 1st, 3rd and 10th call with
values changing, and with the rank changing between calls (the subscripts change:
the specialized code must not keep the first ones)."""

from __future__ import annotations

import numpy as np
import pytest
import string_slice_fns as F
from support import assert_close_to, jax_twin

import s2s

jax = pytest.importorskip("jax")
J = jax_twin(F)

TRANSFORMS = {
    "grad": (lambda f, n: s2s.grad(f), lambda f, n: jax.grad(f)),
    "value_and_grad": (lambda f, n: s2s.value_and_grad(f), lambda f, n: jax.value_and_grad(f)),
    "jvp": (lambda f, n: lambda *a: s2s.jvp(f, a[:n], a[n:]),
            lambda f, n: lambda *a: jax.jvp(f, a[:n], a[n:])),
    "vjp": (lambda f, n: lambda *a: s2s.vjp(f, *a[:n])[1](np.asarray(1.0, a[0].dtype)),
            lambda f, n: lambda *a: jax.vjp(f, *a[:n])[1](np.asarray(1.0, a[0].dtype))),
    "jit_grad": (lambda f, n: s2s.jit(s2s.grad(f), backend="numpy"), lambda f, n: jax.grad(f)),
    "jit_jax_grad": (lambda f, n: s2s.jit(s2s.grad(f), backend="jax"),
                     lambda f, n: jax.grad(f)),
}
FUNCTIONS = {"sum_of_squares": 1, "inner_by_module_letters": 2, "last_axis_sum": 1}
SHAPES = [(2, 3)] * 5 + [(4,)] * 2 + [(2, 1, 3)] * 3  # (the rank changes at calls 6 and 8)


def _args(name, k, dtype, tangents):
    r = np.random.default_rng(k)
    shape = SHAPES[k]
    args = [r.normal(size=shape).astype(dtype) for _ in range(FUNCTIONS[name])]
    return tuple(args) + (tuple(r.normal(size=shape).astype(dtype) for _ in args)
                          if tangents else ())


@pytest.mark.slow  # (the default tier: the integer-argument case below, against JAX)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("tname", list(TRANSFORMS))
@pytest.mark.parametrize("fname", list(FUNCTIONS))
def test_subscripts_sliced_by_a_rank_as_jax(fname, tname, dtype) -> None:
    n = FUNCTIONS[fname]
    ours, theirs = (make(getattr(M, fname), n) for make, M in zip(TRANSFORMS[tname], (F, J)))
    for k in range(10):
        args = _args(fname, k, dtype, tname == "jvp")
        got = ours(*args) if tname in ("jvp", "vjp") else ours(*args[:n])
        if k in (0, 2, 5, 9):
            want = theirs(*args) if tname in ("jvp", "vjp") else theirs(*args[:n])
            assert_close_to(got, want, dtype, dtype_of="expected-arrays", f32=2e-4)


def test_letters_sliced_by_an_integer_argument() -> None:
    """``LETTERS[:n]`` with ``n`` an integer argument (part of the call signature)."""
    g, jg = s2s.grad(F.letters_by_count), jax.grad(J.letters_by_count)
    for k, shape in enumerate([(2, 3), (2, 3), (2, 2, 2)]):
        a = np.random.default_rng(k).normal(size=shape)
        assert_close_to(g(a, len(shape)), jg(a, len(shape)), np.float64)


BATCHING = {  # (s2s's, JAX's) of a function; the arguments batched for a vmap
    "vmap": (s2s.vmap, jax.vmap, True),
    "vmap_grad": (lambda f: s2s.vmap(s2s.grad(f)), lambda f: jax.vmap(jax.grad(f)), True),
    "jacfwd": (s2s.jacfwd, jax.jacfwd, False),
    "jacrev": (s2s.jacrev, jax.jacrev, False),
    "hessian": (s2s.hessian, jax.hessian, False),
}


@pytest.mark.slow  # (the default tier: the Python loop's test below)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("tname", list(BATCHING))
@pytest.mark.parametrize("fname", list(FUNCTIONS))
def test_batched_subscripts_computed_when_the_code_runs_as_jax(fname, tname, dtype) -> None:
    """vmap (and jacfwd, jacrev, hessian, which batch) of an einsum whose subscripts
    the code computes: the batch label put on them when it runs (the runtime's
    einsum_batched), one transform object over calls whose rank changes."""
    n = FUNCTIONS[fname]
    make, make_jax, batched = BATCHING[tname]
    ours, theirs = make(getattr(F, fname)), make_jax(getattr(J, fname))
    for k in range(10):
        args = _args(fname, k, dtype, False)
        if batched:
            args = tuple(np.stack([a, 0.5 * a - 1.0]) for a in args)
        got = ours(*args)
        if k in (0, 2, 5, 9):
            assert_close_to(got, theirs(*args), dtype, dtype_of="expected-arrays",
                            f32=2e-4, scale_atol=True)


def test_vmap_of_subscripts_computed_when_the_code_runs_as_a_python_loop() -> None:
    """One vmap over calls whose rank changes (the subscripts with it), against the
    function per example (the sweep above: against JAX)."""
    v = s2s.vmap(F.last_axis_sum)
    for k, shape in enumerate([(2, 3), (4,), (2, 3), (2, 1, 3)]):
        x = np.random.default_rng(k).normal(size=(3,) + shape)
        np.testing.assert_allclose(v(x), [F.last_axis_sum(row) for row in x], rtol=1e-12)
