"""``s2s html``: one self-contained page for reading a derivative against its function.

Left, the user's function; right, the emitted derivative, in blocks; below, the
computation graph (inline SVG, laid out here: one column per depth).  Every source
line, derivative block and graph node carries ``data-line``: hovering one highlights
the others of that line, clicking pins the highlight, and the panel names the
primitives of the line and shows the rules (VJP or JVP) inlined for them.

Provenance: emitted statements do not carry user line numbers, so they are derived
here (:func:`provenance`): a comment ``# <user line>`` heads each backward block; a
forward statement is placed by the IR statement (``Let.loc``) that binds the name it
defines; a statement with neither follows the one before it.
"""

from __future__ import annotations

import ast
import html
import inspect
import json
import re

from ... import syntax
from ...emit.highlight import CSS, classify, classify_lines
from ...frontend.normalize import normalize
from ...ir.nodes import For, Function, If, Let, Return, Var, walk
from ...primitives import PRIMITIVES
from .common import Derivation

_STRUCTURAL = {"identity", "make_tuple", "make_list", "make_dict", "range"}


def _ir_functions(fn: Function) -> list[Function]:
    """The function and, recursively, the user functions it calls."""
    out, todo, seen = [], [fn], set()
    while todo:
        f = todo.pop()
        if id(f) in seen:
            continue
        seen.add(id(f))
        out.append(f)
        for s in walk(f.body):
            if isinstance(s, Let) and s.prim == "call" and isinstance(s.params.get("callee"), Function):
                todo.append(s.params["callee"])
    return out


def name_lines(ir: Function) -> dict[str, int]:
    """Each IR name (and its in-place alias) -> the user line computing it (the first,
    for a name both branches of an `if` bind: :func:`provenance` tells them apart)."""
    return {n: found[0][0] for n, found in _definitions([ir]).items()}


Path = frozenset  # the branches a statement is on: {(test name, 0 body / 1 else), ...}


def _definitions(functions: list[Function]) -> dict[str, list[tuple[int, Path]]]:
    """Each IR name -> the user lines binding it, each with the branches it is on (an
    `if`'s join is bound on both paths, by two lines); in-place versions share them
    with the array's first name."""
    out: dict[str, list[tuple[int, Path]]] = {}

    def visit(stmts: list, path: Path, f: Function) -> None:
        for s in stmts:
            line = s.loc.line if getattr(s, "loc", None) is not None else None
            if isinstance(s, If):
                test = s.test.name if isinstance(s.test, Var) else None
                visit(s.body, path | {(test, 0)}, f)
                visit(s.orelse, path | {(test, 1)}, f)
                continue
            if line is None or line == f.loc.line:
                if isinstance(s, For):
                    visit(s.body, path, f)
                continue
            if isinstance(s, Let):
                out.setdefault(s.target, []).append((line, path))
            elif isinstance(s, For):
                out.setdefault(s.target, []).append((line, path))
                if s.iter is not None:
                    out.setdefault(s.iter.name, []).append((line, path))
                visit(s.body, path, f)

    for f in functions:
        visit(f.body, frozenset(), f)
        for k, v in f.aliases.items():
            if k in out and v not in out:
                out[v] = list(out[k])
    return out


def _if_lines(functions: list[Function]) -> dict[str, tuple[int, int | None]]:
    """Each `if`'s test name -> its user line and its ``else:``/``elif`` line (None
    where the user wrote none: an early ``return`` made the other branch)."""
    out: dict[str, tuple[int, int | None]] = {}
    for f in functions:
        for s in walk(f.body):
            if isinstance(s, If) and isinstance(s.test, Var) and s.loc is not None and (
                    s.loc.line != f.loc.line):  # (one normalization made: its test's line)
                out.setdefault(s.test.name, (s.loc.line, _else_line(f, s.loc.line)))
    return out


def _else_line(f: Function, if_line: int) -> int | None:
    """The user's ``else:`` (or ``elif``) line of the `if` on ``if_line``."""
    text = f.source_lines.get(if_line)
    if text is None:
        return None
    indent = len(text) - len(text.lstrip())
    n = if_line + 1
    while n in f.source_lines:
        line = f.source_lines[n]
        stripped = line.strip()
        n += 1
        if not stripped or stripped.startswith("#"):
            continue
        at = len(line) - len(line.lstrip())
        if at > indent:
            continue
        if at == indent and re.match(r"(else\s*:|elif\b)", stripped):
            return n - 1
        return None
    return None


def _chosen(found: list[tuple[int, Path]], where: set) -> int:
    """The line among a name's definitions on the branches ``where`` the emitted line
    is (the most specific that fits), else its first."""
    fits = [(len(p), line) for line, p in found if all(
        t is None or b in where for t, b in ((t, (t, b)) for t, b in p))]
    return max(fits, key=lambda x: x[0])[1] if fits else found[0][0]


def _defines(text: str) -> list[str]:
    try:
        tree = syntax.parse(text.strip().rstrip(":") + (":\n    pass" if text.rstrip().endswith(":") else ""))
    except SyntaxError:
        return []
    names = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            names.append(n.id)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and \
                n.func.attr in ("append", "pop") and isinstance(n.func.value, ast.Name):
            names.append(n.func.value.id)
    return names


# an `if`'s join in a branch: the name each path leaves a value under (zeros, a copy)
_JOIN = re.compile(r"^\w+ = (np\.zeros_like\([^()]*\)|zeros_list\([^()]*\)|\w+)$")
_IF = re.compile(r"^if (not )?(\w+):$")


def _trailing_joins(lines: list[str]) -> set[int]:
    """Indexes of the lines that end a block with nothing but joins (``x_bar =
    np.zeros_like(x)``, ``y_bar = y_3_bar``): what the `if` they close binds."""
    out: set[int] = set()
    for i, raw in enumerate(lines):
        if not _JOIN.match(raw.strip()):
            continue
        indent = len(raw) - len(raw.lstrip())
        for later in lines[i + 1:]:
            if not later.strip():
                continue
            at = len(later) - len(later.lstrip())
            if at < indent:
                out.add(i)
                break
            if at > indent or not _JOIN.match(later.strip()):
                break
    return out


def _line_facts(ir: Function) -> tuple[dict, dict, dict, list[int]]:
    """What ``provenance`` reads of the IR: each user line's text, where each name is
    defined (the top function's names win), each ``if`` test's lines, the returns."""
    functions = _ir_functions(ir)
    user_lines = {}
    for f in functions:
        user_lines.update({n: t.strip() for n, t in f.source_lines.items()})
    defs = _definitions(list(reversed(functions)))
    for f in functions[1:]:
        for n, found in _definitions([f]).items():
            defs.setdefault(n, found)
    defs.update(_definitions([functions[0]]))
    ifs: dict[str, tuple[int, int | None]] = {}
    for f in reversed(functions):
        ifs.update(_if_lines([f]))
    ret_lines = [s.loc.line for f in functions for s in f.body
                 if isinstance(s, Return) and s.loc is not None]
    return user_lines, defs, ifs, ret_lines


def provenance(text: str, ir: Function) -> list[int | None]:
    """For each line of the emitted module, the user line it comes from (or None).

    The emitted code keeps the function's `if`s (on the same test names, replayed in
    the backward sweep) and loops, so each line is placed in the branches it is on:
    a name both branches bind is placed by the branch's own statement, an ``else:``
    by the user's ``else:`` line, the joins that close a branch by the `if`."""
    user_lines, defs, ifs, ret_lines = _line_facts(ir)
    raws = text.splitlines()
    joins = _trailing_joins(raws)
    out: list[int | None] = []
    current: int | None = None
    last_comment: int | None = None
    loops: list[tuple[int, int | None]] = []  # (indent, user line) of enclosing loops
    branches: list[list] = []  # [indent, test, 0 body / 1 else, its `if` line] per if
    for k, raw in enumerate(raws):
        stripped = raw.strip()
        indent = len(raw) - len(raw.lstrip())
        is_else = stripped == "else:"
        if stripped:
            while loops and indent <= loops[-1][0]:
                loops.pop()
            while branches and (indent < branches[-1][0] or (
                    indent == branches[-1][0] and not is_else)):
                branches.pop()
        if not raw.startswith((" ", "\t")):  # module level: imports, def lines
            current, last_comment, loops, branches = None, None, [], []
            out.append(None)
            continue
        where = {(b[1], b[2]) for b in branches if b[1] is not None}
        if stripped.startswith("#"):
            quoted = stripped[1:].strip()
            matches = [n for n, t in user_lines.items() if t == quoted]
            if matches:
                below = [n for n in matches if last_comment is None or n <= last_comment]
                current = max(below or matches)
                last_comment = current
            out.append(current)
            continue
        if is_else:
            line = current
            if branches and branches[-1][0] == indent:
                branches[-1][2] = 1
                test, if_line = branches[-1][1], branches[-1][3]
                if test is not None:
                    line = (ifs.get(test, (None, None))[1] or if_line)
            current = line
            out.append(line)
            continue
        line = None
        names = _defines(stripped)
        loop_line = loops[-1][1] if loops else None
        m = _IF.match(stripped)
        if re.match(r"^\w+\.(append|pop)\(|.*= \w+\.pop\(\)$", stripped) and loops:
            line = loop_line  # a tape: saved by the loop, for the loop
        elif m and (m.group(2) in ifs or m.group(2) in defs):
            test = m.group(2)
            line = ifs[test][0] if test in ifs else _chosen(defs[test], where)
            branches.append([indent, test, 1 if m.group(1) else 0, line])
            current = line
            out.append(line)
            continue
        elif stripped.startswith("if ") and stripped.endswith(":"):
            branches.append([indent, None, 0, current])  # an `if` of a rule's
            out.append(current)
            continue
        elif k in joins and branches and indent == branches[-1][0] + 4 and not (
                loops and loops[-1][0] >= branches[-1][0]) and not any(
                n in defs for n in names):
            line = branches[-1][3]  # what the branch leaves for after its `if`
        elif re.match(r"^\w+ = \w+$", stripped) and loops and last_comment is None \
                and indent == loops[-1][0] + 4:
            line = loop_line  # a loop's back edge
        elif stripped.startswith("return "):
            line = None
        elif "grad_seed(" in stripped and ret_lines:
            line = max(ret_lines)
        else:
            for n in names:
                base = re.sub(r"_bar(_\d+)?$", "", n)
                if n in defs and (last_comment is None or not n.endswith("_bar")):
                    line = _chosen(defs[n], where) if last_comment is None else current
                    break
                if base != n and last_comment is None and base in defs:
                    line = _chosen(defs[base], where)
                    break
            if stripped.startswith(("for ", "while ")):
                m = re.match(r"for (\w+) in", stripped)
                if m and m.group(1) in defs:
                    line = _chosen(defs[m.group(1)], where)
                elif loop_line is None and last_comment is None:
                    line = None
            if line is None:
                line = current
        if stripped.startswith(("for ", "while ")):
            loops.append((indent, line))
        if line is not None and last_comment is None:
            current = line
        out.append(line)
    return out


def _rules_for_line(ir: Function, line: int, forward_mode: bool) -> list[dict[str, str]]:
    out, seen = [], set()
    for f in _ir_functions(ir):
        for s in walk(f.body):
            if not isinstance(s, Let) or s.loc is None or s.loc.line != line:
                continue
            if s.prim in seen or s.prim in _STRUCTURAL:
                continue
            seen.add(s.prim)
            prim = PRIMITIVES.get(s.prim)
            if prim is None:
                continue
            rules = list(prim.jvps.values()) if forward_mode else [prim.vjp]
            texts = []
            for r in rules:
                if r is None:
                    continue
                try:
                    texts.append(inspect.getsource(r).strip())
                except (OSError, TypeError):
                    pass
            if s.prim == "call":
                texts = ["(a call to your function: its own derivative function is "
                         "emitted beside this one)"]
            elif not texts:
                texts = ["(no derivative flows through it: "
                         + (prim.note or "not differentiable") + ")"]
            out.append({"prim": s.prim, "rule": "\n\n".join(texts)})
    return out


# ---- the graph --------------------------------------------------------------------


def graph_svg(ir: Function, max_nodes: int = 120) -> str:
    """The computation graph of the function's statements: inputs left, result right."""
    nodes: list[tuple[str, str, int | None]] = [(p, "input", None) for p in ir.params]
    edges: list[tuple[str, str]] = []
    depth = {p: 0 for p in ir.params}
    defined = set(ir.params)
    for s in walk(ir.body):
        if not isinstance(s, Let) or s.prim in ("range",):
            continue
        ins = [a.name for a in s.args if isinstance(a, Var)]
        index = s.params.get("index")
        if index is not None and hasattr(index, "atoms"):
            ins += [a.name for a in index.atoms() if isinstance(a, Var)]
        ins = [i for i in ins if i in defined]
        name = s.target
        if name in defined:  # an in-place version: one node per version
            name = f"{name}'"
            while name in defined:
                name += "'"
        depth[name] = 1 + max((depth[i] for i in ins), default=0)
        defined.add(name)
        nodes.append((name, s.prim, s.loc.line if s.loc else None))
        edges += [(i, name) for i in dict.fromkeys(ins)]
    if len(nodes) > max_nodes:
        return (f'<p class="note">The graph has {len(nodes)} nodes; '
                f"pictures stop at {max_nodes}.</p>")
    columns: dict[int, list[str]] = {}
    for name, _, _ in nodes:
        columns.setdefault(depth[name], []).append(name)
    col_w, row_h, node_w, node_h = 170, 56, 140, 40
    pos = {}
    for c, names in columns.items():
        for r, n in enumerate(names):
            pos[n] = (20 + c * col_w, 20 + r * row_h)
    width = 40 + (max(columns) + 1) * col_w
    height = 40 + max(len(v) for v in columns.values()) * row_h
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" class="graph">',
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" '
             'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
             '<path d="M 0 0 L 10 5 L 0 10 z" fill="#888"/></marker></defs>']
    for a, b in edges:
        (x1, y1), (x2, y2) = pos[a], pos[b]
        parts.append(f'<path class="edge" d="M {x1 + node_w} {y1 + node_h / 2} C '
                     f'{x1 + node_w + 20} {y1 + node_h / 2}, {x2 - 20} {y2 + node_h / 2}, '
                     f'{x2} {y2 + node_h / 2}" marker-end="url(#arrow)"/>')
    for name, prim, line in nodes:
        x, y = pos[name]
        attr = f' data-line="{line}"' if line is not None else ""
        cls = "node input" if prim == "input" else "node"
        parts.append(
            f'<g class="{cls}"{attr} transform="translate({x},{y})">'
            f'<rect width="{node_w}" height="{node_h}" rx="6"/>'
            f'<text x="{node_w / 2}" y="16" class="nm">{html.escape(name[:20])}</text>'
            f'<text x="{node_w / 2}" y="32" class="pr">{html.escape(prim)}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)


# ---- the page ---------------------------------------------------------------------

_STYLE = """
body{font-family:system-ui,sans-serif;margin:1.2em;color:#222}
h1{font-size:1.25em} h2{font-size:1.05em;margin:.2em 0}
.panes{display:flex;gap:1.2em;align-items:flex-start}
.pane{flex:1;min-width:0;border:1px solid #ddd;border-radius:6px;padding:.5em;overflow:auto}
.code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:13px;white-space:pre}
.ln{color:#999;display:inline-block;width:3em;user-select:none}
.src,.blk{border-radius:3px;cursor:pointer}
.blk{border-left:3px solid transparent;padding-left:4px}
.blk[data-line]:hover,.src:hover{background:#f3f3f3}
.hl{background:#ffe58a !important}
.blk.hl{border-left-color:#e0a800}
.pinned{outline:2px solid #e0a800}
#rule{margin-top:1em;border:1px solid #ddd;border-radius:6px;padding:.5em;min-height:3em;
      background:#fafafa}
#rule pre{margin:.3em 0}
.graph .node rect{fill:#eef4ff;stroke:#7a9cd6}
.graph .node.input rect{fill:#eaf7ea;stroke:#6aa86a}
.graph .node.hl rect{fill:#ffe58a;stroke:#e0a800}
.graph text{font:12px ui-monospace,monospace;text-anchor:middle}
.graph .pr{fill:#666;font-size:11px}
.graph .edge{fill:none;stroke:#aaa;stroke-width:1.2}
.note{color:#666}
#present-toggle{float:right;font:inherit;font-size:.85em;cursor:pointer}
body.present{--scale:1.6;margin:.6em}
body.present .code{font-size:calc(13px * var(--scale))}
body.present h1,body.present h2,body.present #rule{font-size:calc(1em * var(--scale) * .75)}
body.present .hint,body.present #graph,body.present #graph-title{display:none}
body.present .pane#source,body.present .pane#derivative{max-height:80vh}
body.present .pane .code::after{content:"";display:block;height:70vh}
"""

_SCRIPT = """
const rules = JSON.parse(document.getElementById('rules-data').textContent);
let pinned = null;
function mark(line, on) {
  document.querySelectorAll('[data-line="' + line + '"]').forEach(
    e => e.classList.toggle('hl', on));
}
function showRule(line) {
  const box = document.getElementById('rule');
  const r = rules[line];
  if (!r) { box.innerHTML = '<span class="note">Hover a line or block.</span>'; return; }
  let h = '<b>line ' + line + ':</b> <code>' + r.text + '</code>';
  if (r.rules.length === 0) h += '<p class="note">no rule: structure only</p>';
  for (const x of r.rules) h += '<p><b>' + x.prim + '</b></p><pre class="code">' + x.rule + '</pre>';
  box.innerHTML = h;
}
// presentation mode: P toggles it, + and - scale the code; hovering a line scrolls the
// other pane so that the line and its first derivative block stand side by side
let scale = 1.6;
function setScale(s) { scale = Math.min(4, Math.max(0.8, s));
  document.body.style.setProperty('--scale', scale); }
function togglePresent() { document.body.classList.toggle('present'); setScale(scale); }
document.getElementById('present-toggle').addEventListener('click', togglePresent);
document.addEventListener('keydown', e => {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  if (e.key === 'p' || e.key === 'P') togglePresent();
  else if (document.body.classList.contains('present') && (e.key === '+' || e.key === '='))
    setScale(scale * 1.15);
  else if (document.body.classList.contains('present') && e.key === '-') setScale(scale / 1.15);
});
function align(line, from) {
  const other = from.closest('#source') ? '#derivative' : '#source';
  const target = document.querySelector(other + ' [data-line="' + line + '"]');
  if (!target) return;
  const pane = document.querySelector(other);
  pane.scrollTop += target.getBoundingClientRect().top - from.getBoundingClientRect().top;
}
document.querySelectorAll('[data-line]').forEach(el => {
  const line = el.dataset.line;
  el.addEventListener('mouseenter', () => { if (pinned === null) { mark(line, true); showRule(line);
    if (document.body.classList.contains('present') && !el.closest('#graph')) align(line, el); } });
  el.addEventListener('mouseleave', () => { if (pinned === null) mark(line, false); });
  el.addEventListener('click', () => {
    if (pinned !== null) { mark(pinned, false);
      document.querySelectorAll('.pinned').forEach(e => e.classList.remove('pinned')); }
    if (pinned === line) { pinned = null; return; }
    pinned = line; mark(line, true); showRule(line); el.classList.add('pinned');
  });
});
"""


def _pieces_html(pieces: list[tuple[str, str | None]]) -> str:
    return "".join(
        html.escape(p) if c is None else f'<span style="{CSS[c]}">{html.escape(p)}</span>'
        for p, c in pieces
    )


def _code_html(text: str) -> str:
    return _pieces_html(classify(text))


def _shown_path(path: str) -> str:
    from pathlib import Path

    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return path


def html_page(d: Derivation) -> str:
    ir = normalize(d.target.fn)
    src, first = d.target.source()
    forward_mode = d.choice.kind == "jvp"
    title = d.choice.describe(d.target.name)
    left = []
    for i, ln in enumerate(src):
        n = first + i
        left.append(f'<div class="src" data-line="{n}"><span class="ln">{n}</span>'
                    f'{_code_html(ln.rstrip())}</div>')
    for callee in _ir_functions(ir)[1:]:
        left.append(f'<div class="note">called: {html.escape(callee.name)}</div>')
        for n, ln in sorted(callee.source_lines.items()):
            left.append(f'<div class="src" data-line="{n}"><span class="ln">{n}</span>'
                        f'{_code_html(ln.rstrip())}</div>')
    lines = d.text.rstrip("\n").splitlines()
    where = provenance(d.text, ir)
    coloured = [_pieces_html(p) for p in classify_lines(d.text.rstrip("\n"))]
    right = []
    i = 0
    while i < len(lines):
        j = i
        while j + 1 < len(lines) and where[j + 1] == where[i]:
            j += 1
        chunk = "\n".join(coloured[i: j + 1])
        attr = f' data-line="{where[i]}"' if where[i] is not None else ""
        right.append(f'<div class="blk"{attr}>{chunk or " "}</div>')
        i = j + 1
    rules = {}
    shown = {first + i: ln for i, ln in enumerate(src)}
    for callee in _ir_functions(ir)[1:]:
        shown.update(callee.source_lines)
    for n, ln in shown.items():
        if not ln.strip() or ln.lstrip().startswith(("def ", "@")):
            continue
        rules[n] = {"text": html.escape(ln.strip()),
                    "rules": [{"prim": html.escape(r["prim"]), "rule": html.escape(r["rule"])}
                              for r in _rules_for_line(ir, n, forward_mode)]}
    mode = "forward mode: JVP rules" if forward_mode else "reverse mode: VJP rules"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>s2s: {html.escape(title)}</title>
<style>{_STYLE}</style></head>
<body>
<button id="present-toggle" title="presentation mode: P; + and - scale the code">presentation (P)</button>
<h1>s2s: <code>{html.escape(title)}</code></h1>
<p class="note hint">Hover a line of the function, a block of the derivative or a node of the
graph: the others that belong to the same line light up, and the box below shows the
rules ({mode}) s2s inlined for it.  Click to pin.</p>
<div class="panes">
<div class="pane" id="source"><h2>Your function ({html.escape(_shown_path(d.target.file))})</h2>
<div class="code">{"".join(left)}</div></div>
<div class="pane" id="derivative"><h2>Emitted: {html.escape(d.entry)}</h2>
<div class="code">{"".join(right)}</div></div>
</div>
<div id="rule"><span class="note">Hover a line or block.</span></div>
<h2 style="margin-top:1em" id="graph-title">Computation graph of {html.escape(d.target.name)}</h2>
<div class="pane" id="graph">{graph_svg(ir)}</div>
<script type="application/json" id="rules-data">{json.dumps(rules)}</script>
<script>{_SCRIPT}</script>
</body></html>
"""


__all__ = ["html_page", "provenance", "graph_svg", "name_lines"]
