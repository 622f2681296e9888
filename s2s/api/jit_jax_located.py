"""Refusals met while code runs on the JAX backend (``api/jit_jax.py``): Python
control flow on a value JAX traces, an ``if`` on an array's truth value, raised at a
line of emitted code or of a function's lowered copy (``# lowered: if x > 0:`` in
``<s2s:...>``), located at your own line, the hint naming the parameters to make
static where that would do (``static_argnums=1``)."""

from __future__ import annotations

import inspect
import re
from typing import Any, Callable

from ..backends.base import TracedValueError
from ..backends.jax_backend import _TRANSLATED, JaxBackend, _user_line
from ..errors import Loc, TruthValueError
from .located import _COMMENT, static_hint, traced_at_user_line


def _run(backend: JaxBackend, jfn: Callable, args: tuple, kwargs: dict, ir: Any) -> Any:
    """``backend.run`` of a transform's emitted code: a refusal there (control flow on
    a traced value) located at the user's line (``ir``: the user's function's)."""
    try:
        return backend.run(jfn, args, kwargs)
    except (TracedValueError, TruthValueError) as err:
        statics = {p for p, a in zip(ir.params, args) if _number(a)}
        raise _in_translated(traced_at_user_line(err, ir, statics)) from err.__cause__


def _in_translated(err: Any) -> Any:
    """``err`` at a line of a function of yours that code on JAX calls (its copy with
    control flow lowered: ``# lowered: if x > 0:``), located at your own line."""
    user = _TRANSLATED.get(str(err.loc.file)) if err.loc is not None else None
    found = _user_line(user, err.loc.text.strip().removeprefix("# lowered:").strip()) \
        if user is not None else None
    if found is None:
        return err
    err.loc, err.func = found, None
    return err.with_func(user.__name__)


def _number(a: Any) -> bool:
    """A Python number (or string), or JAX's trace of one: what can be static."""
    return isinstance(a, (int, float, str)) or bool(getattr(
        getattr(a, "aval", None), "weak_type", False)) and not a.shape


def _at_user_line(err: TracedValueError, fun: Any, args: tuple = ()) -> TracedValueError:
    """A refusal the lowered control flow raised at the translated code's
    ``# lowered: if ...`` line, located at the user's own line instead (the first of
    the function's lines reading so)."""
    loc = err.loc
    code = getattr(fun, "__code__", None)
    if loc is None or code is None or not str(loc.file).startswith("<s2s:"):
        return err
    wanted = loc.text.strip().removeprefix("# lowered:").strip()
    try:
        lines, first = inspect.getsourcelines(fun)
    except (OSError, TypeError):
        return err
    for k, line in enumerate(lines):  # (your line's comment: not in the copy's)
        if _COMMENT.sub("", line).strip() == wanted:
            text = line.rstrip("\n")
            err.loc = Loc(code.co_filename, first + k, len(text) - len(text.lstrip()) + 1,
                          text)
            err.args = (err._render(),)
            try:  # (the parameters the line reads that are numbers: static)
                params = list(inspect.signature(fun).parameters)
            except (TypeError, ValueError):
                break
            static_hint(err, params, [p for p, a in zip(params, args) if _number(a) and (
                re.search(rf"\b{p}\b", wanted))])
            break
    return err
