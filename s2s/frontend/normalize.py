"""libcst tree -> canonical IR (A-normal form), resolving every name on the way.

Names are resolved the way Python resolves them when the function runs: locals, then
the closure, then the function's globals, then builtins.  NumPy calls are recognised
by the identity of the object a name is bound to, so ``np.sin``, ``numpy.sin`` and
``from numpy import sin`` are the same primitive.  Temporaries get names built from
the user's names (``x_at_w`` for ``x @ w``) so emitted code reads like hand-written
code.
"""

from __future__ import annotations

import inspect
import types
from collections import Counter
from typing import Any

import libcst as cst

from ..caches import LRU
from ..errors import Loc, TransformError, UnsupportedSyntaxError
from ..ir.kinds import LEAF
from ..ir.memory import MemoryCheck
from ..ir.names import NameTable, readable, stem
from ..ir.nodes import Atom, Break, Const, For, Function, If, Index, Let, Return, Stmt, Var
from ..ir.nodes import uses as uses_of
from ..ir.nodes import walk as walk_stmts
from . import expressions
from .bound_params import bind_parameter_functions, ints_bound, literal_lines
from .buffers import ALIASING, EFFECTS, WRITES, BufferLowerer, allocates
from .calls import CallLowerer
from .carried_records import split_joins
from .comprehensions import Comprehensions
from .desugar import Desugar
from .dicts import DictWrites, assigned_names
from .draws import DrawLowerer
from .expressions import (
    COMPARE,
    INDEX_ARITHMETIC,
    MAX_NAME,
    SHAPE_READS,
    ExprLowerer,
)
from .functions import FunctionLowerer, Plan
from .inner_transforms import cast_gradients, watched
from .iterations import desugared_body
from .loops import LoopLowerer, bound_before_loop
from .lowered_checks import as_written, check_lowered, refuse_passed
from .nested_types import structure_fields
from .objects import bind_instance, plained_text, record_of_atom, through_identity, typed_param
from .param_writes import checked as _checked
from .pyvalues import PythonValues
from .recursive import RecursivePlanned, planning
from .resolve import (
    RESERVED,
    DefaultVar,
    FreeVar,
    Resolver,
    ThroughVar,
    is_library,
    is_literal,
    live_defaults,
    transform_kind,
    unwrap_forwarding,
)
from .scope import OnePath
from .self_methods import self_methods_hold
from .source import ParsedFunction, emitted, parse_function, recursion_room
from .statements import StmtLowerer
from .super_calls import class_function

# the IR per function and source text: the most recently used only (s2s/caches.py)
_FUNCTIONS: LRU[Any, Function] = LRU(256)


def _fingerprints(free: dict[str, FreeVar]) -> tuple:
    return tuple((name, var.fingerprint()) for name, var in free.items())


def _still_valid(ir: Function) -> bool:
    """Do the free names and defaults a memoized IR was built from still hold what
    they held then?  (A new transform of the function must not reuse an IR built for
    a default or a kind of module constant that has since changed.)"""
    built = getattr(ir, "_s2s_built_with", None)
    return built is None or built == _fingerprints(ir.free)


def normalize(fn: Any, fresh: bool = False) -> Function:
    """The IR of a Python function (memoized per function object and its source).

    ``fresh=True`` normalizes again, callees included, because a free name the
    memoized IR was built from is now bound to something that changes it.
    """
    fn = unwrap_forwarding(fn)
    parsed = parse_function(fn)
    key = (fn, parsed.source_hash)
    if fresh:
        for k in [k for k in _FUNCTIONS if k[0] is fn]:
            del _FUNCTIONS[k]
        _FRESH.add(fn)
    if key in _FUNCTIONS and not fresh and not (
            _still_valid(_FUNCTIONS[key]) and self_methods_hold(fn)):
        return normalize(fn, fresh=True)
    if key not in _FUNCTIONS:
        with recursion_room(parsed.depth):  # (a long expression nests deep)
            _FUNCTIONS[key] = _run(fn, parsed, ())
    _FRESH.discard(fn)
    return refuse_passed(_FUNCTIONS[key])  # (its argument passed to `y += v`)


_FRESH: set[Any] = set()  # functions being normalized again, callees included


def _loop_bound(node: Any, name: str) -> bool:
    """Does a ``for`` or ``while`` in ``node`` (a function's CST) bind ``name``?"""
    found = []

    class Loops(cst.CSTVisitor):
        def visit_For(self, loop: cst.For) -> None:
            found.append(name in assigned_names(loop.body) or (
                isinstance(loop.target, cst.Name) and loop.target.value == name))

        def visit_While(self, loop: cst.While) -> None:
            found.append(name in assigned_names(loop.body))

    node.visit(Loops())
    return any(found)


def _run(fn: Any, parsed: Any, stack: tuple[Any, ...], plan: Plan | None = None) -> Function:
    """``fn``'s IR.  A name read after a loop whose body first binds it (``for v in
    x: y = 2 * v`` then ``np.sum(y)``; ``while True: x_new = ...; if ...: break``) is
    unbound after the loop in one pass: the next pass binds it to None before the
    loop (``loops.py``'s ``prebind``), so the loop carries it out, as Python does.

    Code s2s emitted (a gradient transformed again) may bind a name on paths whose
    union is every path, over several `if`s (a cotangent first set on each path of a
    `min` over three items: ``if a: (if not b: g = ...)``, ... , ``if b: g = ...``);
    the reverse sweep that wrote it knows the paths cover, the path records here do
    not: the next pass binds it None at the function's start (``Normalizer.topbind``),
    so each `if` joins it."""
    prebind: set[str] = set()
    topbind: set[str] = set()
    while True:
        n = Normalizer(fn, parsed, stack, plan)
        n.prebind, n.topbind = prebind, topbind
        try:
            return n.run()
        except TransformError as err:
            name = getattr(err, "unbound_name", None)
            if name is not None and name not in prebind and _loop_bound(
                    parsed.node, name) and not bound_before_loop(parsed.node, name):
                prebind = prebind | {name}
            elif name is not None and name not in topbind and emitted(fn):
                topbind = topbind | {name}
            else:
                raise


def _bound_none_first(n: Any, hoisted: list[Any]) -> list[Any]:
    """``name = None`` first for each name ``_run`` found bound on every path only
    over several `if`s (``Normalizer.topbind``)."""
    first = literal_lines(n, hoisted[0])  # (`names=("a", "b")` made per call)
    for name in sorted(getattr(n, "topbind", ())):
        none = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))],
                                                   cst.Name("None"))])
        n.desugar.alias_tree(none, hoisted[0])
        first.append(none)
    return first + hoisted


def _reads_in(stmts: list[Stmt]) -> Counter:
    """How many times each name is read in ``stmts``, at any depth."""
    return Counter(name for s in walk_stmts(stmts) for name in uses_of(s))


def _reads_after(body: list[Stmt], stmt: Stmt) -> Counter:
    """The reads that may see what ``stmt`` binds: those after it, and, where it is in
    a loop, every read of that loop outside it (a later iteration's).  A read before
    it outside loops is of an earlier binding of the same name (an earlier `if` on the
    same test that bound it on one path: ``_enter_path``)."""
    order = list(walk_stmts(body))
    inside = {id(s) for s in walk_stmts([stmt])}
    start = next(i for i, s in enumerate(order) if s is stmt)
    seen = [s for s in order[start:] if id(s) not in inside]
    for loop in order[:start]:
        if isinstance(loop, For) and any(s is stmt for s in walk_stmts(loop.body)):
            seen = [s for s in walk_stmts([loop]) if id(s) not in inside] + seen
            break  # (the outermost loop around it)
    return Counter(name for s in seen for name in uses_of(s))


def _drop_unread_placeholders(body: list[Stmt], placeholders: list) -> None:
    """Take back the None ``Normalizer._enter_path`` gave a name on the other path of
    the `if` that binds it, where no code outside that `if` reads the join (a later
    `if` on the same test was entered, but never read the name).  A container joined
    with None has no zeros for its derivative: such a dead join would be refused."""
    if not placeholders:
        return
    outside: dict[int, Counter] = {}  # id(if) -> the reads that may see its join
    for stmt, side, let in placeholders:
        if id(stmt) not in outside:
            outside[id(stmt)] = _reads_after(body, stmt)
        if outside[id(stmt)][let.target]:
            continue  # read after the `if` (or before it, in a loop): the join stays
        branch = getattr(stmt, side)
        for i, other in enumerate(branch):
            if other is let:
                del branch[i]
                stmt.joins.remove(let.target)
                break


def _by_field(lets: dict, base: Var, params: dict) -> dict:
    """``o[0]`` of a NamedTuple the function built (``o = Out(h, s)``) is its field
    ``o["h"]``: the emitted code holds it as the dict of its fields."""
    let = lets.get(base.name)
    made = let.params.get("built") if let is not None and let.prim == "make_dict" \
        else None
    index = params.get("index")
    if made is None or not made.positional or not isinstance(index, Index) or \
            index.is_tuple or len(index.items) != 1:
        return params
    item = index.items[0]
    if isinstance(item, Const) and type(item.value) is int and (
            -len(made.keys) <= item.value < len(made.keys)):
        key = made.keys[item.value]
        return {**params, "index": Index((Const(key, repr(key)),), False, attribute=True)}
    return params


class Normalizer:
    def __init__(self, fn: Any, parsed: ParsedFunction, stack: tuple[Any, ...],
                 plan: Plan | None = None):
        self.fn = fn
        self.plan = plan  # how the call this callee is normalized for passes its values
        self.p = parsed
        self.stack = stack + (fn,)
        code = fn.__code__
        # (a local a comprehension reads is a cell variable of the function)
        self.local_names = set(code.co_varnames) | set(code.co_cellvars)
        self.shapes: set[str] = set()  # names computed from shapes and constants only
        self.producers: dict[str, str] = {}  # name -> the primitive that computed it
        self.resolver = Resolver(fn, parsed)
        self.names = NameTable(
            set(code.co_varnames) | set(code.co_cellvars) | _names_in(code)
            | set(code.co_freevars) | RESERVED
        )
        self.bound: set[str] = set()  # user names bound at least once
        self.env: dict[str, str] = {}  # user name -> current SSA name
        self.display = fn.__name__
        self.depth = 0  # how many `if` statements enclose the current one
        self.loops: list[list[Break]] = []  # per enclosing loop, the breaks seen so far
        # Arrays (lists) it made itself, which it may write into: each write makes a
        self.buffers: set[str] = set()  # new version of one buffer (named after its root)
        self.buffer_root: dict[str, str] = {}  # a written version -> the first name
        self.lists: set[str] = set()  # lists this function built (append allowed)
        # lists read as the literal they were built from (`pair + [v]`): root, the
        # number of statements then, the node (frontend/sequences.py checks them)
        self.literal_reads: list[tuple[str, int, Any]] = []
        self.loop_carried: set[str] = set()  # (sequences.carried: not the literal)
        self.assumed_lengths: list[tuple[str, int, Any]] = []  # (carried_records)
        self._last_let: Let | None = None  # the statement emit() made last
        self.lets: Bindings = Bindings()  # name -> the statement that bound it
        self.rebuilt_hint: dict | None = None  # (see expressions.expr_Call, _rebuilding)
        self.bound_object: str | None = None  # a bound method's `self` (or `cls`)
        # values another name, a view or a container refers to (NumPy's `y += v` on
        # one changes what they see too; s2s rebinds `y`): name -> where it was aliased
        self.aliased: dict[str, Any] = {}
        self._augmented: list[tuple[str, Any]] = []  # `x += v` in loops: (x's name, node)
        # Names an `if` binds on one path only: usable again inside a later `if` on
        # the same path, as long as nothing rebinds them in between (see _enter_path)
        self.partial: list[OnePath] = []
        # the None bindings _enter_path put on the other paths: (if, its branch, let)
        self.placeholders: list[tuple[If, str, Let]] = []
        self.paths: list[Any] = []  # the paths of the branches being normalized
        self.generation: dict[str, int] = {}  # user name -> how many times bound
        self.user_of: dict[str, str] = {}  # a name that binds a user's variable -> it
        self.negates: dict[str, str] = {}  # `not t`'s name -> t
        # a comparison's name -> what it compares: `s > 0` twice is one test
        self.compares: dict[str, Any] = {}
        self._paths_outside: list[list] = []  # `partial` of the code around each loop
        self._open: list[list[Stmt]] = []  # statement lists being built, outermost first
        # per enclosing `if`: the names bound before it, and the loops around it
        self._branches: list[tuple[set[str], int]] = []
        self.out: list[Stmt] = []
        self.desugar = Desugar(parsed.positions, self.unsupported, self.names.fresh)
        self.exprs = ExprLowerer(self)
        self.calls = CallLowerer(self)
        self.loop = LoopLowerer(self)
        self.buffer = BufferLowerer(self)
        self.stmts = StmtLowerer(self)
        self.comps = Comprehensions(self)
        self.pyvalues = PythonValues(self)
        self.funcs = FunctionLowerer(self)
        self.draws = DrawLowerer(self)
        self.dicts = DictWrites(self)
        bind_instance(self)  # (a method bound to an object: `self` is the object)

    # ---- entry ----------------------------------------------------------------

    def run(self) -> Function:
        node = self.p.node
        params, kwonly, defaults = self._signature(node) if self.plan is None else (
            self.funcs.enter(self.plan), [], {})
        if inspect.ismethod(self.fn) and params and self.plan is None:
            # a bound method (`model.loss`, `Model.class_loss`) is called without its
            # first parameter: the object, which the body may not read (see expr_Name)
            self.bound_object = params.pop(0)
        self.env.update({name: name for name in params + kwonly})
        self.bound.update(params + kwonly)
        self.arguments = self.draws.params = set(params + kwonly)  # (the caller's values)
        bind_parameter_functions(self, node)  # (`act=np.tanh`: api/callables.py)
        if isinstance(node, cst.Lambda):
            result_name = "out"
            body_nodes: list[Any] = [node.body]
        else:
            if node.asynchronous is not None:
                raise self.unsupported(
                    node, "`async def` functions are not supported: calling one "
                    "returns a coroutine, not a value", "use a plain `def`",
                )
            result_name = self.fn.__name__
            if result_name in _names_in(self.fn.__code__) or result_name in self.local_names \
                    or hasattr(self.fn, "__s2s_adapts__"):  # (an adapter calls its name)
                result_name = "out"
            body_nodes = desugared_body(self, list(node.body.body))  # (np.vectorize...)
        self.result_name = self.names.fresh(result_name)
        try:
            if isinstance(node, cst.Lambda):
                value = self.exprs.expr(node.body, target=self.result_name)
                body: list[Stmt] = _checked(self, list(self.out))  # (its calls: param_writes.py)
                body.append(Return(value, self.loc(node.body)))
            else:
                hoisted = _bound_none_first(self, self.desugar.function_body(body_nodes))
                self.local_names.update(self.desugar.bound_names())
                body = self.stmts.block(hoisted)
                body = self.funcs.prefix + self.stmts.single_return(
                    body, hoisted[-1] if hoisted else node)
            _drop_unread_placeholders(body, self.placeholders)
            split_joins(self, body)  # (containers an `if` joins: their leaves)
            MemoryCheck(EFFECTS, self.lists, self.buffers, self._user_name,
                        self.display, self.names.fresh).run(body, params + kwonly)
            _check_block_nesting(body)
            check_lowered(self, body)  # (lists read as literals, `p.w += v` in loops)
        except TransformError as err:  # (in a method of yours: as you wrote it)
            raise as_written(err, self.fn).with_func(self.display)
        for name in params + kwonly:  # defaults are read from the function object
            if self.plan is None:
                self.resolver.depends_on(DefaultVar(self.fn, name, name in kwonly), node)
        ir = Function(
            name=self.fn.__name__,
            params=params,
            kwonly=kwonly,
            defaults=defaults,
            body=body,
            loc=self.loc(node),
            pyfunc=self.fn,
            source_lines=self.p.lines,
            result_name=self.result_name,
            namespace=self.resolver.namespace,
            names=self.names, source_hash=self.p.source_hash,
            rebound_writes=getattr(self, "rebound_writes", ()),
            free=self.resolver.free,
            aliases=dict(self.buffer_root), sums=frozenset(getattr(self, "sum_stacks", ())),
            param_writes=dict(vars(self).get("param_writes", {})),
            operators=expressions.operators(self, node),  # (`xs / 2`: Python's)
            **structure_fields(self),  # (parameters taken for arrays, what it returns)
        )
        ir._s2s_built_with = _fingerprints(self.resolver.free)  # type: ignore[attr-defined]
        return ir

    def _user_name(self, name: str) -> str:
        """The user's name for an IR name (a written version's: its buffer's)."""
        name = self.buffer_root.get(name, name)
        return self.user_of.get(name, name)

    def _signature(self, node: Any) -> tuple[list[str], list[str], dict[str, Any]]:
        ps = node.params
        wrapper = getattr(self.fn, "__wrapped__", None) is not None and isinstance(
            node, cst.FunctionDef) and node.name.value != self.fn.__name__
        for star, what in ((ps.star_arg, "*args"), (ps.star_kwarg, "**kwargs")):
            if not isinstance(star, cst.Param):
                continue
            if wrapper:  # (a decorator's wrapper that does more than forward)
                raise self.unsupported(
                    star, f"`{self.fn.__name__}` is wrapped by a decorator, so the code "
                    f"that runs is its wrapper `{node.name.value}`, whose `{what}` "
                    "parameters are not supported", "transform the undecorated function "
                    f"(`{self.fn.__name__}.__wrapped__`), or decorate with a wrapper "
                    "that only returns `fn(*args, **kwargs)`",
                )
            raise self.unsupported(
                star, f"`{what}` parameters are not supported",
                "name each positional parameter" if what == "*args"
                else "name each keyword parameter",
            )
        params = [p.name.value for p in (*ps.posonly_params, *ps.params)]
        kwonly = [p.name.value for p in ps.kwonly_params]
        # the function object's defaults, as a call uses them (``f.__defaults__`` may
        # have been replaced since the ``def`` ran; the source's are not read)
        live = live_defaults(self.fn)
        defaults = {name: live[name] for name in params + kwonly if name in live}
        return params, kwonly, defaults

    # ---- errors ---------------------------------------------------------------

    def loc(self, node: cst.CSTNode) -> Loc:
        return self.p.loc(node)

    def unsupported(self, node: cst.CSTNode, what: str, hint: str) -> TransformError:
        return UnsupportedSyntaxError(what, self.loc(node), hint, self.display)

    # ---- statements -----------------------------------------------------------

    def _bind(self, name: str, ssa: str) -> None:
        """Bind the user's ``name`` to ``ssa`` from here on."""
        self.env[name] = ssa
        self.funcs.values.pop(name, None)  # (no longer a function)
        self.generation[name] = self.generation.get(name, 0) + 1
        self.user_of[ssa] = name

    def _path(self, test: Atom, taken: bool) -> tuple[str, bool] | None:
        return branch_path(test, taken, self.negates, self.compares)

    def _enter_path(self, path: tuple[str, bool] | None) -> None:
        """Start a branch on ``path``: names an earlier `if` bound on the paths this
        branch is on are bound here too.  The earlier `if` then binds them on its
        other paths as well (to None, never read there), so that in the IR they are
        ordinary joins, which every transform already handles."""
        self.paths.append(path)
        on = set(self.paths)
        for record in reversed(self.partial):
            name = record.name
            if (name in self.env or not record.requires <= on
                    or self.generation.get(name) != record.generation):
                continue
            self.env[name] = record.ssa
            for stmt, k in record.chain:
                if record.ssa not in stmt.joins:
                    side = "orelse" if k == 0 else "body"
                    placeholder = Let(record.ssa, "identity", (Const(None, "None"),), {},
                                      stmt.loc)
                    getattr(stmt, side).insert(0, placeholder)
                    stmt.joins.append(record.ssa)
                    self.placeholders.append((stmt, side, placeholder))

    # ---- expressions ----------------------------------------------------------

    def emit(
        self, target: str, prim: str, args: tuple, params: dict, node: Any
    ) -> Var:
        if prim == "getitem" and args and isinstance(args[0], Var):
            params = _by_field(self.lets, args[0], params)
        self.out.append(Let(target, prim, tuple(args), params, self.loc(node)))
        self._last_let = self.out[-1]
        self.lets[target] = self.out[-1]
        if prim in ALIASING:  # another name or a container now refers to an operand
            for a in (args[1:] if prim in WRITES else args):
                if isinstance(a, Var):
                    self.aliased.setdefault(a.name, node)
        if prim in ALIASING and prim != "getitem" or prim == "call":
            for a in (args[1:] if prim in WRITES else args):  # (a dict's item is not it)
                if isinstance(a, Var):
                    self.dicts.shared.setdefault(a.name, node)
        self.producers[target] = prim
        if prim == "make_dict":  # (its items are read back from the literal: dicts.py)
            self.dicts.depth[target] = len(self.loops)
        if prim in ("list", "zeros_list"):
            self.lists.add(target)  # a list of its own: append and pop may change it
        if prim in COMPARE.values() and not params:
            self.compares[target] = (prim,) + tuple(
                a.name if isinstance(a, Var) else ("<const>", a.text) for a in args
            )
        if allocates(prim):
            self.buffers.add(target)  # a new array, referred to by no other name
        if prim in SHAPE_READS | {"pyexpr"} or (prim in INDEX_ARITHMETIC and all(
                not isinstance(a, Var) or a.name in self.shapes for a in args)):
            self.shapes.add(target)  # computed from shapes and constants only
        return Var(target)


    def named(self, atom: Any) -> Any:
        """The atom as names should see it: a written array by its first name."""
        if isinstance(atom, Var) and atom.name in self.buffer_root:
            return Var(self.buffer_root[atom.name])
        return atom


    # ---- calls ----------------------------------------------------------------


    # ---- Python-level expressions over values that carry no derivative ---------------


    def transform_call(self, kind: str, obj: Any, text: str, node: cst.Call,
                        target: str | None) -> Atom:
        """A call to an s2s transform inside the function: ``s2s.jvp(f, (x,), (v,))``,
        or a transformed function bound at module level (``g = s2s.grad(f)``; ``g(x)``).
        Its emitted code (for array arguments) becomes a callee like any user function,
        so an outer transform differentiates or batches that code: ``grad`` of ``jvp``."""
        if kind == "jvp":
            args = node.args
            if len(args) != 3 or any(a.keyword is not None or a.star for a in args) or not all(
                isinstance(a.value, (cst.Tuple, cst.List)) for a in args[1:]
            ):
                raise self.unsupported(
                    node, "s2s.jvp inside a transformed function takes three positional "
                    "arguments, the primals and tangents written out",
                    "write s2s.jvp(f, (x, y), (x_dot, y_dot))",
                )
            fv = self.funcs.value_of(args[0].value)  # (a lambda, a nested def too)
            fobj = fv.obj if fv is not None and not (fv.head or fv.keywords or fv.choice) \
                else None
            if not _jvp_takes(fobj):
                raise self.unsupported(args[0], "this is not a Python function s2s can "
                                       "transform", "pass a function defined in a file")
            primals = [self.exprs.expr(e.value) for e in args[1].value.elements]
            tangents = [self.exprs.expr(e.value) for e in args[2].value.elements]
            for _, value in self.funcs.resolved(fv, node).captured:  # zero tangents
                primals.append(value)
                tangents.append(self.emit(self.names.fresh("zero"), "zeros_like", (value,),
                                          {}, node))
            if len(primals) != len(tangents):
                raise self.unsupported(node, "s2s.jvp needs one tangent per primal",
                                       "pass as many tangents as primals")
            emitted = obj.__s2s_code__(fobj, len(primals))
            positional = primals + tangents
            base = f"{fobj.__name__}_jvp"
        else:
            positional, kwargs = self.calls.call_args(node)
            if kwargs:
                raise self.unsupported(node, f"`{text}` takes positional arguments here",
                                       "pass the arguments by position")
            return self.inline_transform(obj, text, positional, node, target)
        return self._inline_emitted(emitted, text, positional, base, node, target)

    def inline_transform(self, obj: Any, text: str, positional: list[Atom], node: Any,
                         target: str | None) -> Atom:
        """A call of a transformed function (its emitted code, as a callee)."""
        _, emitted = watched(self, obj)._generate_for((LEAF,) * len(positional),
                                                      (LEAF,) * len(obj.ir.params))
        base = f"{text.split('.')[-1]}_{stem(self.named(positional[0]))}" if positional \
            else text.split(".")[-1]
        return cast_gradients(self, obj, positional, lambda t: self._inline_emitted(
            emitted, text, positional, base, node, t), node, target)

    def _inline_emitted(self, emitted: Any, text: str, positional: list[Atom], base: str,
                        node: Any, target: str | None) -> Atom:
        callee = _normalize_callee(emitted, self.stack)
        positional = positional + [  # parameters left at their (literal) defaults
            Const(callee.defaults[p], repr(callee.defaults[p]))
            for p in callee.params[len(positional):]
            if p in callee.defaults and is_literal(callee.defaults[p])]
        if len(callee.params) != len(positional):
            raise self.unsupported(node, f"`{text}` is called here with "
                                   f"{len(positional)} arguments; its emitted code takes "
                                   f"{len(callee.params)}", "pass every argument")
        name, i = emitted.__name__, 2
        while self.resolver.namespace.get(name, emitted) is not emitted or (
            name in self.names.taken and name not in self.resolver.namespace
        ):
            name, i = f"{emitted.__name__}_{i}", i + 1
        self.resolver.namespace[name] = emitted
        self.names.taken.add(name)  # no local may shadow it
        for var in callee.free.values():
            self.resolver.depends_on(var, node)
        for key, value in callee.namespace.items():
            self.resolver.namespace.setdefault(key, value)
        if len(base) > MAX_NAME:
            base = base.split("_")[0] or "out"
        return self.emit(self.exprs.target(target, base), "call", tuple(positional),
                         {"callee": callee, "spelling": name}, node)

    def user_call(self, obj: Any, text: str, node: cst.Call, target: str | None,
                   custom: Any = None, passed: tuple | None = None):
        recursive = unwrap_forwarding(obj) in self.stack
        args, kwargs = self.calls.call_args(node) if passed is None else passed
        callee: Any = (Recursive(unwrap_forwarding(obj)) if recursive else _normalize_callee(
            ints_bound(unwrap_forwarding(obj), args, kwargs, self), self.stack))
        sig = inspect.signature(unwrap_forwarding(obj), follow_wrapped=False)
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as exc:
            raise TransformError(
                f"`{text}` cannot be called with these arguments: {exc}",
                self.loc(node), f"call it as {text}{sig}", self.display,
            ) from None
        positional: list[Atom] = []
        for pname in callee.params:
            if pname in bound.arguments:
                positional.append(bound.arguments[pname])
            else:
                default = callee.defaults[pname]
                if not is_literal(default):
                    raise TransformError(
                        f"`{text}` is called without `{pname}`, whose default is "
                        "not a literal", self.loc(node), f"pass `{pname}` explicitly",
                        self.display,
                    )
                positional.append(Const(default, repr(default)))
        if callee.kwonly:
            raise self.unsupported(
                node, f"`{text}` has keyword-only parameters, not supported yet",
                "make them positional parameters",
            )
        self.resolver.bind_namespace(text.split(".")[0], node)
        plained, text = plained_text(self, obj, callee, text, expressions.PLAINED)
        if plained is not None and "." not in text:  # (returns objects it built)
            self.resolver.namespace[text] = plained
            var = self.resolver.free.get(text)
            if var is not None and not isinstance(var, ThroughVar):
                self.resolver.free[text] = ThroughVar(
                    var, lambda f, c=callee: expressions.PLAINED(f, c) or f)
        if not recursive:  # (a function calling itself reads its own free names)
            for var in callee.free.values():
                self.resolver.depends_on(var, node)
            for name, value in callee.namespace.items():
                self.resolver.namespace.setdefault(name, value)
        base = readable(obj.__name__) + (f"_{stem(self.named(positional[0]))}" if positional else "")
        if len(base) > MAX_NAME:
            base = readable(obj.__name__)
        if expressions.REBUILT is not None and custom is None and class_function(obj, text):
            text = _rebuilding(self, obj, text, positional)
        params: dict[str, Any] = {"callee": callee, "spelling": text}
        if custom is not None:
            params["custom"] = custom
        return self.emit(self.exprs.target(target, base), "call", tuple(positional), params, node)

    def normalize_planned(self, fn: Any, plan: Plan) -> Function:
        return _normalize_planned(fn, self.stack, plan)


def _rebuilding(n: Any, obj: Any, text: str, positional: list) -> str:
    """The name emitted code calls ``obj`` by: where it passes NamedTuples this
    function built (dicts of their fields in emitted code), a wrapper giving it
    the objects (``records.Rebuilding``), bound under a name of its own."""
    made = {}
    hint, n.rebuilt_hint = n.rebuilt_hint or {}, None
    parts = getattr(obj, "__qualname__", "").split(".")
    plain_function = len(parts) == 1 or parts[-2] == "<locals>"  # (not a class's)
    for i, a in enumerate(positional):
        let = n.lets.get(a.name) if isinstance(a, Var) else None
        param = record_of_atom(n, a) if isinstance(a, Var) and (
            let is None or let.prim in ("call", "getitem", "identity")) else None
        if param is None and let is None and isinstance(a, Var) and plain_function:
            param = typed_param(n, a.name)  # (a NamedTuple argument of a known class)
        if param is not None:  # (an object the caller built, passed on, or returned)
            made[i] = param
        let = through_identity(n, let)  # (`a = s`: the dict it holds)
        if let is None or let.prim != "make_dict":
            continue
        if i in hint and "built" not in let.params:  # (emitted code read again: the
            let.params["built"] = hint[i]  # dict it passes is that NamedTuple)
        built = let.params.get("built")
        if built is not None and hasattr(built, "make"):
            made[i] = built  # (a NamedTuple, a registered class's or a plain class's
            # object: made again)
    if not made or getattr(getattr(obj, "__code__", None), "co_filename", "").startswith("<s2s:"):
        return text  # (code s2s emitted reads the dicts as they are)
    wrapper = expressions.REBUILT(n.resolver.namespace.get(text, obj), made)
    stem_ = text.replace(".", "_")
    name, i = f"{stem_}_of_objects", 2
    while name in n.resolver.namespace or name in n.names.taken:
        name, i = f"{stem_}_of_objects_{i}", i + 1
    n.resolver.namespace[name] = wrapper
    n.names.taken.add(name)
    return name


def _names_in(code: Any) -> set[str]:
    """The global names ``code`` reads, in its comprehensions and lambdas too (a call
    of the function in `sum(f(t) for t in ts)` names it there only)."""
    return set(code.co_names).union(*(_names_in(c) for c in code.co_consts
                                       if isinstance(c, types.CodeType)))


class Bindings(dict):
    """Each name -> the statement that bound it last; ``joined``: the names several
    statements bind (the paths of an ``if``), whose last binding is not their value."""

    def __init__(self) -> None:
        super().__init__()
        self.joined: set[str] = set()

    def __setitem__(self, name: str, let: Any) -> None:
        if name in self:
            self.joined.add(name)
        super().__setitem__(name, let)


class Recursive:
    """A call to a function still being normalized (it calls itself, perhaps through
    others): its IR is looked up when reverse mode needs it, once it is complete.
    Its recursion depth must be decided by Python values (``n - 1``), as in JAX."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        sig = inspect.signature(fn, follow_wrapped=False)
        self.params = [
            n for n, p in sig.parameters.items()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        self.kwonly = [n for n, p in sig.parameters.items() if p.kind is p.KEYWORD_ONLY]
        live = live_defaults(fn)
        self.defaults = {n: live[n] for n in self.params + self.kwonly if n in live}
        self.name = fn.__name__

    @property
    def function(self) -> Function:
        return normalize(self.fn)


# blocks (`if`s, loops) nested in one function: emitted code nests as deep (each
# `elif` and conditional expression is an `if` in an `else`), and Python compiles at
# most 100 levels of indentation
MAX_BLOCK_NESTING = 90


def _check_block_nesting(body: list[Stmt]) -> None:
    stack: list[tuple[list[Stmt], int]] = [(body, 0)]
    while stack:
        stmts, depth = stack.pop()
        for stmt in stmts:
            if not isinstance(stmt, (If, For)):
                continue
            if depth + 1 > MAX_BLOCK_NESTING:
                raise UnsupportedSyntaxError(
                    f"the code nests more than {MAX_BLOCK_NESTING} `if`s and loops inside "
                    "each other here (each `elif` and each conditional expression `a if "
                    "c else b` is one more level); the emitted derivative nests as deep, "
                    "and Python compiles at most 100 levels of indentation",
                    stmt.loc,
                    "split the chain into helper functions (each is emitted as a "
                    "function of its own), or compute the branches with np.where",
                )
            stack.append((stmt.body, depth + 1))
            if isinstance(stmt, If):
                stack.append((stmt.orelse, depth + 1))


def _normalize_planned(fn: Any, stack: tuple[Any, ...], plan: Plan) -> Function:
    """The IR of ``fn`` for one call's plan (frontend/functions.py), memoized per plan."""
    parsed = parse_function(fn)
    key = (fn, parsed.source_hash, plan.key())
    if key in _FUNCTIONS and not (_still_valid(_FUNCTIONS[key]) and self_methods_hold(
            fn)) or (_FRESH and any(f in _FRESH for f in stack)):
        _FUNCTIONS.pop(key, None)
    if key not in _FUNCTIONS:
        with recursion_room(parsed.depth):  # (or its call while it is built: recursive)
            made = planning(fn, key, plan, lambda: _run(fn, parsed, stack, plan),
                            lambda: _normalize_planned(fn, (), plan))
        if isinstance(made, RecursivePlanned):
            plan.params = list(made.params)
            return made  # type: ignore[return-value]
        _FUNCTIONS[key] = made
    plan.params = list(_FUNCTIONS[key].params)
    return _FUNCTIONS[key]


def _normalize_callee(fn: Any, stack: tuple[Any, ...]) -> Function:
    fn = unwrap_forwarding(fn)
    parsed = parse_function(fn)
    key = (fn, parsed.source_hash)
    if _FRESH and key in _FUNCTIONS and any(f in _FRESH for f in stack):
        del _FUNCTIONS[key]  # the caller is being rebuilt: rebuild its callees too
    elif key in _FUNCTIONS and not (_still_valid(_FUNCTIONS[key]) and self_methods_hold(fn)):
        del _FUNCTIONS[key]  # a default, a free name, a method of self changed since
    if key not in _FUNCTIONS:
        with recursion_room(parsed.depth):
            _FUNCTIONS[key] = _run(fn, parsed, stack)
    # (a transform's emitted code, written in a body: its errors at the user's line)
    _FUNCTIONS[key].user_ir = getattr(fn, "s2s_user_ir", None)  # type: ignore[attr-defined]
    return _FUNCTIONS[key]


# ---- helpers -------------------------------------------------------------------


def _jvp_takes(fobj: Any) -> bool:
    """Is ``fobj`` what ``s2s.jvp(fobj, ...)`` in a body transforms: a Python function
    of a file, or a transform of one (``s2s.jvp(s2s.grad(f), (x,), (v,))``)."""
    return (isinstance(fobj, types.FunctionType) and not is_library(fobj)) or (
        transform_kind(fobj) == "transformed")


def branch_path(test: Atom, taken: bool, negates: dict, compares: dict
                ) -> tuple[str, bool] | None:
    """The path an `if` branch is on, as (test name, truth): ``not t`` is t's.  A test
    decided when s2s transforms the function (``CONFIG["act"] in MODES``, spelled
    again in emitted gradients) is the same path wherever it is written."""
    if isinstance(test, Const) and test.text:
        return f"<constant {test.text}>", bool(test.value) == taken
    if not isinstance(test, Var):
        return None
    name = test.name
    while name in negates:
        name, taken = negates[name], not taken
    return compares.get(name, name), taken
