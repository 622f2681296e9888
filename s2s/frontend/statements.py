"""Statement lowering: blocks, simple statements, assignments (and unpacking) and ``if``.

An ``if`` lowers both branches and joins the names either rebinds (``If.joins``); a
function's returns in branches become one join name and one final ``return``.
"""

from __future__ import annotations

import dis
from typing import Any

import libcst as cst

from ..errors import UnpackError, UnsupportedSyntaxError, mark_shared_write
from ..ir.names import bound_names, rename, stem
from ..ir.nodes import Atom, Break, Const, If, Index, Let, Return, Stmt, Var
from . import param_writes
from .array_try import array_try
from .contexts import with_statement
from .deletes import Deletes
from .dict_appends import refuse_dict_item_append
from .dicts import split_items
from .expressions import in_place, is_list_method
from .field_appends import field_append
from .fncontainers import bind_function
from .fnlists import append_function
from .held_dict_items import rebind_holders
from .kept import KeptLowerer, raise_only
from .kept_try import decided_try, lower_kept_try
from .kwdicts import decide, update_merge, update_writes
from .list_edits import ListEdits
from .literals import decided_branch
from .match_patterns import written_cases
from .merged_dicts import fresh_dict
from .object_protocols import augmented
from .object_setters import augmented_attribute, chained_method, method_statement, set_attribute
from .resolve import RESERVED, expression_advice, is_docstring, statement_advice
from .scope import OnePath, join_values
from .sequences import grows_list
from .source import emitted
from .splices import still_a_list
from .stateful import hoisted, paired_call
from .unpacking import (
    checked_at_run_time,
    constant_items,
    element_targets,
    split_literal,
    starred_at_run_time,
)


def _assign_chain(lowerer: Any, node: cst.Assign) -> None:
    """``a = v``, and ``a = b = v`` as ``a = v; b = a`` (one array, two names: an
    in-place write after it is refused as shared); names only, in a chain."""
    names = [t.target for t in node.targets]
    if len(names) != 1 and not all(isinstance(t, cst.Name) for t in names):
        raise lowerer.n.unsupported(
            node, "chained assignment `a = b = ...` into a subscript, an attribute or a "
            "tuple is not supported", "assign to one target per statement",
        )
    lowerer.assign(names[0], node.value)
    for name in names[1:]:
        lowerer.assign(name, names[0])


def _is_append(node: Any, local_names: set[str]) -> bool:
    return is_list_method(node, "append", local_names)


def _always_returns(stmts: list[Stmt]) -> bool:
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, Return):
        return True
    if isinstance(last, If):
        return _always_returns(last.body) and _always_returns(last.orelse)
    return False


def _bind_at_end(stmts: list[Stmt], join: str, final: str, loc: Any) -> None:
    """``join = final`` at the end of a branch, or just before each return ending it
    where it always returns (a statement after its return would make it reach its
    end: `if flag: return a` then `x = ...` was refused as returning None)."""
    if not _always_returns(stmts):
        stmts.append(Let(join, "identity", (Var(final),), {}, loc))
        return
    last = stmts[-1]
    if isinstance(last, Return):
        stmts.insert(len(stmts) - 1, Let(join, "identity", (Var(final),), {}, loc))
        return
    for branch in (last.body, last.orelse):
        _bind_at_end(branch, join, final, loc)


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


def only_read(fn: Any, node: cst.Global) -> bool:
    """A ``global`` whose names the function never assigns nor deletes (Python
    compiles no STORE_GLOBAL for them): it changes nothing the function computes."""
    names = {item.name.value for item in node.names}
    return not any(ins.opname in ("STORE_GLOBAL", "DELETE_GLOBAL") and ins.argval in names
                   for ins in dis.get_instructions(fn.__code__))


class StmtLowerer:
    """Lowers the statements of one function into its Normalizer's output."""

    def __init__(self, n: Any) -> None:
        self.n = n  # the Normalizer: output, scope, buffers, loops, expressions
        self.kept = KeptLowerer(n)  # assert, `if ...: raise`, print: kept as written
        self.deletes = Deletes(n)  # `del name`
        self.list_edits = ListEdits(n)  # `del parts[0]`, `parts.insert(0, v)`, `pop(0)`

    def block(self, nodes: list[Any]) -> list[Stmt]:
        out: list[Stmt] = []
        self.n._open.append(out)  # (statements before the current one: see _own_entries)
        try:
            for i, node in enumerate(nodes):
                if i == 0 and is_docstring(node):
                    continue
                out += self.statement(node)
        finally:
            self.n._open.pop()
        return out

    def statement(self, node: Any) -> list[Stmt]:
        self.n.out: list[Stmt] = []
        self.n._open.append(self.n.out)
        try:
            out = self._statement(node)
            param_writes.check(self.n, out, node)  # (a callee's `y += v` into what it passes)
            return out
        finally:
            self.n._open.pop()

    def _statement(self, node: Any) -> list[Stmt]:
        if isinstance(node, cst.SimpleStatementLine):
            for small in node.body:  # (`parts += [v]`, `parts.extend(vs)`: sequences.py)
                if not grows_list(self.n, small):
                    self.small_statement(small)
            return self.n.out
        if isinstance(node, cst.If) and self.n.desugar.cases:
            node = written_cases(self.n, node)  # (a `match`'s cases: match_patterns.py)
        if raise_only(node) is not None:
            self.kept.raise_if(node, raise_only(node))
            return self.n.out
        if isinstance(node, (cst.If, cst.For, cst.While)):
            split = split_items(self.n.dicts, node)  # a dict's items written in it
            if split is not None:
                return self.block(split)
        if isinstance(node, cst.If) and (taken := decided_branch(
                node, lambda test: decide(self.n, test))) is not None:
            return self.block(taken)  # (`if True:`, `if "k" in kw:`: decided now)
        if isinstance(node, cst.Try) and (taken := decided_try(self.n, node)) is not None:
            return self.block(taken)  # (`try: s = cfg["s"]` of a dict's known keys)
        if isinstance(node, cst.Try) and (taken := array_try(self.n, node)) is not None:
            return self.block(taken)  # (around array code, its `except` never running)
        lower = {cst.If: self.if_statement, cst.For: self.n.loop.for_statement,
                 cst.While: self.n.loop.while_statement,
                 cst.With: lambda w: with_statement(self.n, w),  # np.errstate, warnings
                 cst.FunctionDef: self.n.funcs.define,  # lifted (frontend/functions.py)
                 cst.Try: lambda t: lower_kept_try(self.n, t),  # (around Python values)
                 }.get(type(node))
        if lower is None or getattr(node, "asynchronous", None) is not None:
            raise self.n.unsupported(node, *statement_advice(node))
        lower(node)
        return self.n.out

    def small_statement(self, node: Any) -> None:
        node = hoisted(self.n, node)  # (`return np.sum(bn(x))`: `bn(x)` first, stateful.py)
        if isinstance(node, cst.Assign):
            _assign_chain(self, node)
        elif isinstance(node, cst.AnnAssign):
            if node.value is None:
                return
            self.assign(node.target, node.value)
        elif isinstance(node, cst.AugAssign):
            op = type(node.operator).__name__.replace("Assign", "")
            binop = getattr(cst, op)
            if isinstance(node.target, cst.Attribute) and augmented_attribute(
                    self.n, node, self.assign):  # (`p.steps += 2`: object_setters.py)
                return
            if not isinstance(node.target, (cst.Name, cst.Subscript)):
                raise self.n.unsupported(
                    node, "augmented assignment into an attribute is not supported",
                    "assign to a local name",
                )
            held = self.n.dicts.refuse_shared_item(node)  # (`d["k"] += v`: dicts.py)
            an_object = augmented(self.n, node)  # (`a += b` of objects: `a = a + b`)
            if not an_object:
                _refuse_a_shared_write(self.n, node)
                param_writes.note(self.n, node)  # (the caller's call may be refused)
            if isinstance(node.target, cst.Name) and self.n.loops:
                # the next iteration's value may be a view even if this one is not
                self.n._augmented.append((self.n.env.get(node.target.value, ""), node))
            value = cst.BinaryOperation(
                left=node.target, operator=binop(), right=node.value
            )
            self.n.desugar.alias(value, node)
            if isinstance(node.target, cst.Name) and not an_object:
                in_place(self.n, value)  # (an array's dtype kept: expressions.py)
            self.assign(node.target, value)
            rebind_holders(self.n, node, held)  # (`a = d["k"]` before: Python's `a` too)
        elif isinstance(node, cst.Return):
            if node.value is None:
                raise self.n.unsupported(
                    node, "`return` without a value returns None, which has no "
                    "derivative", "return the value to differentiate",
                )
            target = self.n.result_name if self.n.depth == 0 else self.n.names.fresh(
                self.n.result_name
            )
            value = self.n.exprs.expr(node.value, target=target)
            if isinstance(value, Const):  # a constant result still has a name
                value = self.n.emit(target, "identity", (value,), {}, node.value)
            self.n.out.append(Return(value, self.n.loc(node)))
        elif isinstance(node, cst.Pass):
            return
        elif isinstance(node, cst.Break) and self.n.loops:
            self.n.out.append(Break(self.n.loc(node), env=dict(self.n.env)))
            self.n.loops[-1].append(self.n.out[-1])
        elif isinstance(node, cst.Assert):
            self.kept.assert_(node)
        elif isinstance(node, cst.Del):
            self.deletes.statement(node, self.expression_statement)
        elif isinstance(node, cst.Expr):
            self.expression_statement(node)
        elif isinstance(node, cst.Global) and only_read(self.n.fn, node):
            return  # (`global SCALE` then reads only: the module's value, as without it)
        else:
            raise self.n.unsupported(node, *statement_advice(node))

    def expression_statement(self, node: cst.Expr) -> None:
        """A statement that is one expression: a list's append or pop, np.add.at, a
        string as a comment, a kept call (print); any other is refused."""
        if append_function(self.n, node.value):
            pass  # `fs.append(lambda t: ...)`: a list of functions (fnlists.py)
        elif _list_statement(self, node.value):
            pass  # `ys.append(v)`, `ys.pop()`, `ys.insert(k, v)`, `ys.sort(key=...)`
        elif self.n.buffer.is_add_at(node.value):
            self.n.buffer.add_at_statement(node.value)
        elif isinstance(node.value, (
                cst.SimpleString, cst.ConcatenatedString, cst.Ellipsis, cst.Integer,
                cst.Float, cst.Imaginary)):
            pass  # a string used as a comment, `...` as a placeholder: nothing runs
        elif isinstance(node.value, cst.Yield):
            raise self.n.unsupported(node.value, *expression_advice(node.value))
        elif self.n.draws.statement(node):
            pass  # np.random.seed(0), a draw whose value is unused: run once per call
        elif paired_call(self.n, None, node.value) or method_statement(self.n, node) or (
                field_append(self.n, node, self.assign)):
            pass  # `p.bump(v)`: a method setting fields of an object built here; `a.out.append(v)`
        elif self.kept.call(node) or _in_place_write(self, node) or _dict_update(self, node):
            pass  # print(...) kept; `y.sort()`: `y[...] = np.sort(y)`; `d.update(k=v)`
        else:
            refuse_dict_item_append(self.n, node.value)  # (`d["k"].append(v)` kept)
            raise self.n.unsupported(
                node, "an expression statement is evaluated only for its side effect; "
                "s2s keeps calls of functions (print, logging, warnings, your own) but "
                "not this: a method changes its object, a NumPy call returns a value",
                "remove it from the function, or assign its value to a name that "
                "the result uses",
            )

    def assign(self, target: Any, value: Any) -> None:
        if bind_function(self.n, target, value):  # `act = np.tanh`, `fs = [np.sin, g]`
            return
        if isinstance(target, cst.Name) and chained_method(self.n, target, value):
            return  # (`d = d.with_w(v)`, a method returning `self`: object_setters.py)
        if isinstance(target, cst.Name) and paired_call(self.n, target, value):
            return  # (`y = bn(x)`, a method setting fields and returning: stateful.py)
        if isinstance(target, cst.Name):
            name = target.value
            self.check_name(target)
            ssa = self.n.names.fresh(name) if name in self.n.bound else name
            atom = self.n.exprs.expr(value, target=ssa)
            if not (isinstance(atom, Var) and atom.name == ssa):
                still_a_list(self.n, ssa, atom, value)  # (identity; splices.py)
            self.n.bound.add(name)
            self.n._bind(name, ssa)
            return
        if self.list_edits.zip_columns(target, value):
            return  # (`xs, ys = zip(*pts)` of a run-time length: list_edits.py)
        if isinstance(target, (cst.Tuple, cst.List)) and (split_literal(  # (`c, ys = 0, []`)
                self, target, value) or element_targets(self, target, value)):
            return  # (`self.a, self.b = a, b`: into names first, then each element)
        if isinstance(target, (cst.Tuple, cst.List)):
            # the whole right side is evaluated before any name is bound (a, b = b, a)
            tree = self.unpacked_values(target, value)
            self.bind_unpacked(target, tree, value)
            return
        if isinstance(target, cst.Subscript):
            self.n.buffer.assign_element(target, value)
            return
        if isinstance(target, cst.Attribute) and set_attribute(self.n, target, value):
            return  # (`p.w = v` of an object of yours: object_setters.py)
        raise self.n.unsupported(
            target, "only names can be assigned to",
            "assign to a local name",
        )

    def unpacked_values(self, target: Any, value: Any) -> Any:
        """The right side of ``a, (b, c), *d = ...``: a list with one entry per
        target element where the right side is a literal that lines up with the
        target (nested likewise), else the value's atom (unpacked by index)."""
        elements = list(target.elements) if isinstance(target, (cst.Tuple, cst.List)) \
            else None
        literal = isinstance(value, (cst.Tuple, cst.List)) and not any(
            isinstance(e, cst.StarredElement) for e in value.elements)
        if elements is None or not literal:
            if not isinstance(value := constant_items(self.n, elements, value), cst.Tuple):
                return value  # (its atom; a Tuple: `w0, *ws = WS` of WS's items)
        values = list(value.elements)
        star = [i for i, e in enumerate(elements) if isinstance(e, cst.StarredElement)]
        if star:
            k = star[0]
            n_after = len(elements) - k - 1
            if len(values) < len(elements) - 1:
                raise UnpackError(
                    f"not enough values to unpack (expected at least {len(elements) - 1}, "
                    f"got {len(values)})", self.n.loc(value), "match the targets to the values")
            middle = values[k:len(values) - n_after]
            rest = cst.List(elements=[e.with_changes(comma=cst.MaybeSentinel.DEFAULT)
                                      for e in middle])
            self.n.desugar.alias(rest, middle[0].value if middle else value)
            out = [self.unpacked_values(e.value, v.value) for e, v in zip(elements[:k], values)]
            out.append(self.n.exprs.expr(rest))
            out += [self.unpacked_values(e.value, v.value) for e, v in zip(
                elements[k + 1:], values[len(values) - n_after:])]
            return out
        if len(values) != len(elements):
            raise UnpackError.of(len(elements), len(values), self.n.loc(value))
        return [self.unpacked_values(e.value, v.value) for e, v in zip(elements, values)]

    def bind_unpacked(self, target: Any, tree: Any, node: Any) -> None:
        if isinstance(target, cst.StarredElement):
            target = target.value
        if isinstance(tree, list):
            for e, sub in zip(target.elements, tree):
                self.bind_unpacked(e.value, sub, node)
            return
        if isinstance(target, cst.Name):
            self.bind_atom(target, tree, node)
            return
        if not isinstance(target, (cst.Tuple, cst.List)):
            raise self.n.unsupported(
                target, "only names can be unpacked into",
                "unpack into names, then write the element on its own line",
            )
        if any(isinstance(e, cst.StarredElement) for e in target.elements):
            starred_at_run_time(self.n, target, tree)
            return
        if isinstance(tree, Var):  # (its width checked where it runs, as Python does)
            tree = checked_at_run_time(self.n, target, tree)
        for i, e in enumerate(target.elements):
            sub = e.value
            base = sub.value if isinstance(sub, cst.Name) else f"{stem(self.n.named(tree))}_{i}"
            if isinstance(sub, cst.Name):
                self.check_name(sub)
            ssa = self.n.names.fresh(base) if (base in self.n.bound or not isinstance(
                sub, cst.Name)) else base
            item = self.n.emit(ssa, "getitem", (tree,), {"index": Index(
                (Const(i, str(i)),), False, unpack=len(target.elements))}, sub)
            if isinstance(sub, cst.Name):
                self.n.bound.add(base)
                self.n._bind(base, ssa)
            else:
                self.bind_unpacked(sub, item, node)

    def bind_atom(self, target: Any, atom: Atom, node: Any) -> None:
        if not isinstance(target, cst.Name):
            raise self.n.unsupported(
                target, "nested unpacking targets are not supported",
                "unpack in two steps",
            )
        name = target.value
        ssa = self.n.names.fresh(name) if name in self.n.bound else name
        self.n.emit(ssa, "identity", (atom,), {}, node)
        self.n.bound.add(name)
        self.n._bind(name, ssa)

    def check_name(self, node: cst.Name) -> None:
        if node.value in RESERVED:
            raise self.n.unsupported(
                node, f"the name `{node.value}` is used by emitted code",
                f"rename the local variable `{node.value}`",
            )

    def if_statement(self, node: cst.If, test: Atom | None = None) -> None:
        test = self.n.exprs.expr(node.test) if test is None else test
        before = dict(self.n.env)
        bound_before = set(self.n.bound)
        outer = self.n.out
        self.n.depth += 1

        paths = self.n._path(test, True), self.n._path(test, False)
        first = len(self.n.partial)
        self.n._branches.append((set(before.values()), len(self.n.loops)))
        generation_before = dict(self.n.generation)
        values_before = dict(self.n.funcs.values)  # (functions bound on each path)
        self.n._enter_path(paths[0])
        body = self.block(list(node.body.body))
        values_body, self.n.funcs.values = self.n.funcs.values, dict(values_before)
        self.n.paths.pop()
        middle = len(self.n.partial)
        env_body, bound_body = self.n.env, self.n.bound
        self.n.env, self.n.bound = dict(before), set(bound_before) | bound_body
        # the other branch starts from before the `if` too: what the body bound does
        # not rebind a name there (``if not t: x = 0`` after ``if t: x = v`` binds x
        # on both paths); after the `if`, a name either branch bound was rebound
        generation_body, self.n.generation = self.n.generation, generation_before
        self.n._enter_path(paths[1])
        if node.orelse is None:
            orelse: list[Stmt] = []
        elif isinstance(node.orelse, cst.If):
            orelse = self.statement(node.orelse)
        else:
            orelse = self.block(list(node.orelse.body.body))
        self.n.paths.pop()
        self.n._branches.pop()
        self.n.funcs.values = join_values(test, values_body, self.n.funcs.values)
        for name, count in generation_body.items():
            self.n.generation[name] = max(count, self.n.generation.get(name, 0))
        env_else = self.n.env
        self.n.bound |= bound_body
        self.n.out = outer
        self.n.depth -= 1

        stmt = If(test, body, orelse, self.n.loc(node))
        # names bound on one path inside a branch are bound on this branch's path too
        inner = self.n.partial[first:]
        del self.n.partial[first:]
        for i, record in enumerate(inner):
            k = 0 if i < middle - first else 1
            if paths[k] is not None:
                self.n.partial.append(record.within(paths[k], stmt, k))
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
                # (not one only read here, an earlier `if`'s: its record still holds)
                if paths[k] is not None and (a or b) in bound_names((body, orelse)[k]):
                    self.n.partial.append(OnePath(
                        name, a or b, self.n.generation.get(name, 0), frozenset(),
                    ).within(paths[k], stmt, k))
                continue
            join = a if a != before.get(name) else b
            # two arrays written in place, one per path: the other binds the join (y = y_other)
            self.n.dicts.join(join, a, b, node, name)
            root = self.n.buffer_root.get(join, join)
            for branch, final in ((body, a), (orelse, b)):
                if final == join:
                    continue
                if final != before.get(name) and self.n.buffer_root.get(final, root) == root \
                        and final in bound_names(branch):  # (not one an earlier `if` bound)
                    rename(branch, final, join)
                    # an array or list the branch made (a root): its later versions
                    # (appends in a loop) are spelled with the join's name too
                    for version, first in list(self.n.buffer_root.items()):
                        if first == final:
                            self.n.buffer_root[version] = root
                else:  # (on a path that returns, `if t: return a`: before its return)
                    _bind_at_end(branch, join, final, stmt.loc)
            stmt.joins.append(join)
            self.n.lets.joined.add(join)  # (its `let` is one path's: literals.known)
            env_after[name] = join
            self.n.generation[name] = self.n.generation.get(name, 0) + 1
            if a in self.n.lists and b in self.n.lists:
                self.n.lists.add(join)
            if a in self.n.buffers and b in self.n.buffers or _none_or_buffer(self.n, a, b):
                self.n.buffers.add(join)  # one array, written on a path
                root = self.n.buffer_root.get(a) or self.n.buffer_root.get(b)
                if root is not None and join != root:
                    self.n.buffer_root[join] = root
        self.n.env = env_after
        self.n.out.append(stmt)

    def single_return(self, body: list[Stmt], last: Any) -> list[Stmt]:
        """Rewrite returns in branches into one join name and one final return."""
        if body and isinstance(body[-1], Return):
            return body
        if not _always_returns(body):
            loc = self.n.loc(last)
            raise UnsupportedSyntaxError(
                "the function can reach its end without `return`, so it returns "
                "None, which has no derivative",
                loc, "return a value on every path", self.n.display,
            )
        result = self.n.result_name
        last = body[-1]
        assert isinstance(last, If)
        _returns_to_assignments(last, result)
        last.joins.append(result)
        body.append(Return(Var(result), last.loc))
        return body


def _in_place_write(stmts: StmtLowerer, node: cst.Expr) -> bool:
    """Lower ``y.sort()`` (``y.fill(v)``) of an array as the write it makes; False
    for any other statement."""
    n = stmts.n
    write = _in_place_method(node.value, n.local_names)
    if write is None or n.env.get(node.value.func.value.value) in n.lists:
        return False
    n.desugar.alias_tree(write, node)
    n.resolver.bind_namespace("np", node)
    stmts.small_statement(write)
    return True


def _dict_update(stmts: StmtLowerer, node: cst.Expr) -> bool:
    """Lower ``d.update(...)`` of a dict the function built as the writes it makes;
    False for any other statement."""
    if update_merge(stmts.n, node.value):  # (of keys known per call: a new dict)
        return True
    writes = update_writes(stmts.n, node.value)
    if writes is None:
        return False
    for write in writes:
        stmts.n.desugar.alias_tree(write, node)
        stmts.small_statement(write)
    return True


def _in_place_method(value: Any, local_names: set[str]) -> Any:
    """``y.sort(...)`` or ``y.fill(v)`` on a name of the function: the write into
    ``y`` it makes, ``y[...] = np.sort(y, ...)`` (``y[...] = v``), which the write
    checks then read (an argument, or an array another name shares, is refused)."""
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and
            isinstance(value.func.value, cst.Name) and value.func.value.value in local_names
            and value.func.attr.value in ("sort", "fill")):
        return None
    y = value.func.value
    if value.func.attr.value == "fill":
        if len(value.args) != 1 or value.args[0].keyword or value.args[0].star:
            return None
        new: Any = value.args[0].value
    else:
        new = cst.Call(cst.Attribute(cst.Name("np"), cst.Name("sort")),
                       [cst.Arg(y)] + list(value.args))
    target = cst.Subscript(y, [cst.SubscriptElement(cst.Index(cst.Ellipsis()))])
    return cst.Assign([cst.AssignTarget(target)], new)


def _none_or_buffer(n: Any, a: str, b: str) -> bool:
    """In code s2s emitted (a gradient transformed again): is one version an array
    the function made and the other None (a cotangent no path reaches on that path,
    never written there)?  The join is then that array's buffer."""
    if not emitted(n.fn):
        return False

    def none(v: str) -> bool:
        let = n.lets.get(v)
        return let is not None and let.prim == "identity" and isinstance(
            let.args[0], Const) and let.args[0].value is None

    return a in n.buffers and none(b) or b in n.buffers and none(a)


def _refuse_a_shared_write(n, node: cst.AugAssign) -> None:
    """`x += v` where NumPy would write into an array another name holds: refused."""
    if isinstance(node.target, cst.Name) and n.buffer.may_share(
            n.env.get(node.target.value, "")) and not fresh_dict(n, node):
        # NumPy writes into the array the name shares with another (x for
        # `v = x`, `v = x[0]`); s2s would rebind it: refuse rather than differ
        name = node.target.value
        raise mark_shared_write(n.unsupported(
            node, f"`{name} {node.operator._get_token()} ...` would write into an "
            f"array `{name}` shares with another name", f"write `{name} = {name} "
            f"{node.operator._get_token()[:-1]} ...` (a new array)",
        ))
    current = n.env.get(node.target.value, "") if isinstance(
        node.target, cst.Name) else ""
    if current in n.aliased and not n.buffer.immutable(current):
        name = node.target.value
        op = node.operator._get_token()
        raise mark_shared_write(n.unsupported(
            node, f"`{name} {op} ...` would change in place an array that "
            f"another name, view or list also refers to (line "
            f"{n.loc(n.aliased[current]).line}), so NumPy would change "
            "that too", f"write `{name} = {name} {op[:-1]} ...` (a new array)",
        ))


def _list_statement(lowerer: Any, value: Any) -> bool:
    """A list method's statement (``ys.append(v)``, ``ys.pop()``, ``ys.insert(k, v)``,
    ``ys.sort(key=...)``, ``ys.reverse()``) lowered (True), else False."""
    names = lowerer.n.local_names
    if _is_append(value, names):
        lowerer.n.buffer.append_statement(value)
    elif is_list_method(value, "pop", names):
        lowerer.n.buffer.pop_statement(value)
    elif is_list_method(value, "insert", names):
        lowerer.list_edits.insert(value)
    elif not (isinstance(value, cst.Call) and lowerer.list_edits.reorder(value)):
        return False  # (`parts.sort(key=...)`: `parts = sorted(parts, ...)`, list_edits.py)
    return True
