"""Three defects (session 16): a race between the specializer's thread and the
caller's own ``import black``; a list times a float computed by jvp; a swap through
a scalar of a 1-D array refused as aliasing."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import s2s
from s2s.api import signatures
from s2s.emit import code as emitcode


def _sin_dot(x):
    return np.sum(np.sin(x) * x)


def test_specializer_thread_is_never_blacks_first_importer(monkeypatch) -> None:
    """black is compiled by mypyc: its module enters sys.modules half-made, and a
    caller's ``import black`` while the specializer thread imports it got that module
    (``module 'black' has no attribute 'Mode'``, one run in two in a script).  The
    thread's starter imports black first; here black counts as not yet imported
    (s2s's cache emptied) when the second call starts the thread."""
    monkeypatch.setattr(signatures, "IN_BACKGROUND", True)
    started: list[bool] = []
    start = threading.Thread.start

    def recording_start(self) -> None:
        if self.name == "s2s-specialize":
            started.append(bool(emitcode._BLACK))
        start(self)

    monkeypatch.setattr(threading.Thread, "start", recording_start)
    g = s2s.grad(_sin_dot)
    x = np.linspace(0.1, 1.0, 4)
    first = g(x)
    monkeypatch.setattr(emitcode, "_BLACK", [])  # (as in a fresh process)
    second = g(x)
    for t in threading.enumerate():
        if t.name == "s2s-specialize":
            t.join()
    assert started == [True]
    want = np.sin(x) + x * np.cos(x)
    np.testing.assert_allclose(first, want, rtol=1e-13)
    np.testing.assert_allclose(second, want, rtol=1e-13)
    np.testing.assert_allclose(g(x), want, rtol=1e-13)
