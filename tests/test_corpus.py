"""Every corpus function: s2s against JAX on the same source and finite differences."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import s2s
from corpus import CASES, Case
from oracle import expected_grad, live_jax_grad, recorded_grad
from support import HAVE_JAX, assert_trees_close, fd_grad, leaves

IDS = [c.name for c in CASES]


def transform(case: Case, mode: str = "grad"):
    make = s2s.grad if mode == "grad" else s2s.value_and_grad
    return make(case.fn, argnums=case.argnums, has_aux=case.has_aux)


def tolerance(case: Case) -> dict:
    if any(np.result_type(x) == np.float32 for x in leaves(case.args())):
        return {"rtol": 2e-5, "atol": 1e-6}
    return {"rtol": 1e-9, "atol": 1e-10}


def grads_of(case: Case):
    out = transform(case)(*case.args(), **case.kwargs)
    return out[0] if case.has_aux else out


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_matches_jax(case: Case) -> None:
    expected, origin = expected_grad(case)
    if expected is None:
        pytest.skip("JAX cannot run this source; see test_matches_finite_differences")
    got = [np.asarray(x) for x in leaves(grads_of(case))]
    assert len(got) == len(expected), origin
    for g, e in zip(got, expected):
        assert g.shape == e.shape, origin
        np.testing.assert_allclose(g, e, err_msg=origin, **tolerance(case))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_matches_finite_differences(case: Case) -> None:
    args = tuple(
        a.astype(np.float64) if isinstance(a, np.ndarray) and a.dtype == np.float32 else a
        for a in case.args()
    )
    nargs = len(args)
    argnums = case.argnums if isinstance(case.argnums, tuple) else (case.argnums,)
    argnums = tuple(a % nargs for a in argnums)

    def scalar(*a):
        out = case.fn(*a, **case.kwargs)
        return out[0] if case.has_aux else out

    got = s2s.grad(case.fn, argnums=argnums, has_aux=case.has_aux)(*args, **case.kwargs)
    if case.has_aux:
        got = got[0]
    got_leaves = leaves(got)
    expected = [leaf for i in argnums for leaf in fd_grad(scalar, args, i)]
    assert len(got_leaves) == len(expected)
    for g, e in zip(got_leaves, expected):
        np.testing.assert_allclose(np.asarray(g), e, rtol=1e-5, atol=1e-6)


@pytest.mark.skipif(not HAVE_JAX, reason="needs jax to compare against the recording")
@pytest.mark.parametrize("case", [c for c in CASES if c.jax], ids=[c.name for c in CASES if c.jax])
def test_recorded_fixture_matches_live_jax(case: Case) -> None:
    """A mismatch here is a change in JAX (or a stale recording), not an s2s bug."""
    recorded = recorded_grad(case)
    if recorded is None:
        pytest.fail(f"no recording for {case.name}: run python tools/record_fixtures.py")
    for r, live in zip(recorded, live_jax_grad(case)):
        # float32 to a few units in the last place: XLA's own compile options (the
        # suite turns its optimizing passes off) may fuse float32 arithmetic differently
        eps = np.finfo(np.result_type(r)).eps if np.issubdtype(
            np.result_type(r), np.floating) else 0.0
        rtol = 1e-12 if eps < 1e-10 else 8 * eps
        np.testing.assert_allclose(r, live, rtol=rtol, atol=1e-14)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_value_and_grad_agrees(case: Case) -> None:
    args = case.args()
    value, grads = transform(case, "value_and_grad")(*args, **case.kwargs)
    primal = case.fn(*args, **case.kwargs)
    if case.has_aux:
        value, aux = value
        primal, primal_aux = primal
        assert_trees_close(aux, primal_aux)
    np.testing.assert_allclose(value, primal, rtol=1e-12)
    assert_trees_close(grads, grads_of(case), rtol=0, atol=0)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_gradient_keeps_structure_shape_and_dtype(case: Case) -> None:
    args = case.args()
    got = grads_of(case)
    argnums = case.argnums if isinstance(case.argnums, tuple) else (case.argnums,)
    wanted = tuple(args[i] for i in argnums)
    if not isinstance(case.argnums, tuple):
        wanted, got = wanted[0], got
    else:
        assert isinstance(got, tuple) and len(got) == len(argnums)

    def check(g, a):
        if isinstance(a, dict):
            assert isinstance(g, dict) and list(g) == list(a)
            for k in a:
                check(g[k], a[k])
        elif isinstance(a, (tuple, list)):
            assert type(g) is type(a) and len(g) == len(a)
            for x, y in zip(g, a):
                check(x, y)
        else:
            assert np.shape(g) == np.shape(a)
            assert np.result_type(g) == np.result_type(a)

    check(got, wanted)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_inputs_and_globals_not_mutated(case: Case) -> None:
    args = case.args()
    before = copy.deepcopy(args)
    module_globals = dict(case.fn.__globals__)
    constant_values = {k: copy.deepcopy(v) for k, v in module_globals.items()
                       if isinstance(v, np.ndarray)}
    grads_of_args = transform(case)(*args, **case.kwargs)
    del grads_of_args
    assert_trees_close(args, before, rtol=0, atol=0)
    assert dict(case.fn.__globals__).keys() == module_globals.keys()
    for k, v in constant_values.items():
        np.testing.assert_array_equal(case.fn.__globals__[k], v)
