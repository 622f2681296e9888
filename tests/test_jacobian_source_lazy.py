"""A Jacobian's call does not make the text of the code it ran: ``.source`` is made
when read (a ``jacrev`` call spent some 60% of its time making it: 1.8 ms a call,
0.38 ms now, tools/bench_jacobian_call.py), once per code (read again, the same
text); what it shows is the code the latest call ran, as before."""

from __future__ import annotations

import numpy as np
import pytest
import jacobian_call_fns as F

import s2s
from s2s.api import transformed


@pytest.fixture
def listings(monkeypatch):
    made = []
    real = transformed.with_forwards

    def counted(*args, **kwargs):
        made.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(transformed, "with_forwards", counted)
    return made


@pytest.mark.parametrize("make", [s2s.jacrev, s2s.jacfwd, pytest.param(
    s2s.hessian, marks=pytest.mark.slow)])
@pytest.mark.every_case
def test_calls_make_no_source_text(make, listings) -> None:
    J = make(F.cubes)
    x = np.linspace(0.5, 1.5, 4)
    for k in range(10):
        out = J(x * (1 + k))
    assert listings == []  # (no text made by ten calls)
    text = J.source
    assert "def " in text and len(listings) == 1
    assert J.source == text == s2s.source(J) and len(listings) == 1  # (made once)
    want = np.diag(2 * x * 10) if make is s2s.hessian else (x * 10) ** 2  # (of x**3 / 3)
    np.testing.assert_allclose(out, want, rtol=1e-12)
