"""Every kind of bad input in tests/error_catalogue.py is answered clearly.

For each kind: the exception class; the words the message must contain; where the
problem has a place in the user's source, the message names its file, line and
column, quotes the line and puts a caret under the column; and the message says what
to write instead.  Where JAX reports the same misuse, s2s raises JAX's class with
JAX's first line.  Kinds s2s answers wrongly or unclearly today are strict xfails.
docs/errors.md is generated from the catalogue and must be current.
"""

from __future__ import annotations

import inspect
import re
import sys
import warnings
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

import catalogue_fns
import error_catalogue as EC
import s2s
from support import HAVE_JAX, jax_twin

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "errors.md"

_MARKER = re.compile(r"#\s*ERR(?::\s*(?P<anchor>.+?))?\s*$")
_WHERE = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), column (?P<col>\d+)')


def marked_location(fn: Callable) -> tuple[str, int, int, str]:
    """(file, line, 1-based column, line text) of the ``# ERR`` marker in ``fn``."""
    lines, first = inspect.getsourcelines(fn)
    hits = [(i, m) for i, text in enumerate(lines) if (m := _MARKER.search(text))]
    assert len(hits) == 1, f"{fn.__name__} needs exactly one # ERR marker"
    i, m = hits[0]
    text = lines[i].rstrip("\n")
    code = text[: m.start()]
    anchor = m.group("anchor")
    col = code.index(anchor) + 1 if anchor else len(code) - len(code.lstrip()) + 1
    return inspect.getsourcefile(fn), first + i, col, text


def assert_located(message: str, fn: Callable) -> None:
    file, line, col, text = marked_location(fn)
    where = _WHERE.search(message)
    assert where, f"no file/line/column in:\n{message}"
    assert Path(where["file"]).resolve() == Path(file).resolve(), message
    assert (int(where["line"]), int(where["col"])) == (line, col), message
    rows = message.splitlines()
    quoted = [i for i, row in enumerate(rows) if row.strip() == text.strip()]
    assert quoted, f"the offending line is not quoted:\n{message}"
    caret_row = rows[quoted[0] + 1]
    assert caret_row.strip() == "^", f"no caret under the quote:\n{message}"
    quote = rows[quoted[0]]
    shift = (len(text) - len(text.lstrip())) - (len(quote) - len(quote.lstrip()))
    assert caret_row.index("^") + shift == col - 1, message


def assert_hint_names_real_numpy(message: str) -> None:
    """A suggestion to call ``np.name(...)`` names a function NumPy has."""
    for name in re.findall(r"\bnp\.([A-Za-z_][\w.]*)\(", message.split("Instead:")[-1]):
        obj = np
        for part in name.split("."):
            obj = getattr(obj, part, None)
        assert obj is not None, f"the hint suggests np.{name}, which does not exist"


@pytest.fixture(scope="module")
def J():
    return jax_twin(catalogue_fns) if HAVE_JAX else None


@pytest.fixture(scope="module")
def JE():
    import error_fns

    return jax_twin(error_fns) if HAVE_JAX else None


class _Both:
    """The twin namespace for JAX calls: catalogue_fns, then error_fns."""

    def __init__(self, *modules) -> None:
        self.modules = modules

    def __getattr__(self, name):
        for m in self.modules:
            if hasattr(m, name):
                return getattr(m, name)
        raise AttributeError(name)


def _params():
    out = []
    for k in EC.CATALOGUE:
        marks = [pytest.mark.xfail(strict=True, reason=k.open)] if k.open else []
        out.append(pytest.param(k, id=k.id, marks=marks))
    return out


def test_catalogue_has_forty_distinct_kinds() -> None:
    ids = [k.id for k in EC.CATALOGUE]
    assert len(ids) == len(set(ids))
    assert len(ids) >= 40, len(ids)


@pytest.mark.parametrize("kind", _params())
def test_bad_input_is_answered_clearly(kind: EC.Kind, J, JE) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        err = EC.run_kind(kind)
    assert err is not None, f"{kind.id}: no error was raised"
    message = str(err)
    assert isinstance(err, kind.error), f"{type(err).__name__}: {message}"
    first = message.splitlines()[0] if message else ""
    if isinstance(err, s2s.TransformError):
        first = err.what  # without the function's name, which may contain the word
    for word in kind.words:  # in the statement of the problem, not the quoted source
        assert word in first, f"{word!r} not in the first line of:\n{message}"
    if kind.where is not None:
        assert_located(message, kind.where)
        name = kind.where.__name__
        if name != "make_mutated_closure":
            assert name in message.splitlines()[0], message
    assert re.search(kind.hint, message, re.M), (
        f"the message does not say what to write instead ({kind.hint!r}):\n{message}")
    assert_hint_names_real_numpy(message)
    if kind.jax is not None and HAVE_JAX:
        twin = _Both(J, JE)
        try:
            kind.jax(twin)
        except Exception as theirs:  # noqa: BLE001 - JAX's answer is the oracle
            assert isinstance(err, type(theirs)), (
                f"JAX raises {type(theirs).__name__}, s2s {type(err).__name__}")
            a, b = message.splitlines()[0], str(theirs).splitlines()[0]
            if kind.compare == "contains":
                assert b in a, (a, b)
            else:
                assert a == b, (a, b)
        else:
            pytest.fail(f"the JAX oracle no longer raises for {kind.id}")


def test_transform_errors_name_the_function_they_could_not_transform() -> None:
    """The first line of every located TransformError names the user's function."""
    for k in EC.CATALOGUE:
        if k.where is None or k.open or not issubclass(k.error, s2s.TransformError):
            continue
        err = EC.run_kind(k)
        assert isinstance(err, s2s.TransformError)
        assert err.func, k.id


def _doc_text() -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return EC.render({k.id: EC.run_kind(k) for k in EC.CATALOGUE})


def test_docs_errors_md_is_current() -> None:
    expected = _doc_text()
    assert DOC.exists(), "docs/errors.md is missing: run python tools/errors_doc.py"
    assert DOC.read_text() == expected, (
        "docs/errors.md is stale: run python tools/errors_doc.py")


if __name__ == "__main__":  # pragma: no cover - the generator is tools/errors_doc.py
    sys.exit("run python tools/errors_doc.py")


# ---- None outputs: JAX returns None where no error is due --------------------------------

NONE_OUT = [
    pytest.param("jvp", lambda m: m.jvp(E_none(m), (EC.X,), (EC.X,)), id="jvp"),
    pytest.param("vmap", lambda m: m.vmap(E_none(m))(EC.XS), id="vmap"),
    pytest.param("jacfwd", lambda m: m.jacfwd(E_none(m))(EC.X), id="jacfwd"),
]


def E_none(module):
    import error_fns

    if module is s2s:
        return error_fns.none_out
    return jax_twin(error_fns).none_out


@pytest.mark.parametrize("name, call", NONE_OUT)
def test_none_output_gives_what_jax_gives(name, call) -> None:
    jax = pytest.importorskip("jax")
    theirs = call(jax)
    ours = call(s2s)
    flat = lambda t: list(t) if isinstance(t, tuple) else [t]  # noqa: E731
    assert [v is None for v in flat(ours)] == [v is None for v in flat(theirs)], (ours, theirs)
