"""Tuples and lists whose structure the call signature says, read as Python and
NumPy read them.

``np.sum(xs)`` of a list is ``np.sum(np.asarray(xs))``: NumPy converts the list
first.  Emitted rules must read that array, never the list: the backward of
``np.square(xs)`` is ``2 * xs * g``, and ``2 * xs`` of a list repeats the list (a
gradient half the size, or silently wrong for a one-item list).  ``xs + ys`` of two
list arguments concatenates and ``xs * 2`` repeats (structure: the lengths are the
call's), while ``xs + [x]`` of an array argument is NumPy's addition.  The frontend
decides what it can see (frontend/sequences.py: literals built in the function);
this pass decides the rest, per call structure, where the transforms unroll
container loops, so the probes and the emitted code see the same names.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ..errors import TransformError
from ..ir.kinds import LEAF, Tree
from ..ir.names import NameTable
from ..ir.nodes import Const, For, Function, If, Index, Let, Stmt, Var, walk
from ..ir.unroll import unroll_container_loops
from ..primitives import PRIMITIVES
from ..primitives.registry import reads_arrays
from ..primitives.structure import (
    OPERATOR_SYMBOLS,
    operator_instead,
    python_says,
    repeated_by_count,
)

# NumPy's functions that make an array whatever their operands
_FACTORIES = ("array", "asarray", "zeros", "ones", "full", "arange", "linspace", "eye",
              "stack", "concatenate", "zeros_like", "ones_like", "full_like", "empty",
              "vstack", "hstack")
_COMPARISONS = ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")
# list statements that change a list in place (its literal no longer says its items)
_IN_PLACE = ("append", "pop", "setitem", "extend", "insert")


def per_call(fn: Function, arg_kinds: tuple, arrays: tuple[int, ...] = ()) -> Function:
    """``fn`` as the transforms read it for arguments of ``arg_kinds``: loops over
    containers unrolled, tuples and lists read as Python and NumPy read them.
    ``arrays``: the positional parameters the transform makes arrays (never Python
    ints: differentiated, batched), so that ``[a, b] * x`` of one is NumPy's product."""
    return lists_as_arrays(unroll_container_loops(fn, arg_kinds), arg_kinds, arrays)


def batched(in_axes: tuple) -> tuple[int, ...]:
    """The positional parameters a vmap batches whole (an axis, not a tree of them):
    arrays, whatever one example's slice is."""
    return tuple(i for i, ax in enumerate(in_axes) if type(ax) is int)


def lists_as_arrays(fn: Function, arg_kinds: tuple, arrays: tuple[int, ...] = ()) -> Function:
    """``fn`` with ``np.asarray`` of each tuple or list that an array-reading
    primitive takes as an operand before it, and ``+``/``*`` of a tuple or list
    argument as the concatenation or repetition Python computes."""
    trees = {p: k for p, k in zip(fn.params, arg_kinds) if isinstance(k, Tree)}
    if not trees and not any(isinstance(s, Let) and s.prim in ("make_list", "make_tuple")
                             for s in walk(fn.body)):
        return fn
    pass_ = _Convert(fn, trees)
    pass_.arrays.update(p for p in fn.params if p not in trees)
    # (a parameter left at a tuple or list default: its kind a leaf, as a passed array's)
    pass_.defaulted = {p for p, k in zip(fn.params, arg_kinds) if k == LEAF and isinstance(
        fn.defaults.get(p), (tuple, list))}
    pass_.not_ints.update(p for i, p in enumerate(fn.params) if i in arrays)
    body = pass_.block(fn.body)
    if not pass_.changed:
        return fn
    return replace(fn, body=body, names=pass_.names)


class _Convert:
    def __init__(self, fn: Function, trees: dict[str, Tree]) -> None:
        self.trees: dict[str, Any] = dict(trees)
        self.names = NameTable(fn.names.taken)
        self.changed = False
        self.literals: dict[str, tuple[type, tuple]] = {}  # unchanged literals' items
        self.aliases = fn.aliases
        self.defaults = fn.defaults
        self.operators = fn.operators  # (`xs / 2` written with an operator: Python's)
        self.made: dict[str, Let] = {}  # each name bound so far -> its statement
        self.defaulted: set[str] = set()  # parameters left at a tuple or list default
        # names known to hold arrays: leaf arguments, results of NumPy's computations
        self.arrays: set[str] = set()
        # names that are never Python ints: the arguments the transform makes arrays
        # (differentiated, batched), their items, what NumPy computes from them
        self.not_ints: set[str] = set()
        self.changed_roots = {fn.aliases.get(s.args[0].name, s.args[0].name)
                              for s in walk(fn.body) if isinstance(s, Let)
                              and s.prim in _IN_PLACE and isinstance(s.args[0], Var)}

    def block(self, stmts: list[Stmt]) -> list[Stmt]:
        out: list[Stmt] = []
        for s in stmts:
            if isinstance(s, Let):
                out += self.let(s)
            elif isinstance(s, If):
                out.append(replace(s, body=self.block(s.body), orelse=self.block(s.orelse)))
            elif isinstance(s, For):
                out.append(replace(s, body=self.block(s.body)))
            else:
                out.append(s)
        return out

    def let(self, s: Let) -> list[Stmt]:
        if s.prim == "in_place" and isinstance(s.args[0], Var) and (
                s.args[0].name in self.trees or s.args[0].name in self.literals):
            s = Let(s.target, "identity", (s.args[0],), {}, s.loc)  # (`t += (v,)`: Python's)
        if any(isinstance(b, Var) and b.name in self.not_ints for b in s.args) and (
                s.prim in ("identity", "getitem") or reads_arrays(s.prim)
                and PRIMITIVES[s.prim].differentiable and s.prim != "astype"):
            self.not_ints.add(s.target)  # (an array's item or a float computed from one)
        self.made[s.target] = s
        if s.prim == "list_times":
            return self.list_times(s)
        python = s.target in self.operators or _emitted(s)  # (else NumPy's function:
        if python and s.prim in OPERATOR_SYMBOLS:  # `np.multiply(xs, 2)` converts xs)
            self.operator_of_sequence(s)
        a = s.args[0] if s.args else None
        tree = self.trees.get(a.name) if isinstance(a, Var) else None
        if tree is not None and s.prim == "identity":
            self.trees[s.target] = tree
        elif tree is not None and s.prim == "getitem":
            child = _child(tree, _constant_key(s))
            if isinstance(child, Tree):
                self.trees[s.target] = child
        elif s.prim in ("make_list", "make_tuple") and self.aliases.get(
                s.target, s.target) not in self.changed_roots:
            self.literals[s.target] = (list if s.prim == "make_list" else tuple, s.args)
        elif s.prim == "make_dict" and "keys" in s.params and any(
                isinstance(b, Var) and b.name in self.trees for b in s.args):
            # (a method's `self` made of its fields, `{"terms": self_terms}`: its
            # `self.terms + [v]` is a list's `+`; it was NumPy's, a wrong gradient)
            self.trees[s.target] = Tree(dict, tuple(s.params["keys"]), tuple(
                self.trees.get(b.name, LEAF) if isinstance(b, Var) else LEAF
                for b in s.args))
        if s.prim == "add" and any(isinstance(b, Var) and b.name in self.defaulted
                                   for b in s.args) and all(
                isinstance(b, Var) and (b.name in self.literals or b.name in self.defaulted)
                for b in s.args):
            name = next(b.name for b in s.args if b.name in self.defaulted)
            raise TransformError(
                f"`+` of a tuple or list and `{name}`, a parameter left at its default (a "
                f"{type(self.defaults[name]).__name__}): s2s cannot tell here whether a "
                "call gives it a sequence (Python's concatenation) or an array (NumPy's "
                "addition)", s.loc, f"spread it in a list (`[x, *{name}]`), or pass "
                f"`{name}` in the call")
        if s.prim in ("add", "multiply") and python:
            joined = self.arithmetic(s)
            if joined is not None:
                return joined
        if s.prim == "multiply" and python:
            self.product_of_sequence(s)
        if not reads_arrays(s.prim) or s.prim in _COMPARISONS and all(
                isinstance(b, Var) and b.name in self.trees for b in s.args):
            return [s]  # (`xs == ys` of two lists: Python's comparison, one bool)
        if s.prim not in ("shape", "ndim", "size"):
            self.arrays.add(s.target)
        # a literal is converted where an array meets it (`[a, b] + x`); met by
        # another value (`(n,) + shape`) it keeps Python's meaning, and so does a
        # product (`(slice(None),) * k`: a leaf may be a Python int, which repeats)
        met = s.prim != "multiply" and any(
            isinstance(b, Var) and b.name in self.arrays for b in s.args)
        before: list[Stmt] = []
        args = list(s.args)
        for k, b in enumerate(args):
            if not isinstance(b, Var) or not (
                    b.name in self.trees and self.trees[b.name].type is not dict
                    or met and b.name in self.literals):
                continue
            name = self.names.fresh(f"{b.name}_array")
            before.append(Let(name, "asarray", (b,), {}, s.loc))
            args[k] = Var(name)
        if not before:
            return [s]
        self.changed = True
        return before + [replace(s, args=tuple(args))]

    def product_of_sequence(self, s: Let) -> None:
        """Refuse ``xs * s`` of a tuple or list argument where Python's ``*`` is no
        NumPy product: by a number that is no int (Python's TypeError), by another
        sequence, or by a value the call may pass as a Python int (a repetition, its
        count known only when the code runs).  A value the transform makes an array
        (differentiated, batched: ``not_ints``) multiplies as NumPy's product."""
        kinds = [self._sequence(b) for b in s.args]
        if all(k is None for k in kinds):
            return
        seq, times = (0, 1) if kinds[0] is not None else (1, 0)
        kind, other = kinds[seq], s.args[times]
        if isinstance(other, Var) and other.name in self.not_ints and kinds[times] is None:
            return
        if isinstance(other, Const) or kinds[times] is not None:
            of = kinds[times] or type(other.value)
            raise TransformError(
                f"can't multiply sequence by non-int of type '{of.__name__}', as Python "
                "says", s.loc, "multiply an array (`np.asarray(xs) * s`)")
        what, instead = repeated_by_count(kind)
        raise TransformError(what, s.loc, instead)

    def operator_of_sequence(self, s: Let) -> None:
        """Refuse ``xs / 2.0``, ``1.0 - xs``, ``xs ** 2``, ``-xs`` of a tuple or list
        argument (or literal), written with Python's operator: Python raises a
        TypeError; NumPy converts the list only where an array meets it (``xs / x`` of
        an array the transform makes) or in its own function (``np.divide(xs, 2.0)``,
        no operator).  Once computed as NumPy's: a number where Python raises."""
        kinds = [self._sequence(b) or self._made_sequence(b) for b in s.args]
        if all(k is None for k in kinds):
            return
        others = [b for b, k in zip(s.args, kinds) if k is None]
        if any(self._numpy_value(b) for b in others):
            return  # (an array here: NumPy converts the list)
        what = python_says(s.prim, [k or (type(b.value) if isinstance(b, Const) else None)
                                    for b, k in zip(s.args, kinds)])
        if what is None:
            if any(isinstance(b, Const) for b in others):
                return  # (a constant array: NumPy's)
            symbol = OPERATOR_SYMBOLS[s.prim].split()[0]
            what = (f"`{symbol}` of a tuple or list and a value the call may pass as a "
                    "Python number (Python raises a TypeError) or as an array (NumPy "
                    "converts the list): which one, only the call says")
        raise TransformError(what, s.loc, operator_instead(s.prim))

    def _made_sequence(self, atom: Any) -> type | None:
        """list or tuple where ``atom`` is a literal, or ``list(v)``, made here."""
        if not isinstance(atom, Var):
            return None
        if atom.name in self.literals:
            return self.literals[atom.name][0]
        made = self.made.get(atom.name)
        return list if made is not None and made.prim == "list" else None

    def _numpy_value(self, atom: Any, depth: int = 0) -> bool:
        """Is ``atom`` an array or NumPy scalar whatever the call passes (never a
        Python number): an argument the transform makes an array, what an array
        factory makes (``np.array([1.0, 2.0])``), or NumPy's function of such a value
        (an operator's result may be a Python float: ``2.0 * s``)."""
        if isinstance(atom, Const):
            return isinstance(atom.value, (np.ndarray, np.generic))
        if not isinstance(atom, Var) or depth > 20:
            return False
        if atom.name in self.not_ints:
            return True
        made = self.made.get(atom.name)
        if made is None or made.target in self.operators or made.prim not in PRIMITIVES:
            return False
        if made.prim in _FACTORIES:
            return True
        impl = PRIMITIVES[made.prim].impl
        return str(getattr(impl, "__module__", None) or type(impl).__module__).startswith(
            "numpy") and made.prim not in ("shape", "ndim", "size") and any(
            self._numpy_value(b, depth + 1) for b in made.args)

    def _sequence(self, atom: Any) -> type | None:
        """list or tuple where ``atom`` holds an argument's (or a part of one), else None
        (a literal here is no operand converted: ``(slice(None),) * k`` keeps Python's
        meaning in the emitted code)."""
        if not isinstance(atom, Var):
            return None
        tree = self.trees.get(atom.name)
        return tree.type if tree is not None and tree.type in (list, tuple) else None

    def list_times(self, s: Let) -> list[Stmt]:
        """``[a, b] * x`` with ``x`` an argument (or computed from one): NumPy's product
        ``np.asarray([a, b]) * x`` where the transform makes ``x`` an array; refused
        where the call may pass an int (Python's repetition, by a run-time count)."""
        side = s.params["list"]
        seq, times = s.args[side], s.args[1 - side]
        if not (isinstance(times, Var) and times.name in self.not_ints):
            kind = self.literals.get(seq.name, (list,))[0] if isinstance(seq, Var) else list
            what, instead = repeated_by_count(kind)
            raise TransformError(what, s.loc, instead)
        name = self.names.fresh(f"{seq.name}_array" if isinstance(seq, Var) else "items")
        args = [Var(name), times] if side == 0 else [times, Var(name)]
        self.arrays |= {name, s.target}
        self.not_ints.add(s.target)
        self.changed = True
        return [Let(name, "asarray", (seq,), {}, s.loc),
                Let(s.target, "multiply", tuple(args), {}, s.loc)]

    def items(self, atom: Any, out: list[Stmt], loc: Any) -> tuple[type, list] | None:
        """The type and items of a tuple or list operand (a sequence argument's items
        read with ``getitem``), or None for an array."""
        if not isinstance(atom, Var):
            return None
        if atom.name in self.literals:
            kind, args = self.literals[atom.name]
            return kind, list(args)
        tree = self.trees.get(atom.name)
        if tree is None or tree.type is dict:
            return None
        found = []
        for k, child in enumerate(tree.children):
            name = self.names.fresh(f"{atom.name}_{k}")
            out.append(Let(name, "getitem", (atom,), {"index": Index(
                (Const(k, str(k)),), False)}, loc))
            if isinstance(child, Tree):
                self.trees[name] = child
            found.append(Var(name))
        return tree.type, found

    def arithmetic(self, s: Let) -> list[Stmt] | None:
        """``+`` of two sequences (concatenation) and ``*`` of one by a constant count
        (repetition), as Python computes them; None for NumPy's arithmetic."""
        out: list[Stmt] = []
        left, right = (self.items(b, out, s.loc) for b in s.args)
        if s.prim == "add" and left is not None and right is not None:
            if left[0] is not right[0]:
                raise TransformError(
                    f'can only concatenate {left[0].__name__} (not "{right[0].__name__}")'
                    f" to {left[0].__name__}, as Python says", s.loc,
                    "convert one side (`list(t)`, `tuple(l)`)")
            kind, atoms = left[0], left[1] + right[1]
        elif s.prim == "multiply" and (left is None) != (right is None):
            (kind, items), times = (left, s.args[1]) if left is not None else (right, s.args[0])
            if not (isinstance(times, Const) and type(times.value) in (int, bool)):
                return None  # (a count known when the code runs: `[n] * n_batch`)
            atoms = items * int(times.value)
        else:
            return None
        made = Let(s.target, "make_list" if kind is list else "make_tuple", tuple(atoms),
                   {}, s.loc)
        self.literals[s.target] = (kind, tuple(atoms))
        self.trees[s.target] = Tree(kind, tuple(range(len(atoms))), tuple(
            self.trees.get(b.name, LEAF) if isinstance(b, Var) else LEAF for b in atoms))
        self.changed = True
        return out + [made]


def _emitted(s: Let) -> bool:
    """A statement of code s2s emitted (an inner transform's, which spells NumPy's
    functions with operators): each operator Python's, as that code runs."""
    return s.loc is None or str(s.loc.file).startswith("<s2s:")


def _child(tree: Tree, key: Any) -> Any:
    """The part ``tree[key]`` (None where the key is not one of its own)."""
    if tree.type is dict:
        return tree.child(key) if key in tree.keys else None
    if type(key) is int and -len(tree.keys) <= key < len(tree.keys):
        return tree.children[key]
    return None


def _constant_key(s: Let) -> Any:
    index = s.params.get("index")
    items = getattr(index, "items", ())
    if len(items) == 1 and isinstance(items[0], Const) and type(items[0].value) in (int, str):
        return items[0].value
    return None
