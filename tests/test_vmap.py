"""vmap: every corpus function batched over its first array argument, against the
loop oracle ``np.stack([f(x_i) for x_i in xs])`` and ``jax.vmap`` of the same source;
JAX's in_axes/out_axes semantics and error messages; batched ``if``."""

from __future__ import annotations

import numpy as np
import pytest

import s2s
from corpus import CASES, Case
from oracle import attr_name
from support import HAVE_JAX, jax, jax_twin, leaves

import corpus_fns

# what vmap refuses, with a clear error, for now: loops that would need masked lanes
# (none: `slice_updates`, a loop whose `break` depends on a batched value's slice, was
# refused; it runs since the slice's batched write, and is checked against the loop here)
REFUSED: set[str] = set()


def batchable(c: Case) -> bool:
    return not c.kwargs and first_array(c) is not None


def first_array(c: Case) -> int | None:
    return next((k for k, a in enumerate(c.args())
                 if isinstance(a, np.ndarray) and a.dtype.kind == "f"), None)


CASES_V = [c for c in CASES if batchable(c)]
IDS = [c.name for c in CASES_V]


def batch_of(c: Case, size: int = 3):
    args = c.args()
    i = first_array(c)
    r = np.random.default_rng(len(c.name))
    xs = np.stack([args[i] + 0.05 * r.normal(size=np.shape(args[i])) for _ in range(size)])
    xs = xs.astype(args[i].dtype)
    axes = tuple(0 if k == i else None for k in range(len(args)))
    return args, i, xs, axes


def loop_oracle(c: Case, args, i, xs):
    outs = [c.fn(*args[:i], x, *args[i + 1:]) for x in xs]
    return [np.stack(z) for z in zip(*[leaves(o) for o in outs])]


def tol(c: Case) -> dict:
    if any(np.result_type(x) == np.float32 for x in leaves(c.args())):
        return {"rtol": 2e-5, "atol": 1e-6}
    return {"rtol": 1e-10, "atol": 1e-12}


@pytest.mark.parametrize("case", CASES_V, ids=IDS)
def test_vmap_matches_loop(case: Case) -> None:
    args, i, xs, axes = batch_of(case)
    v = s2s.vmap(case.fn, in_axes=axes)
    if case.name in REFUSED:
        with pytest.raises(s2s.TransformError, match="vmap cannot batch this"):
            v(*args[:i], xs, *args[i + 1:])
        return
    got = leaves(v(*args[:i], xs, *args[i + 1:]))
    expected = loop_oracle(case, args, i, xs)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert np.shape(g) == e.shape
        np.testing.assert_allclose(g, e, **tol(case))


_TWIN = None


@pytest.mark.skipif(not HAVE_JAX, reason="needs jax")
@pytest.mark.parametrize("case", [c for c in CASES_V if c.jax and c.name not in REFUSED],
                         ids=[c.name for c in CASES_V if c.jax and c.name not in REFUSED])
def test_vmap_matches_jax(case: Case) -> None:
    global _TWIN
    if _TWIN is None:
        _TWIN = jax_twin(corpus_fns)
    twin = getattr(_TWIN, attr_name(case))
    args, i, xs, axes = batch_of(case)
    try:
        expected = jax.vmap(twin, in_axes=axes)(*args[:i], xs, *args[i + 1:])
    except Exception as exc:  # Python control flow on traced values: JAX refuses
        pytest.skip(f"jax.vmap cannot run this source: {type(exc).__name__}")
    got = s2s.vmap(case.fn, in_axes=axes)(*args[:i], xs, *args[i + 1:])
    for g, e in zip(leaves(got), leaves(expected)):
        np.testing.assert_allclose(g, np.asarray(e), **tol(case))


# ---- semantics --------------------------------------------------------------------


def mixed(x, m):
    return x + m  # per example (3,) + unbatched (4, 1) -> (4, 3)


def reduce_axes(x):
    return np.sum(x, axis=0) + np.max(x) + np.mean(x, axis=-1, keepdims=True)


def branchy(x):
    s = np.sum(x)
    if s > 0:
        y = np.sin(x) * 2.0
    else:
        y = np.cos(x)
    return y * s


def helper(a, b):
    return np.tanh(a @ b)


def calls(x, w):
    return helper(x, w) ** 2


def vecs(x, y):
    return x @ y, np.outer(x, y), np.einsum("i,j->ij", x, y)


def test_mixed_rank_broadcasting_keeps_the_batch_in_front() -> None:
    r = np.random.default_rng(0)
    xs, m = r.normal(size=(5, 3)), r.normal(size=(4, 1))
    v = s2s.vmap(mixed, in_axes=(0, None))
    out = v(xs, m)
    assert out.shape == (5, 4, 3)
    np.testing.assert_allclose(out, np.stack([mixed(x, m) for x in xs]))
    assert "x[:, None]" in v.source


@pytest.mark.parametrize("in_axes", [0, 1, -1])
def test_in_axes_and_reductions(in_axes) -> None:
    xs = np.random.default_rng(1).normal(size=(4, 4, 3))
    got = s2s.vmap(reduce_axes, in_axes=in_axes)(xs)
    expected = np.stack([reduce_axes(np.take(xs, k, axis=in_axes))
                         for k in range(xs.shape[in_axes])])
    np.testing.assert_allclose(got, expected)


@pytest.mark.parametrize("out_axes", [0, 1, -1])
def test_out_axes(out_axes) -> None:
    xs = np.random.default_rng(2).normal(size=(5, 3))
    got = s2s.vmap(branchy, out_axes=out_axes)(xs)
    expected = np.moveaxis(np.stack([branchy(x) for x in xs]), 0, out_axes)
    np.testing.assert_allclose(got, expected)


def test_batched_if_selects_per_example() -> None:
    xs = np.random.default_rng(3).normal(size=(8, 3))
    v = s2s.vmap(branchy)
    np.testing.assert_allclose(v(xs), np.stack([branchy(x) for x in xs]))
    assert "np.where(" in v.source


def test_user_function_gets_its_own_batched_version() -> None:
    r = np.random.default_rng(4)
    xs, w = r.normal(size=(6, 2, 3)), r.normal(size=(3, 4))
    v = s2s.vmap(calls, in_axes=(0, None))
    np.testing.assert_allclose(v(xs, w), np.stack([calls(x, w) for x in xs]))
    assert "def helper_vmap(" in v.source


def test_vector_products_both_batched() -> None:
    r = np.random.default_rng(5)
    xs, ys = r.normal(size=(4, 3)), r.normal(size=(4, 3))
    got = s2s.vmap(vecs)(xs, ys)
    for k, g in enumerate(got):
        np.testing.assert_allclose(g, np.stack([vecs(x, y)[k] for x, y in zip(xs, ys)]))


def test_unbatched_output_is_broadcast() -> None:
    got = s2s.vmap(lambda x, w: (x * 2.0, w + 1.0), in_axes=(0, None))(np.ones((3, 2)), np.ones(2))
    assert got[1].shape == (3, 2)


def test_errors_match_jax() -> None:
    v = s2s.vmap(mixed)
    with pytest.raises(ValueError, match="vmap got inconsistent sizes for array axes to be mapped"):
        v(np.ones((3, 2)), np.ones((4, 2)))
    with pytest.raises(ValueError, match="vmap was requested to map its argument along axis 2"):
        s2s.vmap(mixed, in_axes=(2, None))(np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match=r"but got len\(in_axes\)=1, len\(args\)=2"):
        s2s.vmap(mixed, in_axes=(0,))(np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="vmap must have at least one non-None value in in_axes"):
        s2s.vmap(mixed, in_axes=None)(np.ones(3), np.ones(3))
    with pytest.raises(TypeError, match="vmap in_axes must be an int, None, or a tuple"):
        s2s.vmap(mixed, in_axes=0.0)


def test_jax_messages_are_jaxs() -> None:
    if not HAVE_JAX:
        pytest.skip("needs jax")
    import jax.numpy as jnp

    with pytest.raises(ValueError) as ours:
        s2s.vmap(mixed)(np.ones((3, 2)), np.ones((4, 2)))
    with pytest.raises(ValueError) as theirs:
        jax.vmap(lambda x, m: x + m)(jnp.ones((3, 2)), jnp.ones((4, 2)))
    assert str(ours.value).splitlines()[0] == str(theirs.value).splitlines()[0]


@pytest.mark.slow
def test_vmap_of_vmap_matches_nested_loops() -> None:
    r = np.random.default_rng(6)
    xs, w = r.normal(size=(4, 5, 3)), r.normal(size=(3, 2))
    v = s2s.vmap(s2s.vmap(calls, in_axes=(0, None)), in_axes=(0, None))
    expected = np.stack([[calls(x, w) for x in row] for row in xs])
    np.testing.assert_allclose(v(xs, w), expected, rtol=1e-12)


def test_per_example_gradients_match_closed_forms() -> None:
    """Linear regression and a 2-layer MLP: vmap(grad) against the hand formulas."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent.parent / "tools"))
    from bench_vmap import linreg, linreg_hand, mlp, mlp_hand

    r = np.random.default_rng(7)
    w, xs, ys = r.normal(size=5), r.normal(size=(16, 5)), r.normal(size=16)
    got = s2s.vmap(s2s.grad(linreg), in_axes=(None, 0, 0))(w, xs, ys)
    np.testing.assert_allclose(got, linreg_hand(w, xs, ys), rtol=1e-12)
    params = {"w1": r.normal(size=(5, 4)), "w2": r.normal(size=(4, 3))}
    ys = r.normal(size=(16, 3))
    got = s2s.vmap(s2s.grad(mlp), in_axes=(None, 0, 0))(params, xs, ys)
    expected = mlp_hand(params, xs, ys)
    for k in expected:
        np.testing.assert_allclose(got[k], expected[k], rtol=1e-10)


def _rows_of(x):
    rows = list(x)
    return rows[0] * 2.0 + rows[1]


def test_vmap_of_list_of_rows_keeps_its_items_batched() -> None:
    """`list(x)` of a batched array is a list of batched rows.  Once its items were
    taken as unbatched and the result broadcast: every example got the sum over the
    batch (a silent wrong answer)."""
    xs = np.arange(12.0).reshape(2, 2, 3)
    np.testing.assert_array_equal(s2s.vmap(_rows_of)(xs), np.stack([_rows_of(x) for x in xs]))


def test_vmap_of_a_function_with_a_keyword_only_default() -> None:
    # the probe that learns each value's rank left keyword-only parameters out
    # (NameError at the first call); the oracle is a Python loop
    import syntax_fns as S

    xs = np.random.default_rng(3).normal(size=(4, 3))
    got = s2s.vmap(S.kwonly_default)(xs)
    np.testing.assert_allclose(got, np.stack([S.kwonly_default(x) for x in xs]),
                               rtol=1e-12)


def test_vmap_maps_keyword_arguments_over_axis_0_and_is_none_stays_python() -> None:
    # JAX maps keyword arguments on axis 0 whatever in_axes says; `w is None` is one
    # Python bool for every example (it was batched: np.where(w_is_none[:, None], ...)
    # failed); the oracle is a Python loop
    import syntax_fns as S

    r = np.random.default_rng(4)
    xs, ws = r.normal(size=(4, 3)), r.normal(size=(4, 3))
    loop = np.stack([S.none_default(x, w) for x, w in zip(xs, ws)])
    np.testing.assert_allclose(s2s.vmap(S.none_default)(xs, w=ws), loop, rtol=1e-12)
    np.testing.assert_allclose(s2s.vmap(S.none_default, in_axes=(1,))(xs.T, w=ws), loop,
                               rtol=1e-12)
    np.testing.assert_allclose(s2s.vmap(S.none_default)(xs, ws), loop, rtol=1e-12)
    np.testing.assert_allclose(s2s.vmap(S.none_default)(xs),
                               np.stack([S.none_default(x) for x in xs]), rtol=1e-12)
    with pytest.raises(TypeError, match="keyword-only"):
        s2s.vmap(S.kwonly_default)(xs, scale=np.ones(4))
