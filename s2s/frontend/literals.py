"""Sets of constants and f-strings of constants: Python values known when transforming.

``{"a", "b"}`` whose items are constants is a constant (a ``frozenset``, spelled as
written), so ``mode in {"a", "b"}`` is decided when the function is transformed, as
``mode in ("a", "b")`` is; a set of run-time values is refused (an array is not
hashable, and a set's order is not an array's).  An f-string whose fields are
constants (a comprehension's variable over ``range``, a flag argument, a module
constant) is the string it formats, so it can key a dict (``params[f"W{i}"]`` in an
unrolled comprehension).  An f-string of run-time values is a string, which has no
derivative: it is kept only inside ``print``/``assert``/``raise`` statements
(frontend/kept.py), and refused as a value.
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


def string_key(n: Any, atom: Atom) -> Atom:
    """A name bound once to a string constant (``key = f"W{i}"``), as an index: the
    string itself, so ``params[key]`` reads a dict argument's item by its key."""
    const = known(n, atom)
    return const if const is not None and isinstance(const.value, str) else atom


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

    class Fields(cst.CSTTransformer):
        def leave_FormattedStringExpression(self, original: Any, updated: Any) -> Any:
            atom = known(n, n.exprs.expr(original.expression))
            if atom is None:
                raise n.unsupported(
                    original.expression, "an f-string of values known only when the "
                    "function runs is a string, which has no derivative; s2s keeps one "
                    "in `print(...)`, `assert ..., f\"...\"` and `raise Error(f\"...\")`",
                    "write the f-string inside the print, assert or raise; a string "
                    "made from string arguments (np.einsum's subscripts) with `+`: "
                    "`\"i\" + k + \"->i\"`",
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
