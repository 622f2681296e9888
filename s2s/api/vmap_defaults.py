"""``s2s.vmap`` of a function whose parameter is left at a pytree default (``def f(w,
cfg=Cfg())``, a dataclass, a ``SimpleNamespace``, an object of a plain class of
yours), and an object argument at ``in_axes=None``: the object passed in its
parameter's place, not batched (JAX leaves a default out of ``in_axes``), read as its
fields at each call, as grad reads an object it does not differentiate."""

from __future__ import annotations

from typing import Any

from . import keyword_trees
from .trees import loose_dataclass, loose_fields


def moved(vmapped: Any, args: tuple) -> tuple | None:
    """The call's arguments with the defaults up to the last pytree one moved into
    place, or None where the call leaves none.  The function is the one a chain of
    transforms ends in (``vmap(grad(f))``: ``f``, with the inner grad's argnums)."""
    base = vmapped
    while getattr(base, "inner", None) is not None and hasattr(base.inner, "_by_keyword"):
        base = base.inner
    spec = base._by_keyword
    if not spec[1]:
        return None
    found = keyword_trees.as_positional(spec, args, {})[0]
    return found if len(found) > len(args) else None


def with_defaults(vmapped: Any, args: tuple, found: tuple) -> Any:
    """Call a vmap of the same function whose ``in_axes`` leave the moved defaults
    unbatched (made once per axes)."""
    in_axes = vmapped.in_axes
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    key = ("defaults", tuple(axes), len(found))
    variants = vmapped.__dict__.setdefault("_keyword_variants", {})
    inner = variants.get(key)
    if inner is None:
        inner = variants[key] = type(vmapped)(
            vmapped.fn, tuple(axes) + (None,) * (len(found) - len(args)),
            vmapped.out_axes, vmapped.axis_size, vmapped.axis_name)
        inner._by_keyword = ((), False, 0)  # (given every parameter up to it)
    out = inner(*found)
    vmapped._last = inner._last
    return out


def unbatched_objects(in_axes: Any, args: tuple) -> tuple:
    """A loose dataclass, ``SimpleNamespace`` or plain object of yours where
    ``in_axes`` is None: its fields, read at each call."""
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    return tuple(loose_fields(a) if ax is None and loose_dataclass(a) else a
                 for a, ax in zip(args, axes))
