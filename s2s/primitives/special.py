"""``scipy.special`` functions (JAX's are under ``jax.scipy.special``).

Registered only where SciPy is installed.  A primitive is named by its full dotted
path (``scipy.special.erf``) and recognised by identity like NumPy's, however the user
imported it (``import scipy.special as sp``, ``from scipy.special import erf``).
Emitted code imports only NumPy and ``s2s.runtime``, so it calls SciPy through the
runtime's ``special_<name>`` helpers: ``erf_x = special_erf(x)``.
"""

import math

import numpy as np

from ..runtime import special_digamma, special_polygamma, unbroadcast
from .registry import call_spelling, defjvp, defprim, defvjp

try:
    import scipy.special as _sp
except ImportError:  # pragma: no cover - SciPy is optional
    _sp = None


def _defspecial(name, sig, family, aliases=(), note="", batch=None):
    defprim(
        "scipy.special." + name, getattr(_sp, name), sig, family=family,
        spelling=call_spelling("special_" + name), aliases=aliases, note=note,
        batch=batch,
    )


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
        "logsumexp", "(a, axis=None, *, keepdims=False)", "special",
        note="b= and return_sign= are not supported; the gradient is the softmax "
        "exp(a - ans)",
        batch="normalizer",
    )

    @defvjp("scipy.special.logsumexp")
    def logsumexp_vjp(g, ans, a, axis=None, keepdims=False):
        if axis is not None and not keepdims:
            g = np.expand_dims(g, axis)
            ans = np.expand_dims(ans, axis)
        return g * np.exp(a - ans)

    @defjvp("scipy.special.logsumexp", "a")
    def logsumexp_jvp(a_dot, ans, a, axis=None, keepdims=False):
        if axis is not None and not keepdims:
            ans = np.expand_dims(ans, axis)
        return np.sum(a_dot * np.exp(a - ans), axis=axis, keepdims=keepdims)

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
