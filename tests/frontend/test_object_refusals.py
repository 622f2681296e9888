"""Objects that s2s refused or returned in another type (issue 23, items 1-3), each
against JAX on the same source (tests/frontend/object_refusal_fns.py), float64 and
float32, over calls whose values change (the 1st, 3rd and 10th compared):

1. hessian/jacfwd/jacrev with respect to ``x`` of a function that also takes a
   NamedTuple whose class defines methods it calls (hessian raised NumPy's
   ValueError, jacfwd/jacrev refused ``self.w``), directly and through a callee the
   object is passed to;
2. ``s2s.grad(model.loss)`` reading an instance attribute and a class attribute
   through ``self``, both changed between calls, under every transform (vmap of the
   gradient raised an argnums TypeError; s2s.jit on JAX traced ``grad_seed``);
3. vmap of a function returning its NamedTuple argument (directly, in a tuple,
   through a callee) gives the NamedTuple, as JAX (was its plain dict)."""

from __future__ import annotations

from functools import partial

import numpy as np
import object_refusal_fns as F  # (pytest puts this directory on sys.path)
import pytest
from support import HAVE_JAX, assert_close_to, central_grad, compiled, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)

X = np.array([0.3, -0.7, 1.2])
close = partial(assert_close_to, f64=1e-9, f32=3e-4)
COMPARED = (0, 2, 9)  # (calls 1, 3 and 10)


def _point(dtype, k):
    x = (X * (1.0 + 0.3 * k) + 0.1 * k).astype(dtype)
    w = (np.array([0.1, 0.2, 0.3]) - 0.05 * k).astype(dtype)
    b = np.asarray(0.4 - 0.02 * k, dtype)
    return x, F.Params(w, b), J.Params(w, b)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["fit_loss", "calls_fit_loss"])
def test_jacobians_of_a_function_calling_a_namedtuples_methods(name, dtype):
    ours, theirs = getattr(F, name), getattr(J, name)
    hess, jf, jr = s2s.hessian(ours), s2s.jacfwd(ours), s2s.jacrev(ours)
    for k in range(10):
        x, p, jp = _point(dtype, k)
        got = hess(x, p)
        if k in COMPARED:
            close(got, jax.hessian(theirs)(x, jp), dtype)
            close(jf(x, p), jax.jacfwd(theirs)(x, jp), dtype)
            close(jr(x, p), jax.jacrev(theirs)(x, jp), dtype)
    x, p, jp = _point(dtype, 4)
    v = (X[::-1] + 0.5).astype(dtype)
    close(s2s.grad(ours)(x, p), jax.grad(theirs)(x, jp), dtype)
    close(s2s.value_and_grad(ours)(x, p), jax.value_and_grad(theirs)(x, jp), dtype)
    close(s2s.jvp(ours, (x, p), (v, F.Params(0 * p.w, 0 * p.b))),
          jax.jvp(theirs, (x, jp), (v, J.Params(0 * p.w, 0 * p.b))), dtype)
    batch = np.stack([x, 0.5 * x, x[::-1]])
    close(s2s.vmap(s2s.grad(ours), in_axes=(0, None))(batch, p),
          jax.vmap(jax.grad(theirs), in_axes=(0, None))(batch, jp), dtype)
    close(s2s.jit(s2s.hessian(ours))(x, p), jax.hessian(theirs)(x, jp), dtype)
    close(s2s.jit(s2s.hessian(ours), backend="jax")(x, p),
          compiled(jax.hessian(theirs))(x, jp), dtype)
    close(s2s.jit(s2s.jacfwd(ours), backend="jax")(x, p),
          compiled(jax.jacfwd(theirs))(x, jp), dtype)
    close(s2s.jit(s2s.jacrev(ours))(x, p), jax.jacrev(theirs)(x, jp), dtype)


def test_default_tier_against_central_differences():
    """The default tier's share (the JAX comparisons above, the hessians and the
    caller's Jacobians are slow): jacfwd of the function, and the gradient of a method
    whose attributes change, against central differences of the NumPy code itself."""
    jf = s2s.jacfwd(F.fit_loss)
    for k in (0, 2):  # (a second call: the code reused)
        x, p, _ = _point(np.float64, k)
        np.testing.assert_allclose(jf(x, p), central_grad(lambda t: F.fit_loss(t, p), x),
                                   rtol=1e-6, atol=1e-8)
    m = F.Model(X.copy())
    grad, vmapped = s2s.value_and_grad(m.loss), s2s.vmap(s2s.grad(m.loss))
    try:
        for k in range(3):
            m.scale, F.Model.BIAS = X * (k + 1.0), 0.5 + k
            x = X + 0.2 * k
            value, g = grad(x)
            assert value == pytest.approx(m.loss(x), rel=1e-12)
            np.testing.assert_allclose(g, central_grad(m.loss, x), rtol=1e-7, atol=1e-9)
            np.testing.assert_allclose(vmapped(np.stack([x, x])),
                                       np.stack([g, g]), rtol=1e-12)
    finally:
        F.Model.BIAS = 0.5


@pytest.mark.slow
def test_a_vmapped_hessian_of_it_stays_located():
    """Not built: vmap of a hessian (or jacfwd) with the object unbatched (the
    Jacobian's code, read again, does not know the object's class): refused at the
    method's line."""
    x, p, _ = _point(np.float64, 0)
    with pytest.raises(s2s.errors.TransformError) as err:
        s2s.vmap(s2s.hessian(F.fit_loss), in_axes=(0, None))(np.stack([x, x]), p)
    assert err.value.loc.file == F.__file__, err.value
    assert "self.w" in err.value.loc.text, err.value


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_methods_class_and_instance_attributes_are_read_at_each_call(dtype):
    ours, theirs = F.Model(X.astype(dtype)), J.Model(X.astype(dtype))
    grad, vg = s2s.grad(ours.loss), s2s.value_and_grad(ours.loss)
    jit_np, jit_jax = s2s.jit(ours.loss), s2s.jit(s2s.grad(ours.loss), backend="jax")
    vmapped = s2s.vmap(s2s.grad(ours.loss))
    try:
        for k in range(10):
            scale = (X * (k + 1.0) - 0.1 * k).astype(dtype)
            ours.scale, theirs.scale = scale, scale  # (an instance attribute)
            F.Model.BIAS = J.Model.BIAS = 0.5 + k  # (a class attribute)
            x = (X + 0.2 * k).astype(dtype)
            got = (grad(x), vg(x), jit_np(x), jit_jax(x))
            if k in COMPARED:
                close(got[0], jax.grad(theirs.loss)(x), dtype)
                close(got[1], jax.value_and_grad(theirs.loss)(x), dtype)
                close(got[2], theirs.loss(x), dtype, check_dtype=False)
                close(got[3], jax.grad(theirs.loss)(x), dtype)
                batch = np.stack([x, 2 * x])
                close(vmapped(batch), jax.vmap(jax.grad(theirs.loss))(batch), dtype)
        v = X[::-1].astype(dtype)
        close(s2s.jvp(ours.loss, (x,), (v,)), jax.jvp(theirs.loss, (x,), (v,)), dtype)
        close(s2s.vmap(ours.loss)(batch), jax.vmap(theirs.loss)(batch), dtype)
        close(s2s.hessian(ours.loss)(x), jax.hessian(theirs.loss)(x), dtype)
        close(s2s.jacfwd(ours.loss)(x), jax.jacfwd(theirs.loss)(x), dtype)
        close(s2s.jit(ours.loss, backend="jax")(x), theirs.loss(x), dtype,
              check_dtype=False)
        ours.BIAS = theirs.BIAS = -3.0  # (now an instance attribute shadowing it)
        close(vg(x), jax.value_and_grad(theirs.loss)(x), dtype)
    finally:
        F.Model.BIAS = J.Model.BIAS = 0.5


@pytest.mark.slow
def test_a_module_objects_attributes_as_a_callee_reads_them():
    grad = s2s.grad(F.module_model_loss)
    try:
        for k in range(10):
            F.MODEL.scale = J.MODEL.scale = X * (1.0 + k)
            F.Model.BIAS = J.Model.BIAS = 0.5 - k
            x = X + 0.1 * k
            got = grad(x)
            if k in COMPARED:
                close(got, jax.grad(J.module_model_loss)(x), np.float64)
                close(s2s.jit(s2s.grad(F.module_model_loss), backend="jax")(x),
                      jax.grad(J.module_model_loss)(x), np.float64)
    finally:
        F.MODEL.scale = J.MODEL.scale = np.array([1.0, 2.0, 3.0])
        F.Model.BIAS = J.Model.BIAS = 0.5


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_vmap_returns_a_namedtuple_argument_in_its_type(dtype):
    f = s2s.vmap(F.returns_argument)
    pairs = s2s.vmap(F.returns_argument_and_value)
    through = s2s.vmap(F.calls_returns_argument)
    for k in range(10):
        a = np.stack([X, X * (k + 1.0), X - k]).astype(dtype)
        b = np.stack([X[::-1], X + k, 2 * X]).astype(dtype)
        got = (f(F.Pair(a, b)), pairs(F.Pair(a, b), b), through(F.Pair(a, b), a))
        assert type(got[0]) is F.Pair and type(got[1][0]) is F.Pair
        assert type(got[2][0]) is F.Pair
        if k in COMPARED:
            jp = J.Pair(a, b)
            close(got[0], jax.vmap(J.returns_argument)(jp), dtype)
            close(got[1], jax.vmap(J.returns_argument_and_value)(jp, b), dtype)
            close(got[2], jax.vmap(J.calls_returns_argument)(jp, a), dtype)
            got[0].a[0, 0] = 99.0  # (the caller writes into a result...)
            assert a[0, 0] != 99.0 or k == 0 and X[0] == 99.0  # (...not its input)
    built = s2s.vmap(F.returns_built)(F.Pair(a, b))
    assert type(built) is F.Pair
    close(built, jax.vmap(J.returns_built)(J.Pair(a, b)), dtype)
    for backend in ("numpy", "jax"):
        out = s2s.jit(s2s.vmap(F.returns_argument_and_value), backend=backend)(
            F.Pair(a, b), b)
        assert type(out[0]) is F.Pair, (backend, out)
        close(out, jax.vmap(J.returns_argument_and_value)(J.Pair(a, b), b), dtype)
