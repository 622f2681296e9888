"""vmap of loops whose exit depends on batched values (masked lanes).

A ``while`` on a batched condition runs until every example is done, keeping the
values of those that finished (``np.where``); a ``break`` under a batched test in a
``for`` marks the examples done.  The oracle is always the loop of examples
``np.stack([f(x) for x in xs])``; where the function has a ``jax.lax.while_loop``
twin, ``jax.vmap`` of it too.  Values in float64."""

from __future__ import annotations

import re

import numpy as np
import pytest

import s2s
from support import HAVE_JAX, jax, jnp


def doubling(x):
    y = x
    while np.sum(y) < 10.0:
        y = y * 2.0 + 0.1 * np.sin(y)
    return y


def counted(x):
    y = x
    n = 0.0
    while np.max(y) < 4.0:
        y = y * 1.5 + 0.25
        n = n + 1.0
    return y * n


def while_with_break(x):
    y = x
    k = 0.0
    while np.sum(y) < 20.0:
        y = y * 1.3 + 0.1
        k = k + 1.0
        if np.max(y) > 3.0:
            break
    return np.sum(y) * k


def first_above(x):
    s = 0.0
    for i in range(6):
        s = s + x[i]
        if s > 2.0:
            break
        s = s * 1.1
    return s


def skip_negative(x):
    s = 0.0
    for i in range(4):
        if x[i] < 0.0:
            continue
        s = s + x[i] ** 2
    return s


def breaks_in_while_in_for(x):
    total = 0.0
    for i in range(3):
        y = x * (i + 1.0)
        while np.max(y) > 1.0:
            y = y * 0.5
            if np.min(y) < 0.05:
                break
        total = total + np.sum(np.sin(y))
    return total


def first_index_above(x, limit):
    for i in range(4):
        if x[i] > limit:
            return x[i] * i
    return -1.0


def nested_break(x):
    s = 0.0
    for i in range(5):
        s = s + x[i]
        if s > 1.0:
            if x[i] > 0.5:
                break
            s = s - 0.25
    return s


def two_breaks(x):
    s = 0.0
    for i in range(5):
        if x[i] < 0.0:
            break
        s = s + x[i]
        if s > 2.0:
            break
    return s


def unbatched_break_in_masked_while(x, m):
    y = x
    while np.sum(y) < 10.0:
        y = y * 1.5
        if m > 3.0:
            break
    return y


def and_condition(x):
    y = x
    k = 0.0
    while np.sum(y) < 10.0 and k < 3.0:
        y = y * 1.5
        k = k + 1.0
    return y * k


def for_break_in_while(x):
    y = x
    while np.sum(y) < 6.0:
        for i in range(3):
            y = y + 0.5 * i
            if y[i] > 1.5:
                break
    return y


def tuple_carry(x):
    t = (x, 0.0)
    while np.sum(t[0]) < 5.0:
        t = (t[0] * 2.0, t[1] + 1.0)
    return t[0] * t[1]


def calls_doubling(x, w):
    return doubling(x * w) + 1.0


def grows_rank(x):
    y = 0.0
    while np.sum(y) < 3.0:
        y = y + x
    return y


def unbatched_condition(x, n):
    y = x
    k = 0
    while k < n:
        y = np.sin(y)
        k = k + 1
    return y


def fill_until(x):
    out = np.zeros(5)
    for i in range(5):
        out[i] = x[i] * 2.0
        if x[i] > 1.0:
            break
    return out


def fill_rows(x):
    out = np.zeros((3, 2))
    for i in range(3):
        out[i, :] = x * i
        if np.sum(out[i]) > 2.0:
            break
    return out


def record_while(x):
    out = np.zeros(4)
    k = 0
    y = x
    while np.sum(y) < 4.0:
        out[k % 4] = np.sum(y)
        y = y * 1.5
        k = k + 1
    return out * np.sum(y)


def mark_largest(x):
    out = np.zeros(5)
    out[np.argmax(x)] = np.max(x)
    return out


def accumulate_in_loop(x):
    out = np.zeros(3)
    k = 0
    while np.sum(x) * k < 5.0:
        np.add.at(out, k % 3, 1.0)
        k = k + 1
    return out * x[0]


# ---- JAX twins: the same loops as jax.lax.while_loop ---------------------------------


def doubling_jax(x):
    return jax.lax.while_loop(
        lambda y: jnp.sum(y) < 10.0, lambda y: y * 2.0 + 0.1 * jnp.sin(y), x
    )


def counted_jax(x):
    def body(c):
        y, n = c
        return y * 1.5 + 0.25, n + 1.0

    y, n = jax.lax.while_loop(lambda c: jnp.max(c[0]) < 4.0, body, (x, 0.0))
    return y * n


def while_with_break_jax(x):
    def body(c):
        y, k, _ = c
        y = y * 1.3 + 0.1
        return y, k + 1.0, jnp.max(y) > 3.0

    y, k, _ = jax.lax.while_loop(
        lambda c: (jnp.sum(c[0]) < 20.0) & ~c[2], body, (x, 0.0, False)
    )
    return jnp.sum(y) * k


def first_above_jax(x):
    def body(c):
        i, s, _ = c
        s = s + x[i]
        done = s > 2.0
        return i + 1, jnp.where(done, s, s * 1.1), done

    _, s, _ = jax.lax.while_loop(lambda c: (c[0] < 6) & ~c[2], body, (0, 0.0, False))
    return s


def loop_oracle(f, xs, *rest):
    return np.stack([f(x, *rest) for x in xs])


def check(f, xs, *rest, twin=None):
    v = s2s.vmap(f, in_axes=(0,) + (None,) * len(rest))
    expected = loop_oracle(f, xs, *rest)
    for _ in range(2):  # the emitted code, then the code specialized to the shapes
        got = v(xs, *rest)
        assert got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    if twin is not None and HAVE_JAX:
        jax.config.update("jax_enable_x64", True)
        np.testing.assert_allclose(
            got, np.asarray(jax.vmap(twin)(xs)), rtol=1e-12, atol=1e-12
        )
    return v


# sums 0.3 (many doublings), 3, 9.5 (one), 12 (never enters), 6
LANES = np.array(
    [
        [0.1, 0.1, 0.1],
        [1.0, 1.0, 1.0],
        [3.0, 3.0, 3.5],
        [4.0, 4.0, 4.0],
        [1.0, 2.0, 3.0],
    ]
)


def test_while_lanes_finish_at_different_iterations() -> None:
    v = check(doubling, LANES, twin=doubling_jax)
    text = s2s.source(v)
    compile(text, "<vmap>", "exec")
    lines = [line.strip() for line in text.splitlines()]
    assert re.fullmatch(
        r"while (np\.any\(sum_y_less_10\)|" r"np\.count_nonzero\(sum_y_less_10\) > 0):",
        lines[next(k for k, t in enumerate(lines) if t.startswith("while"))],
    )
    assert "y = np.where(sum_y_less_10[:, None], y_2, y)" in lines
    assert "sum_y_less_10 = sum_y_less_10 & sum_y_2_less_10" in lines


def test_while_first_example_never_enters() -> None:
    check(doubling, LANES[::-1].copy(), twin=doubling_jax)  # (ranks from the probe)
    check(
        counted,
        np.array([[5.0, 1.0], [0.5, 0.1], [3.9, 0.0], [-1.0, 0.2]]),
        twin=counted_jax,
    )


def test_no_example_enters() -> None:
    check(doubling, LANES[3:4] + 1.0, twin=doubling_jax)
    check(counted, np.full((3, 2), 7.0), twin=counted_jax)


def test_carried_count_becomes_batched() -> None:
    check(
        counted,
        np.array([[0.1, 0.2], [1.0, 3.0], [2.0, 0.0], [0.01, 0.02]]),
        twin=counted_jax,
    )


def test_break_inside_batched_while() -> None:
    # lanes leave by the condition, by the break at the first iteration, or later
    xs = np.array(
        [
            [0.1, 0.2, 0.1],
            [2.5, 0.1, 0.1],
            [1.0, 1.0, 1.0],
            [8.0, 8.0, 8.0],
            [0.5, 0.4, 0.3],
        ]
    )
    check(while_with_break, xs, twin=while_with_break_jax)


def test_break_under_batched_test_in_for() -> None:
    # breaks at the first iteration, at the third, never (all six summed)
    xs = np.array(
        [
            [2.5, 0.1, 0.1, 0.1, 0.1, 0.1],
            [0.5, 0.5, 0.9, 0.1, 0.1, 0.1],
            [0.1, 0.1, 0.1, 0.1, 0.1, 0.1],
            [1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
        ]
    )
    v = check(first_above, xs, twin=first_above_jax)
    lines = [line.strip() for line in s2s.source(v).splitlines()]
    assert "s = np.where(done, s, s_3)" in lines
    assert "done = done | breaking" in lines
    assert "break" in lines


def test_every_example_breaks_at_once() -> None:
    check(first_above, np.full((3, 6), 3.0), twin=first_above_jax)


def test_continue_under_batched_test() -> None:
    check(
        skip_negative,
        np.array(
            [[1.0, -2.0, 3.0, -4.0], [-1.0, -1.0, -1.0, -1.0], [0.5, 0.25, 0.125, 2.0]]
        ),
    )


def test_return_inside_loop() -> None:
    xs = np.array(
        [
            [0.1, 0.9, 0.2, 0.3],
            [0.8, 0.1, 0.1, 0.1],
            [0.1, 0.1, 0.1, 0.1],
            [0.1, 0.1, 0.1, 0.7],
        ]
    )
    check(first_index_above, xs, 0.5)


def test_break_in_masked_while_in_for() -> None:
    xs = np.array([[0.5, 0.9, 0.2], [3.0, 0.01, 2.0], [0.1, 0.2, 0.3], [7.0, 5.0, 0.5]])
    check(breaks_in_while_in_for, xs)


def test_unbatched_condition_stays_a_plain_loop() -> None:
    v = check(unbatched_condition, LANES, 3)
    text = s2s.source(v)
    assert "while k_less_n:" in text and "np.where" not in text


def test_vmap_of_vmap() -> None:
    r = np.random.default_rng(0)
    xss = r.uniform(0.05, 1.5, size=(3, 4, 3))
    for f in (doubling, counted, first_above):
        xs = xss if f is not first_above else r.uniform(0.0, 1.2, size=(3, 4, 6))
        got = s2s.vmap(s2s.vmap(f))(xs)
        expected = np.stack([[f(x) for x in row] for row in xs])
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_vmap_of_jvp() -> None:
    def jvp_doubling(x, v):
        return s2s.jvp(doubling, (x,), (v,))

    xs = LANES
    vs = np.random.default_rng(1).normal(size=xs.shape)
    y, t = s2s.vmap(jvp_doubling)(xs, vs)
    # oracle: central differences per example (the loop's count is locally constant)
    eps = 1e-6
    fd = np.stack(
        [
            (doubling(x + eps * v) - doubling(x - eps * v)) / (2 * eps)
            for x, v in zip(xs, vs)
        ]
    )
    np.testing.assert_allclose(y, loop_oracle(doubling, xs), rtol=1e-12)
    np.testing.assert_allclose(t, fd, rtol=1e-6, atol=1e-6)
    if HAVE_JAX:
        jax.config.update("jax_enable_x64", True)
        _, t_jax = jax.vmap(lambda x, v: jax.jvp(doubling_jax, (x,), (v,)))(xs, vs)
        np.testing.assert_allclose(t, np.asarray(t_jax), rtol=1e-12, atol=1e-12)


@pytest.mark.skipif(not HAVE_JAX, reason="needs jax")
def test_jacfwd_of_batched_while() -> None:
    jax.config.update("jax_enable_x64", True)
    x = np.array([0.3, 0.2, 0.4])
    np.testing.assert_allclose(
        s2s.jacfwd(counted)(x),
        np.asarray(jax.jacfwd(counted_jax)(x)),
        rtol=1e-12,
        atol=1e-12,
    )


def sum_doubling(x):
    return np.sum(doubling(x))


def test_vmap_of_grad_through_the_masked_loop() -> None:
    """Each example pops its own tape entries (tests/test_vmap_masked_tape.py has the
    rest): against the per-example gradients."""
    got = s2s.vmap(s2s.grad(sum_doubling))(LANES)
    g = s2s.grad(sum_doubling)
    np.testing.assert_allclose(got, np.stack([g(x) for x in LANES]), rtol=1e-12)


def test_writes_in_masked_loop_keep_done_examples_elements() -> None:
    v = check(fill_until, MIXED)
    assert "out[:, i] = np.where(~done, x_i_times_2, out[:, i])" in [
        line.strip() for line in s2s.source(v).splitlines()
    ]
    check(fill_rows, MIXED[:, :2])
    check(record_while, LANES)  # at a batched index: out[np.arange(n), k % 4]


def test_write_at_a_batched_scalar_index() -> None:
    check(mark_largest, MIXED)


def test_accumulation_in_masked_loop_is_refused_where_written() -> None:
    with pytest.raises(s2s.TransformError, match="a write into `out` in a loop") as err:
        s2s.vmap(accumulate_in_loop)(LANES)
    text = str(err.value)
    assert "np.add.at(out, k % 3, 1.0)" in text and "np.where(mask, new, old)" in text


MIXED = np.array(
    [
        [0.3, 0.9, 0.5, -0.2, 0.4],
        [1.5, 0.2, 0.1, 0.1, 0.1],
        [0.1, 0.1, 0.1, 0.1, 0.1],
        [-1.0, 1.0, 1.0, 1.0, 1.0],
        [0.6, 0.6, 0.6, 0.6, 0.6],
    ]
)


@pytest.mark.parametrize(
    "f", [nested_break, two_breaks, and_condition, for_break_in_while]
)
def test_more_shapes_of_loops(f) -> None:
    check(f, MIXED)


def test_nested_and_repeated_breaks_read_as_logic() -> None:
    lines = [line.strip() for line in s2s.source(check(two_breaks, MIXED)).splitlines()]
    assert any(
        re.fullmatch(r"breaking = x_i_less_0 \| breaking_if_false(_\d+)?", t)
        for t in lines
    )
    assert not any("np.where" in t and "breaking" in t.split("=")[0] for t in lines)


@pytest.mark.parametrize("m", [2.0, 4.0])
def test_unbatched_break_in_masked_while(m) -> None:
    check(unbatched_break_in_masked_while, MIXED, m)


def test_container_carried_by_masked_loop() -> None:
    """A tuple the loop rebinds is carried as its items (frontend/carried_records.py),
    so the masked loop carries arrays (it was refused: "`t` is a container")."""
    check(tuple_carry, MIXED)


def test_value_changing_rank_in_loop_is_refused() -> None:
    # (a scalar before the loop, a vector after: one batched rank cannot hold both)
    with pytest.raises(s2s.TransformError, match="`y` changes rank in the loop"):
        s2s.vmap(grows_rank)(np.array([[0.5, 0.5, 0.5], [1.0, 2.0, 0.5]]))


def test_masked_loop_in_a_called_function_and_other_axes() -> None:
    w = np.array([1.0, 2.0, 0.5])
    check(calls_doubling, LANES, w)
    got = s2s.vmap(doubling, in_axes=1, out_axes=1)(LANES.T.copy())
    np.testing.assert_allclose(got, loop_oracle(doubling, LANES).T, rtol=1e-12)
