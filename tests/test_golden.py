"""Golden tests: the exact emitted source of chosen corpus functions.

A change in emitted code shows up here as a diff to review like any other.  To accept
intended changes, regenerate with

    S2S_UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py

and read the diff of tests/golden/ before committing it.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import s2s
from corpus import BY_NAME
from support import rng_tree

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
    # forward mode, higher order, batching: what composition looks like
    ("loss", "jvp"),
    ("loop_carried", "jvp"),
    ("if_elif_first", "jvp"),
    ("fill_in_loop", "jvp"),
    ("two_layers", "jvp"),
    ("rosenbrock", "hvp"),
    ("loss", "hessian"),
    ("loss", "vmap"),
    ("calls_helper", "vmap"),
    ("loss", "jacfwd"),
    ("loss", "jacrev"),
]


def emitted(name: str, mode: str) -> str:
    case = BY_NAME[name]
    args = case.args()
    if mode in ("jvp", "hvp"):
        f = case.fn if mode == "jvp" else s2s.grad(case.fn)
        s2s.jvp(f, args, rng_tree(args, np.random.default_rng(0)))
        return s2s.source(f, "jvp")
    if mode == "vmap":  # batched over the first argument
        v = s2s.vmap(case.fn, in_axes=(0,) + (None,) * (len(args) - 1))
        v(np.stack([args[0]] * 3), *args[1:])
        return v.source
    if mode in ("hessian", "jacfwd", "jacrev"):
        j = getattr(s2s, mode)(case.fn)
        j(*args)
        return j.source
    make = s2s.grad if mode == "grad" else s2s.value_and_grad
    g = make(case.fn, argnums=case.argnums, has_aux=case.has_aux)
    g(*case.args(), **case.kwargs)  # specialize on the case's argument structure
    return g.source


@pytest.mark.every_case  # every golden file, by default too (all of them take about 2 s)
@pytest.mark.parametrize("name,mode", GOLDEN, ids=[f"{n}-{m}" for n, m in GOLDEN])
def test_emitted_source_matches_golden(name: str, mode: str) -> None:
    path = GOLDEN_DIR / f"{name}.{mode}.py"
    text = emitted(name, mode)
    if os.environ.get("S2S_UPDATE_GOLDEN"):
        path.write_text(text)
    assert path.exists(), f"no golden file {path}; run with S2S_UPDATE_GOLDEN=1"
    assert text == path.read_text()


def five_lines(x, w):
    h = np.tanh(x @ w)
    s = np.sin(h) * h
    t = np.exp(-(s**2))
    u = np.sum(t * x[:, None])
    return u / np.mean(h**2)


def test_second_order_code_stays_small() -> None:
    """Hessian-vector product and Hessian code of a 5-line function: under 4x the
    lines of its gradient code."""
    r = np.random.default_rng(0)
    x, w = r.normal(size=3), r.normal(size=(3, 2))
    g = s2s.grad(five_lines, argnums=1)
    g(x, w)
    first = len(g.source.splitlines())
    s2s.jvp(g, (x, w), (np.zeros(3), np.ones((3, 2))))
    hvp = len(s2s.source(g, "jvp").splitlines())
    h = s2s.hessian(five_lines, argnums=1)
    h(x, w)
    second = len(h.source.splitlines())
    assert hvp < 4 * first, (hvp, first)
    assert second < 4 * first, (second, first)
