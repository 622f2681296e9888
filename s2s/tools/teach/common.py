"""What the teaching commands (``s2s show/emit/check/explain/html``) share.

* :func:`load_target` finds ``MODULE_OR_FILE:FUNC``;
* :class:`TransformChoice` is the transform the flags name (``--grad``, ``--jvp``,
  ``--vmap IN_AXES``, ``--hessian``...), applied to the function on example inputs,
  with the emitted text it produced;
* :func:`example_inputs` draws random inputs of the shapes ``--shapes`` gives, or by
  the convention documented in ``docs/getting-started.md``: a module-level
  ``S2S_SHAPES = {"func": {"param": (3, 2), ...}}`` in the target's module, else a
  vector of 3 elements per parameter;
* :func:`highlight_ansi` and :func:`highlight_html` colour Python source (pygments if it
  is installed, else a small highlighter built on :mod:`tokenize`).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import importlib
import importlib.util
import inspect
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ... import api as s2s  # the transforms, as s2s exports them (a user's view)
from ... import syntax
from ...api.transformed import Transformed, emitted_namespace
from ...emit.forwards import emitted_part
from ...emit.highlight import classify_lines, highlight_ansi, highlight_html  # noqa: F401


class TeachError(Exception):
    """A user error of a teaching command: printed as ``s2s: error: ...``, exit 2."""


# ---- finding the function ----------------------------------------------------------


@dataclass
class Target:
    spec: str  # as the user wrote it
    fn: Callable  # the plain Python function (a transformed one is unwrapped)
    module: Any
    wrapped: Any = None  # the s2s-transformed object the name held, if any

    @property
    def name(self) -> str:
        return self.fn.__name__

    @property
    def file(self) -> str:
        return inspect.getsourcefile(self.fn) or self.fn.__code__.co_filename

    def source(self) -> tuple[list[str], int]:
        """The function's source lines and the line number of the first."""
        return inspect.getsourcelines(self.fn)

    def source_hash(self) -> str:
        lines, _ = self.source()
        return hashlib.sha256("".join(lines).encode()).hexdigest()


def _load_file(path: Path) -> Any:
    stem = re.sub(r"\W", "_", path.stem)
    name = stem
    existing = sys.modules.get(name)
    if existing is not None:
        if Path(getattr(existing, "__file__", "") or "").resolve() == path.resolve():
            return existing
        name = f"_s2s_file_{stem}_{hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:8]}"
        if name in sys.modules:
            return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise TeachError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # so the file's own sibling imports work
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def load_target(spec: str) -> Target:
    """``path/to/file.py:func``, ``package.module:func`` or ``module:Outer.func``."""
    where, sep, attr = spec.rpartition(":")
    if not sep or not where or not attr:
        raise TeachError(
            f"expected MODULE_OR_FILE:FUNC (e.g. examples/quickstart.py:loss), got {spec!r}"
        )
    if where.endswith(".py") or os.sep in where or "/" in where:
        path = Path(where)
        if not path.is_file():
            raise TeachError(f"no such file: {where}")
        module = _load_file(path)
    else:
        if os.getcwd() not in sys.path and "" not in sys.path:
            sys.path.insert(0, os.getcwd())
        try:
            module = importlib.import_module(where)
        except ModuleNotFoundError as exc:
            raise TeachError(f"cannot import module {where!r}: {exc}") from None
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise TeachError(f"{where} has no attribute {attr!r}")
        obj = getattr(obj, part)
    wrapped = None
    if isinstance(obj, Transformed):
        wrapped, obj = obj, obj.fn
        while isinstance(obj, Transformed):
            obj = obj.fn
    if not inspect.isfunction(obj):
        raise TeachError(f"{spec} is a {type(obj).__name__}, not a Python function")
    return Target(spec=spec, fn=obj, module=module, wrapped=wrapped)


# ---- shapes, domains and random inputs ----------------------------------------------


def parse_shapes(text: str | None, params: list[str]) -> dict[str, tuple[int, ...]]:
    """``"w=3 x=8,3 y=8"`` (or ``;``-separated, or ``x=8x3``); ``s=()`` for a scalar.

    Without names, shapes are positional: ``"3; 8,3; 8"``.
    """
    if not text:
        return {}
    parts = [p for p in re.split(r"[;\s]+(?=[A-Za-z_][\w]*\s*=)|;", text.strip()) if p.strip()]
    out: dict[str, tuple[int, ...]] = {}
    for i, part in enumerate(parts):
        part = part.strip()
        if "=" in part:
            name, _, dims = part.partition("=")
            name = name.strip()
        else:
            if i >= len(params):
                raise TeachError(f"--shapes gives {len(parts)} shapes for {len(params)} parameters")
            name, dims = params[i], part
        if name not in params:
            raise TeachError(f"--shapes names {name!r}, which is not a parameter "
                             f"({', '.join(params)})")
        dims = dims.strip().strip("()[]").replace("x", ",")
        try:
            out[name] = tuple(int(d) for d in dims.split(",") if d.strip())
        except ValueError:
            raise TeachError(f"cannot read the shape {part!r} (write e.g. x=8,3)") from None
    return out


def parse_domains(text: str | None, params: list[str]) -> dict[str, tuple[float, float]]:
    """``"x=0.1:2 y=-1:1"``: each parameter's values drawn uniformly in [lo, hi]."""
    out: dict[str, tuple[float, float]] = {}
    for part in (text or "").replace(";", " ").split():
        name, eq, rng = part.partition("=")
        lo, colon, hi = rng.partition(":")
        if not eq or not colon:
            raise TeachError(f"cannot read the domain {part!r} (write e.g. x=0.1:2)")
        if name not in params and name != "*":
            raise TeachError(f"--domain names {name!r}, which is not a parameter")
        out[name] = (float(lo), float(hi))
    return out


DEFAULT_SHAPE = (3,)
# tried in order when no domain is declared: the first where the function is finite
DEFAULT_DOMAINS = ((-1.5, 1.5), (0.1, 0.9))


def shapes_for(target: Target, explicit: dict[str, tuple[int, ...]]) -> dict[str, tuple[int, ...]]:
    """Shapes of the positional parameters the example call passes: those without a
    default, and those a shape is given for (in order, so they stay positional)."""
    declared = getattr(target.module, "S2S_SHAPES", {}).get(target.name, {})
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    out: dict[str, tuple[int, ...]] = {}
    for name, p in inspect.signature(target.fn).parameters.items():
        if p.kind not in positional:
            break
        given = explicit.get(name, declared.get(name))
        if given is None and p.default is not inspect.Parameter.empty:
            break
        out[name] = tuple(given) if given is not None else DEFAULT_SHAPE
    return out


def example_inputs(shapes: dict[str, tuple[int, ...]], rng: np.random.Generator,
                   domain: tuple[float, float] | dict[str, tuple[float, float]]) -> list[Any]:
    out = []
    for name, shape in shapes.items():
        lo, hi = domain if isinstance(domain, tuple) else domain[name]
        value = rng.uniform(lo, hi, size=shape)
        out.append(float(value) if shape == () else value)
    return out


def domains_to_try(declared: dict[str, tuple[float, float]], names: list[str]) -> list[dict]:
    if declared:
        default = declared.get("*", DEFAULT_DOMAINS[0])
        return [{n: declared.get(n, default) for n in names}]
    return [{n: d for n in names} for d in DEFAULT_DOMAINS]


def _finite(value: Any) -> bool:
    leaves = _leaves(value)
    return all(np.all(np.isfinite(np.asarray(v, dtype=float))) for v in leaves)


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, (tuple, list)):
        return [x for v in value for x in _leaves(v)]
    if isinstance(value, dict):
        return [x for v in value.values() for x in _leaves(v)]
    return [value]


# ---- the transform the flags name ---------------------------------------------------


def add_transform_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", metavar="MODULE_OR_FILE:FUNC",
                   help="the function, e.g. examples/quickstart.py:loss or pkg.mod:f")
    add_transform_flags(p)


def add_transform_flags(p: argparse.ArgumentParser) -> None:
    kind = p.add_mutually_exclusive_group()
    kind.add_argument("--grad", dest="kind", action="store_const", const="grad",
                      help="the gradient (the default)")
    kind.add_argument("--value-and-grad", dest="kind", action="store_const",
                      const="value_and_grad", help="the value and the gradient")
    kind.add_argument("--jvp", dest="kind", action="store_const", const="jvp",
                      help="forward mode: the tangent code (x_dot beside x)")
    kind.add_argument("--hessian", dest="kind", action="store_const", const="hessian",
                      help="the Hessian (jacfwd of grad)")
    kind.add_argument("--jacfwd", dest="kind", action="store_const", const="jacfwd",
                      help="the Jacobian by forward mode (one jvp per input element)")
    kind.add_argument("--jacrev", dest="kind", action="store_const", const="jacrev",
                      help="the Jacobian by reverse mode (one vjp per output element)")
    p.add_argument("--argnums", default=None,
                   help="which positional arguments to differentiate: 0, or 0,1")
    p.add_argument("--vmap", metavar="IN_AXES", default=None,
                   help="vectorise (what the other flags name, or the function "
                        "itself): 0, or 0,None,0")
    p.add_argument("--batch", type=int, default=4,
                   help="the batch size of example inputs for --vmap (default 4)")
    p.add_argument("--shapes", default=None,
                   help='example input shapes: "w=3 x=8,3 y=8" (a scalar: s=()); '
                        "default: S2S_SHAPES in the module, else (3,) each")
    p.add_argument("--args", dest="example", metavar="EXPR", default=None,
                   help="the example arguments, as a Python expression read in the "
                        "function's module (a tuple, or a function of the module that "
                        "returns one), e.g. --args \"init(np.random.default_rng(0), 8), "
                        "np.ones((4, 1)), np.zeros((4, 1))\" or --args make_args; "
                        "instead of --shapes")
    p.add_argument("--domain", default=None,
                   help='ranges to draw inputs from: "x=0.1:2 y=-1:1" (*=lo:hi for all)')
    p.add_argument("--seed", type=int, default=0, help="random seed of example inputs")


def parse_argnums(text: str | None) -> int | tuple[int, ...]:
    if text is None:
        return 0
    text = text.strip().strip("()")
    try:
        nums = [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise TeachError(f"--argnums takes an int or ints separated by commas, got {text!r}") \
            from None
    if not nums:
        raise TeachError("--argnums is empty")
    return nums[0] if len(nums) == 1 and "," not in text else tuple(nums)


def parse_in_axes(text: str) -> Any:
    try:
        value = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError):
        raise TeachError(f"--vmap takes in_axes as a Python literal: 0, or 0,None; got {text!r}") \
            from None
    if isinstance(value, list):
        value = tuple(value)
    return value


@dataclass
class TransformChoice:
    kind: str | None  # grad, value_and_grad, jvp, hessian, jacfwd, jacrev; None: vmap(f)
    argnums: int | tuple[int, ...] = 0
    in_axes: Any = None  # set when --vmap was given
    vmapped: bool = False

    @classmethod
    def from_args(cls, args: argparse.Namespace, default: dict | None = None) -> "TransformChoice":
        kind = args.kind
        argnums_text = args.argnums
        vmap_text = args.vmap
        if kind is None and vmap_text is None and argnums_text is None and default:
            return cls(**default)
        if kind is None and vmap_text is None:
            kind = "grad"
        choice = cls(kind, parse_argnums(argnums_text))
        if vmap_text is not None:
            choice.vmapped = True
            choice.in_axes = parse_in_axes(vmap_text)
            if kind in ("jvp",):
                raise TeachError("--vmap of --jvp is not supported: vmap takes a function, "
                                 "and jvp's result is not one (try --jacfwd)")
        return choice

    def as_dict(self) -> dict:
        return {"kind": self.kind, "argnums": self.argnums, "in_axes": self.in_axes,
                "vmapped": self.vmapped}

    def describe(self, name: str) -> str:
        argnums = f"argnums={self.argnums}"
        inner = {
            None: name,
            "grad": f"grad({name}, {argnums})",
            "value_and_grad": f"value_and_grad({name}, {argnums})",
            "jvp": f"jvp({name})",
            "hessian": f"hessian({name}, {argnums})",
            "jacfwd": f"jacfwd({name}, {argnums})",
            "jacrev": f"jacrev({name}, {argnums})",
        }[self.kind]
        if self.vmapped:
            return f"vmap({inner}, in_axes={self.in_axes!r})"
        return inner

    def flags(self) -> str:
        """The command-line flags that name this transform."""
        out = []
        if self.kind is not None:
            out.append("--" + self.kind.replace("_", "-"))
        if self.kind not in (None, "jvp") and self.argnums != 0:
            nums = self.argnums if isinstance(self.argnums, tuple) else (self.argnums,)
            text = ",".join(map(str, nums)) + ("," if isinstance(self.argnums, tuple)
                                                and len(nums) == 1 else "")
            out.append(f"--argnums {text}")
        if self.vmapped:
            axes = self.in_axes
            text = ",".join("None" if a is None else str(a) for a in axes) if isinstance(
                axes, tuple) else repr(axes)
            out.append(f"--vmap {text}")
        return " ".join(out)

    # -- building and running

    def transformed(self, fn: Callable) -> Callable | None:
        """The s2s object (None for jvp, which is a call, not a function)."""
        makers = {
            "grad": lambda: s2s.grad(fn, argnums=self.argnums),
            "value_and_grad": lambda: s2s.value_and_grad(fn, argnums=self.argnums),
            "hessian": lambda: s2s.hessian(fn, argnums=self.argnums),
            "jacfwd": lambda: s2s.jacfwd(fn, argnums=self.argnums),
            "jacrev": lambda: s2s.jacrev(fn, argnums=self.argnums),
            None: lambda: fn,
            "jvp": lambda: None,
        }
        inner = makers[self.kind]()
        if self.vmapped:
            return s2s.vmap(inner, in_axes=self.in_axes)
        return inner

    def batched(self, args: list[Any], rng: np.random.Generator, batch: int) -> list[Any]:
        """Arguments for a vmapped call: each mapped one gets ``batch`` examples."""
        if not self.vmapped:
            return list(args)
        axes = self.in_axes if isinstance(self.in_axes, tuple) else (self.in_axes,) * len(args)
        out = []
        for a, ax in zip(args, axes):
            if ax is None:
                out.append(a)
                continue
            a = np.asarray(a)
            scale = rng.uniform(0.8, 1.2, size=(batch,) + (1,) * a.ndim)
            stacked = a[None] * scale  # examples near the drawn one, all in its domain
            out.append(np.moveaxis(stacked, 0, ax))
        return out


@dataclass
class Derivation:
    """A transform applied to a function on example inputs: what it emitted."""

    target: Target
    choice: TransformChoice
    args: list[Any]  # the example inputs (batched for --vmap)
    tangents: list[Any] = field(default_factory=list)  # for --jvp
    text: str = ""
    result: Any = None
    namespace: dict[str, Any] = field(default_factory=dict)  # (names the code runs with)

    @property
    def entry(self) -> str:
        """The emitted module's entry function: its last ``def`` (before the listing
        of forward functions: emit/forwards.py)."""
        tree = syntax.parse(emitted_part(self.text))
        defs = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
        return defs[-1]

    def run(self, args: list[Any], tangents: list[Any] | None = None) -> Any:
        """The transform through s2s's API, on other inputs."""
        if self.choice.kind == "jvp":
            return s2s.jvp(self.target.fn, tuple(args), tuple(tangents or ()))
        return self.choice.transformed(self.target.fn)(*args)


def given_example(target: Target, expr: str) -> list[Any]:
    """The arguments ``--args`` gives: ``expr`` evaluated in the target's module (NumPy
    as ``np`` besides its own names); a callable it names is called with none."""
    namespace = {"np": np, **vars(target.module)}
    try:
        value = eval(expr, namespace)  # the user's own expression, asked for by the flag
        if callable(value):
            value = value()
    except Exception as exc:
        raise TeachError(f"--args {expr!r}: {type(exc).__name__}: {exc}") from None
    return list(value) if isinstance(value, tuple) else [value]


def derive(target: Target, choice: TransformChoice, shapes_text: str | None = None,
           domain_text: str | None = None, seed: int = 0, batch: int = 4,
           example: str | None = None) -> Derivation:
    """Apply ``choice`` to the target on example inputs (``example``: the ``--args``
    expression; else random ones of ``--shapes``); keep the emitted text."""
    if example is not None:
        if shapes_text is not None:
            raise TeachError("give the example inputs by --args or by --shapes, not both")
        rng = np.random.default_rng(seed)
        args = given_example(target, example)
        try:
            target.fn(*args)
        except Exception as exc:
            raise TeachError(f"{target.name} fails on the inputs --args gives: "
                             f"{type(exc).__name__}: {exc}") from None
        d = Derivation(target, choice, choice.batched(args, rng, batch))
        try:
            _apply(d, rng)
        except (TypeError, ValueError) as exc:
            raise TeachError(f"{choice.describe(target.name)}: {type(exc).__name__}: {exc}") \
                from None
        return d
    params = list(inspect.signature(target.fn).parameters)
    shapes = shapes_for(target, parse_shapes(shapes_text, params))
    declared = parse_domains(domain_text, params)
    last_error: Exception | None = None
    for domain in domains_to_try(declared, list(shapes)):
        rng = np.random.default_rng(seed)
        args = example_inputs(shapes, rng, domain)
        try:
            if not _finite(target.fn(*args)):
                continue
        except Exception as exc:  # a shape the function cannot take
            last_error = exc
            continue
        args = choice.batched(args, rng, batch)
        d = Derivation(target, choice, args)
        try:
            _apply(d, rng)
        except (TypeError, ValueError) as exc:  # JAX's argument errors, as s2s raises them
            raise TeachError(f"{choice.describe(target.name)}: {type(exc).__name__}: {exc}") \
                from None
        return d
    if last_error is not None:
        raise TeachError(
            f"{target.name} fails on example inputs of shapes "
            f"{ {k: v for k, v in shapes.items()} }: {type(last_error).__name__}: {last_error}"
            "\n  give the shapes with --shapes, e.g. --shapes \"w=3 x=8,3 y=8\""
        )
    raise TeachError(f"{target.name} is not finite on example inputs; declare a domain "
                     "with --domain, e.g. --domain \"x=0.1:2\"")


def _apply(d: Derivation, rng: np.random.Generator) -> None:
    if d.choice.kind == "jvp":
        d.tangents = [rng.normal(size=np.shape(a)) if np.shape(a) else float(rng.normal())
                      for a in d.args]
        d.result = s2s.jvp(d.target.fn, tuple(d.args), tuple(d.tangents))
        d.text = s2s.source(d.target.fn, "jvp")
        d.namespace = emitted_namespace(d.target.fn, "jvp")
    else:
        g = d.choice.transformed(d.target.fn)
        d.result = g(*d.args)
        d.text = s2s.source(g)
        d.namespace = emitted_namespace(g)



def write_code(text: str, stream: Any = None, color: str = "auto") -> None:
    """Write source, coloured when ``stream`` is a terminal (or ``color == 'always'``)."""
    stream = stream or sys.stdout
    tty = getattr(stream, "isatty", lambda: False)()
    if color == "always" or (color == "auto" and tty and not os.environ.get("NO_COLOR")):
        text = highlight_ansi(text)
    stream.write(text if text.endswith("\n") else text + "\n")
