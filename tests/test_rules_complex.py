"""The rule table on complex inputs: a complex variant of every row whose primitive
takes complex values, each VJP against ``jax.vjp`` and each JVP against ``jax.jvp``
(complex tangents, a complex cotangent where the output is complex), and the VJP
against the JVP by JAX's pairing Re(sum(g * t)).

A row's variant adds an imaginary part to each floating argument it differentiates.
Rows of primitives that NumPy or JAX refuse on complex values (``REAL_ONLY``), and of
rules not yet right there (``COMPLEX_UNVERIFIED``, with the reason), are left out.
All rows run with ``-m slow``; the default tier runs one in ``EVERY``.
"""

from __future__ import annotations

import dataclasses
import inspect
import zlib

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import test_rules as T  # noqa: E402
from rule_table import rng_for  # noqa: E402

# NumPy refuses complex values in these (a TypeError at your line), or JAX does
# (clip, median, quantile, the scipy.special and scipy.stats functions of reals)
REAL_ONLY = {
    "cbrt", "deg2rad", "radians", "rad2deg", "degrees", "fabs", "logaddexp",
    "logaddexp2", "arctan2", "hypot", "copysign", "remainder", "fmod", "clip",
    "heaviside", "ldexp", "unwrap", "quantile", "percentile", "nanquantile",
    "nanpercentile", "median", "nanmedian", "interp", "fft.rfft", "fft.ihfft",
    "fft.rfftn",
}
# Rules that run on complex values but whose derivative is not JAX's there yet
COMPLEX_UNVERIFIED = {
    "corrcoef": "not yet derived for complex values (its VJP is not JAX's there)",
    "partition": "NumPy and JAX order a partition's sides differently: the real rows "
                 "compare with JAX taking NumPy's order, this sweep does not (unchecked)",
}
# JAX's equivalent on complex inputs, where the table's (for real ones) differs: a
# real_if_close of values with imaginary parts far from 0 is the identity
COMPLEX_JAX = {"real_if_close": lambda a, tol=100: a,
               # (a complex matrix's eigenvalues are complex: JAX's own, not their real part)
               "linalg.eigvals": lambda a: jax.numpy.linalg.eigvals(a)}
# Hermitian matrices: the imaginary part drawn antisymmetric (their rows draw
# symmetric positive definite real parts)
HERMITIAN = {"linalg.cholesky", "linalg.eigvalsh", "linalg.eigh"}
EVERY = 100  # one row in EVERY runs in the default tier (JAX calls cost ~1 s a row)


def real_only(name: str) -> bool:
    prim = T.PRIMITIVES[name]
    return (name in REAL_ONLY or name.startswith(("scipy.", "special_"))
            or prim.family == "runtime")  # (helpers: JAX twins of real arguments)


def complexified(row) -> tuple | None:
    """The row drawn, with an imaginary part added to each floating wrt argument."""
    d = T.draw(row)
    r = rng_for(row.id + "complex")
    args, changed = list(d.args), False
    for p in d.positions:
        a = args[p]
        if isinstance(a, (float, np.ndarray, np.floating)) and \
                np.issubdtype(np.result_type(a), np.floating):
            imag = r.normal(size=np.shape(a))
            if row.prim in HERMITIAN:
                imag = imag - np.swapaxes(imag, -1, -2)
            args[p] = np.asarray(a) + 0.3j * imag
            if not isinstance(a, np.ndarray):
                args[p] = complex(args[p])
            changed = True
    if not changed:
        return None
    ans = row.primitive.impl(*args, **row.params)
    g = r.normal(size=np.shape(ans))
    if np.iscomplexobj(ans):
        g = g + 1j * r.normal(size=np.shape(ans))
    tangents = [r.normal(size=np.shape(args[p])) + 1j * r.normal(size=np.shape(args[p]))
                if np.iscomplexobj(args[p]) else r.normal(size=np.shape(args[p]))
                for p in d.positions]
    return T.Drawn(row, tuple(args), ans, d.wrt, d.positions, g, tangents)


def _rows() -> list:
    out = []
    for row in T.ROWS:
        if real_only(row.prim) or row.prim in COMPLEX_UNVERIFIED:
            continue
        if not any(inspect.isfunction(a) for a in row.args):
            continue
        k = zlib.crc32(row.id.encode()) % EVERY
        out.append(pytest.param(row, id=row.id, marks=[] if k == 0 else [pytest.mark.slow]))
    return out


@pytest.mark.every_case  # sampled here (EVERY), not by conftest's sweep sampler
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("row", _rows())
def test_rules_match_jax_on_complex_inputs(row) -> None:
    d = complexified(row)
    if d is None:
        pytest.skip("no floating argument to make complex")  # (integer-only rows)
    primals = [np.asarray(d.args[p]) for p in d.positions]
    if row.prim in COMPLEX_JAX:
        d.row = dataclasses.replace(row, jax=COMPLEX_JAX[row.prim])
    f = d.jax_fn()
    out, pullback = jax.vjp(f, *primals)
    T.assert_close(d.ans, out, rtol=1e-9, atol=1e-10)
    g = d.g if np.iscomplexobj(out) else np.real(d.g)
    for got, want in zip(d.vjp(g), pullback(np.asarray(g, dtype=out.dtype))):
        T.assert_close(got, want, rtol=1e-8, atol=1e-10)
    want_t = jax.jvp(f, tuple(primals), tuple(d.tangents))[1]
    got_t = sum(d.jvp(name, t) for name, t in zip(d.wrt, d.tangents))
    T.assert_close(got_t, want_t, rtol=1e-8, atol=1e-10)
    for name, t, ct in zip(d.wrt, d.tangents, d.vjp(g)):
        lhs = np.real(np.sum(np.asarray(ct) * t))
        rhs = np.real(np.sum(g * d.jvp(name, t)))
        np.testing.assert_allclose(lhs, rhs, rtol=1e-9, atol=1e-11, err_msg=name)


def test_the_lists_name_registered_primitives() -> None:
    stale = (REAL_ONLY | set(COMPLEX_UNVERIFIED)) - set(T.PRIMITIVES)
    assert not stale, stale
