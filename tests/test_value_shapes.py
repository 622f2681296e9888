"""The specializer never assumes a shape that values decide (issue: soundness).

``s2s.grad`` specializes its code to a signature from the second call with it
(s2s/optimize/specialize.py), keeping only the facts the signature settles
(s2s/optimize/signature_facts.py).  Each random program of tests/value_shaped_programs.py has
intermediates whose shapes depend on values (masks, ``argmax`` bounds, 0-d integer
arrays, a module attribute, a module array changed in place); it is called several
times with one signature and new values each time, and every call is compared with
the code as emitted (``specialize = False``) and with ``jax.grad`` of the same source
where JAX can run it.  Every gradient is also checked to share no memory with the
arguments or the module's arrays, and writing into one must not change the next.

The default run draws ``S2S_VALUE_SHAPES_EXAMPLES`` programs (6); ``-m slow`` runs
the long campaign (``S2S_VALUE_SHAPES_LONG``, 5000).
"""

from __future__ import annotations

import functools
import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

import s2s
from value_shaped_programs import load, programs

EXAMPLES = int(os.environ.get("S2S_VALUE_SHAPES_EXAMPLES", "4"))
LONG = int(os.environ.get("S2S_VALUE_SHAPES_LONG", "5000"))
CALLS = 5  # the third and later run the specialized code


def _values(r: np.random.Generator, module) -> tuple:
    """New values for one call with the same signature; also moves the module state."""
    x = r.normal(size=6)
    y = r.normal(size=6)
    if r.random() < 0.4:
        y[r.random(6) < 0.4] = np.nan
    m = r.random(6) < r.uniform(0.1, 0.9)
    n = np.array(r.integers(0, 7))
    k = r.integers(0, 6, size=3)
    if r.random() < 0.5:
        module.CFG.w = int(r.integers(0, 7))
    if r.random() < 0.5:
        module.N[...] = r.integers(0, 7)
    if r.random() < 0.3:
        module.W[...] = r.normal(size=6)
    return x, y, m, n, k


def _jax_grad(twin, args):
    try:
        import jax
    except ImportError:
        return None
    try:
        return np.asarray(jax.grad(twin.f)(*args))
    except Exception:  # a shape JAX cannot trace (a mask of a traced value): no oracle
        return None


def check_program(source: str, r: np.random.Generator) -> int:
    module, twin = load(source)
    g = s2s.grad(module.f)
    generic = s2s.grad(module.f)
    generic.specialize = False
    # (value_and_grad specializes on its own: a third of the programs, for time)
    vg = s2s.value_and_grad(module.f) if r.random() < 1 / 3 else None
    compared = 0
    for call in range(CALLS):
        args = _values(r, module)
        keep = [a.copy() for a in args] + [module.W.copy()]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want = generic(*args)
            got = g(*args)
            results = [got]
            if vg is not None:
                results.append(vg(*args)[1])
            # JAX on the first call and the last (each of its calls traces anew)
            oracle = _jax_grad(twin, args) if twin is not None and call in (
                0, CALLS - 1) else None
        where = f"call {call + 1} of\n{source}"
        for result in results:
            np.testing.assert_allclose(result, want, rtol=1e-10, atol=1e-12, err_msg=where)
        if oracle is not None and np.all(np.isfinite(oracle)):
            np.testing.assert_allclose(got, oracle, rtol=1e-9, atol=1e-12, err_msg=where)
            compared += 1
        for result in results:
            for a in list(args) + [module.W]:
                assert not np.shares_memory(result, a), where
            result *= 0.5  # the caller writes into its gradient
        for a, before in zip(list(args) + [module.W], keep):
            np.testing.assert_array_equal(a, before, err_msg=where)
    # every program is straight-line code or loops over ranges: the calls after the
    # first ran specialized code (else this test would check nothing)
    assert g.specialized_source is not None, source
    return compared


@seed(20261201)
@settings(max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(programs(), st.integers(0, 2**31 - 1))
def test_value_dependent_shapes_never_freeze(source: str, salt: int) -> None:
    check_program(source, np.random.default_rng(salt))


@pytest.mark.slow
@seed(20261202)
@settings(max_examples=LONG, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(programs(steps=(2, 8)), st.integers(0, 2**31 - 1))
def test_value_dependent_shapes_never_freeze_long(source: str, salt: int) -> None:
    check_program(source, np.random.default_rng(salt))



@pytest.mark.slow
def test_a_module_loop_count_changed_at_every_call_is_read_when_it_runs() -> None:
    """``for i in range(N)`` with ``N`` a module array changed in place before every
    call: the loop reads ``N`` when it runs, so the code is not made again per value
    and the second call specializes (the long campaign's falsifying example, salt 7:
    a pass that then unrolled nothing had marked ``N`` static, so every change of it
    generated anew and nothing was ever specialized).  Each call against central
    differences."""
    source = ("def f(x, y, m, n, k):\n    v = x\n    for i in range(N):\n"
              "        v = 0.5 * v + np.tanh(np.sum(x) * x)\n    return np.sum(v ** 2)\n")
    module, _ = load(source)
    g, W = s2s.grad(module.f), module.W
    r = np.random.default_rng(7)
    for count in (2, 1, 3, 0, 4):
        module.N[...] = count
        x, rest = r.normal(size=6), (W, W > 1.0, np.array(1), np.arange(3))
        h = 1e-6 * np.eye(6)
        fd = [(module.f(x + e, *rest) - module.f(x - e, *rest)) / 2e-6 for e in h]
        np.testing.assert_allclose(g(x, *rest), fd, rtol=1e-6, atol=1e-8,
                                   err_msg=f"N = {count}")
    assert g.specialized_source is not None and "range(N)" in g.specialized_source






COMPREHENSION_OF_N = ("def f(x, y, m, n, k):\n    return h(x)\n\n\ndef h(x):\n"
                      "    return np.sum(np.stack([x * (i + 1) for i in range(N)]) ** 2)\n")


@pytest.mark.every_case  # (value_and_grad by default, the others slow)
@pytest.mark.parametrize("how", ["value_and_grad", pytest.param("jit", marks=pytest.mark.slow),
                                 pytest.param("jvp", marks=pytest.mark.slow)])
def test_a_comprehension_length_from_a_module_array_changed_in_place(how) -> None:
    """``[x * (i + 1) for i in range(N)]`` is made for ``N``'s value (unrolled):
    ``N`` changed in place keeps its identity, so the calls that skip the argument
    checks (the fast path, from the second call with one signature) compare its
    value too.  value_and_grad, jit of grad and jvp ran the code of the count before
    (a wrong number, or NumPy's IndexError from emitted code).  The gradient is
    ``2 x (1 + 4 + ... + N**2)``; jvp along ones gives its sum."""
    module, _ = load(COMPREHENSION_OF_N)
    x = np.linspace(0.1, 1.0, 6)
    if how == "value_and_grad":
        vg = s2s.value_and_grad(module.h)
        run = lambda: vg(x)[1]  # noqa: E731
    elif how == "jit":
        run = functools.partial(s2s.jit(s2s.grad(module.h)), x)
    else:
        run = lambda: s2s.jvp(module.h, (x,), (np.ones(6),))[1]  # noqa: E731
    for call, count in enumerate((2, 3, 3, 3, 4, 1, 5)):  # (the second 3: the fast path)
        module.N[...] = count
        want = 2 * x * sum((i + 1) ** 2 for i in range(count))
        np.testing.assert_allclose(run(), np.sum(want) if how == "jvp" else want,
                                   rtol=1e-12, err_msg=f"call {call + 1}, N = {count}")
        if how == "value_and_grad" and call == 2:  # (specialized in the background:
            vg.wait_specialized()  # done before the next call)
