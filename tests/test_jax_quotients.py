"""On the JAX backend a divisor's derivative reads the dividend, not the quotient
(s2s/backends/quotients.py): ``-g * q / d`` of ``q = n / d`` runs as ``-g / d * n / d``,
so XLA fuses the forward's division into its consumer as in ``jax.jit(jax.grad)``'s
program, and keeps the range of the NumPy rule where JAX's ``x2**-2`` overflows.

The text pass: each rewritten module against the module it came from, run on NumPy
(random inputs, values equal), its text black-stable, and the cases it must leave
alone (a name bound twice, a quotient in a loop, another divisor).  Values: gradients
and tangents with respect to divisors from 1e-30 to 1e30 (float32) and 1e-300 to
1e300 (float64) against the exact derivative computed in long double, and against
``jax.jit(jax.grad)`` wherever JAX's own value is finite and not zero."""

from __future__ import annotations

import types

import black
import numpy as np
import pytest

import s2s
from s2s.backends.quotients import lower_quotients

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

# ---- the text pass -------------------------------------------------------------------

REWRITTEN = {
    "cotangent": ("def f(n, d, g):\n    q = n / d\n    e = np.exp(q)\n"
                  "    return e, -g * q / d\n", "-g / d * n / d"),
    "quotient first": ("def f(n, d, g):\n    q = n / d\n    return q * g / d\n", "g / d * n / d"),
    "later in a loop": ("def f(n, d, g):\n    q = n / d\n    t = 0.0\n    for i in range(3):\n"
                        "        t = t + g * i * q / d\n    return t\n", "g * i / d * n / d"),
    "constant dividend": ("def f(n, d, g):\n    q = 2.0 / d\n    return n + g * q / d\n",
                          "g / d * 2.0 / d"),
    "long line": ("def f(n, d, g):\n    quotient_with_a_long_name = n / d\n"
                  "    return np.sum(np.sin(n) * np.cos(d), axis=None) + np.sum("
                  "-g * quotient_with_a_long_name / d)\n", "-g / d * n / d"),
}
KEPT = {
    "quotient rebound": "def f(n, d, g):\n    q = n / d\n    q = q + 1\n    return g * q / d\n",
    "divisor rebound": "def f(n, d, g):\n    q = n / d\n    d = d + 1\n    return g * q / d\n",
    "dividend rebound": "def f(n, d, g):\n    q = n / d\n    n = n * 2\n    return g * q / d\n",
    "another divisor": "def f(n, d, g):\n    q = n / d\n    return g * q / n\n",
    "quotient in a branch": "def f(n, d, g):\n    if g.size:\n        q = n / d\n"
                            "    return g * q / d\n",
    "loop target": "def f(n, d, g):\n    q = n / d\n    for d in [d]:\n        pass\n"
                   "    return g * q / d\n",
    "nonlocal": "def f(n, d, g):\n    q = n / d\n\n    def h():\n        nonlocal d\n"
                "        d = d + 1\n\n    h()\n    return g * q / d\n",
    "walrus": "def f(n, d, g):\n    q = n / d\n    s = [(d := d + 1) for _ in range(1)]\n"
              "    return g * q / d, s\n",
    "dividend an expression": "def f(n, d, g):\n    q = (n + 1) / d\n    return g * q / d\n",
}


def run(text, *args):
    namespace = {"np": np}
    exec(compile(text, "<test>", "exec"), namespace)
    return namespace["f"](*args)


@pytest.mark.every_case
@pytest.mark.parametrize("case", sorted(REWRITTEN))
def test_the_rewrite_keeps_values_and_layout(case):
    text, expected = REWRITTEN[case]
    text = black.format_str(text, mode=black.Mode())
    out = lower_quotients(text)
    assert out != text and expected in "".join(out.split("\n"))
    assert black.format_str(out, mode=black.Mode()) == out
    rng = np.random.default_rng(0)
    args = rng.normal(size=(3, 5)) + np.array([[0.0], [3.0], [0.0]])
    for a, b in zip(np.atleast_1d(run(text, *args)), np.atleast_1d(run(out, *args))):
        np.testing.assert_allclose(b, a, rtol=1e-13)


@pytest.mark.every_case
@pytest.mark.parametrize("case", sorted(KEPT))
def test_the_rewrite_leaves_alone_what_it_cannot_prove(case):
    text = black.format_str(KEPT[case], mode=black.Mode())
    assert lower_quotients(text) == text


# ---- values at extreme divisors --------------------------------------------------------


def wave(x, d):
    return np.sum(np.sin(x / d))


def wave_tangent(x, d, v):
    return s2s.jvp(lambda e: wave(x, e), (d,), (v,))[1]


def exact(x, d):
    """d/dd sum(sin(x / d)) = sum(-cos(x / d) * x / d) / d, in long double."""
    q = x.astype(np.longdouble) / np.longdouble(d)
    return np.sum(-np.cos(q) * q) / np.longdouble(d)


DIVISORS = {np.float32: [1e-30, 1e-22, 1e-18, 1e-3, 1.0, 1e3, 1e18, 1e22, 1e30],
            np.float64: [1e-300, 1e-200, 1e-160, 1e-3, 1.0, 1e3, 1e160, 1e200, 1e300]}


@pytest.mark.every_case
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_extreme_divisors_keep_their_range(dtype):
    grad = s2s.jit(s2s.grad(wave, argnums=1), backend="jax")
    tangent = s2s.jit(wave_tangent, backend="jax")
    theirs = jax.jit(jax.grad(types.FunctionType(wave.__code__, {"np": jnp}), argnums=1))
    rtol = 2e-6 if dtype == np.float32 else 1e-14
    u = np.linspace(0.5, 2.0, 7)
    jax_lost = 0
    for value in DIVISORS[dtype]:
        d = dtype(value)
        x = (d * u.astype(dtype)).astype(dtype)
        want = float(exact(x, d))
        for got in (grad(x, d), tangent(x, d, dtype(1.0)), s2s.grad(wave, argnums=1)(x, d)):
            assert np.asarray(got).dtype == dtype
            np.testing.assert_allclose(float(got), want, rtol=rtol * 4)
        j = float(theirs(x, d))
        if np.isfinite(j) and j != 0.0:
            np.testing.assert_allclose(float(grad(x, d)), j, rtol=rtol * 4)
        else:
            jax_lost += 1  # (JAX's -g * x * d**-2: d**-2 out of range)
    assert jax_lost >= 4  # the comparison reached the divisors where the rules differ
    assert "-x_over_d_bar / d * x / d" in s2s.source(grad)


# ---- the compiled program ------------------------------------------------------------


def gp_nll(ell, x, y):
    sq = (x[:, None] - x[None, :]) ** 2
    k = np.exp(-0.5 * sq / ell**2) + 0.1 * np.eye(x.shape[0])
    alpha = np.linalg.solve(k, y)
    return 0.5 * (y @ alpha) + 0.5 * np.linalg.slogdet(k)[1]


def exponential_alone(hlo: str) -> bool:
    """Whether a computation of the compiled program takes an exponential without the
    division it reads (the division materialized, the exp a kernel of its own)."""
    blocks = hlo.split("\n\n")
    return any("exponential(" in b and "divide(" not in b for b in blocks)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_division_fuses_with_its_exponential_as_in_jax(dtype):
    rng = np.random.default_rng(0)
    x = np.sort(rng.uniform(0, 5, 12)).astype(dtype)
    args = (np.asarray(0.7, dtype), x, (np.sin(x) + 0.1 * rng.normal(size=12)).astype(dtype))
    ours = s2s.jit(s2s.grad(gp_nll), backend="jax")
    theirs = jax.jit(jax.grad(types.FunctionType(gp_nll.__code__, {"np": jnp})))
    tol = 2e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(ours(*args), theirs(*args), rtol=tol)
    ours_hlo = ours._jitted.lower(*args).compile().as_text()
    theirs_hlo = theirs.lower(*args).compile().as_text()
    assert not exponential_alone(theirs_hlo)  # (what JAX's program does, this XLA)
    assert not exponential_alone(ours_hlo)
    assert "-ratio_bar / ell_sq * sq_times_m0_5 / ell_sq" in s2s.source(ours)
