"""Random programs for the differential fuzzer (tests/test_fuzz.py).

A program is ``def f(x, y):`` over vectors of 4 floats: a few statements, each a
form drawn from the primitive library whose domain is valid for every real input
(``np.log(a ** 2 + 0.5)``, ``np.arcsin(0.9 * np.tanh(a))``), an ``if`` on a value the
program computed (both branches valid everywhere, so vmap may run both), or a ``for``
over ``range(k)``, k <= 3, carrying a value; then a scalar reduction.  Each program
is written to a module file (s2s reads source) and loaded twice: as NumPy, and as
its JAX twin (the same text with numpy rebound to jax.numpy, scipy.special to
jax.scipy.special).
"""

from __future__ import annotations

import importlib.util
import itertools
import re
import sys
import tempfile
from pathlib import Path

from hypothesis import strategies as st

# elementwise, valid for any real input
UNARY = [
    "np.sin({a})", "np.cos({a})", "np.tan(np.tanh({a}))", "np.tanh({a})",
    "np.exp(np.tanh({a}))", "np.expm1(np.tanh({a}))", "np.log1p({a} ** 2)",
    "np.log({a} ** 2 + 0.5)", "np.log2({a} ** 2 + 1.0)", "np.log10({a} ** 2 + 1.0)",
    "np.sqrt({a} ** 2 + 1.0)", "np.arctan({a})", "np.arcsinh({a})",
    "np.arcsin(0.9 * np.tanh({a}))", "np.arccos(0.9 * np.tanh({a}))",
    "np.arccosh({a} ** 2 + 1.5)", "np.arctanh(0.9 * np.tanh({a}))",
    "np.sinh(np.tanh({a}))", "np.cosh(np.tanh({a}))", "{a} ** 2", "{a} ** 3",
    "np.square({a})", "1.0 / (1.0 + {a} ** 2)", "-{a}", "np.abs({a}) + {a}",
    "np.maximum({a}, 0.3)", "np.minimum({a}, -0.2)", "np.clip({a}, -0.5, 0.8)",
    "np.exp2(np.tanh({a}))", "np.cbrt({a} ** 2 + 1.0)",
    "np.reciprocal(2.0 + np.sin({a}))", "sp.erf({a})", "sp.expit({a})",
    "sp.gammaln({a} ** 2 + 1.0)", "np.where({a} > 0.1, {a}, 0.5 * {a})",
    "{a} * 0.5 + 1.0", "np.sqrt(np.abs({a}) + 0.25)",
]
BINARY = [
    "{a} + {b}", "{a} - {b}", "{a} * {b}", "{a} / (1.5 + np.cos({b}))",
    "np.hypot({a}, 1.0 + {b} ** 2)", "np.arctan2({a}, 2.0 + {b} ** 2)",
    "np.logaddexp({a}, {b})", "np.maximum({a}, {b})", "np.minimum({a}, {b})",
    "(1.0 + {a} ** 2) ** np.tanh({b})", "np.where({a} > {b}, {a} * {b}, {a} - {b})",
    "sp.xlogy(1.0 + {a} ** 2, 1.0 + {b} ** 2)",
]
# mixing elements: vectors of 4
MIXING = [
    "np.cumsum({a})", "{a}[::-1]", "np.sum({a}) * {a}", "np.mean({a}) + {a}",
    "np.roll({a}, 1)", "{a} - np.max({a})", "np.sort({a})", "M @ {a}",
    "np.dot({a}, {b}) * {a}", "np.outer({a}, {b}).sum(axis=0)",
    "np.tanh(M @ {a} + {b})", "np.cumprod(1.0 + 0.1 * np.tanh({a}))",
    "np.exp({a} - np.max({a})) / np.sum(np.exp({a} - np.max({a})))",
    "np.concatenate([{a}[1:], {a}[:1]])", "np.stack([{a}, {b}]).sum(axis=0)",
    "np.reshape({a}, (2, 2)).T.ravel()", "np.var({a}) + {a}", "{a}[IDX]",
    "np.take({a}, IDX)", "np.flip({a})", "{a} @ M", "np.linalg.solve(A, {a})",
    "np.einsum('ij,j->i', M, {a})", "np.tile({a}[:2], 2)", "np.trace(np.outer({a}, {b})) * {a}",
    "np.prod(1.0 + 0.1 * np.tanh({a})) * {a}", "np.mean(np.reshape({a}, (2, 2)), axis=0)[IDX2]",
]
REDUCE = [
    "np.sum({a})", "np.mean({a})", "np.sum({a} ** 2)", "np.max({a}) + np.sum({a})",
    "np.dot({a}, {a})", "sp.logsumexp({a})", "np.prod(1.0 + 0.1 * np.tanh({a}))",
    "np.sum(np.sin({a}) * W)", "np.linalg.norm({a} + 2.0)", "np.min({a}) * 2.0 + np.mean({a})",
]
HEADER = """import numpy as np
import scipy.special as sp

M = np.array([[0.5, -0.3, 0.2, 0.1], [0.25, 0.4, -0.6, 0.3],
              [-0.1, 0.2, 0.7, -0.5], [0.3, 0.1, -0.2, 0.6]])
A = np.eye(4) * 2.0 + M * 0.5
W = np.array([0.9, -1.3, 0.4, 1.1])
IDX = np.array([0, 2, 2, 3])
IDX2 = np.array([0, 1, 1, 0])

"""


@st.composite
def _form(draw, names, loop_index: str | None = None) -> str:
    kind = draw(st.sampled_from(["unary", "binary", "mixing"]))
    pool = {"unary": UNARY, "binary": BINARY, "mixing": MIXING}[kind]
    form = draw(st.sampled_from(pool))
    text = form.format(a=draw(st.sampled_from(names)), b=draw(st.sampled_from(names)))
    if loop_index is not None and draw(st.booleans()):
        text = f"{text} + 0.1 * {loop_index}"
    return text


@st.composite
def programs(draw, steps: tuple[int, int] = (2, 6)) -> str:
    """Source text of ``def f(x, y):`` with a scalar result."""
    n = draw(st.integers(*steps))
    names = ["x", "y"]
    lines: list[str] = []
    for i in range(n):
        name = f"v{i}"
        construct = draw(st.sampled_from(["assign", "assign", "if", "for"]))
        if construct == "assign":
            lines.append(f"    {name} = {draw(_form(names))}")
        elif construct == "if":
            test = draw(st.sampled_from(names))
            thr = draw(st.sampled_from(["0.0", "0.5", "-0.5"]))
            reduce = draw(st.sampled_from(["np.sum", "np.mean", "np.max"]))
            lines.append(f"    if {reduce}({test}) > {thr}:")
            lines.append(f"        {name} = {draw(_form(names))}")
            if draw(st.booleans()):
                lines.append("    else:")
                lines.append(f"        {name} = {draw(_form(names))}")
            else:
                lines[-2:-2] = [f"    {name} = {draw(st.sampled_from(names))}"]
        else:
            k = draw(st.integers(1, 3))
            start = draw(st.sampled_from(names))
            acc = f"acc{i}"
            body = draw(_form(names + [acc], loop_index="i"))
            lines.append(f"    {acc} = {start}")
            lines.append(f"    for i in range({k}):")
            lines.append(f"        {acc} = 0.5 * {acc} + 0.5 * np.tanh({body})")
            lines.append(f"    {name} = {acc}")
        names.append(name)
    out = draw(st.sampled_from(REDUCE)).format(a=names[-1])
    return "def f(x, y):\n" + "\n".join(lines) + f"\n    return {out}\n"


_COUNTER = itertools.count()
_DIR = Path(tempfile.mkdtemp(prefix="s2s_fuzz_"))


def _twin_text(text: str) -> str:
    text = re.sub(r"^import numpy as np$", "import jax.numpy as np", text, flags=re.M)
    return re.sub(r"^import scipy\.special as sp$", "import jax.scipy.special as sp",
                  text, flags=re.M)


def load(source: str):
    """``f`` from ``source`` as NumPy, and its JAX twin (None without JAX)."""
    k = next(_COUNTER)
    path = _DIR / f"fuzz_{k}.py"
    text = HEADER + source
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(f"s2s_fuzz_{k}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    try:
        import jax  # noqa: F401
    except ImportError:
        return module.f, None
    twin: dict = {"__name__": f"s2s_fuzz_{k}_jax"}
    exec(compile(_twin_text(text), str(path), "exec"), twin)
    return module.f, twin["f"]
