"""Issue 23, eleventh NumPy-API pass: spellings earlier probes found refused or unclear,
now transformed with JAX's semantics (numpy_api11_fns.py):

1. ``np.piecewise`` (functions, constants, a default function) is a chain of
   ``np.where``, the last condition that holds winning;
2. ``np.diff(..., prepend=, append=)`` is ``np.diff`` of a concatenation;
3. ``np.maximum.accumulate`` / ``np.minimum.accumulate`` are primitives whose
   derivative follows the running max, a tie giving each side half (JAX's
   ``jnp.maximum.accumulate``);
4. ``itertools.accumulate`` over a sequence of known length is unrolled (a located
   refusal naming what to write otherwise);
5. ``np.clip(x, min=, max=)`` (NumPy 2.1) and ``x.clip(max=)``;
6. ``initial=``, ``where=``, ``dtype=`` of sum/prod/max/min/mean (and their methods);
7. ``np.around``, ``x.round(2)`` (zero derivative);
8. a ``try`` whose body computes no array is kept as Python.

The sweep (``-m slow``) runs each function through grad at calls 1, 3 and 10,
value_and_grad, jvp, vmap of grad, hessian, jit of grad on both backends and special
inputs (kinks, ties, NaN, size-1 and 0-size), in float64 and float32, against JAX on
the same source.  The default tier checks each item against central differences or a
Python loop, with no JAX compile."""

from __future__ import annotations

import itertools

import numpy as np
import numpy_api11_cases as C  # (pytest puts this directory on sys.path)
import numpy_api11_fns as F
import pytest
from newcomer_harness import fd_grad
from support import HAVE_JAX, jax_twin

import s2s

DTYPES = [np.float64, np.float32]

# the sweep's classes per function where it is not "ok" (none: JAX 0.10 refuses
# np.clip's a_min=/a_max=, so clip_a_keywords' oracle is central differences)
EXPECTED: dict[str, str] = {}
# float32: values agree, dtypes are NumPy's (the function run as written), not JAX's
EXPECTED_F32 = {
    # `prepend=0.0` / `append=1.0`: NumPy concatenates a float64 array (np.diff's
    # np.asanyarray of the scalar), so the result is float64; JAX keeps float32
    "diff_prepend": "dtype", "diff_second_prepend": "dtype", "diff_rows_prepend": "dtype",
    # `* np.arange(np.size(x))`: float32 times int64 is float64 in NumPy
    "diff_append": "dtype",
    # the first running value is `initial=1.0`, a Python float: np.sin(1.0) is float64
    "accumulate_initial": "dtype",
}


@pytest.mark.slow
@pytest.mark.every_case
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", list(C.CASES))
def test_sweep(name, dtype) -> None:
    """Each function is accepted and agrees with JAX under every transform."""
    label, verdicts = C.classify(name, jax_twin(F), dtype)
    want = EXPECTED.get(name) or (EXPECTED_F32.get(name, "ok") if dtype == np.float32
                                  else "ok")
    assert label == want, {k: v for k, v in verdicts.items() if v[0] != "ok"}


def tol(dtype):
    return dict(rtol=1e-6, atol=1e-8) if dtype == np.float64 else dict(rtol=2e-3,
                                                                        atol=2e-4)


def check_fd(name, x, calls=(1,)) -> None:
    """s2s.grad against central differences of the function as written (float64),
    at each call's values; the gradient's dtype is x's."""
    g = s2s.grad(getattr(F, name))
    for call in calls:
        v = C.bump(x, call)
        got = g(v)
        assert got.dtype == x.dtype, (name, got.dtype)
        want = fd_grad(getattr(F, name), (v.astype(np.float64),), 1e-6)
        np.testing.assert_allclose(got, want, **tol(x.dtype), err_msg=name)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_piecewise_is_a_chain_of_where(dtype) -> None:
    """Functions, a constant piece, a default function; at calls 1, 3, 10."""
    check_fd("piecewise_default", np.array([-1.5, -0.3, 0.4, 1.7], dtype), calls=(1, 3, 10))


def test_piecewise_refusals_are_located() -> None:
    def unequal(x):
        return np.sum(np.piecewise(x, [x < 0], [np.sin, np.cos, np.tan]))

    with pytest.raises(s2s.TransformError, match=r"1 conditions takes 1 or 2 functions"):
        s2s.grad(unequal)(C.X4)


def test_diff_prepend_append() -> None:
    """n=2 with a scalar prepend and append; at size 1 too."""
    check_fd("diff_second_prepend", C.X4)
    check_fd("diff_second_prepend", np.array([0.3]))


def _running_max_tangent(x, t):
    """JAX's jnp.maximum.accumulate tangent, by a Python loop: each step a max whose
    tie gives each side half, the NaN after a NaN getting none."""
    y, ty = [x[0]], [t[0]]
    for k in range(1, len(x)):
        m = max(y[-1], x[k]) if not (np.isnan(y[-1]) or np.isnan(x[k])) else np.nan
        wx = (x[k] == m) / (1.0 + (y[-1] == m))
        wy = (y[-1] == m) / (1.0 + (x[k] == m))
        y.append(m)
        ty.append(wx * t[k] + wy * ty[-1])
    return np.array(ty)


@pytest.mark.parametrize("x", [[0.3, 1.0, 0.2, 1.5, -0.4], [1.0, 1.0, 0.5, 1.0, 1.0],
                               [2.0, 2.0, 2.0], [0.3, np.nan, 1.0], [-np.inf, -np.inf, 0.0]],
                         ids=["plain", "ties", "equal", "nan", "inf"])
def test_running_max_derivative_follows_jax_ties(x) -> None:
    """The Jacobian of np.maximum.accumulate, column by column against the loop."""
    x = np.array(x)
    jac = s2s.jacfwd(lambda v: np.maximum.accumulate(v))(x)
    want = np.stack([_running_max_tangent(x, e) for e in np.eye(len(x))], axis=1)
    np.testing.assert_allclose(jac, want, rtol=1e-12, atol=0)
    jac_rev = s2s.jacrev(lambda v: np.maximum.accumulate(v))(x)
    np.testing.assert_allclose(jac_rev, want, rtol=1e-12, atol=0)


@pytest.mark.slow
def test_running_max_along_rows_in_float32() -> None:
    check_fd("running_max_rows", C.X6.astype(np.float32), calls=(1, 3))


def test_accumulate_refusals_are_located() -> None:
    with pytest.raises(s2s.TransformError, match=r"np\.maximum\.accumulate`: `dtype="):
        s2s.grad(lambda x: np.sum(np.maximum.accumulate(x, dtype=np.float32)))(C.X4)


def test_itertools_accumulate_unrolled() -> None:
    check_fd("accumulate_products", C.X4)  # (operator.mul, summed by sum())


def _rows_accumulated(x):
    return sum(itertools.accumulate(x))


def test_itertools_accumulate_of_unknown_length_is_refused_with_advice() -> None:
    with pytest.raises(s2s.TransformError) as err:
        s2s.grad(lambda x: np.sum(_rows_accumulated(x)))(C.X4)
    text = str(err.value)
    assert "length s2s knows" in text and "np.cumsum(x, axis=0)" in text
    assert "return sum(itertools.accumulate(x))" in text  # (the user's line quoted)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_clip_keywords(dtype) -> None:
    check_fd("clip_min_max", C.X4.astype(dtype))
    with pytest.raises(s2s.TransformError, match=r"`min=` and `a_min` both given"):
        s2s.grad(lambda x: np.sum(np.clip(x, 0.0, min=0.3)))(C.X4)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_reduction_keywords(dtype) -> None:
    check_fd("where_keepdims_rows", C.X6.astype(dtype))
    x = C.X4.astype(dtype)  # (dtype=np.float32: summed in float32, cast back to x's)
    got = s2s.grad(F.sum_dtype)(x)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, 3.0 * x, rtol=1e-6)


def test_reduction_keyword_values_are_numpys() -> None:
    """``x.sum(where=m, initial=v)``: NumPy's 2.45; JAX 0.10's array method
    ``x.sum`` drops ``initial`` (1.95; ``x.sum(initial=10.0)`` of [1, 2] is 3), its
    jnp.sum does not."""
    def method(x):
        return x.sum(where=x > 0, initial=0.5)

    value, grad = s2s.value_and_grad(method)(C.X4)
    assert value == pytest.approx(2.45)
    np.testing.assert_array_equal(grad, [1.0, 0.0, 1.0, 1.0])


def test_max_where_needs_initial() -> None:
    with pytest.raises(s2s.TransformError, match=r"`where=` needs `initial=`"):
        s2s.grad(lambda x: np.max(x, where=x > 0))(C.X4)


# every function but sum_dtype (its float32 sum is no place for differences), rounding
# (0.45 is a rounding boundary) and the try functions (test_kept_try_...), against
# central differences
DIFFERENCES = [n for n in C.CASES if n not in ("sum_dtype", "rounding")
               and not n.startswith("try_")]


@pytest.mark.slow
@pytest.mark.parametrize("name", DIFFERENCES)
def test_against_differences(name) -> None:
    check_fd(name, C.CASES[name][0], calls=(1, 3, 10))
    check_fd(name, C.CASES[name][0].astype(np.float32))


def test_rounding_has_zero_derivative() -> None:
    x = np.array([0.126, 0.25, -0.05, 1.5])
    want = np.around(x, 2) + np.round(x, 1) * 2 * x + 0.0
    np.testing.assert_allclose(s2s.grad(F.rounding)(x), want, rtol=1e-12)


def test_kept_try_reads_the_constant_at_each_call(monkeypatch) -> None:
    """``try: n = int(CONFIG["n"]) except KeyError: n = 2`` is Python run at each
    call: the exponent follows CONFIG (calls 1 to 10, the key missing on some), and a
    ValueError no handler catches reaches the caller, as Python's."""
    g = s2s.grad(F.try_config_int)
    x = C.X4
    for call in range(1, 11):
        if call % 4 == 0:
            monkeypatch.delitem(F.CONFIG, "n")
        else:
            monkeypatch.setitem(F.CONFIG, "n", str(1 + call % 3))
        n = int(F.CONFIG.get("n", 2))
        np.testing.assert_allclose(g(x), n * x ** (n - 1), rtol=1e-12)
    monkeypatch.setitem(F.CONFIG, "n", "three")
    with pytest.raises(ValueError, match="invalid literal"):
        g(x)


@pytest.mark.parametrize("name, match, quoted", [
    # (an `except` that may run around array code: test_misc17.py has the others)
    ("try_around_array_code", r"this `except` catches `FloatingPointError`, and the "
                              r"`try`'s `np.log\(x\)` can raise `FloatingPointError`",
     "    except FloatingPointError:"),
    ("try_with_else", r"no `else`, `finally` or `except \.\.\. as`", "    try:"),
])
def test_other_try_statements_are_refused_located(name, match, quoted) -> None:
    with pytest.raises(s2s.TransformError, match=match) as err:
        s2s.grad(getattr(F, name))(C.X4)
    assert "numpy_api11_fns.py" in str(err.value) and quoted in str(err.value)
