"""Parameters bound to functions for one transform (``api/callables.py``).

``def layer(x, act=np.tanh)`` transformed for a call whose ``act`` is ``relu`` is
lowered with ``act`` denoting ``relu``, as a local ``act = relu`` would: calls of it
are calls of ``relu`` (its derivative emitted beside), and the parameter stays in the
emitted signature, unread.  The bound functions are attached to a copy of the user's
function (``__s2s_bound_params__``), so each set of functions has its own IR.
"""

from __future__ import annotations

import builtins
import inspect
import operator
import types
import weakref
from typing import Any

import libcst as cst
import numpy as np

from ..ir.nodes import Const, Let, Var, walk
from .built_objects import returned_dict
from .fnlists import enter_sequence
from .fnvalues import FnSeq
from .named_attrs import named_items
from .nested_types import CONTAINERS, Leaf, decided, rebuild, tested_type
from .passed_structure import compared_items, int_key_names
from .self_methods import defining_class, for_class
from .static import NOVALUE
from .synthesize import BOUND, BoundType, DictKeys, HeldStrings, ItemFunctions, SeqLength
from .typetests import ArgType


def bind_parameter_functions(n: Any, node: Any) -> None:
    """Bind the parameters the Normalizer ``n``'s function has functions for."""
    bound = getattr(n.fn, BOUND, None)
    for kind, name, detail in n.plan.entries if n.plan is not None else ():
        if kind in ("arg", "default") and detail is not None:  # (a callee's parameter
            n.arg_types = {**getattr(n, "arg_types", {}), name: detail[1]}  # typed)
        if kind == "arg" and detail is not None and len(detail) > 2:  # (a nested tuple
            rebuild(n, name, detail, node)  # or list: its items by index)
    for name, value in (bound or {}).items():
        if name not in n.env:
            continue
        if isinstance(value, (BoundType, ArgType)):  # (`isinstance(p, T)`: known now)
            n.arg_types = {**getattr(n, "arg_types", {}), name: value.cls}
        if isinstance(value, ArgType):
            continue
        if isinstance(value, HeldStrings):  # (`spec["kind"]`: this call's string)
            n.bound_items = {**getattr(n, "bound_items", {}), n.env[name]: value.strings}
            continue
        if isinstance(value, SeqLength) and value.items is not None:
            _read_dict_items(n, name, value.items, node)  # (`for s in specs`: unrolled)
            continue
        if isinstance(value, SeqLength):  # (`h(*xs)`: `h(xs[0], ..., xs[n - 1])`)
            n.spread_lengths = {**getattr(n, "spread_lengths", {}), name: (
                n.env[name], value.n)}
            continue
        if isinstance(value, ItemFunctions):  # (`cfg["act"](x)`: the call's function)
            _bind_items(n, name, value.functions, node)
            continue
        if isinstance(value, DictKeys):  # (`f(v, **kw)`: `kw = {"a": kw["a"], ...}`)
            _read_by_keys(n, name, value.keys, node)
            continue
        if isinstance(value, BoundType):  # (an object: `p.apply(x)` is its class's)
            n.param_types = {**getattr(n, "param_types", {}), name: value.cls}
            n.param_nested = {**getattr(n, "param_nested", {}), name: value}
            continue
        if type(value) in (str, int):  # (`del d[k]`, `d[f"W{i}"]`: the call's, known now)
            n.bound_strings = {**getattr(n, "bound_strings", {}), n.env[name]: value}
            continue
        if value is None:  # (`transform=None`: the tests of it decided now)
            target, none = cst.Name(name), cst.Name("None")
            n.desugar.alias(target, node)
            n.desugar.alias(none, node)
            n.stmts.assign(target, none)
            n.none_params = getattr(n, "none_params", set()) | {name}
            continue
        if type(value) is tuple and any(type(v) is str for v in value) and all(
                type(v) in (str, int) for v in value):
            n.bound_strings = {**getattr(n, "bound_strings", {}), n.env[name]: value}
            n.bound_literals = {**getattr(n, "bound_literals", {}), name: value}
            continue  # (`for s in names: getattr(np, s)`: this call's strings)
        if type(value) in (tuple, list):  # (`chain(fs, x)` given (np.sin, np.tanh))
            _bind_sequence(n, name, value, node)
            continue
        text = _spelling(n, name, value)
        fv = n.funcs.of_object(value, text, node) if callable(value) else None
        if fv is None:
            raise n.unsupported(
                node, f"the parameter `{name}` is called as a function, and this call "
                f"passes {type(value).__name__} {value!r:.60}, which s2s cannot transform",
                "pass a Python function, a NumPy function, or a functools.partial of one")
        n.funcs.bind(name, fv, node)


def _read_by_keys(n: Any, name: str, keys: tuple[str, ...], node: Any) -> None:
    """A dict parameter whose keys this call knows: a ``**`` of it spreads its items
    read by those keys (``functions.py``'s ``_spread``) while it is not rebound."""
    n.spread_keys = {**getattr(n, "spread_keys", {}), name: (n.env[name], keys)}


def _read_dict_items(n: Any, name: str, items: tuple, node: Any) -> None:
    """A tuple or list parameter of dicts whose keys this call knows: ``specs = (specs[0],
    ..., specs[n - 1])``, each read a dict of its keys, so a loop over it unrolls and
    a callee matching on an item (``case {"kind": "l2"}:``) decides its cases."""
    reads = [cst.Subscript(cst.Name(name), [cst.SubscriptElement(cst.Index(cst.Integer(
        str(k))))]) for k in range(len(items))]
    made = cst.Tuple([cst.Element(r) for r in reads])
    n.desugar.alias_tree(made, node)
    before = len(n.out)
    n.stmts.assign(cst.Name(name), made)
    n.funcs.prefix = [*n.funcs.prefix, *n.out[before:]]  # (before the body: normalize.py)
    let = n.lets.get(n.env[name])
    for atom, keys in zip(let.args if let is not None else (), items):
        if isinstance(atom, Var):
            n.dicts.keys[atom.name] = tuple(keys)


def literal_lines(n: Any, old: Any) -> list[Any]:
    """``names = ("tanh", "sin")`` first, for each parameter bound to a tuple of
    strings (ints among them) made per call: its items are known in the body."""
    lines = [cst.parse_statement(f"{name} = {value!r}")
             for name, value in getattr(n, "bound_literals", {}).items()]
    for line in lines:
        n.desugar.alias_tree(line, old)
    return lines


def _bind_sequence(n: Any, name: str, value: Any, node: Any) -> None:
    """A parameter given a tuple or list of functions: a container of them
    (``fncontainers.py``), each item spelled as one function parameter's is."""
    fvs = [n.funcs.of_object(v, _spelling(n, f"{name}_{k}", v), node)
           for k, v in enumerate(value)]
    if any(fv is None for fv in fvs):
        raise n.unsupported(node, f"the parameter `{name}` is given a {type(value).__name__} "
                            "of functions, one of which s2s cannot transform",
                            "pass Python functions, NumPy functions or functools.partials")
    enter_sequence(n, name, FnSeq(tuple(fvs), type(value)), lambda fv: fv)


def _bind_items(n: Any, name: str, functions: dict[Any, Any], node: Any) -> None:
    """A dict, list or tuple parameter holding functions among its values: an item
    read by one of their keys (``cfg["act"]``) is that function while the parameter
    is not rebound (``fncontainers.item``); its other items are read as values."""
    fvs = {}
    for key, value in functions.items():
        fv = n.funcs.of_object(value, _spelling(n, f"{name}_{key}", value), node)
        if fv is None:
            raise n.unsupported(node, f"the parameter `{name}` holds {value!r:.60} at "
                                f"{key!r}, which s2s cannot transform", "pass a Python "
                                "function, a NumPy function, or a functools.partial of one")
        fvs[key] = fv
    n.item_functions = {**getattr(n, "item_functions", {}), name: fvs}


def _spelling(n: Any, name: str, value: Any) -> str:
    """How emitted code names ``value``: the module-level name it has in the user's
    module (``relu``), ``np.<name>`` for NumPy's, else ``<parameter>_fn``."""
    text = _chosen_spelling(n, name, value)
    n.names.taken.add(text.split(".")[0])  # (no local of emitted code shadows it)
    return text


def _chosen_spelling(n: Any, name: str, value: Any) -> str:
    own = getattr(value, "__name__", None)
    if isinstance(own, str) and own.isidentifier() and n.fn.__globals__.get(own) is value:
        n.resolver.bind_namespace(own, None)
        return own
    if isinstance(own, str) and own.isidentifier() and getattr(np, own, None) is value:
        n.resolver.namespace.setdefault("np", np)  # (emitted code's NumPy)
        return f"np.{own}"
    text = f"{name}_fn"
    n.resolver.namespace[text] = value
    return text


def typed_method_call(n: Any, node: cst.Call, target: str | None) -> Any:
    """``p.apply(x)`` (or ``p(x)``) of a parameter ``p`` whose class this transform
    knows (a NamedTuple, a dataclass, a registered class of yours): the call of the
    class's function with ``p`` first, ``P.apply(p, x)``, as if written so; None for
    any other call."""
    found = getattr(n, "param_types", None)
    func = node.func
    if not found:
        return None
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
        name, attr, obj = func.value.value, func.attr.value, func.value
    elif isinstance(func, cst.Name):
        name, attr, obj = func.value, "__call__", func
    else:
        return None
    cls = found.get(name)
    if cls is None or n.env.get(name) != name:  # (not the parameter any more)
        return None
    method = inspect.getattr_static(cls, attr, None)
    static = isinstance(method, staticmethod) and isinstance(method.__func__,
                                                              types.FunctionType)
    if not isinstance(method, types.FunctionType) and not static:
        return None  # (a field, a property: as before)
    owner = next(c for c in cls.__mro__ if attr in vars(c))
    if static:  # (`p.squash(v)`: the class's function, as Python finds it on p's class)
        fv = n.funcs.of_object(method.__func__, f"{_class_name(n, name, owner)}.{attr}", node)
        return None if fv is None else n.funcs.call(fv, node, target, n.funcs.args_of(
            node.args))
    fv = n.funcs.of_object(for_class(method, cls), f"{_class_name(n, name, owner)}.{attr}",
                           node)  # (`self.other(...)` in it: the object's class's)
    if fv is None:
        return None
    args, kwargs = n.funcs.args_of(node.args)
    return n.funcs.call(fv, node, target, ([n.exprs.expr(obj), *args], kwargs))


def _class_name(n: Any, name: str, cls: type) -> str:
    own = cls.__name__
    if own.isidentifier() and n.fn.__globals__.get(own) is cls:
        n.resolver.bind_namespace(own, None)
        n.names.taken.add(own)
        return own
    text = f"{name}_class"
    n.resolver.namespace[text] = cls
    n.names.taken.add(text)
    return text


def property_read(n: Any, node: cst.Attribute, base: Any, target: str | None) -> Any:
    """``self.doubled`` in a method of an argument's class (or ``p.doubled`` of an
    argument whose class this transform knows), where ``doubled`` is a ``@property``:
    the call of its getter with the object, ``Cls.doubled.fget(self)``; None for any
    other attribute."""
    if not isinstance(node.value, cst.Name):
        return None
    name, attr = node.value.value, node.attr.value
    cls = (getattr(n, "param_types", None) or {}).get(name)
    code = getattr(n.fn, "__code__", None)
    if cls is None and code is not None and code.co_argcount and code.co_varnames[0] == name:
        cls = defining_class(n.fn)
    if cls is None or n.env.get(name) != name:
        return None
    found = inspect.getattr_static(cls, attr, None)
    if not isinstance(found, property) or not isinstance(found.fget, types.FunctionType):
        return None
    owner = next(c for c in cls.__mro__ if attr in vars(c))
    fv = n.funcs.of_object(for_class(found.fget, cls),
                           f"{_class_name(n, name, owner)}.{attr}.fget", node)
    return None if fv is None else n.funcs.call(fv, node, target, ([base], {}))


_TYPE_COMPARE = {cst.Is: operator.is_, cst.IsNot: operator.is_not, cst.Equal: operator.eq,
                 cst.NotEqual: operator.ne, cst.In: lambda a, b: a in b,
                 cst.NotIn: lambda a, b: a not in b}


def type_test(n: Any, node: Any) -> Any:
    """A test of a parameter's Python type, decided for the type this call passes
    (``typetests.py``): ``isinstance(scale, int)`` and ``type(x) is float`` (``==``,
    ``is not``, ``in (...)``) as a bool; ``NOVALUE`` for any other expression."""
    if isinstance(node, cst.Comparison) and len(node.comparisons) == 1:
        cls = _tested_type(n, node.left, "type", 1)
        comp = node.comparisons[0]
        compare = _TYPE_COMPARE.get(type(comp.operator))
        if cls is None or compare is None:
            return NOVALUE
        other = n.comps.static.static_value(comp.comparator)
        if other is NOVALUE or cls is Leaf and not all(isinstance(k, type) and issubclass(
                k, CONTAINERS) for k in (other if isinstance(other, tuple) else (other,))):
            return NOVALUE  # (an array's exact type is not known: only not a container)
        return bool(compare(cls, other))
    cls = _tested_type(n, node, "isinstance", 2)
    if cls is None:
        return NOVALUE
    kinds = n.comps.static.static_value(node.args[1].value)
    if kinds is NOVALUE:
        raise n.unsupported(node.args[1], "the types `isinstance` tests against are not "
                            "known when s2s transforms the function",
                            "name the types: `isinstance(x, (int, float))`")
    try:
        return decided(n, cls, kinds, node)
    except TypeError as exc:
        raise n.unsupported(node, f"`isinstance` raises TypeError: {exc}",
                            "pass a type or a tuple of types") from None


def _tested_type(n: Any, node: Any, builtin: str, nargs: int) -> type | None:
    """The type this call passes for the parameter ``node`` (``builtin(p, ...)``, of
    ``nargs`` positional arguments) tests, where the call's type is known; else None."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Name)
            and node.func.value == builtin and len(node.args) == nargs
            and not any(a.star or a.keyword for a in node.args)
            and isinstance(node.args[0].value, cst.Name)):
        return None
    name = node.args[0].value.value
    known = getattr(n, "arg_types", None) or {}
    if builtin in n.local_names or (
            n.comps.static.builtin(node.func) is not getattr(builtins, builtin)):
        return None
    if n.env.get(name) != name:  # (an item of a nested literal: nested_types.py)
        return tested_type(n, name)
    return known.get(name)


def held_method_call(n: Any, node: cst.Call, target: str | None) -> Any:
    """``l(h)`` (``l.apply(h)``, ``net.layers[0](h)``) of an object an argument's
    field holds (``for l in net.layers`` of a NamedTuple or registered ``net``):
    ``Dense.__call__(l, h)``, the item's class known per call; None for any other
    call."""
    if not getattr(n, "param_nested", None):
        return None
    func = node.func
    obj, attr = (func, "__call__") if isinstance(func, (cst.Name, cst.Subscript)) else (
        (func.value, func.attr.value) if isinstance(func, cst.Attribute) else (None, None))
    if obj is None or not _rooted_in(n, obj):
        return None
    atom = n.exprs.expr(obj)
    held = _held_type(n, atom)
    if held is _MIXED:
        raise n.unsupported(
            node, "this calls an item of a list field whose objects are of different "
            "classes in this call, read by a loop's index: s2s calls one class's method "
            "there", "give the list objects of one class, or call each item by a "
            "constant index (`net.layers[0](h)`)")
    method = inspect.getattr_static(held.cls, attr, None) if held is not None else None
    if not isinstance(method, types.FunctionType):
        return None
    owner = next(c for c in held.cls.__mro__ if attr in vars(c))
    spelled = _class_name(n, owner.__name__.lower(), owner)
    fv = n.funcs.of_object(for_class(method, held.cls), f"{spelled}.{attr}", node)
    if fv is None:
        return None
    args, kwargs = n.funcs.args_of(node.args)
    return n.funcs.call(fv, node, target, ([atom, *args], kwargs))


def _rooted_in(n: Any, node: Any) -> bool:
    """Is ``node`` a local name, or attributes and subscripts of a parameter whose
    class this transform knows?"""
    while isinstance(node, (cst.Attribute, cst.Subscript)):
        node = node.value
    return isinstance(node, cst.Name) and node.value in n.env


def _held_type(n: Any, atom: Any, depth: int = 0) -> Any:
    """The ``BoundType`` of the object ``atom`` holds, followed back through field
    reads and item reads to a parameter of a known class; None where unknown, or an
    item read by a run-time index of a list whose items' classes differ."""
    if not isinstance(atom, Var) or depth > 16:
        return None
    let = n.lets.get(atom.name)
    if let is None:
        found = n.param_nested.get(atom.name)
        return found if found is not None and n.env.get(atom.name) == atom.name else None
    if let.prim == "identity":
        return _held_type(n, let.args[0], depth + 1)
    if let.prim != "getitem" or len(let.params["index"].items) != 1:
        return None
    base = _held_type(n, let.args[0], depth + 1)
    key = let.params["index"].items[0]
    if isinstance(base, BoundType) and isinstance(key, Const):
        held = dict(base.nested).get(key.value)
        return held if isinstance(held, (BoundType, tuple)) else None
    if isinstance(base, tuple) and base:  # (a list field's items)
        if isinstance(key, Const) and type(key.value) is int and -len(base) <= key.value < len(base):
            return base[key.value]
        same = {(t.cls, t.nested and repr(t.nested)) for t in base}
        if len(same) > 1 and not isinstance(key, Const):
            return _MIXED
        return base[0] if len(same) == 1 and not isinstance(key, Const) else None
    return None


_MIXED = BoundType(type(None))  # (a loop's item of a list of objects of several classes)


def ints_bound(fn: Any, args: list, kwargs: dict, n: Any) -> Any:
    """The callee ``fn`` a call passes ``args``/``kwargs`` (atoms) to, where a parameter
    its body builds keys or a ``range`` from (``{f"w{i}": ... for i in
    range(n_layers)}``) gets a Python int the call knows (a literal, the default), or a
    parameter whose items it compares (``spec["kind"] == "scale"``) gets a dict the
    caller built with strings among its items (``n``: the caller's Normalizer): a
    copy of ``fn`` bound to those values (``BOUND``, as a transform of ``fn`` itself is
    made per call's int), one per set of values; ``fn`` itself otherwise.  A module
    or closure value the copy is made for (``N``, ``{"kind": KIND}``) is watched: the
    code is generated again when it changes."""
    lets, watch = n.lets, n.comps.static.watch_path
    if not isinstance(fn, types.FunctionType) or hasattr(fn, BOUND):
        return fn
    names, compared = int_key_names(fn), compared_items(fn) | named_items(fn)
    if not names and not compared:
        return fn
    try:
        bound = inspect.signature(fn, follow_wrapped=False).bind(*args, **kwargs)
    except TypeError:
        return fn  # (refused, located, where the call is lowered)
    found: dict[str, Any] = {}
    for name, p in inspect.signature(fn, follow_wrapped=False).parameters.items():
        atom = bound.arguments.get(name)
        value = atom.value if isinstance(atom, Const) else p.default if (
            name not in bound.arguments) else None
        if name in names and type(value) is int:
            if isinstance(atom, Const) and atom.text != repr(value):
                watch(atom.text)
            found[name] = value
        elif name in compared and (strings := _held_strings(lets, atom, watch)):
            found[name] = HeldStrings(strings)
    if not found:
        return fn
    made = _COPIES.setdefault(fn, {})
    key = tuple(sorted((k, tuple(sorted(v.strings.items())) if isinstance(
        v, HeldStrings) else v) for k, v in found.items()))
    if key not in made:
        copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__,
                                  fn.__closure__)
        copy.__kwdefaults__ = fn.__kwdefaults__
        copy.__qualname__, copy.__module__ = fn.__qualname__, fn.__module__
        copy.__dict__.update(fn.__dict__)
        setattr(copy, BOUND, found)
        made[key] = copy
    return made[key]


def _held_strings(lets: Any, atom: Any, watch: Any) -> dict[str, str]:
    """The string items of the dict the caller's ``atom`` names, where the caller
    built it (a dict literal, reached through a tuple or list literal's item at a
    constant position: ``for s in specs`` unrolled); {} otherwise."""
    for _ in range(8):
        let = lets.get(atom.name) if isinstance(atom, Var) else None
        if not isinstance(let, Let) or let.target != atom.name:
            return {}
        if let.prim == "make_dict" and "keys" in let.params and len(let.params[
                "keys"]) == len(let.args) and "from_items" not in let.params:
            pairs = [(k, _built_field(lets, a)) for k, a in zip(let.params["keys"], let.args)]
            held = {k: a for k, a in pairs
                    if isinstance(a, Const) and type(a.value) is str and type(k) is str}
            for a in held.values():
                if a.text != repr(a.value):  # (`{"kind": KIND}`: KIND watched)
                    watch(a.text)
            return {k: a.value for k, a in held.items()}
        if let.prim == "identity" and len(let.args) == 1:
            atom = let.args[0]
            continue
        index = let.params.get("index") if let.prim == "getitem" else None
        held = lets.get(let.args[0].name) if index is not None and isinstance(
            let.args[0], Var) else None
        if not (isinstance(held, Let) and held.prim in ("make_tuple", "make_list") and len(
                index.items) == 1 and isinstance(index.items[0], Const) and type(
                index.items[0].value) is int and 0 <= index.items[0].value < len(held.args)):
            return {}
        atom = held.args[index.items[0].value]
    return {}


def _built_field(lets: Any, atom: Any) -> Any:
    """A field of an object the caller built (``Layer("tanh", 2.0)``: its record reads
    each field from its constructor's result, objects.computed_call): the constant its
    constructor's function sets there on every path (the static arguments were written
    into it as literals), else ``atom`` itself."""
    value = atom
    for _ in range(8):
        let = lets.get(value.name) if isinstance(value, Var) else None
        if isinstance(let, Let) and let.prim == "identity" and len(let.args) == 1:
            value = let.args[0]
            continue
        index = let.params.get("index") if isinstance(let, Let) and let.prim == "getitem" \
            else None
        if index is None or len(index.items) != 1 or not isinstance(index.items[0], Const) \
                or not isinstance(let.args[0], Var):
            break
        key, made = index.items[0].value, lets.get(let.args[0].name)
        if isinstance(made, Let) and made.prim == "call":  # (the constructor's result)
            callee = made.params.get("callee")
            made = returned_dict(callee) if callee is not None else None
            inner = [s for s in walk(callee.body) if isinstance(s, Let)]
            lets = {s.target: s for s in inner} if made is not None else lets
            if len(lets) != len(inner):  # (a name bound twice, in a loop: not one value)
                break
        if not (isinstance(made, Let) and made.prim == "make_dict" and key in made.params.get(
                "keys", ()) and len(made.params["keys"]) == len(made.args)):
            break
        value = made.args[list(made.params["keys"]).index(key)]
    return value if isinstance(value, Const) else atom


_COPIES: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()
