"""Complex numbers with JAX's conventions, end to end: real losses of complex
parameters under grad, value_and_grad, jvp, vjp, vmap and jit (on NumPy and on JAX),
holomorphic functions under grad, jacfwd, jacrev and hessian with holomorphic=True,
in complex128 and complex64.  Every expected value is JAX's on the same source."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import complex_fns as F  # noqa: E402
from support import compiled, jax_twin  # noqa: E402

import s2s  # noqa: E402

J = jax_twin(F)
R = np.random.default_rng(7)


def cnormal(*shape, dtype=np.complex128):
    return (R.normal(size=shape) + 1j * R.normal(size=shape)).astype(dtype)


def close(got, want, dtype=np.complex128):
    tol = {"rtol": 1e-10, "atol": 1e-10} if dtype in (np.complex128, np.float64) else {
        "rtol": 2e-4, "atol": 2e-4}
    got_l, want_l = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got_l) == len(want_l)
    for g, w in zip(got_l, want_l):
        assert np.shape(g) == np.shape(w)
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), **tol)


A = cnormal(4, 3)
CASES = {  # name -> (arguments, argnums)
    "least_squares": ((cnormal(3), A, cnormal(4)), 0),
    "fft_filter": ((cnormal(8), R.normal(size=(2, 8))), 0),
    "parts": ((cnormal(5),), 0),
    "literals": ((R.normal(size=3), 0.7), (0, 1)),
    "statistics": ((cnormal(2, 3),), 0),
    "mixed": ((R.normal(size=3), cnormal(3)), (0, 1)),
    "matrix": ((cnormal(3, 3) + 3 * np.eye(3), cnormal(3)), (0, 1)),
    "hermitian": ((cnormal(3, 3),), 0),
}


def sampled(names, keep=("least_squares", "parts")):
    """Every case with ``-m slow``; by default the ones in ``keep`` (JAX's compiles
    cost about a second a case)."""
    return [pytest.param(n, marks=[] if n in keep else [pytest.mark.slow]) for n in names]


def args_as(args, dtype):
    real = np.float32 if dtype == np.complex64 else np.float64
    return tuple(np.asarray(a, dtype=dtype if np.iscomplexobj(a) else real)
                 if isinstance(a, np.ndarray) else a for a in args)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("name", CASES)
def test_grad_of_a_real_loss_matches_jax(name, dtype):
    args, argnums = CASES[name]
    args = args_as(args, dtype)
    got = s2s.grad(getattr(F, name), argnums=argnums)(*args)
    want = compiled(jax.grad(getattr(J, name), argnums=argnums))(*args)
    close(got, want, dtype)
    for g, a in zip(jax.tree_util.tree_leaves(got),
                    [args[i] for i in np.atleast_1d(argnums)]):
        assert np.asarray(g).dtype == np.asarray(a).dtype  # complex in, complex out


@pytest.mark.parametrize("name", sampled(CASES, ("fft_filter",)))
def test_value_and_grad_third_call_and_caller_arrays(name):
    args, argnums = CASES[name]
    f = s2s.value_and_grad(getattr(F, name), argnums=argnums)
    before = [np.copy(a) for a in args]
    results = [f(*args) for _ in range(3)]  # the 3rd call runs the specialized code
    close(results[2], compiled(jax.value_and_grad(getattr(J, name), argnums=argnums))(*args))
    close(results[0], results[2])
    for a, b in zip(args, before):
        np.testing.assert_array_equal(a, b)  # s2s never writes into the caller's arrays


@pytest.mark.parametrize("name", sampled(CASES, ("literals",)))
def test_jvp_and_vjp_match_jax(name):
    args, _ = CASES[name]
    fn, twin = getattr(F, name), getattr(J, name)
    tangents = tuple(
        (cnormal(*np.shape(a)) if np.iscomplexobj(a) else R.normal(size=np.shape(a)))
        if isinstance(a, np.ndarray) else 0.3 for a in args)
    close(s2s.jvp(fn, args, tangents), jax.jvp(twin, args, tangents))
    out, pullback = s2s.vjp(fn, *args)
    j_out, j_pullback = jax.vjp(twin, *args)
    close(out, j_out)
    close(pullback(np.float64(1.5)), j_pullback(np.float64(1.5)))


def test_vjp_of_a_complex_output_takes_a_complex_cotangent():
    z = cnormal(4)
    ct = cnormal(4)
    out, pullback = s2s.vjp(F.holomorphic_vector, z)
    j_out, j_pullback = jax.vjp(J.holomorphic_vector, z)
    close(out, j_out)
    close(pullback(ct), j_pullback(ct))  # the transpose, without conjugation
    with pytest.raises((TypeError, ValueError)):
        pullback(np.ones(4))  # a real cotangent for a complex output, as JAX refuses


@pytest.mark.slow
def test_vmap_of_grad_matches_jax():
    zs = cnormal(3, 5)
    close(s2s.vmap(s2s.grad(F.parts))(zs), jax.vmap(jax.grad(J.parts))(zs))
    ws = cnormal(2, 3)
    close(s2s.vmap(s2s.grad(F.least_squares), in_axes=(0, None, None))(ws, A, CASES[
        "least_squares"][0][2]), jax.vmap(jax.grad(J.least_squares), in_axes=(0, None, None))(
        ws, A, CASES["least_squares"][0][2]))


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_jit_of_grad_matches_jax(backend):
    args, _ = CASES["fft_filter"]
    got = s2s.jit(s2s.grad(F.fft_filter), backend=backend)(*args)
    close(got, jax.jit(jax.grad(J.fft_filter))(*args))
    args, _ = CASES["least_squares"]
    got = s2s.jit(s2s.grad(F.least_squares), backend=backend)(*args)
    close(got, jax.grad(J.least_squares)(*args))


@pytest.mark.parametrize("dtype", [np.complex128, pytest.param(np.complex64,
                                                                marks=pytest.mark.slow)])
def test_holomorphic_transforms_match_jax(dtype):
    z = cnormal(3, dtype=dtype) + 2
    for fn in (s2s.grad, s2s.value_and_grad):
        close(fn(F.holomorphic, holomorphic=True)(z),
              getattr(jax, fn.__name__)(J.holomorphic, holomorphic=True)(z), dtype)
    for fn in ("jacfwd", "jacrev"):
        close(getattr(s2s, fn)(F.holomorphic_vector, holomorphic=True)(z),
              getattr(jax, fn)(J.holomorphic_vector, holomorphic=True)(z), dtype)
    close(s2s.hessian(F.holomorphic, holomorphic=True)(z),
          jax.hessian(J.holomorphic, holomorphic=True)(z), dtype)


def test_jacrev_of_a_real_function_of_complex_inputs_matches_jax():
    z = cnormal(3)
    close(s2s.jacrev(F.parts)(z), jax.jacrev(J.parts)(z))


@pytest.mark.parametrize("call, jax_call", [
    (lambda: s2s.grad(F.holomorphic)(cnormal(3)),
     lambda: jax.grad(J.holomorphic)(cnormal(3))),
    (lambda: s2s.grad(F.holomorphic, holomorphic=True)(np.ones(3)),
     lambda: jax.grad(J.holomorphic, holomorphic=True)(np.ones(3))),
    (lambda: s2s.grad(F.parts, holomorphic=True)(cnormal(3)),
     lambda: jax.grad(J.parts, holomorphic=True)(cnormal(3))),
    (lambda: s2s.jacfwd(F.holomorphic_vector)(cnormal(3)),
     lambda: jax.jacfwd(J.holomorphic_vector)(cnormal(3))),
    (lambda: s2s.jacrev(F.holomorphic_vector)(cnormal(3)),
     lambda: jax.jacrev(J.holomorphic_vector)(cnormal(3))),
    (lambda: s2s.jacrev(F.parts, holomorphic=True)(cnormal(3)),
     lambda: jax.jacrev(J.parts, holomorphic=True)(cnormal(3))),
    (lambda: s2s.hessian(F.parts)(cnormal(3)),
     lambda: jax.hessian(J.parts)(cnormal(3))),
], ids=["complex-output", "holomorphic-real-input", "holomorphic-real-output",
        "jacfwd-complex-input", "jacrev-complex-output", "jacrev-holomorphic-real-output",
        "hessian-complex-input"])
def test_refusals_are_jaxs(call, jax_call):
    with pytest.raises(TypeError) as ours:
        call()
    with pytest.raises(TypeError) as theirs:
        jax_call()
    first = str(theirs.value).split(". ")[0]
    assert first in str(ours.value)


def test_complex_builtin_matches_finite_differences():
    from support import fd_grad

    for b in (0.7, -1.3):
        got = s2s.grad(F.built)(b)
        np.testing.assert_allclose(got, fd_grad(F.built, (b,), 0)[0], rtol=1e-6)
        np.testing.assert_allclose(got, -6 * b + np.sqrt(5) * np.sign(b) + 1, rtol=1e-12)


def test_grad_code_reads_the_conventions():
    """The emitted gradient of |z|^2 multiplies by conj(z): JAX's conjugate
    convention, readable in the code."""
    text = s2s.source(s2s.grad(F.least_squares)) if s2s.grad(F.least_squares)(
        *CASES["least_squares"][0]) is not None else ""
    assert "np.conj(" in text


@pytest.mark.slow
def test_special_values_nan_and_zero():
    z = np.array([0j, 1 + 1j, np.nan + 0j])
    with np.errstate(all="ignore"):
        got = s2s.grad(F.parts)(z)
        want = jax.grad(J.parts)(z)
    np.testing.assert_allclose(got, np.asarray(want), equal_nan=True)
    empty = np.zeros(0, complex)
    close(s2s.grad(F.statistics)(np.ones(1, complex) * (1 + 2j)),
          jax.grad(J.statistics)(np.ones(1, complex) * (1 + 2j)))
    assert s2s.grad(F.parts)(empty).shape == (0,)


@pytest.mark.parametrize("name", sampled(("f_imag", "f_angle", "f_imag_attribute"),
                                         ("f_imag",)))
def test_second_order_through_complex_values_is_real_and_jaxs(name):
    """hessian of a real function of real inputs through complex intermediates: the
    emitted gradient carries an imaginary part JAX drops (a real input's cotangent
    is its real part); the Hessian is real and JAX's, and so is a vmapped gradient."""
    import rule_fns_complex as C

    CJ = jax_twin(C)
    x = np.array([0.5, -1.0, 2.0])
    got = s2s.hessian(getattr(C, name))(x)
    assert got.dtype == np.float64
    close(got, compiled(jax.hessian(getattr(CJ, name)))(x))
    xs = np.stack([x, x + 1])
    close(s2s.vmap(s2s.grad(getattr(C, name)))(xs),
          compiled(jax.vmap(jax.grad(getattr(CJ, name))))(xs))


@pytest.mark.parametrize("name", ["qr_loss", "svd_loss", "eigh_loss", "lstsq_loss",
                                  "corrcoef_loss"])
def test_rules_written_for_real_values_refuse_complex_ones(name):
    """qr, svd, eigh (vectors), lstsq and corrcoef: derivatives for real matrices only.
    On complex ones grad, jvp and vjp raise instead of returning a wrong number; on
    real ones they are JAX's."""
    rng = np.random.default_rng(7)
    a = rng.normal(size=(4, 3)) if name != "eigh_loss" else rng.normal(size=(3, 3))
    if name == "eigh_loss":
        a = a + a.T
    args = (a, rng.normal(size=4)) if name == "lstsq_loss" else (a,)
    f, jf = getattr(F, name), getattr(J, name)
    np.testing.assert_allclose(s2s.grad(f)(*args), jax.grad(jf)(*args), rtol=1e-8,
                               atol=1e-10)
    z = a + 0.3j * (rng.normal(size=a.shape) if name != "eigh_loss" else
                    np.triu(rng.normal(size=a.shape), 1) - np.triu(rng.normal(size=a.shape), 1).T)
    cargs = (z, *args[1:])
    with pytest.raises(TypeError, match="real values only"):
        s2s.grad(f)(*cargs)
    with pytest.raises(TypeError, match="real values only"):
        s2s.jvp(f, cargs, tuple(np.ones_like(c) for c in cargs))
    out, back = s2s.vjp(f, *cargs)
    with pytest.raises(TypeError, match="real values only"):
        back(np.ones_like(out))
