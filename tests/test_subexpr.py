"""The specializer's ``subexpr`` pass (s2s/optimize/subexpr.py): a repeated pure
subexpression computed once.  Each case runs the function as written and as the pass
rewrites it on random values (float64 and float32, NaN and inf among them, size-0 and
size-1 arrays) and compares them bit for bit (the pass moves no arithmetic, it only
stops repeating it); the guards are checked by cases where sharing would be wrong (a
write into an operand or a view of it between the occurrences, a rebound name, a
branch) and must not happen; outputs never share memory."""

from __future__ import annotations

import ast
import textwrap

import numpy as np
import pytest

import s2s
from s2s.optimize.subexpr import read_held_values, share_subexpressions


def _array_fact(node):  # (every name an ndarray: what the specializer's facts say here)
    return ((3,), np.dtype(np.float64)) if isinstance(node, ast.Name) else None


def _rewrite(src: str, rewrite=share_subexpressions, **kw) -> tuple[str, dict, dict]:
    src = textwrap.dedent(src)
    module = ast.parse(src)
    rewrite(module.body[0], **kw)
    for stmt in ast.walk(module):  # (the pass leaves a moved statement unplaced)
        if isinstance(stmt, ast.stmt) and getattr(stmt, "lineno", None) is None:
            stmt.lineno = stmt.end_lineno = 1
    new = ast.unparse(module)
    def helper(buf):  # a user's function that writes into its argument
        buf[...] = 3.0

    before, after = {"np": np, "helper": helper}, {"np": np, "helper": helper}
    exec(src, before)
    exec(new, after)
    return new, before, after


def _values(dtype, n, k):
    r = np.random.default_rng(10 * n + k)
    x = r.normal(size=n).astype(dtype)
    if n > 2:
        x[0], x[1] = np.nan, np.inf
    return x


def _agree(src: str, nargs: int, rewrite=share_subexpressions, **kw) -> str:
    new, before, after = _rewrite(src, rewrite, **kw)
    name = next(k for k in before if k not in ("np", "helper", "__builtins__"))
    for dtype in (np.float64, np.float32):
        for n in (0, 1, 5):
            args = [_values(dtype, n, k) for k in range(nargs)]
            with np.errstate(all="ignore"):
                want = before[name](*[a.copy() for a in args])
                got = after[name](*[a.copy() for a in args])
            want = want if isinstance(want, tuple) else (want,)
            got = got if isinstance(got, tuple) else (got,)
            for w, g in zip(want, got):
                np.testing.assert_array_equal(g, w)
                assert g.dtype == w.dtype
            arrays = [g for g in got if isinstance(g, np.ndarray)]
            for i, a in enumerate(arrays):  # each output an array of its own
                assert not any(np.shares_memory(a, b) for b in arrays[i + 1:])
                assert not any(np.shares_memory(a, b) for b in args)
    return new


def test_a_repeated_expression_is_computed_once() -> None:
    new = _agree("""
        def f(x, v):
            t = np.tanh(x)
            d = v * (1 - t**2)
            b = 1 - t**2
            return (2 * t * b, d * b)
        """, 2)
    assert new.count("t ** 2") == 1, new
    # the statement whose value it is moved up, and the other occurrence reads it
    assert new.index("b = 1 - t ** 2") < new.index("d = v * b"), new


def test_without_a_statement_of_its_own_a_name_is_bound() -> None:
    new = _agree("""
        def f(x, y):
            a = (x * y + 1.0) * 2.0
            return (a, np.exp(x * y + 1.0) - a)
        """, 2)
    assert new.count("x * y + 1.0") == 1 and "shared_1 = x * y + 1.0" in new, new


def test_a_returned_value_stays_an_array_of_its_own() -> None:
    # a new name for one reader saves nothing: left as it is
    assert "shared_" not in _agree("""
        def f(x):
            return (x + 1.0, (x + 1.0) * 3.0)
        """, 1)
    # for two it does; the first output is still the expression's own array
    new = _agree("""
        def f(x):
            return (x + 1.0, (x + 1.0) * 3.0 - np.exp(x + 1.0))
        """, 1)
    assert "return (x + 1.0, shared_1 * 3.0 - np.exp(shared_1))" in new, new


def test_a_name_bound_again_holds_the_value_until_then() -> None:
    new = _agree("""
        def f(x):
            g = 1.0 / (x * x + 1.0) * x
            g = g + 1.0 / (x * x + 1.0) * x
            return g
        """, 1)
    assert "g = g + g" in new, new
    new = _agree("""
        def f(x):
            g = (x + 1.0) * 2.0
            g = g * 3.0
            h = (x + 1.0) * 2.0 - x
            return (g, h)
        """, 1)
    assert "h = g - x" not in new, new


@pytest.mark.parametrize("src", [
    # a write into an operand between the two occurrences
    """
    def f(x):
        y = x * 1.0
        a = (y + 1.0) * 2.0
        y[...] = 5.0
        b = (y + 1.0) * 3.0
        return (a, b)
    """,
    # a write through a view of an operand
    """
    def f(x):
        y = x * 1.0
        z = y[1:]
        a = (y + 1.0) * 2.0
        z[...] = 9.0
        b = (y + 1.0) * 3.0
        return (a, b)
    """,
    # += on a name writes into its array
    """
    def f(x):
        y = x * 1.0
        a = (y + 1.0) * 2.0
        y += 4.0
        b = (y + 1.0) * 3.0
        return (a, b)
    """,
    # a parameter rebound
    """
    def f(x):
        a = (x + 1.0) * 2.0
        x = x * 3.0
        b = (x + 1.0) * 2.0
        return (a, b)
    """,
    # evaluated under a condition only
    """
    def f(x):
        a = (x + 1.0) * 2.0
        b = (x + 1.0) * 3.0 if x.size > 100 else x * 0.0
        return (a, b)
    """,
    # a function called by name might write into what it is given
    """
    def f(x):
        y = x * 1.0
        a = (y + 1.0) * 2.0
        helper(y)
        b = (y + 1.0) * 3.0
        return (a, b)
    """,
    # np.add.at writes into its first argument
    """
    def f(x):
        y = x * 1.0
        a = (y + 1.0) * 2.0
        np.add.at(y, [0] * min(y.size, 1), 1.0)
        b = (y + 1.0) * 3.0
        return (a, b)
    """,
])
def test_no_sharing_where_the_two_values_may_differ(src) -> None:
    new = _agree(src, 1)
    assert "shared_" not in new, new


def test_the_new_name_is_none_the_code_reads() -> None:
    new, before, after = _rewrite("""
        def f(x):
            return ((x + 1.0) * shared_1, np.exp(x + 1.0))
        """)
    assert "shared_2 = x + 1.0" in new and "* shared_1" in new, new


def test_a_constant_expression_is_left_as_it_is() -> None:
    new = _agree("""
        def f(x):
            return ((x * 2.0).sum(axis=-1, keepdims=True) + (-x).sum(axis=-1),)
        """, 1)
    assert "shared_" not in new, new


def test_statements_after_a_loop_are_left_alone() -> None:
    new = _agree("""
        def f(x):
            y = x * 1.0
            for i in range(2):
                y = y * 2.0
            a = (y + 1.0) * 2.0
            b = (y + 1.0) * 3.0
            return (a, b)
        """, 1)
    assert "shared_" not in new, new


def test_the_hessian_vector_product_computes_one_minus_tanh_squared_once() -> None:
    def tanh_sq(x):
        return np.sum(np.tanh(x) ** 2)

    g = s2s.grad(tanh_sq)
    x, v = np.linspace(-1, 1, 7), np.linspace(0.5, 2, 7)
    for _ in range(3):
        out = s2s.jvp(g, (x,), (v,))
    from s2s.api.transformed import JVPS

    text = JVPS[g][False].specialized_source
    assert text.count("tanh_x**2") == 1, text
    t2 = np.tanh(x) ** 2
    np.testing.assert_allclose(out[1], 2 * (1 - t2) * (1 - 3 * t2) * v, rtol=1e-12)
    np.testing.assert_allclose(out[0], 2 * np.tanh(x) * (1 - t2), rtol=1e-12)


def test_an_arrays_reductions_are_shared_where_it_is_an_array() -> None:
    """``x.mean(...)``/``x.sum(...)`` with literal keywords count as pure where the
    name's fact says it holds an ndarray (a variance spelled out, a softmax's max)."""
    src = """
        def f(x, t):
            a = (x - x.mean(axis=-1, keepdims=True)) / 2.0
            b = t * (x - x.mean(axis=-1, keepdims=True)) + np.exp(x - x.sum(keepdims=True))
            return (a, b * np.exp(x - x.sum(keepdims=True)))
        """
    new = _agree(src, 2, fact=_array_fact)
    assert new.count("x.mean(") == 1 and new.count("x.sum(") == 1, new
    assert "shared_" not in _agree(src, 2)  # (without the fact: not known to be arrays)


def test_a_value_a_name_holds_is_read_from_it() -> None:
    new = _agree("""
        def f(x, v):
            c = 2.0 * x
            s = 1.0 - x * x
            d = v * s
            e = -(d * (2.0 * x))
            return (c * s, (d + d) * s + c * e)
        """, 2, read_held_values)
    assert "e = -(d * c)" in new and new.count("2.0 * x") == 1, new
    # never a statement's whole value, nor after a write into or a rebinding of a read
    for src in ("""
        def f(x):
            c = x + 1.0
            d = x + 1.0
            return (c, d * 2.0)
        """, """
        def f(x):
            y = x * 1.0
            c = y + 1.0
            y[...] = 5.0
            return (c, (y + 1.0) * 3.0)
        """, """
        def f(x):
            c = x + 1.0
            x = x * 3.0
            return (c, (x + 1.0) * 2.0)
        """):
        new = _agree(src, 1, read_held_values)
        assert new == ast.unparse(ast.parse(textwrap.dedent(src))), new


@pytest.mark.parametrize("dtype", ["", ", dtype=np.float32"])
def test_an_identity_made_twice_is_made_once(dtype) -> None:
    # (a GP's gradient: ``0.1 * np.eye(3)`` in the kernel and the inverse's identity,
    # which the solves pass places beside the right-hand sides)
    new = _agree(f"""
        def f(x):
            k = x.sum() * x.sum() + 0.1 * np.eye(3{dtype})
            s = np.concatenate((np.eye(3{dtype}), k[:, :1] * x.sum()), axis=1)
            return (k * 2.0, s - np.eye(3{dtype})[:, :1])
        """, 1)
    assert new.count("np.eye(") == 2 and f"shared_1 = np.eye(3{dtype})" in new, new
    assert "0.1 * shared_1" in new and "np.concatenate((shared_1," in new, new


def test_an_identity_a_function_may_write_into_is_its_own() -> None:
    # (helper writes 3.0 into what it is given: the other two are still shared)
    new = _agree("""
        def f(x):
            a = 0.5 * np.eye(3) + x.sum()
            helper(np.eye(3))
            b = 2.0 * np.eye(3) - x.sum()
            return (a, b)
        """, 1)
    assert "helper(np.eye(3))" in new and "shared_1 = np.eye(3)" in new, new
