"""Differential fuzzing of names bound on one path: random programs whose ``if``s
share one test (``if t:``, ``if not t:``, ``else`` or none), each binding names on
its path that later ``if``s on the same path read, through second derivatives.

The pattern ``if t: a = ...; z = a`` ... ``if t: b = z * a`` once made reverse mode
drop a cotangent (tests/frontend/test_one_path_names.py); the differential fuzzer
(tests/test_fuzz.py) draws one ``if`` per test and checks first derivatives only, so
it could not find it.  Each program ``f(x)`` (a vector of 4) is checked against JAX
on the same source (JAX runs Python ``if``s on concrete values without ``jit``):
``grad``, ``vjp``, ``jvp``, ``hessian``, ``jacrev(grad)``, ``jvp(grad)`` and
``vmap(grad)`` (against a loop of ``jax.grad``), at a point on each side of the test.

Default: a fixed seed and ``S2S_FUZZ_PATHS`` programs (1: each costs seconds of
JAX tracing); ``-m slow``: ``S2S_FUZZ_PATHS_LONG`` (300).
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
from fuzz_programs import UNARY, load
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

import s2s

jax = pytest.importorskip("jax")

SEED = int(os.environ.get("S2S_FUZZ_SEED", "20261206"))
EXAMPLES = int(os.environ.get("S2S_FUZZ_PATHS", "1"))
BINARY = ["{a} + {b}", "{a} * {b}", "{a} - 0.5 * {b}", "np.maximum({a}, {b})",
          "{a} / (1.5 + np.cos({b}))", "np.tanh({a}) * {b}"]


@st.composite
def path_programs(draw) -> str:
    """``def f(x):`` with a test ``t`` and 2 to 5 ``if``s on it (or on ``not t``)."""
    lines = [f"    t = {draw(st.sampled_from(['np.sum', 'np.mean']))}(x) > 0.0"]
    common, on = ["x"], {True: [], False: []}  # names bound on every path / on one
    for k in range(draw(st.integers(2, 5))):
        way = draw(st.booleans())
        test = "t" if way else "not t"
        has_else = draw(st.booleans())
        lines.append(f"    if {test}:")
        fresh = []
        for j in range(draw(st.integers(1, 3))):
            readable = common + on[way] + fresh
            name = f"v{k}_{j}"
            form = draw(st.sampled_from(UNARY + BINARY))
            a, b = draw(st.sampled_from(readable)), draw(st.sampled_from(readable))
            lines.append(f"        {name} = {form.format(a=a, b=b)}")
            fresh.append(name)
        if draw(st.booleans()):  # an alias (``z = a``), which reverse mode renames
            lines.append(f"        w{k} = {draw(st.sampled_from(fresh))}")
            fresh.append(f"w{k}")
        if has_else:  # the last name also on the other path: bound on every path
            lines.append("    else:")
            readable = common + on[not way]
            form = draw(st.sampled_from(UNARY))
            lines.append(f"        {fresh[-1]} = {form.format(a=draw(st.sampled_from(readable)))}")
            common.append(fresh.pop())
        on[way] += fresh
    last_t = draw(st.sampled_from(common + on[True]))
    last_f = draw(st.sampled_from(common + on[False]))
    lines += ["    if t:", f"        out = {last_t} * x", "    else:", f"        out = {last_f} * x"]
    return "def f(x):\n" + "\n".join(lines) + "\n    return np.sum(out ** 2)\n"


def close(got, expected, what: str) -> None:
    got, expected = np.asarray(got, float), np.asarray(expected, float)
    scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
    np.testing.assert_allclose(got, expected, rtol=1e-7, atol=1e-9 * scale, err_msg=what)


def check(source: str, r: np.random.Generator) -> None:
    f, fj = load(source)
    base = r.normal(size=4)
    for sign in (1.0, -1.0):
        x = sign * (np.abs(base) + 0.1)  # (the test's value is far from switching)
        v = r.normal(size=4)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            value = f(x)
        if not np.isfinite(value) or abs(value) > 1e8:
            continue
        close(s2s.grad(f)(x), jax.grad(fj)(x), f"grad\n{source}")
        _, pullback = s2s.vjp(s2s.grad(f), x)
        close(pullback(v), jax.vjp(jax.grad(fj), x)[1](v), f"vjp(grad)\n{source}")
        close(s2s.jvp(s2s.grad(f), (x,), (v,))[1], jax.jvp(jax.grad(fj), (x,), (v,))[1],
              f"jvp(grad)\n{source}")
        expected = jax.hessian(fj)(x)
        close(s2s.hessian(f)(x), expected, f"hessian\n{source}")
        close(s2s.jacrev(s2s.grad(f))(x), expected, f"jacrev(grad)\n{source}")
    xs = np.stack([np.abs(base) + 0.1, -np.abs(base) - 0.1, base])
    loop = np.stack([jax.grad(fj)(xi) for xi in xs])
    if np.all(np.isfinite(loop)):
        close(s2s.vmap(s2s.grad(f))(xs), loop, f"vmap(grad)\n{source}")


def fuzz(n: int, salt: int = 0) -> None:
    @seed(SEED + salt)
    @settings(max_examples=n, deadline=None, database=None,
              phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
    @given(path_programs())
    def run(source):
        check(source, np.random.default_rng(len(source)))

    run()


@pytest.mark.slow
def test_fuzz_paths_fixed_seed() -> None:
    fuzz(EXAMPLES)


@pytest.mark.slow
def test_fuzz_paths_long() -> None:
    fuzz(int(os.environ.get("S2S_FUZZ_PATHS_LONG", "300")), salt=1)
