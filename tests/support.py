"""Oracles for the tests: JAX on the same source, central finite differences."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np

try:
    import jax
    import jax.numpy as jnp

    HAVE_JAX = True
except ImportError:  # pragma: no cover - exercised only without the [dev] extra
    jax = None
    jnp = None
    HAVE_JAX = False


def jax_twin(module: Any) -> Any:
    """Load a module's source again with ``numpy`` bound to ``jax.numpy``.

    The functions are then the same source text, traced by JAX: the oracle sees
    exactly what s2s transformed.
    """
    path = Path(module.__file__)
    text = path.read_text()
    for pattern, repl in (
        (r"^import numpy as (\w+)$", r"import jax.numpy as \1"),
        (r"^import numpy$", "import jax.numpy as numpy"),
        (r"^import numpy\.linalg as (\w+)$", r"import jax.numpy.linalg as \1"),
        (r"^from numpy import ", "from jax.numpy import "),
    ):
        text = re.sub(pattern, repl, text, flags=re.M)
    spec = importlib.util.spec_from_loader(module.__name__ + "_jax", loader=None)
    twin = importlib.util.module_from_spec(spec)
    twin.__file__ = str(path)
    sys.modules[spec.name] = twin  # (before it runs: @dataclass looks its module up)
    exec(compile(text, str(path), "exec"), twin.__dict__)
    return twin


def compiled(fn: Callable) -> Callable:
    """``fn`` (a JAX function: ``jax.grad(twin.f)``...) compiled as one program by
    ``jax.jit``, falling back to running it op by op where tracing it fails (a Python
    ``if`` on a value, an argument used as a shape or a string).  The same answer,
    cheaper to get: op by op, JAX compiles every operation at every new shape (most
    of the suite's oracle time), where one program compiles once."""
    jitted = jax.jit(fn)

    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return jitted(*args, **kwargs)
        except Exception:  # noqa: BLE001 - op by op gives the true answer or error
            return fn(*args, **kwargs)

    return run


def leaves(tree: Any) -> list[Any]:
    if isinstance(tree, (tuple, list)):
        return [x for t in tree for x in leaves(t)]
    if isinstance(tree, dict):
        return [x for k in sorted(tree) for x in leaves(tree[k])]
    return [tree]


def replace_leaf(tree: Any, index: int, value: Any) -> tuple[Any, int]:
    """Copy of ``tree`` with leaf number ``index`` (depth-first) replaced."""
    if isinstance(tree, (tuple, list)):
        out = []
        for t in tree:
            t2, index = replace_leaf(t, index, value)
            out.append(t2)
        return type(tree)(out), index
    if isinstance(tree, dict):
        out_d = {}
        for k in sorted(tree):
            out_d[k], index = replace_leaf(tree[k], index, value)
        out_d = {k: out_d[k] for k in tree}
        return out_d, index
    return (value if index == 0 else tree), index - 1


def fd_grad(f: Callable, args: tuple, argnum: int, eps: float = 1e-6) -> list[np.ndarray]:
    """Central finite differences of scalar ``f`` w.r.t. each leaf of args[argnum]."""
    out = []
    for i, leaf in enumerate(leaves(args[argnum])):
        leaf = np.asarray(leaf, dtype=np.float64)
        g = np.zeros_like(leaf)
        for j in np.ndindex(leaf.shape):
            for sign in (1, -1):
                bumped = leaf.copy()
                bumped[j] += sign * eps
                value = bumped if leaf.ndim else float(bumped)
                tree, _ = replace_leaf(args[argnum], i, value)
                new_args = args[:argnum] + (tree,) + args[argnum + 1 :]
                g[j] += sign * float(f(*new_args))
        out.append(g / (2 * eps))
    return out


def central_grad(f: Callable, x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """Central differences of scalar ``f`` at the array ``x`` (``fd_grad`` for one
    array argument, in ``x``'s dtype)."""
    out = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[k] = h
        out[k] = (f(x + e) - f(x - e)) / (2 * h)
    return out


def assert_results_close(got: Any, expected: Any, rtol: float = 1e-9,
                         atol: float = 1e-11) -> None:
    """One array or a tuple of them (a transform's result): equal shapes, close values."""
    got = got if isinstance(got, tuple) else (got,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert np.shape(g) == np.shape(e)
        np.testing.assert_allclose(g, np.asarray(e), rtol=rtol, atol=atol)


def assert_trees_close(actual: Any, expected: Any, rtol: float = 1e-7, atol: float = 1e-9):
    a, e = leaves(actual), leaves(expected)
    assert len(a) == len(e), f"structure differs: {actual!r} vs {expected!r}"
    for x, y in zip(a, e):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=atol)


def jax_tol(dtype: Any, f64: float = 1e-8, f32: float = 5e-4) -> dict[str, float]:
    """``rtol``/``atol`` for a result compared with JAX's: ``f64`` in float64 (absolute
    ``f64 / 100``), ``f32`` in float32 (absolute ``f32 / 10``: the two libraries round
    float32 differently)."""
    if np.dtype(dtype) == np.float64:
        return dict(rtol=f64, atol=f64 / 100)
    return dict(rtol=f32, atol=f32 / 10)


def assert_close_to(got: Any, expected: Any, dtype: Any = np.float64,
                    check_dtype: bool = True, *, f64: float = 1e-8, f32: float = 5e-4,
                    dtype_of: str = "expected", scale_atol: bool = False) -> None:
    """Every leaf of ``got`` matches the leaf of ``expected`` (JAX's result, as
    ``jax.tree_util`` flattens both): as many leaves, equal shapes, values within
    ``jax_tol(dtype, f64, f32)``.  With ``check_dtype``, the dtypes too: ``dtype_of``
    ``"expected"`` compares every leaf's with the expected leaf's, ``"expected-arrays"``
    only leaves of rank > 0 (a 0-d result may be a Python float), ``"given"`` requires
    ``dtype`` of leaves of rank > 0.  ``scale_atol`` scales the absolute tolerance by
    the largest expected magnitude (float32 rounding grows with the values)."""
    got_leaves, want_leaves = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(
        expected)
    assert len(got_leaves) == len(want_leaves), (got, expected)
    tol = jax_tol(dtype, f64, f32)
    for g, w in zip(got_leaves, want_leaves):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, (g.shape, w.shape)
        if check_dtype and (dtype_of == "expected" or g.ndim):
            want_dtype = np.dtype(dtype) if dtype_of == "given" else w.dtype
            assert g.dtype == want_dtype, (g.dtype, want_dtype)
        atol = tol["atol"] * max(1.0, float(np.max(np.abs(w), initial=0.0))) \
            if scale_atol else tol["atol"]
        wide = np.result_type(g, w, np.float64)  # (complex stays complex)
        np.testing.assert_allclose(g.astype(wide), w.astype(wide), rtol=tol["rtol"],
                                   atol=atol)


def rng_tree(tree: Any, r: np.random.Generator) -> Any:
    """A random tangent for each leaf: normal floats of the leaf's shape and dtype,
    ``float0`` zeros for integer and boolean leaves (JAX's convention)."""
    if isinstance(tree, (tuple, list)):
        return type(tree)(rng_tree(t, r) for t in tree)
    if isinstance(tree, dict):
        return {k: rng_tree(v, r) for k, v in tree.items()}
    dtype = np.asarray(tree).dtype
    if not np.issubdtype(dtype, np.inexact):
        return np.zeros(np.shape(tree), [("float0", np.void, 0)])
    t = np.asarray(r.normal(size=np.shape(tree)), dtype=dtype)
    return t if np.ndim(tree) or isinstance(tree, np.ndarray) else dtype.type(t)
