"""Statements with no derivative are kept, not refused (issue 23, item 1).

``assert``, ``if test: raise ...``, ``print``, ``logging`` and ``warnings`` calls run in
the emitted forward sweep with real values, once per call, in program order, and read
as the user wrote them; they change no derivative.  Values come from JAX on the same
source (jax_twin), finite differences or a Python loop, never from s2s."""

from __future__ import annotations

import contextlib
import logging

import kept_fns as K
import numpy as np
import pytest
from support import fd_grad, jax_twin

import s2s

jax = pytest.importorskip("jax")
J = jax_twin(K)

X = np.array([0.5, -1.0, 2.0])
DTYPES = [np.float64, np.float32]


def tol(dtype):
    return dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)


def printed(capsys) -> list[str]:
    return capsys.readouterr().out.splitlines()


# ---- the values: the kept statements change no derivative ----------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["checked", "raises_static", "raises_on_value", "logs",
                                  "in_loop", "calls_printer"])
def test_grad_equals_jax(name, dtype, capsys):
    x = X.astype(dtype)
    with pytest.warns(UserWarning) if name == "logs" else contextlib.nullcontext():
        got = s2s.grad(getattr(K, name))(x)
    assert got.dtype == dtype
    if name == "raises_on_value":  # (JAX cannot trace the value test: differences)
        want = fd_grad(K.raises_on_value, (X,), 0)[0]
        np.testing.assert_allclose(got, want, rtol=1e-4 if dtype == np.float32 else 1e-6)
        return
    with pytest.warns(UserWarning) if name == "logs" else contextlib.nullcontext():
        want = jax.grad(getattr(J, name))(X)
    np.testing.assert_allclose(got, np.asarray(want), **tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_transform_keeps_the_values(dtype, capsys):
    x = X.astype(dtype)
    t = tol(dtype)
    value, g = s2s.value_and_grad(K.checked)(x)
    np.testing.assert_allclose(value, float(J.checked(X)), **t)
    np.testing.assert_allclose(g, np.asarray(jax.grad(J.checked)(X)), **t)
    out, tangent = s2s.jvp(K.checked, (x,), (np.ones_like(x),))
    _, want_tangent = jax.jvp(J.checked, (X,), (np.ones_like(X),))
    np.testing.assert_allclose(tangent, float(want_tangent), **t)
    out, vjp_fn = s2s.vjp(K.vector_out, x)
    (ct,) = vjp_fn(np.ones_like(x))
    _, jax_vjp = jax.vjp(J.vector_out, X)
    np.testing.assert_allclose(ct, np.asarray(jax_vjp(np.ones_like(X))[0]), **t)
    np.testing.assert_allclose(s2s.jacfwd(K.vector_out)(x), np.asarray(jax.jacfwd(J.vector_out)(X)), **t)
    np.testing.assert_allclose(s2s.jacrev(K.vector_out)(x), np.asarray(jax.jacrev(J.vector_out)(X)), **t)
    np.testing.assert_allclose(s2s.hessian(K.checked)(x), np.asarray(jax.hessian(J.checked)(X)),
                               rtol=1e-4 if dtype == np.float32 else 1e-9, atol=1e-5)
    np.testing.assert_allclose(s2s.jit(K.checked)(x), float(J.checked(X)), **t)


# ---- printed once per call, with real values, in order --------------------------------


def _ys(x):
    """What `checked` prints, computed here by NumPy: `print("y", np.sin(x))`."""
    return f"y {np.sin(x)}"


@pytest.mark.parametrize("transform", [
    lambda f, x: s2s.grad(f)(x),
    lambda f, x: s2s.value_and_grad(f)(x),
    lambda f, x: s2s.jvp(f, (x,), (np.ones_like(x),)),
    lambda f, x: s2s.vjp(f, x)[1](1.0),
    lambda f, x: s2s.jacfwd(f)(x),
    lambda f, x: s2s.jacrev(f)(x),
    lambda f, x: s2s.hessian(f)(x),
    lambda f, x: s2s.jit(f)(x),
], ids=["grad", "value_and_grad", "jvp", "vjp", "jacfwd", "jacrev", "hessian", "jit"])
def test_printed_once_per_call_with_real_values(transform, capsys):
    for k in (1.0, 2.0, 3.0):
        x = X * k
        transform(K.checked, x)
        assert printed(capsys) == [_ys(x)]


def test_printed_once_per_call_under_transformed_objects(capsys):
    g = s2s.grad(K.checked)
    for k in (1.0, 2.0, 3.0):  # the 2nd call probes, the 3rd runs specialized code
        g(X * k)
        assert printed(capsys) == [_ys(X * k)]


def test_kept_statement_in_a_loop_runs_once_per_iteration(capsys):
    s2s.grad(K.in_loop)(X)
    s = np.zeros_like(X)
    want = []
    for i in range(3):  # the loop as Python runs it
        s = s + np.sin(X) * (i + 1)
        want.append(f"step {i} {s}")
    assert printed(capsys) == want  # (and never again in the backward sweep)


def test_kept_statement_in_a_checkpointed_loop_runs_once(capsys):
    def f(x):
        s = np.zeros_like(x)
        for i in range(4):
            s = s + np.sin(x + s)
            print("at", i)
        return np.sum(s)

    g = s2s.grad(s2s.checkpoint(f, every=2))
    got = g(X)
    assert printed(capsys) == [f"at {i}" for i in range(4)]  # (not again per segment)
    np.testing.assert_allclose(got, fd_grad(f, (X,), 0)[0], rtol=1e-6)
    assert g.source.count("print(") == 1


@pytest.mark.parametrize("transform", [
    lambda f, x: s2s.grad(f)(x),
    lambda f, x: s2s.jvp(f, (x,), (np.ones_like(x),)),
    lambda f, x: s2s.jit(f)(x),
], ids=["grad", "jvp", "jit"])
def test_callee_prints_once(transform, capsys):
    for k in (1.0, 2.0, 3.0):
        transform(K.calls_printer, X * k)
        assert printed(capsys) == [f"callee {X * k}"]


def test_callee_under_vmap_prints_the_batch(capsys):
    xs = np.stack([X, 2 * X])
    got = s2s.vmap(K.calls_printer)(xs)
    want = [K.calls_printer(x) for x in xs]  # (prints each example)
    capsys.readouterr()
    s2s.vmap(K.calls_printer)(xs)
    assert printed(capsys) == f"callee {xs}".splitlines()
    np.testing.assert_allclose(got, want)


def test_logging_and_warnings_run_once(caplog):
    with caplog.at_level(logging.DEBUG):
        with pytest.warns(UserWarning, match="careful") as record:
            s2s.grad(K.logs)(X)
    assert len(record) == 1
    messages = [r.getMessage() for r in caplog.records]
    assert messages == [f"y is {np.cos(X)}", f"debug {np.cos(X)}"]


# ---- asserts and raises fire with the user's message -----------------------------------


@pytest.mark.parametrize("transform", [
    lambda f, x: s2s.grad(f)(x),
    lambda f, x: s2s.jvp(f, (x,), (np.ones_like(x),)),
    lambda f, x: s2s.jacfwd(f)(x),
    lambda f, x: s2s.jit(f)(x),
], ids=["grad", "jvp", "jacfwd", "jit"])
def test_assert_fires_with_the_users_message(transform):
    with pytest.raises(AssertionError, match="need a vector"):
        transform(K.checked, np.ones((2, 3)))


def test_assert_fires_under_vmap_on_the_examples():
    # vmap over rows: each example is a vector, so the check passes per example
    rows = np.ones((2, 3))
    s2s.vmap(K.checked)(rows)
    with pytest.raises(AssertionError, match="need a vector"):
        s2s.vmap(K.checked)(np.ones((2, 3, 4)))


def test_raise_fires_with_the_users_message():
    with pytest.raises(ValueError, match="need two entries, got 1"):
        s2s.grad(K.raises_static)(np.ones(1))
    with pytest.raises(ValueError, match="overflowing"):
        s2s.grad(K.raises_on_value)(np.array([1.0, 20.0]))
    with pytest.raises(ValueError, match="overflowing"):
        s2s.jvp(K.raises_on_value, (np.array([1.0, 20.0]),), (np.ones(2),))


# ---- vmap: a check means "for every example"; a print shows the batch -------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_vmap_checks_every_example(dtype, capsys):
    xs = np.array([0.5, 1.5, 2.0], dtype=dtype)
    got = s2s.vmap(K.per_example)(xs)
    np.testing.assert_allclose(got, [np.log(v) * v for v in xs], **tol(dtype))  # a loop
    assert printed(capsys) == [f"x {xs}"]  # the batched value, once
    for bad in ([0.5, -1.0, 2.0], [-0.5, 1.0, 2.0], [0.5, 1.0, -2.0]):  # any example
        with pytest.raises(AssertionError, match="positive"):
            s2s.vmap(K.per_example)(np.array(bad, dtype=dtype))
    rows = np.abs(np.stack([X, 2 * X])).astype(dtype) + 0.1
    np.testing.assert_allclose(s2s.vmap(K.per_example_all)(rows),
                               [K.per_example_all(r) for r in rows], **tol(dtype))
    rows[1, 2] = -1.0
    with pytest.raises(AssertionError, match="positive"):
        s2s.vmap(K.per_example_all)(rows)


def test_vmap_of_grad_checks_each_example():
    rows = np.abs(np.stack([X, 2 * X])) + 0.1
    got = s2s.vmap(s2s.grad(K.per_example_all))(rows)
    want = [np.asarray(jax.grad(J.per_example_all)(r)) for r in rows]
    np.testing.assert_allclose(got, want, rtol=1e-10)
    rows[0, 0] = -1.0
    with pytest.raises(AssertionError, match="positive"):
        s2s.vmap(s2s.grad(K.per_example_all))(rows)


# ---- the emitted code reads as written ------------------------------------------------


def test_emitted_code_reads_as_written():
    g = s2s.grad(K.checked)
    g(X)
    text = g.source
    assert 'assert x.ndim == 1, "need a vector"' in text
    assert 'print("y", y)' in text
    # in program order: the check first, the print before the rebinding y = y * x
    assert text.index("assert x.ndim") < text.index("y = np.sin(x)") < text.index(
        'print("y", y)') < text.index("y_2 = y * x")
    raising = s2s.grad(K.raises_on_value)
    raising(X)
    assert "if np.any(y > 1e6):" in raising.source
    assert 'raise ValueError(f"overflowing: {np.max(y)}")' in raising.source
    v = s2s.vmap(K.per_example)
    v(np.array([1.0, 2.0]))
    assert 'assert x[example] > 0, "positive"' in v.source


def test_backward_sweep_does_not_run_them_again():
    g = s2s.grad(K.in_loop)
    g(X)
    assert g.source.count("print(") == 1


# ---- what is still refused, located at the user's line ---------------------------------


def method_effect(x):
    y = x * 2.0
    y.partition(1)
    return np.sum(y)


def raise_beside(x):
    if np.sum(x) > 1.0:
        x = x * 0.5
        raise ValueError("no")
    return np.sum(x)


@pytest.mark.parametrize("fn, words", [
    (method_effect, "side effect"),
    (raise_beside, "raise"),
])
def test_refused_where_written(fn, words):
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(fn)(X)
    message = str(info.value)
    assert words in message and "test_kept_statements.py" in message
    assert "Instead:" in message


# ---- the JAX backend ---------------------------------------------------------------------


def test_jax_backend_keeps_static_checks_and_locates_value_raises():
    j = s2s.jit(K.checked, backend="jax")
    np.testing.assert_allclose(j(X), float(J.checked(X)), rtol=1e-10)
    with pytest.raises(AssertionError, match="need a vector"):
        j(np.ones((2, 2)))  # static: checked when JAX traces
    with pytest.raises(s2s.TransformError) as info:
        s2s.jit(K.raises_on_value, backend="jax")(X)
    assert "kept_fns.py" in str(info.value) and "np.any(y > 1e6)" in str(info.value)


def test_a_callee_print_whose_value_the_gradient_never_reads_runs_at_every_call(capsys):
    """Calls 1 to 10 (the third and later run the code the second specialized, or the
    emitted code where the specializer would drop the call): printed each time."""
    want = [np.asarray(jax.grad(J.calls_linear_printer)(X * k)) for k in range(1, 11)]
    capsys.readouterr()  # (JAX's trace printed tracers)
    g = s2s.grad(K.calls_linear_printer)
    for k in range(1, 11):
        got = g(X * k)
        assert printed(capsys) == [f"callee {X * k}"], k
        np.testing.assert_allclose(got, want[k - 1], rtol=1e-12)
    v = s2s.vmap(s2s.grad(K.calls_linear_printer))
    for k in range(1, 4):
        v(np.stack([X, X * k]))
        assert printed(capsys) == f"callee {np.stack([X, X * k])}".splitlines(), k
