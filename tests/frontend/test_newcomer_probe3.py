"""Issue 23, the third newcomer probe: 51 everyday NumPy functions (an RK4 loop, a
finite-difference Laplacian, log-likelihoods, a GRU cell, masked attention, batch
norm, a cosine schedule from a dataclass, a Newton iteration with a tolerance, `match`,
walrus, `try/finally`, has_aux...) through grad at three calls with changing values,
value_and_grad, jvp, vmap and jit on both backends, against JAX on the same source
(``jax_twin``) in float64, or central differences where JAX cannot run it.

The sweep (``-m slow``: each function compiles a dozen JAX programs) pins each
function's class; the default tier checks what the probe fixed: ``f(x, *T)`` over a
module or closure tuple ``T`` holding arrays (refused) or numbers (read once, when the
code was generated: a silently stale value after ``T`` changed), against JAX in
float64 and float32."""

from __future__ import annotations

from functools import partial

import newcomer_probe3_cases as C  # (pytest puts this directory on sys.path)
import newcomer_probe3_fns as F
import numpy as np
import pytest
from support import HAVE_JAX, assert_close_to, central_grad, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax
    import jax.scipy.special

    J = jax_twin(F)
    J.sps = jax.scipy.special

DTYPES = [np.float64, np.float32]
X = np.array([0.3, -0.7, 1.2])

# the probe's classes (tests/frontend/newcomer_probe3_cases.py's classify): every
# function not named here is accepted and correct under every transform tried
EXPECTED = {
    # JAX's jit refuses a Python `while` on a traced test too (reverse mode through a
    # value-dependent while): s2s says so at the `while`
    "newton_sqrt": "both refuse",
    # `float(...)` of the result: jax.jit refuses it (a traced value), as s2s's JAX
    # backend does, located; every other transform runs it (JAX's grad does not)
    "typed_sig": "both refuse",
    # (`isinstance` of an argument and the built-in `max` over a generator of array
    # values, refused before, run under every transform tried)
}


close = partial(assert_close_to, f64=1e-9, f32=3e-4)


@pytest.mark.slow
@pytest.mark.every_case
@pytest.mark.parametrize("name", list(C.CASES))
def test_probe_sweep(name) -> None:
    """Each function's class is the one recorded: accepted and correct, or refused
    with a located TransformError (never WRONG, never an internal error)."""
    label, verdicts = C.classify(name, J)
    assert label == EXPECTED.get(name, "ok"), verdicts


def _set_shift(value):
    F.SHIFT, J.SHIFT = value, tuple(jax.numpy.asarray(v) for v in value)


@pytest.mark.slow  # (3.7 s of JAX compiles: the default tier's budget is 2 s a file)
@pytest.mark.parametrize("dtype", DTYPES)
def test_spread_of_a_module_tuple(dtype) -> None:
    """``affine_loss(x, *SHIFT)``: its items read at each call (numbers and arrays),
    a change of length or kind generating the code again; grad, jvp, vmap, jit on
    both backends against JAX."""
    saved = F.SHIFT
    try:
        x = X.astype(dtype)
        g = s2s.grad(F.spread_module_tuple)
        for call, shift in enumerate( ((np.array([1.0, -2.0, 0.5], dtype), dtype(0.5)),
                      (np.array([3.0, 1.0, -1.0], dtype), dtype(-0.25)),
                      (dtype(2.0), dtype(0.5)), (dtype(3.0), dtype(0.5)))):
            _set_shift(shift)
            want = jax.grad(J.spread_module_tuple)(x)
            close(g(x), want, dtype)
            if call == 0:  # (on JAX a module constant is read when it compiles, as
                # jax.jit reads it: the report notes it)
                close(s2s.jit(s2s.grad(F.spread_module_tuple), backend="jax")(x), want, dtype)
            close(s2s.jvp(F.spread_module_tuple, (x,), (x[::-1].copy(),)),
                  jax.jvp(J.spread_module_tuple, (x,), (x[::-1],)), dtype)
        batch = np.stack([x, 2 * x])
        close(s2s.vmap(F.spread_module_tuple)(batch), jax.vmap(J.spread_module_tuple)(batch),
              dtype)
        close(s2s.jit(F.spread_module_tuple)(x), J.spread_module_tuple(x), dtype)
    finally:
        _set_shift(saved)


def test_spread_of_numbers_is_read_at_each_call() -> None:
    """The regression: ``f(x, *T)`` with ``T = (2.0, 0.5)`` baked 2.0 into the code,
    and a later ``T = (3.0, 0.5)`` kept the gradient of 2.0 (silently wrong)."""
    saved = F.SHIFT
    try:
        g = s2s.grad(F.spread_module_tuple)
        for a in (2.0, 3.0, -1.5):
            F.SHIFT = (a, 0.5)
            np.testing.assert_allclose(g(X), 2 * a * X + 0.5 * np.cos(0.5 * X), rtol=1e-12)
        F.SHIFT = (1.0, 0.5, 7.0)  # (one too many: Python's TypeError, at the user's line)
        with pytest.raises(s2s.TransformError) as info:
            g(X)
        assert info.value.loc.file == F.__file__ and "*SHIFT" in info.value.loc.text
    finally:
        F.SHIFT = saved


@pytest.mark.slow  # (JAX compiles: the default tier has 2 s for this file)
@pytest.mark.parametrize("dtype", DTYPES)
def test_spread_of_a_closure_slice(dtype) -> None:
    """``lambda x: f(x, *args[1:])`` over a closure tuple holding arrays (refused
    before) against JAX's same lambda."""
    x = X.astype(dtype)
    args = (None, np.array([1.0, 2.0, -1.0], dtype), dtype(0.3))
    ours, theirs = F.curry_rest(F.affine_loss, args), J.curry_rest(J.affine_loss, args)
    close(s2s.grad(ours)(x), jax.grad(theirs)(x), dtype)
    close(s2s.jvp(ours, (x,), (x,)), jax.jvp(theirs, (x,), (x,)), dtype)
    batch = np.stack([x, -x])
    close(s2s.vmap(ours)(batch), jax.vmap(theirs)(batch), dtype)
    close(s2s.jit(s2s.grad(ours), backend="jax")(x), jax.grad(theirs)(x), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_global_statement_that_only_reads(dtype) -> None:
    """``global SCALE`` in a function that only reads SCALE (refused before): the
    module's value at each call, against JAX; a ``global`` the function writes stays
    refused at its line."""
    saved = F.SCALE
    try:
        x = X.astype(dtype)
        g = s2s.grad(F.global_read)
        for scale in (3.0, 5.0):
            F.SCALE = J.SCALE = scale
            close(g(x), jax.grad(J.global_read)(x), dtype)
            close(s2s.jvp(F.global_read, (x,), (x,)), jax.jvp(J.global_read, (x,), (x,)), dtype)
        batch = np.stack([x, -2 * x])
        close(s2s.vmap(F.global_read)(batch), jax.vmap(J.global_read)(batch), dtype)
    finally:
        F.SCALE = J.SCALE = saved
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(F.global_write)(X)
    assert info.value.loc.file == F.__file__ and "global SCALE" in info.value.loc.text


MATCHES = [("match_activation", dict(kind="relu")), ("match_activation", dict(kind="gelu")),
           ("match_activation", dict(kind="other")), ("match_or_guard", dict(kind="tanh")),
           ("match_or_guard", dict(kind="sigmoid", deep=True)),
           ("match_or_guard", dict(kind=None)), ("match_or_guard", dict(kind="x"))]


@pytest.mark.slow  # (JAX compiles: the default tier has 2 s for this file)
@pytest.mark.parametrize("dtype", DTYPES)
def test_match_on_a_value(dtype) -> None:
    """``match kind: case "relu": ... case "a" | "b" if deep: ... case None: ...
    case _:`` (refused before): the ``if``/``elif`` chain it means, each case against
    JAX (grad, jvp, vmap) with the options passed as keywords."""
    x = np.array([0.3, -0.7, 1.2, -0.1], dtype)
    for name, kw in MATCHES:
        ours, theirs = getattr(F, name), getattr(J, name)
        close(s2s.grad(ours)(x, **kw), jax.grad(theirs)(x, **kw), dtype)
        close(s2s.jvp(lambda v: ours(v, **kw), (x,), (x,)),
              jax.jvp(lambda v: theirs(v, **kw), (x,), (x,)), dtype)
    batch = np.stack([x, -x])
    close(s2s.vmap(F.match_or_guard)(batch), jax.vmap(J.match_or_guard)(batch), dtype)


def test_match_reads_as_written_and_a_capture_runs() -> None:
    """The emitted code's comments quote the case's own lines; a capture pattern on a
    tuple argument (refused before) is decided per call's length, its first item
    compared where the code runs (match_patterns.py): central differences."""
    g = s2s.grad(F.match_activation)
    g(X)
    assert "# y = np.maximum(x, 0.0)" in g.source and "<s2s:" not in g.source
    for spec in ((), (("scale", 3.0),), (("shift", 1.0),), (("scale",),)):
        np.testing.assert_allclose(s2s.grad(F.match_capture)(X, *spec),
                                   central_grad(lambda v: F.match_capture(v, *spec), X),
                                   rtol=1e-6, atol=1e-8)


@pytest.mark.slow  # (JAX compiles: the default tier has 2 s for this file)
@pytest.mark.parametrize("dtype", DTYPES)
def test_try_finally_with_nothing_to_catch(dtype) -> None:
    """``try: A finally: B`` (refused before) is ``A`` then ``B``, in a loop too:
    grad, jvp and vmap against JAX; a ``return`` inside the ``try`` (which would run
    ``B`` on the way out) stays refused at the ``try``."""
    x = X.astype(dtype)
    for name in ("try_finally", "try_finally_in_loop"):
        ours, theirs = getattr(F, name), getattr(J, name)
        close(s2s.grad(ours)(x), jax.grad(theirs)(x), dtype)
        close(s2s.jvp(ours, (x,), (x,)), jax.jvp(theirs, (x,), (x,)), dtype)
        batch = np.stack([x, -x])
        # (vmap of a loop carrying a Python float `acc = 0.0` returns float64 for
        # float32 rows, where NumPy and JAX keep float32: a gap of the batched loop,
        # not of the `try`, in the report)
        close(s2s.vmap(ours)(batch), jax.vmap(theirs)(batch), dtype,
              check_dtype=name == "try_finally")
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(F.try_finally_return)(x)
    assert info.value.loc.file == F.__file__ and info.value.loc.text.strip() == "try:"
