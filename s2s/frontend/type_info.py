"""Facts of a dtype read in the function: ``np.finfo(x.dtype).eps`` (``np.iinfo(d).max``)
and ``x.dtype.type(0.5)``.

``np.finfo(d).attr`` is the primitive ``finfo`` with the attribute as a parameter,
emitted as written: the code reads the dtype each call has, so a float32 call gets
float32's eps and a float64 call float64's (never the first call's).  The object
``np.finfo(d)`` kept under a name is refused (write the attribute in the same
expression).  ``d.type(v)`` of a dtype ``x.dtype`` is the cast primitive ``dtype.type``.
"""

from __future__ import annotations

from typing import Any

import libcst as cst
import numpy as np

from ..errors import UnsupportedCallError
from ..ir.nodes import Const, Var

INFOS = {np.finfo: "finfo", np.iinfo: "iinfo"}
_EXAMPLE = {"finfo": np.finfo(np.float64), "iinfo": np.iinfo(np.int64)}


def info_callee(n: Any, func: Any) -> str | None:
    """``"finfo"``/``"iinfo"`` where ``func`` names ``np.finfo``/``np.iinfo``."""
    if not isinstance(func, (cst.Name, cst.Attribute)):
        return None
    root = func
    while isinstance(root, cst.Attribute):
        root = root.value
    if not isinstance(root, cst.Name) or root.value in n.local_names:
        return None
    try:
        obj = n.resolver.resolve_dotted(func)[0]
    except Exception:  # (not a dotted name of modules: not these)
        return None
    return INFOS.get(obj) if isinstance(obj, type) else None


def info_attribute(n: Any, node: cst.Attribute, target: str | None) -> Any:
    """``np.finfo(d).attr``: the primitive, or None where ``node`` is another attribute."""
    call = node.value
    if not isinstance(call, cst.Call):
        return None
    fn = info_callee(n, call.func)
    if fn is None:
        return None
    attr = node.attr.value
    args, kwargs = n.calls.call_args(call)
    if len(args) + len(kwargs) != 1 or (kwargs and "dtype" not in kwargs):
        raise UnsupportedCallError(f"np.{fn} takes one dtype here", n.loc(call),
                                   f"write np.{fn}(x.dtype).{attr}", n.display)
    if attr.startswith("_") or not hasattr(_EXAMPLE[fn], attr):
        raise UnsupportedCallError(f"np.{fn}(...) has no attribute `{attr}`",
                                   n.loc(node.attr), f"check the spelling (np.{fn}'s: "
                                   + ", ".join(a for a in dir(_EXAMPLE[fn])
                                               if not a.startswith("_")) + ")", n.display)
    dtype = args[0] if args else kwargs["dtype"]
    name = n.exprs.target(target, f"{attr}")
    return n.emit(name, fn, (dtype,), {"attr": Const(attr, repr(attr))}, node)


def info_value_error(fn: str, n: Any, node: Any) -> UnsupportedCallError:
    """``np.finfo(d)`` kept as a value (``fi = np.finfo(d)``): refused, located."""
    return UnsupportedCallError(
        f"`np.{fn}(...)` is supported only with its attribute in the same expression "
        f"(`np.{fn}(x.dtype).{'eps' if fn == 'finfo' else 'max'}`), not as an object kept "
        "or passed on", n.loc(node),
        f"write the attribute where you read it: np.{fn}(x.dtype).{'eps' if fn == 'finfo' else 'max'}",
        n.display)


def dtype_type_call(n: Any, node: cst.Call, base: Any, method: str,
                    target: str | None) -> Any:
    """``d.type(v)`` of ``d = x.dtype``: the cast primitive, or None."""
    let = n.lets.get(base.name) if isinstance(base, Var) else None
    if method != "type" or let is None or let.prim != "dtype":
        return None
    args, kwargs = n.calls.call_args(node)
    if len(args) != 1 or kwargs:
        raise UnsupportedCallError("`dtype.type(v)` takes one value here", n.loc(node),
                                   "write x.dtype.type(v)", n.display)
    return n.emit(n.exprs.target(target, "cast"), "dtype.type", (base, args[0]), {}, node)
