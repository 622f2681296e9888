"""Composed transforms of issue 23's internal13 pass (``internal13_fns.py``) that
raised internal errors or refusals located at emitted code: a Hessian of a function
summing a generator that yields nothing on the first call ("rank unknown" at an
emitted line; vmap's code is now made for the calls that run no iteration of such a
loop or branch, and made again when a call runs one); ``jacrev(jacrev(f))`` of a
``zip(x, x[1:])`` loop (IndexError "too many indices" from vmap's probe: the
re-lowered gradient bound None before the loop over the value an ``if`` gave its
cotangent) and of a hand-unrolled if/elif min/max fold ("may share memory" at an
emitted line); ``vmap(jacrev(partial(f, n=2.0)))`` ("`power_sum` names different
objects" at an emitted line).  A user's name bound on one path, then read in a loop,
is refused at the user's line (was a TypeError from emitted code).

Expected values: closed forms in the default tier; JAX on the same source, float64
and float32, calls 1, 3 and 10 with changing values and lengths, under ``-m slow``."""

from __future__ import annotations

import functools
from functools import partial

import internal13_fns as F  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX, assert_close_to, jax_twin

import s2s

DTYPES = [np.float64, np.float32]
close = partial(assert_close_to, f64=1e-9, f32=2e-4, scale_atol=True)
COMPARED = (0, 2, 9)  # (the 1st, 3rd and 10th calls)
SIZES = (4, 3, 5, 3, 4, 6, 3, 5, 4, 3)


def _x(k: int, dtype=np.float64, big: bool = False) -> np.ndarray:
    r = np.random.default_rng(300 + k)
    x = r.normal(size=SIZES[k]) * 1.5
    if big and k % 3 == 1:  # (some calls run the generator's yield)
        x[0] += 12.0
    return x.astype(dtype)


# ---- the default tier: closed forms, no JAX -----------------------------------------


def test_vmap_of_jacrev_of_a_partial_with_a_float_keyword() -> None:
    """``vmap(jacrev(partial(f, n=2.0)))`` was refused at an emitted line: the
    Jacobian's code called the wrapper s2s makes for the partial by the name the
    wrapper itself calls the function by (`power_sum`)."""
    xs = np.array([[0.5, 2.0, -1.0], [1.0, -0.3, 0.2]])
    got = s2s.vmap(s2s.jacrev(functools.partial(F.power_sum, n=2.0)))(xs)
    np.testing.assert_allclose(got, 2.0 * xs, rtol=1e-12)


def test_a_name_bound_on_one_path_then_read_in_a_loop_is_refused_at_its_line() -> None:
    """``if a: y = ...`` then ``for ...: y = y + x``: s2s bound ``y = None`` before the
    loop (over the value the `if` gave it): grad raised TypeError from emitted code."""
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(F.bound_on_one_path_then_looped)(np.array([0.5, 2.0]), True)
    assert "internal13_fns.py" in str(info.value) and "y = y + x" in str(info.value)
    assert "may be used before it is assigned" in str(info.value)


# ---- slow: each composition, closed forms and JAX ------------------------------------


@pytest.mark.slow  # (1.5 s of CPU: a Hessian of a generator's loop)
def test_hessian_of_a_generator_that_yields_nothing_on_the_first_call() -> None:
    """The first call's generator yields nothing: "rank unknown" at an emitted line."""
    t = s2s.hessian(F.generator_plus_sines)
    x = np.array([0.5, 2.0, 1.0, -0.3])
    np.testing.assert_allclose(t(x), np.diag(-np.sin(x)), rtol=1e-12, atol=1e-15)
    x = np.array([11.0, 2.0, 12.0])  # (a later call runs the yield)
    np.testing.assert_allclose(t(x), np.diag(-np.sin(x) + [2.0, 0.0, 2.0]), rtol=1e-12)


@pytest.mark.slow  # (2 s of CPU: jacrev of jacrev)
def test_jacrev_of_jacrev_of_a_zip_window_loop() -> None:
    """IndexError "too many indices" from vmap's probe, before: sum of (b - a) ** 2
    over zip(x, x[1:]) has the tridiagonal Hessian 2 * (D^T D)."""
    x = np.array([0.5, 2.0, 1.0, -0.3])
    d = np.diff(np.eye(4), axis=0)
    np.testing.assert_allclose(s2s.jacrev(s2s.jacrev(F.window_squares))(x),
                               2.0 * d.T @ d, atol=1e-12)


@pytest.mark.slow  # (2 s of CPU: jacrev of jacrev)
def test_jacrev_of_jacrev_of_an_unrolled_min_max_fold() -> None:
    """"`x_bar_9` may share memory" at an emitted line, before: lo * hi's Hessian
    is 1 at (argmin, argmax) and (argmax, argmin)."""
    x = np.array([0.5, 2.0, 1.0])
    want = np.zeros((3, 3))
    want[0, 1] = want[1, 0] = 1.0
    np.testing.assert_allclose(s2s.jacrev(s2s.jacrev(F.unrolled_min_max))(x), want)


SECOND = {
    "hessian": (s2s.hessian, "hessian"),
    "jacrev_jacrev": (lambda f: s2s.jacrev(s2s.jacrev(f)), "jacrev2"),
    "jacfwd_jacrev": (lambda f: s2s.jacfwd(s2s.jacrev(f)), "hessian"),
    "jacrev_grad": (lambda f: s2s.jacrev(s2s.grad(f)), "hessian"),
    "jit_jacrev_jacrev": (lambda f: s2s.jit(s2s.jacrev(s2s.jacrev(f))), "jacrev2"),
    "jit_hessian": (lambda f: s2s.jit(s2s.hessian(f)), "hessian"),
    "jit_jax_hessian": (lambda f: s2s.jit(s2s.hessian(f), backend="jax"), "hessian"),
}
# (a generator yielding nothing under jacrev(jacrev), jacfwd(jacrev), jit of those or
# jit(hessian, backend="jax"): still "rank unknown", those batched codes are read by
# another transform: one code for every call, not one per path)
GENERATED = ("hessian", "jacrev_grad", "jit_hessian")
CASES = [(name, h) for name in ("generator_plus_sines", "loop_over_generator")
         for h in GENERATED] + [
    ("window_squares", h) for h in SECOND] + [
    ("window_early_return", h) for h in SECOND if "jax" not in h] + [
    ("unrolled_min_max", h) for h in SECOND if "jax" not in h]


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name,how", CASES)
def test_second_derivatives_against_jax(name, how, dtype) -> None:
    import jax

    twin = getattr(jax_twin(F), name)
    make, oracle = SECOND[how]
    want_of = jax.hessian(twin) if oracle == "hessian" else jax.jacrev(jax.jacrev(twin))
    t = make(getattr(F, name))
    for k in range(10):
        x = _x(k, dtype, big=name != "unrolled_min_max")
        got = t(x)
        if k in COMPARED:
            close(got, want_of(x), dtype)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("how", ["jacrev", "jacfwd", "grad", "hessian"])
def test_vmap_of_a_partial_against_jax(how, dtype) -> None:
    import jax

    twin = jax_twin(F)
    t = s2s.vmap(getattr(s2s, how)(functools.partial(F.power_sum, n=2.0)))
    oracle = jax.vmap(getattr(jax, how)(functools.partial(twin.power_sum, n=2.0)))
    for k in range(10):
        xs = np.stack([_x(k, dtype), _x(k, dtype) * 0.5])
        got = t(xs)
        if k in COMPARED:
            close(got, oracle(xs), dtype)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("how", ["grad", "hessian"])
def test_vmap_of_a_nested_loop_with_a_break_per_example(how) -> None:
    """JAX's vmap refuses the batched `break` (TracerBoolConversionError); s2s's
    batched loop runs each example to its own `break`: the oracle is JAX per example."""
    import jax

    twin = jax_twin(F)
    xs = np.array([[0.5, 2.0, 1.0, -0.3], [0.2, 0.3, 0.4, 1.5], [0.1, 0.2, 0.3, 0.4]])
    got = s2s.vmap(getattr(s2s, how)(F.nested_break))(xs)
    want = np.stack([getattr(jax, how)(twin.nested_break)(x) for x in xs])
    close(got, want, np.float64)
