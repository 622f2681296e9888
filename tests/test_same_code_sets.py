"""s2s checks that a function's file still holds the code that runs by comparing
bytecode (frontend/source.py ``_code_equal``).  A set literal in a test (``x in
{"a", "b"}``) is a frozenset constant whose iteration order depends on how it was
built: the bytecode a process with another hash seed wrote, unmarshalled here, may
list the same set in another order, which read as "the file changed after it was
imported" (a failure seen once in a parallel run of tests/frontend/test_sets_fstrings.py).
"""

from __future__ import annotations

import random

from s2s.frontend.source import _code_equal


def _function_and_reordered_set() -> tuple:
    """A function testing membership in a set literal, and the same set built in an
    insertion order that iterates differently (hash collisions decide that order)."""
    rng = random.Random(0)
    for n in range(4, 60):
        words = [f"w{k}" for k in range(n)]
        text = "def f(m):\n    return m in {" + ", ".join(map(repr, words)) + "}\n"
        code = compile(text, "<t>", "exec").co_consts[0]
        (made,) = [c for c in code.co_consts if isinstance(c, frozenset)]
        for _ in range(50):
            rng.shuffle(words)
            other = frozenset(words)
            if list(other) != list(made):
                return code, made, other
    raise AssertionError("no two insertion orders iterate differently")  # pragma: no cover


def test_a_set_constant_in_another_order_is_the_same_code() -> None:
    code, made, other = _function_and_reordered_set()
    assert other == made and list(other) != list(made)
    reordered = code.replace(co_consts=tuple(other if c is made else c
                                             for c in code.co_consts))
    assert _code_equal(code, reordered)
