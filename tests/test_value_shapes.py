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
