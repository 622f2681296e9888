"""API semantics and safety: decorator forms, JAX's conventions, emitted source,
introspection, caching, non-mutation and thread safety.

Every expected number comes from JAX (running the same source through
``support.jax_twin``) or from central finite differences.
"""

from __future__ import annotations

import ast
import builtins
import copy
import inspect
import linecache
import symtable
import threading
import traceback
import types
from typing import Any, Callable

import black
import libcst as cst
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import corpus_fns as F
import error_fns as E
import s2s
from corpus import BY_NAME
from support import HAVE_JAX, assert_trees_close, fd_grad, jax, jax_twin, leaves

needs_jax = pytest.mark.skipif(not HAVE_JAX, reason="needs jax as the oracle")

_TWINS: dict[str, Any] = {}


def twin(module: Any) -> Any:
    """The module's functions with NumPy rebound to jax.numpy (loaded once)."""
    if module.__name__ not in _TWINS:
        _TWINS[module.__name__] = jax_twin(module)
    return _TWINS[module.__name__]


def fresh(fn: Callable) -> Callable:
    """A new function object with ``fn``'s code: nothing about it is cached yet."""
    new = types.FunctionType(
        fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__
    )
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__qualname__ = fn.__qualname__
    return new


def rng() -> np.random.Generator:
    return np.random.default_rng(1234)


def close(actual: Any, expected: Any, rtol: float = 1e-10, atol: float = 1e-12) -> None:
    """Same tree structure, shapes and dtypes; values within tolerance."""
    a, e = leaves(actual), leaves(expected)
    assert len(a) == len(e), f"structure differs: {actual!r} vs {expected!r}"
    for x, y in zip(a, e):
        x, y = np.asarray(x), np.asarray(y)
        assert x.shape == y.shape and x.dtype == y.dtype, (x, y)
        np.testing.assert_allclose(x, y, rtol=rtol, atol=atol)


# ---- decorator forms -----------------------------------------------------------------


@s2s.grad
def decorated(w, x):
    return np.sum(np.sin(w) * x)


@s2s.grad(argnums=1)
def decorated_argnums(w, x):
    return np.sum(np.sin(w) * x**2)


@s2s.value_and_grad(argnums=(0, 1), has_aux=True)
def decorated_value_and_grad(w, x):
    y = np.tanh(w * x)
    return np.sum(y), np.max(y)


def test_bare_decorator() -> None:
    w, x = rng().normal(size=3), rng().normal(size=3) + 1.0
    assert isinstance(decorated, s2s.Transformed)
    np.testing.assert_allclose(
        decorated(w, x), fd_grad(decorated.fn, (w, x), 0)[0], rtol=1e-6, atol=1e-8
    )


def test_decorator_with_arguments() -> None:
    w, x = rng().normal(size=3), rng().normal(size=3)
    np.testing.assert_allclose(
        decorated_argnums(w, x),
        fd_grad(decorated_argnums.fn, (w, x), 1)[0],
        rtol=1e-6,
        atol=1e-8,
    )


def test_value_and_grad_decorator_with_aux() -> None:
    w, x = rng().normal(size=3), rng().normal(size=3)
    (value, aux), (gw, gx) = decorated_value_and_grad(w, x)
    v, a = decorated_value_and_grad.fn(w, x)
    np.testing.assert_allclose(value, v, rtol=1e-12)
    np.testing.assert_allclose(aux, a, rtol=1e-12)

    def scalar(w, x):
        return decorated_value_and_grad.fn(w, x)[0]

    np.testing.assert_allclose(gw, fd_grad(scalar, (w, x), 0)[0], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gx, fd_grad(scalar, (w, x), 1)[0], rtol=1e-6, atol=1e-8)


def test_decorated_function_keeps_name_and_source() -> None:
    assert decorated.__name__ == "decorated_grad"
    assert "def decorated_grad(" in s2s.source(decorated)
    assert decorated.fn.__name__ == "decorated"


# ---- JAX's conventions ---------------------------------------------------------------


def loss_args() -> tuple:
    r = rng()
    return r.normal(size=3), r.normal(size=(5, 3)), r.normal(size=5)


@needs_jax
@pytest.mark.parametrize("argnums", [0, 1, -1, (0, 1), (2, 0), (0,), (0, 1, 2)])
def test_argnums_like_jax(argnums) -> None:
    args = loss_args()
    ours = s2s.grad(F.loss, argnums=argnums)(*args)
    theirs = jax.grad(twin(F).loss, argnums=argnums)(*args)
    assert isinstance(ours, tuple) == isinstance(argnums, tuple)
    close(ours, theirs)


@needs_jax
def test_value_and_grad_with_aux_is_value_aux_then_grad() -> None:
    x = rng().normal(size=3)
    ours = s2s.value_and_grad(F.with_aux, has_aux=True)(x)
    theirs = jax.value_and_grad(twin(F).with_aux, has_aux=True)(x)
    (value, aux), g = ours
    (jvalue, jaux), jg = theirs
    assert isinstance(aux, dict) and list(aux) == ["mean"]
    close(value, jvalue)
    close(aux["mean"], jaux["mean"])
    close(g, jg)


@needs_jax
def test_grad_with_aux_is_grad_then_aux() -> None:
    x = rng().normal(size=3)
    g, aux = s2s.grad(F.with_aux, has_aux=True)(x)
    jg, jaux = jax.grad(twin(F).with_aux, has_aux=True)(x)
    close(g, jg)
    close(aux["mean"], jaux["mean"])


@needs_jax
def test_keyword_arguments_are_never_differentiated() -> None:
    r = rng()
    x, y = r.normal(size=3), r.normal(size=3)
    ours = s2s.grad(F.keyword_args)(x, y, scale=0.5)
    theirs = jax.grad(twin(F).keyword_args)(x, y, scale=0.5)
    assert isinstance(ours, np.ndarray)  # one gradient: scale is not an argnum
    close(ours, theirs)
    both = s2s.grad(F.keyword_args, argnums=(0, 1))(x, y, scale=0.5)
    close(both, jax.grad(twin(F).keyword_args, argnums=(0, 1))(x, y, scale=0.5))


@needs_jax
def test_parameter_with_a_default_passed_positionally_can_be_differentiated() -> None:
    r = rng()
    x, y = r.normal(size=3), r.normal(size=3)
    ours = s2s.grad(F.keyword_args, argnums=2)(x, y, 0.5)
    theirs = jax.grad(twin(F).keyword_args, argnums=2)(x, y, 0.5)
    close(ours, theirs)


@needs_jax
def test_unused_arguments_get_zeros_of_their_shape_and_dtype() -> None:
    r = rng()
    x, y = r.normal(size=3), r.normal(size=(2, 2)).astype(np.float32)
    ours = s2s.grad(F.unused_arg, argnums=(0, 1))(x, y)
    theirs = jax.grad(twin(F).unused_arg, argnums=(0, 1))(x, y)
    close(ours, theirs)
    assert ours[1].dtype == np.float32 and ours[1].shape == (2, 2)
    assert not np.any(ours[1])


@needs_jax
def test_float32_inputs_give_float32_gradients() -> None:
    args = tuple(a.astype(np.float32) for a in loss_args())
    ours = s2s.grad(F.loss, argnums=(0, 1, 2))(*args)
    theirs = jax.grad(twin(F).loss, argnums=(0, 1, 2))(*args)
    assert [g.dtype for g in ours] == [np.dtype(np.float32)] * 3
    close(ours, theirs, rtol=2e-5, atol=1e-6)


@needs_jax
def test_mixed_precision_gradient_follows_each_input() -> None:
    w, x, y = loss_args()
    w = w.astype(np.float32)
    ours = s2s.grad(F.loss, argnums=(0, 1))(w, x, y)
    theirs = jax.grad(twin(F).loss, argnums=(0, 1))(w, x, y)
    assert (ours[0].dtype, ours[1].dtype) == (np.float32, np.float64)
    close(ours, theirs, rtol=2e-5, atol=1e-6)


@needs_jax
def test_python_float_input() -> None:
    ours = s2s.grad(F.lambda_fn)(1.3)
    theirs = jax.grad(twin(F).lambda_fn)(1.3)
    assert np.shape(ours) == () and np.result_type(ours) == np.float64
    np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-12)
    value, g = s2s.value_and_grad(F.lambda_fn)(1.3)
    np.testing.assert_allclose(value, F.lambda_fn(1.3), rtol=1e-12)
    np.testing.assert_allclose(g, np.asarray(theirs), rtol=1e-12)


@needs_jax
def test_pytree_gradient_keeps_dict_structure_and_key_order() -> None:
    r = rng()
    params = {"w2": r.normal(size=(4, 2)), "w1": r.normal(size=(3, 4))}
    x = r.normal(size=(5, 3))
    ours = s2s.grad(F.two_layers)(params, x)
    theirs = jax.grad(twin(F).two_layers)(params, x)
    assert list(ours) == ["w2", "w1"]  # the caller's order, as in the input
    for k in params:
        close(ours[k], theirs[k])


@needs_jax
def test_a_module_global_rebound_after_a_transform_is_read_anew(monkeypatch) -> None:
    x = rng().normal(size=3)
    s2s.grad(F.constants)(x)  # an earlier transform, with SCALE as imported
    monkeypatch.setattr(F, "SCALE", 100.0)
    monkeypatch.setattr(twin(F), "SCALE", 100.0)
    assert F.constants(x) == pytest.approx(float(twin(F).constants(x)))
    close(s2s.grad(F.constants)(x), jax.grad(twin(F).constants)(x))


@needs_jax
def test_returning_a_global_constant_gives_zero_gradient() -> None:
    x = rng().normal(size=3)
    close(s2s.grad(E.literal_out)(x), jax.grad(twin(E).literal_out)(x))
    close(s2s.grad(E.global_constant_out)(x), jax.grad(twin(E).global_constant_out)(x))


# ---- vjp -----------------------------------------------------------------------------


@needs_jax
def test_vjp_returns_output_and_one_cotangent_per_primal() -> None:
    args = loss_args()
    out, vjp_fn = s2s.vjp(F.loss, *args)
    jout, jvjp_fn = jax.vjp(twin(F).loss, *args)
    close(out, jout)
    cts = vjp_fn(2.0)
    assert isinstance(cts, tuple) and len(cts) == 3
    close(cts, jvjp_fn(2.0))


@needs_jax
def test_vjp_with_aux() -> None:
    x = rng().normal(size=3)
    out, vjp_fn, aux = s2s.vjp(F.with_aux, x, has_aux=True)
    jout, jvjp_fn, jaux = jax.vjp(twin(F).with_aux, x, has_aux=True)
    close(out, jout)
    close(aux["mean"], jaux["mean"])
    close(vjp_fn(1.5), jvjp_fn(1.5))


@needs_jax
@pytest.mark.parametrize(
    "name, cotangent",
    [
        ("vector_out", np.array([1.0, -2.0, 0.5])),
        ("tuple_out", (3.0, -2.0)),
        ("dict_out", {"a": np.array([1.0, 2.0, 3.0]), "b": -1.5}),
    ],
)
def test_vjp_of_array_tuple_and_dict_outputs(name, cotangent) -> None:
    x = np.array([0.5, -1.0, 2.0])
    out, vjp_fn = s2s.vjp(getattr(E, name), x)
    jout, jvjp_fn = jax.vjp(getattr(twin(E), name), x)
    assert type(out) is type(jout) or isinstance(out, np.ndarray)
    if isinstance(out, dict):
        assert sorted(out) == sorted(jout)
        out, jout = [out[k] for k in sorted(out)], [jout[k] for k in sorted(jout)]
    close(out, jout)
    close(vjp_fn(cotangent), jvjp_fn(cotangent))


@needs_jax
def test_vjp_dict_cotangent_key_order_does_not_matter() -> None:
    x = np.array([0.5, -1.0, 2.0])
    _, vjp_fn = s2s.vjp(E.dict_out, x)
    _, jvjp_fn = jax.vjp(twin(E).dict_out, x)
    cotangent = {"b": -1.5, "a": np.array([1.0, 2.0, 3.0])}
    close(vjp_fn(cotangent), jvjp_fn(cotangent))


@needs_jax
def test_vjp_with_pytree_primals() -> None:
    r = rng()
    params = {"w": r.normal(size=(3, 2)), "b": r.normal(size=2)}
    x = r.normal(size=(4, 3))
    _, vjp_fn = s2s.vjp(F.dict_params, params, x)
    _, jvjp_fn = jax.vjp(twin(F).dict_params, params, x)
    (gp, gx), (jgp, jgx) = vjp_fn(0.7), jvjp_fn(0.7)
    assert list(gp) == ["w", "b"]
    for k in params:
        close(gp[k], jgp[k])
    close(gx, jgx)


@needs_jax
@pytest.mark.parametrize(
    "fn_name, make",
    [
        ("softmax_xent", lambda r: (r.normal(size=5), 2)),
        ("powers", lambda r: (r.uniform(0.5, 2.0, size=3), np.arange(3))),
        (
            "powers",
            lambda r: (r.uniform(0.5, 2.0, size=3), np.array([True, False, True])),
        ),
    ],
    ids=["python_int", "int_array", "bool_array"],
)
def test_vjp_integer_primals_get_float0_zeros(fn_name, make) -> None:
    primals = make(rng())
    _, vjp_fn = s2s.vjp(getattr(F, fn_name), *primals)
    _, jvjp_fn = jax.vjp(getattr(twin(F), fn_name), *primals)
    ours, theirs = vjp_fn(1.0), jvjp_fn(1.0)
    close(ours[0], theirs[0])
    ct, jct = np.asarray(ours[1]), np.asarray(theirs[1])
    assert ct.dtype == jax.dtypes.float0 == jct.dtype
    assert ct.dtype.kind == jct.dtype.kind == "V"
    assert ct.shape == jct.shape == np.shape(primals[1])


# ---- the emitted source --------------------------------------------------------------

SOURCE_CASES = [
    "loss",
    "constants",
    "calls_helper",
    "two_layers",
    "lambda",
    "with_aux",
    "keyword_args",
    "nested_tree",
    "math_scalars",
    "subscripts",
]


def _emitted(case_name: str) -> tuple[Any, Any, tuple, Any]:
    case = BY_NAME[case_name]
    g = s2s.grad(case.fn, argnums=case.argnums, has_aux=case.has_aux)
    args = case.args()
    result = g(*args, **case.kwargs)  # generate the specialization for these args
    return case, g, args, result


def _global_names(text: str) -> set[str]:
    """Names the module's functions read as globals that the module does not define."""
    top = symtable.symtable(text, "<emitted>", "exec")
    defined = {
        s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported()
    }
    names: set[str] = set()

    def visit(table: symtable.SymbolTable) -> None:
        names.update(
            s.get_name()
            for s in table.get_symbols()
            if s.is_global() and s.is_referenced()
        )
        for child in table.get_children():
            visit(child)

    for child in top.get_children():
        visit(child)
    return names - defined - set(dir(builtins))


@pytest.mark.parametrize("case_name", SOURCE_CASES)
def test_source_is_a_standalone_module(case_name) -> None:
    case, g, args, result = _emitted(case_name)
    text = s2s.source(g)
    compile(text, "<emitted>", "exec")
    name = "lambda" if case.fn.__name__ == "<lambda>" else case.fn.__name__
    assert f"def {name}_grad(" in text
    cst.parse_module(text)
    assert black.format_str(text, mode=black.Mode()) == text

    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            assert [a.name for a in node.names] == ["numpy"], ast.unparse(node)
        elif isinstance(node, ast.ImportFrom):
            assert node.module == "s2s.runtime" and node.level == 0, ast.unparse(node)

    # run the text in a namespace holding only what it imports itself and the user's
    # module globals it names
    missing = _global_names(text)
    assert missing <= set(case.fn.__globals__), missing - set(case.fn.__globals__)
    namespace: dict[str, Any] = {}
    exec(compile(text, "<emitted>", "exec"), namespace)
    for k in missing:
        namespace[k] = case.fn.__globals__[k]
    raw = namespace[f"{name}_grad"](*args, **case.kwargs)
    a, b = leaves(raw), leaves(result)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(np.broadcast_to(x, np.shape(y)), y)


def test_source_of_a_vjp_function() -> None:
    _, vjp_fn = s2s.vjp(F.loss, *loss_args())
    vjp_fn(1.0)
    text = s2s.source(vjp_fn)
    assert "def loss_vjp(" in text
    assert black.format_str(text, mode=black.Mode()) == text


def test_source_of_something_untransformed_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        s2s.source(F.loss)


# ---- introspection -------------------------------------------------------------------


def test_getsource_shows_the_emitted_function() -> None:
    g = s2s.grad(F.loss)
    text = inspect.getsource(g)
    assert "def loss_grad(" in text and "_grad(" in text
    assert "pred = np.tanh(" in text  # the user's names survive


@pytest.mark.parametrize(
    "fn", [F.loss, F.keyword_args, F.two_layers, F.closure_fn], ids=lambda f: f.__name__
)
def test_signature_matches_the_users_function(fn) -> None:
    assert inspect.signature(s2s.grad(fn)) == inspect.signature(fn)
    assert inspect.signature(s2s.value_and_grad(fn)) == inspect.signature(fn)


def test_traceback_from_emitted_code_shows_emitted_lines() -> None:
    g = s2s.grad(E.shape_mismatch)
    with pytest.raises(ValueError) as info:
        g(np.ones(3), np.ones(2))  # a broadcasting error, raised inside emitted code
    frames = [
        f
        for f in traceback.extract_tb(info.value.__traceback__)
        if f.filename.startswith("<s2s:")
    ]
    assert frames, [f.filename for f in traceback.extract_tb(info.value.__traceback__)]
    frame = frames[-1]
    line = linecache.getline(frame.filename, frame.lineno)
    assert line.strip() and line.strip() == frame.line
    assert "x * y" in line


# ---- caching -------------------------------------------------------------------------


def _count_calls(monkeypatch, module: Any, name: str) -> list[int]:
    count = [0]
    original = getattr(module, name)

    def counting(*args, **kwargs):
        count[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counting)
    return count


def test_transforming_twice_reuses_the_generated_code(monkeypatch) -> None:
    emitted = _count_calls(monkeypatch, s2s.api.transformed, "emit_reverse")
    fn = fresh(F.loss)
    first = s2s.grad(fn).source
    assert emitted[0] == 1
    second = s2s.grad(fn).source
    assert second == first
    assert emitted[0] == 1  # served from the cache, not generated again


def test_specializations_are_per_pytree_structure(monkeypatch) -> None:
    emitted = _count_calls(monkeypatch, s2s.api.transformed, "emit_reverse")
    g = s2s.grad(fresh(F.tuple_arg))
    r = rng()
    pair = (r.normal(size=3), r.normal(size=3))
    g(pair)
    size, generated = len(g._compiled), emitted[0]
    g(pair)
    g((r.normal(size=5), r.normal(size=5)))  # new shapes, same structure
    assert len(g._compiled) == size and emitted[0] == generated
    as_list = g(list(pair))  # a new structure: a new specialization
    assert len(g._compiled) == size + 1 and emitted[0] == generated + 1
    assert isinstance(as_list, list)
    close(tuple(as_list), g(pair))


# ---- nothing is mutated --------------------------------------------------------------


def _function_state(fn: Callable) -> dict[str, Any]:
    return {
        "code": fn.__code__,
        "code_bytes": fn.__code__.co_code,
        "defaults": copy.deepcopy(fn.__defaults__),
        "kwdefaults": copy.deepcopy(fn.__kwdefaults__),
        "dict": dict(fn.__dict__),
        "name": (fn.__name__, fn.__qualname__, fn.__module__),
        "globals": id(fn.__globals__),
        "closure": [c.cell_contents for c in fn.__closure__ or ()],
    }


@pytest.mark.parametrize(
    "case_name",
    ["keyword_args", "closure", "calls_helper", "constants", "lambda", "two_layers"],
)
def test_the_users_function_is_not_mutated(case_name) -> None:
    case = BY_NAME[case_name]
    fn = fresh(case.fn)
    fn.__dict__["note"] = ["kept"]
    before = _function_state(fn)
    args = case.args()
    s2s.grad(fn, argnums=case.argnums)(*args, **case.kwargs)
    s2s.value_and_grad(fn, argnums=case.argnums)(*args, **case.kwargs)
    if not case.kwargs:
        out, vjp_fn = s2s.vjp(fn, *args)
        vjp_fn(np.ones_like(out))
    after = _function_state(fn)
    assert after == before
    assert fn.__dict__["note"] == ["kept"]


def _module_state(module: Any) -> tuple[dict[str, int], dict[str, np.ndarray]]:
    values = dict(vars(module))
    return (
        {k: id(v) for k, v in values.items()},
        {k: v.copy() for k, v in values.items() if isinstance(v, np.ndarray)},
    )


@pytest.mark.parametrize(
    "case_name",
    ["constants", "calls_helper", "integer_array_index", "closure", "math_scalars"],
)
def test_module_globals_are_not_mutated(case_name) -> None:
    case = BY_NAME[case_name]
    module = inspect.getmodule(case.fn)
    ids, arrays = _module_state(module)
    args = case.args()
    s2s.grad(case.fn, argnums=case.argnums)(*args, **case.kwargs)
    out, vjp_fn = s2s.vjp(case.fn, *args)
    vjp_fn(np.ones_like(out))
    ids_after, arrays_after = _module_state(module)
    assert ids_after == ids  # same names, bound to the same objects
    for k, v in arrays.items():
        np.testing.assert_array_equal(arrays_after[k], v)
        assert arrays_after[k].dtype == v.dtype


# Input arrays, including those inside dicts and tuples, are never written, and no
# gradient shares memory with an input (an in-place update of a gradient must not reach
# the caller's data).  Hypothesis draws the values; the corpus case fixes the shapes.

MUTATION_CASES = [
    "loss",
    "subscripts",
    "integer_array_index",
    "augmented",
    "dict_params",
    "tuple_arg",
    "nested_tree",
    "max_ties",
    "softmax_xent",
]


def _draw_like(data: st.DataObject, template: Any) -> Any:
    if isinstance(template, dict):
        return {k: _draw_like(data, v) for k, v in template.items()}
    if isinstance(template, (tuple, list)):
        return type(template)(_draw_like(data, v) for v in template)
    if isinstance(template, np.ndarray) and template.dtype.kind == "f":
        elements = st.floats(-3, 3, allow_nan=False, width=64)
        return data.draw(hnp.arrays(template.dtype, template.shape, elements=elements))
    return template


def _arrays(tree: Any) -> list[np.ndarray]:
    return [x for x in leaves(tree) if isinstance(x, np.ndarray)]


@pytest.mark.parametrize("case_name", MUTATION_CASES)
@settings(
    max_examples=25,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_inputs_are_not_mutated(case_name, data) -> None:
    case = BY_NAME[case_name]
    args = _draw_like(data, case.args())
    before = copy.deepcopy(args)
    with np.errstate(all="ignore"):
        value, grads = s2s.value_and_grad(
            case.fn, argnums=case.argnums, has_aux=case.has_aux
        )(*args, **case.kwargs)
        out, vjp_fn = s2s.vjp(case.fn, *args)
        cotangents = vjp_fn(np.ones_like(out))
    assert_trees_close(args, before, rtol=0, atol=0)
    for x, y in zip(leaves(args), leaves(before)):
        assert type(x) is type(y) and np.shape(x) == np.shape(y)
    for g in _arrays(grads) + _arrays(cotangents):
        for a in _arrays(args):
            assert not np.shares_memory(g, a), "a gradient aliases an input"


# ---- threads -------------------------------------------------------------------------


@needs_jax
def test_concurrent_transforms_and_calls_agree() -> None:
    fn = fresh(F.two_layers)  # nothing cached: the threads race to generate it
    r = rng()
    params = {"w1": r.normal(size=(3, 4)), "w2": r.normal(size=(4, 2))}
    x = r.normal(size=(5, 3))
    barrier = threading.Barrier(8)
    results: list[Any] = [None] * 8
    sources: list[str | None] = [None] * 8
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            barrier.wait()
            g = s2s.grad(fn)
            results[i] = g(params, x)
            sources[i] = g.source
        except BaseException as exc:  # reported below, on the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(set(sources)) == 1
    for result in results[1:]:
        assert list(result) == list(results[0])
        for k in result:
            np.testing.assert_array_equal(result[k], results[0][k])
    expected = jax.grad(twin(F).two_layers)(params, x)
    for k in params:
        close(results[0][k], expected[k])


def sort_along(x, axis):
    return np.sort(np.sin(x), axis=axis) * 2.0


@needs_jax
def test_none_argument_is_an_empty_pytree_as_in_jax() -> None:
    """``axis=None`` passed positionally: vjp gives None as its cotangent and jvp takes
    None as its tangent, as JAX does; a tangent for a None primal is a TypeError."""
    x = np.array([[0.3, -1.2, 2.0], [0.5, 0.1, -0.7]])
    jnp = jax.numpy

    def jax_sort_along(x, axis):
        return jnp.sort(jnp.sin(x), axis=axis) * 2.0

    out, pullback = s2s.vjp(sort_along, x, None)
    jout, jpullback = jax.vjp(jax_sort_along, x, None)
    cot = np.linspace(-1.0, 1.0, 6)
    got, expected = pullback(cot), jpullback(cot)
    assert got[1] is None and expected[1] is None
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-12)
    t = np.ones_like(x)
    assert_trees_close(s2s.jvp(sort_along, (x, None), (t, None)),
                       jax.jvp(jax_sort_along, (x, None), (t, None)))
    with pytest.raises(TypeError, match="None .an empty pytree. matches only None"):
        s2s.jvp(sort_along, (x, None), (t, np.ones(2)))


@needs_jax
@pytest.mark.parametrize("name", ["one_line", "one_line_blocks"])
def test_one_line_bodies_transform_like_indented_ones(name) -> None:
    import oneline_fns as O

    x = np.array([0.3, -0.7, 1.1, 0.4])
    ours = s2s.grad(getattr(O, name))(x)
    theirs = jax.grad(getattr(twin(O), name))(x)
    np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-12)
    text = s2s.source(s2s.grad(getattr(O, name)))
    assert black.format_str(text, mode=black.Mode()) == text


@needs_jax
def test_max_and_min_keep_float32_and_share_ties_like_jax() -> None:
    import oneline_fns as O

    x = np.array([[1.0, 3.0], [3.0, -1.0], [1.0, 1.0]], dtype=np.float32)
    for transform, oracle in ((s2s.grad, jax.grad), (s2s.jacfwd, jax.jacfwd)):
        ours = transform(O.max_with_ties)(x)
        theirs = oracle(twin(O).max_with_ties)(x)
        assert ours.dtype == np.float32
        np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-6)


@needs_jax
def test_source_before_any_call_reads_string_keys_as_a_dict() -> None:
    # the code shown before a call runs standalone on the dict it was read for
    g = s2s.grad(F.dict_params)
    text = s2s.source(g)
    assert 'return {"w": w_bar, "b": b_bar}' in text and "np.add.at" not in text
    scope: dict[str, Any] = {}
    exec(compile(text, "<shown>", "exec"), scope)
    args = BY_NAME["dict_params"].args()
    ours = scope["dict_params_grad"](*args)
    theirs = jax.grad(twin(F).dict_params)(*args)
    assert_trees_close(ours, theirs, rtol=1e-12)
