"""Control flow for code running on the JAX backend: ``lax`` in lowered emitted code.

:mod:`s2s.backends.control` rewrites the emitted module's ``if``/``for``/``while``
statements into calls of the functions here (``import s2s.backends.jax_control as
lax``).  Each decides at run time, as Python would, whether it can:

* a test or loop bound that is a concrete value (a static argument, a shape) runs the
  Python way, exactly as the statement it replaced;
* a traced one runs through ``jax.lax.cond`` / ``fori_loop`` / ``scan`` /
  ``while_loop``.

Emitted gradients save values on Python lists (tapes) in their forward loops and
pop them in the backward loops.  A lowered loop is pure: its body returns what the
statement appended (``pushed``) and receives what it popped (``popped``).  Under
``lax.scan`` the appends of all iterations become one :class:`Stacked` entry on the
tape (the scan's stacked outputs), and the backward loop that pops them is a scan
over that stack in reverse.  Run the Python way, each iteration appends its own
entry, as the unlowered code did; a backward loop handles either.

Reverse mode through a loop whose trip count is traced (a ``while`` on traced values,
``range(n)`` of a traced ``n``) needs a tape of unknown length: it raises
:class:`~s2s.backends.TracedValueError`, as JAX refuses reverse-mode differentiation
of ``lax.while_loop`` and of ``fori_loop`` with dynamic bounds.
"""

from __future__ import annotations

import contextvars
import linecache
import sys
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax as _lax

from ..errors import Loc, TruthValueError
from .base import TracedValueError
from .jax_order import in_order, keyed, plain

__all__ = ["and_", "cond", "fori_loop", "not_", "or_", "scan_range", "while_loop",
           "Stacked"]

_tree_map = jax.tree_util.tree_map
_leaves = jax.tree_util.tree_leaves

#: Loops over a static range of at most this many iterations are unrolled by XLA
#: (``unroll=True`` of ``lax.scan``/``fori_loop``); longer ones stay one loop.  XLA
#: fuses across an unrolled loop's iterations, as it does for the Python loop that
#: ``jax.jit`` traces, so a short loop's steady state matches JAX's; a loop stays
#: compact where its iterations would make compiling slow (``tools/bench_jit.py``;
#: ``s2s.jit(..., unroll=)`` sets it per jitted function).
UNROLL_DEFAULT = 100
unroll_limit: contextvars.ContextVar[int] = contextvars.ContextVar(
    "s2s_unroll_limit", default=UNROLL_DEFAULT)


def _unroll(n: int) -> bool | int:
    """``lax.scan``'s ``unroll`` for a loop of ``n`` iterations."""
    return True if n <= unroll_limit.get() else 1


class Stacked:
    """All iterations' entries of one tape from a lowered loop, stacked on axis 0.

    ``remaining`` counts the entries not yet popped (a backward loop run the Python
    way pops them one at a time, from the last)."""

    __slots__ = ("values", "remaining")

    def __init__(self, values: Any, length: int) -> None:
        self.values = values
        self.remaining = length

    def __repr__(self) -> str:
        return f"<s2s stacked tape entries: {self.remaining}>"


class Same:
    """A leaf of a :class:`Stacked` entry that every iteration pushed alike: a value
    that was not traced when ``lax.scan`` traced the body once (an index computed from
    shapes, ``y.shape[0] // 2``), hence the same for all iterations.  It stays the
    Python value it was (``z[n:]`` needs a static ``n``), never stacked as an array."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


_STATIC = (bool, int, float, complex, np.generic, np.ndarray)


def _rows(tree: Any) -> tuple[Any, Any]:
    """``tree`` with its :class:`Same` leaves out (a scan's xs), and how to put them
    back (:func:`_rejoin`)."""
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    same = [leaf if isinstance(leaf, Same) else None for leaf in leaves]
    return treedef.unflatten([None if s else leaf for leaf, s in zip(leaves, same)]), (
        treedef, same)


def _rejoin(rows: Any, how: tuple[Any, list]) -> Any:
    treedef, same = how
    leaves = jax.tree_util.tree_leaves(rows) if rows is not None else []
    it = iter(leaves)
    return treedef.unflatten([s if s is not None else next(it) for s in same])


def _split_static(tree: Any) -> tuple[Any, Any]:
    """What one traced iteration pushed: its traced leaves (stacked by the scan) and
    its static ones as :class:`Same` (put back by :func:`_rejoin`)."""
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    same = [Same(leaf) if isinstance(leaf, _STATIC) else None for leaf in leaves]
    return treedef.unflatten([None if s else leaf for leaf, s in zip(leaves, same)]), (
        treedef, same)


def _row(values: Any, k: int) -> Any:
    """Row ``k`` of a :class:`Stacked` entry's values."""
    return _tree_map(lambda a: a.value if isinstance(a, Same) else a[k], values)


def _traced(value: Any) -> bool:
    return isinstance(value, jax.core.Tracer)


def _any_traced(tree: Any) -> bool:
    return any(_traced(leaf) for leaf in _leaves(tree))


def _where() -> Loc | None:
    """The statement the helper's caller lowered: the ``# lowered: ...`` comment the
    pass writes above it (else the line of the call)."""
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith("<s2s:") and "runtime_jax" not in name:
            line = frame.f_lineno
            text = linecache.getline(name, line).rstrip("\n")
            indent = len(text) - len(text.lstrip())
            for k in range(line - 1, 0, -1):
                above = linecache.getline(name, k).rstrip("\n")
                if above.lstrip().startswith("# lowered:") and \
                        len(above) - len(above.lstrip()) == indent:
                    line, text = k, above
                    break
            stripped = text.lstrip()
            return Loc(name, line, len(text) - len(stripped) + 1, text)
        frame = frame.f_back  # type: ignore[assignment]
    return None


def _error(message: str, hint: str) -> TracedValueError:
    return TracedValueError(message, _where(), hint=hint)


_REVERSE_HINT = (
    "make the trip count a static argument (static_argnums=/static_argnames=), use "
    "forward mode (s2s.jvp), or run it on the NumPy backend (s2s.jit(f, "
    "backend='numpy'))"
)


def _reverse_mode_error(what: str) -> TracedValueError:
    return _error(
        f"Reverse-mode differentiation does not work through {what} (JAX refuses it "
        "for lax.while_loop and for fori_loop with dynamic start/stop values): the "
        "gradient saves one tape entry per iteration, and under jax.jit "
        "the number of iterations is known only when the compiled code runs",
        _REVERSE_HINT,
    )


# ---- if ---------------------------------------------------------------------------


def _scalar_predicate(pred: Any) -> Any:
    pred = jnp.asarray(pred)
    if pred.shape != ():
        if pred.size != 1:  # (NumPy's ValueError, at the lowered statement)
            raise TruthValueError(
                "`if`/`while` on an array with more than one element: it has no truth "
                "value (NumPy's ValueError: the truth value of an array is ambiguous; "
                "JAX's TracerBoolConversionError)", _where(),
                "test one number: `if np.all(x > 0):` or `if np.any(...)`; choose "
                "elementwise with `np.where(x > 0, a, b)`")
        pred = pred.reshape(())
    return pred if pred.dtype == jnp.bool_ else pred != 0


def cond(pred: Any, if_true: Callable, if_false: Callable, operands: Sequence = ()) -> Any:
    """``if pred:`` lowered: ``if_true(*operands)`` or ``if_false(*operands)``.

    Each branch returns the same tuple of names (the ones it binds that later code
    reads), then one slot per tape the ``if`` appends to: the entry, or None in the
    branch that does not append (a traced ``pred`` gets zeros of the other branch's
    entry there, so both branches return the same types)."""
    if not _traced(pred):
        return if_true(*operands) if pred else if_false(*operands)
    pred = _scalar_predicate(pred)
    try:  # (the dicts its branches bind keep their key order: jax_order.py)
        return plain(_cond(pred, in_order(if_true), in_order(if_false), keyed(operands)))
    except (TypeError, TracedValueError):  # (the branches order a dict's keys (or its
        return _cond(pred, if_true, if_false, operands)  # structure) differently)


def _cond(pred: Any, if_true: Callable, if_false: Callable, operands: Sequence) -> Any:
    true_fn, false_fn = if_true, if_false
    try:
        shapes_t = jax.eval_shape(if_true, *operands)
        shapes_f = jax.eval_shape(if_false, *operands)
    except TypeError as err:  # (`f = ACTS[name] if ... else relu`: a function)
        if "not a valid JAX type" not in str(err):
            raise
        raise _error(
            "Python `if` on a value JAX traces, lowered to jax.lax.cond: a branch binds "
            "a value that is not an array (a function, an object), which jax.lax.cond "
            "cannot return", "make the test a static argument (static_argnums=), or run "
            "it on the NumPy backend",
        ) from err
    if isinstance(shapes_t, tuple) and isinstance(shapes_f, tuple) and \
            len(shapes_t) == len(shapes_f):
        fill_t = {k: s for k, (t, s) in enumerate(zip(shapes_t, shapes_f))
                  if t is None and s is not None}
        fill_f = {k: t for k, (t, s) in enumerate(zip(shapes_t, shapes_f))
                  if s is None and t is not None}
        if fill_t:
            true_fn = _filled(if_true, fill_t)
        if fill_f:
            false_fn = _filled(if_false, fill_f)
    try:
        return _lax.cond(pred, true_fn, false_fn, *operands)
    except TypeError as err:
        if "true_fun and false_fun" not in str(err) and "branch" not in str(err):
            raise
        raise _error(
            "Python `if` on a value JAX traces, lowered to jax.lax.cond: its branches "
            "bind values of different structure, shape or dtype (one path "
            f"{_described(shapes_t)}, the other {_described(shapes_f)})",
            "bind the same shapes and dtypes on both paths, or make the test a static "
            "argument (static_argnums=), or run it on the NumPy backend",
        ) from err


def _described(shapes: Any) -> str:
    """What a lowered branch binds, in words: its values' structures, dtypes and shapes
    (``{'w': float64[3], 'b': float64[3]}``), in order."""
    def leaf(s: Any) -> Any:
        return _Text(f"{s.dtype}{list(s.shape)}") if hasattr(s, "dtype") else s

    values = shapes if isinstance(shapes, tuple) else (shapes,)
    return ", ".join(repr(_tree_map(leaf, plain(v))) for v in values if v is not None)


class _Text(str):
    def __repr__(self) -> str:
        return str(self)


def and_(*values: Any) -> Any:
    """``a and b and ...`` lowered: Python's result (the first false operand, else the
    last) on concrete values; on a traced scalar, ``jnp.where`` of its truth."""
    out = values[0]
    for v in values[1:]:
        out = (v if out else out) if not _traced(out) else \
            jnp.where(_scalar_predicate(out), v, out)
    return out


def or_(*values: Any) -> Any:
    """``a or b or ...`` lowered (the first true operand, else the last)."""
    out = values[0]
    for v in values[1:]:
        out = (out if out else v) if not _traced(out) else \
            jnp.where(_scalar_predicate(out), out, v)
    return out


def and_then(first: Any, *later: Callable[[], Any]) -> Any:
    """A user's ``a and b``, ``b`` a thunk: Python's short circuit on concrete values
    (``"k" in kw and kw["k"] > 0`` reads ``kw["k"]`` only where the key is there);
    ``jnp.where`` of a traced scalar's truth, ``b`` then evaluated."""
    out = first
    for thunk in later:
        if not _traced(out):
            if not out:
                return out
            out = thunk()
        else:
            out = jnp.where(_scalar_predicate(out), thunk(), out)
    return out


def or_else(first: Any, *later: Callable[[], Any]) -> Any:
    """A user's ``a or b``, ``b`` a thunk (see and_then)."""
    out = first
    for thunk in later:
        if not _traced(out):
            if out:
                return out
            out = thunk()
        else:
            out = jnp.where(_scalar_predicate(out), out, thunk())
    return out


def choose(test: Any, body: Callable[[], Any], orelse: Callable[[], Any]) -> Any:
    """A user's ``a if test else b``, the branches as thunks: Python's choice on a
    concrete ``test``; ``jnp.where`` of a traced scalar's truth over both."""
    if not _traced(test):
        return body() if test else orelse()
    pred = _scalar_predicate(test)
    try:  # (arrays, or tuples/lists/dicts of them of one structure: leaf by leaf)
        return jax.tree_util.tree_map(lambda u, v: jnp.where(pred, u, v), body(), orelse())
    except (TypeError, ValueError) as err:
        raise _error(f"a conditional expression on a value JAX traces chooses between "
                     f"values `jnp.where` cannot select between ({err})",
                     "choose between arrays of one structure, or make the test a static "
                     "argument (static_argnums=), or run it on the NumPy backend") from err


def not_(value: Any) -> Any:
    """``not a`` lowered."""
    return (not value) if not _traced(value) else jnp.logical_not(_scalar_predicate(value))


def contains(seq: Any, item: Any) -> Any:
    """``item in seq`` of a user's code: of an array, NumPy's ``ndarray.__contains__``,
    ``any(seq == item)`` (a traced truth value); of anything else, Python's ``in``."""
    if isinstance(seq, (jax.Array, np.ndarray)):
        return jnp.any(jnp.asarray(seq) == item)
    return item in seq


def _filled(branch: Callable, fill: dict[int, Any]) -> Callable:
    def filled(*operands: Any) -> Any:
        out = list(branch(*operands))
        for k, shapes in fill.items():
            out[k] = _tree_map(lambda s: jnp.zeros(s.shape, s.dtype), shapes)
        return tuple(out)

    filled.__name__ = getattr(branch, "__name__", "branch")
    return filled


# ---- for i in range(...) ------------------------------------------------------------


def _order(start: Any, stop: Any, step: Any, reverse: bool) -> range | None:
    if _any_traced((start, stop, step)):
        return None
    r = range(int(start), int(stop), int(step))
    return r[::-1] if reverse else r


def _broke(carry: tuple, going: int | None) -> bool:
    """Whether the loop has run its ``break`` (a concrete False ``going`` flag)."""
    if going is None:
        return False
    flag = carry[going]
    return not _traced(flag) and not flag


def fori_loop(start: Any, stop: Any, body: Callable, carry: tuple, step: Any = 1,
              reverse: bool = False, going: int | None = None) -> tuple:
    """``for i in range(start, stop, step):`` (``reversed(...)`` with ``reverse``)
    lowered: ``carry = body(i, carry)`` per iteration, through ``jax.lax.fori_loop``.

    With concrete bounds a body ``fori_loop`` cannot trace (a carried value that
    changes shape, a Python value it needs concrete) runs as the Python loop.
    ``going``: the position in the carry of the flag a rewritten ``break`` clears
    (:mod:`s2s.backends.breaks`); the body does nothing once it is False, and run the
    Python way the loop stops there."""
    order = _order(start, stop, step, reverse)
    if order is None:
        if reverse or not (isinstance(step, int) and step == 1):
            raise _error(
                "a `for` loop over a traced range with a step or reversed: "
                "jax.lax.fori_loop takes traced bounds only with step 1",
                "pass the bounds as static arguments (static_argnums=)",
            )
        try:  # (the dicts it carries keep their key order: jax_order.py)
            return plain(_lax.fori_loop(start, stop, in_order(body, 1), keyed(carry)))
        except TypeError:  # (an iteration orders a dict's keys anew: sorted)
            return _lax.fori_loop(start, stop, body, carry)
    if len(order):
        first, stride = order.start, order.step
        ordered = in_order(body, 1)
        try:
            return plain(_lax.fori_loop(0, len(order),
                                        lambda k, c: ordered(first + k * stride, c),
                                        keyed(carry), unroll=_unroll(len(order))))
        except Exception:  # noqa: BLE001 - the Python loop gives the real answer/error
            pass
    for i in order:
        carry = body(i, carry)
        if _broke(carry, going):
            break
    return carry


def scan_range(start: Any, stop: Any, body: Callable, carry: tuple, step: Any = 1,
               reverse: bool = False, push: Sequence[list] = (),
               pop: Sequence[list] = (), extend: Sequence[list] = (),
               going: int | None = None) -> tuple:
    """A ``for`` loop over a range that appends to tapes (``push``) or pops them
    (``pop``), lowered: ``carry, pushed = body(i, carry, popped)`` per iteration,
    through ``jax.lax.scan``.

    The pushed entries of all iterations go on each tape as one :class:`Stacked`;
    popping a :class:`Stacked` of this loop's length scans over it in reverse
    (last pushed first, as ``tape.pop()`` does).  Tapes holding entries one by one
    (their loop ran the Python way) are popped the Python way.  ``extend``: lists
    that are not tapes (code reads them as lists): they get one entry per iteration,
    after the tapes' entries in what ``body`` returns.

    ``going`` (a loop whose ``break`` was rewritten, see :func:`fori_loop`): under
    ``lax.scan`` every iteration pushes an entry (zeros once the loop has broken), so
    the tapes hold ``stop - start`` rows of which the first ``n_iter`` (the emitted
    count of iterations run) are real; the backward loop ``for _ in range(n_iter)``,
    its bound traced, scans all rows in reverse, masking those past ``n_iter``."""
    order = _order(start, stop, step, reverse)
    if order is None:
        done = _masked_pops(start, stop, step, reverse, body, carry, push, pop, extend)
        if done is not None:
            return done
        if not push and extend:
            raise _error(
                "a `for` loop over `range` of a value JAX traces appends to a list: "
                "under jax.jit the list's length would be known only when the compiled "
                "code runs (jax.jit refuses `range` of a traced value)",
                "make the trip count a static argument (static_argnums=/static_argnames=),"
                " or run it on the NumPy backend (s2s.jit(f, backend='numpy'))")
        raise _reverse_mode_error("a `for` loop whose range has traced bounds")
    n = len(order)
    stacked = [_top_stack(t, n) for t in pop]
    if n and all(s is not None for s in stacked):
        if going is not None:  # n_iter is traced after the scan: so are the rows
            push, extend = (*push, *extend), ()  # in use; stack them all
        done = _scan(order, body, carry, push, pop, stacked, extend)
        if done is not None:
            return done
    for i in order:
        popped = tuple(_pop_one(t) for t in pop)
        carry, pushed = body(i, carry, popped)
        for tape, entry in zip((*push, *extend), pushed):
            tape.append(entry)
        if _broke(carry, going):
            break
    for t in pop:
        if t and isinstance(t[-1], Stacked) and t[-1].remaining == 0:
            t.pop()
    return carry


def _scan(order: range, body: Callable, carry: tuple, push: Sequence[list],
          pop: Sequence[list], stacked: list, extend: Sequence[list]) -> tuple | None:
    n = len(order)
    first, stride = order.start, order.step
    xs, hows = zip(*(_rows(s[0]) for s in stacked)) if stacked else ((), ())
    popping = bool(pop)
    # popping: iteration j reads the entry pushed (n - 1 - j)th: scan in reverse
    ks = np.arange(n)
    pushed_how: list = []  # (the body is traced once: a static leaf is every row's)

    def step_fn(c: Any, x: Any) -> Any:
        k, popped = x
        j = (n - 1 - k) if popping else k
        # (a leaf every row shares, a Python bool or index, is its value: the body's
        # `if flag:` on it must see False, not a Same object, which is always true)
        popped = tuple(_tree_map(lambda a: a.value if isinstance(a, Same) else a,
                                 _rejoin(p, how)) for p, how in zip(popped, hows))
        c, pushed = body(first + j * stride, plain(c), popped)
        split = [_split_static(p) for p in pushed]
        pushed_how[:] = [how for _, how in split]
        return keyed(c), tuple(rows for rows, _ in split)

    try:  # (the dicts it carries keep their key order: jax_order.py)
        carry, ys = _lax.scan(step_fn, keyed(carry), (ks, tuple(xs)), reverse=popping,
                              unroll=_unroll(n))
    except Exception:  # noqa: BLE001 - the Python loop gives the real answer/error
        return None
    carry = plain(carry)
    if popping:
        ys = _tree_map(lambda a: a[::-1], ys)
    ys = tuple(_rejoin(rows, how) for rows, how in zip(ys, pushed_how))
    for t, (_, count) in zip(pop, stacked):
        del t[len(t) - count:]
    for tape, entries in zip(push, ys):
        tape.append(Stacked(entries, n))
    for items, entries in zip(extend, ys[len(push):]):
        items.extend(_row(entries, k) for k in range(n))
    return carry


def _masked_pops(start: Any, stop: Any, step: Any, reverse: bool, body: Callable,
                 carry: tuple, push: Sequence[list], pop: Sequence[list],
                 extend: Sequence[list]) -> tuple | None:
    """A backward loop ``for _ in range(start, stop)`` with a traced trip count that
    pops tapes whose top is one :class:`Stacked` of a scanned loop (that broke: the
    count of its iterations run is traced): a reverse scan over all the stacked rows,
    row ``k`` popped by iteration ``trip - 1 - k`` and skipped when ``k >= trip``.
    None where that does not apply (the caller refuses)."""
    if not pop or push or extend or reverse or _any_traced((start, step)) or step != 1:
        return None
    tops = [t[-1] if t and isinstance(t[-1], Stacked) else None for t in pop]
    if any(top is None for top in tops) or len({top.remaining for top in tops}) != 1:
        return None
    n = tops[0].remaining
    trip = jnp.asarray(stop) - start
    xs, hows = zip(*(_rows(top.values) for top in tops))

    def step_fn(c: Any, x: Any) -> Any:
        k, popped = x
        popped = tuple(_rejoin(p, how) for p, how in zip(popped, hows))
        new, _ = body(start + trip - 1 - k, c, popped)
        live = k < trip
        return _tree_map(lambda a, b: jnp.where(live, a, b), new, c), None

    try:
        carry, _ = _lax.scan(step_fn, carry, (jnp.arange(n), tuple(xs)), reverse=True,
                             unroll=_unroll(n))
    except Exception:  # noqa: BLE001 - refused by the caller, as before
        return None
    for t in pop:
        t.pop()
    return carry


def _top_stack(items: list, n: int) -> tuple[Any, int] | None:
    """The last ``n`` entries of ``items`` stacked (a scan's xs), and how many list
    items they take: one :class:`Stacked` of ``n``, or ``n`` entries of the same
    structure, shapes and dtypes.  None if neither."""
    if items and isinstance(items[-1], Stacked):
        top = items[-1]
        return (top.values, 1) if top.remaining == n else None
    if len(items) < n or not n:
        return None
    last = items[len(items) - n:]
    if any(isinstance(e, Stacked) for e in last):
        return None
    try:
        structure = jax.tree_util.tree_structure(last[0])
        leaves = [jax.tree_util.tree_leaves(e) for e in last]
        if any(jax.tree_util.tree_structure(e) != structure for e in last):
            return None
        shapes = {tuple((np.shape(a), jnp.result_type(a)) for a in ls) for ls in leaves}
        if len(shapes) != 1:
            return None
        stacked = [_stack([ls[k] for ls in leaves]) for k in range(len(leaves[0]))]
    except (TypeError, ValueError):
        return None
    return jax.tree_util.tree_unflatten(structure, stacked), n


def _stack(column: list) -> Any:
    """One leaf of ``n`` entries pushed the Python way: one :class:`Same` where every
    entry pushed the same Python scalar (an index stays static), else stacked."""
    first = column[0]
    if isinstance(first, _STATIC) and not isinstance(first, np.ndarray) and all(
            type(c) is type(first) and c == first for c in column):
        return Same(first)
    return jnp.stack(column)


def _pop_one(tape: list) -> Any:
    top = tape[-1]
    if not isinstance(top, Stacked):
        return tape.pop()
    top.remaining -= 1
    k = top.remaining
    entry = _row(top.values, k)
    if k == 0:
        tape.pop()
    return entry


# ---- while -------------------------------------------------------------------------


def while_loop(test: Callable, body: Callable, carry: tuple,
               push: Sequence[list] = (), extend: Sequence[list] = (),
               going: int | None = None) -> tuple:
    """``while <test>:`` lowered.  ``test(carry)`` is the condition; ``body(carry)``
    returns the new carry (and, with ``push``, the entries it appended).  ``going``:
    the position in the carry of the flag a rewritten ``break`` clears; the loop runs
    while it is True and the test holds.

    Iterations whose test is concrete run the Python way; from the first traced test
    the loop is ``jax.lax.while_loop``.  A loop that appends to a tape (the forward
    pass of a gradient) cannot continue on a traced test: reverse mode through it
    raises, as JAX's does."""
    if going is not None:
        test = _and_going(test, going)
    while True:
        t = test(carry)
        if _traced(t):
            break
        if not t:
            return carry
        if push or extend:
            carry, pushed = body(carry)
            for tape, entry in zip((*push, *extend), pushed):
                tape.append(entry)
        else:
            carry = body(carry)
    if push:
        raise _reverse_mode_error("a `while` loop whose test is traced")
    if extend:
        raise _error(
            "a `while` loop on a value JAX traces appends to a list: under jax.jit the "
            "list's length would be known only when the compiled code runs",
            "run it on the NumPy backend, or bound the loop by a static argument",
        )
    try:  # (the dicts it carries keep their key order: jax_order.py)
        return plain(_lax.while_loop(lambda c: _scalar_predicate(test(plain(c))),
                                     in_order(body), keyed(carry)))
    except TypeError:  # (an iteration orders a dict's keys anew: sorted, as JAX's)
        pass
    try:
        return _lax.while_loop(lambda c: _scalar_predicate(test(c)), body, carry)
    except TypeError as err:
        if "body_fun" not in str(err) and "carry" not in str(err):
            raise
        raise _error(
            "Python `while` on a value JAX traces, lowered to jax.lax.while_loop: an "
            f"iteration changes the structure, shape or dtype of a carried value ({err})",
            "keep the values the loop rebinds the same shape and dtype, or run it on the "
            "NumPy backend",
        ) from err


def _and_going(test: Callable, going: int) -> Callable:
    """``test`` that is also False once the loop's ``going`` flag is."""
    def both(carry: tuple) -> Any:
        flag = carry[going]
        if not _traced(flag):
            return test(carry) if flag else False
        return jnp.logical_and(flag, _scalar_predicate(test(carry)))

    return both
