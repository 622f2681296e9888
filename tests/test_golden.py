"""Golden tests: the exact emitted source of chosen corpus functions.

A change in emitted code shows up here as a diff to review like any other.  To accept
intended changes, regenerate with

    S2S_UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py

and read the diff of tests/golden/ before committing it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import s2s
from corpus import BY_NAME

GOLDEN_DIR = Path(__file__).parent / "golden"
GOLDEN = [
    ("loss", "grad"),
    ("loss_all_args", "grad"),
    ("dict_params", "grad"),
    ("two_layers", "grad"),
    ("calls_helper", "grad"),
    ("if_else_true", "grad"),
    ("if_elif_first", "grad"),
    ("early_return_taken", "grad"),
    ("conditional_expression", "grad"),
    ("subscripts", "grad"),
    ("integer_array_index", "grad"),
    ("with_aux", "grad"),
    ("tuple_arg", "grad"),
    ("nested_tree", "grad"),
    ("max_ties", "grad"),
    ("reductions", "grad"),
    ("softmax_xent", "grad"),
    ("rosenbrock", "grad"),
    ("lambda", "grad"),
    ("loss", "value_and_grad"),
    ("loop_carried", "grad"),
    ("loop_enumerate_if", "grad"),
    ("loop_nested", "grad"),
    ("while_shrinks", "grad"),
    ("while_break", "grad"),
    ("loop_break_taken", "grad"),
    ("fill_in_loop", "grad"),
    ("recurrence", "grad"),
]


def emitted(name: str, mode: str) -> str:
    case = BY_NAME[name]
    make = s2s.grad if mode == "grad" else s2s.value_and_grad
    g = make(case.fn, argnums=case.argnums, has_aux=case.has_aux)
    g(*case.args(), **case.kwargs)  # specialize on the case's argument structure
    return g.source


@pytest.mark.parametrize("name,mode", GOLDEN, ids=[f"{n}-{m}" for n, m in GOLDEN])
def test_emitted_source_matches_golden(name: str, mode: str) -> None:
    path = GOLDEN_DIR / f"{name}.{mode}.py"
    text = emitted(name, mode)
    if os.environ.get("S2S_UPDATE_GOLDEN"):
        path.write_text(text)
    assert path.exists(), f"no golden file {path}; run with S2S_UPDATE_GOLDEN=1"
    assert text == path.read_text()
