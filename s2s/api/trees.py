"""Pytree arguments at the API's boundary, and the plain-container helpers.

Emitted code reads tuples, lists and dicts (``s2s/ir/kinds.py``: their structure is
fixed per call signature).  Every other pytree node JAX knows, and those registered in
``s2s.tree_util``, reaches it as a *plain* container: a NamedTuple, a dataclass or a
registered object as the dict of its fields (``p.w`` in the user's function is
``p["w"]`` in the emitted code, see ``ExprLowerer.field``), an ``OrderedDict`` or a
``defaultdict`` as a dict, and ``None`` in a differentiated argument as ``()``, an
empty container.  Gradients (and cotangents) come back in the argument's own types:
``unplain`` rebuilds them with each node's unflatten, as JAX's do.

``_leaves``/``_rebuild``/``_copies`` walk plain containers in insertion order (the
order of ``kind_of``); ``_sorted_leaves`` in JAX's (dict keys sorted).
"""

from __future__ import annotations

import collections
import dataclasses
import inspect
import linecache
import sys
import types
from typing import Any, Callable

import numpy as np

from ..errors import FieldsAttributeError, Loc
from ..ir.kinds import Kind, Tree
from .tree_util import NODES
from .value_methods import refuse_value_methods


class Fields(dict):
    """The plain form of a NamedTuple or registered object: a dict of its fields the
    emitted code reads as ``p["w"]``, which also reads as ``p.w`` (a callee the emitted
    code calls as it is, a user's own Python, reads it so), and whose other attributes
    are its class's methods (``self.apply(x)`` in a method the emitted code calls with
    it: ``P.__call__(p, x)``)."""

    of_class: type | None = None
    # a differentiated registered object's meta fields (its other attributes), which
    # are no leaves of it: read as they are (``p.n_layers``, ``p["n_layers"]``)
    __s2s_meta__: dict | None = None

    def __missing__(self, name: Any) -> Any:
        meta = self.__s2s_meta__
        if meta is not None and name in meta:
            return meta[name]
        raise KeyError(name)

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            method = inspect.getattr_static(self.of_class, name, None) if (
                self.of_class is not None) else None
            if isinstance(method, types.FunctionType):
                return types.MethodType(method, self)
            if isinstance(method, (staticmethod, classmethod, property)):
                return method.__get__(self, self.of_class)  # (`self.squash`, `self.scale`)
            if self.of_class is None and not name.startswith("_"):
                raise _no_method(self, name) from None
            raise AttributeError(name) from None


def _no_method(fields: Fields, name: str) -> AttributeError:
    """``p.apply`` read by your code of an object s2s hands it as the dict of its
    fields, its class not known there (a NamedTuple batched by ``vmap`` of a Jacobian
    whose function hands it to a callee calling its methods): located at your line,
    saying what to write (a bare ``AttributeError: apply`` from s2s before)."""
    frame = sys._getframe(2)  # (the line reading the attribute)
    text = (linecache.getline(frame.f_code.co_filename, frame.f_lineno) or "").rstrip("\n")
    col = text.find(f".{name}")
    loc = Loc(frame.f_code.co_filename, frame.f_lineno, col + 2 if col >= 0 else 1, text)
    return FieldsAttributeError(
        f"`.{name}` is not a field of this object ({', '.join(map(str, fields))}): s2s "
        "hands it to your code as the dict of its fields here, where its class is not "
        "known (a NamedTuple or registered object that vmap of a Jacobian batches), so "
        "its methods cannot be read from it", loc,
        f"call the method through its class, `YourClass.{name}(obj, ...)` (e.g. "
        f"`P.{name}(p, x)`), which reads the object's fields; or pass the object "
        "unbatched (in_axes=None)", frame.f_code.co_name)


def of_class(fields: Fields, cls: type) -> Fields:
    """``fields``, reading the methods of ``cls`` as its own."""
    fields.of_class = cls
    return fields


class Record(Fields):
    """The plain form of a NamedTuple: its fields by name (``p.w``, ``p["w"]``) and by
    position (``p[0]``, ``a, b = p``), as the NamedTuple reads them."""

    __s2s_positional__ = True  # (s2s/ir/kinds.py: its kind maps positions to keys)

    def __getitem__(self, key: Any) -> Any:
        if type(key) is int:
            return dict.__getitem__(self, list(dict.keys(self))[key])
        return dict.__getitem__(self, key)


_PLAIN = (tuple, list, dict, Fields, Record)


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _fields(x: Any) -> tuple[list[Any], list[Any], Callable[[list[Any]], Any]] | None:
    """``(keys, children, rebuild)`` of a registered node, or None for a leaf.  A
    child's key is the attribute that holds it (found by identity), else its position."""
    rules = NODES.get(type(x))
    if rules is None:
        return None
    flatten, unflatten = rules
    children, aux = flatten(x)
    children = list(children)
    attrs = dict(vars(x)) if hasattr(x, "__dict__") else {}
    keys: list[Any] = []
    for i, child in enumerate(children):
        name = next((k for k, v in attrs.items() if v is child), None)
        if name is not None:
            del attrs[name]
        keys.append(i if name is None else name)
    return keys, children, lambda items: unflatten(aux, items)


def is_node(x: Any) -> bool:
    """A pytree node the emitted code does not read as it is."""
    t = type(x)
    if t in _PLAIN:
        return False
    return _is_namedtuple(x) or isinstance(x, dict) or t in NODES


def has_nodes(tree: Any, none: bool) -> bool:
    """Does ``tree`` hold a node ``plain`` changes (``none``: counting ``None``)?"""
    t = type(tree)
    if t is tuple or t is list:
        return any(has_nodes(x, none) for x in tree)
    if t is dict or t is Fields or t is Record:
        return any(has_nodes(x, none) for x in tree.values())
    return (none and tree is None) or is_node(tree)


def plain(tree: Any, none: Any = None, meta: bool = False) -> Any:
    """``tree`` with every node the emitted code cannot read as tuples, lists and
    dicts; ``None`` becomes ``none`` (``()`` where it is differentiated).  A registered
    object not differentiated keeps its other attributes too (a dataclass's meta
    fields): the function may read them; differentiated (or ``meta``: a primal and
    tangent of ``jvp``) it keeps them aside, no leaves (``Fields.__s2s_meta__``)."""
    t = type(tree)
    if tree is None:
        return none
    if t is tuple or t is list:
        return t(plain(x, none, meta) for x in tree)
    if _is_namedtuple(tree):
        return of_class(Record({k: plain(v, none, meta)
                                for k, v in zip(tree._fields, tree)}), t)
    if isinstance(tree, dict):
        items = {k: plain(v, none, meta) for k, v in tree.items()}
        return t(items) if t is Fields or t is Record else items
    node = _fields(tree)
    if node is None:
        return tree
    keys, children, _ = node
    fields = of_class(Fields({k: plain(c, none, meta) for k, c in zip(keys, children)}), t)
    if none is None and not meta and hasattr(tree, "__dict__"):
        fields.update({k: plain(v) for k, v in vars(tree).items() if k not in fields})
    elif hasattr(tree, "__dict__"):  # (differentiated: its meta fields, no leaves)
        fields.__s2s_meta__ = {k: v for k, v in vars(tree).items() if k not in fields} or None
    return fields


def unplain(like: Any, tree: Any) -> Any:
    """``tree`` (a plain container shaped like ``plain(like)``) in ``like``'s types."""
    t = type(like)
    if like is None:
        return None
    if t is tuple or t is list:
        return t(unplain(a, b) for a, b in zip(like, tree))
    if _is_namedtuple(like):
        return t(*(unplain(a, tree[k]) for k, a in zip(like._fields, like)))
    if isinstance(like, dict):
        items = {k: unplain(v, tree[k]) for k, v in like.items()}
        if isinstance(like, collections.defaultdict):
            return t(like.default_factory, items)
        return items if t is dict else t(items)
    node = _fields(like)
    if node is None:
        return tree
    keys, children, rebuild = node
    return rebuild([unplain(c, tree[k]) for k, c in zip(keys, children)])


def plain_dicts(tree: Any) -> Any:
    """``tree`` with every dict (a ``Fields`` too) a plain dict: what JAX traces."""
    if isinstance(tree, dict):
        return {k: plain_dicts(v) for k, v in tree.items()}
    return type(tree)(plain_dicts(v) for v in tree) if type(tree) in (tuple, list) else tree


def plain_args(args: tuple, diff: tuple[int, ...], objects: bool = False,
               meta: bool = False) -> tuple:
    """The arguments as the emitted code reads them (``None`` is ``()`` in the
    differentiated ones: an empty subtree, with an empty gradient).  ``objects``: a
    dataclass not registered as a pytree, passed where it is not differentiated, is
    read as its fields (``jax.grad(f, argnums=1)(cfg, x)`` passes it to ``f`` as it
    is; differentiated, it is refused, as JAX refuses it)."""
    return tuple(plain(a, () if i in diff else None, meta) if i in diff or not (
        objects and loose_dataclass(a)) else loose_fields(a) for i, a in enumerate(args))


def loose_dataclass(x: Any) -> bool:
    """A dataclass object whose class is not a registered pytree node, a
    ``types.SimpleNamespace`` (a config: ``cfg=SimpleNamespace(lr=0.1, steps=3)``), or
    an object of a plain class of yours (``plain_object``)."""
    return (dataclasses.is_dataclass(x) and not isinstance(x, type) or type(
        x) is types.SimpleNamespace or plain_object(x)) and type(x) not in NODES


_OWN_ACCESS = ("__getattr__", "__getattribute__", "__call__", "__slots__", "__iter__",
               "__getitem__", "__len__", "__array__", "__array_ufunc__", "__jax_array__")


def plain_object(x: Any) -> bool:
    """An object of a class of yours that only holds data in its attributes (``class
    Cfg:`` with ``self.scale = 2.0`` in ``__init__``): no properties or other
    descriptors of data, no attribute hooks, not callable, not a container or an
    array.  Not differentiated, its attributes are read at each call, as the fields
    of a loose dataclass (JAX refuses it unless it is static)."""
    t = type(x)
    if t in _PLAIN or isinstance(x, (type, np.ndarray, np.generic)) or not hasattr(
            x, "__dict__") or dataclasses.is_dataclass(x) or hasattr(x, "_fields") or (
            t.__module__ or "builtins").split(".")[0] in (
                "builtins", "numpy", "scipy", "jax", "jaxlib", "s2s", "collections",
                "functools", "types", "typing", "abc", "enum"):
        return False
    for cls in t.__mro__[:-1]:
        for k, v in vars(cls).items():
            if k in _OWN_ACCESS or (hasattr(v, "__get__") and not k.startswith(
                    "__") and not isinstance(v, (types.FunctionType, staticmethod,
                                                 classmethod))):
                return False
    return isinstance(t.__init__, types.FunctionType) or t.__init__ is object.__init__


def loose_fields(x: Any) -> Fields:
    """A loose dataclass object's fields (and other attributes), as the emitted code
    reads a registered object not differentiated."""
    if plain_object(x):  # (its class's data attributes too: `class Cfg: scale = 2.0`)
        return of_class(Fields(dict(attributes(x))), type(x))
    names = vars(x) if type(x) is types.SimpleNamespace else [
        f.name for f in dataclasses.fields(x)]
    fields = of_class(Fields({k: plain(getattr(x, k)) for k in names}), type(x))
    if hasattr(x, "__dict__"):
        fields.update({k: plain(v) for k, v in vars(x).items() if k not in fields})
    return fields


def unbound(fn: Any) -> tuple[Callable, Any] | None:
    """``(function, object)`` for a method bound to an object (not a class), or for an
    object of your own class with a ``__call__`` method (``s2s.grad(model)``)."""
    if inspect.ismethod(fn) and not isinstance(fn.__self__, type):
        return fn.__func__, fn.__self__
    call = getattr(type(fn), "__call__", None)
    if isinstance(call, types.FunctionType) and not isinstance(fn, type) and not str(
            type(fn).__module__).startswith(("s2s.", "functools")):
        return call, fn
    return None


def attributes(obj: Any) -> Any:
    """A bound method's object as the call passes it: a pytree as its plain form, any
    other object as the dict of its attributes, read again at every call (JAX closes
    over them as constants)."""
    if type(obj) in _PLAIN or is_node(obj):
        return plain(obj)
    found = {}
    for cls in reversed(type(obj).__mro__[:-1]):  # class attributes holding data too
        found.update({k: v for k, v in vars(cls).items() if not k.startswith("__")
                      and not callable(v) and not hasattr(v, "__get__")})
        slots = getattr(cls, "__slots__", ())
        for k in (slots,) if isinstance(slots, str) else slots:  # (an object without
            if hasattr(obj, k) and not k.startswith("__"):  # a __dict__: its slots)
                found[k] = getattr(obj, k)
    found.update(getattr(obj, "__dict__", {}))
    return Fields({k: plain(v) for k, v in found.items()})


# ---- plain containers (insertion order: the order of kind_of) ---------------------

def _leaves(value: Any) -> list[Any]:
    if isinstance(value, (tuple, list)) and not hasattr(value, "_fields"):
        return [x for v in value for x in _leaves(v)]
    if isinstance(value, dict):
        return [x for v in value.values() for x in _leaves(v)]
    return [value]


def _rebuild(kind: Kind, leaves: list[Any]) -> Any:
    it = iter(leaves)

    def build(k: Kind) -> Any:
        if not isinstance(k, Tree):
            return next(it)
        items = [build(c) for c in k.children]
        if k.type is dict:
            return dict(zip(k.keys, items))
        return k.type(items)

    return build(kind)


def _copies(tree: Any) -> Any:
    """The arrays of a pytree copied (a NamedTuple's and a registered object's too,
    in objects of their classes): the user's function runs on them, never on the
    caller's arrays."""
    if isinstance(tree, np.ndarray):
        return tree.copy()
    if isinstance(tree, (tuple, list)):
        items = [_copies(x) for x in tree]
        return type(tree)(*items) if hasattr(tree, "_fields") else type(tree)(items)
    if isinstance(tree, dict):
        items = {k: _copies(v) for k, v in tree.items()}
        if type(tree) not in (Fields, Record):
            return items
        made = type(tree)(items)  # (its class and a differentiated object's meta fields
        made.of_class = tree.of_class  # kept: `p.n_layers` of a Hessian's argument)
        made.__s2s_meta__ = tree.__s2s_meta__
        return made
    node = _fields(tree)
    if node is not None:
        return node[2]([_copies(c) for c in node[1]])
    return tree


def fields_like(out: Any, dot: Any) -> Any:
    """``dot`` (a tangent the emitted code returned beside ``out``) with each plain
    dict standing where ``out`` holds a plain form of a NamedTuple or registered
    object (a ``Fields`` of its class) made that form too, so ``unplain_nodes`` gives
    the tangent the output's type, as ``jax.jvp`` does."""
    if isinstance(out, Fields) and out.of_class is not None and type(dot) is dict and (
            list(dot) == list(out)):
        made = of_class(type(out)((k, fields_like(out[k], v)) for k, v in dot.items()),
                        out.of_class)
        return made
    if type(out) in (tuple, list) and type(dot) is type(out) and len(out) == len(dot):
        return type(dot)(fields_like(o, d) for o, d in zip(out, dot))
    if type(out) is dict and type(dot) is dict:
        return {k: fields_like(out[k], v) if k in out else v for k, v in dot.items()}
    return dot


def unplain_nodes(args: Any, tree: Any) -> Any:
    """``tree`` (what a function returned beside its gradient: a value, an aux) with
    each plain form of a NamedTuple or registered object (a ``Fields`` of its class)
    made an object of that class again, like one of that class among ``args``: the
    function returned its argument, and JAX returns the argument's own type."""
    likes: dict[type, Any] = {}

    def find(x: Any) -> None:
        if isinstance(x, (tuple, list)):
            if hasattr(x, "_fields"):
                likes.setdefault(type(x), x)
            for v in x:
                find(v)
        elif isinstance(x, dict):
            for v in x.values():
                find(v)
        else:
            node = _fields(x)
            if node is not None:
                likes.setdefault(type(x), x)
                for c in node[1]:
                    find(c)

    find(args)

    def back(x: Any) -> Any:
        if isinstance(x, Fields) and x.of_class in likes:
            return unplain(likes[x.of_class], {k: back(v) for k, v in x.items()})
        if type(x) is tuple or type(x) is list:
            return type(x)(back(v) for v in x)
        if type(x) is dict:
            return {k: back(v) for k, v in x.items()}
        return x

    return back(tree) if likes else tree


def _sorted_kind(kind: Kind) -> Any:
    """A kind with dict keys sorted: dicts match whatever their insertion order."""
    if not isinstance(kind, Tree):
        return kind
    pairs = list(zip(kind.keys, (_sorted_kind(c) for c in kind.children)))
    if kind.type is dict:
        pairs.sort(key=lambda kc: repr(kc[0]))
    return (kind.type, tuple(pairs))


def _sorted_leaves(value: Any) -> list[Any]:
    if isinstance(value, (tuple, list)) and not hasattr(value, "_fields"):
        return [x for v in value for x in _sorted_leaves(v)]
    if isinstance(value, dict):
        return [x for k in sorted(value, key=repr) for x in _sorted_leaves(value[k])]
    return [value]


def call_plain(t: Any, args: tuple, kwargs: dict, argnums: tuple[int, ...],
               run: Callable | None = None) -> Any:
    """A grad or value_and_grad ``t`` of pytree arguments: called with their plain
    forms (by ``run``, ``t`` itself by default), its gradients rebuilt in the
    arguments' types."""
    refuse_value_methods(t.fn, args, kwargs)  # (`p.get(k)` of p's class's own `get`)
    result = (run or t)(*plain_args(args, argnums, objects=True), **kwargs)

    def back(grads: Any) -> Any:
        if t.tuple_out:
            return tuple(unplain(args[i], g) for i, g in zip(argnums, grads))
        return unplain(args[argnums[0]], grads)

    if t.mode == "grad":
        return (back(result[0]), unplain_nodes(args, result[1])) if t.has_aux else \
            back(result)
    if t.mode == "value_and_grad":
        return unplain_nodes(args, result[0]), back(result[1])
    return result


def needs_plain(args: tuple, argnums: tuple[int, ...], objects: bool = False) -> bool:
    return any(has_nodes(a, i in argnums) or objects and i not in argnums and
               loose_dataclass(a) for i, a in enumerate(args))


def _map_leaves(f: Callable, tree: Any) -> Any:
    if isinstance(tree, (tuple, list)):
        return type(tree)(_map_leaves(f, t) for t in tree)
    if isinstance(tree, dict):
        return {k: _map_leaves(f, v) for k, v in tree.items()}
    return f(tree)
