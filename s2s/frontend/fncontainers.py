"""Tuples, lists and dicts of functions: ``layers = [np.tanh, relu]`` in the body,
``ACTIVATIONS = {"relu": relu, ...}`` at module level.

A container of functions is not data a derivative can carry, but what it is used
for has a plain meaning that s2s lowers when it transforms the function:

- an item read with a key known now (``layers[0]``, ``ACTIVATIONS["relu"]``) is that
  function, as if it were named;
- ``for g in layers:`` is unrolled, one copy of the body per function (the body's
  ``g`` replaced by ``layers[k]``), and ``g`` denotes the last one after the loop,
  as in Python;
- a comprehension over it unrolls the same way (``frontend/comprehensions.py``,
  through ``items``).

A module-level container is read again at each call: the fingerprint of its name
(``resolve.FreeVar``) includes its functions, so rebinding an item generates again.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from .comprehensions import substitute
from .desugar import lower_in_place
from .dicts import _jumps, assigned_names
from .fnslices import unroll_run_time_slice
from .fnvalues import FnValue
from .named_attrs import getattr_reads
from .source import literal_value
from .static import NOVALUE

_SEQUENCE = (cst.Tuple, cst.List)


class FunctionContainers:
    """The containers of functions one function's body binds (``name -> items``,
    each item ``(key, FnValue)``; keys are ints for a tuple or list)."""

    def __init__(self, n: Any) -> None:
        self.n = n  # the Normalizer
        self.local: dict[str, list[tuple[Any, FnValue]]] = {}
        self.kinds: dict[str, type] = {}  # (a tuple's or a list's: as passed on)

    # ---- binding --------------------------------------------------------------------

    def bind(self, target: Any, value: Any) -> bool:
        """``name = [f, g]`` (a tuple, list or dict literal of functions only):
        remembered instead of lowered; False (nothing done) for anything else."""
        if not isinstance(target, cst.Name):
            return False
        items = self._literal_items(value)
        if items is None:
            self.local.pop(target.value, None)
            return False
        self.n.stmts.check_name(target)
        self.n.env.pop(target.value, None)
        self.local[target.value] = items
        while isinstance(value, cst.BinaryOperation):  # (`[f] + [g]`: the left's kind)
            value = value.left
        self.kinds[target.value] = list if isinstance(value, (cst.List, cst.ListComp)) \
            else self.kinds.get(_root(value), tuple) if isinstance(value, (
                cst.Subscript, cst.Name)) else tuple
        return True

    def _literal_items(self, value: Any) -> list[tuple[Any, FnValue]] | None:
        sliced = self.sliced(value)
        if sliced is not None:  # (`first = ops[:2]`: a list of those functions)
            return [(k, fv) for k, (_, fv) in enumerate(sliced)]
        if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add):
            parts = [list(self.local[v.value]) if isinstance(v, cst.Name) and v.value in (
                self.local) else self._literal_items(v) for v in (value.left, value.right)]
            if None in parts or not all(isinstance(k, int) for p in parts for k, _ in p):
                return None  # (`[make(1.0)] + [make(0.5)]`: the two lists' functions)
            return [(k, fv) for k, (_, fv) in enumerate(parts[0] + parts[1])]
        if isinstance(value, cst.ListComp) and isinstance(value.elt, (cst.Lambda, cst.Call)):
            elements = self.n.comps.unrolled(value)  # (`[lambda t, k=k: k * t for k in
            if not elements:  # range(3)]`: a list of three lambdas)
                return None
            value = cst.List([cst.Element(e) for e in elements])
        if isinstance(value, _SEQUENCE):
            elements = list(value.elements)
            if not elements or any(isinstance(e, cst.StarredElement) for e in elements):
                return None
            pairs = [(k, e.value) for k, e in enumerate(elements)]
        elif isinstance(value, cst.Dict):
            pairs = []
            for e in value.elements:
                if not isinstance(e, cst.DictElement):
                    return None
                key = self.n.comps.static.static_value(e.key)
                if key is NOVALUE or not isinstance(key, (str, int)):
                    return None
                pairs.append((key, e.value))
            if not pairs:
                return None
        else:
            return None
        if not all(_maybe_function(v) or isinstance(v, cst.Call) for _, v in pairs):
            return None
        fvs = [(k, self.n.funcs.value_of(v)) for k, v in pairs]
        if any(fv is None for _, fv in fvs):
            return None
        return fvs  # type: ignore[return-value]

    # ---- reading ----------------------------------------------------------------------

    def sliced(self, node: Any) -> list[tuple[Any, FnValue]] | None:
        """The ``(key, FnValue)`` items ``ops[:2]`` selects, a slice with bounds known
        now of a local (or module-level) tuple or list of functions (Python's own
        slicing picks the keys); None for anything else."""
        if not (isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name)
                and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice)):
            return None
        pairs = self.local.get(node.value.value) if node.value.value in self.local else (
            None if node.value.value in self.n.local_names else self._module_items(
                node.value, node))  # (`for act in ACTS[1:]` of a module list too)
        if pairs is None or not all(isinstance(k, int) for k, _ in pairs):
            return None
        part = node.slice[0].slice
        bounds = [None if b is None else self.n.comps.static.static_value(b)
                  for b in (part.lower, part.upper, part.step)]
        if not all(b is None or type(b) is int for b in bounds):
            raise self.n.unsupported(
                part, f"`{node.value.value}` holds functions, and which of them this "
                "slice takes would be known only when the function runs",
                "slice it with constant bounds (`ops[:2]`), or apply the items in a "
                "loop (`for op in ops[:k]: x = op(x)`)")
        if bounds[2] == 0:
            raise self.n.unsupported(part, "slice step cannot be zero", "use a step of 1")
        return [pairs[k] for k in range(len(pairs))[slice(*bounds)]]

    def item(self, node: cst.Subscript) -> FnValue | None:
        """The function ``node`` reads (``layers[0]``, ``ACTS["relu"]``), if it is one."""
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            return None
        base = node.value
        if isinstance(base, (cst.Dict, cst.Tuple, cst.List)):
            return self._literal_item(base, node)
        held = _held_item(self.n, base, node.slice[0].slice.value)
        if held is not None:  # (`cfg["act"]` of a parameter holding functions)
            return held or None
        local = isinstance(base, cst.Name) and base.value in self.local
        if not local and (not isinstance(base, (cst.Name, cst.Attribute)) or _root(base)
                          in self.n.local_names and not _bound_self(self.n, _root(base))):
            return None  # (`self.layers[0]` of a method bound to an object: its item)
        key = self.n.comps.static.static_value(node.slice[0].slice.value)
        if key is NOVALUE:
            pairs = self.local[base.value] if local else self._module_items(base, node)
            if pairs is None:
                return None
            return self._chosen_at_run_time(node, pairs)
        if local:
            found = dict(self.local[base.value])
            if key not in found and isinstance(key, int) and -len(found) <= key < 0:
                key += len(found)
            if key not in found:
                raise self.n.unsupported(node, f"`{base.value}` has no item {key!r}",
                                         "check the index")
            return self.n.funcs.resolved(found[key], node)
        try:
            owner, text = self.n.resolver.resolve_dotted(base)
        except Exception:
            return None
        if not isinstance(owner, (tuple, list, dict)):
            return None
        try:
            obj = owner[key]
        except (IndexError, KeyError, TypeError):
            return None
        if not callable(obj):
            return None
        fv = self.n.funcs.of_object(obj, f"{text}[{key!r}]", node)
        if fv is not None:
            self.n.resolver.bind_namespace(text.split(".")[0], node)
        return fv

    def _literal_item(self, base: Any, node: cst.Subscript) -> FnValue | None:
        """``{"tanh": np.tanh, "softplus": lambda v: ...}[CONFIG["act"]]`` (or a tuple
        or list literal's item) by a key known now (module constants: the code is made
        again when they change): the function chosen, as Python's lookup picks it
        (its other items, functions, are made and dropped); by a key known only when
        the function runs, each call an ``if`` over the keys; None where an item may be
        no function."""
        if isinstance(base, cst.Dict):
            if not all(isinstance(e, cst.DictElement) and isinstance(
                    e.key, cst.SimpleString) for e in base.elements):
                return None
            pairs = [(literal_value(e.key.value), e.value) for e in base.elements]
        else:
            if any(isinstance(e, cst.StarredElement) for e in base.elements):
                return None
            pairs = list(enumerate(e.value for e in base.elements))
        if not pairs or not all(_maybe_function(v) for _, v in pairs):
            return None
        key = self.n.comps.static.static_value(node.slice[0].slice.value)
        if key is NOVALUE:  # (an `if` over the keys, as for a module's dict)
            fvs = [(k, self.n.funcs.value_of(v)) for k, v in dict(pairs).items()]
            return None if any(fv is None for _, fv in fvs) else self._chosen_at_run_time(
                node, fvs)
        found = dict(pairs)
        if isinstance(key, int) and not isinstance(base, cst.Dict) and -len(found) <= key < 0:
            key += len(found)
        if type(key) not in (str, int) or key not in found:
            raise self.n.unsupported(node, f"this {type(base).__name__.lower()} has no "
                                     f"item {key!r}", "check the key")
        return self.n.funcs.value_of(found[key])

    def _module_items(self, base: Any, node: Any) -> list[tuple[Any, FnValue]] | None:
        """The ``(key, FnValue)`` items of a module-level tuple, list or dict of
        functions ``base`` names (``ACTS``), or None where it is not one."""
        try:
            owner, text = self.n.resolver.resolve_dotted(base)
        except Exception:
            return None
        if not isinstance(owner, (tuple, list, dict)) or not owner:
            return None
        keys = list(owner) if isinstance(owner, dict) else list(range(len(owner)))
        if isinstance(owner, dict) and not all(isinstance(k, (str, int)) for k in keys):
            return None
        pairs = []
        for key in keys:
            obj = owner[key]
            fv = self.n.funcs.of_object(obj, f"{text}[{key!r}]", node) if callable(
                obj) else None
            if fv is None:
                return None
            pairs.append((key, fv))
        self.n.resolver.bind_namespace(text.split(".")[0], node)
        return pairs

    def _chosen_at_run_time(self, node: cst.Subscript, pairs: list) -> FnValue:
        """``ACTS[name]`` with a key known only when the function runs (a string
        argument): the key is checked as Python would (``KeyError``/``IndexError``),
        then each call of the item is an ``if`` over the keys, one function per branch,
        as ``act = f if name == "a" else g`` is."""
        keynode = node.slice[0].slice.value
        by_dict = isinstance(pairs[0][0], str) or not all(
            k == i for i, (k, _) in enumerate(pairs))
        if not isinstance(keynode, cst.Name):  # (the key computed once)
            name = self.n.names.fresh("key")
            self.n.local_names.add(name)
            self._lower([cst.SimpleStatementLine([cst.Assign(
                [cst.AssignTarget(cst.Name(name))], keynode)])], node)
            keynode = cst.Name(name)
        size = len(pairs)
        if by_dict:
            keys = cst.Tuple([cst.Element(_literal(k)) for k, _ in pairs])
            guard = f"if {_spell(keynode)} not in {_spell(keys)}:\n    raise KeyError({_spell(keynode)})\n"
        else:
            guard = (f"if not -{size} <= {_spell(keynode)} < {size}:\n"
                     f"    raise IndexError('index out of range')\n")
        self._lower([cst.parse_statement(guard)], node)
        chosen = pairs[-1][1]
        for key, fv in reversed(pairs[:-1]):
            spelled = (f"{_spell(keynode)} == {key!r}" if by_dict
                       else f"{_spell(keynode)} % {size} == {key}")
            test = cst.parse_expression(spelled)
            self.n.desugar.alias_tree(test, node)
            chosen = FnValue(None, "choice", choice=(self.n.exprs.expr(test), fv, chosen))
        return chosen

    def _lower(self, statements: list[Any], node: Any) -> None:
        lower_in_place(self.n, statements, node)

    def items(self, node: Any) -> list[tuple[Any, Any]] | None:
        """``(spelling, key)`` per item of a local container ``node`` names (for a
        loop or comprehension over it); None where ``node`` is not one."""
        sliced = self.sliced(node)
        if sliced is not None:  # (`for op in ops[:2]`: those items, as `ops[k]`)
            node = node.value
        elif not isinstance(node, cst.Name) or node.value not in self.local:
            return None
        out = []
        for key, _ in self.local[node.value] if sliced is None else sliced:
            if isinstance(key, str):
                out.append((cst.SimpleString(repr(key)), key))  # (a dict walks its keys)
                continue
            spelling = cst.Subscript(cst.Name(node.value), [cst.SubscriptElement(
                cst.Index(cst.Integer(str(key))))])
            self.n.desugar.alias(spelling, node)
            out.append((spelling, NOVALUE))
        return out

    def refuse_as_value(self, node: cst.Name) -> None:
        """A container of functions read other than by a constant key or a loop."""
        if node.value in self.local:
            raise self.n.unsupported(
                node, f"`{node.value}` holds functions, which are not values a derivative "
                "can carry", f"index it with a constant (`{node.value}[0]`), or loop over "
                "it (`for g in ...:`), where each item is called")

    # ---- loops ------------------------------------------------------------------------

    def unroll(self, node: cst.For) -> bool:
        """``for g in <functions>:`` (also ``for i, g in enumerate(...)``, ``zip``)
        unrolled, one copy of the body per item, the body's ``g`` spelled as the item
        (``layers[1]``); after it ``g`` is the last function, as in Python.  False
        (nothing emitted) for a loop that walks no functions (nor characters)."""
        if node.orelse is not None or node.asynchronous is not None:
            return False
        if unroll_run_time_slice(self, node):  # (`for op in ops[:k]`: fnslices.py)
            return True
        items = self.items(node.iter)
        if items is None:
            items = self.n.comps.static.static_items(node.iter)
        if items == [] and isinstance(node.target, cst.Name) and _keys_from(
                node, {node.target.value}):
            return True  # (`for i in range(0)` keying a dict: the body never runs)
        if not items:
            return False
        tables, functions = [], None
        for spelling, value in items:
            table: dict[str, Any] = {}
            try:
                self.n.comps.bind(node.target, spelling, value, table)
            except Exception:
                return False
            names = {name for name, spelled in table.items() if _is_function(self, spelled)}
            if functions is not None and names != functions:
                return False
            functions = names
            tables.append(table)
        # (over characters, `for c in "xy":`, too: each copy's tests of `c` are then
        # decided when transforming, and no code indexes a string when it runs)
        text = all(isinstance(value, str) and len(value) == 1 for _, value in items)
        # (and over constants an f-string of the body formats, `for i, t in
        # enumerate(terms): w = weights.get(f"w{i}", 1.0)`, or whose variables key a
        # subscript by a built string, `params[f"W{i}"]`: each copy's key is known)
        if not functions and not text and not _formats(node.body, {
                name for name in tables[0] if all(isinstance(
                    t[name], (cst.Integer, cst.SimpleString)) for t in tables)}) \
                and not _keys_from(node, set(tables[0])) and not getattr_reads(
                    node.body, set(tables[0])):
            return False
        if not functions and (_jumps(node.body) or set(tables[0]) & assigned_names(
                node.body)):
            return False
        if _jumps(node.body):
            raise self.n.unsupported(
                node, "a loop over functions is unrolled, and a `break`, `continue` or "
                "`return` of it is not supported yet", "use an `if` in the body")
        reassigned = set(tables[0]) & assigned_names(node.body)
        if reassigned:
            raise self.n.unsupported(
                node.target, f"the body assigns the loop variable `{min(reassigned)}`",
                "give the new value another name")
        alias = self.n.desugar.alias
        outer, lowered = self.n.out, []
        for table in tables:
            lowered += self.n.stmts.block([substitute(s, table, alias)
                                           for s in node.body.body])
        self.n.out = outer
        outer += lowered
        # after the loop its variables hold the last item's values, as in Python
        for name, spelled in tables[-1].items():
            if name in functions:
                self.n.funcs.bind(name, self.n.funcs.value_of(spelled), node.target)
            else:
                self.n.stmts.assign(cst.Name(name), spelled)
        return True


def _formats(body: Any, names: set[str]) -> bool:
    """Does an f-string of ``body`` have a field that is one of ``names``?"""
    found = []

    class Finder(cst.CSTVisitor):
        def visit_FormattedStringExpression(self, field: Any) -> None:
            expr = field.expression
            found.append(isinstance(expr, cst.Name) and expr.value in names)

    body.visit(Finder())
    return any(found)


def _held_item(n: Any, base: Any, key_node: Any) -> Any:
    """The function ``base[key]`` reads where ``base`` is a parameter holding functions
    among its values (``bound_params._bind_items``), not rebound: the FnValue, ``False``
    for one of its other items (a value), None where ``base`` is not one."""
    held = getattr(n, "item_functions", {})
    if not isinstance(base, cst.Name) or base.value not in held or n.env.get(
            base.value) != base.value:
        return None
    key = n.comps.static.static_value(key_node)
    bound = getattr(n, "bound_strings", {})
    if key is NOVALUE and isinstance(key_node, cst.Name) and n.env.get(key_node.value) in (
            bound):  # (`cfg[key]` of a string parameter: the call's string)
        key = bound[n.env[key_node.value]]
    found = held[base.value]
    if key is NOVALUE or isinstance(key, int) and key < 0:
        return None  # (a key known when it runs, or from the end: read as a value)
    return n.funcs.resolved(found[key], key_node) if key in found else False


def _bound_self(n: Any, name: str) -> bool:
    """Is ``name`` the ``self`` of a method bound to an object (objects.py's test)?"""
    return name in n.resolver.aliases and name not in n.env


def _is_function(containers: FunctionContainers, spelled: Any) -> bool:
    inner = spelled
    while isinstance(inner, cst.Tuple) and len(inner.elements) == 1:
        inner = inner.elements[0].value
    if isinstance(inner, cst.Name) and inner.value in containers.n.env:
        return False  # (a value)
    return _maybe_function(spelled) and containers.n.funcs.value_of(spelled) is not None


def containers(n: Any) -> FunctionContainers:
    """The containers of functions of the Normalizer ``n`` (made at first use)."""
    found = getattr(n, "_function_containers", None)
    if found is None:
        found = n._function_containers = FunctionContainers(n)
    return found


def refuse_function_as_value(n: Any, node: cst.Name) -> None:
    """A name that denotes a function, or a container of functions, read as a value."""
    name = node.value
    if name in n.funcs.values:
        raise n.unsupported(
            node, f"`{name}` is a function here, used as a value; s2s calls functions "
            "and passes them to your own functions, but a function is not an array",
            f"call it, `{name}(...)`, or pass it to a function that calls it")
    containers(n).refuse_as_value(node)


def bind_function(n: Any, target: Any, value: Any) -> bool:
    """``name = <a function>`` (``act = np.tanh if kind == "tanh" else relu``) or
    ``name = <a tuple, list or dict of functions>``: the name denotes it from here,
    nothing is emitted.  False for any other assignment."""
    if containers(n).bind(target, value):
        return True
    if not isinstance(target, cst.Name) or not isinstance(value, _FUNCTION_EXPRESSIONS):
        return False
    fv = n.funcs.value_of(value)
    if fv is None:
        return False
    n.stmts.check_name(target)
    n.funcs.bind(target.value, fv, value)
    return True


_FUNCTION_EXPRESSIONS = (cst.Name, cst.Attribute, cst.Lambda, cst.IfExp, cst.Call,
                         cst.Subscript)


def _maybe_function(node: Any) -> bool:
    """Could this item be a function (a name, a dotted name, an item of one, a
    lambda)?  Literals and arithmetic are not."""
    return isinstance(node, (cst.Name, cst.Attribute, cst.Lambda, cst.Subscript))


def _literal(key: Any) -> Any:
    return cst.SimpleString(repr(key)) if isinstance(key, str) else cst.Integer(str(key))


def _spell(node: Any) -> str:
    return cst.Module([]).code_for_node(node)


def _root(node: Any) -> str | None:
    while isinstance(node, (cst.Attribute, cst.Subscript)):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


def _keys_from(node: cst.For, names: set[str]) -> bool:
    """Does the loop's body key a subscript by an f-string or ``+`` of its variables
    (``for i in range(n): params[f"W{i}"]``)?  Unrolled, each copy's key is a constant
    string, read from the dict by that key (a loop kept as a loop would make the key
    a run-time string)."""
    found = [False]

    class Keys(cst.CSTVisitor):
        def visit_SubscriptElement(self, element: cst.SubscriptElement) -> None:
            index = element.slice
            if isinstance(index, cst.Index) and _string_built(index.value) and any(
                    isinstance(m, cst.Name) and m.value in names
                    for m in _names_in(index.value)):
                found[0] = True

    node.body.visit(Keys())
    return found[0]


def _string_built(node: Any) -> bool:
    """An f-string, or a ``+`` with a string literal or f-string among its terms
    (``"W" + k``; not ``x[i + 1]``, an array's index)."""
    if isinstance(node, cst.FormattedString):
        return True
    if not (isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add)):
        return False
    return any(isinstance(part, (cst.SimpleString, cst.FormattedString)) or _string_built(
        part) for part in (node.left, node.right))


def _names_in(node: Any) -> list[Any]:
    out: list[Any] = []

    class Names(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            out.append(name)

    node.visit(Names())
    return out
