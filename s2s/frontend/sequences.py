"""Tuples and lists in arithmetic, as Python and NumPy read them.

``[a, b] + [c]`` concatenates and ``[a, b] * 2`` repeats: structure, decided when the
function is transformed (the lengths are known), lowered as the literal
``[a, b, c]``.  A list handed to a NumPy function is an array: converted first, so
that every rule reads an array, never a list (the rule of ``np.square(items)`` reads
``2 * items``, which of a list repeats it).  Where only the call's structure says
what an operand is (``xs + [x]``: a list argument's concatenation, or an array's
arithmetic), transforms/list_operands.py decides per call.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from ..errors import TransformError
from ..ir.names import stem
from ..ir.nodes import Atom, Const, Let, Var, walk
from ..primitives.structure import (
    OPERATOR_SYMBOLS,
    operator_instead,
    python_says,
    repeated_by_count,
)
from .built_objects import returned_dict
from .field_appends import fresh_fields
from .objects import record_of_atom
from .splices import copy_of, extend_by_loop, splice, splice_statement

__all__ = ["as_array", "carried", "check_literal_reads", "extended", "grows_list",
           "list_copy", "no_sequence_operand", "sequence_arithmetic"]


def as_array(n: Any, atom: Atom, node: Any) -> Atom:
    """``atom`` as NumPy reads an operand: a list or tuple built here (a literal, a
    comprehension, a list grown by ``append``) converted with ``np.asarray``."""
    if not isinstance(atom, Var):
        return atom
    let = n.lets.get(atom.name)
    if atom.name not in n.lists and not (
            let is not None and let.prim in ("make_list", "make_tuple")):
        return atom
    return n.emit(n.names.fresh(f"{stem(atom.name)}_array"), "asarray", (atom,), {}, node)


def items_of(n: Any, atom: Atom, depth: int = 0) -> tuple[type, list[Atom]] | None:
    """The type and items of a tuple or list whose length is known now (a literal
    built here, or a constant); None for any other value."""
    if isinstance(atom, Const) and type(atom.value) in (tuple, list):
        # (an item with no literal, an array of a module list `WS + [y]`, is read as
        # `WS[0]` at each call: its repr is no code)
        return type(atom.value), [Const(v, repr(v) if _literal_repr(v) else
                                        f"{atom.text}[{k}]") for k, v in enumerate(atom.value)]
    let = n.lets.get(atom.name) if isinstance(atom, Var) else None
    item = _dict_item(n, let) if let is not None and let.prim == "getitem" and (
        let.args) and depth < 8 and not carried(n, atom) and not carried(
        n, let.args[0]) and not _loop_field(n, let) else None
    if item is not None:  # (`self.terms + [v]` of a record's list field: the
        return items_of(n, item, depth + 1)  # list, not an array's `+`; issue 23)
    if let is not None and let.prim in ("make_list", "make_tuple") and not _changed(
            n, atom) and not carried(n, atom):
        return (list if let.prim == "make_list" else tuple), list(let.args)
    return None


def _loop_field(n: Any, let: Any) -> bool:
    """Is ``let`` the read ``c["out"]`` of a field a loop being lowered sets (``c.out
    = c.out + [v]``), of the object ``c`` holds before it?  Its literal is the
    first iteration's only (it gave ``[v]`` at every iteration: a wrong number)."""
    index = let.params.get("index")
    items = getattr(index, "items", ())
    return bool(items) and isinstance(items[0], Const) and isinstance(
        items[0].value, str) and isinstance(let.args[0], Var) and (  # (a field's name)
        let.args[0].name, items[0].value) in n.__dict__.get("loop_fields", ())


def _dict_item(n: Any, let: Any) -> Any:
    """The item ``d["k"]`` reads from a dict literal (a record's field), else None."""
    index = let.params.get("index") if let.prim == "getitem" else None
    items = getattr(index, "items", ())
    src = n.lets.get(let.args[0].name) if isinstance(let.args[0], Var) else None
    if len(items) != 1 or not isinstance(items[0], Const) or src is None or (
            src.prim != "make_dict" or "from_items" in src.params or
            items[0].value not in src.params.get("keys", ())):
        return None
    return src.args[list(src.params["keys"]).index(items[0].value)]


def _literal_repr(v: Any) -> bool:
    """Is ``repr(v)`` the literal of ``v`` (a number, string, None, or a tuple or list
    of those)?"""
    if v is None or type(v) in (int, float, complex, str, bool):
        return True
    return type(v) in (tuple, list) and all(_literal_repr(x) for x in v)


def carried(n: Any, atom: Atom) -> bool:
    """Is ``atom`` the value a name has before a loop whose body binds the name again
    (``parts = parts + [v]``): from the second iteration on, and after the loop, it
    is another value, so its literal does not say its items."""
    return isinstance(atom, Var) and atom.name in n.loop_carried


def _read_as_literal(n: Any, atom: Atom, node: Any) -> None:
    """Remember that ``atom`` was read as the literal it was built from: a loop may
    still append to it after this read (checked when the function is lowered)."""
    if isinstance(atom, Var) and atom.name in n.lists:
        n.literal_reads.append((n.buffer_root.get(atom.name, atom.name), len(n.lets), node))


def check_literal_reads(n: Any) -> None:
    """No list read as its literal (``pair + [x]``) is changed in place after the read
    (``pair.append(v)`` later in the same loop body, so a later iteration's ``pair``
    is longer)."""
    lets = list(n.lets.values())
    for root, at, node in n.literal_reads:
        if any(let.prim in _IN_PLACE and isinstance(let.args[0], Var) and n.buffer_root.get(
                let.args[0].name, let.args[0].name) == root for let in lets[at:]):
            raise TransformError(
                "this list is read as the items it was built with, but the function "
                "changes it in place afterwards (in a loop, later iterations would read "
                "more items)", n.loc(node),
                "build a new list instead of changing this one (`pair = pair + [v]`)",
                n.display)


# list statements that change a list in place (its literal no longer says its items)
_IN_PLACE = ("append", "pop", "setitem", "extend", "insert")


def _changed(n: Any, atom: Var) -> bool:
    root = n.buffer_root.get(atom.name, atom.name)
    return any(let.prim in _IN_PLACE and isinstance(let.args[0], Var) and n.buffer_root.get(
        let.args[0].name, let.args[0].name) == root for let in n.lets.values())


def _grown(n: Any, atom: Atom) -> bool:
    return isinstance(atom, Var) and (atom.name in n.lists or _listed(n, atom)) and (
        items_of(n, atom) is None)


def _listed(n: Any, atom: Var) -> bool:
    """Is ``atom`` a list read from a dict literal's item (``terms = d["terms"]`` of
    ``d = {"terms": []}``), so that ``terms + [v]`` in a loop carrying ``terms`` is
    Python's concatenation (it was NumPy's ``+``: a wrong gradient)?"""
    let = n.lets.get(atom.name)
    item = _dict_item(n, let) if let is not None and let.args and not carried(
        n, let.args[0]) else None
    if isinstance(item, Const):
        return type(item.value) is list
    if isinstance(item, Var) and item.name in n.lets and n.lets[item.name].prim == (
            "getitem") and _loop_field(n, n.lets[item.name]):  # (`c.out` of `Box([])`
        return _listed(n, item)  # carried by a loop setting it: a list if it was one)
    found = n.lets.get(item.name) if isinstance(item, Var) else None
    return isinstance(item, Var) and (item.name in n.lists or found is not None and (
        found.prim == "make_list" or _constructed_list(n, found)))


def _constructed_list(n: Any, let: Any) -> bool:
    """Is ``let`` the read of a field a constructor's function set to a list (``out =
    Coll_init()["out"]`` of ``self.out = []``)?  (``c.out + [v]`` is then Python's
    concatenation; it was NumPy's ``+`` of the two: a wrong gradient, twice the
    items'.)"""
    index = let.params.get("index") if let.prim == "getitem" else None
    items = getattr(index, "items", ())
    call = n.lets.get(let.args[0].name) if let.args and isinstance(let.args[0], Var) else None
    if len(items) != 1 or not isinstance(items[0], Const) or call is None or (
            call.prim != "call"):
        return False
    ret = returned_dict(call.params.get("callee"))
    keys = tuple(ret.params["keys"]) if ret is not None else ()
    if items[0].value not in keys:
        return False
    atom = ret.args[keys.index(items[0].value)]
    if isinstance(atom, Const):
        return type(atom.value) is list  # (`self.out = []`)
    made = [s for s in walk(call.params["callee"].body) if isinstance(s, Let) and isinstance(
        atom, Var) and s.target == atom.name]
    return len(made) == 1 and made[0].prim == "make_list"


def sequence_arithmetic(n: Any, prim: str, left: Atom, right: Atom, node: Any,
                        target: str | None) -> Atom | None:
    """``+`` and ``*`` where a tuple or list is an operand, as Python computes them;
    None where neither operand is one (ordinary arithmetic)."""
    a, b = items_of(n, left), items_of(n, right)
    if a is None and b is None and not (_grown(n, left) or _grown(n, right)):
        return None
    for side in (left, right):
        let = n.lets.get(side.name) if isinstance(side, Var) else None
        if carried(n, side) and let is not None and let.prim == "make_tuple":
            raise TransformError(
                "a tuple that a loop makes longer at each iteration (its structure would "
                "change from one iteration to the next)", n.loc(node),
                "build a list instead (`parts = []` ... `parts.append(v)`)", n.display)
    if prim == "add" and _grown(n, left) and b is not None and b[0] is list:
        return extended(n, left, b[1], node, target)  # `parts + [v]`: a copy, appended
    if prim == "add" and _grown(n, right) and isinstance(left, Var) and (
            _grown(n, left) or (a is not None and a[0] is list)):
        if a is not None:
            _read_as_literal(n, left, node)
        return splice(n, left, right, node, target, a is not None)  # splices.py
    if _grown(n, left) or _grown(n, right):
        raise TransformError(
            f"`{'+' if prim == 'add' else '*'}` of a list grown in a loop (its length "
            "known only when the function runs) with " + (
                "another such list" if prim == "add" and _grown(n, left) and _grown(
                    n, right) else "this operand") + " is not supported", n.loc(node),
            "put the grown list first and the new items in a list literal after it "
            "(`parts + [a, b]`), or append the items to it (`parts.append(v)`)",
            n.display)
    if prim == "add" and a is not None and b is not None:
        if a[0] is not b[0]:
            raise TransformError(
                f'can only concatenate {a[0].__name__} (not "{b[0].__name__}") to '
                f"{a[0].__name__}, as Python says", n.loc(node),
                "convert one side (`list(t)`, `tuple(l)`)", n.display)
        _read_as_literal(n, left, node)
        _read_as_literal(n, right, node)
        return _literal(n, a[0], a[1] + b[1], node, target)
    if prim == "multiply":
        seq, times = (a, right) if a is not None else (b, left)
        if isinstance(times, Const) and type(times.value) in (int, bool):
            _read_as_literal(n, left if a is not None else right, node)
            return _literal(n, seq[0], seq[1] * int(times.value), node, target)
        if isinstance(times, Var) and _maybe_int(n, times) and any(
                isinstance(v, Var) and v.name not in n.shapes for v in seq[1]):
            # `[x] * n` for an int `n` the call passes (or a length): Python repeats the
            # list, which the rules would read as NumPy's product (a wrong derivative);
            # `[a, b] * x` of an argument the transform makes an array (differentiated,
            # batched) is NumPy's product: decided per transform (list_operands.py)
            if _from_parameter(n, times):
                return n.emit(n.exprs.target(target, "product"), "list_times",
                              (left, right), {"list": 0 if a is not None else 1}, node)
            what, instead = repeated_by_count(seq[0])
            raise TransformError(what, n.loc(node), instead, n.display)
        if isinstance(times, Var) and not _maybe_int(n, times) and any(
                isinstance(v, Var) for v in seq[1]):  # `np.sin(x) * [a, b]`: NumPy's
            operands = [as_array(n, left, node), right] if a is not None else [
                left, as_array(n, right, node)]  # (product, of an array)
            return n.emit(n.exprs.target(target, "product"), "multiply", tuple(operands),
                          {}, node)
    if prim == "add" and b is not None and b[0] is list and _list_field(n, left):
        raise TransformError(  # (it was NumPy's `+` of the two: a wrong gradient)
            "`+` of an object's list field (its constructor makes it a list) that a loop "
            "changed, and a list: s2s does not know the field's items here", n.loc(node),
            "keep the items in a local list (`out = []` ... `out.append(v)`)", n.display)
    # a literal met by another value: a list argument's concatenation or an array's
    # arithmetic, which only the call's structure says (transforms/list_operands.py)
    return None


def no_sequence_operand(n: Any, prim: str, operands: tuple, node: Any) -> None:
    """Refuse ``ys / 2.0``, ``1.0 - ys``, ``-ys`` of a tuple or list built here (a
    literal, a list grown by ``append``), as Python does: it has no such operator and
    raises a TypeError (NumPy converts the list only where an array meets it, ``ys /
    x``, or in its own function, ``np.divide(ys, 2.0)``).  Once computed as NumPy's."""
    kinds = [items_of(n, a)[0] if items_of(n, a) is not None else list if _grown(n, a)
             else None for a in operands]
    if all(k is None for k in kinds) or prim not in OPERATOR_SYMBOLS:
        return
    what = python_says(prim, [k or type(a.value) if isinstance(a, Const) or k else None
                              for a, k in zip(operands, kinds)])
    if what is not None:
        raise TransformError(what, n.loc(node), operator_instead(prim), n.display)


def _list_field(n: Any, atom: Atom) -> bool:
    """Is ``atom`` the read of a field its object's constructor made a list (``c.out`` of
    ``self.out = []``)?"""
    let = n.lets.get(atom.name) if isinstance(atom, Var) else None
    index = let.params.get("index") if let is not None and let.prim == "getitem" else None
    items = getattr(index, "items", ())
    if len(items) != 1 or not isinstance(items[0], Const):
        return False
    made = record_of_atom(n, let.args[0])
    return made is not None and items[0].value in fresh_fields(made.cls)


def extended(n: Any, seq: Atom, items: list[Atom], node: Any, target: str | None,
             name: str | None = None) -> Atom:
    """``seq + [a, b]`` of a list whose length only the call knows: a copy of it
    (``joined = list(seq)``) with the items appended; with ``name`` (``seq += [a,
    b]``), the items appended to ``seq`` itself, which the name keeps."""
    if name is None and n.depth and isinstance(seq, Var):  # (a new list each iteration)
        seq = copy_of(n, seq, node, target)
    elif name is None:
        seq = n.emit(n.exprs.target(target, "joined"), "list", (seq,), {}, node)
        n.buffers.add(seq.name)
    current = seq.name
    for atom in items:
        if name is None:
            version = n.names.fresh(stem(Var(current)))
            n.emit(version, "append", (Var(current), atom), {}, node)
            n.buffers.add(version)
            n.lists.add(version)
            n.buffer_root[version] = n.buffer_root.get(current, current)
            current = version
        else:
            n.buffer.write(name, current, "append", (Var(current), atom), {}, node)
            current = n.env[name]
    return Var(current)


def grows_list(n: Any, node: Any) -> bool:
    """Lower ``node`` if it extends a list the function built (``parts += [a, b]``,
    ``parts.extend([a, b])``, ``parts = parts + [a, b]`` of a grown list) or splices
    one (``c = a + b``: splices.py): True where it did."""
    if isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Name) and isinstance(
            node.operator, cst.AddAssign) and list_target(n, node.target.value):
        extend_list(n, node.target.value, node.value, node)
    elif isinstance(node, cst.Expr) and isinstance(node.value, cst.Call) and isinstance(
            node.value.func, cst.Attribute) and node.value.func.attr.value == "extend" and \
            isinstance(node.value.func.value, cst.Name) and list_target(
                n, node.value.func.value.value) and len(node.value.args) == 1 and not (
                node.value.args[0].keyword or node.value.args[0].star):
        extend_list(n, node.value.func.value.value, node.value.args[0].value, node)
    elif isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(
            node.targets[0].target, cst.Name) and grows_itself(
                n, node.targets[0].target.value, node.value):
        extend_list(n, node.targets[0].target.value, node.value.right, node.value)
    elif not splice_statement(n, node, lambda name: _grown(n, Var(n.env.get(name, "")))):
        return False
    return True


def list_target(n: Any, name: str) -> bool:
    """Does ``name`` hold a list the function built (a literal, a grown list)?"""
    current = n.env.get(name, "")
    let = n.lets.get(current)
    return current in n.lists or (let is not None and let.prim == "make_list")


def grows_itself(n: Any, name: str, value: Any) -> bool:
    """``parts = parts + [a, b]`` where ``parts`` is a list grown in a loop (or carried
    by one) that no other name or container refers to: the new list replaces the old
    one, which nothing else reads, so it is the old one with the items appended
    (``parts.append(a)``), as every transform reads it; a later read of an alias made
    after it is the memory check's to refuse."""
    current = n.env.get(name, "")
    return isinstance(value, cst.BinaryOperation) and isinstance(
        value.operator, cst.Add) and isinstance(value.left, cst.Name) and (
        value.left.value == name) and (isinstance(value.right, cst.Name) and _grown(
            n, Var(n.env.get(value.right.value, ""))) or isinstance(
            value.right, (cst.List, cst.Tuple)) and not any(
            isinstance(e, cst.StarredElement) for e in value.right.elements)) \
        and list_target(n, name) and current not in n.aliased and (
            items_of(n, Var(current)) is None)


def extend_list(n: Any, name: str, value: Any, node: Any) -> None:
    """``parts += [a, b]`` (``parts.extend([a, b])``) on a list the function built:
    Python extends it in place, so each item is appended to it."""
    more = n.exprs.expr(value)
    found = items_of(n, more)
    if found is None and _grown(n, more):
        n.lists.add(n.env[name])
        extend_by_loop(n, name, more, node)  # by a grown list: appended in a loop
        return
    if found is None:
        raise n.unsupported(
            value, f"`{name} += ...` extends the list `{name}` by items s2s does not know "
            "one by one here (a list grown in a loop, an array's rows)", "extend it by a "
            f"list or tuple literal (`{name} += [a, b]`), or append in a loop (`for v in "
            f"vs: {name}.append(v)`)")
    n.lists.add(n.env[name])
    extended(n, Var(n.env[name]), found[1], node, None, name=name)


def _from_parameter(n: Any, atom: Atom, depth: int = 0) -> bool:
    """Is ``atom`` an argument, or computed from one (not from shapes alone)?"""
    if not isinstance(atom, Var) or atom.name in n.shapes:
        return False
    let = n.lets.get(atom.name)
    return let is None or depth < 20 and any(_from_parameter(n, a, depth + 1)
                                             for a in let.args)


def _maybe_int(n: Any, atom: Atom, depth: int = 0) -> bool:
    """May ``atom`` be a Python int when the code runs: a parameter, a loop index, a
    length, or integer arithmetic of those (``n + 1``)?"""
    if isinstance(atom, Const):
        return type(atom.value) in (int, bool)
    let = n.lets.get(atom.name)
    if let is None or atom.name in n.shapes:
        return True
    return depth < 20 and let.prim in ("identity", "add", "subtract", "multiply",
                                       "floor_divide", "remainder") and all(
        _maybe_int(n, a, depth + 1) for a in let.args)


def _literal(n: Any, kind: type, atoms: list[Atom], node: Any, target: str | None) -> Atom:
    prim = "make_list" if kind is list else "make_tuple"
    out = n.emit(n.exprs.target(target, "joined"), prim, tuple(atoms), {}, node)
    if kind is list:
        n.lists.add(out.name)  # (a list of its own: append may grow it)
    return out


def list_copy(n: Any, node: Any, target: str | None) -> Atom | None:
    """``ys.copy()``, ``ys[:]`` and ``[*ys]`` of a list the function built (a literal,
    a list grown in a loop): Python's shallow copy, ``list(ys)``, a list of its own
    that later appends may grow (NumPy's ``copy`` would make it an array).  None where
    ``node`` is not one of these forms, or ``ys`` is not such a list."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and (
            node.func.attr.value == "copy") and not node.args:
        operand = node.func.value
    elif isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(
            node.slice[0].slice, cst.Slice) and all(part is None for part in (
                node.slice[0].slice.lower, node.slice[0].slice.upper,
                node.slice[0].slice.step)):
        operand = node.value
    elif isinstance(node, cst.List) and len(node.elements) == 1 and isinstance(
            node.elements[0], cst.StarredElement):
        operand = node.elements[0].value
    else:
        return None
    if not isinstance(operand, cst.Name) or operand.value not in n.local_names or not (
            list_target(n, operand.value)):
        return None
    return n.emit(n.exprs.target(target, f"{operand.value}_copy"), "list",
                  (Var(n.env[operand.value]),), {}, node)
