"""The user's forward computation as emitted code, and the helpers of emission that
reverse mode, forward mode, vmap and checkpointing share.

``Replay`` spells statements as the user wrote them (reverse mode's forward sweep,
vmap's statements that need no rule, checkpoint's recomputed segments); the tapes,
saved elements and copies it emits are what reverse mode asked of it.
"""

from __future__ import annotations

import ast
import copy
import re
from typing import Any

from .. import syntax
from ..emit.code import Block, Line
from ..errors import TransformError
from ..ir.kinds import Tree
from ..ir.nodes import KEYWORD_OPERANDS, Break, Const, For, If, Index, Let, Stmt, Var, walk
from ..ir.spelling import atom_text
from ..ir.walk import loop_breaks, loop_counter
from ..primitives import PRIMITIVES
from .analysis import Facts


class Replay:
    """Emits the forward statements of the function ``facts`` describes."""

    def __init__(self, facts: Facts, effects: bool = True) -> None:
        self.facts = facts
        self.saved: dict[int, str] = {}  # id(setitem statement) -> its overwritten elements
        # saved names that may be views of an array the loop writes into: the tape
        # holds copies (the code stays re-transformable; see reverse_tapes' view_of_written)
        self.view_copies: set[str] = set()
        self.tapes: dict[int, tuple[str, list[str]]] = {}  # id(block) -> tape, names
        self.checkpointed: dict[int, Any] = {}  # id(For) -> its segments (checkpoint.py)
        # kept statements (assert, print) run here; a second run of the same forward
        # values (a recomputed segment, vmap's probe, a callee's vjp) leaves them out
        self.effects = effects
        self.redraw = False  # vmap's probe runs draws again, the random state restored
        self.remade: set[str] = set()  # generators from a literal seed, made in this run

    def statements(self, stmts: list[Stmt]) -> list[Any]:
        """The user's computation as emitted code; loops push what the backward needs."""
        out: list[Any] = []
        for s in stmts:
            if isinstance(s, Let) and s.prim in ("setitem", "add_at"):
                base, index = atom_text(s.args[0]), atom_text(s.params["index"])
                if id(s) in self.saved:
                    out.append(Line(f"{self.saved[id(s)]} = np.copy({base}[{index}])"))
                out.append(Line(spell(s), keep=True))
            elif isinstance(s, Let) and s.prim in ("append", "pop"):
                out.append(Line(spell(s), keep=True))
            elif isinstance(s, Let) and s.prim == "draw":
                out.append(self.draw(s))
            elif isinstance(s, Let) and s.prim == "kept":
                if self.effects or s.params.get("always"):  # (a guard: every run)
                    out.append(kept_item(s, [atom_text(a) for a in s.args]))
            elif isinstance(s, Let) and s.prim == "call" and self.effects and has_effects(
                    s.params.get("callee")):  # (its prints run once, here)
                out.append(Line(f"{s.target} = {spell(s)}", keep=True))
            elif isinstance(s, Let) and s.target in self.view_copies:  # (a view the tape keeps)
                out.append(Line(f"{s.target} = np.copy({spell(s)})"))
            elif isinstance(s, Let):
                out.append(Line(f"{s.target} = {spell(by_field(s, self.facts))}"))
            elif isinstance(s, If):
                branches = []
                for branch in (s.body, s.orelse):
                    branches.append(self.block(branch))
                out.append(Block(f"if {atom_text(s.test)}:", *branches))
            elif isinstance(s, For) and id(s) in self.checkpointed:
                out += self._segmented(s)
            elif isinstance(s, For):
                body = self.block(s.body)
                body += [Line(f"{entry} = {exit_}") for entry, exit_ in s.carried]
                counter = loop_counter(s)
                if counter is not None:  # count the iterations: the backward runs as many
                    out.append(Line(f"{counter} = 0"))
                    body.insert(0, Line(f"{counter} = {counter} + 1"))
                if s.test is None:
                    out.append(Block(f"for {s.target} in {self.range_text(s)}:", body, []))
                else:
                    out.append(Block(f"while {atom_text(s.test)}:", body, []))
            elif isinstance(s, Break):
                out += [Line(f"{e} = {n}") for e, n in s.copies if e != n]
                out.append(Line("break", keep=True))
        return out

    def draw(self, s: Let) -> Line:
        """A random draw, run once per call; a run of the same values again (a
        callee's vjp, a checkpointed loop's segments) would draw other numbers."""
        if not self.effects and not self.redraw and not self.repeatable(s):
            raise TransformError(
                "a random draw where s2s runs the forward computation a second time "
                "(the VJP of a function the differentiated one calls, s2s.vjp's vjp_fn, "
                "a checkpointed loop's recomputed segments): it would draw other numbers "
                "than the forward did, and the derivative would be wrong", s.loc,
                "draw in the function you differentiate and pass the draws in as "
                "arguments (`noise = np.random.normal(size=n)`, then `helper(x, noise)`), "
                "or draw from a generator made there with a literal seed "
                "(`rng = np.random.default_rng(0)`, then `rng.normal(size=n)`)"
            ).with_func(self.facts.fn.name)  # (the function whose code holds the draw)
        return Line(f"{s.target} = {spell(s)}", keep=True)

    def repeatable(self, s: Let) -> bool:
        """Does a second run draw the numbers the first did: a generator made from a
        literal seed (``np.random.default_rng(0)``), or a draw of one made so in this
        same run (not before a checkpointed loop, whose segments run again)?"""
        if s.params.get("maker"):
            if not literal_seeded(s):
                return False  # (no seed, `None`, an argument: another stream)
            self.remade.add(s.target)
            return True
        generator = drawn_from(s)
        return generator is not None and generator.name in self.remade

    def block(self, stmts: list[Stmt]) -> list[Any]:
        """A block's forward code, pushing what its backward reads before it can leave."""
        k = leave_point(stmts)
        head, tail = self.statements(stmts[:k]), self.statements(stmts[k:])
        if id(stmts) in self.tapes:
            tape, names = self.tapes[id(stmts)]
            head.append(Line(f"{tape}.append({tape_tuple_text(names, pack=True)})", keep=True))
        return head + tail

    def range_text(self, s: For, backward: bool = False) -> str:
        """``range(...)`` spelled with its bounds (``range(len(x))`` for arrays), in
        ``reversed(...)`` when the loop walks it from its end; ``backward=True`` spells
        the opposite walk, for the backward sweep."""
        prod = self.facts.producer[s.iter.name]
        walks_back = prod.prim == "reversed"
        if walks_back:
            prod = self.facts.producer[prod.args[0].name]
        parts = []
        for a in prod.args:
            inner = self.facts.producer.get(a.name) if isinstance(a, Var) else None
            # (`len(hs)` of a list that grows or shrinks later is read where the loop
            # starts: the backward sweep runs after those changes)
            inline = inner is not None and inner.prim == "len" and not (
                isinstance(inner.args[0], Var) and _resized(self.facts.fn, inner.args[0].name))
            parts.append(spell(inner) if inline else atom_text(a))
        text = f"range({', '.join(parts)})"
        return f"reversed({text})" if walks_back != backward else text

    def _segmented(self, s: For) -> list[Any]:
        """The forward of a checkpointed loop (checkpoint.py): no tape; the carried
        values saved at the start of each segment."""
        seg = self.checkpointed[id(s)]
        body = self.without_tapes().block(s.body) + [
            Line(f"{entry} = {exit_}") for entry, exit_ in s.carried
        ]
        out: list[Any] = [seg.segment_line] if seg.segment_line is not None else []
        if seg.checkpoints is None:  # nothing to save: the segments only recompute
            return out + [Block(f"for {s.target} in {seg.plain}:", body, [])]
        outer = [
            Line(f"{seg.checkpoints}.append({tape_tuple_text(seg.entries, pack=True)})",
                 keep=True),
            seg.stop_line,
            Block(f"for {s.target} in {seg.inner}:", body, []),
        ]
        return out + [Block(f"for {seg.start} in {seg.starts}:", outer, [])]

    def quiet(self) -> Replay:
        """This replay leaving out kept statements: the same values run again."""
        other = copy.copy(self)
        other.effects = False
        other.remade = set()
        return other

    def without_tapes(self) -> Replay:
        """This replay saving nothing per iteration (a checkpointed loop's forward run);
        what it knows otherwise is shared."""
        other = copy.copy(self)
        other.tapes = {}
        return other


def literal_seeded(s: Let) -> bool:
    """Is ``s`` a generator's maker with a literal seed (``np.random.default_rng(0)``),
    whose stream is the same at every run?"""
    seeds = [text for _, text in s.params["parts"]]
    return bool(s.params.get("maker")) and not s.args and bool(seeds) and all(
        _int_literal(t) for t in seeds)


def drawn_from(s: Let) -> Var | None:
    """The generator a draw ``s`` is a method of (``rng`` of ``rng.normal(...)``)."""
    keys = s.params["keys"]
    if keys and s.params["func"].startswith(keys[0] + ".") and isinstance(s.args[0], Var):
        return s.args[0]
    return None


def _int_literal(text: str) -> bool:
    """``0``, ``(1, 2)``: a seed NumPy turns into the same stream every time."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return False
    items = value if isinstance(value, (tuple, list)) else (value,)
    return bool(items) and all(type(v) is int for v in items)


def kept_item(s: Let, args: list[str]) -> Any:
    """A kept statement over operands spelled ``args``: a line, or ``if test:`` over
    its ``raise``."""
    spelling = PRIMITIVES["kept"].spelling
    text = spelling(args, s.params)
    if "body" not in s.params:
        return Line(text, keep=True)
    return Block(text, [Line(spelling(args, {"template": s.params["body"]}), keep=True)], [])


def has_effects(fn: Any, seen: frozenset = frozenset()) -> bool:
    """Does ``fn`` (or a function it calls) hold a kept statement (assert, print)?"""
    if getattr(fn, "body", None) is None or id(fn) in seen:
        return False  # (a recursive call's marker: its function is the one walked)
    inner = seen | {id(fn)}
    return any(isinstance(s, Let) and (s.prim in ("kept", "draw") or (
        s.prim == "call" and has_effects(s.params.get("callee"), inner)))
        for s in walk(fn.body))


def leave_point(stmts: list[Stmt]) -> int:
    """Index of the first statement that may ``break`` out (else the block's end)."""
    for i, s in enumerate(stmts):
        if isinstance(s, Break) or (isinstance(s, If) and (loop_breaks(s.body) or loop_breaks(s.orelse))):
            return i
    return len(stmts)


def by_field(s: Let, facts: Facts) -> Let:
    """``p[0]`` of a NamedTuple held as the dict of its fields (a callee given one its
    caller built) read as its field, ``p["w"]``; any other statement as it is."""
    if s.prim != "getitem" or not isinstance(s.args[0], Var):
        return s
    base = facts.kinds.get(s.args[0].name)
    index = s.params.get("index")
    if not isinstance(base, Tree) or not base.positional or not isinstance(index, Index) \
            or len(index.items) != 1 or not isinstance(index.items[0], Const) or \
            type(index.items[0].value) is not int:
        return s
    key = facts.container_key(s, base)
    return Let(s.target, s.prim, s.args, {**s.params, "index": Index(
        (Const(key, repr(key)),), False, attribute=True)}, s.loc)


def spell(s: Let) -> str:
    """The forward expression of a statement, as the user would write it."""
    prim = PRIMITIVES[s.prim]
    args = [atom_text(a) for a in s.args]
    if s.prim == "kept":
        return prim.spelling(args, s.params)
    if s.prim == "call":  # (own_copy(a) where the callee writes into a)
        return prim.spelling(args, s.params)
    if s.prim in ("odeint", "odeint_adjoint", "odeint_tangent"):  # (params: the callee)
        return prim.spelling(args, s.params)
    if s.prim == "getitem":
        return f"{args[0]}[{atom_text(s.params['index'])}]"
    params = {k: atom_text(v) for k, v in s.params.items() if k != KEYWORD_OPERANDS}
    keywords = s.params.get(KEYWORD_OPERANDS, ())
    if keywords:  # operands passed by keyword are spelled by keyword
        args, tail = args[: len(args) - len(keywords)], args[len(args) - len(keywords):]
        params.update(zip(keywords, tail))
    if s.prim == "make_dict":
        return prim.spelling(args, {"keys": s.params["keys"]})
    if s.prim in ("pyexpr", "kept", "draw"):
        return prim.spelling(args, s.params)
    return prim.spelling(args, params)


def spell_buffers(items: list[Any], aliases: dict[str, str]) -> list[Any]:
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
            out.append(Block(sub(item.header), spell_buffers(item.body, aliases),
                             spell_buffers(item.orelse, aliases)))
        else:
            out.append(item)
    # `y = y` (a back edge between versions of one array) says nothing
    return [i for i in out if not (isinstance(i, Line) and _self_copy(i.text))]


def _self_copy(text: str) -> bool:
    left, _, right = text.partition(" = ")
    return bool(right) and left.strip() == right.strip() and left.isidentifier()


def dead_code(lines: list[Any], needed: set[str]) -> list[Any]:
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
                body = dead_code(item.body, set(inside))
                more = inside | uses_of(body)
                if more == inside:
                    break
                inside = more
            if body:
                needed |= inside | item.uses
                kept.append(Block(item.header, body, []))
        elif isinstance(item, Block):
            body = dead_code(item.body, needed)
            orelse = dead_code(item.orelse, needed)
            if body or orelse:
                needed |= item.uses
                if not body:
                    kept.append(Block(item.header.replace("if ", "if not ", 1), orelse, []))
                else:
                    kept.append(Block(item.header, body, orelse))
    kept.reverse()
    return kept


def uses_of(items: list[Any]) -> set[str]:
    found: set[str] = set()
    for item in items:
        if isinstance(item, Line):
            found |= item.uses
        elif isinstance(item, Block) and (item.body or item.orelse or item.is_loop):
            # (an `if` left empty reads nothing: tidy_replays drops it)
            found |= item.uses | uses_of(item.body) | uses_of(item.orelse)
    return found


def tape_tuple_text(names: list[str], pack: bool = False) -> str:
    """``a, b`` to unpack into, ``(a, b)`` to pack; one name is always ``(a,)``."""
    if len(names) == 1:
        return f"({names[0]},)"
    return "(" + ", ".join(names) + ")" if pack else ", ".join(names)


def parallel_copies(fresh: Any, pairs: list[tuple[str, str]]) -> list[Line]:
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
        read = {n.id for n in ast.walk(syntax.parse(text, mode="eval"))
                if isinstance(n, ast.Name)}
        if read & assigned:
            held = fresh(f"{name}_prev")
            before.append(Line(f"{held} = {text}"))
            text = held
        lines.append(Line(f"{name} = {text}"))
        assigned.add(name)
    return before + lines


def is_simple(text: str) -> bool:
    try:
        node = syntax.parse(text, mode="eval").body
    except SyntaxError:
        return False
    while isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        node = node.value
    return isinstance(node, ast.Name)


def paren(text: str) -> str:
    node = syntax.parse(text, mode="eval").body
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        return f"({text})"
    return text


def _resized(fn: Any, var: str) -> bool:
    """Does ``fn`` append to or pop from the list ``var`` names (any version)?"""
    root = fn.aliases.get(var, var)
    return any(isinstance(t, Let) and t.prim in ("append", "pop") and isinstance(
        t.args[0], Var) and fn.aliases.get(t.args[0].name, t.args[0].name) == root
        for t in walk(fn.body))
