"""The structure a call of a user function returns, for the unroller (an IR pass's part).

``c = Terms(xs)`` then ``for v in c.terms`` in the caller: the loop unrolls where the
structure of what the call returns is known this call.  ``_returned_tree`` unrolls the
callee for the structures of the arguments it is given (an ``__init__`` appending to
``self.terms`` in a loop over a list of three items returns ``{"terms": [3 items]}``);
``_returned_dict`` reads a callee ending in ``return {"loss": ..., "w": ...}``.
"""

from __future__ import annotations

from typing import Any

from ..errors import TransformError
from .kinds import LEAF, Leaf, Tree
from .nodes import Const, For, Function, Let, Return, Var, walk

LITERALS = ("make_tuple", "make_list", "make_dict")


def kind_of_atom(u: Any, a: Any) -> Any:
    """``_Unroller.kind_of``."""
    if not isinstance(a, Var):
        return None
    if a.name in u.trees:
        return u.trees[a.name]
    if a.name in u.leaves:
        return LEAF
    let = u.made.get(a.name)
    if let is None or not let.args:
        return None
    base = u.kind_of(let.args[0])
    if let.prim == "identity" or isinstance(base, Leaf) and let.prim == "getitem":
        return base
    index = let.params.get("index") if let.prim == "getitem" else None
    item = index.items[0] if index is not None and len(index.items) == 1 else None
    if isinstance(base, Tree) and isinstance(item, Const) and item.value in base.keys:
        return base.child(item.value)
    return _returned_dict(let)



def call_tree(u: Any, name: str) -> None:
    """``u.trees[name]``, where a call bound ``name`` and its callee's unrolling knows
    the structure it returns this call (``_returned_tree``)."""
    if name in u.trees or name in u.rebound or name in u.opaque:
        return
    tree = _returned_tree(u, name)
    if tree is None:
        u.opaque.add(name)
    else:
        u.trees[name] = tree


def _returned_tree(u: Any, name: str) -> Tree | None:
    """The structure the call that bound ``name`` returns for this call's arguments,
    where the callee's own unrolling knows it (an ``__init__`` appending to a list field
    in a loop over a list it is given returns ``{"terms": [3 items]}``), so a loop in
    the caller over ``c.terms`` unrolls; None where it is not known."""
    s = u.made.get(name)
    callee = s.params.get("callee") if s is not None and s.prim == "call" else None
    if not isinstance(callee, Function) or u.depth > 3 or callee.kwonly or len(
            s.args) != len(callee.params) or set(s.params) - {"callee", "spelling"}:
        return None
    kinds = [u.kind_of(a) for a in s.args]
    inner = type(u)(callee, {p: k for p, k in zip(callee.params, kinds)
                               if isinstance(k, Tree)})
    inner.depth = u.depth + 1
    inner.leaves = {p for p, k in zip(callee.params, kinds) if isinstance(k, Leaf)}
    inner.carried = {e for t in walk(callee.body) if isinstance(t, For) for e, _ in t.carried}
    try:
        body, _ = inner.block(callee.body)
    except TransformError:  # (its own refusal comes when it is transformed)
        return None
    if not body or not isinstance(body[-1], Return) or any(
            isinstance(t, Return) for t in walk(body[:-1])):
        return None
    found = inner.kind_of(body[-1].value)
    return found if isinstance(found, Tree) else None


def _returned_dict(s: Let) -> Tree | None:
    """The structure a call of a user function returns where its body ends in one
    ``return`` of a dict literal of arrays computed there (``return {"loss": loss, "w":
    w - lr * g}``): its keys, each an array (``train_step(...) | {"n": n}`` merges them
    per call); None for any other statement or callee."""
    callee = s.params.get("callee") if s.prim == "call" else None
    body = getattr(callee, "body", None) if isinstance(callee, Function) else None
    if not body or not isinstance(body[-1], Return) or any(
            isinstance(t, Return) for t in walk(body[:-1])):
        return None
    lets = {t.target: t for t in walk(body) if isinstance(t, Let)}
    made = lets.get(getattr(body[-1].value, "name", None))
    if made is None or made.prim != "make_dict" or "keys" not in made.params:
        return None
    for value in made.args:  # (each an array the callee computed: no container)
        inner = lets.get(value.name) if isinstance(value, Var) else None
        if inner is None or inner.prim in LITERALS or inner.prim in (
                "identity", "call", "getitem", "dict_merge", "bitwise_or", "list", "copy"):
            return None
    keys = tuple(made.params["keys"])
    return Tree(dict, keys, (LEAF,) * len(keys))
