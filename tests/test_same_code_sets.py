"""s2s checks that a function's file still holds the code that runs by comparing
bytecode (frontend/source.py ``_code_equal``).  A set literal in a test (``x in
{"a", "b"}``) is a frozenset constant whose iteration order depends on how it was
built: the bytecode a process with another hash seed wrote, unmarshalled here, may
list the same set in another order, which read as "the file changed after it was
imported" (a failure seen once in a parallel run of tests/frontend/test_sets_fstrings.py).
"""

from __future__ import annotations

from s2s.frontend.source import _code_equal


def _colliding_orders() -> tuple[frozenset, frozenset]:
    """One set of strings built in two insertion orders that iterate differently."""
    words = [f"w{k}" for k in range(40)]
    for n in range(2, 40):
        a, b = frozenset(words[:n]), frozenset(reversed(words[:n]))
        if list(a) != list(b):
            return a, b
    raise AssertionError("no two orders differ")  # pragma: no cover


def test_a_set_constant_in_another_order_is_the_same_code() -> None:
    a, b = _colliding_orders()
    text = "def f(m):\n    return m in {" + ", ".join(repr(w) for w in a) + "}\n"
    code = compile(text, "<t>", "exec").co_consts[0]
    assert any(isinstance(c, frozenset) for c in code.co_consts)
    reordered = code.replace(co_consts=tuple(
        (b if list(c) != list(b) else a) if isinstance(c, frozenset) else c
        for c in code.co_consts))
    assert [list(c) for c in code.co_consts if isinstance(c, frozenset)] != [
        list(c) for c in reordered.co_consts if isinstance(c, frozenset)]
    assert _code_equal(code, reordered)
