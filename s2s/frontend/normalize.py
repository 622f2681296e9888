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

from .. import runtime
from ..caches import LRU
from ..errors import Loc, TransformError, UnsupportedSyntaxError
from ..ir.kinds import LEAF
from ..ir.memory import MemoryCheck
from ..ir.names import NameTable, bound_names, rename, stem
from ..ir.nodes import (
    Atom,
    Break,
    Const,
    For,
    Function,
    If,
    Index,
    Let,
    Return,
    Stmt,
    Var,
)
from ..ir.nodes import uses as uses_of
from ..ir.nodes import walk as walk_stmts
from .buffers import _ALIASING, _WRITES, EFFECTS, BufferLowerer, _allocates
from .calls import CallLowerer
from .desugar import Desugar
from .expressions import (
    _COMPARE,
    _INDEX_ARITHMETIC,
    _MAX_NAME,
    _SHAPE_READS,
    ExprLowerer,
    _is_list_method,
)
from .loops import LoopLowerer
from .resolve import (
    DefaultVar,
    FreeVar,
    Resolver,
    _is_docstring,
    _is_library,
    _is_literal,
    _unsupported_expression,
    _unsupported_statement,
    live_defaults,
    unwrap_forwarding,
)
from .source import ParsedFunction, parse_function, recursion_room

# Names emitted code defines or imports itself; user names never take them.
RESERVED = {"np", "math", *runtime.__all__}


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
    if key in _FUNCTIONS and not fresh and not _still_valid(_FUNCTIONS[key]):
        return normalize(fn, fresh=True)
    if key not in _FUNCTIONS:
        with recursion_room(parsed.depth):  # (a long expression nests deep)
            _FUNCTIONS[key] = Normalizer(fn, parsed, stack=()).run()
    _FRESH.discard(fn)
    return _FUNCTIONS[key]


_FRESH: set[Any] = set()  # functions being normalized again, callees included


def _reads_in(stmts: list[Stmt]) -> Counter:
    """How many times each name is read in ``stmts``, at any depth."""
    return Counter(name for s in walk_stmts(stmts) for name in uses_of(s))


def _drop_unread_placeholders(body: list[Stmt], placeholders: list) -> None:
    """Take back the None ``Normalizer._enter_path`` gave a name on the other path of
    the `if` that binds it, where no code outside that `if` reads the join (a later
    `if` on the same test was entered, but never read the name).  A container joined
    with None has no zeros for its derivative: such a dead join would be refused."""
    if not placeholders:
        return
    reads = _reads_in(body)
    inside: dict[int, Counter] = {}  # id(if) -> the reads within it
    for stmt, side, let in placeholders:
        if id(stmt) not in inside:
            inside[id(stmt)] = _reads_in([stmt])
        if reads[let.target] > inside[id(stmt)][let.target]:
            continue  # read after the `if` (or before it, in a loop): the join stays
        branch = getattr(stmt, side)
        for i, other in enumerate(branch):
            if other is let:
                del branch[i]
                stmt.joins.remove(let.target)
                break


class Normalizer:
    def __init__(self, fn: Any, parsed: ParsedFunction, stack: tuple[Any, ...]):
        self.fn = fn
        self.p = parsed
        self.stack = stack + (fn,)
        code = fn.__code__
        # (a local a comprehension reads is a cell variable of the function)
        self.local_names = set(code.co_varnames) | set(code.co_cellvars)
        self.shapes: set[str] = set()  # names computed from shapes and constants only
        self.producers: dict[str, str] = {}  # name -> the primitive that computed it
        self.resolver = Resolver(fn, parsed)
        self.names = NameTable(
            set(code.co_varnames) | set(code.co_names) | set(code.co_freevars) | RESERVED
        )
        self.bound: set[str] = set()  # user names bound at least once
        self.env: dict[str, str] = {}  # user name -> current SSA name
        self.display = fn.__name__
        self.depth = 0  # how many `if` statements enclose the current one
        self.loops: list[list[Break]] = []  # per enclosing loop, the breaks seen so far
        # Arrays (and lists) this function made itself, which it may write into: each
        # write makes a new version of one buffer, named after its first name.
        self.buffers: set[str] = set()  # versions of such buffers (writable)
        self.buffer_root: dict[str, str] = {}  # a written version -> the first name
        self.lists: set[str] = set()  # lists this function built (append allowed)
        self._last_let: Let | None = None  # the statement emit() made last
        self.lets: dict[str, Let] = {}  # name -> the statement that bound it
        self.bound_object: str | None = None  # a bound method's `self` (or `cls`)
        # values another name, a view or a container refers to (NumPy's `y += v` on
        # one changes what they see too; s2s rebinds `y`): name -> where it was aliased
        self.aliased: dict[str, Any] = {}
        self._augmented: list[tuple[str, Any]] = []  # `x += v` in loops: (x's name, node)
        # Names an `if` binds on one path only: usable again inside a later `if` on
        # the same path, as long as nothing rebinds them in between (see _enter_path)
        self.partial: list[_OnePath] = []
        # the None bindings _enter_path put on the other paths: (if, its branch, let)
        self.placeholders: list[tuple[If, str, Let]] = []
        self.paths: list[Any] = []  # the paths of the branches being normalized
        self.generation: dict[str, int] = {}  # user name -> how many times bound
        self.user_of: dict[str, str] = {}  # a name that binds a user's variable -> it
        self.negates: dict[str, str] = {}  # `not t`'s name -> t
        # a comparison's name -> what it compares: `s > 0` twice is one test
        self.compares: dict[str, Any] = {}
        self._paths_outside: list[list] = []  # `partial` of the code around each loop
        # the statement lists being built, outermost first: what ran before a point
        self._open: list[list[Stmt]] = []
        # per enclosing `if`: the names bound before it, and the loops around it
        self._branches: list[tuple[set[str], int]] = []
        self.out: list[Stmt] = []
        self.desugar = Desugar(parsed.positions, self.unsupported, self.names.fresh)
        self.exprs = ExprLowerer(self)
        self.calls = CallLowerer(self)
        self.loop = LoopLowerer(self)
        self.buffer = BufferLowerer(self)

    # ---- entry ----------------------------------------------------------------

    def run(self) -> Function:
        node = self.p.node
        params, kwonly, defaults = self._signature(node)
        if inspect.ismethod(self.fn) and params:
            # a bound method (`model.loss`, `Model.class_loss`) is called without its
            # first parameter: the object, which the body may not read (see expr_Name)
            self.bound_object = params.pop(0)
        for name in params + kwonly:
            self.env[name] = name
            self.bound.add(name)
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
            if result_name in self.fn.__code__.co_names or result_name in self.local_names:
                result_name = "out"
            body_nodes = list(node.body.body)
        self.result_name = self.names.fresh(result_name)
        try:
            if isinstance(node, cst.Lambda):
                value = self.exprs.expr(node.body, target=self.result_name)
                body: list[Stmt] = list(self.out)
                body.append(Return(value, self.loc(node.body)))
            else:
                hoisted = self.desugar.function_body(body_nodes)
                self.local_names.update(n for pair in self.desugar.loop_returns for n in pair)
                body = self.block(hoisted)
                body = self._single_return(body, hoisted[-1] if hoisted else node)
            _drop_unread_placeholders(body, self.placeholders)
            MemoryCheck(EFFECTS, self.lists, self.buffers, self._user_name,
                        self.display).run(body, params + kwonly)
            _check_block_nesting(body)
        except TransformError as err:
            raise err.with_func(self.display)
        for name in params + kwonly:  # defaults are read from the function object
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
            names=self.names,
            source_hash=self.p.source_hash,
            free=self.resolver.free,
            aliases=dict(self.buffer_root),
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

    def block(self, nodes: list[Any]) -> list[Stmt]:
        out: list[Stmt] = []
        self._open.append(out)  # (statements before the current one: see _own_entries)
        try:
            for i, node in enumerate(nodes):
                if i == 0 and _is_docstring(node):
                    continue
                out += self.statement(node)
        finally:
            self._open.pop()
        return out

    def statement(self, node: Any) -> list[Stmt]:
        self.out: list[Stmt] = []
        self._open.append(self.out)
        try:
            return self._statement(node)
        finally:
            self._open.pop()

    def _statement(self, node: Any) -> list[Stmt]:
        if isinstance(node, cst.SimpleStatementLine):
            for small in node.body:
                self.small_statement(small)
            return self.out
        if isinstance(node, cst.If):
            self.if_statement(node)
            return self.out
        if isinstance(node, cst.For) and node.asynchronous is None:
            self.loop.for_statement(node)
            return self.out
        if isinstance(node, cst.While):
            self.loop.while_statement(node)
            return self.out
        raise self.unsupported(node, *_unsupported_statement(node))

    def small_statement(self, node: Any) -> None:
        if isinstance(node, cst.Assign):
            if len(node.targets) != 1:
                raise self.unsupported(
                    node, "chained assignment `a = b = ...` is not supported",
                    "assign to one name per statement",
                )
            self.assign(node.targets[0].target, node.value)
        elif isinstance(node, cst.AnnAssign):
            if node.value is None:
                return
            self.assign(node.target, node.value)
        elif isinstance(node, cst.AugAssign):
            op = type(node.operator).__name__.replace("Assign", "")
            binop = getattr(cst, op)
            if not isinstance(node.target, (cst.Name, cst.Subscript)):
                raise self.unsupported(
                    node, "augmented assignment into an attribute is not supported",
                    "assign to a local name",
                )
            if isinstance(node.target, cst.Name) and self.buffer.may_share(
                    self.env.get(node.target.value, "")):
                # NumPy writes into the array the name shares with another (x for
                # `v = x`, `v = x[0]`); s2s would rebind it: refuse rather than differ
                name = node.target.value
                raise self.unsupported(
                    node, f"`{name} {node.operator._get_token()} ...` would write into an "
                    f"array `{name}` shares with another name", f"write `{name} = {name} "
                    f"{node.operator._get_token()[:-1]} ...` (a new array)",
                )
            current = self.env.get(node.target.value, "") if isinstance(
                node.target, cst.Name) else ""
            if current in self.aliased and not self.buffer.immutable(current):
                name = node.target.value
                op = node.operator._get_token()
                raise self.unsupported(
                    node, f"`{name} {op} ...` would change in place an array that "
                    f"another name, view or list also refers to (line "
                    f"{self.loc(self.aliased[current]).line}), so NumPy would change "
                    "that too", f"write `{name} = {name} {op[:-1]} ...` (a new array)",
                )
            if isinstance(node.target, cst.Name) and self.loops:
                # the next iteration's value may be a view even if this one is not
                self._augmented.append((self.env.get(node.target.value, ""), node))
            value = cst.BinaryOperation(
                left=node.target, operator=binop(), right=node.value
            )
            self.desugar.alias(value, node)
            self.assign(node.target, value)
        elif isinstance(node, cst.Return):
            if node.value is None:
                raise self.unsupported(
                    node, "`return` without a value returns None, which has no "
                    "derivative", "return the value to differentiate",
                )
            target = self.result_name if self.depth == 0 else self.names.fresh(
                self.result_name
            )
            value = self.exprs.expr(node.value, target=target)
            if isinstance(value, Const):  # a constant result still has a name
                value = self.emit(target, "identity", (value,), {}, node.value)
            self.out.append(Return(value, self.loc(node)))
        elif isinstance(node, cst.Pass):
            return
        elif isinstance(node, cst.Break) and self.loops:
            self.out.append(Break(self.loc(node), env=dict(self.env)))
            self.loops[-1].append(self.out[-1])
        elif isinstance(node, cst.Expr) and _is_append(node.value, self.local_names):
            self.buffer.append_statement(node.value)
        elif isinstance(node, cst.Expr) and _is_list_method(node.value, "pop", self.local_names):
            name, current = self.buffer.own_list(node.value, "pop")
            self.buffer.pop_args(node.value)
            last = self._last_let
            if not (isinstance(last, Let) and last.prim == "getitem"
                    and last.args[:1] == (Var(current),)
                    and _is_last_index(last.params["index"])):
                # ``ys.pop()`` alone: its value unused, but reverse mode reads it
                # (after ``v = ys[-1]``, as emitted code spells a pop, that read)
                self.emit(self.exprs.target(None, f"{stem(self.named(Var(current)))}_last"),
                          "getitem",
                          (Var(current),), {"index": Index((Const(-1, "-1"),), False)},
                          node.value)
            self.buffer.pop(name, current, node.value)
        elif isinstance(node, cst.Expr) and self.buffer.is_add_at(node.value):
            self.buffer.add_at_statement(node.value)
        elif isinstance(node, cst.Expr) and isinstance(node.value, (
                cst.SimpleString, cst.ConcatenatedString, cst.Ellipsis, cst.Integer,
                cst.Float)):
            return  # a string used as a comment, `...` as a placeholder: nothing runs
        elif isinstance(node, cst.Expr) and isinstance(node.value, cst.Yield):
            raise self.unsupported(node.value, *_unsupported_expression(node.value))
        elif isinstance(node, cst.Expr):
            raise self.unsupported(
                node, "an expression statement is evaluated only for its side effect, "
                "which s2s does not transform",
                "remove it from the function, or assign its value to a name that "
                "the result uses",
            )
        else:
            raise self.unsupported(node, *_unsupported_statement(node))


    def assign(self, target: Any, value: Any) -> None:
        if isinstance(target, cst.Name):
            name = target.value
            self._check_name(target)
            ssa = self.names.fresh(name) if name in self.bound else name
            atom = self.exprs.expr(value, target=ssa)
            if not (isinstance(atom, Var) and atom.name == ssa):
                self.emit(ssa, "identity", (atom,), {}, value)
            self.bound.add(name)
            self._bind(name, ssa)
            return
        if isinstance(target, (cst.Tuple, cst.List)):
            # the whole right side is evaluated before any name is bound (a, b = b, a)
            tree = self._unpacked_values(target, value)
            self._bind_unpacked(target, tree, value)
            return
        if isinstance(target, cst.Subscript):
            self.buffer.assign_element(target, value)
            return
        raise self.unsupported(
            target, "only names can be assigned to",
            "assign to a local name",
        )


    def _bind(self, name: str, ssa: str) -> None:
        """Bind the user's ``name`` to ``ssa`` from here on."""
        self.env[name] = ssa
        self.generation[name] = self.generation.get(name, 0) + 1
        self.user_of[ssa] = name

    def _path(self, test: Atom, taken: bool) -> tuple[str, bool] | None:
        """The path an `if` branch is on, as (test name, truth): ``not t`` is t's."""
        if not isinstance(test, Var):
            return None
        name = test.name
        while name in self.negates:
            name, taken = self.negates[name], not taken
        return self.compares.get(name, name), taken

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

    def _unpacked_values(self, target: Any, value: Any) -> Any:
        """The right side of ``a, (b, c), *d = ...``: a list with one entry per
        target element where the right side is a literal that lines up with the
        target (nested likewise), else the value's atom (unpacked by index)."""
        elements = list(target.elements) if isinstance(target, (cst.Tuple, cst.List)) \
            else None
        literal = isinstance(value, (cst.Tuple, cst.List)) and not any(
            isinstance(e, cst.StarredElement) for e in value.elements)
        if elements is None or not literal:
            return self.exprs.expr(value)
        values = list(value.elements)
        star = [i for i, e in enumerate(elements) if isinstance(e, cst.StarredElement)]
        if star:
            k = star[0]
            n_after = len(elements) - k - 1
            if len(values) < len(elements) - 1:
                raise self.unsupported(
                    value, f"not enough values to unpack (expected at least "
                    f"{len(elements) - 1}, got {len(values)})", "match the targets to the values",
                )
            middle = values[k:len(values) - n_after]
            rest = cst.List(elements=[e.with_changes(comma=cst.MaybeSentinel.DEFAULT)
                                      for e in middle])
            self.desugar.alias(rest, middle[0].value if middle else value)
            out = [self._unpacked_values(e.value, v.value) for e, v in zip(elements[:k], values)]
            out.append(self.exprs.expr(rest))
            out += [self._unpacked_values(e.value, v.value) for e, v in zip(
                elements[k + 1:], values[len(values) - n_after:])]
            return out
        if len(values) != len(elements):
            raise self.unsupported(
                value, f"{len(elements)} targets and {len(values)} values do not match",
                "match the targets to the values",
            )
        return [self._unpacked_values(e.value, v.value) for e, v in zip(elements, values)]

    def _bind_unpacked(self, target: Any, tree: Any, node: Any) -> None:
        if isinstance(target, cst.StarredElement):
            target = target.value
        if isinstance(tree, list):
            for e, sub in zip(target.elements, tree):
                self._bind_unpacked(e.value, sub, node)
            return
        if isinstance(target, cst.Name):
            self._bind_atom(target, tree, node)
            return
        if not isinstance(target, (cst.Tuple, cst.List)):
            raise self.unsupported(
                target, "only names can be unpacked into",
                "unpack into names, then write the element on its own line",
            )
        if any(isinstance(e, cst.StarredElement) for e in target.elements):
            raise self.unsupported(
                target, "starred unpacking of a value whose length is known only when "
                "the function runs is not supported",
                "index it: `first, rest = v[0], v[1:]`",
            )
        for i, e in enumerate(target.elements):
            sub = e.value
            base = sub.value if isinstance(sub, cst.Name) else f"{stem(self.named(tree))}_{i}"
            if isinstance(sub, cst.Name):
                self._check_name(sub)
            ssa = self.names.fresh(base) if (base in self.bound or not isinstance(
                sub, cst.Name)) else base
            item = self.emit(ssa, "getitem", (tree,),
                             {"index": Index((Const(i, str(i)),), False)}, sub)
            if isinstance(sub, cst.Name):
                self.bound.add(base)
                self._bind(base, ssa)
            else:
                self._bind_unpacked(sub, item, node)

    def _bind_atom(self, target: Any, atom: Atom, node: Any) -> None:
        if not isinstance(target, cst.Name):
            raise self.unsupported(
                target, "nested unpacking targets are not supported",
                "unpack in two steps",
            )
        name = target.value
        ssa = self.names.fresh(name) if name in self.bound else name
        self.emit(ssa, "identity", (atom,), {}, node)
        self.bound.add(name)
        self._bind(name, ssa)

    def _check_name(self, node: cst.Name) -> None:
        if node.value in RESERVED:
            raise self.unsupported(
                node, f"the name `{node.value}` is used by emitted code",
                f"rename the local variable `{node.value}`",
            )

    def if_statement(self, node: cst.If) -> None:
        test = self.exprs.expr(node.test)
        before = dict(self.env)
        bound_before = set(self.bound)
        outer = self.out
        self.depth += 1

        paths = self._path(test, True), self._path(test, False)
        first = len(self.partial)
        self._branches.append((set(before.values()), len(self.loops)))
        generation_before = dict(self.generation)
        self._enter_path(paths[0])
        body = self.block(list(node.body.body))
        self.paths.pop()
        middle = len(self.partial)
        env_body, bound_body = self.env, self.bound
        self.env, self.bound = dict(before), set(bound_before) | bound_body
        # the other branch starts from before the `if` too: what the body bound does
        # not rebind a name there (``if not t: x = 0`` after ``if t: x = v`` binds x
        # on both paths); after the `if`, a name either branch bound was rebound
        generation_body, self.generation = self.generation, generation_before
        self._enter_path(paths[1])
        if node.orelse is None:
            orelse: list[Stmt] = []
        elif isinstance(node.orelse, cst.If):
            orelse = self.statement(node.orelse)
        else:
            orelse = self.block(list(node.orelse.body.body))
        self.paths.pop()
        self._branches.pop()
        for name, count in generation_body.items():
            self.generation[name] = max(count, self.generation.get(name, 0))
        env_else = self.env
        self.bound |= bound_body
        self.out = outer
        self.depth -= 1

        stmt = If(test, body, orelse, self.loc(node))
        # names bound on one path inside a branch are bound on this branch's path too
        inner = self.partial[first:]
        del self.partial[first:]
        for i, record in enumerate(inner):
            k = 0 if i < middle - first else 1
            if paths[k] is not None:
                self.partial.append(record.within(paths[k], stmt, k))
        env_after = dict(before)
        for name in set(env_body) | set(env_else):
            a, b = env_body.get(name), env_else.get(name)
            if a == b:
                if a is not None:
                    env_after[name] = a
                continue
            if a is None or b is None:
                env_after.pop(name, None)  # bound on one path only: unusable after,
                k = 0 if a is not None else 1
                if paths[k] is not None:  # except in a later `if` on the same path
                    self.partial.append(_OnePath(
                        name, a or b, self.generation.get(name, 0), frozenset(),
                    ).within(paths[k], stmt, k))
                continue
            join = a if a != before.get(name) else b
            # two arrays written in place, one per path: the join is spelled with the
            # join's array, so the other path binds it (`y = y_other`), not renames
            root = self.buffer_root.get(join, join)
            for branch, final in ((body, a), (orelse, b)):
                if final == join:
                    continue
                if final != before.get(name) and self.buffer_root.get(final, root) == root \
                        and final in bound_names(branch):  # (not one an earlier `if` bound)
                    rename(branch, final, join)
                    # an array or list the branch made (a root): its later versions
                    # (appends in a loop) are spelled with the join's name too
                    for version, first in list(self.buffer_root.items()):
                        if first == final:
                            self.buffer_root[version] = root
                else:
                    branch.append(Let(join, "identity", (Var(final),), {}, stmt.loc))
            stmt.joins.append(join)
            env_after[name] = join
            self.generation[name] = self.generation.get(name, 0) + 1
            if a in self.lists and b in self.lists:
                self.lists.add(join)
            if a in self.buffers and b in self.buffers:  # one array, written on a path
                self.buffers.add(join)
                root = self.buffer_root.get(a) or self.buffer_root.get(b)
                if root is not None and join != root:
                    self.buffer_root[join] = root
        self.env = env_after
        self.out.append(stmt)


    def _single_return(self, body: list[Stmt], last: Any) -> list[Stmt]:
        """Rewrite returns in branches into one join name and one final return."""
        if body and isinstance(body[-1], Return):
            return body
        if not _always_returns(body):
            loc = self.loc(last)
            raise UnsupportedSyntaxError(
                "the function can reach its end without `return`, so it returns "
                "None, which has no derivative",
                loc, "return a value on every path", self.display,
            )
        result = self.result_name
        last = body[-1]
        assert isinstance(last, If)
        _returns_to_assignments(last, result)
        last.joins.append(result)
        body.append(Return(Var(result), last.loc))
        return body

    # ---- expressions ----------------------------------------------------------

    def emit(
        self, target: str, prim: str, args: tuple, params: dict, node: Any
    ) -> Var:
        self.out.append(Let(target, prim, tuple(args), params, self.loc(node)))
        self._last_let = self.out[-1]
        self.lets[target] = self.out[-1]
        if prim in _ALIASING:  # another name or a container now refers to an operand
            for a in (args[1:] if prim in _WRITES else args):
                if isinstance(a, Var):
                    self.aliased.setdefault(a.name, node)
        self.producers[target] = prim
        if prim in ("list", "zeros_list"):
            self.lists.add(target)  # a list of its own: append and pop may change it
        if prim in _COMPARE.values() and not params:
            self.compares[target] = (prim,) + tuple(
                a.name if isinstance(a, Var) else ("<const>", a.text) for a in args
            )
        if _allocates(prim):
            self.buffers.add(target)  # a new array, referred to by no other name
        if prim in _SHAPE_READS | {"pyexpr"} or (prim in _INDEX_ARITHMETIC and all(
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
            fobj, ftext = self.resolver.resolve_dotted(args[0].value)
            if not isinstance(fobj, types.FunctionType) or _is_library(fobj):
                raise self.unsupported(args[0], f"`{ftext}` is not a Python function s2s can "
                                       "transform", "pass a function defined in a file")
            primals = [self.exprs.expr(e.value) for e in args[1].value.elements]
            tangents = [self.exprs.expr(e.value) for e in args[2].value.elements]
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
            n = len(positional)
            _, emitted = obj._generate_for((LEAF,) * n, (LEAF,) * len(obj.ir.params))
            base = f"{text.split('.')[-1]}_{stem(self.named(positional[0]))}" if positional \
                else text.split(".")[-1]
        callee = _normalize_callee(emitted, self.stack)
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
        if len(base) > _MAX_NAME:
            base = base.split("_")[0] or "out"
        return self.emit(self.exprs.target(target, base), "call", tuple(positional),
                         {"callee": callee, "spelling": name}, node)


    def user_call(self, obj: Any, text: str, node: cst.Call, target: str | None,
                   custom: Any = None):
        recursive = unwrap_forwarding(obj) in self.stack
        callee: Any = (Recursive(unwrap_forwarding(obj)) if recursive
                       else _normalize_callee(obj, self.stack))
        args, kwargs = self.calls.call_args(node)
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
                if not _is_literal(default):
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
        if not recursive:  # (a function calling itself reads its own free names)
            for var in callee.free.values():
                self.resolver.depends_on(var, node)
            for name, value in callee.namespace.items():
                self.resolver.namespace.setdefault(name, value)
        base = f"{obj.__name__}_{stem(self.named(positional[0]))}" if positional else obj.__name__
        if len(base) > _MAX_NAME:
            base = obj.__name__
        params: dict[str, Any] = {"callee": callee, "spelling": text}
        if custom is not None:
            params["custom"] = custom
        return self.emit(self.exprs.target(target, base), "call", tuple(positional), params, node)


class _OnePath:
    """A name an `if` bound on one path only: ``ssa``, the paths it needs (each a
    test and its truth), and the branches, innermost first, it was bound in."""

    def __init__(self, name: str, ssa: str, generation: int, requires: frozenset,
                 chain: tuple = ()) -> None:
        self.name, self.ssa, self.generation = name, ssa, generation
        self.requires, self.chain = requires, chain

    def within(self, path: Any, stmt: If, k: int) -> "_OnePath":
        """The same name, seen from outside branch ``k`` of ``stmt`` (on ``path``)."""
        return _OnePath(self.name, self.ssa, self.generation, self.requires | {path},
                        self.chain + ((stmt, k),))


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


def _normalize_callee(fn: Any, stack: tuple[Any, ...]) -> Function:
    fn = unwrap_forwarding(fn)
    parsed = parse_function(fn)
    key = (fn, parsed.source_hash)
    if _FRESH and key in _FUNCTIONS and any(f in _FRESH for f in stack):
        del _FUNCTIONS[key]  # the caller is being rebuilt: rebuild its callees too
    elif key in _FUNCTIONS and not _still_valid(_FUNCTIONS[key]):
        del _FUNCTIONS[key]  # a default (or a free name) changed since it was built
    if key not in _FUNCTIONS:
        with recursion_room(parsed.depth):
            _FUNCTIONS[key] = Normalizer(fn, parsed, stack).run()
    return _FUNCTIONS[key]


# ---- helpers -------------------------------------------------------------------


def _is_append(node: Any, local_names: set[str]) -> bool:
    return _is_list_method(node, "append", local_names)


def _always_returns(stmts: list[Stmt]) -> bool:
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, Return):
        return True
    if isinstance(last, If):
        return _always_returns(last.body) and _always_returns(last.orelse)
    return False


def _returns_to_assignments(stmt: If, result: str) -> None:
    for branch in (stmt.body, stmt.orelse):
        last = branch[-1]
        if isinstance(last, Return):
            branch[-1] = Let(result, "identity", (last.value,), {}, last.loc)
            if isinstance(last.value, Var) and any(
                isinstance(s, Let) and s.target == last.value.name for s in branch
            ):
                # the branch computed the value itself: bind it to the join name
                branch.pop()
                rename(branch, last.value.name, result)
        else:
            assert isinstance(last, If)
            _returns_to_assignments(last, result)
            last.joins.append(result)


def _is_last_index(index: Index) -> bool:
    """Is the index ``[-1]``?"""
    items = index.items
    return (not index.is_tuple and len(items) == 1 and isinstance(items[0], Const)
            and type(items[0].value) is int and items[0].value == -1)
