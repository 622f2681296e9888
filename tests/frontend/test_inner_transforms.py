"""Transforms and vmaps written inside the transformed function (issue 23, item 3's
last refusals): a transform of a transform (``s2s.grad(s2s.grad(f))``,
``s2s.jacfwd(s2s.grad(f))``, ``s2s.vmap(s2s.grad(f))``), of a ``functools.partial``,
of a function chosen by a test; under vmap and the Jacobians, a function chosen by a
run-time test on a path the probe did not take; a body vmap over an empty batch.

Every expected value comes from JAX on the same source with JAX's transforms inside
(``jax_twin``), or, where JAX cannot trace the code (a Python ``if`` on a value under
vmap/jit), from JAX's grad example by example (which runs the ``if`` on concrete
values) and a Python loop; float64 and float32."""

from __future__ import annotations

import inspect
from functools import partial

import inner_transform_fns as F  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX, assert_close_to, fd_grad, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import function_idiom_fns as G
    import jax
    import jax.numpy as jnp

    J = jax_twin(F)
    for _name in ("grad", "jacfwd", "jacrev", "vmap", "value_and_grad", "jvp"):
        setattr(F, f"s2s_{_name}", getattr(s2s, _name))
        setattr(J, f"s2s_{_name}", getattr(jax, _name))
    GJ = jax_twin(G)
    G.s2s_vmap, GJ.s2s_vmap = s2s.vmap, jax.vmap

NESTED = ["grad_of_grad", "grad_of_grad_lambda", "jacfwd_of_grad", "jacrev_of_grad",
          "jvp_of_grad", "vmap_of_grad", "grad_of_partial", "grad_of_partial_positional",
          "grad_of_module_partial", "grad_of_static_choice", "value_and_grad_of_partial",
          "callee_of_all"]


def default(cases, keep):
    """``cases`` with those not in ``keep`` under ``-m slow`` (the default tier runs a
    few seconds; its tests are marked every_case so conftest does not sample again)."""
    return [c if c in keep else pytest.param(
        *(c if isinstance(c, tuple) else (c,)), marks=pytest.mark.slow) for c in cases]


X = np.array([0.3, -0.7, 1.2])
V = np.array([1.0, -2.0, 0.5])
BATCH = np.array([[0.3, -0.7, 1.2], [0.1, 0.4, -0.9]])
DTYPES = [np.float64, np.float32]


close = partial(assert_close_to, f64=1e-8, f32=5e-4, check_dtype=False)


# ---- 1. a transform of a transform, of a partial, of a choice ------------------------


@pytest.mark.slow
@pytest.mark.every_case
@pytest.mark.parametrize("name, dtype", default(
    [(n, d) for n in NESTED for d in DTYPES],
    {("grad_of_grad", np.float64)}))
def test_grad_value_and_grad_vjp_and_jvp(name, dtype) -> None:
    """The outer grad of ``grad_of_grad`` is a third derivative."""
    x, v = X.astype(dtype), V.astype(dtype)
    ours, theirs = getattr(F, name), getattr(J, name)
    close(ours(x), theirs(x), dtype)
    close(s2s.grad(ours)(x), jax.grad(theirs)(x), dtype)
    close(s2s.value_and_grad(ours)(x), jax.value_and_grad(theirs)(x), dtype)
    out, pullback = s2s.vjp(ours, x)
    their_out, their_pullback = jax.vjp(theirs, x)
    close(pullback(np.ones_like(out)), their_pullback(jnp.ones_like(their_out)), dtype)
    close(s2s.jvp(ours, (x,), (v,)), jax.jvp(theirs, (x,), (v,)), dtype)


@pytest.mark.every_case
@pytest.mark.parametrize("name", default(NESTED, set()))  # (JAX compiles: slow)
def test_jacobians_vmap_and_jit(name) -> None:
    ours, theirs = getattr(F, name), getattr(J, name)
    close(s2s.jit(ours)(X), theirs(X), np.float64)
    close(s2s.jacfwd(ours)(X), jax.jacfwd(theirs)(X), np.float64)
    close(s2s.hessian(ours)(X), jax.hessian(theirs)(X), np.float64)
    close(s2s.vmap(ours)(BATCH), jax.vmap(theirs)(BATCH), np.float64)
    close(s2s.vmap(s2s.grad(ours))(BATCH), jax.vmap(jax.grad(theirs))(BATCH), np.float64)
    close(s2s.jacrev(ours)(X), jax.jacrev(theirs)(X), np.float64)
    close(s2s.jit(ours, backend="jax")(X), jax.jit(theirs)(X), np.float64)
    close(s2s.jit(s2s.grad(ours), backend="jax")(X), jax.grad(theirs)(X), np.float64)


@pytest.mark.slow
def test_calls_1_3_10_and_the_emitted_code() -> None:
    """Values change between calls; the third derivative's code reads as nested
    callees (``cube_sin_grad_grad``)."""
    g = s2s.grad(F.grad_of_grad)
    for call in range(10):
        x = X * (1.0 + 0.3 * call) * (-1) ** call
        if call in (0, 2, 9):
            close(g(x), jax.grad(J.grad_of_grad)(x), np.float64)
    assert "def grad_of_grad_grad" in g.source and "cube_sin" in g.source, g.source


def test_a_lambda_default_before_its_captured_values() -> None:
    """``lambda t, k=2.0: ...`` reading ``a`` of the enclosing function: the call
    passes ``k``'s default before ``a`` (it used to give ``k`` the value of ``a``)."""
    def f(x):
        a = np.cos(x)
        return np.sum(s2s.grad(lambda t, k=2.0: np.sum(t * k * a))(x))

    def fj(x):
        a = jnp.cos(x)
        return jnp.sum(jax.grad(lambda t, k=2.0: jnp.sum(t * k * a))(x))

    close(s2s.grad(f)(X), jax.grad(fj)(X), np.float64)


@pytest.mark.slow
def test_a_transform_of_a_choice_by_a_run_time_test() -> None:
    """``s2s.grad(f if c else g)`` is ``s2s.grad(f) if c else s2s.grad(g)``: against
    JAX's grad (which runs the ``if`` on concrete values) at points on each path,
    calls 1 to 10 alternating; vmap (both paths in one batch) against a loop."""
    g = s2s.grad(F.grad_of_run_time_choice)
    for call in range(10):
        x = X * (1 + call) * 0.4 * (1 if call % 3 else -1)
        close(g(x), jax.grad(J.grad_of_run_time_choice)(x), np.float64)
    batch = np.concatenate([BATCH, -BATCH])
    close(s2s.vmap(F.grad_of_run_time_choice)(batch),
          np.stack([J.grad_of_run_time_choice(x) for x in batch]), np.float64)
    close(s2s.vmap(g)(batch), np.stack([jax.grad(J.grad_of_run_time_choice)(x)
                                        for x in batch]), np.float64)


@pytest.mark.slow
def test_two_transforms_of_one_function_in_two_callees() -> None:
    """``jacrev(grad(energy))`` and ``vmap(grad(energy))`` in two callees emit two
    ``energy_grad``s: grad runs (against JAX); jacrev and hessian, which put the
    callees' code in one module, run (against JAX) or refuse, naming the clash at the
    user's line (not built)."""
    ours, theirs = F.two_transforms_of_one_function, J.two_transforms_of_one_function
    close(s2s.grad(ours)(X), jax.grad(theirs)(X), np.float64)
    for jac, theirs_jac in ((s2s.jacrev, jax.jacrev), (s2s.hessian, jax.hessian)):
        try:  # (which emitted `energy_grad` each callee holds depends on what ran first)
            got = jac(ours)(X)
        except s2s.TransformError as err:
            assert "energy_grad" in str(err) and f'File "{F.__file__}", line ' in str(
                err), str(err)
        else:
            close(got, theirs_jac(theirs)(X), np.float64)


def test_refusals_name_the_users_line() -> None:
    def given_a_number(x):
        return s2s.grad(3.0)(x)

    def options_not_constant(x):
        return np.sum(s2s.grad(F.energy, argnums=int(x[0]))(x))

    for fn in (given_a_number, options_not_constant):
        with pytest.raises(s2s.TransformError) as info:
            s2s.grad(fn)(X)
        assert __file__ in str(info.value), str(info.value)


# ---- 2. a function chosen by a run-time test, on a path the probe did not take -------

CHOSEN = ["choice_by_value", "bound_on_a_branch", "nan_on_the_other_path"]


def _loop(fn, batch):
    return np.stack([fn(x) for x in batch]) if len(batch) else np.zeros((0,))


@pytest.mark.every_case
@pytest.mark.parametrize("name, dtype", default(
    [(n, d) for n in CHOSEN for d in DTYPES], {("nan_on_the_other_path", np.float32)}))
def test_vmap_selects_per_example(name, dtype) -> None:
    """Both paths' calls run on the batch and np.where selects per example (JAX's
    vmap cannot trace the ``if``): the value and the gradient against JAX example by
    example, with the path changing across the examples of one batch and between
    calls; batches of 1 and n."""
    ours, theirs = getattr(F, name), getattr(J, name)
    f, g = s2s.vmap(ours), s2s.vmap(s2s.grad(ours))
    for call, batch in enumerate((np.concatenate([BATCH, -BATCH]), -BATCH[:1] - 1.0,
                                  BATCH + 2.0, np.abs(BATCH) + 0.1, -BATCH)):
        batch = batch.astype(dtype)
        with np.errstate(invalid="ignore"):  # (sqrt of the other path's negatives)
            got, grads = f(batch), g(batch)
        close(got, np.stack([theirs(x) for x in batch]), dtype)
        close(grads, np.stack([jax.grad(theirs)(x) for x in batch]), dtype)
        assert np.all(np.isfinite(got)) and np.all(np.isfinite(grads)), (call, got, grads)
        assert got.dtype == dtype and grads.dtype == dtype


@pytest.mark.slow
@pytest.mark.every_case
@pytest.mark.parametrize("name", default(CHOSEN, {"bound_on_a_branch"}))
def test_the_jacobians_at_points_on_each_path(name) -> None:
    """jacfwd, jacrev and hessian batch through vmap, whose probe runs at the point:
    a callee on the other path is batched on arguments computed from its values
    (``w = 2.0 * x`` before ``act(x)``); the point alternates paths, calls 1 to 10."""
    ours, theirs = getattr(F, name), getattr(J, name)
    jf, jr, h = s2s.jacfwd(ours), s2s.jacrev(ours), s2s.hessian(ours)
    for call in range(10):
        x = (np.abs(X) + 0.2 * call) * (1 if call % 2 else -1)
        if call in (0, 1, 2, 9):
            close(jf(x), jax.grad(theirs)(x), np.float64)
            close(jr(x), jax.grad(theirs)(x), np.float64)
            close(h(x), jax.hessian(theirs)(x), np.float64)


def test_nan_on_the_other_path_and_what_jax_does() -> None:
    """s2s selects each example's own path, so the other path's NaN (np.sqrt of a
    negative) reaches neither value nor gradient; JAX's vmap of a ``lax.cond`` agrees,
    and the same selection written with ``jnp.where`` gives NaN gradients (its
    cotangent 0 times the other branch's NaN derivative)."""
    batch = np.array([[0.5, 1.0, 2.0], [-0.5, 1.0, 2.0]])
    with np.errstate(invalid="ignore"):
        grads = s2s.vmap(s2s.grad(F.nan_on_the_other_path))(batch)

    def by_cond(x):
        return jax.lax.cond(jnp.min(x) > 0, lambda y: jnp.sum(jnp.sqrt(y) * y),
                            lambda y: jnp.sum(jnp.sin(y) * y), x)

    def by_where(x):
        return jnp.sum(jnp.where(jnp.min(x) > 0, jnp.sqrt(x), jnp.sin(x)) * x)

    close(grads, jax.vmap(jax.grad(by_cond))(batch), np.float64)
    assert np.all(np.isfinite(grads))
    assert np.isnan(jax.vmap(jax.grad(by_where))(batch)[1]).any()


def test_a_batch_of_none_and_of_one() -> None:
    ours = F.choice_by_value
    close(s2s.vmap(ours)(-BATCH[:1]), _loop(ours, -BATCH[:1]), np.float64)
    close(s2s.vmap(s2s.grad(ours))(BATCH[:1]),
          np.stack([fd_grad(ours, (x,), 0)[0] for x in BATCH[:1]]), np.float64)


# ---- 3. a body vmap over an empty batch ----------------------------------------------

EMPTY = ["vmap_over_rows", "vmap_pairs_over_rows", "vmap_over_columns"]


def _empty(name):
    return np.zeros((3, 0)) if name == "vmap_over_columns" else np.zeros((0, 3))


@pytest.mark.every_case
@pytest.mark.parametrize("name, dtype", default(
    [(n, d) for n in EMPTY for d in DTYPES], {("vmap_over_rows", np.float32)}))
@pytest.mark.slow
def test_an_empty_batch_has_jax_vmaps_shape(name, dtype) -> None:
    """The stacked result is zeros of g's output shape with a 0-long batch axis (from
    s2s.eval_shape, never g on data), as jax.vmap's: the value, grad,
    value_and_grad, vjp, jvp and jit (NumPy and JAX) against JAX."""
    x, v, m = X.astype(dtype), V.astype(dtype), _empty(name).astype(dtype)
    ours, theirs = getattr(G, name), getattr(GJ, name)

    def summed(f):
        return lambda y, m: np.sum(f(y, m))

    close(s2s.jit(ours)(x, m), theirs(x, m), dtype)
    close(s2s.grad(summed(ours))(x, m), jax.grad(summed(theirs))(x, m), dtype)
    close(s2s.value_and_grad(summed(ours))(x, m),
          jax.value_and_grad(summed(theirs))(x, m), dtype)
    out, pullback = s2s.vjp(ours, x, m)
    their_out, their_pullback = jax.vjp(theirs, x, m)
    close(out, their_out, dtype)
    close(pullback(np.ones_like(out)), their_pullback(jnp.ones_like(their_out)), dtype)
    close(s2s.jvp(ours, (x, m), (v, np.zeros_like(m))),
          jax.jvp(theirs, (x, m), (v, jnp.zeros_like(m))), dtype)
    close(s2s.jit(ours, backend="jax")(x, m), jax.jit(theirs)(x, m), dtype)


@pytest.mark.slow
@pytest.mark.every_case
@pytest.mark.parametrize("name", default(EMPTY, {"vmap_over_columns"}))
def test_an_empty_batch_under_vmap_and_the_jacobians(name) -> None:
    """vmap, jacfwd, jacrev and vmap of grad against JAX, also where the body vmap's
    ``g`` has its own code under reverse mode (a lambda: its reverse loop runs no
    iteration, and the probe runs again with the empty axis one long to see it)."""
    m = _empty(name)
    ours, theirs = getattr(G, name), getattr(GJ, name)
    close(s2s.vmap(ours, in_axes=(0, None))(BATCH, m),
          jax.vmap(theirs, in_axes=(0, None))(BATCH, m), np.float64)
    close(s2s.jacfwd(ours)(X, m), jax.jacfwd(theirs)(X, m), np.float64)
    close(s2s.jacrev(ours)(X, m), jax.jacrev(theirs)(X, m), np.float64)
    close(s2s.vmap(s2s.grad(lambda y, m: np.sum(ours(y, m))), in_axes=(0, None))(BATCH, m),
          jax.vmap(jax.grad(lambda y, m: jnp.sum(theirs(y, m))), in_axes=(0, None))(
              BATCH, m), np.float64)


@pytest.mark.slow
def test_an_empty_batch_then_a_full_one() -> None:
    """One emitted function serves both: calls 1 to 10 change the batch size (0, 1,
    4 rows)."""
    g = s2s.grad(lambda y, m: np.sum(G.vmap_over_rows(y, m)))

    def expected(y, m):
        return jax.grad(lambda y, m: jnp.sum(GJ.vmap_over_rows(y, m)))(y, m)

    for call, rows in enumerate((0, 4, 1, 0, 3, 0, 1, 4, 2, 0)):
        m = np.arange(rows * 3).reshape(rows, 3) * 0.1 - 0.4
        close(g(X * (1 + call), m), expected(X * (1 + call), m), np.float64)


# ---- 4. a vmap kept as a value, passed to another function ---------------------------


@pytest.mark.slow
@pytest.mark.every_case
@pytest.mark.parametrize("name, dtype", default(
    [(n, d) for n in ("kept_vmap_passed_on", "kept_vmap_of_a_lambda_passed_on")
     for d in DTYPES], {("kept_vmap_passed_on", np.float32)}))
def test_a_kept_vmap_passed_to_another_function(name, dtype) -> None:
    """``h = s2s.vmap(g)`` then ``apply(h, x)`` whose body calls ``f(x)``: grad, jvp,
    vmap, the Jacobians and jit (NumPy and JAX) against JAX."""
    x, v = X.astype(dtype), V.astype(dtype)
    ours, theirs = getattr(F, name), getattr(J, name)
    close(ours(x), theirs(x), dtype)
    close(s2s.grad(ours)(x), jax.grad(theirs)(x), dtype)
    close(s2s.jvp(ours, (x,), (v,)), jax.jvp(theirs, (x,), (v,)), dtype)
    close(s2s.jit(ours)(x), theirs(x), dtype)
    close(s2s.vmap(ours)(BATCH.astype(dtype)), jax.vmap(theirs)(BATCH.astype(dtype)), dtype)
    if dtype == np.float64:
        close(s2s.jacrev(ours)(x), jax.jacrev(theirs)(x), dtype)
        close(s2s.hessian(ours)(x), jax.hessian(theirs)(x), dtype)
        close(s2s.jit(ours, backend="jax")(x), jax.jit(theirs)(x), dtype)
        close(s2s.jit(s2s.grad(ours), backend="jax")(x), jax.grad(theirs)(x), dtype)


def test_what_stays_refused_names_the_users_line() -> None:
    """A loop under an ``if`` on a batched value (vmap runs both branches as values):
    refused by vmap and by vmap of the gradient (whose code is emitted) at the user's
    ``if``, never at a line of emitted code; jacfwd (an unbatched ``if``) runs."""
    fn = F.loop_in_a_batched_branch
    lines, first = inspect.getsourcelines(fn)
    line = first + next(i for i, t in enumerate(lines) if "if np.sum(x) > 0:" in t)
    for run in (s2s.vmap(fn), s2s.vmap(s2s.grad(fn))):
        with pytest.raises(s2s.TransformError) as info:
            run(BATCH)
        assert f'File "{F.__file__}", line {line}' in str(info.value), str(info.value)
    x = np.abs(X)
    np.testing.assert_allclose(s2s.jacfwd(fn)(x), fd_grad(fn, (x,), 0)[0], rtol=1e-6)
