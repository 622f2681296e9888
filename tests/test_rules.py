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
import inspect
import textwrap
import types
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

import rule_fns as R  # noqa: E402
import s2s  # noqa: E402
from s2s.ir import Let, walk  # noqa: E402
from s2s.primitives import PRIMITIVES, registry  # noqa: E402
from support import fd_grad, jax_twin  # noqa: E402

J = jax_twin(R)

# Handled by reverse mode's structure (or syntax-only): no direct numeric table row.
# Each is covered end to end in E2E below.
STRUCTURAL = {"identity", "make_tuple", "make_list", "make_dict", "call", "float",
              "getitem", "T"}
# The rule-time predicates the inliner decides while inlining (s2s.inline._PREDICATES).
PREDICATES = {"is_integer_constant": registry.is_integer_constant,
              "is_basic_index": registry.is_basic_index}
TOL = {"rtol": 1e-10, "atol": 1e-12}


def rng_for(key: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(key.encode()))


# ---- drawing arguments --------------------------------------------------------------


def normal(*shape):
    return lambda r: r.normal(size=shape)


def uniform(lo, hi):
    return lambda *shape: lambda r: r.uniform(lo, hi, size=shape)


def nonzero(*shape):
    return lambda r: r.uniform(0.5, 2.0, size=shape) * r.choice([-1.0, 1.0], size=shape)


def mask(*shape):
    return lambda r: r.random(shape) < 0.5


def const(value):
    return lambda r: value


# ---- the table ------------------------------------------------------------------------


@dataclass
class Row:
    prim: str
    variant: str
    args: tuple[Callable, ...]  # one drawer per positional parameter, in order
    params: dict = field(default_factory=dict)  # keyword parameters (axis, keepdims)
    jnp_fn: Callable | None = None  # default: jnp.<prim>
    wrt: tuple[str, ...] | None = None  # default: all of the primitive's diff params

    @property
    def id(self) -> str:
        return f"{self.prim}-{self.variant}"

    @property
    def primitive(self):
        return PRIMITIVES[self.prim]

    def wrt_names(self) -> tuple[str, ...]:
        return self.wrt if self.wrt is not None else self.primitive.diff


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
    + [Row(name, "scalar", (domain(),)) for name, domain in UNARY.items()]
    + [
        Row(name, variant, (operand(d1, s1), operand(d2, s2)))
        for name, (d1, d2) in BINARY.items()
        for variant, (s1, s2) in BROADCASTS.items()
    ]
    # x ** k for a constant integer k (JAX's integer_pow): any sign of base
    + [Row("power", f"int_{k}", (normal(2, 3), const(k)), wrt=("x1",)) for k in (0, 1, 2, 3)]
    + [Row("power", "int_neg", (nonzero(2, 3), const(-2)), wrt=("x1",)),
       Row("power", "float_two", (normal(2, 3), const(2.0)), wrt=("x1",))]
    + [
        Row("where", "same", (mask(2, 3), normal(2, 3), normal(2, 3))),
        Row("where", "broadcast", (mask(3, 1), normal(4), const(0.5)), wrt=("x",)),
        Row("where", "scalar_x", (mask(2, 3), normal(), normal(3))),
    ]
    + [
        Row(name, f"axis_{a}{'_keepdims' if keep else ''}", (normal(2, 3, 4),),
            {"axis": axis, "keepdims": keep})
        for name in ("sum", "mean", "max", "min", "prod")
        for a, axis in AXES.items()
        for keep in (False, True)
    ]
    + [Row(name, "vector", (normal(5),)) for name in ("sum", "mean", "max", "min", "prod")]
    + [Row(name, "scalar", (normal(),)) for name in ("sum", "mean", "max", "min", "prod")]
    + [Row("matmul", v, (normal(*s1), normal(*s2))) for v, (s1, s2) in MATMULS.items()]
    + [Row("dot", v, (normal(*s1), normal(*s2))) for v, (s1, s2) in DOTS.items()]
    + [
        Row("reshape", f"to_{'_'.join(map(str, shape))}", (normal(2, 3, 4), const(shape)))
        for shape in ((6, 4), (-1,), (4, -1, 2))
    ]
    + [
        Row("transpose", name, (normal(2, 3, 4),), {"axes": axes})
        for name, axes in (("reverse", None), ("swap", (1, 0, 2)), ("cycle", (2, 0, 1)))
    ]
    + [Row(name, "matrix", (normal(2, 3, 4),)) for name in ("ravel", "copy", "array", "asarray")]
)
ROW_IDS = [row.id for row in ROWS]
ROW_PRIMS = list(dict.fromkeys(row.prim for row in ROWS))  # first row = default row


# ---- calling rules directly ------------------------------------------------------------


def runnable(rule: Callable) -> Callable:
    """The rule with the predicates in scope, as the inliner provides them.

    See test_rule_names_resolve for rules that need this.
    """
    missing = {k: v for k, v in PREDICATES.items() if k not in rule.__globals__}
    if not missing:
        return rule
    return types.FunctionType(rule.__code__, {**rule.__globals__, **missing},
                              rule.__name__, rule.__defaults__, rule.__closure__)


@dataclass
class Drawn:
    row: Row
    args: tuple
    ans: Any
    wrt: tuple[str, ...]
    positions: list[int]  # the wrt parameters' positions among the arguments

    def primals(self) -> list[np.ndarray]:
        return [np.asarray(self.args[p], dtype=np.float64) for p in self.positions]

    def jax_fn(self) -> Callable:
        fn = self.row.jnp_fn or getattr(jnp, self.row.prim)

        def f(*xs):
            full = list(self.args)
            for p, x in zip(self.positions, xs):
                full[p] = x
            return fn(*full, **self.row.params)

        return f

    def vjp(self, g) -> list:
        """s2s's cotangent for each wrt parameter."""
        prim = self.row.primitive
        out = runnable(prim.vjp)(g, self.ans, *self.args, **self.row.params)
        out = out if len(prim.diff) > 1 else (out,)
        return [out[prim.diff.index(name)] for name in self.wrt]

    def jvp(self, name: str, tangent) -> np.ndarray:
        """s2s's output tangent from parameter ``name``, in the output's shape."""
        rule = runnable(self.row.primitive.jvps[name])
        out = rule(tangent, self.ans, *self.args, **self.row.params)
        return np.broadcast_to(out, np.shape(self.ans))


def draw(row: Row, salt: str = "") -> Drawn:
    r = rng_for(row.id + salt)
    args = tuple(d(r) for d in row.args)
    ans = row.primitive.impl(*args, **row.params)
    wrt = row.wrt_names()
    return Drawn(row, args, ans, wrt, [row.primitive.params.index(n) for n in wrt])


def random_like(r: np.random.Generator, x) -> np.ndarray:
    return r.normal(size=np.shape(x))


def assert_close(got, expected, **tol) -> None:
    assert np.shape(got) == np.shape(expected), (np.shape(got), np.shape(expected))
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), **(tol or TOL))


# ---- 1-3: rules called directly --------------------------------------------------------


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_vjp_rule_matches_jax(row: Row) -> None:
    d = draw(row)
    g = random_like(rng_for(row.id + "g"), d.ans)
    out, pullback = jax.vjp(d.jax_fn(), *d.primals())
    assert_close(d.ans, out)  # the jnp function is the right equivalent
    for got, expected in zip(d.vjp(g), pullback(jnp.asarray(g))):
        assert_close(got, expected)


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_jvp_rules_match_jax(row: Row) -> None:
    d = draw(row)
    r = rng_for(row.id + "u")
    primals = d.primals()
    tangents = [random_like(r, x) for x in primals]
    total = 0
    for i, name in enumerate(d.wrt):  # each parameter's contribution on its own
        alone = [t if j == i else np.zeros_like(t) for j, t in enumerate(tangents)]
        _, expected = jax.jvp(d.jax_fn(), primals, alone)
        got = d.jvp(name, tangents[i])
        assert_close(got, expected)
        total = total + got
    _, expected = jax.jvp(d.jax_fn(), primals, tangents)
    assert_close(total, expected)


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_vjp_is_adjoint_of_jvp(row: Row) -> None:
    """<u, vjp(v)> == <v, jvp(u)>, s2s's rules only."""
    d = draw(row, "adjoint")
    r = rng_for(row.id + "uv")
    us = [random_like(r, x) for x in d.primals()]
    v = random_like(r, d.ans)
    lhs = sum(np.vdot(u, ct) for u, ct in zip(us, d.vjp(v)))
    rhs = np.vdot(v, sum(d.jvp(name, u) for name, u in zip(d.wrt, us)))
    np.testing.assert_allclose(lhs, rhs, rtol=1e-10, atol=1e-12)


# ---- 4: no placeholder rules; the table keeps up with the registry ---------------------


def differentiable() -> list[str]:
    return [name for name, p in PRIMITIVES.items() if not p.nondiff]


@pytest.mark.parametrize("name", ROW_PRIMS)
def test_vjp_rule_is_not_a_placeholder(name: str) -> None:
    row = next(row for row in ROWS if row.prim == name)
    d = draw(row, "placeholder")
    for wrt, ct in zip(d.wrt, d.vjp(random_like(rng_for(name), d.ans))):
        assert np.all(np.isfinite(ct)) and np.any(ct != 0), f"{name}: d/d{wrt} is {ct!r}"


def test_table_covers_every_differentiable_primitive() -> None:
    missing = set(differentiable()) - STRUCTURAL - set(ROW_PRIMS)
    assert not missing, f"add rows to ROWS in tests/test_rules.py for {sorted(missing)}"
    missing = set(differentiable()) - {p for case in E2E for p in case.prims}
    assert not missing, f"add functions to E2E in tests/test_rules.py for {sorted(missing)}"


def test_table_names_are_registered() -> None:
    stale = (set(ROW_PRIMS) | STRUCTURAL | {p for c in E2E for p in c.prims}) - set(
        PRIMITIVES
    )
    assert not stale, f"the table names primitives that are not registered: {stale}"


@pytest.mark.parametrize("name", differentiable())
def test_every_differentiable_primitive_has_its_rules(name: str) -> None:
    prim = PRIMITIVES[name]
    if name in {"make_tuple", "make_list", "make_dict", "call"}:
        return  # structural: reverse mode handles them without a numeric rule
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


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=(
        "s2s/primitives/binary.py uses is_integer_constant in power_vjp/power_jvp_x1 "
        "without importing it: the inliner supplies it, but calling the rule as the "
        "plain function the registry promises raises NameError"))) if n == "power" else n
    for n in PRIMITIVES if rules_of(n)
])
def test_rule_names_resolve(name: str) -> None:
    """Rules are ordinary functions: every global name they read is defined."""
    for rule in rules_of(name):
        assert not unresolved_names(rule), f"{rule.__name__}: {unresolved_names(rule)}"


# ---- 5: end to end through s2s.grad -----------------------------------------------------


@dataclass
class E2ECase:
    fn: Callable
    prims: tuple[str, ...]  # the primitives it exercises (checked against its IR)
    args: tuple[Callable, ...] = (normal(2, 3),)
    jax: bool = True  # False where JAX cannot trace the source
    xfail: str = ""

    @property
    def id(self) -> str:
        return self.fn.__name__

    def draw(self, dtype=np.float64) -> tuple:
        r = rng_for(self.id)
        return tuple(np.asarray(d(r), dtype=dtype) for d in self.args)

    @property
    def argnums(self) -> tuple[int, ...]:
        return tuple(range(len(self.args)))


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
        E2ECase(R.f_getitem_constant_index, ("getitem",), xfail=(
            "indexing with a module-level constant integer array (x[IDX]) fails while "
            "inlining the getitem VJP: s2s/inline.py _expr_of tests "
            "`i.value in (None, Ellipsis)` on the array constant, and NumPy raises "
            "'The truth value of an array ... is ambiguous'")),
        E2ECase(R.f_float, ("float",), jax=False),
    ]
)


def e2e_params(cases: list[E2ECase]) -> list:
    return [pytest.param(c, id=c.id, marks=[pytest.mark.xfail(strict=True, reason=c.xfail)]
                         if c.xfail else []) for c in cases]


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


@pytest.mark.parametrize("case", e2e_params([c for c in E2E if c.jax]))
def test_e2e_grad_matches_jax(case: E2ECase) -> None:
    args = case.draw()
    got = s2s.grad(case.fn, argnums=case.argnums)(*args)
    expected = jax.grad(getattr(J, case.id), argnums=case.argnums)(*args)
    for g, e in zip(got, expected):
        assert_close(g, e, rtol=1e-10, atol=1e-11)


@pytest.mark.parametrize("case", e2e_params(E2E))
def test_e2e_grad_matches_finite_differences(case: E2ECase) -> None:
    args = case.draw()
    got = s2s.grad(case.fn, argnums=case.argnums)(*args)
    for i, g in zip(case.argnums, got):
        np.testing.assert_allclose(g, fd_grad(case.fn, args, i)[0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", e2e_params([c for c in E2E if c.jax]))
def test_e2e_float32_keeps_dtype_and_matches_jax(case: E2ECase) -> None:
    args = case.draw(np.float32)
    got = s2s.grad(case.fn, argnums=case.argnums)(*args)
    expected = jax.grad(getattr(J, case.id), argnums=case.argnums)(*args)
    for g, e in zip(got, expected):
        assert g.dtype == np.float32 and e.dtype == np.float32
        assert_close(g, e, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", [n for n in STRUCTURAL if n in PRIMITIVES])
def test_structural_gradient_is_not_a_placeholder(name: str) -> None:
    for case in (c for c in E2E if name in c.prims and not c.xfail):
        got = s2s.grad(case.fn, argnums=case.argnums)(*case.draw())
        assert all(np.any(g != 0) for g in got), f"{case.id}: {got}"


# ---- 6: special values, with JAX's conventions ------------------------------------------

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
    "exponent_grad_at_zero_base": (R.s_pow_exponent, (A([2.0, 0.5, 3.0]), A([0.0, 0.0, 0.0]))),
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


# ---- 7: piecewise-constant primitives carry no derivative -------------------------------

PIECEWISE = [n for n, p in PRIMITIVES.items() if p.family == "piecewise-constant"]


def test_piecewise_constant_primitives_are_nondiff() -> None:
    assert PIECEWISE and all(PRIMITIVES[n].nondiff for n in PIECEWISE)


@pytest.mark.parametrize("name", PIECEWISE + ["floor_divide"])
def test_piecewise_constant_gradient_matches_jax(name: str) -> None:
    fn = getattr(R, f"nd_{name}")  # add nd_<name> to rule_fns.py for a new primitive
    x = rng_for(name).uniform(-3.0, 3.0, size=(2, 3))
    assert name in prims_in(s2s.grad(fn).ir)
    assert_close(s2s.grad(fn)(x), jax.grad(getattr(J, fn.__name__))(x))
