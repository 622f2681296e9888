"""Every primitive rule, one table, checked against JAX in float64.

``ROWS`` lists, for each differentiable primitive, how to draw valid arguments, the
``jax.numpy`` function that computes the same thing, and variants (axes, broadcasting
shapes, operand ranks).  The rules are plain functions, so the first tests call them
directly: each VJP against ``jax.vjp``, each JVP against ``jax.jvp``, and the VJP
against the JVP by the inner-product identity.  ``E2E`` then runs one function per
primitive (``rule_fns.py``) through ``s2s.grad`` against ``jax.grad`` of the same
source and finite differences.  Every expected value comes from JAX or finite
differences.
"""

from __future__ import annotations

import ast
import builtins
import functools
import importlib
import inspect
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

import rule_fns as R  # noqa: E402
import s2s  # noqa: E402
from rule_table import (  # noqa: E402
    E2ECase, Row, const, mask, nonzero, normal, rng_for, twin_of, uniform,
)
from s2s.ir.nodes import Let, walk  # noqa: E402
from s2s.primitives import PRIMITIVES, load_all  # noqa: E402

load_all()  # SciPy's family registers lazily; the table covers it too
from support import fd_grad, jax_twin  # noqa: E402

J = jax_twin(R)

# Handled by reverse mode's structure (or syntax-only): no direct numeric table row.
# Each is covered end to end in E2E below.
STRUCTURAL = {"identity", "make_tuple", "make_list", "make_dict", "call", "float",
              "getitem", "T", "setitem", "append", "add_at", "list", "pop"}
# Reverse mode refuses them (tests/test_errors.py checks how): no E2E gradient case.
REVERSE_REFUSED = {"pop"}
TOL = {"rtol": 1e-10, "atol": 1e-12}


# The JAX equivalent of each primitive is jax.numpy's function of the same name.
UNARY = {  # name -> drawer of a valid input of a given shape
    "sin": normal, "cos": normal, "tan": uniform(-1.2, 1.2),
    "arcsin": uniform(-0.9, 0.9), "arccos": uniform(-0.9, 0.9), "arctan": normal,
    "sinh": normal, "cosh": normal, "tanh": normal, "exp": normal, "expm1": normal,
    "log": uniform(0.2, 3.0), "log1p": uniform(-0.8, 3.0), "log2": uniform(0.2, 3.0),
    "log10": uniform(0.2, 3.0), "sqrt": uniform(0.2, 3.0), "square": normal,
    "reciprocal": nonzero, "absolute": nonzero, "negative": normal, "positive": normal,
}
BINARY = {  # name -> (drawer of x1, drawer of x2)
    "add": (normal, normal), "subtract": (normal, normal),
    "multiply": (normal, normal), "divide": (normal, nonzero),
    "maximum": (normal, normal), "minimum": (normal, normal),
    "power": (uniform(0.3, 2.0), normal),
}
BROADCASTS = {  # variant -> (shape of x1, shape of x2); None is a Python float
    "same": ((2, 3), (2, 3)),
    "col_row": ((3, 1), (4,)),
    "both_stretched": ((2, 1, 4), (3, 1)),
    "scalar_array": ((), (2, 3)),
    "python_float": ((2, 3), None),
}
REDUCTIONS = ("sum", "mean", "max", "min", "prod")
AXES = {"all": None, "1": 1, "neg": -1, "tuple": (0, 2), "neg_tuple": (-1, 0)}
MATMULS = {
    "vec_vec": ((3,), (3,)), "mat_vec": ((4, 3), (3,)), "vec_mat": ((3,), (3, 2)),
    "mat_mat": ((2, 3), (3, 4)), "batch_mat": ((2, 3, 4), (4, 2)),
    "batch_vec": ((2, 3, 4), (4,)), "vec_batch": ((3,), (2, 3, 4)),
    "batch_batch": ((2, 3, 4), (2, 4, 5)), "broadcast_batch": ((2, 1, 3, 4), (5, 4, 2)),
}
DOTS = {
    "scalar_mat": ((), (2, 3)), "mat_scalar": ((2, 3), ()), "vec_vec": ((3,), (3,)),
    "mat_vec": ((4, 3), (3,)), "vec_mat": ((3,), (3, 2)), "mat_mat": ((2, 3), (3, 4)),
    "batch_vec": ((2, 3, 4), (4,)), "batch_mat": ((2, 3, 4), (4, 2)),
    "mat_batch": ((2, 3), (4, 3, 5)), "vec_batch": ((3,), (2, 3, 4)),
    "batch_batch": ((2, 3, 4), (5, 4, 2)),
}


def operand(draw, shape):
    return (lambda r: float(draw()(r))) if shape is None else draw(*shape)


ROWS: list[Row] = (
    [Row(name, "matrix", (domain(2, 3),)) for name, domain in UNARY.items()]
    + [
        Row(name, variant, (operand(d1, s1), operand(d2, s2)))
        for name, (d1, d2) in BINARY.items()
        for variant, (s1, s2) in BROADCASTS.items()
    ]
    # x ** k for a constant integer k (JAX's integer_pow): any sign of base
    + [Row("power", f"int_{k}", (normal(2, 3), const(k)), wrt=("x1",))
       for k in (0, 1, 2, 3)]
    + [Row("power", "int_neg", (nonzero(2, 3), const(-2)), wrt=("x1",)),
       Row("power", "float_two", (normal(2, 3), const(2.0)), wrt=("x1",))]
    + [
        Row("where", "same", (mask(2, 3), normal(2, 3), normal(2, 3))),
        Row("where", "broadcast", (mask(3, 1), normal(4), const(0.5))),
        Row("where", "scalar_x", (mask(2, 3), normal(), normal(3))),
    ]
    + [
        Row(name, f"axis_{a}{'_keepdims' if keep else ''}", (normal(2, 3, 4),),
            {"axis": axis, "keepdims": keep})
        for name in REDUCTIONS
        for a, axis in AXES.items()
        for keep in (False, True)
    ]
    + [Row(name, "vector", (normal(5),)) for name in REDUCTIONS]
    + [Row(name, "scalar", (normal(),)) for name in REDUCTIONS]
    + [Row("matmul", v, (normal(*s1), normal(*s2))) for v, (s1, s2) in MATMULS.items()]
    + [Row("dot", v, (normal(*s1), normal(*s2))) for v, (s1, s2) in DOTS.items()]
    + [
        Row("reshape", name, (normal(2, 3, 4), const(shape)))
        for name, shape in (("matrix", (6, 4)), ("flat", (-1,)), ("infer", (4, -1, 2)))
    ]
    + [
        Row("transpose", name, (normal(2, 3, 4),), {"axes": axes})
        for name, axes in (("reverse", None), ("swap", (1, 0, 2)), ("cycle", (2, 0, 1)))
    ]
    + [Row(name, "3d", (normal(2, 3, 4),))
       for name in ("ravel", "copy", "array", "asarray")]
)
ROWS += [
    row
    for path in sorted(Path(__file__).parent.glob("rule_rows_*.py"))
    for row in importlib.import_module(path.stem).ROWS
]
ROW_IDS = [row.id for row in ROWS]
ROW_BY_ID = dict(zip(ROW_IDS, ROWS))
ROW_PRIMS = list(dict.fromkeys(row.prim for row in ROWS))  # first row = default row


# ---- calling rules directly ----------------------------------------------------------


@dataclass
class Drawn:
    """A row's arguments, forward output, a random cotangent and random tangents."""

    row: Row
    args: tuple
    ans: Any
    wrt: tuple[str, ...]
    positions: list[int]  # the wrt parameters' positions among the arguments
    g: np.ndarray  # cotangent of the output
    tangents: list[np.ndarray]  # one per wrt parameter

    def primals(self) -> list[np.ndarray]:
        return [np.asarray(self.args[p], dtype=np.float64) for p in self.positions]

    def jax_fn(self) -> Callable:
        if callable(self.row.jax):  # a twin written in jax.numpy
            fn = self.row.jax
        elif self.row.jax is not None:  # e.g. "scipy.special.erf"
            fn = functools.reduce(getattr, self.row.jax.split("."), jax)
        else:
            fn = functools.reduce(getattr, self.row.prim.split("."), jnp)  # jnp.<prim>

        def f(*xs):
            full = list(self.args)
            for p, x in zip(self.positions, xs):
                full[p] = x
            return fn(*full, **self.row.params)

        return f

    def vjp(self, g) -> list:
        """s2s's cotangent for each wrt parameter (or element of a ``*args`` one)."""
        prim = self.row.primitive
        out = prim.vjp(g, self.ans, *self.args, **self.row.params)
        out = out if len(prim.diff) > 1 else (out,)
        slots = [vararg_slot(label) for label in self.wrt]
        return [out[prim.diff.index(name)] if k is None else out[prim.diff.index(name)][k]
                for name, k in slots]

    def jvp(self, name: str, tangent) -> np.ndarray:
        """s2s's output tangent from parameter ``name``, in the output's shape."""
        name, k = vararg_slot(name)
        if k is not None:  # the JVP rule of *operands takes all their tangents
            first = self.row.primitive.params.index(name)
            tangent = [tangent if i == k else np.zeros(np.shape(a))
                       for i, a in enumerate(self.args[first:])]
        rule = self.row.primitive.jvps[name]
        out = rule(tangent, self.ans, *self.args, **self.row.params)
        return np.broadcast_to(out, np.shape(self.ans))


def vararg_slot(label: str) -> tuple[str, int | None]:
    """``"operands[1]"`` -> ``("operands", 1)``; a plain parameter name -> ``(name, None)``."""
    name, _, k = label.partition("[")
    return name, int(k[:-1]) if k else None


def draw(row: Row, salt: str = "") -> Drawn:
    r = rng_for(row.id + salt)
    args = tuple(d(r) for d in row.args)
    ans = row.primitive.impl(*args, **row.params)
    wrt, positions = [], []
    for name in row.wrt_names():
        p = row.primitive.params.index(name)
        if row.primitive.signature.parameters[name].kind is inspect.Parameter.VAR_POSITIONAL:
            # each element of *operands (np.einsum) is a wrt parameter of its own
            wrt += [f"{name}[{k}]" for k in range(len(args) - p)]
            positions += range(p, len(args))
        else:
            wrt.append(name)
            positions.append(p)
    wrt = tuple(wrt)
    tangents = [r.normal(size=np.shape(args[p])) for p in positions]
    g = r.normal(size=np.shape(ans))
    if np.iscomplexobj(ans):  # np.fft: a complex output's cotangent is complex
        g = g + 1j * r.normal(size=np.shape(ans))
    return Drawn(row, args, ans, wrt, positions, g, tangents)


# These programs run once: compile them for compile speed (XLA's LLVM backend at -O0
# changes no floating-point semantics; it skips optimizations only).
FAST_COMPILE = {"xla_backend_optimization_level": 0}


@functools.cache
def reference(row_id: str) -> tuple[Drawn, tuple]:
    """A drawn row, and JAX's output, VJP of ``g`` and JVP of all the tangents."""
    d = draw(ROW_BY_ID[row_id])
    f = d.jax_fn()

    def answers(xs, g, ts):
        out, pullback = jax.vjp(f, *xs)
        return out, pullback(g), jax.jvp(f, xs, ts)[1]

    # JAX compiles each operation it runs eagerly: one compiled function is faster.
    answers = jax.jit(answers, compiler_options=FAST_COMPILE)
    return d, answers(d.primals(), d.g, d.tangents)


def assert_close(got, expected, **tol) -> None:
    assert np.shape(got) == np.shape(expected), (np.shape(got), np.shape(expected))
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), **(tol or TOL))


# ---- 1-3: rules called directly ------------------------------------------------------

# power's rules compute d/dx2 even where x2 is a constant integer and x1 < 0 (log of a
# negative number: NaN, never compared); the warning that comes with it is expected.
negative_base_log = pytest.mark.filterwarnings(
    "ignore:invalid value encountered in log:RuntimeWarning"
)


@negative_base_log
@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_vjp_rule_matches_jax(row: Row) -> None:
    d, (out, vjp, _) = reference(row.id)
    assert_close(d.ans, out)  # the jnp function is the right equivalent
    for got, expected in zip(d.vjp(d.g), vjp):
        assert_close(got, expected)


@negative_base_log
@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_jvp_rules_match_jax(row: Row) -> None:
    d, (_, _, jvp) = reference(row.id)
    assert_close(sum(d.jvp(name, t) for name, t in zip(d.wrt, d.tangents)), jvp)


@negative_base_log
@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_vjp_is_adjoint_of_jvp(row: Row) -> None:
    """<u, vjp(v)> == <v, jvp(u)> for each parameter, s2s's rules only."""
    d = draw(row, "adjoint")
    for name, u, ct in zip(d.wrt, d.tangents, d.vjp(d.g)):
        # JAX's pairing of a complex cotangent with a tangent: Re(sum(g * t)), no conj
        lhs, rhs = np.vdot(u, ct), np.real(np.sum(d.g * d.jvp(name, u)))
        np.testing.assert_allclose(lhs, rhs, rtol=1e-10, atol=1e-12, err_msg=name)


# ---- 4: no placeholder rules; the table keeps up with the registry -------------------


def differentiable() -> list[str]:
    """Built-in primitives with a parameter a derivative flows through (np.unique has
    none: a derivative through it is refused at the user's line, `underived`)."""
    return [name for name, p in PRIMITIVES.items() if not p.nondiff and p.builtin and p.diff]


# derivative zero at every real input: their check draws complex ones (their complex
# rows are in tests/test_rules_complex.py)
ZERO_ON_REALS = {"imag", "angle", "sign_turn"}


@pytest.mark.parametrize("name", ROW_PRIMS)
def test_vjp_rule_is_not_a_placeholder(name: str) -> None:
    row = next(row for row in ROWS if row.prim == name)
    d = draw(row, "placeholder")
    if name in ZERO_ON_REALS:
        z = d.args[0] + 0.5j
        d = Drawn(row, (z, *d.args[1:]), row.primitive.impl(z, *d.args[1:], **row.params), d.wrt,
                  d.positions, d.g, d.tangents)
    for wrt, ct in zip(d.wrt, d.vjp(d.g)):
        assert np.all(np.isfinite(ct)) and np.any(ct != 0), f"{name}: d/d{wrt}: {ct}"


# Meaningful only inside s2s.vmap(..., axis_name=...): rows of their own there, against
# jax.vmap with the same axis name (tests/test_collectives.py), not in this table.
COLLECTIVES = {"psum", "pmean", "pmax", "pmin", "all_gather"}


# Differentiated by the transforms from the user's dynamics (the adjoint ODE, the
# sensitivity equations), no rules of their own: their cases are tests/test_odeint.py's,
# against JAX's odeint on the same dynamics written with jnp (a JAX twin of the source
# would still call SciPy's solver).
ODE_SOLVES = {"odeint", "odeint_adjoint", "odeint_tangent"}


def test_table_covers_every_differentiable_primitive() -> None:
    several = {n for n in differentiable() if PRIMITIVES[n].results is not None}
    missing = set(differentiable()) - STRUCTURAL - several - set(ROW_PRIMS) - COLLECTIVES \
        - ODE_SOLVES
    assert not missing, f"add rows to ROWS in tests/test_rules.py for {sorted(missing)}"
    missing = set(differentiable()) - REVERSE_REFUSED - COLLECTIVES - ODE_SOLVES - {
        p for case in E2E for p in case.prims}
    assert not missing, f"add cases to E2E in tests/test_rules.py for {sorted(missing)}"


def test_table_names_are_registered() -> None:
    named = set(ROW_PRIMS) | STRUCTURAL | {p for case in E2E for p in case.prims}
    stale = named - set(PRIMITIVES)
    assert not stale, f"the table names primitives that are not registered: {stale}"


# Reverse mode differentiates containers and calls through their structure: no rules.
CONTAINERS = {"make_tuple", "make_list", "make_dict", "call", "append", "pop"}


# No derivative by design, as in JAX ("Differentiation rule for 'pmax' not implemented"):
# s2s refuses them at the user's line (tests/test_collectives.py).
NO_DERIVATIVE = {"pmax", "pmin"}


def test_no_derivative_list_is_current() -> None:
    assert all(PRIMITIVES[n].vjp is None and not PRIMITIVES[n].jvps for n in NO_DERIVATIVE)


@pytest.mark.parametrize(
    "name", [n for n in differentiable() if n not in CONTAINERS | NO_DERIVATIVE | ODE_SOLVES])
def test_every_differentiable_primitive_has_its_rules(name: str) -> None:
    prim = PRIMITIVES[name]
    assert prim.vjp is not None, f"{name} has no VJP rule"
    assert set(prim.jvps) == set(prim.diff), f"{name}: JVPs for {set(prim.jvps)}"


def unresolved_names(rule: Callable) -> set[str]:
    """Global names a rule reads that neither its module nor builtins define."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(rule)))
    loads, stores = set(), set(inspect.signature(rule).parameters)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loads if isinstance(node.ctx, ast.Load) else stores).add(node.id)
    return {n for n in loads - stores
            if n not in rule.__globals__ and not hasattr(builtins, n)}


def rules_of(name: str) -> list[Callable]:
    prim = PRIMITIVES[name]
    return [r for r in (prim.vjp, *prim.jvps.values()) if r is not None]


@pytest.mark.parametrize("name", [n for n, p in PRIMITIVES.items() if p.builtin and rules_of(n)])
def test_rule_names_resolve(name: str) -> None:
    """Rules are ordinary functions: every global name they read is defined.

    (power's rules once read ``is_integer_constant`` without importing it: only the
    inliner, which supplies it, could run them.)
    """
    for rule in rules_of(name):
        assert not unresolved_names(rule), f"{rule.__name__}: {unresolved_names(rule)}"


# ---- 5: end to end through s2s.grad --------------------------------------------------


MATRIX_PAIR = (normal(2, 3), normal(3, 2))
E2E: list[E2ECase] = (
    [E2ECase(getattr(R, f"f_{name}"), (name,), (domain(2, 3),))
     for name, domain in UNARY.items()]
    + [
        E2ECase(getattr(R, f"f_{name}"), (name,), (d1(2, 3), d2(3)))
        for name, (d1, d2) in BINARY.items()
    ]
    + [
        E2ECase(R.f_power_constants, ("power",), (uniform(0.3, 2.0)(2, 3),)),
        E2ECase(R.f_where, ("where",), (normal(2, 3), normal(3))),
    ]
    + [
        E2ECase(getattr(R, f"f_{name}{suffix}"), (name,))
        for name in ("sum", "mean", "max", "min", "prod")
        for suffix in ("", "_keepdims")
    ]
    + [
        E2ECase(R.f_matmul, ("matmul",), MATRIX_PAIR),
        E2ECase(R.f_matmul_batched, ("matmul",), MATRIX_PAIR),
        E2ECase(R.f_dot, ("dot",), MATRIX_PAIR),
    ]
    + [
        E2ECase(getattr(R, f"f_{name}"), (name,))
        for name in ("reshape", "transpose", "T", "ravel", "copy", "array", "asarray",
                     "identity", "make_tuple", "make_list", "make_dict", "call")
    ]
    + [
        E2ECase(R.f_getitem_basic, ("getitem",)),
        E2ECase(R.f_getitem_repeated, ("getitem",)),
        # x[IDX], IDX a module constant array, once failed while inlining getitem's
        # VJP: `value in (None, Ellipsis)` compared the array elementwise.
        E2ECase(R.f_getitem_constant_index, ("getitem",)),
        E2ECase(R.f_float, ("float",), jax=False),
    ]
    # An axis in a name leaves a rule's `if axis is None` to run time.  Once, what the
    # `if` rebound (g = np.expand_dims(g, axis)) was lost after it: square inputs gave
    # silently wrong gradients (sum: transposed, max: NaN); and a rule returning
    # inside such an `if` (mean, transpose) raised TypeError.
    + [
        E2ECase(R.f_sum_axis_variable, ("sum",), (normal(3, 3),)),
        E2ECase(R.f_max_axis_variable, ("max",), (normal(3, 3),)),
        E2ECase(R.f_mean_axis_argument, ("mean",), (normal(3, 3),), static=(1,)),
        E2ECase(R.f_transpose_axes_argument, ("transpose",), static=((1, 0),)),
    ]
)


E2E += [
    case
    for path in sorted(Path(__file__).parent.glob("rule_rows_*.py"))
    for case in getattr(importlib.import_module(path.stem), "E2E", [])
]
E2E_BY_ID = {c.id: c for c in E2E}


def e2e_params(cases: list[E2ECase], every: int = 1) -> list:
    """One case in ``every`` by default, the others with ``-m slow`` (CI budget)."""
    return [pytest.param(c, id=c.id, marks=[] if k % every == 0 else [pytest.mark.slow])
            for k, c in enumerate(cases)]


def prims_in(fn_ir) -> set[str]:
    found = set()
    for s in walk(fn_ir.body):
        if isinstance(s, Let):
            found.add(s.prim)
            callee = s.params.get("callee")
            if callee is not None:
                found |= prims_in(callee)
    return found


@pytest.mark.parametrize("case", E2E, ids=[c.id for c in E2E])
def test_e2e_function_exercises_its_primitive(case: E2ECase) -> None:
    missing = set(case.prims) - prims_in(s2s.grad(case.fn).ir)
    assert not missing, f"{case.id} never reaches {missing}"


@functools.cache
def jax_grads(case_id: str) -> tuple:
    """jax.grad of the twin (the same source, run by JAX) at float64 and float32."""
    case = E2E_BY_ID[case_id]
    grad = jax.grad(twin_of(case.fn), argnums=case.argnums)
    n, static = len(case.args), case.static  # static arguments stay Python values
    both = jax.jit(lambda a64, a32: (grad(*a64, *static), grad(*a32, *static)),
                   compiler_options=FAST_COMPILE)
    return both(case.draw()[:n], case.draw(np.float32)[:n])


@pytest.mark.parametrize("case", e2e_params([c for c in E2E if c.jax]))
def test_e2e_grad_matches_jax(case: E2ECase) -> None:
    got = s2s.grad(case.fn, argnums=case.argnums)(*case.draw())
    for g, e in zip(got, jax_grads(case.id)[0]):
        assert_close(g, e, rtol=1e-10, atol=1e-11)


@pytest.mark.parametrize("case", e2e_params([c for c in E2E if c.fd], every=2))
def test_e2e_grad_matches_finite_differences(case: E2ECase) -> None:
    args = case.draw()
    got = s2s.grad(case.fn, argnums=case.argnums)(*args)
    for i, g in zip(case.argnums, got):
        expected = fd_grad(case.fn, args, i)[0]
        np.testing.assert_allclose(g, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", e2e_params([c for c in E2E if c.jax], every=2))
def test_e2e_float32_keeps_dtype_and_matches_jax(case: E2ECase) -> None:
    got = s2s.grad(case.fn, argnums=case.argnums)(*case.draw(np.float32))
    for g, e in zip(got, jax_grads(case.id)[1]):
        assert g.dtype == np.float32 and e.dtype == np.float32
        assert_close(g, e, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(STRUCTURAL & set(PRIMITIVES)))
def test_structural_gradient_is_not_a_placeholder(name: str) -> None:
    for case in (c for c in E2E if name in c.prims):
        got = s2s.grad(case.fn, argnums=case.argnums)(*case.draw())
        assert all(np.any(g != 0) for g in got), f"{case.id}: {got}"


# ---- 6: special values, with JAX's conventions ---------------------------------------

A = np.array
SPECIAL = {  # id -> (function, arguments); all arguments are differentiated
    "abs_at_zero": (R.s_abs, (A([0.0, 1.5, -2.0]),)),
    "sqrt_at_zero": (R.s_sqrt, (A([0.0, 4.0]),)),
    "maximum_ties": (R.s_maximum, (A([1.0, 2.0, -0.5]), A([1.0, 0.0, -0.5]))),
    "minimum_ties": (R.s_minimum, (A([1.0, 2.0, -0.5]), A([1.0, 0.0, -0.5]))),
    "max_ties": (R.s_max, (A([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]]),)),
    "min_ties": (R.s_min, (A([[1.0, -1.0, -1.0], [0.5, 0.5, 2.0]]),)),
    "square_at_zero": (R.s_square_pow, (A([0.0, 1.0]),)),
    "float_zero_power_at_zero": (R.s_zero_pow, (A([0.0, 1.0]),)),
    "int_zero_power_at_zero": (R.s_int_zero_pow, (A([0.0, 1.0]),)),
    "exponent_grad_at_zero_base": (R.s_pow_exponent, (A([2.0, 0.5, 3.0]), np.zeros(3))),
    "where_sqrt_nan": (R.s_where_sqrt, (A([0.0, 4.0, -1.0]),)),
    "prod_one_zero": (R.s_prod, (A([[0.0, 2.0, 3.0], [1.5, -1.0, 2.0]]),)),
    "prod_two_zeros": (R.s_prod, (A([[0.0, 2.0, 0.0], [0.0, -1.0, 2.0]]),)),
}


@pytest.mark.parametrize("key", SPECIAL)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # 1/0 and sqrt(-1), on purpose
def test_special_values_match_jax(key: str) -> None:
    fn, args = SPECIAL[key]
    argnums = tuple(range(len(args)))
    got = s2s.grad(fn, argnums=argnums)(*args)
    expected = jax.grad(getattr(J, fn.__name__), argnums=argnums)(*args)
    for g, e in zip(got, expected):
        assert_close(g, e)  # equal_nan: NaN where JAX has NaN, inf where JAX has inf


# ---- 7: piecewise-constant primitives carry no derivative ----------------------------

PIECEWISE = [n for n, p in PRIMITIVES.items()
             if p.family == "piecewise-constant" and p.builtin]


def test_piecewise_constant_primitives_are_nondiff() -> None:
    assert PIECEWISE and all(PRIMITIVES[n].nondiff for n in PIECEWISE)


@pytest.mark.parametrize("name", PIECEWISE + ["floor_divide"])
def test_piecewise_constant_gradient_matches_jax(name: str) -> None:
    fn = getattr(R, f"nd_{name}")  # add nd_<name> to rule_fns.py for a new primitive
    x = rng_for(name).uniform(-3.0, 3.0, size=(2, 3))
    assert name in prims_in(s2s.grad(fn).ir)
    assert_close(s2s.grad(fn)(x), jax.grad(getattr(J, fn.__name__))(x))


def test_e2e_function_names_are_unique() -> None:
    """Cases are looked up by function name: two files' f_append would collide."""
    names = [c.id for c in E2E]
    assert len(set(names)) == len(names), sorted(n for n in names if names.count(n) > 1)
