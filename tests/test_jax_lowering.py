"""Python control flow of emitted code lowered to jax.lax on the JAX backend
(s2s/backends/control.py, s2s/backends/jax_control.py).

Each lowered program is checked against the NumPy backend running the same emitted
code (the unlowered text), and where JAX's own transforms apply, against jax.grad of
the same source with ``np`` bound to ``jax.numpy`` (Python control flow on concrete
values, outside jit)."""

from __future__ import annotations

import importlib.util
import re
import types
from pathlib import Path

import numpy as np
import pytest

import s2s

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

from s2s.backends import TracedValueError  # noqa: E402
from s2s.backends.control import LAX_IMPORT, STAYS, lower_control  # noqa: E402


def on_jax(f):
    """``f``'s own code with ``np`` bound to ``jax.numpy``: JAX's twin of it."""
    return types.FunctionType(f.__code__, {**f.__globals__, "np": jnp}, f.__name__)


# ---- programs whose control flow depends on values ------------------------------------


def branchy(x):
    s = np.sum(x)
    if s > 0.5:
        y = np.sin(x) * s
    else:
        y = np.cos(x) - s
    return np.sum(y**2)


def loop_with_branch(x, n):
    total = 0.0
    y = x
    for i in range(n):
        y = np.tanh(y * 1.3 + 0.1 * i)
        if np.sum(y) > 0.0:
            total = total + np.sum(y**2)
        else:
            total = total - np.sum(y) * 0.5
    return total


def shrink(x):
    y = x
    while np.sum(y * y) > 1.0:
        y = y * 0.8
    return np.sum(np.sin(y))


def three_steps(x):
    return loop_with_branch(x, 3)


def shrink_sin(x):
    y = x
    while np.sum(y * y) > 1.0:
        y = np.sin(y) * 0.9
    return np.sum(y**2)


def nested_loops(x, n, m):
    y = x
    for i in range(n):
        for j in range(m):
            y = np.sin(y) * 0.9 + x * 0.1
    return np.sum(y)


def indexed_writes(x, n):
    h = np.zeros((n + 1, x.shape[0]))
    h[0] = x
    for t in range(n):
        if np.sum(h[t]) > 0.0:
            h[t + 1] = np.tanh(h[t] * 1.1 + 0.2)
        else:
            h[t + 1] = h[t] * 0.5
    return np.sum(h**2)


def loop_with_break(x):
    y = x
    for i in range(5):
        y = np.sin(y) * 1.5 + x
        if np.sum(y) > 4.0:
            break
    return np.sum(y**2)


X_POS = np.array([0.4, 0.3, 0.2])
X_NEG = np.array([-0.4, 0.1, -0.6])


def assert_close(got, expected, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=rtol, atol=atol)


# ---- if -> lax.cond --------------------------------------------------------------------


def test_if_on_a_traced_value_is_one_lax_cond_for_both_branches() -> None:
    g = s2s.jit(s2s.grad(branchy), backend="jax")
    for x in (X_POS, X_NEG):  # one branch, then the other: same compiled code
        assert_close(g(x), s2s.grad(branchy)(x))
        assert_close(g(x), jax.grad(on_jax(branchy))(x))
    assert g.cache_info().compilations == 1
    source = s2s.source(g)
    assert LAX_IMPORT in source
    assert "# lowered: if s_greater_0_5:" in source
    assert "def if_true():" in source and "def if_false():" in source
    # sin_x is bound on one path only (the backward reads it under the same test):
    # the other branch returns None there, zeros of its type once traced
    assert "sin_x, y = lax.cond(s_greater_0_5, if_true, if_false, ())" in source
    assert "return None, y" in source
    assert STAYS not in source


def test_value_and_grad_of_branches_under_jit() -> None:
    vg = s2s.jit(s2s.value_and_grad(branchy), backend="jax")
    for x in (X_POS, X_NEG):
        value, grad = vg(x)
        assert_close(value, branchy(x))
        assert_close(grad, jax.grad(on_jax(branchy))(x))


# ---- for over a range -> lax.scan / fori_loop -------------------------------------------


@pytest.mark.parametrize("x", [X_POS, X_NEG, np.array([0.9, -1.2, 0.05])])
def test_loop_with_a_branch_is_a_scan_in_both_directions(x) -> None:
    g = s2s.jit(s2s.grad(loop_with_branch), backend="jax", static_argnums=1)
    assert_close(g(x, 4), s2s.grad(loop_with_branch)(x, 4))
    assert_close(g(x, 4), jax.grad(on_jax(loop_with_branch))(x, 4))
    source = s2s.source(g)
    assert "lax.scan_range(0, n, loop_body, " in source
    assert "push=(" in source and "pop=(" in source and "reverse=True" in source
    assert "lax.cond(" in source


def test_scan_is_rolled_not_unrolled() -> None:
    g = s2s.jit(s2s.grad(loop_with_branch), backend="jax", static_argnums=1)
    jaxpr = str(jax.make_jaxpr(lambda x: g(x, 50))(X_POS))
    assert jaxpr.count("scan[") == 2  # forward and backward, whatever the trip count
    assert "cond[" in jaxpr
    assert jaxpr.count("tanh") < 10


def test_loop_count_zero_and_one() -> None:
    g = s2s.jit(s2s.grad(loop_with_branch), backend="jax", static_argnums=1)
    for n in (0, 1):
        assert_close(g(X_POS, n), s2s.grad(loop_with_branch)(X_POS, n))


@pytest.mark.slow
def test_nested_loops_and_indexed_writes() -> None:
    g = s2s.jit(s2s.grad(nested_loops), backend="jax", static_argnums=(1, 2))
    assert_close(g(X_POS, 3, 2), s2s.grad(nested_loops)(X_POS, 3, 2))
    assert_close(g(X_POS, 3, 2), jax.grad(on_jax(nested_loops))(X_POS, 3, 2))
    w = s2s.jit(s2s.grad(indexed_writes), backend="jax", static_argnums=1)
    for x in (X_POS, X_NEG, np.array([0.5, -0.52, 0.01])):
        assert_close(w(x, 4), s2s.grad(indexed_writes)(x, 4))


def test_plain_loop_is_fori_loop_and_traced_bound_runs_forward() -> None:
    text = "\n".join([
        "import numpy as np",
        "",
        "",
        "def f(x, n):",
        "    y = x",
        "    for i in range(n):",
        "        y = np.sin(y) + i",
        "    return y",
        "",
    ])
    lowered = lower_control(text)
    assert "(y,) = lax.fori_loop(0, n, loop_body, (y,))" in lowered
    namespace: dict = {}
    exec(compile(lowered.replace("import numpy as np", "import jax.numpy as np"),
                 "<lowered>", "exec"), namespace)
    f = jax.jit(namespace["f"])  # n traced: lax.fori_loop with dynamic bounds
    y = X_POS
    for i in range(3):
        y = np.sin(y) + i
    assert_close(f(X_POS, 3), y)


# ---- while -> lax.while_loop -----------------------------------------------------------


def _jvp_of_shrink(x, v):
    return s2s.jvp(shrink, (x,), (v,))


def test_while_on_traced_values_runs_forward_mode() -> None:
    x, v = np.array([1.5, -2.0, 0.7]), np.array([1.0, 0.5, -0.25])
    jitted = s2s.jit(_jvp_of_shrink, backend="jax")
    out, out_dot = jitted(x, v)
    expected, expected_dot = s2s.jvp(shrink, (x,), (v,))
    assert_close(out, expected)
    assert_close(out_dot, expected_dot)
    assert_close(out_dot, jax.jvp(on_jax(shrink), (x,), (v,))[1])
    jitted(x * 3.0, v)  # more iterations: the same compiled while_loop
    assert jitted.cache_info().compilations == 1


def test_reverse_mode_through_a_traced_while_is_refused_as_jax_does() -> None:
    g = s2s.jit(s2s.grad(shrink_sin), backend="jax")
    with pytest.raises(TracedValueError) as info:
        g(np.array([1.5, -2.0, 0.7]))
    message = str(info.value)
    assert "Reverse-mode differentiation does not work" in message
    assert "lax.while_loop" in message
    # (at your loop, not at the emitted code's `# lowered: while ...` line)
    assert f'File "{__file__}", line {shrink_sin.__code__.co_firstlineno + 2}' in message and "<s2s" not in message
    assert "while np.sum(y * y) > 1.0:" in message
    assert "backend='numpy'" in message
    # JAX refuses the same: reverse mode through lax.while_loop
    def twin(x):
        return jnp.sum(jax.lax.while_loop(
            lambda y: jnp.sum(y * y) > 1.0, lambda y: jnp.sin(y) * 0.9, x) ** 2)

    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work"):
        jax.grad(twin)(np.array([1.5, -2.0, 0.7]))


def test_gradient_through_a_traced_while_that_saves_nothing_runs() -> None:
    """A linear while body saves nothing on a tape: its backward is a fori_loop over
    the traced trip count, which XLA runs (JAX itself refuses this one)."""
    g = s2s.jit(s2s.grad(shrink), backend="jax")
    for x in (np.array([1.5, -2.0, 0.7]), np.array([0.1, 0.2, 0.3]), X_NEG * 5.0):
        assert_close(g(x), s2s.grad(shrink)(x))
        assert_close(g(x), jax.grad(on_jax(shrink))(x))  # Python while, outside jit
    assert g.cache_info().compilations == 1
    assert "lax.while_loop(while_test, while_body" in s2s.source(g)
    assert "lax.fori_loop(0, n_iter, loop_body" in s2s.source(g)


def test_reverse_mode_through_a_traced_range_is_refused() -> None:
    g = s2s.jit(s2s.grad(loop_with_branch), backend="jax")  # n traced
    with pytest.raises(TracedValueError) as info:
        g(X_POS, 3)
    text = str(info.value)  # (at your loop, naming the argument to make static)
    assert f'File "{__file__}", line {loop_with_branch.__code__.co_firstlineno + 3}' in text and "<s2s" not in text
    assert "    for i in range(n):" in text
    assert "make `n` static, as jax.jit needs: s2s.jit(..., static_argnums=1)" in text


# ---- vmap and jit together ----------------------------------------------------------------


@pytest.mark.slow
def test_vmap_of_grad_with_branches_and_vmap_of_loops_under_jit() -> None:
    xs = np.stack([X_POS, X_NEG, np.array([0.9, -1.2, 0.05]), X_POS * -2.0])
    batched = s2s.vmap(s2s.grad(branchy))
    jitted = s2s.jit(batched, backend="jax")
    expected = np.stack([s2s.grad(branchy)(x) for x in xs])
    assert_close(jitted(xs), expected)
    assert_close(batched(xs), expected)
    # a loop with unbatched bounds stays a loop: lowered to fori_loop, the batched
    # `if` in it a np.where
    looped = s2s.vmap(loop_with_branch, in_axes=(0, None))
    jitted = s2s.jit(looped, backend="jax", static_argnums=1)
    expected = np.array([loop_with_branch(x, 3) for x in xs])
    assert_close(jitted(xs, 3), expected)
    assert "lax.fori_loop(" in s2s.source(jitted)
    # jvp of a loop with a value-dependent branch, called inside a jitted function
    v = np.array([1.0, -0.5, 0.25])

    def tangent(x):
        return s2s.jvp(three_steps, (x,), (v,))[1]

    for x in xs:
        assert_close(s2s.jit(tangent, backend="jax")(x),
                     jax.jvp(lambda x: on_jax(loop_with_branch)(x, 3), (x,), (v,))[1])


def test_static_test_stays_a_python_branch_at_run_time() -> None:
    def scaled(x, flag):
        if flag:
            return np.sum(np.sin(x))
        return np.sum(np.cos(x))

    g = s2s.jit(s2s.grad(scaled), backend="jax", static_argnums=1)
    for flag in (True, False):
        assert_close(g(X_POS, flag), s2s.grad(scaled)(X_POS, flag))
    jaxpr = str(jax.make_jaxpr(lambda x: g(x, True))(X_POS))
    assert "cond[" not in jaxpr  # a concrete test picks its branch while tracing


# ---- what stays Python ------------------------------------------------------------------


# ---- break and continue: flags, then lax ----------------------------------------------


def nested_break(x):
    total = 0.0
    y = x
    for i in range(3):
        for j in range(4):
            y = np.sin(y) * 1.3 + 0.1 * x
            if np.sum(y) > 1.5 + i:
                break
        total = total + np.sum(y**2)
    return total


def breaks_at_both_levels(x):
    total = 0.0
    y = x
    for i in range(4):
        for j in range(3):
            y = np.sin(y) * 1.3 + 0.1 * x
            if np.sum(y) > 1.5 + i:
                break
        total = total + np.sum(y**2)
        if total > 3.0:
            break
    return total


def while_with_break(x):
    y = x
    k = 0.0
    while np.sum(y) < 10.0:
        y = y * 1.3 + 0.1
        k = k + 1.0
        if np.max(y) > 3.0:
            break
    return np.sum(y) * k


# the break taken on the first iteration, a later one, and never
BREAK_XS = [np.array([1.5, 1.2, 0.9]), X_POS, X_NEG, np.array([-1.0, -2.0, 0.1])]


def test_break_in_a_static_range_is_a_masked_scan_under_grad() -> None:
    g = s2s.jit(s2s.grad(loop_with_break), backend="jax")
    for x in BREAK_XS:  # the iteration that breaks depends on x: one compiled code
        assert_close(g(x), s2s.grad(loop_with_break)(x))
        assert_close(g(x), jax.grad(on_jax(loop_with_break))(x))  # Python loop
    assert g.cache_info().compilations == 1
    source = s2s.source(g)
    assert STAYS not in source and not re.search(r"^\s*break\s*$", source, re.M)
    assert "going = True" in source and "going = False  # break" in source
    assert "# lowered: if going:" in source  # the body, masked once the loop broke
    assert "push=(tape,), going=" in source  # stops there when run the Python way
    assert "lax.scan_range(0, n_iter, " in source  # the backward: n_iter traced
    jaxpr = str(jax.make_jaxpr(g)(X_POS))
    assert jaxpr.count("scan[") == 2 and "while[" not in jaxpr


@pytest.mark.slow
def test_break_under_value_and_grad_jvp_and_a_static_trip_count() -> None:
    vg = s2s.jit(s2s.value_and_grad(loop_break_n), backend="jax", static_argnums=1)
    jv = s2s.jit(_jvp_of_loop_break_n, backend="jax", static_argnums=1)
    v = np.array([0.3, -1.0, 0.5])
    for x in BREAK_XS:
        for n in (0, 1, 6):
            value, grad = vg(x, n)
            assert_close(value, loop_break_n(x, n))
            assert_close(grad, jax.grad(on_jax(loop_break_n))(x, n))
            out, out_dot = jv(x, n, v)
            expected = jax.jvp(lambda x: on_jax(loop_break_n)(x, n), (x,), (v,))
            assert_close(out, expected[0])
            assert_close(out_dot, expected[1])


def loop_break_n(x, n):
    y = x
    for i in range(n):
        y = np.sin(y) * 1.5 + x
        if np.sum(y) > 4.0:
            y = y * 0.5
            break
        y = y + 0.1
    return np.sum(y**2)


def _jvp_of_loop_break_n(x, n, v):
    return s2s.jvp(loop_break_n, (x, n), (v, np.zeros((), s2s.api.float0)))


def test_break_with_a_traced_trip_count_runs_forward_and_refuses_reverse() -> None:
    jv = s2s.jit(_jvp_of_loop_break_n, backend="jax")  # n traced
    v = np.array([0.3, -1.0, 0.5])
    for x in BREAK_XS:
        out, out_dot = jv(x, 6, v)
        expected = jax.jvp(lambda x: on_jax(loop_break_n)(x, 6), (x,), (v,))
        assert_close(out, expected[0])
        assert_close(out_dot, expected[1])
    assert jv.cache_info().compilations == 1
    g = s2s.jit(s2s.grad(loop_break_n), backend="jax")
    with pytest.raises(TracedValueError, match="Reverse-mode differentiation"):
        g(X_POS, 6)


def test_break_in_an_inner_loop_under_grad() -> None:
    g = s2s.jit(s2s.grad(nested_break), backend="jax")
    for x in BREAK_XS:
        assert_close(g(x), s2s.grad(nested_break)(x))
        assert_close(g(x), jax.grad(on_jax(nested_break))(x))
    assert "going = False  # break" in s2s.source(g)


@pytest.mark.slow
def test_breaks_in_an_outer_loop_and_its_inner_loop_both_lower() -> None:
    # (forward: the backward of nested loops whose outer one breaks pops its tapes in
    # a loop with a traced count, which stays Python)
    for transform in (lambda f: f, s2s.jacfwd):
        g = s2s.jit(transform(breaks_at_both_levels), backend="jax")
        for x in BREAK_XS + [np.array([0.1, 0.2, 0.1])]:
            assert_close(g(x), transform(breaks_at_both_levels)(x))
        assert g.cache_info().compilations == 1
    plain = s2s.jit(breaks_at_both_levels, backend="jax")
    plain(X_POS)
    source = s2s.source(plain)
    assert STAYS not in source and source.count("going=") == 2


def test_break_in_a_while_loop_under_grad_and_jit() -> None:
    g = s2s.jit(s2s.grad(while_with_break), backend="jax")
    for x in (np.array([0.5, 0.7, 0.9]), np.array([2.0, 2.5, 2.9]), X_POS * 3.0):
        assert_close(g(x), s2s.grad(while_with_break)(x))
        assert_close(g(x), jax.grad(on_jax(while_with_break))(x))
    assert g.cache_info().compilations == 1
    source = s2s.source(g)
    assert STAYS not in source and "going=" in source and "lax.while_loop(" in source


CONTINUE_TEXT = "\n".join([
    "import numpy as np",
    "",
    "",
    "def f(x, n):",
    "    total = 0.0",
    "    for i in range(n):",
    "        # skip the negative ones",
    "        if x[i] < 0.0:",
    "            continue",
    "        total = total + np.sin(x[i]) * x[i]",
    "        if total > 1.0:",
    "            total = total * 0.5",
    "            break",
    "        else:",
    "            total = total + 0.1",
    "        total = total * 1.1",
    "    k = 0",
    "    while k < n:",
    "        k = k + 1",
    "        if x[k - 1] > 0.9:",
    "            continue",
    "        total = total + x[k - 1] ** 2",
    "    return total",
    "",
])


def test_continue_and_break_in_text_lowered_and_run_under_jit() -> None:
    lowered = lower_control(CONTINUE_TEXT)
    assert STAYS not in lowered
    assert not re.search(r"^\s*(break|continue)\s*$", lowered, re.M)
    assert "trip_going = False  # continue" in lowered
    assert "# lowered: if trip_going:" in lowered
    python: dict = {}
    exec(compile(CONTINUE_TEXT, "<python>", "exec"), python)
    namespace: dict = {}
    exec(compile(lowered.replace("import numpy as np", "import jax.numpy as np"),
                 "<lowered>", "exec"), namespace)
    f = jax.jit(namespace["f"])  # x and n traced: fori_loop and while_loop
    r = np.random.default_rng(5)
    for _ in range(6):
        x = r.uniform(-1.0, 1.5, size=6)
        for n in (0, 3, 6):
            assert_close(f(x, n), python["f"](x, n))


def test_and_or_not_of_traced_scalars_lowered() -> None:
    text = "\n".join([
        "import numpy as np",
        "",
        "",
        "def f(x):",
        "    low = 0.0 < np.mean(x)",
        "    high = np.mean(x) < 1.0",
        "    inside = low and high",
        "    either = low or high",
        "    outside = not inside",
        "    s = np.sum(x)",
        "    mixed = s and 2.0",
        "    return inside, either, outside, mixed",
        "",
    ])
    lowered = lower_control(text)
    assert "inside = lax.and_(low, high)" in lowered
    assert "either = lax.or_(low, high)" in lowered
    assert "outside = lax.not_(inside)" in lowered
    python: dict = {}
    exec(compile(text, "<python>", "exec"), python)
    namespace: dict = {}
    exec(compile(lowered.replace("import numpy as np", "import jax.numpy as np"),
                 "<lowered>", "exec"), namespace)
    f = jax.jit(namespace["f"])
    for x in (X_POS, X_NEG, X_POS * 4.0, np.zeros(3)):
        for got, expected in zip(f(x), python["f"](x)):  # Python's `and`/`or`/`not`
            assert_close(got, expected)


# ---- a plain function's own control flow under s2s.jit(f, backend="jax") --------------


def plain_control(x, n):
    total = 0.0
    y = x
    for i in range(n):
        y = np.sin(y) * 1.4 + x
        if np.sum(y) > 3.0:
            break
        elif np.sum(y) < -1.0:
            continue
        total = total + np.sum(y**2)
    while np.sum(y * y) > 1.0:
        y = y * 0.8
    if np.max(y) > 0.2:
        z = y * 2.0
    else:
        z = -y
    return total + np.sum(z)


def test_a_plain_functions_own_control_flow_is_lowered() -> None:
    jitted = s2s.jit(plain_control, backend="jax")  # x and n traced
    static = s2s.jit(plain_control, backend="jax", static_argnums=1)
    for x in BREAK_XS + [np.array([-2.0, -1.5, 0.3])]:
        for n in (0, 2, 5):
            assert_close(jitted(x, n), plain_control(x, n))
            assert_close(static(x, n), plain_control(x, n))
    assert jitted.cache_info().compilations == 1
    source = s2s.source(jitted)
    assert "# lowered: for i in range(n):" in source and "going=" in source
    assert "lax.while_loop(" in source and "lax.cond(np.max(y) > 0.2," in source


def test_a_plain_closure_is_lowered_with_its_early_returns() -> None:
    scale = np.array([1.0, 2.0, 3.0])

    def closure(x):
        y = x * scale
        if np.sum(y) > 0.0:
            y = np.sin(y)  # one branch rebinds y: the other keeps it
        return y

    jitted = s2s.jit(closure, backend="jax")
    for x in (X_POS, X_NEG):
        assert_close(jitted(x), closure(x))

    def early(x):
        if np.sum(x) > 0.0:
            return np.sin(x)
        return x

    def nested(x, k):
        if k > 0:
            if np.max(x) > 0.5:
                return x * k
            z = np.cos(x)
        else:
            return x - 1.0
        return z * 2.0

    def over_rows(x):
        for row in x:  # a loop over an array stays Python
            if np.sum(row) > 3.0:
                return row
        return x[0]

    jitted = s2s.jit(early, backend="jax")
    for x in (X_POS, X_NEG):
        assert_close(jitted(x), early(x))
    assert "lax.cond(np.sum(x) > 0.0," in s2s.source(jitted)
    jitted = s2s.jit(nested, backend="jax")  # (k traced too)
    for x in (X_POS, X_NEG, X_POS * 2.0):
        for k in (2.0, -1.0):
            assert_close(jitted(x, k), nested(x, k))
    assert s2s.source(jitted).count("lax.cond(") == 2
    with pytest.raises(TracedValueError) as info:  # all or nothing: the user's code
        s2s.jit(over_rows, backend="jax")(np.ones((3, 4)))
    assert "if np.sum(row) > 3.0:" in str(info.value) and __file__ in str(info.value)


# ---- a plain function's returns inside loops, and loop indices read after loops ----


def search(x, t):
    for i in range(x.shape[0]):
        if x[i] > t:
            return x * i
    return x


def index_after_break(x):
    for i in range(5):
        if x[i] > 0.5:
            break
    return x * i


def index_after_reversed_break(x):
    for i in reversed(range(5)):
        if x[i] > 0.5:
            break
    return x * i


def two_returns(x):
    s = 0.0
    for i in range(4):
        s = s + x[i]
        if s > 1.0:
            return s * 2.0
        if s < -1.0:
            return -s
    return s


def return_in_inner_loop(x):
    total = 0.0
    for i in range(3):
        for j in range(3):
            total = total + x[i] * x[j]
            if total > 2.0:
                return total + i * 10 + j
    return total


def return_in_while(x):
    k = 0
    while k < 10:
        x = x * 1.5
        if np.sum(x) > 20.0:
            return x
        k = k + 1
    return -x


def return_in_loop_in_branch(x):
    if x[0] > 0:
        for i in range(3):
            if x[i] < 0:
                return i
        return -1
    return -2


LOOP_RETURN_XS = [np.array(v) for v in (
    [0.1, 0.2, 0.9, 0.3, 0.7], [0.1, 0.2, 0.3, 0.4, 0.45], [2.0, -0.5, 0.3, 0.1, 0.0],
    [0.3, 0.4, -3.0, 0.2, 0.1], [-1.0, 0.5, 0.6, 0.9, 2.0], [0.9, 0.9, 0.9, 0.9, 0.9],
    [1.0, 2.0, -0.5, 0.1, 0.2])]


@pytest.mark.parametrize("fn", [search, index_after_break, index_after_reversed_break,
                                two_returns,
                                return_in_inner_loop, return_in_while,
                                return_in_loop_in_branch], ids=lambda f: f.__name__)
def test_returns_inside_loops_and_indices_after_loops_are_lowered(fn) -> None:
    jitted = s2s.jit(fn, backend="jax")
    seen = set()
    for x in LOOP_RETURN_XS:
        args = (x, 0.8) if fn is search else (x,)
        want = fn(*args)
        seen.add(np.asarray(want).tobytes())
        assert_close(jitted(*args), want)
    assert len(seen) > 2  # the inputs take several of the paths
    assert jitted.cache_info().compilations == 1  # one trace: the loops are lax's
    source = s2s.source(jitted)
    assert STAYS not in source and "going=" in source


def test_a_plain_function_writing_into_its_own_array_under_a_traced_test() -> None:
    def fill(x):
        h = np.zeros(3)
        for i in range(3):
            h[i] = x[i] * 2.0
            if np.sum(h) > 1.0:
                h[i] = -h[i]
        return h

    jitted = s2s.jit(fill, backend="jax")
    for x in (X_POS, X_NEG, np.array([0.3, 0.4, 0.5])):
        assert_close(jitted(x), fill(x))
    assert "h = h.at[i].set(-h[i])" in s2s.source(jitted)


def vector_break(x):
    y = x
    for i in range(4):
        y = np.sin(y) * 1.5 + x
        if np.sum(y) > 4.0:
            break
    return y


def scalar_break(x):
    y = x
    for i in range(4):
        y = np.sin(y) * 1.5 + x
        if np.sum(y) > 4.0:
            break
    return np.sum(y**2)


def jacobians_inside(x):
    return s2s.jacfwd(vector_break)(x) - s2s.jacrev(vector_break)(x)


@pytest.mark.slow
def test_jacobians_and_hessian_of_a_value_dependent_break_under_jit() -> None:
    fwd = s2s.jit(s2s.jacfwd(vector_break), backend="jax")
    rev = s2s.jit(s2s.jacrev(vector_break), backend="jax")
    hess = s2s.jit(s2s.hessian(scalar_break), backend="jax")
    inside = s2s.jit(jacobians_inside, backend="jax")
    for x in BREAK_XS:
        expected = jax.jacfwd(on_jax(vector_break))(x)  # Python loop, concrete values
        assert_close(fwd(x), expected)
        assert_close(rev(x), expected)
        assert_close(fwd(x), s2s.jacfwd(vector_break)(x))
        assert_close(inside(x), np.zeros((3, 3)), atol=1e-12)
        # forward mode over the gradient: its backward reads `tape[-1]`, then
        # `tape.pop()`, which the pass reads as one pop (a scan over the stack)
        assert_close(hess(x), jax.hessian(on_jax(scalar_break))(x), rtol=1e-9)
    assert fwd.cache_info().compilations == 1 and hess.cache_info().compilations == 1


def test_a_peek_then_pop_of_a_tape_is_read_as_one_pop() -> None:
    text = "\n".join([
        "import numpy as np",
        "",
        "",
        "def f(x, n):",
        "    tape = []",
        "    y = x",
        "    for i in range(n):",
        "        tape.append(y)",
        "        y = np.sin(y)",
        "    for _ in range(n):",
        "        last = tape[-1]",
        "        other = last * 2.0",
        "        tape.pop()",
        "        y = y * np.cos(last) + other",
        "    return y",
        "",
    ])
    lowered = lower_control(text)
    assert "tape[-1]" not in lowered and "pop=(tape,)" in lowered
    python: dict = {}
    exec(compile(text, "<python>", "exec"), python)
    namespace: dict = {}
    exec(compile(lowered.replace("import numpy as np", "import jax.numpy as np"),
                 "<lowered>", "exec"), namespace)
    f = jax.jit(namespace["f"], static_argnums=1)
    for n in (0, 1, 4):
        assert_close(f(X_POS, n), python["f"](X_POS, n))


def test_a_loop_with_break_that_stays_python_keeps_its_break() -> None:
    text = "\n".join([
        "import numpy as np",
        "",
        "",
        "def f(x):",
        "    other = [0]",
        "    y = x",
        "    for i in range(4):",
        "        y = np.sin(y)",
        "        other[0] = i",
        "        if np.sum(y) > 1.0:",
        "            break",
        "    return y",
        "",
    ])
    lowered = lower_control(text)
    assert "            break" in lowered and "going" not in lowered
    assert f"{STAYS}: a write into a Python container" in lowered


def test_if_that_stays_python_keeps_its_tapes_python_too() -> None:
    """An ``if`` whose branch cannot be lowered appends on one path only; the
    matching backward ``if`` must then pop on that path only (not hoist its pop)."""
    text = "\n".join([
        "import numpy as np",
        "",
        "",
        "def f(x, t):",
        "    tape = []",
        "    other = [1]",
        "    for i in range(3):",
        "        if t:",
        "            y = np.sin(x)",
        "            other[0] = 2",
        "            tape.append(y)",
        "        else:",
        "            y = x",
        "    for i in reversed(range(3)):",
        "        if t:",
        "            y = tape.pop()",
        "    return y",
        "",
    ])
    lowered = lower_control(text)
    assert lowered.count(STAYS) >= 2
    assert "tape.pop()" in lowered and ".append(tape_" not in lowered


def test_loop_whose_carry_changes_shape_falls_back_to_python() -> None:
    def widening(x):
        total = 0.0
        for i in range(3):
            total = total + x * i
        return np.sum(total)

    g = s2s.jit(widening, backend="jax")  # a plain function: its own loop, not lowered
    assert_close(g(X_POS), widening(X_POS))
    text = "\n".join([
        "import numpy as np",
        "",
        "",
        "def f(x):",
        "    total = 0.0",
        "    for i in range(3):",
        "        total = total + x * i",
        "    return total",
        "",
    ])
    namespace: dict = {}
    lowered = lower_control(text).replace("import numpy as np", "import jax.numpy as np")
    exec(compile(lowered, "<lowered>", "exec"), namespace)
    assert "lax.fori_loop" in lowered
    assert_close(jax.jit(namespace["f"])(X_POS), X_POS * 3.0)


# ---- tools/gpu_check.py ---------------------------------------------------------------


@pytest.mark.slow
def test_gpu_check_skips_cleanly_without_a_gpu() -> None:
    import subprocess
    import sys
    from pathlib import Path

    if any(d.platform == "gpu" for d in jax.devices()):
        pytest.skip("a GPU is present: the check would run, not skip")
    script = Path(__file__).resolve().parent.parent / "tools" / "gpu_check.py"
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("gpu_check: skipped: no GPU visible to JAX")
    assert "Traceback" not in done.stderr


# ---- random programs: lowered code against the NumPy backend -------------------------


def _check_random_program(source: str, seed: int) -> str:
    """``s2s.jit(s2s.grad(f), backend="jax")`` (control flow lowered) equals the NumPy
    backend's gradient; the value of ``s2s.jit(f)`` too.  Returns what was checked."""
    import warnings

    from fuzz_programs import load

    f, _ = load(source)
    r = np.random.default_rng(seed)
    x, y = r.normal(size=4), r.normal(size=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        value = f(x, y)
        if not np.isfinite(value) or abs(value) > 1e8:
            return "skipped"
        try:
            expected = s2s.grad(f, argnums=(0, 1))(x, y)
        except s2s.TransformError:
            return "refused"
        g = s2s.jit(s2s.grad(f, argnums=(0, 1)), backend="jax")
        got = g(x, y)
    scale = max(1.0, float(np.max(np.abs(expected))))
    for a, b in zip(got, expected):
        np.testing.assert_allclose(np.asarray(a), b, rtol=1e-7, atol=1e-9 * scale,
                                   err_msg=source)
    plain = s2s.jit(f, backend="jax")  # the user's own code, its control flow lowered
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            plain_value = plain(x, y)
    except TracedValueError:
        pass  # a statement stayed Python on a traced test: said at the user's line
    else:
        np.testing.assert_allclose(np.asarray(plain_value), value, rtol=1e-7,
                                   atol=1e-9 * max(1.0, abs(value)), err_msg=source)
    return "lowered" if "lax." in s2s.source(g) else "matched"


def _random_programs(examples: int):
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import strategies as st

    from fuzz_programs import programs

    @settings(max_examples=examples, deadline=None, database=None, derandomize=True,
              phases=[Phase.explicit, Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(source=programs(), seed=st.integers(0, 2**16))
    def run(source, seed):
        outcomes.append(_check_random_program(source, seed))

    outcomes: list[str] = []
    run()
    return outcomes


@pytest.mark.slow
def test_random_programs_with_branches_and_loops_lowered() -> None:
    outcomes = _random_programs(10)
    assert outcomes.count("lowered") >= 3, outcomes  # the check saw lowered code


@pytest.mark.slow
def test_random_programs_with_branches_and_loops_lowered_long() -> None:
    outcomes = _random_programs(300)
    assert outcomes.count("lowered") >= 50, outcomes


@pytest.mark.slow
def test_gpu_check_runs_its_cases_on_the_cpu_when_asked() -> None:
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parent.parent / "tools" / "gpu_check.py"
    done = subprocess.run([sys.executable, str(script), "--allow-cpu", "--limit", "12",
                           "--repeats", "1"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "12 conformance cases on cpu" in done.stdout
    assert "value" in done.stdout and "FAIL" not in done.stdout


def test_conditional_expressions_beside_lowered_ifs() -> None:
    """An ``x if t else y`` expression (an ast.IfExp, whose body is no block) next to an
    ``if`` statement: the pass reads blocks only (gpu_check found this crash)."""
    text = "\n".join([
        "import numpy as np",
        "",
        "",
        "def f(x, t):",
        "    y = x if t else -x",
        "    if np.sum(y) > 0:",
        "        z = y * 2.0",
        "    else:",
        "        z = -y",
        "    return z",
        "",
    ])
    lowered = lower_control(text)
    assert "lax.cond(" in lowered and "y = x if t else -x" in lowered
    namespace: dict = {}
    exec(compile(lowered.replace("import numpy as np", "import jax.numpy as np"),
                 "<lowered>", "exec"), namespace)
    f = jax.jit(namespace["f"], static_argnums=1)
    assert_close(f(X_POS, True), X_POS * 2.0)
    assert_close(f(X_POS, False), X_POS)


# ---- a plain function's `while` that breaks, and its `and`/`or`/`not`/chains --------


def while_breaks_on_a_count(x):
    y = x
    k = 0
    while k < 100:
        y = np.sin(y)
        k = k + 1
        if k >= 3:
            break
    return np.sum(y)


def while_breaks_on_a_value_and_a_count(x):
    y = x
    k = 0
    while k < 100:
        y = np.sin(y) + 0.2
        k = k + 1
        if np.sum(y) < 100.0 and k >= 3 + np.sum(x > 0.5):
            break
    return np.sum(y) * k


def chained_comparison_test(x):
    m = np.mean(x)
    if 0.0 < m < 1.0:
        y = x * 2.0
    else:
        y = -x
    return y


def and_or_not_in_a_while_test(x):
    y = x
    k = 0
    while k < 10 and not (np.sum(y) > 5.0 or k == 7):
        y = y * 1.3
        k = k + 1
    return y * k


@pytest.mark.parametrize("fn", [while_breaks_on_a_count, while_breaks_on_a_value_and_a_count,
                                chained_comparison_test, and_or_not_in_a_while_test],
                         ids=lambda f: f.__name__)
def test_plain_while_with_break_and_boolean_tests_under_jit(fn) -> None:
    # the `while` helper reads its break flag: the flag is carried (it was a local of
    # the lowered branch, so the loop ran all 100 iterations: a silently wrong value)
    jitted = s2s.jit(fn, backend="jax")
    xs = [np.array(v) for v in ([0.2, 0.3], [2.0, 3.0], [-1.0, 0.1], [0.1, 0.05],
                                [0.9, 0.8])]
    for x in xs:
        assert_close(jitted(x), fn(x))
    assert jitted.cache_info().compilations == 1
    assert STAYS not in s2s.source(jitted)


@pytest.mark.slow
def test_a_cotangent_accumulated_across_ifs_lowered_in_one_pass() -> None:
    """The reverse sweep binds ``v0_bar`` in an ``if`` on one path, then adds to it in
    a later ``if`` nested in another: both were lowered in one pass, the later one
    before the earlier's ``lax.cond`` bound ``v0_bar`` on every path, so its branch
    read ``v0_bar`` as an unbound local (the slow tier's random program, seed 723)."""
    from fuzz_programs import load

    source = "\n".join([
        "def f(x, y):",
        "    v0 = np.roll(y, 1)",
        "    acc1 = v0",
        "    for i in range(3):",
        "        acc1 = 0.5 * acc1 + 0.5 * np.tanh(sp.gammaln(y ** 2 + 1.0) + 0.1 * i)",
        "    if np.max(v0) > 0.5:",
        "        v2 = y[::-1]",
        "    else:",
        "        v2 = sp.gammaln(v0 ** 2 + 1.0)",
        "    acc3 = acc1",
        "    for i in range(2):",
        "        acc3 = 0.5 * acc3 + 0.5 * np.tanh(acc3 * 0.5 + 1.0)",
        "    if np.max(v0) > -0.5:",
        "        v5 = np.roll(v0, 1)",
        "    else:",
        "        v5 = np.roll(v2, 1)",
        "    return np.linalg.norm(v5 + 2.0) + np.sum(acc3)",
        ""])
    f, twin = load(source)
    g = s2s.jit(s2s.grad(f, argnums=(0, 1)), backend="jax")
    for seed in (723, 1, 2, 3):  # each path of the two tests
        r = np.random.default_rng(seed)
        x, y = r.normal(size=4), r.normal(size=4) * 2.0
        expected = s2s.grad(f, argnums=(0, 1))(x, y)
        for got, want in zip(g(x, y), expected):
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-10, atol=1e-12)
        if twin is not None:
            np.testing.assert_allclose(expected[1], jax.grad(twin, argnums=1)(x, y),
                                       rtol=1e-10, atol=1e-12)
    assert "lax.cond" in s2s.source(g)


def test_a_python_flag_shared_by_every_stacked_tape_row_is_its_value() -> None:
    """A `while` of one iteration (static count) whose `if flag:` takes the branch
    without a callee, then the backward scans the one stacked row: the flag, False in
    every row, reached `if flag:` as the scan's marker object (always true), so the
    other branch's backward ran, a silently wrong gradient.  Against the NumPy
    backend and JAX on the path taken, n = 0..3."""
    import jax

    path = Path(__file__).with_name("jax_flag_fns.py")
    spec = importlib.util.spec_from_file_location("jax_flag_fns", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x = np.array([0.3, -0.7, 1.2])
    jitted = s2s.jit(s2s.grad(module.looped), backend="jax", static_argnums=1)
    for n in (0, 1, 2, 3):
        np.testing.assert_allclose(jitted(x, n), s2s.grad(module.looped)(x, n), rtol=1e-12)

    def one(x):  # n = 1: the `else` path, once
        s = jnp.exp(x * 0.1) * 0.5
        return jnp.sum(x * s)

    np.testing.assert_allclose(jitted(x, 1), jax.grad(one)(x), rtol=1e-12)
