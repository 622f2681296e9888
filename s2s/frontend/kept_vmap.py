"""``h = s2s.vmap(g, ...)`` kept as a value inside a transformed function.

Each call ``h(x)`` is lowered as ``s2s.vmap(g, ...)(x)`` written there
(``frontend/inner_vmap.py``), in the function that calls it: the one that made ``h``,
or another it was passed to (``apply(h, x)``, whose body calls ``f(x)``).  There ``g``
is bound to a fresh name denoting the function it denoted where the vmap was made.
Where emitted code calls the user's function with ``h`` (an adapter, see
``fnvalues.Plan``), ``h`` is this object, which runs ``s2s.vmap(g, ...)`` itself.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from ..errors import TransformError
from .inner_vmap import _alias_all, lower_inner_vmap
from .source import literal_value


class KeptVmap:
    """``s2s.vmap(g, ...)`` kept as a value (``make``: that call's CST), with ``named``
    the function value ``g`` denoted there and ``owner`` the Normalizer that made it."""

    def __init__(self, make: cst.Call, named: Any, owner: Any, vmap: Any) -> None:
        self.make, self.named, self.owner, self.vmap = make, named, owner, vmap
        self._runs: Any = None

    @classmethod
    def made(cls, lowerer: Any, node: cst.Call) -> "KeptVmap":
        fun = node.args[0].value if node.args and node.args[0].keyword is None else None
        named = None
        if isinstance(fun, cst.Name) and fun.value in lowerer.values:
            named = lowerer.values[fun.value]
        elif fun is not None:
            try:
                named = lowerer.value_of(fun)
            except TransformError:
                named = None
        try:
            vmap, _ = lowerer.n.resolver.resolve_dotted(node.func)
        except TransformError:
            vmap = None
        return cls(node, named, lowerer.n, vmap)

    def carried(self) -> tuple:
        """What its function value carries where ``g`` reads the making function's
        values (a lambda capturing them, a partial binding them): ``g``'s function
        value, as ``kept_fn``, whose atoms a function ``h`` is passed to receives
        (``fnvalues.Plan``: they become its parameters there)."""
        fv = self.named
        if fv is None or fv.choice is not None or self.vmap is None or self.portable():
            return ()
        return (("kept_fn", fv),)

    def portable(self) -> bool:
        """Can another function call it: ``g`` is a function that carries no values
        of this one (a module function, a lambda reading none of its names)."""
        fv = self.named
        return fv is not None and fv.choice is None and not (
            fv.head or fv.keywords or fv.captured) and self.vmap is not None

    def __repr__(self) -> str:
        return cst.Module([]).code_for_node(self.make)

    def options(self) -> dict[str, Any]:
        """Its ``in_axes`` and ``out_axes``, as written (constants)."""
        options = {}
        for k, arg in enumerate(self.make.args[1:]):
            key = arg.keyword.value if arg.keyword is not None else (
                "in_axes", "out_axes")[k]
            options[key] = literal_value(cst.Module([]).code_for_node(arg.value))
        return options

    def __call__(self, *args: Any, kept_fn: Any = None) -> Any:
        """Run as Python (an adapter passing it to the user's function; ``kept_fn``:
        ``g`` with the values it carries, where it reads the making function's)."""
        options = self.options()
        if kept_fn is not None:
            return self.vmap(kept_fn, **options)(*args)
        if self._runs is None:
            self._runs = self.vmap(self.named.runtime(iter(())), **options)
        return self._runs(*args)

    def call(self, lowerer: Any, node: Any, target: str | None, passed: Any,
             fv: Any = None) -> Any:
        n = lowerer.n
        fun = self.make.args[0].value if self.make.args else None
        if passed is not None or not isinstance(node, cst.Call):
            raise n.unsupported(node, "a vmap kept as a value (`h = s2s.vmap(g)`) is "
                                "called here other than as `h(x, ...)`",
                                "call it as `h(x, ...)`, or write `s2s.vmap(g)(x)` there")
        make = self.make
        if n is self.owner:
            if isinstance(fun, cst.Name) and lowerer.values.get(fun.value) is not (
                    self.named) and fun.value in lowerer.values:
                raise n.unsupported(node, f"`{fun.value}` was bound to another function "
                                    "after the vmap of it was made", "make the vmap after "
                                    f"binding `{fun.value}`, or give the functions two names")
        else:  # (in a function it was passed to: `g` by a name of its own there,
            # with the values it carries received as this function's parameters)
            named = dict((*fv.keywords, *fv.captured)).get("kept_fn") if fv is not None \
                else None  # (as keywords: in an adapter's `functools.partial(h, ...)`)
            if named is None and not self.portable():
                raise n.unsupported(node, "a vmap kept as a value is called here, in a "
                                    "function it was passed to, of a function s2s cannot "
                                    "pass along", "pass `g`, and write `s2s.vmap(g)(x)` "
                                    "where it is called")
            name = n.names.fresh("mapped_fn")
            n.local_names.add(name)
            lowerer.values[name] = named if named is not None else self.named
            make = make.with_changes(
                func=cst.parse_expression(f"{_spelled(n, self.vmap)}"),
                args=[cst.Arg(cst.Name(name)), *make.args[1:]])
            _alias_all(n, make, node)
        call = cst.Call(make, node.args)
        n.desugar.alias(call, node)
        return lower_inner_vmap(n, call, target)


def _spelled(n: Any, vmap: Any) -> str:
    """A name for s2s.vmap in the function ``n`` lowers (bound in its namespace)."""
    name = "s2s_vmap_kept"
    n.resolver.namespace[name] = vmap
    return name
