"""Issue 23, probe 13 (tests/frontend/newcomer_probe13_fns.py): forms s2s refused where
JAX (or Python) runs them, made to run (tests/frontend/probe13_fix_fns.py):
``np.arange(n, dtype=float)``; ``np.fft.fftfreq``/``rfftfreq`` (constants of the
length); an ``if``/``elif`` chain whose ``else`` raises, or whose first branch raises
(``frontend/raise_branches.py``: the check kept as ``if test: raise``).  Each against
central differences at changing values (no JAX), the raise at the values that reach
it; the probe's slow sweep runs the probe's functions against JAX."""

from __future__ import annotations

import numpy as np
import probe13_fix_fns as F
import pytest
from newcomer_harness import fd_grad

import s2s

X4 = np.array([0.3, -0.7, 0.45, 1.2])


def _calls(f, xs, *rest, tol=(1e-6, 1e-8)):
    g = s2s.grad(f)
    for x in xs:
        np.testing.assert_allclose(g(x, *rest), fd_grad(f, (x, *rest), 1e-6), *tol)


def test_arange_dtype_keyword() -> None:
    """``np.arange(n, dtype=float)`` was refused ("got an unexpected keyword argument
    'dtype'"): grad at three values, vmap of grad against central differences per
    example; float32 keeps the gradient float32."""
    f = F.arange_dtype
    _calls(f, [X4, X4 * 1.3, -X4])
    batch = np.stack([X4, X4 * 0.7])
    np.testing.assert_allclose(s2s.vmap(s2s.grad(f))(batch)[1],
                               fd_grad(f, (X4 * 0.7,), 1e-6), 1e-6, 1e-8)
    assert s2s.grad(f)(X4.astype(np.float32)).dtype == np.float32


@pytest.mark.slow
@pytest.mark.parametrize("name", ["arange_dtype", "fft_frequencies"])
@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_jit_of_the_new_calls(name, backend) -> None:
    """s2s.jit of grad on both backends, three calls at changing values."""
    f = getattr(F, name)
    jit = s2s.jit(s2s.grad(f), backend=backend)
    for c in (1.0, 0.7, -1.3):
        x = np.append(X4, 0.1) * c
        np.testing.assert_allclose(jit(x), fd_grad(f, (x,), 1e-6), 1e-6, 1e-8)


def test_fftfreq_rfftfreq_are_constants() -> None:
    """``np.fft.rfftfreq(n, d=d)`` and ``np.fft.fftfreq(n)`` had no rule ("has no
    derivative rule in s2s yet"): constants of the length, odd and even lengths, ``d``
    changed between calls."""
    f = F.fft_frequencies
    x5 = np.append(X4, 0.1)
    _calls(f, [X4, x5, x5 * -1.2])
    _calls(f, [x5], 0.25)


def test_else_raise_on_static_strings() -> None:
    """``if kind == "huber": ... elif kind == "cubic": ... else: raise ...`` in a
    callee (refused: "`raise` is kept only as the whole body of an `if` with no
    `else`"): runs with each kind (a name each branch assigns is assigned on every
    path); an unknown kind raises the user's ValueError at the call, as Python."""
    _calls(F.else_raise_static, [X4, X4 * -2.0, X4[:1]])
    with pytest.raises(ValueError, match="unknown loss 'l7'"):
        s2s.grad(F.else_raise_bad_kind)(X4)


def test_else_raise_on_values() -> None:
    """The chain's tests read array values: each branch where its test holds (also
    after the other), the raise where none holds; vmap of grad against a loop over
    examples that all reach a branch, and fires where one example reaches the raise."""
    f = F.else_raise_value
    _calls(f, [X4, np.array([-0.3, -0.2, -0.1, 0.05]), X4 * 1.5])
    with pytest.raises(ValueError, match="too negative"):
        s2s.grad(f)(-2.0 * X4)
    batch = np.stack([X4, np.array([-0.3, -0.2, -0.1, 0.05])])
    got = s2s.vmap(s2s.grad(f))(batch)
    for row, x in zip(got, batch):
        np.testing.assert_allclose(row, fd_grad(f, (x,), 1e-6), 1e-6, 1e-8)
    with pytest.raises(ValueError, match="too negative"):
        s2s.vmap(s2s.grad(f))(np.stack([X4, -2.0 * X4]))


def test_first_branches_raise() -> None:
    """``if x.ndim != 1: raise ... elif axis != 0: raise ... else: y = ...`` and ``if
    short: raise ... elif mode == "a": ... else: ...``: each raising branch its own
    check (its test read once, as Python reads it); the raise where it holds."""
    _calls(F.first_branch_raises, [X4, -2.0 * X4])
    with pytest.raises(ValueError, match="axis must be 0"):
        s2s.grad(F.first_branch_raises)(X4, 1)
    with pytest.raises(ValueError, match="expected a vector"):
        s2s.grad(F.first_branch_raises)(np.ones((2, 2)))
    _calls(F.first_raises_then_chain, [X4, X4 * 0.3])
    _calls(F.first_raises_then_chain, [X4], "a")
    with pytest.raises(ValueError, match="too short"):
        s2s.grad(F.first_raises_then_chain)(X4[:1])


def test_else_raise_after_returns() -> None:
    """Branches that return, a last ``else`` that raises: each kind's value and
    gradient, the raise for another kind."""
    f = F.else_raise_return_branches
    _calls(f, [X4, X4 * 0.5])
    _calls(f, [X4], "cos")
    vg = s2s.value_and_grad(f)(X4, "cos")
    np.testing.assert_allclose(vg[0], np.sum(np.cos(X4)), 1e-12)
    with pytest.raises(ValueError, match="tan"):
        s2s.grad(f)(X4, "tan")


def test_else_raise_after_a_test_read_twice_is_refused_at_its_line() -> None:
    """A test that calls the user's function is not read again (it may not give the
    same value twice): the ``raise`` in the ``else`` stays refused, located at it."""
    with pytest.raises(s2s.TransformError) as e:
        s2s.grad(F.else_raise_user_test)(X4)
    assert "probe13_fix_fns.py" in str(e.value) and 'raise ValueError("negative")' in \
        str(e.value)


@pytest.mark.slow
def test_scipy_package_attribute_in_callees_on_jax() -> None:
    """``import scipy.special`` then ``scipy.special.erf(...)`` in a lambda and in a
    module function called by the function: on the JAX backend the callee read SciPy's
    erf on a traced value ("a Python conversion ... TracerArrayConversionError");
    ``scipy`` is read as JAX's there.  Three calls at changing values against central
    differences, and the NumPy backend's jit."""
    f = F.black_scholes_lambda
    for backend in ("jax", "numpy"):
        jit = s2s.jit(s2s.grad(f), backend=backend)
        for c in (1.0, 1.1, 0.8):
            p = np.array([1.1, 0.3, 0.5]) * c
            np.testing.assert_allclose(jit(p), fd_grad(f, (p,), 1e-6), 1e-6, 1e-8)


@pytest.mark.slow
def test_sorted_items_of_a_module_dict_in_zip() -> None:
    """``zip(sorted(WEIGHTS.items()), x)`` of a module's dict constant was refused
    ("sorted() ... would compare its values in Python": keys are unique, so only keys
    are compared); ``list(WEIGHTS.values())`` too.  Against a Python loop's central
    differences, with a value changed and a key added between calls (read at each
    call, as module constants are)."""
    f = F.sorted_const_items_zip
    saved = dict(F.WEIGHTS)
    g = s2s.grad(f)
    try:
        for change in ({}, {"a": 10.0}, {"aa": 100.0}):
            F.WEIGHTS.update(change)
            np.testing.assert_allclose(g(X4), fd_grad(f, (X4,), 1e-6), 1e-6, 1e-8)
    finally:
        F.WEIGHTS.clear()
        F.WEIGHTS.update(saved)


def test_vmap_of_grad_joins_a_path_bound_none() -> None:
    """vmap of grad of ``min(max(q[0], q[1]), 0.0)``: the gradient binds ``q_bar`` on
    one path of each ``if`` only (None first, on the other); vmap's ``np.where`` of
    the value and None gave an object array, or an internal TypeError with
    ``q = np.abs(p) - c``.  Each example against its own grad and central
    differences, the result float64."""
    f = F.box_sdf_inner
    batch = np.array([[0.3, -0.7], [0.03, -0.07], [-0.1, 0.02], [0.6, 0.1]])
    got = s2s.vmap(s2s.grad(f))(batch)
    assert got.dtype == np.float64
    for row, x in zip(got, batch):
        np.testing.assert_allclose(row, fd_grad(f, (x,), 1e-7), 1e-6, 1e-8)


def test_abs_of_a_complex_zero_has_derivative_zero() -> None:
    """``np.abs`` of a complex zero (a real signal's empty FFT bin: ones(6)'s bins 1 to
    3, a symmetric Hann window's Nyquist bin) had derivative 1 there (conj(x)/|x|
    replaced by 1), JAX's is 0: grad gave [3, -1, 0, -1, 0, -1] where JAX's (and
    central differences', by symmetry) is 0.  Now 0, as JAX's; a real zero keeps
    abs'(0) = 1 (JAX's); away from zeros, central differences."""
    f = F.spectrum_magnitudes
    np.testing.assert_allclose(s2s.grad(f)(np.ones(6)), np.zeros(6), atol=1e-12)
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(6) / 5)
    np.testing.assert_allclose(s2s.grad(f)(window), fd_grad(f, (window,), 1e-7), 1e-6,
                               1e-8)
    x = np.array([1.0, 2.0, 1.0, 0.5, 0.3, 0.2])
    np.testing.assert_allclose(s2s.grad(f)(x), fd_grad(f, (x,), 1e-6), 1e-6, 1e-8)
    np.testing.assert_allclose(s2s.vmap(s2s.grad(f))(np.stack([np.ones(6), x]))[0],
                               np.zeros(6), atol=1e-12)
    np.testing.assert_allclose(s2s.jvp(f, (np.ones(6),), (np.arange(6.0),))[1], 0.0,
                               atol=1e-12)
    assert s2s.grad(lambda v: np.sum(np.abs(v)))(np.zeros(2)).tolist() == [1.0, 1.0]
