"""Lowering pass over module text: Python control flow as ``jax.lax`` control flow.

Under ``jax.jit`` a Python ``if``/``while`` on a traced value cannot run (JAX raises
``TracerBoolConversionError``).  The JAX backend rewrites each ``if``, ``for`` over a
``range`` and ``while`` of the emitted module into a call of
:mod:`s2s.backends.jax_control` (imported as ``lax``), with its blocks as nested
functions, innermost statements first::

    if sum_x_greater_0:                    def if_true():
        y_2 = np.sin(y)                        y_2 = np.sin(y)
    else:                          ->          return (y_2,)
        cos_y = np.cos(y)                  def if_false():
        y_2 = cos_y * 3                        cos_y = np.cos(y)
                                               y_2 = cos_y * 3
                                               return (y_2,)
                                           (y_2,) = lax.cond(sum_x_greater_0, if_true, if_false, ())

* a branch function takes the names the branch rebinds that were bound before the
  ``if`` (as operands) and returns the names it binds that code outside reads (None
  for a name only the other branch binds: emitted gradients read such a name only
  under the same test; :func:`~s2s.backends.jax_control.cond` puts zeros of the
  other branch's type there when the test is traced);
* ``for i in range(a, b, c)`` (or ``reversed(range(...))``) becomes
  ``lax.fori_loop(a, b, loop_body, carry)`` with ``loop_body(i, carry)``, the carry
  being the names the body rebinds that were bound before the loop and are read;
* a loop that appends to tapes (``tape.append(...)``, the forward pass of a
  gradient) or pops them (its backward pass) becomes ``lax.scan_range(...,
  push=(tape,), pop=(...))``: the body returns the entries it appended and receives
  the ones it popped, so it is pure and ``lax.scan`` stacks them;
* ``while test:`` becomes ``lax.while_loop(while_test, while_body, carry)``.

Appends and pops in an ``if``'s branches are hoisted: pops happen before the
``lax.cond`` (both branches see the entry), appends after it, each branch returning
its entry or None (the other branch's entry is filled with zeros when the test is
traced), so a tape receives one entry per iteration whichever branch ran.

Loops with ``break``/``continue`` are first rewritten with flags
(:mod:`s2s.backends.breaks`), and ``and``/``or``/``not`` of names become
``lax.and_``/``or_``/``not_``.  A statement the pass cannot express this way
(``return`` inside it, a write into a Python container, a list other than a tape
changed, a name bound on one path only and read later) stays Python, marked ``# stays Python:
<reason>`` on its first line; if its test is traced at run time, the backend's
:class:`~s2s.backends.TracedValueError` quotes that line.  The helpers decide at run
time: a concrete test or bound runs the Python way, exactly as the statement did.
"""

from __future__ import annotations

import ast
import re
import threading
from typing import Any

from .. import syntax
from .breaks import MARK, range_of, rewrite_jumps, shape_check
from .breaks import all_names as _all_names
from .control_reads import (
    GiveUp,
    Reading,
    assigned_in,
    code,
    functions_bound,
    loads,
    node_loads,
    parents_of,
    reset_memo,
    scan,
    tape_lists,
    tapes_in,
    target_names,
)

__all__ = ["lower_control", "LAX_IMPORT", "STAYS"]

LAX_IMPORT = "import s2s.backends.jax_control as lax"
STAYS = "# stays Python"

def lower_control(text: str, lax_name: str = "lax", user_code: bool = False) -> str:
    """``text`` with its ``if``/``for``/``while`` statements lowered (see above).

    Loops that ``break`` or ``continue`` are first rewritten with flags
    (:mod:`s2s.backends.breaks`); one that stays Python all the same is put back as
    it was, and the pass starts again, so what stays Python keeps its jumps.

    ``user_code``: the text is a user's function (``s2s.jit(f, backend="jax")`` of a
    plain function), not emitted code: a name one branch of an ``if`` rebinds keeps
    its value from before on the other path (emitted code's shortcut, None there,
    relies on the backward reading it only under the same test)."""
    _MODE.user_code = user_code
    # (the user's nested functions, not the helpers this pass writes: see loop_parts)
    _MODE.functions = set().union(*(functions_bound(f.body) for f in syntax.parse(text).body
                                    if isinstance(f, ast.FunctionDef))) if user_code else set()
    text = _peeks_as_pops(text)
    excluded: set[int] = set()
    try:
        while True:
            rewritten, flags = rewrite_jumps(text, excluded)
            out = _lower_pinned(rewritten, lax_name)
            stayed = {number for flag, number in flags.items()
                      if re.search(rf"{re.escape(MARK + flag)}\b.*{STAYS}", out)}
            if not stayed:
                return _lower_boolops(out, lax_name)
            excluded |= stayed
    finally:
        _MODE.user_code = False
        _MODE.functions = set()


_MODE = threading.local()


def _peek(s: ast.stmt) -> tuple[str, str] | None:
    """``v = tape[-1]`` -> ("v", "tape")."""
    if not (isinstance(s, ast.Assign) and len(s.targets) == 1
            and isinstance(s.targets[0], ast.Name) and isinstance(s.value, ast.Subscript)
            and isinstance(s.value.value, ast.Name)):
        return None
    index = s.value.slice
    if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub) and \
            isinstance(index.operand, ast.Constant) and index.operand.value == 1:
        return s.targets[0].id, s.value.value.id
    return None


def _bare_pop(s: ast.stmt, tape: str) -> bool:
    """``tape.pop()`` as a statement."""
    return (isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
            and isinstance(s.value.func, ast.Attribute) and s.value.func.attr == "pop"
            and isinstance(s.value.func.value, ast.Name)
            and s.value.func.value.id == tape and not s.value.args
            and not s.value.keywords)


def _peeks_as_pops(text: str) -> str:
    """``v = tape[-1]`` followed in its block by ``tape.pop()`` (the tape not read in
    between), as forward mode over a gradient writes its backward loops, becomes
    ``v = tape.pop()``: the same program, whose list is a tape to this pass."""
    tree = syntax.parse(text)
    reset_memo()  # node ids of this parse only
    edits: dict[int, str | None] = {}  # 0-based line -> new text, None: deleted
    for node in ast.walk(tree):
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            for k, s in enumerate(block):
                found = _peek(s) if isinstance(s, ast.stmt) else None
                if found is None or s.lineno != s.end_lineno:
                    continue
                name, tape = found
                for later in block[k + 1:]:
                    if _bare_pop(later, tape) and later.lineno == later.end_lineno:
                        line = s.lineno - 1
                        edits[line] = (" " * s.col_offset) + f"{name} = {tape}.pop()\n"
                        edits[later.lineno - 1] = None
                        break
                    if tape in node_loads(later) or name in assigned_in([later]):
                        break
    reset_memo()
    if not edits:
        return text
    lines = text.splitlines(keepends=True)
    return "".join(edits.get(k, line) or "" for k, line in enumerate(lines))


def _lower_boolops(text: str, lax_name: str) -> str:
    """``a and b``, ``a or b``, ``not a`` of names and constants (emitted code binds
    each operand first, so evaluating all of them changes nothing) as
    ``lax.and_(a, b)``, ``lax.or_(a, b)``, ``lax.not_(a)``: Python's own result on
    concrete values, ``jnp.where`` on the truth of a traced scalar."""
    tree = syntax.parse(text)
    if getattr(_MODE, "user_code", False):  # a user's tests: operands of any form
        return _lower_user_boolops(text, tree, lax_name)
    edits = []
    for fn in tree.body:
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for n in ast.walk(fn):
            if not isinstance(n, (ast.BoolOp, ast.UnaryOp)) or n.lineno != n.end_lineno:
                continue
            simple = (ast.Name, ast.Constant)
            if isinstance(n, ast.BoolOp) and all(isinstance(v, simple) for v in n.values):
                helper = "and_" if isinstance(n.op, ast.And) else "or_"
                operands = ", ".join(ast.unparse(v) for v in n.values)
            elif isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not) and \
                    isinstance(n.operand, simple):
                helper, operands = "not_", ast.unparse(n.operand)
            else:
                continue
            edits.append((n.lineno, n.col_offset, n.end_col_offset,
                          f"{lax_name}.{helper}({operands})"))
    return _with_edits(text, edits, lax_name)


def _with_edits(text: str, edits: list[tuple[int, int, int, str]], lax_name: str) -> str:
    """``text`` with each ``(line, start, end, new)`` span (one line, UTF-8 byte
    offsets) replaced, last first, and the lax import added where it is missing."""
    if not edits:
        return text
    lines = text.splitlines(keepends=True)
    for line, c0, c1, new in sorted(edits, reverse=True):
        raw = lines[line - 1].encode()
        lines[line - 1] = (raw[:c0].decode() + new + raw[c1:].decode())
    text = "".join(lines)
    return text if LAX_IMPORT.split(" as ")[0] in text else _add_import(text, lax_name)


_CMP = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==",
        ast.NotEq: "!=", ast.Is: "is", ast.IsNot: "is not", ast.In: "in",
        ast.NotIn: "not in"}


def _lower_user_boolops(text: str, tree: ast.Module, lax_name: str) -> str:
    """A user function's ``and``/``or``/``not`` (``if np.sum(y) < 1.0 and k >= 3:``)
    and chained comparisons (``0.0 < m < 1.0``: ``and_`` of each pair) as the helpers,
    operands of any form: a later operand of ``and``/``or`` is evaluated where a
    concrete first one does not decide (Python's short circuit: ``"k" in kw and
    kw["k"] > 0``), and always after a traced one (``jnp.where`` of both); the middle
    of a chain twice."""
    lines = text.splitlines(keepends=True)

    def segment(n: ast.AST) -> str:
        return lines[n.lineno - 1].encode()[n.col_offset:n.end_col_offset].decode()  # type: ignore[attr-defined]

    def lowered(n: ast.expr) -> str:
        if isinstance(n, ast.BoolOp):  # (later operands as thunks: Python's short
            helper = "and_then" if isinstance(n.op, ast.And) else "or_else"  # circuit)
            first, *rest = (lowered(v) for v in n.values)
            thunks = "".join(f", lambda: {v}" for v in rest)
            return f"{lax_name}.{helper}({first}{thunks})"
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not):
            return f"{lax_name}.not_({lowered(n.operand)})"
        if isinstance(n, ast.IfExp):  # `a if t else b`: Python's on a concrete `t`
            return (f"{lax_name}.choose({lowered(n.test)}, lambda: {lowered(n.body)}, "
                    f"lambda: {lowered(n.orelse)})")
        if _membership(n):  # `2.0 in x`: NumPy's any(x == 2.0) for an array
            test = f"{lax_name}.contains({segment(n.comparators[0])}, {segment(n.left)})"
            return f"{lax_name}.not_({test})" if isinstance(n.ops[0], ast.NotIn) else test
        if isinstance(n, ast.Compare) and len(n.ops) > 1:  # 0 < x < 1: each pair
            sides = [n.left, *n.comparators]
            pairs = [f"{segment(a)} {_CMP[type(op)]} {segment(b)}"
                     for a, op, b in zip(sides, n.ops, sides[1:])]
            return f"{lax_name}.and_({', '.join(pairs)})"
        return segment(n)

    edits = []
    done: set[int] = set()
    for n in ast.walk(tree):
        if id(n) in done or not (isinstance(n, ast.BoolOp) or (
                isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not)) or (
                isinstance(n, ast.Compare) and len(n.ops) > 1) or _membership(n)
                or isinstance(n, ast.IfExp)):
            continue
        done |= {id(m) for m in ast.walk(n)}
        if n.lineno != n.end_lineno:  # type: ignore[attr-defined]
            continue
        edits.append((n.lineno, n.col_offset, n.end_col_offset, lowered(n)))  # type: ignore[arg-type]
    return _with_edits(text, edits, lax_name)


def _membership(n: ast.AST) -> bool:
    return isinstance(n, ast.Compare) and len(n.ops) == 1 and isinstance(
        n.ops[0], (ast.In, ast.NotIn))


def _lower_pinned(text: str, lax_name: str) -> str:
    pinned: set[tuple[str, str, str]] = set()
    while True:
        out, pins = _lower_all(text, pinned, lax_name)
        if pins <= pinned:
            return out
        pinned |= pins  # start again, keeping these tapes' entries as Python does


def _lower_all(text: str, pinned: set, lax_name: str) -> tuple[str, set]:
    """One pass; ``pinned`` holds ``(function, kind, tape)`` for tapes a statement
    that stays Python touches: an ``if`` there appends on one path only (so no other
    ``if`` may pop that tape unconditionally), a loop there pushes and pops entries
    one by one (so no lowered loop may stack that tape's entries)."""
    pins: set[tuple[str, str, str]] = set()
    changed = False
    taken: set[str] | None = None
    tapes: dict[str, set[str]] = {}
    try:
        for _ in range(100000):
            reset_memo()
            tree = syntax.parse(text)
            if taken is None:
                taken = _all_names(tree)  # then only fresh() adds names
                tapes = {fn.name: tape_lists(fn) for fn in tree.body
                         if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))}
            lines = text.splitlines(keepends=True)
            found = [(fn, node) for fn in tree.body
                     if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
                     for node in _ready(fn, _innermost(fn, lines), lines)]
            if not found:
                break
            parents: dict[str, dict] = {}
            edits = []  # the innermost statements of this parse, in reading order
            for fn, node in sorted(found, key=lambda f: f[1].lineno):
                if fn.name not in parents:
                    parents[fn.name] = parents_of(fn)
                lowering = _Lowering(lines, fn, node, pinned, lax_name, taken,
                                     tapes.get(fn.name, set()), parents[fn.name])
                try:
                    edits.append(lowering.run())
                    changed = True
                except GiveUp as gave_up:
                    kind = "if" if isinstance(node, ast.If) else "loop"
                    pins |= {(fn.name, kind, t) for t in tapes_in([node])}
                    edits.append(_mark(lines, node, gave_up.reason))
            for first, last, new in reversed(edits):  # last first: earlier lines stay
                lines[first:last] = new
            text = "".join(lines)
    finally:
        reset_memo()
    if changed:
        text = _add_import(text, lax_name)
    return text, pins


def _add_import(text: str, lax_name: str) -> str:
    statement = LAX_IMPORT if lax_name == "lax" else f"{LAX_IMPORT[:-3]} as {lax_name}"
    match = re.search(r"^import .* as np\n", text, flags=re.M)
    if match is None:
        return statement + "\n" + text
    return text[:match.end()] + statement + "\n" + text[match.end():]


def _mark(lines: list[str], node: ast.stmt, reason: str) -> tuple[int, int, list[str]]:
    """The statement's first line with ``# stays Python: <reason>`` appended."""
    i = node.lineno - 1
    return i, i + 1, [f"{lines[i].rstrip(chr(10))}  {STAYS}: {reason}\n"]


def _is_construct(node: ast.AST) -> bool:
    return isinstance(node, (ast.If, ast.For, ast.While)) and not shape_check(node)


def _innermost(fn: ast.FunctionDef, lines: list[str]) -> list[ast.stmt]:
    """The control statements in ``fn`` not yet lowered or marked, with none inside."""
    out: list[ast.stmt] = []

    def visit(node: ast.AST) -> bool:
        inner = False
        for child in ast.iter_child_nodes(node):
            inner |= visit(child)
        if _is_construct(node) and STAYS not in lines[node.lineno - 1]:  # type: ignore[attr-defined]
            if not inner:
                out.append(node)  # type: ignore[arg-type]
            return True
        return inner

    visit(fn)
    return out


def _ready(fn: ast.FunctionDef, innermost: list[ast.stmt],
           lines: list[str]) -> list[ast.stmt]:
    """The innermost statements to lower in this round: those no earlier ``if`` or
    loop still to be lowered binds a name of.  A lowered statement's operands and
    carries are the names bound before it on every path; an earlier ``if`` binds a
    name on one path only until it is lowered (its ``lax.cond`` then binds it on both,
    zeros for the other).  Lowered in the same round, a later ``if`` saw that name as
    unbound and did not pass it in, and its branch read it as a local
    (UnboundLocalError in the lowered gradient of a program whose reverse sweep
    accumulates one cotangent across several ``if``s)."""
    pending = [n for n in ast.walk(fn) if _is_construct(n)
               and STAYS not in lines[n.lineno - 1]]  # type: ignore[attr-defined]
    out = []
    for node in innermost:
        mine = set(assigned_in([node]))
        if not any(e.end_lineno < node.lineno  # type: ignore[attr-defined]
                   and mine & set(assigned_in([e])) for e in pending):
            out.append(node)
    return out or innermost[:1]


def _tuple(names: list[str]) -> str:
    if not names:
        return "()"
    if len(names) == 1:
        return f"({names[0]},)"
    return ", ".join(names)


def _paren_tuple(items: list[str]) -> str:
    if len(items) == 1:
        return f"({items[0]},)"
    return "(" + ", ".join(items) + ")"


# ---- one statement -------------------------------------------------------------------


class _Lowering:
    def __init__(self, lines: list[str], fn: ast.FunctionDef, node: ast.stmt,
                 pinned: set, lax_name: str, taken: set[str], tapes: set[str],
                 parents: dict[int, tuple[ast.AST, list]]) -> None:
        self.lines = lines
        self.fn = fn
        self.node = node
        self.pinned = {t for f, kind, t in pinned if f == fn.name and kind == "if"}
        self.stacked_not = {t for f, _, t in pinned if f == fn.name}
        self.lax = lax_name
        self.taken = taken
        self.tapes = tapes - self.stacked_not
        self.all_tapes = tapes
        self.reads = Reading(fn, lines, lax_name, parents)  # (what it reads around it)

    def fresh(self, base: str) -> str:
        name, k = base, 2
        while name in self.taken:
            name, k = f"{base}_{k}", k + 1
        self.taken.add(name)
        return name

    def run(self) -> tuple[int, int, list[str]]:
        """``(first, last, lines)``: the statement's lines ``[first:last]`` lowered."""
        node = self.node
        first = self.lines[node.lineno - 1]
        if first[:node.col_offset].strip() or first.lstrip().startswith("elif"):
            raise GiveUp("an `elif` header (written `else:` then `if`, it is lowered)")
        if isinstance(node, ast.If):
            return self.lower_if(node)
        if isinstance(node, ast.For):
            return self.lower_for(node)
        return self.lower_while(node)  # type: ignore[arg-type]

    # ---- analysis ----------------------------------------------------------------
    # ---- text ---------------------------------------------------------------------

    def header_end(self, node: ast.stmt, after: ast.AST) -> int:
        """1-based number of the line holding the header's colon."""
        k = after.end_lineno  # type: ignore[attr-defined]
        while not code(self.lines[k - 1]).rstrip().endswith(":"):
            k += 1
        return k

    def region(self, first: int, last: int) -> list[str]:
        return list(self.lines[first - 1:last])

    def replace_statements(self, region_first: int, region: list[str],
                           edits: dict[int, str | None]) -> list[str]:
        """``region`` (lines from ``region_first``) with top-level statements replaced
        (keyed by id, looked up in ``self.stmt_of``; None deletes)."""
        out = list(region)
        for stmt, new in sorted(((s, n) for s, n in edits.items()),
                                key=lambda e: -self.stmt_of[e[0]].lineno):
            s = self.stmt_of[stmt]
            a, b = s.lineno - region_first, s.end_lineno - region_first  # type: ignore[operator]
            indent = " " * s.col_offset
            out[a:b + 1] = [] if new is None else [indent + new + "\n"]
        return out

    def hoist(self, blocks: list[list[ast.stmt]], where: str):
        """Per block: its top-level appends and pops, by list (see :meth:`effects`)."""
        self.stmt_of: dict[int, ast.stmt] = {}
        found = []
        for block in blocks:
            pushes, pops = self.reads.effects(block, where)
            found.append((pushes, pops))
        return found

    # ---- if -----------------------------------------------------------------------

    def lower_if(self, node: ast.If) -> tuple[int, int, list[str]]:
        blocks = [node.body, node.orelse]
        effects = self.hoist(blocks, "a branch")
        tapes = {t for p, q in effects for t in (*p, *q)}
        # a tape only a loop that stays Python pins (its entries go one by one) may
        # still be appended in a branch of an `if` in a loop whose jumps were
        # rewritten (the `if going:` guard holds the whole body): as a tape's, its
        # entry is hoisted after the lax.cond
        lists = tapes - (self.all_tapes - self.pinned if self.reads.in_rewritten_loop(node)
                         else self.tapes)
        if lists:
            raise GiveUp(f"`{sorted(lists)[0]}` (a list, not a tape) changed in a branch",
                          tapes)
        if tapes & self.pinned:
            raise GiveUp("its tapes are appended to on one path only elsewhere", tapes)
        before = self.reads.bound_before(node)
        assigned_t, assigned_f = assigned_in(node.body), assigned_in(node.orelse)
        assigned = assigned_t + [n for n in assigned_f if n not in assigned_t]
        outputs = [n for n in assigned if self.reads.live_after(node, n)]
        # operands: names a branch binds but may read (or return) before binding
        operands = [n for n in assigned if n in before and (any(
            n in own and (scan(block, n) == "read" or (
                n in outputs and scan(block, n) != "written"))
            for block, own in ((node.body, assigned_t), (node.orelse, assigned_f)))
            # bound before and read after, written on one path only: the other path
            # passes it through (its None slot would be filled with zeros)
            or (n in outputs and (n not in assigned_t or n not in assigned_f)))]
        if getattr(_MODE, "user_code", False) or self.reads.in_rewritten_loop(node):
            # user code; or the jumps' rewrite binds names (the flags, the values a
            # `break` path set) on one path only: the other path keeps their values
            operands = [n for n in assigned if n in before and (n in operands or (
                n in outputs and any(scan(b, n) != "written"
                                     for b in (node.body, node.orelse))))]
        push_tapes = [t for p, _ in effects for t in p]
        push_tapes = list(dict.fromkeys(push_tapes))
        pop_tapes = list(dict.fromkeys(t for _, q in effects for t in q))
        push_names = {t: self.fresh(f"{t}_pushed") for t in push_tapes}
        pop_names = {t: self.popped_name(t, [q for _, q in effects]) for t in pop_tapes}
        ind = " " * node.col_offset
        head = self.header_end(node, node.test)
        if node.orelse:
            else_line = self.find_else(node)
            regions = [(head + 1, else_line - 1), (else_line + 1, node.end_lineno)]
        else:
            regions = [(head + 1, node.end_lineno), None]
        names = [self.fresh("if_true"), self.fresh("if_false")]
        out: list[str] = [self.header_comment(node, head)]
        out += [f"{ind}{pop_names[t]} = {t}.pop()\n" for t in pop_tapes]
        for block, (pushes, pops), reg, name in zip(blocks, effects, regions, names):
            body_ind = " " * (block[0].col_offset if block else node.col_offset + 4)
            out.append(f"{ind}def {name}({', '.join(operands)}):\n")
            slots = []
            edits: dict[int, str | None] = {}
            self.tape_edits([(t, pushes.get(t)) for t in push_tapes], pops, push_names,
                            pop_names, edits, slots)
            if reg is not None:
                out += self.replace_statements(reg[0], self.region(*reg), edits)
            own = set(assigned_in(block)) | set(operands)
            # a name the other path binds: None here (zeros of its type when traced)
            results = [n if n in own else "None" for n in outputs] + slots
            out.append(f"{body_ind}return {_tuple(results)}\n")
        call = (f"{self.lax}.cond({self.segment(node.test)}, {names[0]}, {names[1]}, "
                f"{_paren_tuple(operands) if operands else '()'})")
        results = outputs + [push_names[t] for t in push_tapes]
        out.append(f"{ind}{_tuple(results)} = {call}\n" if results else f"{ind}{call}\n")
        out += [f"{ind}{t}.append({push_names[t]})\n" for t in push_tapes]
        return node.lineno - 1, node.end_lineno, out

    def popped_name(self, tape: str, pop_tables: list[dict]) -> str:
        """The name a hoisted ``tape.pop()`` binds: the statement's own, when it binds
        one name (and is the only pop of ``tape``), else a new one."""
        statements = [q[tape] for q in pop_tables if tape in q]
        if len(statements) == 1:
            target = statements[0].targets[0]
            if isinstance(target, ast.Name):
                return target.id
        return self.fresh(f"{tape}_popped")

    def header_comment(self, node: ast.stmt, head: int) -> str:
        """``# lowered: <the statement's first line>``, above its lowered form."""
        first = " ".join(line.strip() for line in self.lines[node.lineno - 1:head])
        first = first.split(f"  {STAYS}", 1)[0]
        return f"{' ' * node.col_offset}# lowered: {code(first).strip()}\n"

    def find_else(self, node: ast.If) -> int:
        start = node.body[-1].end_lineno  # type: ignore[attr-defined]
        for k in range(start + 1, node.orelse[0].lineno):
            line = self.lines[k - 1]
            if code(line).strip() == "else:" and \
                    len(line) - len(line.lstrip()) == node.col_offset:
                return k
        raise GiveUp("an `elif` header (written `else:` then `if`, it is lowered)")

    def segment(self, node: ast.AST) -> str:
        """The source text of ``node`` (ast offsets count UTF-8 bytes)."""
        l0, l1 = node.lineno - 1, node.end_lineno - 1  # type: ignore[attr-defined]
        c0, c1 = node.col_offset, node.end_col_offset  # type: ignore[attr-defined]
        if l0 == l1:
            return self.lines[l0].encode()[c0:c1].decode()
        return (self.lines[l0].encode()[c0:].decode() + "".join(self.lines[l0 + 1:l1])
                + self.lines[l1].encode()[:c1].decode())

    # ---- loops --------------------------------------------------------------------

    def loop_parts(self, node: ast.For | ast.While, where: str):
        if node.orelse:
            raise GiveUp("an `else:` on the loop")
        (pushes, pops), = self.hoist([node.body], where)
        # tapes first (stacked by a scan), then other lists (one entry per iteration)
        pushes = {t: pushes[t] for t in sorted(pushes, key=lambda t: t not in self.tapes)}
        for t, s in pushes.items():
            # the helper extends a list after the whole loop: a body that reads it
            # (``parts[-1]``) would see it as it was before the loop
            if s is not None and t not in self.tapes and t in loads(
                    [n for n in node.body if n is not s] + [s.value.args[0]]):
                raise GiveUp(f"the loop reads `{t}`, the list it appends to", [t])
        before = self.reads.bound_before(node)
        assigned = assigned_in(node.body)
        test = [node.test] if isinstance(node, ast.While) else []
        targets = target_names(node.target) if isinstance(node, ast.For) else []
        live = {n for n in assigned + targets if self.reads.live_after(node, n)}
        carry = [n for n in assigned if n in before and n not in targets and (
            n in live or n in loads(test) or scan(node.body, n) == "read")]
        for n in functions_bound(node.body) & getattr(_MODE, "functions", set()):
            if n in before or self.reads.live_after(node, n):  # (no JAX value)
                raise GiveUp(f"`{n}`, a function the loop's body binds, read after it "
                             "or in its next iteration")
        for n in assigned + targets:
            if n in live and n not in carry:
                raise GiveUp(f"`{n}` is read after the loop but not bound before it")
        going = self.reads.going_flag(node)
        if going is not None and going in assigned and going in before and \
                going not in carry:
            carry.append(going)  # the helper reads it: has the loop broken?
        return pushes, pops, carry
    def going_arg(self, node: ast.stmt, carry: list[str]) -> list[str]:
        """``going=k``: the helper stops (or masks) once ``carry[k]`` is False."""
        going = self.reads.going_flag(node)
        return [f"going={carry.index(going)}"] if going in carry else []

    def tape_edits(self, pushes: list[tuple[str, Any]], pops: dict, pushed_names: dict,
                   popped_names: dict, edits: dict[int, str | None], slots: list) -> None:
        """A scan's tapes: each pushed value is a slot of its output (the value's own
        name, or a name bound to it in place of the push; a missing push is None), and
        each popped target is bound from the name the scan hands in."""
        for t, s in pushes:
            if s is None:
                slots.append("None")
                continue
            value = s.value.args[0]
            self.stmt_of[id(s)] = s
            if isinstance(value, ast.Name) and not self.reads.rebound_after(s, value.id):
                slots.append(value.id)
                edits[id(s)] = None
            else:
                slots.append(pushed_names[t])
                edits[id(s)] = f"{pushed_names[t]} = {self.segment(value)}"
        for t, s in pops.items():
            self.stmt_of[id(s)] = s
            target = self.segment(s.targets[0])
            edits[id(s)] = None if target == popped_names[t] else \
                f"{target} = {popped_names[t]}"
    def body_text(self, node: ast.stmt, head: int, pushes: dict, pops: dict,
                  popped_names: dict, pushed_names: dict) -> tuple[list[str], list[str]]:
        edits: dict[int, str | None] = {}
        slots = []
        self.tape_edits(list(pushes.items()), pops, pushed_names, popped_names, edits,
                        slots)
        body = self.replace_statements(head + 1, self.region(head + 1, node.end_lineno),
                                       edits)
        return body, slots

    def lower_for(self, node: ast.For) -> tuple[int, int, list[str]]:
        if not isinstance(node.target, ast.Name):
            raise GiveUp("a loop target that is not one name")
        bounds = range_of(node.iter)
        if bounds is None:
            raise GiveUp("a loop over something other than a range")
        (start, stop, step), reverse = bounds
        pushes, pops, carry = self.loop_parts(node, "the loop body")
        ind = " " * node.col_offset
        body_ind = " " * node.body[0].col_offset
        head = self.header_end(node, node.iter)
        name = self.fresh("loop_body")
        popped_names = {t: self.popped_name(t, [pops]) for t in pops}
        pushed_names = {t: self.fresh(f"{t}_pushed") for t in pushes}
        body, slots = self.body_text(node, head, pushes, pops, popped_names, pushed_names)
        taped = bool(pushes or pops)
        i = node.target.id
        out = [self.header_comment(node, head),
               f"{ind}def {name}({i}, carry{', popped' if taped else ''}):\n"]
        if carry:
            out.append(f"{body_ind}{_tuple(carry)} = carry\n")
        if pops:
            out.append(f"{body_ind}{_tuple(list(popped_names.values()))} = popped\n")
        out += body
        if taped:
            out.append(f"{body_ind}return {_paren_tuple(carry) if carry else '()'}, "
                       f"{_paren_tuple(slots) if slots else '()'}\n")
        else:
            out.append(f"{body_ind}return {_paren_tuple(carry) if carry else '()'}\n")
        args = [self.segment(start) if start is not None else "0", self.segment(stop), name,
                _paren_tuple(carry) if carry else "()"]
        if step is not None:
            args.append(f"step={self.segment(step)}")
        if reverse:
            args.append("reverse=True")
        args += self.push_args(pushes) + self.going_arg(node, carry)
        if pops:
            args.append(f"pop={_paren_tuple(list(pops))}")
        helper = "scan_range" if taped else "fori_loop"
        call = f"{self.lax}.{helper}({', '.join(args)})"
        out.append(f"{ind}{_tuple(carry)} = {call}\n" if carry else f"{ind}{call}\n")
        return node.lineno - 1, node.end_lineno, out

    def push_args(self, pushes: dict) -> list[str]:
        """``push=`` for tapes (stacked by a scan), ``extend=`` for other lists (one
        entry per iteration, as the Python loop appends).  The body returns the
        entries in the order of ``pushes``, tapes first."""
        tapes = [t for t in pushes if t in self.tapes]
        lists = [t for t in pushes if t not in self.tapes]
        out = []
        if tapes:
            out.append(f"push={_paren_tuple(tapes)}")
        if lists:
            out.append(f"extend={_paren_tuple(lists)}")
        return out

    def lower_while(self, node: ast.While) -> tuple[int, int, list[str]]:
        pushes, pops, carry = self.loop_parts(node, "the loop body")
        if pops:
            raise GiveUp("a `while` loop that pops a tape", set(pops) | set(pushes))
        ind = " " * node.col_offset
        body_ind = " " * node.body[0].col_offset
        head = self.header_end(node, node.test)
        test_name, body_name = self.fresh("while_test"), self.fresh("while_body")
        pushed_names = {t: self.fresh(f"{t}_pushed") for t in pushes}
        body, slots = self.body_text(node, head, pushes, {}, {}, pushed_names)
        unpack = [f"{body_ind}{_tuple(carry)} = carry\n"] if carry else []
        out = [self.header_comment(node, head), f"{ind}def {test_name}(carry):\n", *unpack,
               f"{body_ind}return {self.segment(node.test)}\n",
               f"{ind}def {body_name}(carry):\n", *unpack, *body]
        carry_out = _paren_tuple(carry) if carry else "()"
        if pushes:
            out.append(f"{body_ind}return {carry_out}, {_paren_tuple(slots)}\n")
        else:
            out.append(f"{body_ind}return {carry_out}\n")
        args = [test_name, body_name, carry_out] + self.push_args(pushes) + \
            self.going_arg(node, carry)
        call = f"{self.lax}.while_loop({', '.join(args)})"
        out.append(f"{ind}{_tuple(carry)} = {call}\n" if carry else f"{ind}{call}\n")
        return node.lineno - 1, node.end_lineno, out
