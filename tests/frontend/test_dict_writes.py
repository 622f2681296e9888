"""Writing ``out[key] = v`` into a dict the function built (issue 23, item 5): constant
keys, keys bound to names, loops over constant keys (unrolled), writes in loops and in
the branches of an ``if`` on a run-time value (the items carried as arrays), a dict
returned or built by a callee.  Every expected value from JAX on the same source
(``jax_twin``), float64 and float32, under grad, value_and_grad, jvp, vjp, jacfwd,
jacrev, vmap and s2s.jit on both backends; the refusals (a key known only at run time,
keys that change in a loop or on one path, a write another name would see) are
located at the user's line."""

from __future__ import annotations

import dict_write_fns as F  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)

SCALAR = ["write_constant_keys", "write_into_dict_call", "write_into_literal",
          "write_keys_by_name", "write_loop_over_keys", "write_in_runtime_loop",
          "write_in_branches", "write_values_and_items", "callee_writes",
          "write_keys_loop_in_runtime_loop", "copy_then_write"]
X = np.array([0.3, -0.7, 1.2])
V = np.array([1.0, -2.0, 0.5])
BATCH = np.array([[0.3, -0.7, 1.2], [-0.1, -0.4, -0.9], [1.5, 0.2, 0.0]])
DTYPES = [np.float64, np.float32]
# an `if` on a value: JAX's own jit (and s2s.jit on the JAX backend) cannot trace it,
# and jax.vmap refuses it; a Python loop over the examples is the vmap oracle there
VALUE_IF = {"write_in_branches"}


def tol(dtype):
    return dict(rtol=1e-9, atol=1e-11) if dtype == np.float64 else dict(rtol=2e-4, atol=2e-5)


def close(got, expected, dtype):
    got_leaves = jax.tree_util.tree_leaves(got)
    want_leaves = jax.tree_util.tree_leaves(expected)
    assert len(got_leaves) == len(want_leaves)
    for g, e in zip(got_leaves, want_leaves):
        assert np.shape(g) == np.shape(e)
        if np.ndim(g):
            assert np.asarray(g).dtype == dtype, np.asarray(g).dtype
        np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(e, np.float64),
                                   **tol(dtype))


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", SCALAR)
def test_grad_jvp_and_jacobians(name, dtype) -> None:
    ours, theirs = getattr(F, name), getattr(J, name)
    for x in (X.astype(dtype), -X.astype(dtype)):  # (both paths of an `if`)
        v = V.astype(dtype)
        close(s2s.grad(ours)(x), jax.grad(theirs)(x), dtype)
        close(s2s.value_and_grad(ours)(x), jax.value_and_grad(theirs)(x), dtype)
        close(s2s.jvp(ours, (x,), (v,)), jax.jvp(theirs, (x,), (v,)), dtype)
        out, vjp_fn = s2s.vjp(ours, x)
        want, jax_vjp = jax.vjp(theirs, x)
        close(out, want, dtype)
        close(vjp_fn(dtype(1.5)), jax_vjp(dtype(1.5)), dtype)
        close(s2s.jit(ours)(x), theirs(x), dtype)
        if name not in VALUE_IF:
            close(s2s.jit(ours, backend="jax")(x), theirs(x), dtype)


@pytest.mark.parametrize("name", SCALAR)
def test_vmap(name) -> None:
    ours, theirs = getattr(F, name), getattr(J, name)
    if name in VALUE_IF:
        expected = np.array([ours(row) for row in BATCH])
        grads = np.array([jax.grad(theirs)(row) for row in BATCH])
    else:
        expected, grads = jax.vmap(theirs)(BATCH), jax.vmap(jax.grad(theirs))(BATCH)
    close(s2s.vmap(ours)(BATCH), expected, np.float64)
    close(s2s.vmap(s2s.grad(ours))(BATCH), grads, np.float64)


@pytest.mark.parametrize("dtype", [np.float64, pytest.param(np.float32, marks=pytest.mark.slow)],
                         ids=["f64", "f32"])
def test_a_returned_dict(dtype) -> None:
    """The dict itself is the result: its keys in the order written, under jvp, vjp,
    jacfwd, jacrev, vmap and jit."""
    x, v = X.astype(dtype), V.astype(dtype)
    ours, theirs = F.write_and_return, J.write_and_return
    got = s2s.jit(ours)(x)
    assert list(got) == ["sin", "sq"]
    close(got, theirs(x), dtype)
    close(s2s.jvp(ours, (x,), (v,)), jax.jvp(theirs, (x,), (v,)), dtype)
    out, vjp_fn = s2s.vjp(ours, x)
    cot = {"sin": v, "sq": 2.0 * v}
    close(vjp_fn(cot), jax.vjp(theirs, x)[1](cot), dtype)
    close(s2s.jacfwd(ours)(x), jax.jacfwd(theirs)(x), dtype)
    close(s2s.jacrev(ours)(x), jax.jacrev(theirs)(x), dtype)
    close(s2s.vmap(ours)(BATCH.astype(dtype)), jax.vmap(theirs)(BATCH.astype(dtype)), dtype)


@pytest.mark.slow
def test_values_change_across_ten_calls() -> None:
    """Calls 1 (generic), 2 (specialized), 3 and 10 each match JAX at their argument,
    both paths of the `if` taken in turn; the caller writing into a result does not
    change the next call's."""
    rng = np.random.default_rng(3)
    fns = {name: s2s.grad(getattr(F, name)) for name in (
        "write_loop_over_keys", "write_in_runtime_loop", "write_in_branches",
        "write_keys_loop_in_runtime_loop")}
    ret = s2s.jit(F.write_and_return)
    for call in range(10):
        x = rng.normal(size=3) * (1 if call % 2 else -1)
        for name, g in fns.items():
            close(g(x), jax.grad(getattr(J, name))(x), np.float64)
        got = ret(x)
        close(got, J.write_and_return(x), np.float64)
        got["sin"][:] = 99.0  # (the caller's to keep)


@pytest.mark.slow
def test_the_key_set_follows_a_module_constant_between_calls() -> None:
    """KEYS changed between calls: the dict's keys (its structure) change, s2s
    generates again, and each call matches JAX on the same source and keys."""
    jv = s2s.jit(F.keyed_by_module_constant)
    jac = s2s.jacrev(F.keyed_by_module_constant)
    g = s2s.grad(F.write_loop_over_keys)
    try:
        for keys in [("w", "b"), ("w", "b", "long"), ("b",), ("w", "b")]:
            F.KEYS = J.KEYS = keys
            want = (J.keyed_by_module_constant(X),
                    jax.jacrev(J.keyed_by_module_constant)(X),
                    jax.grad(J.write_loop_over_keys)(X))
            for _ in range(3):  # (the second and later calls run specialized code)
                got = jv(X)
                assert list(got) == list(keys)
                close(got, want[0], np.float64)
                close(jac(X), want[1], np.float64)
                close(g(X), want[2], np.float64)
    finally:
        F.KEYS = J.KEYS = ("w", "b")


def test_runtime_loop_count_changes() -> None:
    """The loop that writes the dict's items runs n times, n changing per call."""
    for n in (0, 1, 3, 5):
        close(s2s.grad(F.write_in_runtime_loop)(X, n), jax.grad(J.write_in_runtime_loop)(X, n),
              np.float64)


def test_the_emitted_code_reads_as_written() -> None:
    src = s2s.source(s2s.grad(F.write_in_runtime_loop))
    assert "out_acc = " in src and "out_last" in src, src


@pytest.mark.parametrize("fn, words, quoted", [
    (F.key_from_runtime_loop, "known only when the function runs", "out[i] = x * i"),
    (F.keys_change_in_loop, "changes the keys of the dict `out`", 'out["b"] = x * i'),
    (F.keys_differ_on_branches, "other keys after this `if`", "if np.sum(x) > 0:"),
    (F.write_seen_through_alias, "another name, container or call",
     'out["b"] = x * 2.0'),
    (F.write_after_append, "from the loop's second iteration on",
     'out["a"] = out["a"] * 2.0'),
    (F.unknown_call_in_a_written_loop, "no_such_function",
     'out["a"] = np.no_such_function(out["a"])'),  # (in a loop whose items s2s split)
])
def test_refused_at_the_users_line(fn, words, quoted) -> None:
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(fn)(X)
    err = str(info.value)
    assert words in err and quoted in err and "Instead:" in err, err
    assert F.__file__ in err, err


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_a_copy_of_an_argument_dict(dtype) -> None:
    """dict(params) of an argument: its items, keys per call; gradients against JAX
    for both arguments (the dict's cotangent a dict with the same keys)."""
    x = X.astype(dtype)
    params = {"w": (X * 2.0).astype(dtype), "b": (X + 1.0).astype(dtype)}
    close(s2s.grad(F.copy_of_argument, argnums=(0, 1))(x, params),
          jax.grad(J.copy_of_argument, argnums=(0, 1))(x, params), dtype)
    close(s2s.jvp(F.copy_of_argument, (x, params), (x, params)),
          jax.jvp(J.copy_of_argument, (x, params), (x, params)), dtype)


def test_writing_into_a_copy_of_an_argument_dict() -> None:
    """``out = dict(params); out["w"] = x``: the copy is ``{**params, "w": x}`` per
    call (it was refused); the argument keeps its own ``"w"``.  Against JAX."""
    for params in ({"w": X * 3.0, "b": X + 1.0}, {"b": X + 1.0}):
        close(s2s.grad(F.write_into_argument_copy, argnums=(0, 1))(X, params),
              jax.grad(J.write_into_argument_copy, argnums=(0, 1))(X, params), np.float64)


def test_writing_into_an_argument_dict_is_refused() -> None:
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(F.write_into_argument)(X, {"w": X})
    err = str(info.value)
    assert "`params` is an argument" in err and 'params["w"] = x' in err, err
