"""NumPy's remaining functions and SciPy's solvers and convolutions (issue 26, items
3-4) beyond the rule table: under jit on both backends, the calls that are other
primitives' (their emitted code, NumPy's deprecation warning, refusals at the user's
line), and attempts to break them (repeated calls, the caller writing into results,
NaN and inf, size-0 and size-1 axes)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import rule_fns_leftovers as L
from rule_table import twin_of
from support import HAVE_JAX, fd_grad

import s2s

sl = pytest.importorskip("scipy.linalg")
ss = pytest.importorskip("scipy.signal")

import rule_fns_scipy_linalg as S  # noqa: E402

needs_jax = pytest.mark.skipif(not HAVE_JAX, reason="JAX is not installed")
if HAVE_JAX:
    import jax

R = np.random.default_rng(26)
A33 = R.normal(size=(3, 3)) + 4.0 * np.eye(3)
B32 = R.normal(size=(3, 2))
X34 = R.normal(size=(3, 4))
X37 = R.normal(size=(3, 7))

# one function per family, with the arguments it is differentiated at
JIT_CASES = {
    "partition": (L.f_partition, (X37,)),
    "frexp": (L.f_frexp, (X34,)),
    "gradient": (L.f_gradient, (R.normal(size=(3, 5)),)),
    "select": (L.f_select, (X34,)),
    "ufunc_reduce": (L.f_ufunc_reduce, (X34,)),
    "block": (L.f_block, (R.normal(size=(2, 3)), R.normal(size=(2, 3)))),
    "cross_axes": (L.f_cross_axes, (X34, X34.T)),
    "insert": (L.f_insert, (R.normal(size=(3, 3)), R.normal(size=4))),
    "solve_triangular": (S.f_solve_triangular, (A33, B32)),
    "expm": (S.f_expm, (A33 * 0.2,)),
    "cho": (S.f_cho, (A33, B32)),
    "convolve": (S.f_signal_convolve, (R.normal(size=(3, 6)), R.normal(size=(2, 3)))),
    "correlate": (S.f_signal_correlate, (R.normal(size=(3, 6)), R.normal(size=(2, 3)))),
}


def _argnums(args):
    return tuple(range(len(args)))


@needs_jax
@pytest.mark.parametrize("backend", ["numpy", "jax"])
@pytest.mark.parametrize("key", sorted(JIT_CASES))
def test_jit_of_grad_matches_jax(key: str, backend: str) -> None:
    fn, args = JIT_CASES[key]
    if key == "partition" and backend == "jax":
        pytest.skip("jax.numpy's partition puts each side in another order than NumPy's")
    got = s2s.jit(s2s.grad(fn, argnums=_argnums(args)), backend=backend)(*args)
    expected = jax.jit(jax.grad(twin_of(fn), argnums=_argnums(args)))(*args)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-10)


@needs_jax
@pytest.mark.slow  # (JAX compiles each: seconds apiece; -m slow runs them)
@pytest.mark.parametrize("key", ["gradient", "solve_triangular", "expm", "convolve"])
def test_vmap_of_grad_under_jit_on_jax(key: str) -> None:
    fn, args = JIT_CASES[key]
    stacked = tuple(np.stack([a, a * 0.9]) for a in args)
    grad = s2s.grad(fn, argnums=_argnums(args))
    got = s2s.jit(s2s.vmap(grad), backend="jax")(*stacked)
    expected = jax.vmap(jax.grad(twin_of(fn), argnums=_argnums(args)))(*stacked)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("key", ["partition", pytest.param("gradient", marks=pytest.mark.slow),
                                 pytest.param("cho", marks=pytest.mark.slow), "convolve"])
def test_first_third_and_tenth_calls_agree_and_results_are_the_callers(key) -> None:
    fn, args = JIT_CASES[key]
    grad = s2s.grad(fn, argnums=_argnums(args))
    first = [np.copy(g) for g in grad(*args)]
    for k in range(10):
        got = grad(*args)
        for g in got:
            g += 1.0  # the caller writes into the results: nothing s2s keeps changes
        if k in (1, 8):
            for g, f in zip(grad(*args), first):
                np.testing.assert_array_equal(g, f)
    for a, original in zip(args, JIT_CASES[key][1]):
        assert a is original  # (arguments untouched: the same objects, compared above)


# ---- the calls that are other primitives' -------------------------------------------------


def svd_values(x):
    return np.sum(np.linalg.svd(x, compute_uv=False))


def select_three(x):
    return np.sum(np.select([x > 1.0, x > 0.0, x > -1.0], [x, x * 2.0, x * 3.0], -x))


def add_reduce(x):
    return np.sum(np.add.reduce(x) * np.maximum.reduce(x, axis=1, keepdims=True))


def test_emitted_code_is_the_other_primitives() -> None:
    assert "np.linalg.svdvals(x)" in s2s.source(s2s.grad(svd_values))
    text = s2s.source(s2s.grad(select_three))
    code = [line for line in text.splitlines() if not line.strip().startswith("#")]
    assert sum("np.where(" in line for line in code) >= 3
    assert not any("np.select" in line for line in code)
    text = s2s.source(s2s.grad(add_reduce))
    assert "np.sum(x, axis=0)" in text and "np.max(x, axis=1, keepdims=True)" in text


def test_select_picks_the_first_condition_that_holds() -> None:
    x = np.array([-2.0, -0.5, 0.5, 1.5])
    grad = s2s.grad(select_three)(x)
    np.testing.assert_array_equal(grad, [-1.0, 3.0, 2.0, 1.0])
    np.testing.assert_allclose(grad, fd_grad(select_three, (x,), 0)[0], rtol=1e-6)


def stacked_rows(x):
    return np.sum(np.row_stack([x, x * 2.0]) ** 2)


@pytest.mark.skipif(not hasattr(np, "row_stack"), reason="this NumPy has no row_stack")
def test_row_stack_warns_as_numpy_does_at_the_users_line() -> None:
    with pytest.warns(DeprecationWarning, match="row_stack") as caught:
        grad = s2s.grad(stacked_rows)(X34)
    assert any(w.filename == __file__ for w in caught)
    np.testing.assert_allclose(grad, 10.0 * X34)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the emitted code calls np.vstack: no warning
        s2s.grad(stacked_rows)(X34)


def hermitian_svd(x):
    return np.sum(np.linalg.svd(x, compute_uv=False, hermitian=True))


def reduce_with_dtype(x):
    return np.sum(np.add.reduce(x, dtype=np.float32))


def select_of_a_list_argument(x, conds):
    return np.sum(np.select(conds, [x]))


def block_uneven(x):
    return np.sum(np.block([[[x, x]], [x, x]]))


def gradient_axes_variable(x, k):
    return np.sum(np.gradient(x, axis=k))


def gradient_three_spacings(x):
    return np.sum(np.gradient(x, 0.5, 0.25, 1.0, axis=(0, 1))[0])


def gradient_two_spacings(x):
    return np.sum(np.gradient(x, 0.5, 0.25, axis=1))


def gradient_spacing_differentiated(x, h):
    return np.sum(np.gradient(x, h))


def cho_solve_of_a_pair_not_written(x, pair):
    return np.sum(sl.cho_solve(pair, x))


def solve_triangular_trans_variable(a, b, t):
    return np.sum(sl.solve_triangular(a, b, trans=t))


REFUSED = {  # function, arguments, argnums, what the message says
    "svd_hermitian": (hermitian_svd, (X34,), 0, "`hermitian=` must be written as one of False"),
    "reduce_dtype": (reduce_with_dtype, (X34,), 0, "`dtype=` must be written"),
    "select_list_argument": (select_of_a_list_argument, (X34, [X34 > 0]), 0,
                             "`condlist` must be a list or tuple written in the function"),
    "block_uneven": (block_uneven, (X34,), 0, "nest to different depths"),
    "gradient_axes_variable": (gradient_axes_variable, (X34, 1), 0, "`axis=` must be one int"),
    "gradient_two_spacings": (gradient_two_spacings, (X34,), 0, "several spacings for one axis"),
    "gradient_three_spacings": (gradient_three_spacings, (X34,), 0, "3 spacings for 2 axes"),
    "gradient_spacing": (gradient_spacing_differentiated, (X34[0], 0.5), 1,
                         "has no derivative rule in `varargs`"),
    "cho_solve_pair": (cho_solve_of_a_pair_not_written, (B32, (A33, True)), 0,
                       "the pair (c, lower) cho_factor returns"),
    "trans_variable": (solve_triangular_trans_variable, (A33, B32, 1), 0,
                       "`trans=` must be written in the call"),
}


@pytest.mark.parametrize("key", sorted(REFUSED))
def test_refused_at_the_users_line(key: str) -> None:
    fn, args, argnum, what = REFUSED[key]
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(fn, argnums=argnum)(*args)
    text = str(info.value)
    assert what in text, text
    assert __file__ in text and "Instead:" in text


gradient_unpacked = L.f_gradient_unpacked
FAST_COMPILE = {"xla_backend_optimization_level": 0}


def _close_tree(got, expected, dtype):
    got, expected = list(got), list(expected)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert np.asarray(g).dtype == dtype, (np.asarray(g).dtype, dtype)
        tol = 1e-10 if dtype == np.float64 else 2e-4
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=tol, atol=tol)


@needs_jax
@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gradient_of_every_axis_under_every_transform_as_jax(dtype) -> None:
    """np.gradient(f) of a matrix, axis= left out: NumPy's one result per axis, through
    vjp (a tuple cotangent), jvp, vmap, jacfwd, jacrev (the tuple itself returned) and
    hessian (unpacked), against JAX on the same source (one compiled oracle); values
    changing between the 1st, 3rd and 10th call."""
    theirs, unpacked = twin_of(L.f_gradient_per_axis), twin_of(L.f_gradient_unpacked)
    oracle = jax.jit(lambda x, xs: (
        jax.vjp(theirs, x)[1]([x, x]), jax.jvp(theirs, (x,), (x,))[1],
        jax.vmap(theirs)(xs), jax.vmap(theirs, out_axes=1)(xs), jax.jacfwd(theirs)(x),
        jax.jacrev(theirs)(x), [jax.hessian(unpacked)(x)],
        [jax.vmap(jax.grad(unpacked))(xs)]), compiler_options=FAST_COMPILE)
    ours = L.f_gradient_per_axis
    transforms = (lambda x, xs: s2s.vjp(ours, x)[1]((x, x)),
                  lambda x, xs: s2s.jvp(ours, (x,), (x,))[1],
                  lambda x, xs: s2s.vmap(ours)(xs),
                  lambda x, xs: s2s.vmap(ours, out_axes=1)(xs),
                  lambda x, xs: s2s.jacfwd(ours)(x), lambda x, xs: s2s.jacrev(ours)(x),
                  lambda x, xs, h=s2s.hessian(L.f_gradient_unpacked): [h(x)],
                  lambda x, xs, g=s2s.vmap(s2s.grad(L.f_gradient_unpacked)): [g(xs)])
    for call in range(1, 11):
        x = (R.normal(size=(3, 4)) * call).astype(dtype)
        xs = np.stack([x, 2 * x])
        if call not in (1, 3, 10):
            transforms[-2](x, xs)  # (the calls between: one transform runs)
            continue
        got = [t(x, xs) for t in transforms]
        assert isinstance(got[2], tuple) and len(got[2]) == 2
        for g, e in zip(got, oracle(x, xs)):
            _close_tree(g, e, dtype)


def test_gradient_of_every_axis_matches_finite_differences_and_keeps_inputs() -> None:
    x = R.normal(size=(4, 3))
    kept = x.copy()
    got = s2s.grad(gradient_unpacked)(x)
    np.testing.assert_allclose(got, fd_grad(gradient_unpacked, (x,), 0)[0], rtol=1e-6)
    np.testing.assert_array_equal(x, kept)


@needs_jax
def test_gradient_of_every_axis_nan_and_inf_as_jax() -> None:
    x = R.normal(size=(3, 4))
    x[1, 2], x[0, 0] = np.nan, np.inf
    with np.errstate(invalid="ignore"):
        got = s2s.grad(gradient_unpacked)(x)
    expected = jax.grad(twin_of(gradient_unpacked))(x)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    ok = np.isfinite(got)
    np.testing.assert_allclose(got[ok], np.asarray(expected)[ok], rtol=1e-12)


@pytest.mark.parametrize("shape", [(1, 4), (0, 4), (3, 1)])
def test_gradient_of_every_axis_with_a_short_axis_raises_numpys_error(shape) -> None:
    x = np.ones(shape)
    with pytest.raises(ValueError) as numpy_error:
        gradient_unpacked(x)
    with pytest.raises(ValueError) as ours:
        s2s.grad(gradient_unpacked)(x)
    assert str(ours.value) == str(numpy_error.value)


@needs_jax
@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_gradient_of_every_axis_under_jit(backend) -> None:
    x = R.normal(size=(3, 4))
    got = s2s.jit(s2s.grad(gradient_unpacked), backend=backend)(x)
    np.testing.assert_allclose(got, jax.grad(twin_of(gradient_unpacked))(x), rtol=1e-10)
    xs = np.stack([x, -x])
    got = s2s.jit(s2s.vmap(L.f_gradient_per_axis), backend=backend)(xs)
    for g, e in zip(got, jax.vmap(twin_of(L.f_gradient_per_axis))(xs)):
        np.testing.assert_allclose(np.asarray(g), e, rtol=1e-10)


# ---- special values, size-0 and size-1 axes -------------------------------------------


def frexp_mantissa(x):
    return np.sum(np.frexp(x)[0])


@needs_jax
def test_frexp_at_zero_and_powers_of_two_as_jax() -> None:
    x = np.array([0.0, 1.0, -8.0, 0.75, 3.0e-300, -np.inf])
    with np.errstate(invalid="ignore"):
        got = s2s.grad(frexp_mantissa)(x)
    expected = jax.grad(lambda v: jax.numpy.sum(jax.numpy.frexp(v)[0]))(x)
    np.testing.assert_allclose(got[:-1], expected[:-1], rtol=1e-12)
    assert np.isfinite(got[-1])


def partition_ends(x):
    p = np.partition(x, 0, axis=0)
    return np.sum(p[0] * 2.0) + np.sum(p[1:])


def test_partition_size_one_and_size_zero_axes() -> None:
    x = R.normal(size=(1, 4))
    np.testing.assert_array_equal(s2s.grad(partition_ends)(x), np.full((1, 4), 2.0))
    assert s2s.grad(partition_ends)(np.zeros((1, 0))).shape == (1, 0)
    x = R.normal(size=(4, 3))
    np.testing.assert_allclose(s2s.grad(partition_ends)(x),
                               fd_grad(partition_ends, (x,), 0)[0], rtol=1e-6)


def convolve_nan(x, h):
    return np.sum(ss.convolve(x, h, mode="same"))


def test_nan_in_a_convolution_stays_where_it_reaches() -> None:
    x = np.array([1.0, np.nan, 2.0, 3.0, 4.0])
    h = np.array([1.0, 2.0])
    gx, gh = s2s.grad(convolve_nan, argnums=(0, 1))(x, h)
    assert np.all(np.isfinite(gx))  # d/dx reads only h and the cotangent
    assert np.isnan(gh).all()  # d/dh sums x's values: NaN, as the value is


def expm_float32(a):
    return np.sum(sl.expm(a) ** 2)


def test_float32_stays_float32_through_expm_and_solves() -> None:
    a = (A33 * 0.2).astype(np.float32)
    assert s2s.grad(expm_float32)(a).dtype == np.float32
    g = s2s.grad(S.f_solve_triangular, argnums=(0, 1))(A33.astype(np.float32),
                                                         B32.astype(np.float32))
    assert all(x.dtype == np.float32 for x in g)


SPACING = 0.5


def gradient_with_module_spacing(x):
    return np.sum(np.gradient(x, SPACING) ** 2)


def test_module_state_changed_between_calls_is_read_again() -> None:
    global SPACING
    x = R.normal(size=6)
    grad = s2s.grad(gradient_with_module_spacing)
    first = grad(x)
    try:
        SPACING = 0.25
        np.testing.assert_allclose(grad(x), 4.0 * first, rtol=1e-12)
        np.testing.assert_allclose(grad(x), fd_grad(gradient_with_module_spacing, (x,), 0)[0],
                                   rtol=1e-6)
    finally:
        SPACING = 0.5


def svd_as_written(x):
    u, s, vt = np.linalg.svd(x, full_matrices=False)
    return np.sum(s * u[0]) + np.sum(np.linalg.svd(x[:2, :2])[1])


def test_svd_with_its_vectors_is_spelled_as_written() -> None:
    text = s2s.source(s2s.grad(svd_as_written))
    assert "np.linalg.svd(x, full_matrices=False)" in text
    assert "np.linalg.svd(x_s_s)" in text or "np.linalg.svd(x[:2, :2])" in text


def insert_at_a_list(x, v):
    return np.sum(np.sin(np.insert(x, [0, 2], v[:3], axis=0)) ** 2)


@needs_jax
def test_insert_at_a_list_of_positions_on_the_jax_backend() -> None:
    # jax.numpy's insert takes an array of positions: the backend passes NumPy's list
    x, v = R.normal(size=(3, 3)), R.normal(size=4)
    grad = s2s.grad(insert_at_a_list, argnums=(0, 1))
    for g, e in zip(s2s.jit(grad, backend="jax")(x, v), grad(x, v)):
        np.testing.assert_allclose(g, e, rtol=1e-12)
    for g, e in zip(grad(x, v), (fd_grad(insert_at_a_list, (x, v), k)[0] for k in (0, 1))):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-8)


# ---- complex values where NumPy's real operands meet them (issue 26, item 5) ---------


def fill_complex(c, x):
    return np.sum(np.full_like(x, c) * x)


def norm_of(z, ord=None, axis=None):
    return np.linalg.norm(z, ord, axis)


@needs_jax
def test_complex_fill_value_into_a_real_array_is_jaxs() -> None:
    """np.full_like(real x, complex c) is real (NumPy casts; JAX too, for a traced c):
    the tangent of c's imaginary part is dropped, its cotangent is complex."""
    import jax.numpy as jnp

    def j(c, x):
        return jnp.sum(jnp.full_like(x, c) * x)

    x, c = R.normal(size=(2, 3)), 0.7 - 1.3j
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        for t in (1.0 + 0j, 1j, 0.3 - 2j):
            got = s2s.jvp(fill_complex, (c, x), (t, np.ones_like(x)))
            want = jax.jvp(j, (c, x), (t, np.ones_like(x)))
            np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
            assert not np.iscomplexobj(got[1])
        got = s2s.grad(fill_complex)(c, x)
        np.testing.assert_allclose(got, jax.grad(j)(c, x), rtol=1e-12)
        assert np.iscomplexobj(got)
        cs = np.array([0.5 + 1j, -2j])
        np.testing.assert_allclose(s2s.vmap(s2s.grad(fill_complex), in_axes=(0, None))(cs, x),
                                   jax.vmap(jax.grad(j), in_axes=(0, None))(cs, x), rtol=1e-12)


def sampled(cases, default=2):
    """The first ``default`` cases by default, the rest with ``-m slow`` (JAX's
    compiles cost about a second a case)."""
    return [c if k < default else pytest.param(*c, marks=pytest.mark.slow)
            for k, c in enumerate(cases)]


def _second(fn, z, t, w):
    """jvp of the gradient along t, and the gradient of Re(sum(w * gradient))."""
    def inner(z):
        return np.real(np.sum(s2s.grad(fn)(z) * w))

    return s2s.jvp(s2s.grad(fn), (z,), (t,))[1], s2s.grad(inner)(z)


@needs_jax
@pytest.mark.parametrize("shape, ord, axis", sampled([((4,), 2, None), ((4,), np.inf, None),
                                                      ((3, 4), 2, 1), ((4,), None, None),
                                                      ((3, 3), None, None), ((3, 3), "fro", None),
                                                      ((4,), 1, None), ((4,), -np.inf, None),
                                                      ((3, 3), 1, None), ((3, 3), np.inf, None),
                                                      ((3, 4), 1, 0), ((4,), 3, None),
                                                      ((3, 3), "nuc", None), ((3, 3), 2, None),
                                                      ((3, 4), -2, 1), ((4,), 0.5, None),
                                                      ((4,), -1, None), ((2, 5), 3, 1),
                                                      ((2, 3, 4), "nuc", (1, 2)),
                                                      ((4, 2, 3), 2, (0, 2)),
                                                      ((5,), -2, None)], default=2))
@pytest.mark.parametrize("dtype", [np.complex128,
                                   pytest.param(np.complex64, marks=pytest.mark.slow)])
def test_second_derivatives_of_norms_of_complex_values_are_jaxs(shape, ord, axis, dtype):
    """The 2-, Frobenius, 1- and inf-norms (a complex x's sign conj(x)/|x| turns
    with x: sign_turn), the p-norms (conj(t), and along x's phase (p - 2) times t's
    part there) and the spectral and nuclear norms (the complex SVD's derivative,
    conjugate transposes and its imaginary diagonal), as JAX's."""
    import jax.numpy as jnp

    def fn(z):
        return np.sum(norm_of(z, ord, axis))

    def jf(z):
        return jnp.sum(jnp.linalg.norm(z, ord, axis))

    r = np.random.default_rng(5)
    z, t, w = ((r.normal(size=shape) + 1j * r.normal(size=shape)).astype(dtype)
               for _ in range(3))
    got_t, got_g = _second(fn, z, t, w)
    want_t = jax.jvp(jax.grad(jf), (z,), (t,))[1]
    want_g = jax.grad(lambda z: jnp.real(jnp.sum(jax.grad(jf)(z) * w)))(z)
    tol = 1e-10 if dtype == np.complex128 else 2e-4
    np.testing.assert_allclose(got_t, want_t, rtol=tol, atol=tol)
    np.testing.assert_allclose(got_g, want_g, rtol=tol, atol=tol)


@needs_jax
@pytest.mark.parametrize("fn, shape", sampled([(L.norm_nuclear, (3, 3)), (L.norm_3, (4,)),
                                               (L.norm_spectral, (3, 3)),
                                               (L.norm_smallest_rows, (3, 4))], default=1))
@pytest.mark.slow
def test_hessians_of_p_and_singular_value_norms(fn, shape) -> None:
    """Real values: hessian (jacfwd of the gradient: a p-norm's order settles, before
    running, that it is a vector norm) as JAX's. Complex values: jacfwd of the gradient
    with holomorphic=True as JAX's, and the jvp of the gradient as central differences
    of the gradient; values changing between the 1st, 3rd and 10th call."""
    jf = twin_of(fn)
    r = np.random.default_rng(6)
    hessian = s2s.hessian(fn)
    holomorphic = s2s.jacfwd(s2s.grad(fn), holomorphic=True)
    for call in range(1, 11):
        x = r.normal(size=shape) * call
        z = x + 1j * r.normal(size=shape)
        got, got_z = hessian(x), holomorphic(z)
        if call not in (1, 3, 10):
            continue
        np.testing.assert_allclose(got, jax.hessian(jf)(x), rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(got_z, jax.jacfwd(jax.grad(jf), holomorphic=True)(z),
                                   rtol=1e-8, atol=1e-10)
    t, eps = r.normal(size=shape) + 1j * r.normal(size=shape), 1e-6
    grad = s2s.grad(fn)
    fd = (grad(z + eps * t) - grad(z - eps * t)) / (2 * eps)
    np.testing.assert_allclose(s2s.jvp(grad, (z,), (t,))[1], fd, rtol=1e-5, atol=1e-7)


def scaled_abs(x, c):
    s = np.sum(x)
    return np.abs(s * c) ** 2 + s


def scaled_parts(x, c):
    y = c * x
    return np.sum(y.real * y.imag + x)


def scaled_sin(x, c):
    return np.real(np.sin(x * c))


@needs_jax
@pytest.mark.parametrize("name, xshape, c_axis", [
    ("scaled_abs", (2, 3), None), pytest.param("scaled_parts", (2, 3), 0, marks=pytest.mark.slow),
    pytest.param("scaled_sin", (3,), None, marks=pytest.mark.slow),
    pytest.param("scaled_sin", (3,), 0, marks=pytest.mark.slow)])
def test_vmap_of_grad_of_real_inputs_times_a_complex_scalar_is_real_and_jaxs(
        name, xshape, c_axis) -> None:
    """A complex scalar argument (Python complex, NumPy scalar, 0-d array, or one per
    example) multiplying a real operand: the per-example gradients of the real input
    are real, JAX's, on the 1st, 3rd and 10th call."""
    import jax.numpy as jnp

    fn = globals()[name]
    twin = {"scaled_abs": lambda x, c: jnp.abs(jnp.sum(x) * c) ** 2 + jnp.sum(x),
            "scaled_parts": lambda x, c: jnp.sum((c * x).real * (c * x).imag + x),
            "scaled_sin": lambda x, c: jnp.real(jnp.sin(x * c))}[name]
    xs = R.normal(size=xshape)
    cs = ([1 + 2j, np.complex128(0.5 - 1j), np.array(-1j)] if c_axis is None else
          [R.normal(size=xshape[0]) + 1j * R.normal(size=xshape[0])])
    for c in cs:
        want = jax.vmap(jax.grad(twin), in_axes=(0, c_axis))(xs, c)
        f = s2s.vmap(s2s.grad(fn), in_axes=(0, c_axis))
        for _ in range(10):
            got = f(xs, c)
            assert got.dtype == np.float64
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


# ---- np.linalg.eig: eigenvalues and eigenvectors, against jax.lax.linalg.eig ------------
# jnp.linalg.eig refuses eigenvector derivatives; lax.linalg.eig(...,
# enable_eigvec_derivs=True) gives them, for LAPACK's normalisation (unit 2-norm, the
# largest component real), which NumPy's eig returns too.


def _jax_eig(a):
    w, v = jax.lax.linalg.eig(a, compute_left_eigenvectors=False, enable_eigvec_derivs=True)
    return w, v


def _eig_input(kind: str, dtype, r):
    shape = (2, 3, 3) if kind == "batch" else (4, 4)
    a = r.normal(size=shape)
    if kind in ("real", "complex"):  # a large antisymmetric part: complex eigenvalues
        b = r.normal(size=shape)
        a = a + 2 * (b - np.swapaxes(b, -1, -2))
    if kind == "symmetric":  # real eigenvalues: NumPy's results come out real
        a = a + np.swapaxes(a, -1, -2)
    if kind == "complex":
        a = a + 1j * r.normal(size=shape)
    return a.astype(dtype if kind != "complex" else
                    (np.complex64 if dtype == np.float32 else np.complex128))


def _like(r, x):
    out = r.normal(size=np.shape(x))
    return out + 1j * r.normal(size=np.shape(x)) if np.iscomplexobj(x) else out


@needs_jax
@pytest.mark.parametrize("kind", ["real", "complex", pytest.param("symmetric", marks=pytest.mark.slow),
                                  pytest.param("batch", marks=pytest.mark.slow)])
def test_eig_rules_match_jax(kind: str) -> None:
    """The JVP and VJP rules of eig against lax.linalg.eig's JVP and its transpose, and
    eigvals' against jnp.linalg.eigvals; VJP and JVP paired as JAX pairs them."""
    from s2s.primitives import PRIMITIVES

    eig, eigvals = PRIMITIVES["linalg.eig"], PRIMITIVES["linalg.eigvals"]
    r = np.random.default_rng(zlib_id(kind))
    a = _eig_input(kind, np.float64, r)
    ans = tuple(np.linalg.eig(a))
    assert np.iscomplexobj(ans[0]) == (kind != "symmetric")
    t = _like(r, a)
    g = (_like(r, ans[0]), _like(r, ans[1]))

    def references(a, t, g0, g1):  # (one compiled program: JAX's eager eig is slow)
        out, pullback = jax.vjp(_jax_eig, a)
        values_pullback = jax.vjp(jax.numpy.linalg.eigvals, a)[1]
        return (out, pullback((g0, g1))[0], jax.jvp(_jax_eig, (a,), (t,))[1],
                values_pullback(g0)[0])

    out, want_a, want_t, want_values_a = jax.jit(references, compiler_options={
        "xla_backend_optimization_level": 0})(a, t, *(np.asarray(gi, complex) for gi in g))
    for ours, theirs in zip(ans, out):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-10)
    got_t = eig.jvps["a"](t, ans, a)
    for ours, theirs in zip(got_t, want_t):
        np.testing.assert_allclose(ours, theirs, rtol=1e-8, atol=1e-9)
        assert np.iscomplexobj(ours) == (kind != "symmetric")  # NumPy's dtypes
    got_a = eig.vjp(g, ans, a)
    np.testing.assert_allclose(got_a, want_a, rtol=1e-8, atol=1e-9)
    pairing = sum(np.real(np.sum(gi * ti)) for gi, ti in zip(g, got_t))
    np.testing.assert_allclose(np.real(np.sum(got_a * t)), pairing, rtol=1e-9)
    np.testing.assert_allclose(eigvals.jvps["a"](t, ans[0], a), want_t[0], rtol=1e-8,
                               atol=1e-9)
    np.testing.assert_allclose(eigvals.vjp(g[0], ans[0], a), want_values_a, rtol=1e-8,
                               atol=1e-9)


def zlib_id(text: str) -> int:
    import zlib

    return zlib.crc32(text.encode())


def eig_loss(a, weights):
    w, v = np.linalg.eig(a)
    return np.real(np.sum(w * w)) + np.sum(np.abs(v) ** 2 * weights) + np.real(
        np.sum(v[0] * v[-1]))


def _jax_eig_loss(a, weights):
    import jax.numpy as jnp

    w, v = _jax_eig(a)
    return jnp.real(jnp.sum(w * w)) + jnp.sum(jnp.abs(v) ** 2 * weights) + jnp.real(
        jnp.sum(v[0] * v[-1]))


@needs_jax
@pytest.mark.parametrize("kind, dtype", [
    ("real", np.float64), pytest.param("complex", np.float32, marks=pytest.mark.slow),
    pytest.param("real", np.float32, marks=pytest.mark.slow),
    pytest.param("complex", np.float64, marks=pytest.mark.slow),
    pytest.param("symmetric", np.float64, marks=pytest.mark.slow)])
def test_grad_through_eig_matches_jax(kind: str, dtype) -> None:
    """grad of a real loss of the eigenvalues and the eigenvectors (their phases
    included, as LAPACK fixes them) on the 1st, 3rd and 10th call, vmap of it, and jvp;
    the caller's array is left alone."""
    r = np.random.default_rng(zlib_id(kind + "grad"))
    a = _eig_input(kind, dtype, r)
    weights = r.normal(size=(4, 4)).astype(np.float32 if dtype == np.float32 else np.float64)
    t = _like(r, a).astype(a.dtype)
    stack = np.stack([a, a.T.copy()])
    before = a.copy()

    def references(a, weights, t, stack):  # (one compiled program: JAX's eager eig is slow)
        grad = jax.grad(_jax_eig_loss)
        return (grad(a, weights),
                jax.jvp(_jax_eig_loss, (a, weights), (t, jax.numpy.zeros_like(weights)))[1],
                jax.vmap(grad, in_axes=(0, None))(stack, weights))

    want, want_t, want_v = jax.jit(references, compiler_options={
        "xla_backend_optimization_level": 0})(a, weights, t, stack)
    tol = 1e-8 if dtype == np.float64 else 2e-3
    f = s2s.grad(eig_loss)
    for _ in range(10):
        got = f(a, weights)
        assert got.dtype == a.dtype
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    np.testing.assert_array_equal(a, before)
    np.testing.assert_allclose(s2s.jvp(eig_loss, (a, weights), (t, np.zeros_like(weights)))[1],
                               want_t, rtol=tol, atol=tol)
    np.testing.assert_allclose(s2s.vmap(f, in_axes=(0, None))(stack, weights), want_v,
                               rtol=tol, atol=tol)


def eigvals_loss(a):
    w = np.linalg.eigvals(a)
    return np.sum(np.abs(w) ** 2 + np.real(w) ** 3)


@needs_jax
def test_eigvals_under_jit_on_jax_and_at_nan() -> None:
    import jax.numpy as jnp

    def twin(a):
        w = jnp.linalg.eigvals(a)
        return jnp.sum(jnp.abs(w) ** 2 + jnp.real(w) ** 3)

    a = R.normal(size=(3, 3))
    want = jax.grad(twin)(a)
    np.testing.assert_allclose(s2s.jit(s2s.grad(eigvals_loss), backend="jax")(a), want,
                               rtol=1e-8)
    np.testing.assert_allclose(s2s.grad(eigvals_loss)(a), want, rtol=1e-8)
    bad = a.copy()
    bad[0, 0] = np.nan
    with pytest.raises(np.linalg.LinAlgError):  # NumPy's own refusal, as for the forward
        s2s.grad(eigvals_loss)(bad)


@pytest.mark.slow
@needs_jax
def test_solve_banded_on_the_jax_backend() -> None:
    """JAX has no banded solver: on the JAX backend the band is solved as the dense
    matrix it stores.  Values, gradients (against finite differences) and a vmapped
    gradient as on NumPy."""
    r = np.random.default_rng(11)
    ab = r.normal(size=(4, 6))
    ab[2] += 5.0
    b = r.normal(size=(6, 2))
    value, _ = s2s.jit(s2s.value_and_grad(S.f_solve_banded), backend="jax")(ab, b)
    np.testing.assert_allclose(value, S.f_solve_banded(ab, b), rtol=1e-12)
    f = s2s.jit(s2s.grad(S.f_solve_banded, argnums=(0, 1)), backend="jax")
    for i, got in enumerate(f(ab, b)):
        np.testing.assert_allclose(got, fd_grad(S.f_solve_banded, (ab, b), i)[0], rtol=1e-6,
                                   atol=1e-8)
    abs_ = np.stack([ab, ab * 1.1])
    v = s2s.vmap(s2s.grad(S.f_solve_banded), in_axes=(0, None))
    np.testing.assert_allclose(s2s.jit(v, backend="jax")(abs_, b), v(abs_, b), rtol=1e-10)


def sqrtm_loss(a):
    s = sl.sqrtm(a)
    return np.sum(np.abs(s) ** 2 * np.arange(1.0, 1.0 + s.size).reshape(s.shape)) + np.real(
        np.trace(s))


def _complex_fd(fn, z, eps=1e-6):
    """JAX's gradient of a real function of complex z: df/dx - 1j df/dy."""
    out = np.zeros_like(z)
    for idx in np.ndindex(z.shape):
        for unit, scale in ((1.0, 1.0), (1j, -1j)):
            step = np.zeros_like(z)
            step[idx] = unit * eps
            out[idx] += scale * (fn(z + step) - fn(z - step)) / (2 * eps)
    return out


@pytest.mark.parametrize("kind", ["real_root", "complex_root", "complex_matrix"])
def test_sqrtm_gradients_match_finite_differences(kind: str) -> None:
    """A real matrix with a real root, one whose root is complex (a negative
    eigenvalue: its cotangent is real, JAX's convention), and a complex matrix; the
    1st, 3rd and 10th call alike, the caller's array left alone."""
    r = np.random.default_rng(zlib_id(kind))
    a = r.normal(size=(3, 3)) + (4.0 * np.eye(3) if kind == "real_root" else 0)
    if kind == "complex_root":
        a = a - 3.0 * np.eye(3)
    if kind == "complex_matrix":
        a = a + 1j * r.normal(size=(3, 3)) + 3.0 * np.eye(3)
    assert np.iscomplexobj(sl.sqrtm(a)) == (kind != "real_root")
    before = a.copy()
    want = _complex_fd(sqrtm_loss, a) if kind == "complex_matrix" else \
        fd_grad(sqrtm_loss, (a,), 0)[0]
    f = s2s.grad(sqrtm_loss)
    for _ in range(10):
        got = f(a)
        assert got.dtype == a.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(a, before)


def gradient_coordinates(a):
    gx, gy = np.gradient(a, 0.5, L.X5, axis=(0, 1))
    return np.sum(gx * gy) + np.sum(np.sin(gy))


@needs_jax
@pytest.mark.slow  # (JAX compiles three programs; the rule rows check coordinates by default)
def test_gradient_with_coordinates_on_the_jax_backend() -> None:
    """jnp.gradient takes coordinates but no edge_order: the transposed stencil is
    built without it on the JAX backend."""
    import jax.numpy as jnp

    def twin(a):
        gx, gy = jnp.gradient(a, 0.5, jnp.asarray(L.X5), axis=(0, 1))
        return jnp.sum(gx * gy) + jnp.sum(jnp.sin(gy))

    a = R.normal(size=(4, 5))
    want = jax.grad(twin)(a)
    for backend in ("numpy", "jax"):
        np.testing.assert_allclose(s2s.jit(s2s.grad(gradient_coordinates), backend=backend)(a),
                                   want, rtol=1e-10)
    stack = np.stack([a, -a])
    np.testing.assert_allclose(
        s2s.jit(s2s.vmap(s2s.grad(gradient_coordinates)), backend="jax")(stack),
        jax.vmap(jax.grad(twin))(stack), rtol=1e-10)


def norm_with_default_order(x, order=np.inf, cap=np.float64(np.inf)):
    return np.linalg.norm(x, order) + np.sum(np.minimum(x, cap))


def gradient_of_the_gradient(x):
    return np.sum(s2s.grad(norm_with_default_order)(x) * np.arange(3.0))


def test_a_default_that_is_not_finite_is_spelled_as_numpy_spells_it() -> None:
    """A callee's default np.inf (or np.float64(inf)) reaches emitted code as np.inf
    (it was spelled inf: NameError in a gradient of a gradient)."""
    x = np.array([1.0, -3.0, 2.0])
    np.testing.assert_allclose(s2s.grad(norm_with_default_order)(x), [1.0, 0.0, 1.0])
    np.testing.assert_allclose(s2s.grad(gradient_of_the_gradient)(x), np.zeros(3))
    assert "np.inf" in s2s.source(s2s.grad(gradient_of_the_gradient))


def gradient_second_order_edges(a, x):
    g0 = np.gradient(a, 0.5, axis=0, edge_order=2)
    g1 = np.gradient(a, x, axis=1, edge_order=2)
    return np.sum(g0 * g0) + np.sum(np.sin(g1) * a)


@pytest.mark.slow
@needs_jax
def test_gradient_with_second_order_edges_on_the_jax_backend() -> None:
    """jnp.gradient takes no edge_order: np.gradient(..., edge_order=2) failed on the
    JAX backend (a TypeError inside jit).  s2s.backends.jax_numpy.gradient builds
    NumPy's second-order edges (uniform spacing and coordinates): its value is
    NumPy's, and the gradient through it the NumPy backend's (which finite
    differences check here too)."""
    from s2s.backends import jax_numpy

    r = np.random.default_rng(7)
    a, x = r.normal(size=(5, 6)), np.cumsum(r.uniform(0.2, 1.0, size=6))
    for axis, spacing in ((0, 0.5), (1, x), (1, 2.0)):
        np.testing.assert_allclose(
            np.asarray(jax_numpy.gradient(jax.numpy.asarray(a), spacing, axis=axis,
                                          edge_order=2)),
            np.gradient(a, spacing, axis=axis, edge_order=2), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="at least"):  # (NumPy's error: 2 points)
        jax_numpy.gradient(jax.numpy.asarray(a[:2]), axis=0, edge_order=2)
    both = jax_numpy.gradient(jax.numpy.asarray(a), 0.5, x, edge_order=2)
    for got, want in zip(both, np.gradient(a, 0.5, x, edge_order=2)):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)
    want = s2s.grad(gradient_second_order_edges)(a, x)
    got = s2s.jit(s2s.grad(gradient_second_order_edges), backend="jax")(a, x)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-10, atol=1e-12)
    v = r.normal(size=a.shape)
    h = 1e-6
    fd = (gradient_second_order_edges(a + h * v, x)
          - gradient_second_order_edges(a - h * v, x)) / (2 * h)
    np.testing.assert_allclose(np.sum(want * v), fd, rtol=1e-6)


# ---- eig at repeated eigenvalues; sqrtm on the JAX backend --------------------------

REPEATED = {
    "identity": np.eye(3),
    "repeated_diagonal": np.diag([2.0, 2.0, 1.0]),
    "repeated_similar": (lambda p: p @ np.diag([2.0, 2.0, 1.0]) @ np.linalg.inv(p))(
        np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 1.0], [1.0, 0.0, 1.0]])),
}


@pytest.mark.slow
@needs_jax
@pytest.mark.parametrize("key", sorted(REPEATED))
def test_eig_at_repeated_eigenvalues_values_as_jax_vectors_nan(key) -> None:
    """JAX's eigenvectors' derivative is undefined at a repeated eigenvalue (its grad
    and jacfwd of eig raise); its eigvals' derivative is defined. s2s: eig's
    eigenvalues alone differentiate as eigvals (JAX's), in reverse and forward mode;
    eigenvectors read give NaN, not a made-up number."""
    a = REPEATED[key]
    want = np.asarray(jax.grad(twin_of(L.eigvals_only))(a))
    with np.errstate(divide="ignore", invalid="ignore"):
        np.testing.assert_allclose(s2s.grad(L.eig_values_only)(a), want, atol=1e-12)
        np.testing.assert_allclose(s2s.grad(L.eigvals_only)(a), want, atol=1e-12)
        np.testing.assert_allclose(s2s.jacfwd(L.eig_values_only)(a), want, atol=1e-12)
        assert np.isnan(s2s.grad(L.eig_vectors_read)(a)).any()
        b = a + np.diag([0.0, 1e-3, 2e-3])  # (distinct again: finite, as JAX's jvp)
        assert np.isfinite(s2s.grad(L.eig_vectors_read)(b)).all()


@needs_jax
@pytest.mark.parametrize("dtype, more", [(np.float64, False),
                                         pytest.param(np.float64, True, marks=pytest.mark.slow),
                                         pytest.param(np.float32, True, marks=pytest.mark.slow)])
def test_sqrtm_on_the_jax_backend(dtype, more) -> None:
    """jax.scipy.linalg.sqrtm returns a complex root; on s2s's JAX backend a real
    matrix's root is real, as SciPy's (the NumPy backend): the function itself and
    its grad (jacfwd and vmap of grad under -m slow), values changing between the
    1st, 3rd and 10th call."""
    fn = S.f_sqrtm
    pairs = [(fn, fn), (s2s.grad(fn), s2s.grad(fn))]
    if more:
        pairs += [(s2s.jacfwd(fn), s2s.jacfwd(fn)), (s2s.vmap(s2s.grad(fn)), None)]
    jitted = [(s2s.jit(f, backend="jax"), w) for f, w in pairs]
    tol = 1e-9 if dtype == np.float64 else 2e-3
    for call in range(1, 11):
        a = (R.normal(size=(3, 3)) * (0.3 + call / 20)).astype(dtype)  # (real roots)
        stacked = np.stack([a, 0.5 * a])
        got = [j(a) if w is not None else j(stacked) for j, w in jitted]
        if call not in (1, 3, 10):
            continue
        for g, (_, w) in zip(got, jitted):
            want = w(a) if w is not None else s2s.vmap(s2s.grad(fn))(stacked)
            # (jit of vmap of grad on JAX keeps float64 where the NumPy backend casts
            # to float32, for any function: s2s/api/jit_jax.py's, not sqrtm's)
            assert w is None or np.asarray(g).dtype == np.asarray(want).dtype
            np.testing.assert_allclose(np.asarray(g), want, rtol=tol, atol=tol)


@needs_jax
def test_sqrtm_of_a_matrix_without_a_real_root_on_the_jax_backend_is_nan() -> None:
    """SciPy's root of a real matrix with a negative eigenvalue is complex (a dtype
    decided by the values); on JAX, whose dtypes are decided before running, the real
    root s2s returns is NaN there rather than a wrong real number."""
    a = np.diag([4.0, -1.0])
    assert np.iscomplexobj(sl.sqrtm(a))
    got = s2s.jit(lambda_sqrtm_sum, backend="jax")(a)
    assert np.isnan(got)
    np.testing.assert_allclose(s2s.jit(lambda_sqrtm_sum, backend="jax")(np.diag([4.0, 1.0])),
                               3.0)


def lambda_sqrtm_sum(a):
    return np.sum(sl.sqrtm(a))
