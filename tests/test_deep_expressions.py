"""Long and deeply nested expressions: Python runs them, JAX traces them, so does s2s.

A sum of 400 terms nests 400 levels deep (``((x*0.0 + x*1.0) + x*2.0) + ...``); libcst's
parser and visitors, and s2s's passes, recurse per level, and it raised RecursionError
from inside libcst.  s2s now reads code nesting deeper than ``parse.SAFE_DEPTH`` on a
thread with a stack sized for it and the recursion limit raised while its passes run
(put back afterwards, also when several threads transform at once), and refuses code
deeper than ``parse.MAX_DEPTH``, located.  Values are checked against JAX.  By default
one case of each kind runs, a little deeper than ``parse.SAFE_DEPTH``; the long ones
(400 and 2000 terms, 1500 on a small stack, 250-term chains) run with ``-m slow``.
"""

from __future__ import annotations

import concurrent.futures
import importlib.util
import itertools
import os
import re
import sys
import threading

import numpy as np
import pytest

import s2s
from s2s.frontend import source as parse
from support import HAVE_JAX, jax, jnp

_COUNTER = itertools.count()
SLOW = pytest.mark.slow  # the long cases: each takes 10 to 60 s


def load(tmp_path, body: str, np_module: str = "numpy"):
    """A module holding ``body`` (its numpy imported as np), imported from a file."""
    name = f"s2s_deep_{os.getpid()}_{next(_COUNTER)}"
    path = tmp_path / f"{name}.py"
    path.write_text(f"import {np_module} as np\n\n\n{body}")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module, path


def long_sum(n: int) -> str:
    return "def f(x):\n    return " + " + ".join(f"x*{i}.0" for i in range(n)) + "\n"


def close(a, b, rtol=1e-12):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=1e-12)


def check_all(tmp_path, body: str, x, v, jax_body: str | None = None,
              batched_grads: bool = True) -> None:
    """grad, value_and_grad (first, second, third call), jvp and vmap of ``f`` (and of
    its gradient) against JAX's, the emitted code compiling, and the recursion limit
    as it was."""
    limit = sys.getrecursionlimit()
    mod, _ = load(tmp_path, body)
    g = s2s.grad(mod.f)
    got = [g(x) for _ in range(3)]  # the second call specializes
    vg = s2s.value_and_grad(mod.f)
    value, grad = vg(x)
    out, tangent = s2s.jvp(mod.f, (x,), (v,))
    xs = np.stack([x, x * 0.5, x - 0.25])
    batched = s2s.vmap(mod.f)(xs)
    per_example = s2s.vmap(s2s.grad(mod.f))(xs) if batched_grads else None
    for text in (g.source, g.specialized_source or g.source, s2s.source(mod.f, "jvp")):
        compile(text, "<emitted>", "exec")
    assert sys.getrecursionlimit() == limit
    close(value, mod.f(x))
    if HAVE_JAX:
        jmod, _ = load(tmp_path, jax_body or body, "jax.numpy")
        want = jax.grad(jmod.f)(x)
        for each in got + [grad]:
            close(each, want)
        jout, jtangent = jax.jvp(jmod.f, (x,), (v,))
        close(out, jout)
        close(tangent, jtangent)
        # (per example: JAX's vmap refuses a Python `if` on a batched value)
        close(batched, [jmod.f(jnp.asarray(row)) for row in xs])
        if batched_grads:
            close(per_example, [jax.grad(jmod.f)(jnp.asarray(row)) for row in xs])


@pytest.mark.parametrize(
    "n", [120, pytest.param(400, marks=SLOW), pytest.param(2000, marks=SLOW)])
def test_a_long_sum_is_transformed(tmp_path, n):
    """Deeper than parse.SAFE_DEPTH (read on a thread of its own), the issue's 400 terms,
    and the 2000 JAX handles."""
    check_all(tmp_path, long_sum(n), 0.3, 1.0)


@SLOW
def test_a_long_sum_of_arrays(tmp_path):
    body = ("def f(x):\n    return np.sum(" + " + ".join(
        f"np.sin(x * {i % 7 + 1}.0) * {i / 100}" for i in range(250)) + ")\n")
    check_all(tmp_path, body, np.array([0.3, -0.7, 1.1]), np.array([1.0, 0.5, -2.0]))


@SLOW
def test_a_long_product_and_a_mixed_chain(tmp_path):
    body = ("def f(x):\n    return " + " * ".join(["(1.0 + x / 1000.0)"] * 250)
            + " - " + " - ".join(f"x / {i + 1}.0" for i in range(250)) + "\n")
    check_all(tmp_path, body, 0.3, 1.0)


@pytest.mark.slow
@pytest.mark.parametrize("depth", [90, pytest.param(120, marks=SLOW), pytest.param(199, marks=SLOW)])
def test_deeply_nested_calls(tmp_path, depth):
    body = "def f(x):\n    return " + "np.sin(" * depth + "x" + ")" * depth + "\n"
    check_all(tmp_path, body, 0.9, 1.0)


@SLOW
def test_deeply_nested_parentheses_and_operators(tmp_path):
    depth = 190
    inner = "x"
    for i in range(depth):
        inner = f"({inner} * 0.99 + {i % 3}.0)" if i % 2 else f"(-{inner} + x)"
    body = f"def f(x):\n    return {inner}\n"
    check_all(tmp_path, body, 0.4, 1.0)


@SLOW
def test_a_long_chain_of_unary_minus(tmp_path):
    body = "def f(x):\n    return " + "- " * 601 + "x * x\n"
    check_all(tmp_path, body, 0.4, 1.0)


def nested_conditionals(n: int) -> str:
    cond = "x"
    for i in range(n):
        cond = f"({cond} * 1.01 if x > {i / 100 - 1.0} else x * 0.5)"
    return f"def f(x):\n    return {cond}\n"


def elif_chain(n: int) -> str:
    return ("def f(x):\n    if x < -1.0:\n        y = x * 0.5\n" + "".join(
        f"    elif x < {i / 100 - 1.0}:\n        y = x * {i}.0\n" for i in range(1, n))
        + "    else:\n        y = x * x\n    return y\n")


@pytest.mark.parametrize("x", [pytest.param(-2.0, marks=SLOW), pytest.param(-0.335, marks=SLOW),
                               0.4])
def test_conditionals_nested_as_deep_as_emitted_code_allows(tmp_path, x):
    # (vmap of the gradient of three nested conditional expressions is refused
    # already: a name bound on one path of a batched `if`, vmap.py)
    check_all(tmp_path, nested_conditionals(85), x, 1.0, batched_grads=False)


@SLOW
@pytest.mark.parametrize("x", [-2.0, -0.335, 0.4])
def test_an_elif_chain_as_deep_as_emitted_code_allows(tmp_path, x):
    check_all(tmp_path, elif_chain(88), x, 1.0, batched_grads=False)


@pytest.mark.parametrize("make, line", [
    (nested_conditionals, "    return ((("), (elif_chain, "    elif x < "),
])
def test_conditionals_nested_deeper_are_refused_located(tmp_path, make, line):
    """Each `elif` and conditional expression is an `if` in an `else` of the emitted
    code, and Python compiles at most 100 levels of indentation: the emitted gradient
    failed to compile (IndentationError from emitted code)."""
    mod, path = load(tmp_path, make(120))
    with pytest.raises(s2s.UnsupportedSyntaxError, match="nests more than 90") as info:
        s2s.grad(mod.f)
    message = str(info.value)
    where = re.search(r'File "([^"]+)", line (\d+), column (\d+)', message)
    assert where and os.path.samefile(where[1], path), message
    assert path.read_text().splitlines()[int(where[2]) - 1].startswith(line), message
    assert "Instead: split the chain into helper functions" in message


@SLOW
def test_a_deep_lambda_and_a_deep_callee(tmp_path):
    body = ("g = lambda x: " + " + ".join(f"x*{i}.0" for i in range(300)) + "\n\n\n"
            "def helper(x):\n    return " + " + ".join(f"np.sin(x)*{i}.0" for i in range(300))
            + "\n\n\ndef f(x):\n    return g(x) + helper(x) * 2.0\n")
    check_all(tmp_path, body, 0.3, 1.0)


def test_deeper_than_the_limit_is_refused_located(tmp_path, monkeypatch):
    monkeypatch.setattr(parse, "MAX_DEPTH", 300)
    mod, path = load(tmp_path, "def f(x):\n    y = x * 2.0\n    return "
                     + " + ".join(["y"] * 400) + "\n")
    with pytest.raises(s2s.UnsupportedSyntaxError) as info:
        s2s.grad(mod.f)
    message = str(info.value)
    assert "nests" in message and "300" in message and "Instead:" in message, message
    where = re.search(r'File "([^"]+)", line (\d+), column (\d+)', message)
    assert where and os.path.samefile(where[1], path), message
    line = path.read_text().splitlines()[int(where[2]) - 1]
    assert line.startswith("    return y + y"), message
    assert line.strip()[:40] in message and "^" in message
    assert int(where[3]) == 12  # the first `y` of the sum: the deepest node


@pytest.mark.parametrize("base, step", [pytest.param(120, 10, id="120"),
                                        pytest.param(300, 50, marks=SLOW, id="300")])
def test_transforms_in_threads_share_one_raised_limit(tmp_path, base, step):
    """Several threads transform deep functions at once (each raising the limit, one
    finishing while the others run): all succeed, and the limit is put back.  (By
    default 120 to 160 terms, all deeper than parse.SAFE_DEPTH; 120 to 370 took 17 s.)"""
    limit = sys.getrecursionlimit()
    mods = [load(tmp_path, long_sum(base + step * k))[0] for k in range(5)]

    def work(k):
        g = s2s.grad(mods[k].f)
        return g(0.5), s2s.jvp(mods[k].f, (0.5,), (1.0,))[1]

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        results = list(pool.map(work, range(5)))
    for k, (grad, tangent) in enumerate(results):
        n = base + step * k
        assert grad == tangent == pytest.approx(n * (n - 1) / 2)
    assert sys.getrecursionlimit() == limit


@SLOW
def test_a_caller_on_a_small_stack(tmp_path):
    """The deep source is read on a thread of its own; the rest runs in the caller's
    thread, here one with a small stack."""
    mod, _ = load(tmp_path, long_sum(1500))
    out = {}

    def run():
        try:
            out["grad"] = s2s.grad(mod.f)(0.5)
        except BaseException as exc:  # pragma: no cover - reported below
            out["error"] = exc

    old = threading.stack_size(1024 * 1024)
    try:
        thread = threading.Thread(target=run)
        thread.start()
    finally:
        threading.stack_size(old)
    thread.join()
    assert "error" not in out, out.get("error")
    assert out["grad"] == pytest.approx(1500 * 1499 / 2)


def test_the_limit_is_put_back_after_an_error(tmp_path):
    limit = sys.getrecursionlimit()
    mod, _ = load(tmp_path, "def f(x):\n    return " + " + ".join(
        [f"x*{i}.0" for i in range(300)] + ["np.frobnicate(x)"]) + "\n")
    with pytest.raises(s2s.TransformError, match="frobnicate"):
        s2s.grad(mod.f)
    assert sys.getrecursionlimit() == limit


def test_recursion_room_is_shared_and_restored():
    limit = sys.getrecursionlimit()
    with parse.recursion_room(50):  # shallow: nothing changes
        assert sys.getrecursionlimit() == limit
    with parse.recursion_room(1000):
        raised = sys.getrecursionlimit()
        assert raised > limit + 1000
        with parse.recursion_room(200):
            assert sys.getrecursionlimit() == raised
        assert sys.getrecursionlimit() == raised
    assert sys.getrecursionlimit() == limit
    with parse.recursion_room(1000):  # someone else sets it meanwhile: theirs stays
        sys.setrecursionlimit(limit + 7)
    assert sys.getrecursionlimit() == limit + 7
    sys.setrecursionlimit(limit)
