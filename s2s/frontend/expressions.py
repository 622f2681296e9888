"""Expression lowering: one libcst expression -> IR statements and the atom that holds
its value.

Each ``expr_<Node>`` method lowers one kind of expression into the lowering's output
(``Normalizer.emit``), naming temporaries after the user's names (``x_at_w`` for
``x @ w``); names are resolved through the lowering's ``Resolver``.
"""

from __future__ import annotations

import builtins
import dataclasses
import functools
import itertools
from typing import Any

import libcst as cst
import numpy as np

from ..errors import TransformError
from ..ir.names import simple_text, stem
from ..ir.nodes import Atom, Const, If, Index, Slice, Var
from ..primitives import lookup_object
from ..primitives.custom import custom_jvp, custom_vjp
from ..primitives.registry import ATTRIBUTES, lookup_form
from . import kwdicts, literals, object_protocols, objects  # noqa: F401  (records: BUILT)
from .bound_params import held_method_call, property_read, typed_method_call
from .call_respellings import field_sum, respelled
from .draws import is_draw
from .empty_batch import EmptyBatch, empty_call
from .fncontainers import refuse_function_as_value
from .generator_reads import next_item, read_once_as_made, spent_generator
from .inner_vmap import is_inner_vmap, lower_inner_vmap
from .kept_try import kept_try
from .keyed import run_time_item
from .math_calls import applier, folded, folds
from .objects import (
    class_attribute,
    is_instance_self,
    iterated_args,
    object_call,
    record_of_atom,
    threaded_call,
)
from .odes import lower_ode, solver_of
from .piecewise import lower_piecewise
from .pyvalues import CONSTANT_METHODS, STATIC
from .record_methods import THREADS
from .reduces import lower_accumulate, lower_reduce
from .replaced import replace_call, replaced_call
from .resolve import expression_advice, transform_kind
from .sequences import list_copy, no_sequence_operand, sequence_arithmetic
from .shape_strings import shape_builtin
from .source import literal_value
from .tuple_slices import sliced_made
from .type_info import info_attribute
from .windows import as_islice, as_zip

_BINOPS = {
    cst.Add: ("add", "plus", "total"),
    cst.Subtract: ("subtract", "minus", "diff"),
    cst.Multiply: ("multiply", "times", "prod"),
    cst.Divide: ("divide", "over", "ratio"),
    cst.MatrixMultiply: ("matmul", "at", "matmul"),
    cst.Power: ("power", "pow", "power"),
    cst.FloorDivide: ("floor_divide", "floordiv", "quotient"),
    cst.Modulo: ("remainder", "mod", "remainder"),
    cst.BitOr: ("bitwise_or", "or", "either"),
    cst.BitAnd: ("bitwise_and", "and", "both"),
    cst.BitXor: ("bitwise_xor", "xor", "one_of"),
}


COMPARE = {
    cst.LessThan: "less",
    cst.LessThanEqual: "less_equal",
    cst.GreaterThan: "greater",
    cst.GreaterThanEqual: "greater_equal",
    cst.Equal: "equal",
    cst.NotEqual: "not_equal",
    cst.Is: "is_",
    cst.IsNot: "is_not",
}


MAX_NAME = 22


def is_list_method(node: Any, method: str, local_names: set[str]) -> bool:
    """Is ``node`` a call ``ys.method(...)`` on a local name?"""
    return (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == method
        and isinstance(node.func.value, cst.Name)
        and node.func.value.value in local_names
    )


SHAPE_READS = {"shape", "ndim", "size", "len"}


# operations that keep a value computed from shapes and constants such a value
INDEX_ARITHMETIC = {"add", "subtract", "multiply", "floor_divide", "remainder",
                     "negative", "identity", "getitem", "make_tuple", "make_list",
                     "range", "less", "greater", "equal", "not_equal", "less_equal",
                     "greater_equal", "broadcast_to", "array", "asarray"}


def _fold(prim: str, left: Const, right: Const) -> Const | None:
    import operator as op

    fns = {
        "add": op.add, "subtract": op.sub, "multiply": op.mul, "divide": op.truediv,
        "power": op.pow, "floor_divide": op.floordiv, "remainder": op.mod,
    }
    if prim not in fns or not all(
        isinstance(c.value, (int, float)) and not isinstance(c.value, bool)
        for c in (left, right)
    ):
        return None
    if not all(simple_text(c.text) for c in (left, right)):
        return None  # keep named constants (SCALE * 2) readable
    try:
        value = fns[prim](left.value, right.value)
    except (ArithmeticError, ValueError):
        return None
    return Const(value, repr(value))


def root_name(node: Any) -> str | None:
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


# How a pytree class the function calls is built (``Params(w, b)``): installed by
# s2s/api/records.py (the frontend does not import the api).  ``BUILT(cls)`` is an
# object with ``signature``, ``params`` and ``keys``, a string saying why s2s cannot
# build it, or None where ``cls`` is no pytree node.
BUILT: Any = None
# ``PLAINED(fn, callee_ir)``: what emitted code calls for a user function that returns
# objects it built (its result as the dicts of their fields), or None: it returns none
PLAINED: Any = None
# ``REBUILT(fn, {i: built})``: what emitted code calls for a user function it passes
# objects the function built (a NamedTuple: the dict of its fields): the function gets
# the objects themselves (``p[0]``, ``a, b = p`` read as in Python)
REBUILT: Any = None


class ExprLowerer:
    """Lowers the expressions of one function into its Normalizer's output."""

    def __init__(self, n: Any) -> None:
        self.n = n  # the Normalizer: output, scope, buffers, resolver

    def expr(self, node: Any, target: str | None = None) -> Atom:
        """Normalize an expression; the outermost operation binds ``target``."""
        if isinstance(node, (cst.Call, cst.Subscript, cst.List)) and (
                copied := list_copy(self.n, node, target)) is not None:
            return copied  # (`ys.copy()`, `ys[:]`, `[*ys]` of a list built here)
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None and type(node) in literals.LOWER:  # sets, f-strings
            return literals.LOWER[type(node)](self.n, node, target)
        if method is None:
            raise self.n.unsupported(node, *expression_advice(node))
        return method(node, target)

    def target(self, target: str | None, base: str) -> str:
        if target is not None:
            return target
        if len(base) > MAX_NAME:
            base = base[:MAX_NAME].rstrip("_")
        return self.n.names.fresh(base)

    def expr_Name(self, node: cst.Name, target: str | None) -> Atom:
        name = node.value
        if name in ("True", "False", "None"):
            return Const({"True": True, "False": False, "None": None}[name], name)
        refuse_function_as_value(self.n, node)  # (`g = np.tanh`, `fs = [np.tanh, g]`)
        if is_instance_self(self.n, name):  # (a method bound to an object: it)
            return self.n.resolver.constant(*self.n.resolver.resolve_dotted(node), node)
        if name in self.n.local_names:
            if name == self.n.bound_object and name not in self.n.env:
                fn = self.n.fn.__name__
                raise self.n.unsupported(
                    node, f"this method reads `{name}`, the object it is bound to (not "
                    f"an array): s2s transforms functions of arrays and cannot read "
                    "into other objects", f"pass the arrays it reads as arguments: "
                    f"`def {fn}(...)` at module level (or a @staticmethod)",
                )
            if name not in self.n.env:  # (after `del name`: the del's own error)
                raise self.n.stmts.deletes.unbound(node) or _unbound(self.n, node)
            return Var(self.n.env[name])
        obj = spent_generator(self.n, node, self.n.resolver.lookup_global(node))
        return self.n.resolver.constant(obj, name, node)

    def expr_Integer(self, node: cst.Integer, target: str | None) -> Atom:
        return self.literal(node, target)

    def expr_Float(self, node: cst.Float, target: str | None) -> Atom:
        return self.literal(node, target)

    def expr_SimpleString(self, node: cst.SimpleString, target: str | None) -> Atom:
        return self.literal(node, target)

    def expr_Imaginary(self, node: cst.Imaginary, target: str | None) -> Atom:
        return self.literal(node, target)  # ``2.0j``: a complex constant

    def literal(self, node: Any, target: str | None) -> Atom:
        const = Const(literal_value(node.value), node.value)  # (thread-safe)
        if target is not None:
            return self.n.emit(target, "identity", (const,), {}, node)
        return const

    def expr_Ellipsis(self, node: cst.Ellipsis, target: str | None) -> Atom:
        return Const(Ellipsis, "...")

    def expr_BinaryOperation(self, node: cst.BinaryOperation, target: str | None):
        entry = _BINOPS.get(type(node.operator))
        if entry is None:
            raise self.n.unsupported(
                node, f"the operator `{node.operator._get_token()}` is not supported",
                "use arithmetic operators (+ - * / @ ** //) or NumPy functions",
            )
        prim, word, fallback = entry
        left, right = self.expr(node.left), self.expr(node.right)
        called = object_protocols.binary(self.n, node, prim, left, right, target)
        if called is not None:  # (`a - b` of objects: `type(a).__sub__(a, b)`)
            return called
        folded = _fold(prim, left, right) if isinstance(left, Const) and isinstance(
            right, Const) else literals.bound_strings_joined(self.n, prim, left, right)
        if folded is not None:  # (`"w" + name` of a string made per call: its string)
            return folded if target is None else self.n.emit(
                target, "identity", (folded,), {}, node
            )
        if prim in ("add", "multiply"):
            joined = sequence_arithmetic(self.n, prim, left, right, node, target)
            if joined is not None:
                return joined
        if prim in ("add", "multiply") and isinstance(left, Const) and isinstance(
            right, Var
        ):
            base = f"{stem(self.n.named(right))}_{word}_{stem(self.n.named(left))}"  # x_times_2 for 2 * x
        elif prim == "power" and isinstance(right, Const) and right.value == 2:
            base = f"{stem(self.n.named(left))}_sq"
        else:
            base = f"{stem(self.n.named(left))}_{word}_{stem(self.n.named(right))}"
        if len(base) > MAX_NAME:
            base = fallback
        return _arithmetic(self.n, (self.target(target, base), base), prim, (left, right),
                           node)

    def expr_UnaryOperation(self, node: cst.UnaryOperation, target: str | None):
        value = self.expr(node.expression)
        if (called := object_protocols.unary(self.n, node, value, target)) is not None:
            return called  # (`-a` of an object: `type(a).__neg__(a)`)
        op = node.operator
        if isinstance(op, cst.Minus):
            if isinstance(value, Const) and isinstance(value.value, (int, float)):
                text = value.text[1:] if value.text.startswith("-") else "-" + value.text
                return Const(-value.value, text)
            no_sequence_operand(self.n, "negative", (value,), node)  # (`-ys` of a list)
            return operator_made(self.n, self.n.emit(
                self.target(target, f"neg_{stem(self.n.named(value))}"), "negative", (value,),
                {}, node,
            ))
        if isinstance(op, cst.Plus):
            return value
        if isinstance(op, cst.Not):
            out = self.n.emit(
                self.target(target, f"not_{stem(self.n.named(value))}"), "not_", (value,), {}, node
            )
            if isinstance(value, Var):
                self.n.negates[out.name] = value.name
            return out
        return self.n.emit(  # `~mask`
            self.target(target, f"not_{stem(self.n.named(value))}"), "invert", (value,), {},
            node,
        )

    def expr_BooleanOperation(self, node: cst.BooleanOperation, target: str | None):
        if (operand := kwdicts.short_circuit(self.n, node)) is not None:
            return self.expr(operand, target)  # (`"w" in kw and kw["w"] > 0`)
        left = self.expr(node.left)
        right = self.expr(node.right)
        prim = "and_" if isinstance(node.operator, cst.And) else "or_"
        return self.n.emit(
            self.target(target, "cond"), prim, (left, right), {}, node
        )

    def expr_Comparison(self, node: cst.Comparison, target: str | None):
        if (decided := _function_is_none(self.n, node, target)) is not None:
            return decided  # (`act is not None` of a function: known now)
        left = self.expr(node.left)
        result: Atom | None = None
        for i, comp in enumerate(node.comparisons):
            prim = COMPARE.get(type(comp.operator))
            if prim is None:
                made = self.n.pyvalues.membership(node, target)
                if made is not None:
                    return made
                raise self.n.unsupported(
                    node, "`in` and `not in` are not supported",
                    "compare values with == or np.isin",
                )
            right = self.expr(comp.comparator)
            last = i == len(node.comparisons) - 1
            name = f"{stem(self.n.named(left))}_{prim.rstrip('_')}_{stem(self.n.named(right))}"
            if len(name) > MAX_NAME:
                name = "cond"
            this = self.n.emit(
                self.target(target if last and result is None else None, name),
                prim, (left, right), {}, node,
            )
            result = this if result is None else self.n.emit(
                self.target(target if last else None, "cond"), "and_",
                (result, this), {}, node,
            )
            left = right
        assert result is not None
        return result

    def expr_IfExp(self, node: cst.IfExp, target: str | None) -> Atom:
        if (decided := kwdicts.decide(self.n, node.test)) is not None:  # `a if True else b`
            return self.expr(node.body if decided else node.orelse, target)
        test = self.expr(node.test)
        name = self.target(target, "choice")
        outer = self.n.out
        self.n.out = []
        body_atom = self.expr(node.body, target=name)
        if not (isinstance(body_atom, Var) and body_atom.name == name):
            self.n.emit(name, "identity", (body_atom,), {}, node.body)
        body = self.n.out
        self.n.out = []
        else_atom = self.expr(node.orelse, target=name)
        if not (isinstance(else_atom, Var) and else_atom.name == name):
            self.n.emit(name, "identity", (else_atom,), {}, node.orelse)
        orelse = self.n.out
        self.n.out = outer
        self.n.out.append(If(test, body, orelse, self.n.loc(node), joins=[name]))
        return Var(name)

    def expr_Tuple(self, node: cst.Tuple, target: str | None) -> Atom:
        return self.sequence(node, target, "make_tuple", tuple)

    def expr_List(self, node: cst.List, target: str | None) -> Atom:
        return self.sequence(node, target, "make_list", list)

    def sequence(self, node: Any, target: str | None, prim: str, kind: type):
        if any(isinstance(e, cst.StarredElement) for e in node.elements):
            # `(n, *np.shape(x))`: shape arithmetic, kept as written (vmap emits it)
            return self.n.calls.python_expression(node, target, "shape")
        atoms = [self.expr(e.value) for e in node.elements]
        if all(isinstance(a, Const) for a in atoms) and target is None:
            value = kind(a.value for a in atoms)
            texts = [a.text for a in atoms]
            if kind is tuple:
                text = "(" + ", ".join(texts) + ("," if len(texts) == 1 else "") + ")"
            else:
                text = "[" + ", ".join(texts) + "]"
            return Const(value, text)
        base = "_".join(stem(self.n.named(a)) for a in atoms) if atoms else "empty"
        if len(base) > MAX_NAME:
            base = "items"
        out = self.n.emit(self.target(target, base), prim, tuple(atoms), {}, node)
        if prim == "make_list":
            self.n.lists.add(out.name)  # a list of its own: append may grow it
        return out

    def expr_Dict(self, node: cst.Dict, target: str | None) -> Atom:
        return kwdicts.dict_literal(self.n, node, target)  # (`{**kw, "a": 1}` too)

    def index(self, node: cst.Subscript) -> Index:
        items: list[Any] = []
        for element in node.slice:
            s = element.slice
            if isinstance(s, cst.Slice):
                items.append(Slice(*(
                    None if part is None else self.expr(part)
                    for part in (s.lower, s.upper, s.step)
                )))
            else:
                items.append(self.expr(s.value))
        return Index(tuple(items), len(node.slice) > 1)

    def expr_Subscript(self, node: cst.Subscript, target: str | None) -> Atom:
        base = self.expr(node.value)
        if (called := object_protocols.subscript(self.n, node, base, target)) is not None:
            return called  # (`obj[k]`: `type(obj).__getitem__(obj, k)`)
        items = []
        for element in node.slice:
            s = element.slice
            if isinstance(s, cst.Slice):
                items.append(Slice(*(None if part is None else self.expr(part)
                                     for part in (s.lower, s.upper, s.step))))
            else:
                items.append(literals.string_key(self.n, self.expr(s.value), base))
        if (held := literals.bound_item(self.n, base, items)) is not None:
            return held  # (`spec["kind"]` of this call's dict: bound_params.py)
        if (chosen := run_time_item(self.n, node, base, items, target) or sliced_made(
                self, node, base, items, target)) is not None:  # (keyed.py; tuple_slices.py)
            return chosen
        index = Index(tuple(items), len(node.slice) > 1)
        if len(items) == 1 and isinstance(items[0], Const) and isinstance(
            items[0].value, str
        ):
            name = items[0].value
        elif len(items) == 1 and isinstance(items[0], Slice):
            name = f"{stem(self.n.named(base))}_slice"
        else:
            name = f"{stem(self.n.named(base))}_" + "_".join(
                stem(self.n.named(i)) if not isinstance(i, Slice) else "s" for i in items
            )
        if isinstance(base, Const):
            folded = self.n.pyvalues.subscript(node, base, items, target, len(node.slice) > 1)
            if folded is not None:
                return folded
            if isinstance(base.value, (tuple, list)) and all(
                    isinstance(v, (int, float)) for v in base.value):
                return table_read(self.n, node, base, index, self.target(target, name))
            if not isinstance(base.value, (np.ndarray, str)):
                raise self.n.unsupported(
                    node, "subscripts of this constant are supported with constant "
                    "keys only", "index it with a constant, or pass the value as an "
                    "argument",
                )
        return self.n.emit(
            self.target(target, name), "getitem", (base,), {"index": index}, node
        )

    def expr_Attribute(self, node: cst.Attribute, target: str | None) -> Atom:
        if (made := info_attribute(self.n, node, target)) is not None:
            return made  # (`np.finfo(x.dtype).eps`)
        root = root_name(node)
        if root is not None and is_instance_self(self.n, root):  # `self.w`: read each call
            return self.n.resolver.constant(*self.n.resolver.resolve_dotted(node), node)
        if root is not None and root == self.n.bound_object and root not in self.n.env:
            raise self.n.resolver.unknown_attribute(node, root, node.attr.value)
        if root is None or root in self.n.local_names:  # an attribute of a value
            base = self.expr(node.value)
            attr = node.attr.value
            record = record_of_atom(self.n, base) is not None  # (`m.size`: a field)
            prim = None if record else ATTRIBUTES.get(attr)
            if prim is None and (record or not hasattr(np.ndarray, attr)):
                return _of_class(self.n, node, base, target) or self.field(node, base, attr, target)
            if prim is None:
                raise self.n.resolver.unknown_attribute(node, root, attr)
            name = self.target(target, f"{stem(self.n.named(base))}_{attr}")
            return self.n.emit(name, prim, (base,), {}, node)
        obj, text = self.n.resolver.resolve_dotted(node)
        return self.n.resolver.constant(obj, text, node)

    def field(self, node: cst.Attribute, base: Atom, attr: str, target: str | None) -> Atom:
        """``p.w``, not an array's attribute: the field of a pytree argument (a
        NamedTuple, a registered class, a bound method's object), which the call passes
        as a dict: ``p["w"]``.  Its kind decides per call: an array refuses it."""
        key = Const(attr, repr(attr))  # (`self.kind` of this call's object: its string)
        return literals.bound_item(self.n, base, [key]) or self.n.emit(self.target(
            target, attr), "getitem", (base,), {"index": Index((key,), False, attribute=True)},
            node)

    def expr_Call(self, node: cst.Call, target: str | None) -> Atom:
        func = node.func
        root = root_name(func)
        if is_list_method(node, "pop", self.n.local_names):
            return self.n.buffer.pop_expression(node, target)
        if (made := replaced_call(self.n, node, target) or object_call(  # (`p._replace`)
                self.n, node, target) or typed_method_call(
                self.n, node, target) or held_method_call(self.n, node, target)) is not None:
            return made  # `self.other(x)`, `p.apply(x)`, `l(h)` of `for l in net.layers`
        if isinstance(func, cst.Attribute) and (root is None or root in self.n.local_names):
            return self.n.calls.method_call(node, target)  # a method of a value
        if is_inner_vmap(self.n, func):  # `s2s.vmap(g)(x)`: a comprehension over rows
            return lower_inner_vmap(self.n, node, target)
        if not isinstance(func, (cst.Name, cst.Attribute)) or (
                isinstance(func, cst.Name) and self.n.funcs.names_function(func.value)):
            fv = self.n.funcs.value_of(func)  # a function value: `g(x)`, `s2s.grad(f)(x)`
            if fv is not None:
                return self.n.funcs.call(fv, node, target)
        if isinstance(func, cst.Attribute) and func.attr.value in CONSTANT_METHODS:
            owner, _ = self.n.resolver.resolve_dotted(func.value)
            if isinstance(owner, dict):  # CONFIG.get("wd", 0.1) of a module dict
                base = self.expr(func.value)
                made = self.n.pyvalues.constant_method(node, base, func.attr.value, target)
                if made is not None:
                    return made
        obj, text = _resolved_callee(self.n, func)  # (a local: never the global it shadows)
        if (spelled := respelled(self.n, obj, node)) is not None:
            return self.expr(spelled, target)  # (`np.where(c)`, `np.array([[...] ...])`)
        if obj is dataclasses.replace:  # (of an object the function built)
            return replace_call(self.n, node, target)
        made = _sequence_builtin(self.n, obj, text, node, target)
        if made is not None:
            return made
        if obj in STATIC or kwdicts.is_dict_len(self.n, obj, node):  # (`len(kw)`)
            made = self.n.pyvalues.call(obj, text, node, target)
            if made is not None:
                return made
        # (emitted code calling a function it passes built NamedTuples: which ones)
        self.n.rebuilt_hint = getattr(obj, "__s2s_rebuilt__", None)
        obj = getattr(obj, "__s2s_unwrap__", obj)  # a custom rule, checked when it runs
        if (pair := _divmod_pair(self.n, obj, node) or _power(self.n, obj, node)) is not None:
            return self.expr(pair, target)  # (a // b, a % b; pow(a, b) as a ** b)
        if obj is builtins.sum:  # (`sum(c.out)` of an object's list: its loop)
            return field_sum(self.n, node, target) or self.n.calls.builtin_sum(node, target)
        transformed = transform_kind(obj)
        if transformed is not None:
            return self.n.transform_call(transformed, obj, text, node, target)
        if isinstance(obj, (custom_jvp, custom_vjp)):
            # a user function like any other, with rules the derivatives use instead
            return self.n.user_call(obj.fun, text, node, target, custom=obj)
        if is_draw(obj):  # np.random.normal(...), np.random.default_rng(0)
            return self.n.draws.call(node, target, obj)
        if solver_of(obj) is not None:  # scipy.integrate.odeint(func, y0, t), solve_ivp
            return lower_ode(self.n, obj, text, node, target)
        form = lookup_form(obj)
        if form is not None:  # another primitive's call in other words
            args, kwargs = self.n.calls.call_args(node)
            return self.n.calls.form(form, args, kwargs, node, target, text)
        prim = lookup_object(obj)
        if prim is not None and prim.name == "reversed":
            raise self.n.unsupported(
                node, "reversed() is supported only in a loop header, over range(...)",
                "write `for i in reversed(range(n)):`",
            )
        if prim is not None:
            args, kwargs = self.n.calls.call_args(node)
            return applier(self.n, obj)(prim.name, args, kwargs, node, target, text)
        made = BUILT(obj) if BUILT is not None and isinstance(obj, type) else None
        if made is not None:  # Params(w, b): a NamedTuple, a registered class
            return self.n.calls.construct(made, node, text, target)
        fv = self.n.funcs.of_object(obj, text, func)
        if fv is not None and hasattr(obj, THREADS):  # (`self = Base_init(w, **self)`)
            return threaded_call(self.n, self.n.funcs.call(fv, node, None), node, target)
        if fv is not None:  # your function, a partial, a callable object
            return self.n.funcs.call(fv, node, target)
        if isinstance(obj, EmptyBatch):  # (emitted code's empty batch of a body vmap)
            return empty_call(self.n, obj, text, node, target)
        raise self.n.resolver.unknown_call(obj, text, func)

    def expr_ListComp(self, node: cst.ListComp, target: str | None) -> Atom:
        return self.n.comps.comprehension(node, target)

    def expr_GeneratorExp(self, node: cst.GeneratorExp, target: str | None) -> Atom:
        read_once_as_made(self.n, node, "generator", "the generator expression")
        return self.n.comps.comprehension(node, target)  # (its items: read once, checked)

    def expr_DictComp(self, node: cst.DictComp, target: str | None) -> Atom:
        return self.n.comps.comprehension(node, target)


def _resolved_callee(n: Any, func: Any) -> tuple[Any, str]:
    """What a call's ``func`` names, as ``(object, text)``; ``net(x)`` for a local name
    (a parameter, a variable) that denotes no function s2s knows: refused, never
    resolved as the module-level name it shadows."""
    if isinstance(func, cst.Name) and func.value in n.local_names and not (
            is_instance_self(n, func.value)) and func.value != n.bound_object:
        raise per_call(n.unsupported(
            func, f"`{func.value}` is a value in this function (a parameter or a "
            "variable) and is called here; s2s calls the functions it reads when it "
            "transforms: module-level and nested functions, lambdas, NumPy's, and a "
            "parameter given a plain function (`act=np.tanh`)", "call a function by "
            "its name, or pass a function (not an object) for this parameter"))
    base = func.value if isinstance(func, cst.Subscript) else None
    if isinstance(base, cst.Name) and base.value in n.local_names:
        raise per_call(n.unsupported(  # (`cfg["act"](x)`: bound where the call is known)
            func, f"an item of `{base.value}` is called here, and s2s does not know "
            "which function it holds (a parameter given a dict, list or tuple holding "
            "functions is bound to them per call)", "pass the function as a parameter "
            "of its own, or index the container with a constant key"))
    return n.resolver.resolve_dotted(func)


def _unbound(n: Any, node: cst.Name) -> TransformError:
    """A name read where no path bound it; ``unbound_name`` tells ``normalize._run``
    to try again with it bound None before a loop that binds it."""
    err = TransformError(f"`{node.value}` may be used before it is assigned on some path",
                         n.loc(node), f"assign `{node.value}` on every path before this "
                         "line", n.display)
    err.unbound_name = node.value  # type: ignore[attr-defined]
    return err


def _function_is_none(n: Any, node: cst.Comparison, target: str | None) -> Atom | None:
    """``f is None`` / ``f is not None`` of a name denoting a function (``act``, a
    module's ``ACT``, a bound object's ``self.act``): False / True (a function is not
    None), known now; None for any other comparison."""
    if len(node.comparisons) != 1 or not _denotes_function(n, node.left):
        return None
    comp = node.comparisons[0]
    if not (isinstance(comp.comparator, cst.Name) and comp.comparator.value == "None") or (
            not isinstance(comp.operator, (cst.Is, cst.IsNot))):
        return None
    const = Const(isinstance(comp.operator, cst.IsNot), str(isinstance(comp.operator,
                                                                        cst.IsNot)))
    return n.emit(target, "identity", (const,), {}, node) if target else const


def _denotes_function(n: Any, node: Any) -> bool:
    if isinstance(node, cst.Name) and node.value in n.funcs.values:
        return True
    root = root_name(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
    if root is None or (root in n.local_names and not is_instance_self(n, root)):
        return False
    return n.funcs.value_of(node) is not None


def _divmod_pair(n: Any, obj: Any, node: cst.Call) -> cst.Tuple | None:
    """``divmod(a, b)`` as Python computes it, ``(a // b, a % b)``; None for any other
    call."""
    if obj is not builtins.divmod or len(node.args) != 2 or any(
            a.keyword or a.star for a in node.args):
        return None
    a, b = (arg.value for arg in node.args)
    pair = cst.Tuple([cst.Element(cst.BinaryOperation(a, op, b))
                      for op in (cst.FloorDivide(), cst.Modulo())])
    n.desugar.alias(pair, node)
    for part in pair.elements:
        n.desugar.alias(part.value, node)
    return pair


def _power(n: Any, obj: Any, node: cst.Call) -> cst.BinaryOperation | None:
    """``pow(a, b)`` as ``a ** b`` (None for any other call)."""
    if obj is not builtins.pow or len(node.args) != 2 or any(
            a.keyword or a.star for a in node.args):
        return None
    power = cst.BinaryOperation(left=node.args[0].value, operator=cst.Power(),
                                right=node.args[1].value)
    n.desugar.alias(power, node)
    return power


def _sequence_builtin(n: Any, obj: Any, text: str, node: cst.Call,
                      target: str | None) -> Atom | None:
    """``map(f, xs)`` (also inside ``list``/``tuple``), ``tuple(...)``, ``slice(...)``,
    ``list(<comprehension>)`` and ``math.gamma(2.5)`` (math_calls.folded) lowered by the
    Normalizer ``n``; None for any other call."""
    if folds(obj, node):
        return folded(n, obj, text, node, target)
    if obj is builtins.reversed and len(node.args) == 1 and _iterator(n, node.args[0].value):
        raise n.unsupported(node, "reversed() of an iterator (a generator, zip, map, "
                            "enumerate, ...): it is not reversible (Python's TypeError)",
                            "reverse a list of its items: `reversed(list(...))`")
    if obj is builtins.reversed and len(node.args) == 1 and not (
            node.args[0].keyword or node.args[0].star) and read_once_as_made(
                n, node, "reversed", "Python's iterator `reversed(...)`"):
        flipped = cst.Subscript(node.args[0].value, [cst.SubscriptElement(  # (its items,
            cst.Slice(None, None, cst.UnaryOperation(cst.Minus(), cst.Integer("1"))))])
        n.desugar.alias_tree(flipped, node)  # last first: read once, as Python's)
        return n.exprs.expr(flipped, target)
    if (made := shape_builtin(n, obj, node, target)) is not None:
        return made  # (`str(x.shape)`: made where the code runs, shape_strings.py)
    if (iterated := iterated_args(n, obj, node)) is not node:  # (`list(layers)`: its
        return n.exprs.expr(iterated, target)  # `__iter__()`)
    if obj is functools.reduce:
        return lower_reduce(n, node, target)
    if obj is itertools.accumulate:  # (unrolled over a sequence of known length)
        return lower_accumulate(n, node, target)
    if obj is np.piecewise:  # (a chain of np.where)
        return lower_piecewise(n, node, target)
    if obj is kept_try:  # (a kept `try` in emitted code transformed again: Python)
        return n.calls.python_expression(node, target, "kept", values=True)
    keys = kwdicts.keys_call(n, obj, node, target)  # tuple(p), sorted(p), list(p.keys())
    if keys is not None:
        return keys
    if obj is itertools.islice:  # (a slice of the items)
        return n.exprs.expr(as_islice(n, node), target)
    if obj is builtins.list and as_zip(n, node) is not node:  # list(zip(x, x[1:]))
        return n.exprs.expr(as_zip(n, node), target)
    item = next_item(n, node) if obj is builtins.next else None
    if item is not None:  # `next(g)` of a generator: an item of its list
        return n.exprs.expr(item, target)
    rewritten = kwdicts.python_idiom(n, obj, node)  # next(iter(p)), max(p), zip(*pairs)
    if rewritten is not None:
        return n.exprs.expr(rewritten, target)
    view = kwdicts.view_list(n, node) if obj is builtins.list else None
    if view is not None:  # list(d.values()) of a dict argument: [v for v in d.values()]
        return n.comps.comprehension(view, target)
    if obj is builtins.map or (obj in (builtins.list, builtins.tuple) and len(
            node.args) == 1 and isinstance(node.args[0].value, cst.Call) and n.funcs.
            value_of(node.args[0].value.func) is not None and root_name(
            node.args[0].value.func) not in n.local_names and n.resolver.
            resolve_dotted(node.args[0].value.func)[0] is builtins.map):
        return n.funcs.map_call(node if obj is builtins.map else node.args[0].value, target)
    if obj in (builtins.slice, builtins.tuple) or (obj is builtins.list and len(
            node.args) == 1 and isinstance(node.args[0].value, (cst.ListComp,
                                                                 cst.GeneratorExp))):
        kept = n.comps.as_python_expression(node, target, text) if (
            obj is not builtins.slice) else None
        if kept is not None:
            return kept
        if obj is not builtins.slice:
            made = n.pyvalues.call(obj, text, node, target)
            if made is not None:
                return made
        return n.calls.python_expression(node, target, text)
    return None


def _iterator(n: Any, node: Any) -> bool:
    """Is ``node`` a generator expression or a call of an iterator built-in?"""
    if isinstance(node, cst.GeneratorExp):
        return True
    if not isinstance(node, cst.Call) or root_name(node.func) in n.local_names:
        return False
    try:
        obj, _ = n.resolver.resolve_dotted(node.func)
    except TransformError:
        return False
    return obj in (zip, map, filter, enumerate, reversed, iter)


def _of_class(n: Any, node: cst.Attribute, base: Atom, target: str | None) -> Any:
    """``p.size`` of a class attribute, ``self.doubled`` of a ``@property``; None else."""
    return class_attribute(n, node, base) or property_read(n, node, base, target)


def _arithmetic(n: Any, names: tuple[str, str], prim: str, operands: tuple,
                node: Any) -> Atom:
    """``target = left op right``; of ``y += v`` (marked by ``in_place``), ``y``'s dtype
    where ``y`` is an array (``runtime.in_place``).  A Python number ``v`` is weak, and
    changes no float array's dtype: the sum as it is."""
    (target, base), (left, right) = names, operands
    no_sequence_operand(n, prim, operands, node)  # (`ys / 2.0` of a list built here)
    if n.__dict__.get("in_place", {}).pop(id(node), None) is None or prim.startswith(
            "bitwise") or isinstance(right, Const) and type(right.value) in (int, float, bool):
        # (`d |= {...}` merges dicts: ir/unroll.py makes the merge of this bitwise_or)
        return operator_made(n, n.emit(target, prim, operands, {}, node))
    value = operator_made(n, n.emit(n.names.fresh(base), prim, operands, {}, node))
    return n.emit(target, "in_place", (value, left), {}, node)


def operator_made(n: Any, atom: Atom) -> Atom:
    """``atom``, the result of arithmetic written with a Python operator: marked
    (``Function.operators``), so that a transform that learns from the call that an
    operand is a tuple or list raises Python's TypeError (``xs / 2``), where NumPy's
    function converts it (``np.divide(xs, 2)``; transforms/list_operands.py)."""
    if isinstance(atom, Var):
        n.__dict__.setdefault("operators", set()).add(atom.name)
    return atom


def operators(n: Any, node: Any) -> frozenset:
    """The names bound by arithmetic written with a Python operator, none in code s2s
    emitted (an inner transform's, which spells ``np.divide`` as ``/`` too)."""
    return frozenset() if n.loc(node).file.startswith("<s2s:") else frozenset(
        vars(n).get("operators", ()))


def in_place(n: Any, value: cst.BinaryOperation) -> None:
    """Mark ``value``, the ``y + v`` an augmented assignment ``y += v`` is lowered to:
    NumPy's operator writes into an array ``y``, keeping its dtype (expr_BinaryOperation
    spells it ``in_place(y + v, y)``)."""
    n.__dict__.setdefault("in_place", {})[id(value)] = value


def per_call(err: TransformError) -> TransformError:
    """Mark a refusal that a transform made per call's functions and dict keys may
    not meet (``api/callables.py``'s ``transformable``): a parameter called here, or
    spread, whose value the call knows."""
    err.per_call = True  # type: ignore[attr-defined]
    return err


def table_read(n: Any, node: Any, table: Const, index: Index, target: str) -> Atom:
    """``TABLE[i]`` of a module list of numbers by a run-time ``i``: the numbers as an
    array, read at each call, and the item as Python reads the list (``list_item``: a
    Python number, weak, where the array's item is a float64 NumPy scalar)."""
    n.resolver.bind_namespace("np", node)
    array = Const(np.asarray(table.value), f"np.asarray({table.text})")
    if len(index.items) != 1 or isinstance(index.items[0], Slice):
        return n.emit(target, "getitem", (array,), {"index": index}, node)
    read = n.emit(n.names.fresh(f"{target}_read"), "getitem", (array,), {"index": index}, node)
    return n.emit(target, "list_item", (read, table, index.items[0]), {}, node)
