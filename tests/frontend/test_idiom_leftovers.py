"""Issue 23's leftovers (docs/python-subset.md): in the body, a transform of a
``functools.partial`` of a decorator's ``*args`` wrapper binding run-time values;
``parts + [v]``, ``parts += [v]``, ``parts.extend([...])`` and ``parts = parts + [v]``
on lists grown in loops (the last computed from the pre-loop literal on main: a
silently wrong value, the regression cases below); a user module's functions called
by attribute (``lib.helper(x)``) on the JAX backend; gradients taken in the body in
their primals' dtype (float32 through jvp, vmap, jacfwd and the Hessian, as JAX's);
0-d results as 0-d arrays.

Every expected value comes from JAX on the same source (``jax_twin``, with JAX's
transforms inside and the user module's twin), in float64 and float32, or from a
Python loop and central differences where JAX cannot run it."""

from __future__ import annotations

import functools
import re

import idiom_leftover_fns as F  # (pytest puts this directory on sys.path)
import idiom_leftover_lib as L
import numpy as np
import pytest
from support import HAVE_JAX, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

TRANSFORMS = ("grad", "value_and_grad", "hessian", "jacrev", "jacfwd")
if HAVE_JAX:
    import jax
    import jax.numpy as jnp

    J = jax_twin(F)
    J.lib = jax_twin(L)
    for _name in TRANSFORMS:
        setattr(F, f"s2s_{_name}", getattr(s2s, _name))
        setattr(J, f"s2s_{_name}", getattr(jax, _name))

X = np.array([0.3, -0.7, 1.2])
DTYPES = [np.float64, np.float32]


def default(cases, keep):
    """``cases`` with those not in ``keep`` under ``-m slow`` (marked every_case:
    conftest does not sample them again)."""
    return [c if c in keep else pytest.param(
        *(c if isinstance(c, tuple) else (c,)), marks=pytest.mark.slow) for c in cases]


def tol(dtype):
    return dict(rtol=1e-8, atol=1e-10) if dtype == np.float64 else dict(rtol=5e-4, atol=5e-5)


def close(got, expected, dtype, check_dtype=True):
    got_leaves = jax.tree_util.tree_leaves(got)
    expected_leaves = jax.tree_util.tree_leaves(expected)
    assert len(got_leaves) == len(expected_leaves)
    for g, e in zip(got_leaves, expected_leaves):
        assert np.shape(g) == np.shape(e), (np.shape(g), np.shape(e))
        if check_dtype:
            assert np.asarray(g).dtype == np.asarray(e).dtype, (np.asarray(g).dtype, e.dtype)
        np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(e, np.float64),
                                   **tol(dtype))


def central(f, x, v, eps=1e-6):
    return (f(x + eps * v) - f(x - eps * v)) / (2 * eps)


def scalar(f):
    return np.ndim(f(X)) == 0


# ---- 1. a partial of a *args wrapper binding run-time values, in the body ------------

PARTIALS = ["partial_scale_of_values", "partial_module_array", "partial_made_first",
            "partial_second_order", "partial_value_and_grad"]


@pytest.mark.every_case
@pytest.mark.parametrize("name, dtype", default(
    [(n, d) for n in PARTIALS for d in DTYPES], set()))
def test_partials_of_wrappers_binding_values(name, dtype) -> None:
    """grad, jvp, vmap, jit on both backends (and its gradient on JAX) against JAX,
    at calls whose values change (the bound values are read at each call)."""
    ours, theirs = getattr(F, name), getattr(J, name)
    g, jg = s2s.grad(ours), jax.grad(theirs)
    on_jax, grad_on_jax = s2s.jit(ours, backend="jax"), s2s.jit(s2s.grad(ours), backend="jax")
    for call in (1, 2, 3):
        x = (X * call).astype(dtype)
        close(ours(x), theirs(x), dtype)
        close(g(x), jg(x), dtype)
        close(s2s.jvp(ours, (x,), (x[::-1].copy(),)), jax.jvp(theirs, (x,), (x[::-1],)),
              dtype)
        close(on_jax(x), theirs(x), dtype)
        if call == 1:
            batch = np.stack([x, 2 * x])
            close(s2s.vmap(ours)(batch), jax.vmap(theirs)(batch), dtype)
            close(grad_on_jax(x), jg(x), dtype)
            close(s2s.jit(ours)(x), theirs(x), dtype)


def test_bound_positionals_go_first_and_keywords_by_name() -> None:
    """``partial(loss_w, W, scale=s)`` passes W before the call's argument (a wrong
    order would differentiate with respect to W) and ``scale`` by name through the
    wrapper's ``**kw``: the emitted partial says so; a keyword the call passes wins."""
    g = s2s.grad(F.partial_module_array)
    g(X)
    text = g.source
    assert re.search(r"wrapper_call(_\d+)?\(bound_0, args_0, bound_scale\)", text), text
    assert "wrapper_partial_grad(x, W, cos_x_0)" in text, text
    assert "wrapper_vjp_args_1_vjp_args_1_kw_scale(" in text, text  # (scale by name)
    assert "<s2s:" not in text
    assert np.isclose(g(X) @ X, central(F.partial_module_array, X, X), rtol=1e-6)


# ---- 2. list concatenation and extension ----------------------------------------------

LISTS = ["grown_plus_items", "concat_in_loop", "extend_in_loop", "concat_while",
         "literal_plus_equals"]
COUNTS = (3, 0, 1, 5, 3)  # the loop's count at calls 1 to 5 (0: the loop never runs)


@pytest.mark.every_case
@pytest.mark.parametrize("name, dtype", default(
    [(n, d) for n in LISTS for d in DTYPES], set()))
def test_list_concatenation_and_extension(name, dtype) -> None:
    """Forward, reverse and vmap against JAX, the count changing between calls."""
    ours, theirs = getattr(F, name), getattr(J, name)
    for call, n in enumerate(COUNTS, 1):
        x = (X * call).astype(dtype)
        p, q = functools.partial(ours, n=n), functools.partial(theirs, n=n)
        out = ours(x, n)
        close(out, theirs(x, n), dtype)
        if np.ndim(out) == 0:
            close(s2s.grad(ours)(x, n), jax.grad(theirs)(x, n), dtype)
        else:
            close(s2s.grad(lambda y: np.sum(p(y) * np.cos(y)))(x),  # (a Python loop's sum)
                  jax.grad(lambda y: jnp.sum(q(y) * jnp.cos(y)))(x), dtype)
            if n:  # (jacrev over a loop the first example never runs: main refuses too)
                close(s2s.jacrev(p)(x), jax.jacrev(q)(x), dtype)
        close(s2s.jvp(p, (x,), (np.ones_like(x),)), jax.jvp(q, (x,), (jnp.ones_like(x),)),
              dtype)
        batch = np.stack([x, np.sin(x)])
        close(s2s.vmap(p)(batch), jax.vmap(q)(batch), dtype)
        if call in (1, 2):
            close(s2s.jit(p, backend="jax")(x), q(x), dtype)
            close(s2s.jit(s2s.grad(lambda y: np.sum(p(y))), backend="jax")(x),
                  jax.grad(lambda y: jnp.sum(q(y)))(x), dtype)


def _loop_concat(x, n):
    parts = []
    for i in range(n):
        parts = parts + [x * (i + 1.0)]
    return np.sum(np.stack(parts + [np.cos(x)]) ** 2)


def test_concatenation_in_a_loop_is_not_the_pre_loop_literal() -> None:
    """``parts = parts + [v]`` in a loop from ``parts = []``: main read ``parts`` as
    the empty literal at every iteration (its jvp's value was the last item's, its
    gradient that of the item after the loop only), so did ``q = list(parts)`` and
    ``sum(parts)`` in such a loop.  Against a Python loop and central differences, at
    several counts (the count an argument, so the loop is not unrolled)."""
    for n in (0, 1, 3, 4):
        f = functools.partial(F.concat_in_loop, n=n)
        p, t = s2s.jvp(f, (X,), (X,))
        fd = central(f, X, X)
        assert np.isclose(p, _loop_concat(X, n), rtol=1e-12)
        assert np.isclose(t, fd, rtol=1e-6)
        assert np.isclose(s2s.grad(f)(X) @ X, fd, rtol=1e-6)
    for name in ("copy_in_loop", "sum_before_append"):
        f = functools.partial(getattr(F, name), n=4)
        fd = central(f, X, X)
        assert abs(fd) > 0.1
        assert np.isclose(s2s.grad(f)(X) @ X, fd, rtol=1e-6), name
        assert np.isclose(s2s.jvp(f, (X,), (X,))[1], fd, rtol=1e-6), name


def test_literal_list_extended_in_place() -> None:
    """``out = [x, x * n]; out += [a, b]; out += (c,)``: extended in place, as
    Python's list; against the function and central differences (JAX: the sweep)."""
    f = functools.partial(F.literal_plus_equals, n=1)
    p, t = s2s.jvp(f, (X,), (X,))
    assert np.isclose(p, f(X), rtol=1e-12) and np.isclose(t, central(f, X, X), rtol=1e-6)
    assert np.allclose(s2s.vmap(f)(np.stack([X, -X])), [f(X), f(-X)], rtol=1e-12)


@pytest.mark.parametrize("name, words", [
    ("tuple_grown_in_loop", "a tuple that a loop makes longer"),
    ("extend_by_rows", "does not know one by one"),
    ("alias_of_grown", "shares its memory"),
    ("repeated_by_count", "repeated a number of times known only when the function runs"),
])
def test_list_concatenations_refused_are_located(name, words) -> None:
    """Refused at the user's line, with what to write instead (``repeated_by_count``:
    a list times a run-time count, which main computed wrong, value and gradient)."""
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(getattr(F, name))(X, 3)
    err = str(info.value)
    assert words in err, err
    assert f'File "{F.__file__}", line ' in err and "<s2s:" not in err, err
    assert "Instead:" in err, err


# ---- 3. a user module's functions, called by attribute --------------------------------


def test_module_attribute_calls_run_on_jax() -> None:
    """``lib.helper(x)`` under ``s2s.jit(f, backend="jax")`` ran NumPy on tracers (a
    TracedValueError); the same source run by NumPy is the oracle here (JAX's, with
    the module's twin, in the slow sweep below)."""
    for dtype in DTYPES:
        x = X.astype(dtype)
        got, expected = s2s.jit(F.module_calls, backend="jax")(x), F.module_calls(x)
        assert np.asarray(got).dtype == np.asarray(expected).dtype  # (SCALE: float64)
        np.testing.assert_allclose(got, expected, **tol(dtype))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["module_calls", "module_grad_in_body"])
def test_module_attribute_calls(name) -> None:
    """``import idiom_leftover_lib as lib``; ``lib.helper(x)``: on the JAX backend the
    module's functions run on JAX (they ran NumPy on tracers); grad, jvp and vmap
    against JAX with the module's twin."""
    ours, theirs = getattr(F, name), getattr(J, name)
    for dtype in DTYPES:
        x = X.astype(dtype)
        close(s2s.jit(ours, backend="jax")(x), jax.jit(theirs)(x), dtype)
        close(s2s.jit(s2s.grad(ours), backend="jax")(x), jax.grad(theirs)(x), dtype)
        close(s2s.grad(ours)(x), jax.grad(theirs)(x), dtype)
        close(s2s.jvp(ours, (x,), (x,)), jax.jvp(theirs, (x,), (x,)), dtype)
    close(s2s.vmap(ours)(np.stack([X, -X])), jax.vmap(theirs)(np.stack([X, -X])),
          np.float64)


@pytest.mark.slow
def test_module_constant_read_at_each_call_on_numpy() -> None:
    """``lib.SCALE`` rebound between calls: the NumPy backend's code reads it at each
    call (the JAX backend reads it when JAX traces, as ``jax.jit`` does)."""
    old = L.SCALE
    g, jitted = s2s.grad(F.module_calls), s2s.jit(F.module_calls)
    try:
        for k in (1.0, 2.0, -3.0):
            L.SCALE = old * k
            J.lib.SCALE = jnp.asarray(L.SCALE)
            close(g(X), jax.grad(J.module_calls)(X), np.float64)
            close(jitted(X), J.module_calls(X), np.float64, check_dtype=False)
    finally:
        L.SCALE = old
        J.lib.SCALE = jnp.asarray(old)


# ---- 4. gradients in the body, in their primals' dtype ---------------------------------

@pytest.mark.slow
def test_a_body_gradient_of_float32_stays_float32() -> None:
    """jvp, vmap and jacfwd of a body's ``grad(partial(inner, w=W))`` (W float64) at
    a float32 input: float32 results (they were float64), the values those of the
    float64 computation to float32's precision (JAX's: the slow sweep below)."""
    f = F.grad_of_partial_module_array
    x32 = X.astype(np.float32)
    p, t = s2s.jvp(f, (x32,), (x32,))
    p64, t64 = s2s.jvp(f, (X,), (X,))
    np.testing.assert_allclose(t64, central(f, X, X), rtol=1e-6)
    batch = s2s.vmap(f)(np.stack([x32, -x32]))
    jac = s2s.jacfwd(f)(x32)
    for got, expected in ((p, p64), (t, t64), (batch, [p64, f(-X)]),
                          (jac, s2s.jacfwd(f)(X))):
        assert np.asarray(got).dtype == np.float32
        np.testing.assert_allclose(got, expected, rtol=5e-4, atol=5e-5)


DTYPE_CASES = ["grad_of_partial_module_array", "grad_meeting_module_array",
               "value_and_grad_module_array", "hessian_module_array",
               "jacrev_module_array", "partial_module_array"]


@pytest.mark.every_case
@pytest.mark.parametrize("name, dtype", default(
    [(n, d) for n in DTYPE_CASES for d in DTYPES], set()))
def test_body_gradients_keep_their_primals_dtype(name, dtype) -> None:
    """A float32 input meeting a float64 module array inside a gradient taken in the
    body: jvp, vmap, jacfwd and the Hessian came back float64 (JAX: float32); values
    and dtypes against JAX."""
    ours, theirs = getattr(F, name), getattr(J, name)
    x = X.astype(dtype)
    close(ours(x), theirs(x), dtype)
    close(s2s.jvp(ours, (x,), (x,)), jax.jvp(theirs, (x,), (x,)), dtype)
    close(s2s.vmap(ours)(np.stack([x, 2 * x])), jax.vmap(theirs)(np.stack([x, 2 * x])),
          dtype)
    close(s2s.jacfwd(ours)(x), jax.jacfwd(theirs)(x), dtype)
    if scalar(ours):
        close(s2s.hessian(ours)(x), jax.hessian(theirs)(x), dtype)
    else:
        close(s2s.jacrev(ours)(x), jax.jacrev(theirs)(x), dtype)


# ---- 5. 0-d results are 0-d arrays -------------------------------------------------------

SCALAR_INPUTS = [0.3, np.float64(0.3), np.array(0.3), np.float32(0.3),
                 np.array(0.3, np.float32)]


def _results(fn, a):
    """Every result of every transform of ``fn`` at ``a`` (a 0-d input), by name."""
    p, vjp_fn = s2s.vjp(fn, a)
    out, f_jvp = s2s.linearize(fn, a)
    return {
        "jvp": s2s.jvp(fn, (a,), (a,)), "value_and_grad": s2s.value_and_grad(fn)(a),
        "grad": s2s.grad(fn)(a), "jacfwd": s2s.jacfwd(fn)(a), "jacrev": s2s.jacrev(fn)(a),
        "hessian": s2s.hessian(fn)(a), "vjp": (p, *vjp_fn(a)), "jit": s2s.jit(fn)(a),
        "linearize": (out, f_jvp(a)), "vmap": s2s.vmap(fn)(np.stack([a, a])),
    }


def test_jvp_of_a_gradient_at_a_0d_input_gives_arrays() -> None:
    """The report's case: ``s2s.jvp(s2s.grad(f), (x,), (v,))`` at a 0-d ``x`` gave
    ``(np.float64, ndarray)``; JAX gives two 0-d Arrays.  Values against the
    derivatives written out (JAX's: the slow test below)."""
    g = s2s.grad(F.scalar_fn)
    for a in (np.float64(0.3), np.array(0.3, np.float32)):
        for call in (1, 2, 3):
            got = s2s.jvp(g, (a,), (a,))
            assert [type(v) for v in got] == [np.ndarray, np.ndarray], got
            assert all(v.dtype == np.result_type(a) for v in got), got
        y = float(a)  # f = sin(y) y: f' = y cos(y) + sin(y), f'' = 2 cos(y) - y sin(y)
        expected = (y * np.cos(y) + np.sin(y), (2 * np.cos(y) - y * np.sin(y)) * y)
        np.testing.assert_allclose(np.array(got, np.float64), expected, rtol=1e-6)
        out, _ = s2s.vjp(F.scalar_fn, a)
        assert type(out) is np.ndarray and type(s2s.jit(F.scalar_fn)(a)) is np.ndarray


@pytest.mark.slow
def test_zero_d_results_are_arrays() -> None:
    """At a 0-d input (a Python float, a NumPy scalar, a 0-d array, float32 too) every
    transform's results are ndarrays, as JAX's are Arrays (jvp's primal, the value of
    value_and_grad, vjp's and linearize's primal and s2s.jit's output were NumPy
    scalars), at the 1st, 2nd and 3rd calls (the third runs the specialized code),
    of a function, of its gradient and of a body calling ``s2s.grad``; values against
    JAX (and the dtype: float32 in, float32 out)."""
    grad_fn = s2s.grad(F.scalar_fn)
    cases = [(F.scalar_fn, J.scalar_fn), (grad_fn, jax.grad(J.scalar_fn)),
             (F.scalar_body_grad, J.scalar_body_grad)]
    for a in SCALAR_INPUTS:
        dtype = np.float32 if np.result_type(a) == np.float32 else np.float64
        for ours, theirs in cases:
            for call in (1, 2, 3):
                got = _results(ours, a)
                for name, value in got.items():
                    leaves = value if isinstance(value, tuple) else (value,)
                    assert all(type(v) is np.ndarray for v in leaves), (name, a, leaves)
                    assert all(v.dtype == dtype for v in leaves), (name, a, leaves)
            if type(a) is np.ndarray and a.dtype == np.float32:
                close(got["jvp"], jax.jvp(theirs, (a,), (a,)), np.float32)
                close(got["value_and_grad"] if ours is not grad_fn else got["jvp"][0],
                      jax.value_and_grad(theirs)(a) if ours is not grad_fn
                      else theirs(a), np.float32)


@pytest.mark.slow
def test_zero_d_results_of_vector_inputs() -> None:
    """A scalar output of a vector input (``np.sum``) is a 0-d array too."""
    p, t = s2s.jvp(F.module_calls, (X,), (X,))
    v, _ = s2s.value_and_grad(F.module_calls)(X)
    assert type(p) is np.ndarray and type(t) is np.ndarray and type(v) is np.ndarray
    assert type(s2s.jit(F.module_calls)(X)) is np.ndarray
    assert type(s2s.vjp(F.module_calls, X)[0]) is np.ndarray
