"""What the transforms know of a function before they emit code: its ``Facts``.

Computed once per (IR, argument structures, active parameters) by ``facts`` and read by
reverse mode, forward mode, vmap and checkpointing: each value's structure (kinds), the
statement that binds it (producers), whether it carries a derivative (activity), and
which values are known scalars or Python ints.  The structure a call to a user
function returns is found by a ``KindSolver``, which owns the state of a recursive
solve (recursive functions are fixed points).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..errors import MissingKeyError, TransformError, UnpackError, UnsupportedSyntaxError
from ..ir.kinds import LEAF, SEQ, Kind, Seq, Tree, kind_of
from ..ir.nodes import Atom, Const, For, Function, If, Index, Let, Return, Slice, Stmt, Var, walk
from ..ir.walk import all_lets, depending, loop_breaks
from ..primitives import PRIMITIVES
from ..primitives.registry import arg_slots, refuse_underived
from .analysis_words import _structure, _user_name, structure_changed
from .int_items import int_items
from .list_operands import per_call
from .one_path import container_on_one_path, derivative_never_read
from .results_count import results_unknown

# structural primitives: a value built from (or passed through) active values is active
STRUCTURAL = {"identity", "make_tuple", "make_list", "make_dict", "call"}


_EMPTY_LIST = Tree(list, (), ())


def facts(fn: Function, arg_kinds: tuple, active_params: tuple[int, ...] = (),
          solver: KindSolver | None = None) -> Facts:
    """The facts of ``fn`` called with arguments of ``arg_kinds``, differentiated in
    the positional parameters ``active_params``."""
    found = Facts(fn, solver if solver is not None else KindSolver())
    found._analyse_function(arg_kinds, active_params)
    return found


@dataclass
class Facts:
    """One function's analysis; transforms may refine ``producer`` as they rewrite."""

    fn: Function
    solver: KindSolver
    kinds: dict[str, Kind] = field(default_factory=dict)
    active: set[str] = field(default_factory=set)
    producer: dict[str, Let] = field(default_factory=dict)
    # names bound by more than one statement (the branches of an `if`): all of them
    producers: dict[str, list[Let]] = field(default_factory=dict)
    scalars: set[str] = field(default_factory=set)  # names whose shape is known to be ()
    int_vars: set[str] = field(default_factory=set)  # names holding Python ints
    # names read out of a container's items that hold Python ints (a tape's exponent)
    item_ints: frozenset = frozenset()
    # (id(if), branch) -> the structure of the if's joins on that path
    branch_kinds: dict[tuple[int, int], dict[str, Kind | None]] = field(default_factory=dict)
    # ``t2 = not t``: a path of t2 is t's other path (both name the same test)
    negation: dict[str, str] = field(init=False)
    test_order: dict[str, int] = field(init=False)  # a test's position in the function
    # >0 in a first pass over a loop that carries an empty list (`out = []`, then `out =
    # [g] + out`): its items' structure is known only after the pass, so a nested loop's
    # change of structure is not an error yet (the pass after it decides)
    provisional: int = 0

    def __post_init__(self) -> None:
        self.negation = {
            t.target: t.args[0].name for t in walk(self.fn.body) if isinstance(t, Let)
            and t.prim == "not_" and isinstance(t.args[0], Var)}
        self.test_order = {
            t.target: k for k, t in enumerate(walk(self.fn.body)) if isinstance(t, Let)}

    def _analyse_function(self, arg_kinds: tuple, active_params: tuple[int, ...]) -> None:
        self.item_ints = int_items(self.fn)
        for i, p in enumerate(self.fn.params):
            self.kinds[p] = arg_kinds[i] if i < len(arg_kinds) else LEAF
            if i in active_params:
                self.active.add(p)
        for p in self.fn.kwonly:
            self.kinds[p] = LEAF
        self._analyse(self.fn.body)

    def _check_python_expression(self, s: Let) -> None:
        """A comprehension (or slice(), tuple()) is index arithmetic: it may not read a
        value that carries a derivative, which it would silently drop."""
        for i, a in enumerate(s.args):
            if i in s.params.get("shape_only", ()) or not (
                    isinstance(a, Var) and a.name in self.active):
                continue  # (only its items' shapes are read; or no derivative)
            if s.params.get("formatted"):
                raise UnsupportedSyntaxError(
                    f"this f-string formats `{a.name}`, which carries a derivative; a "
                    "string has none", s.loc, "format it inside a print, assert or "
                    "raise, or format a string argument (`f\"i{k}\"`)")
            if isinstance(s.params.get("values"), str):  # (`math.isclose(t, 0.3)`)
                raise TransformError(
                    f"`{s.params['values']}` takes Python numbers, and an argument here "
                    "carries a derivative: s2s runs this `math` function as Python (no "
                    "derivative rule), as JAX runs it only on values it does not trace",
                    s.loc, "differentiate another argument (`argnums`), or use the NumPy "
                    "or SciPy function (np.isclose, scipy.special.gamma, ...)")
            if s.params.get("values"):
                raise TransformError(  # (a kept `try`: frontend/kept_try.py)
                    f"this `try` reads `{a.name}`, which carries a derivative: an "
                    "exception has no derivative, so s2s keeps a `try` only around "
                    "values that carry none", s.loc, "differentiate another argument "
                    "(`argnums`), or test with `if` (`s = cfg[\"s\"] if \"s\" in cfg else 1.0`)")
            raise TransformError(
                f"this expression reads `{a.name}`, which carries a derivative; s2s "
                "differentiates NumPy operations, not comprehensions", s.loc,
                "write it with array operations (np.stack, slicing, np.sum)",
            )

    def _analyse(self, stmts: list[Stmt]) -> None:
        for s in stmts:
            if isinstance(s, Let):
                self._placeholder_kind(s)
                if not (is_none(s) and s.target in self.kinds):
                    if s.target in self.producer:
                        self.producers.setdefault(s.target, [self.producer[s.target]])
                        self.producers[s.target].append(s)
                    self.producer[s.target] = s
                    self.kinds[s.target] = self.kind_of_let(s)
                if s.prim == "pyexpr":
                    self._check_python_expression(s)
                if self.is_active(s):
                    self.active.add(s.target)
                if self._let_is_scalar(s):
                    self.scalars.add(s.target)
                elif not is_none(s):  # (an `if`'s join rebound on one path: its own)
                    self.scalars.discard(s.target)
                if self._is_int(s):
                    self.int_vars.add(s.target)
            elif isinstance(s, For):
                self._analyse_for(s)
            elif isinstance(s, If):
                before = {j for j in s.joins if j in self.scalars}
                self._analyse(s.body)
                in_body = {j: self.kinds.get(j) for j in s.joins}
                scalar_ends = [{j for j in s.joins if j in self.scalars}]
                self.scalars -= set(s.joins) - before  # (the other path starts anew)
                self.scalars |= before
                self._analyse(s.orelse)
                scalar_ends.append({j for j in s.joins if j in self.scalars})
                # each path's structure of its joins (a known-length list on one, a
                # list grown in a loop on the other: a grown list after the `if`)
                self.branch_kinds[(id(s), 0)] = in_body
                self.branch_kinds[(id(s), 1)] = {j: self.kinds.get(j) for j in s.joins}
                for join in s.joins:
                    # a list one path appends to (a tape saved on one path): grown
                    a, b = in_body[join], self.kinds.get(join)
                    item = None if a is None or b is None or a == b else (
                        grown_item(a, b) or grown_item(b, a))
                    if item is not None:
                        self.kinds[join] = Seq(item)
                    elif isinstance(a, Tree) and isinstance(b, Tree) and a != b:
                        self._refuse_join(s, join, a, b)
                for join in s.joins:
                    # a join is scalar only if every path leaves it so (a path binding
                    # it to None, the normalizer's "not bound here", says nothing)
                    if _all_scalar_defs(s, join, scalar_ends):
                        self.scalars.add(join)
                    else:
                        self.scalars.discard(join)

    def _refuse_join(self, s: If, join: str, a: Tree, b: Tree) -> None:
        """Two paths of an ``if`` on a run-time value bind containers of different
        structures under one name (a dict with other keys, a tuple of another length):
        the structure after it would depend on the test's value.  (The same keys in
        another order are one structure.)"""
        if a.type is b.type is dict and set(a.keys) == set(b.keys) and all(
                a.child(k) == b.child(k) for k in a.keys):
            return
        what = "returns" if join == self.fn.result_name else \
            f"binds `{_user_name(self.fn, join)}` to"
        raise TransformError(
            f"this `if` {what} {_structure(a)} on one path and {_structure(b)} on the "
            "other, so the structure after it would depend on the test's run-time value",
            s.loc, "give the value the same keys (the same length) on every path: "
            "a default for the missing ones (`d[\"b\"] = np.zeros_like(x)`)")

    def _placeholder_kind(self, s: Let) -> None:
        """A name an ``if`` binds on one path and a later ``if`` reads on that path is
        bound to None on the other paths (see normalize._enter_path): fine for an
        array, whose zero tangents and cotangents there are never read; a container
        would have its leaves read (``None[0]``)."""
        if is_none(s):
            known = self.kinds.get(s.target)
        elif s.target in self.kinds and is_none(self.producer.get(s.target)):
            known = self.kind_of_let(s)
        else:
            return
        if isinstance(known, (Tree, Seq)) and not derivative_never_read(
                self.fn, s.target, s):
            raise container_on_one_path(self.fn, s.target, s.loc)  # (one_path.py)

    def _is_int(self, s: Let) -> bool:
        """Is the value a Python int (a loop index, a length, arithmetic on those)?"""
        if s.prim in ("len", "int", "ndim", "size"):
            return True
        if s.prim in ("add", "subtract", "multiply", "floor_divide", "remainder",
                      "negative", "identity"):
            return all(
                (isinstance(a, Var) and a.name in self.int_vars)
                or (isinstance(a, Const) and type(a.value) is int)
                for a in s.args
            )
        if s.prim == "getitem" and isinstance(s.args[0], Var):
            base = self.producer.get(s.args[0].name)
            return base is not None and base.prim == "shape" or s.target in self.item_ints
        return False

    def _analyse_for(self, s: For) -> None:
        self.kinds[s.target] = LEAF
        self.scalars.add(s.target)  # a Python int
        self.int_vars.add(s.target)
        for entry, _ in s.carried:
            self.scalars.discard(entry)  # its value changes from one iteration to the next
        first = any(self.kinds.get(entry) == _EMPTY_LIST for entry, _ in s.carried)
        while True:  # a value feeding the next iteration may become active there
            before = set(self.active)
            self.provisional += first
            try:
                self._analyse(s.body)
            finally:
                self.provisional -= first
            grown, first = first, False  # (after a provisional pass, one more)
            for entry, exit_ in s.carried:
                if exit_ in self.active:
                    self.active.add(entry)
                before_kind, after = self.kinds.get(entry, LEAF), self.kinds.get(exit_, LEAF)
                if before_kind == after:
                    continue
                item = grown_item(before_kind, after)
                if item is not None:
                    if before_kind != Seq(item):  # appended to in the loop: length known later
                        self.kinds[entry] = Seq(item)
                        grown = True
                    continue
                if self.provisional:
                    continue
                raise structure_changed(self.fn, entry, before_kind, after, s.loc, grown_item(
                    before_kind, Seq(LEAF)) is not None)
            for brk in loop_breaks(s.body):
                for entry, name in brk.copies:
                    if name in self.active:
                        self.active.add(entry)
                    # a list appended to on the way out (a tape saved before `break`)
                    item = grown_item(self.kinds.get(entry, LEAF), self.kinds.get(name, LEAF))
                    if item is not None and self.kinds.get(entry) != Seq(item):
                        self.kinds[entry] = Seq(item)
                        grown = True
            if self.active == before and not grown:
                return

    def _let_is_scalar(self, s: Let) -> bool:
        """Is the value known to have shape () whatever the inputs' shapes?"""
        prim = PRIMITIVES[s.prim]
        if s.prim in ("sum", "mean", "max", "min", "prod"):
            return "axis" not in s.params and not _truthy(s.params.get("keepdims"))
        if s.prim in ("float", "int", "ndim", "size", "len"):
            return True
        if s.prim == "getitem" and isinstance(s.args[0], Var):
            base = self.producer.get(s.args[0].name)
            index: Index = s.params["index"]
            return base is not None and base.prim == "shape" and len(index.items) == 1 \
                and not isinstance(index.items[0], Slice)
        if prim.family in ("elementwise", "binary", "comparison") and s.prim != "where":
            return all(self.is_scalar(a) for a in s.args)
        if s.prim == "identity":
            return self.is_scalar(s.args[0])
        return False

    def is_scalar(self, a: Atom) -> bool:
        if isinstance(a, Const):  # (a container first: np.ndim of a ragged tuple of
            if isinstance(a.value, (str, tuple, list, dict, type(None))):  # arrays raises)
                return False
            return isinstance(a.value, (int, float)) or np.ndim(a.value) == 0
        return a.name in self.scalars

    def kind_of_let(self, s: Let) -> Kind:
        def k(a: Atom) -> Kind:
            return self.kinds.get(a.name, LEAF) if isinstance(a, Var) else const_kind(a)

        if s.prim == "identity":
            return k(s.args[0])
        if s.prim in ("make_tuple", "make_list"):
            t = tuple if s.prim == "make_tuple" else list
            return Tree(t, tuple(range(len(s.args))), tuple(k(a) for a in s.args))
        if s.prim == "make_dict":  # (a NamedTuple built here reads by position too)
            return Tree(dict, tuple(s.params["keys"]), tuple(k(a) for a in s.args),
                        bool(getattr(s.params.get("built"), "positional", False)))
        if s.prim == "getitem":
            base = k(s.args[0])
            index = s.params["index"].items
            if isinstance(base, Tree) and base.type in (list, tuple) and len(index) == 1 and \
                    not isinstance(index[0], Const) and len(set(base.children)) == 1:
                return base.children[0]  # (a list a loop grows, a tuple of one kind)
            if base == _EMPTY_LIST and len(index) == 1 and not isinstance(
                    index[0], (Const, Slice)):
                return LEAF  # (`[]` a loop grows, at its first pass: its items unknown)
            if isinstance(base, Tree):  # (a registered object's meta field: as it is)
                return LEAF if _meta_key(s, base) is not None else base.child(
                    self.container_key(s, base))
            if isinstance(base, Seq) and len(index) == 1 and isinstance(index[0], Slice):
                return base  # (`hs[1:]`: a list of the same items)
            if isinstance(base, Seq):
                return base.item
            if s.params["index"].attribute:
                raise _not_a_field(s)
            return LEAF
        if s.prim == "append":
            base, item = k(s.args[0]), k(s.args[1])
            if isinstance(base, Tree) and base.type is list:
                n = len(base.keys)
                return Tree(list, tuple(range(n + 1)), base.children + (item,))
            joined = joined_kind(base.item, item) if isinstance(base, Seq) else item
            if joined is None:
                raise TransformError(
                    "a list grown in a loop holds values of different structures",
                    s.loc, "append values of one structure (all arrays, or all pairs)",
                )
            return Seq(joined)
        if s.prim == "setitem" and isinstance(k(s.args[0]), (Seq, Tree)):
            return _list_item_written(s, k(s.args[0]), k(s.args[1]))
        if s.prim == "list":
            base = k(s.args[0])
            if isinstance(base, Tree) and base.type is not dict:
                return Tree(list, base.keys, base.children)
            if isinstance(base, Tree):
                raise TransformError(
                    "list() of a dict is not supported", s.loc,
                    "list the values you need: [d['a'], d['b']]",
                )
            return base if isinstance(base, Seq) else SEQ
        if s.prim == "zeros_list":
            return k(s.args[0])
        if s.prim == "pop":
            base = k(s.args[0])
            if isinstance(base, Tree) and base.type is list and base.keys:
                n = len(base.keys) - 1
                return Tree(list, tuple(range(n)), base.children[:n])
            return base
        if s.prim == "call":
            return self.solver.call_kind(s, tuple(k(a) for a in s.args))
        results = PRIMITIVES[s.prim].results
        if results is not None:
            try:
                known = static_arguments(s)
                for a, (pname, sub) in zip(s.args, arg_slots(s)):
                    kind = k(a)
                    if sub is None and pname not in known and isinstance(kind, Tree) and (
                            kind.type is not dict):
                        known[pname] = (None,) * len(kind.keys)  # only its length is known
                n = results if isinstance(results, int) else results(known)
            except (KeyError, TypeError):
                if s.prim == "split_like" and isinstance(k(s.args[1]), Seq):
                    return SEQ  # (a join's gradient over a list a loop grew: as long)
                raise results_unknown(s) from None
            return Tree(tuple, tuple(range(n)), (LEAF,) * n)
        return LEAF

    def container_key(self, s: Let, base: Tree) -> Any:
        index: Index = s.params["index"]
        item = index.items[0] if len(index.items) == 1 else None
        if not isinstance(item, Const) or index.is_tuple:
            raise TransformError(
                "a tuple, list or dict argument can only be indexed with a constant "
                "key here (a key known when s2s generates the code: a literal, a loop "
                "over its keys; not one an `if` on a value chooses)", s.loc,
                'write params["W"] or pair[0]; to choose by a value, '
                'np.where(test, p["w"], p["a"])',
            )
        key = item.value
        if index.unpack and index.unpack != len(base.keys) and (
                base.type is not dict or base.positional):  # a, b = (x, y, z)
            raise UnpackError.of(index.unpack, len(base.keys), s.loc)
        if index.attribute and key not in base.keys:
            raise TransformError(
                f"`.{key}` is not a field of this argument", s.loc,
                f"read one of its fields: {', '.join(map(str, base.keys)) or 'none'}",
            )
        if base.positional and type(key) is int and -len(base.keys) <= key < len(base.keys):
            return base.keys[key]  # a NamedTuple's field by position
        if base.type is not dict and isinstance(key, int) and key < 0:
            key += len(base.keys)
        if key not in base.keys and base.type is dict:
            raise MissingKeyError(
                f"the dict has no key {item.value!r} in this call (its keys: "
                f"{', '.join(map(repr, base.keys)) or 'none'})", s.loc,
                "read one of its keys, or test for it first (`if \"k\" in d:`)",
            )
        if key not in base.keys:
            raise TransformError(
                f"index {item.value!r} is out of range for a {base.type.__name__} of "
                f"length {len(base.keys)} in this call", s.loc,
                f"use an index below {len(base.keys)}" if base.keys else
                f"this {base.type.__name__} is empty here",
            )
        return key

    def is_active(self, s: Let) -> bool:
        prim = PRIMITIVES[s.prim]
        if prim.nondiff or s.prim == "getitem" and s.target in self.item_ints:
            return False  # (an int read from a tape holding arrays: no derivative)
        if s.prim == "getitem" and isinstance(s.args[0], Var) and _meta_key(
                s, self.kinds.get(s.args[0].name)) is not None:
            return False  # (a meta field of a differentiated object: static data)
        if s.prim in STRUCTURAL or s.prim in ("getitem", "array", "asarray"):
            return any(isinstance(a, Var) and a.name in self.active for a in s.args)
        active = [j for j, a in enumerate(s.args) if isinstance(a, Var) and a.name in self.active]
        refuse_underived(prim, s, active)  # (a derivative with no rule: refused, not 0)
        return any(
            isinstance(a, Var) and a.name in self.active and pname in prim.diff
            for a, (pname, _) in zip(s.args, arg_slots(s))
        )


    def stmt_kind(self, s: Let) -> Kind:
        """The structure ``s`` binds on its own path: a list of known length
        (``ys = [a]``, ``ys.append(v)`` on it) even where its name is an `if`'s join
        that the other path grows in a loop (a grown list, ``Seq``, after the join)."""
        if s.prim in ("identity", "make_tuple", "make_list", "make_dict", "append", "pop",
                      "list") and not isinstance(self.kinds.get(s.target), Tree):
            return self.kind_of_let(s)
        return self.kinds.get(s.target, LEAF)


    def path_literal(self, test: str, way: bool) -> tuple[str, bool]:
        """The path ``way`` of an `if` on ``test``, named by the test it negates."""
        seen = set()
        while test in self.negation and test not in seen:
            seen.add(test)
            test, way = self.negation[test], not way
        return test, way


def _meta_key(s: Let, base: Any) -> str | None:
    """The meta field ``s`` reads of a differentiated registered object (``p.n_layers``,
    or ``p["n_layers"]`` in a Jacobian's inner code, of one of its ``meta_fields``)."""
    index = s.params["index"]
    if not isinstance(base, Tree) or not base.meta or len(index.items) != 1 or not isinstance(
            index.items[0], Const):
        return None
    key = index.items[0].value
    return key if key in base.meta and key not in base.keys else None


class KindSolver:
    """The structures user functions return, solved on demand; a recursive solve's
    state (the calls being solved, the analyses under way, callees looked up) lives
    here, one solver per top-level analysis."""

    max_structures = 8  # argument structures one recursive function may be analysed at
    max_paths = 64  # paths through a recursive function's `if`s and loops told apart

    def __init__(self) -> None:
        self.in_progress: dict[tuple[int, tuple], _Assumed] = {}
        self.frames: list[_Frame] = []
        self.resolved: dict[int, tuple[Any, Function]] = {}  # recursive calls' functions

    def return_kind(self, fn: Function, arg_kinds: tuple) -> Kind:
        """The structure a call returns, given its arguments' structures."""
        kind, _ = self.solve(fn, arg_kinds)
        return LEAF if kind is None else kind

    def call_kind(self, s: Let, arg_kinds: tuple) -> Kind:
        """The structure ``s``, a call, binds; one not known yet (a recursive call while
        the structure its function returns is being found) is marked in the analysis."""
        kind, waits = self.solve(self.callee(s), arg_kinds)
        if kind is None:
            self.frames[-1].unknown.add(s.target)
            self.frames[-1].waits |= waits
            return LEAF  # (a placeholder: what depends on it is set aside)
        return kind

    def solve(self, fn: Function, arg_kinds: tuple) -> tuple[Kind | None, set]:
        """The structure ``fn`` returns, or None while it depends on a call still being
        solved (with the keys of the calls it waits for).

        A recursive function's (through itself or others) is a fixed point: a recursive
        call returns what the function returns. The paths through its `if`s and loops
        whose result depends on no call of unknown structure (base cases) give that
        structure; the other paths, analysed again with recursive calls returning it,
        must return it too (an emitted JVP's pair of value and tangent is as good as an
        array)."""
        key = (id(fn), arg_kinds)
        assumed = self.in_progress.get(key)
        if assumed is not None:
            assumed.reached = True
            return assumed.kind, {key} if assumed.kind is None else set()
        if sum(k[0] == id(fn) for k in self.in_progress) >= self.max_structures:
            raise TransformError(
                f"`{fn.name}` calls itself with arguments whose structure changes with "
                "each call", fn.loc,
                "give each recursive call arguments of the structures its caller got",
            )
        assumed = self.in_progress[key] = _Assumed(None)
        fn = per_call(fn, arg_kinds)  # as its code for these structures will be
        waits: set = set()
        try:
            frame = _Frame()
            try:
                r = self._analysed(fn, fn.body, arg_kinds, frame)
            except TransformError:
                if not assumed.reached and not frame.unknown:
                    raise
                r = None  # perhaps a placeholder for a recursive call's result: see below
            if not assumed.reached and not frame.unknown:
                return _returned_kind(r), set()  # no recursion: the common case
            whole = False
            try:
                paths = [body for body, _ in self._paths(fn.body, {})]
            except _TooManyPaths:  # from an array: what the whole body returns, and again
                paths, assumed.kind, whole = [fn.body], LEAF, True
            errors: list[TransformError] = []
            for _ in range(4):  # unknown, then the base cases' structure, then checked
                found: dict[Kind, Any] = {}
                for body in paths:
                    frame = _Frame()
                    try:
                        r = self._analysed(fn, body, arg_kinds, frame)
                    except TransformError as e:  # a path no run takes, or a placeholder's
                        errors.append(e)
                        waits |= frame.waits
                        continue
                    waits |= frame.waits
                    ret = body[-1]
                    if whole or not (isinstance(ret.value, Var) and ret.value.name in depending(
                            body, frame.unknown)):
                        found.setdefault(_returned_kind(r), _path_loc(fn, body))
                if len(found) > 1:
                    _disagree(fn, list(found.items()))
                kind = next(iter(found), None)
                if kind == assumed.kind or not assumed.reached:
                    break
                assumed.kind = kind
            else:
                raise errors[-1] if errors else TransformError(
                    f"s2s cannot tell the structure `{fn.name}` returns", fn.loc,
                    "return values of one structure on every path (the base case's)")
            waits.discard(key)
            if kind is None and not waits:
                if errors:
                    raise errors[0]
                raise TransformError(
                    f"every return of `{fn.name}` depends on a call to itself: with no base "
                    "case, its result has no structure to start from", fn.loc,
                    "return without calling itself on the path that ends the recursion",
                )
            return kind, waits if kind is None else set()
        finally:
            del self.in_progress[key]
            if not self.in_progress:
                self.resolved.clear()

    def _paths(self, stmts: list[Stmt], taken: dict[str, bool]) -> list[tuple[list[Stmt], dict]]:
        """The paths through ``stmts``' `if`s (outside loops), each with the tests it
        took (an `if` on a test an earlier one decided takes the same branch), and with
        each loop run or not (its carried values then hold what they held before it)."""
        paths: list[tuple[list[Stmt], dict]] = [([], taken)]
        for s in stmts:
            if isinstance(s, If):
                paths = [(pre + sub, t2) for pre, t in paths for way in _ways(s, t)
                         for sub, t2 in self._paths(s.body if way else s.orelse, _took(s, t, way))]
            elif isinstance(s, For):
                paths = [(pre + extra, t) for pre, t in paths for extra in ([], [s])]
            else:
                paths = [(pre + [s], t) for pre, t in paths]
            if len(paths) > self.max_paths:
                raise _TooManyPaths
        return paths

    def _analysed(self, fn: Function, body: list[Stmt], arg_kinds: tuple,
                  frame: _Frame) -> Facts:
        """The kind analysis of ``body`` (``fn``'s, or one path through it); ``frame``
        learns which names calls of unknown structure bound."""
        self.frames.append(frame)
        try:
            return facts(replace(fn, body=body), arg_kinds, (), self)
        finally:
            self.frames.pop()

    def callee(self, s: Let) -> Function:
        """The IR of a called user function (a recursive call's, looked up now: once
        while the structures of recursive calls are being solved, which looks often)."""
        callee = s.params["callee"]
        if isinstance(callee, Function):
            return callee
        if not self.in_progress:
            return callee.function
        found = self.resolved.get(id(callee))
        if found is None or found[0] is not callee:
            found = self.resolved[id(callee)] = (callee, callee.function)
        return found[1]


@dataclass
class _Assumed:
    """What a call being solved is assumed to return while its body is analysed (a
    recursive call reads it; None: not known yet), and whether a call read it."""

    kind: Kind | None
    reached: bool = False


@dataclass
class _Frame:
    """One kind analysis under way: the names bound by calls whose structure is not
    known yet, and which calls being solved that is waiting for."""

    unknown: set[str] = field(default_factory=set)
    waits: set[tuple[int, tuple]] = field(default_factory=set)


class _TooManyPaths(Exception):
    pass


def _ways(s: If, taken: dict[str, bool]) -> list[bool]:
    """The branches of ``s`` a path that took ``taken`` may take."""
    if isinstance(s.test, Const):
        return [bool(s.test.value)]
    return [taken[s.test.name]] if s.test.name in taken else [True, False]


def _took(s: If, taken: dict[str, bool], way: bool) -> dict[str, bool]:
    return {**taken, s.test.name: way} if isinstance(s.test, Var) else taken


def _path_loc(fn: Function, body: list[Stmt]) -> Any:
    """Where a path through ``fn`` is told apart: its last statement in a branch."""
    top = {id(s) for s in fn.body}
    return next((s.loc for s in reversed(body) if id(s) not in top and s.loc is not None),
                body[-1].loc)


def _returned_kind(r: Facts) -> Kind:
    ret = r.fn.body[-1]
    assert isinstance(ret, Return)
    if isinstance(ret.value, Var):
        return r.kinds.get(ret.value.name, LEAF)
    return const_kind(ret.value)


def _disagree(fn: Function, returns: list[tuple[Kind, Any]]) -> None:
    """Refuse a recursive function whose returns have different structures."""
    kinds = " and ".join(repr(kind) for kind, _ in returns)
    raise TransformError(
        f"`{fn.name}` calls itself and its returns have different structures "
        f"({kinds}; `*` is an array): a recursive call's result has one structure",
        returns[-1][1] or fn.loc,
        "return values of one structure on every path (the base case's)",
    )


def is_none(s: Any) -> bool:
    """Is ``s`` ``name = None``?"""
    return (isinstance(s, Let) and s.prim == "identity" and isinstance(s.args[0], Const)
            and s.args[0].value is None)


def grown_item(before: Any, after: Any) -> Kind | None:
    """The element structure of a list a loop grows from ``before`` to ``after`` (all
    its elements alike, or lists of one item structure: ``[x]`` and a grown list), or
    None when the two are not such lists."""
    items: list[Any] = []
    for kind in (before, after):
        if isinstance(kind, Seq):
            items.append(kind.item)
        elif isinstance(kind, Tree) and kind.type is list:
            items += kind.children
        else:
            return None
    if not items:
        return None
    item = items[0]
    for other in items[1:]:
        item = joined_kind(item, other)
        if item is None:
            return None
    return item


def joined_kind(a: Any, b: Any) -> Kind | None:
    """One structure for two values a name holds in turn (a tape saves, at each
    iteration, a list a loop makes anew longer: ``[x]``, then a grown list): lists
    of one item structure are a grown list; tuples and dicts of the same keys, their
    children joined; None where the two differ otherwise."""
    if a == b:
        return a
    if isinstance(a, Tree) and isinstance(b, Tree) and a.type is b.type is not list and (
            a.keys == b.keys and a.positional == b.positional):
        children = [joined_kind(x, y) for x, y in zip(a.children, b.children)]
        if any(c is None for c in children):
            return None
        return Tree(a.type, a.keys, tuple(children), a.positional)
    item = grown_item(a, b)
    return None if item is None else Seq(item)


def callee_of(s: Let) -> Function:
    """The IR of the user function a call statement calls."""
    callee = s.params["callee"]
    return callee if isinstance(callee, Function) else callee.function


def static_arguments(s: Let) -> dict[str, Any]:
    """The values known now of a statement's arguments, by parameter name."""
    known: dict[str, Any] = {}
    for a, (pname, sub) in zip(s.args, arg_slots(s)):
        if isinstance(a, Const) and sub is None:
            known[pname] = a.value
    for pname, p in s.params.items():
        if isinstance(p, Const):
            known[pname] = p.value
    return known


def const_kind(c: Any) -> Kind:
    """The structure of a constant atom (a literal container's); LEAF for the rest."""
    return kind_of(c.value) if isinstance(c, Const) else LEAF


def _truthy(p: Any) -> bool:
    return not (p is None or (isinstance(p, Const) and not p.value))


def _all_scalar_defs(s: If, join: str, ends: list[set[str]]) -> bool:
    """Whether ``join`` has shape () at the end of every path of ``s`` (``ends``:
    the scalar joins at the end of each) that binds it to a value: each path's own,
    not the name's last binding (``a = x * 2.0`` on one path, ``a = np.sum(x)`` on the
    other is no scalar: reverse mode dropped the unbroadcast of its cotangent)."""
    paths = [end for end, branch in zip(ends, (s.body, s.orelse)) if not _none_only(
        branch, join)]
    return bool(paths) and all(join in end for end in paths)


def _none_only(branch: list[Stmt], join: str) -> bool:
    """Whether ``branch`` binds ``join`` only to None (the normalizer's placeholder)."""
    lets = [t for t in all_lets(branch) if t.target == join]
    return bool(lets) and all(is_none(t) for t in lets)


def return_kind(fn: Function, arg_kinds: tuple) -> Kind:
    """The structure a call to ``fn`` returns, given its arguments' structures."""
    return KindSolver().return_kind(fn, arg_kinds)


def _not_a_field(s: Let) -> UnsupportedSyntaxError:
    """``x.w`` where ``x`` is an array (or an object s2s does not know as a pytree)."""
    attr = s.params["index"].items[0].value
    return UnsupportedSyntaxError(
        f"`.{attr}` is not an attribute of NumPy arrays, and s2s reads only arrays' "
        "attributes and the fields of pytree arguments", s.loc,
        "pass the value as an argument, or register the object's class as a pytree "
        "(s2s.tree_util.register_dataclass, register_pytree_node)",
    )


def _list_item_written(s: Let, base: Kind, value: Kind) -> Kind:
    """``ys[k] = v`` into a list grown in a loop: the list, its items of one
    structure; a list of known length (its items are slots) is not written so yet."""
    if isinstance(base, Tree) or not isinstance(base, Seq):
        raise TransformError(
            "assigning an item of a list not grown in a loop (a list of known length) "
            "is not supported yet", s.loc, "build the list with the value in its place",
        )
    if value != base.item:
        raise TransformError(
            "a list grown in a loop holds values of different structures", s.loc,
            "assign values of the structure its items have",
        )
    return base
