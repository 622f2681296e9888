"""Reading a dict by its keys: ``kw.get(k, d)``, ``k in kw``, ``{**kw, "a": 1}``.

A dict's keys are its structure, which s2s fixes when it generates code, as JAX fixes
a pytree's per trace.  Where the keys are known when the function is normalized (a
``**kwargs`` parameter, normalized per call's keyword names; a dict the function
built) a key test is a constant: ``if "scale" in kw:`` lowers only the branch it
takes, as a literal test does (``literals.py``), and ``kw.get("scale", 2.0)`` is
``kw["scale"]`` or ``2.0``.  Where they are known only per call (a dict argument) the
test is a ``contains`` statement that the IR pass unrolling container loops
(``ir/unroll.py``) decides for each call's structure, dropping the branch not taken
before any transform reads it.  The same statement is ``x in y`` for a ``y`` known
per call: an array's ``in`` is NumPy's ``(y == x).any()``, a tuple's Python's.
"""

from __future__ import annotations

import builtins
from typing import Any

import libcst as cst

from ..errors import TransformError
from ..ir.nodes import Atom, Const, Index, Let, Var
from ..primitives import PRIMITIVES
from . import literals
from .bound_params import type_test
from .sequences import items_of
from .source import literal_value
from .static import NOVALUE


def keys_of(n: Any, node: Any) -> tuple | None:
    """The keys of the dict a local name denotes, when known now."""
    if not (isinstance(node, cst.Name) and node.value in n.local_names):
        return None
    return n.dicts.settled(n.env.get(node.value))


def named_tuple_of(n: Any, node: Any) -> bool:
    """Is ``node`` a local name of a NamedTuple the function built (held as the dict
    of its fields, but a tuple of its values to ``in``, ``tuple(p)``, ``list(p)``)?"""
    if not (isinstance(node, cst.Name) and node.value in n.local_names):
        return False
    let = n.lets.get(n.env.get(node.value, ""))
    return isinstance(let, Let) and let.prim == "make_dict" and bool(
        getattr(let.params.get("built"), "positional", False))


def is_dict_len(n: Any, obj: Any, node: cst.Call) -> bool:
    """Is ``node`` ``len(d)`` of a dict whose keys are known now?"""
    return obj is builtins.len and len(node.args) == 1 and not node.args[0].star and \
        node.args[0].keyword is None and keys_of(n, node.args[0].value) is not None


def decide(n: Any, node: Any) -> bool | None:
    """The truth of a test known when the function is normalized: a literal test, or
    one over dicts whose keys are known (``"k" in kw``, ``not kw``, ``len(kw) > 1``,
    with ``and``/``or``/``not``), or a name bound to such a test; None otherwise."""
    return literals.literal_test(node, leaf=lambda part: _structural(n, part))


def _structural(n: Any, node: Any) -> Any:
    if (typed := type_test(n, node)) is not NOVALUE:  # (`isinstance(scale, int)`)
        return typed
    if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and (
            node.value.value in getattr(n, "bound_literals", {})) and (
            item := n.comps.static.static_value(node)) is not NOVALUE:
        return item  # (`spec[1] > 1` of a tuple `spec=("poly", 3)` made per call)
    keys = keys_of(n, node)
    if keys is not None and not named_tuple_of(n, node):  # (`"k" in kw` tests its
        # keys, `not kw` that it has none; `in` over a NamedTuple, its values)
        return dict.fromkeys(keys)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and \
            node.func.value == "len" and "len" not in n.local_names and \
            is_dict_len(n, n.resolver.resolve_dotted(node.func)[0], node):
        return len(keys_of(n, node.args[0].value))
    if isinstance(node, cst.Name) and node.value in n.funcs.values and (
            n.funcs.values[node.value].choice is None):
        return n.funcs.values[node.value].obj  # (`act is not None` of a function)
    fixed = _module_function_or_none(n, node)
    if fixed is literals.NOT_LITERAL:  # (`spec["kind"]`: this call's, bound_params.py)
        fixed = literals.bound_item_test(n, node)
    if fixed is not literals.NOT_LITERAL:  # (`ACT is not None`, `self.act is None`)
        return fixed
    if isinstance(node, cst.Name) and node.value in n.local_names and \
            node.value in n.env and _bound_once(n, node.value):
        # a name bound once, to a test decided above (`t = "k" in kw`) or a literal
        let = n.lets.get(n.env[node.value])
        if isinstance(let, Let) and let.prim == "identity" and isinstance(
                let.args[0], Const) and isinstance(let.args[0].value, (bool, str, int, type(None))):
            try:  # (only a text of literals: a module constant is read at each call)
                return literals.literal_of(cst.parse_expression(let.args[0].text))
            except cst.ParserSyntaxError:
                return literals.NOT_LITERAL
    return literals.NOT_LITERAL


def _module_function_or_none(n: Any, node: Any) -> Any:
    """A module's or a bound object's name holding a function or None (``ACT``,
    ``self.act``): its value, which decides ``ACT is not None`` now (the code is
    generated again when it changes, as for a comprehension's length); NOT_LITERAL
    for anything else (``ON = True`` stays a test made at each call)."""
    root = node
    while isinstance(root, cst.Attribute):
        root = root.value
    if not isinstance(root, cst.Name) or (root.value in n.local_names and not (
            root.value in n.resolver.aliases and root.value not in n.env)):
        return literals.NOT_LITERAL
    try:  # (read first without watching it: `if W > 0` of an array stays per call)
        value, _ = n.resolver.resolve_dotted(node)
    except TransformError:
        return literals.NOT_LITERAL
    if value is not None and not (callable(value) and not isinstance(value, type)):
        return literals.NOT_LITERAL
    value = n.comps.static.static_value(node)  # (watched: generated again on a change)
    if value is None or (callable(value) and not isinstance(value, type)):
        return value
    return literals.NOT_LITERAL


def _bound_once(n: Any, name: str) -> bool:
    """Does the function's text bind ``name`` exactly once, by ``=``?  (A name a loop
    rebinds holds another value in a later iteration, and after the loop.)"""
    counts = getattr(n, "_kwdicts_bindings", None)
    if counts is None:
        counts = n._kwdicts_bindings = {}

        class Count(cst.CSTVisitor):
            def _add(self, target: Any, weight: int) -> None:
                for t in _names(target):
                    counts[t] = counts.get(t, 0) + weight

            def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
                self._add(node.target, 1)

            def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
                self._add(node.target, 1)

            def visit_AugAssign(self, node: cst.AugAssign) -> None:
                self._add(node.target, 2)

            def visit_For(self, node: cst.For) -> None:
                self._add(node.target, 2)

            def visit_CompFor(self, node: cst.CompFor) -> None:
                self._add(node.target, 2)

            def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
                self._add(node.target, 2)

            def visit_AsName(self, node: cst.AsName) -> None:
                self._add(node.name, 2)

        n.p.node.visit(Count())
    # (a parameter this transform binds to None, frontend/bound_params.py: bound once)
    return counts.get(name, 0) + (name in getattr(n, "none_params", ())) == 1


def _names(target: Any) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [m for e in target.elements for m in _names(e.value)]
    if isinstance(target, cst.StarredElement):
        return _names(target.value)
    return []


def short_circuit(n: Any, node: cst.BooleanOperation) -> Any:
    """The operand ``a and b`` / ``a or b`` evaluates to when ``a`` is decided now
    (``"w" in kw and kw["w"] > 0`` reads ``kw["w"]`` only where the key is there), or
    the expression it is (``cfg or {...}``: ``cfg if cfg else {...}``); None where it
    is neither."""
    left = decide(n, node.left)
    if left is None and isinstance(node.operator, cst.Or) and isinstance(
            node.left, cst.Name) and isinstance(node.right, (cst.Dict, cst.List, cst.Tuple)):
        # `cfg or {"scale": 1.5}` (a None default): a container is no operand of the
        # `or_` primitive; Python's value is `cfg if cfg else {...}`
        chosen = cst.IfExp(test=node.left, body=node.left, orelse=node.right)
        n.desugar.alias(chosen, node)
        return chosen
    if left is None:
        return None
    takes_left = (not left) if isinstance(node.operator, cst.And) else left
    return node.left if takes_left else node.right


def get(n: Any, node: cst.Call, base: Atom, target: str | None) -> Atom | None:
    """``d.get(k)`` / ``d.get(k, default)``: ``d[k]`` or the default, chosen now where
    ``d``'s keys are known, else per call; None where ``d`` is an array s2s computed."""
    if not isinstance(base, Var) or not isinstance(node.func, cst.Attribute):
        return None
    keys = n.dicts.settled(base.name)
    if keys is None and n.producers.get(base.name) not in (None, "getitem", "identity") and (
            base.name not in n.dicts.grown):
        return None  # (an array the function computed: its method `.get` is refused)
    args = node.args
    if not 1 <= len(args) <= 2 or any(a.star or a.keyword for a in args):
        raise n.unsupported(node, "a dict's `.get()` takes a key and an optional default",
                            'write d.get("k") or d.get("k", default)')
    key_node, owner = args[0].value, node.func.value
    default = args[1].value if len(args) == 2 else cst.Name("None")
    read = cst.Subscript(owner, [cst.SubscriptElement(cst.Index(key_node))])
    key = None if keys is None else literals.known(n, n.exprs.expr(key_node))
    if keys == ():  # (an empty dict: no key is in it)
        chosen: Any = default
    elif key is None:  # per call: `d[k] if k in d else default`, decided by ir/unroll.py
        chosen = cst.IfExp(test=cst.Comparison(key_node, [cst.ComparisonTarget(
            cst.In(), owner)]), body=read, orelse=default)
    else:
        chosen = read if _has(keys, key.value) else default
    _alias(n, chosen, node)
    return n.exprs.expr(chosen, target)


def _has(keys: tuple, key: Any) -> bool:
    try:
        return key in keys
    except TypeError:
        return False


def contains(n: Any, left: Atom, right: Atom, negated: bool, node: Any,
             target: str | None) -> Atom | None:
    """``x in y`` for a run-time ``y``: of an array the function computed, NumPy's
    ``np.any(y == x)`` (``ndarray.__contains__``); of an argument or an item of one,
    whose structure is known per call, a ``contains`` statement (see the module
    docstring); None where ``y`` is a constant."""
    if not isinstance(right, Var):
        return None
    origin = _origin(n, right.name)
    if origin == "array":
        found = n.calls.apply("equal", [right, left], {}, node, None, "==")
        out = n.calls.apply("any", [found], {}, node, None if negated else target, "np.any")
        return n.emit(n.exprs.target(target, "missing"), "not_", (out,), {}, node) \
            if negated else out
    if origin is None:
        raise n.unsupported(
            node, "`in` over a value whose structure s2s does not know when it "
            "generates the code (a list grown with `append`, the result of a call, a "
            "tuple a NumPy function returns)", "test an array: `np.any(y == x)` "
            "(NumPy's `x in y` for an array `y`); for a list, np.stack it first")
    name = n.exprs.target(target, "missing" if negated else "found")
    return n.emit(name, "contains", (right, left), {"negated": True} if negated else {},
                  node)


def _origin(n: Any, name: str) -> str | None:
    """What ``name`` is, seen from here: ``"array"`` (a NumPy primitive's result, or
    an element of one), ``"per call"`` (an argument, or an item or element of one:
    ir/unroll.py knows its structure), or None (anything else)."""
    if name in n.lists:
        return None
    let = n.lets.get(name)
    if let is None:
        return "per call" if name in n.draws.params else None  # (the parameters)
    if let.prim in ("identity", "getitem") and isinstance(let.args[0], Var):
        return _origin(n, let.args[0].name)
    if let.prim in ("dict_keys", "dict_merge") or let.prim in ("make_dict", "dict_set") and (
            name in n.dicts.grown):  # (made literals per call; loop_keys.py)
        return "per call"
    prim = PRIMITIVES.get(let.prim)
    if prim is None or prim.family == "structure" or prim.results is not None:
        return None
    return "array"


def dict_literal(n: Any, node: cst.Dict, target: str | None) -> Atom:
    """A dict literal, its ``**d`` elements spreading dicts of known keys (``{**kw,
    "a": 1}``), a key written twice keeping its first position and its last value, as
    Python does.  A ``**p`` of a dict whose keys are known per call (an argument)
    makes a ``dict_merge`` of the parts (``{**p, "w": w}``), which the IR pass
    unrolling container loops (``ir/unroll.py``) makes the literal of this call's
    keys."""
    items: dict[str, Atom] = {}
    parts: list[Atom] = []  # (with a per-call part: the dicts merged, in order)
    for element in node.elements:
        if isinstance(element, cst.StarredDictElement):
            atom = n.exprs.expr(element.value)
            let = n.lets.get(atom.name) if isinstance(atom, Var) else None
            if isinstance(let, Let) and let.prim == "make_dict" and "keys" in let.params:
                items.update(zip(let.params["keys"], let.args))
                continue
            keys = n.dicts.known(atom.name) if let is None and isinstance(atom, Var) else None
            if keys is not None:  # (a dict parameter whose keys this call gives)
                items.update((k, n.dicts.item(atom.name, keys, k, element)) for k in keys)
                continue
            if not isinstance(atom, Var):
                raise n.unsupported(element, "`**` spreads a dict",
                                    "spread a dict: `{**d, \"a\": 1}`")
            if items:
                parts.append(_literal(n, items, element))
                items = {}
            parts.append(atom)
        elif isinstance(element.key, cst.SimpleString):
            items[literal_value(element.key.value)] = n.exprs.expr(element.value)
        else:
            raise n.unsupported(element, "dict literals need constant string keys",
                                'write {"name": value, ...}')
    if not parts:
        return _literal(n, items, node, target)
    if items:
        parts.append(_literal(n, items, node))
    return n.emit(n.exprs.target(target, "merged"), "dict_merge", tuple(parts), {}, node)


def _literal(n: Any, items: dict[str, Atom], node: Any, target: str | None = None) -> Atom:
    return n.emit(n.exprs.target(target, "params"), "make_dict", tuple(items.values()),
                  {"keys": tuple(items)}, node)


def _alias(n: Any, tree: Any, node: Any) -> None:
    """Nodes s2s wrote for ``node`` report its position (the user's keep theirs)."""

    class Walk(cst.CSTVisitor):
        def on_visit(self, new: Any) -> bool:
            if new not in n.desugar.positions:
                n.desugar.alias(new, node)
            return True

    tree.visit(Walk())


def update_merge(n: Any, call: Any) -> bool:
    """``d.update(p)``, ``d.update(w=w)`` where the keys of ``d`` or of ``p`` are known
    only per call (a dict argument, a dict made from one): ``d = {**d, **p, "w": w}``,
    which the IR pass unrolling container loops makes a literal per call.  False for
    any other statement (``update_writes`` writes keys known now one by one)."""
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and
            call.func.attr.value == "update" and isinstance(call.func.value, cst.Name)):
        return False
    base = call.func.value
    if not n.dicts.built_per_call(base) and not (n.dicts.is_dict(base) and any(
            a.keyword is None and not a.star and not isinstance(a.value, cst.Dict)
            and keys_of(n, a.value) is None for a in call.args[:1])):
        return False
    parts: list[Any] = []
    for k, arg in enumerate(call.args):
        if arg.keyword is not None:
            parts.append(cst.DictElement(cst.SimpleString(repr(arg.keyword.value)),
                                         arg.value))
        elif arg.star or k > 0:
            raise n.unsupported(arg, "`.update` takes one dict and then keywords",
                                f"`{base.value}.update({{\"k\": v}})` or "
                                f"`{base.value}.update(k=v)`")
        else:
            parts.append(cst.StarredDictElement(arg.value))
    n.dicts.merged(base, parts, call)
    return True


def update_writes(n: Any, call: Any) -> list[Any] | None:
    """``d.update({"k": v}, j=w)`` (or ``d.update(e)`` of a dict whose keys are known)
    on a dict the function built: the writes it makes, ``d["k"] = v``, which the write
    checks then read (a dict another name shares, or an argument, is refused).  With
    more than one key every value is computed first, into a name of its own, as Python
    computes the arguments before it writes.  None where ``call`` is no such update."""
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and
            call.func.attr.value == "update" and n.dicts.is_dict(call.func.value)):
        return None
    base, pairs = call.func.value, []
    for k, arg in enumerate(call.args):
        if arg.keyword is not None:
            pairs.append((arg.keyword.value, arg.value))
        elif arg.star or k > 0:
            raise n.unsupported(arg, "`.update` takes one dict and then keywords",
                                f"`{base.value}.update({{\"k\": v}})` or "
                                f"`{base.value}.update(k=v)`")
        elif isinstance(arg.value, cst.Dict):
            for el in arg.value.elements:
                key = literals.literal_of(el.key) if isinstance(
                    el, cst.DictElement) else None
                if not isinstance(key, str):
                    raise n.unsupported(
                        el, f"s2s writes into `{base.value}` by keys it knows when it "
                        "transforms the code: a key here is not a string literal",
                        f"write `{base.value}[\"k\"] = v` for each string key")
                pairs.append((key, el.value))
        else:
            keys = keys_of(n, arg.value)
            if keys is None:
                raise n.unsupported(
                    arg, f"the keys `{base.value}.update` would add are not known when "
                    "s2s transforms the code", "update from a dict the function built, "
                    "a dict literal or keywords")
            pairs += [(key, cst.Subscript(arg.value, [cst.SubscriptElement(
                cst.Index(cst.SimpleString(repr(key))))])) for key in keys]
    writes, values = [], []
    for key, value in pairs:
        if len(pairs) > 1:
            name = n.names.fresh(f"{base.value}_{key}" if key.isidentifier() else base.value)
            n.local_names.add(name)
            values.append(cst.Assign([cst.AssignTarget(cst.Name(name))], value))
            value = cst.Name(name)
        target = cst.Subscript(base, [cst.SubscriptElement(cst.Index(
            cst.SimpleString(repr(key))))])
        writes.append(cst.Assign([cst.AssignTarget(target)], value))
    return values + writes


def view_list(n: Any, call: cst.Call) -> cst.ListComp | None:
    """``list(d.values())`` / ``list(d.items())`` of a dict whose keys are known only
    per call (an argument): the comprehension ``[v for v in d.values()]``, the same list
    in Python, which lowers as the loop over the dict's keys (unrolled per call, in the
    caller's order).  None for anything else (a dict whose keys are known now is read
    by them)."""
    if len(call.args) != 1 or call.args[0].keyword or call.args[0].star:
        return None
    view = call.args[0].value
    if not (isinstance(view, cst.Call) and not view.args and isinstance(
            view.func, cst.Attribute) and view.func.attr.value in ("values", "items")
            and isinstance(view.func.value, cst.Name)) or keys_of(
            n, view.func.value) is not None:
        return None
    taken = set(n.env) | set(n.local_names)
    names = []
    for stem_ in (("key", "value") if view.func.attr.value == "items" else ("value",)):
        while stem_ in taken:
            stem_ += "_"
        names.append(cst.Name(stem_))
    if len(names) == 1:
        elt: Any = names[0]
        target: Any = cst.Name(names[0].value)
    else:
        elt = cst.Tuple([cst.Element(m) for m in names])
        target = cst.Tuple([cst.Element(cst.Name(m.value)) for m in names])
    made = cst.ListComp(elt, cst.CompFor(target, view))
    n.desugar.alias_tree(made, call)
    return made


_KEY_COPIES = {builtins.tuple: "tuple", builtins.list: "list", builtins.sorted: "list"}


def keys_call(n: Any, obj: Any, call: cst.Call, target: str | None) -> Atom | None:
    """``tuple(p)``, ``sorted(p)``, ``list(p.keys())`` (``tuple``, ``sorted`` of the
    view too; ``sorted(..., reverse=True)``): a dict's keys as a tuple or list of
    strings.  Where the keys are known now (a dict the function built) the literal
    itself; where they are known per call (a dict argument) a ``dict_keys`` statement
    that the IR pass unrolling container loops (``ir/unroll.py``) makes that literal
    for each call's structure, in the caller's key order, as Python's.  (``tuple(t)``
    of a tuple or list argument is its items, there too.)  None for any other call:
    ``list(x)`` of an array or a list is the ``list`` primitive, ``tuple(x.shape)``
    Python over a shape."""
    kind = _KEY_COPIES.get(obj) if isinstance(obj, type) or obj is builtins.sorted else None
    if kind is None or not call.args or call.args[0].keyword or call.args[0].star:
        return None
    reverse = False
    for extra in call.args[1:]:
        value = literals.literal_of(extra.value)
        if obj is not builtins.sorted or extra.keyword is None or \
                extra.keyword.value != "reverse" or type(value) is not bool:
            return None
        reverse = value
    arg = call.args[0].value
    if obj is builtins.tuple and isinstance(arg, cst.Attribute) and \
            arg.attr.value == "shape":  # tuple(x.shape): the shape, a tuple already
        shape = n.exprs.expr(arg)
        if isinstance(shape, Var) and shape.name in n.shapes:
            return shape if target is None else n.emit(target, "identity", (shape,), {},
                                                        call)
    method = arg.func.attr.value if isinstance(arg, cst.Call) and not arg.args and \
        isinstance(arg.func, cst.Attribute) else None
    view = method in ("keys", "values", "items")
    if method == "values" and obj is builtins.sorted or method in ("values", "items") and \
            obj is builtins.list and not reverse:
        return None  # (sorted values: refused; `list(p.values())`: kwdicts.view_list)
    receiver = arg.func.value if view else arg
    if not view and named_tuple_of(n, arg):
        return None  # (`tuple(p)` of a NamedTuple: its values, ir/unroll_dicts.py)
    if not view and not (_local_root(n, arg) and (obj is not builtins.list or keys_of(
            n, arg) is not None)):
        return None  # (`list(xs)` of a list or an array: the `list` primitive)
    known = keys_of(n, receiver)
    base = n.exprs.expr(receiver)
    if not view and (isinstance(base, Const) or base.name in n.shapes):
        return None  # (`tuple(shape)`: Python over a shape)
    order = "sorted" if obj is builtins.sorted else None
    part = method if method in ("values", "items") else "keys"
    if known is not None:
        keys = sorted(known) if order else list(known)
        keys = keys[::-1] if reverse else keys
        return n.emit(n.exprs.target(target, part), f"make_{kind}",
                      _parts(n, base, keys, part, call), {}, call)
    params: dict[str, Any] = {"copy": kind}
    if order or reverse:
        params.update(order=order, reverse=reverse)
    if part != "keys":
        params["view"] = part
    return n.emit(n.exprs.target(target, part), "dict_keys", (base,), params, call)


def _parts(n: Any, base: Atom, keys: list, part: str, node: Any) -> tuple:
    """The keys, the values (``base[k]``) or the items (``(k, base[k])``) of a dict
    whose keys are known now."""
    out: list[Atom] = []
    for k in keys:
        key = Const(k, repr(k))
        if part == "keys":
            out.append(key)
            continue
        value = n.emit(n.names.fresh(k if k.isidentifier() else "item"), "getitem",
                       (base,), {"index": Index((key,), False)}, node)
        out.append(value if part == "values" else n.emit(
            n.names.fresh("pair"), "make_tuple", (key, value), {}, node))
    return tuple(out)


def _local_root(n: Any, node: Any) -> bool:
    """Is ``node`` a local name, or an item of one (``p["layers"]``)?"""
    while isinstance(node, cst.Subscript):
        node = node.value
    return isinstance(node, cst.Name) and node.value in n.local_names


def _first_of_iterator(n: Any, inner: Any) -> Any:
    """``next(iter(zip(a, b)))``: ``(a[0], b[0])``; None for an ``inner`` that is no
    iterator call; refused for another iterator (map, filter, enumerate, reversed)."""
    if not isinstance(inner, cst.Call) or not isinstance(inner.func, cst.Name) or (
            inner.func.value in n.local_names):
        return None
    found = n.resolver.lookup_global(inner.func)
    if found is builtins.zip and inner.args and not any(
            a.star or a.keyword for a in inner.args):
        return cst.Tuple([cst.Element(_at(a.value, 0)) for a in inner.args])
    if found in (builtins.zip, builtins.enumerate, builtins.map, builtins.filter,
                 builtins.reversed):
        raise n.unsupported(inner, f"`next(iter({inner.func.value}(...)))` (the first "
                            "item of an iterator) is supported for `zip(a, b)` only",
                            "index the first item (`(0, x[0])` for enumerate, "
                            "`f(x[0])` for map), or walk it in a `for` loop")
    return None


def python_idiom(n: Any, obj: Any, call: cst.Call) -> Any:
    """The expression s2s lowers for a Python idiom over containers (None for any
    other call): ``next(iter(v))`` is ``tuple(v)[0]`` (a dict's first key, a view's
    first item, a list's first element); ``max(p)``/``min(p)`` of a dict's keys,
    ``sorted(p)[-1]``/``[0]``; ``zip(*pairs)`` of a literal list of tuples, the list
    of its columns; ``dict.fromkeys(keys, v)``, ``{k: v for k in keys}``."""
    args = call.args
    if any(a.keyword for a in args):
        return None
    made: Any = None
    if obj is builtins.next and len(args) == 1 and not args[0].star and isinstance(
            args[0].value, cst.Call) and len(args[0].value.args) == 1 and isinstance(
            args[0].value.func, cst.Name) and args[0].value.func.value not in \
            n.local_names and n.resolver.lookup_global(args[0].value.func) is builtins.iter:
        inner = args[0].value.args[0].value
        made = _first_of_iterator(n, inner) or cst.Subscript(cst.Call(cst.Name(
            "tuple"), [cst.Arg(inner)]), [cst.SubscriptElement(cst.Index(cst.Integer("0")))])
    elif obj in (builtins.max, builtins.min) and len(args) == 1 and not args[0].star and \
            isinstance(args[0].value, cst.Name) and (n.env.get(
                args[0].value.value) in n.draws.params or n.dicts.built_per_call(
                args[0].value)):  # (an argument, or a dict made from one: per call)
        last = cst.UnaryOperation(cst.Minus(), cst.Integer("1"))
        made = cst.Subscript(cst.Call(cst.Name("sorted"), [args[0]]), [cst.SubscriptElement(
            cst.Index(last if obj is builtins.max else cst.Integer("0")))])
    elif obj is builtins.zip and len(args) == 1 and args[0].star == "*":
        width = _columns(n, args[0].value)
        if width is None:  # (the list's length is known when it runs: a loop made it)
            raise n.unsupported(call, "`zip(*rows)` transposes a list of tuples, and s2s "
                                "knows the length of this one only when the function runs",
                                "build each column as its own list (`xs = [...]`, "
                                "`ys = [...]`), or write the rows as a literal list")
        rows, count = width
        made = cst.List([cst.Element(cst.Tuple([cst.Element(_at(_at(
            args[0].value, i), j)) for i in range(rows)])) for j in range(count)])
    elif obj == dict.fromkeys and 1 <= len(args) <= 2 and not any(a.star for a in args):
        value = args[1].value if len(args) == 2 else cst.Name("None")
        made = cst.DictComp(cst.Name("key_"), value, cst.CompFor(
            cst.Name("key_"), args[0].value))
    if made is not None:
        n.desugar.alias_tree(made, call)
    return made


def _at(node: Any, k: int) -> cst.Subscript:
    return cst.Subscript(node, [cst.SubscriptElement(cst.Index(cst.Integer(str(k))))])


def _columns(n: Any, node: Any) -> tuple[int, int] | None:
    """``(rows, columns)`` of a list or tuple of tuples whose lengths are known now
    (a literal, a name bound to one), all of one length; None otherwise."""
    if not isinstance(node, (cst.Name, cst.List, cst.Tuple)):
        return None
    found = items_of(n, n.exprs.expr(node))
    if found is None:
        return None
    widths = set()
    for item in found[1]:
        inner = items_of(n, item)
        widths.add(None if inner is None else len(inner[1]))
    if len(widths) != 1 or None in widths:
        return None
    return len(found[1]), widths.pop()


def view_value(n: Any, node: cst.Call, target: str | None) -> Atom | None:
    """``p.values()`` (``.items()``, ``.keys()``) as a value, not a loop's iterable
    (``a, b = p.values()``): the tuple of its items, ``tuple(p.values())``; None where
    ``node`` is no such view of a name."""
    func = node.func
    if node.args or not isinstance(func, cst.Attribute) or not isinstance(
            func.value, cst.Name):
        return None
    view = cst.Call(cst.Name("tuple"), [cst.Arg(node)])
    n.desugar.alias(view, node)
    return keys_call(n, builtins.tuple, view, target)
