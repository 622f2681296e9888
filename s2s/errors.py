"""Errors s2s raises at transform time, each pointing at the user's source.

Every error about the user's program is a :class:`TransformError`. Its message names
the file, line and column, quotes the offending line with a caret under the column,
and says what to write instead.  Misuse that JAX reports with a built-in exception
class (a non-scalar output to ``grad``, integer inputs, ...) raises that class instead,
with JAX's wording, so code written against JAX catches the same thing.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Loc:
    """A position in the user's source: 1-based line, 1-based column."""

    file: str
    line: int
    col: int
    text: str  # the whole source line, without its newline

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


class TransformError(Exception):
    """The user's function uses something s2s cannot transform.

    ``str(err)`` reads::

        s2s cannot transform `loss`: `try` statements are not supported
          File "model.py", line 12, column 5
            try:
            ^
          Instead: move the error handling outside the differentiated function.
    """

    def __init__(
        self,
        what: str,
        loc: Loc | None = None,
        hint: str | None = None,
        func: str | None = None,
    ) -> None:
        self.what = what
        self.loc = loc
        self.hint = hint
        self.func = func
        super().__init__(self._render())

    def _render(self) -> str:
        head = f"s2s cannot transform `{self.func}`: " if self.func else "s2s: "
        lines = [head + self.what]
        if self.loc is not None:
            loc = self.loc
            lines.append(f'  File "{loc.file}", line {loc.line}, column {loc.col}')
            text = loc.text.rstrip("\n")
            stripped = text.lstrip()
            indent = len(text) - len(stripped)
            lines.append("    " + stripped)
            lines.append("    " + " " * max(loc.col - 1 - indent, 0) + "^")
        if self.hint:
            lines.append("  Instead: " + self.hint)
        return "\n".join(lines)

    # a refusal of an array write NumPy makes in place where another name, container,
    # view or the caller would see it (:func:`mark_shared_write`)
    shared_write = False

    def with_func(self, func: str) -> "TransformError":
        if self.func is None:
            self.func = func
            self.args = (self._render(),)
        return self


def mark_shared_write(err: TransformError) -> TransformError:
    """``err``, marked as refusing an array write NumPy makes in place that another
    name, view, container or the caller would see.  ``s2s.jit(f, backend="jax")`` of
    a plain function raises these too: JAX's arrays are values, so its code would
    rebind the written name alone and give another number than NumPy."""
    err.shared_write = True
    return err


class SourceNotFoundError(TransformError):
    """The function's source text is not available (REPL, ``exec``, C extension)."""


class UnsupportedSyntaxError(TransformError):
    """A Python construct outside the subset s2s transforms."""


class UnsupportedCallError(TransformError):
    """A call to something with no rule: unknown NumPy function, opaque object, ..."""


class NonDifferentiableError(TransformError):
    """A differentiable value flows into an operation that has no derivative."""


class CustomRuleError(TransformError, TypeError):
    """A ``custom_jvp``/``custom_vjp`` function where its rules cannot serve (forward
    mode of a ``custom_vjp`` function); a TypeError, as JAX raises."""


class TruthValueError(TransformError, ValueError):
    """An ``if``/``while`` on an array with more than one element, raised where the
    emitted code tests it and located at the user's own line (NumPy's ValueError)."""


class EmptyStackError(TransformError, ValueError):
    """``np.stack`` of an empty list in emitted code (a vmap written in the function over
    an empty batch), located at the user's line (NumPy's ValueError)."""


class StackShapeError(TransformError, ValueError):
    """Items of different shapes of a tuple or list read by a key known only when the
    code runs (``xs[i]``: s2s stacks the items to read one), located at the user's
    line (NumPy's ValueError)."""


class ListIndexError(TransformError, IndexError):
    """An index out of the range of a list the function grew (``hs[k]``), raised where
    emitted code reads the item and located at the user's own line (Python's
    IndexError)."""


class UnpackError(TransformError, ValueError):
    """``a, b = v`` (or ``for a, b in pts``) of a tuple or list whose length in this
    call is not the number of targets, located at the user's line with Python's
    message (Python's ValueError)."""

    @classmethod
    def of(cls, width: int, got: int, loc: Loc | None, at_least: bool = False,
           func: str | None = None) -> "UnpackError":
        """Python's message for ``got`` items unpacked into ``width`` names (``at_least``:
        and a starred name)."""
        if at_least:
            return cls(f"not enough values to unpack (expected at least {width}, got {got})",
                       loc, "match the targets to the values", func)
        if got > width:  # (Python 3.14 says how many it got here too)
            counted = f", got {got}" if sys.version_info >= (3, 14) else ""
            what = f"too many values to unpack (expected {width}{counted})"
        else:
            what = f"not enough values to unpack (expected {width}, got {got})"
        return cls(what, loc, f"unpack it into {got} name{'s' * (got != 1)}, or take "
                   "the rest as a list: `a, *rest = v`", func)


class MissingKeyError(TransformError, KeyError):
    """``d[name]`` of a dict with no such key in this call (``name`` a string the call
    passes, read by it as a constant key), located at the user's line (Python's
    KeyError, its message unquoted)."""

    __str__ = Exception.__str__


class SliceIndexError(TransformError, TypeError):
    """``for op in ops[:k]`` with ``k`` a float (or another value with no
    ``__index__``) at this call, located at the slice with Python's message (Python's
    TypeError)."""


class NotIterableError(TransformError, TypeError):
    """``a, b = v`` of a value with no items (a NumPy scalar such as ``np.sum(x)``, a
    0-d array, a number), located at the user's line with Python's message (Python's
    TypeError)."""

    @classmethod
    def of(cls, value: object, loc: Loc | None, func: str | None = None) -> "NotIterableError":
        """Python's message for unpacking ``value`` (as NumPy code running the same
        source would hold it: a 0-d array of a transform's is named as the NumPy
        scalar of its dtype)."""
        if type(value) in (bool, int, float, complex):
            name = type(value).__name__
        else:
            dtype = getattr(value, "dtype", None)
            name = f"numpy.{getattr(dtype, 'name', type(value).__name__)}"
        return cls(f"cannot unpack non-iterable {name} object", loc,
                   "unpack a tuple, list or array of at least one dimension; a "
                   "scalar is one value: `a = np.sum(x)`", func)

    @staticmethod
    def fails(value: object) -> bool:
        """Whether unpacking ``value`` fails for having no items (no length, or 0-d)."""
        return getattr(value, "ndim", 1) == 0 or not hasattr(value, "__len__")


class UnboundFunctionError(TransformError, UnboundLocalError):
    """A function (or a value) bound only inside a loop that ran no iteration, read
    after the loop (Python's UnboundLocalError, a NameError), raised where emitted code
    reads it and located at the user's own line."""


class FieldsAttributeError(TransformError, AttributeError):
    """A method read of an object s2s hands your code as the dict of its fields (a
    NamedTuple a transform batches), located at your line; an AttributeError, as a
    missing attribute is in Python."""


class SingularMatrixError(TransformError, np.linalg.LinAlgError):
    """NumPy's LinAlgError (a singular matrix) from the code made from your line, where
    a derivative rule needs an invertible matrix (np.linalg.det's at a singular one,
    where JAX's gives the adjugate), located at your line; a LinAlgError still."""


class CastError(TransformError, TypeError):
    """NumPy's TypeError for a cast its rule forbids (``np.bincount`` of float labels:
    "Cannot cast array data from dtype('float64') to dtype('int64')") from the code
    made from your line, located at your line; a TypeError still, as NumPy raises."""


class MissingRuleError(TransformError, AttributeError):
    """A ``custom_jvp``/``custom_vjp`` function differentiated before its rule was
    defined; an AttributeError, as JAX raises."""


class ShapeError(TransformError, ValueError):
    """``s2s.eval_shape`` found shapes that do not fit (operands that do not
    broadcast, an axis out of range), located at the user's line; a ValueError, as
    NumPy raises for the same shapes."""
