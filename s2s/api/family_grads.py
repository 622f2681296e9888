"""``s2s.grad`` (and ``value_and_grad``) of a function made again with the same code:
``s2s.grad(lambda w: loss(w, batch))(w)`` written in a training loop makes a new
lambda object at every step, and each would be normalized, emitted, formatted and
specialized again (5-60 ms a step).

Functions of one *family* (api/families.py: the same code object, module, defaults
and closure fingerprints) share one transform of the family's canonical function,
made once per transform options.  ``grad`` of a family member returns a ``Member``:
calling it copies the member's cell contents into the canonical function's cells
and calls the shared transform (``families.run_as``), exactly as one function whose
closure variables were rebound between calls, which each transform's guards
already check (a changed closure value is read at the call; a changed kind
normalizes again; the specialized code runs only while each cell holds an array of
the shape and dtype it was specialized to: api/signatures.py ``FreeSnapshot``).

Anything but a call (``.source``, a transform or ``jit`` of it, ``eval_shape``)
makes the member what ``grad`` made before: a ``Transformed`` of its own function.
"""

from __future__ import annotations

import threading
import types
import weakref
from typing import Any, Callable

from . import callables, families, transformed
from .transformed import Transformed
from .value_methods import refuse_value_methods

# canonical function -> {transform options: its Transformed, or None where grad
# makes something else of it (a per-call wrapper): members then take the plain way}
_SHARED: "weakref.WeakKeyDictionary[Callable, dict]" = weakref.WeakKeyDictionary()
_LOCK = threading.RLock()


def member(fun: Any, options: tuple) -> "Member | None":
    """A ``Member`` transform of ``fun`` (``options``: Transformed's arguments after the
    function), or None where ``fun`` is no family member or its family's transform
    is not a plain ``Transformed``."""
    if type(fun) is not types.FunctionType:
        return None
    if type(options[1]) is list:  # (argnums=[0, 1], as a tuple)
        options = (options[0], tuple(options[1]), *options[2:])
    found = families.family(fun)
    if found is None:
        return None
    canon = found[0]
    with _LOCK:
        made = _SHARED.setdefault(canon, {})
        try:
            if options in made:
                shared = made[options]
                return None if shared is None else Member(fun, found, shared, options)
        except TypeError:  # (an argnums that does not hash: grad's own error)
            return None
    try:
        shared = callables.transformable(canon, lambda f: Transformed(f, *options))
    except Exception:  # (the member's own transform raises it, located at its line)
        shared = None
    if type(shared) is not Transformed:
        shared = None
    with _LOCK:
        shared = made.setdefault(options, shared)
    return None if shared is None else Member(fun, found, shared, options)


class Member(Transformed):
    """A grad of a family member: calls run the family's shared transform with the
    member's closure values; any other use makes it a ``Transformed`` of its own."""

    def __init__(self, fun: Callable, found: tuple, shared: Transformed,
                 options: tuple) -> None:
        self.__dict__["_member"] = (fun, found, shared, options)
        self.__name__ = self.__qualname__ = shared.__name__  # (as the Transformed's)
        self.__doc__ = f"The {options[0]} of {fun.__qualname__}, emitted by s2s."

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        own = self.__dict__.get("_member")
        if own is None:  # (made its own transform meanwhile: on another thread)
            return Transformed.__call__(self, *args, **kwargs)
        fun, found, shared, _ = own
        return families.run_as(found, fun, lambda canon: shared(*args, **kwargs))

    def __repr__(self) -> str:
        own = self.__dict__.get("_member")
        if own is None:
            return Transformed.__repr__(self)
        return f"<s2s {own[3][0]} of {own[0].__qualname__}>"

    def __s2s_transform__(self) -> str | None:
        return self._own().__s2s_transform__()

    def __getattr__(self, name: str) -> Any:
        # (only for attributes the object lacks: everything but a call reads some)
        if name.startswith("__") or "_member" not in self.__dict__:
            raise AttributeError(name)
        return getattr(self._own(), name)

    def _own(self) -> Transformed:
        """This object as the ``Transformed`` of its own function grad made before
        (made apart, then moved in: a call on another thread meanwhile still runs
        the family's transform)."""
        own = self.__dict__.get("_member")
        if own is None:
            return self
        made = Transformed(own[0], *own[3])  # (its __init__ refers to no `self`)
        with _LOCK:
            if self.__dict__.get("_member") is own:
                self.__dict__.update(made.__dict__)
                self.__class__ = Transformed  # type: ignore[assignment]
                del self.__dict__["_member"]
        return self


def vjp(fun: Callable, *primals: Any, has_aux: bool = False) -> Any:
    """``s2s.vjp`` (api/transformed.py): of a function made again, its family's
    canonical function's, the forward call run with the member's cell contents (the
    vjp of each new lambda emitted its code again)."""
    refuse_value_methods(fun, primals)  # (`p.get(k)` of p's class's own `get`)
    found = families.family(fun) if type(fun) is types.FunctionType else None
    if found is None:
        return transformed.vjp(fun, *primals, has_aux=has_aux)
    # (its vjp_fn runs the code, primals and free names' objects taken at this call,
    # the member's cell contents among them: api/pullbacks.py)
    return families.run_as(found, fun, lambda canon: transformed.vjp(
        canon, *primals, has_aux=has_aux))

transformed.FAMILY_MEMBER = member
