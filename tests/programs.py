"""Random programs for the composition property tests: small NumPy functions built
from the primitive library with valid domains, written to a module file (s2s reads
source) together with a JAX twin of the same text."""

from __future__ import annotations

import importlib.util
import itertools
import sys
import tempfile
from pathlib import Path

from hypothesis import strategies as st

# unary steps, each safe for any real input (domains kept valid by construction)
UNARY = [
    "np.sin({a})", "np.cos({a})", "np.tanh({a})", "np.exp(np.tanh({a}))",
    "np.log1p({a} ** 2)", "np.sqrt({a} ** 2 + 1.0)", "{a} ** 2", "{a} ** 3",
    "np.arctan({a})", "1.0 / (1.0 + {a} ** 2)", "-{a}", "np.abs({a}) + {a}",
    "np.maximum({a}, 0.3)", "np.sinh(np.tanh({a}))",
]
BINARY = ["{a} + {b}", "{a} - {b}", "{a} * {b}", "{a} / (1.5 + np.cos({b}))",
          "np.hypot({a}, {b}) ", "np.arctan2({a}, 2.0 + {b} ** 2)"]
# steps that mix elements (vector inputs only)
MIXING = ["np.cumsum({a})", "{a}[::-1]", "np.sum({a}) * {a}", "np.mean({a}) + {a}",
          "np.roll({a}, 1)", "{a} - np.max({a})", "np.sort({a})"]
REDUCE = ["np.sum({a})", "np.mean({a})", "np.sum({a} ** 2)", "np.max({a}) + np.sum({a})"]

_COUNTER = itertools.count()
_DIR = Path(tempfile.mkdtemp(prefix="s2s_programs_"))


@st.composite
def programs(draw, vector: bool = True, steps: tuple[int, int] = (2, 5)):
    """Source text of ``def f(x):`` with a scalar result."""
    n = draw(st.integers(*steps))
    names = ["x"]
    lines = []
    pool = UNARY + BINARY + (MIXING if vector else [])
    for i in range(n):
        form = draw(st.sampled_from(pool))
        a = draw(st.sampled_from(names))
        b = draw(st.sampled_from(names))
        name = f"v{i}"
        lines.append(f"    {name} = {form.format(a=a, b=b)}")
        names.append(name)
    last = names[-1]
    out = draw(st.sampled_from(REDUCE)).format(a=last)
    body = "\n".join(lines)
    return f"def f(x):\n{body}\n    return {out}\n"


def load(source: str):
    """The function ``f`` from ``source`` (NumPy), and its JAX twin."""
    k = next(_COUNTER)
    path = _DIR / f"program_{k}.py"
    path.write_text("import numpy as np\n\n\n" + source)
    spec = importlib.util.spec_from_file_location(f"s2s_program_{k}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    twin_ns: dict = {}
    exec(compile("import jax.numpy as np\n\n\n" + source, str(path), "exec"), twin_ns)
    return module.f, twin_ns["f"]
