"""Constructs JAX runs that s2s refused (issue 23, functions as values): a
``functools.reduce`` of a function given as an argument, a generator helper the
function consumes (``for a, b in pairs(xs):``, ``sum(... for ... in pairs(xs))``,
``yield from``), and a sliding window kept in a list (``del parts[0]`` in a loop).

Every expected value comes from JAX on the same source (``jax_twin``), float64 and
float32, at calls 1, 3 and 10 whose values (and lengths, and functions passed)
change: grad, value_and_grad, jvp, vmap, vmap of grad, jacrev, hessian, ``s2s.jit``
on both backends, and as a callee.  The default tier runs the refusals and one sliding
window's gradients (the budget of the default suite); ``-m slow`` runs everything."""

from __future__ import annotations

import operator
from functools import partial

import consumed_fns as F  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX, assert_close_to, central_grad, compiled, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax
    import jax.numpy as jnp

    J = jax_twin(F)

X = np.array([0.3, -0.7, 1.2, 0.5, -0.2])
DTYPES = [np.float64, np.float32]
CALLS = (1, 3, 10)
close = partial(assert_close_to, f64=1e-8, f32=5e-4)

# functions of x alone, the length of x changing between calls
GENERATORS = ["pair_sum", "pair_loop", "stacked_yields", "nested_generator", "generator_caller"]
WINDOWS = ["window_sum", "window_pop_stack", "window_caller"]


def _x(call: int, dtype, size: int | None = None) -> np.ndarray:
    size = size or 4 + call % 3  # (4, 5, 6 items: a length fixed per call)
    base = np.resize(X, size) * (1 + 0.1 * call) - 0.05 * call
    return base.astype(dtype)


def _sweep(ours, theirs, dtype, sizes=True) -> None:
    """grad, value_and_grad, jvp at calls 1, 3, 10; vmap, vmap(grad), jacrev, hessian
    and s2s.jit (NumPy) at one call."""
    g, vg, jitted = s2s.grad(ours), s2s.value_and_grad(ours), s2s.jit(s2s.grad(ours))
    for call in CALLS:
        x = _x(call, dtype, None if sizes else 5)
        v = (x[::-1] * 0.5 + 0.25).astype(dtype)
        close(g(x), compiled(jax.grad(theirs))(x), dtype)
        close(vg(x), compiled(jax.value_and_grad(theirs))(x), dtype)
        close(jitted(x), compiled(jax.grad(theirs))(x), dtype)
        close(s2s.jvp(ours, (x,), (v,)),
              compiled(lambda x, v: jax.jvp(theirs, (x,), (v,)))(x, v), dtype)
    x = _x(1, dtype)
    batch = np.stack([x, 0.5 * x, x[::-1].copy()])
    close(s2s.vmap(ours)(batch), compiled(jax.vmap(theirs))(batch), dtype)
    close(s2s.vmap(g)(batch), compiled(jax.vmap(jax.grad(theirs)))(batch), dtype)
    close(s2s.jacrev(ours)(x), compiled(jax.jacrev(theirs))(x), dtype)
    close(s2s.hessian(ours)(x), compiled(jax.hessian(theirs))(x), dtype)


# ---- 1. functools.reduce(f, xs, init) of a function passed in -----------------------


def _reducers(step: int):
    """(ours, JAX's) functions, changing between calls: a module function, NumPy's
    multiply, a lambda, an operator."""
    def square_add(a, v):
        return a + v * v

    table = [(F.blend, J.blend), (np.multiply, jnp.multiply), (square_add, square_add),
             (F.soft, J.soft), (operator.add, operator.add)]
    return table[step % len(table)]


@pytest.mark.slow
def test_reduce_of_a_function_argument_default_tier() -> None:
    """The one cheap check of the default tier: grad over three functions."""
    g = s2s.grad(F.reduce_rows)
    for step in range(3):
        mine, jaxs = _reducers(step)
        x = _x(step, np.float64)
        close(g(x, mine), jax.grad(J.reduce_rows)(x, jaxs), np.float64)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", ["reduce_rows", "reduce_items"])
def test_reduce_of_a_function_argument(name, dtype) -> None:
    ours, theirs = getattr(F, name), getattr(J, name)
    g, vg, jitted = s2s.grad(ours), s2s.value_and_grad(ours), s2s.jit(s2s.grad(ours))
    for step in range(10):
        mine, jaxs = _reducers(step)
        x = _x(step, dtype)
        expected = jax.grad(theirs)(x, jaxs)
        close(g(x, mine), expected, dtype)
        close(jitted(x, mine), expected, dtype)
        if step + 1 in CALLS:
            close(vg(x, mine), jax.value_and_grad(theirs)(x, jaxs), dtype)
            v = x[::-1].copy()
            close(s2s.jvp(lambda x: ours(x, mine), (x,), (v,)),
                  jax.jvp(lambda x: theirs(x, jaxs), (x,), (v,)), dtype)
        if step < 3:
            batch = np.stack([x, -x, 0.5 * x])
            close(s2s.vmap(g, in_axes=(0, None))(batch, mine),
                  jax.vmap(jax.grad(theirs), in_axes=(0, None))(batch, jaxs), dtype)
            close(s2s.vmap(ours, in_axes=(0, None))(batch, mine),
                  jax.vmap(theirs, in_axes=(0, None))(batch, jaxs), dtype)
            close(s2s.hessian(ours)(x, mine), jax.hessian(theirs)(x, jaxs), dtype)
            close(s2s.jacrev(ours)(x, mine), jax.jacrev(theirs)(x, jaxs), dtype)
    on_jax = s2s.jit(s2s.grad(ours), backend="jax", static_argnums=1)
    for step in range(3):
        mine, jaxs = _reducers(step)
        x = _x(step, dtype)
        close(on_jax(x, mine), jax.grad(theirs)(x, jaxs), dtype)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_reduce_in_a_callee(dtype) -> None:
    _sweep(F.reduce_caller, J.reduce_caller, dtype)
    x = _x(3, dtype)
    close(s2s.jit(s2s.grad(F.reduce_caller), backend="jax")(x),
          jax.grad(J.reduce_caller)(x), dtype)


# ---- 2. a function stored in a dict or list argument --------------------------------


def _configs(step: int, dtype):
    """(ours, JAX's) dicts whose function changes between calls: np.tanh, np.sin, a
    lambda, a module function."""
    def cube(v):
        return v * v * v * 0.25

    table = [(np.tanh, jnp.tanh), (np.sin, jnp.sin), (cube, cube), (F.blend_one, J.blend_one)]
    mine, jaxs = table[step % len(table)]
    scale = 2.0 - 0.25 * step
    return {"act": mine, "scale": scale}, {"act": jaxs, "scale": scale}


@pytest.mark.slow
def test_a_function_in_a_dict_default_tier() -> None:
    g = s2s.grad(F.act_cfg)
    for step in range(3):
        mine, jaxs = _configs(step, np.float64)
        x = _x(step, np.float64)
        close(g(x, mine), jax.grad(J.act_cfg)(x, jaxs), np.float64)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", ["act_cfg", "act_passed"])
def test_a_function_in_a_dict(name, dtype) -> None:
    """grad, value_and_grad, s2s.jit at ten calls whose function changes; jvp,
    vmap, vmap(grad), jacrev and hessian at calls 1, 3 and 10."""
    ours, theirs = getattr(F, name), getattr(J, name)
    g, vg, jitted = s2s.grad(ours), s2s.value_and_grad(ours), s2s.jit(s2s.grad(ours))
    for step in range(10):
        mine, jaxs = _configs(step, dtype)
        x = _x(step, dtype)
        expected = jax.grad(theirs)(x, jaxs)
        close(g(x, mine), expected, dtype)
        close(jitted(x, mine), expected, dtype)
        if step + 1 not in CALLS:
            continue
        close(vg(x, mine), jax.value_and_grad(theirs)(x, jaxs), dtype)
        v = x[::-1].copy()
        close(s2s.jvp(lambda x: ours(x, mine), (x,), (v,)),
              jax.jvp(lambda x: theirs(x, jaxs), (x,), (v,)), dtype)
        batch = np.stack([x, -x, 0.5 * x])
        close(s2s.vmap(ours, in_axes=(0, None))(batch, mine),
              jax.vmap(lambda b: theirs(b, jaxs))(batch), dtype)
        close(s2s.vmap(g, in_axes=(0, None))(batch, mine),
              jax.vmap(jax.grad(lambda b: theirs(b, jaxs)))(batch), dtype)
        if name == "act_cfg":  # (jacrev/jacfwd of a function only passing on a value
            # that holds functions: refused, located, as for a function parameter
            # passed on; see the test below)
            close(s2s.jacrev(ours)(x, mine), jax.jacrev(theirs)(x, jaxs), dtype)
        close(s2s.hessian(ours)(x, mine), jax.hessian(theirs)(x, jaxs), dtype)


@pytest.mark.slow
def test_jacobians_of_a_function_passing_the_dict_on() -> None:
    """Refused on the funcs10 branch alone ("an item of `cfg` is called"); with the
    dict argument a callee is handed made per call's keys (the refuse10 branch),
    jacrev and jacfwd run it, the functions changing between calls."""
    jac, jaf = s2s.jacrev(F.act_passed), s2s.jacfwd(F.act_passed)
    for act, theirs in ((np.tanh, jnp.tanh), (np.sin, jnp.sin), (np.tanh, jnp.tanh)):
        want = jax.jacrev(J.act_passed)(X, {"act": theirs, "scale": 2.0})
        close(jac(X, {"act": act, "scale": 2.0}), want, np.float64)
        close(jaf(X, {"act": act, "scale": 2.0}), want, np.float64)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_functions_in_a_list_or_tuple(dtype) -> None:
    g = s2s.grad(F.act_list)
    fns = [([np.sin, 2.0, np.cos], [jnp.sin, 2.0, jnp.cos]),
           ((np.tanh, 0.5, F.blend_one), (jnp.tanh, 0.5, J.blend_one))]
    for step in range(10):
        mine, jaxs = fns[step % 2]
        x = _x(step, dtype)
        close(g(x, mine), jax.grad(J.act_list)(x, jaxs), dtype)
    # JAX's jit takes the tuple as a static (hashable) argument; so does s2s's
    on_jax = s2s.jit(s2s.grad(F.act_list), backend="jax", static_argnums=1)
    close(on_jax(_x(1, dtype), fns[1][0]), jax.grad(J.act_list)(_x(1, dtype), fns[1][1]),
          dtype)


@pytest.mark.slow
def test_a_module_dict_of_a_function_changed_between_calls() -> None:
    """``CONFIG["act"]`` rebound between calls: the next call uses the new function
    (the callee's code made again), as JAX's next trace would."""
    g = s2s.grad(F.act_module)
    before = dict(F.CONFIG)
    try:
        for step in range(10):
            mine, jaxs = _configs(step, np.float64)
            F.CONFIG.update(mine)
            J.CONFIG.update(jaxs)
            x = _x(step, np.float64)
            close(g(x), jax.grad(J.act_module)(x), np.float64)
            if step + 1 in CALLS:
                close(s2s.jit(s2s.grad(F.act_module), backend="jax")(x),
                      jax.grad(J.act_module)(x), np.float64)
                batch = np.stack([x, -x])
                close(s2s.vmap(g)(batch), jax.vmap(jax.grad(J.act_module))(batch),
                      np.float64)
    finally:
        F.CONFIG.update(before)
        J.CONFIG.update({"act": jnp.tanh, "scale": before["scale"]})


def test_a_dict_item_called_by_a_string_argument() -> None:
    """Refused before the tenth session: now made per call's string (the key a
    constant there), as ``jax.grad`` traces with the string as it is
    (tests/frontend/test_objects11.py has the sweep against JAX)."""
    g = s2s.grad(F.act_by_key)
    for key, want in (("a", np.cos(X)), ("b", -np.sin(X)), ("a", np.cos(X))):
        np.testing.assert_allclose(g(X, {"a": np.sin, "b": np.cos}, key), want, rtol=1e-12)


# ---- 3. a generator helper consumed by the function ---------------------------------


@pytest.mark.slow
def test_a_generator_helper_default_tier() -> None:
    g = s2s.grad(F.pair_loop)
    for call in CALLS:
        x = _x(call, np.float64)
        close(g(x), jax.grad(J.pair_loop)(x), np.float64)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", GENERATORS)
def test_a_generator_helper(name, dtype) -> None:
    _sweep(getattr(F, name), getattr(J, name), dtype)


@pytest.mark.slow
@pytest.mark.parametrize("name", GENERATORS)
def test_a_generator_helper_on_the_jax_backend(name) -> None:
    ours, theirs = getattr(F, name), getattr(J, name)
    on_jax = s2s.jit(s2s.grad(ours), backend="jax")
    for call in CALLS:
        x = _x(call, np.float64)
        close(on_jax(x), jax.grad(theirs)(x), np.float64)


def test_a_generator_given_to_a_transform_stays_refused() -> None:
    """JAX refuses it too (it returns a generator, not an array)."""
    with pytest.raises(s2s.TransformError, match="generator function") as info:
        s2s.grad(F.pairs)(X)
    assert "consumed_fns.py" in str(info.value)


def test_the_generator_runs_as_the_list_of_its_items() -> None:
    """The emitted code calls a copy collecting the items; the user's generator is
    untouched (calling it still gives a generator)."""
    g = s2s.grad(F.pair_loop)
    g(X)
    text = s2s.source(g)
    assert "_s2s_items.append((xs[i], xs[i + 1]))" in text, text
    assert list(F.pairs([1, 2, 3])) == [(1, 2), (2, 3)]


def test_a_yield_used_as_a_value_is_refused_at_its_line() -> None:
    with pytest.raises(s2s.TransformError, match="used as a value") as info:
        s2s.grad(F.sent_sum)(X)
    assert "consumed_fns.py" in str(info.value) and "got = yield" in str(info.value)


# ---- 5. a sliding window in a loop (del parts[0], parts.pop(0)) ---------------------


def test_a_sliding_window_default_tier() -> None:
    """Against central differences (no JAX compile in the default tier)."""
    g = s2s.grad(F.window_sum)
    for call in CALLS:
        x = _x(call, np.float64)
        np.testing.assert_allclose(g(x), central_grad(F.window_sum, x), rtol=1e-6, atol=1e-8)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", WINDOWS)
def test_a_sliding_window(name, dtype) -> None:
    _sweep(getattr(F, name), getattr(J, name), dtype)


@pytest.mark.slow
@pytest.mark.parametrize("name", WINDOWS)
def test_a_sliding_window_on_the_jax_backend(name) -> None:
    ours, theirs = getattr(F, name), getattr(J, name)
    on_jax = s2s.jit(s2s.grad(ours), backend="jax")
    for call in CALLS:
        x = _x(call, np.float64)
        close(on_jax(x), jax.grad(theirs)(x), np.float64)


@pytest.mark.slow
def test_a_window_shorter_than_k_and_an_empty_one() -> None:
    """Fewer items than k (nothing dropped) and one item; none: ``sum([])`` is the
    int 0, whose gradient JAX refuses, as s2s does."""
    for size in (1, 2):
        x = _x(1, np.float64, size)
        close(s2s.grad(F.window_sum)(x), jax.grad(J.window_sum)(x), np.float64)
        close(s2s.value_and_grad(F.window_sum)(x), jax.value_and_grad(J.window_sum)(x),
              np.float64)
    with pytest.raises(TypeError, match="real-valued outputs"):
        jax.grad(J.window_sum)(np.zeros(0))
    with pytest.raises(TypeError, match="real-valued outputs"):
        s2s.grad(F.window_sum)(np.zeros(0))


def test_a_window_summed_inside_the_loop_runs() -> None:
    """``sum(parts)`` of the window the loop keeps (refused until refused19b's
    frontend/windows.py read it as the window's slice): calls 1 to 10 against central
    differences, values and lengths changing."""
    g = s2s.grad(F.window_read_inside)
    for call in range(1, 11):
        x = np.random.default_rng(call).normal(size=3 + call % 4)
        h = 1e-6 * np.eye(x.size)
        fd = [(F.window_read_inside(x + e) - F.window_read_inside(x - e)) / 2e-6 for e in h]
        np.testing.assert_allclose(g(x), fd, rtol=1e-6, atol=1e-8, err_msg=f"call {call}")


def test_an_error_in_a_generator_quotes_its_line() -> None:
    """The copy keeps the generator's line numbers: the error quotes the user's
    `yield` line (its column is shifted by the `_s2s_items.append(` the copy writes)."""
    with pytest.raises(s2s.TransformError, match="has no attribute `sinn`") as info:
        s2s.grad(F.misspelled_sum)(X)
    assert "consumed_fns.py" in str(info.value) and "yield np.sinn(v)" in str(info.value)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_a_tuple_of_functions_called_by_index(dtype) -> None:
    """``fs[0](x)`` of a tuple (or list) argument of functions only, walked too
    (``fs[0]`` refused on main, the walk alone ran)."""
    g = s2s.grad(F.called_items)
    fns = [((np.sin, np.tanh), (jnp.sin, jnp.tanh)),
           ([np.cos, F.blend_one, np.sin], [jnp.cos, J.blend_one, jnp.sin])]
    for step in range(10):
        mine, jaxs = fns[step % 2]
        x = _x(step, dtype)
        close(g(x, mine), jax.grad(J.called_items)(x, jaxs), dtype)
    batch = np.stack([x, -x])
    close(s2s.vmap(g, in_axes=(0, None))(batch, fns[0][0]),
          jax.vmap(jax.grad(J.called_items), in_axes=(0, None))(batch, fns[0][1]), dtype)
