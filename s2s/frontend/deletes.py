"""``del name``: the binding is dropped, as Python drops it.

Nothing runs: the name is taken out of the scope, so a later read is refused where
Python would raise ``UnboundLocalError``, located at the read and naming the ``del``;
a name bound again after it is a new binding.  In one branch of an ``if`` the name is
unbound after the ``if`` (a later ``if`` on the other path may still read it, as
Python can).  In a loop, only a name the loop's body bound may be deleted: deleting
one bound before the loop would leave the next iteration (and the code after the
loop) without it on some runs only.

``del d["k"]`` of a dict is ``d.pop("k")`` and ``del ys[-1]`` of a list ``ys.pop()``:
each a new version of the container without the item, with the checks a write into it
makes (a container another name refers to is refused).  ``del`` of another item, of a
slice or of an attribute is refused.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from ..errors import TransformError
from .buffers import is_minus_one


class Deletes:
    """The ``del`` statements of one function."""

    def __init__(self, n: Any) -> None:
        self.n = n  # the Normalizer: scope, function values, loops
        self.deleted: dict[str, cst.Del] = {}  # name -> the `del` that dropped it
        self.loop_entries: list[dict[str, str]] = []  # the scope at each loop's entry

    def statement(self, node: cst.Del, expression_statement: Any) -> None:
        targets = node.target.elements if isinstance(node.target, (cst.Tuple, cst.List)) \
            else [node.target]
        for target in targets:
            if isinstance(target, cst.Element):  # (a tuple's element)
                target = target.value
            popped = self.as_pop(target)
            if popped is not None:
                expression_statement(popped)
                continue
            if isinstance(target, cst.Subscript) and self.n.stmts.list_edits.delete(target):
                continue  # (`del parts[0]`, `del parts[1:3]`: list_edits.py)
            if not isinstance(target, cst.Name):
                what = "an item" if isinstance(target, cst.Subscript) else "an attribute" \
                    if isinstance(target, cst.Attribute) else "this"
                err = self.n.unsupported(target, *_in_place(self.n, target, what))
                err.per_call = True  # (a dict argument: its keys known per call)
                raise err
            self.drop(target)

    def as_pop(self, target: Any) -> cst.Expr | None:
        """``del d["k"]`` as the statement ``d.pop("k")``, ``del ys[-1]`` as
        ``ys.pop()`` (located at the ``del``'s target); None for other targets."""
        if not (isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name)
                and target.value.value in self.n.local_names and len(target.slice) == 1
                and isinstance(target.slice[0].slice, cst.Index)):
            return None
        index = target.slice[0].slice.value
        if self.n.dicts.is_dict(target.value):
            args = [cst.Arg(index)]
        elif is_minus_one(cst.Arg(index)):
            args = []
        else:
            return None
        call = cst.Call(cst.Attribute(target.value, cst.Name("pop")), args)
        statement = cst.Expr(call)
        for made in (call, call.func, statement):
            self.n.desugar.alias(made, target)
        return statement

    def drop(self, target: cst.Name) -> None:
        n, name = self.n, target.value
        bound = name in n.env or name in n.funcs.values
        if not bound:
            raise n.unsupported(
                target, f"`del {name}`: `{name}` is not bound here on every path (Python "
                "raises UnboundLocalError)", f"bind `{name}` before deleting it, or "
                "remove the `del`",
            )
        if self.loop_entries and name in self.loop_entries[-1]:
            raise n.unsupported(
                target, f"`del {name}` in a loop deletes a name bound before the loop "
                "too: after the loop it would be bound on some runs only",
                f"give the loop's value another name, or `del {name}` after the loop",
            )
        n.env.pop(name, None)
        n.funcs.values.pop(name, None)
        self.deleted[name] = target

    def unbound(self, node: cst.Name) -> TransformError | None:
        """The error for reading a name a ``del`` dropped (None: no ``del`` did)."""
        name = node.value
        if name not in self.deleted:
            return None
        line = self.n.loc(self.deleted[name]).line
        return self.n.unsupported(
            node, f"`{name}` is read after `del {name}` (line {line}) on some path: "
            "Python raises UnboundLocalError here", f"bind `{name}` again before reading "
            "it, or move the `del` after this line",
        )


def _in_place(n: Any, target: Any, what: str) -> tuple[str, str]:
    """The refusal of ``del`` of an item or attribute: for an item of a parameter (a
    callee's ``del d["b"]``), that Python deletes it from the caller's own dict."""
    base = target.value if isinstance(target, cst.Subscript) else None
    code = getattr(n.fn, "__code__", None)
    params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount] if code else ()
    if isinstance(base, cst.Name) and base.value in params and n.env.get(
            base.value) == base.value:
        name = base.value
        return (f"`del` of an item of the parameter `{name}` deletes it from the dict the "
                f"caller passed (Python changes the caller's dict in place, and the caller "
                "sees the key gone), which s2s does not model",
                f"copy it first (`{name} = dict({name})`) and delete from the copy, or build "
                f"a new dict without the item (`{{k: v for k, v in {name}.items() if k != "
                f"\"b\"}}`)")
    return (f"`del` of {what} changes a container or object in place, which s2s does not "
            "do", "build a new dict or list without the item "
            "(`{k: v for k, v in d.items() if k != \"b\"}`, `parts[:-1]`)")
