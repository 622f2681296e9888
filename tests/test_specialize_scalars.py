"""The specialized code computes with NumPy scalars where the generic code does.

A Python float divided by zero raises ZeroDivisionError where ``np.float64`` gives
inf or nan (with a RuntimeWarning), and a float32 scalar overflows to inf where a
Python float does not.  The fill pass once rewrote ``np.float64(1.0) * g`` (the seed
times a module-level Python float) as ``g``: a mean over zero rows then raised in the
specialized code (calls 3 on) where the generic code (calls 1 and 2) gave nan.  Each
case: calls 1 and 3 give the same arrays (NaN positions too), and JAX's values."""

import warnings

import jax
import numpy as np
import products_fns
import pytest
import scalars_fns as F
from support import jax_twin

import s2s

CASES = [  # (module, function, shape, fill of the input: None for random)
    (F, "mean_times_module_float", (0, 3), None),
    (F, "mean_of_row_sums_times_module_float", (0, 3), None),
    (products_fns, "softmax_xent", (0, 3), None),  # the reported case
    (F, "module_float_over_sum", (2, 3), 0.0),  # SCALE / 0.0 in NumPy: inf
    (F, "sum_times_big_twice", (2, 3), 1.0),  # float32: 6e30 * 1e30 overflows to inf
    (F, "mean_over_module_float", (0, 3), None),
    (F, "loop_of_module_floats", (0, 3), None),
    (F, "module_float_over_sum_times_module_float", (2, 3), 0.0),
    (F, "mean_times_argument", (0, 3), None),  # a Python float argument, 2.0
    (F, "mean_times_argument", (2, 3), None),
]


@pytest.fixture(scope="module")
def twins():
    return {F: jax_twin(F), products_fns: jax_twin(products_fns)}


def _args(module, name, shape, fill, dtype) -> tuple:
    r = np.random.default_rng(3)
    x = r.normal(size=shape) if fill is None else np.full(shape, fill)
    if module is products_fns:
        return x.astype(dtype), r.normal(size=shape).astype(dtype)
    if name == "mean_times_argument":
        return x.astype(dtype), 2.0
    return (x.astype(dtype),)


def _leaves(result) -> list:
    return list(result) if isinstance(result, tuple) else [result]


@pytest.mark.parametrize("transform", ["grad", "value_and_grad"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("module,name,shape,fill", CASES,
                         ids=[c[1] + "-" + "x".join(map(str, c[2])) for c in CASES])
def test_first_and_third_call_agree_with_jax(module, name, shape, fill, dtype,
                                             transform, twins) -> None:
    _check(module, name, shape, fill, dtype, transform, twins)


@pytest.mark.slow
def test_the_reported_mean_of_no_rows_times_a_module_float(twins) -> None:
    """(In the default tier whatever the sweep's sample: the case that raised, and a
    Python float argument's, whose value the steady-state call of a non-array argument
    (api/treecalls.py) returned as a NumPy scalar where calls 1 and 2 give a 0-d
    array.)"""
    _check(products_fns, "softmax_xent", (0, 3), None, np.float64, "value_and_grad",
           twins)
    _check(F, "mean_times_argument", (0, 3), None, np.float32, "value_and_grad", twins)


def _check(module, name, shape, fill, dtype, transform, twins) -> None:
    args = _args(module, name, shape, fill, dtype)
    f = getattr(s2s, transform)(getattr(module, name))
    got = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's, as the generic code's
        for call in range(3):
            got.append(_leaves(f(*args)))
            if call == 1:
                f.wait_specialized()
    assert f.specialized_source is not None  # (the third call ran the specialized code)
    for first, third in zip(got[0], got[2], strict=True):
        assert type(third) is type(first) and third.dtype == first.dtype
        np.testing.assert_array_equal(third, first, err_msg="call 3 against call 1")
    want = _leaves(getattr(jax, transform)(getattr(twins[module], name))(*args))
    tol = 2e-4 if dtype == np.float32 else 1e-10
    for mine, theirs in zip(got[2], want, strict=True):
        np.testing.assert_allclose(mine, np.asarray(theirs), rtol=tol, atol=tol,
                                   equal_nan=True, err_msg="against JAX")
