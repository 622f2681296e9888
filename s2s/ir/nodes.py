"""The canonical IR: A-normal form of a small Python subset.

Every :class:`Let` binds one fresh name to one primitive applied to atoms (names or
constants).  Control flow stays structured (:class:`If` now; loops get their own node
kinds beside it).  Names are single-assignment within a function: a user name that is
bound twice gets a second name (``y``, then ``y_2``), and the branches of an ``if``
bind the same join name, so a later use always denotes exactly one value.  That is what
lets reverse mode read any forward value it needs without saving it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Union

import numpy as np

from ..errors import Loc


@dataclass(frozen=True)
class Var:
    name: str


@dataclass(frozen=True)
class Const:
    """A value known at transform time.

    ``text`` is how emitted code spells it: a literal (``2.0``), or the name of a module
    constant the emitted function reads from its namespace (``SCALE``, ``np.pi``).
    """

    value: Any
    text: str

    def __post_init__(self) -> None:
        # repr() of a float that is not finite is no Python literal (``inf``,
        # ``np.float64(nan)``): emitted code, which imports NumPy as np, spells it np.inf
        value = self.value
        if type(value) in _FLOATS and self.text == repr(value) and not math.isfinite(value):
            text = "np.nan" if math.isnan(value) else "np.inf" if value > 0 else "-np.inf"
            object.__setattr__(self, "text", text)


_FLOATS = {float, np.float64, np.float32, np.float16}

Atom = Union[Var, Const]


@dataclass(frozen=True)
class Slice:
    lower: Atom | None
    upper: Atom | None
    step: Atom | None


IndexItem = Union[Var, Const, Slice]


@dataclass(frozen=True)
class Index:
    """A subscript: one item, or a tuple of items (``x[1:, None, ...]``)."""

    items: tuple[IndexItem, ...]
    is_tuple: bool
    # ``p.w`` on a pytree argument (a NamedTuple, a registered class): read as the key
    # "w" of the dict the call passes for it (s2s/api/trees.py); an array refuses it
    attribute: bool = False
    # names among the items known to hold Python ints (a loop's counter): basic items
    ints: tuple[str, ...] = ()
    # the one item is a boolean mask (a comparison's): it names no element twice
    mask: bool = False
    # ``a, b = v``'s reads of ``v[0]``, ``v[1]``: the number of targets (0: not an
    # unpacking), which the analysis checks against a tuple's or list's known length
    unpack: int = 0

    def atoms(self) -> list[Atom]:
        found: list[Atom] = []
        for item in self.items:
            if isinstance(item, Slice):
                found += [a for a in (item.lower, item.upper, item.step) if a is not None]
            else:
                found.append(item)
        return found

    def is_basic(self) -> bool:
        """True when NumPy's basic indexing applies (no integer or boolean arrays)."""
        for item in self.items:
            if isinstance(item, Var) and item.name not in self.ints:
                return False
            if isinstance(item, Const) and not (
                item.value is None
                or item.value is Ellipsis
                or (isinstance(item.value, int) and not isinstance(item.value, bool))
            ):
                return False
        return True


# Let.params key: names of keyword parameters passed as differentiable operands; their
# values are the last entries of Let.args, in this order
KEYWORD_OPERANDS = "keyword_operands"


@dataclass
class Let:
    """``target = prim(*args, **params)``.

    ``params`` hold the non-differentiable inputs: atoms (``axis=ax``), an
    :class:`Index` for subscripts, tuples of atoms for shapes, or, for calls to user
    functions, the callee's :class:`Function` under ``"callee"``.
    """

    target: str
    prim: str
    args: tuple[Atom, ...]
    params: dict[str, Any]
    loc: Loc | None


@dataclass
class If:
    test: Atom
    body: list["Stmt"]
    orelse: list["Stmt"]
    loc: Loc | None
    # names the statement binds for later code (each bound in both branches)
    joins: list[str] = field(default_factory=list)


@dataclass
class For:
    """``for target in range(...)``: loops over arrays are desugared to this.

    ``iter`` is bound by a ``range`` statement before the loop.  ``carried`` lists
    the names the body rebinds for later iterations as ``(entry, exit)``: the body
    reads ``entry``, computes ``exit``, and the back edge copies ``entry = exit``.
    After the loop ``entry`` holds the last iteration's value (or the value before the
    loop when it ran zero times).  Only these names are live after the loop.
    """

    target: str
    iter: Var | None  # None for a while loop
    body: list["Stmt"]
    loc: Loc | None
    carried: list[tuple[str, str]] = field(default_factory=list)
    # a ``while`` loop: the condition's name (carried: the body computes it again at
    # its end); ``target`` then names the count of iterations run
    test: Var | None = None
    # the body can ``break``: the backward sweep counts iterations (``counter``) and
    # the loop index is saved, since the range no longer says how many ran
    counter: str | None = None


@dataclass
class Break:
    """``break`` out of the innermost loop.

    ``copies`` pairs each of that loop's carried names with the name holding its value
    here: leaving early, the loop's results are these values, not the body's ends.
    """

    loc: Loc | None
    env: dict[str, str] = field(default_factory=dict)  # user name -> name, here
    copies: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class Return:
    value: Atom
    loc: Loc | None


Stmt = Union[Let, If, For, Break, Return]


@dataclass
class Function:
    """A normalized user function."""

    name: str  # the user's name (``<lambda>`` for lambdas)
    params: list[str]  # positional parameters, in order
    kwonly: list[str]
    defaults: dict[str, Any]  # parameter name -> default value (Python object)
    body: list[Stmt]
    loc: Loc
    pyfunc: Any  # the Python function object it came from
    source_lines: dict[int, str]  # line number -> user's source line
    result_name: str  # preferred name of the returned value
    namespace: dict[str, Any]  # free names the emitted code reads -> their objects
    names: Any  # the NameTable of names already taken in this function
    source_hash: str  # sha256 of the function's source text
    free: dict[str, Any]  # free name -> FreeVar, for this function and its callees
    # versions of an array written in place -> the array's first name: one buffer, so
    # emitted code spells every version with that name
    aliases: dict[str, str] = field(default_factory=dict)
    # the stacks of a `sum(f(v) for v in xs)` lowered as a loop: over no items (an
    # empty list this call), Python's sum is its start (ir/unroll.py)
    sums: frozenset = field(default_factory=frozenset)
    # in-place adds into an array other names hold, lowered by rebinding those names
    # (``held_dict_items.py``): the refusals of ``s2s.jit(f, backend="jax")``, which
    # runs the user's code as written
    rebound_writes: tuple = ()
    # parameters whose array the function may write into (`y += v`): name -> the error a
    # call raises where the caller reads that array afterwards (frontend/param_writes.py)
    param_writes: dict[str, Any] = field(default_factory=dict)
    # parameters the code takes for arrays (not containers) where it decides a type
    # test by it (frontend/nested_types.py): a call passing a tuple there is refused
    leaf_params: frozenset = frozenset()
    # the structure of what it returns where known when transforming (a tuple of
    # arrays it built: a caller given it decides `isinstance(u, tuple)` of its items),
    # and the parameters it took for arrays to know it: (structure, {(param, path)})
    returns: Any = None
    # targets of arithmetic written with a Python operator (`xs / 2`, `-xs`), not a
    # NumPy call (`np.divide(xs, 2)`): of a tuple or list, Python raises a TypeError
    # where NumPy converts (transforms/list_operands.py)
    operators: frozenset = frozenset()


def walk(stmts: list[Stmt]):
    """Yield every statement, depth first, in source order."""
    for s in stmts:
        yield s
        if isinstance(s, If):
            yield from walk(s.body)
            yield from walk(s.orelse)
        elif isinstance(s, For):
            yield from walk(s.body)


def uses(stmt: Stmt) -> list[str]:
    """Names a single statement reads (not descending into If bodies)."""
    atoms: list[Any] = []
    if isinstance(stmt, Let):
        atoms += list(stmt.args)
        for p in stmt.params.values():
            atoms += atoms_in(p)
    elif isinstance(stmt, If):
        atoms.append(stmt.test)
    elif isinstance(stmt, For):
        atoms += [a for a in (stmt.iter, stmt.test) if a is not None]
        atoms += [Var(exit) for _, exit in stmt.carried]
    elif isinstance(stmt, Break):
        atoms += [Var(name) for _, name in stmt.copies]
    elif isinstance(stmt, Return):
        atoms.append(stmt.value)
    return [a.name for a in atoms if isinstance(a, Var)]


def atoms_in(p: Any) -> list[Any]:
    if isinstance(p, (Var, Const)):
        return [p]
    if isinstance(p, Index):
        return p.atoms()
    if isinstance(p, (tuple, list)):
        out: list[Any] = []
        for q in p:
            out += atoms_in(q)
        return out
    return []
