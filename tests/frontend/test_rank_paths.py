"""An `if` whose branches give a value different ranks (``y = x * 2.0`` on one path,
``y = np.sum(x)`` on the other), under ``jacrev``, ``jacfwd``, ``hessian`` and the
transforms that batch the function's code over a basis (docs/python-subset.md,
"Control flow").  The batched code is made for the ranks the probe's example saw;
a call taking the other path of such an `if` (its test not batched) runs code made
for that path (each path's code is made on its first call), never the first path's.
Every expected value comes from JAX on the same source (``jax_twin``), float64 and
float32, both call orders (path A then B, B then A), the 1st, 3rd and 10th calls of
one transform object (the 3rd runs specialized code where there is any: tests/
conftest.py's S2S_SPECIALIZE=sync).  Under ``vmap`` of a batched test (JAX refuses:
a traced `if`) the ranks cannot be joined per example: refused, located."""

from __future__ import annotations

import rank_path_fns as F  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)

# the test points: A takes the first path of every `if` (x[0], x[1], sum(x) > 0;
# three_ranks's x[0] > 1 too), B the last, C the middle of three_ranks's
A = np.array([1.3, 0.5, 1.0])
B = np.array([-1.3, -0.5, 0.2])
C = np.array([0.4, -0.5, 0.7])
NAMES = ["vec_or_sum", "dict_if_ranks", "tuple_if_ranks", "matrix_or_vector",
         "three_ranks", "two_tests", "vector_out", "in_loop", "via_callee",
         "callee_both_paths", "callee_in_loop"]
TRANSFORMS = ["jacrev", "jacfwd", "hessian", "jvp_of_grad", "grad"]


def _orders(name):
    """Call sequences of ten: which point each call takes."""
    if name == "three_ranks":
        return {"ABC": "ABCCBAACBA", "CBA": "CBAABCCABC"}
    if name == "two_tests":  # (x[0] and x[1] of D differ in sign)
        return {"AB": "ABDDBAADBA", "DB": "DBAABDDABD"}
    return {"AB": "ABBABAABAB", "BA": "BAABABBABA"}


POINTS = {"A": A, "B": B, "C": C, "D": np.array([0.9, -0.6, 0.3])}


def _s2s(transform, f):
    if transform == "jvp_of_grad":
        g = s2s.grad(f)
        return lambda x: s2s.jvp(g, (x,), (np.cos(x),))[1]
    return getattr(s2s, transform)(f)


def _jax(transform, f):
    if transform == "jvp_of_grad":
        return lambda x: jax.jvp(jax.grad(f), (x,), (np.cos(x),))[1]
    return getattr(jax, transform)(f)


def _tol(dtype):
    return dict(rtol=1e-10, atol=1e-12) if dtype == np.float64 else dict(rtol=2e-5, atol=2e-5)


# an `if` in a loop takes a path per iteration: one batched code per call cannot
# follow it (JAX takes it: its trace unrolls the loop); refused, located
# (jacrev of in_loop gave wrong Jacobians on main, silently, when the first call took
# the scalar path: [16.4, 13.2, 15.2] where JAX gives [11.96, 4.6, 9.2] at A * 1.15)
REFUSED = {("in_loop", "jacfwd"), ("in_loop", "hessian"), ("in_loop", "jacrev"),
           ("callee_in_loop", "jacfwd"), ("callee_in_loop", "hessian")}
# jacrev of a callee's such `if` in a loop: refused where the probe's example gives the
# batched code a rank it reads on the other path (A first), right where it does not
RIGHT_OR_REFUSED = {("callee_in_loop", "jacrev")}


def _located(err: s2s.TransformError) -> None:
    text = str(err)
    assert f'File "{F.__file__}", line ' in text and "<s2s" not in text, text
    assert "other path of its `if`" in text, text


def _check(name, transform, order, dtype, calls=(1, 3, 10)):
    f, fj = getattr(F, name), getattr(J, name)
    if (name, transform) in REFUSED:
        for key in _orders(name)[order][:2]:
            with pytest.raises(s2s.TransformError) as info:
                _s2s(transform, f)(POINTS[key].astype(dtype))
            _located(info.value)
        return
    if transform not in ("jacrev", "jacfwd") and name == "vector_out":
        pytest.skip("a vector output: its Jacobians only")
    ours, theirs = _s2s(transform, f), _jax(transform, fj)
    seen = {}
    for call, key in enumerate(_orders(name)[order], 1):
        x = (POINTS[key] * (1.0 + 0.05 * call)).astype(dtype)
        if (name, transform) in RIGHT_OR_REFUSED:
            try:
                got = ours(x)
            except s2s.TransformError as err:
                _located(err)
                ours = _s2s(transform, f)  # (a new object: the next call's probe)
                continue
        else:
            got = ours(x)
        if call not in calls:
            continue
        expected = theirs(x)
        assert np.asarray(got).dtype == np.asarray(expected).dtype, (got, expected)
        tol = _tol(dtype)  # (float32: JAX's own error, vs float64, grows with the values)
        tol["atol"] *= max(1.0, float(np.max(np.abs(expected), initial=0.0)))
        np.testing.assert_allclose(got, expected, **tol, err_msg=f"call {call}")
        got[...] = np.nan  # (no later result may share it)
        seen[key] = True
    assert len(seen) >= (1 if (name, transform) in RIGHT_OR_REFUSED else 2)  # (both paths)


def _central(f, x, eps=1e-6):
    return np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(x.size)])


def test_default_tier_dict_if_ranks_jacrev() -> None:
    """The issue's case (jacrev gave [2.2, 3.4, 4.6] where JAX gives [1.4, 1.8, 2.2]
    on the path the first call did not take), both orders, four calls each,
    float64, against central differences; the sweep below runs every case against
    JAX."""
    for order in ("ABBA", "BAAB"):
        for name in ("dict_if_ranks",):
            jac = s2s.jacrev(getattr(F, name))
            for call, key in enumerate(order, 1):
                x = POINTS[key] * (1.0 + 0.05 * call)
                np.testing.assert_allclose(jac(x), _central(getattr(F, name), x),
                                           rtol=1e-6, atol=1e-8, err_msg=f"call {call}")


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("first", [0, 1], ids=["A_first", "B_first"])
def test_rank_changing_if_against_jax(name, transform, first, dtype) -> None:
    order = list(_orders(name))[first]
    _check(name, transform, order, dtype)


def test_grad_of_a_product_of_two_rank_changing_joins() -> None:
    """Plain reverse mode: ``a * b`` where ``a`` is a vector on one path of its `if`
    and a scalar on the other (``b`` likewise): the analysis took a join bound on
    two paths for a scalar when the path analysed last made it one, and dropped the
    unbroadcast of its cotangent (grad(two_tests) gave [45.9, 14.3, 92.1] where JAX
    gives [71.5, 27.5, 110.0]; three_ranks raised NumPy's error from emitted code).
    Central differences here; JAX in the sweep above."""
    for name in ("two_tests", "three_ranks"):
        g = s2s.grad(getattr(F, name))
        for key in "ABCD":
            x = POINTS[key]
            np.testing.assert_allclose(g(x), _central(getattr(F, name), x), rtol=1e-6,
                                       atol=1e-8)


W = np.stack([np.array([0.5, 1.0, 2.0]), np.array([-1.0, 0.3, 0.7])])


def test_default_tier_vmap_over_an_unbatched_test() -> None:
    """The sweep below against JAX; here the Python loop over the examples."""
    v = s2s.vmap(F.weighted, in_axes=(None, 0))
    for call, key in enumerate("ABBA", 1):
        x = POINTS[key] * (1.0 + 0.05 * call)
        np.testing.assert_allclose(v(x, W), [F.weighted(x, w) for w in W], rtol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_vmap_over_an_unbatched_test(dtype) -> None:
    """``vmap(f, in_axes=(None, 0))``: the test reads the unbatched ``x`` (JAX takes
    it: its test is concrete), so every example takes one path; each path's code,
    both orders, against JAX; vmap(grad) too."""
    w = W.astype(dtype)
    v = s2s.vmap(F.weighted, in_axes=(None, 0))
    vg = s2s.vmap(s2s.grad(F.weighted), in_axes=(None, 0))
    vj = jax.vmap(J.weighted, in_axes=(None, 0))
    vgj = jax.vmap(jax.grad(J.weighted), in_axes=(None, 0))
    for call, key in enumerate("ABBABAABAB" if dtype == np.float64 else "BAAB", 1):
        x = (POINTS[key] * (1.0 + 0.05 * call)).astype(dtype)
        for ours, theirs in ((v, vj), (vg, vgj)):
            got, expected = ours(x, w), theirs(x, w)
            assert got.dtype == expected.dtype
            np.testing.assert_allclose(got, expected, **_tol(dtype))


def test_vmap_of_vmap_over_an_unbatched_test() -> None:
    """``vmap(vmap(f, in_axes=(None, 0)), in_axes=(None, 0))``: the inner vmap's code
    is made per path too (its guard a check the outer vmap keeps), both orders,
    against the Python loop over the examples; ``s2s.jit`` of it on NumPy too."""
    w = np.stack([W, W[::-1] * 1.5])
    for order in ("ABBA", "BAAB"):
        vv = s2s.vmap(s2s.vmap(F.weighted, in_axes=(None, 0)), in_axes=(None, 0))
        jvv = s2s.jit(vv)
        for call, key in enumerate(order, 1):
            x = POINTS[key] * (1.0 + 0.05 * call)
            want = [[F.weighted(x, row) for row in m] for m in w]
            np.testing.assert_allclose(vv(x, w), want, rtol=1e-12)
            np.testing.assert_allclose(jvv(x, w), want, rtol=1e-12)


@pytest.mark.parametrize("name", ["vec_or_sum", "dict_if_ranks", "tuple_if_ranks"])
def test_vmap_over_a_batched_test_is_refused_located(name) -> None:
    """With the test batched both paths run and ``np.where`` joins them per example:
    one array cannot hold a rank per example (JAX refuses too: a traced `if`)."""
    for f in (getattr(F, name), s2s.grad(getattr(F, name))):
        with pytest.raises(s2s.TransformError) as info:
            s2s.vmap(f)(np.stack([A, B]))
        _located(info.value)
        assert "its test is batched" in str(info.value)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_composed_and_jitted(dtype) -> None:
    """``s2s.jit(jacrev)`` (numpy backend) and ``hessian`` under it through the paths
    in both orders, against JAX; the code shows the guard; ``jacfwd(jacrev)`` and
    ``jacrev(jacrev)`` (the `if` in the Jacobian's loop over its basis) and
    ``s2s.jit(vmap, backend="jax")`` of a traced test refused, located; ``s2s.jit(vmap)`` on NumPy
    runs each path's code."""
    for order in ("ABBA", "BAAB"):
        jj = s2s.jit(s2s.jacrev(F.vec_or_sum))
        jh = s2s.jit(s2s.hessian(F.dict_if_ranks))
        for key in order:
            x = POINTS[key].astype(dtype)
            for ours, theirs in ((jj, jax.jacrev(J.vec_or_sum)),
                                 (jh, jax.hessian(J.dict_if_ranks))):
                tol = _tol(dtype)
                tol["atol"] *= 10
                np.testing.assert_allclose(ours(x), theirs(x), **tol)
    # s2s.jit(vmap) on NumPy runs the vmap's code per path (each made by its call);
    # on JAX the test reads `x`, a value JAX traces: refused, located at the `if` (with
    # a test the trace knows, code per path there too: test_jit_traced_jax.py)
    jv = s2s.jit(s2s.vmap(F.weighted, in_axes=(None, 0)))
    for key in "ABBA":
        x, w = POINTS[key].astype(dtype), W.astype(dtype)
        got, expected = jv(x, w), jax.vmap(J.weighted, in_axes=(None, 0))(x, w)
        assert got.dtype == expected.dtype
        np.testing.assert_allclose(got, expected, **_tol(dtype))
    with pytest.raises(s2s.TransformError) as info:
        s2s.jit(s2s.vmap(F.weighted, in_axes=(None, 0)), backend="jax")(A, W.astype(dtype))
    text = str(info.value)
    assert f'File "{F.__file__}", line ' in text and "<s2s" not in text, text
    assert "paths give a value different ranks per example" in text, text
    for outer in (s2s.jacfwd, s2s.jacrev):  # (vmap of the Jacobian's loop over its
        with pytest.raises(s2s.TransformError) as info:  # basis: the `if` in a loop)
            outer(s2s.jacrev(F.vector_out))(A.astype(dtype))
        _located(info.value)
    jac = s2s.jacrev(F.vec_or_sum)
    jac(A)
    assert 'raise OtherPath("sum_x_greater_0", False)' in jac.source, jac.source


@pytest.mark.slow
def test_edge_inputs_and_threads() -> None:
    """Size-1 and 0-size `x` (its rank still differs between the paths), NaN and inf
    (NaN takes the `else`), against JAX; four threads calling one jacrev object
    through the four paths of two_tests (its variants are made and reordered
    concurrently)."""
    import threading
    import warnings

    for x in (np.array([0.7]), np.array([-0.7]), np.zeros(0), np.array([np.nan, 1.0, 2.0]),
              np.array([np.inf, 1.0, -2.0])):
        for transform in ("jacrev", "jacfwd", "hessian"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # (inf - inf: NumPy's)
                got = getattr(s2s, transform)(F.vec_or_sum)(x)
            expected = getattr(jax, transform)(J.vec_or_sum)(x)
            assert np.shape(got) == np.shape(expected)
            np.testing.assert_allclose(got, expected, rtol=1e-12, equal_nan=True)
    jac = s2s.jacrev(F.two_tests)
    points = [A, B, POINTS["D"], np.array([-0.9, 0.6, 0.3])]
    expected = [np.asarray(jax.jacrev(J.two_tests)(p)) for p in points]
    wrong = []

    def work(k):
        for r in range(40):
            i = (k + r) % 4
            if not np.allclose(jac(points[i]), expected[i], rtol=1e-12):
                wrong.append(i)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not wrong
