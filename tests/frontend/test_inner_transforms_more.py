"""Transforms and vmaps written inside the transformed function, once refused (issue
23, item 3; docs/python-subset.md): a body vmap over an empty batch whose ``g`` has its
own reverse-mode code (a lambda, a nested ``def``) under jacrev, hessian and vmap of a
gradient; a kept vmap of a lambda reading the making function's values, passed to
another function; ``s2s.jit(f, backend="jax")`` of a function calling
``s2s.grad(functools.partial(...))``; under vmap and the Jacobians, a callee on the
path the probe did not take whose arguments that path computes in a loop or pops from
a list; and keywords bound by ``functools.partial`` of a ``*args`` decorator's wrapper
(no wrong value found on main, where it was refused; the per-arity wrapper built here
first dropped them: the regression cases below).

Every expected value comes from JAX on the same source with JAX's transforms inside
(``jax_twin``), in float64 and float32, or (a Python ``if`` on a value under vmap) from
JAX's grad example by example."""

from __future__ import annotations

import functools
import inspect
from functools import partial

import inner_transform_more_fns as F  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX, assert_close_to, compiled, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax
    import jax.numpy as jnp

    J = jax_twin(F)
    for _name in ("grad", "vmap", "value_and_grad"):
        setattr(F, f"s2s_{_name}", getattr(s2s, _name))
        setattr(J, f"s2s_{_name}", getattr(jax, _name))


def default(cases, keep):
    """``cases`` with those not in ``keep`` under ``-m slow`` (the default tier runs a
    few seconds; its tests are marked every_case so conftest does not sample again)."""
    return [c if c in keep else pytest.param(
        *(c if isinstance(c, tuple) else (c,)), marks=pytest.mark.slow) for c in cases]


X = np.array([0.3, -0.7, 1.2])
V = np.array([1.0, -2.0, 0.5])
BATCH = np.array([[0.3, -0.7, 1.2], [0.1, 0.4, -0.9]])
DTYPES = [np.float64, np.float32]
ROWS = (0, 1, 5, 0, 5, 1, 0, 0, 5, 1)  # a body vmap's batch size at calls 1 to 10


close = partial(assert_close_to, f64=1e-8, f32=5e-4, check_dtype=False)


def calls(request, every=range(10), few=(0, 1, 2, 9)):
    """Calls 1 to 10 under ``-m slow``; in the default tier, the 1st to 3rd and 10th
    (the JAX oracle, which traces at each call, costs most of each test)."""
    return every if request.node.get_closest_marker("slow") else few


def summed(f, total):
    def scalar(y, m):
        return total(f(y, m))

    return scalar


# ---- 1. a body vmap over an empty batch, g a lambda or nested def ---------------------

EMPTY = ["empty_lambda_capturing", "empty_nested_def", "empty_pair_lambda",
         "empty_vector_out"]
BY_COLUMNS = {"empty_pair_lambda", "empty_vector_out"}


def _batch(name, rows, call, dtype):
    m = np.arange(rows * 3.0).reshape(rows, 3) * 0.15 - 0.2 * call
    return (m.T if name in BY_COLUMNS else m).astype(dtype)


@pytest.mark.every_case
@pytest.mark.parametrize("name, dtype", default(
    [(n, d) for n in EMPTY for d in DTYPES], {("empty_nested_def", np.float64)}))
@pytest.mark.slow
def test_empty_and_full_batches_under_every_transform(name, dtype, request) -> None:
    """One transform object per transform, calls 1 to 10 with the batch 0, 1 or 5
    rows long and ``x`` changing: the first call probes an empty batch (its reverse
    loop runs no iteration; the probe runs again with the empty axis one long), later
    ones run the same code on full ones.  jacrev, jacfwd, hessian, vmap of grad,
    grad, jvp, vjp and jit against JAX."""
    ours, theirs = getattr(F, name), getattr(J, name)
    made = {"jacrev": s2s.jacrev(ours), "jacfwd": s2s.jacfwd(ours),
            "hessian": s2s.hessian(summed(ours, np.sum)),
            "vmap_grad": s2s.vmap(s2s.grad(summed(ours, np.sum)), in_axes=(0, None)),
            "grad": s2s.grad(summed(ours, np.sum)), "jit": s2s.jit(ours)}
    # (JAX's, each compiled as one program: its eager Jacobians cost most of the test)
    oracle = {"jacrev": compiled(jax.jacrev(theirs)), "jacfwd": compiled(jax.jacfwd(theirs)),
              "hessian": compiled(jax.hessian(summed(theirs, jnp.sum))),
              "vmap_grad": compiled(jax.vmap(jax.grad(summed(theirs, jnp.sum)),
                                             in_axes=(0, None))),
              "grad": compiled(jax.grad(summed(theirs, jnp.sum)))}
    for call in calls(request, few=(0, 2)):  # (batches of 0 and 5 rows; 1 row too: slow)
        rows = ROWS[call]
        x = (X * (1.0 + 0.2 * call) * (-1) ** call).astype(dtype)
        m = _batch(name, rows, call, dtype)
        close(made["jacrev"](x, m), oracle["jacrev"](x, m), dtype)
        close(made["jacfwd"](x, m), oracle["jacfwd"](x, m), dtype)
        close(made["hessian"](x, m), oracle["hessian"](x, m), dtype)
        batch = (BATCH * (1.0 + call)).astype(dtype)
        close(made["vmap_grad"](batch, m), oracle["vmap_grad"](batch, m), dtype)
        close(made["grad"](x, m), oracle["grad"](x, m), dtype)
        close(made["jit"](x, m), theirs(x, m), dtype)
        if call in (0, 1, 2):
            v = V.astype(dtype)
            close(s2s.jvp(ours, (x, m), (v, np.zeros_like(m))),
                  jax.jvp(theirs, (x, m), (v, jnp.zeros_like(m))), dtype)
            out, pull = s2s.vjp(ours, x, m)
            their_out, their_pull = jax.vjp(theirs, x, m)
            close(pull(np.ones_like(out)), their_pull(jnp.ones_like(their_out)), dtype)


@pytest.mark.slow
@pytest.mark.parametrize("name", EMPTY)
def test_empty_batches_on_the_jax_backend(name) -> None:
    ours, theirs = getattr(F, name), getattr(J, name)
    for call, rows in enumerate((0, 5, 0)):
        m = _batch(name, rows, call, np.float64)
        close(s2s.jit(ours, backend="jax")(X, m), jax.jit(theirs)(X, m), np.float64)
        close(s2s.jit(s2s.grad(summed(ours, np.sum)), backend="jax")(X, m),
              jax.grad(summed(theirs, jnp.sum))(X, m), np.float64)


@pytest.mark.slow
def test_nan_in_an_empty_batchs_function() -> None:
    """A NaN in ``x`` reaches the Jacobian where JAX's does, with an empty and a full
    batch."""
    x = np.array([0.3, np.nan, 1.2])
    for rows in (0, 1):
        m = _batch("empty_nested_def", rows, 0, np.float64)
        close(s2s.jacrev(F.empty_nested_def)(x, m), jax.jacrev(J.empty_nested_def)(x, m),
              np.float64)


@pytest.mark.slow
def test_jacrev_of_an_empty_output() -> None:
    """No output entry: the Jacobian has no row, as JAX's (it used to stack no rows)."""
    m = np.zeros((3, 0))
    got = s2s.jacrev(F.empty_vector_out)(X, m)
    assert got.shape == (3, 0, 3)
    close(got, jax.jacrev(J.empty_vector_out)(X, m), np.float64)


# ---- 2. a kept vmap of a function reading the making function's values, passed on -----

KEPT = ["kept_lambda_capturing_passed_on", "kept_def_capturing_passed_on",
        "two_kept_vmaps_passed_on"]


@pytest.mark.every_case
@pytest.mark.parametrize("name, dtype", default(
    [(n, d) for n in KEPT for d in DTYPES], {("kept_lambda_capturing_passed_on", np.float64)}))
@pytest.mark.slow
def test_a_kept_vmap_reading_values_passed_on(name, dtype, request) -> None:
    """The values ``g`` reads (``x``, ``a``, the module's ``SCALE``) change between
    calls 1 to 10; grad, jvp, vmap, jacrev, hessian and jit against JAX."""
    ours, theirs = getattr(F, name), getattr(J, name)
    grad, jit, jacrev = s2s.grad(ours), s2s.jit(ours), s2s.jacrev(ours)
    saved = F.SCALE[0], J.SCALE[0]
    try:
        for call in calls(request, few=(0, 9)):
            F.SCALE[0] = J.SCALE[0] = 1.5 - 0.4 * call
            x = (X * (1.0 + 0.15 * call) * (-1) ** call).astype(dtype)
            close(grad(x), jax.grad(theirs)(x), dtype)
            close(jit(x), theirs(x), dtype)
            if call in (0, 2, 9):
                v = V.astype(dtype)
                close(s2s.jvp(ours, (x,), (v,)), jax.jvp(theirs, (x,), (v,)), dtype)
                close(jacrev(x), jax.jacrev(theirs)(x), dtype)
                batch = (BATCH * (1 + call)).astype(dtype)
                close(s2s.vmap(ours)(batch), jax.vmap(theirs)(batch), dtype)
        if dtype == np.float64:
            close(s2s.hessian(ours)(X), jax.hessian(theirs)(X), dtype)
    finally:
        F.SCALE[0], J.SCALE[0] = saved


@pytest.mark.slow
@pytest.mark.parametrize("name", KEPT)
def test_a_kept_vmap_passed_on_the_jax_backend(name) -> None:
    ours, theirs = getattr(F, name), getattr(J, name)
    close(s2s.jit(ours, backend="jax")(X), jax.jit(theirs)(X), np.float64)
    close(s2s.jit(s2s.grad(ours), backend="jax")(X), jax.grad(theirs)(X), np.float64)


# ---- 3. s2s.jit(f, backend="jax") of s2s.grad(functools.partial(...)) in the body -----

PARTIALS = ["grad_of_partial", "grad_of_partial_positional", "value_and_grad_of_partial"]


@pytest.mark.every_case
@pytest.mark.parametrize("name, dtype", default(
    [(n, d) for n in PARTIALS for d in DTYPES], {("grad_of_partial", np.float64)}))
def test_grad_of_a_partial_in_the_body_on_the_jax_backend(name, dtype) -> None:
    """The bound values are JAX's traced ones; calls change ``x`` and its length (a
    new trace: a new partial), against JAX."""
    ours, theirs = getattr(F, name), getattr(J, name)
    f, g = s2s.jit(ours, backend="jax"), s2s.jit(s2s.grad(ours), backend="jax")
    for call, n in enumerate((3, 3, 4, 3)):
        x = (np.linspace(-0.8, 1.1, n) * (1 + 0.3 * call)).astype(dtype)
        if name == "grad_of_partial_positional" and n != 3:
            continue  # (it binds the module's 3-vector W)
        close(f(x), jax.jit(theirs)(x), dtype)
        close(g(x), jax.grad(theirs)(x), dtype)


# ---- 4. a callee on the path the probe did not take, its arguments from a loop or pop --

OTHER_PATH = ["loop_args_on_the_other_path", "popped_args_on_the_other_path",
              "called_in_a_loop_on_the_other_path"]


@pytest.mark.slow
@pytest.mark.every_case
@pytest.mark.parametrize("name", default(OTHER_PATH, {"called_in_a_loop_on_the_other_path"}))
def test_the_jacobians_with_the_path_changing_between_calls(name, request) -> None:
    """The first call's point takes the other path; calls 1 to 10 alternate: jacfwd,
    jacrev and hessian against JAX's (which run the ``if`` on concrete values)."""
    ours, theirs = getattr(F, name), getattr(J, name)
    jf, jr, h = s2s.jacfwd(ours), s2s.jacrev(ours), s2s.hessian(ours)
    for call in calls(request):
        x = (np.abs(X) + 0.2 * call) * (-1 if call % 2 == 0 else 1)
        close(jf(x), jax.grad(theirs)(x), np.float64)
        close(jr(x), jax.grad(theirs)(x), np.float64)
        close(h(x), jax.hessian(theirs)(x), np.float64)


@pytest.mark.slow
@pytest.mark.every_case
@pytest.mark.parametrize("dtype", default(DTYPES, {np.float64}))
def test_vmap_with_an_unbatched_test_changing_between_calls(dtype, request) -> None:
    """``in_axes=(0, None)``: every example takes the path ``c`` picks, and calls
    alternate it, so later calls run the path the first call's probe never saw (its
    arguments computed in a loop, popped from a list); vmap, vmap of grad and the
    Jacobians against JAX."""
    ours, theirs = F.loop_args_on_an_unbatched_path, J.loop_args_on_an_unbatched_path
    v, vg = s2s.vmap(ours, in_axes=(0, None)), s2s.vmap(s2s.grad(ours), in_axes=(0, None))
    jf, jr = s2s.jacfwd(ours), s2s.jacrev(ours)
    tests = (-1.0, 2.0, -0.5, 1.5, 0.5, -2.0, 1.0, 3.0, -1.0, 2.0)
    for c in (tests[k] for k in calls(request)):
        batch, x = (BATCH * c).astype(dtype), (X * c).astype(dtype)
        close(v(batch, c), jax.vmap(theirs, in_axes=(0, None))(batch, c), dtype)
        close(vg(batch, c), jax.vmap(jax.grad(theirs), in_axes=(0, None))(batch, c), dtype)
        close(jf(x, c), jax.jacfwd(theirs)(x, c), dtype)
        close(jr(x, c), jax.jacrev(theirs)(x, c), dtype)


def test_forward_mode_keeps_the_tangents_of_a_popped_lists_other_items() -> None:
    """``parts.pop()`` then ``parts[0]``: jvp gave the rest of the list a zero tangent
    (a wrong Jacobian, silently); against JAX."""
    x = np.array([0.0, 1.0, -0.9])
    for k in range(3):
        v = np.eye(3)[k]
        close(s2s.jvp(F.popped_args_on_the_other_path, (x,), (v,)),
              jax.jvp(J.popped_args_on_the_other_path, (x,), (v,)), np.float64)
    close(s2s.jacfwd(F.popped_args_on_the_other_path)(x),
          jax.grad(J.popped_args_on_the_other_path)(x), np.float64)


def test_what_vmap_still_refuses_names_the_users_line() -> None:
    """With the test batched, vmap runs both branches as values: a loop in one
    (``loop_args_on_the_other_path``) or a list popped under it is refused (as
    documented), at the user's ``if`` or pop, never at emitted code."""
    for name, quoted in (("loop_args_on_the_other_path", "if np.sum(x) > 0:"),
                         ("popped_args_on_the_other_path", "last = parts.pop()")):
        fn = getattr(F, name)
        lines, first = inspect.getsourcelines(fn)
        with pytest.raises(s2s.TransformError) as info:
            s2s.vmap(fn)(np.concatenate([BATCH, -BATCH]))
        err = str(info.value)
        assert f'File "{F.__file__}", line ' in err and "<s2s" not in err, err
        assert any(quoted in t or "y = pair_energy" in t for t in lines), err


# ---- 5. keywords bound by functools.partial of a *args decorator's wrapper -----------

DECORATED = ["LOSS_3", "LOSS_KW", "LOSS_DOUBLED", "LOSS_WRAPPED", "LOSS_FORWARDED"]
TRANSFORMS = ["grad", "value_and_grad", "jvp", "vjp", "hessian", "vmap_grad", "jit",
              "jit_jax"]


def _run(transform, ours, theirs, x, kw):
    if transform in ("grad", "value_and_grad", "hessian"):
        return (getattr(s2s, transform)(ours)(x, **kw),
                getattr(jax, transform)(theirs)(x, **kw))
    if transform == "jvp":
        v = np.ones_like(x) * 0.5
        return s2s.jvp(ours, (x,), (v,)), jax.jvp(theirs, (x,), (v,))
    if transform == "vjp":
        out, pull = s2s.vjp(ours, x)
        their_out, their_pull = jax.vjp(theirs, x)
        return pull(np.ones_like(out)), their_pull(jnp.ones_like(their_out))
    if transform == "vmap_grad":
        batch = np.stack([x, -x, 2 * x])
        return s2s.vmap(s2s.grad(ours))(batch), jax.vmap(jax.grad(theirs))(batch)
    if transform == "jit":
        return s2s.jit(ours)(x, **kw), theirs(x, **kw)
    return s2s.jit(s2s.grad(ours), backend="jax")(x, **kw), jax.grad(theirs)(x, **kw)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("name", DECORATED)
def test_keywords_through_a_partial_of_a_decorated_function(name, transform, dtype) -> None:
    """``s2s.grad(functools.partial(loss, scale=3.0))`` with ``loss`` a decorator's
    ``wrapper(*args, **kw)`` (``functools.wraps`` or not, forwarding or scaling): the
    bound keywords reach ``loss`` (they are in no signature: ``**kw`` holds them), and
    a keyword the call passes overrides them; against JAX."""
    ours, theirs = getattr(F, name), getattr(J, name)
    x = X.astype(dtype)
    got, expected = _run(transform, ours, theirs, x, {})
    close(got, expected, dtype)
    if transform in ("grad", "value_and_grad", "jit"):  # (the call's keyword wins)
        got, expected = _run(transform, ours, theirs, x, {"scale": 0.75})
        close(got, expected, dtype)


BODY_PARTIALS = ["grad_of_deco_partial_in_body", "deco_partial_called_in_body",
                 "deco_kw_partial_called_in_body", "deco_partial_made_in_body",
                 "grad_of_wrapped_partial_in_body", "grad_of_forwarded_partial_in_body",
                 "wrapped_partial_called_in_body"]


@pytest.mark.slow
@pytest.mark.every_case
@pytest.mark.parametrize("name, dtype", default(
    [(n, d) for n in BODY_PARTIALS for d in DTYPES],
    {("grad_of_deco_partial_in_body", np.float32)}))
def test_partials_of_decorated_functions_in_the_body(name, dtype) -> None:
    """Transformed or called in the body, bound to constants or to the function's
    values: grad, jvp, vmap, vmap of grad, jacrev, hessian and jit against JAX."""
    ours, theirs = getattr(F, name), getattr(J, name)
    x, v = X.astype(dtype), V.astype(dtype)
    batch = BATCH.astype(dtype)
    close(ours(x), theirs(x), dtype)
    close(s2s.grad(ours)(x), jax.grad(theirs)(x), dtype)
    close(s2s.jvp(ours, (x,), (v,)), jax.jvp(theirs, (x,), (v,)), dtype)
    close(s2s.vmap(ours)(batch), jax.vmap(theirs)(batch), dtype)
    close(s2s.vmap(s2s.grad(ours))(batch), jax.vmap(jax.grad(theirs))(batch), dtype)
    close(s2s.jit(ours)(x), theirs(x), dtype)
    if dtype == np.float64:
        close(s2s.jacrev(ours)(x), jax.jacrev(theirs)(x), dtype)
        close(s2s.hessian(ours)(x), jax.hessian(theirs)(x), dtype)


@pytest.mark.slow
@pytest.mark.parametrize("name", BODY_PARTIALS)
def test_partials_of_decorated_functions_in_the_body_on_the_jax_backend(name) -> None:
    ours, theirs = getattr(F, name), getattr(J, name)
    close(s2s.jit(ours, backend="jax")(X), jax.jit(theirs)(X), np.float64)
    close(s2s.jit(s2s.grad(ours), backend="jax")(X), jax.grad(theirs)(X), np.float64)


def test_a_transform_of_a_partial_of_a_wrapper_binding_values() -> None:
    """In the body, a partial of a ``*args`` wrapper binding the function's values
    (refused until tests/frontend/test_idiom_leftovers.py, which covers it through
    every transform): its gradient against JAX, and the lambda spelling beside it."""
    for name in ("grad_of_deco_partial_run_time_scale", "grad_of_deco_kw_partial_in_body"):
        close(s2s.grad(getattr(F, name))(X), jax.grad(getattr(J, name))(X), np.float64)

    def by_a_lambda(x):
        s = np.sum(x)
        return np.sum(s2s.grad(lambda y: F.loss(y, scale=s))(x) * F.W)

    def by_a_lambda_jax(x):
        s = jnp.sum(x)
        return jnp.sum(jax.grad(lambda y: J.loss(y, scale=s))(x) * J.W)

    close(s2s.grad(by_a_lambda)(X), jax.grad(by_a_lambda_jax)(X), np.float64)


def test_a_partial_object_keeps_its_bound_values_between_calls() -> None:
    """A module-level partial's array, changed in place between calls, is read as it
    is then (the transform's code is specialized on it and checked at each call)."""
    p = functools.partial(F.loss_kw, w=F.W.copy(), scale=3.0)
    q = functools.partial(J.loss_kw, w=jnp.asarray(F.W), scale=3.0)
    g = s2s.grad(p)
    for call in range(1, 11):
        p.keywords["w"][:] = F.W * call
        q = functools.partial(J.loss_kw, w=jnp.asarray(F.W * call), scale=3.0)
        close(g(X), jax.grad(q)(X), np.float64)
