"""Issue 23, probe 7 (tests/frontend/newcomer_probe7_fns.py): functions s2s refused
where JAX runs them, made to run, tried against JAX on the same source
(tests/frontend/probe7_fix_fns.py and its ``jax.numpy`` twin) at changing values and
lengths (size-0 and size-1 axes), in float64 and float32: grad at calls 1, 3 and 10,
jvp, vmap of grad, hessian, ``s2s.jit`` of grad on both backends (the slow tier: each
compiles JAX programs); the default tier checks one case of each against a Python
loop."""

from __future__ import annotations

import numpy as np
import probe7_fix_fns as F
import pytest
from support import HAVE_JAX, assert_close_to, central_grad, jax_twin

import s2s

DTYPES = [np.float64, np.float32]
# np.array of a list holding a Python float is float64 in NumPy whatever the other
# items (JAX: float32), so these functions' values are float64 in float32 as written
FLOAT64_VALUE = {"nested_constant_row", "nested_three_deep"}


def transforms_against_jax(name, xs, dtype, hessian=True):
    """grad of ``F.name`` at each of ``xs`` (one transformed object: calls 1, 2, 3...)
    and, at the first, jvp, vmap of grad over three examples, hessian and
    ``s2s.jit`` of grad on both backends (three calls each), against JAX.  (jvp's
    value of a function in FLOAT64_VALUE is float64 in float32, as NumPy runs it.)"""
    import jax

    J = jax_twin(F)
    ours, theirs = getattr(F, name), getattr(J, name)
    xs = [np.asarray(x, dtype) for x in xs]
    g = s2s.grad(ours)
    for x in xs:
        assert_close_to(g(x), jax.grad(theirs)(x), dtype)
    x = xs[0]
    t = np.cos(np.arange(x.size) + 1.0).reshape(x.shape).astype(dtype)
    assert_close_to(s2s.jvp(ours, (x,), (t,)), jax.jvp(theirs, (x,), (t,)), dtype,
                    check_dtype=dtype == np.float64 or name not in FLOAT64_VALUE)
    batch = np.stack([x, x * dtype(0.8), x * dtype(-1.1)])
    assert_close_to(s2s.vmap(s2s.grad(ours))(batch), jax.vmap(jax.grad(theirs))(batch),
                    dtype)
    if hessian:
        assert_close_to(s2s.hessian(ours)(x), jax.hessian(theirs)(x), dtype)
    for backend in ("numpy", "jax"):
        jg = s2s.jit(s2s.grad(ours), backend=backend)
        for x in xs[:3]:
            assert_close_to(jg(x), jax.grad(theirs)(x), dtype)


def tol(dtype):
    return dict(rtol=1e-12, atol=1e-14) if dtype == np.float64 else dict(rtol=2e-6,
                                                                         atol=1e-6)


# ---- a comprehension's `if` on the counter of a `range` ---------------------------------

LENGTHS = [[0.3, -0.7, 0.45, 1.2], [0.5], [], [0.2, 0.9], [1.1, -0.4, 0.3, 0.8, -1.5]]


@pytest.mark.slow  # (the default tier's budget: 2.9 s; the refusal below is cheap)
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_a_filter_on_the_counter_runs_in_the_loop(dtype) -> None:
    """``[x[i] ** 2 for i in range(len(x)) if i % 2 == 0]`` was refused ("reads values
    known only when the function runs ... (JAX refuses this too)"): the `if` reads
    only the counter, an int at each iteration; it stays an `if` in the loop."""
    g = s2s.grad(F.filtered_evens_odds)
    for values in LENGTHS:  # (lengths 4, 1, 0, 2, 5 through one object)
        x = np.array(values, dtype)
        n = len(x)
        odd_sum = sum(np.sin(x[i]) for i in range(1, n, 2))
        want = np.array([(4 * x[i] if i % 2 == 0 else np.cos(x[i]) * np.sum(x)) + odd_sum
                         for i in range(n)], dtype)
        got = g(x)
        assert got.dtype == dtype and got.shape == x.shape
        np.testing.assert_allclose(got, want, **tol(dtype))


def test_a_filter_reading_an_array_value_is_refused_located() -> None:
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(F.filtered_counter_and_value)(np.array([0.3, -0.7, 0.45]))
    message = str(info.value)
    assert "probe7_fix_fns.py" in message and "x[i] > 0" in message, message
    assert "JAX refuses this too" not in message and "jax.jit" in message, message


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", ["filtered_evens_odds", "filtered_neighbours"])
@pytest.mark.parametrize("first", [0, 1, 2], ids=["n4", "n1", "n0"])
def test_filters_on_counters_against_jax(name, first, dtype) -> None:
    transforms_against_jax(name, LENGTHS[first:] + LENGTHS[:first], dtype)


# ---- np.array of a nested list literal, under vmap -------------------------------------

NESTED = ["nested_inv_det", "nested_constant_row", "nested_three_deep",
          "nested_rows_of_arrays"]
POINTS = [[0.3, -0.7, 0.45], [1.1, 0.2, -0.6], [0.0, 0.0, 0.0], [-0.4, 0.9, 1.3]]


@pytest.mark.slow  # (the default tier's budget: 1.6 s)
def test_vmap_of_grad_through_a_nested_list_literal() -> None:
    """``np.array([[2.0 + x[0] ** 2, x[1]], [x[1], 1.0 + x[2] ** 2]])`` under vmap of
    grad (and hessian) was refused: "the rank of `x_0_sq_plus_2_x_1` is unknown (the
    first example never computed it)"; each inner list is now stacked past the batch
    axis.  Each example against central differences of the function as written (the
    slow tier: JAX)."""
    batch = np.array(POINTS[:2] + POINTS[3:])
    got = s2s.vmap(s2s.grad(F.nested_inv_det))(batch)
    for x, g in zip(batch, got):
        np.testing.assert_allclose(g, central_grad(F.nested_inv_det, x), rtol=1e-6,
                                   atol=1e-8)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", NESTED)
def test_nested_lists_against_jax(name, dtype) -> None:
    transforms_against_jax(name, POINTS if name != "nested_inv_det" else POINTS[:2] +
                           POINTS[3:], dtype)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("name", NESTED)
def test_nested_lists_vmap_of_one_example(name) -> None:
    import jax

    J = jax_twin(F)
    batch = np.array(POINTS[:1])
    assert_close_to(s2s.vmap(s2s.grad(getattr(F, name)))(batch),
                    jax.vmap(jax.grad(getattr(J, name)))(batch))
    assert_close_to(s2s.vmap(getattr(F, name))(batch), jax.vmap(getattr(J, name))(batch))


@pytest.mark.slow
def test_a_stack_of_a_nested_list_under_vmap() -> None:
    """``np.stack([[a, b, 3.0], [c, d, e]], axis=1)`` (jnp.stack refuses a list of
    lists: central differences of each example, run as written, are the oracle)."""
    batch = np.array(POINTS)
    got = s2s.vmap(s2s.grad(F.nested_stack_axis))(batch)
    for x, g in zip(batch, got):
        np.testing.assert_allclose(g, central_grad(F.nested_stack_axis, x), rtol=1e-6,
                                   atol=1e-8)
    np.testing.assert_allclose(s2s.vmap(F.nested_stack_axis)(batch),
                               [F.nested_stack_axis(x) for x in batch], rtol=1e-12)


# ---- np.vectorize and np.apply_along_axis of a Python function ---------------------------

R = np.random.default_rng(23)
VECTORS = [[0.3, -0.7, 0.45, 1.2], [0.5], [1.1, -0.4, 0.0, 0.8, -1.5], [0.2, 0.9]]
MATRICES = [R.normal(size=(3, 2)), R.normal(size=(3, 1)), R.normal(size=(1, 2)),
            R.normal(size=(2, 4))]


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_vectorize_of_a_python_function_is_its_loop(dtype) -> None:
    """``f = np.vectorize(_bump)``, ``f(x)`` twice was refused ("`np.vectorize`
    (numpy.vectorize) has no derivative rule in s2s yet"); now the loop over the
    items, stacked and reshaped, against
    the derivative written out."""
    g = s2s.grad(F.vectorize_named_twice)
    for values in VECTORS[:1]:  # (the default tier's budget: lengths 1, 5, 2 and
        # every transform in the slow sweep)
        x = np.array(values, dtype)

        def bump_dot(v):
            return (1 - np.tanh(v) ** 2) * v + np.tanh(v) + np.where(v > 0, 2 * v, -1.0)

        want = (bump_dot(x) * np.cos(x) - F._bump(x) * np.sin(x) + 2.0 * bump_dot(2.0 * x))
        got = g(x)
        assert got.dtype == dtype and got.shape == x.shape
        np.testing.assert_allclose(got, want, **(tol(dtype) if dtype == np.float64
                                                 else dict(rtol=2e-5, atol=2e-5)))


def test_a_vectorized_function_of_no_items_raises_numpys_error() -> None:
    """Over a size-0 array NumPy's vectorize raises ValueError (it cannot guess the
    output type); so does the loop's ``np.stack``, naming the user's line."""
    with pytest.raises(ValueError) as info:
        s2s.grad(F.vectorize_named_twice)(np.zeros(0))
    assert "probe7_fix_fns.py" in str(info.value), info.value
    with pytest.raises(ValueError):
        F.vectorize_named_twice(np.zeros(0))


def test_a_vectorized_name_called_where_the_pass_does_not_reach_stays_refused() -> None:
    """``f = np.vectorize(fn)`` with ``f`` called in a lambda: the assignment is kept
    (dropping it would leave the lambda's ``f`` unbound), refused at it, located."""
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(F.vectorize_called_in_a_lambda)(np.array([0.3, -0.7]))
    assert "np.vectorize" in str(info.value) and "probe7_fix_fns.py" in str(info.value)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name, points", [
    ("vectorize_named_twice", VECTORS),
    ("vectorize_in_a_loop", VECTORS),
    ("vectorize_inline_lambda_matrix", MATRICES),
    ("along_rows_scalar", MATRICES),
    ("along_columns_vector", [m for m in MATRICES if m.shape[0] >= 2]),
    ("along_last_of_3d", [R.normal(size=(2, 3, 2)), R.normal(size=(1, 2, 1)),
                          R.normal(size=(2, 1, 3))]),
])
def test_vectorized_functions_against_jax(name, points, dtype) -> None:
    transforms_against_jax(name, points, dtype)


# ---- a type test s2s cannot decide -----------------------------------------------------


def test_an_undecided_isinstance_names_the_test_not_the_type() -> None:
    """``isinstance(tree, list)`` of a callee's parameter given a list grown in a loop
    said "`list` is a type, used here as a value" (hint: "call it"); now the message
    names the test and what s2s decides.  (Given a nested list literal, probe 7's
    recursive_nested_list, it runs since recursion17: tests/frontend/
    test_recursion17.py.)"""
    x = np.array([0.3, -0.7, 0.45, 1.2, 0.1])
    np.testing.assert_allclose(s2s.grad(F.recursive_leaves)(x), 2 * x)
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(F.grown_leaves)(x)
    message = str(info.value)
    assert "`isinstance(tree, list)` tests a Python type" in message, message
    assert "probe7_fix_fns.py" in message and "used here as a value" not in message
