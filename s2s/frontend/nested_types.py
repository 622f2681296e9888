"""The Python types of values whose structure s2s knows when it transforms the
code, for ``isinstance(u, tuple)`` over nested tuples and lists.

A function walking a nested container by recursion (``def tsum(t): return
sum(tsum(u) if isinstance(u, tuple) else np.sum(u) for u in t)``) decides each
test by the type of an item.  Where the caller built the container (a literal, its
items arrays or literals again), each item's type is known: a callee given it is
normalized for the container's whole structure (its plan says it, ``typed``), binds
its parameter again as the literal of its items read by index (``rebuild``), and a
recursive call given an item is planned for the item's smaller structure, so the
recursion ends with the structure, as Python's does.  An array is known only as
"not a container" (``Leaf``): a test against tuple, list or dict is False for it,
any other test is refused, located.  A parameter of the function transformed that
the code takes as an array (``(x, (x[:2], ...))``) is one for each call: the
transforms check the call's structure says so (``Function.leaf_params``).
"""

from __future__ import annotations

from typing import Any

from ..errors import TransformError
from ..ir.nodes import Const, Index, Var
from ..primitives import PRIMITIVES
from .sequences import items_of
from .typetests import type_tested

# how deep a function may call itself with a container's items (each call planned
# for its own structure): deeper is refused, located
MAX_DEPTH = 16


class Leaf:
    """The type s2s knows of an array (or a number): not a tuple, list or dict."""


CONTAINERS = (tuple, list, dict)


def known_type(n: Any, atom: Any, assumed: set | None = None, depth: int = 0) -> Any:
    """A plan's detail for ``atom``: ``("type", cls)``, with the items' details for a
    tuple or list built here (``("type", tuple, (...))``), ``("type", Leaf)`` for an
    array an array primitive made; None where it is not known.  A parameter whose
    type the call does not give is taken for an array where ``assumed`` is a set (its
    name added: ``commit`` records it for the transforms to check per call)."""
    if isinstance(atom, Const):
        return ("type", type(atom.value))
    if not isinstance(atom, Var) or depth > MAX_DEPTH:
        return None
    made = items_of(n, atom)
    if made is not None:
        items = tuple(known_type(n, a, assumed, depth + 1) for a in made[1])
        return ("type", made[0], items)
    known = getattr(n, "leaf_atoms", {}).get(atom.name)
    if known is not None:
        return known
    let = n.lets.get(atom.name)
    cls = getattr(n, "arg_types", {}).get(atom.name) if let is None else None
    if cls is not None:  # (a parameter whose type this call gives)
        return ("type", cls)
    if let is not None and let.prim == "getitem" and let.args and known_type(
            n, let.args[0], None, depth + 1) == ("type", Leaf):
        return ("type", Leaf)  # (`h[:2]` of an array `h` this function made)
    path = _path(n, atom, depth)
    if path is not None:  # (a parameter, an item of one: taken for an array, checked)
        if assumed is None:
            return None
        assumed.add(path)
        return ("type", Leaf)
    if let is None:
        return None
    if let.prim == "make_dict" and not let.params.get("built") and "from_items" not in (
            let.params):
        return ("type", dict)
    if let.prim == "call" and atom.name not in n.lets.joined:  # (a callee's result)
        return _returned(n, let, assumed, depth)
    return _array_result(n, let, assumed, depth)


# the families of primitives whose result is an array (or a number) whatever their
# operands (``np.sin`` of a list too), and those whose operands must be arrays for it
# to be one (``a + b`` of two tuples joins them)
_ARRAYS = frozenset({"elementwise", "reduction", "comparison", "piecewise-constant", "fft"})
_OF_ARRAYS = frozenset({"binary"})
_ARRAY_NAMES = frozenset({"matmul", "dot", "reshape", "broadcast_to", "concatenate",
                          "stack", "asarray"})


def _array_result(n: Any, let: Any, assumed: set | None, depth: int) -> Any:
    """``("type", Leaf)`` where ``let``'s primitive makes an array (one result, of an
    array family, a binary one of array operands); None otherwise (``x.shape`` is a
    tuple, ``np.where(c)`` one too)."""
    prim = PRIMITIVES.get(let.prim)
    if prim is None or prim.results is not None or let.prim == "where":
        return None
    if prim.family in _ARRAYS or let.prim in _ARRAY_NAMES:
        return ("type", Leaf)
    if prim.family not in _OF_ARRAYS:
        return None
    for a in let.args:
        known = known_type(n, a, assumed, depth + 1)
        if known is None or len(known) > 2 or issubclass(known[1], CONTAINERS):
            return None
    return ("type", Leaf)


def _returned(n: Any, let: Any, assumed: set | None, depth: int) -> Any:
    """What a callee returns (``Function.returns``), where the parameters it took
    for arrays to know it are given arrays here (else None)."""
    callee = let.params.get("callee")
    made = getattr(callee, "returns", None)
    if made is None:
        return None
    detail, needs = made
    given = dict(zip(getattr(callee, "params", ()), let.args))
    for param, path in needs:
        if path or param not in given or known_type(
                n, given[param], assumed, depth + 1) != ("type", Leaf):
            return None
    return detail


def typed(n: Any, fn: Any, pname: str, value: Any) -> tuple | None:
    """``("type", cls)`` for a parameter the callee tests the type of
    (``typetests.py``), where the call's value has a type known now: a constant's, a
    tuple's, list's or dict's the caller built (a nested one's with its items', and an
    array's: ``nested_types.py``); else None (its test refused, located)."""
    assumed: set = set()
    known = known_type(n, value, assumed) if isinstance(value, (Var, Const)) else None
    if pname not in type_tested(fn) and not (type_tested(fn) and known and len(known) > 2):
        return None  # (else a container whose items it tests: `for u in t`)
    if not isinstance(value, (Var, Const)):
        return ("type", type(value))  # (a default's value)
    if known is not None:
        commit(n, assumed)
        return known
    let = n.lets.get(value.name) if isinstance(value, Var) else None
    made = {"make_tuple": tuple, "make_list": list, "make_dict": dict}.get(
        getattr(let, "prim", None))
    return None if made is None else ("type", made)


def _path(n: Any, atom: Any, depth: int) -> tuple | None:
    """``(parameter, (i, j))`` for ``p[i][j]`` (``(p, ())`` for ``p``) of a parameter
    whose type the call does not give, read by int constants; a slice or another
    index of such a read (``x[:2]``) is the read it is taken of (an array's)."""
    let = n.lets.get(atom.name)
    if let is None:
        return (atom.name, ()) if atom.name in getattr(n, "arguments", ()) and (
            atom.name not in getattr(n, "arg_types", {})) else None
    if let.prim != "getitem" or not let.args or not isinstance(let.args[0], Var) or (
            depth > MAX_DEPTH):
        return None
    base = _path(n, let.args[0], depth + 1)
    index = let.params.get("index")
    items = getattr(index, "items", ())
    if base is None or getattr(index, "attribute", False):
        return None
    if len(items) == 1 and not index.is_tuple and isinstance(items[0], Const) and (
            type(items[0].value) is int):
        return (base[0], base[1] + (items[0].value,))
    return base


def commit(n: Any, assumed: set) -> None:
    """The parameters a decision took for arrays: the IR's ``leaf_params``."""
    n.leaf_params = getattr(n, "leaf_params", set()) | assumed


def tested_type(n: Any, name: str) -> Any:
    """The type the local ``name`` holds where s2s knows it (an item of a nested
    literal, unrolled), else None."""
    atom = n.env.get(name)
    if atom is None or name in n.funcs.values:
        return None
    assumed: set = set()
    detail = known_type(n, Var(atom), assumed)
    if detail is None:
        return None
    commit(n, assumed)
    return detail[1]


def structure_fields(n: Any) -> dict[str, Any]:
    """The IR's ``leaf_params`` and ``returns`` (``Function``) from the Normalizer
    ``n``, its body lowered."""
    result, needs = n.result_name, set()
    returned = known_type(n, Var(result), needs) if result in n.lets and (
        result not in n.lets.joined) else None
    return {"leaf_params": frozenset(vars(n).get("leaf_params", ())),
            "returns": None if returned is None else (returned, frozenset(needs))}


def decided(n: Any, cls: Any, kinds: Any, node: Any) -> bool:
    """``issubclass(cls, kinds)`` where ``cls`` may be ``Leaf`` (an array: only a
    test against containers is known)."""
    if cls is not Leaf:
        return issubclass(cls, kinds)
    tested = kinds if isinstance(kinds, tuple) else (kinds,)
    if all(isinstance(k, type) and issubclass(k, CONTAINERS) for k in tested):
        return False
    raise n.unsupported(node, "this tests the type of an array (or a number) against a "
                        "type other than tuple, list or dict: s2s knows only that it is "
                        "not a container", "test `isinstance(v, (tuple, list))`, or "
                        "branch on `np.ndim(v)`")


def recursion_depth(n: Any, fn: Any, args: list, kwargs: dict, node: Any) -> bool:
    """A recursive call given a tuple or list whose structure is known: planned for it
    (``True``), up to ``MAX_DEPTH`` calls deep (then refused, located)."""
    known = [known_type(n, v, set()) for v in (*args, *kwargs.values())
             if isinstance(v, Var)]
    entered = [d for kind, _, d in (n.plan.entries if n.plan is not None else ())
               if kind == "arg" and d is not None]  # (an array item of one: a leaf's)
    if not any(d is not None and len(d) > 2 for d in known + entered) or not any(known):
        return False
    if n.stack.count(fn) >= MAX_DEPTH:
        raise TransformError(
            f"`{fn.__name__}` calls itself more than {MAX_DEPTH} levels deep here, each "
            "given a tuple or list s2s plans the call for: its depth must be bounded by "
            "the structure of what the outermost call passes", n.loc(node),
            "recurse over a container whose nesting ends (each call given an item), or "
            "write the recursion as a loop", n.display)
    return True


def rebuild(n: Any, name: str, detail: tuple, node: Any) -> None:
    """The planned callee's parameter ``name`` given a tuple or list of known
    structure: bound again as the literal of its items, each read once by index
    (``t_1 = t[1]``), each item's type known (``leaf_atoms``), before the body
    (``funcs.prefix``).  Not a list of its own: ``t.append(v)`` stays refused (it
    would change the caller's list)."""
    n.leaf_atoms = getattr(n, "leaf_atoms", {})
    before = len(n.out)

    def read(atom: Var, d: Any) -> Var:
        if d is None or len(d) < 3 or d[1] not in (tuple, list):
            if d is not None:
                n.leaf_atoms[atom.name] = d
            return atom
        items = [read(n.emit(n.names.fresh(f"{atom.name}_{k}"), "getitem", (atom,), {
            "index": Index((Const(k, repr(k)),), False)}, node), item)
            for k, item in enumerate(d[2])]
        prim = "make_tuple" if d[1] is tuple else "make_list"
        return n.emit(n.names.fresh(name), prim, tuple(items), {}, node)

    made = read(Var(n.env[name]), detail)
    n._bind(name, made.name)
    n.funcs.prefix = [*n.funcs.prefix, *n.out[before:]]
