"""Conformance against recorded JAX: replay the fixture corpus, or compare live.

The corpus is recorded by ``tools/capture_fixtures.py`` (which needs JAX) into
``tests/fixtures/conformance/``: ``manifest.json`` lists every case (the function, by
module file and name; the transform and its options; the inputs and JAX's outputs as
references into ``arrays.npz``), and ``row_fns.py`` is the generated module of one
function per rule-table row.  This module needs neither JAX nor the test suite: it
loads the manifest from that folder (found next to the installed package in a
checkout, or named by ``S2S_CONFORMANCE_FIXTURES``), runs each case's transform
through s2s and compares with what JAX returned.  With JAX installed, ``live=True``
also runs JAX again on the same source (the module text with ``numpy`` rebound to
``jax.numpy``) and reports a recorded-vs-live difference on its own (``jax_drift``),
apart from s2s's result.

Each case's status: ``pass``; ``fail`` (wrong values, wrong structure, or s2s crashed
with something other than a refusal); ``unsupported`` (s2s refused with a
``TransformError`` or ``NotImplementedError``: a result, recorded with its message).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

from .. import api as public  # the transforms, as s2s exports them
from ..errors import TransformError
from ..version import __version__

TRANSFORMS = ("value", "jvp", "vjp", "grad", "vmap", "hessian",
              "vmap_grad", "jvp_grad", "jacfwd_jacrev")
TOL = {"rtol": 1e-7, "atol": 1e-9}
TOL32 = {"rtol": 2e-4, "atol": 1e-5}


def fixture_dir() -> Path:
    env = os.environ.get("S2S_CONFORMANCE_FIXTURES")
    if env:
        return Path(env)
    # the checkout (or unpacked sdist) that holds the package: the corpus's cases call
    # functions of the suite's own modules (tests/rule_fns*.py), so it lives beside them
    return Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "conformance"


# ---- pytrees as JSON, leaves in an npz --------------------------------------------


class ArrayStore:
    """Arrays by content hash: identical inputs and outputs are stored once."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}

    def put(self, a: np.ndarray) -> str:
        a = np.array(a, order="C")  # (ascontiguousarray makes 0-d arrays 1-d)
        h = hashlib.sha1(f"{a.dtype.str}{a.shape}".encode() + a.tobytes()).hexdigest()
        key = h[:16]
        self.arrays.setdefault(key, a)
        return key


def encode(tree: Any, store: ArrayStore) -> Any:
    if isinstance(tree, tuple):
        return {"t": [encode(t, store) for t in tree]}
    if isinstance(tree, list):
        return {"l": [encode(t, store) for t in tree]}
    if isinstance(tree, dict):
        return {"d": [[k, encode(v, store)] for k, v in tree.items()]}
    if tree is None:
        return {"n": None}
    if isinstance(tree, bool):
        return {"b": tree}
    if isinstance(tree, int):
        return {"i": tree}
    if isinstance(tree, float):
        return {"f": tree}
    a = np.asarray(tree)
    if a.dtype == object:
        raise TypeError(f"not an array leaf: {tree!r}")
    if a.dtype.names == ("float0",) or str(a.dtype) == "[('float0', 'V')]" or (
            a.dtype.kind == "V" and a.dtype.itemsize == 0):
        return {"z": list(a.shape)}
    return {"a": store.put(a)}


FLOAT0 = np.dtype([("float0", np.void, 0)])


def decode(spec: Any, arrays: Any) -> Any:
    (tag, value), = spec.items()
    if tag == "t":
        return tuple(decode(s, arrays) for s in value)
    if tag == "l":
        return [decode(s, arrays) for s in value]
    if tag == "d":
        return {k: decode(s, arrays) for k, s in value}
    if tag == "n":
        return None
    if tag == "b":
        return bool(value)
    if tag == "i":
        return int(value)
    if tag == "f":
        return float(value)
    if tag == "z":
        return np.zeros(tuple(value), FLOAT0)
    return np.array(arrays[value])


def leaves(tree: Any) -> list[Any]:
    if isinstance(tree, (tuple, list)):
        return [x for t in tree for x in leaves(t)]
    if isinstance(tree, dict):
        return [x for k in sorted(tree) for x in leaves(tree[k])]
    return [tree]


# ---- loading the case functions: s2s reads the NumPy text, JAX its twin ---------

_MODULES: dict[tuple[str, bool], Any] = {}


def _twin_text(text: str) -> str:
    """The module's text with NumPy's imports rebound to jax.numpy (SciPy's special
    functions to jax.scipy.special): the same source, run by JAX."""
    for pattern, repl in (
        (r"^import numpy as (\w+)$", r"import jax.numpy as \1"),
        (r"^import numpy$", "import jax.numpy as numpy"),
        (r"^import numpy\.linalg as (\w+)$", r"import jax.numpy.linalg as \1"),
        (r"^from numpy import ", "from jax.numpy import "),
        (r"^import scipy\.special as (\w+)$", r"import jax.scipy.special as \1"),
    ):
        text = re.sub(pattern, repl, text, flags=re.M)
    return text


def load_module(path: Path, twin: bool = False) -> Any:
    """The module at ``path`` (its folder importable while it loads), or its JAX twin."""
    path = path.resolve()
    key = (str(path), twin)
    if key in _MODULES:
        return _MODULES[key]
    name = "s2s_conformance_" + re.sub(r"\W", "_", path.stem) + ("_jax" if twin else "")
    folder = str(path.parent)
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    try:
        if twin:
            spec = importlib.util.spec_from_loader(name, loader=None)
            module = importlib.util.module_from_spec(spec)
            module.__file__ = str(path)
            sys.modules[name] = module
            exec(compile(_twin_text(path.read_text()), str(path), "exec"), module.__dict__)
        else:
            spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
    finally:
        if added:
            sys.path.remove(folder)
    _MODULES[key] = module
    return module


# ---- the transforms, spelled once for s2s and JAX (their APIs agree) ----------------


def apply(T: Any, case: dict, fn: Callable, inputs: dict) -> Any:
    """Run ``case``'s transform with the namespace ``T`` (``s2s`` or ``jax``)."""
    kind = case["transform"]
    argnums = case.get("argnums", 0)
    argnums = tuple(argnums) if isinstance(argnums, list) else argnums
    has_aux = case.get("has_aux", False)
    args = inputs.get("args", ())
    if kind == "value":
        return fn(*args)
    if kind == "jvp":
        return T.jvp(fn, tuple(args), tuple(inputs["tangents"]))
    if kind == "vjp":
        out, pullback = T.vjp(fn, *args)
        return out, pullback(inputs["cotangent"])
    if kind == "grad":
        return T.grad(fn, argnums=argnums, has_aux=has_aux)(*args)
    if kind == "vmap":
        return T.vmap(fn, in_axes=tuple(case["in_axes"]))(*inputs["batched"])
    if kind == "hessian":
        return T.hessian(fn, argnums=argnums)(*args)
    if kind == "vmap_grad":
        return T.vmap(T.grad(fn, argnums=argnums),
                      in_axes=tuple(case["in_axes"]))(*inputs["batched"])
    if kind == "jvp_grad":
        return T.jvp(T.grad(fn, argnums=argnums), tuple(args), tuple(inputs["tangents"]))
    if kind == "jacfwd_jacrev":
        return T.jacfwd(T.jacrev(fn, argnums=argnums), argnums=argnums)(*args)
    raise ValueError(f"unknown transform {kind!r}")


def loop_oracle(T: Any, case: dict, fn: Callable, inputs: dict) -> Any:
    """vmap as a Python loop over the examples (JAX's vmap cannot take every program:
    a Python ``if`` on a batched value), stacked."""
    batched, axes = inputs["batched"], case["in_axes"]
    size = next(np.shape(leaves(b)[0])[0] for b, ax in zip(batched, axes) if ax is not None)
    inner = fn if case["transform"] == "vmap" else T.grad(
        fn, argnums=tuple(case["argnums"]) if isinstance(case.get("argnums"), list)
        else case.get("argnums", 0))
    outs = []
    for k in range(size):
        ex = [b if ax is None else _index_tree(b, k) for b, ax in zip(batched, axes)]
        outs.append(inner(*ex))
    return _stack_trees(outs)


def _index_tree(tree: Any, k: int) -> Any:
    if isinstance(tree, (tuple, list)):
        return type(tree)(_index_tree(t, k) for t in tree)
    if isinstance(tree, dict):
        return {key: _index_tree(v, k) for key, v in tree.items()}
    return tree[k]


def _stack_trees(trees: list) -> Any:
    first = trees[0]
    if isinstance(first, (tuple, list)):
        return type(first)(_stack_trees([t[i] for t in trees]) for i in range(len(first)))
    if isinstance(first, dict):
        return {k: _stack_trees([t[k] for t in trees]) for k in first}
    return np.stack([np.asarray(t) for t in trees])


def jax_expected(case: dict, inputs: dict, fixtures: Path) -> tuple[Any, str]:
    """JAX's answer for ``case`` (x64), and how it was produced."""
    import jax

    jax.config.update("jax_enable_x64", True)
    module = load_module(fixtures / case["module"], twin=True)
    fn = getattr(module, case["function"])
    how = case.get("jax_how")
    if how is None:  # first recording: one compiled program, else JAX op by op
        try:
            return _to_numpy(_jitted(jax, case, fn, inputs)), "jax.jit of " + _default_how(case)
        except Exception:  # noqa: BLE001 - Python control flow on traced values
            how = _default_how(case)
    if how.startswith("loop"):
        out = loop_oracle(jax, case, fn, inputs)
    elif how.startswith("jax.jit of "):
        out = _jitted(jax, case, fn, inputs)
    else:
        out = apply(jax, case, fn, inputs)
    return _to_numpy(out), how


# These programs run once: compiled for compile speed (XLA's backend at -O0 skips
# optimizations only; no floating-point semantics change).
FAST_COMPILE = {"xla_backend_optimization_level": 0}


def _jitted(jax: Any, case: dict, fn: Callable, inputs: dict) -> Any:
    """``apply`` under one ``jax.jit``: array inputs traced, Python scalars static."""
    flat: list[Any] = []

    def split(tree: Any) -> Any:
        if isinstance(tree, (tuple, list)):
            return type(tree)(split(t) for t in tree)
        if isinstance(tree, dict):
            return {k: split(v) for k, v in tree.items()}
        if isinstance(tree, np.ndarray) and tree.dtype.kind in "fiub":
            flat.append(tree)
            return _Slot(len(flat) - 1)
        return tree

    skeleton = split(inputs)

    def fill(tree: Any, arrays: list) -> Any:
        if isinstance(tree, (tuple, list)):
            return type(tree)(fill(t, arrays) for t in tree)
        if isinstance(tree, dict):
            return {k: fill(v, arrays) for k, v in tree.items()}
        return arrays[tree.index] if isinstance(tree, _Slot) else tree

    run = jax.jit(lambda arrays: apply(jax, case, fn, fill(skeleton, arrays)),
                  compiler_options=FAST_COMPILE)
    return run(flat)


@dataclass(frozen=True)
class _Slot:
    index: int


def _default_how(case: dict) -> str:
    return {
        "value": "twin(*args)", "jvp": "jax.jvp", "vjp": "jax.vjp", "grad": "jax.grad",
        "vmap": "jax.vmap", "hessian": "jax.hessian", "vmap_grad": "jax.vmap(jax.grad)",
        "jvp_grad": "jax.jvp(jax.grad)", "jacfwd_jacrev": "jax.jacfwd(jax.jacrev)",
    }[case["transform"]]


def _to_numpy(tree: Any) -> Any:
    if isinstance(tree, (tuple, list)):
        return type(tree)(_to_numpy(t) for t in tree)
    if isinstance(tree, dict):
        return {k: _to_numpy(v) for k, v in tree.items()}
    return None if tree is None else np.asarray(tree)


# ---- comparing ----------------------------------------------------------------------


def compare(got: Any, expected: Any, tol: dict) -> str | None:
    """None when ``got`` matches ``expected``; else what differs."""
    g, e = leaves(got), leaves(expected)
    if len(g) != len(e):
        return f"structure: {len(g)} leaves, expected {len(e)}"
    for i, (x, y) in enumerate(zip(g, e)):
        x, y = np.asarray(x), np.asarray(y)
        if np.shape(x) != np.shape(y):
            return f"leaf {i}: shape {np.shape(x)}, expected {np.shape(y)}"
        if y.dtype == FLOAT0 or y.dtype.kind == "V":
            continue
        if x.dtype.kind == "V":
            return f"leaf {i}: float0, expected {y.dtype}"
        xf, yf = x.astype(np.float64), y.astype(np.float64)
        if not np.allclose(xf, yf, equal_nan=True, **tol):
            with np.errstate(invalid="ignore"):
                err = np.nanmax(np.abs(xf - yf)) if xf.size else 0.0
            return f"leaf {i}: max abs error {err:.3g}"
    return None


def _tol(inputs: dict) -> dict:
    f32 = any(np.asarray(x).dtype == np.float32 for x in leaves(inputs.get("args", ()))
              + leaves(inputs.get("batched", ())))
    return TOL32 if f32 else TOL


# ---- running ------------------------------------------------------------------------


@dataclass
class Result:
    id: str
    row: str  # the matrix row: a primitive, or a program family
    transform: str
    status: str  # pass / fail / unsupported
    detail: str = ""
    jax_drift: str | None = None  # recorded vs live JAX, when run live
    seconds: float = 0.0


@dataclass
class Corpus:
    manifest: dict
    arrays: Any
    root: Path
    cases: list[dict] = field(default_factory=list)

    def inputs(self, case: dict) -> dict:
        return {k: decode(v, self.arrays) for k, v in case["inputs"].items()}

    def expected(self, case: dict) -> Any:
        return decode(case["expected"], self.arrays)


def load(fixtures: Path | None = None) -> Corpus:
    root = Path(fixtures) if fixtures else fixture_dir()
    manifest_path = root / "manifest.json"
    if not manifest_path.exists():
        named = fixtures is not None or bool(os.environ.get("S2S_CONFORMANCE_FIXTURES"))
        raise FileNotFoundError(_no_corpus(root, named))
    manifest = json.loads(manifest_path.read_text())
    return Corpus(manifest, NpzArrays(root / "arrays.npz"), root, manifest["cases"])


class NpzArrays(Mapping):
    """The corpus's arrays by key, each read from the npz when first asked for: a
    filtered replay or ``--count`` does not decompress all eleven thousand."""

    def __init__(self, path: Path) -> None:
        self.path = path
        with np.load(path) as data:
            self._keys = list(data.files)
        self._read: dict[str, np.ndarray] = {}
        self._data: Any = None

    def __getitem__(self, key: str) -> np.ndarray:
        if key not in self._read:
            if key not in self._keys:
                raise KeyError(key)
            if self._data is None:
                self._data = np.load(self.path)
            self._read[key] = self._data[key]
        return self._read[key]

    def __iter__(self):
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


def _no_corpus(root: Path, named: bool) -> str:
    """What to do when there is no corpus at ``root``: a folder the user named, or
    the default beside the package (absent when s2s is installed from a wheel)."""
    where = (f"give the folder tests/fixtures/conformance/ of s2s {__version__}'s "
             "source (a clone of the repository, or the unpacked sdist "
             f"s2s-{__version__}.tar.gz)")
    if named:
        what = "it holds no manifest.json" if root.is_dir() else "no such folder"
        return f"no conformance corpus at {root} ({what}): {where}"
    return (
        f"no conformance corpus beside the installed s2s ({Path(__file__).parents[1]}): "
        "the corpus is not part of the installed package (a wheel), because its cases "
        "call the test suite's own functions (tests/rule_fns*.py, tests/corpus_fns.py) "
        "and ship with the tests.  To replay it against this installed s2s, "
        f"{where}: `s2s conformance --fixtures SOURCE/tests/fixtures/conformance` (or "
        "S2S_CONFORMANCE_FIXTURES=SOURCE/tests/fixtures/conformance)"
    )


def run_case(corpus: Corpus, case: dict, live: bool = False) -> Result:
    import warnings

    start = time.perf_counter()
    inputs = corpus.inputs(case)
    expected = corpus.expected(case)
    tol = _tol(inputs)
    res = Result(case["id"], case["row"], case["transform"], "pass")
    if live:
        try:
            live_out, _ = jax_expected(case, corpus.inputs(case), corpus.root)
            res.jax_drift = compare(live_out, expected, tol)
            expected = live_out  # s2s is judged against JAX as it is now
        except Exception as exc:  # noqa: BLE001 - reported, not hidden
            res.jax_drift = f"live JAX raised {type(exc).__name__}: {exc}"[:300]
    try:
        fn = getattr(load_module(corpus.root / case["module"]), case["function"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            got = apply(public, case, fn, inputs)
    except (TransformError, NotImplementedError) as exc:  # a refusal, with its reason
        res.status, res.detail = "unsupported", _first_line(exc)
    except Exception as exc:  # noqa: BLE001 - a crash is a failure, with its message
        res.status, res.detail = "fail", f"{type(exc).__name__}: {_first_line(exc)}"
    else:
        diff = compare(got, expected, tol)
        if diff is not None:
            res.status, res.detail = "fail", diff
    res.seconds = time.perf_counter() - start
    return res


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:300]


def run(corpus: Corpus, cases: Iterable[dict] | None = None, live: bool = False,
        progress: Callable[[Result], None] | None = None) -> list[Result]:
    out = []
    for case in corpus.cases if cases is None else cases:
        r = run_case(corpus, case, live)
        out.append(r)
        if progress:
            progress(r)
    return out


# ---- reports ------------------------------------------------------------------------


def matrix(results: list[Result]) -> dict[str, dict[str, dict[str, int]]]:
    """row -> transform -> status -> count."""
    m: dict[str, dict[str, dict[str, int]]] = {}
    for r in results:
        cell = m.setdefault(r.row, {}).setdefault(r.transform, {})
        cell[r.status] = cell.get(r.status, 0) + 1
    return m


def _cell(c: dict[str, int] | None) -> str:
    if not c:
        return ""
    n = sum(c.values())
    if c.get("pass") == n:
        return "pass" if n == 1 else f"pass {n}"
    parts = [f"{k} {c[k]}" for k in ("pass", "fail", "unsupported") if c.get(k)]
    return ", ".join(parts)


def markdown(corpus: Corpus, results: list[Result]) -> str:
    m = matrix(results)
    used = [t for t in TRANSFORMS if any(t in row for row in m.values())]
    total = {s: sum(r.status == s for r in results) for s in ("pass", "fail", "unsupported")}
    man = corpus.manifest
    lines = [
        "# Conformance against JAX",
        "",
        "Generated by `python -m s2s conformance --markdown` from the recorded corpus in",
        "`tests/fixtures/conformance/` (recorded by `python tools/capture_fixtures.py`);",
        "`tests/test_conformance.py` fails when this file is out of date.",
        "",
        f"JAX {man['jax_version']} (x64), NumPy {man['numpy_version']} at recording; "
        f"corpus digest `{man['digest']}`.",
        f"{len(results)} cases: {total['pass']} pass, {total['fail']} fail, "
        f"{total['unsupported']} unsupported (s2s refuses: `TransformError`, `NotImplementedError`).",
        f"Tolerance: rtol {TOL['rtol']:g}, atol {TOL['atol']:g} "
        f"(float32 inputs: rtol {TOL32['rtol']:g}, atol {TOL32['atol']:g}).",
        "",
        "Transforms: `value` runs the NumPy function itself against the JAX twin;",
        "`jvp`, `vjp`, `grad`, `vmap`, `hessian` are s2s's against JAX's;",
        "`vmap_grad`, `jvp_grad` and `jacfwd_jacrev` are compositions.  Rows are",
        "primitives (one generated function per rule-table row, `row_fns.py`) and",
        "program families (functions from the test corpus).  A cell counts cases.",
        "",
        "| row | " + " | ".join(used) + " |",
        "|---|" + "---|" * len(used),
    ]
    for row in sorted(m, key=lambda r: (r.startswith("program:"), r)):
        lines.append(f"| `{row}` | " + " | ".join(_cell(m[row].get(t)) for t in used) + " |")
    bad = [r for r in results if r.status != "pass"]
    if bad:
        lines += ["", "## Cases that do not pass", "", "| case | status | detail |",
                  "|---|---|---|"]
        for r in sorted(bad, key=lambda r: r.id):
            detail = r.detail.replace("|", "/").replace("`", "'")
            lines.append(f"| `{r.id}` | {r.status} | {detail} |")
    return "\n".join(lines) + "\n"


def as_json(corpus: Corpus, results: list[Result]) -> dict:
    return {
        "jax_version": corpus.manifest["jax_version"],
        "digest": corpus.manifest["digest"],
        "count": len(results),
        "summary": {s: sum(r.status == s for r in results)
                    for s in ("pass", "fail", "unsupported")},
        "jax_drift": sum(bool(r.jax_drift) for r in results),
        "matrix": matrix(results),
        "cases": [{"id": r.id, "row": r.row, "transform": r.transform,
                   "status": r.status, "detail": r.detail, "jax_drift": r.jax_drift}
                  for r in results],
    }
