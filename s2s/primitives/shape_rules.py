"""Shape rules: for each primitive, the code ``s2s.eval_shape`` emits to compute its
result's shape and dtype from its operands' (a ``ShapeDtypeStruct``), never its values.

A rule is ``rule(t, s) -> text``: ``s`` the statement, ``t`` the transform that asks
(``transforms/shapes.py``): ``t.shape(a)`` spells an operand's shape, ``t.call(s, wrap)``
the statement's own NumPy call with each abstract operand wrapped in a stand-in helper
(``s2s/runtime_shapes.py``).  A dtype comes from NumPy: the call run on stand-ins of a
few elements (0-d ``stand_in_0d``s for elementwise families, size-1 ``stand_in_1``
arrays of the operand's rank for reductions: under NumPy 2's promotion a dtype never
depends on sizes), or ``np.result_type`` of the operands (products, joins).  Shapes come from rules over tuples, or from NumPy on a
``view_stand_in`` (zero strides: no memory) for operations that return views.  A
primitive with no rule here is evaluated on ``small_stand_in``s of its operands'
shapes, refused past ``runtime_shapes.SMALL`` elements.
"""

from __future__ import annotations

from typing import Any, Callable

from .registry import PRIMITIVES

Rule = Callable[[Any, Any], str]
SHAPE_RULES: dict[str, Rule] = {}


def shape_rule(*names: str) -> Callable[[Rule], Rule]:
    def register(rule: Rule) -> Rule:
        for name in names:
            SHAPE_RULES[name] = rule
        return rule
    return register


def struct(shape: str, dtype: str) -> str:
    return f"ShapeDtypeStruct({shape}, {dtype})"


def _static(t: Any, s: Any, name: str, default: str) -> str:
    atom = t.op(s, name)
    return default if atom is None else t.text(atom)


# ---- elementwise: operands broadcast, NumPy says the dtype on 0-d zeros ---------------

# (not "special": scipy's functions there include ones over whole arrays, such as
# multivariate_normal.logpdf; they take the stand-in evaluation)
ELEMENTWISE_FAMILIES = ("elementwise", "piecewise-constant", "binary", "comparison")
NOT_ELEMENTWISE = {"interp", "divmod", "frexp", "modf", "unwrap", "real_if_close",
                   "is_", "is_not", "not_", "and_", "or_", "range", "reversed",
                   "iscomplexobj", "isrealobj", "where", "astype", "isclose"}
ELEMENTWISE = {name for name, p in PRIMITIVES.items()
               if p.family in ELEMENTWISE_FAMILIES and name not in NOT_ELEMENTWISE} | {
    "isnan", "isfinite", "special_digamma", "special_polygamma", "special_erf",
    "special_erfc", "special_erfinv", "special_expit", "special_gammaln",
    "special_logit", "special_xlogy", "special_xlog1py", "real_only", "sinc_taylor",
    "own_copy"}


def broadcast_text(t: Any, atoms: list[Any]) -> str:
    shapes = [t.shape(a) for a in atoms if t.shape(a) != "()"]
    if not shapes:
        return "()"
    if len(shapes) == 1:
        return shapes[0]
    return f"np.broadcast_shapes({', '.join(shapes)})"


def elementwise(t: Any, s: Any) -> str:
    return struct(broadcast_text(t, t.operands(s)), f"np.result_type({t.call(s, 'stand_in_0d')})")


for _name in ELEMENTWISE:
    SHAPE_RULES[_name] = elementwise


def rule_for(prim: str) -> Rule | None:
    """The shape rule of ``prim``: its own, or its family's (an elementwise primitive
    registered after this module, a user's, broadcasts too)."""
    rule = SHAPE_RULES.get(prim)
    if rule is None and prim in PRIMITIVES and prim not in NOT_ELEMENTWISE and \
            PRIMITIVES[prim].family in ELEMENTWISE_FAMILIES:
        return elementwise
    return rule


@shape_rule("where", "isclose", "astype")
def where_rule(t: Any, s: Any) -> str:
    if s.prim == "where" and len(s.args) == 1:
        t.refuse(s, "np.where(condition) with one argument gives the indexes where it "
                    "holds: their number depends on the values",
                 "give np.where its two branches, `np.where(c, x, 0.0)`")
    if s.prim == "astype":  # (x's shape: a dtype has none, a class `np.float32` read
        # from a default has a descriptor for one)
        return struct(t.shape(t.operands(s)[0]), f"np.result_type({t.call(s, 'stand_in_0d')})")
    return elementwise(t, s)


@shape_rule("iscomplexobj", "isrealobj", "finfo", "iinfo")
def dtype_question(t: Any, s: Any) -> str:
    return t.call(s, "stand_in_0d")  # (a Python bool of the dtype: concrete)


@shape_rule("unwrap")
def same_shape(t: Any, s: Any) -> str:
    a = s.args[0]
    return struct(t.shape(a), f"np.result_type({t.call(s, 'stand_in_1')})")


# ---- reductions: the reduced shape, NumPy's dtype on a size-1 array of the same rank ---

REDUCTIONS = {"sum", "prod", "mean", "max", "min", "all", "any", "std", "var", "nansum",
              "nanprod", "nanmean", "nanmax", "nanmin", "nanstd", "nanvar", "ptp",
              "median", "nanmedian", "count_nonzero", "argmax", "argmin"}


@shape_rule(*REDUCTIONS)
def reduction(t: Any, s: Any) -> str:
    a = s.args[0]
    shape = (f"reduced_shape({t.shape(a)}, {_static(t, s, 'axis', 'None')}, "
             f"{_static(t, s, 'keepdims', 'False')})")
    return struct(shape, f"np.result_type({t.call(s, 'stand_in_1')})")


@shape_rule("cumsum", "cumprod", "nancumsum", "nancumprod")
def cumulative(t: Any, s: Any) -> str:
    a = s.args[0]
    axis = t.op(s, "axis")
    shape = f"reshaped_shape({t.shape(a)}, -1)" if axis is None else t.shape(a)
    return struct(shape, f"np.result_type({t.call(s, 'stand_in_1')})")


# ---- products --------------------------------------------------------------------------


def product_dtype(t: Any, atoms: list[Any]) -> str:
    return f"np.result_type({', '.join(t.scalar(a) for a in atoms)})"


@shape_rule("matmul", "dot", "inner", "vdot", "outer", "linalg.outer", "kron")
def product(t: Any, s: Any) -> str:
    a, b = s.args[:2]
    sa, sb = t.shape(a), t.shape(b)
    shape = {"matmul": f"matmul_shape({sa}, {sb})", "dot": f"dot_shape({sa}, {sb})",
             "inner": f"inner_shape({sa}, {sb})",
             "vdot": f"dot_shape(reshaped_shape({sa}, -1), reshaped_shape({sb}, -1))",
             "outer": f"reshaped_shape({sa}, -1) + reshaped_shape({sb}, -1)",
             "linalg.outer": f"{sa} + {sb}",
             "kron": f"kron_shape({sa}, {sb})"}[s.prim]
    return struct(shape, product_dtype(t, [a, b]))


@shape_rule("einsum")
def einsum_rule(t: Any, s: Any) -> str:
    subscripts, *operands = s.args
    shapes = ", ".join(t.shape(a) for a in operands)
    return struct(f"einsum_shape({t.text(subscripts)}, {shapes})",
                  product_dtype(t, operands))


@shape_rule("tensordot")
def tensordot_rule(t: Any, s: Any) -> str:
    a, b = s.args[:2]
    return struct(f"tensordot_shape({t.shape(a)}, {t.shape(b)}, "
                  f"{_static(t, s, 'axes', '2')})", product_dtype(t, [a, b]))


@shape_rule("linalg.inv", "linalg.cholesky", "linalg.det", "linalg.slogdet")
def square_linalg(t: Any, s: Any) -> str:
    a = s.args[0]
    shape = t.shape(a)
    dtype = f"np.result_type({t.call(s, 'stand_in_1')})"
    if s.prim in ("linalg.det", "linalg.slogdet"):
        one = struct(f"{shape}[:-2]", dtype if s.prim == "linalg.det" else
                     f"{t.call(s, 'stand_in_1')}[1].dtype")
        return one if s.prim == "linalg.det" else f"({one}, {one})"
    return struct(shape, dtype)


@shape_rule("linalg.solve")
def solve_rule(t: Any, s: Any) -> str:
    a, b = s.args[:2]
    return struct(f"{t.shape(b)} if len({t.shape(b)}) == 1 else "
                  f"np.broadcast_shapes({t.shape(a)}[:-2], {t.shape(b)}[:-2]) + "
                  f"{t.shape(b)}[-2:]", product_dtype(t, [a, b]))


# ---- shape: views of a zero-strided stand-in (no memory), or rules over tuples --------

VIEWS = {"T", "transpose", "matrix_transpose", "linalg.matrix_transpose", "moveaxis",
         "swapaxes", "rollaxis", "expand_dims", "squeeze", "flip", "fliplr", "flipud",
         "broadcast_to", "atleast_1d", "atleast_2d", "atleast_3d", "diagonal",
         "linalg.diagonal", "rot90", "split", "array_split", "hsplit", "vsplit",
         "dsplit", "broadcast_arrays"}


@shape_rule(*VIEWS)
def view(t: Any, s: Any) -> str:
    return f"struct_of({t.call(s, 'view_stand_in')})"


@shape_rule("copy", "roll", "nan_to_num")
def same(t: Any, s: Any) -> str:
    return struct(t.shape(s.args[0]), t.dtype(s.args[0]))


@shape_rule("sort", "partition", "argsort", "argpartition")
def sorted_rule(t: Any, s: Any) -> str:
    a, axis = s.args[0], t.op(s, "axis")
    flat = axis is not None and getattr(axis, "value", 0) is None
    shape = f"reshaped_shape({t.shape(a)}, -1)" if flat else t.shape(a)
    return struct(shape, "np.dtype(np.intp)" if s.prim.startswith("arg") else t.dtype(a))


@shape_rule("linalg.eigh", "linalg.eigvalsh")
def eigh_rule(t: Any, s: Any) -> str:
    a = s.args[0]
    dtype = f"np.result_type({t.call(s, 'stand_in_1')}[0])" if s.prim == "linalg.eigh" \
        else f"np.result_type({t.call(s, 'stand_in_1')})"
    values = struct(f"{t.shape(a)}[:-1]", dtype)
    if s.prim == "linalg.eigvalsh":
        return values
    return f"({values}, {struct(t.shape(a), t.dtype(a))})"


@shape_rule("linalg.tensorinv")
def tensorinv_rule(t: Any, s: Any) -> str:
    a, ind = s.args[0], _static(t, s, "ind", "2")
    return struct(f"{t.shape(a)}[{ind}:] + {t.shape(a)}[:{ind}]",
                  f"np.result_type({t.dtype(a)}, np.float64)")


@shape_rule("linalg.tensorsolve")
def tensorsolve_rule(t: Any, s: Any) -> str:
    a, b = s.args[:2]
    return struct(f"{t.shape(a)}[len({t.shape(b)}):]", product_dtype(t, [a, b]))


@shape_rule("reshape")
def reshape_rule(t: Any, s: Any) -> str:
    a, shape = s.args[0], t.op(s, "shape")
    return struct(f"reshaped_shape({t.shape(a)}, {t.text(shape)})", t.dtype(a))


@shape_rule("ravel")
def ravel_rule(t: Any, s: Any) -> str:
    return struct(f"reshaped_shape({t.shape(s.args[0])}, -1)", t.dtype(s.args[0]))


@shape_rule("concatenate", "stack")
def join_rule(t: Any, s: Any) -> str:
    arrays = s.args[0]
    fn = "concatenated_shape" if s.prim == "concatenate" else "stacked_shape"
    return struct(f"{fn}({t.text(arrays)}, {_static(t, s, 'axis', '0')})",
                  f"joined_dtype({t.text(arrays)})")


@shape_rule("diff")
def diff_rule(t: Any, s: Any) -> str:
    a = s.args[0]
    return struct(f"diffed_shape({t.shape(a)}, {_static(t, s, 'n', '1')}, "
                  f"{_static(t, s, 'axis', '-1')})", f"np.result_type({t.call(s, 'stand_in_1')})")


@shape_rule("tile")
def tile_rule(t: Any, s: Any) -> str:
    a, reps = s.args[0], t.op(s, "reps")
    return struct(f"tiled_shape({t.shape(a)}, {t.text(reps)})", t.dtype(a))


@shape_rule("repeat")
def repeat_rule(t: Any, s: Any) -> str:
    a, repeats = s.args[0], t.op(s, "repeats")
    return struct(f"repeated_shape({t.shape(a)}, {t.text(repeats)}, "
                  f"{_static(t, s, 'axis', 'None')})", t.dtype(a))


@shape_rule("float64", "asarray", "array")
def converted(t: Any, s: Any) -> str:
    a = s.args[0]
    return struct(f"array_shape({t.text(a)})", f"np.result_type({t.call(s, 'stand_in_0d')})")


# ---- indexing --------------------------------------------------------------------------


@shape_rule("getitem")
def getitem_rule(t: Any, s: Any) -> str:
    a = s.args[0]
    return struct(f"indexed_shape({t.shape(a)}, {t.index(s.params['index'])})", t.dtype(a))


@shape_rule("take")
def take_rule(t: Any, s: Any) -> str:
    a, idx = s.args[:2]
    axis = t.op(s, "axis")
    if axis is None:
        return struct(t.shape(idx), t.dtype(a))
    ax = t.text(axis)
    return struct(f"{t.shape(a)}[:{ax} % len({t.shape(a)})] + {t.shape(idx)} + "
                  f"{t.shape(a)}[{ax} % len({t.shape(a)}) + 1:]", t.dtype(a))


@shape_rule("take_along_axis")
def take_along_rule(t: Any, s: Any) -> str:
    a, idx = s.args[:2]
    return struct(t.shape(idx), t.dtype(a))


@shape_rule("searchsorted")
def searchsorted_rule(t: Any, s: Any) -> str:
    return struct(t.shape(s.args[1]), "np.dtype(np.intp)")


@shape_rule("nonzero", "argwhere", "flatnonzero", "extract", "compress", "unique")
def data_dependent(t: Any, s: Any) -> str:
    if not any(t.is_abstract(a) for a in t.operands(s)):
        return t.call(s, "stand_in_0d")
    t.refuse(s, f"the shape of np.{s.prim}'s result depends on the values of its "
                "operands, which eval_shape does not have (JAX refuses it too)",
             "compute with a fixed shape (`np.where(mask, x, 0.0)`)")
    return ""


@shape_rule("bincount")
def bincount_rule(t: Any, s: Any) -> str:
    """Labels known (a constant): their counts' length; the dtype NumPy's for a
    stand-in of the weights (float64, or the counts' integers without weights)."""
    x = s.args[0]
    if t.is_abstract(x) or any(t.is_abstract(a) for a in param_atoms_of(t, s, "minlength")):
        t.refuse(s, "the length of np.bincount's result depends on the values of its "
                    "labels, which eval_shape does not have (JAX's needs length= too)",
                 "count into a fixed number of bins: `out = np.zeros(n); "
                 "np.add.at(out, labels, w)`")
    m = t.op(s, "minlength")
    w = t.op(s, "weights")
    weights = "" if w is None else f", weights=np.ones(np.shape({t.text(x)}), {t.dtype(w)})"
    count = f"np.bincount({t.text(x)}{weights}, minlength={'0' if m is None else t.text(m)})"
    return struct(f"np.shape({count})", f"{count}.dtype")


def param_atoms_of(t: Any, s: Any, name: str) -> list:
    atom = t.op(s, name)
    return [] if atom is None else [atom]


# ---- constructors: the shape argument is known (a constant, or read from shapes) ------


@shape_rule("zeros", "ones", "empty")
def filled(t: Any, s: Any) -> str:
    shape = t.op(s, "shape")
    return struct(f"sized_shape({t.text(shape)})", f"{t.call(s, 'stand_in_0d', shape='()')}.dtype")


@shape_rule("full")
def full_rule(t: Any, s: Any) -> str:
    shape = t.op(s, "shape")
    return struct(f"sized_shape({t.text(shape)})",
                  f"np.result_type({t.call(s, 'stand_in_0d', shape='()')})")


@shape_rule("zeros_like", "ones_like", "empty_like", "full_like")
def filled_like(t: Any, s: Any) -> str:
    a, shape = s.args[0], t.op(s, "shape")
    size = t.shape(a) if shape is None else f"sized_shape({t.text(shape)})"
    return struct(size, f"np.result_type({t.call(s, 'stand_in_0d', shape='()')})")


@shape_rule("arange")
def arange_rule(t: Any, s: Any) -> str:
    bounds = ", ".join(t.text(a) for a in t.operands(s))
    dtype = _static(t, s, "dtype", "None")
    return struct(f"arange_shape({bounds})",
                  f"np.result_type({bounds})" if dtype == "None" else f"np.dtype({dtype})")


@shape_rule("linspace", "logspace", "geomspace")
def spaced(t: Any, s: Any) -> str:
    start, stop = t.op(s, "start"), t.op(s, "stop")
    return struct(f"spaced_shape({_static(t, s, 'num', '50')}, {t.shape(start)}, "
                  f"{t.shape(stop)}, {_static(t, s, 'axis', '0')})",
                  f"np.result_type({t.call(s, 'stand_in_0d', num='2', axis='0')})")


@shape_rule("eye", "tri")
def square_rule(t: Any, s: Any) -> str:
    n = t.text(t.op(s, "N"))
    m = _static(t, s, "M", "None")
    return struct(f"sized_shape(({n}, {n if m == 'None' else m}))",
                  f"{t.call(s, 'stand_in_0d', N='1', M='1')}.dtype")


@shape_rule("identity")
def identity_rule(t: Any, s: Any) -> str:
    n = t.text(t.op(s, "n"))
    return struct(f"sized_shape(({n}, {n}))", f"{t.call(s, 'stand_in_0d', n='1')}.dtype")


# ---- what an array says about itself ---------------------------------------------------


@shape_rule("shape", "ndim", "size", "dtype")
def facts(t: Any, s: Any) -> str:
    a = s.args[0]
    if not t.is_abstract(a):
        return t.call(s, "stand_in_0d")
    return f"{t.text(a)}.{s.prim}"


@shape_rule("len")
def len_rule(t: Any, s: Any) -> str:
    return f"len({t.text(s.args[0])})"


# ---- collectives (an s2s.vmap's per-example code): per example, as the operand -------


@shape_rule("psum", "pmean", "pmax", "pmin")
def collective(t: Any, s: Any) -> str:
    return struct(t.shape(s.args[0]), t.dtype(s.args[0]))


@shape_rule("axis_index")
def axis_index_rule(t: Any, s: Any) -> str:
    return struct("()", "np.dtype(np.int64)")  # (NumPy's int64, as s2s's axis_index)


@shape_rule("all_gather", "axis_size")
def sized_collective(t: Any, s: Any) -> str:
    t.refuse(s, f"`{s.prim}` needs the size of a named vmap axis, which the shapes of "
                "one example do not say", "take eval_shape of the vmapped function")
    return ""
