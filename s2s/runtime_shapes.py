"""The helpers ``s2s.eval_shape``'s emitted code calls: shape rules over tuples of
ints, and stand-ins that let NumPy itself answer a dtype question on a few elements.

Part of the runtime ABI (:mod:`s2s.runtime` re-exports every name here).  Nothing
here allocates an array of the shapes it reasons about: shapes are tuples, dtypes
come from NumPy evaluating the operation on 0-d or size-1 stand-ins (under NumPy 2's
promotion rules a result's dtype does not depend on the operands' sizes), and a
``view_stand_in`` is a zero-strided view of one element, whatever its shape.
And ``OtherPath``, which vmap's code made for one path's ranks raises on the other;
and ``python_float``, which gives ``math.log(v)``'s result math's dtype;
``own_copy``, an array a callee writes into, copied where emitted code calls it;
``list_item``, which gives a list's item read at a run-time index Python's type;
and ``in_place``, which gives ``y += v`` of an array ``y`` its dtype.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

__all__ = ["ShapeDtypeStruct", "stand_in_0d", "stand_in_1", "view_stand_in", "small_stand_in", "struct_of",
           "matmul_shape", "dot_shape", "tensordot_shape", "einsum_shape",
           "reduced_shape", "reshaped_shape", "concatenated_shape", "stacked_shape", "indexed_shape",
           "sized_shape", "arange_shape", "operand_shape",
           "kron_shape", "inner_shape", "diffed_shape", "tiled_shape", "repeated_shape",
           "joined_dtype", "spaced_shape", "array_shape", "einsum_batched", "python_float",
           "own_copy", "list_item", "in_place"]

# the most elements the operands of a primitive without a shape rule may have: it is
# evaluated on stand-ins of those shapes (its result may be larger, so this stays small)
SMALL = 1024


class ShapeDtypeStruct:
    """An array's shape and dtype, as ``jax.ShapeDtypeStruct`` (a pytree leaf)."""

    __slots__ = ("shape", "dtype", "weak_type")

    def __init__(self, shape: Any, dtype: Any, weak_type: bool = False) -> None:
        self.shape = tuple(operator.index(d) for d in shape)
        self.dtype = np.dtype(dtype)
        # a Python number's type (JAX's weak type): it takes the other operand's
        # precision (``x * 2.0`` stays float32)
        self.weak_type = bool(weak_type)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=object))

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.weak_type))

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"


class OtherPath(Exception):
    """Raised by batched code made for one path of an ``if`` on a value that is the
    same for every example, where a value's rank differs between its paths: this
    call took the other path, whose code s2s.vmap makes (on this call's example) and
    runs instead.  ``test`` names the test, ``taken`` the path this call took."""

    def __init__(self, test, taken):
        super().__init__(f"the batched code was made for the other path of `if {test}:`")
        self.test, self.taken = test, taken


__all__ += ["OtherPath"]


def _is_abstract(x: Any) -> bool:
    return isinstance(x, ShapeDtypeStruct)


def _each(stand_in: Any) -> Any:
    """``stand_in`` applied through the lists and tuples an operand holds."""
    def mapped(x: Any, *args: Any) -> Any:
        if type(x) in (list, tuple):
            return type(x)(mapped(v, *args) for v in x)
        return stand_in(x, *args)
    mapped.__name__, mapped.__doc__ = stand_in.__name__, stand_in.__doc__
    return mapped


def struct_of(x: Any) -> Any:
    """The shape and dtype of ``x`` (an array a stand-in evaluation returned; of each
    of them, for a tuple or list of arrays)."""
    if isinstance(x, (tuple, list)):  # (a NamedTuple result, np.linalg.eigh's: a tuple)
        return (list if isinstance(x, list) else tuple)(struct_of(v) for v in x)
    return ShapeDtypeStruct(np.shape(x), np.result_type(x))


@_each
def stand_in_0d(x: Any, fill: int = 1) -> Any:
    """A 0-d one of ``x``'s dtype (for a weakly typed struct, a Python number: weakly
    typed in NumPy's promotion too; a Python number as it is)."""
    if _is_abstract(x):
        return np.full((), fill, x.dtype).item() if x.weak_type else np.full(
            (), fill, x.dtype)
    if isinstance(x, np.ndarray):
        return np.full((), fill, x.dtype)
    return x


@_each
def stand_in_1(x: Any, fill: int = 1) -> Any:
    """Ones of ``x``'s rank and dtype with one element: an axis argument stays valid."""
    if _is_abstract(x) or isinstance(x, np.ndarray):
        return np.full((1,) * len(x.shape), fill, x.dtype)
    return x


def operand_shape(x: Any) -> tuple:
    """The shape of an operand: a ShapeDtypeStruct's, or an array's or number's."""
    return x.shape if _is_abstract(x) else np.shape(x)


@_each
def view_stand_in(x: Any) -> Any:
    """Ones of ``x``'s shape as a zero-strided view of one element (no memory for the
    elements): only operations that return views of it are evaluated on it."""
    if _is_abstract(x):
        return np.broadcast_to(np.ones((), x.dtype), x.shape)
    return x


@_each
def small_stand_in(x: Any) -> Any:
    """A stand-in of ``x``'s shape for a primitive with no shape rule (refused past
    ``SMALL`` elements): ones, or the identity in the last two axes of a square stack
    (linalg stays defined)."""
    if not _is_abstract(x):
        return x
    if x.size > SMALL:
        raise ValueError(
            f"eval_shape has no shape rule for this operation and evaluates it on "
            f"stand-ins only for operands of up to {SMALL} elements (this one has "
            f"shape {x.shape})")
    if x.ndim >= 2 and x.shape[-1] == x.shape[-2]:
        return np.broadcast_to(np.eye(x.shape[-1], dtype=x.dtype), x.shape)
    return np.broadcast_to(np.ones((), x.dtype), x.shape)


def _items(arrays: Any) -> list:
    """The arrays a join reads: a list's items, or an array's rows."""
    if _is_abstract(arrays):
        return [ShapeDtypeStruct(arrays.shape[1:], arrays.dtype)] * arrays.shape[0]
    if isinstance(arrays, np.ndarray):
        return list(arrays)
    return list(arrays)


def joined_dtype(arrays: Any) -> np.dtype:
    """The dtype of a join (np.concatenate, np.stack) of ``arrays``."""
    return np.result_type(*[stand_in_0d(e) for e in _items(arrays)])


def refuse_data_dependent(what: str) -> None:
    raise ValueError(f"the shape of {what} depends on the values of its operands, "
                     "which eval_shape does not have (JAX's eval_shape refuses it too)")


# ---- shape rules ---------------------------------------------------------------------


def _axis(axis: int, ndim: int) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim)
    return axis % ndim


def matmul_shape(a: tuple, b: tuple) -> tuple:
    """The shape of ``a @ b`` (NumPy's matmul: 1-D operands promoted, stacks broadcast)."""
    if not a or not b:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    a2 = (1,) + a if len(a) == 1 else a
    b2 = b + (1,) if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension "
                         f"0 (size {b2[-2]} is different from {a2[-1]}): shapes {a} and {b}")
    batch = np.broadcast_shapes(a2[:-2], b2[:-2])
    return batch + (a2[-2],) * (len(a) > 1) + (b2[-1],) * (len(b) > 1)


def dot_shape(a: tuple, b: tuple) -> tuple:
    """The shape of ``np.dot(a, b)``."""
    if not a or not b:
        return a or b
    k = b[-2] if len(b) > 1 else b[0]
    if a[-1] != k:
        raise ValueError(f"shapes {a} and {b} not aligned: {a[-1]} (dim {len(a) - 1}) "
                         f"!= {k} (dim {max(len(b) - 2, 0)})")
    return a[:-1] + b[:-2] + b[-1:] if len(b) > 1 else a[:-1]


def tensordot_shape(a: tuple, b: tuple, axes: Any = 2) -> tuple:
    """The shape of ``np.tensordot(a, b, axes)``."""
    if isinstance(axes, int):
        xa, xb = list(range(len(a) - axes, len(a))), list(range(axes))
    else:
        xa, xb = ([axes[0]] if isinstance(axes[0], int) else list(axes[0]),
                  [axes[1]] if isinstance(axes[1], int) else list(axes[1]))
    xa, xb = [_axis(i, len(a)) for i in xa], [_axis(i, len(b)) for i in xb]
    if len(xa) != len(xb) or any(a[i] != b[j] for i, j in zip(xa, xb)):
        raise ValueError(f"shape-mismatch for sum: tensordot of {a} and {b} over {axes}")
    return (tuple(d for i, d in enumerate(a) if i not in xa)
            + tuple(d for i, d in enumerate(b) if i not in xb))


def einsum_batched(subscripts: str, batched: tuple | None = None) -> str:
    """``np.einsum``'s subscripts, known only when the code runs (a string argument),
    with a batch label on each operand ``batched`` marks (None: on every one) and on
    the output: ``einsum_batched("ij,j->i", (True, False))`` is ``"zij,j->zi"``.  An
    implicit output (no ``->``) is written out first, as NumPy orders it (``...``,
    then the labels used once, sorted), so the batch label leads it."""
    spec = subscripts.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    terms = inputs.split(",")
    if not arrow:
        letters = inputs.replace(",", "").replace(".", "")
        once = sorted(c for c in set(letters) if letters.count(c) == 1)
        output = ("..." if "..." in inputs else "") + "".join(once)
    marks = (True,) * len(terms) if batched is None else batched
    if len(marks) != len(terms):
        raise ValueError(f"einsum: {len(terms)} subscripts for {len(marks)} operands "
                         f"({subscripts!r})")
    label = next(c for c in "zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA"
                 if c not in spec)
    return ",".join(label + t if m else t for t, m in zip(terms, marks)) + \
        "->" + label + output


def einsum_shape(subscripts: str, *shapes: tuple) -> tuple:
    """The shape of ``np.einsum(subscripts, *operands)`` (``...`` broadcast)."""
    spec = subscripts.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"einsum: {len(terms)} subscripts for {len(shapes)} operands")
    sizes: dict[str, int] = {}
    ellipses: list[tuple] = []
    for term, shape in zip(terms, shapes):
        letters = term.replace("...", "")
        n_ell = len(shape) - len(letters)
        if ("..." not in term and n_ell) or n_ell < 0:
            raise ValueError(f"einsum: operand of shape {shape} for subscripts {term!r}")
        head, _, tail = term.partition("...")
        ellipses.append(shape[len(head):len(head) + n_ell] if "..." in term else ())
        dims = shape[:len(head)] + shape[len(shape) - len(tail.replace('...', '')):] \
            if "..." in term else shape
        for letter, d in zip(head + tail if "..." in term else term, dims):
            if sizes.get(letter, d) != d and 1 not in (d, sizes[letter]):
                raise ValueError(f"einsum: size of label {letter!r} is {sizes[letter]} "
                                 f"in one operand and {d} in another")
            sizes[letter] = max(sizes.get(letter, d), d) if sizes.get(letter, d) != 1 else d
    batch = np.broadcast_shapes(*ellipses) if ellipses else ()
    if not arrow:
        once = sorted(c for c in set(inputs) if c.isalpha() and inputs.count(c) == 1)
        output = ("..." if "..." in inputs else "") + "".join(once)
    head, _, tail = output.partition("...")
    return (tuple(sizes[c] for c in head) + (batch if "..." in output else ())
            + tuple(sizes[c] for c in tail))


def reduced_shape(shape: tuple, axis: Any = None, keepdims: bool = False) -> tuple:
    """The shape of a reduction of an array of ``shape`` over ``axis``."""
    if axis is None:
        axes = set(range(len(shape)))
    else:
        axes = {_axis(a, len(shape)) for a in (axis if isinstance(axis, tuple) else (axis,))}
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def reshaped_shape(shape: tuple, newshape: Any) -> tuple:
    """``newshape`` with its ``-1`` resolved, checked against ``shape``'s size."""
    new = (newshape,) if isinstance(newshape, (int, np.integer)) else tuple(newshape)
    size = int(np.prod(shape, dtype=object))
    if new.count(-1) > 1:
        raise ValueError("can only specify one unknown dimension")
    known = int(np.prod([d for d in new if d != -1], dtype=object))
    if -1 in new:
        if known == 0 or size % known:
            raise ValueError(f"cannot reshape array of size {size} into shape {new}")
        new = tuple(size // known if d == -1 else d for d in new)
    elif known != size:
        raise ValueError(f"cannot reshape array of size {size} into shape {new}")
    return tuple(int(d) for d in new)


def concatenated_shape(arrays: Any, axis: Any = 0) -> tuple:
    """The shape of ``np.concatenate(arrays, axis)`` (``axis=None``: flat)."""
    shapes = [operand_shape(e) for e in _items(arrays)]
    if axis is None:
        return (sum(int(np.prod(s, dtype=object)) for s in shapes),)
    if not shapes or not shapes[0]:
        raise ValueError("zero-dimensional arrays cannot be concatenated_shape")
    ax = _axis(axis, len(shapes[0]))
    for s in shapes[1:]:
        if len(s) != len(shapes[0]) or any(
                d != e for i, (d, e) in enumerate(zip(s, shapes[0])) if i != ax):
            raise ValueError(f"all the input array dimensions except for the concatenation "
                             f"axis must match exactly: shapes {shapes[0]} and {s}")
    first = shapes[0]
    return first[:ax] + (sum(s[ax] for s in shapes),) + first[ax + 1:]


def stacked_shape(arrays: Any, axis: int = 0) -> tuple:
    """The shape of ``np.stack(arrays, axis)``."""
    shapes = [operand_shape(e) for e in _items(arrays)]
    if not shapes:
        raise ValueError("need at least one array to stack")
    if any(s != shapes[0] for s in shapes):
        raise ValueError("all input arrays must have the same shape")
    ax = _axis(axis, len(shapes[0]) + 1)
    return shapes[0][:ax] + (len(shapes),) + shapes[0][ax:]


def sized_shape(shape: Any) -> tuple:
    """A constructor's ``shape`` argument as a tuple (an int is one axis)."""
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    out = tuple(operator.index(d) for d in shape)
    if any(d < 0 for d in out):
        raise ValueError("negative dimensions are not allowed")
    return out


def arange_shape(start: Any, stop: Any = None, step: Any = 1) -> tuple:
    """The shape of ``np.arange(start, stop, step)`` (one axis: its length)."""
    if stop is None:
        start, stop = 0, start
    n = int(np.ceil((stop - start) / step))
    return (max(n, 0),)


def indexed_shape(shape: tuple, index: Any) -> tuple:
    """The shape of ``x[index]`` for ``x`` of ``shape``: NumPy's basic and advanced
    indexing; index arrays are arrays or ShapeDtypeStructs (a boolean one of unknown
    values is refused: its number of True elements is the result's length)."""
    items = list(index) if isinstance(index, tuple) else [index]
    arrays = [i for i in items if _is_abstract(i) or isinstance(i, (np.ndarray, list))]
    expanded: list[Any] = []
    for item in items:
        if isinstance(item, list):
            item = np.asarray(item)
        if _is_abstract(item) and item.dtype == bool:
            refuse_data_dependent("an array indexed by a boolean mask")
        if isinstance(item, np.ndarray) and item.dtype == bool and item.ndim:
            # a mask of known values: one index array per axis it covers
            count = int(np.count_nonzero(item))
            expanded += [ShapeDtypeStruct((count,), np.intp)] * item.ndim
            continue
        expanded.append(item)
    used = sum(1 for i in expanded if i is not None and i is not Ellipsis)
    if used > len(shape):
        raise IndexError(f"too many indices for array: array is {len(shape)}-dimensional, "
                         f"but {used} were indexed")
    at = next((k for k, i in enumerate(expanded) if i is Ellipsis), None)
    if at is not None:
        expanded[at:at + 1] = [slice(None)] * (len(shape) - used)
    else:
        expanded += [slice(None)] * (len(shape) - used)
    out: list[int] = []  # the result's axes, but those of the advanced indexes
    adv_shapes, adv_at, dim = [], [], 0
    for item in expanded:
        if item is None:
            out.append(1)
        elif isinstance(item, slice):
            out.append(len(range(*item.indices(shape[dim]))))
            dim += 1
        elif arrays and (_is_abstract(item) or isinstance(item, (np.ndarray, int, np.integer))):
            adv_shapes.append(tuple(np.shape(item)) if not _is_abstract(item) else item.shape)
            adv_at.append(len(out))
            if not _is_abstract(item) and np.size(item) and not np.all(
                    (-shape[dim] <= np.asarray(item)) & (np.asarray(item) < shape[dim])):
                raise IndexError(f"index out of bounds for axis {dim} with size {shape[dim]}")
            dim += 1
        else:
            i = operator.index(item)
            if not -shape[dim] <= i < shape[dim]:
                raise IndexError(f"index {i} is out of bounds for axis {dim} with size "
                                 f"{shape[dim]}")
            dim += 1
    if not adv_shapes:
        return tuple(out)
    joined = np.broadcast_shapes(*adv_shapes)
    adjacent = adv_at == [adv_at[0]] * len(adv_at)
    at = adv_at[0] if adjacent else 0
    return tuple(out[:at]) + joined + tuple(out[at:])


def kron_shape(a: tuple, b: tuple) -> tuple:
    """The shape of ``np.kron(a, b)``: the shorter shape padded with ones in front."""
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    return tuple(i * j for i, j in zip(a, b))


def inner_shape(a: tuple, b: tuple) -> tuple:
    """The shape of ``np.inner(a, b)``: the last axes are summed."""
    if a and b and a[-1] != b[-1]:
        raise ValueError(f"shapes {a} and {b} not aligned: {a[-1]} (dim {len(a) - 1}) "
                         f"!= {b[-1]} (dim {len(b) - 1})")
    return a[:-1] + b[:-1]


def diffed_shape(shape: tuple, n: int = 1, axis: int = -1) -> tuple:
    """The shape of ``np.diff(x, n, axis)``."""
    ax = _axis(axis, len(shape))
    return shape[:ax] + (max(shape[ax] - n, 0),) + shape[ax + 1:]


def tiled_shape(shape: tuple, reps: Any) -> tuple:
    """The shape of ``np.tile(x, reps)``."""
    reps = (reps,) if isinstance(reps, (int, np.integer)) else tuple(reps)
    n = max(len(shape), len(reps))
    shape, reps = (1,) * (n - len(shape)) + shape, (1,) * (n - len(reps)) + reps
    return tuple(d * r for d, r in zip(shape, reps))


def repeated_shape(shape: tuple, repeats: Any, axis: Any = None) -> tuple:
    """The shape of ``np.repeat(x, repeats, axis)`` (repeats known: an int or ints)."""
    if axis is None:
        shape, ax = (int(np.prod(shape, dtype=object)),), 0
    else:
        ax = _axis(axis, len(shape))
    count = int(np.sum(repeats)) if np.ndim(repeats) else shape[ax] * int(repeats)
    return shape[:ax] + (count,) + shape[ax + 1:]


def spaced_shape(num: int, start: tuple, stop: tuple, axis: int = 0) -> tuple:
    """The shape of ``np.linspace(start, stop, num, axis=axis)`` (and geomspace's,
    logspace's): the operands' broadcast shape with ``num`` inserted at ``axis``."""
    joined = np.broadcast_shapes(start, stop)
    ax = _axis(axis, len(joined) + 1)
    return joined[:ax] + (operator.index(num),) + joined[ax:]


def array_shape(x: Any) -> tuple:
    """The shape of ``np.array(x)``: nested lists and tuples of equal lengths add their
    axes in front of their items' shape."""
    if type(x) in (list, tuple):
        inner = {array_shape(v) for v in x}
        if len(inner) > 1:
            raise ValueError("setting an array element with a sequence: the items have "
                             f"shapes {sorted(inner)}")
        return (len(x),) + (inner.pop() if inner else ())
    return operand_shape(x)


def scan_tree(n):
    """``(nodes, outs)``: JAX's ``associative_scan`` of products over n items (node
    numbers 0 to n - 1), each product a node ``(x, y)`` numbered from n on, and the
    nodes of the n running products.  Derivatives of ``np.cumprod`` read through this
    tree (runtime.cumprod_bar) multiply where JAX's do: its NaNs, not more 0 * inf's.
    Integers only: the JAX backend runs it as it is."""
    nodes = [None] * n

    def scan(ids):
        if len(ids) < 2:
            return list(ids)
        pair = lambda x, y: nodes.append((x, y)) or len(nodes) - 1  # noqa: E731
        odd = scan([pair(ids[k], ids[k + 1]) for k in range(0, len(ids) - 1, 2)])
        even = [ids[0]] + [pair(odd[k], ids[2 * k + 2]) for k in range((len(ids) - 1) // 2)]
        return [even[i // 2] if i % 2 == 0 else odd[i // 2] for i in range(len(ids))]

    return nodes, scan(list(range(n)))


def pad_sources(shape, pad_width, mode):
    """Where each element of ``np.pad(a, pad_width, mode)`` comes from in ``a`` (of
    ``shape``), as an open mesh of indices, for the modes that copy elements."""
    if mode not in ("edge", "reflect", "symmetric", "wrap"):
        raise NotImplementedError(f"np.pad with mode={mode!r} has no derivative rule")
    widths = np.broadcast_to(pad_width, (len(shape), 2))
    return np.ix_(*[
        np.pad(np.arange(n), (lo, hi), mode=mode) for (lo, hi), n in zip(widths, shape)
    ])


def weights_along(weights, a, axis):
    """``np.average``'s ``weights`` given ``a``'s rank: 1-D weights of an
    ``np.average(a, axis, weights)`` with an int ``axis`` lie along that axis."""
    if axis is None or np.ndim(weights) == np.ndim(a):
        return weights
    return np.reshape(weights, (-1,) + (1,) * (np.ndim(a) - 1 - axis % np.ndim(a)))


def cov_weights(w, name, batched=False):
    """``np.cov``'s ``fweights=``/``aweights=`` (``w``, float64) checked as NumPy checks
    them, then ``w`` itself: integers (fweights), 1-D (where not a batch of them:
    vmap's), none negative (a number of samples that differs from the data's fails
    where they meet: NumPy's broadcasting ValueError).  A JAX value is not checked
    (``jnp.cov`` checks none: the JAX backend traces it)."""
    if not isinstance(w, np.ndarray):
        return w
    if name == "fweights" and not np.all(w == np.around(w)):
        raise TypeError("fweights must be integer")
    if w.ndim > 1 + bool(batched):
        raise RuntimeError(f"cannot handle multidimensional {name}")
    if np.any(w < 0):
        raise ValueError(f"{name} cannot be negative")
    return w


__all__ += ["pad_sources", "weights_along", "cov_weights"]


def python_float(x):
    """``math.log(v)``'s result, as ``math`` gives it: a Python float (weak: it keeps a
    float32 array float32) where NumPy's ``np.log(v)`` gave a NumPy scalar; an array (a
    batch of values, a JAX value) as it is."""
    return float(x) if isinstance(x, np.generic) else x


def own_copy(x):
    """The argument of a callee that writes into it in place (``y += v``), where
    emitted code calls that callee as written: an array copied, so the caller's value
    is the same after the call (a gradient's backward reads it); a number, a NumPy
    scalar or a JAX value (immutable) as it is."""
    return np.copy(x) if isinstance(x, np.ndarray) else x


def in_place(value, target):
    """``target op= v``'s value, ``value`` being ``target op v``: NumPy's operator writes
    into an array ``target`` of one or more axes, so the result keeps its dtype (a
    float32 ``y += v`` of a float64 ``v`` stays float32); a number or a NumPy scalar is
    rebound to the promoted value, as Python rebinds it.  A cast NumPy refuses
    (``same_kind``: an int array ``+=`` a float) keeps the promoted value."""
    dtype = getattr(target, "dtype", None)
    if dtype is None or np.ndim(target) == 0 or value.dtype == dtype or not np.can_cast(
            value.dtype, dtype, "same_kind"):
        return value
    return value.astype(dtype)


def list_item(x, items, index):
    """``items[index]`` as Python reads the list or tuple ``items`` where emitted code read
    it through their array (``x``: ``np.asarray(TABLE)[i]``, ``np.stack(xs)[i]``): the
    item itself where ``index`` is one integer and the item a Python number (weak: ``lr
    * w`` of a float32 ``w`` stays float32, as in the function run as written; the
    array's item is a float64 NumPy scalar; on the JAX backend too, where ``index`` is
    a Python int, as JAX's own run of the function reads it), else ``x`` (an array's
    row, a batch of indexes, an index JAX traces)."""
    if isinstance(index, (int, np.integer)) and not isinstance(index, bool) and np.ndim(
            x) == 0:
        item = items[index]
        if type(item) in (int, float, bool, complex):
            return item
    return x
