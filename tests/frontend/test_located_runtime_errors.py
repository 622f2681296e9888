"""Errors raised while emitted code runs point at the user's line (issue 23, item 7).

An ``if``/``while`` on an array of several elements outside vmap has no truth value:
NumPy's ValueError from the emitted ``if t:`` becomes s2s.TruthValueError (still a
ValueError) naming the user's file, line and column, quoting the line and saying what
to write instead.  try, global and yield are refused when transforming, located."""

from __future__ import annotations

import inspect

import draw_fns as D
import numpy as np
import pytest

import s2s

X = np.array([0.5, -1.0, 2.0]) * 3


def line_of(text: str) -> int:
    lines = inspect.getsource(D).splitlines()
    return next(k for k, ln in enumerate(lines, 1) if ln.strip() == text)


def assert_located(err: BaseException, text: str, line: int, col: int = 5) -> None:
    message = str(err)
    assert f'draw_fns.py", line {line}, column {col}' in message
    assert "\n    " + text + "\n" in message  # the line quoted
    assert "Instead: test one number" in message
    assert "<s2s:" not in message


CASES = [(D.branches_on_array, "if x > 0:"), (D.loops_on_array, "while s > 1.0:"),
         (D.calls_branching, "if x > 0:")]
TRANSFORMS = {
    "grad": lambda f: s2s.grad(f)(X),
    "value_and_grad": lambda f: s2s.value_and_grad(f)(X),
    "jvp": lambda f: s2s.jvp(f, (X,), (np.ones(3),)),
    "jacfwd": lambda f: s2s.jacfwd(f)(X),
    "jacrev": lambda f: s2s.jacrev(f)(X),
    "hessian": lambda f: s2s.hessian(f)(X),
    "vjp": lambda f: s2s.vjp(f, X),
}

# (`s2s.vjp(f, x)` runs f itself first, as jax.vjp traces it: an `if` on an array is
# raised there, located, before a vjp_fn exists; the vjp_fn's own call is located
# the same way, reraise_located with the IR)


@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
@pytest.mark.parametrize("fn, text", CASES, ids=lambda c: getattr(c, "__name__", "t"))
def test_an_if_on_an_array_is_located_at_the_users_line(fn, text, transform):
    with pytest.raises(s2s.TransformError) as info:
        TRANSFORMS[transform](fn)
    assert isinstance(info.value, ValueError)  # what NumPy raises, for except clauses
    line = line_of(text) if fn is not D.calls_branching else next(
        k for k, ln in enumerate(inspect.getsource(D).splitlines(), 1)
        if ln.strip() == text and k > line_of("def _branching_helper(x):"))
    assert_located(info.value, text, line)


def test_a_scalar_test_still_runs():
    np.testing.assert_allclose(s2s.grad(D.branches_on_array)(2.0), 1.0)


def test_the_refused_statements_are_located_when_transforming(tmp_path):
    import sys

    path = tmp_path / "refused_mod.py"
    path.write_text(
        "import numpy as np\nG = 1.0\n\n\ndef tries(x):\n    try:\n        y = np.log(x)\n"
        "    except FloatingPointError:\n        y = x\n    return np.sum(y)\n\n\n"
        "def writes_global(x):\n    global G\n    G = x\n    return np.sum(x)\n\n\n"
        "def generates(x):\n    yield x\n")
    sys.path.insert(0, str(tmp_path))
    try:
        import refused_mod as R
    finally:
        sys.path.remove(str(tmp_path))
    # (a `try` whose `except` can never run is its no-raise path: misc17's array_try;
    # np.log can raise FloatingPointError under np.errstate, so this one is refused)
    for fn, line, text in ((R.tries, 8, "except FloatingPointError:"),
                           (R.writes_global, 14, "global G"),
                           (R.generates, 20, "yield x")):
        with pytest.raises(s2s.TransformError) as info:
            s2s.grad(fn)(np.ones(3))
        message = str(info.value)
        assert f'refused_mod.py", line {line}, column 5' in message
        assert "\n    " + text + "\n" in message and "Instead:" in message
