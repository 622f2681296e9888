"""s2s.eval_shape against jax.eval_shape on the same source (float64 and float32): the
rule-table corpus (every E2E function JAX can trace), adversarial shapes (1e12
elements answered at once without memory, 0-size axes), control flow and refusals.
The shape code is emitted: black-formatted, shown by ``s2s.source(f, "eval_shape")``."""

from __future__ import annotations

import time
import tracemalloc

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import eval_shape_fns as F  # noqa: E402
from rule_table import twin_of  # noqa: E402
from support import jax_twin  # noqa: E402
from test_rules import E2E, e2e_params  # noqa: E402

import s2s  # noqa: E402

J = jax_twin(F)
DTYPES = [np.float64, np.float32]
S = s2s.ShapeDtypeStruct
JS = jax.ShapeDtypeStruct


def same(got, want) -> None:
    """The same tree of shapes and dtypes (s2s's leaves are ShapeDtypeStructs)."""
    gl, gs = jax.tree_util.tree_flatten(got)
    wl, ws = jax.tree_util.tree_flatten(want)
    assert len(gl) == len(wl), (got, want)
    assert all(isinstance(g, S) for g in gl), got
    for g, w in zip(gl, wl):
        assert (tuple(g.shape), np.dtype(g.dtype)) == (tuple(w.shape), np.dtype(w.dtype)), \
            (got, want)


# ---- the corpus: every E2E function JAX traces, without static arguments ------------

CORPUS = [c for c in E2E if c.jax and not c.static]
# functions whose shape is refused (not wrong): the reason is the fallback's
REFUSED = {"f_multigammaln": "evaluated on ones, outside multigammaln(a, 3)'s domain"}


@pytest.mark.parametrize("case", e2e_params(CORPUS))
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_corpus_matches_jax(case, dtype) -> None:
    args = case.draw(dtype)
    if case.id in REFUSED:
        with pytest.raises(s2s.errors.ShapeError):
            s2s.eval_shape(case.fn, *args)
        return
    structs = tuple(S(a.shape, a.dtype) for a in args)
    want = jax.eval_shape(twin_of(case.fn), *args)
    same(s2s.eval_shape(case.fn, *structs), want)
    same(s2s.eval_shape(case.fn, *args), want)  # arrays stand for their shapes


# ---- programs written for it -----------------------------------------------------------

PROGRAMS = {
    "mlp": [(5, 4), (4, 3), (3,)],
    "scaled": [(2, 3)],
    "by_shape": [(5, 3)],
    "grows": [(0, 3)],
    "reduces": [(2, 3, 4)],
    "products": [(2, 3, 4), (2, 4, 5), (4,)],
    "constructs": [(4, 2)],
    "reshapes": [(2, 3, 4)],
    "calls": [(3, 4), (4, 2)],
}


@pytest.mark.parametrize("name", PROGRAMS)
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_programs_match_jax(name, dtype) -> None:
    shapes = PROGRAMS[name]
    got = s2s.eval_shape(getattr(F, name), *[S(s, dtype) for s in shapes])
    same(got, jax.eval_shape(getattr(J, name), *[JS(s, dtype) for s in shapes]))


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_indexes_with_index_arrays(dtype) -> None:
    x, i = S((4, 5, 6), dtype), S((2, 3), np.int64)
    same(s2s.eval_shape(F.indexes, x, i), jax.eval_shape(J.indexes, JS((4, 5, 6), dtype),
                                                         JS((2, 3), np.int64)))


def test_jax_structs_python_numbers_and_pytrees() -> None:
    x = JS((3, 2), np.float32)
    same(s2s.eval_shape(F.scaled, x), jax.eval_shape(J.scaled, x))
    # a Python number is weakly typed: x * 2.0 stays float32, as in JAX
    same(s2s.eval_shape(F.mismatched, x, 2.0), jax.eval_shape(J.mismatched, x, 2.0))
    tree = {"a": S((2,), np.float32), "b": (S((3,), np.float64),)}
    got = s2s.eval_shape(lambda t: (t["a"] * 2.0, t["b"][0].sum()), tree)
    assert got == (S((2,), np.float32), S((), np.float64))


# ---- adversarial -------------------------------------------------------------------------


def test_huge_shapes_answer_at_once_without_memory() -> None:
    big = [S((10**6, 10**6), np.float32), S((10**6, 10**6), np.float32), S((10**6,),
                                                                           np.float32)]
    s2s.eval_shape(F.mlp, *big)  # (the first call emits and compiles the code)
    tracemalloc.start()
    start = time.perf_counter()
    got = s2s.eval_shape(F.mlp, *big)
    took = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert got == (S((10**6,), np.float32), S((10**6, 10**6 - 1), np.float32))
    assert took < 0.5 and peak < 2**20, (took, peak)
    want = jax.eval_shape(J.mlp, *[JS(s.shape, s.dtype) for s in big])
    same(got, want)


@pytest.mark.parametrize("name", ["reduces", "reshapes", "grows", "by_shape"])
def test_zero_size_axes(name) -> None:
    shape = {"reduces": (0, 3, 4), "reshapes": (0, 3, 4), "grows": (0, 3),
             "by_shape": (0, 3)}[name]
    got = s2s.eval_shape(getattr(F, name), S(shape, np.float32))
    same(got, jax.eval_shape(getattr(J, name), JS(shape, np.float32)))


def test_rule_less_primitive_is_evaluated_on_small_stand_ins_only() -> None:
    x = S((4, 4), np.float64)
    same(s2s.eval_shape(F.no_rule, x), jax.eval_shape(J.no_rule, JS((4, 4), np.float64)))
    with pytest.raises(s2s.errors.ShapeError, match="up to 1024 elements") as err:
        s2s.eval_shape(F.no_rule, S((10**6, 10**6), np.float64))
    assert err.value.loc.line == F.no_rule.__code__.co_firstlineno + 1


def test_broadcasting_error_is_located_at_the_user_line() -> None:
    with pytest.raises(s2s.errors.ShapeError, match="broadcast") as err:
        s2s.eval_shape(F.mismatched, S((3,), np.float64), S((4,), np.float64))
    assert err.value.loc.line == F.mismatched.__code__.co_firstlineno + 2
    assert "z + y" in str(err.value) and "<s2s" not in str(err.value)
    with pytest.raises(TypeError):  # JAX refuses the same shapes
        jax.eval_shape(J.mismatched, JS((3,), np.float64), JS((4,), np.float64))


def test_if_on_a_value_is_refused_as_in_jax() -> None:
    with pytest.raises(s2s.errors.TransformError, match="`if` on a value") as err:
        s2s.eval_shape(F.on_values, S((3,), np.float64))
    assert err.value.loc.line == F.on_values.__code__.co_firstlineno + 1
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.eval_shape(J.on_values, JS((3,), np.float64))


def test_boolean_mask_is_refused_as_in_jax() -> None:
    with pytest.raises(s2s.errors.ShapeError, match="depends on the values") as err:
        s2s.eval_shape(F.masked, S((3,), np.float64))
    assert err.value.loc.line == F.masked.__code__.co_firstlineno + 1
    with pytest.raises(jax.errors.NonConcreteBooleanIndexError):
        jax.eval_shape(J.masked, JS((3,), np.float64))


def test_the_code_is_emitted_and_readable() -> None:
    s2s.eval_shape(F.mlp, S((5, 4), np.float32), S((4, 3), np.float32), S((3,), np.float32))
    text = s2s.source(F.mlp, "eval_shape")
    assert "def mlp_eval_shape(x, w, b):" in text
    assert "# h = np.tanh(x @ w + b)" in text
    assert "matmul_shape(x.shape, w.shape)" in text
    assert "np.broadcast_shapes(x_at_w.shape, b.shape)" in text
    assert "n = x_shape[0]" in text


def test_results_are_fresh_between_calls() -> None:
    first = s2s.eval_shape(F.scaled, S((2, 3), np.float32))
    third = [s2s.eval_shape(F.scaled, S((k, 3), np.float64)) for k in range(3)][-1]
    assert first == S((2, 3), np.float32) and third == S((2, 3), np.float64)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_loops_lists_while_on_shapes_keywords(dtype) -> None:
    x, jx = S((8, 3), dtype), JS((8, 3), dtype)
    for name in ("appends", "halves", "checks"):
        same(s2s.eval_shape(getattr(F, name), x), jax.eval_shape(getattr(J, name), jx))
    same(s2s.eval_shape(F.keyword, x), jax.eval_shape(J.keyword, jx))
    same(s2s.eval_shape(F.keyword, x, scale=S((), np.float64)),
         jax.eval_shape(J.keyword, jx, scale=JS((), np.float64)))


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_bound_method_reads_its_object(dtype) -> None:
    W = np.ones((3, 3), dtype)
    x = S((4, 3), dtype)
    same(s2s.eval_shape(F.Model(W, 2).loss, x),
         jax.eval_shape(J.Model(W, 2).loss, JS((4, 3), dtype)))


def test_random_draw_is_refused_and_the_random_state_kept() -> None:
    state = np.random.get_state()[1].copy()
    with pytest.raises(s2s.errors.TransformError, match="random draw") as err:
        s2s.eval_shape(F.draws, S((3,), np.float64))
    assert err.value.loc.line == F.draws.__code__.co_firstlineno + 1
    assert (np.random.get_state()[1] == state).all()


def test_a_module_array_changed_between_calls_is_read_again() -> None:
    x = S((2, 3), np.float32)
    try:
        assert s2s.eval_shape(F.scaled_by_module, x) == S((2, 3), np.float64)
        F.SCALE = np.ones((4, 1, 3), np.float32)
        got = s2s.eval_shape(F.scaled_by_module, x)
        F.SCALE = np.ones((4, 1, 3), np.float32)  # (the third call: the same again)
        assert s2s.eval_shape(F.scaled_by_module, x) == got == S((4, 2, 3), np.float32)
        same(got, jax.eval_shape(lambda v: v * F.SCALE, JS((2, 3), np.float32)))
    finally:
        F.SCALE = np.ones(3)


# ---- eval_shape of other transforms ----------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_eval_shape_of_transformed_functions(dtype) -> None:
    """Of grad, value_and_grad, jacfwd, hessian (their emitted code's shapes) and of
    vmap (the function's shapes per example, the batch axis put back), as JAX."""
    x, w, xs = S((5, 4), dtype), S((4, 3), dtype), S((7, 5, 4), dtype)
    jx, jw, jxs = JS((5, 4), dtype), JS((4, 3), dtype), JS((7, 5, 4), dtype)
    pairs = [
        (s2s.grad(F.loss), jax.grad(J.loss), (x, w), (jx, jw)),
        (s2s.value_and_grad(F.loss, argnums=(0, 1)),
         jax.value_and_grad(J.loss, argnums=(0, 1)), (x, w), (jx, jw)),
        (s2s.jacfwd(F.vector), jax.jacfwd(J.vector), (x, w), (jx, jw)),
        (s2s.hessian(F.loss), jax.hessian(J.loss), (x, w), (jx, jw)),
        (s2s.vmap(F.vector, in_axes=(0, None)), jax.vmap(J.vector, in_axes=(0, None)),
         (xs, w), (jxs, jw)),
        (s2s.vmap(F.vector, in_axes=(1, None), out_axes=-1),
         jax.vmap(J.vector, in_axes=(1, None), out_axes=-1), (xs, w), (jxs, jw)),
        (s2s.vmap(s2s.grad(F.loss), in_axes=(0, None)),
         jax.vmap(jax.grad(J.loss), in_axes=(0, None)), (xs, w), (jxs, jw)),
    ]
    for ours, theirs, args, jargs in pairs:
        same(s2s.eval_shape(ours, *args), jax.eval_shape(theirs, *jargs))


def test_eval_shape_of_a_vmap_with_a_collective() -> None:
    import collective_fns as C

    JC = jax_twin(C)
    xs = S((5, 3), np.float32)
    same(s2s.eval_shape(s2s.vmap(C.centred, axis_name="batch"), xs),
         jax.eval_shape(jax.vmap(JC.centred, axis_name="batch"), JS((5, 3), np.float32)))
    with pytest.raises(ValueError, match="inconsistent sizes"):
        s2s.eval_shape(s2s.vmap(F.vector), xs, S((4, 3, 2), np.float32))
