"""Slices of lists of functions (``ops[:2]``) and functions made by factories,
called inside the transformed function (issue 23, item 3: newcomer_probe6's
``lambda_table`` and ``closure_factory``).

Every expected value comes from JAX on the same source (``jax_twin``), float64 and
float32, at calls 1, 3 and 10 whose values change: grad, value_and_grad, jvp, vmap of
grad, hessian, ``s2s.jit`` on both backends.  The default tier runs grad against JAX
op by op in float64; ``-m slow`` runs the whole matrix."""

from __future__ import annotations

import re
from functools import partial

import fn12_fns as F  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX, assert_close_to, compiled, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)

X = np.array([0.3, -0.7, 1.2, 0.5])
DTYPES = [np.float64, np.float32]
CALLS = (1, 3, 10)
SLICES = ["lambda_slice", "lambda_slice_loop", "slice_passed"]
FACTORIES = ["factory_once", "module_factory", "closure_factory", "factory_of_values",
             "lambda_factory", "joined_lists", "factory_reads_enclosing",
             "factory_with_statements"]  # (the last refused until test_signatures12.py)

close = partial(assert_close_to, f64=1e-8, f32=5e-4)


def _x(call: int, dtype) -> np.ndarray:
    return (X * (1 + 0.1 * call) - 0.05 * call).astype(dtype)


@pytest.mark.parametrize("name", SLICES + FACTORIES)
def test_grad_matches_jax(name) -> None:
    ours, theirs = getattr(F, name), getattr(J, name)
    g = s2s.grad(ours)
    for call in CALLS:
        x = _x(call, np.float64)
        close(g(x), jax.grad(theirs)(x), np.float64)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", SLICES + FACTORIES)
def test_every_transform_matches_jax(name, dtype) -> None:
    ours, theirs = getattr(F, name), getattr(J, name)
    g, vg = s2s.grad(ours), s2s.value_and_grad(ours)
    jitted = s2s.jit(s2s.grad(ours))
    on_jax = s2s.jit(s2s.grad(ours), backend="jax")
    for call in CALLS:
        x = _x(call, dtype)
        v = (x[::-1] * 0.5 + 0.25).astype(dtype)
        expected = compiled(jax.grad(theirs))(x)
        close(g(x), expected, dtype)
        close(vg(x), compiled(jax.value_and_grad(theirs))(x), dtype)
        close(jitted(x), expected, dtype)
        close(on_jax(x), expected, dtype)
        close(s2s.jvp(ours, (x,), (v,)), compiled(lambda x, v: jax.jvp(theirs, (x,), (v,)))(
            x, v), dtype)
        if call == 1:
            batch = np.stack([x, 0.5 * x, x[::-1].copy()])
            close(s2s.vmap(g)(batch), compiled(jax.vmap(jax.grad(theirs)))(batch), dtype)
            close(s2s.hessian(ours)(x), compiled(jax.hessian(theirs))(x), dtype)


def test_a_slice_reads_as_written() -> None:
    """The loop over ``ops[:2]`` is unrolled into calls of the first two lambdas."""
    g = s2s.grad(F.lambda_slice)
    g(X)
    code = [line for line in s2s.source(g).splitlines() if not line.strip().startswith("#")]
    called = {line.split("= ")[1] for line in code if "= lam" in line and "(x)" in line}
    assert len(called) == 3 and all(c.startswith("lam") for c in called), code
    assert not any("ops" in line for line in code), code


def test_a_slice_with_bounds_known_only_when_it_runs_is_refused() -> None:
    with pytest.raises(s2s.UnsupportedSyntaxError, match="constant bounds") as info:
        s2s.grad(F.run_time_slice)(X, 2)
    assert "fn12_fns.py" in str(info.value)


def test_a_made_function_reads_as_written() -> None:
    """``make_module_loss(0.5)``: the nested ``loss`` differentiated once, its
    factory's parameter a trailing one, each call passing its own value."""
    g = s2s.grad(F.module_factory)
    g(X)
    text = s2s.source(g)
    assert re.search(r"def loss\w*_vjp\w*\(v, scale, loss\w*_bar\):", text), text
    assert re.search(r"loss\w*\(x, 0\.5\)", text), text
    assert re.search(r"loss\w*\(x_times_x, 3\.0\)", text), text

