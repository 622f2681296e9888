"""scipy.special and scipy.stats beyond the rule table (issue 26.3): the derivatives s2s
refuses, values where JAX's own derivative is off or NaN (checked by finite
differences instead), second order, vmap over keyword operands, the JAX backend, and
standalone emitted modules that call SciPy's helpers.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import s2s
from support import HAVE_JAX, compiled, fd_grad, jax

sp = pytest.importorskip("scipy.special")
stats = pytest.importorskip("scipy.stats")

if HAVE_JAX:
    import jax.numpy as jnp
    import jax.scipy.special as jsp
    import jax.scipy.stats as jst

needs_jax = pytest.mark.skipif(not HAVE_JAX, reason="JAX is not installed")

X3 = np.array([0.4, 1.3, 2.7])


# ---- refused: derivatives s2s has no rule for -------------------------------------------


def in_a(a):
    return np.sum(sp.gammainc(a, X3))


def in_a_upper(a):
    return np.sum(sp.gammaincc(a, X3))


def in_order(n):
    return np.sum(sp.polygamma(n, X3))


def gamma_cdf_in_a(a):
    return np.sum(stats.gamma.cdf(X3, a))


def beta_sf_in_b(b):
    return np.sum(stats.beta.sf(X3 / 3, 2.0, b))


def chi2_logcdf_in_df(df):
    return np.sum(stats.chi2.logcdf(X3, df, scale=2.0))


def poisson_in_k(k):
    return np.sum(stats.poisson.pmf(k, 2.0))


REFUSED = [(in_a, "scipy.special.gammainc", "a"), (in_a_upper, "scipy.special.gammaincc", "a"),
           (in_order, "scipy.special.polygamma", "n"),
           (gamma_cdf_in_a, "scipy.stats.gamma.cdf", "a"),
           (beta_sf_in_b, "scipy.stats.beta.sf", "b"),
           (chi2_logcdf_in_df, "scipy.stats.chi2.logcdf", "df"),
           (poisson_in_k, "scipy.stats.poisson.pmf", "k")]


@pytest.mark.parametrize("fn, prim, param", REFUSED, ids=[r[0].__name__ for r in REFUSED])
def test_a_derivative_without_a_rule_is_refused_not_zero(fn, prim, param) -> None:
    with pytest.raises(s2s.NonDifferentiableError, match=f"`{prim}` has no derivative "
                       f"rule in `{param}`"):
        s2s.grad(fn)(1.5)
    with pytest.raises(s2s.NonDifferentiableError, match=f"in `{param}`"):
        s2s.jvp(fn, (1.5,), (1.0,))


def in_x(x):
    return np.sum(sp.gammainc(2.0, x) + stats.gamma.cdf(x, 1.5))


def test_the_same_functions_differentiate_in_x() -> None:
    np.testing.assert_allclose(s2s.grad(in_x)(X3), fd_grad(in_x, (X3,), 0)[0], rtol=1e-7)


# ---- where JAX's derivative is NaN or inexact: finite differences -----------------------


def gammainc_one(x):
    return sp.gammainc(1.0, x)


def test_gammainc_at_zero_for_a_one_is_the_density_one() -> None:
    """x^0 exp(-x) / gamma(1) = 1 at x = 0 (JAX: NaN, from 0 * log 0)."""
    assert s2s.grad(gammainc_one)(0.0) == 1.0
    h = 1e-7
    assert abs((sp.gammainc(1.0, h) - sp.gammainc(1.0, 0.0)) / h - 1.0) < 1e-6


def betaln_sum(a, b):
    return np.sum(sp.betaln(a, b))


def test_betaln_with_large_arguments_matches_finite_differences() -> None:
    """JAX's d/da betaln is 1e-8 relative off for large a + b; SciPy's digammas are not."""
    a, b = np.array([60.3, 15.3, 120.0]), np.array([70.2, 18.2, 3.5])
    got = s2s.grad(betaln_sum, argnums=(0, 1))(a, b)
    h = 1e-3  # fourth-order central differences, elementwise (betaln is elementwise)
    for i, (da, db) in enumerate(((h, 0.0), (0.0, h))):
        def at(k):
            return sp.betaln(a + k * da, b + k * db)
        fd = (-at(2) + 8 * at(1) - 8 * at(-1) + at(-2)) / (12 * h)
        np.testing.assert_allclose(got[i], fd, rtol=1e-9)


def norm_tails(x):
    return np.sum(stats.norm.logcdf(x) + stats.norm.logsf(-x))


def test_norm_log_tails_far_out_match_finite_differences() -> None:
    x = np.array([-30.0, -12.0, -8.0])
    np.testing.assert_allclose(s2s.grad(norm_tails)(x),
                               fd_grad(norm_tails, (x,), 0, eps=1e-5)[0], rtol=1e-8)


def outside(x):
    return np.sum(stats.chi2.pdf(x, 3.0) + stats.beta.pdf(x, 2.0, 3.0)
                  + stats.expon.pdf(x) + stats.gamma.pdf(x, 2.0) + stats.beta.cdf(x, 2.0, 3.0))


def outside_log(x):
    return np.sum(stats.chi2.logpdf(x, 3.0) + stats.beta.logpdf(x, 2.0, 3.0)
                  + stats.gamma.logpdf(x, 2.5) + stats.expon.logpdf(x))


def test_outside_the_support_the_derivative_is_zero() -> None:
    """The density is 0 there (the log density -inf): constant, so 0 (JAX gives NaN
    for chi2's and beta's logpdf below 0)."""
    x = np.array([-1.0, -0.5, -3.0])
    assert np.all(s2s.grad(outside)(x) == 0)
    assert np.all(s2s.grad(outside_log)(x) == 0)
    assert np.all(s2s.grad(outside)(x + 5.0) != 0)  # (beta's pdf is 0 above 1: not all)


# ---- second order, vmap over keyword operands, float32 ----------------------------------


def second(x):
    return np.sum(sp.gamma(x) + sp.i1(x - 1.0) * sp.i0e(x) + sp.gammainc(2.0, x)
                  + stats.norm.logcdf(x, 0.5, 2.0) + stats.t.logpdf(x, 3.0)
                  + stats.cauchy.logsf(x, scale=1.5) + sp.polygamma(1, x))


def second_jax(x):
    return jnp.sum(jsp.gamma(x) + jsp.i1(x - 1.0) * jsp.i0e(x) + jsp.gammainc(2.0, x)
                   + jst.norm.logcdf(x, 0.5, 2.0) + jst.t.logpdf(x, 3.0)
                   + jst.cauchy.logsf(x, scale=1.5) + jsp.polygamma(1, x))


@pytest.mark.slow
@needs_jax
def test_hessian_matches_jax() -> None:
    np.testing.assert_allclose(s2s.hessian(second)(X3), compiled(jax.hessian(second_jax))(X3),
                               rtol=1e-9, atol=1e-12)


def shapes(df):
    return np.sum(stats.t.logpdf(X3, df, 0.1, 1.2) + stats.gamma.logpdf(X3, df)
                  + stats.chi2.pdf(X3, df) + stats.beta.logpdf(X3 / 3, df, 2.0))


def shapes_jax(df):
    return jnp.sum(jst.t.logpdf(X3, df, 0.1, 1.2) + jst.gamma.logpdf(X3, df)
                   + jst.chi2.pdf(X3, df) + jst.beta.logpdf(X3 / 3, df, 2.0))


@pytest.mark.slow
@needs_jax
def test_hessian_in_shape_parameters_matches_jax() -> None:
    np.testing.assert_allclose(s2s.hessian(shapes)(2.5), compiled(jax.hessian(shapes_jax))(2.5),
                               rtol=1e-9)


def by_loc(loc, scale):
    return np.sum(stats.laplace.logpdf(X3, loc=loc, scale=scale)
                  + stats.logistic.cdf(X3, scale=scale, loc=loc))


def by_loc_jax(loc, scale):
    return jnp.sum(jst.laplace.logpdf(X3, loc=loc, scale=scale)
                   + jst.logistic.cdf(X3, scale=scale, loc=loc))


@needs_jax
def test_vmap_over_loc_and_scale_keywords_matches_jax() -> None:
    locs, scales = np.array([-0.3, 0.2, 0.9, 1.4]), np.array([0.5, 1.0, 2.0, 3.0])
    got = s2s.vmap(s2s.grad(by_loc, argnums=(0, 1)))(locs, scales)
    expected = compiled(jax.vmap(jax.grad(by_loc_jax, argnums=(0, 1))))(locs, scales)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-10)


def mixed(x):
    return np.sum(sp.rgamma(x) + sp.erfcinv(x / 3) + sp.multigammaln(x + 2.0, 3)
                  + sp.beta(x, 2.0) + stats.poisson.cdf(3.0, x) + stats.expon.logsf(x, -1.0))


def mixed_jax(x):
    return jnp.sum(1 / jsp.gamma(x) - jsp.ndtri(x / 6) / jnp.sqrt(2.0)
                   + jsp.multigammaln(x + 2.0, 3) + jsp.beta(x, 2.0)
                   + jst.poisson.cdf(3.0, x) + jst.expon.logsf(x, -1.0))


@needs_jax
def test_float32_keeps_its_dtype_and_matches_jax() -> None:
    x = X3.astype(np.float32)
    got = s2s.grad(mixed)(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, compiled(jax.grad(mixed_jax))(x), rtol=2e-5)


@pytest.mark.slow
@needs_jax
def test_the_jax_backend_runs_the_helpers_on_jax_scipy() -> None:
    g = s2s.jit(s2s.grad(mixed), backend="jax")
    np.testing.assert_allclose(np.asarray(g(X3)), s2s.grad(mixed)(X3), rtol=1e-10)
    h = s2s.jit(s2s.grad(second), backend="jax")
    np.testing.assert_allclose(np.asarray(h(X3)), s2s.grad(second)(X3), rtol=1e-10)


# ---- emitted code: the helpers' import path, and standalone modules ---------------------


def test_emitted_code_imports_the_helpers_from_s2s_runtime() -> None:
    text = s2s.source(s2s.grad(mixed))
    assert "from s2s.runtime import" in text and "special_rgamma" in text
    assert "stats_poisson_pmf(" in text  # poisson.cdf's derivative: -pmf(floor(k), mu)


@pytest.mark.slow
def test_a_standalone_emitted_module_copies_the_scipy_helpers(tmp_path) -> None:
    from s2s.tools.cli import main

    src = tmp_path / "user_stats.py"
    src.write_text(textwrap.dedent("""
        import numpy as np
        from scipy import special, stats


        def loss(x):
            return np.sum(special.gamma(x) + stats.norm.logcdf(x, 0.5, 2.0))
    """))
    out = tmp_path / "loss_grad.py"
    assert main(["emit", f"{src}:loss", "-o", str(out)]) == 0
    text = out.read_text()
    assert "def special_gamma(" in text and "def stats_norm_logcdf(" in text
    assert "def _stats(" in text  # the helpers' own helper comes too
    run = subprocess.run(
        [sys.executable, "-c", "import numpy as np, loss_grad; "
         "print(repr(loss_grad.loss_grad(np.array([0.4, 1.3, 2.7])).tolist()))"],
        cwd=tmp_path, capture_output=True, text=True,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert run.returncode == 0, run.stderr
    np.testing.assert_allclose(eval(run.stdout), fd_grad(
        lambda x: np.sum(sp.gamma(x) + stats.norm.logcdf(x, 0.5, 2.0)), (X3,), 0)[0],
        rtol=1e-7)


# ---- logsumexp's weights b= ---------------------------------------------------------------


def lse_b(a, b):
    return np.sum(sp.logsumexp(a, axis=1, b=b) * np.array([1.0, -2.0]))


def lse_b_jax(a, b):
    return jnp.sum(jsp.logsumexp(a, axis=1, b=b) * jnp.array([1.0, -2.0]))


def test_logsumexp_in_b_where_b_is_zero_matches_finite_differences() -> None:
    """d/db = exp(a - ans) there too (JAX masks a where b == 0, and gives 0)."""
    a = np.array([[0.3, -1.0, 0.8], [1.2, 0.1, -0.4]])
    b = np.array([[1.0, 0.0, 2.0], [0.0, 0.5, 1.0]])
    got = s2s.grad(lse_b, argnums=(0, 1))(a, b)
    for i in (0, 1):
        np.testing.assert_allclose(got[i], fd_grad(lse_b, (a, b), i)[0], rtol=1e-7, atol=1e-9)


@pytest.mark.slow
@needs_jax
@pytest.mark.parametrize("in_axes", [(None, 0), (0, None), (0, 0)])
def test_vmap_of_logsumexp_over_its_weights_matches_jax(in_axes) -> None:
    r = np.random.default_rng(3)
    a = r.normal(size=(4, 2, 3) if in_axes[0] == 0 else (2, 3))
    b = r.uniform(0.3, 2.0, size=(4, 3) if in_axes[1] == 0 else (3,))
    np.testing.assert_allclose(s2s.vmap(lse_b, in_axes=in_axes)(a, b),
                               jax.vmap(lse_b_jax, in_axes=in_axes)(a, b), rtol=1e-12)
    got = s2s.vmap(s2s.grad(lse_b, argnums=(0, 1)), in_axes=in_axes)(a, b)
    expected = jax.vmap(jax.grad(lse_b_jax, argnums=(0, 1)), in_axes=in_axes)(a, b)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-10)


# ---- logsumexp(..., return_sign=True) -------------------------------------------------------


def lse_sign(a, b):
    out, sign = sp.logsumexp(a, axis=1, b=b, return_sign=True)
    return np.sum(out * sign * np.array([1.0, -2.0]))


def lse_sign_jax(a, b):
    out, sign = jsp.logsumexp(a, axis=1, b=b, return_sign=True)
    return jnp.sum(out * sign * jnp.array([1.0, -2.0]))


def lse_sign_flag(a, flag):
    return sp.logsumexp(a, return_sign=flag)[0]


@pytest.mark.slow
@needs_jax
@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_logsumexp_with_its_sign_matches_jax(backend) -> None:
    """Weights of both signs (a sum of each sign), under grad (the 1st and 3rd call),
    vmap of grad and jit; the sign passes no derivative."""
    r = np.random.default_rng(4)
    a = r.normal(size=(2, 3))
    b = np.array([[1.0, -2.0, 0.5], [-0.3, 0.2, -0.1]])
    want = jax.grad(lse_sign_jax, argnums=(0, 1))(a, b)
    f = s2s.jit(s2s.grad(lse_sign, argnums=(0, 1)), backend=backend)
    for _ in range(3):
        for g, e in zip(f(a, b), want):
            np.testing.assert_allclose(g, e, rtol=1e-10)
    xs = np.stack([a, -a])
    for g, e in zip(s2s.vmap(s2s.grad(lse_sign, argnums=(0, 1)), in_axes=(0, None))(xs, b),
                    jax.vmap(jax.grad(lse_sign_jax, argnums=(0, 1)), in_axes=(0, None))(xs, b)):
        np.testing.assert_allclose(g, e, rtol=1e-10)


def test_logsumexp_return_sign_must_be_written_as_a_constant() -> None:
    with pytest.raises(s2s.TransformError, match="return_sign") as err:
        s2s.grad(lse_sign_flag)(np.ones(3), True)
    assert "lse_sign_flag" in str(err.value) and "test_scipy_rules.py" in str(err.value)


# ---- frozen distributions -----------------------------------------------------------------

FROZEN_NORM = stats.norm(0.5, 2.0)
FROZEN_T = stats.t(3.0, scale=1.5)


def frozen_loss(x, loc, scale):
    d = stats.norm(loc, scale)  # frozen in the function: loc and scale differentiable
    e = stats.gamma(2.5, scale=scale)
    total = d.logpdf(x) + 2.0 * d.cdf(x) + d.logsf(x) + e.logpdf(np.abs(x) + 0.1)
    return np.sum(total + FROZEN_NORM.pdf(x) + FROZEN_T.logpdf(x)) + d.ppf(0.3)


def frozen_loss_jax(x, loc, scale):
    total = (jst.norm.logpdf(x, loc, scale) + 2.0 * jst.norm.cdf(x, loc, scale)
             + jst.norm.logsf(x, loc, scale) + jst.gamma.logpdf(jnp.abs(x) + 0.1, 2.5,
                                                                scale=scale))
    return jnp.sum(total + jst.norm.pdf(x, 0.5, 2.0) + jst.t.logpdf(x, 3.0, scale=1.5)) + \
        jst.norm.ppf(0.3, loc, scale)


@needs_jax
@pytest.mark.parametrize("backend", ["numpy", pytest.param("jax", marks=pytest.mark.slow)])
def test_frozen_distributions_match_jax(backend) -> None:
    """Frozen in the function (loc and scale differentiable) and at module level
    (constants), on the 1st and 3rd call, under vmap over loc, and jit."""
    x, loc, scale = np.array([0.3, -1.0, 2.0]), 0.2, 1.3
    locs = np.array([0.1, 0.5])

    def references(x, loc, scale, locs):  # (one compiled program: JAX's eager calls are slow)
        return (jax.grad(frozen_loss_jax, argnums=(0, 1, 2))(x, loc, scale),
                jax.vmap(jax.grad(frozen_loss_jax, argnums=1), in_axes=(None, 0, None))(
                    x, locs, scale))

    want, want_v = jax.jit(references, compiler_options={
        "xla_backend_optimization_level": 0})(x, loc, scale, locs)
    f = s2s.jit(s2s.grad(frozen_loss, argnums=(0, 1, 2)), backend=backend)
    for _ in range(3):
        for g, e in zip(f(x, loc, scale), want):
            np.testing.assert_allclose(g, e, rtol=1e-10)
    np.testing.assert_allclose(
        s2s.vmap(s2s.grad(frozen_loss, argnums=1), in_axes=(None, 0, None))(x, locs, scale),
        want_v, rtol=1e-10)


def frozen_module_level(x):
    return np.sum(FROZEN_NORM.logpdf(x))


def test_a_distribution_frozen_at_module_level_is_read_again_when_rebound() -> None:
    global FROZEN_NORM
    x = np.array([0.3, -1.0])
    g = s2s.grad(frozen_module_level)
    np.testing.assert_allclose(g(x), -(x - 0.5) / 4.0)
    old = FROZEN_NORM
    try:
        FROZEN_NORM = stats.norm(-1.0, 0.5)
        for _ in range(3):
            np.testing.assert_allclose(g(x), -(x + 1.0) / 0.25)
    finally:
        FROZEN_NORM = old


def frozen_mean(loc):
    return stats.norm(loc, 1.0).mean()


def frozen_other_method(loc):
    return stats.norm(loc, 1.0).median()


FROZEN_ARRAY = stats.norm(np.zeros(3), 1.0)


def frozen_array_parameters(x):
    return np.sum(FROZEN_ARRAY.logpdf(x))


def frozen_keyword_call(x, loc):
    return np.sum(stats.norm(loc).logpdf(x=x))


@pytest.mark.parametrize("fn, args, what", [
    (frozen_other_method, (0.3,), "`median` of a frozen norm has no rules"),
    (frozen_array_parameters, (np.ones(3),), "parameters that are not numbers"),
    (frozen_keyword_call, (np.ones(3), 0.3), "takes its one argument here"),
], ids=["method", "array_parameters", "keyword"])
def test_frozen_distributions_refuse_at_the_users_line(fn, args, what) -> None:
    with pytest.raises(s2s.TransformError) as err:
        s2s.grad(fn)(*args)
    assert what in str(err.value) and "test_scipy_rules.py" in str(err.value), str(err.value)
