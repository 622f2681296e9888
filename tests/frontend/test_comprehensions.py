"""Comprehensions and generator expressions (issue 23, item 2), against JAX on the
same source: grad, value_and_grad, jvp, vmap, jacfwd/jacrev, s2s.jit, and as a callee.

Each function of comprehension_fns.py is transformed by s2s and, loaded again with
``numpy`` bound to ``jax.numpy`` (``jax_twin``), by JAX; where JAX cannot run it the
oracle is a Python loop or finite differences.
"""

from __future__ import annotations

import comprehension_fns as F
import numpy as np
import pytest
from support import HAVE_JAX, fd_grad, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)

X = np.array([[0.3, -0.7, 1.1], [0.5, 0.2, -0.4]])
Y = np.array([[0.9, 0.1, -0.3], [-0.6, 0.8, 0.4]])

# (function, its arguments): every one is scalar-valued
CASES = [
    ("list_range", (X,)),
    ("stack_tuple", (X,)),
    ("sum_gen", (X,)),
    ("over_rows", (X,)),
    ("sum_rows", (X,)),
    ("enum_list", (X,)),
    ("zip_args", (X, Y)),
    ("nested_filter", (X,)),
    ("dict_comp", (X,)),
    ("concat_rows", (X,)),
    ("max_static", (X,)),
    ("zip_rows", (X, Y)),
    ("enumerate_rows", (X,)),
    ("nested_lists", (X,)),
    ("max_of_gen", (X,)),
    ("tuple_of_gen", (X,)),
    ("dict_values", (X,)),
    ("calls_comprehension", (X,)),
    ("over_local_tuple", (X,)),
    ("shadowing_rows", (X,)),
    ("nested_rows", (X, Y)),
    ("sum_appended_range", (X,)),
    ("sum_appended_rows", (X,)),
    ("sum_appended_n", (X,)),
    ("sum_appended_by_callee", (X,)),
]
IDS = [c[0] for c in CASES]
DTYPES = [np.float64, np.float32]


def _tol(dtype):
    return dict(rtol=1e-9, atol=1e-10) if dtype == np.float64 else dict(rtol=2e-4, atol=2e-5)


def _args(args, dtype):
    return tuple(np.asarray(a, dtype=dtype) for a in args)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name, args", CASES, ids=IDS)
def test_grad_and_value_against_jax(name, args, dtype) -> None:
    args = _args(args, dtype)
    f, jf = getattr(F, name), getattr(J, name)
    value, grads = s2s.value_and_grad(f, argnums=tuple(range(len(args))))(*args)
    jvalue, jgrads = jax.value_and_grad(jf, argnums=tuple(range(len(args))))(*args)
    np.testing.assert_allclose(value, jvalue, **_tol(dtype))
    for g, jg in zip(grads, jgrads):
        assert g.dtype == dtype
        np.testing.assert_allclose(g, jg, **_tol(dtype))
    np.testing.assert_allclose(s2s.grad(f)(*args), grads[0], **_tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name, args", CASES, ids=IDS)
def test_jvp_against_jax(name, args, dtype) -> None:
    args = _args(args, dtype)
    r = np.random.default_rng(0)
    tangents = tuple(np.asarray(r.normal(size=a.shape), dtype=dtype) for a in args)
    out, out_dot = s2s.jvp(getattr(F, name), args, tangents)
    jout, jout_dot = jax.jvp(getattr(J, name), args, tangents)
    np.testing.assert_allclose(out, jout, **_tol(dtype))
    np.testing.assert_allclose(out_dot, jout_dot, **_tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name, args", CASES, ids=IDS)
def test_vmap_against_a_python_loop(name, args, dtype) -> None:
    """(JAX's vmap refuses Python's `max` over traced values: the loop is the oracle.)"""
    f = getattr(F, name)
    batched = tuple(np.stack([a, 2.0 * a - 0.3, -a]).astype(dtype) for a in args)
    got = s2s.vmap(f)(*batched)
    want = np.stack([f(*example) for example in zip(*batched)])
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, **_tol(dtype))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["list_range", "over_rows", "nested_filter", "dict_comp",
                                  "zip_rows", "max_of_gen", "sum_appended_rows"])
def test_jacobians_and_hessian_against_jax(name) -> None:
    f, jf = getattr(F, name), getattr(J, name)
    args = dict(CASES)[name]
    np.testing.assert_allclose(s2s.jacfwd(f)(*args), jax.jacfwd(jf)(*args), rtol=1e-9)
    np.testing.assert_allclose(s2s.jacrev(f)(*args), jax.jacrev(jf)(*args), rtol=1e-9)
    np.testing.assert_allclose(s2s.hessian(f)(*args), jax.hessian(jf)(*args), rtol=1e-8,
                               atol=1e-12)


@pytest.mark.parametrize("name, args", CASES, ids=IDS)
def test_jit_on_numpy_runs_the_function(name, args) -> None:
    f = getattr(F, name)
    np.testing.assert_allclose(s2s.jit(f)(*args), f(*args), rtol=1e-12)
    g = s2s.jit(s2s.grad(f))
    np.testing.assert_allclose(g(*args), s2s.grad(f)(*args), rtol=1e-12)


def test_over_a_tuple_argument_is_unrolled_per_call() -> None:
    ws = (np.array(0.5), np.array(-1.5), np.array(2.0))
    g = s2s.grad(F.over_tuple_arg)(ws, X)
    jg = jax.grad(J.over_tuple_arg)(ws, X)
    for a, b in zip(g, jg):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    np.testing.assert_allclose(s2s.grad(F.over_tuple_arg, argnums=1)(ws, X),
                               jax.grad(J.over_tuple_arg, argnums=1)(ws, X), rtol=1e-12)


def test_a_module_tuple_read_at_each_call_and_regenerated_when_it_grows() -> None:
    g = s2s.grad(F.sum_gen)
    try:
        for scales in [(1.0, 2.0, 3.0), (0.5, 2.0, 3.0), (0.5, 2.0, 3.0, 4.0)]:
            F.SCALES = scales
            for _ in range(3):  # (the second and later calls run specialized code)
                want = fd_grad(F.sum_gen, (X,), 0)[0]
                np.testing.assert_allclose(g(X), want, rtol=1e-6, atol=1e-8)
    finally:
        F.SCALES = (1.0, 2.0, 3.0)


def test_emitted_code_reads_well() -> None:
    g = s2s.grad(F.sum_gen)
    g(X)
    text = s2s.source(g)
    assert "np.cos(x_times_c)" in text and "SCALES[2]" in text
    loop = s2s.grad(F.over_rows)
    loop(X)
    text = s2s.source(loop)
    assert "items.append(sin_row_times_2)" in text
    assert "for k in range(len(x)):" in text and "row = x[k]" in text


def test_sum_of_a_list_grown_per_call() -> None:
    """``sum(parts)`` over a list whose length is the call's loop count: calls 1, 2
    (specialized), 3 and 10 with n changing (an empty list too), against JAX; JAX's jit
    of the same source."""
    g = s2s.grad(F.sum_appended_n)
    for call, n in enumerate((1, 4, 0, 3, 5, 1, 2, 6, 0, 4)):  # (0: Python's sum is 0)
        x = X * (call + 1) * 0.3
        np.testing.assert_allclose(g(x, n), jax.grad(J.sum_appended_n)(x, n), rtol=1e-9)
    np.testing.assert_allclose(s2s.jit(F.sum_appended_range, backend="jax")(X),
                               jax.jit(J.sum_appended_range)(X), rtol=1e-9)
    np.testing.assert_allclose(s2s.jit(s2s.grad(F.sum_appended_rows), backend="jax")(X),
                               jax.grad(J.sum_appended_rows)(X), rtol=1e-9)


REFUSED = [
    ("filter_on_local", "k < n", "length would depend"),
    ("dict_over_argument", "np.sum(v) > 0", "length would depend"),
]


def test_a_sum_filtered_on_run_time_values_is_jaxs() -> None:
    """``sum(v for v in x if v > 0)`` transforms (it was refused as a length that would
    depend on values; a sum's accumulator has no length): value and gradient against
    JAX on the same source, float64 and float32."""
    for x in (np.array([0.3, -0.7, 1.1]), np.array([0.5, -2.0, 1.5, 3.0])):
        for dtype in (np.float64, np.float32):
            xd = x.astype(dtype)
            value, grad = s2s.value_and_grad(F.filter_on_values)(xd)
            np.testing.assert_allclose(value, F.filter_on_values(xd), rtol=1e-6)
            if HAVE_JAX:
                np.testing.assert_allclose(grad, jax.grad(J.filter_on_values)(xd), rtol=1e-6)
            assert grad.dtype == dtype


@pytest.mark.parametrize("name, marker, words", REFUSED, ids=[r[0] for r in REFUSED])
def test_a_filter_on_run_time_values_is_refused_at_its_line(name, marker, words) -> None:
    fn = getattr(F, name)
    with pytest.raises(s2s.UnsupportedSyntaxError) as info:
        s2s.grad(fn)
    err = info.value
    assert words in str(err) and "Instead:" in str(err)
    assert err.loc.file == F.__file__ and marker in err.loc.text
    assert err.loc.text.index(marker) + 1 == err.loc.col
