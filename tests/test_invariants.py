"""Output invariants for everything the corpus emits.

``s2s.emit.code.format_module`` asserts compile / libcst re-parse / black stability on
every emission, so any test that transforms a function checks them; this file makes
the check explicit and adds readability properties a person would look for.
"""

from __future__ import annotations

import ast
import re

import black
import libcst as cst
import pytest
from corpus import CASES, Case

import s2s
from s2s.emit.code import EmitError, check_invariants


@pytest.fixture(scope="module")
def sources() -> dict[str, str]:
    out = {}
    for case in CASES:
        g = s2s.grad(case.fn, argnums=case.argnums, has_aux=case.has_aux)
        g(*case.args(), **case.kwargs)
        out[case.name] = g.source
    return out


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_emitted_module_is_formatted_parseable_and_stable(case: Case, sources) -> None:
    text = sources[case.name]
    compile(text, case.name, "exec")
    cst.parse_module(text)
    assert black.format_str(text, mode=black.Mode()) == text
    check_invariants(text)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_emitted_module_reads_like_hand_written_code(case: Case, sources) -> None:
    text = sources[case.name]
    tree = ast.parse(text)
    imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    for node in imports:
        if isinstance(node, ast.Import):
            assert [a.name for a in node.names] == ["numpy"]
        else:
            assert node.module == "s2s.runtime"
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert not [n for n in names if re.fullmatch(r"_?t\d+", n)], "machine-made names"
    # every parameter of the user function appears in the emitted signature
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert funcs[-1].name.endswith("_grad")


def test_invariant_violation_is_reported_with_the_source() -> None:
    with pytest.raises(EmitError) as err:
        check_invariants("def f(x):\n  return x\n")  # not black's formatting
    assert "def f(x)" in str(err.value)


def test_a_large_float_literal_is_written_as_black_writes_it() -> None:
    """``repr`` writes 1.7976931348623157e+308 where black writes ...e308: a line with
    such a literal is left to black (the fast path of ``format_module`` must not pass
    it through as it is)."""
    from s2s.emit.code import format_module

    text = "def f(x):\n    return x - 1.7976931348623157e+308 + 1e+20 * 2.5e-3\n"
    out = format_module(text)
    assert "e+" not in out and black.format_str(out, mode=black.Mode()) == out
