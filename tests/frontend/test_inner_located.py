"""An error met by the code of a transform written inside the function (``s2s.grad(g)(x)``
in ``f``'s body) was located in that emitted code (``<s2s:g_grad:...>``, a line the
user never wrote); now at the user's line in ``g``: an ``if`` on an array's truth
value (TruthValueError), ``np.bincount`` of float labels (CastError).  Oracle: Python's
own error for ``g`` run as written, its traceback's position."""

from __future__ import annotations

import linecache
import traceback

import inner_located_fns as F
import numpy as np
import pytest
from error_fns import counts_float_labels

import s2s
from s2s.errors import CastError, TruthValueError

X = np.array([0.3, -0.7])
RUNS = {
    "grad": lambda f: s2s.grad(f)(X),
    "jvp": lambda f: s2s.jvp(f, (X,), (X,)),
    "vmap": lambda f: s2s.vmap(f)(np.stack([X, 2 * X])),
}
CASES = {"outer_branchy": (TruthValueError, ValueError, F.branchy, (X,)),
         "outer_counts": (CastError, TypeError, counts_float_labels,
                          (X, np.array([0.0, 1.0])))}


@pytest.mark.parametrize("transform", list(RUNS))
@pytest.mark.parametrize("name", list(CASES))
def test_located_at_the_inner_functions_line(name, transform) -> None:
    ours, pythons, inner, args = CASES[name]
    with pytest.raises(pythons) as python:
        inner(*args)
    frame = traceback.extract_tb(python.value.__traceback__)[-1]
    with pytest.raises(ours) as err:
        RUNS[transform](getattr(F, name))
    loc = err.value.loc  # (an `if`'s truth value: s2s points at the `if`, Python at its test)
    text = linecache.getline(frame.filename, frame.lineno)
    col = frame.colno + 1 if ours is CastError else len(text) - len(text.lstrip()) + 1
    assert (loc.file, loc.line, loc.col) == (frame.filename, frame.lineno, col)
    assert loc.text.strip() == frame.line.strip() and "<s2s" not in str(err.value)


def test_a_list_passed_to_an_inner_transform_is_refused_at_its_line() -> None:
    """Its code is made for arrays: it met Python's `/` on the list (an unlocated
    TypeError), or under jvp gave NumPy's number."""
    for run in RUNS.values():
        with pytest.raises(s2s.TransformError) as err:
            run(F.outer_list)
        loc = err.value.loc
        assert (loc.file, loc.text.strip()) == (F.__file__, "r = s2s.grad(halved_sum)([x, 2 * x])")
        assert loc.col == loc.text.index("s2s.grad") + 1 and "tuple or list" in err.value.what
