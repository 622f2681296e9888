"""What a transformed object is made of, for the self-check and the ledger: its
transform stack taken apart (``layers``, ``stack_of``, ``root_of``) and applied again
(``rebuild``), the code each level emitted, the arguments each level's inner
function receives, and the pytrees they walk.

``jvp`` and ``vjp`` are functions in s2s (and JAX), not transform objects; to check
or record them, wrap the function: ``JvpOf(f)(primals, tangents)`` and
``VjpOf(f)(primals, cotangent)``.
"""

from __future__ import annotations

import hashlib
from typing import Any, Callable

import numpy as np

from .. import api as public  # the transforms, as s2s exports them
from ..api.jacobians import JacFwd, JacRev, vjp_transform
from ..api.jit import Jitted
from ..api.pushforward import jvp as s2s_jvp
from ..api.transformed import JVPS, Transformed
from ..api.transformed import vjp as s2s_vjp
from ..api.vectorize import Vmapped


class SelfCheckError(ValueError):
    """The object is not something the self-check knows how to take apart."""


# ---- jvp and vjp as callables ------------------------------------------------------


class JvpOf:
    """``s2s.jvp(fn, primals, tangents)`` as a callable object: ``JvpOf(fn)(primals,
    tangents) -> (out, out_tangent)`` (``(out, out_tangent, aux)`` with has_aux)."""

    def __init__(self, fn: Callable, has_aux: bool = False) -> None:
        self.fn = fn
        self.has_aux = has_aux
        self.__name__ = f"{getattr(fn, '__name__', 'f')}_jvp"

    def __call__(self, primals: Any, tangents: Any) -> Any:
        return s2s_jvp(self.fn, primals, tangents, has_aux=self.has_aux)

    @property
    def source(self) -> str:
        per_fn = JVPS.get(self.fn) or {}
        t = per_fn.get(self.has_aux)
        if t is None or t._last is None:
            raise ValueError("call it once: jvp code is generated per call structure")
        return t._last[0]


class VjpOf:
    """``s2s.vjp`` as a callable object: ``VjpOf(fn)(primals, cotangent) -> (out,
    cotangents)`` (``(out, cotangents, aux)`` with has_aux)."""

    def __init__(self, fn: Callable, has_aux: bool = False) -> None:
        self.fn = fn
        self.has_aux = has_aux
        self.__name__ = f"{getattr(fn, '__name__', 'f')}_vjp"
        self._transformed: Transformed | None = None

    def __call__(self, primals: Any, cotangent: Any) -> Any:
        found = s2s_vjp(self.fn, *primals, has_aux=self.has_aux)
        self._transformed = found[1].transformed
        cts = found[1](cotangent)
        if self.has_aux:
            return found[0], cts, found[2]
        return found[0], cts

    @property
    def source(self) -> str:
        if self._transformed is None or self._transformed._last is None:
            raise ValueError("call it once: vjp code is generated per call structure")
        return self._transformed._last[0]


# ---- the transform stack -----------------------------------------------------------


def _axes_json(axes: Any) -> Any:
    if isinstance(axes, dict):
        return {str(k): _axes_json(v) for k, v in axes.items()}
    if isinstance(axes, (tuple, list)):
        return [_axes_json(a) for a in axes]
    return axes


def axes_py(axes: Any) -> Any:
    if isinstance(axes, dict):
        return {k: axes_py(v) for k, v in axes.items()}
    if isinstance(axes, list):
        return tuple(axes_py(a) for a in axes)
    return axes


def _argnums_json(argnums: tuple[int, ...], tuple_out: bool) -> Any:
    return list(argnums) if tuple_out else argnums[0]


def peel(g: Any) -> tuple[dict[str, Any] | None, Any]:
    """``(spec, inner)`` for the outermost transform of ``g``; ``(None, g)`` for a
    function no s2s transform wraps.  ``spec`` holds every parameter."""
    if isinstance(g, Vmapped):
        return {"transform": "vmap", "in_axes": _axes_json(g.in_axes),
                "out_axes": _axes_json(g.out_axes), "axis_size": g.axis_size}, g.fn
    if isinstance(g, Transformed):
        if g.mode not in ("grad", "value_and_grad"):
            raise SelfCheckError(
                f"a bare {g.mode} transform object cannot be recorded: wrap the function "
                f"with s2s.selfcheck.{'JvpOf' if g.mode == 'jvp' else 'VjpOf'}")
        return {"transform": g.mode, "argnums": _argnums_json(g.argnums, g.tuple_out),
                "has_aux": g.has_aux}, g.fn
    if isinstance(g, (JacFwd, JacRev)):
        name = "jacfwd" if isinstance(g, JacFwd) else "jacrev"
        return {"transform": name, "argnums": _argnums_json(g.argnums, g.tuple_out),
                "has_aux": g.has_aux}, g.fun
    if isinstance(g, Jitted):
        return {"transform": "jit", "backend": g.backend.name,
                "static_argnums": list(g.static_argnums),
                "static_argnames": list(g.static_argnames)}, g.fun
    if isinstance(g, JvpOf):
        return {"transform": "jvp", "has_aux": g.has_aux}, g.fn
    if isinstance(g, VjpOf):
        return {"transform": "vjp", "has_aux": g.has_aux}, g.fn
    if hasattr(g, "transformed") and isinstance(g.transformed, Transformed):
        raise SelfCheckError("a vjp_fn closes over its primals: record VjpOf(f) instead")
    return None, g


def layers(g: Any) -> list[tuple[dict[str, Any], Any, Any]]:
    """``(spec, obj, inner)`` per transform, outermost first."""
    out = []
    while True:
        spec, inner = peel(g)
        if spec is None:
            return out
        out.append((spec, g, inner))
        g = inner


def stack_of(g: Any) -> list[dict[str, Any]]:
    """The transform stack, innermost (applied first) to outermost."""
    return [spec for spec, _, _ in reversed(layers(g))]


def root_of(g: Any) -> Any:
    while True:
        spec, inner = peel(g)
        if spec is None:
            return g
        g = inner


def common_transform(lib: Any, spec: dict[str, Any], f: Any) -> Any:
    """The transforms s2s and JAX spell alike (``lib`` is either module), or None."""
    t = spec["transform"]
    argnums = spec.get("argnums")
    if isinstance(argnums, list):
        argnums = tuple(argnums)
    if t in ("grad", "value_and_grad", "jacfwd", "jacrev"):
        return getattr(lib, t)(f, argnums=argnums, has_aux=spec["has_aux"])
    if t == "vmap":
        return lib.vmap(f, in_axes=axes_py(spec["in_axes"]),
                        out_axes=axes_py(spec["out_axes"]), axis_size=spec["axis_size"])
    return None


def apply_spec(spec: dict[str, Any], f: Any) -> Any:
    """One transform of the stack applied to ``f``, with s2s."""
    t = spec["transform"]
    made = common_transform(public, spec, f)
    if made is not None:
        return made
    if t == "jit":
        return public.jit(f, backend=spec["backend"],
                       static_argnums=tuple(spec["static_argnums"]) or None,
                       static_argnames=tuple(spec["static_argnames"]) or None)
    if t == "jvp":
        return JvpOf(f, has_aux=spec["has_aux"])
    if t == "vjp":
        return VjpOf(f, has_aux=spec["has_aux"])
    raise SelfCheckError(f"unknown transform {t!r}")


def rebuild(root: Callable, stack: list[dict[str, Any]]) -> Any:
    g = root
    for spec in stack:
        g = apply_spec(spec, g)
    return g


def emitted_texts(g: Any) -> list[dict[str, Any]]:
    """The emitted module text of each level, innermost first, as the latest call
    generated it (call ``g`` first).  jacfwd and jacrev emit two: the derivative they
    batch (``jvp``/``vjp``) and the batched code (``vmap``)."""
    out: list[dict[str, Any]] = []
    for level, (spec, obj, inner) in enumerate(reversed(layers(g))):
        t = spec["transform"]
        parts: list[tuple[str, str | None]] = []
        if isinstance(obj, (JacFwd, JacRev)):
            if isinstance(obj, JacFwd):
                per_fn = JVPS.get(obj.fun) or {}
                d = per_fn.get(obj.has_aux)
                parts.append(("jvp", d._last[0] if d is not None and d._last else None))
            else:
                d = vjp_transform(obj.fun, obj.has_aux)
                parts.append(("vjp", d._last[0] if d._last else None))
            parts.append(("vmap", obj.source or None))
        elif isinstance(obj, Transformed):
            parts.append((t, obj._last[0] if obj._last is not None else None))
        elif isinstance(obj, Jitted):
            parts.append((t, obj.source))
        else:
            try:
                parts.append((t, obj.source))
            except ValueError:
                parts.append((t, None))
        for part, text in parts:
            if text is None:
                raise SelfCheckError(f"level {level} ({t}) has emitted no code: call it")
            out.append({"level": level, "transform": t, "part": part,
                        "sha256": hashlib.sha256(text.encode()).hexdigest(),
                        "text": text})
    return out


def inner_args(spec: dict[str, Any], args: tuple) -> tuple:
    """The arguments the inner function of a level receives for the call ``args``."""
    t = spec["transform"]
    if t in ("jvp", "vjp"):
        return tuple(args[0])
    if t == "vmap":
        axes = per_arg_axes(axes_py(spec["in_axes"]), len(args))
        return tuple(take_example(a, ax, 0) for a, ax in zip(args, axes))
    return tuple(args)


# ---- pytrees -----------------------------------------------------------------------


def is_node(x: Any) -> bool:
    return isinstance(x, (tuple, list, dict)) and not hasattr(x, "_fields")


def flatten(tree: Any, path: str = "") -> list[tuple[str, Any]]:
    if isinstance(tree, dict):
        return [x for k, v in tree.items() for x in flatten(v, f"{path}[{k!r}]")]
    if is_node(tree):
        return [x for i, v in enumerate(tree) for x in flatten(v, f"{path}[{i}]")]
    return [(path, tree)]


def unflatten(like: Any, leaves: list[Any]) -> Any:
    it = iter(leaves)

    def build(t: Any) -> Any:
        if isinstance(t, dict):
            return {k: build(v) for k, v in t.items()}
        if is_node(t):
            return type(t)(build(v) for v in t)
        return next(it)

    return build(like)


def per_arg_axes(in_axes: Any, nargs: int) -> tuple:
    return in_axes if isinstance(in_axes, tuple) else (in_axes,) * nargs


def take_example(value: Any, axes: Any, b: int) -> Any:
    """Example ``b`` of ``value`` under the prefix tree of batch axes ``axes``."""
    if axes is None:
        return value
    if isinstance(axes, int):
        if isinstance(value, dict):
            return {k: take_example(v, axes, b) for k, v in value.items()}
        if is_node(value):
            return type(value)(take_example(v, axes, b) for v in value)
        return np.take(np.asarray(value), b, axis=axes)
    if isinstance(axes, dict):
        return {k: take_example(value[k], axes[k], b) for k in value}
    return type(value)(take_example(v, a, b) for v, a in zip(value, axes))
