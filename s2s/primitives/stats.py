"""``scipy.stats`` distributions' methods (JAX's are under ``jax.scipy.stats``).

Registered with ``scipy.special``'s, the first time a method of a distribution is
looked up.  A method is a primitive named by its path (``scipy.stats.norm.logpdf``),
recognised by its distribution object and name (``norm.pdf`` is bound anew at each
access), whatever the import; emitted code calls it through the runtime's
``stats_<dist>_<method>`` helper (``stats_norm_logpdf(x, loc, scale)``), which is the
same primitive.

Every method is elementwise in all its arguments, so each rule is a table of partial
derivatives, written below as formulas in NumPy, scipy.special's primitives and the
distribution's own ``pdf``/``logpdf`` helpers.  ``_defmethod`` derives the VJP (each
partial times ``g``, unbroadcast to its parameter) and one JVP per parameter (the
tangent times the partial) as real functions with readable source, in ``linecache``
like ``deflinear``'s, inlined as hand-written rules are; ``python -m s2s primitives
--rule scipy.stats.norm.cdf`` prints them.  With ``z = (x - loc) / scale`` and ``D``
the partial of logpdf in ``x``, for a location-scale family:

* logpdf: ``D``, ``-D`` in loc, ``-z D - 1 / scale`` in scale; pdf: ``ans`` times those;
* cdf: ``pdf``, ``-pdf``, ``-z pdf``; sf: their negatives; logcdf and logsf: those over
  cdf and sf, ``exp(logpdf - ans)``.

A cdf's derivative in a shape parameter (gamma's ``a``, beta's ``a`` and ``b``,
chi2's ``df``) is refused (``underived``): SciPy has no closed form (JAX has one for
gamma and chi2, a series, and refuses beta's, as here).  So is a derivative in
poisson's integer ``k`` and ``loc``.
"""

import ast
import builtins
import inspect
import linecache
import re

import numpy as np

from .. import runtime, runtime_scipy, syntax
from ..ir.nodes import Const, Let
from ..ir.spelling import atom_text
from ..runtime import unbroadcast
from .batching import Batch, NoBatchRule, align, args_text, batch_rule
from .registry import (
    BY_METHOD,
    FROZEN,
    FROZEN_FORMS,
    Refused,
    call_spelling,
    defform,
    defjvp,
    defprim,
    defvjp,
)

try:
    import scipy.stats as _st
except ImportError:  # pragma: no cover - SciPy is optional
    _st = None

LOC_SCALE = "z = (x - loc) / scale"


def _rule(stem: str, text: str, name: str):
    """The function ``text`` defines, its source in linecache (as deflinear's)."""
    filename = f"<s2s scipy.stats {name} {stem}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace = {**{n: getattr(runtime, n) for n in runtime.__all__}, "np": np,
                 "__name__": __name__}
    local: dict = {}
    exec(compile(text, filename, "exec"), namespace, local)
    (rule,) = local.values()
    names = [n for n in ast.walk(syntax.parse(text)) if isinstance(n, ast.Name)]
    known = set(inspect.signature(rule).parameters) | set(namespace) | {
        n.id for n in names if isinstance(n.ctx, ast.Store)}
    unknown = sorted({n.id for n in names} - known - set(dir(builtins)))
    if unknown:  # the rule would raise NameError when it runs: say so now
        raise NameError(f"the derived rule {stem} of {name} reads {', '.join(unknown)}")
    return rule


def _defmethod(dist, method, sig, partials, prelude=LOC_SCALE, underived=None, note=""):
    """Register ``scipy.stats.<dist>.<method>`` with the signature ``sig`` and its
    rules, derived from ``partials``: ``{parameter: the partial derivative}``, formulas
    that may read the parameters, ``ans`` and what ``prelude`` computes (``z``)."""
    name = f"scipy.stats.{dist}.{method}"
    helper = getattr(runtime_scipy, f"stats_{dist}_{method}")
    bound = getattr(getattr(_st, dist), method)
    defprim(name, bound, sig, family="special", diff=tuple(partials),
            spelling=call_spelling(helper.__name__), aliases=(helper,),
            underived=underived, note=note or "partials: " + "; ".join(
                f"d/d{p} = {e}" for p, e in partials.items()))
    BY_METHOD[(id(getattr(_st, dist)), method)] = name
    params = sig[1:-1]
    stem = f"{dist}_{method}"
    uses_z = any(re.search(r"\bz\b", e) for e in partials.values())
    first = f"    {prelude}\n" if prelude and uses_z else ""
    if len(partials) == 1:
        ((p, e),) = partials.items()
        ret = f"unbroadcast(g * ({e}), {p})"
    else:
        ret = "(\n" + "".join(f"        unbroadcast(g * ({e}), {p}),\n"
                              for p, e in partials.items()) + "    )"
    text = f"def {stem}_vjp(g, ans, {params}):\n{first}    return {ret}\n"
    defvjp(name)(_rule(stem + "_vjp", text, name))
    for p, e in partials.items():
        text = f"def {stem}_jvp_{p}({p}_dot, ans, {params}):\n{first}    return {p}_dot * ({e})\n"
        defjvp(name, p)(_rule(f"{stem}_jvp_{p}", text, name))


def _defloc_scale(dist, methods, dx, shape="", shape_partials=None, cdf_underived=None):
    """The methods of a location-scale family from ``dx``, logpdf's partial in ``x``
    (a formula in ``z`` and the parameters), and ``shape_partials``, logpdf's partials
    in the shape parameters ``shape`` (``"a, "``): cdf-like methods are refused in
    those (``cdf_underived``)."""
    sig = f"(x, {shape}loc=0, scale=1)"
    args = f"x, {shape}loc, scale"
    shape_partials = shape_partials or {}
    logpdf = {"x": dx, **shape_partials, "loc": f"-({dx})",
              "scale": f"-z * ({dx}) - 1 / scale"}
    pdf_of = f"stats_{dist}_pdf({args})"
    log_ratio = f"np.exp(stats_{dist}_logpdf({args}) - ans)"
    cdf_like = {
        "cdf": (pdf_of, 1), "sf": (pdf_of, -1),
        "logcdf": (log_ratio, 1), "logsf": (log_ratio, -1),
    }
    for method in methods:
        if method == "logpdf":
            _defmethod(dist, method, sig, logpdf)
        elif method == "pdf":
            _defmethod(dist, method, sig, {p: f"ans * ({e})" for p, e in logpdf.items()})
        else:
            d, sign = cdf_like[method]
            minus = "" if sign > 0 else "-"
            plus = "-" if sign > 0 else ""
            _defmethod(dist, method, sig,
                       {"x": f"{minus}{d}", "loc": f"{plus}{d}",
                        "scale": f"{plus}z * {d}"},
                       underived=cdf_underived)


def _defquantile(dist, method):
    """ppf (isf): the x where cdf(x) (sf(x)) is q, of a location-scale family:
    d/dq = 1 / pdf(x) (its negative for isf), d/dloc = 1, d/dscale = (x - loc) / scale."""
    minus = "" if method == "ppf" else "-"
    _defmethod(dist, method, "(q, loc=0, scale=1)",
               {"q": f"{minus}1 / stats_{dist}_pdf(ans, loc, scale)",
                "loc": "np.ones_like(ans)", "scale": "(ans - loc) / scale"}, prelude="")


ALL = ("pdf", "logpdf", "cdf", "logcdf", "sf", "logsf")

if _st is not None:
    # ---- location-scale families on the whole line --------------------------------

    _defloc_scale("norm", ALL, "-z / scale")
    _defloc_scale("laplace", ("pdf", "logpdf", "cdf"),
                  "-np.where(z >= 0, 1.0, -1.0) / scale")  # (JAX's |z|' = 1 at 0)
    _defloc_scale("logistic", ("pdf", "logpdf", "cdf", "sf"), "-np.tanh(z / 2) / scale")
    _defloc_scale("cauchy", ALL, "-2 * z / (1 + z * z) / scale")
    _defloc_scale(
        "t", ("pdf", "logpdf"), "-(df + 1) * z / (df + z * z) / scale", shape="df, ",
        shape_partials={"df": "(special_digamma((df + 1) / 2) - special_digamma(df / 2)"
                              " - 1 / df - np.log1p(z * z / df)"
                              " + (df + 1) * z * z / (df * (df + z * z))) / 2"})

    # quantiles (those jax.scipy.stats has): NaN outside [0, 1], +-inf at its ends
    for _dist, _methods in (("norm", ("ppf", "isf")), ("logistic", ("ppf", "isf")),
                            ("cauchy", ("ppf", "isf")), ("expon", ("ppf",))):
        for _method in _methods:
            _defquantile(_dist, _method)

    # ---- on a half-line or an interval: 0 outside the support, as JAX --------------

    _defloc_scale("expon", ALL, "np.where(z < 0, 0.0, -1 / scale)")
    _NO_SHAPE = ("the cdf's derivative in a shape parameter has no closed form in SciPy")
    _defloc_scale(
        "gamma", ALL, "np.where(z < 0, 0.0, ((a - 1) / z - 1) / scale)", shape="a, ",
        shape_partials={"a": "np.where(z < 0, 0.0, np.log(z) - special_digamma(a))"},
        cdf_underived={"a": _NO_SHAPE})
    _defloc_scale(
        "chi2", ALL, "np.where(z < 0, 0.0, ((df / 2 - 1) / z - 0.5) / scale)",
        shape="df, ",
        shape_partials={"df": "np.where(z < 0, 0.0, (np.log(z / 2) "
                              "- special_digamma(df / 2)) / 2)"},
        cdf_underived={"df": _NO_SHAPE})
    _defloc_scale(
        "beta", ALL,
        "np.where((z < 0) | (z > 1), 0.0, ((a - 1) / z - (b - 1) / (1 - z)) / scale)",
        shape="a, b, ",
        shape_partials={
            "a": "np.where((z < 0) | (z > 1), 0.0, "
                 "np.log(z) - special_digamma(a) + special_digamma(a + b))",
            "b": "np.where((z < 0) | (z > 1), 0.0, "
                 "np.log1p(-z) - special_digamma(b) + special_digamma(a + b))"},
        cdf_underived={"a": _NO_SHAPE, "b": _NO_SHAPE})

    # ---- poisson: a pmf of the integer k - loc; derivatives in mu only --------------

    _NO_K = "k is an integer count (the pmf is not differentiable in it)"
    _POISSON = "(k, mu, loc=0)"
    _POISSON_OFF = "np.logical_or(k - loc < 0, np.round(k) != k)"  # pmf 0, logpmf -inf
    _defmethod("poisson", "logpmf", _POISSON,
               {"mu": f"np.where({_POISSON_OFF}, 0.0, (k - loc) / mu - 1)"}, prelude="",
               underived={"k": _NO_K, "loc": _NO_K})
    _defmethod("poisson", "pmf", _POISSON,
               {"mu": f"np.where({_POISSON_OFF}, 0.0, ans * ((k - loc) / mu - 1))"},
               prelude="", underived={"k": _NO_K, "loc": _NO_K})
    # cdf = gammaincc(floor(k - loc) + 1, mu): d/dmu = -pmf(floor(k - loc), mu)
    _defmethod("poisson", "cdf", _POISSON,
               {"mu": "np.where(k - loc < 0, 0.0, "
                      "-stats_poisson_pmf(np.floor(k - loc), mu))"},
               prelude="", underived={"k": _NO_K, "loc": _NO_K})

    # ---- multivariate_normal: x (..., d), mean (d,), cov (d, d) ----------------------
    # With sol = cov^-1 (x - mean): d/dx = -sol, d/dmean = sol, d/dcov = (sol sol^T -
    # cov^-1) / 2, symmetric (JAX's cholesky symmetrizes its input: the same gradient).

    for _method in ("logpdf", "pdf"):
        _helper = getattr(runtime_scipy, "stats_multivariate_normal_" + _method)
        defprim(f"scipy.stats.multivariate_normal.{_method}", _helper, "(x, mean, cov)",
                family="special", spelling=call_spelling(_helper.__name__),
                note="x (..., d), mean (d,), cov (d, d); a size-1 axis of x stays, as "
                "JAX (SciPy drops it); d/dcov is symmetric")
        BY_METHOD[(id(_st.multivariate_normal), _method)] = \
            f"scipy.stats.multivariate_normal.{_method}"

    @defvjp("scipy.stats.multivariate_normal.logpdf")
    def multivariate_normal_logpdf_vjp(g, ans, x, mean, cov):
        sol = np.squeeze(np.linalg.solve(cov, np.expand_dims(x - mean, -1)), -1)
        g_sol = np.expand_dims(g, -1) * sol
        d = np.shape(sol)[-1]
        outer = np.reshape(g_sol, (-1, d)).T @ np.reshape(sol, (-1, d))
        return (unbroadcast(-g_sol, x), unbroadcast(g_sol, mean),
                0.5 * outer - 0.5 * np.sum(g) * np.linalg.inv(cov))

    @defjvp("scipy.stats.multivariate_normal.logpdf", "x")
    def multivariate_normal_logpdf_jvp_x(x_dot, ans, x, mean, cov):
        sol = np.squeeze(np.linalg.solve(cov, np.expand_dims(x - mean, -1)), -1)
        return -np.sum(x_dot * sol, axis=-1)

    @defjvp("scipy.stats.multivariate_normal.logpdf", "mean")
    def multivariate_normal_logpdf_jvp_mean(mean_dot, ans, x, mean, cov):
        sol = np.squeeze(np.linalg.solve(cov, np.expand_dims(x - mean, -1)), -1)
        return np.sum(mean_dot * sol, axis=-1)

    @defjvp("scipy.stats.multivariate_normal.logpdf", "cov")
    def multivariate_normal_logpdf_jvp_cov(cov_dot, ans, x, mean, cov):
        sol = np.squeeze(np.linalg.solve(cov, np.expand_dims(x - mean, -1)), -1)
        return 0.5 * np.sum((sol @ cov_dot) * sol, axis=-1) \
            - 0.5 * np.sum(np.linalg.inv(cov) * cov_dot)

    @defvjp("scipy.stats.multivariate_normal.pdf")
    def multivariate_normal_pdf_vjp(g, ans, x, mean, cov):
        sol = np.squeeze(np.linalg.solve(cov, np.expand_dims(x - mean, -1)), -1)
        g_ans = g * ans
        g_sol = np.expand_dims(g_ans, -1) * sol
        d = np.shape(sol)[-1]
        outer = np.reshape(g_sol, (-1, d)).T @ np.reshape(sol, (-1, d))
        return (unbroadcast(-g_sol, x), unbroadcast(g_sol, mean),
                0.5 * outer - 0.5 * np.sum(g_ans) * np.linalg.inv(cov))

    @defjvp("scipy.stats.multivariate_normal.pdf", "x")
    def multivariate_normal_pdf_jvp_x(x_dot, ans, x, mean, cov):
        sol = np.squeeze(np.linalg.solve(cov, np.expand_dims(x - mean, -1)), -1)
        return -ans * np.sum(x_dot * sol, axis=-1)

    @defjvp("scipy.stats.multivariate_normal.pdf", "mean")
    def multivariate_normal_pdf_jvp_mean(mean_dot, ans, x, mean, cov):
        sol = np.squeeze(np.linalg.solve(cov, np.expand_dims(x - mean, -1)), -1)
        return ans * np.sum(mean_dot * sol, axis=-1)

    @defjvp("scipy.stats.multivariate_normal.pdf", "cov")
    def multivariate_normal_pdf_jvp_cov(cov_dot, ans, x, mean, cov):
        sol = np.squeeze(np.linalg.solve(cov, np.expand_dims(x - mean, -1)), -1)
        return ans * (0.5 * np.sum((sol @ cov_dot) * sol, axis=-1)
                      - 0.5 * np.sum(np.linalg.inv(cov) * cov_dot))

    @batch_rule("scipy.stats.multivariate_normal.logpdf",
                "scipy.stats.multivariate_normal.pdf")
    def multivariate_normal_rule(b: Batch, s: Let) -> str:
        """The batch axis first: mean gets x's per-example axes, cov one more, so
        that x - mean and the solve broadcast per example."""
        if len(s.args) != 3:
            raise NoBatchRule(f"`{s.prim}` without x, mean and cov all given")
        x, mean, cov = s.args
        rank = max(b.rank(x), 1)
        return args_text(s, [atom_text(x), align(b, mean, rank), align(b, cov, rank + 1)])


# ---- frozen distributions: d = norm(loc, scale); d.logpdf(x) ----------------------------
# Calling a distribution is ``stats_frozen(dist, *params)`` (its parameters in the
# methods' order, defaults written out); a method of the result, called in the
# function, is the distribution's method with those parameters (frontend/calls.py), so
# derivatives flow to them.  A distribution frozen outside the function gives its
# parameters as constants (numbers only).

if _st is not None:
    defprim("stats_frozen", runtime_scipy.stats_frozen, "(dist, *params)", family="special",
            spelling=call_spelling("stats_frozen"), nondiff=True, batch="broadcasting",
            note="a frozen distribution: its methods in the function read its parameters")

    def _frozen_params(dist: str) -> list:
        """The parameters a method of ``dist`` takes after its first (x, k)."""
        method = next(m for d, m in _METHODS_OF if d == dist)
        sig = inspect.signature(runtime_scipy.__dict__.get(f"stats_{dist}_{method}")
                                or getattr(runtime_scipy, f"stats_{dist}_logpdf"))
        return list(sig.parameters.values())[1:]

    def _freeze(dist):
        params = _frozen_params(dist)

        def rewrite(args, kwargs, items):
            try:
                bound = inspect.Signature(params).bind(*args, **kwargs)
            except TypeError as exc:
                raise Refused(f"called with arguments s2s does not read: {exc}",
                              f"freeze it as scipy.stats.{dist}"
                              f"({', '.join(p.name for p in params)})") from None
            atoms = [bound.arguments[p.name] if p.name in bound.arguments
                     else Const(p.default, repr(p.default)) for p in params]
            return [("stats_frozen", [Const(dist, repr(dist)), *atoms], {})]
        return rewrite

    _METHODS_OF = sorted({tuple(n.split(".")[2:4]) for n in BY_METHOD.values()})
    for _dist in sorted({d for d, _ in _METHODS_OF}):
        _obj = getattr(_st, _dist)
        FROZEN[type(_obj)] = _dist
        FROZEN_FORMS[_dist] = id(_obj)
        defform(_obj, f"scipy.stats.{_dist}", _freeze(_dist),
                "a frozen distribution; its methods called in the function are the "
                "distribution's, with its parameters")

    from . import stats_moments  # (mean, var, std, entropy: forms of the above)

    stats_moments.register(_st, _frozen_params)
