"""``scipy.special`` functions (JAX's are under ``jax.scipy.special``).

Registered only where SciPy is installed.  A primitive is named by its full dotted
path (``scipy.special.erf``) and recognised by identity like NumPy's, however the user
imported it (``import scipy.special as sp``, ``from scipy.special import erf``).
Emitted code imports only NumPy and ``s2s.runtime``, so it calls SciPy through the
runtime's ``special_<name>`` helpers: ``erf_x = special_erf(x)``.
"""

import math

import numpy as np

from .. import runtime_scipy
from ..runtime import (
    special_digamma,
    special_gammaln,
    special_i0,
    special_i0e,
    special_i1,
    special_i1e,
    special_polygamma,
    special_xlogy,
    unbroadcast,
)
from .forms import _bind as _bind_form
from .forms import _constant as _constant_form
from .registry import call_spelling, defform, defjvp, defprim, defvjp

try:
    import scipy.special as _sp
except ImportError:  # pragma: no cover - SciPy is optional
    _sp = None


def _defspecial(name, sig, family, aliases=(), note="", batch=None, diff=None,
                nondiff=False, underived=None):
    defprim(
        "scipy.special." + name, getattr(_sp, name), sig, family=family,
        spelling=call_spelling("special_" + name), aliases=aliases, note=note,
        batch=batch, diff=diff, nondiff=nondiff, underived=underived,
    )


def _defcalled(name, sig, family="elementwise", **kw):
    """A function whose runtime helper (``special_<name>`` in runtime_scipy.py) is the
    same primitive: emitted code that calls the helper differentiates by these rules."""
    _defspecial(name, sig, family, aliases=(getattr(runtime_scipy, "special_" + name),),
                **kw)


if _sp is not None:
    # ---- error functions ----------------------------------------------------------

    _defspecial("erf", "(x)", "elementwise", aliases=(math.erf,))

    @defvjp("scipy.special.erf")
    def erf_vjp(g, ans, x):
        return g * (2 / np.sqrt(np.pi)) * np.exp(-(x**2))

    @defjvp("scipy.special.erf", "x")
    def erf_jvp(x_dot, ans, x):
        return x_dot * (2 / np.sqrt(np.pi)) * np.exp(-(x**2))

    _defspecial("erfc", "(x)", "elementwise", aliases=(math.erfc,))

    @defvjp("scipy.special.erfc")
    def erfc_vjp(g, ans, x):
        return -g * (2 / np.sqrt(np.pi)) * np.exp(-(x**2))

    @defjvp("scipy.special.erfc", "x")
    def erfc_jvp(x_dot, ans, x):
        return -x_dot * (2 / np.sqrt(np.pi)) * np.exp(-(x**2))

    _defspecial("erfinv", "(x)", "elementwise", note="erfinv'(+-1) = inf, as JAX")

    @defvjp("scipy.special.erfinv")
    def erfinv_vjp(g, ans, x):
        return g * (np.sqrt(np.pi) / 2) * np.exp(ans**2)

    @defjvp("scipy.special.erfinv", "x")
    def erfinv_jvp(x_dot, ans, x):
        return x_dot * (np.sqrt(np.pi) / 2) * np.exp(ans**2)

    # ---- gamma family -------------------------------------------------------------

    _defspecial(
        "gammaln", "(x)", "elementwise", aliases=(math.lgamma,),
        note="d/dx is digamma(x); at the poles x = 0, -1, ... SciPy's digamma gives "
        "-inf or NaN where JAX gives NaN",
    )

    @defvjp("scipy.special.gammaln")
    def gammaln_vjp(g, ans, x):
        return g * special_digamma(x)

    @defjvp("scipy.special.gammaln", "x")
    def gammaln_jvp(x_dot, ans, x):
        return x_dot * special_digamma(x)

    _defspecial(
        "digamma", "(x)", "elementwise", note="d/dx is polygamma(1, x) (trigamma)"
    )

    @defvjp("scipy.special.digamma")
    def digamma_vjp(g, ans, x):
        return g * special_polygamma(1, x)

    @defjvp("scipy.special.digamma", "x")
    def digamma_jvp(x_dot, ans, x):
        return x_dot * special_polygamma(1, x)

    # ---- logistic -----------------------------------------------------------------

    _defspecial("expit", "(x)", "elementwise")

    @defvjp("scipy.special.expit")
    def expit_vjp(g, ans, x):
        return g * ans * (1 - ans)

    @defjvp("scipy.special.expit", "x")
    def expit_jvp(x_dot, ans, x):
        return x_dot * ans * (1 - ans)

    _defspecial(
        "logit", "(x)", "elementwise", note="logit'(0) = logit'(1) = inf, as JAX"
    )

    @defvjp("scipy.special.logit")
    def logit_vjp(g, ans, x):
        return g / (x * (1 - x))

    @defjvp("scipy.special.logit", "x")
    def logit_jvp(x_dot, ans, x):
        return x_dot / (x * (1 - x))

    # ---- x log y ------------------------------------------------------------------

    _defspecial(
        "xlogy", "(x, y)", "binary",
        note="as JAX: d/dx = log(y), d/dy = x / y, also at x = 0 (-inf and NaN at "
        "x = y = 0)",
    )

    @defvjp("scipy.special.xlogy")
    def xlogy_vjp(g, ans, x, y):
        return unbroadcast(g * np.log(y), x), unbroadcast(g * x / y, y)

    @defjvp("scipy.special.xlogy", "x")
    def xlogy_jvp_x(x_dot, ans, x, y):
        return x_dot * np.log(y)

    @defjvp("scipy.special.xlogy", "y")
    def xlogy_jvp_y(y_dot, ans, x, y):
        return y_dot * x / y

    _defspecial(
        "xlog1py", "(x, y)", "binary",
        note="as JAX: d/dx = log1p(y), d/dy = x / (1 + y), also at x = 0",
    )

    @defvjp("scipy.special.xlog1py")
    def xlog1py_vjp(g, ans, x, y):
        return unbroadcast(g * np.log1p(y), x), unbroadcast(g * x / (1 + y), y)

    @defjvp("scipy.special.xlog1py", "x")
    def xlog1py_jvp_x(x_dot, ans, x, y):
        return x_dot * np.log1p(y)

    @defjvp("scipy.special.xlog1py", "y")
    def xlog1py_jvp_y(y_dot, ans, x, y):
        return y_dot * x / (1 + y)

    # ---- reductions over axes: axis None, int, negative or a tuple ----------------
    # exp(a - ans) and exp(log_softmax) never overflow: ans >= a along the axis.

    _defspecial(
        "logsumexp", "(a, axis=None, b=None, keepdims=False)", "special",
        diff=("a", "b"),
        note="the gradient is the softmax exp(a - ans) "
        "(times b, with b=; in b, exp(a - ans), also where b = 0: JAX gives 0 there)",
        batch="normalizer",
    )

    @defvjp("scipy.special.logsumexp")
    def logsumexp_vjp(g, ans, a, axis=None, b=None, keepdims=False):
        if axis is not None and not keepdims:
            g = np.expand_dims(g, axis)
            ans = np.expand_dims(ans, axis)
        if b is None:
            return g * np.exp(a - ans), None
        weights = g * np.exp(a - ans)
        return unbroadcast(weights * b, a), unbroadcast(weights, b)

    @defjvp("scipy.special.logsumexp", "a")
    def logsumexp_jvp(a_dot, ans, a, axis=None, b=None, keepdims=False):
        if axis is not None and not keepdims:
            ans = np.expand_dims(ans, axis)
        if b is None:
            return np.sum(a_dot * np.exp(a - ans), axis=axis, keepdims=keepdims)
        return np.sum(a_dot * b * np.exp(a - ans), axis=axis, keepdims=keepdims)

    @defjvp("scipy.special.logsumexp", "b")
    def logsumexp_jvp_b(b_dot, ans, a, axis=None, b=None, keepdims=False):
        if axis is not None and not keepdims:
            ans = np.expand_dims(ans, axis)
        return np.sum(b_dot * np.exp(a - ans), axis=axis, keepdims=keepdims)

    # return_sign=True: (log|s|, sign(s)), s = sum(b exp(a)); d log|s| = ds / s, and
    # 1 / s = sign exp(-out).  The sign is piecewise constant: no derivative flows.
    defprim("scipy.special.logsumexp_sign", runtime_scipy.special_logsumexp_sign,
            "(a, axis=None, b=None, keepdims=False)", family="special", diff=("a", "b"),
            results=2, spelling=call_spelling("special_logsumexp_sign"),
            batch="normalizer",
            note="logsumexp(..., return_sign=True): the sign carries no derivative")

    @defvjp("scipy.special.logsumexp_sign")
    def logsumexp_sign_vjp(g, ans, a, axis=None, b=None, keepdims=False):
        out = ans[0]
        sign = ans[1]
        g_out = g[0]
        if axis is not None and not keepdims:
            g_out = np.expand_dims(g_out, axis)
            out = np.expand_dims(out, axis)
            sign = np.expand_dims(sign, axis)
        weights = g_out * sign * np.exp(a - out)
        if b is None:
            return weights, None
        return unbroadcast(weights * b, a), unbroadcast(weights, b)

    @defjvp("scipy.special.logsumexp_sign", "a")
    def logsumexp_sign_jvp(a_dot, ans, a, axis=None, b=None, keepdims=False):
        out = ans[0]
        sign = ans[1]
        if axis is not None and not keepdims:
            out = np.expand_dims(out, axis)
            sign = np.expand_dims(sign, axis)
        if b is None:
            weighted = a_dot * sign * np.exp(a - out)
        else:
            weighted = a_dot * b * sign * np.exp(a - out)
        return (np.sum(weighted, axis=axis, keepdims=keepdims), np.zeros(np.shape(ans[1])))

    @defjvp("scipy.special.logsumexp_sign", "b")
    def logsumexp_sign_jvp_b(b_dot, ans, a, axis=None, b=None, keepdims=False):
        out = ans[0]
        sign = ans[1]
        if axis is not None and not keepdims:
            out = np.expand_dims(out, axis)
            sign = np.expand_dims(sign, axis)
        weighted = b_dot * sign * np.exp(a - out)
        return (np.sum(weighted, axis=axis, keepdims=keepdims), np.zeros(np.shape(ans[1])))

    def _logsumexp(args, kwargs, items):
        """return_sign=True is logsumexp_sign (a pair); otherwise logsumexp itself."""
        p = _bind_form("(a, axis=None, b=None, keepdims=False, return_sign=False)",
                       "scipy.special.logsumexp", args, kwargs)
        kept = {k: v for k, v in kwargs.items() if k != "return_sign"}
        if _constant_form(p["return_sign"], "return_sign", (False, True)):
            return [("scipy.special.logsumexp_sign", list(args[:4]), kept)]
        return [("scipy.special.logsumexp", list(args[:4]), kept)]

    defform(_sp.logsumexp, "scipy.special.logsumexp", _logsumexp,
            "return_sign=True is logsumexp_sign, the pair (log|sum|, sign)")

    _defspecial(
        "softmax", "(x, axis=None)", "special",
        note="axis=None is the whole array, as SciPy",
        batch="normalizer",
    )

    @defvjp("scipy.special.softmax")
    def softmax_vjp(g, ans, x, axis=None):
        return ans * (g - np.sum(g * ans, axis=axis, keepdims=True))

    @defjvp("scipy.special.softmax", "x")
    def softmax_jvp(x_dot, ans, x, axis=None):
        return ans * (x_dot - np.sum(x_dot * ans, axis=axis, keepdims=True))

    _defspecial(
        "log_softmax", "(x, axis=None)", "special",
        note="axis=None is the whole array, as SciPy",
        batch="normalizer",
    )

    @defvjp("scipy.special.log_softmax")
    def log_softmax_vjp(g, ans, x, axis=None):
        return g - np.exp(ans) * np.sum(g, axis=axis, keepdims=True)

    @defjvp("scipy.special.log_softmax", "x")
    def log_softmax_jvp(x_dot, ans, x, axis=None):
        return x_dot - np.sum(np.exp(ans) * x_dot, axis=axis, keepdims=True)

    # ---- gamma and beta functions (issue 26.3) ------------------------------------

    _defcalled("gamma", "(x)", note="d/dx = gamma(x) digamma(x)")

    @defvjp("scipy.special.gamma")
    def gamma_vjp(g, ans, x):
        return g * ans * special_digamma(x)

    @defjvp("scipy.special.gamma", "x")
    def gamma_jvp(x_dot, ans, x):
        return x_dot * ans * special_digamma(x)

    _defcalled("rgamma", "(x)", note="1 / gamma(x): d/dx = -rgamma(x) digamma(x) (NaN "
               "at the poles, where rgamma is 0)")

    @defvjp("scipy.special.rgamma")
    def rgamma_vjp(g, ans, x):
        return -g * ans * special_digamma(x)

    @defjvp("scipy.special.rgamma", "x")
    def rgamma_jvp(x_dot, ans, x):
        return -x_dot * ans * special_digamma(x)

    _defcalled("gammasgn", "(x)", family="piecewise-constant", nondiff=True,
               note="the sign of gamma(x): derivative zero, no gradient flows (as JAX)")

    _defspecial(
        "polygamma", "(n, x)", "binary", diff=("x",),
        underived={"n": "the order is an integer"},
        note="n an integer order (a derivative into n is refused); d/dx is "
        "polygamma(n + 1, x)",
    )

    @defvjp("scipy.special.polygamma")
    def polygamma_vjp(g, ans, n, x):
        return unbroadcast(g * special_polygamma(n + 1, x), x)

    @defjvp("scipy.special.polygamma", "x")
    def polygamma_jvp(x_dot, ans, n, x):
        return x_dot * special_polygamma(n + 1, x)

    _defcalled(
        "multigammaln", "(a, d)", diff=("a",),
        underived={"d": "the dimension is an integer"},
        note="d an integer; d/da = sum of digamma(a - j / 2), j < d",
    )

    @defvjp("scipy.special.multigammaln")
    def multigammaln_vjp(g, ans, a, d):
        return g * np.sum(special_digamma(np.expand_dims(a, -1) - np.arange(d) / 2),
                          axis=-1)

    @defjvp("scipy.special.multigammaln", "a")
    def multigammaln_jvp(a_dot, ans, a, d):
        return a_dot * np.sum(special_digamma(np.expand_dims(a, -1) - np.arange(d) / 2),
                              axis=-1)

    _defcalled("beta", "(a, b)", family="binary",
               note="d/da = beta(a, b) (digamma(a) - digamma(a + b)), d/db likewise")

    @defvjp("scipy.special.beta")
    def beta_vjp(g, ans, a, b):
        both = special_digamma(a + b)
        return (unbroadcast(g * ans * (special_digamma(a) - both), a),
                unbroadcast(g * ans * (special_digamma(b) - both), b))

    @defjvp("scipy.special.beta", "a")
    def beta_jvp_a(a_dot, ans, a, b):
        return a_dot * ans * (special_digamma(a) - special_digamma(a + b))

    @defjvp("scipy.special.beta", "b")
    def beta_jvp_b(b_dot, ans, a, b):
        return b_dot * ans * (special_digamma(b) - special_digamma(a + b))

    _defcalled("betaln", "(a, b)", family="binary",
               note="d/da = digamma(a) - digamma(a + b), d/db likewise")

    @defvjp("scipy.special.betaln")
    def betaln_vjp(g, ans, a, b):
        both = special_digamma(a + b)
        return (unbroadcast(g * (special_digamma(a) - both), a),
                unbroadcast(g * (special_digamma(b) - both), b))

    @defjvp("scipy.special.betaln", "a")
    def betaln_jvp_a(a_dot, ans, a, b):
        return a_dot * (special_digamma(a) - special_digamma(a + b))

    @defjvp("scipy.special.betaln", "b")
    def betaln_jvp_b(b_dot, ans, a, b):
        return b_dot * (special_digamma(b) - special_digamma(a + b))

    # d/dx of the regularized incomplete gamma is the gamma density; in a it has no
    # closed form (JAX has one, a series, XLA's IgammaGradA): refused, not zero
    _NO_A = ("its derivative in the shape `a` has no closed form in SciPy (JAX "
             "computes it by a series)")

    _defcalled("gammainc", "(a, x)", family="binary", diff=("x",),
               underived={"a": _NO_A},
               note="d/dx = x^(a-1) exp(-x) / gamma(a); a derivative into a is refused")

    @defvjp("scipy.special.gammainc")
    def gammainc_vjp(g, ans, a, x):
        return unbroadcast(
            g * np.exp(special_xlogy(a - 1, x) - x - special_gammaln(a)), x)

    @defjvp("scipy.special.gammainc", "x")
    def gammainc_jvp(x_dot, ans, a, x):
        return x_dot * np.exp(special_xlogy(a - 1, x) - x - special_gammaln(a))

    _defcalled("gammaincc", "(a, x)", family="binary", diff=("x",),
               underived={"a": _NO_A},
               note="d/dx = -x^(a-1) exp(-x) / gamma(a); a derivative into a is refused")

    @defvjp("scipy.special.gammaincc")
    def gammaincc_vjp(g, ans, a, x):
        return unbroadcast(
            -g * np.exp(special_xlogy(a - 1, x) - x - special_gammaln(a)), x)

    @defjvp("scipy.special.gammaincc", "x")
    def gammaincc_jvp(x_dot, ans, a, x):
        return -x_dot * np.exp(special_xlogy(a - 1, x) - x - special_gammaln(a))

    _defcalled("erfcinv", "(x)", note="d/dx = -sqrt(pi) / 2 exp(erfcinv(x)^2); inf at 0 "
               "and 2")

    @defvjp("scipy.special.erfcinv")
    def erfcinv_vjp(g, ans, x):
        return -g * (np.sqrt(np.pi) / 2) * np.exp(ans**2)

    @defjvp("scipy.special.erfcinv", "x")
    def erfcinv_jvp(x_dot, ans, x):
        return -x_dot * (np.sqrt(np.pi) / 2) * np.exp(ans**2)

    # ---- the normal cdf and its log (probit models) --------------------------------

    _defcalled("ndtr", "(x)", note="d/dx = exp(-x^2 / 2) / sqrt(2 pi)")

    @defvjp("scipy.special.ndtr")
    def ndtr_vjp(g, ans, x):
        return g * np.exp(-0.5 * x**2) / np.sqrt(2 * np.pi)

    @defjvp("scipy.special.ndtr", "x")
    def ndtr_jvp(x_dot, ans, x):
        return x_dot * np.exp(-0.5 * x**2) / np.sqrt(2 * np.pi)

    _defcalled("log_ndtr", "(x)", note="d/dx = exp(-x^2 / 2 - log_ndtr(x)) / sqrt(2 pi) "
               "(about -x far in the lower tail, no overflow)")

    @defvjp("scipy.special.log_ndtr")
    def log_ndtr_vjp(g, ans, x):
        return g * np.exp(-0.5 * x**2 - ans) / np.sqrt(2 * np.pi)

    @defjvp("scipy.special.log_ndtr", "x")
    def log_ndtr_jvp(x_dot, ans, x):
        return x_dot * np.exp(-0.5 * x**2 - ans) / np.sqrt(2 * np.pi)

    # ---- modified Bessel functions of orders 0 and 1 (and exponentially scaled) ----
    # i1(x) / x -> 1/2 at 0: the quotient is taken where x != 0 only

    _defcalled("i0", "(x)", note="d/dx = i1(x)")

    @defvjp("scipy.special.i0")
    def i0_vjp(g, ans, x):
        return g * special_i1(x)

    @defjvp("scipy.special.i0", "x")
    def i0_jvp(x_dot, ans, x):
        return x_dot * special_i1(x)

    _defcalled("i1", "(x)", note="d/dx = i0(x) - i1(x) / x, 1/2 at 0")

    @defvjp("scipy.special.i1")
    def i1_vjp(g, ans, x):
        return g * np.where(x == 0, 0.5, special_i0(x) - ans / np.where(x == 0, 1, x))

    @defjvp("scipy.special.i1", "x")
    def i1_jvp(x_dot, ans, x):
        return x_dot * np.where(x == 0, 0.5, special_i0(x) - ans / np.where(x == 0, 1, x))

    _defcalled("i0e", "(x)", note="d/dx = i1e(x) - sign(x) i0e(x)")

    @defvjp("scipy.special.i0e")
    def i0e_vjp(g, ans, x):
        return g * (special_i1e(x) - np.sign(x) * ans)

    @defjvp("scipy.special.i0e", "x")
    def i0e_jvp(x_dot, ans, x):
        return x_dot * (special_i1e(x) - np.sign(x) * ans)

    _defcalled("i1e", "(x)", note="d/dx = i0e(x) - i1e(x) (sign(x) + 1 / x), 1/2 at 0")

    @defvjp("scipy.special.i1e")
    def i1e_vjp(g, ans, x):
        return g * np.where(
            x == 0, 0.5, special_i0e(x) - ans * (np.sign(x) + 1 / np.where(x == 0, 1, x)))

    @defjvp("scipy.special.i1e", "x")
    def i1e_jvp(x_dot, ans, x):
        return x_dot * np.where(
            x == 0, 0.5, special_i0e(x) - ans * (np.sign(x) + 1 / np.where(x == 0, 1, x)))
