"""What every backend is (the NumPy backend is the plain one), and the errors a
backend raises: below the backends' selection in ``s2s.backends``, so a backend
module imports this, never the package that loads it."""

from __future__ import annotations

from typing import Callable

from ..errors import TransformError


class BackendUnavailableError(ImportError):
    """The backend's library is not installed; the message names the extra."""


class TracedValueError(TransformError):
    """Code on the JAX backend needs, as a Python value, a value JAX only traces.

    A Python ``if``/``while`` on an array, ``range(n)`` of an array: under ``jax.jit``
    these are known only when the compiled code runs.  The message quotes the line.
    """


class Backend:
    """The NumPy backend, and the interface every backend has.

    ``module_text(text)`` is the emitted module's text as it runs on this backend
    (its passes applied); ``prepare(fn, text)`` the emitted function ``fn`` compiled
    there; ``jits`` whether :func:`s2s.jit` compiles through the backend's own jit.
    """

    name = "numpy"
    jits = False

    def module_text(self, text: str) -> str:
        return text

    def prepare(self, fn: Callable, text: str | None = None) -> Callable:
        return fn

    def __repr__(self) -> str:
        return f"<s2s backend {self.name!r}>"
