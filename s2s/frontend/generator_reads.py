"""A generator's items are read once: the check that s2s's list of them is read once too.

s2s runs a generator function as the list of what it yields (``generators.py``), and a
list can be read again where Python's generator is spent: ``g = gen(x)`` then
``sum(g) + sum(g)`` is ``sum(g) + 0`` in Python, and the list would give the items
twice, a wrong number.  So each call of a generator function is checked where the
function reads it, in the user's code, before it is lowered:

- read where it is made: ``for v in gen(x):``, ``[f(v) for v in gen(x)]``,
  ``sum(gen(x))``, ``list(...)``, ``tuple``, ``zip``, ``enumerate``, ``sorted``,
  ``np.stack``/``np.array`` of it, ``yield from gen(x)``: once each time it is made;
- bound to a name, ``g = gen(x)``, then read once in one of those ways, by a
  statement that runs once for each time the name is bound (not in a loop or a
  comprehension the binding is outside of);
- anything else is refused at the user's line: a second read (Python gives it no
  items), ``next(g)`` (s2s has no generator to resume), ``g.send(v)``, ``g.throw``,
  passing it to a function (which could read it twice), returning it.
"""

from __future__ import annotations

import inspect
import types
from typing import Any

import libcst as cst

from ..errors import TransformError, UnsupportedSyntaxError
from .resolve import is_library
from .source import parse_function

# calls that read their iterable argument once, front to back
ONCE = {"sum", "list", "tuple", "zip", "enumerate", "sorted", "min", "max", "any",
        "all", "map", "pairwise", "islice"}
ONCE_NP = {"stack", "array", "asarray", "vstack", "hstack", "concatenate"}
LOOPS = (cst.For, cst.While, cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp)
SCOPES = (cst.FunctionDef, cst.Lambda)
KEEP = "keep its items in a list (`items = list(gen(x))`) and read the list"


def check_consumed(n: Any, node: cst.Call, fv: Any) -> None:
    """Refuse (located) a call ``node`` of the generator function ``fv`` (a function
    value; any other: nothing to check) whose items the function may read otherwise
    than once, front to back (see the module's note)."""
    if not hasattr(fv.obj, "__s2s_listed__"):
        return
    text = fv.text
    calls, names = _walk(n)
    pos = n.p.positions.get(node)
    found = calls.get((pos.start.line, pos.start.column)) if pos is not None else None
    if found is None:
        return  # (a call s2s wrote, not the user)
    call, parents = found
    if _read_once(call, parents) or _is_next(parents):
        return  # (`next(gen(x))`: its first item)
    parent = parents[-1]
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(
            parent.targets[0].target, cst.Name):
        _check_name(n, parent, parents, parent.targets[0].target.value, names, text)
        return
    if _callee_reads_once(n, parents, text):
        return  # (`total(gen(x))`, `total` reading its parameter once)
    raise n.unsupported(call, _why(parents, f"the generator `{text}(...)`"),
                        "iterate it where it is made (`for v in gen(x):`, "
                        "`sum(gen(x))`, `list(gen(x))`), or " + KEEP)


class _Callee:
    """A function a generator is passed to, seen as ``_check_name`` sees the
    function that made it (its parse, errors located in it)."""

    def __init__(self, parsed: Any) -> None:
        self.p = parsed

    def loc(self, node: Any) -> Any:
        return self.p.loc(node)

    def unsupported(self, node: Any, what: str, hint: str) -> Any:
        return UnsupportedSyntaxError(what, self.p.loc(node), hint)


def _callee_reads_once(n: Any, parents: tuple, text: str) -> bool:
    """``f(gen(x))`` (``f(g)``) of a Python function ``f`` of the user's: True where
    ``f`` reads that parameter once, front to back (refused, located in ``f``, where it
    reads it otherwise); False for any other call."""
    arg, call = parents[-1], parents[-2] if len(parents) >= 2 else None
    funcs = getattr(n, "funcs", None)
    if not isinstance(arg, cst.Arg) or not isinstance(call, cst.Call) or arg.star or (
            funcs is None or not isinstance(call.func, (cst.Name, cst.Attribute))):
        return False
    fv = funcs.value_of(call.func)
    obj = getattr(fv, "obj", None)
    skip = 0
    if obj is None and (init := _init_of(n, call.func)) is not None:
        obj, skip = init, 1  # (`Poly(reversed(c))`: its `__init__`, after `self`)
    if not isinstance(obj, types.FunctionType) or is_library(obj) or hasattr(
            obj, "__s2s_listed__") or obj.__code__.co_flags & inspect.CO_GENERATOR:
        return False
    params = [p for p in inspect.signature(obj).parameters.values() if p.kind in (
        p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)][skip:]
    index = call.args.index(arg)
    if arg.keyword is not None:
        name = arg.keyword.value
    elif any(a.star or a.keyword for a in call.args[:index]) or index >= len(params) or (
            params[index].kind is params[index].KEYWORD_ONLY):
        return False
    else:
        name = params[index].name
    try:
        view = _Callee(parse_function(obj))
    except TransformError:
        return False
    body = view.p.node.body.body
    line, column = _at(view, body[0]) if body else (0, 0)
    _check_name(view, None, (view.p.node,), name, _walk(view)[1], text, (line, column - 1))
    return True


def _init_of(n: Any, func: Any) -> Any:
    """The ``__init__`` of the class of yours ``func`` names, or None."""
    try:
        cls, _ = n.resolver.resolve_dotted(func)
    except TransformError:
        return None
    init = inspect.getattr_static(cls, "__init__", None) if isinstance(cls, type) else None
    return init if isinstance(init, types.FunctionType) and not is_library(init) else None


def read_once_as_made(n: Any, node: Any, text: str, kind: str) -> bool:
    """``reversed(s)`` (a call ``text``) or a generator expression ``node`` of the
    user's, lowered as the list of its items: True where the function reads it once,
    front to back, as ``check_consumed`` reads a generator function's call (where it
    is made, bound to a name read once, passed to a function of yours that reads it
    once); False where it is not one of the user's nodes; refused, located, where it
    is bound to a name read otherwise."""
    calls, names = _walk(n)
    pos = n.p.positions.get(node)
    at = (pos.start.line, pos.start.column) if pos is not None else None
    found = (calls if isinstance(node, cst.Call) else n._generator_exps).get(at)
    if found is None or isinstance(node, cst.Call) and _called(found[0]) != text:
        return False
    made, parents = found
    if _read_once(made, parents):
        return True
    parent = parents[-1]
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(
            parent.targets[0].target, cst.Name):
        _check_name(n, parent, parents, parent.targets[0].target.value, names, text,
                    kind=kind)
        return True
    return _callee_reads_once(n, parents, text)


def _read_once(node: Any, parents: tuple) -> bool:
    """Is ``node`` (under ``parents``) read once where it stands, front to back?"""
    parent = parents[-1]
    if isinstance(parent, (cst.For, cst.CompFor)) and parent.iter is node:
        return True
    if isinstance(parent, cst.From):
        return True  # (`yield from gen(x)` in a generator)
    if isinstance(parent, cst.Arg) and len(parents) >= 2 and not parent.star and (
            parent.keyword is None):
        call = parents[-2]
        func = call.func
        name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(
            func, cst.Attribute) else None
        if name in ONCE and not (name == "map" and call.args[0] is parent):
            return True
        return isinstance(func, cst.Attribute) and name in ONCE_NP
    return False


def _why(parents: tuple, what: str) -> str:
    parent = parents[-1]
    if isinstance(parent, cst.Arg) and len(parents) >= 2 and _called(parents[-2]) == "next":
        return (f"`next` of {what}: s2s runs a generator as the list of its items, all "
                "made before the first is read, so there is no generator to resume")
    if isinstance(parent, cst.Attribute):
        return (f"`.{parent.attr.value}` of {what}: s2s runs a generator as the list of "
                "its items, which has no generator to send a value into, resume or close")
    if isinstance(parent, cst.Arg):
        return (f"{what} is passed on to a call, which could read its items twice (a "
                "generator gives them once) or resume it; s2s runs a generator as the "
                "list of its items")
    return (f"{what} is used as a value; s2s runs a generator as the list of its items, "
            "so only a read of its items where it is made is supported")


def _called(call: Any) -> str | None:
    func = call.func if isinstance(call, cst.Call) else None
    return func.value if isinstance(func, cst.Name) else None


def _check_name(n: Any, bind: cst.Assign | None, bind_parents: tuple, name: str,
                names: list, text: str, start: tuple[int, int] | None = None,
                kind: str = "the generator") -> None:
    """``name = gen(...)``: the reads of ``name`` after it, up to its next binding:
    ``next(name)`` (``next(name, default)``) calls, each on a path that runs once,
    then at most one read of the rest (a ``for``'s or a comprehension's)."""
    start = _at(n, bind) if start is None else start
    reads: list[tuple[cst.Name, tuple]] = []
    for node, parents, store in names:
        if node.value != name or _at(n, node) <= start:
            continue
        if store:
            break  # (bound again: a later generator, checked at its own call)
        reads.append((node, parents))
    what = f"`{name}` ({kind} `{text}(...)`)" if kind == "the generator" else (
        f"`{name}` ({kind})")
    inside = set(map(id, bind_parents))
    taken = 0
    for node, parents in reads:
        if _is_next(parents) and bind is not None:
            _once_here(n, node, parents, inside, what, straight=True)
            nexts(n)[_at(n, parents[-2])] = (name, taken)  # (`name[taken]`)
            taken += 1
            continue
        if node is not reads[-1][0]:
            first = n.loc(node).line
            raise n.unsupported(reads[reads.index((node, parents)) + 1][0], f"{what} is "
                                f"read again after line {first} read its items: Python's "
                                f"{'generator' if 'generator' in kind else 'iterator'} "
                                "gives no items the second time, where s2s's "
                                "list of them would give them again", KEEP)
        if taken and not isinstance(parents[-1], (cst.For, cst.CompFor)):
            raise n.unsupported(node, f"what `next` left of {what} read otherwise than by "
                                "a loop: s2s reads the rest only as `for v in g:` or a "
                                "comprehension over `g`", "write `sum(v for v in g)`, "
                                "`[v for v in g]`, or " + KEEP)
        if not (_read_once(node, parents) or _callee_reads_once(n, parents, text)):
            raise n.unsupported(node, _why(parents, what), "iterate it once (`for v in g:`, "
                                "`sum(g)`, `list(g)`), or " + KEEP)
        _once_here(n, node, parents, inside, what)
        if taken:
            nexts(n)[_at(n, node)] = (name, taken)  # (the rest: `name[taken:]`)


def _is_next(parents: tuple) -> bool:
    return isinstance(parents[-1], cst.Arg) and len(parents) >= 2 and _called(
        parents[-2]) == "next" and parents[-2].args[0] is parents[-1] and not (
        parents[-1].star or parents[-1].keyword) and len(parents[-2].args) <= 2


def nexts(n: Any) -> dict:
    """``{position: (name, k)}``: the user's ``next(g)`` calls that read item ``k`` of
    the list ``g``, and the reads of what is left (``for v in g``: ``g[k:]``)."""
    if not hasattr(n, "_generator_nexts"):
        n._generator_nexts = {}
    return n._generator_nexts


def _once_here(n: Any, node: Any, parents: tuple, inside: set, what: str,
               straight: bool = False) -> None:
    """Refuse a read that may run more than once for each time the generator is made
    (in a loop or a nested function the binding is outside of); ``straight``: or not
    at all (under an ``if``: which item a later ``next`` reads is then not known)."""
    for k, outer in enumerate(parents):
        if id(outer) in inside:
            continue
        if isinstance(outer, SCOPES):
            raise n.unsupported(node, f"{what} is read in a nested function, which may "
                                "run more than once (a generator gives its items once)",
                                KEEP)
        if isinstance(outer, LOOPS) and not _runs_once(outer, parents[k + 1:] + (node,)):
            raise n.unsupported(node, f"{what} is read in a loop that runs again (line "
                                f"{n.loc(outer).line}), and a generator gives its items "
                                "once: Python reads none after the first time", KEEP)
        if straight and isinstance(outer, (cst.If, cst.IfExp, cst.BooleanOperation,
                                           cst.Try, cst.Match)):
            raise n.unsupported(node, f"`next` of {what} on a path an `if` chooses: "
                                "which item a later `next` reads would depend on it",
                                "call `next` outside the `if`, or " + KEEP)


def next_item(n: Any, call: cst.Call) -> Any:
    """The expression for ``next(g)`` of a generator bound to ``g``: ``g[k]``, the
    item the ``k`` earlier ``next`` calls left (``next(g, d)``: ``g[k] if len(g) > k
    else d``); ``next(gen(x))``: ``gen(x)[0]``; None for any other ``next``."""
    found = nexts(n).get(_at(n, call)) if call.args else None
    if found is not None:
        seq, k = cst.Name(found[0]), found[1]
    elif call.args and isinstance(call.args[0].value, cst.Call) and len(call.args) <= 2 and (
            _direct(n, call)):
        seq, k = call.args[0].value, 0
    else:
        return None
    item = cst.Subscript(seq, [cst.SubscriptElement(cst.Index(cst.Integer(str(k))))])
    if len(call.args) == 2:
        item = cst.IfExp(cst.Comparison(cst.Call(cst.Name("len"), [cst.Arg(seq)]), [
            cst.ComparisonTarget(cst.GreaterThan(), cst.Integer(str(k)))]), item,
            call.args[1].value)
    n.desugar.alias_tree(item, call)
    return item


def rest(n: Any, node: Any) -> Any:
    """What is left of a generator ``g`` that ``next`` read ``k`` items of, where a loop
    reads it (``g[k:]``), or ``node``."""
    found = nexts(n).get(_at(n, node)) if isinstance(node, cst.Name) else None
    if found is None:
        return node
    made = cst.Subscript(node, [cst.SubscriptElement(cst.Slice(cst.Integer(str(found[1])),
                                                               None))])
    n.desugar.alias_tree(made, node)
    return made


def _direct(n: Any, call: cst.Call) -> bool:
    calls, _ = _walk(n)
    found = calls.get(_at(n, call.args[0].value))
    return found is not None and _is_next(found[1]) and hasattr(getattr(
        n.funcs.value_of(call.args[0].value.func), "obj", None), "__s2s_listed__")


def _runs_once(loop: Any, below: tuple) -> bool:
    """Is the node under ``loop`` (``below``: the path down to it) evaluated once per
    run of the loop statement: a ``for``'s or a comprehension's first iterable?"""
    child = below[0] if below else None
    if isinstance(loop, cst.For):
        return child is loop.iter
    if isinstance(loop, (cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp)):
        return child is loop.for_in and len(below) > 1 and below[1] is loop.for_in.iter
    return False


def _at(n: Any, node: Any) -> tuple[int, int]:
    pos = n.p.positions.get(node)
    return (pos.start.line, pos.start.column) if pos is not None else (0, 0)


def _walk(n: Any) -> tuple[dict, list]:
    """The user's calls by position, with their ancestors; the names in order, each with
    its ancestors and whether it is bound there (made once per normalizer)."""
    cached = getattr(n, "_generator_reads", None)
    if cached is not None:
        return cached
    calls: dict[tuple[int, int], tuple[cst.Call, tuple]] = {}
    exps: dict[tuple[int, int], tuple[cst.GeneratorExp, tuple]] = {}
    names: list[tuple[cst.Name, tuple, bool]] = []
    stack: list[Any] = []
    stores: set[int] = set()

    class Walk(cst.CSTVisitor):
        def on_visit(self, node: Any) -> bool:
            if isinstance(node, cst.Call):
                at = _at(n, node)
                calls.setdefault(at, (node, tuple(stack)))
            elif isinstance(node, cst.GeneratorExp):
                exps.setdefault(_at(n, node), (node, tuple(stack)))
            elif isinstance(node, (cst.AssignTarget, cst.For, cst.CompFor, cst.AugAssign,
                                   cst.AnnAssign, cst.WithItem)):
                target = getattr(node, "target", None) or getattr(
                    getattr(node, "asname", None), "name", None)
                if target is not None:
                    for sub in _names_in(target):
                        stores.add(id(sub))
            elif isinstance(node, cst.Param):
                stores.add(id(node.name))  # (a parameter: bound before the body)
            elif isinstance(node, cst.Name):
                parent = stack[-1] if stack else None
                if not (isinstance(parent, cst.Attribute) and parent.attr is node):
                    names.append((node, tuple(stack), id(node) in stores))
            stack.append(node)
            return True

        def on_leave(self, node: Any) -> None:
            stack.pop()

    n.p.node.visit(Walk())
    names.sort(key=lambda item: _at(n, item[0]))
    n._generator_reads, n._generator_exps = (calls, names), exps
    return calls, names


def _names_in(target: Any) -> list[cst.Name]:
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for e in target.elements for name in _names_in(e.value)]
    if isinstance(target, cst.StarredElement):
        return _names_in(target.value)
    return []


def spent_generator(n: Any, node: cst.Name, obj: Any) -> Any:
    """``obj``, the value of the global ``node``; refused where it is a generator object
    made outside the function (a module's ``G = gen(x)``): Python's first call spends
    its items and later calls read none, where s2s would read them at each call."""
    if not isinstance(obj, types.GeneratorType):
        return obj
    raise n.unsupported(node, f"`{node.value}` is a generator object made outside the "
                         "function: Python's first call reads its items and later calls "
                         "read none (it is spent), which no transformed function can "
                         "repeat", "pass its items in (`items = list(G)` outside the "
                         "function), or call the generator function inside it")
