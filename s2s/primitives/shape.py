"""Shape manipulation and subscripts: linear maps whose VJPs move ``g`` back."""

import builtins
import operator

import numpy as np

from .registry import attribute, defjvp, defprim, defvjp, is_basic_index


def _subscript(args, params):
    return f"{args[0]}[{params['index']}]"


defprim(
    "identity", None, "(x)", family="shape", spelling=lambda args, params: args[0],
    note="a plain copy of a name: y = x",
)


@defvjp("identity")
def identity_vjp(g, ans, x):
    return g


@defjvp("identity", "x")
def identity_jvp(x_dot, ans, x):
    return x_dot


defprim(
    "getitem", operator.getitem, "(a, index)", diff=("a",), family="indexing",
    spelling=_subscript,
)


@defvjp("getitem")
def getitem_vjp(g, ans, a, index):
    a_bar = np.zeros_like(a)
    if is_basic_index(index):
        a_bar[index] += g
    else:
        np.add.at(a_bar, index, g)
    return a_bar


@defjvp("getitem", "a")
def getitem_jvp(a_dot, ans, a, index):
    return a_dot[index]


defprim(
    "reshape", np.reshape, "(a, shape)", diff=("a",), family="shape",
    methods=("reshape",),
)


@defvjp("reshape")
def reshape_vjp(g, ans, a, shape):
    return np.reshape(g, np.shape(a))


@defjvp("reshape", "a")
def reshape_jvp(a_dot, ans, a, shape):
    return np.reshape(a_dot, shape)


defprim(
    "transpose", np.transpose, "(a, axes=None)", family="shape",
    methods=("transpose",),
)


@defvjp("transpose")
def transpose_vjp(g, ans, a, axes=None):
    if axes is None:
        return np.transpose(g)
    return np.transpose(g, np.argsort(axes))


@defjvp("transpose", "a")
def transpose_jvp(a_dot, ans, a, axes=None):
    return np.transpose(a_dot, axes)


defprim("T", None, "(a)", family="shape", spelling=attribute("T"), attributes=("T",))


@defvjp("T")
def T_vjp(g, ans, a):
    return np.transpose(g)


@defjvp("T", "a")
def T_jvp(a_dot, ans, a):
    return np.transpose(a_dot)


defprim("ravel", np.ravel, "(a)", family="shape", methods=("ravel", "flatten"))


@defvjp("ravel")
def ravel_vjp(g, ans, a):
    return np.reshape(g, np.shape(a))


@defjvp("ravel", "a")
def ravel_jvp(a_dot, ans, a):
    return np.ravel(a_dot)


defprim("copy", np.copy, "(a)", family="shape", methods=("copy",))


@defvjp("copy")
def copy_vjp(g, ans, a):
    return g


@defjvp("copy", "a")
def copy_jvp(a_dot, ans, a):
    return a_dot


# np.array / np.asarray of an array is a copy; of a list of computed values it stacks
# them, and reverse mode hands each element its slice of the cotangent (structural).
for _name in ("array", "asarray"):
    defprim(_name, getattr(np, _name), "(a)", family="shape")

    @defvjp(_name)
    def array_vjp(g, ans, a):
        return g

    @defjvp(_name, "a")
    def array_jvp(a_dot, ans, a):
        return np.array(a_dot)


defprim(
    "float", builtins.float, "(x)", family="shape",
    spelling=lambda args, params: f"float({args[0]})",
    note="a Python float of a scalar: the identity for derivatives",
)


@defvjp("float")
def float_vjp(g, ans, x):
    return g


@defjvp("float", "x")
def float_jvp(x_dot, ans, x):
    return x_dot


# ---- facts about arrays, and constructors: no derivative flows ------------------

for _attr in ("shape", "ndim", "size"):
    defprim(
        _attr, getattr(np, _attr), "(a)", family="array facts", nondiff=True,
        attributes=(_attr,), note="a fact about the array, not a value of it",
    )
defprim(
    "dtype", None, "(a)", family="array facts", spelling=attribute("dtype"),
    nondiff=True, attributes=("dtype",),
)

defprim(
    "len", builtins.len, "(obj)", family="array facts", nondiff=True,
    spelling=lambda args, params: f"len({args[0]})",
)
defprim(
    "int", builtins.int, "(x)", family="array facts", nondiff=True,
    spelling=lambda args, params: f"int({args[0]})",
)

for _name, _sig in (
    ("zeros_like", "(a)"),
    ("ones_like", "(a)"),
    ("zeros", "(shape)"),
    ("ones", "(shape)"),
    ("argmax", "(a, axis=None)"),
    ("argmin", "(a, axis=None)"),
    ("isnan", "(x)"),
    ("isfinite", "(x)"),
    ("arange", "(start, stop=None, step=None)"),
    ("linspace", "(start, stop, num=50)"),
    ("eye", "(N, M=None, k=0)"),
    ("full", "(shape, fill_value)"),
    ("empty", "(shape)"),
):
    defprim(
        _name, getattr(np, _name), _sig, family="constructor / integer-valued",
        nondiff=True, note="integer, boolean or constant output: no derivative flows",
    )


# ---- joining and splitting: a sequence in, or several results out ---------------
# A rule's cotangent for a sequence argument is a sequence (one per element); a
# primitive with several results receives ``g`` as a tuple of their cotangents.

defprim("concatenate", np.concatenate, "(arrays, axis=0)", family="shape")


@defvjp("concatenate")
def concatenate_vjp(g, ans, arrays, axis=0):
    ends = np.cumsum([np.shape(a)[axis] for a in arrays])
    return np.split(g, ends[:-1], axis=axis)


@defjvp("concatenate", "arrays")
def concatenate_jvp(arrays_dot, ans, arrays, axis=0):
    return np.concatenate(arrays_dot, axis=axis)


defprim(
    "split", np.split, "(ary, indices_or_sections, axis=0)", diff=("ary",),
    family="shape", results=lambda args: args["indices_or_sections"]
    if isinstance(args.get("indices_or_sections"), int)
    else len(args["indices_or_sections"]) + 1,
)


@defvjp("split")
def split_vjp(g, ans, ary, indices_or_sections, axis=0):
    return np.concatenate(g, axis=axis)


@defjvp("split", "ary")
def split_jvp(ary_dot, ans, ary, indices_or_sections, axis=0):
    return np.split(ary_dot, indices_or_sections, axis=axis)
