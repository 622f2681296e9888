"""Python source coloured for a terminal (ANSI) or a page (HTML spans): for
``Transformed._repr_html_`` in Jupyter and the teaching views."""

from __future__ import annotations

import html
import io
import keyword
import tokenize

ANSI = {
    "keyword": "\x1b[1;34m", "string": "\x1b[32m", "number": "\x1b[36m",
    "comment": "\x1b[2;37m", "def": "\x1b[1;33m", "bar": "\x1b[35m", "dot": "\x1b[36m",
    "builtin": "\x1b[34m",
}
RESET = "\x1b[0m"
CSS = {
    "keyword": "color:#0033b3;font-weight:bold", "string": "color:#067d17",
    "number": "color:#1750eb", "comment": "color:#8c8c8c;font-style:italic",
    "def": "color:#00627a;font-weight:bold", "bar": "color:#871094",
    "dot": "color:#0e7490", "builtin": "color:#0033b3",
}
BUILTINS = {"np", "range", "len", "reversed", "list", "tuple", "dict", "None", "True", "False"}


def classify(text: str) -> list[tuple[str, str | None]]:
    """(piece, class) over the whole text, with the text between tokens kept."""
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for ln in lines:
        offsets.append(offsets[-1] + len(ln))
    out: list[tuple[str, str | None]] = []
    pos = 0
    prev = ""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return [(text, None)]
    for tok in tokens:
        if tok.type in (tokenize.ENDMARKER,):
            break
        start = offsets[tok.start[0] - 1] + tok.start[1]
        end = offsets[tok.end[0] - 1] + tok.end[1] if tok.end[0] - 1 < len(offsets) else len(text)
        if start < pos:
            continue
        if start > pos:
            out.append((text[pos:start], None))
        piece = text[start:end]
        cls = None
        if tok.type == tokenize.COMMENT:
            cls = "comment"
        elif tok.type == tokenize.STRING:
            cls = "string"
        elif tok.type == tokenize.NUMBER:
            cls = "number"
        elif tok.type == tokenize.NAME:
            if prev in ("def", "class"):
                cls = "def"
            elif keyword.iskeyword(piece):
                cls = "keyword"
            elif piece.endswith("_bar"):
                cls = "bar"
            elif piece.endswith("_dot"):
                cls = "dot"
            elif piece in BUILTINS:
                cls = "builtin"
        if tok.type == tokenize.NAME:
            prev = piece
        elif tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            prev = ""
        out.append((piece, cls))
        pos = end
    if pos < len(text):
        out.append((text[pos:], None))
    return out


def classify_lines(text: str) -> list[list[tuple[str, str | None]]]:
    """:func:`classify` of the whole text, cut into its lines (each without its
    newline): a piece of the text (a block of lines ending inside an ``if`` body,
    an ``else:`` alone) is coloured as the whole text tokenizes, which a fragment
    need not (its indentation alone is an IndentationError)."""
    lines: list[list[tuple[str, str | None]]] = [[]]
    for piece, cls in classify(text):
        parts = piece.split("\n")
        for k, part in enumerate(parts):
            if k:
                lines.append([])
            if part:
                lines[-1].append((part, cls))
    if text.endswith("\n"):
        lines.pop()
    return lines


def highlight_ansi(text: str, use_pygments: bool = True) -> str:
    """Python source with terminal colours (pygments' when installed)."""
    if use_pygments:
        try:
            from pygments import highlight
            from pygments.formatters import TerminalFormatter
            from pygments.lexers import PythonLexer

            return highlight(text, PythonLexer(), TerminalFormatter())
        except ImportError:
            pass
    return "".join(p if c is None else f"{ANSI[c]}{p}{RESET}" for p, c in classify(text))


def highlight_html(text: str) -> str:
    """Python source as HTML spans with inline styles (no stylesheet needed):
    suitable for ``_repr_html_`` in Jupyter."""
    body = "".join(
        html.escape(p) if c is None else f'<span style="{CSS[c]}">{html.escape(p)}</span>'
        for p, c in classify(text)
    )
    return f'<pre style="line-height:1.3">{body}</pre>'

