"""An f-string formatting string arguments (``np.einsum(f"i{k},{k}->i", a, b)``,
issue 23): refused before with a hint to write ``"i" + k + "->i"``; now kept as
written in the emitted code (``formatted = f"i{k},{k}->i"``, a string: no derivative),
made per call as ``"i" + k`` is.  Against JAX on the same source
(tests/fstring_args_fns.py), float64 and float32, under grad, value_and_grad, jvp,
vjp, vmap, jacfwd, jacrev, hessian and s2s.jit on both backends (the string static on
JAX, as ``jax.jit`` needs), at the 1st, 3rd and 10th calls with values changing and
the subscripts changing between calls (``k`` one label, then two)."""

from __future__ import annotations

import fstring_args_fns as F
import numpy as np
import pytest
from support import assert_close_to, jax_twin

import s2s

jax = pytest.importorskip("jax")
J = jax_twin(F)

LABELS = ["j", "j", "jk", "j", "jk", "jk", "j", "j", "jk", "j"]  # (per call)

TRANSFORMS = {  # (s2s's, JAX's): a function of (a, b, k)
    "grad": (lambda f: s2s.grad(f), lambda f: jax.grad(f)),
    "value_and_grad": (lambda f: s2s.value_and_grad(f, argnums=(0, 1)),
                       lambda f: jax.value_and_grad(f, argnums=(0, 1))),
    "jvp": (lambda f: lambda a, b, k: s2s.jvp(lambda a, b: f(a, b, k), (a, b),
                                              (np.cos(a), b - 1)),
            lambda f: lambda a, b, k: jax.jvp(lambda a, b: f(a, b, k), (a, b),
                                              (np.cos(a), b - 1))),
    "vjp": (lambda f: lambda a, b, k: s2s.vjp(lambda a, b: f(a, b, k), a, b)[1](
                np.asarray(1.5, a.dtype)),
            lambda f: lambda a, b, k: jax.vjp(lambda a, b: f(a, b, k), a, b)[1](
                np.asarray(1.5, a.dtype))),
    "vmap": (lambda f: lambda a, b, k: s2s.vmap(f, in_axes=(0, None, None))(
                 np.stack([a, 2 * a - 1]), b, k),
             lambda f: lambda a, b, k: jax.vmap(f, in_axes=(0, None, None))(
                 np.stack([a, 2 * a - 1]), b, k)),
    "jacfwd": (lambda f: s2s.jacfwd(f, argnums=1), lambda f: jax.jacfwd(f, argnums=1)),
    "jacrev": (lambda f: s2s.jacrev(f), lambda f: jax.jacrev(f)),
    "hessian": (lambda f: s2s.hessian(f, argnums=1), lambda f: jax.hessian(f, argnums=1)),
    "jit_numpy": (lambda f: s2s.jit(s2s.grad(f), backend="numpy"),
                  lambda f: jax.jit(jax.grad(f), static_argnums=2)),
    "jit_jax": (lambda f: s2s.jit(s2s.grad(f), backend="jax", static_argnums=2),
                lambda f: jax.jit(jax.grad(f), static_argnums=2)),
    "jit_jax_plain": (lambda f: s2s.jit(f, backend="jax", static_argnums=2),
                      lambda f: jax.jit(f, static_argnums=2)),
}
FUNCTIONS = ["contract", "with_a_module_constant", "named_twice"]


def _args(call, dtype):
    r = np.random.default_rng(call)
    k = LABELS[call]
    inner = (2,) * len(k)
    return (r.normal(size=(3,) + inner).astype(dtype), r.normal(size=inner).astype(dtype), k)


def _sweep(fname, tname, dtype, checked=(0, 2, 9)) -> None:
    ours, theirs = (make(getattr(M, fname)) for make, M in zip(TRANSFORMS[tname], (F, J)))
    for call in range(max(checked) + 1):
        args = _args(call, dtype)
        got = ours(*args)
        if call in checked:
            assert_close_to(got, theirs(*args), dtype, dtype_of="expected-arrays",
                            f32=3e-4, scale_atol=True)


def test_default_tier() -> None:
    """A sample (the whole sweep is `-m slow`): grad and vmap, each in one dtype, the
    subscripts changing between the checked calls."""
    _sweep("contract", "grad", np.float64, checked=(0, 2))
    _sweep("named_twice", "vmap", np.float32, checked=(0, 2))


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("tname", list(TRANSFORMS))
@pytest.mark.parametrize("fname", FUNCTIONS)
def test_fstring_subscripts_as_jax(fname, tname, dtype) -> None:
    _sweep(fname, tname, dtype)


def test_the_fstring_reads_as_written() -> None:
    g = s2s.grad(F.contract)
    g(*_args(0, np.float64))
    assert 'formatted = f"i{k},{k}->i"' in s2s.source(g), s2s.source(g)


def test_an_fstring_of_an_array_is_still_refused() -> None:
    """A field computed from arrays (``f"{np.sum(x):.3f}"``) is not a string argument:
    refused at the user's line, as before."""

    def labelled(x):
        name = f"{np.sum(x):.3f}"
        return np.sum(x) if name else x

    with pytest.raises(s2s.TransformError) as err:
        s2s.grad(labelled)(np.ones(2))
    assert "f-string" in str(err.value) and 'name = f"{np.sum(x):.3f}"' in str(err.value)


def test_an_fstring_of_a_differentiated_argument_is_refused_when_called() -> None:
    """``f"x is {x}"`` of the argument differentiated: a string has no derivative; refused
    at the user's line when the call says ``x`` carries one (a string argument does
    not)."""

    def labelled(x):
        label = f"x is {x}"
        return np.sum(x**2) if label else x

    with pytest.raises(s2s.errors.UnsupportedSyntaxError) as err:
        s2s.grad(labelled)(np.ones(2))
    assert "f-string formats `x`" in str(err.value) and 'label = f"x is {x}"' in str(err.value)
