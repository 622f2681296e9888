"""``s2s explain``: the stages of the pipeline, labelled, for teaching.

1. the source, as the user wrote it;
2. the normalised form: the IR (A-normal form: one primitive per statement, each name
   bound once), printed by :func:`format_ir` with each statement's primitive and line;
3. the forward sweep of the emitted gradient, and what it keeps for the backward sweep
   (values read by name, tapes pushed in loops, elements saved before overwriting);
4. the backward sweep: cotangents (``x_bar``) from the seed back to the arguments;
5. the optimised result: the emitted module after dead-code removal and black, with
   the forward statements that were dropped because nothing needed them.
"""

from __future__ import annotations

import ast
import re
import textwrap
from typing import Any

from ... import syntax
from ...frontend.normalize import normalize
from ...ir.nodes import Break, Const, For, Function, If, Let, Return, Stmt, Var, walk
from ...transforms.replay import spell
from .common import Derivation, Target, TransformChoice, derive, highlight_ansi

_IN_PLACE = {"setitem", "add_at", "append", "pop"}


def _atom(a: Any) -> str:
    if isinstance(a, Var):
        return a.name
    if isinstance(a, Const):
        return a.text
    return str(a)


def _lines_of(fn: Function) -> dict[str, int]:
    """name -> the user line that computes it."""
    return {s.target: s.loc.line for s in walk(fn.body)
            if isinstance(s, Let) and s.loc is not None}


def format_ir(fn: Function) -> str:
    """The normalised function, readable: ``target = expr    # prim, line N``."""
    where = _lines_of(fn)
    out: list[tuple[str, str]] = []

    def emit(stmts: list[Stmt], depth: int) -> None:
        pad = "    " * depth
        for s in stmts:
            if isinstance(s, Let):
                try:
                    expr = spell(s)
                except Exception:  # a primitive with no spelling: show it as a call
                    expr = f"{s.prim}({', '.join(_atom(a) for a in s.args)})"
                text = expr if s.prim in _IN_PLACE else f"{s.target} = {expr}"
                line = f", line {s.loc.line}" if s.loc is not None else ""
                if s.loc is not None and s.loc.line == fn.loc.line:
                    line = ", made by normalisation"
                out.append((pad + text, f"{s.prim}{line}"))
            elif isinstance(s, If):
                test = _atom(s.test)
                line = where.get(test, s.loc.line if s.loc else None)
                joins = f", joins {', '.join(s.joins)}" if s.joins else ""
                out.append((f"{pad}if {test}:", f"line {line}{joins}"))
                emit(s.body, depth + 1)
                if s.orelse:
                    out.append((f"{pad}else:", ""))
                    emit(s.orelse, depth + 1)
            elif isinstance(s, For):
                if s.test is not None:
                    head = f"while {_atom(s.test)}:"
                    note = f"counts iterations in {s.target}"
                else:
                    head = f"for {s.target} in {_atom(s.iter)}:"
                    note = ""
                carried = ", ".join(f"{a} <- {b}" for a, b in s.carried if a != b)
                if carried:
                    note = (note + "; " if note else "") + f"carried: {carried}"
                line = f"line {s.loc.line}" if s.loc else ""
                out.append((pad + head, ", ".join(x for x in (line, note) if x)))
                emit(s.body, depth + 1)
            elif isinstance(s, Break):
                out.append((pad + "break", ""))
            elif isinstance(s, Return):
                out.append((f"{pad}return {_atom(s.value)}", ""))

    params = ", ".join(fn.params + ([f"*, {', '.join(fn.kwonly)}"] if fn.kwonly else []))
    emit(fn.body, 1)
    width = min(max((len(t) for t, _ in out), default=0) + 2, 60)
    lines = [f"def {fn.name}({params}):"]
    lines += [f"{t:<{width}}# {c}" if c else t for t, c in out]
    if fn.aliases:
        lines.append("# in-place versions spelled with one name: "
                     + ", ".join(f"{k} is {v}" for k, v in fn.aliases.items()))
    return "\n".join(lines) + "\n"


def entry_function(text: str, name: str) -> list[str]:
    """The lines of ``def name`` in the module text (its body, unindented)."""
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(f"def {name}("))
    end = next((i for i in range(start + 1, len(lines))
                if lines[i] and not lines[i].startswith((" ", ")"))), len(lines))
    # the header may span lines (black splits long signatures)
    body_start = next(i for i in range(start, end) if lines[i].rstrip().endswith(":")) + 1
    return [ln[4:] if ln.startswith("    ") else ln for ln in lines[body_start:end]
            if ln.strip()]


def split_sweeps(body: list[str]) -> tuple[list[str], list[str]] | None:
    """Forward and backward halves of an emitted gradient: the backward starts at the
    seed (``out_bar = grad_seed(out)``)."""
    for i, ln in enumerate(body):
        if "grad_seed(" in ln and not ln.startswith(" "):
            return body[:i], body[i:]
    return None


def _names(lines: list[str]) -> tuple[set[str], set[str]]:
    tree = syntax.parse(textwrap.dedent("\n".join(lines)) or "pass")
    stores, loads = set(), set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            (loads if isinstance(n.ctx, ast.Load) else stores).add(n.id)
    return stores, loads


def saved_values(forward: list[str], backward: list[str], params: list[str]) -> dict[str, Any]:
    defined, _ = _names(forward)
    _, read = _names(backward)
    tapes = sorted({ln.strip().split(".append(")[0] for ln in forward
                    if ".append((" in ln or ".append(" in ln}
                   & {ln.split(" = ")[0] for ln in forward if ln.endswith(" = []")})
    pushes = [ln.strip() for ln in forward
              if any(ln.strip().startswith(f"{t}.append(") for t in tapes)]
    copies = [ln.strip() for ln in forward if "np.copy(" in ln and "_overwritten" in ln]
    pushed = {n for p in pushes for n in re.findall(r"\w+", p.split(".append(", 1)[1])}
    loop_vars = {ln.split()[1] for ln in forward if ln.lstrip().startswith("for ")}
    return {
        "by_name": sorted((defined & read) - set(tapes) - pushed - loop_vars),
        "arguments": [p for p in params if p in read],
        "tapes": pushes,
        "copies": copies,
    }


def dropped_statements(ir: Function, forward: list[str]) -> list[tuple[str, int | None]]:
    defined, _ = _names(forward) if forward else (set(), set())
    spelled = defined | {ir.aliases.get(n, n) for n in defined}
    out = []
    for s in walk(ir.body):
        if isinstance(s, Let) and s.prim not in _IN_PLACE:
            name = ir.aliases.get(s.target, s.target)
            if name not in spelled and s.target not in spelled:
                out.append((f"{s.target} = {spell(s)}", s.loc.line if s.loc else None))
    return out


def _section(title: str, text: str, color: bool, code: bool = True) -> str:
    bar = "=" * len(title)
    body = text.rstrip("\n") + "\n"
    if color and code:
        body = highlight_ansi(body)
    return f"{title}\n{bar}\n{body}\n"


def explain(target: Target, choice: TransformChoice, shapes: str | None = None,
            domain: str | None = None, seed: int = 0, batch: int = 4,
            color: str = "auto", example: str | None = None) -> str:
    import sys

    use_color = color == "always" or (color == "auto" and sys.stdout.isatty())
    d: Derivation = derive(target, choice, shapes, domain, seed, batch, example)
    ir = normalize(target.fn)
    src_lines, first = target.source()
    numbered = "\n".join(f"{first + i:>4}  {ln.rstrip()}" for i, ln in enumerate(src_lines))
    out = [f"s2s explain: {choice.describe(target.name)} "
           f"(example shapes: {', '.join(str(getattr(a, 'shape', ())) for a in d.args)})\n\n"]
    out.append(_section("1. Source", numbered, use_color, code=False))
    out.append(_section(
        "2. Normalised form (A-normal form: one primitive per statement, names bound once)",
        format_ir(ir), use_color))
    body = entry_function(d.text, d.entry)
    sweeps = split_sweeps(body) if choice.kind in ("grad", "value_and_grad") and \
        not choice.vmapped else None
    if sweeps is not None:
        forward, backward = sweeps
        saved = saved_values(forward, backward, list(ir.params))
        notes = ["# kept for the backward sweep:"]
        notes.append("#   values it reads by name (single assignment: no copies): "
                     + (", ".join(saved["by_name"]) or "none"))
        notes.append("#   arguments it reads: " + (", ".join(saved["arguments"]) or "none"))
        for p in saved["tapes"]:
            notes.append(f"#   pushed each iteration: {p}")
        for c in saved["copies"]:
            notes.append(f"#   saved before an in-place write: {c}")
        out.append(_section(f"3. Forward sweep (in {d.entry}) and what it saves",
                            "\n".join(forward + [""] + notes), use_color))
        out.append(_section(
            "4. Backward sweep (cotangents x_bar from the seed back to the arguments;"
            " # quotes the user line)",
            "\n".join(backward), use_color))
        dropped = dropped_statements(ir, forward)
    else:
        what = {"jvp": "forward mode computes each tangent (x_dot) right after its "
                       "value: there is no backward sweep"}.get(
            choice.kind or "", "this transform's emitted code is one batched function, "
                               "not split into sweeps")
        out.append(_section(f"3. Emitted code of {d.entry} ({what})", "\n".join(body),
                            use_color))
        out.append(_section("4. Backward sweep", f"(none: {what})", use_color, code=False))
        dropped = []
    final = d.text
    if dropped:
        final += "\n# dropped as dead code (nothing the result needs reads them):\n"
        final += "\n".join(f"#   {t}    (line {ln})" for t, ln in dropped) + "\n"
    out.append(_section(
        "5. Optimised result (dead code removed, formatted with black; the module s2s runs)",
        final, use_color))
    return "".join(out)


__all__ = ["explain", "format_ir", "entry_function", "split_sweeps", "saved_values"]
