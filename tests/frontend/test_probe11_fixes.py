"""Issue 23, probe 11 (tests/frontend/newcomer_probe11_fns.py): forms s2s refused where
JAX (or Python) runs them, made to run (tests/frontend/probe11_fix_fns.py): ``dtype=``
of ``np.cumsum``/``np.cumprod``, ``np.float32(x)`` casts, ``math`` functions with no
NumPy rule over constants (``math.gamma(2.5)``, ``math.log(8.0, 2)``,
``math.isclose``), ``zip(..., strict=True)`` in a loop, ``try: pass`` with ``except``,
``else`` and ``finally``, ``reversed(s)`` as a value, a slice of a NamedTuple.  Each against central differences or a closed form at
changing values (no JAX; the default tier runs the two whose rewrite changes control
flow, the others are slow for the default tier's budget); the probe's slow sweep runs the
probe's functions against JAX."""

from __future__ import annotations

import math

import numpy as np
import probe11_fix_fns as F
import pytest
from newcomer_harness import fd_grad

import s2s

X4 = np.array([0.3, -0.7, 0.45, 1.2])


def _calls(f, xs, tol=(1e-6, 1e-8)):
    g = s2s.grad(f)
    for x in xs:
        np.testing.assert_allclose(g(x), fd_grad(f, (x,), 1e-6), *tol)


@pytest.mark.slow  # (the default tier's budget: ~0.3 s CPU each)
def test_cumulative_dtype_keyword() -> None:
    """``np.cumsum(x, dtype=x.dtype)``, ``np.cumprod(x, axis=0, dtype=np.float64)`` were
    refused ("`np.cumsum` called with arguments s2s does not support: got an unexpected
    keyword argument 'dtype'"); they are the cast then the operation, as JAX's.  Three
    calls against central differences; a float32 input's gradient stays float32."""
    _calls(F.cumsum_dtype, [X4])
    assert s2s.grad(F.cumsum_dtype)(X4.astype(np.float32)).dtype == np.float32


@pytest.mark.slow  # (the default tier's budget: ~0.3 s CPU each)
def test_float32_cast() -> None:
    """``np.float32(x)`` and ``np.float16(...)`` were refused ("has no derivative rule in
    s2s yet"), a constant's too (``np.float32(0.5)``); they are ``np.asarray(x,
    dtype=...)``: the derivative passes, cast back to the input's dtype.  Against the
    closed form computed in float32 and float16, as NumPy rounds."""
    g = s2s.grad(F.float32_cast)
    for x in (X4,):
        want = 2.0 * x.astype(np.float32).astype(np.float64) + np.array([0.5, 1, 1, 1])
        got = g(x)
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.slow  # (the default tier's budget: ~0.3 s CPU each)
def test_math_functions_of_constants() -> None:
    """``math.gamma(T)`` (a module constant), ``math.log(8.0, 2)`` (a base: the "log"
    rule took one argument), ``math.isclose``, ``math.comb`` were refused ("`math.gamma`
    (builtin_function_or_method) is not a function s2s can transform"); over constants
    they are computed when s2s transforms the function (T read again at each call).
    Against the closed form (T changed between calls: the slow test below); a value of
    the function given to ``math.gamma`` is refused at its line (JAX's tracers refuse it
    too)."""
    _math_constants((2.5,))
    with pytest.raises(s2s.TransformError, match=r"(?s)`math.gamma` takes Python numbers.*"
                                                 r"math\.gamma\(x\[0\]\)"):
        s2s.grad(F.math_of_a_value)(X4)


@pytest.mark.slow  # (the default tier's budget)
def test_math_functions_of_a_module_constant_changed() -> None:
    """``math.gamma(T)`` with the module's T changed between calls: the new T's value."""
    _math_constants((2.5, 3.5, 1.5))


def _math_constants(ts) -> None:
    g = s2s.grad(F.math_constants)
    try:
        for t in ts:
            F.T = t
            x = X4 * t
            want = 2 * x * math.gamma(t) + 3.0 + np.array([t == 2.5, 0, 0, 18 * x[-1] ** 2])
            np.testing.assert_allclose(g(x), want, rtol=1e-12)
    finally:
        F.T = 2.5


def test_zip_strict() -> None:
    """``enumerate(zip(x, w, strict=True), start=1)`` was refused ("unpack
    enumerate(zip(...))'s items into one name per sequence": ``strict=True`` read as a
    third sequence); ``strict=False`` likewise.  Against central differences; lengths
    that differ raise Python's ValueError; a body that can leave early (Python would
    raise nothing then) is refused, naming `strict=`."""
    _calls(F.zip_strict, [X4])
    with pytest.raises(ValueError, match="zip\\(\\) argument 2 is longer than argument 1"):
        s2s.grad(F.zip_strict)(X4[:3])
    with pytest.raises(s2s.TransformError, match=r"(?s)`zip\(\.\.\., strict=\.\.\.\)`.*"
                                                 r"strict=True\)"):
        s2s.grad(F.zip_strict_break)(X4)


def test_try_around_nothing() -> None:
    """``try: pass`` with ``except``, ``else`` and ``finally`` was refused ("s2s keeps a
    `try` as Python only with `except` clauses and no `else`, `finally` ..."): nothing
    raises, so it is its ``else`` then its ``finally``.  Against central differences."""
    _calls(F.try_around_nothing, [X4, -0.5 * X4])


def test_reversed_as_a_value_is_read_once() -> None:
    """``reversed(s)`` kept as a value is Python's iterator, spent by the first loop
    over it: read as the sequence ``s[::-1]`` everywhere (as this probe first made it),
    the second loop of ``spent_reversed`` walked the items again, a gradient of
    ``cos(x) + 10`` where the function's is ``cos(x)`` (the lead's merge).  It is
    ``s[::-1]`` only where the function reads it once, as a generator's list is
    (generator_reads.py): ``spent_reversed`` is refused at its second read;
    ``reversed_values`` (``Poly(reversed(p.coefs))``, whose ``__init__`` reads it once
    by ``list(coefs)``) runs, against central differences at two calls."""
    with pytest.raises(s2s.UnsupportedSyntaxError) as err:
        s2s.grad(F.spent_reversed)(X4)
    assert "is read again" in str(err.value) and "reversed(...)" in str(err.value)
    assert err.value.loc is not None and "for v in r:" in err.value.loc.text
    _calls(F.reversed_values, [X4, -0.6 * X4])


@pytest.mark.slow  # (the default tier's budget)
def test_namedtuple_slice() -> None:
    """``Params(*p[:2])`` and ``[2.0 * v for v in p[:2]]`` of a NamedTuple the function
    built were refused ("`*` here spreads a value whose length s2s does not know";
    "can only be indexed with a constant key"): ``p[:2]`` is the tuple of its first two
    fields, as Python slices a tuple.  Against central differences, two calls."""
    _calls(F.namedtuple_slice, [X4, -0.7 * X4])


def test_join_of_a_grown_list_transformed_again() -> None:
    """``np.concatenate(parts)`` of a list grown in a loop (the probe's
    ``concat_ragged_loop``): hessian and vmap of grad were refused (the refusal named
    `split_like`, then the join); since lists18 the gradient's split of a grown list is
    differentiated and batched again. Against the closed form (the loss is quadratic:
    its Hessian is diagonal, ``2 * sum of the weights each x[j] meets``) and the loop."""
    w = np.linspace(0.1, 1.0, 10)
    starts = np.cumsum([0, 1, 2, 3])  # where the items of parts begin in flat
    want = np.diag([2.0 * sum(w[starts[i] + j] for i in range(j, 4)) for j in range(4)])
    np.testing.assert_allclose(s2s.hessian(F.concat_grown_list)(X4), want, rtol=1e-12)
    xs = np.stack([X4, -X4, 2.0 * X4])
    g = s2s.grad(F.concat_grown_list)
    np.testing.assert_allclose(s2s.vmap(g)(xs), [g(x) for x in xs], rtol=1e-12)


@pytest.mark.parametrize("n_layers", [None, pytest.param(2, marks=pytest.mark.slow),
                                      pytest.param(4, marks=pytest.mark.slow)])
def test_string_method_of_a_key_in_a_comprehension_filter(n_layers) -> None:
    """``... for k, v in params.items() if k.startswith("w")`` over a dict the function
    built with f-string keys (the probe's ``fstring_keyed_params``) was refused ("a
    comprehension's `if` here reads values known only when the function runs"): the
    key is a string known when s2s transforms the function, and ``str``'s pure methods
    (``startswith``, ``endswith``, ``isdigit``...; none is an array's) are decided then,
    as ``==`` was; and ``{f"w{i}": ... for i in range(n_layers)}`` of an int parameter
    read nowhere else was refused under every transform ("a dict comprehension is
    supported over what is known when s2s transforms the function"): the transform is
    made per call's ``n_layers``, as for a loop building such keys.  Against central
    differences, ``n_layers`` 3 (the default), 2, 4 (slow: the default tier's budget)."""
    args = (X4,) if n_layers is None else (-X4, n_layers)
    np.testing.assert_allclose(s2s.grad(F.key_method_filter)(*args),
                               fd_grad(F.key_method_filter, args, 1e-6), 1e-6, 1e-8)


def test_zip_with_a_tuple_the_function_named() -> None:
    """``scales = (1.0, 0.5, 2.0)``, then ``for (w, b), s in zip(layers, scales)`` over a
    tuple-of-tuples argument (the probe's ``nested_tuple_layers``) was refused under
    grad ("a tuple, list or dict argument can only be indexed with a constant key")
    where ``zip(layers, (1.0, 0.5, 2.0))`` ran: the named tuple's length is known when
    transforming too, and the loop's count is the shorter's (``layers[:3]``'s length,
    per call; a tuple default's structure is known as a dict default's was).  One object
    over the default (2 layers), then 3 layers and 1 layer passed, against central
    differences."""
    g, x = s2s.grad(F.zip_with_a_named_tuple), np.array([0.3, -0.8])
    np.testing.assert_allclose(g(x), fd_grad(F.zip_with_a_named_tuple, (x,), 1e-6), 1e-6,
                               1e-8)  # (the default: refused before)
    for layers in (F.LAYERS + ((np.eye(2), np.ones(2)),), F.LAYERS[:1]):
        np.testing.assert_allclose(g(x, layers), fd_grad(F.zip_with_a_named_tuple,
                                                         (x, layers), 1e-6), 1e-6, 1e-8)
