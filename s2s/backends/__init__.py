"""Backends: where emitted code runs.

A backend is the namespace emitted code runs in plus the passes applied to the
emitted module's text before it is compiled there.  Two are built in:

* ``numpy`` (the default): the emitted NumPy code as it is, nothing to install.
* ``jax``: the same text with ``np`` bound to ``jax.numpy`` (through
  :mod:`s2s.backends.jax_numpy`, which leaves host constants to NumPy), s2s's runtime
  helpers rebuilt on it (:mod:`s2s.backends.jax_runtime`), in-place writes lowered to
  ``.at[...]`` updates (:mod:`s2s.backends.lower`), compiled by ``jax.jit``.  Needs
  ``pip install s2s[jax]``; turns on JAX's 64-bit mode unless asked not to.

``s2s.jit(f, backend=...)`` picks one per function; :func:`set_default` (or the
``S2S_BACKEND`` environment variable) picks the default.
"""

from __future__ import annotations

import contextlib
import importlib
import os
from typing import Iterator

from .base import Backend, BackendUnavailableError, TracedValueError

__all__ = [
    "Backend",
    "BackendUnavailableError",
    "TracedValueError",
    "available",
    "get",
    "get_default",
    "set_default",
    "using",
]

NAMES = ("numpy", "jax")


_NUMPY = Backend()
_INSTANCES: dict[str, Backend] = {"numpy": _NUMPY}
_DEFAULT = [os.environ.get("S2S_BACKEND", "numpy") or "numpy"]


def _check_name(name: str) -> str:
    if name not in NAMES:
        raise ValueError(f"unknown s2s backend {name!r}; choose one of {', '.join(NAMES)}")
    return name


def get(name: str | None = None) -> Backend:
    """The backend called ``name`` (None: the default), loading it on first use.

    Raises :class:`BackendUnavailableError` naming the extra to install when the
    backend's library is missing.
    """
    name = _check_name(name or get_default())
    found = _INSTANCES.get(name)
    if found is not None and name != "jax":
        return found
    if name == "jax":
        try:
            importlib.import_module("jax")
        except ImportError as exc:
            raise BackendUnavailableError(
                "the 'jax' backend needs JAX, which is not installed: "
                "pip install s2s[jax]"
            ) from exc
        if found is None:
            from .jax_backend import JaxBackend

            found = _INSTANCES["jax"] = JaxBackend()
    return found


def available() -> list[str]:
    """The backends that can run here (their libraries are installed)."""
    out = []
    for name in NAMES:
        try:
            get(name)
        except BackendUnavailableError:
            continue
        out.append(name)
    return out


def get_default() -> str:
    """The name of the backend ``s2s.jit`` uses when none is given."""
    return _DEFAULT[0]


def set_default(name: str) -> str:
    """Make ``name`` the default backend of ``s2s.jit``; returns the previous one.

    The ``S2S_BACKEND`` environment variable sets it at import.
    """
    previous = _DEFAULT[0]
    _DEFAULT[0] = _check_name(name)
    return previous


@contextlib.contextmanager
def using(name: str) -> Iterator[None]:
    """``with s2s.backends.using("jax"):`` the default backend inside the block."""
    previous = set_default(name)
    try:
        yield
    finally:
        _DEFAULT[0] = previous
