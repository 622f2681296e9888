"""Rule-table entries for scipy.linalg's solvers and scipy.signal's convolutions
(s2s/primitives/scipy_linalg.py, functions in rule_fns_scipy_linalg.py); JAX's are
under jax.scipy.  Without SciPy nothing is registered and there are no rows.

Where JAX has no derivative or another convention, the twin is JAX on what the
function means: solve_sylvester as the Kronecker-product system; cho_factor's factor
as JAX's Cholesky factor of the symmetric matrix the triangle read gives, plus the
other triangle of ``a`` (SciPy leaves it there); conv_pad and conv_crop as padding
and slicing by offsets found by matching SciPy's own results (a full convolution
against the mode's).  solve_sylvester's E2E case is checked by finite differences
(JAX cannot differentiate its Schur decomposition).
"""

import numpy as np
from rule_table import E2ECase, Row, const, normal, uniform

try:
    import scipy.linalg  # noqa: F401
    import scipy.signal as ss
except ImportError:  # pragma: no cover - SciPy is optional
    ROWS, E2E = [], []
else:
    import jax.numpy as jnp
    import jax.scipy.linalg as jl
    import rule_fns_scipy_linalg as F

    def conditioned(n, *more):
        """A matrix with a dominant diagonal (its triangles are well conditioned)."""
        return lambda r: r.normal(size=(*more, n, n)) + 4.0 * np.eye(n)

    def factor(n, lower):
        """A Cholesky factor in its triangle, noise in the other (cho_solve ignores it)."""
        def draw(r):
            m = r.normal(size=(n, n))
            c = np.linalg.cholesky(m @ m.T + n * np.eye(n))
            noise = r.normal(size=(n, n))
            return c + np.triu(noise, 1) if lower else c.T + np.tril(noise, -1)
        return draw

    def st_row(variant, n, b_shape, **params):
        return Row("scipy.linalg.solve_triangular", variant,
                   (conditioned(n), normal(*b_shape)), params,
                   jax="scipy.linalg.solve_triangular")

    def cho_factor_twin(a, lower=False, **_):
        if lower:
            s = jnp.tril(a) + jnp.tril(a, -1).T
            return jl.cho_factor(s, lower=True)[0] + jnp.triu(a, 1)
        s = jnp.triu(a) + jnp.triu(a, 1).T
        return jl.cho_factor(s, lower=False)[0] + jnp.tril(a, -1)

    def cho_solve_twin(c, b, lower=False, **_):
        return jl.cho_solve((c, lower), b)

    def sylvester_twin(a, b, q):
        n, m = q.shape
        system = jnp.kron(a, jnp.eye(m)) + jnp.kron(jnp.eye(n), b.T)
        return jnp.linalg.solve(system, q.ravel()).reshape(n, m)

    def spd(n):
        def draw(r):
            m = r.normal(size=(n, n))
            return m @ m.T + n * np.eye(n)
        return draw

    def offsets(in1, in2, mode, axes=None):
        """Where ``mode``'s result sits in the full convolution, per axis: found by
        matching SciPy's own results (an oracle independent of s2s's widths)."""
        r = np.random.default_rng(0)
        x, h = r.normal(size=np.shape(in1)), r.normal(size=np.shape(in2))
        full = ss.fftconvolve(x, h, axes=axes)
        part = ss.fftconvolve(x, h, mode=mode, axes=axes)
        for start in np.ndindex(*(f - p + 1 for f, p in zip(full.shape, part.shape))):
            piece = full[tuple(slice(s, s + n) for s, n in zip(start, part.shape))]
            if np.allclose(piece, part):
                return [(s, f - p - s) for s, f, p in zip(start, full.shape, part.shape)]
        raise AssertionError("no offset matches")

    def conv_pad_twin(cot, in1, in2, mode="full", axes=None):
        return jnp.pad(cot, offsets(in1, in2, mode, axes))

    def conv_crop_twin(cot, in1, in2, mode="full", axes=None):
        widths = offsets(in1, in2, mode, axes)
        return cot[tuple(slice(lo, n - hi) for (lo, hi), n in zip(widths, cot.shape))]

    def band(lower, upper, n):
        """A band (lower + upper + 1, n) whose matrix has a dominant diagonal."""
        def draw(r):
            ab = r.normal(size=(lower + upper + 1, n))
            ab[upper] += 5.0
            return ab
        return draw

    def dense_twin(x, lower, upper):
        """The matrix scipy.linalg.solve_banded's documentation says the band stores:
        a[i, j] = ab[upper + i - j, j] (entries outside the band 0)."""
        n = x.shape[-1]
        rows = []
        for i in range(n):
            rows.append(jnp.stack([x[upper + i - j, j] if -lower <= j - i <= upper
                                   else jnp.zeros((), x.dtype) for j in range(n)]))
        return jnp.stack(rows)

    def band_twin(x, lower, upper):
        n = x.shape[-1]
        return jnp.stack([jnp.stack([x[j + r - upper, j] if 0 <= j + r - upper < n
                                     else jnp.zeros((), x.dtype) for j in range(n)])
                          for r in range(lower + upper + 1)])

    def solve_banded_twin(ab, b, lower=0, upper=0, **_):
        return jnp.linalg.solve(dense_twin(ab, lower, upper), b)

    def sqrtm_twin(a):
        """The principal square root by Denman-Beavers' iteration (JAX's sqrtm, through
        schur, has no derivative; this one differentiates through its iterations):
        y -> (y + z^-1) / 2, z -> (z + y^-1) / 2 from y = a, z = I, converging to
        sqrtm(a) for a matrix with no eigenvalue on the closed negative real axis."""
        y, z = a, jnp.broadcast_to(jnp.eye(a.shape[-1]), a.shape)
        for _ in range(40):
            y, z = (y + jnp.linalg.inv(z)) / 2, (z + jnp.linalg.inv(y)) / 2
        return y

    def shifted(n, *batch):
        """A matrix (stack) with its eigenvalues well inside the right half-plane."""
        return lambda r: r.normal(size=(*batch, n, n)) + 2.0 * n * np.eye(n)

    CONVOLUTIONS = {  # variant -> (in1 shape, in2 shape)
        "vectors": ((7,), (3,)), "even_kernel": ((6,), (4,)),
        "kernel_longer": ((3,), (5,)), "matrices": ((4, 5), (2, 3)),
        "size_one": ((1, 4), (1, 2)),
    }

    def conv_args(s1, s2, mode):
        """The full-shaped or mode-shaped cotangent, and the operands (shapes only)."""
        full = tuple(a + b - 1 for a, b in zip(s1, s2))
        shape = ss.convolve(np.ones(s1), np.ones(s2), mode=mode).shape
        return (normal(*full), const(np.ones(s1)), const(np.ones(s2))), shape

    def pad_row(name, variant, s1, s2, mode, axes=None):
        (full, in1, in2), shape = conv_args(s1, s2, mode)
        cot = full if name == "conv_crop" else normal(*shape)
        params = {"mode": mode} if axes is None else {"mode": mode, "axes": axes}
        twin = conv_crop_twin if name == "conv_crop" else conv_pad_twin
        return Row(name, variant, (cot, in1, in2), params, jax=twin)

    ROWS = [
        st_row("lower", 3, (3, 2), lower=True),
        st_row("upper", 3, (3, 2)),
        st_row("trans_lower", 3, (3, 2), trans=1, lower=True),
        st_row("trans_upper_unit", 3, (3,), trans=1, unit_diagonal=True),
        st_row("unit_lower", 3, (3, 2), lower=True, unit_diagonal=True),
        st_row("vector", 4, (4,), lower=True),
        st_row("size_one", 1, (1, 2)),
        st_row("no_columns", 3, (3, 0), lower=True),
        Row("scipy.linalg.expm", "matrix", (normal(3, 3),), jax="scipy.linalg.expm"),
        Row("scipy.linalg.expm", "size_one", (normal(1, 1),), jax="scipy.linalg.expm"),
        Row("scipy.linalg.expm", "stack", (normal(2, 3, 3),), jax="scipy.linalg.expm"),
        Row("scipy.linalg.sqrtm", "matrix", (shifted(3),), jax=sqrtm_twin),
        Row("scipy.linalg.sqrtm", "size_one", (uniform(0.5, 2.0)(1, 1),), jax=sqrtm_twin),
        Row("scipy.linalg.sqrtm", "stack", (shifted(3, 2),), jax=sqrtm_twin),
        Row("scipy.linalg.cho_factor", "lower", (spd(3),), {"lower": True},
            jax=cho_factor_twin),
        Row("scipy.linalg.cho_factor", "upper", (spd(3),), jax=cho_factor_twin),
        Row("scipy.linalg.cho_factor", "size_one", (spd(1),), {"lower": True},
            jax=cho_factor_twin),
        Row("scipy.linalg.cho_solve", "lower", (factor(3, True), normal(3, 2)),
            {"lower": True}, jax=cho_solve_twin),
        Row("scipy.linalg.cho_solve", "upper_vector", (factor(3, False), normal(3)),
            jax=cho_solve_twin),
        Row("scipy.linalg.cho_solve", "no_columns", (factor(2, True), normal(2, 0)),
            {"lower": True}, jax=cho_solve_twin),
        Row("scipy.linalg.solve_sylvester", "rect", (conditioned(3), conditioned(2),
                                                     normal(3, 2)), jax=sylvester_twin),
        Row("scipy.linalg.solve_sylvester", "size_one", (conditioned(1), conditioned(2),
                                                         normal(1, 2)), jax=sylvester_twin),
    ]
    ROWS += [
        Row("scipy.linalg.solve_banded", "tridiagonal", (band(1, 1, 5), normal(5, 2)),
            {"lower": 1, "upper": 1}, jax=solve_banded_twin),
        Row("scipy.linalg.solve_banded", "lower_only_vector", (band(2, 0, 4), normal(4)),
            {"lower": 2, "upper": 0}, jax=solve_banded_twin),
        Row("scipy.linalg.solve_banded", "diagonal", (band(0, 0, 3), normal(3, 1)),
            jax=solve_banded_twin),
        Row("scipy.linalg.solve_banded", "size_one", (band(0, 0, 1), normal(1, 2)),
            jax=solve_banded_twin),
        Row("banded_dense", "l1_u2", (normal(4, 5), const(1), const(2)), jax=dense_twin),
        Row("banded_dense", "diagonal", (normal(1, 3), const(0), const(0)), jax=dense_twin),
        Row("dense_banded", "l1_u2", (normal(5, 5), const(1), const(2)), jax=band_twin),
        Row("dense_banded", "l2_u0", (normal(4, 4), const(2), const(0)), jax=band_twin),
    ]
    for _mode in ("full", "same", "valid"):
        for _variant, (_s1, _s2) in CONVOLUTIONS.items():
            ROWS.append(Row("scipy.signal.convolve", f"{_mode}_{_variant}",
                            (normal(*_s1), normal(*_s2)), {"mode": _mode, "method": "direct"},
                            jax="scipy.signal.convolve"))
            ROWS.append(pad_row("conv_pad", f"{_mode}_{_variant}", _s1, _s2, _mode))
            ROWS.append(pad_row("conv_crop", f"{_mode}_{_variant}", _s1, _s2, _mode))
        ROWS.append(Row("scipy.signal.fftconvolve", f"{_mode}_matrices",
                        (normal(4, 5), normal(2, 3)), {"mode": _mode},
                        jax="scipy.signal.fftconvolve"))
        ROWS.append(Row("scipy.signal.fftconvolve", f"{_mode}_axes",
                        (normal(3, 6), normal(3, 2)), {"mode": _mode, "axes": -1},
                        jax="scipy.signal.fftconvolve"))
        ROWS.append(pad_row("conv_pad", f"{_mode}_axes", (3, 6), (1, 3), _mode, axes=1))
    ROWS.append(Row("scipy.signal.convolve", "auto_method", (normal(9,), normal(4,)),
                    jax="scipy.signal.convolve"))

    E2E = [
        E2ECase(F.f_solve_triangular, ("scipy.linalg.solve_triangular",),
                (conditioned(3), normal(3, 2))),
        E2ECase(F.f_expm, ("scipy.linalg.expm",), (normal(3, 3),)),
        # (JAX's sqrtm has no derivative: finite differences; the rows above compare with
        # a differentiable iteration in JAX)
        E2ECase(F.f_sqrtm, ("scipy.linalg.sqrtm",), (normal(3, 3),), jax=False),
        E2ECase(F.f_cho, ("scipy.linalg.cho_factor", "scipy.linalg.cho_solve"),
                (conditioned(3), normal(3, 2))),
        E2ECase(F.f_solve_sylvester, ("scipy.linalg.solve_sylvester",),
                (conditioned(3), conditioned(2), normal(3, 2)), jax=False),
        E2ECase(F.f_solve_banded, ("scipy.linalg.solve_banded",),
                (band(1, 2, 6), normal(6, 2)), jax=False),
        E2ECase(F.f_banded_helpers, ("banded_dense", "dense_banded"),
                (normal(4, 5), normal(5, 5))),
        E2ECase(F.f_conv_pad_crop, ("conv_pad", "conv_crop"), (normal(3, 6), normal(3, 6))),
        E2ECase(F.f_signal_convolve, ("scipy.signal.convolve",), (normal(3, 6), normal(2, 3))),
        E2ECase(F.f_signal_convolve_vectors, ("scipy.signal.convolve",),
                (normal(2, 7), normal(2, 4))),
        E2ECase(F.f_signal_correlate, ("scipy.signal.convolve", "flip"),
                (normal(3, 6), normal(2, 3))),
        E2ECase(F.f_signal_fftconvolve, ("scipy.signal.fftconvolve",),
                (normal(3, 6), normal(2, 3))),
    ]
