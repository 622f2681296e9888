"""The static structure of values: an array leaf, or a container of values.

Pytree arguments (nested tuples, lists and dicts of arrays) have a structure that is
fixed for a given call signature, as in JAX.  Knowing it at transform time lets
reverse mode keep one cotangent name per leaf (``params["W"]`` gets ``W_bar``) and
build the gradient container literally at the end, with no runtime tree helpers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Union


@dataclass(frozen=True)
class Leaf:
    def __repr__(self) -> str:
        return "*"


LEAF = Leaf()


@dataclass(frozen=True)
class Tree:
    type: type  # tuple, list or dict
    keys: tuple[Any, ...]  # positions for tuple/list, keys for dict
    children: tuple["Kind", ...]
    # a NamedTuple's fields (a dict whose keys are also read by position: p[0] is
    # p["w"], as the NamedTuple's own indexing; see s2s/api/trees.py ``Record``)
    positional: bool = False
    # a registered object's meta (static) fields, differentiated: read as they are,
    # with no derivative (``p.n_layers``; s2s/api/trees.py ``Fields``)
    meta: tuple[str, ...] = ()

    def child(self, key: Any) -> "Kind":
        if self.type is dict:
            return self.children[self.keys.index(key)]
        return self.children[key]

    def __repr__(self) -> str:
        if self.type is dict:
            return "{" + ", ".join(f"{k!r}: {c!r}" for k, c in zip(self.keys, self.children)) + "}"
        inner = ", ".join(repr(c) for c in self.children)
        if self.type is tuple and len(self.children) == 1:
            inner += ","  # a one-tuple, as Python (and JAX's PyTreeDef) writes it
        return f"[{inner}]" if self.type is list else f"({inner})"


@dataclass(frozen=True)
class Seq:
    """A list grown with ``append`` in a loop: its length is known only when the code
    runs, its elements' structure (``item``) now: all are alike, an array leaf by
    default, or a container such as the tuples a tape of saved values holds.  Its
    cotangent is a list, popped as appends are undone."""

    item: "Kind" = None  # type: ignore[assignment]  (None: an array leaf)

    def __post_init__(self) -> None:
        if self.item is None:
            object.__setattr__(self, "item", LEAF)

    def __repr__(self) -> str:
        return "[*...]" if self.item == LEAF else f"[{self.item!r}...]"


SEQ = Seq()  # a list of array leaves

Kind = Union[Leaf, Tree, Seq]


def kind_of(value: Any) -> Kind:
    """The structure of a Python value (tuples, lists and dicts are containers)."""
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return Tree(tuple, tuple(range(len(value))), tuple(kind_of(v) for v in value))
    if isinstance(value, list):
        return Tree(list, tuple(range(len(value))), tuple(kind_of(v) for v in value))
    if isinstance(value, dict):
        keys = tuple(value)
        return Tree(dict, keys, tuple(kind_of(dict.__getitem__(value, k)) for k in keys),
                    bool(getattr(value, "__s2s_positional__", False)),
                    tuple(getattr(value, "__s2s_meta__", None) or ()))
    return LEAF


def call_kinds(params: list[str], args: tuple, kwargs: dict) -> tuple[Kind, ...]:
    """The structures of a call's arguments for every positional parameter: the
    passed ones' by position, a parameter passed by keyword its value's (``cfg=`` a
    dict of other keys than its default's: the code unrolls over the keys passed),
    LEAF for one left at its default (the code reads the default's own structure)."""
    return tuple(kind_of(a) for a in args) + tuple(
        kind_of(kwargs[p]) if p in kwargs else LEAF for p in params[len(args):])


def leaf_paths(kind: Kind, prefix: tuple = ()) -> list[tuple]:
    if isinstance(kind, (Leaf, Seq)):
        return [prefix]
    out: list[tuple] = []
    for key, child in zip(kind.keys, kind.children):
        out += leaf_paths(child, prefix + (key,))
    return out


def path_text(base: str, path: tuple) -> str:
    return base + "".join(f"[{k!r}]" for k in path)


def literal(kind: Kind, leaf: Any, prefix: tuple = ()) -> str:
    """Source text of a container of this kind whose leaves are ``leaf(path)``."""
    if isinstance(kind, (Leaf, Seq)):
        return leaf(prefix)
    parts = [literal(c, leaf, prefix + (k,)) for k, c in zip(kind.keys, kind.children)]
    if kind.type is dict:
        return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(kind.keys, parts)) + "}"
    if kind.type is list:
        return "[" + ", ".join(parts) + "]"
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def unpackable(kind: Kind) -> bool:
    """Can an assignment unpack a value of this kind (tuples and lists, no dicts)?"""
    if isinstance(kind, Tree):
        return kind.type is not dict and all(unpackable(c) for c in kind.children)
    return True


def unpack_text(kind: Kind, names: dict[tuple, str], prefix: tuple = ()) -> str:
    """An assignment target unpacking a tuple (or list) of this kind into ``names``."""
    if not isinstance(kind, Tree):
        return names[prefix]
    inner = [unpack_text(c, names, prefix + (k,)) for k, c in zip(kind.keys, kind.children)]
    return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"
