"""Errors raised inside emitted code, located at the user's line.

NumPy's "truth value of an array ... is ambiguous" ValueError comes from an emitted
``if t:``/``while t:`` whose test is the user's; the emitted line names the test (an
IR name), and the IR's ``If``/``For`` with that test carries the user's line.
``LocatedCalls.__call__`` re-raises it as :class:`~s2s.errors.TruthValueError` there.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import os
import re
import sys
import traceback
from typing import Any

import numpy as np

from .. import syntax
from ..errors import (
    CastError,
    EmptyStackError,
    ListIndexError,
    Loc,
    NotIterableError,
    SingularMatrixError,
    StackShapeError,
    TruthValueError,
    UnpackError,
)
from ..ir.nodes import For, If, Let, Var, uses, walk

_TEST = re.compile(r"^(if|elif|while)\s+(not\s+)?([^:]+?)\s*:(\s*#.*)?$")
# NumPy's and s2s's own files: not the user's code
_LIBRARIES = tuple(os.path.dirname(os.path.abspath(m.__file__)) + os.sep
                   for m in (np, sys.modules["s2s"]))


class LocatedCalls:
    """A transformed function's call, its emitted code's errors located at your line."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return self._outputs(self._call(*args, **kwargs))
        except (ValueError, IndexError, TypeError) as err:
            reraise_located(err, getattr(self, "ir", None), getattr(self.fn, "__name__", "f"))

    def _outputs(self, result: Any) -> Any:
        """The result as the caller gets it (objects the function built, rebuilt:
        s2s/api/records.py)."""
        return result

    _call: Any  # (implemented by the transformed function)
    fn: Any


def refusal_at_user_line(err: Any, ir: Any) -> Any:
    """A refusal met while transforming code s2s emitted (``hessian`` is ``jacfwd`` of
    the gradient's code) located at the user's statement that code came from: the
    emitted code quotes each user statement in a comment above the lines it became,
    and the user's function's IR (``ir``) carries that statement's position.  ``err``
    itself where its position is the user's already, or no statement matches."""
    loc = getattr(err, "loc", None)
    if loc is None or not str(loc.file).startswith("<s2s:") or ir is None:
        return err
    lines = linecache.getlines(str(loc.file))
    header = _TEST.match(lines[loc.line - 1].strip()) if 0 < loc.line <= len(lines) else None
    at = _test_loc(ir, header.group(3), set()) if header is not None else None
    if at is not None and not str(at.file).startswith("<s2s:"):  # an emitted `if t:`:
        err.loc, err.func = at, None
        return err.with_func(ir.name)
    found = _statement_at(lines, loc.line, ir)
    if found is not None:
        err.loc, err.func = found[1], None
        return err.with_func(found[0])
    return err


def _statement_at(lines: list[str], line: int, ir: Any) -> tuple[str, Any] | None:
    """The user's statement (function name, position) that emitted line ``line`` of
    ``lines`` came from: the quoted statement in the comment above it, else the
    statement binding the name it binds."""
    quoted = None
    for text in reversed(lines[:line]):
        stripped = text.strip()
        if stripped.startswith("# "):
            quoted = stripped[2:]
            break
        if stripped.startswith("def "):
            break
    found = _quoted_in(ir, quoted, set()) if quoted is not None else None
    if found is None and 0 < line <= len(lines):  # (code with no quoted line above it:
        found = _bound_in(ir, lines[_statement_start(lines, line) - 1], set())  # the
    if found is None and 0 < line <= len(lines):  # statement by its name; a tape's
        found = _enclosing_loop(lines, _statement_start(lines, line), ir)  # pop: its loop)
    return found


def _enclosing_loop(lines: list[str], line: int, ir: Any) -> tuple[str, Any] | None:
    """The user's loop whose backward sweep holds line ``line`` (``(n,) = tape.pop()``
    in ``for i in reversed(range(n)):``, which replays no statement of its own)."""
    indent = len(lines[line - 1]) - len(lines[line - 1].lstrip())
    for text in reversed(lines[:line - 1]):
        stripped = text.strip()
        if not stripped or len(text) - len(text.lstrip()) >= indent:
            continue
        if stripped.startswith("def "):
            return None
        indent = len(text) - len(text.lstrip())
        found = _bound_in(ir, text, set()) if stripped.startswith("for ") else None
        if found is not None:
            return found
    return None


def _statement_start(lines: list[str], line: int) -> int:
    """The first line of the statement line ``line`` of ``lines`` is part of (black
    wraps a long one in brackets: a traceback names the line the error came from)."""
    depth, start = 0, line
    for k, text in enumerate(lines[:line], 1):
        if depth == 0:
            start = k
        depth += sum(text.count(c) for c in "([{") - sum(text.count(c) for c in ")]}")
    return start


_LOWERED = re.compile(r"^#\s*lowered:\s*")
_NOT_CALL = re.compile(r"\b(?:lax|s2s_lax)\.not_\((\w+)\)")


def traced_at_user_line(err: Any, ir: Any, statics: Any = ()) -> Any:
    """A refusal raised while emitted code ran on the JAX backend (Python control flow
    on a traced value: ``TracedValueError``; an ``if`` on an array's truth:
    ``TruthValueError``), at a line of that code (``# lowered: if t:``, ``for k in
    range(n):``, ``if lax.not_(t):  # stays Python``), located at the user's
    statement it came from (``ir``: the user's function's IR, whose names the emitted
    code keeps), its hint naming the parameters it is computed from that could be
    static (``statics``: Python numbers, strings).  ``err`` itself where its
    position is the user's already, or no statement matches."""
    loc = getattr(err, "loc", None)
    if loc is None or ir is None or not str(loc.file).startswith("<s2s:"):
        return err
    if "raise OtherPath(" in linecache.getline(str(loc.file), loc.line + 1):
        err.what = (  # (the guard of vmap's code made per path: jit_jax_paths.py)
            "`if` on a value JAX traces whose paths give a value different ranks per "
            "example: vmap makes its code per path, which needs the test's value when "
            "the code is made, and under jax.jit it is known only when the compiled code "
            "runs (JAX refuses an `if` on a traced value: TracerBoolConversionError)")
        err.hint = ("give the value one shape on both paths (np.broadcast_to, "
                    "np.full_like), or pass the test's inputs as static arguments "
                    "(static_argnums=/static_argnames=), or run it on the NumPy backend "
                    "(s2s.jit(f), which makes each path's code when a call takes it)")
    text = _NOT_CALL.sub(r"not \1", _LOWERED.sub("", loc.text.strip()))
    text = re.sub(r"\s*#.*$", "", text) if not text.startswith("#") else text
    header = _TEST.match(text)
    found = None
    if header is not None:
        at = _test_loc(ir, header.group(3), set())
        found = (ir.name, at, header.group(3)) if at is not None else None
    else:
        bound = _bound_in(ir, text, set())
        loop = re.match(r"for \w+ in range\((.*)\):$", text)
        if bound is not None:
            found = (*bound, loop.group(1) if loop else None)
    if found is None:
        err = refusal_at_user_line(err, ir)
        at = _last_read(ir, text) if str(err.loc.file).startswith("<s2s:") else None
        if at is None:
            return err
        err.loc, err.func = at, None
        return err.with_func(ir.name)
    err.loc, err.func = found[1], None
    behind = [p for p in _params_behind(ir, found[2]) if p in statics] if found[2] else []
    static_hint(err, list(ir.params), behind)
    return err.with_func(found[0])


def _last_read(ir: Any, text: str) -> Any:
    """The position of the user's statement making the last value (in the function's
    order) that the emitted line ``text`` reads, for a line binding a name of s2s's
    own: ``y_overwritten = np.copy(y[mask])`` (the values an in-place write replaces,
    kept for the backward sweep) is the user's statement computing ``mask``."""
    read = set(re.findall(r"[A-Za-z_]\w*", text.partition("=")[2]))
    at = None
    for s in walk(ir.body):
        if isinstance(s, Let) and s.target in read and s.loc is not None:
            at = s.loc
    return at


def static_hint(err: Any, params: list[str], behind: list[str]) -> None:
    """``err``'s hint, where it suggests static arguments, beginning with the ones to
    make static (``behind``, of the function's ``params``) as ``s2s.jit`` takes them."""
    if not behind or not getattr(err, "hint", None) or "static_arg" not in err.hint:
        return
    nums = [str(params.index(p)) for p in behind]
    nums_text = nums[0] if len(nums) == 1 else f"({', '.join(nums)})"
    names = repr(behind[0]) if len(behind) == 1 else repr(tuple(behind))
    err.hint = (f"make {' and '.join(f'`{p}`' for p in behind)} static, as jax.jit "
                f"needs: s2s.jit(..., static_argnums={nums_text}) (or static_argnames="
                f"{names}); else " + err.hint)
    err.args = (err._render(),)


def _params_behind(ir: Any, text: str) -> list[str]:
    """The parameters of ``ir`` the names in ``text`` (a test's name, a range's
    bounds) are computed from, in their order."""
    producer = {s.target: s for s in walk(ir.body) if isinstance(s, Let)}
    todo, seen = re.findall(r"[A-Za-z_]\w*", text), set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in producer:
            todo += uses(producer[name])
    return [p for p in ir.params if p in seen]


_IF_OR_BINDS = re.compile(r"^\s*(?:(?:if|while) (\w+):|(\w+)(?:, \w+)* = |for (\w+) in )")


def _kept_in(fn: Any, line: str, seen: set[int]) -> tuple[str, Any] | None:
    """The user's kept statement (``print(f"{np.sum(x):.4f}")``) an emitted line
    replays, its operands written as any text (``x_2``, vmap's ``x[example]``), in
    ``fn`` or a function it calls."""
    if id(fn) in seen or getattr(fn, "body", None) is None:
        return None
    seen.add(id(fn))
    for s in walk(fn.body):
        if isinstance(s, Let) and s.prim == "kept" and s.loc is not None:
            text, keys = s.params["template"]
            pattern = re.escape(text)
            for key in keys:
                pattern = pattern.replace(re.escape(key), ".+?")
            if re.fullmatch(pattern, line):
                return fn.name, s.loc
        elif isinstance(s, Let) and s.prim == "call":
            found = _kept_in(s.params.get("callee"), line, seen)
            if found is not None:
                return found
    return None


def _bound_in(fn: Any, line: str, seen: set[int]) -> tuple[str, Any] | None:
    """The user's statement an emitted line replays: ``if t:`` is the user's ``if``
    on ``t``, ``y = ...`` the user's statement binding ``y`` (emitted forward code
    keeps the user's names), ``for k in ...`` the user's loop of index ``k``, in ``fn``
    or a function it calls."""
    match = _IF_OR_BINDS.match(line)
    if id(fn) in seen or getattr(fn, "body", None) is None:
        return None
    user = getattr(fn, "user_ir", None)  # (an inner transform's code: the user's first)
    found = _bound_in(user, line, seen) if user is not None else None
    if found is not None:
        return found
    if match is None:
        return _kept_in(fn, line.strip(), seen)
    seen.add(id(fn))
    for s in walk(fn.body):
        if match.group(1) and isinstance(s, If) and isinstance(s.test, Var) and (
                s.test.name == match.group(1)) and s.loc is not None:
            return fn.name, s.loc
        if match.group(2) and isinstance(s, Let) and s.target in _primal_names(
                match.group(2)) and s.loc is not None:
            return fn.name, s.loc
        if match.group(3) and isinstance(s, For) and s.target == match.group(3) and (
                s.loc is not None):
            return fn.name, s.loc
    for s in walk(fn.body):
        if isinstance(s, Let) and s.prim == "call":
            found = _bound_in(s.params.get("callee"), line, seen)
            if found is not None:
                return found
    return None


def _primal_names(name: str) -> tuple[str, ...]:
    """``name`` and, for a tangent or cotangent (``y_dot``, ``y_bar``), its primal's
    name: the user's statement binding ``y`` is where ``y_dot = ...`` came from."""
    for suffix in ("_dot", "_bar"):
        if name.endswith(suffix) and len(name) > len(suffix):
            return name, name[: -len(suffix)]
    return (name,)


def _quoted_in(fn: Any, quoted: str, seen: set[int]) -> tuple[str, Any] | None:
    """The function and position of the statement whose line is ``quoted``, in ``fn``
    or a function it calls (a vmap written in a callee)."""
    if id(fn) in seen or getattr(fn, "body", None) is None:
        return None
    seen.add(id(fn))
    for s in walk(fn.body):
        at = getattr(s, "loc", None)
        if at is not None and at.text.strip() == quoted:
            return fn.name, at
    for s in walk(fn.body):
        if isinstance(s, Let) and s.prim == "call":
            callee = s.params.get("callee")  # (an inner transform's code: the user's)
            for inner in (callee, getattr(callee, "user_ir", None)):
                found = _quoted_in(inner, quoted, seen)
                if found is not None:
                    return found
    return None


def reraise_located(err: ValueError | IndexError | TypeError, ir: Any, func: str) -> None:
    """Raise ``err`` located at the user's line where it is an array's truth value
    (see truth_value_error) or a list's index out of range (see index_error), else
    ``err`` itself."""
    if isinstance(err, (TruthValueError, EmptyStackError, ListIndexError,
                        StackShapeError)):  # located
        inner = err.__cause__  # already: at your line, or at a line of emitted code an
        if not (err.loc is not None and str(err.loc.file).startswith("<s2s:")  # inner
                and isinstance(inner, (ValueError, IndexError))):  # call ran (jacfwd's vmap)
            raise err
        located = _located(inner, ir)
        if located is None:
            raise err
        raise refusal_at_user_line(located, ir).with_func(func) from inner
    located = _located(err, ir)
    if located is None:
        loc = _note_user_line(err, ir, func)
        singular = isinstance(err, np.linalg.LinAlgError) and "singular" in str(err).lower()
        if loc is None and singular and not isinstance(err, SingularMatrixError) and \
                _emitted_line(err) is not None:
            loc = _linalg_loc(ir)  # (code made from code s2s made: hessian's, jacfwd's)
        if loc is not None and isinstance(err, TypeError) and "Cannot cast" in str(err):
            raise CastError(
                f"NumPy's TypeError ({err}) from the code made from this line: an "
                "integer argument (`np.bincount`'s labels, an index) holds floats",
                loc, "pass integers (`labels.astype(int)`, `np.round(v).astype(int)`)",
                func) from err
        if loc is not None and singular:
            singular = SingularMatrixError(
                f"NumPy's LinAlgError ({err}) from the code made from this line: its "
                "derivative rules need an invertible matrix (np.linalg.qr's solves "
                "with r; JAX's derivative there is infinities or NaN)", loc,
                "keep the matrix invertible where you differentiate", func)
            for note in getattr(err, "__notes__", ()):
                singular.add_note(note)
            raise singular from err
        raise err
    raise refusal_at_user_line(located, ir).with_func(func) from err  # (inner's code)


_NOTE = "s2s: raised by the code made from"
# NumPy's linear algebra whose derivative rules solve with the matrix
_SOLVING = ("slogdet", "det", "inv", "solve", "pinv", "matrix_power", "cholesky", "qr",
            "lstsq", "eigh", "eig", "svd", "eigvalsh", "cond", "tensorsolve", "tensorinv")


def _linalg_loc(ir: Any) -> Any:
    """The user's line of the one linear-algebra call in ``ir`` (the function's own
    line where it has several or none), for a singular matrix met in code made from
    code s2s made (a Hessian's vmap probe), whose lines quote no user line; None
    where ``ir`` is not the user's."""
    if ir is None or getattr(ir, "loc", None) is None or str(ir.loc.file).startswith("<s2s:"):
        return None
    found = {s.loc for s in walk(ir.body) if isinstance(s, Let) and getattr(
        s, "loc", None) is not None and s.prim.rpartition(".")[2] in _SOLVING}
    return next(iter(found)) if len(found) == 1 else ir.loc


def _note_user_line(err: BaseException, ir: Any, func: str) -> Loc | None:
    """NumPy's own error (a singular matrix, an axis out of range...) raised by a line
    of emitted code: its type kept, a note naming the user's line that code came
    from (its value or its derivative), so the traceback's ``<s2s:...>`` line is
    not the only place it points at; that line's position (None where none)."""
    found = _emitted_line(err)
    if found is None or ir is None or any(_NOTE in n for n in getattr(
            err, "__notes__", ())):
        return None
    tb, lineno = err.__traceback__, 0
    while tb is not None:  # (the innermost emitted frame's line number)
        if tb.tb_frame.f_code.co_filename == found[0]:
            lineno = tb.tb_lineno
        tb = tb.tb_next
    at = _statement_at(linecache.getlines(found[0]), lineno, ir)
    if at is None or str(at[1].file).startswith("<s2s:"):  # (not the user's line)
        return None
    loc = at[1]
    err.add_note(f"{_NOTE} this line of `{at[0]}` (its value or its derivative; "
                 f"`{func}` was called):\n  File \"{loc.file}\", line {loc.line}, "
                 f"column {loc.col}\n    {loc.text.strip()}")
    return loc


def _located(err: ValueError | IndexError, ir: Any) -> Any:
    if isinstance(err, IndexError):
        return index_error(err, ir)
    return truth_value_error(err, ir)


_ITEM_READ = re.compile(r"^(\w+)\s*=\s*\w+\[[^\]]*\]$")


def index_error(err: IndexError, ir: Any) -> ListIndexError | None:
    """Python's "list index out of range" from an emitted read of a list's item
    (``hs_k = hs[k]``: a list the function grew, read at an index it does not
    reach), located at the user's line that reads it."""
    if "list index out of range" not in str(err) or ir is None:
        return None
    found = _emitted_line(err)
    match = _ITEM_READ.match(found[1]) if found is not None else None
    loc = _let_loc(ir, match.group(1), set()) if match is not None else None
    if loc is None:
        return None
    return ListIndexError(
        "list index out of range (Python's IndexError): the list has fewer items here "
        "than the index names", loc,
        "check the index against the list's length (`len(hs)`), which a loop's trip "
        "count may change")


_STACK = re.compile(r"^(\w+)\s*=\s*np\.stack\(")


def _emitted_line(err: BaseException) -> tuple[str, str] | None:
    """The innermost line of emitted code ``err`` passed through, and its file."""
    tb, last = err.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.startswith("<s2s:"):
            last = (tb.tb_frame.f_code.co_filename, tb.tb_lineno)
        tb = tb.tb_next
    return None if last is None else (last[0], linecache.getline(*last).strip())


def empty_stack_error(err: ValueError, ir: Any) -> EmptyStackError | None:
    """NumPy's "need at least one array to stack" from an emitted ``np.stack`` of the
    rows a vmap written in the function made, located at that vmap's line."""
    if ir is None or "need at least one array to stack" not in str(err) and \
            "all input arrays must have the same shape" not in str(err):
        return None
    found = _emitted_line(err)
    match = _STACK.match(found[1]) if found is not None else None
    loc = _let_loc(ir, match.group(1), set()) if match is not None else None
    if match is not None and "same shape" in str(err):
        loc = _stacked_read_loc(err, found[0], ir, match.group(1))
    if loc is None:
        return None
    if "same shape" in str(err):  # (ir/unroll.py's `xs[i]` by a run-time key)
        return StackShapeError(
            "a tuple or list read by a key known only when the code runs (`xs[i]` with "
            "`i` a loop's counter s2s did not unroll, or passed to a function or "
            "`__getitem__`): s2s reads it as np.stack(xs)[i], and its items have "
            "different shapes here (NumPy's ValueError)", loc,
            "index with a constant (`xs[0]`), or loop over the items (`for v in xs:`)")
    if _sums_in(ir, match.group(1), set()):  # (`sum(f(v) for v in x if ...)`: none kept)
        return EmptyStackError(
            "`sum` of a generator that gave no items on this call: Python's `sum` gives "
            "0 there, and s2s adds the items as np.sum(np.stack(items), axis=0), whose "
            "shape it knows only from an item", loc,
            "write the filter as a mask over the array, so that no item is dropped: "
            "`np.sum(np.where(x > 0, x, 0.0), axis=0)` for `sum(v for v in x if v > 0)`")
    return EmptyStackError(
        "np.stack of no arrays: a vmap written in the function got an empty batch "
        "(size 0), or a list stacked here has no items (NumPy's ValueError)", loc,
        "skip the call when the batch is empty (s2s's transforms stack g's results and "
        "know their shape only from a call of g)")


def _stacked_read_loc(err: BaseException, file: str, ir: Any, stacked: str) -> Any:
    """The user's ``xs[i]`` whose items ir/unroll_reads.py stacks (``xs_stacked =
    np.stack(...)``, maybe before the loop that reads it, then ``xs_i =
    xs_stacked[i]``, or the tuple of a row of each position's stack: a name of the
    user's IR)."""
    tb, lineno = err.__traceback__, 0
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == file:
            lineno = tb.tb_lineno
        tb = tb.tb_next
    lines = linecache.getlines(file)
    read = next((k for k in range(lineno, len(lines)) if f"{stacked}[" in lines[k]), None)
    for k in range(read, min(read + 8, len(lines))) if read is not None else ():
        found = _bound_in(ir, lines[k], set())
        if found is not None:
            return found[1]
    return None


def _sums_in(fn: Any, name: str, seen: set[int]) -> bool:
    """Is ``name`` the stack of a ``sum`` over a generator's items (``Function.sums``),
    in ``fn`` or a callee?"""
    if id(fn) in seen or getattr(fn, "body", None) is None:
        return False
    seen.add(id(fn))
    return name in getattr(fn, "sums", ()) or any(
        _sums_in(s.params.get("callee"), name, seen) for s in walk(fn.body)
        if isinstance(s, Let) and s.prim == "call")


def _let_loc(fn: Any, name: str, seen: set[int]) -> Any:
    """The location of the statement binding ``name``, in ``fn`` or a callee."""
    if id(fn) in seen or getattr(fn, "body", None) is None:
        return None
    seen.add(id(fn))
    for s in walk(fn.body):
        if isinstance(s, Let) and s.target == name:
            return s.loc
    for s in walk(fn.body):
        if isinstance(s, Let) and s.prim == "call":
            found = _let_loc(s.params.get("callee"), name, seen)
            if found is not None:
                return found
    return None


def truth_value_error(err: ValueError, ir: Any) -> TruthValueError | EmptyStackError | None:
    """``err`` located at the user's ``if``/``while`` whose test it comes from, or None
    where it is not an array's truth value tested by emitted code."""
    if "truth value of an array" not in str(err):
        return empty_stack_error(err, ir)
    tb, last = err.__traceback__, None
    while tb is not None:  # the innermost frame of emitted or user code
        name = tb.tb_frame.f_code.co_filename
        if name.startswith("<s2s:") or not name.startswith(("<", *_LIBRARIES)):
            last = (name, tb.tb_lineno)
        tb = tb.tb_next
    if last is None:
        return None
    text = linecache.getline(*last).rstrip("\n")
    match = _TEST.match(text.strip())
    if match is None:
        return _joined_truth_error(last[0], text, ir)
    if last[0].startswith("<s2s:"):
        loc = _test_loc(ir, match.group(3), set()) if ir is not None else None
    else:  # a function of yours the emitted code calls as it is
        loc = Loc(last[0], last[1], len(text) - len(text.lstrip()) + 1, text)
    if loc is None:
        return None
    word = match.group(1)
    return TruthValueError(
        f"`{'while' if word == 'while' else 'if'}` on an array with more than one "
        "element: it has no truth value (NumPy's ValueError: the truth value of an "
        "array is ambiguous)", loc,
        "test one number: `if np.all(x > 0):` or `if np.any(...)`; choose elementwise "
        "with `np.where(x > 0, a, b)`; under s2s.vmap an `if` on a per-example value "
        "becomes np.where")


_JOINED = re.compile(r"^(\w+) = \w+ (?:or|and) \w+$")


def _joined_truth_error(file: str, text: str, ir: Any) -> TruthValueError | None:
    """An emitted ``t = a or b`` (``and``) on arrays: the user's ``and``/``or``, or the
    ``x == a or x == b`` of Python's ``x in (a, b)``, located at the user's line."""
    match = _JOINED.match(text.strip())
    if match is None or not file.startswith("<s2s:") or ir is None:
        return None
    name = match.group(1)
    loc = _let_loc(ir, name, set())
    while loc is None and "_" in name:  # (`found_so_far`: the `in` that bound `found`)
        name = name.rsplit("_", 1)[0]
        loc = _let_loc(ir, name, set())
    if loc is None:
        return None
    return TruthValueError(
        "`in`, `and` or `or` on arrays of more than one element: Python's `x in (a, b)` "
        "tests `x == a`, whose truth value NumPy refuses (ValueError: the truth value "
        "of an array is ambiguous)", loc,
        "test arrays with NumPy: `np.any(np.stack(items) == x)`, `np.all(x == a)`, or "
        "`np.logical_and`/`np.logical_or`")


def _test_loc(fn: Any, name: str, seen: set[int]) -> Any:
    """The location of the ``if``/``while`` testing ``name``, in ``fn`` or a callee."""
    if id(fn) in seen or getattr(fn, "body", None) is None:
        return None
    seen.add(id(fn))
    for s in walk(fn.body):
        if isinstance(s, (If, For)) and getattr(s, "test", None) == Var(name):
            user = getattr(fn, "user_ir", None)  # (an inner transform's code: the
            return _test_loc(user, name, seen) or s.loc if user is not None else s.loc
    for s in walk(fn.body):  # user's `if`, whose test names the emitted code keeps)
        if isinstance(s, Let) and s.prim == "call":
            found = _test_loc(s.params.get("callee"), name, seen)
            if found is not None:
                return found
    return None


_COMMENT = re.compile(r"\s+#[^'\"]*$")


def unpack_at_user_line(err: ValueError, fun: Any) -> None:
    """Python's "too many / not enough values to unpack" ValueError raised by the
    JAX backend's copy of the user's source (a ``<s2s:...>`` file, its lines the user's
    lines translated): raised again as :class:`~s2s.errors.UnpackError` at the user's
    own line (the function of that name, the first of its lines reading so)."""
    if "values to unpack" not in str(err) or err.__traceback__ is None:
        return
    frame = traceback.extract_tb(err.__traceback__)[-1]
    if not frame.filename.startswith("<s2s:") or not frame.line:
        return
    user = fun if getattr(fun, "__name__", None) == frame.name else getattr(
        fun, "__globals__", {}).get(frame.name)
    try:
        lines, first = inspect.getsourcelines(user)
    except (OSError, TypeError):
        return
    for k, line in enumerate(lines):  # (the copy leaves comments out)
        if _COMMENT.sub("", line).strip() == _COMMENT.sub("", frame.line).strip():
            text = line.rstrip("\n")
            loc = Loc(inspect.getsourcefile(user) or "?", first + k,
                      len(text) - len(text.lstrip()) + 1, text)
            raise UnpackError(str(err), loc, "unpack as many names as the value has "
                              "items, or take the rest as a list: `a, *rest = v`",
                              getattr(fun, "__name__", None)) from err


def not_iterable_at_user_line(err: TypeError, fun: Any) -> None:
    """``a, b = np.sum(x)`` run by the JAX backend's copy of the user's source (JAX's
    "iteration over a 0-d array") or by the user's own function under ``s2s.jit``
    (Python's "cannot unpack non-iterable ..."): raised again as
    :class:`~s2s.errors.NotIterableError` at the user's line, with Python's message
    (the scalar named by its kind where JAX's message does not say it)."""
    said = str(err)
    if not ("iteration over a 0-d array" in said or "cannot unpack non-iterable" in said) \
            or err.__traceback__ is None:
        return
    frames = [(f, line) for f, line in traceback.walk_tb(err.__traceback__)
              if not _library(f.f_code.co_filename)]
    if not frames:
        return
    code, line = frames[-1][0].f_code, frames[-1][1]
    user: Any = code
    text = linecache.getline(code.co_filename, line)
    if code.co_filename.startswith("<s2s:"):  # (the copy: its function's name)
        user = getattr(fun, "__globals__", {}).get(code.co_name, fun)
        text = next((fr.line for fr in reversed(traceback.extract_tb(err.__traceback__))
                     if fr.filename == code.co_filename), "") or ""
    if not _unpacks(text):
        return
    try:
        lines, first = inspect.getsourcelines(user)
        file = inspect.getsourcefile(user) or "?"
    except (OSError, TypeError):
        return
    frame = traceback.FrameSummary(file, line, code.co_name, line=text)
    for k, line in enumerate(lines):
        if _COMMENT.sub("", line).strip() == _COMMENT.sub("", frame.line).strip():
            text = line.rstrip("\n")
            loc = Loc(file, first + k, len(text) - len(text.lstrip()) + 1, text)
            what = said if "cannot unpack" in said else \
                NotIterableError.of(_zero_d(err), None).what
            raise NotIterableError(what, loc, "unpack a tuple, list or array of at least "
                                   "one dimension; a scalar is one value: `a = np.sum(x)`",
                                   getattr(fun, "__name__", None)) from err


def _zero_d(err: TypeError) -> Any:
    """The 0-d value JAX refused to iterate over (a local of its innermost frame), or a
    0-d float64 array where none is found."""
    for f, _ in reversed(list(traceback.walk_tb(err.__traceback__))):
        for value in f.f_locals.values():
            if getattr(value, "ndim", None) == 0 and hasattr(value, "dtype"):
                return value
    return np.zeros(())


def _library(file: str) -> bool:
    """Whether ``file`` is s2s's, JAX's or NumPy's (not the user's)."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return file.startswith(here) or os.sep + "site-packages" + os.sep in file or \
        file.startswith("<frozen")


def _unpacks(line: str) -> bool:
    """Whether ``line`` is an assignment to several names (``a, b = ...``)."""
    try:
        tree = syntax.parse(_COMMENT.sub("", line).strip())
    except SyntaxError:
        return False
    return any(isinstance(s, ast.Assign) and any(
        isinstance(t, (ast.Tuple, ast.List)) for t in s.targets) for s in tree.body)
