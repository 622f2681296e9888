"""Values at the edges (issue 23): a power whose exponent is known only when the
function runs, at ``t = 0`` and below it; products holding zeros and infinities;
``round`` of a NaN or an infinite total.  Each against JAX on the same source
(``jax_twin``), float64 and float32, over calls whose values change (the 1st, 3rd and
10th checked).

- ``t ** k`` with ``k = 0`` passed at run time: JAX's pow of an integer exponent has
  the derivative 0 at ``t = 0`` (and ``k * t ** (k - 1)``, finite at 0, for ``k >= 1``);
  s2s's rule was ``0 * inf``, NaN.  A float exponent that is integral (``2.0``) is
  compared with JAX's integer exponent of the same value: JAX's float pow gives NaN at
  ``0 ** 0.0``'s derivative (and its Hessian at ``k = 1.0``), s2s 0, the derivative of
  the constant 1 (docs/python-subset.md says so).
- ``np.prod``/``np.cumprod`` at ``[inf, 0]``: JAX's Hessian ``[[0, 1], [1, 0]]``;
  s2s's product jets multiplied the constant 1's zero tangent by the inf.
- ``round``: its derivative is 0 at NaN and inf too; its value there is NumPy's
  (NaN, inf), so a gradient that reads the value is JAX's with ``jnp.round`` (JAX's
  ``round()`` of a traced value is an integer cast: 0 at NaN).
"""

from __future__ import annotations

import functools

import edge_value_fns as F
import numpy as np
import pytest
from support import HAVE_JAX, assert_close_to

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax
    from support import jax_twin

    J = jax_twin(F)

INF, NAN = np.inf, np.nan
close = functools.partial(assert_close_to, f64=1e-9, f32=3e-4)


def _x(call, dtype, t):
    """A point holding ``t`` whose other values change with the call."""
    return np.array([t, 1.5 - 0.1 * call, 0.0, -0.7 + 0.05 * call]).astype(dtype)


# ---- powers -------------------------------------------------------------------------

POWERS = [(name, k, t) for name in ("power_by_argument", "power_by_keyword")
          for k in (0, 1, 2, 3, 2.0, 0.0) for t in (0.0, -2.0)]


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name, k, t", POWERS,
                         ids=[f"{n}-{k!r}-{t}" for n, k, t in POWERS])
def test_power_of_a_run_time_exponent(name, k, t, dtype) -> None:
    """grad, jvp, vmap of grad, jacrev, hessian and s2s.jit on both backends of ``t **
    k`` at ``t = 0`` (and below), ``k`` an argument, over ten calls."""
    f, jf = getattr(F, name), functools.partial(getattr(J, name), k=int(k))
    grad, hess, jac = s2s.grad(f), s2s.hessian(f), s2s.jacrev(f)
    jits = [s2s.jit(grad, backend=b, static_argnums=(1,)) for b in ("numpy", "jax")]
    for call in range(10):
        x = _x(call, dtype, t)
        got = grad(x, k)
        if call not in (0, 2, 9):
            continue
        want = jax.grad(jf)(x)
        close(got, want, dtype)
        for jitted in jits:
            close(jitted(x, k), want, dtype)
        v = np.linspace(-1.0, 1.0, 4).astype(dtype)
        close(s2s.jvp(lambda u: f(u, k), (x,), (v,)), jax.jvp(jf, (x,), (v,)), dtype)
        close(jac(x, k), jax.jacrev(jf)(x), dtype)
        close(hess(x, k), jax.hessian(jf)(x), dtype, f32=2e-3)
        xs = np.stack([x, -x, 0 * x]).astype(dtype)
        close(s2s.vmap(grad, in_axes=(0, None))(xs, k), jax.vmap(jax.grad(jf))(xs), dtype)


def test_zero_power_at_zero() -> None:
    """The reported case in the default tier (the sweep above runs under -m slow):
    ``k = 0`` at ``t = 0``, the gradient against JAX's; its Hessian and ``k = 1``'s
    (the exponent ``k - 1 = 0`` kept at 0 again) are finite at 0, and ``k = 0.0``'s
    gradient too (JAX's float pow: NaN)."""
    x = np.array([0.0, 1.5, -2.0])
    jf = functools.partial(J.power_by_argument, k=0)
    close(s2s.grad(F.power_by_argument)(x, 0), jax.grad(jf)(x), np.float64)
    hess = s2s.hessian(F.power_by_argument)
    for k in (0, 1, 0.0):
        assert np.all(np.isfinite(hess(x, k))), k


@pytest.mark.slow
@pytest.mark.parametrize("n", [0, 1, 2, 4])
def test_powers_of_a_loops_counter(n) -> None:
    """``x ** k`` for ``k in range(n)`` (a loop of run-time length): grad and Hessian at
    a point holding 0, against JAX."""
    x = np.array([0.0, -1.5, 2.0])
    jf = functools.partial(J.powers_of_a_loop, n=n)
    close(s2s.grad(F.powers_of_a_loop)(x, n), jax.grad(jf)(x), np.float64)
    close(s2s.hessian(F.powers_of_a_loop)(x, n), jax.hessian(jf)(x), np.float64)
    close(s2s.hessian(F.power_of_a_count)(x), jax.hessian(J.power_of_a_count)(x),
          np.float64)


# ---- products at zeros and infinities ---------------------------------------------

POINTS = [[INF, 0.0], [0.0, INF], [INF, 1.0], [INF, INF], [0.0, 0.0], [-INF, 2.0],
          [0.5, -3.0]]


def _second(name):
    """The four second-derivative transforms of ``name``: s2s's and JAX's."""
    f, jf = getattr(F, name), getattr(J, name)
    return [(s2s.hessian(f), jax.hessian(jf)),
            (s2s.jacrev(s2s.grad(f)), jax.jacrev(jax.grad(jf))),
            (s2s.jacfwd(s2s.grad(f)), jax.jacfwd(jax.grad(jf))),
            (s2s.jacfwd(s2s.jacfwd(f)), jax.jacfwd(jax.jacfwd(jf)))]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["product_by_numpy", "product_of_rows"])
def test_product_hessians_at_zeros_and_infs(name) -> None:
    """Second derivatives of ``np.prod`` at two elements holding 0 and ±inf: JAX's
    values, NaN where JAX's is NaN and nowhere else."""
    pairs = _second(name)
    with np.errstate(invalid="ignore", over="ignore"):
        for p in POINTS:
            x = np.array(p) if name == "product_by_numpy" else np.array([p, [1.5, 0.5]]).T
            for ours, theirs in pairs:
                got, want = np.asarray(ours(x)), np.asarray(theirs(x))
                np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=str(p))
                fin = ~np.isnan(want)
                np.testing.assert_allclose(got[fin], want[fin], rtol=1e-12)


@pytest.mark.slow
def test_product_hessians_of_three() -> None:
    """Three elements, one inf and one 0: where JAX's Hessian is a number, s2s's is the
    same number (np.prod's gives numbers at more places: ``d²(abc)/db dc = a = inf``,
    which JAX's evaluation makes NaN); cumprod's Hessian too."""
    with np.errstate(invalid="ignore", over="ignore"):
        for name in ("product_by_numpy", "running_products"):
            for p in ([INF, 0.0, 2.0], [2.0, INF, 0.0], [0.0, 2.0, 3.0], [0.0, 0.0, 3.0]):
                x = np.array(p)
                got = s2s.hessian(getattr(F, name))(x)
                want = np.asarray(jax.hessian(getattr(J, name))(x))
                fin = np.isfinite(want)
                np.testing.assert_allclose(got[fin], want[fin], rtol=1e-12)


def test_the_reported_product_hessian() -> None:
    """``np.prod`` at ``[inf, 0]``: JAX's ``[[0, 1], [1, 0]]`` (the default tier's
    case, the value JAX gives written out: the sweep above asks JAX under -m slow)."""
    with np.errstate(invalid="ignore"):
        got = s2s.hessian(F.product_by_numpy)(np.array([INF, 0.0]))
    np.testing.assert_array_equal(got, [[0.0, 1.0], [1.0, 0.0]])


@pytest.mark.slow
def test_product_hessian_of_a_fold() -> None:
    """The fold over an array of run-time length: JAX's ``[[0, 1], [1, 0]]`` at
    ``[inf, 0]`` (its first and last calls are out of its loop, so the seed's zero
    tangent is never multiplied by the inf: frontend/reduces.py; it was a NaN row);
    tests/test_special_values11.py sweeps the other points and compositions."""
    x = np.array([INF, 0.0])
    with np.errstate(invalid="ignore"):
        h = s2s.hessian(F.product_of_items)(x)
    np.testing.assert_array_equal(h, jax.hessian(J.product_of_items)(x))
    np.testing.assert_array_equal(h, [[0.0, 1.0], [1.0, 0.0]])


@pytest.mark.slow
def test_product_hessian_of_a_fold_at_finite_points() -> None:
    x = np.array([0.5, -3.0, 2.0])
    close(s2s.hessian(F.product_of_items)(x), jax.hessian(J.product_of_items)(x),
          np.float64)


# ---- round at NaN and inf ------------------------------------------------------------

ROUND_POINTS = [[1.2, NAN], [1.2, INF], [1.2, -INF], [0.3, 1.2], [2.5, 0.0]]


@pytest.mark.slow
def test_round_has_no_derivative_at_nan_or_inf() -> None:
    """``round(np.sum(x)) + np.sum(x)``: the gradient is 1 everywhere, NaN and inf
    totals included (the derivative through round is 0, never NaN * 0), under grad,
    jvp, jacfwd, vmap of grad and s2s.jit on both backends; JAX's grad agrees."""
    f = F.rounds_alone
    for p in ROUND_POINTS:
        x = np.array(p)
        want = jax.grad(J.rounds_alone)(x)
        np.testing.assert_array_equal(want, [1.0, 1.0])
        for got in (s2s.grad(f)(x), s2s.jacfwd(f)(x), s2s.vmap(s2s.grad(f))(x[None])[0],
                    s2s.jit(s2s.grad(f))(x), s2s.jit(s2s.grad(f), backend="jax")(x)):
            np.testing.assert_array_equal(got, [1.0, 1.0])
        np.testing.assert_array_equal(s2s.jvp(f, (x,), (np.ones(2),))[1], 2.0)


def test_round_value_at_nan_and_inf_is_numpys() -> None:
    """``np.sum(x * round(np.sum(x)))``: the gradient is ``round(np.sum(x))``, NumPy's
    value, NaN or ±inf where the total is: JAX's gradient of the same source spelled
    ``np.round`` (``jnp.round``, a float); where the total is finite, also JAX's
    gradient of the source as written.  Python's own ``round`` raises there, and
    ``s2s.jacrev``, which runs the function once in Python, raises it too."""
    for p in ROUND_POINTS:
        x = np.array(p)
        got = s2s.grad(F.rounds_a_total)(x)
        with np.errstate(invalid="ignore"):
            want = jax.grad(J.rounds_a_total_by_numpy)(x)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(s2s.jit(s2s.grad(F.rounds_a_total))(x), want)
        if np.isfinite(np.sum(x)):
            np.testing.assert_array_equal(got, jax.grad(J.rounds_a_total)(x))
            continue
        with pytest.raises((ValueError, OverflowError)):
            F.rounds_a_total(x)
        with pytest.raises((ValueError, OverflowError)):
            s2s.jacrev(F.rounds_a_total)(x)
