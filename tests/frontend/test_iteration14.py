"""Iteration idioms (issue 23, iter14): nested zips unpacked, ``itertools``'
``combinations``/``product``/``chain``, ``[m, *mats, m.T]`` into ``functools.reduce``,
``:=`` in a comprehension and in an ``if``, ``sorted(zip(...))`` of literals, loops
over a literal tuple or a module's dict that ``break`` (s2s/frontend/iterations.py,
static_loops.py, walrus.py, sorted_values.py).  And three wrong numbers found on the way.

The default tier checks against central differences or a Python loop, with values
and lengths that change between calls; the slow tier runs each function of
iteration14_fns.py through every transform against JAX on the same source
(``newcomer_harness.classify``), float64 and float32."""

from __future__ import annotations

import functools
import itertools

import iteration14_fns as F
import newcomer_harness as H  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX

import s2s

X = np.array([0.3, -0.7, 0.45, 1.2])
M = np.array([[0.3, -0.7], [0.45, 1.2]])

CASES = {
    "nested_zip_pair": ((X,), {"one": np.array([0.3]), "empty": np.zeros(0),
                               "nan": np.array([np.nan, 0.2, 0.1, 0.0])}),
    "combinations_of_items": ((X,), {"ties": np.array([1.0, 1.0, 1.0, 0.5]),
                                     "one": np.array([0.3]), "empty": np.zeros(0)}),
    "product_and_chain": ((X,), {"two": np.array([0.3, -0.2])}),
    "reduce_starred": ((M,), {"zeros": np.zeros((2, 2))}),
    "walrus_scan": ((np.array([0.3, -0.7]),), {"one": np.array([0.3]),
                                               "nan": np.array([np.nan, 0.1])}),
    "sorted_zip_static": ((X,), {"one": np.array([0.3]), "empty": np.zeros(0)}),
    "tuple_break": ((X,), {"zeros": np.zeros(4), "empty": np.zeros(0)}),
    "module_dict_break": ((X,), {"one": np.array([0.3])}),
    "runtime_break": ((X,), {"big": np.array([3.0, 1.0, 0.0, 0.5]),
                             "one": np.array([0.3])}),
    # (no NaN: NumPy's sort puts it last, Python's order around it depends on where
    # it stands; sorted_values.py)
    "sorted_generator": ((X,), {"ties": np.array([0.2, 0.2, -0.1, 0.2]),
                                "one": np.array([0.3])}),
}
# a `break` on a batched value: JAX's vmap refuses it too (a Python `if` on a tracer);
# s2s's vmap of grad refuses the path-bound name the unrolled loop leaves, located.
# sorted() of batched values: JAX's vmap and jit refuse the comparisons; s2s's vmap
# refuses the per-example order's reads (located), also of one item, which JAX's
# vmap runs (no comparison), so "refused"
EXPECTED = {"runtime_break": "both refuse", "sorted_generator": "refused"}
PROBE = H.Probe(F, CASES, ("grad", "value_and_grad", "jvp", "vmap_grad", "jacfwd",
                           "hessian", "jit", "jit_jax_once", "special", "warm_special",
                           "vmap_special", "alias"), tol64=(1e-6, 1e-8))


def fd(f, *args):
    return H.fd_grad(f, args, 1e-6)


def close(a, b) -> None:
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8)


# ---- central differences and Python loops (slow: each makes many transforms) ---------------


@pytest.mark.slow  # (the default tier's budget: ~1 s of transforms)
def test_one_loop_of_each_kind() -> None:
    """The default tier's representative: a nested zip, a combination, a literal
    tuple's ``break`` and a walrus scan in one function, against central differences."""
    def f(x, ws=(0.5, -1.0), names=("a", "b")):
        t = 0.0
        for i, (w, (c, name)) in enumerate(zip(ws, zip(ws, names))):
            t = t + (i + 1) * np.sum(np.sin(w * x + c))
        for i, j in itertools.combinations(range(len(x)), 2):
            t = t + x[i] * x[j]
        for k in ("a", "b", "c"):
            if k == "b":
                break
            t = t + np.sum(x ** 3)
        h = 0.0
        hs = [(h := np.tanh(h + v)) for v in x]
        return t + np.sum(np.stack(hs)) + h

    close(s2s.grad(f)(X), fd(f, X))


@pytest.mark.slow  # (the default tier's budget: many transforms)
def test_nested_zips_and_combinations_follow_values_and_lengths() -> None:
    """``zip(ws, zip(bs, names))`` unpacked (and bound whole), and
    ``itertools.combinations`` of ``range(1, len(x))``, of ``x``, of triples: the
    lengths are ``x``'s, so a call with another length runs it again (never the last
    length's unrolling).  Calls 1, 3 and 10, lengths 4, 3, 1, 0, 5."""
    g, h = s2s.grad(F.nested_zip_pair), s2s.grad(F.combinations_of_items)
    rng = np.random.default_rng(14)
    for call, size in enumerate([4, 4, 3, 1, 0, 5, 4, 4, 4, 2], 1):
        x = rng.normal(size=size)
        if call in (1, 3, 10) or size < 2:
            close(g(x), fd(F.nested_zip_pair, x))
        close(h(x), fd(F.combinations_of_items, x))
    x = np.array([0.3, -0.2, 0.5])  # (the pairs, counted by a Python loop)
    pairs = sum(1 for _ in itertools.combinations(range(3), 2))
    assert pairs == 3 and np.isfinite(h(x)).all()


@pytest.mark.slow  # (the default tier's budget: many transforms)
def test_product_chain_and_static_breaks() -> None:
    """``itertools.product``/``chain`` as nested and successive loops; a literal
    tuple's loop with ``continue`` and ``break`` on the key, a module dict's loop
    with ``break`` (refused before), a literal tuple's loop with a ``break`` on a value
    known only when the code runs (the break taken at another item on each call)."""
    for fn in (F.product_and_chain, F.tuple_break, F.module_dict_break, F.sorted_zip_static):
        g = s2s.grad(fn)
        for call in (1, 2, 3):
            x = X * (1.0 + 0.1 * call)
            close(g(x), fd(fn, x))
    g = s2s.grad(F.runtime_break)
    for x in (np.array([0.1, 0.2]), np.array([1.0, 0.5]), np.array([3.0, 0.0]), X):
        close(g(x), fd(F.runtime_break, x))


@pytest.mark.slow  # (the default tier's budget: many transforms)
def test_a_module_dict_changed_between_calls_is_walked_again() -> None:
    """The dict's keys decide where the loop stops: a key added before ``"stop"`` (or
    ``"stop"`` removed) between calls generates the code again."""
    g = s2s.grad(F.module_dict_break)
    saved = dict(F.WEIGHTS)
    try:
        close(g(X), 3.0 * (1 - np.tanh(X) ** 2))
        F.WEIGHTS.clear()
        F.WEIGHTS.update({"a": 1.0, "z": 5.0, "stop": 0.0, "c": 3.0})
        close(g(X), 6.0 * (1 - np.tanh(X) ** 2))
        del F.WEIGHTS["stop"]
        close(g(X), 9.0 * (1 - np.tanh(X) ** 2))
        F.WEIGHTS["a"] = 2.0  # (a value changed in place)
        close(g(X), 10.0 * (1 - np.tanh(X) ** 2))
    finally:
        F.WEIGHTS.clear()
        F.WEIGHTS.update(saved)


@pytest.mark.slow  # (the default tier's budget: many transforms)
def test_a_starred_list_and_a_walrus_scan_follow_lengths() -> None:
    """``[m, *mats, m.T]`` of a tuple argument whose length changes between calls
    (2, 3, 1, 0 matrices), and ``[(h := f(h, v)) for v in xs if ...]`` of an ``xs``
    whose length changes (4, 1, 0 items: the ``if (n := len(hs)) > 2`` goes the other
    way), against central differences."""
    g = s2s.grad(F.reduce_starred)
    rng = np.random.default_rng(3)
    for count in (2, 3, 1, 0, 2):
        mats = tuple(rng.normal(size=(2, 2)) for _ in range(count))
        close(g(M, mats), fd(lambda m: F.reduce_starred(m, mats), M))
    g = s2s.grad(F.walrus_scan)
    for xs in (np.array([0.5, -0.2, 0.1, 0.3]), np.array([0.4]), np.zeros(0),
               np.array([0.5, -2.0, 0.1, 0.3, 0.2])):
        h0 = np.array([0.3, -0.7])
        close(g(h0, xs), fd(lambda h: F.walrus_scan(h, xs), h0))


@pytest.mark.slow  # (the default tier's budget: many transforms)
def test_the_walrus_scan_is_the_loop_it_reads_as() -> None:
    """The comprehension's ``:=`` binds the function's ``h`` (Python's scope rule):
    the value after the comprehension is the last item's, as a hand-written loop's."""
    h0, xs = np.array([0.3, -0.7]), np.array([0.5, -0.2, 0.1])

    def by_hand(h):
        s = np.sum(h ** 2)
        hs = []
        for v in xs:
            h = np.tanh(0.8 * h + v)
            hs.append(h)
        return np.sum(np.stack(hs) ** 2) / 3 + np.sum(h) + np.sin(s) * s

    assert np.isclose(F.walrus_scan(h0, xs), by_hand(h0))
    close(s2s.grad(F.walrus_scan)(h0, xs), fd(by_hand, h0))


# ---- wrong numbers found on the way -----------------------------------------------------------

MATS2 = (np.array([1.0, 0.5]), np.array([0.2, -1.0]))


def tuple_plus_default(x, mats=MATS2):
    t = (x,) + mats
    return np.sum(t[0] * t[1])


def gen(x):
    for v in x:
        yield v * 2.0


def enumerate_sorted_generator(x):
    return sum(k * v for k, v in enumerate(sorted(gen(x))))


def trace_of_reduce(m, mats=(np.eye(2) * 0.5, np.array([[0.0, 1.0], [-1.0, 0.3]]))):
    chain = functools.reduce(np.matmul, [m] + list(mats) + [m.T])
    return np.trace(chain)


def test_a_reduce_bound_to_its_first_name_has_one_gradient() -> None:
    """``chain = functools.reduce(np.matmul, [m] + list(mats) + [m.T])`` over a list
    whose length is known per call: the loop's accumulator took the name ``chain`` for
    its first value too, and the reverse sweep added the result's cotangent into the
    first item's: ``trace``'s gradient had an extra identity (1.0 off on the diagonal)."""
    close(s2s.grad(trace_of_reduce)(M), fd(trace_of_reduce, M))


def test_a_literal_plus_a_tuple_default_is_refused_located() -> None:
    """``(x,) + mats`` of a parameter left at a tuple default was NumPy's addition
    (grad ``[1.8, -1.9]`` where Python's concatenation gives ``mats[0]``)."""
    x = np.array([0.3, -0.7])
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(tuple_plus_default)(x)
    text = str(info.value)
    assert "a parameter left at its default" in text and "t = (x,) + mats" in text, text
    close(s2s.grad(tuple_plus_default)(x, MATS2), MATS2[0])  # (passed: concatenated)


def sorted_rows(x):
    t = 0.0
    for k, v in enumerate(sorted(x)):
        t = t + k * v
    return t


def test_sorted_values_follow_pythons_order() -> None:
    """``enumerate(sorted(gen(x)))`` walked the values unsorted (grad ``[0, 2, 4]``
    where Python's order gives ``[2, 0, 4]``): it is now the stable sort's order
    (s2s/frontend/sorted_values.py), and ``sorted(x)`` of an array walked by a loop,
    which it does not rewrite, is refused, located."""
    x = np.array([0.3, -0.7, 0.45])
    close(s2s.grad(enumerate_sorted_generator)(x), [2.0, 0.0, 4.0])
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(sorted_rows)(x)
    assert "sorted() of a list, an array or a generator" in str(info.value)
    assert "for k, v in enumerate(sorted(x))" in str(info.value)


@pytest.mark.slow  # (the default tier's budget: many transforms)
def test_a_break_on_a_value_in_a_module_dict_loop_is_unrolled() -> None:
    """A run-time ``break`` in a loop over a module dict's items: the flag form
    (refused before: "a loop over the module dict ... that leaves early")."""
    def f(x):
        e = 0.0
        for k, w in F.WEIGHTS.items():
            e = e + w * np.sum(x ** 2)
            if e > 2.0:
                break
        return e

    for x in (np.array([0.1, 0.2]), np.array([0.5, 0.6]), np.array([2.0, 0.0])):
        close(s2s.grad(f)(x), fd(f, x))


# ---- slow tier: every transform against JAX ---------------------------------------------------


@pytest.mark.slow
@pytest.mark.every_case
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", list(CASES))
def test_against_jax(name, dtype) -> None:
    """grad at calls 1/3/10, value_and_grad, jvp, vmap of grad, jacfwd, hessian, jit of
    grad on NumPy and on JAX, grad at special inputs (size 0 and 1, NaN, ties), also
    after ten ordinary calls, and the caller writing into a result: all ok."""
    label, verdicts = H.classify(PROBE, name, H.twin(F), dtype)
    assert label == EXPECTED.get(name, "ok"), verdicts
    if label != "ok":  # (only where a `break` or an order is batched or traced)
        assert {k for k, v in verdicts.items() if v[0] != "ok"} <= {
            "vmap_grad", "jit_jax", *(f"vmap_special:{s}" for s in CASES[name][1])}, verdicts
