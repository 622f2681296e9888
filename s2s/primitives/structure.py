"""Containers built in the function body: tuples, lists and dicts of values.

Their derivatives are structural: the cotangent of a tuple is a tuple of cotangents.
Reverse mode handles them through the static structure of each value (see
``s2s.reverse``), so they carry no numeric rule of their own.
"""

import builtins
import operator

import numpy as np

from ..ir.nodes import Let
from ..ir.spelling import atom_text
from ..runtime import unbroadcast
from .batching import Batch, NoBatchRule, batch_rule, only_first_batched
from .registry import REFUSED, defjvp, deflinear, defprim, defvjp, names_each_once


def _tuple_spelling(args, params):
    if len(args) == 1:
        return f"({args[0]},)"
    return "(" + ", ".join(args) + ")"


def _dict_spelling(args, params):
    keys = params["keys"]
    return "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(keys, args)) + "}"


defprim(
    "make_tuple", None, "(*items)", diff=("items",), family="structure",
    spelling=_tuple_spelling,
)
defprim(
    "make_list", None, "(*items)", diff=("items",), family="structure",
    spelling=lambda args, params: "[" + ", ".join(args) + "]",
)
defprim(
    "make_dict", None, "(*values, keys)", diff=("values",), family="structure",
    spelling=_dict_spelling,
)

# Python's boolean operators on scalars: no derivative flows.
defprim(
    "not_", operator.not_, "(x)", family="comparison", nondiff=True,
    spelling=lambda args, params: f"not {args[0]}",
)
for _name, _op in (("and_", "and"), ("or_", "or"), ("is_", "is"), ("is_not", "is not")):
    defprim(
        _name, None, "(x1, x2)", family="comparison", nondiff=True,
        spelling=lambda args, params, _op=_op: f"{args[0]} {_op} {args[1]}",
    )

# `x in y` (`not in`) for a `y` whose structure is known per call (an argument, an
# array): the IR pass that unrolls container loops (ir/unroll.py) makes it a constant
# (a dict's keys), the `==`s of a tuple's items, or NumPy's `np.any(y == x)` for an
# array; no transform sees it.
defprim(
    "contains", None, "(container, item, negated=False)", family="comparison",
    nondiff=True, spelling=lambda args, params: f"{args[1]} "
    f"{'not in' if params.get('negated') else 'in'} {args[0]}",
    note="`x in y`, decided per call before any transform (ir/unroll.py)",
)

# `tuple(p)`, `list(p.keys())`, `sorted(p)` of a dict whose keys are known per call (an
# argument): the IR pass that unrolls container loops (ir/unroll.py) makes it the tuple
# or list literal of this call's keys (`("c", "a")`); no transform sees it.
defprim(
    "dict_keys", None, "(container, copy, order=None, reverse=False)", family="structure",
    nondiff=True, spelling=lambda args, params: f"{params['copy']}({args[0]})",
    note="a dict's keys, made a literal per call before any transform (ir/unroll.py)",
    batch=REFUSED,  # (resolved per call before any transform: vmap never sees it)
)

# `{**p, "w": w}`, `p | q`, `dict(p, w=w)` of dicts whose keys are known per call: the
# IR pass that unrolls container loops (ir/unroll.py) makes it the dict literal of this
# call's keys (a key in several keeps its first position and its last value, as
# Python's); no transform sees it.
defprim(
    "dict_merge", None, "(*dicts)", family="structure", nondiff=True,
    spelling=lambda args, params: "{" + ", ".join(f"**{a}" for a in args) + "}",
    note="dicts merged, made a literal per call before any transform (ir/unroll.py)",
    batch=REFUSED,  # (resolved per call before any transform: vmap never sees it)
)

# `out[k] = v` in a loop over a dict's keys (`for k, v in p.items()`): the dict with
# the key set, made a literal per call when the loop is unrolled (ir/unroll.py).
defprim(
    "dict_set", None, "(d, key, value)", family="structure", nondiff=True,
    spelling=lambda args, params: f"{{**{args[0]}, {args[1]}: {args[2]}}}",
    note="a dict written by a loop's key, made a literal per call (ir/unroll.py)",
    batch=REFUSED,  # (resolved per call before any transform: vmap never sees it)
)

# `k.startswith("w")` (`endswith`) of a dict's key that a loop over its keys binds:
# decided per call when the loop is unrolled (ir/unroll.py); no transform sees it.
defprim(
    "str_test", None, "(s, *args, method)", family="comparison", nondiff=True,
    spelling=lambda args, params: f"{args[0]}.{params['method']}({', '.join(args[1:])})",
    note="a string test of a dict's key, decided per call (ir/unroll.py)",
)

# `[a, b] * x` where `x` is an argument: Python's repetition if the call passes an int,
# NumPy's product if an array.  transforms/list_operands.py decides it per transform: a
# differentiated or batched argument (and what is computed from one) is an array, so
# it is `np.asarray([a, b]) * x`; anything else is refused.  No transform sees it.
defprim(
    "list_times", None, "(x1, x2, list)", family="structure", nondiff=True,
    spelling=lambda args, params: f"{args[0]} * {args[1]}",
    note="a list times an argument, decided per transform (transforms/list_operands.py)",
    batch=REFUSED,  # (resolved per call before any transform: vmap never sees it)
)


def repeated_by_count(kind: type) -> tuple[str, str]:
    """What and instead of a list or tuple of values times a run-time int."""
    return (f"a {kind.__name__} of values repeated a number of times known only when the "
            "function runs (or multiplied by an argument that may be a Python int: "
            "which one, only the call says) is not supported",
            "build the list in a loop (`out = []`, then `for _ in range(n): "
            "out.append(x)`), or multiply an array (`np.asarray([...]) * n`)")


# the operators Python's tuples and lists do not have, as its TypeError spells them
OPERATOR_SYMBOLS = {"subtract": "-", "divide": "/", "floor_divide": "//", "remainder": "%",
                    "power": "** or pow()", "matmul": "@", "negative": "unary -"}


def python_says(prim: str, types: list) -> str | None:
    """Python's TypeError for ``prim`` of operands of ``types`` (a tuple or list among
    them; None for a value known only when the code runs), or None where an operand
    may be an array (``ys / x``: NumPy converts the list)."""
    if any(t is None or issubclass(t, (np.ndarray, np.generic)) for t in types):
        return None
    if prim == "negative":
        return f"bad operand type for unary -: '{types[0].__name__}', as Python says"
    return (f"unsupported operand type(s) for {OPERATOR_SYMBOLS[prim]}: "
            f"'{types[0].__name__}' and '{types[1].__name__}', as Python says")


def operator_instead(prim: str) -> str:
    symbol = OPERATOR_SYMBOLS[prim].split()[-1]
    if prim == "negative":
        return "convert the list to an array first (`-np.asarray(xs)`)"
    return (f"convert the list to an array first (`np.asarray(xs) {symbol} 2.0`), or "
            f"call NumPy's function, which converts it (`np.{prim}(xs, 2.0)`)")


# NumPy's logical functions and the bitwise operators on boolean (or integer) arrays:
# masks, no derivative flows.  `~m`, `a | b`, `a & b`, `a ^ b` are spelled as written.
for _name, _op in (("bitwise_and", "&"), ("bitwise_or", "|"), ("bitwise_xor", "^")):
    defprim(
        _name, getattr(np, _name), "(x1, x2)", family="comparison", nondiff=True,
        spelling=lambda args, params, _op=_op: f"{args[0]} {_op} {args[1]}",
        aliases=(getattr(operator, {"&": "and_", "|": "or_", "^": "xor"}[_op]),),
        note="boolean or integer-valued: no derivative flows",
    )
defprim(
    "invert", np.invert, "(x)", family="comparison", nondiff=True,
    spelling=lambda args, params: f"~{args[0]}", aliases=(np.bitwise_not,),
    note="boolean or integer-valued: no derivative flows",
)
for _name in ("logical_and", "logical_or", "logical_xor"):
    defprim(_name, getattr(np, _name), "(x1, x2)", family="comparison", nondiff=True,
            note="boolean-valued: no derivative flows")
defprim("logical_not", np.logical_not, "(x)", family="comparison", nondiff=True,
        note="boolean-valued: no derivative flows")

# Python code over indexes and shapes (a comprehension, slice(...), tuple(...)), kept
# as written with its operands substituted: no derivative; the transforms refuse it
# where an operand carries one (see normalize.python_expression).
def _template_spelling(args, params):
    template, keys = params["template"]
    for key, text in zip(keys, args):
        template = template.replace(key, text)
    return template


defprim("pyexpr", None, "(*operands, template, shape_only=(), values=False)", diff=(),
        family="structure",
        nondiff=True, spelling=_template_spelling,
        note="Python code over indexes and shapes, kept as written")


@batch_rule("pyexpr")
def pyexpr_rule(b: Batch, s: Let) -> str:
    if isinstance(s.params.get("values"), str):  # (`math.isclose(t, 0.3)`: math_calls.py)
        raise NoBatchRule(f"`{s.params['values']}` of values with a batch axis (a `math` "
                          "function takes one Python number; JAX's vmap refuses it too)",
                          "use the NumPy function (np.isclose, ...), or give it values "
                          "that are the same for every example (`in_axes=None`)")
    if s.params.get("values"):  # (a kept `try`: frontend/kept_try.py)
        raise NoBatchRule("a `try` over values with a batch axis (an exception is "
                          "raised or not for the whole batch)", "give it values that are "
                          "the same for every example (`in_axes=None`)")
    raise NoBatchRule("a comprehension (or slice(), tuple()) over values with a batch "
                      "axis", "write it with array operations")


# A statement run for its effect alone (``assert``, ``if ...: raise``, ``print(...)``,
# ``logging.info(...)``): kept as written with its operands substituted, run once in
# the forward computation with real values; it binds nothing a later statement reads
# and has no derivative.  ``kind`` is "check" (an assert or a raise) or "call".  The
# transforms place it themselves (replay.py; vmap checks each example: vmap.py).
defprim("kept", None, "(*operands, template, kind)", diff=(), family="structure",
        nondiff=True, spelling=_template_spelling,
        note="a statement run for its effect (assert, raise, print), kept as written")


@batch_rule("kept")
def kept_rule(b: Batch, s: Let) -> str:
    raise NoBatchRule("a kept statement (assert, raise, print) batched by a rule",
                      "report this: vmap places kept statements itself")


# A random draw (``np.random.normal(size=n)``, ``rng.normal(...)``, the generator
# ``np.random.default_rng(seed)`` itself): kept as written, run once per call in the
# forward computation, its value a constant to every derivative.  ``func`` is the
# callee's text, ``parts`` its arguments' (keyword or None, text over the operands'
# keys), ``keys`` the operands' keys (see frontend/draws.py; vmap: transforms/kept.py).
def _draw_spelling(args, params):
    texts = [text if kw is None else f"{kw}={text}" for kw, text in params["parts"]]
    return _template_spelling(args, {"template": (
        f"{params['func']}({', '.join(texts)})", params["keys"])})


defprim("draw", None, "(*operands, func, parts, keys, method, maker)", diff=(),
        family="structure", nondiff=True, spelling=_draw_spelling,
        note="a random draw, run once per call, a constant to derivatives")


@batch_rule("draw")
def draw_rule(b: Batch, s: Let) -> str:
    raise NoBatchRule("a random draw batched by a rule",
                      "report this: vmap places draws itself")


def call_text(args: list[str], params: dict) -> str:
    """A user function's call as written; an argument it writes into (``y += v``,
    ``params["copies"]``: frontend/param_writes.py) given as ``own_copy(a)``."""
    copies = params.get("copies", ())
    args = [f"own_copy({a})" if i in copies else a for i, a in enumerate(args)]
    return f"{params['spelling']}({', '.join(args)})"


# A call to a user function: transformed recursively into its own emitted function.
defprim("call", None, "(*args)", diff=("args",), family="structure", spelling=call_text)

# Python's range: the iteration space of a loop, no derivative.
defprim(
    "range", builtins.range, "(*bounds)", diff=(), family="comparison", nondiff=True,
    spelling=lambda args, params: f"range({', '.join(args)})",
)


# ---- writing into an array: ``y[index] = value`` ----------------------------------
# In the IR a write makes a new version of ``y``; emitted code writes in place (into
# an array the function allocated itself), and reverse mode puts the overwritten
# elements back before it differentiates what came before the write.


def _setitem_spelling(args, params):
    return f"{args[0]}[{params['index']}] = {args[1]}"


defprim(
    "setitem", None, "(a, value, index)", diff=("a", "value"), family="indexing",
    spelling=_setitem_spelling,
    note="y[i] = v on an array the function allocated; the overwritten elements "
    "get no cotangent, v gets the written elements'",
)


@defvjp("setitem")
def setitem_vjp(g, ans, a, value, index):
    a_bar = np.array(g)
    a_bar[index] = 0
    if names_each_once(index):  # (a basic index, or one boolean mask)
        return a_bar, unbroadcast(g[index], value)
    # an integer-array index may name an element more than once: NumPy keeps the
    # last of those writes, so only it gets the element's cotangent.  Which one is
    # last is found by the same assignment, of positions
    picked = g[index]
    order = np.reshape(np.arange(np.size(picked)), np.shape(picked))
    kept = np.full(np.shape(g), -1)
    kept[index] = order
    written = np.where(kept[index] == order, picked, 0)
    return a_bar, unbroadcast(written, value)


@defjvp("setitem", "a")
def setitem_jvp_a(a_dot, ans, a, value, index):
    out_dot = np.array(a_dot)
    out_dot[index] = 0
    return out_dot


@defjvp("setitem", "value")
def setitem_jvp_value(value_dot, ans, a, value, index):
    out_dot = np.zeros_like(ans)
    out_dot[index] = value_dot
    return out_dot


# ``ys.append(v)`` on a list the function built: a new version of the list in the IR,
# in place in emitted code; its cotangent list gives ``v`` its last element back.
defprim(
    "append", None, "(seq, item)", family="structure",
    spelling=lambda args, params: f"{args[0]}.append({args[1]})",
)

# ``for i in reversed(range(...))``: the loop's range walked from its end.  Only a
# loop header may use it (the normalizer refuses it anywhere else).
defprim(
    "reversed", builtins.reversed, "(steps)", diff=(), family="comparison", nondiff=True,
    spelling=lambda args, params: f"reversed({args[0]})",
)

# ``v = ys.pop()`` on a list the function built: ``v = ys[-1]`` (a getitem), then this
# new version of the list without its last element, spelled ``ys.pop()`` in place.
# Forward mode pops the tangent list alongside; reverse mode refuses it for now.
defprim(
    "pop", None, "(seq)", family="structure",
    spelling=lambda args, params: f"{args[0]}.pop()",
)

# ``list(x)``: a new list of ``x``'s elements (the rows of an array, or the items of
# a tuple).  Reverse mode emits it for the cotangent of a list grown in a loop.
defprim(
    "list", builtins.list, "(iterable)", family="structure",
    spelling=lambda args, params: f"list({args[0]})",
    note="a list of an array's rows (of a tuple's items: structural); append and "
    "pop may change it",
)


@defvjp("list")
def list_vjp(g, ans, iterable):
    if len(g):
        return np.reshape(np.array(g), np.shape(iterable))
    return np.zeros_like(iterable)  # (no rows: no items to stack)


deflinear("list", "iterable")


@batch_rule("list")
def list_rule(b: Batch, s: Let) -> str:
    """``list(x)`` walks an example's first axis: the batched array's second."""
    only_first_batched(b, s)
    return f"list(np.moveaxis({atom_text(s.args[0])}, 1, 0))"
