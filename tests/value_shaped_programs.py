"""Random programs whose intermediate shapes depend on values, for the property test of
the specializer (tests/test_value_shapes.py).

A program is ``def f(x, y, m, n, k):`` with ``x`` and ``y`` float vectors of 6, ``m`` a
boolean mask of 6, ``n`` a 0-d integer array, ``k`` an integer index array; it reads
``CFG.w`` (an attribute of a module object), ``N`` (a module 0-d integer array changed
in place) and ``W`` (a module float array).  Its statements mix full vectors, parts
of vectors whose length depends on values (``a[m]``, ``a[:np.argmax(y) + 1]``,
``a[:n]``, ``a[:CFG.w]``, ``a[~np.isnan(y)]``...) and scalars reduced from them; the
result is a scalar.  Calls with one signature (the same shapes and dtypes) then vary
the values: the masks, the integers, ``CFG.w`` and ``N``.
"""

from __future__ import annotations

import importlib.util
import itertools
import re
import sys
import tempfile
from pathlib import Path

from hypothesis import strategies as st

HEADER = """import types

import numpy as np

CFG = types.SimpleNamespace(w=3)
N = np.array(2)
W = np.linspace(0.5, 1.5, 6)


"""

# a full vector (6) from full vectors a, b
FULL = [
    "np.sin({a}) * {b}", "{a} * W", "np.tanh({a}) + 0.5 * {b}", "np.where(m, {a}, 0.5 * {b})",
    "np.where(y > 0, {a}, {b} ** 2)", "np.where(np.isnan(y), 0.0, {a})", "{a} * {b}",
    "np.exp(np.tanh({a})) - {b}", "{a}[::-1] * {b}", "np.cumsum({a}) * 0.3",
]
# a part of a full vector a: its length depends on values
PART = [
    "{a}[m]", "{a}[~np.isnan(y)]", "{a}[:np.argmax(y) + 1]", "{a}[:n]", "{a}[n:]",
    "{a}[:CFG.w]", "{a}[:N]", "{a}[k]", "{a}[y > 0]", "{a}[:np.count_nonzero(m)]",
    "{a}[:np.sum(m)]", "np.arange(np.argmax(y) + 1) * {a}[0]", "{a}[np.argmax(y):]",
    "{a}[:np.argmax({a}) + 1]", "{a}[{a} > 0.1]", "{a}[m][::-1]", "{a}[k][:n]",
]
# a scalar from a part (or full vector) p
SCALAR = [
    "np.sum({p} ** 2)", "np.sum(np.sin({p}))", "0.5 * np.sum({p})",
    "np.sum({p} * {p}[::-1])", "np.sum(np.tanh({p})) * 0.7", "{a}[np.argmax({a})] * 2.0",
    "{a}[np.argmax(y)] * {a}[0]", "np.sum({p}) ** 2",
]


@st.composite
def programs(draw, steps: tuple[int, int] = (2, 6)) -> str:
    """Source text of ``def f(x, y, m, n, k):`` with a scalar result."""
    full = ["x"]
    parts: list[str] = []
    scalars: list[str] = []
    lines: list[str] = []
    for i in range(draw(st.integers(*steps))):
        kind = draw(st.sampled_from(["full", "part", "part", "scalar", "scale", "loop"]))
        a, b = draw(st.sampled_from(full)), draw(st.sampled_from(full))
        name = f"v{i}"
        if kind == "full":
            lines.append(f"    {name} = {draw(st.sampled_from(FULL)).format(a=a, b=b)}")
            full.append(name)
        elif kind == "part":
            lines.append(f"    {name} = {draw(st.sampled_from(PART)).format(a=a)}")
            parts.append(name)
        elif kind == "scalar" or (kind == "scale" and not scalars):
            p = draw(st.sampled_from(parts + full))
            form = draw(st.sampled_from(SCALAR))
            lines.append(f"    {name} = {form.format(p=p, a=a)}")
            scalars.append(name)
        elif kind == "scale":
            s = draw(st.sampled_from(scalars))
            lines.append(f"    {name} = {a} * {s} + {b}")
            full.append(name)
        else:
            p = draw(st.sampled_from(parts + full))
            lines.append(f"    {name} = {a}")
            count = draw(st.sampled_from(["1", "2", "3", "n", "N"]))  # (n, N: values)
            lines.append(f"    for i in range({count}):")
            lines.append(f"        {name} = 0.5 * {name} + np.tanh(np.sum({p}) * {b})")
            full.append(name)
    terms = scalars + [f"np.sum({p} ** 2)" for p in parts[-2:]] + [f"np.sum({full[-1]})"]
    return "def f(x, y, m, n, k):\n" + "\n".join(lines) + \
        f"\n    return {' + '.join(terms)}\n"


_COUNTER = itertools.count()
_DIR = Path(tempfile.mkdtemp(prefix="s2s_value_shapes_"))


def load(source: str):
    """The program's module as NumPy, and its JAX twin sharing the NumPy module's
    ``CFG``, ``N`` and ``W`` objects (None without JAX)."""
    k = next(_COUNTER)
    path = _DIR / f"value_shapes_{k}.py"
    path.write_text(HEADER + source)
    spec = importlib.util.spec_from_file_location(f"value_shapes_{k}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    try:
        import jax.numpy  # noqa: F401
    except ImportError:
        return module, None
    twin_path = _DIR / f"value_shapes_{k}_jax.py"
    twin_path.write_text(re.sub(r"^import numpy as np$", "import jax.numpy as np",
                                HEADER + source, flags=re.M))
    spec = importlib.util.spec_from_file_location(f"value_shapes_{k}_jax", twin_path)
    twin = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(twin)
    twin.CFG, twin.N, twin.W = module.CFG, module.N, module.W
    return module, twin
