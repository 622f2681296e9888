"""The ``products`` pass (s2s/optimize/products.py): sums and means over one axis of a
float matrix as matrix-vector products with a module constant of ones, and a column
times a row as an elementwise product.  Against JAX's
gradients in float64 and float32 at the 1st, 3rd and 10th call, with NaN and inf, on
size-0 and size-1 axes; rows longer than 128 stay NumPy's sums; the constants are
named apart from the module's names and are not reachable through the results."""

from __future__ import annotations

import numpy as np
import products_fns as F
import pytest

import s2s

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)


@pytest.fixture(scope="module")
def twin():
    from support import jax_twin

    return jax_twin(F)


def _args(name: str, rows: int, cols: int, dtype, special: bool) -> tuple:
    r = np.random.default_rng(rows * 100 + cols)
    x = r.normal(size=(rows, cols)) * 2
    if special and x.size > 2:
        x.flat[0], x.flat[-1] = np.inf, np.nan
    if name == "softmax_xent":
        other = np.eye(cols)[r.integers(0, max(cols, 1), rows)] if cols else np.zeros(
            (rows, 0))
    else:
        other = r.normal(size=(rows, cols))
    return x.astype(dtype), other.astype(dtype)


SHAPES = [(6, 5), (1, 4), (4, 1), (0, 3), (3, 0)]
CASES = [(n, s) for n in ("softmax_xent", "layer_norm", "column_stats", "rows_in_loop",
                          "outer")
         for s in SHAPES if not (n == "softmax_xent" and s[1] == 0 or n == "outer" and 0 in s)]
# (softmax_xent: a max of no items raises; outer: a column of no rows is no column.
# softmax_xent of no rows, a mean of none times a module float, is nan: the fill pass
# once made the specialized code divide a Python float by zero, tests/test_specialize_scalars.py)


@pytest.mark.slow
@pytest.mark.parametrize("special", [False, True], ids=["finite", "nan-inf"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name,shape", CASES)
def test_products_keep_jaxs_gradients(name, shape, dtype, special, twin) -> None:
    args = _args(name, *shape, dtype, special)
    want = np.asarray(jax.grad(getattr(twin, name))(*args))
    g = s2s.grad(getattr(F, name))
    tol = 2e-4 if dtype == np.float32 else 1e-10
    for call in range(10):
        got = g(*args)
        if call in (0, 2, 9):
            assert got.dtype == dtype and got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True,
                                       err_msg=f"call {call + 1}")
        if call == 1:
            g.wait_specialized()


def _specialized(name: str, args: tuple) -> str:
    g = s2s.grad(getattr(F, name))
    for _ in range(3):
        g(*args)
    g.wait_specialized()
    return "\n".join(line for line in g.specialized_source.splitlines()
                     if not line.lstrip().startswith("#"))  # (the user's lines quoted)


def test_a_float32_relus_column_sum_stays_float32() -> None:
    """The ties pass computes a float32 relu's share in float32 where the generic code
    (whose facts the pass reads) computed float64: the ones are float32, so the
    specialized code's own result is float32, as JAX's, not cast back by the call."""
    r = np.random.default_rng(5)
    b, x = r.normal(size=3).astype(np.float32), r.normal(size=(6, 3)).astype(np.float32)
    g = s2s.grad(F.relu_bias)
    for _ in range(3):
        g(b, x)
    g.wait_specialized()
    namespace: dict = {}
    exec(g.specialized_source, namespace)
    got = namespace["relu_bias_grad"](b, x)
    assert got.dtype == np.float32, g.specialized_source
    assert "np.ones((6,), dtype=np.float32)" in g.specialized_source, g.specialized_source
    want = 2 * np.maximum(x + b, 0).sum(axis=0)
    np.testing.assert_allclose(got, want, rtol=1e-5)


@pytest.mark.slow
def test_a_column_times_a_row_is_an_elementwise_product() -> None:
    text = _specialized("outer", _args("outer", 4, 3, np.float64, False))
    assert "np.cos(x[:, :1] * w" in text and "x[:, :1] @" not in text, text


@pytest.mark.slow
def test_the_sums_are_products_and_the_constant_is_named_apart() -> None:
    text = _specialized("softmax_xent", _args("softmax_xent", 6, 5, np.float64, False))
    assert "sum(" not in text, text
    assert "ones_5x1_2 = np.ones((5, 1))" in text, text  # (the module's ones_5x1 kept)
    text = _specialized("layer_norm", _args("layer_norm", 6, 5, np.float32, False))
    assert "= np.ones((5, 1), dtype=np.float32)" in text and ".mean(" not in text, text


@pytest.mark.slow
def test_rows_longer_than_128_stay_numpys_sums() -> None:
    text = _specialized("rows_in_loop", _args("rows_in_loop", 3, 129, np.float64, False))
    assert ".sum(axis=1)" in text and "np.ones" not in text, text
    text = _specialized("column_stats", _args("column_stats", 300, 2, np.float64, False))
    assert "np.ones((300,))" in text and "np.ones((1, 300))" in text, text


@pytest.mark.slow
def test_results_written_into_leave_the_next_call_alone() -> None:
    args = _args("column_stats", 4, 3, np.float64, False)
    g = s2s.grad(F.column_stats)
    first = [g(*args).copy() for _ in range(3)]
    g(*args)[...] = np.nan  # (a caller writing into a result)
    np.testing.assert_array_equal(g(*args), first[-1])
    np.testing.assert_allclose(first[0], first[-1], rtol=1e-12)
