"""The emitted code's helpers for SciPy: ``scipy.special``, ``scipy.stats``,
``scipy.linalg`` and ``scipy.signal`` (and ``gradient_bar``, for NumPy's gradient).

Part of the same ABI as :mod:`s2s.runtime`, which imports every name here (emitted code
says ``from s2s.runtime import special_erf``); they live apart so that runtime.py keeps
to its size.  Each helper is one call into SciPy, imported on first use, so importing
s2s never imports SciPy.  On the JAX backend this module's text runs with
``jax.scipy`` in SciPy's place (:mod:`s2s.backends.jax_runtime_scipy`), so a helper
calls only what both libraries have: ``rgamma`` and ``erfcinv``, missing from
``jax.scipy.special``, are spelled with functions both have.
"""

from __future__ import annotations

import numpy as np


def special_erf(x):
    """``scipy.special.erf``."""
    from scipy import special

    return special.erf(x)


def special_erfc(x):
    """``scipy.special.erfc``."""
    from scipy import special

    return special.erfc(x)


def special_erfinv(x):
    """``scipy.special.erfinv``."""
    from scipy import special

    return special.erfinv(x)


def special_gammaln(x):
    """``scipy.special.gammaln``."""
    from scipy import special

    return special.gammaln(x)


def special_digamma(x):
    """``scipy.special.digamma``."""
    from scipy import special

    return special.digamma(x)


def special_polygamma(n, x):
    """``scipy.special.polygamma``: the n-th derivative of digamma."""
    from scipy import special

    return special.polygamma(n, x)


def special_expit(x):
    """``scipy.special.expit``."""
    from scipy import special

    return special.expit(x)


def special_logit(x):
    """``scipy.special.logit``."""
    from scipy import special

    return special.logit(x)


def special_xlogy(x, y):
    """``scipy.special.xlogy``."""
    from scipy import special

    return special.xlogy(x, y)


def special_xlog1py(x, y):
    """``scipy.special.xlog1py``."""
    from scipy import special

    return special.xlog1py(x, y)


def special_logsumexp(a, axis=None, b=None, keepdims=False):
    """``scipy.special.logsumexp`` (without ``return_sign``)."""
    from scipy import special

    return special.logsumexp(a, axis=axis, b=b, keepdims=keepdims)


def special_logsumexp_sign(a, axis=None, b=None, keepdims=False):
    """``scipy.special.logsumexp(..., return_sign=True)``: log|sum(b exp(a))| and the
    sum's sign, as a tuple."""
    from scipy import special

    out, sign = special.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=True)
    return out, sign


def special_softmax(x, axis=None):
    """``scipy.special.softmax``."""
    from scipy import special

    return special.softmax(x, axis=axis)


def special_log_softmax(x, axis=None):
    """``scipy.special.log_softmax``."""
    from scipy import special

    return special.log_softmax(x, axis=axis)


def special_gamma(x):
    """``scipy.special.gamma``."""
    from scipy import special

    return special.gamma(x)


def special_rgamma(x):
    """``scipy.special.rgamma``, ``1 / gamma(x)``: the sign times
    ``exp(-gammaln(x))``, 0 at the poles (jax.scipy.special has no rgamma)."""
    from scipy import special

    sign = special.gammasgn(x)
    return np.where(np.isnan(sign), 0.0, sign) * np.exp(-special.gammaln(x))


def special_gammasgn(x):
    """``scipy.special.gammasgn``: the sign of ``gamma(x)``."""
    from scipy import special

    return special.gammasgn(x)


def special_multigammaln(a, d):
    """``scipy.special.multigammaln``: ``d`` an integer."""
    from scipy import special

    return special.multigammaln(a, d)


def special_beta(a, b):
    """``scipy.special.beta``."""
    from scipy import special

    return special.beta(a, b)


def special_betaln(a, b):
    """``scipy.special.betaln``."""
    from scipy import special

    return special.betaln(a, b)


def special_gammainc(a, x):
    """``scipy.special.gammainc``: the regularized lower incomplete gamma."""
    from scipy import special

    return special.gammainc(a, x)


def special_gammaincc(a, x):
    """``scipy.special.gammaincc``: ``1 - gammainc(a, x)``."""
    from scipy import special

    return special.gammaincc(a, x)


def special_erfcinv(x):
    """``scipy.special.erfcinv``: ``-ndtri(x / 2) / sqrt(2)`` (jax.scipy.special
    has no erfcinv)."""
    from scipy import special

    return -special.ndtri(0.5 * x) / np.sqrt(2.0)


def special_ndtr(x):
    """``scipy.special.ndtr``: the standard normal's cdf."""
    from scipy import special

    return special.ndtr(x)


def special_log_ndtr(x):
    """``scipy.special.log_ndtr``: the log of the standard normal's cdf (accurate in
    the lower tail)."""
    from scipy import special

    return special.log_ndtr(x)


def special_i0(x):
    """``scipy.special.i0``."""
    from scipy import special

    return special.i0(x)


def special_i1(x):
    """``scipy.special.i1``."""
    from scipy import special

    return special.i1(x)


def special_i0e(x):
    """``scipy.special.i0e``: ``exp(-abs(x)) * i0(x)``."""
    from scipy import special

    return special.i0e(x)


def special_i1e(x):
    """``scipy.special.i1e``: ``exp(-abs(x)) * i1(x)``."""
    from scipy import special

    return special.i1e(x)


__all__ = [
    "special_erf", "special_erfc", "special_erfinv", "special_gammaln",
    "special_digamma", "special_polygamma", "special_expit", "special_logit",
    "special_xlogy", "special_xlog1py", "special_logsumexp", "special_logsumexp_sign",
    "special_softmax", "special_log_softmax", "special_gamma", "special_rgamma",
    "special_gammasgn", "special_multigammaln", "special_beta", "special_betaln",
    "special_gammainc", "special_gammaincc", "special_erfcinv", "special_ndtr",
    "special_log_ndtr", "special_i0", "special_i1", "special_i0e", "special_i1e",
]


# ---- scipy.stats: one helper per distribution's method (jax.scipy.stats has these) ----


def _stats():
    """``scipy.stats``, imported on first use."""
    from scipy import stats

    return stats


def stats_norm_pdf(x, loc=0, scale=1):
    return _stats().norm.pdf(x, loc, scale)


def stats_norm_logpdf(x, loc=0, scale=1):
    return _stats().norm.logpdf(x, loc, scale)


def stats_norm_cdf(x, loc=0, scale=1):
    return _stats().norm.cdf(x, loc, scale)


def stats_norm_logcdf(x, loc=0, scale=1):
    return _stats().norm.logcdf(x, loc, scale)


def stats_norm_sf(x, loc=0, scale=1):
    return _stats().norm.sf(x, loc, scale)


def stats_norm_logsf(x, loc=0, scale=1):
    return _stats().norm.logsf(x, loc, scale)


def stats_t_pdf(x, df, loc=0, scale=1):
    return _stats().t.pdf(x, df, loc, scale)


def stats_t_logpdf(x, df, loc=0, scale=1):
    return _stats().t.logpdf(x, df, loc, scale)


def stats_gamma_pdf(x, a, loc=0, scale=1):
    return _stats().gamma.pdf(x, a, loc, scale)


def stats_gamma_logpdf(x, a, loc=0, scale=1):
    return _stats().gamma.logpdf(x, a, loc, scale)


def stats_gamma_cdf(x, a, loc=0, scale=1):
    return _stats().gamma.cdf(x, a, loc, scale)


def stats_gamma_logcdf(x, a, loc=0, scale=1):
    return _stats().gamma.logcdf(x, a, loc, scale)


def stats_gamma_sf(x, a, loc=0, scale=1):
    return _stats().gamma.sf(x, a, loc, scale)


def stats_gamma_logsf(x, a, loc=0, scale=1):
    return _stats().gamma.logsf(x, a, loc, scale)


def stats_beta_pdf(x, a, b, loc=0, scale=1):
    return _stats().beta.pdf(x, a, b, loc, scale)


def stats_beta_logpdf(x, a, b, loc=0, scale=1):
    return _stats().beta.logpdf(x, a, b, loc, scale)


def stats_beta_cdf(x, a, b, loc=0, scale=1):
    return _stats().beta.cdf(x, a, b, loc, scale)


def stats_beta_logcdf(x, a, b, loc=0, scale=1):
    return _stats().beta.logcdf(x, a, b, loc, scale)


def stats_beta_sf(x, a, b, loc=0, scale=1):
    return _stats().beta.sf(x, a, b, loc, scale)


def stats_beta_logsf(x, a, b, loc=0, scale=1):
    return _stats().beta.logsf(x, a, b, loc, scale)


def stats_chi2_pdf(x, df, loc=0, scale=1):
    return _stats().chi2.pdf(x, df, loc, scale)


def stats_chi2_logpdf(x, df, loc=0, scale=1):
    return _stats().chi2.logpdf(x, df, loc, scale)


def stats_chi2_cdf(x, df, loc=0, scale=1):
    return _stats().chi2.cdf(x, df, loc, scale)


def stats_chi2_logcdf(x, df, loc=0, scale=1):
    return _stats().chi2.logcdf(x, df, loc, scale)


def stats_chi2_sf(x, df, loc=0, scale=1):
    return _stats().chi2.sf(x, df, loc, scale)


def stats_chi2_logsf(x, df, loc=0, scale=1):
    return _stats().chi2.logsf(x, df, loc, scale)


def stats_expon_pdf(x, loc=0, scale=1):
    return _stats().expon.pdf(x, loc, scale)


def stats_expon_logpdf(x, loc=0, scale=1):
    return _stats().expon.logpdf(x, loc, scale)


def stats_expon_cdf(x, loc=0, scale=1):
    return _stats().expon.cdf(x, loc, scale)


def stats_expon_logcdf(x, loc=0, scale=1):
    return _stats().expon.logcdf(x, loc, scale)


def stats_expon_sf(x, loc=0, scale=1):
    return _stats().expon.sf(x, loc, scale)


def stats_expon_logsf(x, loc=0, scale=1):
    return _stats().expon.logsf(x, loc, scale)


def stats_laplace_pdf(x, loc=0, scale=1):
    return _stats().laplace.pdf(x, loc, scale)


def stats_laplace_logpdf(x, loc=0, scale=1):
    return _stats().laplace.logpdf(x, loc, scale)


def stats_laplace_cdf(x, loc=0, scale=1):
    return _stats().laplace.cdf(x, loc, scale)


def stats_logistic_pdf(x, loc=0, scale=1):
    return _stats().logistic.pdf(x, loc, scale)


def stats_logistic_logpdf(x, loc=0, scale=1):
    return _stats().logistic.logpdf(x, loc, scale)


def stats_logistic_cdf(x, loc=0, scale=1):
    return _stats().logistic.cdf(x, loc, scale)


def stats_logistic_sf(x, loc=0, scale=1):
    return _stats().logistic.sf(x, loc, scale)


def stats_cauchy_pdf(x, loc=0, scale=1):
    return _stats().cauchy.pdf(x, loc, scale)


def stats_cauchy_logpdf(x, loc=0, scale=1):
    return _stats().cauchy.logpdf(x, loc, scale)


def stats_cauchy_cdf(x, loc=0, scale=1):
    return _stats().cauchy.cdf(x, loc, scale)


def stats_cauchy_logcdf(x, loc=0, scale=1):
    return _stats().cauchy.logcdf(x, loc, scale)


def stats_cauchy_sf(x, loc=0, scale=1):
    return _stats().cauchy.sf(x, loc, scale)


def stats_cauchy_logsf(x, loc=0, scale=1):
    return _stats().cauchy.logsf(x, loc, scale)


def stats_norm_ppf(q, loc=0, scale=1):
    return _stats().norm.ppf(q, loc, scale)


def stats_norm_isf(q, loc=0, scale=1):
    return _stats().norm.isf(q, loc, scale)


def stats_logistic_ppf(q, loc=0, scale=1):
    return _stats().logistic.ppf(q, loc, scale)


def stats_logistic_isf(q, loc=0, scale=1):
    return _stats().logistic.isf(q, loc, scale)


def stats_cauchy_ppf(q, loc=0, scale=1):
    return _stats().cauchy.ppf(q, loc, scale)


def stats_cauchy_isf(q, loc=0, scale=1):
    return _stats().cauchy.isf(q, loc, scale)


def stats_expon_ppf(q, loc=0, scale=1):
    return _stats().expon.ppf(q, loc, scale)


def stats_frozen(dist, *params):
    """``scipy.stats.<dist>(*params)``, a frozen distribution (its methods, called in
    the function, read the parameters themselves; JAX has no frozen ones: there, the
    parameters)."""
    from scipy import stats

    made = getattr(stats, dist)
    return made(*params) if callable(made) else params


def stats_poisson_pmf(k, mu, loc=0):
    return _stats().poisson.pmf(k, mu, loc)


def stats_poisson_logpmf(k, mu, loc=0):
    return _stats().poisson.logpmf(k, mu, loc)


def stats_poisson_cdf(k, mu, loc=0):
    return _stats().poisson.cdf(k, mu, loc)


__all__ += [
    "stats_frozen",
    "stats_norm_pdf",
    "stats_norm_logpdf",
    "stats_norm_cdf",
    "stats_norm_logcdf",
    "stats_norm_sf",
    "stats_norm_logsf",
    "stats_norm_ppf",
    "stats_norm_isf",
    "stats_logistic_ppf",
    "stats_logistic_isf",
    "stats_cauchy_ppf",
    "stats_cauchy_isf",
    "stats_expon_ppf",
    "stats_t_pdf",
    "stats_t_logpdf",
    "stats_gamma_pdf",
    "stats_gamma_logpdf",
    "stats_gamma_cdf",
    "stats_gamma_logcdf",
    "stats_gamma_sf",
    "stats_gamma_logsf",
    "stats_beta_pdf",
    "stats_beta_logpdf",
    "stats_beta_cdf",
    "stats_beta_logcdf",
    "stats_beta_sf",
    "stats_beta_logsf",
    "stats_chi2_pdf",
    "stats_chi2_logpdf",
    "stats_chi2_cdf",
    "stats_chi2_logcdf",
    "stats_chi2_sf",
    "stats_chi2_logsf",
    "stats_expon_pdf",
    "stats_expon_logpdf",
    "stats_expon_cdf",
    "stats_expon_logcdf",
    "stats_expon_sf",
    "stats_expon_logsf",
    "stats_laplace_pdf",
    "stats_laplace_logpdf",
    "stats_laplace_cdf",
    "stats_logistic_pdf",
    "stats_logistic_logpdf",
    "stats_logistic_cdf",
    "stats_logistic_sf",
    "stats_cauchy_pdf",
    "stats_cauchy_logpdf",
    "stats_cauchy_cdf",
    "stats_cauchy_logcdf",
    "stats_cauchy_sf",
    "stats_cauchy_logsf",
    "stats_poisson_pmf",
    "stats_poisson_logpmf",
    "stats_poisson_cdf",
]


def stats_multivariate_normal_logpdf(x, mean, cov):
    """``scipy.stats.multivariate_normal.logpdf`` for x (..., d), mean (d,), cov (d, d),
    computed here as jax.scipy.stats' is: a size-1 axis of x stays (SciPy's drops it)."""
    r = x - mean
    sol = np.squeeze(np.linalg.solve(cov, np.expand_dims(r, -1)), -1)
    logdet = np.linalg.slogdet(cov)[1]
    d = np.shape(cov)[-1]
    return -0.5 * (np.sum(r * sol, axis=-1) + logdet + d * np.log(2 * np.pi))


def stats_multivariate_normal_pdf(x, mean, cov):
    """``scipy.stats.multivariate_normal.pdf``: ``exp`` of the logpdf above."""
    return np.exp(stats_multivariate_normal_logpdf(x, mean, cov))


__all__ += ["stats_multivariate_normal_logpdf", "stats_multivariate_normal_pdf"]


# ---- NumPy's remaining functions (runtime.py is full): np.gradient's transpose ---------


def gradient_bar(cot, f, *varargs, axis=None, edge_order=1):
    """Cotangent of ``f`` in ``np.gradient(f, *varargs, axis=axis,
    edge_order=edge_order)`` along one axis with a scalar spacing: the transpose of its
    difference stencil (central inside; one-sided of order ``edge_order`` at the ends).
    ``axis=None``, ``f`` of several axes: ``cot[k]`` is axis k's, their transposes add."""
    if axis is None and np.ndim(f) != 1:  # (a spacing for all, or one per axis)
        h = [varargs[k if len(varargs) > 1 else 0:][:1] for k in range(np.ndim(f))]
        return sum(gradient_bar(cot[k], f, *h[k], axis=k, edge_order=edge_order)
                   for k in range(np.ndim(f)))
    axis = 0 if axis is None else axis
    if len(varargs) > 1:
        raise ValueError("s2s differentiates np.gradient along one axis at a time, with "
                         "one spacing")
    if varargs and np.ndim(varargs[0]) != 0:  # coordinates: the stencil's matrix, transposed
        n = np.shape(cot)[axis]
        if edge_order == 1:  # (JAX's gradient takes no edge_order: the JAX backend)
            stencil = np.gradient(np.eye(n), varargs[0], axis=0)
        else:
            stencil = np.gradient(np.eye(n), varargs[0], axis=0, edge_order=edge_order)
        bar = np.tensordot(np.moveaxis(np.asarray(cot), axis, -1), stencil, axes=(-1, 0))
        return np.moveaxis(bar, -1, axis).astype(np.result_type(cot, f), copy=False)
    g = np.moveaxis(np.asarray(cot), axis, 0)
    if varargs:
        g = g / varargs[0]
    bar = np.zeros(np.shape(g), np.result_type(g, f))
    half = g[1:-1] / 2
    bar[:-2] -= half
    bar[2:] += half
    if edge_order == 1:
        bar[0] -= g[0]
        bar[1] += g[0]
        bar[-2] -= g[-1]
        bar[-1] += g[-1]
    else:
        bar[0] -= 1.5 * g[0]
        bar[1] += 2 * g[0]
        bar[2] -= 0.5 * g[0]
        bar[-3] += 0.5 * g[-1]
        bar[-2] -= 2 * g[-1]
        bar[-1] += 1.5 * g[-1]
    return np.moveaxis(bar, 0, axis)


def gradient_part(cot, k):
    """Axis k's of batched per-axis cotangents: a caller's tuple, or s2s's (B, n, ...)."""
    return cot[k] if isinstance(cot, (tuple, list)) else cot[:, k]


def sign_turn(x, t):
    """The derivative along ``t`` of |x|'s derivative conj(x) / |x|: zero for real x (a
    sign is piecewise constant); for complex x, -1j conj(x) Im(conj(x) t) / |x|^3, 0 at
    x = 0.  Linear in ``t``, and its own transpose."""
    if not np.iscomplexobj(x):
        return np.zeros(np.broadcast_shapes(np.shape(x), np.shape(t)), np.result_type(x, t))
    m = np.abs(x)
    safe = np.where(m == 0, 1.0, m)
    return np.where(m == 0, 0.0, -1j * np.conj(x) * np.imag(np.conj(x) * t) / safe**3)


def atleast_nd(a, ndim):
    """``a`` with axes of length 1 put in front until it has ``ndim`` axes, as
    ``np.block`` makes each block (``np.atleast_3d`` puts them elsewhere)."""
    return np.reshape(a, (1,) * max(ndim - np.ndim(a), 0) + np.shape(a))


__all__ += ["gradient_bar", "gradient_part", "sign_turn", "atleast_nd"]


# ---- scipy.linalg and scipy.signal: one call each (jax.scipy has them: the JAX
# backend runs these with jax.scipy's), and the padding that undoes a convolution's mode


def linalg_solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False,
                            overwrite_b=False, check_finite=True):
    """``scipy.linalg.solve_triangular`` (never overwriting ``b``)."""
    from scipy import linalg

    return linalg.solve_triangular(a, b, trans=trans, lower=lower,
                                   unit_diagonal=unit_diagonal)


def linalg_expm(a):
    """``scipy.linalg.expm``."""
    from scipy import linalg

    return linalg.expm(a)


def linalg_sqrtm(a):
    """``scipy.linalg.sqrtm``: the principal square root (real where SciPy finds one)."""
    from scipy import linalg

    return linalg.sqrtm(a)


def linalg_cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """The factor of ``scipy.linalg.cho_factor(a, lower)`` (its first result; the
    other triangle holds ``a``'s entries, as LAPACK leaves them)."""
    from scipy import linalg

    return linalg.cho_factor(a, lower=lower)[0]


def linalg_cho_solve(c, b, lower=False, overwrite_b=False, check_finite=True):
    """``scipy.linalg.cho_solve((c, lower), b)`` (never overwriting ``b``)."""
    from scipy import linalg

    return linalg.cho_solve((c, lower), b)


def linalg_solve_sylvester(a, b, q):
    """``scipy.linalg.solve_sylvester``: x with ``a @ x + x @ b = q``."""
    from scipy import linalg

    return linalg.solve_sylvester(a, b, q)


def signal_convolve(in1, in2, mode="full", method="auto"):
    """``scipy.signal.convolve``."""
    from scipy import signal

    return signal.convolve(in1, in2, mode=mode, method=method)


def signal_fftconvolve(in1, in2, mode="full", axes=None):
    """``scipy.signal.fftconvolve``: over ``axes``, broadcasting over the others."""
    from scipy import signal

    return signal.fftconvolve(in1, in2, mode=mode, axes=axes)


def _conv_widths(shape, in1, in2, mode, axes):
    """For each axis of ``shape``: what a convolution's ``mode`` cut from the full
    result at its start and its end (nothing along an axis not convolved)."""
    if axes is None:
        axes = range(len(shape))
    elif not isinstance(axes, (tuple, list)):
        axes = (axes,)
    convolved = [a % len(shape) for a in axes]
    widths = []
    for k in range(len(shape)):
        n1, n2 = np.shape(in1)[k], np.shape(in2)[k]
        if k not in convolved or mode == "full":
            widths.append((0, 0))
        elif mode == "same":
            widths.append(((n2 - 1) // 2, n2 - 1 - (n2 - 1) // 2))
        else:  # valid: the part where one input covers the other
            widths.append((min(n1, n2) - 1, min(n1, n2) - 1))
    return widths


def conv_pad(cot, in1, in2, mode="full", axes=None):
    """A convolution's cotangent in ``mode`` placed in the full result's shape (zeros
    where the mode cut): the operands' cotangents are then 'valid' convolutions."""
    return np.pad(cot, _conv_widths(np.shape(cot), in1, in2, mode, axes))


def conv_crop(cot, in1, in2, mode="full", axes=None):
    """The part of a full convolution's ``cot`` that ``mode`` keeps (conv_pad's
    transpose)."""
    widths = _conv_widths(np.shape(cot), in1, in2, mode, axes)
    return cot[tuple(slice(lo, n - hi) for (lo, hi), n in zip(widths, np.shape(cot)))]


__all__ += ["linalg_solve_triangular", "linalg_expm", "linalg_sqrtm", "linalg_cho_factor",
            "linalg_cho_solve", "linalg_solve_sylvester", "signal_convolve",
            "signal_fftconvolve", "conv_pad", "conv_crop"]


def linalg_solve_banded(ab, b, lower=0, upper=0, overwrite_ab=False, overwrite_b=False,
                        check_finite=True):
    """``scipy.linalg.solve_banded((lower, upper), ab, b)`` (never overwriting).  JAX
    has no banded solver: on the JAX backend (where ``linalg`` is jax.scipy.linalg) the
    band is made a dense matrix and solved as one."""
    from scipy import linalg

    if hasattr(linalg, "solve_banded"):
        return linalg.solve_banded((lower, upper), ab, b)
    return np.linalg.solve(banded_dense(ab, lower, upper), b)


def banded_dense(x, lower, upper):
    """The (..., n, n) matrix whose band ``x`` (..., lower + upper + 1, n) stores, as
    scipy.linalg.solve_banded reads it: ``a[i, j] = x[upper + i - j, j]``."""
    n = np.shape(x)[-1]
    i, j = np.indices((n, n))
    row = upper + i - j
    inside = (row >= 0) & (row <= lower + upper)
    return np.where(inside, x[..., np.clip(row, 0, lower + upper), j], 0.0)


def dense_banded(x, lower, upper):
    """The band storage of a (..., n, n) matrix's band (banded_dense's transpose: the
    entries outside the band are left out)."""
    n = np.shape(x)[-1]
    r, j = np.indices((lower + upper + 1, n))
    i = j + r - upper
    inside = (i >= 0) & (i < n)
    return np.where(inside, x[..., np.clip(i, 0, n - 1), j], 0.0)


def insert_bars(cot, arr, obj, values, axis=None, batched=False):
    """Cotangents of ``arr`` and ``values`` in ``np.insert(arr, obj, values, axis)``:
    each element of ``cot`` goes back to the element it came from (a value NumPy
    broadcast to several places gets their sum).  ``arr`` and ``values`` give only
    shapes.  ``batched``: each has a batch axis in front, each example inserted on its
    own (the batch axis moved last, where NumPy's reshaping of ``values`` leaves it)."""
    cot = np.asarray(cot)
    n_arr, n_values = np.size(arr), np.size(values)
    from_arr = np.reshape(np.arange(n_arr), np.shape(arr))
    from_values = -1 - np.reshape(np.arange(n_values), np.shape(values))
    if batched:
        if axis is None:
            from_arr = np.reshape(from_arr, (np.shape(arr)[0], -1))
        src = np.moveaxis(np.insert(np.moveaxis(from_arr, 0, -1), obj,
                                    np.moveaxis(from_values, 0, -1),
                                    axis=0 if axis is None else axis), -1, 0)
    else:
        src = np.insert(from_arr, obj, from_values, axis=axis)
    src = np.ravel(src)
    flat = np.ravel(cot)
    arr_bar = np.zeros(n_arr + 1, cot.dtype)
    np.add.at(arr_bar, np.where(src >= 0, src, n_arr), flat)
    values_bar = np.zeros(n_values + 1, cot.dtype)
    np.add.at(values_bar, np.where(src < 0, -1 - src, n_values), flat)
    return (np.reshape(arr_bar[:n_arr], np.shape(arr)),
            np.reshape(values_bar[:n_values], np.shape(values)))


__all__ += ["linalg_solve_banded", "banded_dense", "dense_banded", "insert_bars"]

# ---- scipy.integrate: odeint and solve_ivp (runtime_ode.py, for its size) -----------
from .runtime_ode import *  # noqa: E402,F401,F403
from .runtime_ode import __all__ as _ode_all  # noqa: E402

__all__ += _ode_all
