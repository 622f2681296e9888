"""NumPy's remaining functions: ``np.partition`` (and ``np.argpartition``),
``np.frexp``, ``np.gradient`` and ``np.insert`` (and ``gradient_bar`` and
``insert_bars``, the runtime helpers their VJPs call).

* ``np.partition(a, kth, axis)`` returns ``a``'s elements rearranged: its cotangent
  follows the permutation ``np.argpartition`` gives for the same arguments (NumPy's
  partition and argpartition run the same selection, so the orders agree), as JAX's
  partition derives through its sort and take.
* ``np.frexp(x)`` is ``(mantissa, exponent)`` with ``x = mantissa * 2 ** exponent``:
  the mantissa's derivative is ``2 ** -exponent`` (JAX's convention; 1 at x = 0) and
  the integer exponent carries none.
* ``np.gradient(f, h, axis=k)`` is linear in ``f``: differences along one axis with a
  spacing (a scalar, or coordinates); its VJP is the stencil's transpose
  (``gradient_bar``), whose own VJP is ``np.gradient`` again.  ``axis=(0, 1)`` (and a
  spacing per axis) is one call per axis, as the tuple NumPy returns.
* ``np.insert(arr, obj, values, axis)`` is linear in ``arr`` and ``values`` together:
  its VJP sends each element of the cotangent back where it came from
  (``insert_bars``, whose own VJP is ``np.insert`` of the two cotangents).  vmap
  inserts with the batch axis moved last, where NumPy's reshaping of ``values`` (a
  scalar ``obj`` moves its first axis) leaves it alone.
"""

import numpy as np

from .. import runtime
from ..ir.nodes import Const, Let
from ..ir.spelling import atom_text
from ..runtime import gradient_bar, insert_bars
from .batching import Batch, NoBatchRule, _with_batch, args_text, batch_rule, shifted, static
from .registry import (
    Refused,
    Result,
    call_spelling,
    defform,
    defjvp,
    deflinear,
    defprim,
    defvjp,
)

# ---- np.partition --------------------------------------------------------------------

defprim(
    "partition", np.partition, "(a, kth, axis=-1, kind='introselect', order=None)",
    family="indexing", diff=("a",),
    note="the cotangent follows np.argpartition's permutation for the same arguments "
    "(the order np.partition puts the elements in), as JAX's through its sort and take",
)


@defvjp("partition")
def partition_vjp(g, ans, a, kth, axis=-1, kind="introselect", order=None):
    if axis is None:  # partitioned flattened
        taken = np.argpartition(a, kth, axis=None)
        return np.reshape(g[np.argsort(taken)], np.shape(a))
    taken = np.argpartition(a, kth, axis=axis)
    return np.take_along_axis(g, np.argsort(taken, axis=axis), axis=axis)


@defjvp("partition", "a")
def partition_jvp(a_dot, ans, a, kth, axis=-1, kind="introselect", order=None):
    if axis is None:
        return np.ravel(a_dot)[np.argpartition(a, kth, axis=None)]
    return np.take_along_axis(a_dot, np.argpartition(a, kth, axis=axis), axis=axis)


defprim("argpartition", np.argpartition,
        "(a, kth, axis=-1, kind='introselect', order=None)", family="indexing",
        nondiff=True, note="integer positions: no derivative flows")


@batch_rule("partition", "argpartition")
def partition_rule(b: Batch, s: Let) -> str:
    """``axis`` past the batch axis; ``axis=None`` partitions each example flattened."""
    a, kth = s.args
    if b.batched(kth):
        raise NoBatchRule("np.partition with a kth that differs between examples")
    axis = static(s, "axis", -1)
    if axis is None:
        flat = f"np.reshape({atom_text(a)}, ({b.use_batch_size()}, -1))"
        return args_text(s, [flat, atom_text(kth)], {"axis": "1"})
    return args_text(s, [atom_text(a), atom_text(kth)], {"axis": shifted(axis, b.rank(a))})


# ---- np.frexp ------------------------------------------------------------------------

defprim(
    "frexp", np.frexp, "(x)", family="elementwise", results=2,
    note="(mantissa, exponent): the mantissa's derivative is 2 ** -exponent (1 at 0), "
    "the integer exponent carries none, as JAX",
)


@defvjp("frexp")
def frexp_vjp(g, ans, x):
    return np.ldexp(g[0], -ans[1])


@defjvp("frexp", "x")
def frexp_jvp(x_dot, ans, x):
    return np.ldexp(x_dot, -ans[1]), np.zeros_like(ans[1])


# ---- np.gradient, along one axis -------------------------------------------------------


def _one_axis(args, kwargs):
    """``axis=`` an int (or a 1-tuple of one), or left out for a 1-D ``f``; the spacing
    one scalar (``np.gradient`` of several axes returns a list: one call per axis)."""
    axis = kwargs.get("axis")
    if isinstance(axis, Const) and isinstance(axis.value, tuple) and len(axis.value) == 1:
        kwargs["axis"] = Const(axis.value[0], repr(axis.value[0]))
        axis = kwargs["axis"]
    if axis is not None and not (isinstance(axis, Const) and (
            axis.value is None or type(axis.value) is int)):
        raise Refused("`axis=` must be one int written in the call",
                      "call np.gradient once per axis: np.gradient(f, h, axis=0)")
    if len(args) > 2 and axis is not None and axis.value is not None:
        raise Refused("several spacings for one axis",
                      "give axis= the axes, one spacing each: np.gradient(f, hx, hy, "
                      "axis=(0, 1))")
    edge = kwargs.get("edge_order")
    if edge is not None and not (isinstance(edge, Const) and edge.value in (1, 2)):
        raise Refused("`edge_order=` must be 1 or 2, written in the call",
                      "pass edge_order=1 or edge_order=2")
    return args, kwargs


def _several_axes(args, kwargs, items):
    """``np.gradient(f, *spacings, axis=(0, 1))``: one gradient per axis, each with its
    spacing (one for all, or one per axis: a scalar or coordinates), as a tuple."""
    axis = kwargs.get("axis")
    if not (isinstance(axis, Const) and isinstance(axis.value, (tuple, list))
            and len(axis.value) > 1):
        return [("gradient", args, kwargs)]  # (one axis: the primitive's own checks)
    axes = axis.value
    if not all(type(k) is int for k in axes):
        raise Refused("`axis=` must be ints written in the call",
                      "pass axis=(0, 1)")
    spacings = list(args[1:])
    if len(spacings) not in (0, 1, len(axes)):
        raise Refused(f"{len(spacings)} spacings for {len(axes)} axes",
                      "give one spacing for all the axes, or one per axis")
    rest = {k: v for k, v in kwargs.items() if k != "axis"}
    steps = []
    for k, ax in enumerate(axes):
        h = spacings[k if len(spacings) > 1 else 0:][:1]
        steps.append(("gradient", [args[0], *h], {**rest, "axis": Const(ax, repr(ax))}))
    return steps + [("make_tuple", [Result(k) for k in range(len(axes))], {})]


defform(np.gradient, "gradient", _several_axes,
        "axis= a tuple of several axes is one np.gradient per axis, as a tuple")


def _gradient_spelling(args: list[str], params: dict[str, str]) -> str:
    """``np.gradient(f, ...)``; axis= left out, its per-axis results (NumPy's tuple, for
    an ``f`` of several axes) as one array, stacked: what the code reads of it (``g[0]``,
    ``gx, gy = g``, ``np.sum(g)``) is the same, and the rules that read it as an
    operand (``2 * x``) see an array, never a tuple."""
    call = call_spelling("np.gradient")(args, params)
    return f"np.asarray({call})" if params.get("axis", "None") == "None" else call


defprim(
    "gradient", np.gradient, "(f, *varargs, axis=None, edge_order=1)", family="linalg",
    diff=("f",), canonical=_one_axis, spelling=_gradient_spelling,
    underived={"varargs": "the spacing's derivative has no rule in s2s"},
    note="axis= an int (one spacing: a scalar or coordinates), a tuple of several axes "
    "(one call per axis), or left out (every axis: f's gradients, one per axis, "
    "their cotangents stacked): linear in f, the VJP the transposed stencil "
    "(gradient_bar); edge_order 1 or 2",
)


@defvjp("gradient")
def gradient_vjp(g, ans, f, *varargs, axis=None, edge_order=1):
    return gradient_bar(g, f, *varargs, axis=axis, edge_order=edge_order)


@defjvp("gradient", "f")
def gradient_jvp(f_dot, ans, f, *varargs, axis=None, edge_order=1):
    # (axis=None of several axes: the per-axis tangents stacked, as the value is)
    return np.asarray(np.gradient(f_dot, *varargs, axis=axis, edge_order=edge_order))


defprim(
    "gradient_bar", runtime.gradient_bar, "(cot, f, *varargs, axis=None, edge_order=1)",
    family="runtime", spelling=call_spelling("gradient_bar"), diff=("cot",),
    note="np.gradient's VJP (f gives only a shape): linear in cot, its transpose "
    "np.gradient",
)


@defvjp("gradient_bar")
def gradient_bar_vjp(g, ans, cot, f, *varargs, axis=None, edge_order=1):
    return np.asarray(np.gradient(g, *varargs, axis=axis, edge_order=edge_order))


@defjvp("gradient_bar", "cot")
def gradient_bar_jvp(cot_dot, ans, cot, f, *varargs, axis=None, edge_order=1):
    return gradient_bar(cot_dot, f, *varargs, axis=axis, edge_order=edge_order)


@batch_rule("gradient", "gradient_bar")
def gradient_rule(b: Batch, s: Let) -> str:
    """The one axis past the batch axis (``axis=None``: a 1-D example's axis 1); the
    spacing the same for every example."""
    first = 2 if s.prim == "gradient_bar" else 1
    if any(b.batched(h) for h in s.args[first:]):
        raise NoBatchRule(f"`{s.prim}` with a spacing that differs between examples")
    a = s.args[0]
    axis = static(s, "axis", None)
    texts = [atom_text(x) for x in s.args]  # (gradient_bar's f gives only a dtype)
    if axis is None and s.prim == "gradient" and b.rank(a) > 1:
        # every axis of an example: one gradient per axis past the batch axis, stacked
        # after it (the example's per-axis results, each read as g[k])
        axes = tuple(range(1, b.rank(a) + 1))
        return f"np.stack({args_text(s, texts, {'axis': repr(axes)})}, axis=1)"
    if axis is None and s.prim == "gradient_bar" and b.rank(s.args[1]) > 1:
        # (cot: the per-axis cotangents stacked after the batch axis, or the tuple of
        # them a caller passed: gradient_part reads either)
        if not b.batched(a):
            raise NoBatchRule("np.gradient's transpose batched only in f")
        n, (cot, f, *spacings) = b.rank(s.args[1]), texts
        return " + ".join(
            args_text(s, [f"gradient_part({cot}, {k})", f, *spacings[k if len(spacings) > 1 else 0:][:1]],
                      {"axis": str(k + 1)}) for k in range(n))
    if axis is None and b.rank(a) != 1:
        raise NoBatchRule("np.gradient of an example of more than one axis without axis=",
                          "give axis=")
    return args_text(s, texts, {"axis": shifted(0 if axis is None else axis, b.rank(a))})


# ---- np.insert -----------------------------------------------------------------------

defprim(
    "insert", np.insert, "(arr, obj, values, axis=None)", family="shape",
    diff=("arr", "values"),
    note="linear in arr and values: each cotangent element goes back where it came from "
    "(insert_bars; a value broadcast to several places gets their sum)",
)


@defvjp("insert")
def insert_vjp(g, ans, arr, obj, values, axis=None):
    bars = insert_bars(g, arr, obj, values, axis=axis)
    return bars[0], bars[1]


@defjvp("insert", "arr")
def insert_jvp_arr(arr_dot, ans, arr, obj, values, axis=None):
    return np.insert(arr_dot, obj, np.zeros_like(values), axis=axis)


@defjvp("insert", "values")
def insert_jvp_values(values_dot, ans, arr, obj, values, axis=None):
    return np.insert(np.zeros_like(arr), obj, values_dot, axis=axis)


def _batch_last(b: Batch, s: Let, arr, values) -> tuple[str, str, str]:
    """``arr`` with the batch axis last (each example flattened for ``axis=None``),
    ``values`` likewise (a trailing length-1 axis where unbatched), and the axis."""
    if b.batched(s.args[1]):
        raise NoBatchRule("np.insert with positions that differ between examples")
    axis = static(s, "axis", None)
    a = _with_batch(b, arr)
    if axis is None:
        a = f"np.reshape({a}, ({b.use_batch_size()}, -1))"
    v = (f"np.moveaxis({atom_text(values)}, 0, -1)" if b.batched(values)
         else f"np.expand_dims({atom_text(values)}, -1)")
    return f"np.moveaxis({a}, 0, -1)", v, "0" if axis is None else str(axis % b.rank(arr))


@batch_rule("insert")
def insert_rule(b: Batch, s: Let) -> str:
    """Each example's insert, the batch axis last: NumPy gives ``values`` the array's
    rank by leading axes and (for a scalar ``obj``) moves its first axis, neither of
    which touches a last axis."""
    arr, obj, values = s.args
    a, v, axis = _batch_last(b, s, arr, values)
    return f"np.moveaxis(np.insert({a}, {atom_text(obj)}, {v}, axis={axis}), -1, 0)"


defprim(
    "insert_bars", runtime.insert_bars,
    "(cot, arr, obj, values, axis=None, batched=False)", family="runtime",
    spelling=call_spelling("insert_bars"), diff=("cot",), results=2,
    note="np.insert's VJP (arr and values give only shapes): linear in cot, its "
    "transpose np.insert of the two cotangents",
)


@defvjp("insert_bars")
def insert_bars_vjp(g, ans, cot, arr, obj, values, axis=None, batched=False):
    if not batched:
        return np.insert(g[0], obj, g[1], axis=axis)
    if axis is None:
        flat = np.reshape(g[0], (np.shape(g[0])[0], -1))
        return np.moveaxis(np.insert(np.moveaxis(flat, 0, -1), obj,
                                     np.moveaxis(g[1], 0, -1), axis=0), -1, 0)
    return np.moveaxis(np.insert(np.moveaxis(g[0], 0, -1), obj, np.moveaxis(g[1], 0, -1),
                                 axis=axis), -1, 0)


deflinear("insert_bars", "cot", keywords=True)


@batch_rule("insert_bars")
def insert_bars_rule(b: Batch, s: Let) -> str:
    """Each example's cotangents (``batched=True``: the helper inserts per example)."""
    cot, arr, obj, values = s.args
    if static(s, "batched", False):
        raise NoBatchRule("vmap of vmap of np.insert's derivative")
    if b.batched(obj):
        raise NoBatchRule("np.insert with positions that differ between examples")
    axis = static(s, "axis", None)
    where = "None" if axis is None else str(axis % b.rank(arr))
    return (f"insert_bars({_with_batch(b, cot)}, {_with_batch(b, arr)}, {atom_text(obj)}, "
            f"{_with_batch(b, values)}, axis={where}, batched=True)")


# ---- np.block's blocks, for lists nested three deep or more -------------------------------

defprim("atleast_nd", runtime.atleast_nd, "(a, ndim)", family="runtime",
        spelling=call_spelling("atleast_nd"), diff=("a",),
        note="a with axes of length 1 in front up to ndim (np.block's blocks): a reshape")


@defvjp("atleast_nd")
def atleast_nd_vjp(g, ans, a, ndim):
    return np.reshape(g, np.shape(a))


deflinear("atleast_nd", "a")


@batch_rule("atleast_nd")
def atleast_nd_rule(b: Batch, s: Let) -> str:
    """Each example's new axes go after the batch axis."""
    a = s.args[0]
    ndim = static(s, "ndim", None) if len(s.args) < 2 else s.args[1].value
    missing = max(ndim - b.rank(a), 0)
    if not missing:
        return _with_batch(b, a)
    axes = ", ".join(str(k) for k in range(1, 1 + missing))
    return f"np.expand_dims({_with_batch(b, a)}, ({axes},))"
