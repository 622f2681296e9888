"""Pytrees as JAX defines them, on optree: ``s2s.tree_util``.

The containers are JAX's: tuples, lists, dicts (flattened in sorted key order, as JAX
does), ``None`` (an empty subtree), NamedTuples, ``OrderedDict`` (insertion order),
``defaultdict`` (sorted keys), and the classes registered here with JAX's signatures
(``register_pytree_node``, ``register_pytree_node_class``, ``register_dataclass``).
Registrations live in optree's ``"s2s"`` namespace: they do not leak into optree's
global registry or into other libraries using optree.

The transforms read pytree arguments through ``s2s/api/trees.py``, which turns each
registered node into the dict of its fields the emitted code reads (``p.w`` is
``p["w"]`` there) and rebuilds gradients in the argument's own types.
"""

from __future__ import annotations

import dataclasses
import operator
from typing import Any, Callable, Iterable, Sequence

import optree

__all__ = [
    "tree_map", "tree_leaves", "tree_flatten", "tree_unflatten", "tree_structure",
    "tree_map_with_path", "tree_flatten_with_path", "treedef_is_leaf", "all_leaves",
    "register_pytree_node", "register_pytree_node_class", "register_dataclass",
    "PyTreeDef",
]

NAMESPACE = "s2s"
PyTreeDef = optree.PyTreeSpec

# class -> (flatten, unflatten): what s2s/api/trees.py needs to read fields by name
NODES: dict[type, tuple[Callable, Callable]] = {}


def _opts(is_leaf: Callable[[Any], bool] | None) -> dict[str, Any]:
    return {"is_leaf": is_leaf, "none_is_leaf": False, "namespace": NAMESPACE}


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                 ) -> tuple[list[Any], PyTreeDef]:
    """``(leaves, treedef)``: JAX's order (dict keys sorted, None has no leaves)."""
    return optree.tree_flatten(tree, **_opts(is_leaf))


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    return optree.tree_unflatten(treedef, leaves)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    return optree.tree_leaves(tree, **_opts(is_leaf))


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    return optree.tree_structure(tree, **_opts(is_leaf))


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """``f`` of each leaf (and the matching leaves of ``rest``), in ``tree``'s structure."""
    return optree.tree_map(f, tree, *rest, **_opts(is_leaf))


def tree_map_with_path(f: Callable[..., Any], tree: Any, *rest: Any,
                       is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """``f(path, leaf, *others)``; a path is a tuple of keys (optree's spelling)."""
    return optree.tree_map_with_path(f, tree, *rest, **_opts(is_leaf))


def tree_flatten_with_path(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                           ) -> tuple[list[tuple[tuple, Any]], PyTreeDef]:
    paths, leaves, treedef = optree.tree_flatten_with_path(tree, **_opts(is_leaf))
    return list(zip(paths, leaves)), treedef


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    return treedef.is_leaf()


def all_leaves(iterable: Iterable[Any]) -> bool:
    return all(tree_structure(x).is_leaf() for x in iterable)


def register_pytree_node(nodetype: type, flatten_func: Callable[[Any], tuple[Any, Any]],
                         unflatten_func: Callable[[Any, Any], Any]) -> None:
    """JAX's signature: ``flatten_func(x) -> (children, aux_data)``,
    ``unflatten_func(aux_data, children) -> x``."""
    optree.register_pytree_node(nodetype, lambda x: _flat(flatten_func(x)),
                                unflatten_func, namespace=NAMESPACE)
    NODES[nodetype] = (flatten_func, unflatten_func)


def _flat(flat: tuple[Any, Any]) -> tuple[Any, Any]:
    children, aux = flat
    return tuple(children), aux


def register_pytree_node_class(cls: type) -> type:
    """A class decorator: ``x.tree_flatten()`` and ``cls.tree_unflatten(aux, children)``."""
    register_pytree_node(cls, operator.methodcaller("tree_flatten"), cls.tree_unflatten)
    return cls


def register_dataclass(nodetype: type, data_fields: Sequence[str] | None = None,
                       meta_fields: Sequence[str] | None = None,
                       drop_fields: Sequence[str] = ()) -> type:
    """A dataclass whose ``data_fields`` are children and ``meta_fields`` static data.
    Without either, as JAX does: the fields marked ``field(metadata=dict(static=True))``
    are meta, the other init fields data.  Usable as a decorator."""
    if data_fields is None and meta_fields is None:
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError("register_dataclass without data_fields and meta_fields "
                            f"needs a dataclass, got {nodetype!r}")
        fields = [f for f in dataclasses.fields(nodetype) if f.init]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
    elif data_fields is None or meta_fields is None:
        raise TypeError("register_dataclass takes both data_fields and meta_fields, or "
                        "neither (for a dataclass)")
    data, meta = tuple(data_fields), tuple(meta_fields)
    del drop_fields  # fields not passed to __init__: nothing to rebuild them from

    def flatten(x: Any) -> tuple[tuple, tuple]:
        return tuple(getattr(x, f) for f in data), tuple(getattr(x, f) for f in meta)

    def unflatten(aux: tuple, children: Iterable[Any]) -> Any:
        return nodetype(**dict(zip(data, children)), **dict(zip(meta, aux)))

    register_pytree_node(nodetype, flatten, unflatten)
    return nodetype
