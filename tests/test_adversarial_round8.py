"""Round 8 of adversarial probes (list splices, runtime-key function containers,
functools.reduce, function-valued parameters, the specializer's guards): each test is
a probe that found a wrong number or an internal exception, and fails without its fix.
Oracles: JAX on the same source (jax_twin), float64 and float32, or central
differences."""

from __future__ import annotations

import adversarial_round8_fns as F
import numpy as np
import pytest
from support import HAVE_JAX, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)


def _central(f, x, eps=1e-6):
    return np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(x.size)])


def _tol(dtype):
    return dict(rtol=1e-10, atol=1e-12) if dtype == np.float64 else dict(rtol=2e-5, atol=1e-6)


# ---- an item read before a loop that may run no iteration --------------------------------
# `s = 3.0 * y[0]` then `for k in range(1, len(y))`: the backward writes y[0]'s cotangent
# into the buffer the loop's backward filled, and a flag said whether the loop reached
# that buffer at all.  The write after the loop did not count, so with one element (no
# iteration) y's cotangent was dropped: grad(reduce_computed)([0.7]) gave [0.] where
# JAX gives [1.1796] (functools.reduce over a computed array is this loop), and
# grad(head_before_tail_loop)([0.7]) gave [0.] where it is [3.5388].

HEAD_FIRST = ["reduce_computed", "head_before_tail_loop", "head_before_while"]


def test_default_tier_an_item_read_before_a_loop_that_runs_no_iteration() -> None:
    for name in HEAD_FIRST[1:2]:
        f, g = getattr(F, name), s2s.grad(getattr(F, name))
        for x in (np.array([0.7]),):
            np.testing.assert_allclose(g(x), _central(f, x), rtol=1e-6, atol=1e-8)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", HEAD_FIRST[:2])  # (the `while`: JAX cannot)
def test_an_item_read_before_a_loop_against_jax(name, dtype) -> None:
    f, fj = getattr(F, name), getattr(J, name)
    g, h, jr = s2s.grad(f), s2s.hessian(f), s2s.jacrev(f)
    gj = s2s.jit(s2s.grad(f))
    for n in (1, 1, 1, 3, 1, 2, 1, 1, 1, 1):
        x = np.linspace(0.3, 0.9, n).astype(dtype)
        for ours, theirs in ((g, jax.grad), (h, jax.hessian), (jr, jax.jacrev), (gj, jax.grad)):
            np.testing.assert_allclose(ours(x), theirs(fj)(x), **_tol(dtype))
        xs = np.stack([x, -2 * x])
        np.testing.assert_allclose(s2s.vmap(g)(xs), jax.vmap(jax.grad(fj))(xs), **_tol(dtype))


# ---- a lambda that calls a function-valued parameter ------------------------------------
# The parameter's function is named `f_fn` in emitted code; the lambda, normalized on
# its own, looked that name up in its module, bound it to None, and its derivative
# replaced the caller's binding: TypeError: 'NoneType' object is not callable, raised
# from emitted code, for any function but NumPy's.

PARAM_FNS = ["calls_param_in_lambda", "reduce_calls_param"]


@pytest.mark.parametrize("name", [PARAM_FNS[0], pytest.param(PARAM_FNS[1],
                                                             marks=pytest.mark.slow)])
def test_a_lambda_calling_a_function_parameter(name) -> None:
    f, g = getattr(F, name), s2s.grad(getattr(F, name))
    x = np.array([0.3, -0.5, 0.9])
    for act in (F.make_scaled(2.0), F.make_cubed(0.5)):
        np.testing.assert_allclose(g(x, act), _central(lambda z: f(z, act), x),
                                   rtol=1e-6, atol=1e-8)


# ---- two lists copied from each other, their items' ranks unknown -----------------------
# jacrev batches the code over a basis, with ranks from a probe run; where the loop ran
# no iteration (n=2) the items' ranks were read from the list each is copied from, and
# back: RecursionError from vmap's rank inference.


@pytest.mark.slow  # (1 s: the vmap probe and its transform)
def test_jacrev_of_a_copy_loop_that_runs_no_iteration() -> None:
    jac = s2s.jacrev(F.copy_pop_loop)
    x = np.array([0.3, -0.5, 0.9, 0.2])
    np.testing.assert_array_equal(jac(x, 2), 2.0 * np.eye(4)[:2])  # (np.stack(x[:2]) * 2)


@pytest.mark.slow
def test_jacrev_of_a_copy_loop_against_jax() -> None:
    jac = s2s.jacrev(F.copy_pop_loop)
    x = np.array([0.3, -0.5, 0.9, 0.2])
    for n in (2, 2, 4, 3, 2):
        np.testing.assert_allclose(jac(x, n), jax.jacrev(J.copy_pop_loop)(x, n), rtol=1e-12)


# ---- an integer exponent saved on a loop's tape -----------------------------------------
# grad saves `i + 1` on its tape beside the arrays; forward mode over that code (the
# Hessian) gave the popped int a tangent, and `x ** (i + 1)`'s derivative in its
# exponent, 0 * log(x), was NaN at a negative x: hessian(loop_index_power) at
# [0.3, -0.5, 0.9] had a row of NaN where JAX gives diag(2 + 6x).


def test_hvp_through_a_taped_integer_exponent() -> None:
    g, x, v = s2s.grad(F.loop_index_power), np.array([0.3, -0.5, 0.9]), np.ones(3)
    np.testing.assert_allclose(s2s.jvp(g, (x,), (v,))[1], 2.0 + 6.0 * x, rtol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_taped_integer_exponent_against_jax(dtype) -> None:
    f, fj = F.loop_index_power, J.loop_index_power
    h, g = s2s.hessian(f), s2s.grad(f)
    for k in range(10):
        x = (np.array([0.3, -0.5, 0.9]) * (1 - 0.3 * k)).astype(dtype)
        np.testing.assert_allclose(h(x), jax.hessian(fj)(x), **_tol(dtype))
        v = np.eye(3, dtype=dtype)[k % 3]
        np.testing.assert_allclose(s2s.jvp(g, (x,), (v,))[1],
                                   jax.jvp(jax.grad(fj), (x,), (v,))[1], **_tol(dtype))


# ---- a dict filled in a loop over a dict argument's keys --------------------------------
# `out = {}; for k in p: out[k] = ...`: after the loop the frontend still read `out` as
# the empty literal it started as: len(out) was 0 and out.values() empty, so
# grad(dict_filled_then_counted)([0.3, -0.5, 0.9], {"a": 1.0, "b": 2.0}) gave [0, 0, 0]
# where JAX gives 2 + 2 * (1 + 4) x = [5, -3, 11], silently; list(out)[0] was refused as
# an index out of range of an empty list.

FILLED = ["dict_filled_then_counted", "dict_filled_then_listed"]
KEYS = [{"a": 1.0, "b": 2.0}, {"a": 1.0, "b": 2.0}, {"b": -1.0, "a": 0.5, "c": 3.0}, {"z": 2.0}]


def test_default_tier_a_dict_filled_in_a_loop() -> None:
    f = F.dict_filled_then_counted
    g = s2s.grad(f)
    x = np.array([0.3, -0.5, 0.9])
    for p in KEYS[1:3]:
        np.testing.assert_allclose(g(x, p), _central(lambda z: f(z, p), x),
                                   rtol=1e-6, atol=1e-8)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", FILLED)
def test_a_dict_filled_in_a_loop_against_jax(name, dtype) -> None:
    f, fj = getattr(F, name), getattr(J, name)
    x = np.array([0.3, -0.5, 0.9], dtype=dtype)
    for make in (s2s.grad, lambda f: s2s.jit(s2s.grad(f)),
                 lambda f: s2s.jit(s2s.grad(f), backend="jax")):
        g = make(f)
        for p in KEYS * 3:
            p = {k: np.asarray(v, dtype) for k, v in p.items()}
            np.testing.assert_allclose(g(x, p), jax.grad(fj)(x, p), **_tol(dtype))
    for p in KEYS:
        p = {k: np.asarray(v, dtype) for k, v in p.items()}
        np.testing.assert_allclose(s2s.jit(f)(x, p), fj(x, p), **_tol(dtype))


# ---- jacfwd and hessian of an input with no element -------------------------------------
# jacfwd batches the JVP over a basis of the input's size: none here, and vmap needs an
# example to run, so jacfwd(loop_over_items)(np.zeros(0)) raised EmptyStackError located
# at a line of emitted code (`<s2s:loop_over_items_jvp:...>`), where JAX gives a (0,)
# Jacobian (and hessian a (0, 0) one).


def test_jacfwd_of_an_empty_input() -> None:
    got = s2s.jacfwd(F.loop_over_items)(np.zeros(0))
    assert got.shape == (0,) and got.dtype == np.float64, (got.shape, got.dtype)


@pytest.mark.slow
def test_jacfwd_and_hessian_of_an_empty_input_against_jax() -> None:
    for x in (np.zeros(0), np.zeros((0, 2), np.float32)):
        for transform in (s2s.jacfwd, s2s.hessian):
            got = transform(F.loop_over_items)(x)
            expected = getattr(jax, transform.__name__)(J.loop_over_items)(x)
            assert got.shape == expected.shape and got.dtype == expected.dtype, (
                transform.__name__, got.shape, got.dtype, expected.shape, expected.dtype)


# ---- a Hessian whose output is a scalar for one input's shape only ----------------------
# hessian decided once, at its first call, whether the output is a scalar (then
# jacfwd(grad(f))) or not (jacfwd(jacrev(f)), JAX's layout): a later call with a
# matrix, whose output is a vector, raised TypeError "Gradient only defined for
# scalar-output functions" where JAX gives the (3, 2, 3) Hessian.


def test_hessian_decides_scalar_output_per_input_shape() -> None:
    h = s2s.hessian(F.cubes_down_axis0)
    x = np.array([0.3, -0.5])
    np.testing.assert_allclose(h(x), np.diag(6.0 * x), rtol=1e-12)
    m = np.array([[0.3, -0.5, 1.0], [0.2, 0.7, -1.1]])
    got = h(m)
    expected = np.zeros((3, 2, 3, 2, 3))  # (d out_j / d m_ab d m_cd: 6 m_ab where all meet)
    for j in range(3):
        for a in range(2):
            expected[j, a, j, a, j] = 6.0 * m[a, j]
    np.testing.assert_allclose(got, expected, rtol=1e-12)
