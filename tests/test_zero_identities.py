"""The identities the zero-cotangent proof uses (s2s/optimize/zero.py), checked on
numbers, and the gradients they shorten checked against the generic code and JAX.

Each identity is evaluated with NumPy on every combination of a pool of shapes
(size-0 and size-1 axes included) that its side condition admits, in float64 and
float32, on random values and on values with NaN and inf. The identities hold in
exact arithmetic: with finite values both sides agree to rounding; with NaN/inf,
where both sides are finite they agree, and the identities that are exact in IEEE
arithmetic too (signs, commuting, broadcasts) agree bit for bit."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import zero_fns as F
from support import HAVE_JAX, jax, jax_twin

import s2s
from s2s.optimize.zero import IDENTITIES, Shapes

pytest.importorskip("egglog")

SHAPES = [(), (1,), (3,), (0, 3), (1, 3), (4, 1), (4, 3), (2, 4, 3)]
REDUCTIONS = [(None, False, None)] + [
    (axes, keep, nd) for nd in (1, 2, 3) for keep in (True, False)
    for k in range(1, nd + 1) for axes in itertools.combinations(range(nd), k)]
EXACT_IN_IEEE = {"sum of a negation", "products commute", "sums commute",
                 "a negated factor", "adding a negation", "double negation",
                 "a broadcast to its own shape"} | {
    i.name for i in IDENTITIES if i.name.startswith("a broadcast ")}


class NumPyOps:
    @staticmethod
    def rsum(x, r):
        axes, keepdims, _ = r
        return np.sum(x, axis=axes, keepdims=keepdims)

    @staticmethod
    def bcast(x, k):
        return np.broadcast_to(x, k)


class PyConditions:
    @staticmethod
    def same(a, b):
        return [np.shape(a) == np.shape(b)]

    @staticmethod
    def constant_along(a, b, r):
        return [Shapes().constant_along(np.shape(a), np.shape(b), r)]

    @staticmethod
    def shape_is(x, k):
        return [np.shape(x) == k]


def values(shape, dtype, rng, special):
    x = rng.uniform(0.5, 2.0, size=shape) * rng.choice([-1.0, 1.0], size=shape)
    if special and x.size:
        flat = x.reshape(-1)
        flat[rng.integers(0, flat.size, 2)] = rng.choice([np.nan, np.inf, -np.inf], 2)
    return x.astype(dtype)


def cases(ident):
    """(a, b, c shapes, r, k) to try (the side condition and NumPy pick among them)."""
    names = ident.lhs.__code__.co_names + ident.rhs.__code__.co_names
    for sa, sb, sc in itertools.product(SHAPES, repeat=3):
        for r in REDUCTIONS if "rsum" in names else REDUCTIONS[:1]:
            for k in SHAPES if "bcast" in names else SHAPES[:1]:
                yield sa, sb, sc, r, k


@pytest.mark.parametrize("ident", IDENTITIES, ids=lambda i: i.name)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_each_identity_holds_where_its_condition_does(ident, dtype) -> None:
    rng = np.random.default_rng(0)
    o, checked = NumPyOps(), 0
    for sa, sb, sc, r, k in cases(ident):
        for special in (False, True):
            a, b, c = (values(s, dtype, rng, special) for s in (sa, sb, sc))
            with np.errstate(all="ignore"):
                try:
                    lhs = ident.lhs(o, a, b, c, r, k)
                    if not all(ok for group in ident.when(PyConditions, a, b, c, r, k, lhs)
                               for ok in group):
                        continue
                    rhs = ident.rhs(o, a, b, c, r, k)
                except ValueError:  # shapes that do not broadcast, axes out of range
                    continue
            lhs, rhs = np.asarray(lhs), np.asarray(rhs)
            assert lhs.shape == rhs.shape, (ident.name, sa, sb, sc, r, k)
            assert lhs.dtype == rhs.dtype, (ident.name, sa, sb, sc, r, k)
            if special and ident.name in EXACT_IN_IEEE:
                np.testing.assert_array_equal(lhs, rhs)
            else:
                finite = np.isfinite(lhs) & np.isfinite(rhs)
                tol = 1e-4 if dtype == np.float32 else 1e-11
                scale = 1.0 + np.abs(np.where(finite, lhs, 0.0))
                assert np.all(np.abs(np.where(finite, lhs - rhs, 0.0)) <= tol * scale), \
                    (ident.name, sa, sb, sc, r, k)
                if not special:
                    assert finite.all() or not np.isfinite(lhs).all(), ident.name
            checked += 1
    assert checked >= 8, (ident.name, checked)


def test_the_shape_tables_are_numpys() -> None:
    s = Shapes()
    for shape, r in itertools.product(SHAPES, REDUCTIONS):
        axes, keepdims, nd = r
        want = None
        if nd is None or len(shape) == nd:
            try:
                want = np.sum(np.ones(shape), axis=axes, keepdims=keepdims).shape
            except (ValueError, np.exceptions.AxisError):
                pass
        assert s.reduced(shape, r) == want, (shape, r)


# ---- end to end ----------------------------------------------------------------------

def _inputs(name, dtype, batch, special):
    rng = np.random.default_rng(1)
    classes = 10
    logits = rng.normal(size=(batch, classes)).astype(dtype) * 3
    if special and logits.size:
        logits[0, 1] = np.inf
        logits[-1, 2] = np.nan
    onehot = np.eye(classes, dtype=dtype)[rng.integers(0, classes, batch)]
    if name in ("xent_onehot", "xent_smoothed"):
        return logits, onehot
    if name == "logsumexp_rows":
        return (logits,)
    if name == "softmax_ratio":
        return logits[0] if batch else logits.reshape(-1)[:0], \
            rng.uniform(size=classes if batch else 0).astype(dtype)
    return logits[0] if batch else np.zeros(1, dtype), 3 if batch else 0


SPELLINGS = ["xent_onehot", "xent_smoothed", "softmax_ratio", "logsumexp_rows",
             "xent_label"]


@pytest.mark.parametrize("name", SPELLINGS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("batch,special", [(64, False), (1, False), (5, True), (0, False)])
def test_the_max_backward_is_gone_and_the_gradient_unchanged(name, dtype, batch,
                                                             special) -> None:
    if batch == 0 and name in ("softmax_ratio", "xent_label"):
        pytest.skip("np.max of no elements raises in the function itself")
    fn = getattr(F, name)
    args = _inputs(name, dtype, batch, special)
    generic = s2s.grad(fn)
    generic.specialize = False
    g = s2s.grad(fn)
    with np.errstate(all="ignore"):
        want = generic(*args)
        g(*args)
        got = g(*args)  # specialized (S2S_SPECIALIZE=sync)
    text = g.specialized_source
    assert text is not None
    if batch and not special:
        assert "winners" not in text and "count" not in text, text
    assert got.dtype == want.dtype
    rtol = 2e-5 if dtype == np.float32 else 1e-12
    if special:  # non-finite entries where the generic code has them
        np.testing.assert_array_equal(np.isfinite(got), np.isfinite(want))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, equal_nan=True)
    if HAVE_JAX and not special and batch:
        jax.config.update("jax_enable_x64", True)
        twin = getattr(jax_twin(F), name)
        ref = np.asarray(jax.grad(twin)(*args))
        np.testing.assert_allclose(got, ref, rtol=50 * rtol, atol=50 * rtol)


@pytest.mark.parametrize("write", [False, True])
def test_a_write_through_an_alias_is_a_new_value(write) -> None:
    """``b = a`` shares a's array: after ``b[0] += 1`` a read of ``a`` is another value,
    so ``s1 - s2`` is not proven zero (it is without the write)."""
    import ast

    from s2s.optimize.zero import zero_cotangents

    src = ("def f(x):\n    a = x * 1.0\n    b = a\n    s1_bar = a.sum()\n"
           + ("    b[0] += 1.0\n" if write else "") + "    s2_bar = a.sum()\n"
           "    d_bar = s1_bar - s2_bar\n    return d_bar\n")
    fn = ast.parse(src).body[0]

    def fact(node):
        if isinstance(node, ast.Call) or any(
                isinstance(n, ast.Name) and n.id.endswith("_bar") for n in ast.walk(node)):
            return ((), np.dtype(np.float64))
        return ((3,), np.dtype(np.float64))

    zero = zero_cotangents(fn, fact, {"b"} if write else set())
    assert (("d_bar", 1) in zero) is (not write), zero
