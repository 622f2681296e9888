"""``np.may_share_memory`` over many arrays at once, in time linear in their number
(issue 23: a list argument of 1,000 arrays made the alias checks of a gradient's call
a million pairwise tests).

``np.may_share_memory(a, b)`` (its default, a bounds check) says yes exactly when the
two arrays' memory extents, the half-open byte ranges ``[start, end)`` their elements
span, are both non-empty and overlap.  ``extent`` computes that range as NumPy does
(``get_array_memory_extents`` in ``numpy/_core/src/common/mem_overlap.c``); an index of
extents sorted by their start answers "does this array's extent overlap one of
theirs?" by bisection, with the same answer as ``any(np.may_share_memory(a, b) for b in
theirs)``, which stays the method for a few arrays (it is cheaper there)."""

from __future__ import annotations

import bisect
from typing import Sequence

import numpy as np

# Pairwise tests cost about a tenth of one array's extent: past this many, an index.
PAIRS_PER_EXTENT = 8


def extent(a: np.ndarray) -> tuple[int, int] | None:
    """The byte range ``[start, end)`` ``a``'s elements span, or None where it spans none
    (a size-0 array, or a zero itemsize), as ``np.may_share_memory`` computes it."""
    low = high = 0
    for n, stride in zip(a.shape, a.strides):
        if n == 0:
            return None
        step = stride * (n - 1)
        if step > 0:
            high += step
        else:
            low += step
    high += a.itemsize
    if high <= low:
        return None
    data = a.__array_interface__["data"][0]
    return data + low, data + high


class Extents:
    """The extents of some arrays (they may overlap each other), sorted by start, with
    the largest end among the first k: does an extent overlap one of them?"""

    def __init__(self, arrays: Sequence[np.ndarray]) -> None:
        spans = sorted(e for e in map(extent, arrays) if e is not None)
        self.starts = [s for s, _ in spans]
        self.reach, top = [], 0
        for _, end in spans:
            top = max(top, end)
            self.reach.append(top)

    def overlaps(self, a: np.ndarray) -> bool:
        """``any(np.may_share_memory(a, b) for b in arrays)``."""
        if not self.starts:
            return False
        span = extent(a)
        if span is None:
            return False
        k = bisect.bisect_left(self.starts, span[1])  # (those starting before a ends)
        return k > 0 and self.reach[k - 1] > span[0]


def any_overlap(arrays: Sequence[np.ndarray]) -> bool:
    """May two of ``arrays`` (distinct places in the sequence) share memory?  Two
    distinct arrays that each own the memory NumPy allocated for them (no base, their
    OWNDATA flag) cannot: where all do, only one that stands twice can."""
    if len(arrays) <= 2 * PAIRS_PER_EXTENT:
        return any(np.may_share_memory(a, b) for i, a in enumerate(arrays)
                   for b in arrays[i + 1:])
    owners = [id(a) for a in arrays if a.base is None and a.flags.owndata and a.size]
    if len(set(owners)) < len(owners):
        return True
    if len(owners) == len(arrays) or all(a.size == 0 or (
            a.base is None and a.flags.owndata) for a in arrays):
        return False
    spans = sorted(e for e in map(extent, arrays) if e is not None)
    top = 0
    for start, end in spans:
        if start < top:
            return True
        top = max(top, end)
    return False


class Disjoint:
    """Extents that do not overlap each other, added one at a time (sorted by start,
    so their ends are sorted too): does an extent overlap one of them?"""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []

    def add_unless_overlapping(self, a: np.ndarray) -> bool:
        """Add ``a``'s extent unless it overlaps one already here; say if it did."""
        span = extent(a)
        if span is None:
            return False
        start, end = span
        k = bisect.bisect_left(self.starts, end)
        if k > 0 and self.ends[k - 1] > start:
            return True
        self.starts.insert(k, start)
        self.ends.insert(k, end)
        return False
