"""Call lowering: NumPy and registered calls, methods, ``sum`` over a generator, and
the Python expressions (comprehensions, ...) kept as one ``pyexpr`` statement."""

from __future__ import annotations

import builtins
import inspect
import sys
import warnings
from typing import Any

import libcst as cst

from ..errors import TransformError, UnsupportedCallError
from ..ir.names import stem
from ..ir.nodes import KEYWORD_OPERANDS, Atom, Const, Index, Slice, Var
from ..primitives import PRIMITIVES, lookup_object
from ..primitives.registry import METHODS, Refused, Result, lookup_form, reads_arrays
from . import kwdicts
from .expressions import MAX_NAME, SHAPE_READS
from .generators import yields
from .math_calls import operator_made
from .object_protocols import length
from .objects import computed_call, refuse_held_functions, with_nested
from .resolve import expression_advice
from .sequences import as_array, carried
from .shape_strings import shape_method
from .str_methods import string_method
from .targets import target_names
from .type_info import dtype_type_call
from .windows import as_islice


def _comprehension_names(node: Any) -> set[str]:
    """Names a comprehension binds (its ``for`` targets), anywhere inside ``node``."""
    out: set[str] = set()

    class Visit(cst.CSTVisitor):
        def visit_CompFor(self, n: cst.CompFor) -> None:
            for m in target_names(n.target):
                out.add(m)

    node.visit(Visit())
    return out



def _shape_packed(n: Any, node: cst.Call) -> cst.Call:
    """``x.reshape(-1, *x.shape[1:])``: the shape is the tuple ``(-1, *x.shape[1:])``
    (Python over a shape); ``node`` itself where no argument is starred."""
    if not any(a.star == "*" for a in node.args):
        return node
    shape = cst.Tuple([cst.StarredElement(a.value) if a.star else cst.Element(a.value)
                       for a in node.args if a.keyword is None])
    n.desugar.alias(shape, node)
    packed = node.with_changes(args=[cst.Arg(shape)] + [
        a for a in node.args if a.keyword is not None])
    n.desugar.alias(packed, shape)
    return packed


def _shape_arguments(node: Any, bound: set[str], n: Any) -> set[int]:
    """The names in ``node`` whose shape only is read: ``np.shape(x)``, ``len(x)``,
    ``x.shape`` (``(*x.shape, 2)``), not a comprehension's own variables."""
    found: set[int] = set()

    class Find(cst.CSTVisitor):
        def visit_Call(self, c: cst.Call) -> None:
            arg = c.args[0].value if len(c.args) == 1 else None
            if isinstance(arg, cst.Name) and arg.value not in bound and _shape_read(
                    c, n.resolver):
                found.add(id(arg))

        def visit_Attribute(self, a: cst.Attribute) -> None:
            if a.attr.value in ("shape", "ndim", "size") and isinstance(
                    a.value, cst.Name) and a.value.value not in bound and \
                    a.value.value in n.local_names:
                found.add(id(a.value))

    node.visit(Find())
    return found


def _shape_read(call: cst.Call, resolver: Any) -> bool:
    """``np.shape(x)``, ``np.ndim(x)``, ``np.size(x)`` or ``len(x)``."""
    try:
        obj, _ = resolver.resolve_dotted(call.func)
    except TransformError:
        return False
    prim = lookup_object(obj)
    return prim is not None and prim.name in SHAPE_READS


class CallLowerer:
    """Lowers the calls of one function into its Normalizer's output."""

    def __init__(self, n: Any) -> None:
        self.n = n  # the Normalizer: output, scope, buffers, resolver, expressions

    def construct(self, made: Any, node: cst.Call, text: str, target: str | None) -> Atom:
        """``Params(w, b)`` of a pytree class: the dict of its fields (``{"w": w,
        "b": b}``), marked ``built`` so that the API gives the caller the object."""
        if isinstance(made, str):
            raise self.n.unsupported(node, f"s2s cannot build `{text}` inside the function: "
                                     f"{made}", "build it outside the function and pass its "
                                     "arrays in as arguments")
        refuse_held_functions(self.n, made, node, text)  # (`Stack([np.tanh, ...])`)
        if made.init is not None:  # a constructor that computes: its body, then
            return computed_call(self.n, made, node, text, target)  # the dict it fills
        args, kwargs = self.call_args(node)
        try:
            bound = made.signature.bind(*args, **kwargs)
        except TypeError as err:
            raise self.n.unsupported(node, f"`{text}(...)`: {err}",
                                     "pass each of its fields once") from None
        values = []
        for p in made.params:
            if p in bound.arguments:
                values.append(bound.arguments[p])
                continue
            default = made.signature.parameters[p].default
            if not isinstance(default, (int, float, bool, type(None))):
                raise self.n.unsupported(node, f"`{text}(...)` leaves `{p}` at its "
                                         "default, which is not a number",
                                         f"pass `{p}` explicitly")
            values.append(Const(default, repr(default)))
        name = self.n.exprs.target(target, stem(text.split(".")[-1].lower()))
        return self.n.emit(name, "make_dict", tuple(values),  # (fields holding objects)
                           {"keys": tuple(made.keys), "built": with_nested(self.n, made, values)}, node)

    def builtin_sum(self, node: cst.Call, target: str | None) -> Atom:
        """``sum([a, b, c])``, ``sum(values)`` over a tuple or list of known length:
        ``a + b + c`` (after ``start``, when given)."""
        args = list(node.args)
        start_arg = args[1] if len(args) == 2 and (
            args[1].keyword is None or args[1].keyword.value == "start") else None
        first = args[0].value if args and args[0].keyword is None and not args[0].star \
            else None
        items: list[Atom] | None = None
        if first is not None and (len(args) == 1 or start_arg is not None):
            if isinstance(first, (cst.List, cst.Tuple)) and not any(
                    isinstance(e, cst.StarredElement) for e in first.elements):
                items = [self.n.exprs.expr(e.value) for e in first.elements]
            elif isinstance(first, (cst.GeneratorExp, cst.ListComp)):
                return self.n.comps.sum(first, start_arg.value if start_arg else None,
                                        node, target)
            elif isinstance(first, cst.Call) and (not first.args and isinstance(
                    first.func, cst.Attribute) and first.func.attr.value in ("values", "keys") \
                    and isinstance(first.func.value, cst.Name) and kwdicts.keys_of(
                    self.n, first.func.value) is None or yields(self.n, first.func) or (
                    as_islice(self.n, first) is not None)):
                # `sum(p.values())` of a dict argument: `sum(v for v in p.values())`;
                # `sum(gen(x))` of a generator function: `sum(v for v in gen(x))`
                item = cst.Name(self.n.comps.loop_name("value"))
                generator = cst.GeneratorExp(item, cst.CompFor(item, first))
                self.n.desugar.alias_tree(generator, first)
                return self.n.comps.sum(generator, start_arg.value if start_arg else None,
                                        node, target)
            elif isinstance(first, cst.Call) and isinstance(first.func, cst.Name) and \
                    self.n.resolver.resolve_dotted(first.func)[0] is builtins.map and \
                    len(first.args) >= 2 and not any(a.keyword or a.star for a in first.args) \
                    and self.n.funcs.value_of(first.args[0].value):
                generator = self.n.funcs.map_generator(first)
                if generator is not None:
                    return self.n.comps.sum(generator, start_arg.value if start_arg else None,
                                            node, target)
                items = self.n.funcs.map_items(first, self.n.funcs.value_of(first.args[0].value))
            else:  # a name for a literal, `d.values()`, a constant: its items
                items = self.n.comps.items_of(first)
            if items is None and isinstance(first, cst.Name) and first.value in self.n.env:
                # a list grown in a loop (stacked first), or an array: its rows added
                return _grown_sum(self, first, start_arg, node, target,
                                  _grown_list(self.n, self.n.env[first.value]))
            base = first.value if isinstance(first, cst.Subscript) else None
            if items is None and isinstance(base, cst.Name) and base.value in self.n.env:
                # `sum(x[i:i + w])`: a slice of an array or of a grown list, its length
                # the call's (of none, Python's 0); `sum(m[0])`, a row: its elements
                return _grown_sum(self, first, start_arg, node, target,
                                  _grown_list(self.n, self.n.env[base.value]))
        if items is None:
            raise UnsupportedCallError(
                "Python's built-in `sum` is supported over a list or tuple whose length "
                "is known when s2s transforms the function (`sum([a, b])`), not over "
                "this", self.n.loc(node),
                "np.sum(x) for an array's elements, np.sum(np.stack(values), axis=0) for "
                "a list of arrays grown in a loop", self.n.display,
            )
        total: Atom = self.n.exprs.expr(start_arg.value) if start_arg is not None else None
        if total is None and not items:
            return Const(0, "0")
        for k, item in enumerate(items):
            if total is None:
                total = item
                continue
            last = k == len(items) - 1
            name = target if last and target is not None else self.n.names.fresh("total")
            total = operator_made(self.n, self.n.emit(name, "add", (total, item), {}, node))
        if target is not None and not (isinstance(total, Var) and total.name == target):
            total = self.n.emit(target, "identity", (total,), {}, node)
        return total

    def python_expression(self, node: Any, target: str | None, base: str,
                          values: bool | str = False) -> Atom:
        """A comprehension, ``slice(...)`` or ``tuple(...)``: Python code over indexes
        and shapes (what rules build indexes with), kept as written in one statement.
        Its free names are its operands; reads of an operand's shape (``np.shape(x)``,
        ``np.ndim``, ``np.size``, ``len``) are their own statements first, so only the
        shape is read.  The transforms refuse it where an operand carries a derivative
        (or, under vmap, a batch axis): then it is not index arithmetic.  ``values``: it
        may read values (a kept ``try``'s ``cfg["n"]``; ``math.isclose``: its refusals' name)."""
        bound = _comprehension_names(node)
        operands: list[Atom] = []
        texts: dict[str, str] = {}

        def operand(atom: Atom) -> str:
            if isinstance(atom, Const):
                return atom.text
            key = f"__s2s_operand_{len(operands)}__"
            operands.append(atom)
            texts[key] = atom.name
            return key

        normalizer = self
        shape_args = _shape_arguments(node, bound, self.n)  # (their shape only is read)
        # `[np.shape(a)[0] for a in arrays]`: only the shapes of `arrays`' items are read
        shape_iters: set[int] = set()
        uses: dict[str, int] = {}
        shape_uses: dict[str, int] = {}

        class Count(cst.CSTVisitor):
            def visit_Name(self, n: cst.Name) -> None:
                uses[n.value] = uses.get(n.value, 0) + 1

            def visit_Call(self, n: cst.Call) -> None:
                arg = n.args[0].value if len(n.args) == 1 else None
                if isinstance(arg, cst.Name) and _shape_read(n, normalizer.n.resolver):
                    shape_uses[arg.value] = shape_uses.get(arg.value, 0) + 1

            def visit_CompFor(self, n: cst.CompFor) -> None:
                if isinstance(n.iter, cst.Name) and isinstance(n.target, cst.Name):
                    pending.append((n.target.value, n.iter))

        pending: list[tuple[str, cst.Name]] = []
        node.visit(Count())
        for var, it in pending:
            if uses.get(var, 0) == shape_uses.get(var, 0) + 1:  # (+1: the `for` itself)
                shape_iters.add(id(it))
        shape_only: list[int] = []

        class Substitute(cst.CSTTransformer):
            def leave_Call(self, original: cst.Call, updated: cst.Call) -> Any:
                arg = original.args[0].value if len(original.args) == 1 else None
                if arg is not None and id(arg) in shape_args:
                    atom = normalizer.n.exprs.expr(original)  # a shape read: its own statement
                    return cst.Name(operand(atom))
                return updated

            def leave_Name(self, original: cst.Name, updated: cst.Name) -> Any:
                name = original.value
                if name in bound or name in ("True", "False", "None") or (
                        id(original) in shape_args):
                    return updated
                if name not in normalizer.n.local_names:
                    normalizer.n.resolver.bind_namespace(name, original)
                    return updated  # a module name (np, a constant, a builtin)
                if id(original) in shape_iters:
                    shape_only.append(len(operands))
                return cst.Name(operand(normalizer.n.exprs.expr(original)))

            def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> Any:
                if id(original.value) in shape_args:  # `x.shape`: a shape read of its own
                    return cst.Name(operand(normalizer.n.exprs.expr(original)))
                return updated.with_changes(attr=original.attr)  # np.shape stays np.shape

        template = cst.Module([]).code_for_node(node.visit(Substitute()))
        for k, a in enumerate(operands):
            if isinstance(a, Var) and a.name not in self.n.shapes and k not in shape_only \
                    and not values:
                # over values computed from arrays: not index arithmetic
                if isinstance(node, (cst.Tuple, cst.List)):
                    raise self.n.unsupported(node, "starred elements are supported over "
                                           "shapes and ints only", "list each element")
                if isinstance(node, cst.ListComp):
                    raise self.n.unsupported(node, *expression_advice(node))
                inner = node.args[0].value if node.args else None
                if isinstance(inner, (cst.ListComp, cst.GeneratorExp)):
                    raise self.n.unsupported(node, *expression_advice(inner))
                obj, text = self.n.resolver.resolve_dotted(node.func)
                raise self.n.resolver.unknown_call(obj, text, node.func)
        clash = bound & {a.name for a in operands if isinstance(a, Var)}
        if clash:
            raise self.n.unsupported(node, f"`{sorted(clash)[0]}` names both a value and a "
                                   "comprehension's variable", "rename the variable")
        return self.n.emit(self.n.exprs.target(target, base), "pyexpr", tuple(operands),
                         {"template": (template, tuple(texts)),
                          "shape_only": tuple(shape_only), **({"values": values} if values
                                                               else {})}, node)

    def call_args(self, node: cst.Call) -> tuple[list[Atom], dict[str, Atom]]:
        args: list[Atom] = []
        kwargs: dict[str, Atom] = {}
        for arg in node.args:
            if arg.star:  # a tuple, list or dict of known length: its items
                items = self.n.funcs.spread(arg)
                if isinstance(items, dict):
                    kwargs.update(items)
                else:
                    args += items
                continue
            atom = self.n.exprs.expr(arg.value)
            if arg.keyword is not None:
                kwargs[arg.keyword.value] = atom
            else:
                args.append(atom)
        return args, kwargs

    def apply(
        self, name: str, args: list[Atom], kwargs: dict[str, Atom], node: Any,
        target: str | None, text: str,
    ) -> Atom:
        prim = PRIMITIVES[name]
        if name == "len" and (called := length(self.n, node, args, target)) is not None:
            return called  # (`len(Stack(x))` of an object of yours: its `__len__()`)
        for bound_name, value in prim.namespace.items():  # a user's primitive
            known = self.n.resolver.namespace.setdefault(bound_name, value)
            if known is not value:
                raise TransformError(
                    f"emitted code calls the primitive `{prim.name}` (or a name its rules "
                    f"read) as `{bound_name}`, but `{bound_name}` here is another object",
                    self.n.loc(node), f"rename your `{bound_name}`", self.n.display,
                )
        if prim.canonical is not None:  # a call form its rules do not read, rewritten
            try:
                args, kwargs = prim.canonical(list(args), dict(kwargs))
            except Refused as exc:
                raise UnsupportedCallError(f"`{text}`: {exc.what}", self.n.loc(node),
                                           exc.hint, self.n.display) from None
        try:
            bound = prim.signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise UnsupportedCallError(
                f"`{text}` called with arguments s2s does not support: {exc}",
                self.n.loc(node),
                f"call it as {prim.name}{prim.signature}", self.n.display,
            ) from None
        positional: list[Atom] = []
        params: dict[str, Any] = {}
        keyword_operands: list[tuple[str, Atom]] = []
        for pname, p in prim.signature.parameters.items():
            if pname not in bound.arguments:
                continue
            value = bound.arguments[pname]
            if p.kind is inspect.Parameter.VAR_POSITIONAL:
                positional += list(value)
            elif p.default is inspect.Parameter.empty:
                positional.append(value)
            elif pname in prim.diff and isinstance(value, Var):
                # a keyword argument that carries a derivative (average's weights=):
                # an operand like the others, spelled as a keyword
                keyword_operands.append((pname, value))
            else:
                params[pname] = value
        if keyword_operands:
            positional += [v for _, v in keyword_operands]
            params[KEYWORD_OPERANDS] = tuple(n for n, _ in keyword_operands)
        if reads_arrays(name):
            positional = [as_array(self.n, a, node) for a in positional]
        first = stem(self.n.named(positional[0])) if positional else ""
        base = f"{name.split('.')[-1]}_{first}" if first else name
        if len(base) > MAX_NAME:
            base = name.split(".")[-1]
        return _emit_call(self.n, name, positional, params, node, target, base)

    def form(
        self, rewrite: Any, args: list[Atom], kwargs: dict[str, Atom], node: Any,
        target: str | None, text: str,
    ) -> Atom:
        """A call another primitive's in other words (``registry.FORMS``): its steps,
        each applied as written, the last bound to ``target``."""
        def items(atom: Atom) -> list[Atom] | None:
            if isinstance(atom, Const) and isinstance(atom.value, (list, tuple)):
                return [Const(v, repr(v)) for v in atom.value]
            let = self.n.lets.get(atom.name) if isinstance(atom, Var) else None
            if let is None or let.prim not in ("make_list", "make_tuple") or (
                    atom.name in self.n.buffer_root.values()) or carried(self.n, atom):
                return None
            return [unpacked(a) for a in let.args]

        def unpacked(atom: Atom) -> Atom:
            """An item read back from a tuple the function built (``c, low = t``)."""
            let = self.n.lets.get(atom.name) if isinstance(atom, Var) else None
            index = let.params.get("index") if let is not None else None
            if let is None or let.prim != "getitem" or index is None or index.is_tuple or \
                    not isinstance(index.items[0], Const) or type(index.items[0].value) \
                    is not int:
                return atom
            whole = items(let.args[0])
            k = index.items[0].value
            return whole[k] if whole is not None and -len(whole) <= k < len(whole) else atom

        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                steps = rewrite(list(args), dict(kwargs), items)
        except Refused as exc:
            raise UnsupportedCallError(f"`{text}`: {exc.what}", self.n.loc(node),
                                       exc.hint, self.n.display) from None
        loc = self.n.loc(node)
        for w in caught:  # (np.row_stack's deprecation) at the user's line
            warnings.warn_explicit(w.message, w.category, loc.file, loc.line)
        results: list[Atom] = []
        for k, (name, step_args, step_kwargs) in enumerate(steps):
            step_args = [results[a.k] if isinstance(a, Result) else a for a in step_args]
            step_kwargs = {n: results[a.k] if isinstance(a, Result) else a
                           for n, a in step_kwargs.items()}
            last = k == len(steps) - 1
            results.append(self.apply(name, step_args, step_kwargs, node,
                                      target if last else None, text))
        return results[-1]

    def method_call(self, node: cst.Call, target: str | None) -> Atom:
        func = node.func
        assert isinstance(func, cst.Attribute)
        base = self.n.exprs.expr(func.value)
        method = func.attr.value
        if isinstance(base, Const) and (made := self.n.pyvalues.constant_method(
                node, base, method, target)) is not None:
            return made
        if made := string_method(self.n, node, base, method, target) or shape_method(
                self.n, node, base, method, target) or dtype_type_call(  # (`s.split(",")`,
                self.n, node, base, method, target) or (  # (`tag.count(",")`, `d.type(v)`;
                method == "get" and kwdicts.get(self.n, node, base, target)):  # `kw.get(k)`)
            return made
        if method == "item" and not node.args:  # a 0-d value's number: float(x)
            return self.apply("float", [base], {}, node, target, f"{stem(self.n.named(base))}.item")
        if self.n.draws.is_generator_method(base, method):  # rng.normal(...)
            return self.n.draws.method(node, base, method, target)
        frozen = self.n.lets.get(base.name) if isinstance(base, Var) else None
        if frozen is not None and frozen.prim == "stats_frozen":  # d = norm(loc, scale)
            return self.frozen_method(frozen, method, node, target)
        if method in ("startswith", "endswith") and isinstance(base, Var) and \
                base.name in self.n.dicts.per_call_keys:  # (`k.startswith("w")`: a key's)
            args, _ = self.call_args(node)
            return self.n.emit(self.n.exprs.target(target, method), "str_test",
                               (base, *args), {"method": method}, node)
        if method in ("keys", "values", "items") and isinstance(base, Var) and (
                made := kwdicts.view_value(self.n, node, target)) is not None:
            return made  # (`a, b = p.values()`: the tuple of this call's values)
        prim_name = METHODS.get(method)
        if prim_name is None:
            raise self.n.resolver.unknown_method(base, method, func.attr)
        if prim_name in ("reshape", "transpose"):
            node = _shape_packed(self.n, node)  # (`x.reshape(-1, *x.shape[1:])`)
        args, kwargs = self.call_args(node)
        if prim_name in ("reshape", "transpose") and len(args) > 1:
            args = [self.pack(args, node)]
        form = lookup_form(PRIMITIVES[prim_name].impl)  # (`x.sum(where=m)`: np.sum's)
        if form is not None:
            return self.form(form, [base, *args], kwargs, node, target,
                             f"{stem(self.n.named(base))}.{method}")
        return self.apply(prim_name, [base, *args], kwargs, node, target,
                           f"{stem(self.n.named(base))}.{method}")

    def frozen_method(self, frozen: Any, method: str, node: cst.Call,
                      target: str | None) -> Atom:
        """``d.logpdf(x)`` of ``d = norm(loc, scale)``: ``norm.logpdf(x, loc, scale)``,
        so that derivatives reach the frozen parameters."""
        dist = frozen.args[0].value
        name = f"scipy.stats.{dist}.{method}"
        moment = None if name in PRIMITIVES else lookup_form(getattr(getattr(
            sys.modules["scipy.stats"], dist), method, None))
        if moment is not None:  # d.mean(), d.entropy(): the formula in its parameters
            args, kwargs = self.call_args(node)
            return self.form(moment, [*args, *frozen.args[1:]], kwargs, node, target, name)
        if name not in PRIMITIVES:
            raise UnsupportedCallError(
                f"`{method}` of a frozen {dist} has no rules in s2s", self.n.loc(node),
                f"call a method s2s lists for scipy.stats.{dist} (python -m s2s "
                "primitives)", self.n.display)
        args, kwargs = self.call_args(node)
        if len(args) != 1 or kwargs:
            raise UnsupportedCallError(
                f"`{method}` of a frozen {dist} takes its one argument here",
                self.n.loc(node), f"call d.{method}(x), or scipy.stats.{dist}.{method} "
                "with every parameter", self.n.display)
        return self.apply(name, [args[0], *frozen.args[1:]], {}, node, target,
                          f"{dist}_{method}")

    def pack(self, atoms: list[Atom], node: Any) -> Atom:
        if all(isinstance(a, Const) for a in atoms):
            return Const(tuple(a.value for a in atoms),
                         "(" + ", ".join(a.text for a in atoms) + ")")
        return self.n.emit(self.n.names.fresh("shape"), "make_tuple", tuple(atoms), {}, node)


def _grown_list(n: Any, name: str) -> bool:
    """A list grown in a loop, or a slice of one (``parts[start:]``: a list too)."""
    let = n.lets.get(name)
    while let is not None and let.prim == "getitem" and isinstance(let.args[0], Var) and (
            any(isinstance(i, Slice) for i in let.params["index"].items)):
        name = let.args[0].name
        let = n.lets.get(name)
    return name in n.lists


def _grown_sum(calls: Any, name: Any, start: Any, node: cst.Call,
               target: str | None, grown: bool = True) -> Atom:
    """``sum(parts)`` of a list grown in a run-time loop (``parts.append(v)``): its
    length is known per call, its items one shape (what one expression made), so
    the sum is ``np.sum(np.stack(parts), axis=0)``, which every transform handles
    (after ``start``).  ``sum(x)`` of an array (not ``grown``) adds its rows,
    ``np.sum(x, axis=0)``; of nothing, both give Python's 0."""
    text = cst.Module([]).code_for_node(name)  # (a name, or a slice: `x[i:i + w]`)
    rows = f"np.stack({text})" if grown else text
    total: Any = cst.parse_expression(f"(np.sum({rows}, axis=0) if len({text}) else 0)")
    if start is not None:
        total = cst.BinaryOperation(start.value, cst.Add(), total)
    calls.n.desugar.alias_tree(total, node)  # (the new nodes, not `start`'s own)
    calls.n.resolver.bind_namespace("np", node)
    return calls.n.exprs.expr(total, target)


def _emit_call(n: Any, name: str, positional: list, params: dict, node: Any,
               target: str | None, base: str) -> Atom:
    """The primitive's call bound to ``target``; a split whose sections are known now
    (:func:`_parts`) as the list of its parts (``parts = np.split(x, 2)``: a list of 2
    the code reads, which a loop over it unrolls)."""
    count = _parts(name, positional[1] if len(positional) > 1 else None)
    if count is None:
        return n.emit(n.exprs.target(target, base), name, tuple(positional), params, node)
    whole = n.emit(n.names.fresh(base), name, tuple(positional), params, node)
    items = tuple(n.emit(n.names.fresh(f"{base}_{k}"), "getitem", (whole,),
                         {"index": Index((Const(k, str(k)),), False)}, node)
                  for k in range(count))
    return n.emit(n.exprs.target(target, base), "make_list", items, {}, node)


def _parts(name: str, sections: Any) -> int | None:
    """How many arrays ``np.split``/``np.array_split`` gives where its sections are
    known now (an int: that many; a tuple or list of indices: one more), else None:
    the list's length, so a loop or a comprehension over it is unrolled."""
    if name not in ("split", "array_split") or not isinstance(sections, Const):
        return None
    value = sections.value
    if type(value) is int and value > 0:
        return value
    if isinstance(value, (tuple, list)) and all(type(v) is int for v in value):
        return len(value) + 1
    return None
