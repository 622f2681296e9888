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

from dataclasses import dataclass
from typing import Any

from ..emit.code import Line, render_function
from ..errors import TransformError
from ..ir.kinds import LEAF, Kind, Seq, Tree, leaf_paths, literal, path_text
from ..ir.names import NameTable
from ..ir.nodes import Function, Return, Var
from ..ir.spelling import atom_text
from ..ir.walk import all_lets
from .analysis import facts
from .list_operands import per_call
from .module import Module, OutputStructureError, aux_error, grad_error, signature_text, stem
from .paths import tidy_replays
from .replay import Replay, dead_code, spell_buffers, uses_of
from .reverse_buffers import item_read, last_item_read
from .reverse_calls import expand_custom_vjp
from .reverse_state import ReverseState, elem_name, without_flags
from .reverse_sweep import Backward

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
    holomorphic: bool = False  # grad's seed is a complex output's 1 + 0j


def emit_reverse(fn: Function, spec: Spec, module: Module, name: str) -> str:
    """Append the reverse-mode function for ``fn`` to ``module``; return its name."""
    module.taken.add(name)
    module.taken |= fn.names.taken  # helper names must not shadow its locals
    module.namespace.update(fn.namespace)
    fn = per_call(fn, spec.arg_kinds, spec.argnums)  # (differentiated: arrays)
    fn = expand_custom_vjp(fn, module)
    builder = _Reverse(fn, spec, module)
    text = builder.build(name)
    module.functions.append(text)
    return name


class _Reverse:
    """One reverse-mode function: the seed, the backward sweep (reverse_sweep.py and
    its collaborators), the cotangents of the arguments, and the forward statements
    the sweep reads."""

    def __init__(self, fn: Function, spec: Spec, module: Module) -> None:
        self.fn = fn
        self.spec = spec
        self.module = module
        self.names = NameTable(fn.names.taken | module.taken)
        # activity, kinds, scalar facts (analysis.py), and the forward sweep's emission
        self.facts = facts(fn, spec.arg_kinds, spec.argnums)
        self.replay = Replay(self.facts, effects=spec.mode != "vjp")  # (vjp: ran before)
        # what the backward sweep's collaborators share (and the driver reads back)
        self.state = ReverseState(fn, module, self.names, self.facts, self.replay)
        self.sweep = Backward(self.state, callee_vjp)

    def build(self, name: str) -> str:
        """The function's text: seed, backward sweep, forward, ``return``."""
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
            ct = self.names.fresh(f"{elem_name(self.facts, result.name, diff_path)}_bar")
            params.append(ct)
            if isinstance(out_kind, Seq):  # (a list's cotangent, popped item by item:
                seed_lines.append(Line(f"{ct} = list({ct})"))  # the caller's kept)
            adj[result.name] = {
                diff_path + p: path_text(ct, p) for p in leaf_paths(out_kind)
            }
        else:
            if isinstance(out_kind, Tree):
                raise grad_error(out_kind)
            elem = elem_name(self.facts, result.name, diff_path)
            # (the element by its own name where the function built the tuple, else
            # read from the result: `out[0]` of a callee's tuple)
            value = path_text(result.name, diff_path) if elem == result.name or (
                diff_path == () or elem == f"{result.name}_{diff_path[0]}") else elem
            seed = (
                self.state.canonical_name(result.name, ()) if not diff_path
                else self.names.fresh(f"{elem}_bar")
            )
            self.state.owned.add(seed)
            holo = ", holomorphic=True" if self.spec.holomorphic else ""
            seed_lines.append(Line(f"{seed} = grad_seed({value}{holo})"))
            adj[result.name] = {diff_path: seed}
        if result.name not in self.facts.active:
            adj.pop(result.name)

        backward = seed_lines + self.sweep.block(self.fn.body[:-1], adj)
        outs = []
        for i in self.spec.argnums:
            p = self.fn.params[i]
            for path in list(adj.get(p, {})):  # zeros where no path reached it
                self.state.complete(p, path, adj, backward)
            outs.append(self.materialize(p, adj.get(p, {})))
        backward = tidy_replays(backward)
        unread = self.state.flag_names - uses_of(backward)  # (only a value's own backward reads one)
        if unread:
            backward = without_flags(backward, unread)
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
                             if self.sweep.tapes.view_of_written(n, self.fn.body, later=True)}
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
        pop_reads = set(self.sweep.buffers.popped.values())  # ``v = ys.pop()``'s read of ys[-1]
        for s in lets:
            base = s.args[0] if s.args else None
            kind = self.facts.kinds.get(base.name) if isinstance(base, Var) else None
            if (s.prim == "getitem" and isinstance(base, Var) and base.name in self.facts.active
                    and s.target not in pop_reads and isinstance(kind, Seq)
                    and not last_item_read(s, kind) and not item_read(s, kind)):
                name = self.fn.aliases.get(base.name, base.name)
                raise TransformError(
                    f"reading a slice of the list `{name}` grown in a loop, whose items "
                    "are containers, or an item by a tuple index, is not supported yet "
                    "by reverse mode", s.loc, f"read its items one by one (`{name}[k]`)",
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

    def materialize(self, var: str, slots: dict[tuple, str]) -> str:
        kind = self.facts.kinds.get(var, LEAF)
        return literal(
            kind,
            lambda path: slots.get(path) or f"np.zeros_like({path_text(var, path)})",
        )


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
