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
from dataclasses import dataclass, replace
from typing import Any

from ..emit.code import Block, Comment, Line, render_function
from ..errors import MissingRuleError, TransformError
from ..frontend.normalize import normalize
from ..ir.kinds import (
    LEAF,
    Kind,
    Seq,
    Tree,
    leaf_paths,
    literal,
    path_text,
    unpack_text,
    unpackable,
)
from ..ir.names import NameTable
from ..ir.nodes import (
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
    walk,
)
from ..ir.spelling import atom_text
from ..ir.unroll import unroll_container_loops, unrolled_header
from ..ir.walk import (
    all_bodies,
    all_fors,
    all_lets,
    all_reads,
    block_defs,
    loop_breaks,
    loop_counter,
)
from ..primitives.custom import checked_bwd, custom_vjp
from .analysis import callee_of, const_kind, facts
from .checkpoint import policy_of, segmented_backward
from .inline import Inliner, _expr_of
from .module import (
    Module,
    OutputStructureError,
    aux_error,
    bind_object,
    grad_error,
    signature_text,
    stem,
    tuple_text,
)
from .paths import decided, in_order, simplified, tidy_replays, within
from .replay import (
    Replay,
    dead_code,
    is_simple,
    leave_point,
    parallel_copies,
    paren,
    spell_buffers,
    tape_tuple_text,
    uses_of,
)
from .vjp_rules import VjpRules

# what api/ imports from here (Module and the output error live in module.py)
__all__ = ["Module", "OutputStructureError", "Spec", "emit_reverse"]


@dataclass
class Spec:
    """What to emit: which parameters to differentiate, and what to return."""

    mode: str  # "grad", "value_and_grad" or "vjp"
    argnums: tuple[int, ...]
    tuple_out: bool  # grad returns a tuple of gradients (argnums was a tuple)
    has_aux: bool
    arg_kinds: tuple[Kind, ...]  # kinds of the positional parameters


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
        # activity, kinds, scalar facts (analysis.py), and the forward sweep's emission
        self.facts = facts(fn, spec.arg_kinds, spec.argnums)
        self.replay = Replay(self.facts, effects=spec.mode != "vjp")  # (vjp: ran before)
        self.canonical: dict[tuple[str, tuple], str] = {}
        self.owned: set[str] = set()  # cotangent names this pass may reassign
        # cotangent names whose current value is an array this pass allocated and
        # nothing else refers to: index reads may accumulate into them in place
        self.fresh_buffers: set[str] = set()
        self.inliner = Inliner(self.names.fresh)
        self.rules = VjpRules(self)  # a statement's backward by its primitive's VJP rule
        self.loop_depth = 0  # loops around the statement being differentiated
        self.leaving: list[dict[str, tuple[str, str]]] = []  # per loop: entry -> handed, exit
        self.loop_bodies: list[list[Stmt]] = []  # bodies of the loops being differentiated
        # ``v = ys.pop()`` is ``v = ys[-1]`` then ``ys2 = pop(ys)``: id(pop) -> v
        self.popped: dict[int, str] = _pop_pairs(self.fn.body)
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

    # ---- building -------------------------------------------------------------

    def build(self, name: str) -> str:
        self._check_indexes_not_changed_later()
        self._refuse_list_reads()
        ret = self.fn.body[-1]
        assert isinstance(ret, Return)
        result = ret.value
        out_kind = self.facts.kinds.get(result.name, LEAF) if isinstance(result, Var) else LEAF
        adj: dict[str, dict[tuple, str]] = {}
        seed_lines: list[Any] = []
        params = list(self.fn.params)
        diff_path: tuple = ()
        if self.spec.has_aux:
            if not (isinstance(out_kind, Tree) and len(out_kind.keys) == 2
                    and out_kind.type in (tuple, list)):
                raise aux_error(out_kind)
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
                raise grad_error(out_kind)
            elem = _elem_name(self, result.name, diff_path)
            value = path_text(result.name, diff_path) if elem == result.name or diff_path == () else elem
            seed = (
                self.canonical_name(result.name, ()) if not diff_path
                else self.names.fresh(f"{elem}_bar")
            )
            self.owned.add(seed)
            seed_lines.append(Line(f"{seed} = grad_seed({value})"))
            adj[result.name] = {diff_path: seed}
        if result.name not in self.facts.active:
            adj.pop(result.name)

        backward = seed_lines + self.backward(self.fn.body[:-1], adj)
        outs = []
        for i in self.spec.argnums:
            p = self.fn.params[i]
            for path in list(adj.get(p, {})):  # zeros where no path reached it
                self.complete(p, path, adj, backward)
            outs.append(self.materialize(p, adj.get(p, {})))
        backward = tidy_replays(backward)
        unread = self.flag_names - uses_of(backward)  # (only a value's own backward reads one)
        if unread:
            backward = _without_flags(backward, unread)
        grads = outs[0] if not self.spec.tuple_out else (
            "(" + ", ".join(outs) + ("," if len(outs) == 1 else "") + ")"
        )
        # the backward sweep pops earlier values back into names a loop rebinds: a
        # returned value held in such a name is kept aside before the sweep
        restored = {n for _, names in self.replay.tapes.values() for n in names}
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
        self.replay.view_copies |= {n for n in uses_of(backward)
                             if self._view_of_written(n, self.fn.body, later=True)}
        forward = dead_code(
            self.replay.statements(self.fn.body[:-1]) + kept, uses_of(backward + [ret_line])
        )
        forward = [Line(f"{tape} = []") for tape, _ in self.replay.tapes.values()] + forward
        signature = signature_text(self.fn, params, self.spec.mode == "vjp", self.module)
        items = spell_buffers(forward + backward + [ret_line], self.fn.aliases)
        return render_function(name, signature, items)

    def _refuse_list_reads(self) -> None:
        """What reverse mode cannot differentiate yet among lists grown in loops."""
        lets = all_lets(self.fn.body)
        pop_reads = set(self.popped.values())  # ``v = ys.pop()``'s read of ys[-1]
        for s in lets:
            base = s.args[0] if s.args else None
            if (s.prim == "getitem" and isinstance(base, Var) and base.name in self.facts.active
                    and s.target not in pop_reads
                    and isinstance(self.facts.kinds.get(base.name), Seq)):
                raise TransformError(
                    "reading an element of a list grown in a loop is not supported yet",
                    s.loc, "stack the list first: np.stack(ys)[i]",
                )

    def _check_indexes_not_changed_later(self) -> None:
        """An index list grown by ``append`` after an indexing read would be read,
        changed, by that read's backward (which runs after the append): refuse it."""
        lets = all_lets(self.fn.body)  # in program order
        last_change = {self.fn.aliases.get(t.target, t.target): k
                       for k, t in enumerate(lets) if t.prim in ("append", "pop")}
        for k, t in enumerate(lets):
            index = t.params.get("index") if t.prim in ("getitem", "setitem", "add_at") \
                else None
            if index is None or t.target not in self.facts.active and t.prim == "getitem":
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
        prod = self.facts.producer.get(result.name)
        if prod is not None and prod.prim in ("make_tuple", "make_list"):
            return atom_text(prod.args[1])
        return f"{result.name}[1]"

    def zeros_text(self, var: str, path: tuple) -> str:
        """The zero cotangent of one leaf (a list grown in a loop: its items' zeros)."""
        if path == () and isinstance(self.facts.kinds.get(var), Seq):
            return f"zeros_list({var})"
        return f"np.zeros_like({path_text(var, path)})"

    def materialize(self, var: str, slots: dict[tuple, str]) -> str:
        kind = self.facts.kinds.get(var, LEAF)
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
            if s.prim == "pop" and s.args[0].name in self.facts.active:
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
            if s.target not in self.facts.active or s.target not in adj or not self.facts.is_active(s):
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

    def backward_known_list(self, s: Let, adj: dict) -> list[Any]:
        """``backward_let``, where a grown list's cotangent (one Python list) reaches a
        statement that made a list of known length: the cotangent's items become the
        list's slots (``ys_bar[0]``, ...), as literals and appends read them."""
        kind, joined = self.facts.stmt_kind(s), self.facts.kinds.get(s.target)
        if not (isinstance(joined, Seq) and isinstance(kind, Tree)):
            return self.backward_let(s, adj)
        (seq,) = adj[s.target].values()
        adj[s.target] = {p: path_text(seq, p) for p in leaf_paths(kind)}
        self.facts.kinds[s.target] = kind
        try:
            return self.backward_let(s, adj)
        finally:
            self.facts.kinds[s.target] = joined

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
            literal = self.facts.path_literal(test, way)
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
                defs = self._defs(branch[: leave_point(branch)])
                saved = sorted(n for n in uses_of(items)
                               if n in defs and not self._one_object(n))
                if saved:
                    tape = self.names.fresh("tape")
                    self.replay.tapes[id(branch)] = (tape, saved)
                    items.insert(0, Line(f"{tape_tuple_text(saved)} = {tape}.pop()"))
        defined_inside = {t.target for t in all_lets(s.body) + all_lets(s.orelse)}
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
        # finished code drops what stays empty, tidy_replays)
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
            here = within(cond, context)
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
        elif isinstance(self.facts.kinds.get(var), Seq):
            name = _list_join_name(var, path, tuple(st[0] for st in states),
                                   self.fn.aliases) or self.canonical_name(var, path)
        else:
            name = self.canonical_name(var, path)
        for text, cond, (_, _, items, context) in zip(texts, conds, states):
            if text is None:
                if zeros is not None:
                    items.append(Line(f"{name} = {zeros}"))
                continue
            _extend(items, decided(within(cond, context), context, lambda holds, t=text: (
                [Line(f"{name} = {t}")] if holds and t != name
                else [Line(f"{name} = {zeros}")] if not holds and zeros is not None
                else []), self.facts.test_order))
        adj.setdefault(var, {})[path] = name
        if name == self.canonical_name(var, path):
            self.owned.add(name)
        self.fresh_buffers.discard(name)
        union = simplified(conds[0] | conds[1])
        if zeros is not None or within(union, self.context) is None:
            self.when.pop(key, None)
            self.bound_anyway.discard(key)
            return
        self.when[key] = union
        missing = [k for k, t in enumerate(texts) if t is None]
        if len(missing) == 1 and key not in self.bound_anyway and not was_partial and within(conds[1 - missing[0]], states[1 - missing[0]][3]) is None:
            self.unbound_at[key] = (states[missing[0]][2], states[1 - missing[0]][2], name,
                                    union, self.context)

    def _may_be_unbound(self, var: str, path: tuple) -> bool:
        """May this cotangent be left unbound on a path (an array's may; a list's, a
        tape's, is zeros there: see _join_slot)?"""
        kind = self.facts.kinds.get(var, LEAF)
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
                                      self.facts.kinds.get(s.args[0].name), Tree)):
            return None
        groups: dict[frozenset | None, dict] = {}
        for path, text in slots.items():
            cond = self.when.get((s.target, path))
            groups.setdefault(None if cond is None else within(cond, self.context), {})[
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
            return within(conds[0], self.context) or None
        for var, path in keys:
            self.complete(var, path, adj, out)
        return None

    def backward_guarded(self, s: Let, cond: frozenset, adj: dict) -> Block:
        """The backward of ``s`` on the paths ``cond`` names only: `if`s on the
        forward's tests, read again by name (``cond`` is rarely more than one
        conjunction; then the paths that bind it each get the statement's backward)."""
        tests = in_order({t for conj in cond for t, _ in conj} - {t for t, _ in self.context},
                          self.facts.test_order)

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
        here = within(cond, self.context)
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
        _extend(out, decided(here, self.context, lambda holds: (
            [Line(f"{name} = {text}")] if holds and text != name
            else [] if holds else [Line(f"{name} = {zeros}")]), self.facts.test_order))
        adj[var][path] = name
        self.owned.add(name)
        self.fresh_buffers.discard(name)

    def backward_for(self, s: For, adj: dict[str, dict[tuple, str]]) -> list[Any]:
        """Run the loop backwards: pop what each iteration saved, then its adjoint.

        Cotangents of values from outside the loop accumulate across iterations under
        one name; a carried value's cotangent flows from each iteration to the one
        before it.
        """
        defined = {t.target for t in all_lets(s.body)} | {s.target} | {
            f.target for f in all_fors(s.body)
        }
        read = all_reads(s.body) - defined
        carried = [(e, x) for e, x in s.carried if x in self.facts.active]
        outer = sorted(v for v in read if v in self.facts.active and v not in dict(carried))
        if not outer and not carried:
            return []
        pre: list[Any] = []
        for entry, _ in carried:
            if not isinstance(self.facts.kinds.get(entry, LEAF), (type(LEAF), Seq)):
                raise TransformError(
                    f"the container `{entry}` is rebound in a loop being differentiated",
                    s.loc, "carry arrays through the loop, not containers",
                )
        flags, nonzero = self._loop_accumulators(s, outer, carried, adj, pre)
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
        self.facts.int_vars.add(s.target)
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
        body += parallel_copies(self.names.fresh, ends)
        self._save_on_tape(s, body)
        for var in defined:
            adj.pop(var, None)
        for key in [k for k in self.when if k[0] in defined]:
            del self.when[key]
        self.unbound_at = {k: v for k, v in unbound_before.items() if k in self.when}
        for (var, path), flag in reached:  # nonzero where an iteration reached it
            self.when[(var, path)] = simplified(
                nonzero.get((var, path), frozenset()) | {self.context | {(flag, True)}})
            self.bound_anyway.add((var, path))
        if loop_counter(s) is not None:
            header = f"for _ in range({loop_counter(s)}):"
        else:
            header = f"for {s.target} in {self.replay.range_text(s, backward=True)}:"
        if self.loop_depth == 0 and policy_of(self.fn) is not None:
            # s2s.checkpoint: saved states every few iterations, segments run again
            return segmented_backward(self, s, pre, Block(header, body, []))
        return pre + [Block(header, body, [])]

    def _loop_accumulators(self, s: For, outer: list[str], carried: list, adj: dict,
                           pre: list[Any]) -> tuple[dict, dict]:
        """Before a loop's backward: one accumulator per leaf of what the loop reads from
        outside or carries, bound on every path; the flags of those an iteration may
        never reach (and where each was nonzero before the loop)."""
        flags: dict[tuple[str, tuple], str] = {}
        nonzero: dict[tuple[str, tuple], frozenset] = {}  # where it was before the loop
        for var in outer + [e for e, _ in carried]:
            for path in list(adj.get(var, {})):  # what the loop reads: on every path
                if var in outer and (var, path) in self.when:
                    nonzero[(var, path)] = self.when[(var, path)]
                self.complete(var, path, adj, pre)
            for path in leaf_paths(self.facts.kinds.get(var, LEAF)):
                if var in outer and (adj.get(var, {}).get(path) is None or (
                        var, path) in nonzero) and self._may_be_unbound(var, path):
                    flags[(var, path)] = self.names.fresh(
                        "_".join([self.fn.aliases.get(var, var)] + [str(k) for k in path]
                                 + ["reached"]))
        for var in outer + [e for e, _ in carried]:
            # one accumulator per leaf (a container's leaves each get their own)
            for path in leaf_paths(self.facts.kinds.get(var, LEAF)):
                name = self.canonical_name(var, path)
                current = adj.get(var, {}).get(path)
                if current is None and isinstance(self.facts.kinds.get(var), Seq) \
                        and self._is_popped(var):
                    # a stack (a tape) that ends the loop unread: its items' zeros
                    pre.append(Line(f"{name} = zeros_list({var})"))
                    adj.setdefault(var, {})[path] = name
                    self.owned.add(name)
                    continue
                if current is None and isinstance(self.facts.kinds.get(var), Seq):
                    raise TransformError(
                        f"the list `{var}` grown in the loop is not used afterwards",
                        s.loc, "drop the list, or use it (np.stack) in the result",
                    )
                if current is None:
                    pre.append(Line(f"{name} = np.zeros_like({path_text(var, path)})"))
                    self.fresh_buffers.add(name)
                elif isinstance(self.facts.kinds.get(var), Seq) and is_simple(current):
                    # a list's cotangent is one list, popped and appended in place: the
                    # loop goes on with it under its name (a copy would be an alias)
                    name = self.canonical[(var, path)] = current
                elif current != name:
                    pre.append(Line(f"{name} = {current}"))
                    self.fresh_buffers.discard(name)
                adj.setdefault(var, {})[path] = name
                self.owned.add(name)
        return flags, nonzero

    def _save_on_tape(self, s: For, body: list[Any]) -> None:
        """What the loop's backward reads of an iteration's values, pushed by the
        forward (a tape) and popped at the top of ``body``."""
        before_exit = s.body[: leave_point(s.body)]
        restorable = self._defs(before_exit) | set(dict(s.carried))
        if loop_counter(s) is not None and s.test is None:
            restorable.add(s.target)  # the index, when the range cannot replay it
        self.loop_bodies.append(s.body)
        saved = sorted(n for n in uses_of(body) if n in restorable and not self._one_object(n))
        self.replay.view_copies |= {n for n in saved if self._view_of_written(n, s.body)}
        self.loop_bodies.pop()
        if saved:
            tape = self.names.fresh("tape")
            self.replay.tapes[id(s.body)] = (tape, saved)
            body.insert(0, Line(f"{tape_tuple_text(saved)} = {tape}.pop()"))

    def _one_object(self, name: str) -> bool:
        """Is ``name`` a version of an array (or list) written in place that is one
        object throughout the innermost loop?  Then a tape need not save it: every
        version is spelled with the array's name, and the backward sweep puts back
        what the writes overwrote."""
        aliases = self.fn.aliases
        root = aliases.get(name, name)
        if root not in aliases.values():
            return False
        for t in all_lets(self.loop_bodies[-1]):
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
        prod = self.facts.producer.get(name)
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
        return block_defs(stmts) | {
            self.replay.saved[id(t)] for t in stmts if isinstance(t, Let) and id(t) in self.replay.saved
        }

    def backward_append(self, s: Let, g: dict[tuple, str], adj: dict, active_args) -> list[Any]:
        """``ys.append(v)``: v's cotangent is the list cotangent's last element."""
        out: list[Any] = []
        base, item = s.args
        kind = self.facts.kinds[s.target]
        if isinstance(kind, Tree):  # a list of known length: slots, as for literals
            n = len(kind.keys) - 1
            if isinstance(item, Var) and item.name in self.facts.active:
                sub = {p[1:]: t for p, t in g.items() if p[:1] == (n,)}
                self.accumulate_tree(item.name, (), sub, adj, out)
            if isinstance(base, Var) and base.name in self.facts.active:
                rest = {p: t for p, t in g.items() if p[:1] != (n,)}
                self.accumulate_tree(base.name, (), rest, adj, out)
            return out
        (seq,) = g.values()
        if isinstance(item, Var) and item.name in self.facts.active:
            paths = leaf_paths(kind.item)
            if paths == [()] or not unpackable(kind.item):
                part = self.names.fresh(f"{item.name}_bar")
                out.append(Line(f"{part} = {seq}.pop()"))
                for p in paths:
                    self.accumulate(item.name, p, path_text(part, p), adj, out)
            else:  # a tuple of values (a tape's entry): one cotangent per leaf
                parts = {p: self.names.fresh(
                    "_".join([_elem_name(self, item.name, p)] + ["bar"])) for p in paths}
                out.append(Line(f"{unpack_text(kind.item, parts)} = {seq}.pop()"))
                for p in paths:
                    self.accumulate(item.name, p, parts[p], adj, out)
        else:
            out.append(Line(f"{seq}.pop()"))
        if isinstance(base, Var) and base.name in self.facts.active:
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
                   for t in all_lets(self.fn.body) if t.prim == "pop")

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
        base_kind = self.facts.kinds.get(base, LEAF)
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
        item_kind = self.facts.kinds.get(item, LEAF)
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
        if s.target in self.facts.active and s.target in adj and self.facts.is_active(s):
            # what it overwrote is put back on every path, so its cotangent is needed on
            # every path too: zeros where no path reached it
            for path in list(adj[s.target]):
                self.complete(s.target, path, adj, out)
            out += self.backward_let(s, adj)
        base = atom_text(s.args[0])
        saved = self.names.fresh(f"{self.fn.aliases.get(base, base)}_overwritten")
        self.replay.saved[id(s)] = saved
        out.append(Line(f"{base}[{atom_text(s.params['index'])}] = {saved}"))
        return out

    def backward_break(self, s: Break, adj: dict[str, dict[tuple, str]]) -> list[Any]:
        """Leaving early, the loop's results were the values here: the cotangent that
        flowed into the loop's end flows to them."""
        out: list[Any] = []
        for entry, name in s.copies:
            handed, exit_ = self.leaving[-1].get(entry, (None, None))
            if handed is None or name == exit_ or name not in self.facts.active:
                continue
            self.accumulate(name, (), handed, adj, out)
        return out

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
            out.append(Line(f"{name} = {current} + {paren(text)}"))
            self._reached(name, out)
            self.owned.add(name)
            slots[path] = name
            cond = simplified(self.when[key] | {self.context})
            if within(cond, self.context) is None:
                del self.when[key]
                self.bound_anyway.discard(key)
            else:
                self.when[key] = cond
            return
        here = within(self.when[(var, path)], self.context) if (
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
            _extend(out, decided(here, self.context, lambda holds: [Line(
                f"{name} = {current} + {paren(text)}" if holds else f"{name} = {text}")],
                self.facts.test_order))
            del self.when[(var, path)]
            slots[path] = name
            self.owned.add(name)
            self.fresh_buffers.discard(name)
            return
        if current is None:
            if is_simple(text):
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
        out.append(Line(f"{name} = {current} + {paren(text)}"))
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

    # structural primitives: their backward routes cotangents (a handler returns None
    # where the statement is not its case, and the primitive's rule runs)
    STRUCTURAL_BACKWARD = {"identity": "_backward_identity", "list": "_backward_list",
                           "make_tuple": "_backward_container",
                           "make_list": "_backward_container",
                           "make_dict": "_backward_container", "getitem": "_backward_item",
                           "call": "backward_call", "append": "backward_append"}

    def backward_let(self, s: Let, adj: dict) -> list[Any]:
        g = adj[s.target]
        active_args = [
            (i, a.name) for i, a in enumerate(s.args)
            if isinstance(a, Var) and a.name in self.facts.active
        ]
        handler = self.STRUCTURAL_BACKWARD.get(s.prim)
        if handler is not None:
            out = getattr(self, handler)(s, g, adj, active_args)
            if out is not None:
                return out
        return self.rules.backward(s, g, adj, active_args)

    def _backward_identity(self, s: Let, g: dict, adj: dict, active_args) -> list[Any]:
        out: list[Any] = []
        for _, name in active_args:
            self.accumulate_tree(name, (), g, adj, out)
        return out

    def _backward_list(self, s: Let, g: dict, adj: dict, active_args) -> list[Any] | None:
        """A tuple's items, as a list: the same slots (a grown list's: its rule)."""
        if isinstance(self.facts.kinds.get(s.target), Seq):
            return None
        return self._backward_identity(s, g, adj, active_args)

    def _backward_container(self, s: Let, g: dict, adj: dict, active_args) -> list[Any]:
        out: list[Any] = []
        kind = self.facts.kinds[s.target]
        assert isinstance(kind, Tree)
        for i, name in active_args:
            key = kind.keys[i]
            sub = {p[1:]: t for p, t in g.items() if p[:1] == (key,)}
            self.accumulate_tree(name, (), sub, adj, out)
        return out

    def _backward_item(self, s: Let, g: dict, adj: dict, active_args) -> list[Any] | None:
        """A container's item routes its slots; an array's read accumulates in place
        into a buffer this pass allocated (else: the rule)."""
        if isinstance(self.facts.kinds.get(s.args[0].name), Tree):
            out: list[Any] = []
            key = self.facts.container_key(s, self.facts.kinds[s.args[0].name])
            self.accumulate_tree(s.args[0].name, (key,), g, adj, out)
            return out
        if isinstance(s.args[0], Var):
            current = adj.get(s.args[0].name, {}).get(())
            if current is not None and current in self.fresh_buffers:
                lines = [self._accumulate_index(current, s.params["index"], g[()])]
                self._reached(current, lines)
                return lines
        return None

    def _accumulate_index(self, buffer: str, index: Index, g: str) -> Line:
        """``x_bar[i] += g`` into a buffer this pass owns (``np.add.at`` if fancy)."""
        ints = all(
            not isinstance(i, Var) or i.name in self.facts.int_vars for i in index.items
        )
        if ints and Index(tuple(Const(0, "0") if isinstance(i, Var) else i
                                for i in index.items), index.is_tuple).is_basic():
            return Line(f"{buffer}[{atom_text(index)}] += {g}")

        return Line(f"np.add.at({buffer}, {ast.unparse(_expr_of(index))}, {g})")

    def backward_call(self, s: Let, g: dict, adj: dict, active_args) -> list[Any]:
        if "custom" in s.params or "custom_bwd" in s.params:
            return self.backward_custom(s, g, adj, active_args)
        callee = callee_of(s)
        arg_kinds = tuple(
            self.facts.kinds.get(a.name, LEAF) if isinstance(a, Var) else const_kind(a)
            for a in s.args
        )
        positions = tuple(i for i, _ in active_args)
        vjp_name = callee_vjp(callee, positions, arg_kinds, self.module)
        out_kind = self.facts.kinds[s.target]
        ct = literal(out_kind, lambda p: g.get(p) or f"np.zeros_like({path_text(s.target, p)})")
        args = ", ".join(atom_text(a) for a in s.args)
        results = [self.names.fresh(f"{name}_bar") for _, name in active_args]
        lhs = results[0] if len(results) == 1 else ", ".join(results)
        out: list[Any] = [Line(f"{lhs} = {vjp_name}({args}, {ct})")]
        for (i, name), r in zip(active_args, results):
            kind = self.facts.kinds.get(name, LEAF)
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
            out_kind = self.facts.kinds[s.target].child(0)
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
            ct = literal(self.facts.kinds[s.target],
                         lambda p: g.get(p) or f"np.zeros_like({path_text(s.target, p)})")
            kinds = [self.facts.kinds.get(a.name, LEAF) if isinstance(a, Var) else const_kind(a)
                     for a in s.args]
            primals = Tree(tuple, tuple(range(len(positions))), tuple(kinds[i] for i in positions))
            rule_kinds = tuple(kinds[i] for i in custom.nondiff_argnums) + (primals, primals)
            vjp_name = callee_vjp(normalize(rule), (len(nondiff) + 1,), rule_kinds,
                                  self.module)
            zeros = [literal(kinds[i], lambda p, a=s.args[i]: (
                f"np.zeros_like({path_text(atom_text(a), p)})")) for i in positions]
            out_zeros = literal(self.facts.kinds[s.target],
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
            kind = self.facts.kinds.get(name, LEAF)
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
    if s.test is not None or loop_breaks(s.body) or s.iter is None:
        return False
    prod = r.facts.producer.get(s.iter.name)
    if prod is not None and prod.prim == "reversed" and isinstance(prod.args[0], Var):
        prod = r.facts.producer.get(prod.args[0].name)
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


# ---- forward code and dead-code removal -----------------------------------------


# ---- small helpers ---------------------------------------------------------------


def _elem_name(r: _Reverse, result: str, path: tuple) -> str:
    if not path:
        return result
    prod = r.facts.producer.get(result)
    if prod is not None and prod.prim in ("make_tuple", "make_list"):
        a = prod.args[path[0]]
        if isinstance(a, Var):
            return a.name
    return f"{result}_{path[0]}"


def _pop_pairs(stmts: list[Stmt]) -> dict[int, str]:
    """id of each ``pop`` statement -> the name its ``ys[-1]`` read bound just before."""
    pairs: dict[int, str] = {}
    for body in all_bodies(stmts):
        for before, s in zip(body, body[1:]):
            if (isinstance(s, Let) and s.prim == "pop" and isinstance(before, Let)
                    and before.prim == "getitem" and before.args[:1] == s.args[:1]):
                pairs[id(s)] = before.target
    return pairs


