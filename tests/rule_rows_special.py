"""Rule-table entries for scipy.special (rule_fns_special.py); JAX's equivalents are
under jax.scipy.special.  Without SciPy nothing is registered and there are no rows.
"""

import numpy as np

from rule_table import E2ECase, Row, const, normal, uniform

try:
    import scipy.special  # noqa: F401
except ImportError:  # pragma: no cover - SciPy is optional
    ROWS, E2E = [], []
else:
    import jax.scipy.special  # noqa: F401  (Row.jax paths are looked up under jax)

    import rule_fns_special as F

    def special(name):
        return "scipy.special." + name

    def row(name, variant, args, params=None, **kw):
        """A row for scipy.special.<name>, against jax.scipy.special.<name>."""
        return Row(special(name), variant, args, params or {}, jax=special(name), **kw)

    def operand(draw, shape):
        return (lambda r: float(draw()(r))) if shape is None else draw(*shape)

    UNARY = {  # name -> drawer of a valid input of a given shape
        "erf": normal, "erfc": normal, "erfinv": uniform(-0.9, 0.9),
        "gammaln": uniform(0.2, 5.0), "digamma": uniform(0.2, 5.0),
        "expit": normal, "logit": uniform(0.05, 0.95),
    }
    BINARY = {"xlogy": (normal, uniform(0.2, 3.0)),
              "xlog1py": (normal, uniform(-0.8, 3.0))}
    BROADCASTS = {
        "col_row": ((3, 1), (4,)), "scalar_array": ((), (2, 3)),
        "python_float": ((2, 3), None),
    }
    AXES = {"all": None, "0": 0, "neg": -1, "tuple": (0, 2), "neg_tuple": (-1, 0)}
    KEEPDIMS = {"all": False, "0": True, "neg": False, "tuple": True,
                "neg_tuple": False}
    A = np.array
    NEG_INF = A([[-np.inf, 0.5, 1.0], [2.0, -np.inf, -1.0]])
    ZEROS = np.zeros((2, 3))

    ROWS = (
        [row(n, "matrix", (d(2, 3),)) for n, d in UNARY.items()]
        + [
            row("gammaln", "negative", (uniform(-2.9, -2.1)(2, 3),)),
            row("digamma", "negative", (uniform(-2.9, -2.1)(2, 3),)),
            row("expit", "scalar", (normal(),)),
            # infinite derivatives at the domain's edges, as JAX
            row("logit", "at_edges", (const(A([0.0, 0.5, 1.0])),)),
            row("erfinv", "at_edges", (const(A([-1.0, 0.0, 1.0])),)),
        ]
        + [
            row(n, v, (operand(d1, s1), operand(d2, s2)))
            for n, (d1, d2) in BINARY.items()
            for v, (s1, s2) in BROADCASTS.items()
        ]
        + [
            # JAX's convention at x = 0: d/dx = log(y), d/dy = x / y (-inf, NaN at 0, 0)
            row("xlogy", "x_zero", (const(ZEROS), uniform(0.2, 3.0)(2, 3))),
            row("xlogy", "at_origin", (const(A([0.0, 0.0, 1.0])),
                                       const(A([0.0, 1.0, 0.0])))),
            row("xlog1py", "x_zero", (const(ZEROS), uniform(-0.8, 3.0)(2, 3))),
        ]
        + [
            row("logsumexp", f"axis_{a}{'_keepdims' if KEEPDIMS[a] else ''}",
                (normal(2, 3, 4),), {"axis": axis, "keepdims": KEEPDIMS[a]})
            for a, axis in AXES.items()
        ]
        + [
            row("logsumexp", "vector", (normal(5),)),
            row("logsumexp", "neg_inf_entries", (const(NEG_INF),), {"axis": 1}),
        ]
        + [
            row(n, f"axis_{a}", (normal(2, 3, 4),), {"axis": AXES[a]})
            for n, axes in (("softmax", ("all", "neg", "tuple")),
                            ("log_softmax", ("all", "0", "neg_tuple")))
            for a in axes
        ]
        + [
            row("softmax", "neg_inf_entries", (const(NEG_INF),), {"axis": 1}),
            row("log_softmax", "vector", (normal(5),)),
        ]
    )

    E2E = [
        E2ECase(F.f_erf_erfc, (special("erf"), special("erfc"))),
        E2ECase(F.f_erfinv, (special("erfinv"),), (uniform(-0.9, 0.9)(2, 3),)),
        E2ECase(F.f_gammaln_digamma, (special("gammaln"), special("digamma")),
                (uniform(0.2, 5.0)(2, 3),)),
        E2ECase(F.f_expit_logit, (special("expit"), special("logit"))),
        E2ECase(F.f_xlogy_xlog1py, (special("xlogy"), special("xlog1py")),
                (normal(2, 3), uniform(0.2, 3.0)(3))),
        E2ECase(F.f_logsumexp, (special("logsumexp"),)),
        E2ECase(F.f_logsumexp_keepdims, (special("logsumexp"),)),
        E2ECase(F.f_softmax, (special("softmax"),)),
        E2ECase(F.f_log_softmax, (special("log_softmax"),)),
        E2ECase(F.f_cross_entropy, (special("log_softmax"),),
                (normal(4, 3), uniform(0.0, 1.0)(4, 3))),
    ]
