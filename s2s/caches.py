"""Bounded caches: what s2s memoizes per function (its IR, its emitted text, the
compiled code) must not keep every function ever transformed alive.  A training
loop that calls ``s2s.grad(lambda w: loss(w, batch))`` each step makes a new
function each time; each cache keeps the most recently used entries only."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Generic, Iterator, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LRU(Generic[K, V]):
    """A mapping that keeps its ``maxsize`` most recently used entries."""

    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self._data: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K, default: Any = None) -> Any:
        with self._lock:
            try:
                self._data.move_to_end(key)
            except KeyError:
                return default
            return self._data[key]

    def __getitem__(self, key: K) -> V:
        with self._lock:
            self._data.move_to_end(key)
            return self._data[key]

    def __setitem__(self, key: K, value: V) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.maxsize:
                self._data.popitem(last=False)

    def __delitem__(self, key: K) -> None:
        with self._lock:
            del self._data[key]

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._data

    def __len__(self) -> int:
        return len(self._data)

    def __iter__(self) -> Iterator[K]:
        with self._lock:
            return iter(list(self._data))

    def pop(self, key: K, default: Any = None) -> Any:
        with self._lock:
            return self._data.pop(key, default)

    def setdefault(self, key: K, default: V) -> V:
        with self._lock:
            if key not in self._data:
                self._data[key] = default
                while len(self._data) > self.maxsize:
                    self._data.popitem(last=False)
            self._data.move_to_end(key)
            return self._data[key]

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
