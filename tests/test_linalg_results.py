"""Rules of the linear-algebra primitives with several results, called directly.

The rule table (test_rules.py) checks these end to end only, since JAX's ``vjp`` needs
their cotangents as a tuple.  Here each VJP rule meets ``jax.vjp`` and each JVP rule
``jax.jvp``, at several shapes, with every result's cotangent random (the sign of
slogdet and the rank of lstsq are integers or constant: no derivative flows).

Eigenvectors, singular vectors and QR factors are unique up to the sign of each
column; where NumPy and JAX chose differently, JAX's cotangents and tangents are
turned to NumPy's signs first.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from rule_rows_linalg import dominant, spread, symmetric  # noqa: E402
from rule_table import normal, rng_for  # noqa: E402
from s2s.primitives import PRIMITIVES  # noqa: E402

TOL = {"rtol": 1e-9, "atol": 1e-11}


def column_signs(ours, theirs):
    """D with theirs = ours * D: the sign of each column of a factor."""
    overlap = np.sum(np.asarray(ours) * np.asarray(theirs), axis=-2, keepdims=True)
    return np.sign(overlap)


def slogdet_signs(ours, theirs):
    return (1.0, 1.0)


def eigh_signs(ours, theirs):  # (w, v)
    return (1.0, column_signs(ours[1], theirs[1]))


def svd_signs(ours, theirs):  # (u, s, vt): vt's rows flip with u's columns
    d = column_signs(ours[0], theirs[0])
    return (d, 1.0, np.swapaxes(d, -1, -2))


def qr_signs(ours, theirs):  # (q, r): r's rows flip with q's columns
    d = column_signs(ours[0], theirs[0])
    return (d, np.swapaxes(d, -1, -2))


def lstsq_signs(ours, theirs):
    return (1.0, 1.0, 1.0, 1.0)


CASES = {  # id -> (primitive, drawers of the arguments, keyword parameters, signs)
    "slogdet-matrix": ("linalg.slogdet", (dominant(3),), {}, slogdet_signs),
    "slogdet-batch": ("linalg.slogdet", (dominant(3, 2),), {}, slogdet_signs),
    "slogdet-negative": ("linalg.slogdet", (lambda r: -dominant(3)(r),), {},
                         slogdet_signs),
    "eigh-matrix": ("linalg.eigh", (symmetric(3),), {}, eigh_signs),
    "eigh-batch": ("linalg.eigh", (symmetric(4, 2),), {}, eigh_signs),
    "svd-tall": ("linalg.svd", (spread(4, 3),), {"full_matrices": False}, svd_signs),
    "svd-wide": ("linalg.svd", (spread(2, 4),), {"full_matrices": False}, svd_signs),
    "svd-square_full": ("linalg.svd", (spread(3, 3),), {}, svd_signs),
    "svd-batch": ("linalg.svd", (spread(4, 2, 2),), {"full_matrices": False},
                  svd_signs),
    "qr-square": ("linalg.qr", (dominant(3),), {}, qr_signs),
    "qr-tall": ("linalg.qr", (spread(5, 3),), {}, qr_signs),
    "qr-batch": ("linalg.qr", (spread(4, 3, 2),), {"mode": "reduced"}, qr_signs),
    "lstsq-vector": ("linalg.lstsq", (spread(5, 3), normal(5)), {}, lstsq_signs),
    "lstsq-matrix": ("linalg.lstsq", (spread(5, 3), normal(5, 2)), {}, lstsq_signs),
    "lstsq-wide": ("linalg.lstsq", (spread(3, 5), normal(3)), {}, lstsq_signs),
    "lstsq-square": ("linalg.lstsq", (dominant(3), normal(3)), {}, lstsq_signs),
}

# results that carry no derivative: slogdet's sign, lstsq's rank
CONSTANT = {"linalg.slogdet": (0,), "linalg.lstsq": (2,)}


def jax_function(prim_name: str, params: dict):
    if prim_name == "linalg.lstsq":  # JAX's residuals even where NumPy's are empty
        return lambda a, b: tuple(jnp.linalg.lstsq(a, b))
    fn = getattr(jnp.linalg, prim_name.split(".")[1])
    return lambda *args: tuple(fn(*args, **params))


def draw(case_id: str):
    prim_name, drawers, params, signs = CASES[case_id]
    r = rng_for("results-" + case_id)
    args = tuple(d(r) for d in drawers)
    prim = PRIMITIVES[prim_name]
    ans = tuple(prim.impl(*args, **params))
    g = tuple(r.normal(size=np.shape(x)) for x in ans)
    g = tuple(
        np.zeros_like(x) if i in CONSTANT.get(prim_name, ()) else gi
        for i, (x, gi) in enumerate(zip(ans, g))
    )
    tangents = tuple(r.normal(size=np.shape(a)) for a in args)
    return prim, args, params, ans, g, tangents, signs


@functools.cache
def reference(case_id: str) -> tuple:
    """JAX's results, VJP of the (sign-aligned) cotangents, and JVP, in one program."""
    prim, args, params, ans, g, tangents, signs = draw(case_id)
    f = jax_function(prim.name, params)
    d = signs(ans, f(*args))
    g_jax = tuple(np.reshape(gi * di, np.shape(x)) for x, gi, di in zip(ans, g, d))

    def answers(xs, ts):
        out, pullback = jax.vjp(f, *xs)
        cts = tuple(  # JAX's own shapes (lstsq's residuals); no cotangent for integers
            np.zeros(np.shape(o), dtype=jax.dtypes.float0)
            if jnp.issubdtype(o.dtype, jnp.integer) else jnp.reshape(c, np.shape(o))
            if np.size(c) == np.size(o) else jnp.zeros_like(o)  # NumPy's are empty
            for o, c in zip(out, g_jax)
        )
        return out, pullback(cts), jax.jvp(f, xs, ts)[1]

    answers = jax.jit(answers, compiler_options={"xla_backend_optimization_level": 0})
    out, vjp, jvp = answers(args, tangents)
    return d, out, vjp, jvp


def compared(i: int, prim, ours, theirs) -> bool:
    """Whether result i has a derivative, and NumPy computed it (lstsq's residuals)."""
    return i not in CONSTANT.get(prim.name, ()) and np.size(ours) == np.size(theirs)


def as_numpy_shape(theirs, ours):
    return np.reshape(np.asarray(theirs), np.shape(ours))


@pytest.mark.parametrize("case_id", CASES)
def test_vjp_rule_matches_jax(case_id: str) -> None:
    prim, args, params, ans, g, _, _ = draw(case_id)
    d, out, expected, _ = reference(case_id)
    for i in range(len(ans)):
        if compared(i, prim, ans[i], out[i]):
            theirs = as_numpy_shape(out[i], ans[i]) * d[i]
            np.testing.assert_allclose(theirs, ans[i], **TOL)
    got = prim.vjp(g, ans, *args, **params)
    got = got if len(prim.diff) > 1 else (got,)
    for x, e in zip(got, expected):
        np.testing.assert_allclose(x, e, **TOL)


@pytest.mark.parametrize("case_id", CASES)
def test_jvp_rules_match_jax(case_id: str) -> None:
    prim, args, params, ans, _, tangents, _ = draw(case_id)
    d, _, _, expected = reference(case_id)
    got = [0.0] * len(ans)
    for name, t in zip(prim.diff, tangents):
        parts = prim.jvps[name](t, ans, *args, **params)
        got = [total + part for total, part in zip(got, parts)]
    for i, (x, e) in enumerate(zip(got, expected)):
        assert np.shape(x) == np.shape(ans[i]), (i, np.shape(x), np.shape(ans[i]))
        if i in CONSTANT.get(prim.name, ()):
            assert not np.any(x)
        if compared(i, prim, ans[i], e):
            np.testing.assert_allclose(x, as_numpy_shape(e, ans[i]) * d[i], **TOL)


@pytest.mark.parametrize("case_id", CASES)
def test_vjp_is_adjoint_of_jvp(case_id: str) -> None:
    prim, args, params, ans, g, tangents, _ = draw(case_id)
    cts = prim.vjp(g, ans, *args, **params)
    cts = cts if len(prim.diff) > 1 else (cts,)
    for name, t, ct in zip(prim.diff, tangents, cts):
        out_tangents = prim.jvps[name](t, ans, *args, **params)
        lhs = np.vdot(t, ct)
        rhs = sum(np.vdot(gi, np.broadcast_to(ti, np.shape(gi)))
                  for gi, ti in zip(g, out_tangents))
        np.testing.assert_allclose(lhs, rhs, rtol=1e-10, atol=1e-12, err_msg=name)
