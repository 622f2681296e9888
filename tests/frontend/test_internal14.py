"""Composed transforms of issue 23's internal14 pass (``internal14_fns.py``) that
raised errors from emitted code or gave float64 where NumPy and JAX give float32:
vmap of ``np.polyval(np.polyder(c), t)`` where ``c`` has one coefficient (AxisError
from emitted code: np.polyval of no coefficients is ``np.zeros_like(t)``, which lost
the batch axis); second derivatives of a function consuming a generator
(``sum(gen(x))``, ``for t in gen(x)``): ``jacrev(jacrev(f))``, ``jacfwd(jacrev(f))``
and ``vmap(hessian(f))`` where a call's generator yields nothing ("rank unknown" at an
emitted line: the branch in a function called in a loop, never run by the probe, now
raises OtherPath where a call runs it, and that call's code is made), ``jacrev(f)``
whose generator yields on one call and not on a later one of the same shape
(IndexError from emitted code: the batched callee read the batch size off the first
item of an empty list; the caller now passes it), ``jacrev(grad(f))`` of ``for t in
gen(x): s = s + t * t`` ("may share memory" at an emitted line: the list cotangent a
callee's VJP returns, whose items the code writes, is copied first);
``vmap(grad(f))`` of a loop nested in another, its count set by the outer index, with
a ``break`` on a batched value (refused at an emitted line, a tape's pop: now at the
user's loop, as JAX's vmap refuses the batched ``break``).

Expected values: closed forms and central differences in the default tier; JAX on the
same source, float64 and float32, under ``-m slow``."""

from __future__ import annotations

from functools import partial

import internal14_fns as F  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX, assert_close_to, jax_twin

import s2s

DTYPES = [np.float64, np.float32]
close = partial(assert_close_to, f64=1e-9, f32=2e-4, scale_atol=True)


# ---- np.polyval of np.polyder of a constant, batched ------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_vmap_of_grad_of_polyval_of_a_constants_derivative(dtype) -> None:
    """AxisError from emitted code before: the batched np.polyval of no coefficients
    (``np.polyder`` of ``[a]``) gave ``t``'s shape without the batch axis.  Closed
    form: ``sum(0 * t + a ** 2)``; more coefficients against JAX under ``-m slow``."""
    t = np.array([0.5, -1.0, 2.0, 0.25], dtype)
    a = np.array([[0.5], [-2.0], [1.5]], dtype)
    got = s2s.vmap(s2s.grad(F.polyder_at), in_axes=(0, None))(a, t)
    assert got.shape == (3, 1) and got.dtype == dtype
    np.testing.assert_allclose(got, 2.0 * a * t.size, rtol=1e-6)


POLY_TRANSFORMS = {
    "vmap": (s2s.vmap, "vmap"),
    "vmap_grad": (lambda f: s2s.vmap(s2s.grad(f)), "vmap_grad"),
    "vmap_jacfwd": (lambda f: s2s.vmap(s2s.jacfwd(f)), "vmap_jacfwd"),
    "vmap_hessian": (lambda f: s2s.vmap(s2s.hessian(f)), "vmap_hessian"),
    "jit_jax_vmap_grad": (lambda f: s2s.jit(s2s.vmap(s2s.grad(f)), backend="jax"),
                          "vmap_grad"),
}


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("how", list(POLY_TRANSFORMS))
def test_batched_polyder_of_few_coefficients_against_jax(how, dtype) -> None:
    """One, two and three coefficients per example (the default ``t``), three calls."""
    import jax

    twin = jax_twin(F).polyder_of_constant
    make, oracle = POLY_TRANSFORMS[how]
    want_of = {"vmap": jax.vmap(twin), "vmap_grad": jax.vmap(jax.grad(twin)),
               "vmap_jacfwd": jax.vmap(jax.jacfwd(twin)),
               "vmap_hessian": jax.vmap(jax.hessian(twin))}[oracle]
    t = make(F.polyder_of_constant)
    for n in (1, 2, 3, 1):
        c = np.random.default_rng(n).normal(size=(3, n)).astype(dtype)
        close(t(c), want_of(c), dtype)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 0)], ids=str)
def test_batched_polyder_with_a_given_point_against_jax(in_axes, dtype) -> None:
    import jax

    twin = jax_twin(F).polyder_at
    t = s2s.vmap(s2s.grad(F.polyder_at), in_axes=in_axes)
    want_of = jax.vmap(jax.grad(twin), in_axes=in_axes)
    for n in (1, 2, 1):
        c = np.random.default_rng(n).normal(size=(3, n)).astype(dtype)
        x = np.random.default_rng(10 + n).normal(size=(3, 4)).astype(dtype)
        args = (c if in_axes[0] == 0 else c[0], x if in_axes[1] == 0 else x[0])
        close(t(*args), want_of(*args), dtype)


# ---- second derivatives of generator consumers --------------------------------------

SIZES = (4, 3, 5, 3, 4, 6, 3, 5, 4, 3)
COMPARED = (0, 1, 2, 4, 9)  # (calls 1, 2, 3, 5 and 10)


def _x(k: int, dtype=np.float64, big: bool = True) -> np.ndarray:
    r = np.random.default_rng(300 + k)
    x = r.normal(size=SIZES[k]) * 1.5
    if big and k % 3 == 1:  # (calls 2, 5 and 8 run the generator's yield)
        x[0] += 12.0
    return x.astype(dtype)


def test_jacrev_of_a_generator_yielding_then_not_at_one_shape() -> None:
    """IndexError "list index out of range" from emitted code before: the code made
    for the call whose generator yields read the batch size off the first item of the
    list of the generator's items in the call after, which yields nothing.  Closed
    form: ``cos(x) + 2 x [x > 10]``."""
    t = s2s.jacrev(F.generator_plus_sines)
    for x in ([12.5, 2.0, 1.0], [0.5, 2.0, 1.0]):
        x = np.array(x)
        np.testing.assert_allclose(t(x), np.cos(x) + 2 * x * (x > 10), rtol=1e-13)


@pytest.mark.slow  # (1.6 s of CPU: jacrev of jacrev)
def test_jacrev_of_jacrev_of_a_generator_that_yields_nothing_first() -> None:
    """"the rank of `prod_2_bar` is unknown" at an emitted line before.  Closed form:
    ``diag(-sin(x) + 2 [x > 10])``."""
    t = s2s.jacrev(s2s.jacrev(F.generator_plus_sines))
    for x in ([0.5, 2.0, 1.0, -0.3], [11.0, 2.0, 12.0], [0.5, 2.0, 1.0]):
        x = np.array(x)
        np.testing.assert_allclose(t(x), np.diag(-np.sin(x) + 2.0 * (x > 10)),
                                   rtol=1e-12, atol=1e-15)


GENERATOR_SECOND = {
    "jacrev_jacrev": (lambda f: s2s.jacrev(s2s.jacrev(f)), "jacrev2"),
    "jacfwd_jacrev": (lambda f: s2s.jacfwd(s2s.jacrev(f)), "hessian"),
    "jacrev_grad": (lambda f: s2s.jacrev(s2s.grad(f)), "hessian"),
    "hessian": (s2s.hessian, "hessian"),
    "jit_jacrev_jacrev": (lambda f: s2s.jit(s2s.jacrev(s2s.jacrev(f))), "jacrev2"),
}
GENERATOR_FNS = ("generator_plus_sines", "loop_over_generator", "tail_generator_sum",
                 "tail_generator_loop", "generator_loop_squared")
# (each function under jacrev(jacrev) and jacfwd(jacrev); the others under the rest)
GENERATOR_CASES = [(name, how) for name in GENERATOR_FNS for how in GENERATOR_SECOND
                   if how in ("jacrev_jacrev", "jacfwd_jacrev") or name in (
                       "generator_plus_sines", "generator_loop_squared")]


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name,how", GENERATOR_CASES)
def test_generator_second_derivatives_against_jax(name, how, dtype) -> None:
    """Ten calls, lengths changing, the generator yielding on some (``_x``); the 1st,
    2nd, 3rd, 5th and 10th against JAX."""
    import jax

    twin = getattr(jax_twin(F), name)
    make, oracle = GENERATOR_SECOND[how]
    want_of = jax.hessian(twin) if oracle == "hessian" else jax.jacrev(jax.jacrev(twin))
    t = make(getattr(F, name))
    for k in range(10):
        x = _x(k, dtype)
        got = t(x)
        if k in COMPARED:
            close(got, want_of(x), dtype)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
def test_vmap_of_hessian_of_a_generator_against_jax() -> None:
    """"the rank of `prod` is unknown" at an emitted line before (the first call's
    generator yields nothing).  One whose items depend on a batched test (``if v >
    10``) stays refused at the user's line, as JAX's vmap refuses it."""
    import jax

    twin = jax_twin(F).tail_generator_sum
    t = s2s.vmap(s2s.hessian(F.tail_generator_sum))
    for k in (1, 0, 2, 3):
        xs = np.stack([_x(k), _x(k) * 0.5])
        close(t(xs), np.stack([jax.hessian(twin)(x) for x in xs]), np.float64)
    with pytest.raises(s2s.TransformError) as info:
        s2s.vmap(s2s.hessian(F.generator_plus_sines))(np.stack([_x(0), _x(0) + 12.0]))
    assert "internal14_fns.py" in str(info.value) and "yield v * v" in str(info.value)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle and the backend")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_jit_of_hessian_of_a_generator_on_jax(dtype) -> None:
    """A generator without a test on values runs (JAX's jit of hessian too); one with
    ``if v > 10`` is refused at that line, as ``jax.jit(jax.hessian(f))`` refuses it
    (TracerBoolConversionError)."""
    import jax

    twins = jax_twin(F)
    t = s2s.jit(s2s.hessian(F.tail_generator_loop), backend="jax")
    for k in range(4):
        x = _x(k, dtype)
        close(t(x), jax.hessian(twins.tail_generator_loop)(x), dtype)
    with pytest.raises(s2s.TransformError) as info:
        s2s.jit(s2s.hessian(F.generator_plus_sines), backend="jax")(_x(0, dtype))
    assert "internal14_fns.py" in str(info.value) and "if v > 10:" in str(info.value)


# ---- a batched break in an inner loop whose count the outer index sets ---------------


@pytest.mark.slow  # (1.5 s of CPU: vmap of a gradient of nested loops)
def test_vmap_of_grad_of_an_inner_break_is_refused_at_the_users_loop() -> None:
    """"cannot pair each pop with the push" at the emitted ``(n_iter,) = tape_3.pop()``
    before; now at the user's loop that the backward sweep's pop is in (JAX's vmap
    refuses the batched `break`: TracerBoolConversionError)."""
    xs = np.array([[0.5, 2.0, 1.0, -0.3], [0.2, -0.3, 0.4, 1.5]])
    with pytest.raises(s2s.TransformError) as info:
        s2s.vmap(s2s.grad(F.inner_break_from_outer_index))(xs)
    text = str(info.value)
    assert "internal14_fns.py" in text and "for i in range(len(x)):" in text, text
    assert "<s2s:" not in text and "Python loop" in text
