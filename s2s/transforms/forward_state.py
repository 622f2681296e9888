"""Forward mode's shared state: the tangents one pass has bound, and where.

The collaborators of one pass (forward's ``_Forward``, which walks the statements,
and the branches, loops, buffers and calls it hands statements to) each hold this
object and reach what they share through it.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..emit.code import Line
from ..ir.kinds import LEAF, Kind, Seq, Tree, literal, path_text
from ..ir.nodes import Function, Stmt, Var
from ..ir.spelling import atom_text
from .analysis import facts
from .inline import Inliner
from .module import Module
from .paths import decided, simplified, within
from .replay import Replay, is_simple

Slots = dict[tuple, str]  # leaf path -> the text of that leaf's tangent


class ForwardState:
    """What the collaborators of one forward pass share: the function, its facts, the
    names and the replay of its statements; each value's tangents (``tan``: var ->
    leaf path -> the name or text that holds it), which tangent buffers the pass
    owns, and where each tangent is bound (structural zeros).  Its methods read a
    tangent, bind one, and bind one on every path."""

    def __init__(self, fn: Function, spec: Any, module: Module) -> None:
        self.fn = fn
        self.spec = spec  # (forward.ForwardSpec)
        self.module = module
        # the analysis reverse mode reads (activity, kinds, scalar facts) serves here
        self.facts = facts(fn, spec.arg_kinds, spec.active)
        self.replay = Replay(self.facts)
        self.names = module.names_for(fn)
        self.inliner = Inliner(self.names.fresh)
        self.tan: dict[str, Slots] = {}
        self.owned: set[str] = set()  # tangent buffers this function allocated
        self.buffer_names: dict[str, str] = {}  # array written in place -> its tangent
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

    def routed(self, source: str, spath: tuple, target: str, tpath: tuple) -> None:
        """``target``'s leaf gets ``source``'s tangent as it is (a copy, an item)."""
        self.tan.setdefault(target, {})[tpath] = self.tan[source][spath]
        cond = self.cond(source, spath)
        if cond is not None:  # (bound where the source is, on the paths this runs on)
            self.when[(target, tpath)] = self.here(cond)
        else:
            self.when.pop((target, tpath), None)

    def here(self, cond: frozenset) -> frozenset:
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

    # ---- lists of known length that grow ----------------------------------------

    def list_of_slots(self, var: str, kind: Kind | None, slots: Slots) -> str | None:
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


class Walk(Protocol):
    """The statement walk as its collaborators call it back (forward._Forward): a
    block's statements, each followed by its tangent's."""

    def block(self, stmts: list[Stmt], out: list[Any]) -> None: ...
