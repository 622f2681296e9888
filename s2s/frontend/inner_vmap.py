"""``s2s.vmap(g)(x)`` written inside a function s2s transforms.

vmap's own emitted code depends on the ranks of its arguments, which s2s knows only
when the outer function is called; so inside a body, ``s2s.vmap(g, in_axes, out_axes)
(x, w)`` is what it means example by example: ``np.stack([g(x_row, w) for x_row in
x])`` (the mapped axis moved first with ``np.moveaxis`` where it is not 0, and the
stacked axis moved to ``out_axes``).  That comprehension over an array's rows is a loop
every transform handles (an outer vmap batches it, reverse mode tapes it).  ``g``
returns one array, or a tuple (``return a, b``, or a name assigned only tuple literals
of one length): one stacked array per output.  ``in_axes`` may be a tuple or dict of
ints and None for a tuple or dict argument.  A batch of size 0 is refused when the code
runs, naming the user's line (``_stacked_calls``).  ``h = s2s.vmap(g)`` kept as a value is
lowered here at each call ``h(x)`` (``functions.KeptVmap``).
"""

from __future__ import annotations

import types
from typing import Any

import libcst as cst

from ..errors import TransformError
from ..ir.nodes import Var
from .desugar import lower_in_place
from .empty_batch import EmptyBatch, stacked_or_empty
from .source import literal_value, parse_function
from .targets import target_names


def is_inner_vmap(n: Any, func: Any) -> bool:
    """Is ``func`` (a call's callee) ``s2s.vmap(...)``?"""
    if not isinstance(func, cst.Call) or not isinstance(func.func, (cst.Name, cst.Attribute)):
        return False
    try:
        obj, _ = n.resolver.resolve_dotted(func.func)
    except TransformError:
        return False
    return (getattr(obj, "__module__", None) or "").startswith("s2s.api") and getattr(
        obj, "__name__", "") == "vmap"


def lower_inner_vmap(n: Any, node: cst.Call, target: str | None) -> Any:
    """``s2s.vmap(g, in_axes, out_axes)(*args)`` as a comprehension over the rows."""
    make = node.func
    text = cst.Module([]).code_for_node(make.func)
    instead = (f"call {text} with the function first and constant in_axes / out_axes "
               "(ints or None), and pass the arguments by position")
    options = {"in_axes": 0, "out_axes": 0}
    positional = ["fun", "in_axes", "out_axes"]
    fun = None
    for k, arg in enumerate(make.args):
        key = arg.keyword.value if arg.keyword is not None else (
            positional[k] if k < len(positional) else None)
        if arg.star or key not in ("fun", "in_axes", "out_axes"):
            raise n.unsupported(arg, f"`{text}` inside a transformed function takes the "
                                "function, in_axes and out_axes here", instead)
        if key == "fun":
            fun = arg.value
            continue
        try:
            options[key] = literal_value(cst.Module([]).code_for_node(arg.value))
        except (ValueError, SyntaxError):
            raise n.unsupported(arg.value, f"`{key}` of `{text}` inside a transformed "
                                "function must be a constant", instead) from None
    if fun is None or any(a.star or a.keyword is not None for a in node.args):
        raise n.unsupported(node, f"`{text}(f)(...)` inside a transformed function takes "
                            "a function and positional arguments here", instead)
    args = [a.value for a in node.args]
    axes = options["in_axes"]
    axes = list(axes) if isinstance(axes, (tuple, list)) else [axes] * len(args)
    out_axis = options["out_axes"]
    if len(axes) != len(args) or not all(_is_spec(a) for a in axes) \
            or not isinstance(out_axis, int):
        raise n.unsupported(make, f"`{text}`'s in_axes must be an int, None, or one of "
                            "those per argument (a tuple or dict of them for a tuple or "
                            "dict argument), and out_axes an int, here", instead)
    if not any(_mapped(a) for a in axes):
        raise n.unsupported(make, "vmap must have at least one non-None value in in_axes",
                            "map one argument over an axis")
    rows: list[Any] = []
    iters: list[Any] = []
    call_args = []
    for k, (arg, axis) in enumerate(zip(args, axes)):
        base = arg.value if isinstance(arg, cst.Name) else f"arg{k}"
        call_args.append(cst.Arg(_spread(arg, axis, base, rows, iters)))
    arity = _tuple_arity(n, fun)
    if not isinstance(fun, cst.Name):  # (a lambda: one function for every call below)
        value = n.funcs.value_of(fun)
        if value is not None:
            name = n.names.fresh("mapped_fn")
            n.funcs.values[name] = value
            fun = cst.Name(name)
    n.resolver.bind_namespace("np", node)
    empty = _empty_batch(n, make, fun, axes, args, arity, out_axis)
    return _stacked_calls(n, node, target, cst.Call(fun, call_args), rows, iters, arity,
                          out_axis, empty)


def _empty_batch(n: Any, make: Any, fun: Any, axes: list[Any], args: list[Any],
                 arity: int | None, out_axis: int) -> tuple | None:
    """What an empty batch stacks (``frontend/empty_batch.py``): where each in_axes
    entry is an int or None and ``g`` a function s2s can give ``s2s.eval_shape``,
    the ``EmptyBatch`` and the expressions whose shapes it reads; else None (then
    an empty batch raises s2s.EmptyStackError, located, when the code runs)."""
    try:
        obj, _ = n.resolver.resolve_dotted(make.func)
    except TransformError:
        return None
    eval_shape = getattr(obj, "__s2s_eval_shape__", None)
    fv = n.funcs.value_of(fun) if isinstance(fun, cst.Name) else None
    if eval_shape is None or fv is None or fv.choice is not None or fv.head or \
            fv.keywords or not all(a is None or type(a) is int for a in axes):
        return None
    fv = n.funcs.resolved(fv, make)
    captured = [cst.Name(name) for name, value in fv.captured]
    if any(not isinstance(value, Var) or value.name not in n.env.values()
           for _, value in fv.captured):
        return None
    name = n.names.fresh(f"{getattr(fv.obj, '__name__', 'g')}_empty_batch")
    empty = EmptyBatch(eval_shape, fv.obj, axes, arity, out_axis, name)
    return empty, list(args) + captured


def _stacked_calls(n: Any, node: Any, target: str | None, elt: Any, rows: list[Any],
                   iters: list[Any], arity: int | None, out_axis: int,
                   empty: tuple | None = None) -> Any:
    """The statements ``vmap(g)(...)`` is, example by example::

        parts = []
        for m_row in np.moveaxis(m, 1, 0):
            out = g(m_row, w)
            parts.append(out)
        np.stack(parts)

    (one list per output where ``g`` returns a tuple: ``out_0, out_1 = g(...)``), the
    stacked axis moved to ``out_axes``.  An empty batch is refused when the code runs:
    NumPy's error from ``np.stack`` is raised located at the user's line
    (``api/located.py``), since the stacked result's shape is ``g``'s output's, which
    only a call of ``g`` tells (jax.vmap traces ``g`` abstractly; the top-level
    ``s2s.vmap`` probes it on a row of zeros)."""
    def fresh(base: str) -> str:
        name = n.names.fresh(base)
        n.local_names.add(name)
        return name

    lists = [fresh(f"parts_{k}" if arity else "parts") for k in range(arity or 1)]
    outs = [fresh(f"out_{k}" if arity else "out") for k in range(arity or 1)]
    renamer = _Renamer({r.value: fresh(r.value) for r in rows})
    rows, elt = [r.visit(renamer) for r in rows], elt.visit(renamer)
    statements: list[Any] = [cst.parse_statement(f"{p} = []") for p in lists]
    target_node: Any = rows[0] if len(rows) == 1 else cst.Tuple(
        [cst.Element(r) for r in rows])
    iterable: Any = iters[0] if len(rows) == 1 else cst.Call(
        cst.Name("zip"), [cst.Arg(it) for it in iters])
    call = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(
        cst.Name(outs[0]) if len(outs) == 1 else cst.Tuple(
            [cst.Element(cst.Name(o)) for o in outs]))], elt)])
    appends = cst.SimpleStatementLine([cst.Expr(cst.Call(cst.Attribute(
        cst.Name(p), cst.Name("append")), [cst.Arg(cst.Name(o))]))
        for p, o in zip(lists, outs)])
    statements.append(cst.For(target=target_node, iter=iterable,
                              body=cst.IndentedBlock([call, appends])))
    lower_in_place(n, statements, node)
    stacked = [cst.parse_expression(f"np.stack({p})") for p in lists]
    if out_axis != 0:
        stacked = [_moveaxis(s, 0, out_axis) for s in stacked]
    if empty is not None:
        for s in stacked:
            _alias_all(n, s, node)
        length = cst.Call(cst.Name("len"), [cst.Arg(iters[0])])
        _alias_all(n, length, node)
        return stacked_or_empty(n, node, target, stacked, length, empty[0], empty[1],
                                fresh, _alias_all)
    result = stacked[0] if arity is None else cst.Tuple([cst.Element(s) for s in stacked])
    _alias_all(n, result, node)
    return n.exprs.expr(result, target)


def _is_spec(axis: Any) -> bool:
    """An in_axes entry: an int or None, or a tuple, list or dict of entries."""
    if axis is None or type(axis) is int:
        return True
    if isinstance(axis, (tuple, list)):
        return all(_is_spec(a) for a in axis)
    return isinstance(axis, dict) and all(isinstance(k, str) and _is_spec(a)
                                          for k, a in axis.items())


def _mapped(axis: Any) -> bool:
    if isinstance(axis, (tuple, list)):
        return any(_mapped(a) for a in axis)
    if isinstance(axis, dict):
        return any(_mapped(a) for a in axis.values())
    return axis is not None


def _spread(arg: Any, axis: Any, base: str, rows: list[Any], iters: list[Any]) -> Any:
    """What the call of ``g`` is given for ``arg`` mapped over ``axis``: a row name
    (its iterable added to ``iters``), ``arg`` itself for None, and for a tuple or dict
    of axes the literal of the argument's items, each spread on its own axis
    (``in_axes=((0, None),)`` over ``p`` gives ``(p_0_row, p[1])``)."""
    if axis is None:
        return arg
    if isinstance(axis, (tuple, list)):
        return cst.Tuple([cst.Element(_spread(
            cst.Subscript(arg, [cst.SubscriptElement(cst.Index(cst.Integer(str(i))))]),
            a, f"{base}_{i}", rows, iters)) for i, a in enumerate(axis)])
    if isinstance(axis, dict):
        return cst.Dict([cst.DictElement(cst.SimpleString(repr(key)), _spread(
            cst.Subscript(arg, [cst.SubscriptElement(cst.Index(cst.SimpleString(
                repr(key))))]), a, f"{base}_{key}" if key.isidentifier() else
            f"{base}_{i}", rows, iters)) for i, (key, a) in enumerate(axis.items())])
    row = cst.Name(f"{base}_row")
    rows.append(row)
    iters.append(arg if axis == 0 else _moveaxis(arg, axis, 0))
    return row


class _Renamer(cst.CSTTransformer):
    """The comprehension's row names, renamed to fresh loop names."""

    def __init__(self, table: dict[str, str]) -> None:
        super().__init__()
        self.table = table

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> Any:
        return cst.Name(self.table[original.value]) if original.value in self.table \
            else updated


def _tuple_arity(n: Any, fun: Any) -> int | None:
    """How many arrays ``fun`` returns, where each of its ``return``s is a tuple
    literal of one length (None: one array, or not known from its text)."""
    if isinstance(fun, cst.Lambda):
        body = fun.body
        return len(body.elements) if isinstance(body, cst.Tuple) else None
    fv = n.funcs.value_of(fun)
    obj = getattr(fv, "obj", None)
    if not isinstance(obj, types.FunctionType) or fv.choice is not None:
        return None
    try:
        parsed = parse_function(obj)
    except TransformError:
        return None
    found: list[Any] = []
    assigned: dict[str, list[Any]] = {}  # name -> the values assigned to it

    class Returns(cst.CSTVisitor):
        def visit_Return(self, r: cst.Return) -> None:
            found.append(r.value)

        def visit_Assign(self, a: cst.Assign) -> None:
            for t in a.targets:
                if isinstance(t.target, cst.Name):
                    assigned.setdefault(t.target.value, []).append(a.value)

        def visit_AnnAssign(self, a: cst.AnnAssign) -> None:
            if isinstance(a.target, cst.Name):
                assigned.setdefault(a.target.value, []).append(a.value)

        def visit_AugAssign(self, a: cst.AugAssign) -> None:
            if isinstance(a.target, cst.Name):
                assigned.setdefault(a.target.value, []).append(None)

        def visit_For(self, f: cst.For) -> None:
            for m in target_names(f.target):
                assigned.setdefault(m, []).append(None)

        def visit_FunctionDef(self, d: cst.FunctionDef) -> bool:
            return d is parsed.node

        def visit_Lambda(self, lam: cst.Lambda) -> bool:
            return lam is parsed.node

    parsed.node.visit(Returns())
    if isinstance(parsed.node, cst.Lambda):
        found = [parsed.node.body]
    lengths = {_tuple_length(v, assigned) for v in found}
    return lengths.pop() if len(lengths) == 1 else None


def _tuple_length(value: Any, assigned: dict[str, list[Any]]) -> int | None:
    """The length of a returned tuple literal, or of the tuple literals a returned name
    is assigned (``t = (a, b); return t``) where every assignment to it is one."""
    if isinstance(value, cst.Tuple):
        return len(value.elements)
    if isinstance(value, cst.Name) and value.value in assigned:
        lengths = {len(v.elements) if isinstance(v, cst.Tuple) and not any(
            isinstance(e, cst.StarredElement) for e in v.elements) else None
            for v in assigned[value.value]}
        return lengths.pop() if len(lengths) == 1 else None
    return None



def _moveaxis(value: Any, source: int, destination: int) -> cst.Call:
    return cst.Call(cst.parse_expression("np.moveaxis"), [
        cst.Arg(value), cst.Arg(cst.Integer(str(source)) if source >= 0 else
                                cst.UnaryOperation(cst.Minus(), cst.Integer(str(-source)))),
        cst.Arg(cst.Integer(str(destination)) if destination >= 0 else
                cst.UnaryOperation(cst.Minus(), cst.Integer(str(-destination))))])


def _alias_all(n: Any, tree: Any, node: Any) -> None:
    """The new nodes report the user's call's position (the user's own keep theirs)."""
    n.desugar.alias_tree(tree, node)
