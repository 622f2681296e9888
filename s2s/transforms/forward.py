"""Forward mode: from a normalized function to its JVP function, as code.

The emitted function runs the user's statements in order and, right after each one
that depends on a differentiated argument, the statement computing its tangent
(``pred = np.tanh(x_at_w)`` is followed by ``pred_dot = x_at_w_dot * (1 - pred**2)``).
Tangents are named after the values (``x_dot``); a tangent that is just another
tangent (``y = x``) is not copied but read under the other name.

Control flow is kept as it is: an ``if`` computes its joins' tangents in each branch,
a loop carries its values' tangents beside them, a write into an array
(``y[i] = v``) writes the tangent into the tangent's buffer (``y_dot[i] = v_dot``),
``ys.append(v)`` appends ``v_dot`` to ``ys_dot``.  Calls to user functions get their
own emitted ``helper_jvp`` returning ``(value, tangent)``.

Which values carry tangents (activity), their structure (kinds) and which are known
scalars come from the same analysis reverse mode uses.  ``_Forward`` walks the
statements and builds the function; it hands ``if``s to forward_branches, loops to
forward_loops, writes in place and lists to forward_buffers and calls to
forward_calls, each an object holding the one ``forward_state.ForwardState`` they
share: the tangents bound, and where.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..emit.code import Line, render_function
from ..errors import TransformError
from ..ir.kinds import LEAF, Kind, Seq, Tree, leaf_paths, literal, path_text
from ..ir.nodes import Break, For, Function, If, Let, Return, Var
from ..ir.spelling import atom_text
from . import odes
from .base import StmtTransform
from .forward_branches import Branches
from .forward_buffers import Buffers
from .forward_calls import Calls
from .forward_loops import Loops
from .forward_state import ForwardState
from .jvp_rules import JvpRules
from .list_operands import per_call
from .module import Module, aux_error, default_text, signature_text, stem
from .paths import tidy_replays
from .replay import dead_code, spell_buffers


@dataclass
class ForwardSpec:
    """What to emit: which positional parameters carry tangents."""

    active: tuple[int, ...]
    has_aux: bool
    arg_kinds: tuple[Kind, ...]
    nargs: int | None = None  # positional arguments the caller passes (None: all)
    tangent_only: bool = False  # return the output's tangent alone (for jacfwd)


def emit_forward(fn: Function, spec: ForwardSpec, module: Module, name: str) -> str:
    """Append the forward-mode function for ``fn`` to ``module``; return its name."""
    fn = per_call(fn, spec.arg_kinds, spec.active)  # for W, b in params: unrolled
    module.taken.add(name)
    module.taken |= fn.names.taken  # helper names must not shadow its locals
    module.namespace.update(fn.namespace)
    text = _Forward(fn, spec, module).build(name)
    module.functions.append(text)
    return name


class _Forward(StmtTransform):
    """One forward pass: the statements in order, each followed by its tangent's,
    and the function they make."""

    def __init__(self, fn: Function, spec: ForwardSpec, module: Module) -> None:
        self.fn = fn
        self.spec = spec
        self.module = module
        self.state = ForwardState(fn, spec, module)
        self.facts = self.state.facts
        self.replay = self.state.replay
        self.rules = JvpRules(self.state)  # a statement's tangent by its primitive's JVP rule
        self.branches = Branches(self.state, self)
        self.loops = Loops(self.state, self)
        self.buffers = Buffers(self.state)
        self.calls = Calls(self.state, callee_jvp)
        # the list operations' handlers, by the names LIST_OPS gives them
        self.setitem, self.append = self.buffers.setitem, self.buffers.append
        self.pop, self.seq_item = self.buffers.pop, self.buffers.seq_item

    # ---- building -----------------------------------------------------------------

    def build(self, name: str) -> str:
        state = self.state
        nargs = len(self.fn.params) if self.spec.nargs is None else self.spec.nargs
        params, rest = list(self.fn.params[:nargs]), list(self.fn.params[nargs:])
        for i in self.spec.active:
            p = self.fn.params[i]
            dot = state.names.fresh(f"{p}_dot")
            params.append(dot)
            for path in leaf_paths(state.kind(p)):
                state.tan.setdefault(p, {})[path] = path_text(dot, path)
        body: list[Any] = []
        self.block(self.fn.body[:-1], body)
        ret = self.fn.body[-1]
        assert isinstance(ret, Return)
        result = ret.value
        state.settle(result, body)  # zeros where no tangent reached it
        if self.spec.has_aux:
            kind = state.kind(result.name) if isinstance(result, Var) else LEAF
            if not (isinstance(kind, Tree) and len(kind.keys) == 2
                    and kind.type in (tuple, list)):
                raise aux_error(kind)
            value, aux = path_text(result.name, (0,)), path_text(result.name, (1,))
            prod = self.facts.producer.get(result.name)
            if prod is not None and prod.prim in ("make_tuple", "make_list"):
                value, aux = atom_text(prod.args[0]), atom_text(prod.args[1])
            sub = kind.children[0]
            tangent = literal(sub, lambda p: state.slot(result.name, (0,) + p))
            ret_line = Line(f"return {value}, {tangent}, {aux}")
        elif self.spec.tangent_only:
            ret_line = Line(f"return {state.whole(result)}")
        else:
            value = atom_text(result)
            ret_line = Line(f"return {value}, {state.whole(result)}")
        items = tidy_replays(dead_code(body, set(ret_line.uses)))
        items = spell_buffers(items + [ret_line], self.fn.aliases)
        signature = signature_text(self.fn, params, True, self.module)
        if rest:  # parameters left at their defaults follow the tangents
            signature += ", " + ", ".join(
                f"{p}={default_text(self.fn, p, self.module)}" for p in rest)
        return render_function(name, signature, items)

    # ---- statements -----------------------------------------------------------------

    # structural primitives: the list operations (after the primal statement, whether
    # or not it is active), then the containers (for an active statement)
    LIST_OPS = {"setitem": "setitem", "append": "append", "pop": "pop", "getitem": "seq_item"}
    CONTAINER_OPS = {"identity": "identity", "make_tuple": "container",
                     "make_list": "container", "make_dict": "container",
                     "getitem": "tree_item"}

    def let(self, s: Let, out: list[Any]) -> None:
        if s.prim == "call" and self.facts.is_active(s):
            self.calls.call(s, out)
            return
        if s.prim in ("odeint_adjoint", "odeint_tangent") and self.facts.is_active(s):
            odes.refuse_again(s)
        if s.prim == "odeint" and self.facts.is_active(s):
            out += self.replay.statements([s])
            odes.tangent(self.state, callee_jvp, s, out)
            return
        out += self.replay.statements([s])  # the primal statement, as the user wrote it
        if self.structural(self.LIST_OPS, s, out):
            return
        if s.target not in self.facts.active or not self.facts.is_active(s):
            return
        if s.prim == "list" and isinstance(s.args[0], Var) and isinstance(
                self.state.kind(s.args[0].name), Tree):  # (`list(ys)` of a list of
            self.identity(s, out)  # known length: its items' tangents, one by one)
            return
        if not self.structural(self.CONTAINER_OPS, s, out):
            for a in s.args:  # (as reverse mode: NumPy reads a list of tuples as one
                kind = self.state.kind(a.name) if isinstance(a, Var) else None  # array)
                if isinstance(kind, Seq) and kind.item != LEAF and s.prim != "list":
                    # (`list(ys)` copies a list of tuples: its tangent, the tangent
                    # list's copy, whatever its items are)
                    raise TransformError(
                        f"`{s.prim}` reads a list whose items are containers, not arrays",
                        s.loc, "append arrays to the list (e.g. `rows.append(t[0])`)")
            self.rules.inline(s, out)

    def identity(self, s: Let, out: list[Any]) -> None:
        for path in list(self.state.tan.get(s.args[0].name, {})):
            self.state.routed(s.args[0].name, path, s.target, path)

    def container(self, s: Let, out: list[Any]) -> None:
        kind = self.facts.stmt_kind(s)  # (a join the other path grows: known here)
        assert isinstance(kind, Tree)
        for key, a in zip(kind.keys, s.args):
            if self.state.is_active(a):
                for path in list(self.state.tan.get(a.name, {})):
                    self.state.routed(a.name, path, s.target, (key,) + path)

    def tree_item(self, s: Let, out: list[Any]) -> bool:
        base = s.args[0]
        if not isinstance(self.state.kind(base.name), Tree):
            return False
        key = self.facts.container_key(s, self.state.kind(base.name))
        for path in list(self.state.tan.get(base.name, {})):
            if path[:1] == (key,):
                self.state.routed(base.name, path, s.target, path[1:])
        return True

    def if_(self, s: If, out: list[Any]) -> None:
        self.branches.if_(s, out)

    def for_(self, s: For, out: list[Any]) -> None:
        self.loops.for_(s, out)

    def break_(self, s: Break, out: list[Any]) -> None:
        self.loops.break_(s, out)


def callee_jvp(callee: Function, positions: tuple[int, ...], kinds: tuple, module: Module) -> str:
    """The name of the emitted JVP of a user function (emitted once per module)."""
    key = ("jvp", id(callee), positions, kinds)
    if key in module.names:
        return module.names[key]
    base = f"{stem(callee)}_jvp"
    if positions != tuple(range(len(callee.params))):
        base += "_" + "_".join(callee.params[i] for i in positions)
    name, i = base, 2
    while name in module.taken:
        name = f"{base}_{i}"
        i += 1
    module.names[key] = name
    full = kinds + (LEAF,) * (len(callee.params) - len(kinds))
    emit_forward(callee, ForwardSpec(positions, False, full), module, name)
    return name

