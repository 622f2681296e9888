"""Sets of constants and f-strings of constants: Python values known when transforming.

``{"a", "b"}`` whose items are constants is a constant (a ``frozenset``, spelled as
written), so ``mode in {"a", "b"}`` is decided when the function is transformed, as
``mode in ("a", "b")`` is; a set of run-time values is refused (an array is not
hashable, and a set's order is not an array's).  An f-string whose fields are
constants (a comprehension's variable over ``range``, a flag argument, a module
constant) is the string it formats, so it can key a dict (``params[f"W{i}"]`` in an
unrolled comprehension).  An f-string whose fields are the function's parameters
(and constants) is kept as written in the emitted code, a string made where the code
runs as ``"i" + k`` is (``np.einsum(f"i{k},{k}->i", a, b)`` with ``k`` a string
argument); a parameter the transform is made per call for (``bound_strings``) is
that call's string, so the f-string is a constant there.  An f-string of other
run-time values is a string, which has no derivative: it is kept only inside
``print``/``assert``/``raise`` statements (frontend/kept.py), and refused as a value.
"""

from __future__ import annotations

import operator
import re
from typing import Any

import libcst as cst

from ..ir.nodes import Atom, Const, Let, Var
from .source import literal_value


def known(n: Any, atom: Atom) -> Const | None:
    """The constant an atom holds: a constant, or a name bound to one (``k = "w"``, a
    loop over constant keys unrolled)."""
    let = n.lets.get(atom.name) if isinstance(atom, Var) else None
    if isinstance(let, Let) and let.prim == "identity" and let.args and \
            isinstance(let.args[0], Const) and atom.name not in n.lets.joined and \
            atom.name not in n.loop_carried:  # (the paths of an `if` bind it otherwise,
        atom = let.args[0]  # or a loop rebinds it: it is not this one constant)
    return atom if isinstance(atom, Const) else None


def string_key(n: Any, atom: Atom, base: Atom) -> Atom:
    """A name bound once to a string constant (``key = f"W{i}"``), as an index: the
    string itself, so ``params[key]`` reads a dict argument's item by its key (also a
    string parameter's where the transform is made per call's string and ``base`` is
    a value of the function: a module's table, ``ACTS[name]``, is read as it runs,
    Python's KeyError for a key it lacks)."""
    const = known(n, atom)
    if const is None and isinstance(atom, Var) and isinstance(base, Var) and type(getattr(
            n, "bound_strings", {}).get(atom.name)) is str:  # (`params[name]`)
        value = n.bound_strings[atom.name]
        const = Const(value, repr(value))
    return const if const is not None and isinstance(const.value, str) else atom


def bound_item(n: Any, base: Atom, items: list) -> Const | None:
    """``spec["kind"]`` of a dict parameter whose string items the transform is made
    per call for (``bound_items``: the caller built the dict): that call's string."""
    held = getattr(n, "bound_items", {}).get(base.name) if isinstance(base, Var) else None
    if held is None or len(items) != 1 or not isinstance(items[0], Const) or (
            items[0].value not in held):
        return None
    value = held[items[0].value]
    return Const(value, repr(value))


def bound_item_test(n: Any, node: Any) -> Any:
    """``spec["kind"]`` (a CST node) of a parameter ``bound_item`` reads: that call's
    string, for a test decided when transforming; NOT_LITERAL otherwise."""
    held = getattr(n, "bound_items", None)
    if not held or not (isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name)
                        and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index)):
        return NOT_LITERAL
    strings = held.get(n.env.get(node.value.value, ""))
    if strings is None:
        return NOT_LITERAL
    key = literal_of(node.slice[0].slice.value)
    return strings[key] if isinstance(key, str) and key in strings else NOT_LITERAL


def set_items(n: Any, atom: Atom) -> list[Const] | None:
    """A set constant's items, in a fixed order (by their text), or None."""
    const = known(n, atom)
    if const is None or not isinstance(const.value, (set, frozenset)):
        return None
    return [Const(v, repr(v)) for v in sorted(const.value, key=repr)]


def set_literal(n: Any, node: cst.Set, target: str | None) -> Atom:
    atoms = [n.exprs.expr(e.value) if not isinstance(e, cst.StarredElement) else None
             for e in node.elements]
    if not all(isinstance(a, Const) for a in atoms):
        bad = next(e for e, a in zip(node.elements, atoms) if not isinstance(a, Const))
        raise n.unsupported(
            bad, "a set of values known only when the function runs: an array is not "
            "hashable, and a set has no order for a derivative to follow",
            "use a tuple (`x in (a, b)`) or an array",
        )
    try:
        value = frozenset(a.value for a in atoms)
    except TypeError:
        raise n.unsupported(node, "a set of unhashable constants",
                            "use a tuple") from None
    text = "{" + ", ".join(a.text for a in atoms) + "}"
    return n.pyvalues.constant(value, text, [a.text for a in atoms], target, node)


def formatted_string(n: Any, node: cst.FormattedString, target: str | None) -> Atom:
    """The string an f-string of constants formats (Python formats it, with its own
    conversions and format specs)."""
    values: dict[str, Any] = {}
    texts: list[str] = []
    if not all(_known_field(n, e) for e in _fields(node)) and all(
            _parameter_field(n, e) for e in _fields(node)):
        return _per_run(n, node, target)

    if not all(_known_field(n, e) for e in _fields(node)):
        joined = _joined_strings(n, node, target)
        if joined is not None:
            return joined

    atoms = {id(f.expression): n.exprs.expr(f.expression) for f in _fields(node)}
    if not all(known(n, a) is not None for a in atoms.values()) and all(
            isinstance(a, Const) or a.name in n.shapes for a in atoms.values()):
        return _formatted_where_run(n, node, target, atoms)  # (`f"{rows}x{cols}"`)

    class Fields(cst.CSTTransformer):
        def leave_FormattedStringExpression(self, original: Any, updated: Any) -> Any:
            atom = known(n, atoms[id(original.expression)])
            if atom is None:
                raise n.unsupported(
                    original.expression, "an f-string of values known only when the "
                    "function runs is a string, which has no derivative; s2s keeps one "
                    "in `print(...)`, `assert ..., f\"...\"` and `raise Error(f\"...\")`",
                    "write the f-string inside the print, assert or raise; an f-string "
                    "of arguments and constants alone (np.einsum's subscripts: "
                    "`f\"i{k},{k}->i\"` with `k` a string argument) is kept as written; "
                    "join strings computed in the function with `+` (`s + \",\" + s[1:] + "
                    "\"->\"`)",
                )
            name = f"__s2s_field_{len(values)}"
            values[name] = atom.value
            texts.append(atom.text)
            return updated.with_changes(expression=cst.Name(name))

    code = cst.Module([]).code_for_node(node.visit(Fields()))
    value = eval(compile(code, "<f-string>", "eval"), {"__builtins__": {}}, values)
    for text in texts:  # (a module constant it read: transformed again when it changes)
        n.comps.static.watch(re.match(r"\w*", text).group())
    const = Const(value, repr(value))
    return const if target is None else n.emit(target, "identity", (const,), {}, node)


def _is_string(n: Any, atom: Atom, depth: int = 0) -> bool:
    """Is ``atom`` a str wherever the code runs: a string constant, an item or slice
    of one (``"ijk"[:a.ndim]``, ``idx[1:]``), a ``+`` of two, bound once?"""
    const = known(n, atom)
    if const is not None:
        return type(const.value) is str
    let = n.lets.get(atom.name) if isinstance(atom, Var) else None
    if depth > 32 or not isinstance(let, Let) or let.target != atom.name or (
            atom.name in n.lets.joined or atom.name in n.loop_carried):
        return False
    if let.prim in ("getitem", "identity") and len(let.args) == 1:
        return _is_string(n, let.args[0], depth + 1)
    return let.prim == "add" and len(let.args) == 2 and all(
        _is_string(n, a, depth + 1) for a in let.args)


def _joined_strings(n: Any, node: cst.FormattedString, target: str | None) -> Atom | None:
    """An f-string whose fields are strings computed when the function runs
    (``f"{idx},{idx[1:]}->{idx[0]}"`` of ``idx = "ijk"[:a.ndim]``) or constants, with no
    conversion or format spec: the ``+`` of its parts, which formats a str as itself
    (``idx + "," + idx[1:] + "->" + idx[0]``); None for any other f-string."""
    parts: list[Atom] = []
    for part in node.parts:
        if isinstance(part, cst.FormattedStringText):
            text = cst.FormattedString([part], start=node.start, end=node.end)
            value = eval(compile(cst.Module([]).code_for_node(text), "<f-string>", "eval"),
                         {"__builtins__": {}})
            parts.append(Const(value, repr(value)))
            continue
        if part.conversion is not None or part.format_spec is not None:
            return None
        atom = n.exprs.expr(part.expression)
        const = known(n, atom)
        if const is not None and type(const.value) is not str:
            value = format(const.value)
            atom = Const(value, repr(value))
        elif not _is_string(n, atom):
            return None
        parts.append(atom)
    if not parts:
        return None
    total = parts[0]
    for k, atom in enumerate(parts[1:]):
        last = k == len(parts) - 2
        name = n.exprs.target(target, "formatted") if last else n.names.fresh("formatted")
        total = n.emit(name, "add", (total, atom), {}, node)
    return total if len(parts) > 1 else n.emit(n.exprs.target(target, "formatted"),
                                               "identity", (total,), {}, node)


def _fields(node: cst.FormattedString) -> list[Any]:
    """The fields of an f-string (of its format specs too)."""
    found: list[Any] = []

    class Fields(cst.CSTVisitor):
        def visit_FormattedStringExpression(self, field: Any) -> None:
            found.append(field)

    node.visit(Fields())
    return found


def _known_field(n: Any, field: Any) -> bool:
    """Whether an f-string's field is a constant now (a literal, a loop's key)."""
    expr = field.expression
    if isinstance(expr, cst.Name) or _literal_only(expr):
        return known(n, n.exprs.expr(expr)) is not None
    return False


def _literal_only(expr: Any) -> bool:
    """An expression with no names in it (``{1 + 2}``, ``{'a'}``)."""
    names: list[Any] = []

    class Names(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            names.append(name)

    expr.visit(Names())
    return not names

def bound_strings_joined(n: Any, prim: str, left: Atom, right: Atom) -> Const | None:
    """``"w" + name`` where ``name`` is a string parameter the transform is made per
    call for (``bound_strings``: a dict key built from it) and the other side a string
    known now: the call's string, a constant there; None for any other ``+``."""
    bound = {k: v for k, v in getattr(n, "bound_strings", {}).items() if type(v) is str}
    if prim != "add" or not any(isinstance(a, Var) and a.name in bound for a in (left, right)):
        return None
    texts = []
    for atom in (left, right):
        if isinstance(atom, Var) and atom.name in bound:
            texts.append(bound[atom.name])
            continue
        const = known(n, atom)
        if const is None or type(const.value) is not str:
            return None
        texts.append(const.value)
    return Const(texts[0] + texts[1], repr(texts[0] + texts[1]))



def _parameter_field(n: Any, field: Any) -> bool:
    """A field that is a parameter of the function as given (``f"i{k}"`` with ``k``
    a string or int argument), or a constant: formatted where the code runs."""
    expr = field.expression
    if _known_field(n, field):
        return True
    code = n.fn.__code__
    params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    return isinstance(expr, cst.Name) and expr.value in params and \
        n.env.get(expr.value) == expr.value


def _per_run(n: Any, node: cst.FormattedString, target: str | None) -> Atom:
    """An f-string of parameters (a string argument: np.einsum's subscripts, a key):
    the string a call's arguments format, kept as written in the emitted code (the
    string is made per call, as ``"i" + k`` is); a dict key made so is the call's
    string (``bound_strings``: the transform made per call's string)."""
    bound = getattr(n, "bound_strings", {})
    if all(isinstance(f.expression, cst.Name) and (
            _known_field(n, f) or n.env.get(f.expression.value) in bound)
           for f in _fields(node)):
        values = {}
        for k, f in enumerate(_fields(node)):
            name = f.expression.value
            values[name] = bound[n.env[name]] if n.env.get(name) in bound else known(
                n, n.exprs.expr(f.expression)).value
        code = cst.Module([]).code_for_node(node)
        value = eval(compile(code, "<f-string>", "eval"), {"__builtins__": {}}, values)
        const = Const(value, repr(value))
        return const if target is None else n.emit(target, "identity", (const,), {}, node)
    return _formatted_where_run(n, node, target, {})


def _formatted_where_run(n: Any, node: cst.FormattedString, target: str | None,
                         atoms: dict[int, Atom]) -> Atom:
    """The f-string kept as written, formatted where the code runs from its fields'
    values there (``atoms``: those already lowered, by their expression's id): of
    parameters, or of shapes and ints computed from them (``f"{rows}x{cols}"`` of
    ``rows, cols = x.shape``): a Python string, the same for every call whose shapes
    are the same, as the code's other reads of shapes are."""
    operands: list[Atom] = []
    texts: list[str] = []

    class Operands(cst.CSTTransformer):
        def leave_FormattedStringExpression(self, original: Any, updated: Any) -> Any:
            atom = atoms.get(id(original.expression)) or n.exprs.expr(original.expression)
            const = known(n, atom)
            if const is not None and type(const.value) is not str:  # (a str's quotes
                return updated.with_changes(expression=cst.parse_expression(const.text))
            key = f"__s2s_operand_{len(operands)}__"  # may be the f-string's: an operand)
            operands.append(atom)
            texts.append(key)
            return updated.with_changes(expression=cst.Name(key))

    template = cst.Module([]).code_for_node(node.visit(Operands()))
    return n.emit(n.exprs.target(target, "formatted"), "pyexpr", tuple(operands),
                  {"template": (template, tuple(texts)), "shape_only": (),
                   "formatted": True}, node)


LOWER = {cst.Set: set_literal, cst.FormattedString: formatted_string}


# ---- tests written with literals only --------------------------------------------


def literal_test(node: Any, leaf: Any = None) -> bool | None:
    """The truth of a test written with literals only (``True``, ``0``, ``"x" == "x"``
    after a loop over strings is unrolled, ``not``/``and``/``or`` of them); None for
    any other test (a module constant such as ``DEBUG`` is read at each call).
    ``leaf(part)``, where given, is the value of a part known some other way
    (``kwdicts.py``: a dict's keys), or ``NOT_LITERAL``."""
    value = literal_of(node, leaf)
    return None if value is NOT_LITERAL else bool(value)


NOT_LITERAL = _NOT_LITERAL = object()
_COMPARE = {cst.Equal: operator.eq, cst.NotEqual: operator.ne, cst.LessThan: operator.lt,
            cst.LessThanEqual: operator.le, cst.GreaterThan: operator.gt,
            cst.GreaterThanEqual: operator.ge, cst.In: lambda a, b: a in b,
            cst.NotIn: lambda a, b: a not in b,
            cst.Is: lambda a, b: _singleton(a, b) and a is b,
            cst.IsNot: lambda a, b: _singleton(a, b) and a is not b}


def _singleton(a: Any, b: Any) -> bool:
    """``is`` between literals means what it says only for None, True and False
    (a TypeError otherwise: the test is then not decided now)."""
    if not any(v is None or type(v) is bool for v in (a, b)):
        raise TypeError("`is` between literals other than None, True, False")
    return True


def literal_of(node: Any, leaf: Any = None) -> Any:
    """The value of an expression of literals, or _NOT_LITERAL."""
    if leaf is not None and (known_part := leaf(node)) is not _NOT_LITERAL:
        return known_part
    if isinstance(node, cst.Name):
        return {"True": True, "False": False, "None": None}.get(node.value, _NOT_LITERAL)
    if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString, cst.Tuple)):
        try:
            return literal_value(cst.Module([]).code_for_node(node))
        except (ValueError, SyntaxError, TypeError):
            return _NOT_LITERAL
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        inner = literal_of(node.expression, leaf)
        return inner if inner is _NOT_LITERAL else not inner
    if isinstance(node, cst.BooleanOperation):
        left, right = literal_of(node.left, leaf), literal_of(node.right, leaf)
        if _NOT_LITERAL in (left, right):
            return _NOT_LITERAL
        return (left and right) if isinstance(node.operator, cst.And) else (left or right)
    if isinstance(node, cst.Comparison):
        left = literal_of(node.left, leaf)
        result = True
        for target in node.comparisons:
            right, compare = literal_of(target.comparator, leaf), _COMPARE.get(
                type(target.operator))
            if _NOT_LITERAL in (left, right) or compare is None:
                return _NOT_LITERAL
            try:
                result = result and compare(left, right)
            except TypeError:
                return _NOT_LITERAL
            left = right
        return result
    return _NOT_LITERAL


def decided_branch(node: cst.If, decide: Any = literal_test) -> list[Any] | None:
    """The statements an ``if`` on a test decided now runs (``elif``s as a nested
    ``if``), or None where the test is not (``decide``: literals only by default)."""
    test = decide(node.test)
    if test is None:
        return None
    if test:
        return list(node.body.body)
    if isinstance(node.orelse, cst.If):
        return [node.orelse]
    return list(node.orelse.body.body) if node.orelse is not None else []
