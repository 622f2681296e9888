"""scipy.stats distributions' mean, var, std and entropy (frozen in the function, at
module level, or called with the parameters): forms that spell each closed formula
with primitives, so derivatives are the formula's. Oracles: SciPy's own methods (the
values), central finite differences of them (the derivatives), and the NumPy backend
for the JAX backend."""

from __future__ import annotations

import numpy as np
import pytest

import s2s

pytest.importorskip("scipy.stats")
import stats_moment_fns as F  # noqa: E402
from support import HAVE_JAX, fd_grad  # noqa: E402

CASES = {
    "frozen_norm": (F.frozen_norm, (0.3, 1.5)),
    "unfrozen": (F.unfrozen, (-0.4, 0.8)),
    "shapes": (F.shapes, (2.5, 1.5, 4.5)),
    "poisson": (F.poisson_moments, (3.2,)),
    "module_frozen": (F.module_frozen, (0.7,)),
    "loc_free": (F.loc_free, (0.7,)),  # (constant parameters folded: scale=1.0)
}


@pytest.mark.parametrize("key", sorted(CASES))
def test_values_are_scipys_and_gradients_its_finite_differences(key) -> None:
    fn, args = CASES[key]
    argnums = tuple(range(len(args)))
    value, grads = s2s.value_and_grad(fn, argnums=argnums)(*args)
    np.testing.assert_allclose(value, fn(*args), rtol=1e-12)
    for i, g in zip(argnums, grads):
        np.testing.assert_allclose(g, fd_grad(fn, args, i)[0], rtol=1e-6, atol=1e-9)


def test_values_change_between_calls_and_outside_the_domain_are_nan() -> None:
    g = s2s.value_and_grad(F.frozen_norm, argnums=(0, 1))
    for call in range(1, 11):
        loc, scale = 0.1 * call, 0.5 + 0.2 * call
        value, grads = g(loc, scale)
        if call in (1, 3, 10):
            np.testing.assert_allclose(value, F.frozen_norm(loc, scale), rtol=1e-12)
            np.testing.assert_allclose(grads[1], fd_grad(F.frozen_norm, (loc, scale), 1)[0],
                                       rtol=1e-6)
    with np.errstate(invalid="ignore"):
        assert np.isnan(s2s.value_and_grad(F.frozen_norm, argnums=1)(0.0, -1.0)[0])
        assert np.isnan(F.frozen_norm(0.0, -1.0))


def test_arrays_of_parameters_jvp_and_vmap() -> None:
    scale = np.array([0.5, 1.0, 2.0])
    np.testing.assert_allclose(s2s.grad(F.vector_scales)(scale),
                               fd_grad(F.vector_scales, (scale,), 0)[0], rtol=1e-6)
    _, tangent = s2s.jvp(F.vector_scales, (scale,), (np.ones(3),))
    np.testing.assert_allclose(tangent, np.sum(fd_grad(F.vector_scales, (scale,), 0)[0]),
                               rtol=1e-6)
    scales = np.array([[0.5, 1.0, 2.0], [1.5, 0.3, 0.9]])
    np.testing.assert_allclose(s2s.vmap(F.vector_scales)(scales),
                               [F.vector_scales(s) for s in scales], rtol=1e-12)


def test_poisson_entropy_is_refused_at_the_users_line() -> None:
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(F.poisson_entropy)(3.0)
    text = str(info.value)
    assert "no closed form" in text and "stats_moment_fns.py" in text, text


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="the JAX backend")
def test_on_the_jax_backend() -> None:
    args = (2.5, 1.5, 4.5)
    got = s2s.jit(s2s.grad(F.shapes, argnums=(0, 1, 2)), backend="jax")(*args)
    for g, w in zip(got, s2s.grad(F.shapes, argnums=(0, 1, 2))(*args)):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-10)


# ---- rvs: a random draw, a constant to derivatives, drawn afresh at each call --------


def test_rvs_is_a_draw_constant_to_derivatives() -> None:
    from scipy import stats

    value, (g_loc, g_scale) = s2s.value_and_grad(F.frozen_draws, argnums=(0, 1))(0.3, 1.5)
    draws = stats.norm(0.3, 1.5).rvs(size=3, random_state=7)  # (the same seed: the same)
    other = stats.gamma.rvs(2.0, size=2, random_state=3)
    np.testing.assert_allclose(value, F.frozen_draws(0.3, 1.5), rtol=1e-12)
    np.testing.assert_allclose(g_loc, np.sum(draws), rtol=1e-12)
    np.testing.assert_allclose(g_scale, np.sum(other), rtol=1e-12)
    np.testing.assert_allclose(s2s.grad(F.module_frozen_draws)(2.0),
                               np.sum(F.D.rvs(size=4, random_state=5)), rtol=1e-12)


def test_rvs_without_a_seed_draws_afresh_each_call_and_under_vmap() -> None:
    from scipy import stats

    grad = s2s.grad(F.fresh_draws)
    seen = []
    for call in range(1, 11):
        np.random.seed(call)
        got = grad(1.0)
        np.random.seed(call)
        np.testing.assert_allclose(got, np.sum(stats.norm(0.0, 1.0).rvs(size=2)), rtol=1e-12)
        seen.append(float(got))
    assert len(set(seen)) == 10
    np.random.seed(0)
    got = s2s.vmap(grad)(np.array([0.3, 0.5]))  # (one draw per example, as a loop)
    np.random.seed(0)
    want = np.sum(stats.norm(0.0, 1.0).rvs(size=(2, 2)), axis=1)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    # a literal seed: each example draws what one call draws
    np.testing.assert_allclose(s2s.vmap(s2s.grad(F.module_frozen_draws))(np.array([0.3, 0.5])),
                               [np.sum(F.D.rvs(size=4, random_state=5))] * 2, rtol=1e-12)


@pytest.mark.skipif(not HAVE_JAX, reason="the JAX backend")
def test_rvs_on_the_jax_backend_is_refused_at_the_users_line() -> None:
    with pytest.raises(s2s.TransformError) as info:
        s2s.jit(s2s.grad(F.frozen_draws), backend="jax")(0.3, 1.5)
    text = str(info.value)
    assert "rvs" in text and "stats_moment_fns.py" in text and "<s2s:" not in text, text


# ---- a frozen distribution passed to a function ----------------------------------------

X3 = np.array([0.1, 0.5, 2.0])


@pytest.mark.parametrize("fn, args", [(F.frozen_into_helper, (X3, 0.3, 1.5)),
                                      (F.gamma_into_helper, (X3 + 1.0, 2.5))])
def test_frozen_distribution_passed_to_a_helper(fn, args) -> None:
    """``def helper(d, x): return d.logpdf(x)`` given ``d = norm(loc, scale)``: the
    callee's plan passes the parameters, so derivatives reach them (finite
    differences of the function run by SciPy); values change between calls."""
    argnums = tuple(range(len(args)))
    g = s2s.value_and_grad(fn, argnums=argnums)
    for call in (1, 2, 3):
        now = tuple(a * (1 + 0.1 * call) for a in args)
        value, grads = g(*now)
        np.testing.assert_allclose(value, fn(*now), rtol=1e-12)
        for i, got in zip(argnums, grads):
            np.testing.assert_allclose(got, fd_grad(fn, now, i)[0], rtol=1e-6, atol=1e-9)


@pytest.mark.slow
def test_frozen_distribution_passed_to_a_helper_under_jvp_vmap_hessian() -> None:
    fn, args = F.frozen_into_helper, (X3, 0.3, 1.5)
    _, tangent = s2s.jvp(fn, args, (np.zeros(3), 1.0, 0.0))
    np.testing.assert_allclose(tangent, fd_grad(fn, args, 1)[0], rtol=1e-6)
    xs, locs, scales = np.stack([X3, 2 * X3]), np.array([0.3, 0.4]), np.array([1.5, 1.0])
    np.testing.assert_allclose(s2s.vmap(fn)(xs, locs, scales),
                               [fn(*a) for a in zip(xs, locs, scales)], rtol=1e-12)
    grad_scale = s2s.grad(fn, argnums=2)
    np.testing.assert_allclose(s2s.hessian(fn, argnums=2)(*args),
                               fd_grad(grad_scale, args, 2)[0], rtol=1e-5)


@pytest.mark.skipif(not HAVE_JAX, reason="the JAX backend")
def test_frozen_distribution_passed_to_a_helper_refused_on_jax_at_the_users_line() -> None:
    with pytest.raises(s2s.TransformError) as info:
        s2s.jit(s2s.grad(F.frozen_into_helper, argnums=1), backend="jax")(X3, 0.3, 1.5)
    text = str(info.value)
    assert "passed to `helper`" in text and "stats_moment_fns.py" in text, text
