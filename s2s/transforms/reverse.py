"""Reverse mode: from a normalized function to its gradient or VJP function, as code.

The emitted function first runs the user's forward statements (those the backward
sweep needs), then walks them backwards.  Each differentiable statement contributes
cotangents to its inputs through its primitive's VJP rule, inlined.  Cotangent names
follow the user's names (``pred`` -> ``pred_bar``) and each backward block is headed by
a comment quoting the user line it comes from.

Only values that depend on the requested arguments (active values) and that reach the
output get cotangent code; forward statements nothing needs are dropped.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..emit.code import Block, Comment, Line, render_function
from ..errors import MissingRuleError, NonDifferentiableError, TransformError
from ..frontend.normalize import normalize
from ..ir.kinds import LEAF, SEQ, Kind, Seq, Tree, leaf_paths, literal, path_text
from ..ir.names import NameTable
from ..ir.nodes import (
    KEYWORD_OPERANDS,
    Atom,
    Break,
    Const,
    For,
    Function,
    If,
    Index,
    Let,
    Return,
    Slice,
    Stmt,
    Var,
    uses,
    walk,
)
from ..ir.spelling import atom_text
from ..ir.unroll import unroll_container_loops, unrolled_header
from ..primitives import PRIMITIVES
from ..primitives.custom import checked_bwd, custom_vjp
from ..primitives.registry import arg_slots
from .checkpoint import policy_of, segmented_backward, segmented_forward
from .inline import Array, Inliner

_STRUCTURAL = {"identity", "make_tuple", "make_list", "make_dict", "call"}


@dataclass
class Spec:
    """What to emit: which parameters to differentiate, and what to return."""

    mode: str  # "grad", "value_and_grad" or "vjp"
    argnums: tuple[int, ...]
    tuple_out: bool  # grad returns a tuple of gradients (argnums was a tuple)
    has_aux: bool
    arg_kinds: tuple[Kind, ...]  # kinds of the positional parameters


@dataclass
class Module:
    """The functions of one emitted module, callees first."""

    functions: list[str] = field(default_factory=list)
    names: dict[Any, str] = field(default_factory=dict)  # callee-vjp key -> name
    taken: set[str] = field(default_factory=set)
    namespace: dict[str, Any] = field(default_factory=dict)


def emit_reverse(fn: Function, spec: Spec, module: Module, name: str) -> str:
    """Append the reverse-mode function for ``fn`` to ``module``; return its name."""
    module.taken.add(name)
    module.taken |= fn.names.taken  # helper names must not shadow its locals
    module.namespace.update(fn.namespace)
    fn = unroll_container_loops(fn, spec.arg_kinds)
    fn = _expand_custom_vjp(fn, module)
    builder = _Reverse(fn, spec, module)
    text = builder.build(name)
    module.functions.append(text)
    return name


class _Reverse:
    def __init__(self, fn: Function, spec: Spec, module: Module) -> None:
        self.fn = fn
        self.spec = spec
        self.module = module
        self.names = NameTable(fn.names.taken | module.taken)
        self.kinds: dict[str, Kind] = {}
        self.active: set[str] = set()
        self.producer: dict[str, Let] = {}
        self.scalars: set[str] = set()  # names whose shape is known to be ()
        self.canonical: dict[tuple[str, tuple], str] = {}
        self.owned: set[str] = set()  # cotangent names this pass may reassign
        # cotangent names whose current value is an array this pass allocated and
        # nothing else refers to: index reads may accumulate into them in place
        self.fresh_buffers: set[str] = set()
        self.inliner = Inliner(self.names.fresh)
        self.tapes: dict[int, tuple[str, list[str]]] = {}  # id(block) -> tape, names
        self.loop_depth = 0  # loops around the statement being differentiated
        self.int_vars: set[str] = set()  # names known to hold Python ints (loop indices)
        self.leaving: list[dict[str, tuple[str, str]]] = []  # per loop: entry -> handed, exit
        self.saved: dict[int, str] = {}  # id(setitem statement) -> its overwritten elements
        self.loop_bodies: list[list[Stmt]] = []  # bodies of the loops being differentiated
        # saved names that may be views of an array the loop writes into: the tape
        # holds copies (the code stays re-transformable; see _view_of_written)
        self.view_copies: set[str] = set()
        self.checkpointed: dict[int, Any] = {}  # id(For) -> its segments (checkpoint.py)
        # ``v = ys.pop()`` is ``v = ys[-1]`` then ``ys2 = pop(ys)``: id(pop) -> v
        self.popped: dict[int, str] = _pop_pairs(self.fn.body)
        self.branch_kinds: dict[tuple[int, int], dict[str, Kind | None]] = {}
        # Structural zeros (JAX's symbolic zeros).  A cotangent that no path from the
        # output reaches on some paths through the `if`s is bound on the others only:
        # ``when[(var, path)]`` is where it is bound (a disjunction of conjunctions of
        # ``(test, branch)`` literals, over the whole function); absent, it is bound
        # wherever the code being emitted runs.  ``context`` is the literals of the
        # `if`s around that code.  The backward of a statement whose cotangent is bound
        # on some paths only runs on those (under the same tests), so a partial that is
        # inf or nan there (sqrt's at 0) is never multiplied by a zero that is not one.
        self.when: dict[tuple[str, tuple], frozenset] = {}
        self.context: frozenset = frozenset()
        # a cotangent one branch of an `if` left unbound, as the join left it: the
        # branches' code (where zeros can still go, as they did before structural
        # zeros were tracked), the name, its condition and the code's context then
        self.unbound_at: dict[tuple[str, tuple], tuple] = {}
        # Cotangents of values from before a loop that the loop may never reach (it
        # breaks first, none of its iterations takes the branch that reads them, a
        # `while` runs no iteration): they start as zeros and a flag says whether an
        # iteration added to them (``r_reached``); their name is bound everywhere, but
        # nonzero only where ``when`` says.  accumulator name -> [flag, loop depth,
        # context, added deeper (in a branch or a nested loop)]
        self.filled: dict[tuple[str, tuple], str] = {}  # zeros put where it was unbound
        self.reach_flags: dict[str, list] = {}
        self.flag_names: set[str] = set()  # (a flag nothing reads is dropped: build())
        self.bound_anyway: set[tuple[str, tuple]] = set()
        # ``t2 = not t``: a path of t2 is t's other path (both name the same test)
        self.negation: dict[str, str] = {
            t.target: t.args[0].name for t in walk(self.fn.body) if isinstance(t, Let)
            and t.prim == "not_" and isinstance(t.args[0], Var)}
        self.test_order: dict[str, int] = {
            t.target: k for k, t in enumerate(walk(self.fn.body)) if isinstance(t, Let)}

    # ---- analysis -------------------------------------------------------------

    def analyse(self) -> None:
        for i, p in enumerate(self.fn.params):
            self.kinds[p] = self.spec.arg_kinds[i] if i < len(self.spec.arg_kinds) else LEAF
            if i in self.spec.argnums:
                self.active.add(p)
        for p in self.fn.kwonly:
            self.kinds[p] = LEAF
        self._analyse(self.fn.body)

    def _check_python_expression(self, s: Let) -> None:
        """A comprehension (or slice(), tuple()) is index arithmetic: it may not read a
        value that carries a derivative, which it would silently drop."""
        for i, a in enumerate(s.args):
            if i in s.params.get("shape_only", ()):
                continue  # only its items' shapes are read
            if isinstance(a, Var) and a.name in self.active:
                raise TransformError(
                    f"this expression reads `{a.name}`, which carries a derivative; s2s "
                    "differentiates NumPy operations, not comprehensions", s.loc,
                    "write it with array operations (np.stack, slicing, np.sum)",
                )

    def _analyse(self, stmts: list[Stmt]) -> None:
        for s in stmts:
            if isinstance(s, Let):
                self._placeholder_kind(s)
                if not (_is_none(s) and s.target in self.kinds):
                    self.producer[s.target] = s
                    self.kinds[s.target] = self._kind_of_let(s)
                if s.prim == "pyexpr":
                    self._check_python_expression(s)
                if self._is_active(s):
                    self.active.add(s.target)
                if self._is_scalar(s):
                    self.scalars.add(s.target)
                if self._is_int(s):
                    self.int_vars.add(s.target)
            elif isinstance(s, For):
                self._analyse_for(s)
            elif isinstance(s, If):
                self._analyse(s.body)
                in_body = {j: self.kinds.get(j) for j in s.joins}
                self._analyse(s.orelse)
                # each path's structure of its joins (a known-length list on one, a
                # list grown in a loop on the other: a grown list after the `if`)
                self.branch_kinds[(id(s), 0)] = in_body
                self.branch_kinds[(id(s), 1)] = {j: self.kinds.get(j) for j in s.joins}
                for join in s.joins:
                    # a list one path appends to (a tape saved on one path): grown
                    a, b = in_body[join], self.kinds.get(join)
                    item = None if a is None or b is None or a == b else (
                        _grown_item(a, b) or _grown_item(b, a))
                    if item is not None:
                        self.kinds[join] = Seq(item)
                for join in s.joins:
                    # a join is scalar only if every branch made it so
                    if not _all_scalar_defs(s, join, self.scalars):
                        self.scalars.discard(join)

    def _placeholder_kind(self, s: Let) -> None:
        """A name an ``if`` binds on one path and a later ``if`` reads on that path is
        bound to None on the other paths (see normalize._enter_path): fine for an
        array, whose zero tangents and cotangents there are never read; a container
        would have its leaves read (``None[0]``)."""
        if _is_none(s):
            known = self.kinds.get(s.target)
        elif s.target in self.kinds and _is_none(self.producer.get(s.target)):
            known = self._kind_of_let(s)
        else:
            return
        if isinstance(known, (Tree, Seq)):
            raise TransformError(
                f"`{s.target}` holds a container and is None on another path of the "
                "`if` that binds it; s2s cannot make its derivative's zeros there",
                s.loc, f"bind `{s.target}` on every path (a container of arrays there "
                "too), or read it only in the `if` that binds it",
            )

    def _is_int(self, s: Let) -> bool:
        """Is the value a Python int (a loop index, a length, arithmetic on those)?"""
        if s.prim in ("len", "int", "ndim", "size"):
            return True
        if s.prim in ("add", "subtract", "multiply", "floor_divide", "remainder",
                      "negative", "identity"):
            return all(
                (isinstance(a, Var) and a.name in self.int_vars)
                or (isinstance(a, Const) and type(a.value) is int)
                for a in s.args
            )
        if s.prim == "getitem" and isinstance(s.args[0], Var):
            base = self.producer.get(s.args[0].name)
            return base is not None and base.prim == "shape"
        return False

    def _analyse_for(self, s: For) -> None:
        self.kinds[s.target] = LEAF
        self.scalars.add(s.target)  # a Python int
        self.int_vars.add(s.target)
        for entry, _ in s.carried:
            self.scalars.discard(entry)  # its value changes from one iteration to the next
        while True:  # a value feeding the next iteration may become active there
            before = set(self.active)
            self._analyse(s.body)
            grown = False
            for entry, exit_ in s.carried:
                if exit_ in self.active:
                    self.active.add(entry)
                before_kind, after = self.kinds.get(entry, LEAF), self.kinds.get(exit_, LEAF)
                if before_kind == after:
                    continue
                item = _grown_item(before_kind, after)
                if item is not None:
                    if before_kind != Seq(item):  # appended to in the loop: length known later
                        self.kinds[entry] = Seq(item)
                        grown = True
                    continue
                raise TransformError(
                    f"`{entry}` changes structure inside the loop", s.loc,
                    "keep a value carried by a loop the same kind of value",
                )
            for brk in _breaks(s.body):
                for entry, name in brk.copies:
                    if name in self.active:
                        self.active.add(entry)
                    # a list appended to on the way out (a tape saved before `break`)
                    item = _grown_item(self.kinds.get(entry, LEAF), self.kinds.get(name, LEAF))
                    if item is not None and self.kinds.get(entry) != Seq(item):
                        self.kinds[entry] = Seq(item)
                        grown = True
            if self.active == before and not grown:
                return

    def _is_scalar(self, s: Let) -> bool:
        """Is the value known to have shape () whatever the inputs' shapes?"""
        prim = PRIMITIVES[s.prim]
        if s.prim in ("sum", "mean", "max", "min", "prod"):
            return "axis" not in s.params and not _truthy(s.params.get("keepdims"))
        if s.prim in ("float", "int", "ndim", "size", "len"):
            return True
        if s.prim == "getitem" and isinstance(s.args[0], Var):
            base = self.producer.get(s.args[0].name)
            index: Index = s.params["index"]
            return base is not None and base.prim == "shape" and len(index.items) == 1 \
                and not isinstance(index.items[0], Slice)
        if prim.family in ("elementwise", "binary", "comparison") and s.prim != "where":
            return all(self.is_scalar(a) for a in s.args)
        if s.prim == "identity":
            return self.is_scalar(s.args[0])
        return False

    def is_scalar(self, a: Atom) -> bool:
        if isinstance(a, Const):
            return isinstance(a.value, (int, float)) or np.ndim(a.value) == 0 and (
                not isinstance(a.value, (str, tuple, list, dict, type(None)))
            )
        return a.name in self.scalars

    def _kind_of_let(self, s: Let) -> Kind:
        def k(a: Atom) -> Kind:
            return self.kinds.get(a.name, LEAF) if isinstance(a, Var) else _const_kind(a)

        if s.prim == "identity":
            return k(s.args[0])
        if s.prim in ("make_tuple", "make_list"):
            t = tuple if s.prim == "make_tuple" else list
            return Tree(t, tuple(range(len(s.args))), tuple(k(a) for a in s.args))
        if s.prim == "make_dict":
            return Tree(dict, tuple(s.params["keys"]), tuple(k(a) for a in s.args))
        if s.prim == "getitem":
            base = k(s.args[0])
            if isinstance(base, Tree):
                return base.child(self._container_key(s, base))
            if isinstance(base, Seq):
                return base.item  # (reverse mode refuses the read: see _refuse_list_reads)
            return LEAF
        if s.prim == "append":
            base, item = k(s.args[0]), k(s.args[1])
            if isinstance(base, Tree) and base.type is list:
                n = len(base.keys)
                return Tree(list, tuple(range(n + 1)), base.children + (item,))
            if isinstance(base, Seq) and base.item != item:
                raise TransformError(
                    "a list grown in a loop holds values of different structures",
                    s.loc, "append values of one structure (all arrays, or all pairs)",
                )
            return Seq(item)
        if s.prim == "list":
            base = k(s.args[0])
            if isinstance(base, Tree) and base.type is not dict:
                return Tree(list, base.keys, base.children)
            if isinstance(base, Tree):
                raise TransformError(
                    "list() of a dict is not supported", s.loc,
                    "list the values you need: [d['a'], d['b']]",
                )
            return base if isinstance(base, Seq) else SEQ
        if s.prim == "zeros_list":
            return k(s.args[0])
        if s.prim == "pop":
            base = k(s.args[0])
            if isinstance(base, Tree) and base.type is list and base.keys:
                n = len(base.keys) - 1
                return Tree(list, tuple(range(n)), base.children[:n])
            return base
        if s.prim == "call":
            return _call_kind(s, tuple(k(a) for a in s.args))
        results = PRIMITIVES[s.prim].results
        if results is not None:
            try:
                known = _static_arguments(s)
                for a, (pname, sub) in zip(s.args, arg_slots(s)):
                    kind = k(a)
                    if sub is None and pname not in known and isinstance(kind, Tree) and (
                            kind.type is not dict):
                        known[pname] = (None,) * len(kind.keys)  # only its length is known
                n = results if isinstance(results, int) else results(known)
            except (KeyError, TypeError):
                raise TransformError(
                    f"`{s.prim}` returns a number of results the code computes when it "
                    "runs (its sections are not constants), so its results cannot be "
                    "differentiated one by one", s.loc,
                    "give the sections as constants (np.split(x, 3) or a literal list "
                    "of indices), or index the array directly",
                ) from None
            return Tree(tuple, tuple(range(n)), (LEAF,) * n)
        return LEAF

    def _container_key(self, s: Let, base: Tree) -> Any:
        index: Index = s.params["index"]
        item = index.items[0] if len(index.items) == 1 else None
        if not isinstance(item, Const) or index.is_tuple:
            raise TransformError(
                "a tuple, list or dict argument can only be indexed with a constant "
                "key here", s.loc, 'write params["W"] or pair[0]',
            )
        key = item.value
        if base.type is not dict and isinstance(key, int) and key < 0:
            key += len(base.keys)
        if key not in base.keys:
            raise TransformError(
                f"the container has no key {item.value!r}", s.loc,
                f"use one of {list(base.keys)}",
            )
        return key

    def _is_active(self, s: Let) -> bool:
        prim = PRIMITIVES[s.prim]
        if prim.nondiff:
            return False
        if s.prim in _STRUCTURAL or s.prim in ("getitem", "array", "asarray"):
            return any(isinstance(a, Var) and a.name in self.active for a in s.args)
        return any(
            isinstance(a, Var) and a.name in self.active and pname in prim.diff
            for a, (pname, _) in zip(s.args, arg_slots(s))
        )

    # ---- building -------------------------------------------------------------

    def build(self, name: str) -> str:
        self.analyse()
        self._check_indexes_not_changed_later()
        self._refuse_list_reads()
        ret = self.fn.body[-1]
        assert isinstance(ret, Return)
        result = ret.value
        out_kind = self.kinds.get(result.name, LEAF) if isinstance(result, Var) else LEAF
        adj: dict[str, dict[tuple, str]] = {}
        seed_lines: list[Any] = []
        params = list(self.fn.params)
        diff_path: tuple = ()
        if self.spec.has_aux:
            if not (isinstance(out_kind, Tree) and len(out_kind.keys) == 2
                    and out_kind.type in (tuple, list)):
                raise _aux_error(out_kind)
            diff_path = (0,)
            out_kind = out_kind.children[0]
        assert isinstance(result, Var), "normalize names every returned value"
        if self.spec.mode == "vjp":
            ct = self.names.fresh(f"{_elem_name(self, result.name, diff_path)}_bar")
            params.append(ct)
            adj[result.name] = {
                diff_path + p: path_text(ct, p) for p in leaf_paths(out_kind)
            }
        else:
            if isinstance(out_kind, Tree):
                raise _grad_error(out_kind)
            elem = _elem_name(self, result.name, diff_path)
            value = path_text(result.name, diff_path) if elem == result.name or diff_path == () else elem
            seed = (
                self.canonical_name(result.name, ()) if not diff_path
                else self.names.fresh(f"{elem}_bar")
            )
            self.owned.add(seed)
            seed_lines.append(Line(f"{seed} = grad_seed({value})"))
            adj[result.name] = {diff_path: seed}
        if result.name not in self.active:
            adj.pop(result.name)

        backward = seed_lines + self.backward(self.fn.body[:-1], adj)
        outs = []
        for i in self.spec.argnums:
            p = self.fn.params[i]
            for path in list(adj.get(p, {})):  # zeros where no path reached it
                self.complete(p, path, adj, backward)
            outs.append(self.materialize(p, adj.get(p, {})))
        backward = _tidy_replays(backward)
        unread = self.flag_names - _uses_of(backward)  # (only a value's own backward reads one)
        if unread:
            backward = _without_flags(backward, unread)
        grads = outs[0] if not self.spec.tuple_out else (
            "(" + ", ".join(outs) + ("," if len(outs) == 1 else "") + ")"
        )
        # the backward sweep pops earlier values back into names a loop rebinds: a
        # returned value held in such a name is kept aside before the sweep
        restored = {n for _, names in self.tapes.values() for n in names}
        kept: list[Any] = []

        def forward_value(text: str) -> str:
            if text in restored:
                name = self.names.fresh(f"{text}_final")
                kept.append(Line(f"{name} = {text}"))
                return name
            return text

        if self.spec.mode == "grad":
            ret_text = grads
            if self.spec.has_aux:
                ret_text = f"{grads}, {forward_value(self._aux_text(result))}"
        elif self.spec.mode == "value_and_grad":
            ret_text = f"{forward_value(result.name)}, {grads}"
        else:
            ret_text = grads
        ret_line = Line(f"return {ret_text}")
        self.view_copies |= {n for n in _uses_of(backward)
                             if self._view_of_written(n, self.fn.body, later=True)}
        forward = _dead_code(
            _forward(self.fn.body[:-1], self) + kept, _uses_of(backward + [ret_line])
        )
        forward = [Line(f"{tape} = []") for tape, _ in self.tapes.values()] + forward
        signature = _signature(self.fn, params, self.spec.mode == "vjp", self.module)
        items = _spell_buffers(forward + backward + [ret_line], self.fn.aliases)
        return render_function(name, signature, items)

    def _refuse_list_reads(self) -> None:
        """What reverse mode cannot differentiate yet among lists grown in loops."""
        lets = _lets(self.fn.body)
        pop_reads = set(self.popped.values())  # ``v = ys.pop()``'s read of ys[-1]
        for s in lets:
            base = s.args[0] if s.args else None
            if (s.prim == "getitem" and isinstance(base, Var) and base.name in self.active
                    and s.target not in pop_reads
                    and isinstance(self.kinds.get(base.name), Seq)):
                raise TransformError(
                    "reading an element of a list grown in a loop is not supported yet",
                    s.loc, "stack the list first: np.stack(ys)[i]",
                )

    def _check_indexes_not_changed_later(self) -> None:
        """An index list grown by ``append`` after an indexing read would be read,
        changed, by that read's backward (which runs after the append): refuse it."""
        lets = _lets(self.fn.body)  # in program order
        last_change = {self.fn.aliases.get(t.target, t.target): k
                       for k, t in enumerate(lets) if t.prim in ("append", "pop")}
        for k, t in enumerate(lets):
            index = t.params.get("index") if t.prim in ("getitem", "setitem", "add_at") \
                else None
            if index is None or t.target not in self.active and t.prim == "getitem":
                continue
            for a in index.atoms():
                if isinstance(a, Var) and last_change.get(
                        self.fn.aliases.get(a.name, a.name), -1) > k:
                    raise TransformError(
                        f"the index list `{self.fn.aliases.get(a.name, a.name)}` changes "
                        "after it is used here, and reverse mode reads it again later",
                        t.loc, "build the index list completely first (or index with a "
                        "tuple or an array)",
                    )

    def _aux_text(self, result: Var) -> str:
        prod = self.producer.get(result.name)
        if prod is not None and prod.prim in ("make_tuple", "make_list"):
            return atom_text(prod.args[1])
        return f"{result.name}[1]"

    def zeros_text(self, var: str, path: tuple) -> str:
        """The zero cotangent of one leaf (a list grown in a loop: its items' zeros)."""
        if path == () and isinstance(self.kinds.get(var), Seq):
            return f"zeros_list({var})"
        return f"np.zeros_like({path_text(var, path)})"

    def materialize(self, var: str, slots: dict[tuple, str]) -> str:
        kind = self.kinds.get(var, LEAF)
        return literal(
            kind,
            lambda path: slots.get(path) or f"np.zeros_like({path_text(var, path)})",
        )

    # ---- the backward sweep ---------------------------------------------------

    def backward(self, stmts: list[Stmt], adj: dict[str, dict[tuple, str]]) -> list[Any]:
        out: list[Any] = []
        last_line = None
        # what follows a `break` in its block never runs (the normalizer binds an if's
        # joined names there too): the loop's result flows back through the break's
        # copies alone
        stop = next((k for k, t in enumerate(stmts) if isinstance(t, Break)), None)
        if stop is not None:
            stmts = stmts[:stop + 1]
        for s in reversed(stmts):
            if isinstance(s, If):
                out.append(self.backward_if(s, adj))
                last_line = None
                continue
            if isinstance(s, For):
                out += self.backward_for(s, adj)
                last_line = None
                continue
            if isinstance(s, Break):
                out += self.backward_break(s, adj)
                continue
            assert isinstance(s, Let)
            if s.prim == "pop" and s.args[0].name in self.active:
                out += self.backward_pop(s, adj)
                continue
            if s.prim in ("setitem", "add_at"):
                lines = self.backward_setitem(s, adj)
                if lines and s.loc is not None and _line_key(s.loc) != last_line:
                    header = unrolled_header(s.loc)
                    if header is not None and (last_line is None or last_line[1] != s.loc.unrolled):
                        out.append(Comment(header))
                    out.append(Comment(s.loc.text.strip()))
                    last_line = _line_key(s.loc)
                out += lines
                continue
            if s.target not in self.active or s.target not in adj or not self._is_active(s):
                continue  # (a loop may make a name active that began as a constant)
            groups = self.routed_groups(s, adj)
            if groups is not None:  # a tuple's leaves, reached on different paths
                for cond, slots in groups:
                    adj[s.target] = slots
                    if cond is None:
                        out += self.backward_known_list(s, adj)
                    else:
                        out.append(self.backward_guarded(s, cond, adj))
                last_line = None
                continue
            guard = self.guard_of(s, adj, out)
            if guard:  # its cotangent is bound on those paths only: run it there
                out.append(self.backward_guarded(s, guard, adj))
                last_line = None
                continue
            lines = self.backward_known_list(s, adj)
            if lines and s.loc is not None and _line_key(s.loc) != last_line:
                header = unrolled_header(s.loc)
                if header is not None and (last_line is None or last_line[1] != s.loc.unrolled):
                    out.append(Comment(header))
                out.append(Comment(s.loc.text.strip()))
                last_line = _line_key(s.loc)
            out += lines
        return out

    def stmt_kind(self, s: Let) -> Kind:
        """The structure ``s`` binds on its own path: a list of known length
        (``ys = [a]``, ``ys.append(v)`` on it) even where its name is an `if`'s join
        that the other path grows in a loop (a grown list, ``Seq``, after the join)."""
        if s.prim in ("identity", "make_tuple", "make_list", "make_dict", "append", "pop",
                      "list") and not isinstance(self.kinds.get(s.target), Tree):
            return self._kind_of_let(s)
        return self.kinds.get(s.target, LEAF)

    def backward_known_list(self, s: Let, adj: dict) -> list[Any]:
        """``backward_let``, where a grown list's cotangent (one Python list) reaches a
        statement that made a list of known length: the cotangent's items become the
        list's slots (``ys_bar[0]``, ...), as literals and appends read them."""
        kind, joined = self.stmt_kind(s), self.kinds.get(s.target)
        if not (isinstance(joined, Seq) and isinstance(kind, Tree)):
            return self.backward_let(s, adj)
        (seq,) = adj[s.target].values()
        adj[s.target] = {p: path_text(seq, p) for p in leaf_paths(kind)}
        self.kinds[s.target] = kind
        try:
            return self.backward_let(s, adj)
        finally:
            self.kinds[s.target] = joined

    def backward_if(self, s: If, adj: dict[str, dict[tuple, str]]) -> Block:
        """The backward of an `if`, replayed on the same test.  A cotangent that one
        branch gives a value and the other none (no path from the output reaches it
        there) is bound on that branch's paths only (``when``), not to zeros on the
        other: what reads it later runs under the same test (a ``_Replay``: an `if`
        made for one statement, ``backward_guarded``)."""
        test = atom_text(s.test)
        before = {k: dict(v) for k, v in adj.items()}
        outer_context, outer_when = self.context, self.when
        fresh_before = set(self.fresh_buffers)
        states, fresh = [], []
        for way, branch in ((True, s.body), (False, s.orelse)):
            self.context, self.when = outer_context, outer_when
            literal = self._literal(test, way)
            state, self.when = self._enter_branch(adj, literal)
            self.context = outer_context | {literal}
            self.fresh_buffers = set(fresh_before)
            items = self.backward(branch, state)
            states.append((state, self.when, items, self.context))
            fresh.append(self.fresh_buffers)
        self.context, self.when = outer_context, {
            k: v for k, v in outer_when.items() if not self._was_filled(k, adj)}
        # a buffer is ours to write into after the if only if it is on both paths
        self.fresh_buffers = fresh[0] & fresh[1]
        body, orelse = states[0][2], states[1][2]
        if self.loop_depth and not isinstance(s, _Replay):
            # values a branch computed are overwritten by later iterations: the
            # branch saves the ones its backward reads, and pops them back
            for branch, items in ((s.body, body), (s.orelse, orelse)):
                defs = self._defs(branch[: _leave_point(branch)])
                saved = sorted(n for n in _uses_of(items)
                               if n in defs and not self._one_object(n))
                if saved:
                    tape = self.names.fresh("tape")
                    self.tapes[id(branch)] = (tape, saved)
                    items.insert(0, Line(f"{_tuple_text(saved)} = {tape}.pop()"))
        defined_inside = {t.target for t in _lets(s.body) + _lets(s.orelse)}
        changed: set[tuple[str, tuple]] = set()
        for state, when, _, _ in states:
            for var, slots in state.items():
                if var in defined_inside:
                    continue
                for path, text in slots.items():
                    if before.get(var, {}).get(path) != text:
                        changed.add((var, path))
            changed |= {k for k in when if k[0] not in defined_inside}
        changed |= {k for k in outer_when if k[0] not in defined_inside}
        for key in sorted(changed):
            self._join_slot(key, states, adj, key in outer_when)
        for var in defined_inside:
            adj.pop(var, None)
            for key in [k for k in self.when if k[0] == var]:
                del self.when[key]
        # (empty branches stay: zeros may still go into one, see complete(); the
        # finished code drops what stays empty, _tidy_replays)
        return Block(f"if {test}:", body, orelse)

    def _enter_branch(self, adj: dict, literal: tuple[str, bool]) -> tuple[dict, dict]:
        """The cotangents as a branch sees them: those bound only on the other path
        are not there (structural zeros), those bound on every path of the branch are
        there unconditionally."""
        context = self.context | {literal}
        state = {k: dict(v) for k, v in adj.items()}
        when: dict[tuple[str, tuple], frozenset] = {}
        for (var, path), cond in self.when.items():
            if self._was_filled((var, path), state):
                continue
            here = _within(cond, context)
            if here is None:
                continue
            if not here:
                state.get(var, {}).pop(path, None)
                if var in state and not state[var]:
                    del state[var]
            else:
                when[(var, path)] = here
        return state, when

    def _was_filled(self, key: tuple[str, tuple], adj: dict) -> bool:
        """Did complete() bind this cotangent everywhere (zeros where the `if` that
        left it unbound did not reach it) under the name it has here?"""
        name = self.filled.get(key)
        return name is not None and adj.get(key[0], {}).get(key[1]) == name

    def _literal(self, test: str, way: bool) -> tuple[str, bool]:
        """The path ``way`` of an `if` on ``test``, named by the test it negates."""
        seen = set()
        while test in self.negation and test not in seen:
            seen.add(test)
            test, way = self.negation[test], not way
        return test, way

    def _join_slot(self, key: tuple[str, tuple], states: list, adj: dict,
                   was_partial: bool = False) -> None:
        """One cotangent where the branches of an `if` meet: one name on every path
        that binds it; a path that binds none leaves it unbound (a structural zero),
        except for a list's cotangent, which is zeros there (a transform of the
        emitted code could not make a list's zeros where it is None)."""
        var, path = key
        texts = [state.get(var, {}).get(path) for state, _, _, _ in states]
        if texts == [None, None]:
            adj.get(var, {}).pop(path, None)
            if var in adj and not adj[var]:
                del adj[var]
            self.when.pop(key, None)
            return
        conds = [frozenset() if text is None else frozenset(
            c | context for c in when.get(key) or {frozenset()})
            for text, (_, when, _, context) in zip(texts, states)]
        zeros = None if self._may_be_unbound(var, path) else self.zeros_text(var, path)
        if key in self.bound_anyway:
            zeros = None
        present = {t for t in texts if t is not None}
        if len(present) == 1 and zeros is None:
            name = present.pop()
        elif isinstance(self.kinds.get(var), Seq):
            name = _list_join_name(var, path, tuple(st[0] for st in states),
                                   self.fn.aliases) or self.canonical_name(var, path)
        else:
            name = self.canonical_name(var, path)
        for text, cond, (_, _, items, context) in zip(texts, conds, states):
            if text is None:
                if zeros is not None:
                    items.append(Line(f"{name} = {zeros}"))
                continue
            _extend(items, _decided(_within(cond, context), context, lambda holds, t=text: (
                [Line(f"{name} = {t}")] if holds and t != name
                else [Line(f"{name} = {zeros}")] if not holds and zeros is not None
                else []), self.test_order))
        adj.setdefault(var, {})[path] = name
        if name == self.canonical_name(var, path):
            self.owned.add(name)
        self.fresh_buffers.discard(name)
        union = _simplified(conds[0] | conds[1])
        if zeros is not None or _within(union, self.context) is None:
            self.when.pop(key, None)
            self.bound_anyway.discard(key)
            return
        self.when[key] = union
        missing = [k for k, t in enumerate(texts) if t is None]
        if len(missing) == 1 and key not in self.bound_anyway and not was_partial and _within(conds[1 - missing[0]], states[1 - missing[0]][3]) is None:
            self.unbound_at[key] = (states[missing[0]][2], states[1 - missing[0]][2], name,
                                    union, self.context)

    def _may_be_unbound(self, var: str, path: tuple) -> bool:
        """May this cotangent be left unbound on a path (an array's may; a list's, a
        tape's, is zeros there: see _join_slot)?"""
        kind = self.kinds.get(var, LEAF)
        for k in path:
            kind = kind.child(k) if isinstance(kind, Tree) else kind
        return kind == LEAF

    def routed_groups(self, s: Let, adj: dict) -> list[tuple[frozenset | None, dict]] | None:
        """A statement that only routes cotangents (a tuple, list or dict literal, a
        copy, a constant key), whose leaves' cotangents are bound on different paths:
        its leaves in groups bound alike, each group's backward on its paths (no
        partial is multiplied there, so no zeros are needed)."""
        slots = adj.get(s.target, {})
        if len(slots) < 2 or not (s.prim in ("identity", "make_tuple", "make_list", "make_dict")
                                  or s.prim == "getitem" and isinstance(
                                      self.kinds.get(s.args[0].name), Tree)):
            return None
        groups: dict[frozenset | None, dict] = {}
        for path, text in slots.items():
            cond = self.when.get((s.target, path))
            groups.setdefault(None if cond is None else _within(cond, self.context), {})[
                path] = text
        if len(groups) == 1 and None in groups:
            return None
        return sorted(groups.items(), key=lambda g: g[0] is not None)

    def guard_of(self, s: Let, adj: dict, out: list[Any]) -> frozenset | None:
        """Where the backward of ``s`` must run: the paths its cotangent is bound on
        (None: all).  A container's, whose leaves may be bound on different paths, is
        made zeros where a leaf is unbound first, as before structural zeros were
        tracked."""
        keys = [(s.target, p) for p in adj.get(s.target, {})]
        conds = [self.when.get(k) for k in keys]
        if not any(c is not None for c in conds):
            return None
        if len(keys) == 1:
            return _within(conds[0], self.context) or None
        for var, path in keys:
            self.complete(var, path, adj, out)
        return None

    def backward_guarded(self, s: Let, cond: frozenset, adj: dict) -> Block:
        """The backward of ``s`` on the paths ``cond`` names only: `if`s on the
        forward's tests, read again by name (``cond`` is rarely more than one
        conjunction; then the paths that bind it each get the statement's backward)."""
        tests = _in_order({t for conj in cond for t, _ in conj} - {t for t, _ in self.context},
                          self.test_order)

        def tree(k: int, taken: frozenset) -> list[Stmt]:
            if k == len(tests):
                return [s] if any(conj <= taken for conj in cond) else []
            on = tree(k + 1, taken | {(tests[k], True)})
            off = tree(k + 1, taken | {(tests[k], False)})
            return on if on == off else [_Replay(Var(tests[k]), on, off, s.loc)]

        (replay,) = tree(0, self.context)
        return self.backward_if(replay, adj)

    def complete(self, var: str, path: tuple, adj: dict, out: list[Any]) -> None:
        """Bind a cotangent bound on some paths only on every path of the code being
        emitted: zeros on the others (what is read next needs a value everywhere)."""
        cond = self.when.pop((var, path), None)
        text = adj.get(var, {}).get(path)
        if (var, path) in self.bound_anyway:  # its name holds zeros on the other paths
            self.bound_anyway.discard((var, path))
            return
        if cond is None or text is None:
            return
        here = _within(cond, self.context)
        if here is None:
            return
        name = self.canonical_name(var, path)
        zeros = self.zeros_text(var, path)
        at = self.unbound_at.pop((var, path), None)
        if at is not None and at[2] == text and cond <= at[3] and at[4] <= self.context:
            # nothing changed it since the `if` that left it unbound: the zeros go
            # into that branch, and the other branch binds the value under the name
            missing, present = at[0], at[1]
            missing.append(Line(f"{name} = {zeros}"))
            self.filled[(var, path)] = name  # (bound everywhere now: see _enter_branch)
            if text != name:
                present.append(Line(f"{name} = {text}"))
            adj[var][path] = name
            self.owned.add(name)
            self.fresh_buffers.discard(name)
            return
        _extend(out, _decided(here, self.context, lambda holds: (
            [Line(f"{name} = {text}")] if holds and text != name
            else [] if holds else [Line(f"{name} = {zeros}")]), self.test_order))
        adj[var][path] = name
        self.owned.add(name)
        self.fresh_buffers.discard(name)

    def backward_for(self, s: For, adj: dict[str, dict[tuple, str]]) -> list[Any]:
        """Run the loop backwards: pop what each iteration saved, then its adjoint.

        Cotangents of values from outside the loop accumulate across iterations under
        one name; a carried value's cotangent flows from each iteration to the one
        before it.
        """
        defined = {t.target for t in _lets(s.body)} | {s.target} | {
            f.target for f in _fors(s.body)
        }
        read = _reads(s.body) - defined
        carried = [(e, x) for e, x in s.carried if x in self.active]
        outer = sorted(v for v in read if v in self.active and v not in dict(carried))
        if not outer and not carried:
            return []
        pre: list[Any] = []
        for entry, _ in carried:
            if not isinstance(self.kinds.get(entry, LEAF), (type(LEAF), Seq)):
                raise TransformError(
                    f"the container `{entry}` is rebound in a loop being differentiated",
                    s.loc, "carry arrays through the loop, not containers",
                )
        flags: dict[tuple[str, tuple], str] = {}
        nonzero: dict[tuple[str, tuple], frozenset] = {}  # where it was before the loop
        for var in outer + [e for e, _ in carried]:
            for path in list(adj.get(var, {})):  # what the loop reads: on every path
                if var in outer and (var, path) in self.when:
                    nonzero[(var, path)] = self.when[(var, path)]
                self.complete(var, path, adj, pre)
            for path in leaf_paths(self.kinds.get(var, LEAF)):
                if var in outer and (adj.get(var, {}).get(path) is None or (
                        var, path) in nonzero) and self._may_be_unbound(var, path):
                    flags[(var, path)] = self.names.fresh(
                        "_".join([self.fn.aliases.get(var, var)] + [str(k) for k in path]
                                 + ["reached"]))
        for var in outer + [e for e, _ in carried]:
            # one accumulator per leaf (a container's leaves each get their own)
            for path in leaf_paths(self.kinds.get(var, LEAF)):
                name = self.canonical_name(var, path)
                current = adj.get(var, {}).get(path)
                if current is None and isinstance(self.kinds.get(var), Seq) \
                        and self._is_popped(var):
                    # a stack (a tape) that ends the loop unread: its items' zeros
                    pre.append(Line(f"{name} = zeros_list({var})"))
                    adj.setdefault(var, {})[path] = name
                    self.owned.add(name)
                    continue
                if current is None and isinstance(self.kinds.get(var), Seq):
                    raise TransformError(
                        f"the list `{var}` grown in the loop is not used afterwards",
                        s.loc, "drop the list, or use it (np.stack) in the result",
                    )
                if current is None:
                    pre.append(Line(f"{name} = np.zeros_like({path_text(var, path)})"))
                    self.fresh_buffers.add(name)
                elif isinstance(self.kinds.get(var), Seq) and _is_simple(current):
                    # a list's cotangent is one list, popped and appended in place: the
                    # loop goes on with it under its name (a copy would be an alias)
                    name = self.canonical[(var, path)] = current
                elif current != name:
                    pre.append(Line(f"{name} = {current}"))
                    self.fresh_buffers.discard(name)
                adj.setdefault(var, {})[path] = name
                self.owned.add(name)
        for (var, path), flag in flags.items():
            self.reach_flags[adj[var][path]] = [flag, self.loop_depth + 1, self.context, False,
                                                False]
        unbound_before = dict(self.unbound_at)  # (the body's own end with it)
        inner = {k: dict(v) for k, v in adj.items()}
        handed: dict[str, str] = {}  # carried entry -> the name between iterations
        for entry, exit_ in carried:
            handed[entry] = self.canonical[(entry, ())]
            inner[exit_] = {(): handed[entry]}  # what flowed into this iteration's end
            inner.pop(entry, None)  # the entry's cotangent starts afresh each iteration
            self.canonical[(entry, ())] = self.names.fresh(f"{entry}_bar")
        fresh_before = set(self.fresh_buffers)
        self.fresh_buffers -= set(handed.values())  # carried cotangents are handed on
        self.loop_depth += 1
        self.loop_bodies.append(s.body)
        self.int_vars.add(s.target)
        self.leaving.append({e: (handed[e], x) for e, x in carried})
        body = self.backward(s.body, inner)
        self.leaving.pop()
        self.loop_depth -= 1
        self.loop_bodies.pop()
        # writing in place is safe across iterations only for what every path keeps
        self.fresh_buffers &= fresh_before
        for var in [e for e, _ in carried] + outer:  # handed on: bound on every path
            for path in list(inner.get(var, {})):
                self.complete(var, path, inner, body)
        seen = {key: self.reach_flags.pop(adj[key[0]][key[1]]) for key in flags}
        reached = [(key, flag) for key, flag in flags.items() if seen[key][4] and (
            seen[key][3] or not _runs_once(self, s))]
        for key in flags:
            if not seen[key][4]:  # no iteration adds to it: as it was before the loop
                if key in nonzero:
                    self.when[key] = nonzero[key]
                    self.bound_anyway.add(key)
                else:
                    adj[key[0]].pop(key[1], None)
                    if not adj[key[0]]:
                        del adj[key[0]]
        if len(reached) < len(flags):  # every iteration adds to the others, and one runs
            body = _without_flags(body, {f for k, f in flags.items() if (k, f) not in reached})
        for (var, path), flag in reached:
            pre.append(_FlagLine(f"{flag} = False"))
            self.flag_names.add(flag)
        ends: list[tuple[str, str]] = []  # assigned all at once, as `a, b = b, a` is
        for entry, _ in carried:
            text = inner.get(entry, {}).get(())
            name = handed[entry]
            ends.append((name, f"np.zeros_like({entry})" if text is None else text))
            self.canonical[(entry, ())] = name
        for var in outer:
            for path, name in adj.get(var, {}).items():
                ends.append((name, inner[var][path]))
        body += _parallel_copies(self.names.fresh, ends)
        before_exit = s.body[: _leave_point(s.body)]
        restorable = self._defs(before_exit) | set(dict(s.carried))
        if _counter(s) is not None and s.test is None:
            restorable.add(s.target)  # the index, when the range cannot replay it
        self.loop_bodies.append(s.body)
        saved = sorted(n for n in _uses_of(body) if n in restorable and not self._one_object(n))
        self.view_copies |= {n for n in saved if self._view_of_written(n, s.body)}
        self.loop_bodies.pop()
        if saved:
            tape = self.names.fresh("tape")
            self.tapes[id(s.body)] = (tape, saved)
            body.insert(0, Line(f"{_tuple_text(saved)} = {tape}.pop()"))
        for var in defined:
            adj.pop(var, None)
        for key in [k for k in self.when if k[0] in defined]:
            del self.when[key]
        self.unbound_at = {k: v for k, v in unbound_before.items() if k in self.when}
        for (var, path), flag in reached:  # nonzero where an iteration reached it
            self.when[(var, path)] = _simplified(
                nonzero.get((var, path), frozenset()) | {self.context | {(flag, True)}})
            self.bound_anyway.add((var, path))
        if _counter(s) is not None:
            header = f"for _ in range({_counter(s)}):"
        else:
            header = f"for {s.target} in {self._range_text(s, backward=True)}:"
        if self.loop_depth == 0 and policy_of(self.fn) is not None:
            # s2s.checkpoint: saved states every few iterations, segments run again
            return segmented_backward(self, s, pre, Block(header, body, []))
        return pre + [Block(header, body, [])]

    def _one_object(self, name: str) -> bool:
        """Is ``name`` a version of an array (or list) written in place that is one
        object throughout the innermost loop?  Then a tape need not save it: every
        version is spelled with the array's name, and the backward sweep puts back
        what the writes overwrote."""
        aliases = self.fn.aliases
        root = aliases.get(name, name)
        if root not in aliases.values():
            return False
        for t in _lets(self.loop_bodies[-1]):
            if aliases.get(t.target, t.target) != root:
                continue
            same = t.prim in ("setitem", "add_at", "append", "pop") or (
                t.prim == "identity" and isinstance(t.args[0], Var)
                and aliases.get(t.args[0].name, t.args[0].name) == root
            )
            if not same:
                return False  # made anew inside the loop: each iteration's is its own
        return True

    def _view_of_written(self, name: str, scope: list[Stmt], later: bool = False) -> bool:
        """Is ``name`` an index read (``y[i - 1]``, maybe a view) of an array written
        into in ``scope`` (the loop whose tape saves it; with ``later``, the function
        after the read)?  The backward sweep puts back what the writes overwrote, so
        a view holds the right values where the backward reads it; but code that
        reads a view after a write into its array is refused when it is transformed
        again, so the read is bound as a copy."""
        prod = self.producer.get(name)
        if prod is None or prod.prim != "getitem" or not isinstance(prod.args[0], Var):
            return False
        aliases = self.fn.aliases
        root = aliases.get(prod.args[0].name, prod.args[0].name)
        stmts = list(walk(scope))
        if later:
            stmts = stmts[next((k for k, t in enumerate(stmts) if t is prod), 0):]
        return any(isinstance(t, Let) and t.prim in ("setitem", "add_at")
                   and aliases.get(t.target, t.target) == root for t in stmts)

    def _defs(self, stmts: list[Stmt]) -> set[str]:
        """Names a block binds at its level, with the elements its writes saved."""
        return _block_defs(stmts) | {
            self.saved[id(t)] for t in stmts if isinstance(t, Let) and id(t) in self.saved
        }

    def backward_append(self, s: Let, g: dict[tuple, str], adj: dict) -> list[Any]:
        """``ys.append(v)``: v's cotangent is the list cotangent's last element."""
        out: list[Any] = []
        base, item = s.args
        kind = self.kinds[s.target]
        if isinstance(kind, Tree):  # a list of known length: slots, as for literals
            n = len(kind.keys) - 1
            if isinstance(item, Var) and item.name in self.active:
                sub = {p[1:]: t for p, t in g.items() if p[:1] == (n,)}
                self.accumulate_tree(item.name, (), sub, adj, out)
            if isinstance(base, Var) and base.name in self.active:
                rest = {p: t for p, t in g.items() if p[:1] != (n,)}
                self.accumulate_tree(base.name, (), rest, adj, out)
            return out
        (seq,) = g.values()
        if isinstance(item, Var) and item.name in self.active:
            paths = leaf_paths(kind.item)
            if paths == [()] or not _unpackable(kind.item):
                part = self.names.fresh(f"{item.name}_bar")
                out.append(Line(f"{part} = {seq}.pop()"))
                for p in paths:
                    self.accumulate(item.name, p, path_text(part, p), adj, out)
            else:  # a tuple of values (a tape's entry): one cotangent per leaf
                parts = {p: self.names.fresh(
                    "_".join([_elem_name(self, item.name, p)] + ["bar"])) for p in paths}
                out.append(Line(f"{_unpack_text(kind.item, parts)} = {seq}.pop()"))
                for p in paths:
                    self.accumulate(item.name, p, parts[p], adj, out)
        else:
            out.append(Line(f"{seq}.pop()"))
        if isinstance(base, Var) and base.name in self.active:
            if base.name in adj:
                raise TransformError(
                    "a list grown with append is used in more than one way",
                    s.loc, "use the list once, e.g. only through np.stack(ys)",
                )
            adj[base.name] = {(): seq}  # the same list, one element shorter
        return out

    def _is_popped(self, var: str) -> bool:
        """Is the list ``var`` names (any version of it) popped somewhere?"""
        root = self.fn.aliases.get(var, var)
        return any(self.fn.aliases.get(t.args[0].name, t.args[0].name) == root
                   for t in _lets(self.fn.body) if t.prim == "pop")

    def backward_pop(self, s: Let, adj: dict) -> list[Any]:
        """``v = ys.pop()`` undone: the list's cotangent gets v's cotangent back as its
        last item (zeros where v carries none), for the append that put v there to
        pop.  A list nothing reads afterwards starts from the zeros of its items."""
        out: list[Any] = []
        base = s.args[0].name
        item = self.popped.get(id(s))
        if item is None:
            raise TransformError(
                "reverse mode needs the value `ys.pop()` removes, to give it a "
                "cotangent", s.loc, "bind it, even if unused: `_ = ys.pop()`",
            )
        base_kind = self.kinds.get(base, LEAF)
        for path in list(adj.get(item, {})):  # (an item of a list: bound on every path)
            self.complete(item, path, adj, out)
        slots = adj.pop(item, {})
        if isinstance(base_kind, Tree):  # a list of known length: its last slot back
            n = len(base_kind.keys) - 1
            after = adj.pop(s.target, {})
            adj[base] = dict(after) | {(n,) + p: t for p, t in slots.items()}
            return out
        seq = adj.get(s.target, {}).get(())
        if seq is None:
            seq = self.canonical_name(base, ())
            out.append(Line(f"{seq} = zeros_list({s.target})"))
            self.owned.add(seq)
        item_kind = self.kinds.get(item, LEAF)
        value = literal(item_kind, lambda p: slots.get(p) or f"np.zeros_like({path_text(item, p)})")
        out.append(Line(f"{seq}.append({value})"))
        adj.pop(s.target, None)
        adj[base] = {(): seq}  # the same list, one item longer
        return out

    def backward_setitem(self, s: Let, adj: dict[str, dict[tuple, str]]) -> list[Any]:
        """Differentiate ``y[i] = v`` (or ``np.add.at(y, i, v)``), then put back what
        it overwrote: the code before it, differentiated next, reads the array as it
        was.  (Elements ``np.add.at`` adds to more than once get their one saved value
        back from each place.)"""
        out: list[Any] = []
        if s.target in self.active and s.target in adj and self._is_active(s):
            # what it overwrote is put back on every path, so its cotangent is needed on
            # every path too: zeros where no path reached it
            for path in list(adj[s.target]):
                self.complete(s.target, path, adj, out)
            out += self.backward_let(s, adj)
        base = atom_text(s.args[0])
        saved = self.names.fresh(f"{self.fn.aliases.get(base, base)}_overwritten")
        self.saved[id(s)] = saved
        out.append(Line(f"{base}[{atom_text(s.params['index'])}] = {saved}"))
        return out

    def backward_break(self, s: Break, adj: dict[str, dict[tuple, str]]) -> list[Any]:
        """Leaving early, the loop's results were the values here: the cotangent that
        flowed into the loop's end flows to them."""
        out: list[Any] = []
        for entry, name in s.copies:
            handed, exit_ = self.leaving[-1].get(entry, (None, None))
            if handed is None or name == exit_ or name not in self.active:
                continue
            self.accumulate(name, (), handed, adj, out)
        return out

    def _range_text(self, s: For, backward: bool = False) -> str:
        """``range(...)`` spelled with its bounds (``range(len(x))`` for arrays), in
        ``reversed(...)`` when the loop walks it from its end; ``backward=True`` spells
        the opposite walk, for the backward sweep."""
        prod = self.producer[s.iter.name]
        walks_back = prod.prim == "reversed"
        if walks_back:
            prod = self.producer[prod.args[0].name]
        parts = []
        for a in prod.args:
            inner = self.producer.get(a.name) if isinstance(a, Var) else None
            parts.append(spell(inner) if inner is not None and inner.prim == "len" else atom_text(a))
        text = f"range({', '.join(parts)})"
        return f"reversed({text})" if walks_back != backward else text

    def canonical_name(self, var: str, path: tuple) -> str:
        key = (var, path)
        if key not in self.canonical:
            # versions of an array written in place share its name: h_bar, h_bar_2
            stem = "_".join([self.fn.aliases.get(var, var)] + [str(k) for k in path])
            self.canonical[key] = self.names.fresh(f"{stem}_bar")
        return self.canonical[key]

    def accumulate(
        self, var: str, path: tuple, expr: ast.expr | str, adj: dict, out: list[Any]
    ) -> None:
        """Add a contribution to the cotangent of ``var`` at leaf ``path``."""
        text = expr if isinstance(expr, str) else ast.unparse(expr)
        slots = adj.setdefault(var, {})
        current = slots.get(path)
        key = (var, path)
        if current is not None and key in self.bound_anyway:
            # bound everywhere (zeros where nothing reached it): added to where it runs
            name = current if current in self.owned and current == self.canonical_name(
                var, path) else self.canonical_name(var, path)
            out.append(Line(f"{name} = {current} + {_paren(text)}"))
            self._reached(name, out)
            self.owned.add(name)
            slots[path] = name
            cond = _simplified(self.when[key] | {self.context})
            if _within(cond, self.context) is None:
                del self.when[key]
                self.bound_anyway.discard(key)
            else:
                self.when[key] = cond
            return
        here = _within(self.when[(var, path)], self.context) if (
            current is not None and (var, path) in self.when) else None
        at = self.unbound_at.get((var, path))
        if here and at is not None and at[2] == current and self.when[key] <= at[3] and (
                at[4] <= self.context) and var in self.fn.params:
            # an argument's cotangent is returned, never multiplied into a partial: zeros
            # where the `if` left it unbound, and the sum as usual
            self.complete(var, path, adj, out)
            current, here = slots[path], None
        if here:  # bound on some of these paths only: added there, bound anew elsewhere
            name = self.canonical_name(var, path)
            _extend(out, _decided(here, self.context, lambda holds: [Line(
                f"{name} = {current} + {_paren(text)}" if holds else f"{name} = {text}")],
                self.test_order))
            del self.when[(var, path)]
            slots[path] = name
            self.owned.add(name)
            self.fresh_buffers.discard(name)
            return
        if current is None:
            if _is_simple(text):
                slots[path] = text
                return
            name = self.canonical_name(var, path)
            out.append(Line(f"{name} = {text}"))
            self.owned.add(name)
            self.fresh_buffers.discard(name)
            slots[path] = name
            return
        name = current if current in self.owned and current == self.canonical_name(
            var, path
        ) else self.canonical_name(var, path)
        out.append(Line(f"{name} = {current} + {_paren(text)}"))
        self._reached(current, out)
        self.owned.add(name)
        self.fresh_buffers.add(name)  # `+` allocated a new array
        slots[path] = name

    def _reached(self, accumulator: str, out: list[Any]) -> None:
        """An iteration added to a loop's accumulator that it may never reach: say so."""
        flag = self.reach_flags.get(accumulator)
        if flag is None:
            return
        out.append(_FlagLine(f"{flag[0]} = True"))
        flag[4] = True
        if self.context != flag[2] or self.loop_depth != flag[1]:
            flag[3] = True

    def accumulate_tree(self, var: str, path: tuple, g: dict[tuple, str],
                        adj: dict, out: list[Any]) -> None:
        """Add cotangent slots ``g`` (relative paths) under ``path`` of ``var``."""
        for sub, text in g.items():
            self.accumulate(var, path + sub, text, adj, out)

    def backward_let(self, s: Let, adj: dict) -> list[Any]:
        out: list[Any] = []
        g = adj[s.target]
        active_args = [
            (i, a.name) for i, a in enumerate(s.args)
            if isinstance(a, Var) and a.name in self.active
        ]
        if s.prim == "identity":
            for _, name in active_args:
                self.accumulate_tree(name, (), g, adj, out)
            return out
        if s.prim in ("make_tuple", "make_list", "make_dict"):
            kind = self.kinds[s.target]
            assert isinstance(kind, Tree)
            for i, name in active_args:
                key = kind.keys[i]
                sub = {p[1:]: t for p, t in g.items() if p[:1] == (key,)}
                self.accumulate_tree(name, (), sub, adj, out)
            return out
        if s.prim == "getitem" and isinstance(self.kinds.get(s.args[0].name), Tree):
            base = self.kinds[s.args[0].name]
            key = self._container_key(s, base)
            self.accumulate_tree(s.args[0].name, (key,), g, adj, out)
            return out
        if s.prim == "call":
            return self.backward_call(s, g, adj, active_args)
        if s.prim == "list" and not isinstance(self.kinds.get(s.target), Seq):
            for _, name in active_args:  # a tuple's items, as a list: the same slots
                self.accumulate_tree(name, (), g, adj, out)
            return out
        if s.prim == "append":
            return self.backward_append(s, g, adj)
        if s.prim == "getitem" and isinstance(s.args[0], Var):
            current = adj.get(s.args[0].name, {}).get(())
            if current is not None and current in self.fresh_buffers:
                lines = [self._accumulate_index(current, s.params["index"], g[()])]
                self._reached(current, lines)
                return lines
        prim = PRIMITIVES[s.prim]
        if prim.vjp is None:
            raise NonDifferentiableError(
                f"`{s.prim}` has no reverse-mode rule", s.loc,
                "compute this value from its inputs without this function",
            )
        out_kind = self.kinds.get(s.target, LEAF)
        if isinstance(out_kind, Tree):  # several results: g is their cotangents
            g_text = literal(
                out_kind, lambda p: g.get(p) or f"np.zeros_like({path_text(s.target, p)})"
            )
            if not _is_simple(g_text):
                name = self.names.fresh(f"{s.target}_bar")
                out.append(Line(f"{name} = {g_text}"))
                g_text = name
        else:
            (g_text,) = g.values()
        slots = arg_slots(s)
        bindings: dict[str, Any] = {"g": ast.Name(g_text, ast.Load()), "ans": Var(s.target)}
        for pname in prim.params:
            p = prim.signature.parameters[pname]
            if p.kind is p.VAR_POSITIONAL:
                bindings[pname] = tuple(
                    a for a, (n, _) in zip(s.args, slots) if n == pname
                )
            elif pname in s.params:
                bindings[pname] = s.params[pname]
            elif p.default is p.empty or pname in s.params.get(KEYWORD_OPERANDS, ()):
                arg = s.args[[n for n, _ in slots].index(pname)]
                active = isinstance(arg, Var) and arg.name in self.active
                bindings[pname] = Array(arg) if active else arg
        locals_hint = {}
        hinted: set[str] = set()  # np.outer(x, x): one canonical name, the other fresh
        for i, name in active_args:
            pname, sub = slots[i]
            if pname in prim.diff and sub is None and isinstance(
                self.kinds.get(name, LEAF), type(LEAF)
            ) and name not in hinted:
                hinted.add(name)
                canonical = self.canonical_name(name, ())
                # first contribution: the rule's local is the cotangent itself;
                # later ones get a numbered name beside it (x_bar_2)
                locals_hint[pname + "_bar"] = (
                    canonical if name not in adj
                    else lambda c=canonical: self.names.fresh(c)
                )
        result_hints = [locals_hint.get(p + "_bar") for p in prim.diff]
        stmts, results = self.inliner.inline(prim.vjp, bindings, locals_hint, result_hints)
        if len(results) != len(prim.diff):
            raise TypeError(f"VJP rule of {s.prim} returned {len(results)} cotangents, "
                            f"expected {len(prim.diff)}")
        positions = [j for j, (n, _) in enumerate(slots) if n in prim.diff]
        if len(positions) == len(prim.diff):
            for k, j in enumerate(positions):
                others = s.args[:j] + s.args[j + 1 :]
                if others and all(self.is_scalar(o) for o in others):
                    # every other argument has shape (): nothing broadcast against it
                    results[k] = _drop_unbroadcast(results[k])
        wanted: list[tuple[str, ast.expr, Any]] = []  # (var, rule result, element)
        for i, name in active_args:
            pname, sub = slots[i]
            if pname in prim.diff:
                wanted.append((name, results[prim.diff.index(pname)], sub, pname))
        stmts = _prune(stmts, _names_in([e for _, e, _, _ in wanted]))
        out += [_item(st) for st in stmts]
        defined = {t for st in stmts for n in ast.walk(st) for t in _targets(n)}
        bound: dict[str, str] = {}  # sequence-valued results, bound to a name once
        for name, e, sub, pname in wanted:
            text = ast.unparse(e)
            kind = self.kinds.get(name, LEAF)
            if isinstance(kind, Seq) and kind.item != LEAF:
                # NumPy reads a list of tuples as one array; their cotangent would come
                # back as arrays where the tuples' slots are expected (and be lost)
                raise TransformError(
                    f"`{s.prim}` reads a list whose items are containers, not arrays",
                    s.loc, "append arrays to the list (e.g. `rows.append(t[0])`)",
                )
            if isinstance(kind, Seq):
                # the cotangent of a list grown in a loop: a list of its elements'
                seq = self.canonical_name(name, ()) if name not in adj else (
                    self.names.fresh(f"{name}_bar")
                )
                out.append(Line(f"{seq} = list({text})"))
                if name in adj:
                    raise TransformError(
                        "a list grown with append is used in more than one way",
                        s.loc, "use the list once, e.g. only through np.stack(ys)",
                    )
                adj[name] = {(): seq}
                continue
            if sub is not None or isinstance(kind, Tree):
                # a cotangent for a sequence: one element per argument, or per leaf
                if text not in bound:
                    if _is_simple(text):
                        bound[text] = text
                    else:
                        seq = self.names.fresh(f"{pname}_bar")
                        out.append(Line(f"{seq} = {text}"))
                        bound[text] = seq
                base = bound[text] if sub is None else f"{bound[text]}[{sub}]"
                for path in leaf_paths(kind):
                    self.accumulate(name, path, path_text(base, path), adj, out)
                continue
            if text in defined and name not in adj and text == self.canonical_name(name, ()):
                adj[name] = {(): text}
                self.owned.add(text)
                if s.prim in ("getitem", "setitem"):
                    self.fresh_buffers.add(text)  # the rule allocated it
                continue
            self.accumulate(name, (), text, adj, out)
        return out

    def _accumulate_index(self, buffer: str, index: Index, g: str) -> Line:
        """``x_bar[i] += g`` into a buffer this pass owns (``np.add.at`` if fancy)."""
        ints = all(
            not isinstance(i, Var) or i.name in self.int_vars for i in index.items
        )
        if ints and Index(tuple(Const(0, "0") if isinstance(i, Var) else i
                                for i in index.items), index.is_tuple).is_basic():
            return Line(f"{buffer}[{atom_text(index)}] += {g}")
        from .inline import _expr_of

        return Line(f"np.add.at({buffer}, {ast.unparse(_expr_of(index))}, {g})")

    def backward_call(self, s: Let, g: dict, adj: dict, active_args) -> list[Any]:
        if "custom" in s.params or "custom_bwd" in s.params:
            return self.backward_custom(s, g, adj, active_args)
        callee = _callee(s)
        arg_kinds = tuple(
            self.kinds.get(a.name, LEAF) if isinstance(a, Var) else _const_kind(a)
            for a in s.args
        )
        positions = tuple(i for i, _ in active_args)
        vjp_name = callee_vjp(callee, positions, arg_kinds, self.module)
        out_kind = self.kinds[s.target]
        ct = literal(out_kind, lambda p: g.get(p) or f"np.zeros_like({path_text(s.target, p)})")
        args = ", ".join(atom_text(a) for a in s.args)
        results = [self.names.fresh(f"{name}_bar") for _, name in active_args]
        lhs = results[0] if len(results) == 1 else ", ".join(results)
        out: list[Any] = [Line(f"{lhs} = {vjp_name}({args}, {ct})")]
        for (i, name), r in zip(active_args, results):
            kind = self.kinds.get(name, LEAF)
            self.accumulate_tree(name, (), {p: path_text(r, p) for p in leaf_paths(kind)}, adj, out)
        return out


    def backward_custom(self, s: Let, g: dict, adj: dict, active_args) -> list[Any]:
        """A function with rules of its own: ``custom_vjp``'s ``bwd``, or the transpose
        of ``custom_jvp``'s rule (the rule's VJP in its tangents, which it is linear in)."""
        custom = s.params.get("custom") or s.params["custom_bwd"]
        nondiff = [atom_text(a) for i, a in enumerate(s.args) if i in custom.nondiff_argnums]
        positions = [i for i in range(len(s.args)) if i not in custom.nondiff_argnums]
        out: list[Any] = []
        if "custom_bwd" in s.params:
            # s.target holds fwd's (out, residuals); bwd maps out's cotangent to the args'
            out_kind = self.kinds[s.target].child(0)
            ct = literal(out_kind, lambda p: g.get((0,) + p) or (
                f"np.zeros_like({path_text(s.target, (0,) + p)})"))
            _, bwd = custom.rules_for_transform()
            bwd_name = bind_object(self.module, bwd.__name__, checked_bwd(bwd, len(positions)),
                                   f"{custom.__name__}_bwd")
            cts = [self.names.fresh(f"{atom_text(s.args[i])}_bar") for i in positions]
            lhs = ", ".join(cts) + ("," if len(cts) == 1 else "")
            call_args = nondiff + [f"{s.target}[1]", ct]
            out.append(Line(f"{lhs} = {bwd_name}({', '.join(call_args)})"))
            results = dict(zip(positions, cts))
        else:
            try:
                rule = custom.rule_for_transform()
            except AttributeError as err:
                raise MissingRuleError(str(err), s.loc, "define its rule with @f.defjvp") \
                    from None
            ct = literal(self.kinds[s.target],
                         lambda p: g.get(p) or f"np.zeros_like({path_text(s.target, p)})")
            kinds = [self.kinds.get(a.name, LEAF) if isinstance(a, Var) else _const_kind(a)
                     for a in s.args]
            primals = Tree(tuple, tuple(range(len(positions))), tuple(kinds[i] for i in positions))
            rule_kinds = tuple(kinds[i] for i in custom.nondiff_argnums) + (primals, primals)
            vjp_name = callee_vjp(normalize(rule), (len(nondiff) + 1,), rule_kinds,
                                  self.module)
            zeros = [literal(kinds[i], lambda p, a=s.args[i]: (
                f"np.zeros_like({path_text(atom_text(a), p)})")) for i in positions]
            out_zeros = literal(self.kinds[s.target],
                                lambda p: f"np.zeros_like({path_text(s.target, p)})")
            out_ct = f"({out_zeros}, {ct})"  # (primal_out, tangent_out): only the tangent
            tangents_bar = self.names.fresh(f"{s.target}_tangents_bar")
            call_args = nondiff + [tuple_text([atom_text(s.args[i]) for i in positions]),
                                   tuple_text(zeros), out_ct]
            out.append(Line(f"{tangents_bar} = {vjp_name}({', '.join(call_args)})"))
            results = {i: f"{tangents_bar}[{k}]" for k, i in enumerate(positions)}
        for i, name in active_args:
            if i not in results:
                continue
            kind = self.kinds.get(name, LEAF)
            self.accumulate_tree(name, (), {p: path_text(results[i], p)
                                            for p in leaf_paths(kind)}, adj, out)
        return out


def _expand_custom_vjp(fn: Function, module: Module) -> Function:
    """Spell each call of a ``custom_vjp`` function as its ``fwd``, as JAX does under
    reverse mode: ``t = f_fwd(x)`` (the output and the residuals), ``y = t[0]``.  The
    backward of ``t`` is ``bwd(t[1], y_bar)``; ``fwd`` is ordinary code to any
    transform of the emitted gradient."""
    if not any(isinstance(s, Let) and isinstance(s.params.get("custom"), custom_vjp)
               for s in walk(fn.body)):
        return fn
    names = NameTable(fn.names.taken)

    def block(stmts: list[Stmt]) -> list[Stmt]:
        out: list[Stmt] = []
        for s in stmts:
            if isinstance(s, If):
                out.append(replace(s, body=block(s.body), orelse=block(s.orelse)))
            elif isinstance(s, For):
                out.append(replace(s, body=block(s.body)))
            elif isinstance(s, Let) and isinstance(s.params.get("custom"), custom_vjp):
                custom = s.params["custom"]
                try:
                    fwd, _ = custom.rules_for_transform()
                except AttributeError as err:
                    raise MissingRuleError(str(err), s.loc, "define its rules with "
                                           "f.defvjp(fwd, bwd)") from None
                spelling = bind_object(module, fwd.__name__, fwd, f"{custom.__name__}_fwd")
                both = names.fresh(f"{s.target}_fwd")
                params = {"callee": normalize(fwd), "spelling": spelling, "custom_bwd": custom}
                out.append(Let(both, "call", s.args, params, s.loc))
                out.append(Let(s.target, "getitem", (Var(both),),
                               {"index": Index((Const(0, "0"),), False)}, s.loc))
            else:
                out.append(s)
        return out

    return replace(fn, body=block(fn.body), names=names)


# ---- structural zeros: where a cotangent is bound -------------------------------------


@dataclass(eq=False)
class _Replay(If):
    """An `if` of the forward's, replayed around one statement's backward only (its
    cotangent is bound on that path): it has no tape of its own, the code around it
    saves what it reads."""

# A literal is ``(test, branch)``: the path through an `if` on ``test`` (its name in
# emitted code).  A conjunction is a frozenset of literals, a condition a frozenset of
# conjunctions (a disjunction).


def _within(cond: frozenset, context: frozenset) -> frozenset | None:
    """``cond`` where ``context`` holds: None if it holds on every such path, else
    its conjunctions that can (empty: on none)."""
    kept = []
    for conj in cond:
        if any((test, not way) in context for test, way in conj):
            continue  # contradicts the context
        if conj <= context:
            return None
        kept.append(conj)
    return frozenset(kept)


def _simplified(cond: frozenset) -> frozenset:
    """A condition in fewer, shorter conjunctions: ``a & t | a & ~t`` is ``a``; a
    conjunction implying another is dropped."""
    conjs = set(cond)
    while True:
        merged = next(((a, b, a - {lit}) for a in conjs for lit in a
                       for b in [(a - {lit}) | {(lit[0], not lit[1])}] if b in conjs), None)
        if merged is None:
            break
        a, b, common = merged
        conjs -= {a, b}
        conjs.add(common)
    # ``a | ~a & b`` is ``a | b``
    while True:
        shorter = next(((b, b - {(t, not w)}) for a in conjs for t, w in a for b in conjs
                        if (t, not w) in b and a - {(t, w)} <= b - {(t, not w)}), None)
        if shorter is None:
            break
        conjs.discard(shorter[0])
        conjs.add(shorter[1])
    return frozenset(c for c in conjs if not any(o < c for o in conjs))


def _decided(cond: frozenset | None, context: frozenset, leaf: Any,
             order: dict[str, int] | None = None) -> list[Any]:
    """Code that runs ``leaf(True)`` on the paths of ``context`` where ``cond`` holds
    and ``leaf(False)`` on the others: `if`s on the tests ``cond`` names (the forward's
    tests, read again by name; outer ones first: an `elif`'s test is bound only where
    the `if` before it failed)."""
    if cond is None:
        return leaf(True)
    tests = _in_order({test for conj in cond for test, _ in conj} - {t for t, _ in context},
                      order or {})

    def tree(k: int, taken: frozenset) -> list[Any]:
        if k == len(tests):
            return leaf(any(conj <= taken for conj in cond))
        on, off = tree(k + 1, taken | {(tests[k], True)}), tree(k + 1, taken | {(tests[k], False)})
        if on == off:
            return on
        if not on:
            return [Block(f"if not {tests[k]}:", off, [])]
        return [Block(f"if {tests[k]}:", on, off)]

    return tree(0, context)


_IF_TEST = re.compile(r"^if (not )?(\w+):$")


def _tidy_replays(items: list[Any]) -> list[Any]:
    """The backward sweep's `if`s as a hand-written one has them: an `if` that stayed
    empty is dropped, one with only an else branch is ``if not t:``, and one that
    follows an `if` on the same test joins it (its code runs after the other's on
    each path: ``if t: A else: B`` then ``if not t: C`` is ``if t: A else: B; C``)."""
    out: list[Any] = []
    for item in items:
        if not isinstance(item, Block):
            out.append(item)
            continue
        body, orelse = _tidy_replays(item.body), _tidy_replays(item.orelse)
        m = _IF_TEST.match(item.header)
        if item.is_loop or m is None:
            out.append(Block(item.header, body, orelse))
            continue
        test = m.group(2)
        on, off = (orelse, body) if m.group(1) else (body, orelse)
        prev = out[-1] if out and isinstance(out[-1], Block) else None
        p = _IF_TEST.match(prev.header) if prev is not None else None
        if p is not None and p.group(2) == test and test not in _defines_of(
                prev.body + prev.orelse):
            prev_on, prev_off = (prev.orelse, prev.body) if p.group(1) else (
                prev.body, prev.orelse)
            # (the two branches' code meets: what follows on each path may join too)
            on, off = _tidy_replays(prev_on + on), _tidy_replays(prev_off + off)
            out.pop()
        if on:
            out.append(Block(f"if {test}:", on, off))
        elif off:
            out.append(Block(f"if not {test}:", off, []))
    return out


def _defines_of(items: list[Any]) -> set[str]:
    found: set[str] = set()
    for item in items:
        if isinstance(item, (Line, Block)):
            found |= item.defines
        if isinstance(item, Block):
            found |= _defines_of(item.body) | _defines_of(item.orelse)
    return found


def _in_order(tests: set[str], order: dict[str, int]) -> list[str]:
    """Tests as the forward computes them (names it does not bind, flags bound before
    any, last)."""
    return sorted(tests, key=lambda t: (order.get(t, len(order)), t))


class _FlagLine(Line):
    """``r_reached = True``: an iteration added to an accumulator (see reach_flags)."""


def _without_flags(items: list[Any], flags: set[str]) -> list[Any]:
    """``items`` without those flags' lines (in place: code may still be added to
    the lists, see complete())."""
    items[:] = [i for i in items
                if not (isinstance(i, _FlagLine) and i.text.split(" = ")[0] in flags)]
    for item in items:
        if isinstance(item, Block):
            _without_flags(item.body, flags)
            _without_flags(item.orelse, flags)
    return items


def _runs_once(r: "_Reverse", s: For) -> bool:
    """Does the loop run every iteration of a range known not to be empty (no
    `while`, no `break`, constant bounds)?"""
    if s.test is not None or _breaks(s.body) or s.iter is None:
        return False
    prod = r.producer.get(s.iter.name)
    if prod is not None and prod.prim == "reversed" and isinstance(prod.args[0], Var):
        prod = r.producer.get(prod.args[0].name)
    if prod is None or prod.prim != "range" or not all(isinstance(a, Const) for a in prod.args):
        return False
    try:
        return len(range(*(a.value for a in prod.args))) > 0
    except TypeError:
        return False


def _extend(out: list[Any], items: list[Any]) -> None:
    out += items


def _list_join_name(var: str, path: tuple, states: tuple[dict, dict],
                    aliases: dict[str, str]) -> str | None:
    """The name a list's cotangent (a tape's) keeps after an ``if``: it is appended
    to and popped in place, so a path that holds it under a name goes on with that
    name (a copy under another would be an alias of the list); the other path binds
    it there, provided that path gives the name to no other value (other versions
    of the same list share it)."""
    texts = [state.get(var, {}).get(path) for state in states]
    if texts[0] == texts[1]:
        return texts[0]
    root = aliases.get(var, var)
    for k, text in enumerate(texts):
        other = states[1 - k]
        if text is not None and text.isidentifier() and not any(
                t == text for v, slots in other.items() for p, t in slots.items()
                if aliases.get(v, v) != root):
            return text
    return None


def _line_key(loc: Any) -> tuple:
    """Statements under one quoted-line comment: one line, in one unrolled iteration."""
    return (loc.line, getattr(loc, "unrolled", ()))


def tuple_text(items: list[str]) -> str:
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def stem(callee: Function) -> str:
    """The stem of a helper's name: the function's own, ``lambda`` for a lambda's."""
    return callee.name if callee.name.isidentifier() else "lambda"


def bind_object(module: Module, preferred: str, obj: Any, fallback: str = "rule") -> str:
    """A name emitted code calls ``obj`` by, bound in the module's namespace."""
    target = getattr(obj, "__s2s_unwrap__", obj)
    if not preferred.isidentifier():  # a lambda: named after its role
        preferred = fallback
    name, i = preferred, 2
    while True:
        known = module.namespace.get(name)
        if known is not None and getattr(known, "__s2s_unwrap__", known) is target:
            return name
        if known is None and name not in module.taken:
            break
        name = f"{preferred}_{i}"
        i += 1
    module.namespace[name] = obj
    module.taken.add(name)
    return name


# ---- callees -------------------------------------------------------------------


def callee_vjp(callee: Function, positions: tuple[int, ...], kinds: tuple, module: Module) -> str:
    key = (id(callee), positions, kinds)
    if key in module.names:
        return module.names[key]
    base = f"{stem(callee)}_vjp"
    if len(positions) != len(callee.params):
        base += "_" + "_".join(callee.params[i] for i in positions)
    name = base
    i = 2
    while name in module.taken:
        name = f"{base}_{i}"
        i += 1
    module.names[key] = name
    spec = Spec("vjp", positions, len(positions) > 1, False, kinds)
    emit_reverse(callee, spec, module, name)
    return name


@dataclass
class _Assumed:
    """What a call being solved is assumed to return while its body is analysed (a
    recursive call reads it; None: not known yet), and whether a call read it."""

    kind: Kind | None
    reached: bool = False


@dataclass
class _Frame:
    """One kind analysis under way: the names bound by calls whose structure is not
    known yet, and which calls being solved that is waiting for."""

    unknown: set[str] = field(default_factory=set)
    waits: set[tuple[int, tuple]] = field(default_factory=set)


_KINDS_IN_PROGRESS: dict[tuple[int, tuple], _Assumed] = {}
_FRAMES: list[_Frame] = []
_RESOLVED: dict[int, tuple[Any, Function]] = {}  # recursive calls' functions, meanwhile
_MAX_STRUCTURES = 8  # argument structures one recursive function may be analysed at
_MAX_PATHS = 64  # paths through a recursive function's `if`s and loops told apart


def return_kind(fn: Function, arg_kinds: tuple) -> Kind:
    """The structure a call returns, given its arguments' structures."""
    kind, _ = _solve(fn, arg_kinds)
    return LEAF if kind is None else kind


def _call_kind(s: Let, arg_kinds: tuple) -> Kind:
    """The structure ``s``, a call, binds; one not known yet (a recursive call while
    the structure its function returns is being found) is marked in the analysis."""
    kind, waits = _solve(_callee(s), arg_kinds)
    if kind is None:
        _FRAMES[-1].unknown.add(s.target)
        _FRAMES[-1].waits |= waits
        return LEAF  # (a placeholder: what depends on it is set aside)
    return kind


def _solve(fn: Function, arg_kinds: tuple) -> tuple[Kind | None, set]:
    """The structure ``fn`` returns, or None while it depends on a call still being
    solved (with the keys of the calls it waits for).

    A recursive function's (through itself or others) is a fixed point: a recursive
    call returns what the function returns. The paths through its `if`s and loops
    whose result depends on no call of unknown structure (base cases) give that
    structure; the other paths, analysed again with recursive calls returning it,
    must return it too (an emitted JVP's pair of value and tangent is as good as an
    array)."""
    key = (id(fn), arg_kinds)
    assumed = _KINDS_IN_PROGRESS.get(key)
    if assumed is not None:
        assumed.reached = True
        return assumed.kind, {key} if assumed.kind is None else set()
    if sum(k[0] == id(fn) for k in _KINDS_IN_PROGRESS) >= _MAX_STRUCTURES:
        raise TransformError(
            f"`{fn.name}` calls itself with arguments whose structure changes with "
            "each call", fn.loc,
            "give each recursive call arguments of the structures its caller got",
        )
    assumed = _KINDS_IN_PROGRESS[key] = _Assumed(None)
    fn = unroll_container_loops(fn, arg_kinds)  # as its code for these structures will be
    waits: set = set()
    try:
        frame = _Frame()
        try:
            r = _analysed(fn, fn.body, arg_kinds, frame)
        except TransformError:
            if not assumed.reached and not frame.unknown:
                raise
            r = None  # perhaps a placeholder for a recursive call's result: see below
        if not assumed.reached and not frame.unknown:
            return _returned_kind(r), set()  # no recursion: the common case
        whole = False
        try:
            paths = [body for body, _ in _paths(fn.body, {})]
        except _TooManyPaths:  # from an array: what the whole body returns, and again
            paths, assumed.kind, whole = [fn.body], LEAF, True
        errors: list[TransformError] = []
        for _ in range(4):  # unknown, then the base cases' structure, then checked
            found: dict[Kind, Any] = {}
            for body in paths:
                frame = _Frame()
                try:
                    r = _analysed(fn, body, arg_kinds, frame)
                except TransformError as e:  # a path no run takes, or a placeholder's
                    errors.append(e)
                    waits |= frame.waits
                    continue
                waits |= frame.waits
                ret = body[-1]
                if whole or not (isinstance(ret.value, Var) and ret.value.name in _depending(
                        body, frame.unknown)):
                    found.setdefault(_returned_kind(r), _path_loc(fn, body))
            if len(found) > 1:
                _disagree(fn, list(found.items()))
            kind = next(iter(found), None)
            if kind == assumed.kind or not assumed.reached:
                break
            assumed.kind = kind
        else:
            raise errors[-1] if errors else TransformError(
                f"s2s cannot tell the structure `{fn.name}` returns", fn.loc,
                "return values of one structure on every path (the base case's)")
        waits.discard(key)
        if kind is None and not waits:
            if errors:
                raise errors[0]
            raise TransformError(
                f"every return of `{fn.name}` depends on a call to itself: with no base "
                "case, its result has no structure to start from", fn.loc,
                "return without calling itself on the path that ends the recursion",
            )
        return kind, waits if kind is None else set()
    finally:
        del _KINDS_IN_PROGRESS[key]
        if not _KINDS_IN_PROGRESS:
            _RESOLVED.clear()


class _TooManyPaths(Exception):
    pass


def _paths(stmts: list[Stmt], taken: dict[str, bool]) -> list[tuple[list[Stmt], dict]]:
    """The paths through ``stmts``' `if`s (outside loops), each with the tests it
    took (an `if` on a test an earlier one decided takes the same branch), and with
    each loop run or not (its carried values then hold what they held before it)."""
    paths: list[tuple[list[Stmt], dict]] = [([], taken)]
    for s in stmts:
        if isinstance(s, If):
            paths = [(pre + sub, t2) for pre, t in paths for way in _ways(s, t)
                     for sub, t2 in _paths(s.body if way else s.orelse, _took(s, t, way))]
        elif isinstance(s, For):
            paths = [(pre + extra, t) for pre, t in paths for extra in ([], [s])]
        else:
            paths = [(pre + [s], t) for pre, t in paths]
        if len(paths) > _MAX_PATHS:
            raise _TooManyPaths
    return paths


def _ways(s: If, taken: dict[str, bool]) -> list[bool]:
    """The branches of ``s`` a path that took ``taken`` may take."""
    if isinstance(s.test, Const):
        return [bool(s.test.value)]
    return [taken[s.test.name]] if s.test.name in taken else [True, False]


def _took(s: If, taken: dict[str, bool], way: bool) -> dict[str, bool]:
    return {**taken, s.test.name: way} if isinstance(s.test, Var) else taken


def _path_loc(fn: Function, body: list[Stmt]) -> Any:
    """Where a path through ``fn`` is told apart: its last statement in a branch."""
    top = {id(s) for s in fn.body}
    return next((s.loc for s in reversed(body) if id(s) not in top and s.loc is not None),
                body[-1].loc)


def _analysed(fn: Function, body: list[Stmt], arg_kinds: tuple, frame: _Frame) -> "_Reverse":
    """The kind analysis of ``body`` (``fn``'s, or one path through it); ``frame``
    learns which names calls of unknown structure bound."""
    r = _Reverse(replace(fn, body=body), Spec("vjp", (), True, False, arg_kinds), Module())
    _FRAMES.append(frame)
    try:
        r.analyse()
    finally:
        _FRAMES.pop()
    return r


def _returned_kind(r: "_Reverse") -> Kind:
    ret = r.fn.body[-1]
    assert isinstance(ret, Return)
    if isinstance(ret.value, Var):
        return r.kinds.get(ret.value.name, LEAF)
    return _const_kind(ret.value)


def _disagree(fn: Function, returns: list[tuple[Kind, Any]]) -> None:
    """Refuse a recursive function whose returns have different structures."""
    kinds = " and ".join(repr(kind) for kind, _ in returns)
    raise TransformError(
        f"`{fn.name}` calls itself and its returns have different structures "
        f"({kinds}; `*` is an array): a recursive call's result has one structure",
        returns[-1][1] or fn.loc,
        "return values of one structure on every path (the base case's)",
    )


def _depending(body: list[Stmt], sources: set[str]) -> set[str]:
    """Names in ``body`` whose values may depend on those named ``sources``."""
    found = set(sources)

    def visit(stmts: list[Stmt]) -> None:
        for s in stmts:
            if isinstance(s, Let):
                if any(v in found for v in uses(s)):
                    found.add(s.target)
            elif isinstance(s, If):
                visit(s.body)
                visit(s.orelse)
            elif isinstance(s, For):
                while True:  # a carried value feeds the next iteration
                    before = len(found)
                    visit(s.body)
                    found.update(e for e, x in s.carried if x in found)
                    if len(found) == before:
                        break
            elif isinstance(s, Break):
                found.update(e for e, x in s.copies if x in found)

    if sources:
        visit(body)
    return found


# ---- forward code and dead-code removal -----------------------------------------


def _forward(stmts: list[Stmt], r: "_Reverse") -> list[Any]:
    """The user's computation as emitted code; loops push what the backward needs."""
    out: list[Any] = []
    for s in stmts:
        if isinstance(s, Let) and s.prim in ("setitem", "add_at"):
            base, index = atom_text(s.args[0]), atom_text(s.params["index"])
            if id(s) in r.saved:
                out.append(Line(f"{r.saved[id(s)]} = np.copy({base}[{index}])"))
            out.append(Line(spell(s), keep=True))
        elif isinstance(s, Let) and s.prim in ("append", "pop"):
            out.append(Line(spell(s), keep=True))
        elif isinstance(s, Let) and s.target in r.view_copies:  # (a view the tape keeps)
            out.append(Line(f"{s.target} = np.copy({spell(s)})"))
        elif isinstance(s, Let):
            out.append(Line(f"{s.target} = {spell(s)}"))
        elif isinstance(s, If):
            branches = []
            for branch in (s.body, s.orelse):
                branches.append(_forward_block(branch, r))
            out.append(Block(f"if {atom_text(s.test)}:", *branches))
        elif isinstance(s, For) and id(s) in r.checkpointed:
            out += segmented_forward(r, s)
        elif isinstance(s, For):
            body = _forward_block(s.body, r)
            body += [Line(f"{entry} = {exit_}") for entry, exit_ in s.carried]
            counter = _counter(s)
            if counter is not None:  # count the iterations: the backward runs as many
                out.append(Line(f"{counter} = 0"))
                body.insert(0, Line(f"{counter} = {counter} + 1"))
            if s.test is None:
                out.append(Block(f"for {s.target} in {r._range_text(s)}:", body, []))
            else:
                out.append(Block(f"while {atom_text(s.test)}:", body, []))
        elif isinstance(s, Break):
            out += [Line(f"{e} = {n}") for e, n in s.copies if e != n]
            out.append(Line("break", keep=True))
    return out


def _is_none(s: Any) -> bool:
    """Is ``s`` ``name = None``?"""
    return (isinstance(s, Let) and s.prim == "identity" and isinstance(s.args[0], Const)
            and s.args[0].value is None)


def _grown_item(before: Any, after: Any) -> Kind | None:
    """The element structure of a list a loop grows from ``before`` to ``after`` (all
    its elements alike), or None when the two are not such lists."""
    items: set[Any] = set()
    for kind in (before, after):
        if isinstance(kind, Seq):
            items.add(kind.item)
        elif isinstance(kind, Tree) and kind.type is list:
            items |= set(kind.children)
        else:
            return None
    return items.pop() if len(items) == 1 else None


def _spell_buffers(items: list[Any], aliases: dict[str, str]) -> list[Any]:
    """Every version of an array written in place, spelled with the array's name."""
    if not aliases:
        return items
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, aliases)) + r")\b")

    def sub(text: str) -> str:
        return pattern.sub(lambda m: aliases[m.group(1)], text)

    out: list[Any] = []
    for item in items:
        if isinstance(item, Line):
            out.append(Line(sub(item.text), keep=item.keep))
        elif isinstance(item, Block):
            out.append(Block(sub(item.header), _spell_buffers(item.body, aliases),
                             _spell_buffers(item.orelse, aliases)))
        else:
            out.append(item)
    # `y = y` (a back edge between versions of one array) says nothing
    return [i for i in out if not (isinstance(i, Line) and _self_copy(i.text))]


def _self_copy(text: str) -> bool:
    left, _, right = text.partition(" = ")
    return bool(right) and left.strip() == right.strip() and left.isidentifier()


def _forward_block(stmts: list[Stmt], r: "_Reverse") -> list[Any]:
    """A block's forward code, pushing what its backward reads before it can leave."""
    k = _leave_point(stmts)
    head, tail = _forward(stmts[:k], r), _forward(stmts[k:], r)
    if id(stmts) in r.tapes:
        tape, names = r.tapes[id(stmts)]
        head.append(Line(f"{tape}.append({_tuple_text(names, pack=True)})", keep=True))
    return head + tail


def _leave_point(stmts: list[Stmt]) -> int:
    """Index of the first statement that may ``break`` out (else the block's end)."""
    for i, s in enumerate(stmts):
        if isinstance(s, Break) or (isinstance(s, If) and (_breaks(s.body) or _breaks(s.orelse))):
            return i
    return len(stmts)


def _breaks(stmts: list[Stmt]) -> list[Break]:
    """The breaks that leave the loop whose body this is (not nested loops')."""
    out: list[Break] = []
    for s in stmts:
        if isinstance(s, Break):
            out.append(s)
        elif isinstance(s, If):
            out += _breaks(s.body) + _breaks(s.orelse)
    return out


def _counter(s: For) -> str | None:
    """The name counting a loop's iterations, when the backward needs the count."""
    return s.target if s.test is not None else s.counter


def spell(s: Let) -> str:
    """The forward expression of a statement, as the user would write it."""
    prim = PRIMITIVES[s.prim]
    args = [atom_text(a) for a in s.args]
    if s.prim == "call":
        return f"{s.params['spelling']}({', '.join(args)})"
    if s.prim == "getitem":
        return f"{args[0]}[{atom_text(s.params['index'])}]"
    params = {k: atom_text(v) for k, v in s.params.items() if k != KEYWORD_OPERANDS}
    keywords = s.params.get(KEYWORD_OPERANDS, ())
    if keywords:  # operands passed by keyword are spelled by keyword
        args, tail = args[: len(args) - len(keywords)], args[len(args) - len(keywords):]
        params.update(zip(keywords, tail))
    if s.prim == "make_dict":
        return prim.spelling(args, {"keys": s.params["keys"]})
    if s.prim == "pyexpr":
        return prim.spelling(args, s.params)
    return prim.spelling(args, params)


def _dead_code(lines: list[Any], needed: set[str]) -> list[Any]:
    """Keep the forward statements whose values are needed, walking backwards."""
    kept: list[Any] = []
    for item in reversed(lines):
        if isinstance(item, Line):
            if item.keep or item.defines & needed:
                kept.append(item)
                needed |= item.uses
        elif isinstance(item, Block) and item.is_loop:
            # what one iteration needs may be computed by the iteration before it
            inside = set(needed) | item.uses
            while True:
                body = _dead_code(item.body, set(inside))
                more = inside | _uses_of(body)
                if more == inside:
                    break
                inside = more
            if body:
                needed |= inside | item.uses
                kept.append(Block(item.header, body, []))
        elif isinstance(item, Block):
            body = _dead_code(item.body, needed)
            orelse = _dead_code(item.orelse, needed)
            if body or orelse:
                needed |= item.uses
                if not body:
                    kept.append(Block(item.header.replace("if ", "if not ", 1), orelse, []))
                else:
                    kept.append(Block(item.header, body, orelse))
    kept.reverse()
    return kept


def _tuple_text(names: list[str], pack: bool = False) -> str:
    """``a, b`` to unpack into, ``(a, b)`` to pack; one name is always ``(a,)``."""
    if len(names) == 1:
        return f"({names[0]},)"
    return "(" + ", ".join(names) + ")" if pack else ", ".join(names)


def _fors(stmts: list[Stmt]) -> list[For]:
    out: list[For] = []
    for s in stmts:
        if isinstance(s, For):
            out.append(s)
            out += _fors(s.body)
        elif isinstance(s, If):
            out += _fors(s.body) + _fors(s.orelse)
    return out


def _reads(stmts: list[Stmt]) -> set[str]:
    """Every name a block reads, at any depth."""
    found: set[str] = set()
    for s in walk(stmts):
        found |= set(uses(s))
    return found


def _block_defs(stmts: list[Stmt]) -> set[str]:
    """Names a block binds at its own level (and the joins of its ifs)."""
    out: set[str] = set()
    for s in stmts:
        if isinstance(s, Let):
            out.add(s.target)
        elif isinstance(s, If):
            out |= set(s.joins)
        elif isinstance(s, For) and _counter(s) is not None:
            out.add(_counter(s))  # a loop's iteration count, set at this level
    return out


def _uses_of(items: list[Any]) -> set[str]:
    found: set[str] = set()
    for item in items:
        if isinstance(item, Line):
            found |= item.uses
        elif isinstance(item, Block) and (item.body or item.orelse or item.is_loop):
            # (an `if` left empty reads nothing: _tidy_replays drops it)
            found |= item.uses | _uses_of(item.body) | _uses_of(item.orelse)
    return found


def default_text(fn: Function, p: str, module: Module | None) -> str:
    """How an emitted signature spells parameter ``p``'s default: its repr when that
    reads back as the value (a literal), else a name bound to it (an array)."""
    value = fn.defaults[p]
    text = repr(value)
    try:
        same = type(eval(text, {})) is type(value)  # noqa: S307 (a literal's repr)
    except Exception:
        same = False
    if same or module is None:
        return text
    return bind_object(module, f"{p}_default", value)


def _signature(fn: Function, params: list[str], drop_defaults: bool,
               module: Module | None = None) -> str:
    def default(p: str) -> str:
        return default_text(fn, p, module)

    parts = []
    for p in params:
        if p in fn.defaults and not drop_defaults:
            parts.append(f"{p}={default(p)}")
        else:
            parts.append(p)
    if fn.kwonly:
        parts.append("*")
        for p in fn.kwonly:
            parts.append(f"{p}={default(p)}" if p in fn.defaults else p)
    return ", ".join(parts)


# ---- small helpers ---------------------------------------------------------------


def _parallel_copies(fresh: Any, pairs: list[tuple[str, str]]) -> list[Line]:
    """``name = text`` for each pair, all at once (as a tuple assignment would): a
    loop's tangents (forward.py) or cotangents are handed on under their loop names,
    and one may be another's new value (``a, b = b, a`` in a loop hands ``a_bar =
    b_bar``, ``b_bar = a_bar``); a text that reads a name assigned before it in the
    group is read into a fresh ``<name>_prev`` first."""
    before: list[Line] = []
    lines: list[Line] = []
    assigned: set[str] = set()
    for name, text in pairs:
        if text == name:
            continue
        read = {n.id for n in ast.walk(ast.parse(text, mode="eval"))
                if isinstance(n, ast.Name)}
        if read & assigned:
            held = fresh(f"{name}_prev")
            before.append(Line(f"{held} = {text}"))
            text = held
        lines.append(Line(f"{name} = {text}"))
        assigned.add(name)
    return before + lines


def _callee(s: Let) -> Function:
    """The IR of a called user function (a recursive call's, looked up now: once
    while the structures of recursive calls are being solved, which looks often)."""
    callee = s.params["callee"]
    if isinstance(callee, Function):
        return callee
    if not _KINDS_IN_PROGRESS:
        return callee.function
    found = _RESOLVED.get(id(callee))
    if found is None or found[0] is not callee:
        found = _RESOLVED[id(callee)] = (callee, callee.function)
    return found[1]


def _static_arguments(s: Let) -> dict[str, Any]:
    """The values known now of a statement's arguments, by parameter name."""
    known: dict[str, Any] = {}
    for a, (pname, sub) in zip(s.args, arg_slots(s)):
        if isinstance(a, Const) and sub is None:
            known[pname] = a.value
    for pname, p in s.params.items():
        if isinstance(p, Const):
            known[pname] = p.value
    return known


def _const_kind(c: Any) -> Kind:
    from ..ir.kinds import kind_of

    return kind_of(c.value) if isinstance(c, Const) else LEAF


def _elem_name(r: _Reverse, result: str, path: tuple) -> str:
    if not path:
        return result
    prod = r.producer.get(result)
    if prod is not None and prod.prim in ("make_tuple", "make_list"):
        a = prod.args[path[0]]
        if isinstance(a, Var):
            return a.name
    return f"{result}_{path[0]}"


def _pop_pairs(stmts: list[Stmt]) -> dict[int, str]:
    """id of each ``pop`` statement -> the name its ``ys[-1]`` read bound just before."""
    pairs: dict[int, str] = {}
    for body in _bodies(stmts):
        for before, s in zip(body, body[1:]):
            if (isinstance(s, Let) and s.prim == "pop" and isinstance(before, Let)
                    and before.prim == "getitem" and before.args[:1] == s.args[:1]):
                pairs[id(s)] = before.target
    return pairs


def _bodies(stmts: list[Stmt]) -> list[list[Stmt]]:
    """A statement list and every list nested in it."""
    out = [stmts]
    for s in stmts:
        if isinstance(s, If):
            out += _bodies(s.body) + _bodies(s.orelse)
        elif isinstance(s, For):
            out += _bodies(s.body)
    return out


def _unpackable(kind: Kind) -> bool:
    """Can an assignment unpack a value of this kind (tuples and lists, no dicts)?"""
    if isinstance(kind, Tree):
        return kind.type is not dict and all(_unpackable(c) for c in kind.children)
    return True


def _unpack_text(kind: Kind, names: dict[tuple, str], prefix: tuple = ()) -> str:
    """An assignment target unpacking a tuple (or list) of this kind into ``names``."""
    if not isinstance(kind, Tree):
        return names[prefix]
    inner = [_unpack_text(c, names, prefix + (k,)) for k, c in zip(kind.keys, kind.children)]
    return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"


def _lets(stmts: list[Stmt]) -> list[Let]:
    out: list[Let] = []
    for s in stmts:
        if isinstance(s, Let):
            out.append(s)
        elif isinstance(s, If):
            out += _lets(s.body) + _lets(s.orelse)
        elif isinstance(s, For):
            out += _lets(s.body)
    return out


def _is_simple(text: str) -> bool:
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return False
    while isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        node = node.value
    return isinstance(node, ast.Name)


def _paren(text: str) -> str:
    node = ast.parse(text, mode="eval").body
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        return f"({text})"
    return text


def _names_in(exprs: Any) -> set[str]:
    found: set[str] = set()
    stack = [exprs]
    while stack:
        e = stack.pop()
        if isinstance(e, list):
            stack += e
        elif isinstance(e, ast.AST):
            found |= {n.id for n in ast.walk(e) if isinstance(n, ast.Name)}
    return found


def _targets(st: ast.stmt) -> set[str]:
    if isinstance(st, ast.Assign):
        return {t.id for t in st.targets if isinstance(t, ast.Name)}
    return set()


def _prune(stmts: list[ast.stmt], needed: set[str]) -> list[ast.stmt]:
    """Drop rule statements whose results no wanted cotangent uses."""
    kept: list[ast.stmt] = []
    needed = set(needed)
    for st in reversed(stmts):
        if isinstance(st, ast.Assign) and all(isinstance(t, ast.Name) for t in st.targets):
            if not (_targets(st) & needed):
                continue
            needed |= {n.id for n in ast.walk(st.value) if isinstance(n, ast.Name)}
        else:
            written = {n.id for n in ast.walk(st) if isinstance(n, ast.Name)}
            if isinstance(st, ast.If) or (written & needed):
                needed |= written
            else:
                continue
        kept.append(st)
    kept.reverse()
    return kept


def _item(st: ast.stmt) -> Any:
    """An emitted item from an inlined rule statement (an ``if`` stays a block)."""
    if isinstance(st, ast.If):
        return Block(
            f"if {ast.unparse(st.test)}:",
            [_item(s) for s in st.body],
            [_item(s) for s in st.orelse],
        )
    return Line(ast.unparse(st))


def _truthy(p: Any) -> bool:
    return not (p is None or (isinstance(p, Const) and not p.value))


def _all_scalar_defs(s: If, join: str, scalars: set[str]) -> bool:
    return join in scalars and all(
        t.target in scalars for t in _lets(s.body) + _lets(s.orelse) if t.target == join
    )


def _drop_unbroadcast(expr: ast.expr) -> ast.expr:
    if (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Name)
        and expr.func.id == "unbroadcast"
    ):
        return expr.args[0]
    return expr


class OutputStructureError(TypeError):
    """The output is a container where grad needs a scalar (or has_aux a pair)."""


def _grad_error(kind: Kind) -> TypeError:
    return OutputStructureError(
        "Gradient only defined for scalar-output functions. "
        f"Output was a container of structure {kind!r}."
    )


def _aux_error(kind: Kind) -> TypeError:
    return OutputStructureError(
        "expected function with aux output to return a two-element tuple, but got "
        f"a value of structure {kind!r}"
    )
