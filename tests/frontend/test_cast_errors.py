"""NumPy's TypeError for a cast its rule forbids (``np.bincount`` of float labels),
raised by the code s2s made: it was unlocated (a line of ``<s2s:...>`` code); now a
:class:`s2s.errors.CastError` (a TypeError still) at the user's line, under grad, jvp
and vmap.  Integer labels: the gradient against central differences."""

from __future__ import annotations

import traceback

import numpy as np
import pytest
from error_fns import counts_float_labels
from support import central_grad

import s2s
from s2s.errors import CastError

X = np.array([0.3, 0.7, 1.2])
FLOATS = np.array([0.0, 1.0, 1.0])

RUNS = {
    "grad": lambda: s2s.grad(counts_float_labels)(X, FLOATS),
    "jvp": lambda: s2s.jvp(counts_float_labels, (X, FLOATS), (X, FLOATS)),
    "vmap": lambda: s2s.vmap(counts_float_labels)(np.stack([X, X]),
                                                  np.stack([FLOATS, FLOATS])),
}


@pytest.mark.parametrize("transform", list(RUNS))
def test_float_labels_located_at_the_users_line(transform) -> None:
    with pytest.raises(TypeError) as python:
        counts_float_labels(X, FLOATS)
    frame = traceback.extract_tb(python.value.__traceback__)[-1]
    with pytest.raises(CastError) as err:
        RUNS[transform]()
    loc = err.value.loc
    assert str(python.value) in err.value.what and "<s2s" not in str(err.value)
    assert (loc.file, loc.line, loc.col) == (frame.filename, frame.lineno, frame.colno + 1)
    assert loc.text.strip() == frame.line.strip()


def test_integer_labels_against_central_differences() -> None:
    labels = FLOATS.astype(int)
    got = s2s.grad(counts_float_labels)(X, labels)
    want = central_grad(lambda x: counts_float_labels(x, labels), X)
    np.testing.assert_allclose(got, want, rtol=1e-6)
