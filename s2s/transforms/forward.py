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
scalars come from the same analysis reverse mode uses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..emit.code import Block, Line, render_function
from ..errors import CustomRuleError, MissingRuleError
from ..ir.kinds import LEAF, Kind, Seq, Tree, leaf_paths, literal, path_text
from ..ir.nodes import (
    Break,
    For,
    Function,
    If,
    Let,
    Return,
    Var,
    walk,
)
from ..ir.spelling import atom_text
from ..ir.unroll import unroll_container_loops
from ..ir.walk import effective_carried
from ..primitives.custom import checked_jvp, custom_vjp
from .analysis import callee_of, facts
from .base import StmtTransform
from .inline import Inliner
from .jvp_rules import JvpRules
from .module import Module, aux_error, bind_object, default_text, signature_text, stem, tuple_text
from .paths import decided, simplified, tidy_replays, within
from .replay import Replay, dead_code, is_simple, parallel_copies, spell_buffers


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
    fn = unroll_container_loops(fn, spec.arg_kinds)  # for W, b in params: unrolled
    module.taken.add(name)
    module.taken |= fn.names.taken  # helper names must not shadow its locals
    module.namespace.update(fn.namespace)
    text = _Forward(fn, spec, module).build(name)
    module.functions.append(text)
    return name


Slots = dict[tuple, str]  # leaf path -> the text of that leaf's tangent


class _Forward(StmtTransform):
    def __init__(self, fn: Function, spec: ForwardSpec, module: Module) -> None:
        self.fn = fn
        self.spec = spec
        self.module = module
        # the analysis reverse mode reads (activity, kinds, scalar facts) serves here
        self.facts = facts(fn, spec.arg_kinds, spec.active)
        self.replay = Replay(self.facts)
        self.names = module.names_for(fn)
        self.inliner = Inliner(self.names.fresh)
        self.rules = JvpRules(self)  # a statement's tangent by its primitive's JVP rule
        self.tan: dict[str, Slots] = {}
        self.owned: set[str] = set()  # tangent buffers this function allocated
        self.buffer_names: dict[str, str] = {}  # array written in place -> its tangent
        self.loop_names: list[dict[str, Slots]] = []  # per loop: entry -> tangent names
        self.join_names: dict[str, str] = {}  # an if's join -> its tangent's one name
        # Structural zeros, as in reverse mode (see ReverseState.when): a tangent one path of
        # an `if` gives no value (the join is a constant there: np.zeros_like(x), 0.0)
        # is bound on the other paths only, and what reads it runs its tangent rule on
        # those paths only: sqrt's rule at 0 never meets a zero that is not one (JAX's
        # symbolic zero tangent).
        self.when: dict[tuple[str, tuple], frozenset] = {}
        self.context: frozenset = frozenset()
        # where a tangent's name is unbound: the code of each path that binds it no
        # value (a branch, an `if` of a tangent rule), with its zeros there; settle()
        # puts the zeros there, so each path binds the name where its `if` does
        self.holes: dict[str, list[tuple[list[Any], str]]] = {}
        self.filled: set[str] = set()

    # ---- naming -----------------------------------------------------------------

    def root(self, var: str) -> str:
        return self.fn.aliases.get(var, var)

    def dot_name(self, var: str, path: tuple = ()) -> str:
        stem = "_".join([self.root(var)] + [str(k) for k in path])
        return self.names.fresh(f"{stem}_dot")

    def buffer_name(self, var: str) -> str:
        """The one tangent name of an array written in place (all its versions)."""
        root = self.root(var)
        if root not in self.buffer_names:
            self.buffer_names[root] = self.names.fresh(f"{root}_dot")
        return self.buffer_names[root]

    # ---- tangents of values -----------------------------------------------------

    def kind(self, var: str) -> Kind:
        return self.facts.kinds.get(var, LEAF)

    def is_active(self, atom: Any) -> bool:
        return isinstance(atom, Var) and atom.name in self.facts.active

    def zeros(self, var: str, path: tuple = ()) -> str:
        kind = self.kind(var)
        for k in path:
            kind = kind.child(k) if isinstance(kind, Tree) else LEAF
        if isinstance(kind, Seq):
            prod = self.facts.producer.get(var)
            if prod is not None and prod.prim == "make_list" and not prod.args:
                return "[]"
            return f"zeros_list({path_text(var, path)})"
        return f"np.zeros_like({path_text(var, path)})"

    def slot(self, var: str, path: tuple = ()) -> str:
        """The tangent of one leaf of ``var`` (zeros where nothing flowed in)."""
        text = self.tan.get(var, {}).get(path)
        return text if text is not None else self.zeros(var, path)

    def whole(self, atom: Any) -> str:
        """The tangent of a value, containers spelled as literals of their leaves."""
        if not isinstance(atom, Var):
            return f"np.zeros_like({atom_text(atom)})"
        var = atom.name
        return literal(self.kind(var), lambda p: self.slot(var, p))

    def cond(self, var: str, path: tuple = ()) -> frozenset | None:
        """Where the tangent of ``var``'s leaf is bound (None: wherever the code being
        emitted runs)."""
        c = self.when.get((var, path))
        if c is None or self.tan.get(var, {}).get(path) in self.filled:
            return None
        return within(c, self.context)

    def settle(self, atom: Any, out: list[Any]) -> None:
        """Bind ``atom``'s tangent on every path of the code being emitted (zeros where
        no tangent reached it), for what needs one everywhere (a call, a write, a
        loop's carried values, the result)."""
        if not isinstance(atom, Var):
            return
        var = atom.name
        for path in list(self.tan.get(var, {})):
            cond = self.cond(var, path)
            self.when.pop((var, path), None)
            if cond is None:
                continue
            text = self.tan[var][path]
            if text in self.holes:  # zeros where each path left it unbound
                for items, zeros in self.holes.pop(text):
                    items.append(Line(f"{text} = {zeros}"))
                self.filled.add(text)
                continue
            name = text if text.isidentifier() else self.dot_name(var, path)
            zeros = self.zeros(var, path)
            out += decided(cond, self.context, lambda holds: (
                [Line(f"{name} = {text}")] if holds and text != name
                else [] if holds else [Line(f"{name} = {zeros}")]), self.facts.test_order)
            self.tan[var][path] = name

    def _routed(self, source: str, spath: tuple, target: str, tpath: tuple) -> None:
        """``target``'s leaf gets ``source``'s tangent as it is (a copy, an item)."""
        self.tan.setdefault(target, {})[tpath] = self.tan[source][spath]
        cond = self.cond(source, spath)
        if cond is not None:  # (bound where the source is, on the paths this runs on)
            self.when[(target, tpath)] = self._here(cond)
        else:
            self.when.pop((target, tpath), None)

    def _here(self, cond: frozenset) -> frozenset:
        """``cond`` on the paths the code being emitted runs on only."""
        return simplified(frozenset(conj | self.context for conj in cond))

    def bind(self, var: str, path: tuple, text: str, out: list[Any]) -> None:
        """Make ``text`` the tangent of ``var``'s leaf ``path`` (named unless simple)."""
        join = self.join_names.get(var) if path == () else None
        if is_simple(text) and join is None:
            self.tan.setdefault(var, {})[path] = text
            return
        name = join or self.dot_name(var, path)
        out.append(Line(f"{name} = {text}"))
        self.owned.add(name)
        self.tan.setdefault(var, {})[path] = name

    # ---- building -----------------------------------------------------------------

    def build(self, name: str) -> str:
        nargs = len(self.fn.params) if self.spec.nargs is None else self.spec.nargs
        params, rest = list(self.fn.params[:nargs]), list(self.fn.params[nargs:])
        for i in self.spec.active:
            p = self.fn.params[i]
            dot = self.names.fresh(f"{p}_dot")
            params.append(dot)
            for path in leaf_paths(self.kind(p)):
                self.tan.setdefault(p, {})[path] = path_text(dot, path)
        body: list[Any] = []
        self.block(self.fn.body[:-1], body)
        ret = self.fn.body[-1]
        assert isinstance(ret, Return)
        result = ret.value
        self.settle(result, body)  # zeros where no tangent reached it
        if self.spec.has_aux:
            kind = self.kind(result.name) if isinstance(result, Var) else LEAF
            if not (isinstance(kind, Tree) and len(kind.keys) == 2
                    and kind.type in (tuple, list)):
                raise aux_error(kind)
            value, aux = path_text(result.name, (0,)), path_text(result.name, (1,))
            prod = self.facts.producer.get(result.name)
            if prod is not None and prod.prim in ("make_tuple", "make_list"):
                value, aux = atom_text(prod.args[0]), atom_text(prod.args[1])
            sub = kind.children[0]
            tangent = literal(sub, lambda p: self.slot(result.name, (0,) + p))
            ret_line = Line(f"return {value}, {tangent}, {aux}")
        elif self.spec.tangent_only:
            ret_line = Line(f"return {self.whole(result)}")
        else:
            value = atom_text(result)
            ret_line = Line(f"return {value}, {self.whole(result)}")
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
            self.call(s, out)
            return
        out += self.replay.statements([s])  # the primal statement, as the user wrote it
        if self.structural(self.LIST_OPS, s, out):
            return
        if s.target not in self.facts.active or not self.facts.is_active(s):
            return
        if not self.structural(self.CONTAINER_OPS, s, out):
            self.rules.inline(s, out)

    def pop(self, s: Let, out: list[Any]) -> None:
        """The tangent list loses its last item too."""
        current = self.tan.get(s.args[0].name, {}).get(())
        if current is not None:
            out.append(Line(f"{current}.pop()", keep=True))
            self.tan[s.target] = {(): current}

    def seq_item(self, s: Let, out: list[Any]) -> bool:
        """An item of a list grown in a loop: its tangents."""
        if not isinstance(self.kind(s.args[0].name), Seq):
            return False
        current = self.tan.get(s.args[0].name, {}).get(())
        if current is not None:
            index = atom_text(s.params["index"])
            name = self.dot_name(s.target)
            out.append(Line(f"{name} = {current}[{index}]"))
            for path in leaf_paths(self.kind(s.target)):
                self.tan.setdefault(s.target, {})[path] = path_text(name, path)
        return True

    def identity(self, s: Let, out: list[Any]) -> None:
        for path in list(self.tan.get(s.args[0].name, {})):
            self._routed(s.args[0].name, path, s.target, path)

    def container(self, s: Let, out: list[Any]) -> None:
        kind = self.facts.stmt_kind(s)  # (a join the other path grows: known here)
        assert isinstance(kind, Tree)
        for key, a in zip(kind.keys, s.args):
            if self.is_active(a):
                for path in list(self.tan.get(a.name, {})):
                    self._routed(a.name, path, s.target, (key,) + path)

    def tree_item(self, s: Let, out: list[Any]) -> bool:
        base = s.args[0]
        if not isinstance(self.kind(base.name), Tree):
            return False
        key = self.facts.container_key(s, self.kind(base.name))
        for path in list(self.tan.get(base.name, {})):
            if path[:1] == (key,):
                self._routed(base.name, path, s.target, path[1:])
        return True

    def setitem(self, s: Let, out: list[Any]) -> None:
        """``y[i] = v``: the tangent buffer gets ``v``'s tangent (or 0) at ``i``."""
        if s.target not in self.facts.active:
            return
        base, value = s.args
        self.settle(base, out)
        self.settle(value, out)
        name = self.buffer_name(s.target)
        current = self.tan.get(base.name, {}).get(()) if isinstance(base, Var) else None
        if current is None:
            out.append(Line(f"{name} = np.zeros_like({atom_text(base)})"))
        elif current != name or name not in self.owned:
            out.append(Line(f"{name} = np.copy({current})"))
        self.owned.add(name)
        index = atom_text(s.params["index"])
        written = self.whole(value) if self.is_active(value) else "0.0"
        out.append(Line(f"{name}[{index}] = {written}", keep=True))
        self.tan[s.target] = {(): name}

    def append(self, s: Let, out: list[Any]) -> None:
        """``ys.append(v)``: a list of known length gets a slot; a grown one a list."""
        if s.target not in self.facts.active:
            return
        base, item = s.args
        self.settle(base, out)
        self.settle(item, out)
        kind = self.kind(s.target)
        if isinstance(kind, Tree):
            n = len(kind.keys) - 1
            for path, text in self.tan.get(base.name, {}).items():
                self.tan.setdefault(s.target, {})[path] = text
            if self.is_active(item):
                for path, text in self.tan.get(item.name, {}).items():
                    self.tan.setdefault(s.target, {})[(n,) + path] = text
            return
        name = self.buffer_name(s.target)
        current = self.tan.get(base.name, {}).get(())
        if current is None and isinstance(self.kind(base.name), Tree):
            # a list of known length grown from here on (the other path of an `if`
            # grows it in a loop): its items' tangents, as a list
            out.append(Line(f"{name} = {self.whole(base)}"))
        elif current is None:
            out.append(Line(f"{name} = {self.zeros(base.name)}"))
        elif current != name or name not in self.owned:
            out.append(Line(f"{name} = list({current})"))
        self.owned.add(name)
        out.append(Line(f"{name}.append({self.whole(item)})", keep=True))
        self.tan[s.target] = {(): name}

    def call(self, s: Let, out: list[Any]) -> None:
        """A call to a user function: its own emitted JVP, returning both values."""
        if "custom" in s.params:
            self.custom_call(s, out)
            return
        callee = callee_of(s)
        for a in s.args:
            self.settle(a, out)
        kinds = tuple(self.kind(a.name) if isinstance(a, Var) else LEAF for a in s.args)
        positions = tuple(i for i, a in enumerate(s.args) if self.is_active(a))
        jvp_name = callee_jvp(callee, positions, kinds, self.module)
        args = [atom_text(a) for a in s.args] + [self.whole(s.args[i]) for i in positions]
        dot = self.dot_name(s.target)
        out.append(Line(f"{s.target}, {dot} = {jvp_name}({', '.join(args)})"))
        self.owned.add(dot)
        for path in leaf_paths(self.kind(s.target)):
            self.tan.setdefault(s.target, {})[path] = path_text(dot, path)

    def custom_call(self, s: Let, out: list[Any]) -> None:
        """A ``custom_jvp`` function: its rule, called by name, gives both values."""
        custom = s.params["custom"]
        if isinstance(custom, custom_vjp):
            raise CustomRuleError(
                "can't apply forward-mode autodiff (jvp) to a custom_vjp function.",
                s.loc, "define the function with s2s.custom_jvp to use forward mode",
            )
        try:
            rule = custom.rule_for_transform()
        except AttributeError as err:
            raise MissingRuleError(str(err), s.loc, "define its rule with @f.defjvp") from None
        name = bind_object(self.module, rule.__name__, checked_jvp(rule, rule.__name__),
                           f"{custom.__name__}_jvp")
        nondiff = [atom_text(a) for i, a in enumerate(s.args) if i in custom.nondiff_argnums]
        diff = [a for i, a in enumerate(s.args) if i not in custom.nondiff_argnums]
        for a in diff:
            self.settle(a, out)
        primals = tuple_text([atom_text(a) for a in diff])
        tangents = tuple_text([self.whole(a) for a in diff])
        dot = self.dot_name(s.target)
        out.append(Line(f"{s.target}, {dot} = {name}({', '.join(nondiff + [primals, tangents])})"))
        self.owned.add(dot)
        for path in leaf_paths(self.kind(s.target)):
            self.tan.setdefault(s.target, {})[path] = path_text(dot, path)

    def if_(self, s: If, out: list[Any]) -> None:
        before = {k: dict(v) for k, v in self.tan.items()}
        owned_before = set(self.owned)
        outer_context, outer_when = self.context, self.when
        joins = [j for j in s.joins if j in self.facts.active]
        reserved = [j for j in joins if j not in self.join_names and not isinstance(
            self.kind(j), Tree)]
        for j in reserved:  # the branches bind the join's tangent under one name
            # (an array or list written in place: its tangent buffer's one name, which
            # writes and appends in the branches use too; a copy would be an alias)
            self.join_names[j] = self.buffer_name(j) if j in self.fn.aliases \
                else self.dot_name(j)
        test = atom_text(s.test)
        branches: list[tuple[list[Any], dict[str, Slots], set[str], dict, frozenset]] = []
        for way, stmts in ((True, s.body), (False, s.orelse)):
            literal = self.facts.path_literal(test, way)
            self.context = outer_context | {literal}
            self.tan, self.when = self._enter_branch(before, outer_when)
            self.owned = set(owned_before)
            items: list[Any] = []
            self.block(stmts, items)
            branches.append((items, self.tan, self.owned, self.when, self.context))
        self.tan, self.context = before, outer_context
        self.when = dict(outer_when)
        self.owned = branches[0][2] & branches[1][2]
        for j in joins:
            for path in leaf_paths(self.kind(j)):
                texts = [self._joined_text(s, k, j, path, b[1]) for k, b in enumerate(branches)]
                conds = [frozenset() if t is None else frozenset(
                    c | b[4] for c in b[3].get((j, path)) or {frozenset()})
                    for t, b in zip(texts, branches)]
                union = simplified(conds[0] | conds[1])
                unbound = isinstance(self.kind(j), type(LEAF)) and path == () and (
                    j not in self.fn.aliases)  # (a buffer's, a list's: zeros there)
                if unbound and within(union, self.context) is not None:
                    self.when[(j, path)] = union
                else:
                    self.when.pop((j, path), None)
                if texts[0] == texts[1] and texts[0] is not None:
                    self.tan.setdefault(j, {})[path] = texts[0]
                    continue
                if not unbound:  # zeros where unbound in a branch, as before
                    for b in branches:
                        self._settle_in(b, j, path)
                    texts = [self._joined_text(s, k, j, path, b[1])
                             for k, b in enumerate(branches)]
                name = self.join_names.get(j) or self.dot_name(j, path) if path == () \
                    else self.dot_name(j, path)
                own = j in self.fn.aliases  # the join's buffer: is it ours on every path?
                for (items, tan, owned, when, context), text in zip(branches, texts):
                    if text == name:
                        own = own and name in owned
                    elif text is None and unbound:  # no tangent here: a structural zero
                        self.holes.setdefault(name, []).append((items, self.zeros(j, path)))
                    elif text is None or text.startswith("["):  # zeros, or a new list
                        items.append(Line(f"{name} = {text or self.zeros(j, path)}"))
                    else:
                        here = when.get((j, path))
                        copy = decided(None if here is None else within(here, context),
                                        context, lambda holds, t=text: [
                                            Line(f"{name} = {t}")] if holds else [],
                                        self.facts.test_order)
                        self._holes_in(copy, name, self.zeros(j, path))
                        items += copy
                        own = False
                self.tan.setdefault(j, {})[path] = name
                if own:
                    self.owned.add(name)
                else:
                    self.owned.discard(name)
        for j in reserved:
            del self.join_names[j]
        out.append(Block(f"if {test}:", branches[0][0], branches[1][0]))

    def _holes_in(self, items: list[Any], name: str, zeros: str) -> None:
        """The paths of ``items`` (`if`s binding ``name`` on some paths) binding it
        nothing: where settle() puts its zeros."""
        for item in items:
            if isinstance(item, Block) and not item.is_loop:
                for code in (item.body, item.orelse):
                    if not code:
                        self.holes.setdefault(name, []).append((code, zeros))
                    else:
                        self._holes_in(code, name, zeros)

    def _enter_branch(self, tan: dict[str, Slots], when: dict) -> tuple[dict, dict]:
        """The tangents as a branch sees them (see reverse_branches' _enter_branch)."""
        state = {k: dict(v) for k, v in tan.items()}
        inside: dict[tuple[str, tuple], frozenset] = {}
        for (var, path), cond in when.items():
            here = within(cond, self.context)
            if here is None:
                continue
            if not here:
                state.get(var, {}).pop(path, None)
            else:
                inside[(var, path)] = here
        return state, inside

    def _settle_in(self, branch: tuple, j: str, path: tuple) -> None:
        """settle() of one leaf at the end of a branch already emitted."""
        items, tan, _, when, context = branch
        saved = self.tan, self.when, self.context
        self.tan, self.when, self.context = tan, when, context
        try:
            cond = self.cond(j, path)
            if cond is not None and j in tan:
                text = tan[j][path]
                name = text if text.isidentifier() else self.dot_name(j, path)
                zeros = self.zeros(j, path)
                items += decided(cond, context, lambda holds: (
                    [Line(f"{name} = {text}")] if holds and text != name
                    else [] if holds else [Line(f"{name} = {zeros}")]), self.facts.test_order)
                tan[j][path] = name
                when.pop((j, path), None)
        finally:
            self.tan, self.when, self.context = saved

    def _joined_text(self, s: If, k: int, j: str, path: tuple, tan: dict[str, Slots]) -> str | None:
        """The tangent of join ``j``'s leaf ``path`` where branch ``k`` ends.  A list the
        branch built of known length (``ys = [a]``) joined with one grown in a loop on
        the other path is a grown list after the `if`: its tangent, a list literal."""
        text = tan.get(j, {}).get(path)
        if text is None and path == () and isinstance(self.kind(j), Seq):
            kind = self.facts.branch_kinds.get((id(s), k), {}).get(j)
            return self._list_of_slots(j, kind, tan.get(j, {}))
        return text

    def _list_of_slots(self, var: str, kind: Kind | None, slots: Slots) -> str | None:
        """The tangent of a grown list (``Seq``: one list of its items' tangents) where
        ``var`` still holds a list of known length, whose tangents are slots (``ys =
        [a]``, then ``ys.append(v)`` in a loop): the slots as a list literal."""
        if not slots or () in slots:
            return None
        if not isinstance(kind, Tree):
            kind = self._known_list(var)
        if not isinstance(kind, Tree):
            return None
        return literal(kind, lambda p: slots.get(p) or self.zeros(var, p))

    def _known_list(self, var: str) -> Kind | None:
        """The known-length structure of the list ``var`` names before it grows (its
        kind is the grown list's, ``Seq``): the list literal's that made it."""
        seen: set[int] = set()
        s = self.facts.producer.get(var)
        while s is not None and id(s) not in seen:
            seen.add(id(s))
            kind = self.facts.stmt_kind(s)
            if isinstance(kind, Tree):
                return kind
            if s.prim != "identity" or not isinstance(s.args[0], Var):
                return None
            s = self.facts.producer.get(s.args[0].name)
        return None

    def for_(self, s: For, out: list[Any]) -> None:
        all_carried = effective_carried(s)
        carried = [(e, x) for e, x in all_carried if e in self.facts.active or x in self.facts.active]
        written = {self.root(t.args[0].name) for t in walk(s.body)
                   if isinstance(t, Let) and t.prim in ("setitem", "append")
                   and isinstance(t.args[0], Var)}
        names: dict[str, Slots] = {}
        for entry, _ in carried:  # carried on from iteration to iteration: everywhere
            self.settle(Var(entry), out)
        for entry, _ in carried:
            names[entry] = {}
            for path in leaf_paths(self.kind(entry)):
                current = self.tan.get(entry, {}).get(path)
                in_place = path == () and self.root(entry) in written
                name = self.buffer_name(entry) if in_place else self.dot_name(entry, path)
                if current is not None and isinstance(self.kind(entry), Seq) \
                        and not in_place:
                    name = current  # a list's tangents: one list, changed in place too
                start = self._list_of_slots(entry, None, self.tan.get(entry, {})) if (
                    current is None and isinstance(self.kind(entry), Seq)) else None
                if start is not None:  # a list of known length, grown from here on
                    out.append(Line(f"{name} = {start}"))
                elif current is None:
                    out.append(Line(f"{name} = {self.zeros(entry, path)}"))
                elif in_place and (current != name or name not in self.owned):
                    copy = "list" if isinstance(self.kind(entry), Seq) else "np.copy"
                    out.append(Line(f"{name} = {copy}({current})"))
                elif current != name:
                    out.append(Line(f"{name} = {current}"))
                if in_place or current is None:
                    self.owned.add(name)
                names[entry][path] = name
                self.tan.setdefault(entry, {})[path] = name
        self.loop_names.append(names)
        holes_before = {k: list(v) for k, v in self.holes.items()}
        body: list[Any] = []
        self.block(s.body, body)
        for _, exit_ in carried:
            self.settle(Var(exit_), body)
        self.loop_names.pop()
        inside = {t.target for t in walk(s.body) if isinstance(t, Let)}
        for key in [k for k in self.when if k[0] in inside]:  # (one iteration's)
            del self.when[key]
        self.holes = {k: v for k, v in holes_before.items() if k in self.holes}
        body += [Line(f"{e} = {x}") for e, x in s.carried]
        body += parallel_copies(self.names.fresh, [
            (name, self.slot(exit_, path)) for entry, exit_ in carried
            for path, name in names[entry].items()])
        for entry, _ in carried:
            for path, name in names[entry].items():
                self.tan[entry][path] = name
        for entry, _ in carried:
            for name in names[entry].values():
                if name not in self.buffer_names.values():
                    self.owned.discard(name)
        if s.test is None:
            out.append(Block(f"for {s.target} in {self.replay.range_text(s)}:", body, []))
        else:
            out.append(Block(f"while {atom_text(s.test)}:", body, []))

    def break_(self, s: Break, out: list[Any]) -> None:
        """Leaving early: each carried tangent gets its value here, as the back edge would.

        ``s.copies`` names the primal's values where the break is; a value only a nested
        loop updates (``effective_carried``'s ``(s, s)``) is not among them, as the
        nested loop leaves it under its entry name, but its tangent is under the nested
        loop's own name (``s_dot_2``) and must be copied to this loop's one too.
        """
        names = self.loop_names[-1] if self.loop_names else {}
        held = dict(s.copies)
        for entry, _ in names.items():
            self.settle(Var(held.get(entry, entry)), out)
        for entry, name in s.copies:
            if entry != name:
                out.append(Line(f"{entry} = {name}"))
        out += parallel_copies(self.names.fresh, [
            (dot, self.slot(held.get(entry, entry), path))
            for entry, dots in names.items() for path, dot in dots.items()])
        out.append(Line("break", keep=True))


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

