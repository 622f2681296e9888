"""The sharp bits page (docs/sharp-bits.md): every number on it, from s2s and JAX.

Each case is a small function with a NaN, an infinity, a tie, an integer or float32
input, or source s2s refuses to read, transformed by s2s and by JAX (the same code
object, ``np`` rebound to ``jax.numpy``, float64 enabled).  The page is rendered from
the live results, so ``test_page_is_current`` fails as soon as either library's value
moves; ``test_case`` checks that s2s agrees with JAX where the page says it does and
differs where it says it does.

    python tools/errors_doc.py      # rewrites docs/errors.md and docs/sharp-bits.md
"""

from __future__ import annotations

import builtins
import inspect
import re
import textwrap
import types
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

import s2s
from support import fd_grad

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "sharp-bits.md"


# ---- the functions (the page shows their source) ------------------------------------


def where_sqrt(x):
    return np.sum(np.where(x > 0.0, np.sqrt(x), 0.0))


def where_sqrt_safe(x):
    safe = np.where(x > 0.0, x, 1.0)
    return np.sum(np.where(x > 0.0, np.sqrt(safe), 0.0))


def x_log_x(x):
    return np.sum(x * np.log(x))


def zero_times_overflow(x):
    return np.sum(0.0 * np.exp(x))


def max_ties(x):
    return np.max(x)


def pick_argmax(x):
    return x[np.argmax(x)]


def relu_at_zero(x):
    return np.sum(np.maximum(x, 0.0))


def clip_at_edges(x):
    return np.sum(np.clip(x, 0.0, 1.0))


def sort_ties(x):
    return np.sum(np.sort(x) * np.array([1.0, 2.0, 3.0]))


def abs_at_zero(x):
    return np.sum(np.abs(x))


def sqrt_at_zero(x):
    return np.sum(np.sqrt(x))


def norm_at_zero(x):
    return np.linalg.norm(x)


def arctan2_at_origin(x):
    return np.sum(np.arctan2(x, x))


def floor_steps(x):
    return np.sum(np.floor(x) + x)


def logsumexp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def variance(x):
    return np.var(x)


def hypot_of_tie(x):
    return np.hypot(np.maximum(x, 0.3), x)


def scaled(x, n):
    return np.sum(x * n)


def exp_sum(x):
    return np.sum(np.exp(x))


def write_through_view(x):
    y = x * 1.0
    head = y[:2]
    head += 1.0
    return np.sum(y * y)


# ---- running them through s2s and JAX ----------------------------------------------


def jax_twin(fn: Callable) -> Callable:
    """The same code object with ``np`` bound to ``jax.numpy``."""
    import jax.numpy as jnp

    return types.FunctionType(
        fn.__code__,
        {"np": jnp, "__builtins__": builtins},
        fn.__name__,
        fn.__defaults__,
        fn.__closure__,
    )


@dataclass(frozen=True)
class Case:
    id: str
    title: str
    text: str  # what happens and why, in prose
    fn: Callable | None
    call: str  # the call, as the page shows it (``T`` is s2s or jax)
    run: Callable[[Any, Callable], Any]  # (transform module, function) -> value
    same: bool = True  # s2s gives JAX's value (or raises JAX's class and first line)
    numpy: Callable[[], Any] | None = None  # an independent check, shown as a third row
    numpy_label: str = "finite differences of the NumPy function"
    refuses: bool = False  # s2s raises a located TransformError
    matches: tuple[str, ...] = ()  # who gives the independent value: "s2s", "jax"
    source: Callable[[], str] | None = field(default=None, compare=False)


def _grad(x: Any) -> Callable[[Any, Callable], Any]:
    return lambda T, f: T.grad(f)(x)


def _edited_on_disk(T: Any, f: Callable) -> Any:
    import error_catalogue as EC

    fn = EC.changed_on_disk()  # f(x) = sum(x**2) runs; the file now says sum(x**3)
    if T is s2s:
        return s2s.grad(fn)(np.array([1.0, 2.0]))
    return T.grad(jax_twin(fn))(np.array([1.0, 2.0]))


def _vjp_int(T: Any, f: Callable) -> Any:
    _, back = T.vjp(f, np.array([0.5, 1.5, 2.5]), np.arange(3))
    return back(1.0)


X3 = "np.array([-1.0, 0.0, 4.0])"

CASES: list[Case] = [
    Case(
        "where-sqrt",
        "`np.where` does not stop a NaN gradient",
        "Both branches of `np.where` are computed, and so are both derivatives: the "
        "branch not taken gets cotangent 0, and 0 times `sqrt`'s derivative "
        "1/(2√x) is nan where that derivative is inf (x = 0) or nan (x < 0). s2s "
        "emits the same chain rule as JAX, so it gives JAX's NaNs.",
        where_sqrt,
        "T.grad(where_sqrt)(np.array([-1.0, 0.0, 4.0]))",
        _grad(np.array([-1.0, 0.0, 4.0])),
    ),
    Case(
        "where-sqrt-safe",
        "The fix: a second `np.where` inside",
        "Feed the unsafe function an input where its derivative is finite, then "
        "select: no inf or nan is ever multiplied by the 0 cotangent.",
        where_sqrt_safe,
        "T.grad(where_sqrt_safe)(np.array([-1.0, 0.0, 4.0]))",
        _grad(np.array([-1.0, 0.0, 4.0])),
    ),
    Case(
        "x-log-x",
        "0 · (−inf) in the derivative",
        "At x = 0, x·log(x) is already nan in NumPy (0 · −inf); its derivative "
        "log(x) + x · (1/x) is −inf + 0 · inf = nan in both.",
        x_log_x,
        "T.grad(x_log_x)(np.array([0.0, 1.0]))",
        _grad(np.array([0.0, 1.0])),
    ),
    Case(
        "zero-times-overflow",
        "A zero factor does not cancel an overflow",
        "`exp(800)` overflows to inf; its derivative, multiplied by the constant 0, "
        "is 0 · inf = nan. Neither s2s nor JAX simplifies the 0 away.",
        zero_times_overflow,
        "T.grad(zero_times_overflow)(np.array([1.0, 800.0]))",
        _grad(np.array([1.0, 800.0])),
    ),
    Case(
        "max-ties",
        "`np.max` with ties splits the gradient",
        "The cotangent is shared equally among the elements equal to the maximum "
        "(JAX's rule for reductions).",
        max_ties,
        "T.grad(max_ties)(np.array([1.0, 3.0, 3.0]))",
        _grad(np.array([1.0, 3.0, 3.0])),
    ),
    Case(
        "argmax-ties",
        "...but indexing by `np.argmax` picks one",
        "`np.argmax` returns the first maximum; the gradient flows through the "
        "index read, to that element only.",
        pick_argmax,
        "T.grad(pick_argmax)(np.array([3.0, 1.0, 3.0]))",
        _grad(np.array([3.0, 1.0, 3.0])),
    ),
    Case(
        "maximum-tie",
        "`np.maximum(x, 0)` at 0 gives 0.5",
        "At a tie each operand of `np.maximum`/`np.minimum` gets half the "
        "cotangent, so ReLU written this way has derivative 0.5 at 0 (not 0 or 1).",
        relu_at_zero,
        "T.grad(relu_at_zero)(np.array([-1.0, 0.0, 2.0]))",
        _grad(np.array([-1.0, 0.0, 2.0])),
    ),
    Case(
        "clip-edges",
        "`np.clip` at its bounds gives 0.5",
        "`np.clip` is a maximum then a minimum, so at either bound the derivative "
        "is the tie's 0.5.",
        clip_at_edges,
        "T.grad(clip_at_edges)(np.array([0.0, 0.5, 1.0]))",
        _grad(np.array([0.0, 0.5, 1.0])),
    ),
    Case(
        "sort-ties",
        "`np.sort` with ties follows the stable order",
        "The cotangent of a sorted element goes back to the position `np.argsort` "
        "(stable) took it from: of the two 2.0s, the first gets weight 2, the "
        "second weight 3.",
        sort_ties,
        "T.grad(sort_ties)(np.array([2.0, 1.0, 2.0]))",
        _grad(np.array([2.0, 1.0, 2.0])),
    ),
    Case(
        "abs-zero",
        "`np.abs` at 0 has derivative 1",
        "Not 0 and not a subgradient interval: JAX's rule takes the x ≥ 0 side, and "
        "s2s's follows it.",
        abs_at_zero,
        "T.grad(abs_at_zero)(np.array([-2.0, 0.0, 2.0]))",
        _grad(np.array([-2.0, 0.0, 2.0])),
    ),
    Case(
        "sqrt-zero",
        "`np.sqrt` at 0: inf",
        "1/(2√0) = inf; no clamping.",
        sqrt_at_zero,
        "T.grad(sqrt_at_zero)(np.array([0.0, 4.0]))",
        _grad(np.array([0.0, 4.0])),
    ),
    Case(
        "norm-zero",
        "`np.linalg.norm` of a zero vector: nan",
        "The derivative x/‖x‖ is 0/0 at the origin. Add a small constant under a "
        "square root (`np.sqrt(np.sum(x**2) + 1e-12)`) if a finite value is needed.",
        norm_at_zero,
        "T.grad(norm_at_zero)(np.array([0.0, 0.0]))",
        _grad(np.array([0.0, 0.0])),
    ),
    Case(
        "arctan2-origin",
        "`np.arctan2(0, 0)`: nan",
        "The value is 0 by convention, but the derivative's denominator x² + y² "
        "is 0.",
        arctan2_at_origin,
        "T.grad(arctan2_at_origin)(np.array([0.0, 1.0]))",
        _grad(np.array([0.0, 1.0])),
    ),
    Case(
        "floor",
        "Piecewise-constant functions have derivative 0",
        "`np.floor`, `np.round`, `np.sign`, comparisons: zero derivative everywhere, "
        "including at the jumps, where the true derivative does not exist.",
        floor_steps,
        "T.grad(floor_steps)(np.array([0.5, 1.0]))",
        _grad(np.array([0.5, 1.0])),
    ),
    Case(
        "logsumexp-inf",
        "−inf inputs are fine where the formula stays finite",
        "The shifted log-sum-exp gives the −inf element weight exp(−inf) = 0.",
        logsumexp,
        "T.grad(logsumexp)(np.array([-np.inf, 0.0]))",
        _grad(np.array([-np.inf, 0.0])),
    ),
    Case(
        "var-inf",
        "An inf in `np.var` makes every entry of its derivative nan",
        "The derivative 2 (c - mean(c)) / n of c = x - mean(x) subtracts mean(c), zero "
        "for finite x; with an inf, mean(x) is inf, c holds inf - inf = nan, and so "
        "does every entry. JAX's trace has that term; s2s's rule keeps it to give "
        "JAX's value (it gave `[-inf, nan, -inf]` before). `np.std` likewise.",
        variance,
        "T.grad(variance)(np.array([1.0, np.inf, 2.0]))",
        _grad(np.array([1.0, np.inf, 2.0])),
    ),
    Case(
        "second-order-tie",
        "Second derivatives at a tie can differ from JAX",
        "At x = 0.3, `np.maximum(x, 0.3)` is at its tie inside `np.hypot`. s2s "
        "differentiates the 0.5 tie rule by the calculus (the tie's own second "
        "derivative is 0, and the product and quotient rules do the rest); JAX's "
        "second derivative follows its `hypot` implementation, which swaps its "
        "arguments so the larger comes first, and gives about 0 (rounded to 12 "
        "decimals here). First derivatives agree. Away from ties they agree to "
        "rounding.",
        hypot_of_tie,
        "T.hessian(hypot_of_tie)(0.3)",
        lambda T, f: np.round(np.asarray(T.hessian(f)(0.3)), 12) + 0.0,
        same=False,
        matches=("s2s",),
        numpy=lambda: round((1.25 - 0.45**2 / 0.18) / np.sqrt(0.18), 12),
        numpy_label="the calculus, with the tie's derivative 0.5: "
        "(1 + 0.5²)/h − (0.5·0.3 + 0.3)²/h³, h = 0.3√2",
    ),
    Case(
        "int-input",
        "Integer inputs: `grad` refuses, `vjp` gives float0 zeros",
        "An integer argument has no tangent space. `grad` raises JAX's TypeError "
        "with JAX's message (no silent zeros).",
        scaled,
        "T.grad(scaled, argnums=1)(np.array([0.5, 1.5, 2.5]), np.arange(3))",
        lambda T, f: T.grad(f, argnums=1)(np.array([0.5, 1.5, 2.5]), np.arange(3)),
    ),
    Case(
        "int-vjp",
        "`vjp` with an integer argument",
        "Its cotangent is an array of zeros of dtype float0, as JAX's.",
        scaled,
        "T.vjp(scaled, np.array([0.5, 1.5, 2.5]), np.arange(3))[1](1.0)",
        _vjp_int,
    ),
    Case(
        "float32",
        "float32 in, float32 out (and float32 overflow)",
        "A float32 input gives a float32 gradient; `exp(89)` overflows float32 to "
        "inf, where float64 would give 4.5e38. NumPy and XLA may round float32 "
        "transcendental functions differently in the last place, so s2s's and JAX's "
        "float32 values agree to about one unit in the last place, not bit for bit "
        "(the page shows six significant digits).",
        exp_sum,
        "T.grad(exp_sum)(np.array([1.0, 89.0], dtype=np.float32))",
        _grad(np.array([1.0, 89.0], dtype=np.float32)),
    ),
    Case(
        "write-through-view",
        "Writes through a view are refused",
        "`head = y[:2]` is a view: NumPy's `head += 1.0` writes into `y`. JAX's "
        "arrays are immutable, so under `jax.grad` the same line rebinds `head` and "
        "leaves `y` alone: JAX returns the derivative of a different function, "
        "silently. s2s refuses the line instead (write `head = head + 1.0` if a "
        "new array is meant, or `y[:2] += 1.0` for the write).",
        write_through_view,
        "T.grad(write_through_view)(np.array([1.0, 2.0, 3.0]))",
        _grad(np.array([1.0, 2.0, 3.0])),
        same=False,
        refuses=True,
        numpy=lambda: np.round(fd_grad(write_through_view, (np.array([1.0, 2.0, 3.0]),), 0)[0], 6),
    ),
    Case(
        "edited-source",
        "Source edited after import is refused",
        "s2s reads the function's text; if the file changed since the module was "
        "imported, the text no longer matches the code that runs (here the code "
        "computes sum(x²) and the file now says sum(x³)). s2s refuses rather than "
        "differentiate the new text; JAX traces the code that runs, so it is not "
        "affected.",
        None,
        "T.grad(f)(np.array([1.0, 2.0]))  # f's file edited after import",
        _edited_on_disk,
        same=False,
        refuses=True,
        matches=("jax",),
        numpy=lambda: np.array([2.0, 4.0]),
        numpy_label="the derivative of the running code, 2x",
    ),
]


def _outcome(case: Case, T: Any) -> Any:
    f = case.fn
    if f is not None and T is not s2s:
        f = jax_twin(f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            return case.run(T, f)
        except Exception as err:  # noqa: BLE001 - the page reports it
            return err


def _num(v: float) -> str:
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{float(v):.6g}"


def fmt(value: Any) -> str:
    """A value as the page shows it: six significant digits, dtype when not float64."""
    if isinstance(value, BaseException):
        first = str(value).splitlines()[0] if str(value) else ""
        if isinstance(value, s2s.TransformError):
            first = value.what
        first = re.sub(r"(?:/[^/\s`'\"]+)+/([\w.]+\.py)", r"\1", first)  # no tmp dirs
        return f"{type(value).__name__}: {first}"
    if isinstance(value, tuple):
        return "(" + ", ".join(fmt(v) for v in value) + ")"
    a = np.asarray(value)
    if a.dtype.kind == "V" or a.dtype.name == "float0":
        return f"float0 zeros, shape {a.shape}"
    body = (
        np.array2string(a, separator=", ", formatter={"all": _num})
        if a.ndim
        else _num(a)
    )
    return body if a.dtype == np.float64 else f"{a.dtype.name} {body}"


def agree(a: Any, b: Any) -> bool:
    if isinstance(a, BaseException) or isinstance(b, BaseException):
        return type(a) is type(b) and str(a).splitlines()[:1] == str(b).splitlines()[:1]
    if isinstance(a, tuple) or isinstance(b, tuple):
        return (
            isinstance(a, tuple)
            and isinstance(b, tuple)
            and len(a) == len(b)
            and all(agree(x, y) for x, y in zip(a, b))
        )
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind == "V" or b.dtype.kind == "V":
        return a.dtype == b.dtype and a.shape == b.shape
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    rtol = 2 * np.finfo(a.dtype).eps if a.dtype.kind == "f" else 0
    return bool(np.allclose(a, b, rtol=rtol, atol=0, equal_nan=True))


def outcomes() -> dict[str, tuple[Any, Any, Any]]:
    import jax

    jax.config.update("jax_enable_x64", True)
    return {
        c.id: (_outcome(c, s2s), _outcome(c, jax), c.numpy() if c.numpy else None)
        for c in CASES
    }


def _code(text: str) -> str:
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def render(results: dict[str, tuple[Any, Any, Any]]) -> str:
    import jax

    same = sum(1 for c in CASES if c.same)
    out = [
        "# Sharp bits: NaN, inf, ties, dtypes, and what s2s refuses",
        "",
        "Generated by `python tools/errors_doc.py` from `tests/test_sharp_bits.py`, "
        f"which runs every call below through s2s and through JAX ({jax.__version__} "
        "when last generated; float64 enabled, `np` rebound to `jax.numpy` in the "
        "same code object) and fails when this page differs from what they return "
        "now.  `T` in each call is `s2s` or `jax`.",
        "",
        f"{len(CASES)} cases: in {same} s2s gives JAX's value (to the six digits "
        f"shown; NaNs, infinities and ties included); in {len(CASES) - same} it "
        "differs on purpose, and the page says why.  Errors s2s raises are listed "
        "in [errors.md](errors.md).",
        "",
    ]
    for i, c in enumerate(CASES, 1):
        ours, theirs, check = results[c.id]
        out += [f"## {i}. {c.title}", "", c.text, ""]
        if c.fn is not None:
            out += [
                "```python",
                textwrap.dedent(inspect.getsource(c.fn)).rstrip(),
                "```",
                "",
            ]
        out += [
            f"`{c.call}`",
            "",
            "| | result |",
            "|---|---|",
            f"| s2s | {_code(fmt(ours))} |",
            f"| JAX | {_code(fmt(theirs))} |",
        ]
        if c.numpy is not None:
            out.append(f"| {c.numpy_label} | {_code(fmt(check))} |")
        out.append("")
    return "\n".join(out)


@pytest.fixture(scope="module")
def results():
    pytest.importorskip("jax")
    return outcomes()


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case(case: Case, results) -> None:
    ours, theirs, check = results[case.id]
    if case.same:
        assert agree(ours, theirs), (fmt(ours), fmt(theirs))
        assert not isinstance(ours, s2s.TransformError), fmt(ours)
    else:
        assert not agree(ours, theirs), (fmt(ours), fmt(theirs))
    assert isinstance(ours, s2s.TransformError) == case.refuses, fmt(ours)
    if case.numpy is not None:  # the independent value: who gives it, who does not
        for who, value in (("s2s", ours), ("jax", theirs)):
            hit = not isinstance(value, BaseException) and agree(
                np.asarray(value, float), np.asarray(check, float)
            )
            assert hit == (who in case.matches), (who, fmt(value), fmt(check))


def test_refusals_are_located() -> None:
    """The two refusals on the page point at the line (file, line, column)."""
    err = _outcome(CASES[[c.id for c in CASES].index("write-through-view")], s2s)
    assert isinstance(err, s2s.TransformError) and err.loc is not None, err
    assert err.loc.text.strip() == "head += 1.0"
    err = _outcome(CASES[[c.id for c in CASES].index("edited-source")], s2s)
    assert isinstance(err, s2s.SourceNotFoundError), err


@pytest.mark.slow
def test_page_is_current(results) -> None:
    assert (
        PAGE.exists()
    ), "docs/sharp-bits.md is missing: run python tools/errors_doc.py"
    assert PAGE.read_text() == render(
        results
    ), "docs/sharp-bits.md is stale: run python tools/errors_doc.py"
