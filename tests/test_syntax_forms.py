"""The forms of Python NumPy users write (tests/syntax_fns.py), transformed by s2s and
compared with JAX running the same source (float64, rtol 1e-10); where JAX cannot run
a form, with central finite differences or a Python loop.  Forms s2s refuses must be
refused when the function is transformed, pointing at the user's line with a hint."""

from __future__ import annotations

import inspect
import types
from typing import Any

import numpy as np
import pytest

import s2s
from s2s.frontend import desugar as s2s_desugar
from s2s.frontend import resolve as s2s_resolve
from s2s.frontend import source as s2s_parse

import syntax_fns as F
from support import jax_twin, leaves

RNG = np.random.default_rng(7)
X3 = np.array([0.3, -0.7, 1.1])
X4 = np.array([0.3, -0.7, 1.1, 0.4])
M = RNG.standard_normal((3, 3))
M23 = RNG.standard_normal((2, 3))

ARGS: dict[str, tuple] = {
    "annotated": (X3, X3 + 0.1), "posonly": (M, X3), "paren_multiline": (X3, 2 * X3),
    "long_expression": (X3, 0.5 * X3), "matmul_T": (M, 2 * M), "slices_mixed": (M,),
    "aug_matmul": (M, 0.5 * M), "swap": (X3, X3 + 1), "zip_loop": (X3, 2 * X3),
    "enumerate_zip": (X3, 2 * X3), "loop_over_rows": (M,), "starred_middle": (X4,),
    "python_len": (X4,), "floordiv_mod": (np.arange(5.0) + 0.5,), "pow_neg": (X3 + 2,),
    "pow_neg_float": (X3 + 2,), "scalar_base_pow": (X3 + 2,), "shape_unpack": (M23,),
    "methods_chain": (M,), "return_in_nested_loop": (M,), "keepdims": (M + 3.0,),
    "ndim_branch": (M23,), "params_tuple": ((X3, 0.5 * X3), X3 + 1),
    "params_dict": ({"w": X3, "b": 0.5 * X3}, X3 + 1), "einsum_string": (M, X3),
    "kwonly_required": (X3,),
}
KWARGS: dict[str, dict] = {"kwonly_required": {"w": 2 * X3}}

# forms s2s transforms and JAX traces, compared on grad
GRAD = [
    "annotated", "annotated_assign", "annotated_no_value", "docstring_multi",
    "docstring_single_quotes", "docstring_raw", "docstring_then_comment",
    "kwonly_default", "kwonly_required", "positional_default", "posonly", "none_default",
    "true_default", "false_default", "paren_multiline", "backslash", "semicolons",
    "semicolon_trailing", "long_expression", "deeply_nested", "neg_pow", "pow_neg",
    "pow_neg_float", "unary_chain", "chained_cmp", "cond_expr", "cond_expr_nested",
    "matmul_T", "python_abs", "python_abs_scalar", "python_len", "floordiv_mod",
    "bool_ops", "not_op", "is_not_none", "ellipsis_none", "newaxis", "negative_step",
    "slices_mixed", "aug_all", "aug_matmul", "aug_floordiv_int", "tuple_unpack",
    "tuple_unpack_paren", "list_target", "nested_unpack", "nested_unpack_call",
    "starred_unpack", "starred_middle", "swap", "pass_statement", "range_negative_step",
    "range_step_two", "enumerate_loop", "enumerate_start", "zip_loop", "enumerate_zip",
    "loop_over_rows", "underscore_loop", "while_loop", "module_constant", "math_pi",
    "np_pi", "math_funcs", "call_kwargs", "decorated", "decorated_twice",
    "unicode_names", "comment_lines", "string_block_comment", "ellipsis_statement",
    "string_mode", "shape_unpack", "ndim_branch", "builtin_sum_list", "builtin_pow",
    "float_of_constant", "pairwise", "einsum_string", "methods_chain", "keepdims",
    "return_ifexp", "while_true_break", "params_tuple", "params_dict", "return_in_loop",
    "scalar_base_pow", "any_all", "global_lambda_caller", "builtin_sum_tuple_start",
    "builtin_sum_named_list", "doubled", "calls_decorated", "accumulate_float",
    "accumulate_count", "accumulate_len", "floor_mod_ops", "vector_matmul",
    "unpack_helper_result", "closure_fn", "astype_asarray", "dtype_objects",
    "wrapped_default", "with_print", "with_assert", "conditional_import_free",
    "for_else", "del_statement", "builtin_sum_grown",
]
JVP = [
    "annotated", "dtype_objects", "kwonly_default", "nested_unpack", "starred_middle",
    "enumerate_zip",
    "enumerate_start", "aug_all", "decorated", "doubled", "builtin_sum_list",
    "while_true_break", "accumulate_float", "accumulate_count", "string_block_comment",
    "builtin_pow", "methods_chain", "builtin_sum_grown",
]
VMAP = [
    "annotated", "dtype_objects", "nested_unpack_call", "starred_unpack", "enumerate_zip",
    "enumerate_start",
    "aug_all", "decorated", "doubled", "builtin_sum_list", "accumulate_float",
    "while_true_break", "ellipsis_none", "pairwise", "builtin_sum_grown",
]
JIT = [
    "annotated", "kwonly_default", "nested_unpack", "starred_middle", "enumerate_zip",
    "aug_all", "decorated", "doubled", "accumulate_float", "builtin_sum_list",
    "builtin_sum_grown",
]


@pytest.fixture(scope="module")
def jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


@pytest.fixture(scope="module")
def twin(jax):
    return jax_twin(F)


def close(actual: Any, expected: Any, rtol: float = 1e-10, atol: float = 1e-12) -> None:
    """Same tree structure and shapes; values within tolerance (dtypes: float64 both)."""
    a, e = leaves(actual), leaves(expected)
    assert len(a) == len(e), f"structure differs: {actual!r} vs {expected!r}"
    for x, y in zip(a, e):
        x, y = np.asarray(x), np.asarray(y)
        assert x.shape == y.shape, (x, y)
        np.testing.assert_allclose(x, y, rtol=rtol, atol=atol)


def fresh(fn: Any) -> Any:
    """A new function object with ``fn``'s code: nothing about it is cached yet."""
    new = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__,
                             fn.__closure__)
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__qualname__ = fn.__qualname__
    return new


def _args(name: str) -> tuple[tuple, dict]:
    return ARGS.get(name, (X3,)), KWARGS.get(name, {})


@pytest.mark.parametrize("name", GRAD)
def test_grad_matches_jax(name, jax, twin) -> None:
    args, kwargs = _args(name)
    got = s2s.grad(getattr(F, name))(*args, **kwargs)
    close(got, jax.grad(getattr(twin, name))(*args, **kwargs))


@pytest.mark.parametrize("name", JVP)
def test_jvp_matches_jax(name, jax, twin) -> None:
    args, _ = _args(name)
    tangents = tuple(0.3 * a + 0.1 for a in args)
    got = s2s.jvp(getattr(F, name), args, tangents)
    close(got, jax.jvp(getattr(twin, name), args, tangents))


@pytest.mark.parametrize("name", VMAP)
def test_vmap_matches_jax(name, jax, twin) -> None:
    args, _ = _args(name)
    batched = tuple(np.stack([a, 1.3 * a, a - 0.2]) for a in args)
    close(s2s.vmap(getattr(F, name))(*batched), jax.vmap(getattr(twin, name))(*batched))


@pytest.mark.parametrize("name", JIT)
def test_jit_jax_backend_grad_matches_jax(name, jax, twin) -> None:
    args, _ = _args(name)
    got = s2s.jit(s2s.grad(getattr(F, name)), backend="jax")(*args)
    close(np.asarray(got), jax.grad(getattr(twin, name))(*args))


def test_jit_jax_backend_newaxis(jax, twin) -> None:
    got = s2s.jit(s2s.grad(F.newaxis), backend="jax")(X3)
    close(np.asarray(got), jax.grad(twin.newaxis)(X3))


# ---- where JAX cannot run the form: finite differences, a Python loop -------------------


def _central(f: Any, x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    out = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = h
        out.flat[i] = (f(x + e) - f(x - e)) / (2 * h)
    return out


@pytest.mark.parametrize("name", ["fill_zeros", "float_of_value"])
def test_grad_matches_finite_differences(name) -> None:
    f = getattr(F, name)
    np.testing.assert_allclose(s2s.grad(f)(X3), _central(f, X3), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", ["chained_cmp", "cond_expr", "cond_expr_nested",
                                  "bool_ops", "not_op", "pass_statement"])
def test_vmap_of_python_branches_matches_a_loop(name) -> None:
    f = getattr(F, name)
    xs = np.stack([X3, -X3, X3 * 3.0, X3 - 1.0])
    close(s2s.vmap(f)(xs), np.stack([f(x) for x in xs]))


def test_methods_static_class_and_plain_bound(jax, twin) -> None:
    close(s2s.grad(F.Model.static_loss)(X3), jax.grad(twin.Model.static_loss)(X3))
    close(s2s.grad(F.Model(2.0).static_loss)(X3), jax.grad(twin.Model.static_loss)(X3))
    close(s2s.grad(F.Model.class_loss)(X3), jax.grad(twin.Model.class_loss)(X3))
    close(s2s.grad(F.Plain().loss)(X3), jax.grad(twin.Plain().loss)(X3))
    close(s2s.jvp(F.Plain().loss, (X3,), (X3,)), jax.jvp(twin.Plain().loss, (X3,), (X3,)))


def test_keyword_arguments_reach_the_gradient(jax, twin) -> None:
    """A keyword-only default is read, not differentiated; a passed value is used."""
    g = s2s.grad(F.kwonly_default)
    close(g(X3), jax.grad(twin.kwonly_default)(X3))
    close(g(X3, scale=5.0), jax.grad(twin.kwonly_default)(X3, scale=5.0))
    close(s2s.grad(F.positional_default, argnums=1)(X3, 2.0),
          jax.grad(twin.positional_default, argnums=1)(X3, 2.0))


def test_return_in_nested_loop(monkeypatch, jax, twin) -> None:
    monkeypatch.setattr(s2s_desugar, "NESTED_RETURNS", True)
    f = fresh(F.return_in_nested_loop)
    for m in (M, 0.1 * M):  # leaves early / runs to the end
        close(s2s.grad(f)(m), jax.grad(twin.return_in_nested_loop)(m))
    m = 0.1 * M  # (jvp when a return leaves early: see the next test)
    close(s2s.jvp(f, (m,), (m,)), jax.jvp(twin.return_in_nested_loop, (m,), (m,)))


def test_jvp_break_after_inner_loop(jax, twin) -> None:
    close(s2s.jvp(F.break_after_inner_loop, (M,), (M,)),
          jax.jvp(twin.break_after_inner_loop, (M,), (M,)))


def test_grad_break_after_inner_loop(jax, twin) -> None:
    close(s2s.grad(F.break_after_inner_loop)(M), jax.grad(twin.break_after_inner_loop)(M))


@pytest.mark.parametrize("name", ["walrus", "walrus_assign", "walrus_elif",
                                  "walrus_in_return"])
def test_walrus_hoisted(name, monkeypatch, jax, twin) -> None:
    monkeypatch.setattr(s2s_parse, "HOIST_WALRUS", True)
    f = fresh(getattr(F, name))
    for x in (X3, -X3, 3 * X3):
        close(s2s.grad(f)(x), jax.grad(getattr(twin, name))(x))


def test_isinstance_of_an_argument_decides_the_branch_per_call() -> None:
    """``if isinstance(scale, float)`` of an argument is decided when the code is made
    for the call's types (issue 23's static builtins; it was refused, "built-in
    `isinstance`", and pinned so in the refusal table above): the closed forms
    ``2 * scale * x`` for a float and ones for an int, over calls that switch."""
    g = s2s.grad(F.isinstance_check)
    for scale, want in ((None, 4.0 * X3), (3, np.ones(3)), (0.5, X3), (None, 4.0 * X3)):
        got = g(X3) if scale is None else g(X3, scale)
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_an_fstring_of_a_length_runs() -> None:
    """``name = f"x has {len(x)} entries"`` (unused) runs: strings made from shapes
    are computed where the code runs (frontend/shape_strings.py; it was refused,
    "f-string", and pinned so in the refusal table below): the gradient is ``2x``."""
    g = s2s.grad(F.fstring_unused)
    for x in (X3, np.ones(1), -2.0 * X3):
        np.testing.assert_allclose(g(x), 2.0 * x, rtol=1e-12)


# ---- refusals: at transform time, at the user's line, with what to write instead ---------


def _line_of(fn: Any, marker: str) -> int:
    lines, first = inspect.getsourcelines(getattr(fn, "__func__", fn))
    hits = [first + i for i, ln in enumerate(lines) if marker in ln]
    assert hits, (fn, marker)
    return hits[0]


REFUSED = [
    # (function, marker on the line the error points at, words in the message)
    (F.aug_view_next_iteration, "y += 1.0", "second iteration"),
    # NumPy's `y += v` changes t (or the list's items) too; s2s would rebind y only
    (F.aug_alias_name, "y += 1.0", "another name, view or list"),
    (F.aug_alias_list_in_loop, "y += 1.0", "second iteration"),
    (F.aug_parameter_alias, "x += 1.0", "another name, view or list"),
    (F.walrus_after_read, "(a := 2.0)", ":="),
    (F.walrus_in_ifexp, "(t := s * 2.0)", ":="),
    # (`while (k := k + 1) < 4:` runs since probe 12b: tests/frontend/test_probe12b.py)
]


@pytest.mark.parametrize("fn, marker, words", REFUSED,
                         ids=[getattr(r[0], "__name__", "?") for r in REFUSED])
def test_refused_at_transform_time_pointing_at_the_line(fn, marker, words,
                                                         monkeypatch) -> None:
    monkeypatch.setattr(s2s_parse, "HOIST_WALRUS", True)
    if isinstance(fn, types.FunctionType) and not hasattr(fn, "__wrapped__"):
        fn = fresh(fn)
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(fn)  # (no call: the error comes when the function is transformed)
    err = info.value
    assert words in str(err), str(err)
    src = inspect.getsourcefile(F)
    assert err.loc is not None and err.loc.file == src, str(err)
    line = _line_of(fn, marker)
    assert err.loc.line == line, str(err)
    assert marker in err.loc.text and err.loc.col >= 1
    assert "Instead:" in str(err) and err.hint


@pytest.mark.slow
def test_a_grown_list_summed_and_stacked(jax, twin) -> None:
    """`sum(parts)` of a list grown by append is transformed (builtin_sum_grown, in
    the lists above); the same list also stacked (refused before as a list used
    "in more than one way"): reverse mode adds the two cotangent lists item by item,
    against JAX."""
    fn = fresh(F.builtin_sum_grown_used)
    close(s2s.grad(fn)(X3), jax.grad(twin.builtin_sum_grown_used)(X3))
    close(s2s.hessian(fn)(X3), jax.hessian(twin.builtin_sum_grown_used)(X3))


def test_starred_unpacking_of_an_array_is_python_s() -> None:
    """``a, *rest = x`` of an array: ``a`` its first row, ``rest`` a list of the others
    (more cases against JAX: tests/frontend/test_runtime_choices.py)."""
    def f(x):
        a, *rest = x
        return a * sum(rest)

    x = np.array([0.5, 2.0, -1.0, 3.0])
    np.testing.assert_allclose(s2s.grad(f)(x), [4.0, 0.5, 0.5, 0.5])


def test_partial_objects_are_transformed(jax, twin) -> None:
    """A partial is the function with its bound arguments (issue 23; more cases in
    tests/frontend/test_functions_as_values.py)."""
    close(s2s.grad(F.partial_fn)(X3), jax.grad(twin.partial_fn)(X3))


def test_a_wrapper_is_differentiated_as_it_runs(jax, twin) -> None:
    """inspect.getsource follows __wrapped__ to the inner function; s2s must not: the
    wrapper of `doubled` returns 2 * fn(x)."""
    g = s2s.grad(F.doubled)(X3)
    close(g, jax.grad(twin.doubled)(X3))
    close(g, 2.0 * np.cos(X3))


def test_accumulators_are_not_writes_through_views(jax, twin) -> None:
    for name in ("accumulate_float", "accumulate_count", "accumulate_len"):
        close(s2s.grad(getattr(F, name))(X3), jax.grad(getattr(twin, name))(X3))


def test_a_decorator_that_prints_then_forwards_is_transformed(jax, twin, capsys) -> None:
    """``@_printing``'s wrapper (``print(...)``, then ``fn(*args, **kwargs)``) was
    refused; with ``print`` kept and ``*args`` forwarded it is transformed, and its
    print runs at each call, as the function's own does."""
    for call in (1, 2, 3):
        x = X3 * (-1.0) ** call
        close(s2s.grad(F.printed)(x), jax.grad(twin.printed)(x))
        assert "calling printed" in capsys.readouterr().out


def test_decorator_forwarding_keeps_callee_identity() -> None:
    """A forwarding wrapper normalizes to the function it wraps (one IR for both)."""
    assert s2s_resolve.unwrap_forwarding(F.decorated_twice) is (
        F.decorated_twice.__wrapped__.__wrapped__)
    assert s2s_resolve.unwrap_forwarding(F.doubled) is F.doubled
    assert s2s_resolve.unwrap_forwarding(F.printed) is F.printed
    # a wrapper with defaults of its own is not a plain forward (k=5.0, not 2.0)
    assert s2s_resolve.unwrap_forwarding(F.wrapped_default) is F.wrapped_default


def test_one_line_and_walrus_errors_keep_positions(monkeypatch) -> None:
    """A rewritten statement still reports the user's line and column."""
    monkeypatch.setattr(s2s_parse, "HOIST_WALRUS", True)
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(fresh(F.walrus_after_read))
    assert info.value.loc.line == _line_of(F.walrus_after_read, "(a := 2.0)")
    assert info.value.loc.col == info.value.loc.text.index("a := 2.0") + 1


def test_jit_jax_backend_while_with_break(jax, twin) -> None:
    close(np.asarray(s2s.jit(F.while_with_break, backend="jax")(X3)),
          twin.while_with_break(X3))


def test_grad_while_with_break(jax, twin) -> None:
    close(s2s.grad(F.while_with_break)(X3), jax.grad(twin.while_with_break)(X3))


def _layers() -> tuple[list, np.ndarray, np.ndarray]:
    r = np.random.default_rng(0)
    params = [(r.standard_normal((4, 5)), r.standard_normal(5)),
              (r.standard_normal((5, 3)), r.standard_normal(3))]
    return params, r.standard_normal((6, 4)), np.eye(3)[r.integers(0, 3, 6)]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mlp_loss", "dict_layers_loss"])
def test_loop_over_a_list_of_layers(name, jax, twin) -> None:
    params, x, y = _layers()
    args = (params, x, y) if name == "mlp_loss" else (
        [{"W": w, "b": b} for w, b in params], x)
    close(s2s.grad(getattr(F, name))(*args), jax.grad(getattr(twin, name))(*args))


def test_a_lambda_whose_file_changed_is_refused(tmp_path, monkeypatch) -> None:
    """The lambda's text must compile to the code that runs (as for a `def`): an edit
    after import (x ** 2 -> x ** 3) would otherwise be differentiated silently."""
    import importlib
    import linecache

    path = tmp_path / "edited_lambda_mod.py"
    path.write_text("import numpy as np\nf = lambda x: np.sum(x ** 2)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("edited_lambda_mod")
    path.write_text("import numpy as np\nf = lambda x: np.sum(x ** 3)\n")
    linecache.checkcache(str(path))
    with pytest.raises(s2s.SourceNotFoundError, match="file changed after it was imported"):
        s2s.grad(mod.f)
