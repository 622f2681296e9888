"""A callee whose code needs the structure of what its caller passes: the keys of a
dict it merges, deletes from or spreads (``{**p, "a": 1}``, ``dict(p, a=1)``,
``del d[k]``, ``d.pop(k)``, ``f(x, **p)``), the string it deletes by (``k``), the
length of a tuple or list it spreads (``h(*xs)``).

Where the caller knows them (a dict it built, a dict or tuple parameter whose keys or
length its own call gives, a string constant), the callee is normalized as a copy
carrying them (``synthesize.BOUND``, read by ``bound_params.py`` as a transformed
function's are), one copy per function and structure; emitted code calls the user's
function itself.  The names are read with ``ast`` (``api/callables.py`` reads them
too, for the transformed function's own parameters; ``import s2s`` loads this
module, so it imports no libcst).
"""

from __future__ import annotations

import ast
import inspect
import types
import weakref
from typing import Any

from .. import syntax
from ..ir.nodes import Const, Let
from .synthesize import BOUND, DictKeys, SeqLength


def merged_and_deleted(defined: Any) -> tuple[set[str], set[str]]:
    """In the parsed function ``defined``: the names of dicts whose keys its code
    needs (``{**p, "a": 1}``, ``dict(p, a=1)``, ``del d[k]``, ``d.pop(k)``: the result's
    keys are the call's), and the names such a ``del``/``pop`` deletes by (``k``)."""
    merged, keys = set(), set()
    for node in ast.walk(defined):
        if isinstance(node, ast.Dict):
            merged |= {v.id for k, v in zip(node.keys, node.values)
                       if k is None and isinstance(v, ast.Name)}
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id == "dict" and node.args and isinstance(node.args[0], ast.Name):
            merged.add(node.args[0].id)
        pairs = [(t.value, t.slice) for t in node.targets if isinstance(t, ast.Subscript)] \
            if isinstance(node, ast.Delete) else [(node.func.value, node.args[0])] if (
                isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and
                node.func.attr == "pop" and node.args) else []
        for base, key in pairs:
            if isinstance(base, ast.Name) and isinstance(key, ast.Name):
                merged.add(base.id)
                keys.add(key.id)
    return merged, keys


def key_built_names(defined: Any) -> set[str]:
    """The names a subscript's key is built from with strings, in the parsed function
    ``defined``: ``d[f"w{name}"]``, ``d["w" + name]``, and the key of an item called
    (``cfg[key](x)``): given a string, the transform is made per call's string, so the
    key is a constant there (an item of a dict of functions, the function it holds)."""
    out = built_names(defined)
    for node in ast.walk(defined):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript) and \
                isinstance(node.func.slice, ast.Name):  # (`cfg[key](x)`: its function)
            out.add(node.func.slice.id)
    return out


def built_names(defined: Any) -> set[str]:
    """The names a subscript's key is built from with strings (``d[f"w{name}"]``,
    ``d["w" + name]``), and those of the ``range`` a loop or a dict comprehension
    building such keys from its variable walks (``for i in range(n): d[f"W{i}"]``,
    ``{f"w{i}": v for i in range(n)}``: ``n``)."""
    out: set[str] = set()
    for node in ast.walk(defined):
        if isinstance(node, ast.Subscript) and _string_built(node.slice):
            out |= {n.id for n in ast.walk(node.slice) if isinstance(n, ast.Name)}
    for node in ast.walk(defined):  # (`for i in range(n): d[f"W{i}"]`: n made per call,
        if isinstance(node, ast.For) and isinstance(node.target, ast.Name) and \
                node.target.id in out and _is_range(node.iter):  # the loop unrolled)
            out |= {n.id for a in node.iter.args for n in ast.walk(a)
                    if isinstance(n, ast.Name)}
    for node in ast.walk(defined):  # (`{f"w{i}": ... for i in range(n)}`: n likewise)
        if isinstance(node, ast.DictComp) and _string_built(node.key):
            keyed = {n.id for n in ast.walk(node.key) if isinstance(n, ast.Name)}
            out |= {n.id for g in node.generators if isinstance(g.target, ast.Name) and (
                g.target.id in keyed) and _is_range(g.iter) for a in g.iter.args
                for n in ast.walk(a) if isinstance(n, ast.Name)}
    return out


def _is_range(node: Any) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
        node.func.id == "range" and not node.keywords


def plain_key_names(defined: Any) -> set[str]:
    """The parameters of the parsed function ``defined`` that key a subscript as they
    are (``params[name]``) and hold a string by their default (``name="w"``) or
    annotation (``name: str``): given a string, the transform is made per call's
    string, so the read is by a constant key.  (A parameter without either may be an
    int indexing an array, ``x[i]``: not made per call.)"""
    args = defined.args
    stringy = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)
               if isinstance(a.annotation, ast.Name) and a.annotation.id == "str"}
    positional = [*args.posonlyargs, *args.args]
    stringy |= {a.arg for a, d in zip(positional[len(positional) - len(args.defaults):],
                                       args.defaults)
                if isinstance(d, ast.Constant) and type(d.value) is str}
    stringy |= {a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults)
                if isinstance(d, ast.Constant) and type(d.value) is str}
    return {node.slice.id for node in ast.walk(defined) if isinstance(node, ast.Subscript)
            and isinstance(node.slice, ast.Name) and node.slice.id in stringy}


# str's methods that return strings, lists of them or bools, with no array namesake
STR_ONLY = frozenset({
    "split", "rsplit", "strip", "lstrip", "rstrip", "lower", "upper", "casefold",
    "title", "capitalize", "startswith", "endswith", "replace", "removeprefix",
    "removesuffix", "isdigit", "isalpha", "isalnum", "isidentifier",
    "rpartition", "splitlines", "zfill", "center", "ljust", "rjust", "format"})


def string_read_names(defined: Any) -> set[str]:
    """The names a str method is called on (``spec.split(",")``) or ``getattr`` reads
    an attribute by (``getattr(np, act)``): given a string, the transform is made per
    call's string, so the method's value or the attribute is known then."""
    out = set()
    for node in ast.walk(defined):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and (
                isinstance(node.func.value, ast.Name)) and node.func.attr in STR_ONLY:
            out.add(node.func.value.id)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and (
                node.func.id == "getattr") and len(node.args) == 2 and isinstance(
                node.args[1], ast.Name):
            out.add(node.args[1].id)
    return out


def literal_tuple(value: Any) -> bool:
    """A tuple of strings, ints among them (``names=("tanh", "sin")``, ``spec=("poly",
    3)``): code is made per its items (none a float: no derivative is lost)."""
    return type(value) is tuple and any(type(v) is str for v in value) and all(
        type(v) in (str, int) for v in value)


def _string_built(node: Any) -> bool:
    """An f-string of plain names (``f"w{name}"``), or a ``+`` of such names and
    string constants with at least one string constant or f-string in it."""
    if isinstance(node, ast.JoinedStr):
        return all(isinstance(v, ast.Constant) or isinstance(v, ast.FormattedValue) and
                   isinstance(v.value, ast.Name) and v.conversion == -1 and
                   v.format_spec is None for v in node.values)
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)):
        return False
    parts, stack = [], [node]
    while stack:
        part = stack.pop()
        if isinstance(part, ast.BinOp) and isinstance(part.op, ast.Add):
            stack += [part.left, part.right]
        else:
            parts.append(part)
    strings = [p for p in parts if isinstance(p, ast.Constant) and type(p.value) is str
               or isinstance(p, ast.JoinedStr) and _string_built(p)]
    return bool(strings) and all(isinstance(p, ast.Name) or p in strings for p in parts)


def spread_names(defined: Any) -> tuple[set[str], set[str]]:
    """The names ``defined`` spreads into calls: with ``**`` (``f(v, **kw)``) and with
    ``*`` (``h(*xs)``)."""
    calls = [node for node in ast.walk(defined) if isinstance(node, ast.Call)]
    double = {k.value.id for node in calls for k in node.keywords
              if k.arg is None and isinstance(k.value, ast.Name)}
    single = {a.value.id for node in calls for a in node.args
              if isinstance(a, ast.Starred) and isinstance(a.value, ast.Name)}
    return double, single


def matched_names(defined: Any) -> tuple[set[str], set[str]]:
    """The names ``defined`` matches on (``match spec:``) with a mapping pattern
    (``case {"kind": "l2"}:``: their keys are the call's) and with a sequence pattern
    (``case (a, b):``: their length is): ``match_patterns.py`` decides these cases
    when the code is generated."""
    mapped: set[str] = set()
    sequenced: set[str] = set()
    for node in ast.walk(defined):
        if not (isinstance(node, ast.Match) and isinstance(node.subject, ast.Name)):
            continue
        for case in node.cases:
            for part in ast.walk(case.pattern):
                if isinstance(part, ast.MatchMapping):
                    mapped.add(node.subject.id)
                elif isinstance(part, ast.MatchSequence):
                    sequenced.add(node.subject.id)
    return mapped, sequenced


def structure_names(fn: Any) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """(dicts whose keys ``fn``'s code needs, strings it deletes by, sequences it
    spreads with ``*``), read once per code object."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return frozenset(), frozenset(), frozenset()
    found = _NAMES.get(code)
    if found is None:
        defined = syntax.function_node(fn)
        if defined is None:
            found = (frozenset(), frozenset(), frozenset())
        else:
            _NAMES[code] = (frozenset(), frozenset(), frozenset())  # (recursion: none)
            merged, keys = merged_and_deleted(defined)
            double, single = spread_names(defined)
            mapped, sequenced = matched_names(defined)
            double, single = double | mapped, single | sequenced
            keys |= _keys_handed_on(fn, defined) | key_built_names(defined) | (
                plain_key_names(defined)) | string_read_names(defined)
            found = (frozenset(merged | double), frozenset(keys), frozenset(single))
        _NAMES[code] = found
    return found


def key_names(fn: Any) -> frozenset[str]:
    """``fn``'s parameters a dict key is built from (``d[f"w{name}"]``), in its body or
    in a function of its module it passes them to, at any depth."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return frozenset()
    found = _BUILT.get(code)
    if found is None:
        defined = syntax.function_node(fn)
        _BUILT[code] = frozenset()  # (recursion: none)
        found = frozenset() if defined is None else frozenset(key_built_names(defined) | (
            plain_key_names(defined)) | _keys_handed_on(fn, defined, key_names))
        _BUILT[code] = found
    return found


def int_key_names(fn: Any) -> frozenset[str]:
    """``fn``'s parameters a key is built from in its own body where an int builds it
    too (``d[f"W{i}"]``, ``for i in range(n): d[f"W{i}"]``): given an int, the
    transform is made per call's int."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return frozenset()
    found = _INTS.get(code)
    if found is None:
        defined = syntax.function_node(fn)
        found = _INTS[code] = frozenset() if defined is None else frozenset(
            built_names(defined))
    return found


def _keys_handed_on(fn: Any, defined: Any, needs: Any = None) -> set[str]:
    """``fn``'s parameters it passes to a function of its module that deletes by them
    (``pops(x, d, name)`` where ``pops`` runs ``d.pop(name)``), at any depth (or, with
    ``needs``, that ``needs(callee)`` names)."""
    code = fn.__code__
    params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    out = set()
    for node in ast.walk(defined):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            continue
        callee = fn.__globals__.get(node.func.id)
        if not isinstance(callee, types.FunctionType) or callee is fn:
            continue
        needed = structure_names(callee)[1] if needs is None else needs(callee)
        if not needed:
            continue
        names = callee.__code__.co_varnames[:callee.__code__.co_argcount]
        passed = [(names[i] if i < len(names) else None, a) for i, a in enumerate(node.args)]
        passed += [(k.arg, k.value) for k in node.keywords]
        out |= {a.id for target, a in passed if target in needed and isinstance(
            a, ast.Name) and a.id in params}
    return out


_NAMES: "weakref.WeakKeyDictionary[Any, tuple]" = weakref.WeakKeyDictionary()
_BUILT: "weakref.WeakKeyDictionary[Any, frozenset]" = weakref.WeakKeyDictionary()
_INTS: "weakref.WeakKeyDictionary[Any, frozenset]" = weakref.WeakKeyDictionary()
_COPIES: dict[tuple, Any] = {}


def deleted_parameters(fn: Any) -> frozenset[str]:
    """The parameters ``fn`` deletes items from in place (``del d[k]``, ``d.pop(k)`` of
    a dict parameter it never rebinds): called from emitted code, the user's function
    would change the dict its caller passed."""
    code = getattr(fn, "__code__", None)
    defined = syntax.function_node(fn) if code is not None else None
    if defined is None:
        return frozenset()
    merged, _ = merged_and_deleted(defined)
    bound = {t.id for node in ast.walk(defined) if isinstance(node, (ast.Assign, ast.AugAssign,
                                                                    ast.AnnAssign))
             for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
             if isinstance(t, ast.Name)}
    deleting = {node.func.value.id for node in ast.walk(defined) if isinstance(
        node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "pop"
        and isinstance(node.func.value, ast.Name)} | {
        t.value.id for node in ast.walk(defined) if isinstance(node, ast.Delete)
        for t in node.targets if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)}
    params = set(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
    return frozenset((deleting & merged & params) - bound)


def passing_structure(n: Any, fn: Any, args: list, kwargs: dict, text: str,
                      node: Any) -> tuple:
    """``(fn, text)``: ``fn`` (a user's function the Normalizer ``n``'s function calls
    by the name ``text`` with the atoms ``args``, ``kwargs``) as a copy carrying the
    structure its code needs of what this call passes, where ``n`` knows it, and the
    name emitted code calls that copy by (a transform reading emitted code again
    finds the copy there); ``(fn, text)`` themselves where there is none."""
    made = _structured(n, fn, args, kwargs, node)
    if made is fn or not text.isidentifier():
        return made, text
    name, i = f"{text}_structured", 2
    while n.resolver.namespace.get(name, made) is not made or (
            name in n.names.taken and name not in n.resolver.namespace):
        name, i = f"{text}_structured_{i}", i + 1
    n.resolver.namespace[name] = made
    n.names.taken.add(name)
    return made, name


def _structured(n: Any, fn: Any, args: list, kwargs: dict, node: Any) -> Any:
    if not isinstance(fn, types.FunctionType) or hasattr(fn, BOUND):
        return fn
    merged, keys, starred = structure_names(fn)
    try:
        signature = inspect.signature(fn)
        bound = signature.bind(*args, **kwargs).arguments
    except (TypeError, ValueError):
        return fn
    # (a default left out that is a tuple of dicts: `specs=({"kind": "l2"}, ...)`, each
    # item's keys, so a loop over it unrolls and a callee matching on an item decides)
    found: dict[str, Any] = {
        name: SeqLength(len(p.default), items) for name, p in signature.parameters.items()
        if name not in bound and type(p.default) in (tuple, list) and (
            items := item_keys(p.default)) is not None}
    literal = {name: p.default for name, p in signature.parameters.items()
               if name not in bound and (literal_tuple(p.default) or type(
                   p.default) is str and name in keys)}  # (`names=("a",)`, `spec="a,b"`)
    if not (merged or keys or starred or found or literal):
        return fn
    if found:  # (their keys decide the copy: a change in place makes the code again)
        from .resolve import DefaultKeysVar  # (libcst: deferred: `import s2s` loads this)

        for name in found:
            kind = signature.parameters[name].kind
            n.resolver.depends_on(DefaultKeysVar(fn, name, kind is kind.KEYWORD_ONLY), node)
    found.update(literal)
    found.update({name: SeqLength(len(p.default)) for name, p in signature.parameters.items()
                  if found and name in starred and name not in bound and name not in found
                  and type(p.default) in (tuple, list)})  # (`match mode: case ("sgd", _)`)
    for name, value in bound.items():
        if name in keys and (text := _string(n, value)) is not None:
            found[name] = text
        elif name in int_key_names(fn) and (number := _int(n, value)) is not None:
            found[name] = number  # (`for i in range(n): d[f"W{i}"]`: unrolled for it)
        elif name in merged and (dict_keys := _dict_keys(n, value)) is not None:
            found[name] = DictKeys(dict_keys)
        elif name in starred and (length := _length(n, value)) is not None:
            found[name] = SeqLength(length)
    if not found:
        return fn
    changed = sorted(deleted_parameters(fn) & {k for k, v in found.items()
                                               if isinstance(v, DictKeys)})
    if changed:
        raise n.unsupported(
            node, f"`{fn.__name__}` deletes items from its dict parameter `{changed[0]}` in "
            "place (`del`, `.pop`): s2s runs your function as it is in the forward pass, "
            "where that would change the dict this call passes (and its gradient reads)",
            f"copy it first in `{fn.__name__}` (`{changed[0]} = dict({changed[0]})`), or "
            "delete in the function you transform")
    key = (fn, tuple(sorted((k, v if isinstance(v, (str, int, tuple)) else v.keys if isinstance(
        v, DictKeys) else ("length", v.n, v.items)) for k, v in found.items())))
    copy = _COPIES.get(key)
    if copy is None:
        copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__,
                                  fn.__closure__)
        copy.__kwdefaults__ = fn.__kwdefaults__
        copy.__qualname__, copy.__module__ = fn.__qualname__, fn.__module__
        copy.__dict__.update(fn.__dict__)
        setattr(copy, BOUND, found)
        _COPIES[key] = copy
    return copy


def item_keys(value: tuple | list) -> tuple | None:
    """The keys of each item of ``value`` where every item is a dict with string keys
    (``specs=({"kind": "l2", "weight": 0.5}, ...)``): code made per these keys reads
    each item as a dict whose keys are known (a loop over them unrolled, ``match spec:
    case {"kind": ...}`` in a callee given one decided); None otherwise."""
    if value and all(type(v) is dict and all(type(k) is str for k in v) for v in value):
        return tuple(tuple(v) for v in value)
    return None


def _string(n: Any, value: Any) -> str | None:
    """The string the atom ``value`` is, where known now: a constant, or a name bound
    to one (``name = "b"``: a parameter whose string this call gives)."""
    if type(getattr(n, "bound_strings", {}).get(getattr(value, "name", None))) is str:
        return n.bound_strings[value.name]  # (a parameter: this call's string)
    let = n.lets.get(getattr(value, "name", None) or "")
    if isinstance(let, Let) and let.prim == "identity" and isinstance(let.args[0], Const):
        value = let.args[0]
    if not (isinstance(value, Const) and type(value.value) is str):
        return None
    return _watched(n, value).value


def _watched(n: Any, const: Const) -> Const:
    """``const``, where it is a module or closure name's value (``NAME``,
    ``CFG["name"]``, ``cfg.name``, ``config.NAME``) the callee's copy is made for,
    with that name watched by value: the next call generates again when it holds
    another string or int (the copy reads ``params["w"]``, not the name)."""
    if const.text != repr(const.value):
        n.comps.static.watch_path(const.text)
    return const


def _int(n: Any, value: Any) -> int | None:
    """The int the atom ``value`` is, where known now (a constant, a name bound to one,
    a parameter whose int this call gives)."""
    if type(getattr(n, "bound_strings", {}).get(getattr(value, "name", None))) is int:
        return n.bound_strings[value.name]
    let = n.lets.get(getattr(value, "name", None) or "")
    if isinstance(let, Let) and let.prim == "identity" and isinstance(let.args[0], Const):
        value = let.args[0]
    if not (isinstance(value, Const) and type(value.value) is int):
        return None
    return _watched(n, value).value


def _dict_keys(n: Any, value: Any) -> tuple[str, ...] | None:
    if isinstance(value, Const) and type(value.value) is dict and all(
            type(k) is str for k in value.value) and value.text.split("[")[0].isidentifier():
        # (a module or closure dict, `SP[0]` of a loop over a tuple of them unrolled:
        # its keys decide the callee's code, and a change of them generates it again)
        n.comps.static.watch(value.text.split("[")[0], static=False)
        return tuple(value.value)
    name = getattr(value, "name", None)
    let = n.lets.get(name) if isinstance(name, str) else None
    index = let.params.get("index") if isinstance(let, Let) and let.prim == "getitem" else None
    if index is not None and not index.is_tuple and isinstance(index.items[0], Const) and (
            type(index.items[0].value) is int):  # (`specs[0]` of a tuple of dicts)
        made = n.lets.get(getattr(let.args[0], "name", None) or "")
        if isinstance(made, Let) and made.prim in ("make_tuple", "make_list") and (
                -len(made.args) <= index.items[0].value < len(made.args)) and (
                made.target not in n.lists and made.target not in n.buffer_root.values()):
            return _dict_keys(n, made.args[index.items[0].value])
    found = n.dicts.known(name) if isinstance(name, str) else None
    return tuple(found) if found is not None and all(isinstance(k, str) for k in found) \
        else None


def _length(n: Any, value: Any) -> int | None:
    name = getattr(value, "name", None)
    if not isinstance(name, str):
        return None
    for entered, length in getattr(n, "spread_lengths", {}).values():
        if entered == name:  # (a parameter whose length this call gives)
            return length
    let = n.lets.get(name)
    if let is not None and let.prim in ("make_tuple", "make_list") and \
            name not in n.buffer_root.values() and name not in n.lists:
        return len(let.args)
    return None


def compared_items(fn: Any) -> frozenset[str]:
    """``fn``'s parameters whose items by a string key its body compares (``spec["kind"]
    == "scale"``, ``spec["kind"] in (...)``): given a dict the caller built with strings
    among its items, a callee is made per call's strings (frontend/bound_params.py)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return frozenset()
    found = _COMPARED.get(code)
    if found is None:
        defined = syntax.function_node(fn)
        params = set(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
        found = _COMPARED[code] = frozenset() if defined is None else frozenset(
            sub.value.id for node in ast.walk(defined) if isinstance(node, ast.Compare)
            for sub in ast.walk(node) if isinstance(sub, ast.Subscript) and isinstance(
                sub.value, ast.Name) and sub.value.id in params and isinstance(
                sub.slice, ast.Constant) and isinstance(sub.slice.value, str))
    return found


_COMPARED: "weakref.WeakKeyDictionary[Any, frozenset]" = weakref.WeakKeyDictionary()
