"""A function made again with the same code (a lambda written in a training loop, a
nested ``def`` run again): its source is read and parsed once per code object, not
once per function object (s2s/api/families.py shares what is emitted from it)."""

from __future__ import annotations

import dataclasses
import types
from typing import Any, Callable

from ..caches import LRU

# id(code) -> (the code, its file's stamp, the module's globals, the parse)
_BY_CODE: LRU[int, tuple[Any, Any, Any, Any]] = LRU(128)


def parsed(fn: Any, code: Any, stamp: Any, parse: Callable[[Any], Any]) -> Any:
    """``parse(fn)``, or the parse of the function of the same code object, module
    and file stamp parsed before (its positions a copy: the normalizer adds the nodes
    it synthesizes to them)."""
    if stamp is None or type(fn) is not types.FunctionType:
        return parse(fn)
    same = _BY_CODE.get(id(code))
    if same is not None and same[0] is code and same[1] == stamp and (
            same[2] is fn.__globals__):
        return dataclasses.replace(same[3], positions=dict(same[3].positions))
    result = parse(fn)
    _BY_CODE[id(code)] = (code, stamp, fn.__globals__, dataclasses.replace(
        result, positions=dict(result.positions)))
    return result
