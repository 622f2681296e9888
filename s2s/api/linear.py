"""``s2s.linearize``'s linear function at the point of the ``linearize()`` call, as
JAX's (api/extras.py): the emitted JVP code generated then, run on its own copy of
its module namespace whose free names hold the objects they held then (a closure
variable, a module global, an attribute of a module or object the code reads:
api/pullbacks.py ``_own_code``), on copies of the primals.

Where nothing the function reads from its module changed since (every call, in a
training loop), the linear function is ``s2s.jvp`` of the function with its closure
cells as they were (its specialized code); where something did, this code of then
computes the number JAX's linearized program computes (it refused before: a module
attribute rebound, and falsely where an attribute the code never reads changed)."""

from __future__ import annotations

import types
from typing import Any, Callable

import numpy as np

from ..ir.kinds import LEAF, kind_of
from . import dtypes_down, families, trees
from .arguments import _check_tangents, _inexact_args, check_array_types, zero_d
from .callables import as_function
from .located import reraise_located
from .methods import check_self_methods, for_class
from .pullbacks import _own_code, _snapshot
from .pushforward import _jvp_results, _jvp_transform
from .transformed import JVPS
from .trees import _copies
from .value_methods import refuse_value_methods


class FrozenJVP:
    """The emitted JVP of ``fun`` at ``primals`` (its own code, kept primals)."""

    __slots__ = ("fn", "t", "active", "method", "given", "plain", "primals", "built",
                 "down", "error")

    def __init__(self, fun: Callable, primals: tuple) -> None:
        found = families.family(fun) if type(fun) is types.FunctionType else None
        self.down = dtypes_down.target(fun, primals)  # (of a gradient: its inputs' dtype)
        self.error: Exception | None = None
        try:
            if found is None:
                self._prepare(fun, primals)
            else:  # (a lambda made again: its family's code, with its cells' contents)
                families.run_as(found, fun, lambda canon: self._prepare(canon, primals))
        except Exception as err:  # (raised where this code would run, as jvp's is)
            self.error = err

    def _prepare(self, fun: Callable, primals: tuple) -> None:
        refuse_value_methods(fun, primals)
        self.given, self.plain = primals, trees.plain(primals, meta=True)
        check_array_types("jvp", self.plain)
        active, ps = _inexact_args(self.plain), self.plain
        method = trees.unbound(fun)  # a bound method: its object's attributes
        if method is not None:
            method = (for_class(method[0], type(method[1])), method[1])
            fun, ps = method[0], (trees.attributes(method[1]), *ps)
            active = tuple(i + 1 for i in active)
        t = _known(fun, ps) or _jvp_transform(as_function(fun, len(ps), args=ps), False)
        t._refresh()
        if method is not None:
            check_self_methods(method[0], method[1])
        kinds = tuple(kind_of(p) for p in ps) + (LEAF,) * (len(t.ir.params) - len(ps))
        _, fn = t._generate(kinds, active, (len(ps), False), nargs=len(ps), inner_args=ps)
        free = _snapshot(fn)
        self.fn = _own_code(fn, free) if free else fn
        self.t, self.active, self.method = t, active, method is not None
        self.built = t.built_template()
        self.primals = _copies(ps)  # (never the caller's arrays: it may write)

    def tangent(self, tangents: tuple) -> Any:
        """The output's tangent for ``tangents`` (one per primal)."""
        if self.error is not None:
            raise self.error
        if not _like(tangents, self.given):  # (else arrays as the primals: checked)
            plain = trees.plain(tangents, meta=True)
            _check_tangents(self.plain, plain)
            check_array_types("jvp", plain)
        else:
            plain = tangents
        if self.method:
            plain = (None, *plain)
        try:
            result = self.fn(*self.primals, *(plain[i] for i in self.active))
        except (ValueError, IndexError, TypeError) as err:  # (located at your line)
            reraise_located(err, self.t.ir, self.t.fn.__name__)
        result = _jvp_results(result, self.primals, plain, self.fn, False, self.built)
        if self.plain is not self.given:  # (in the output's type: a NamedTuple)
            result = trees.unplain_nodes(self.given, (
                result[0], trees.fields_like(result[0], result[1])))
        out_dot = result[1]
        if self.down is not None:
            out_dot = dtypes_down.cast_at(self.down, out_dot)
        return zero_d(out_dot)


def _known(fun: Callable, primals: tuple) -> Any:
    """The jvp transform of ``fun`` itself made before, where the primals are all
    inexact arrays (``s2s.jvp``'s fast path takes it so: api/pushforward.py
    ``_jvp_fast``); None otherwise."""
    for p in primals:
        if type(p) is not np.ndarray or p.dtype.kind not in "fc":
            return None
    try:
        per_fn = JVPS.get(fun)
    except TypeError:  # (unhashable)
        return None
    t = per_fn.get(False) if per_fn else None
    return t if t is not None and t.fn is fun else None


def _like(tangents: tuple, primals: tuple) -> bool:
    """Are the tangents float arrays of the primals' (float arrays') shapes and dtypes?"""
    for v, p in zip(tangents, primals):
        if type(v) is not np.ndarray or type(p) is not np.ndarray or v.dtype is not \
                p.dtype or v.shape != p.shape or p.dtype.kind not in "fc":
            return False
    return True
