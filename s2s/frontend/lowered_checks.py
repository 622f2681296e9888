"""What the Normalizer checks once a function is lowered, with every statement known
(a later statement of a loop may hand out a list or an array an earlier one read or
wrote), and the spelling of its errors (record_spelling.py)."""

from __future__ import annotations

from typing import Any

from . import param_writes
from .object_setters import check_augmented_fields
from .param_writes import refuse_passed
from .record_spelling import as_written
from .sequences import check_literal_reads

__all__ = ["as_written", "check_lowered", "refuse_passed"]


def check_lowered(n: Any, body: list) -> None:
    """A list read as its literal and changed in place after (sequences.py); ``p.w
    += v`` in a loop whose array a later statement hands out (object_setters.py); a
    callee's ``y += v`` into what a call passes (param_writes.py)."""
    param_writes.settle(n, body)
    check_literal_reads(n)
    check_augmented_fields(n)
