"""The error catalogue: every kind of bad input s2s must answer clearly.

Each :class:`Kind` is one distinct way to misuse s2s, with the call that misuses it,
the exception class it must raise, words the message must contain, where (if the
problem has a place in the user's source) the message must point, and a pattern for
the part of the message that says what to write instead.  Misuse that JAX itself
reports also carries the same call through JAX: s2s raises JAX's class with JAX's
first line.

A kind s2s answers wrongly or unclearly today carries ``open=`` with the reason: its
test is a strict xfail (it fails until s2s is fixed, then the xfail must go), and
docs/errors.md lists it as open.  ``tests/test_error_catalogue.py`` runs the kinds;
``tools/errors_doc.py`` writes docs/errors.md from them (a test fails if it is stale).
"""

from __future__ import annotations

import importlib.util
import re
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import catalogue_fns as C
import error_fns as E
import numpy as np

import s2s
from s2s.errors import UnboundFunctionError

X = np.array([0.5, -1.0, 2.0])
XS = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])

INSTEAD = r"^\s*Instead: \S"  # a TransformError's hint line


@dataclass(frozen=True)
class Kind:
    id: str  # short, unique
    section: str  # heading in docs/errors.md
    what: str  # the bad input, in words
    run: Callable[[], Any]  # must raise
    error: type[BaseException]
    words: tuple[str, ...] = ()  # each must appear in the message
    where: Callable | None = None  # the function whose ``# ERR`` marks the location
    hint: str = INSTEAD  # regex: the message says what to write instead
    jax: Callable[[Any], Any] | None = None  # the same misuse through JAX (gets the twin)
    open: str | None = None  # why s2s's answer is wrong or unclear today
    compare: str = "first line"  # or "contains": JAX's first line within ours
    extra: Callable[[BaseException], None] | None = field(default=None, compare=False)


def _grad(fn: Callable) -> Callable[[], Any]:
    """Transform, then call: s2s refuses most syntax when the transform is requested,
    and what depends on the call's structure when it generates code at the first call.
    Either way nothing has run the user's code with a wrong derivative."""

    def run() -> Any:
        g = s2s.grad(fn)
        return g(X)

    return run


def _grad_call(fn: Callable, *args: Any) -> Callable[[], Any]:
    return lambda: s2s.grad(fn)(*(args or (X,)))


# ---- source that changes on disk after import, and functions with no file ----------

_TMP = Path(tempfile.mkdtemp(prefix="s2s_catalogue_"))


def _import_file(name: str, text: str) -> Any:
    path = _TMP / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def changed_on_disk() -> Any:
    """Import ``f(x) = sum(x**2)``, then edit the file to ``sum(x**3)``: the running
    function is the old code; a gradient of the new text would be silently wrong."""
    module = _import_file(
        "s2s_catalogue_changed",
        "import numpy as np\n\n\ndef f(x):\n    return np.sum(x ** 2)\n",
    )
    time.sleep(0.01)
    (_TMP / "s2s_catalogue_changed.py").write_text(
        "import numpy as np\n\n\ndef f(x):\n    return np.sum(x ** 3)\n"
    )
    return module.f


def deleted_on_disk() -> Any:
    module = _import_file(
        "s2s_catalogue_deleted",
        "import numpy as np\n\n\ndef f(x):\n    return np.sum(x ** 2)\n",
    )
    (_TMP / "s2s_catalogue_deleted.py").unlink()
    return module.f


def made_by_exec() -> Any:
    namespace = {"np": np}
    exec("def made_by_exec(x):\n    return np.sum(x ** 2)\n", namespace)
    return namespace["made_by_exec"]


def _changed_on_disk_grad() -> Any:
    f = changed_on_disk()
    g = s2s.grad(f)(X)
    # reached only if s2s accepted the edited text: show what it returned
    raise AssertionError(
        f"no error: s2s returned {g} for f(x) = sum(x**2), whose gradient is {2 * X}"
    )


def _jit_side_effect(fn: Callable, backend: str) -> Callable[[], Any]:
    def run() -> Any:
        before = len(C.LOG)
        s2s.jit(fn, backend=backend)  # the error belongs here, when jit is requested
        out = s2s.jit(fn, backend=backend)(X)
        del C.LOG[before:]
        return out

    return run


def _none(transform: Callable) -> Callable[[], Any]:
    return lambda: transform(E.none_out)(X)


# ---- the catalogue -------------------------------------------------------------------

Syntax = s2s.UnsupportedSyntaxError
Call = s2s.UnsupportedCallError
Source = s2s.SourceNotFoundError
Transform = s2s.TransformError

SYNTAX = "Python outside the subset"
CALLS = "Calls s2s has no rule for"
NAMES = "Names, returns and memory"
INPUTS = "Inputs and outputs (JAX's classes and wording)"
ARGS = "Transform arguments (JAX's classes and wording)"
SOURCE = "Finding the source"
JIT = "Side effects under jit"

CATALOGUE: list[Kind] = [
    # -- syntax ---------------------------------------------------------------------
    Kind("try", SYNTAX, "`try`/`except`", _grad(E.uses_try), Syntax, ("try",), E.uses_try),
    Kind("with", SYNTAX, "`with` block", _grad(E.uses_with), Syntax, ("with",), E.uses_with),
    Kind("class", SYNTAX, "`class` inside the function", _grad(E.uses_class), Syntax,
         ("class",), E.uses_class),
    Kind("global", SYNTAX, "`global` statement", _grad(E.uses_global), Syntax,
         ("global",), E.uses_global),
    Kind("nonlocal", SYNTAX, "`nonlocal` statement", _grad(E.uses_nonlocal), Syntax,
         ("nonlocal",), E.uses_nonlocal),
    Kind("closure-mutated", SYNTAX, "a closure that rebinds its cell (`nonlocal total`)",
         _grad(C.mutated_closure), Syntax, ("nonlocal", "closure"),
         C.make_mutated_closure),
    Kind("yield", SYNTAX, "`y = yield x`", _grad(E.uses_yield), Syntax, ("yield",),
         E.uses_yield),
    Kind("yield-from", SYNTAX, "`yield from x`", _grad(C.uses_yield_from), Syntax,
         ("yield",), C.uses_yield_from,
         hint=r"^\s*Instead: return an array: .*np\.stack"),
    Kind("generator", SYNTAX, "a generator function (`yield v` in a loop)",
         _grad(C.generator), Syntax, ("generator",), C.generator,
         hint=r"^\s*Instead: return an array: .*np\.stack"),
    Kind("async", SYNTAX, "`async def`", _grad(E.uses_async), Syntax, ("async",),
         E.uses_async),
    Kind("decorated-def", SYNTAX, "decorated nested `def`",
         _grad(C.uses_decorated_inner_def), Syntax, ("def",), C.uses_decorated_inner_def),
    Kind("del", SYNTAX, "a name read after `del y`", _grad(E.uses_del), Syntax,
         ("del",), E.uses_del),
    Kind("unpack-width", SYNTAX, "unpacking into names a tuple of another length (`for "
         "a, b in pts` over 3-tuples): Python's ValueError, at your line",
         _grad(E.uses_unpack_width), s2s.errors.UnpackError,
         ("too many values to unpack (expected 2)",), E.uses_unpack_width),
    Kind("unpack-scalar", SYNTAX, "unpacking a value with no items (`a, b = np.sum(x)`): "
         "Python's TypeError, at your line", _grad(E.uses_unpack_scalar),
         s2s.errors.NotIterableError, ("cannot unpack non-iterable numpy.float64 object",),
         E.uses_unpack_scalar),
    Kind("slice-index", SYNTAX, "a float bound of a slice of functions (`for op in "
         "ops[:k]` called with `k=2.0`): Python's TypeError, at your line",
         _grad_call(E.uses_float_slice_bound, X, 2.0), s2s.errors.SliceIndexError,
         ("slice indices must be integers",), E.uses_float_slice_bound),
    Kind("missing-key", SYNTAX, "a dict argument read by a key it does not hold at this "
         "call (`p[\"b\"]` of `{\"a\": x}`, `params[name]` of a string `name`): Python's "
         "KeyError, at your line", _grad_call(E.reads_a_missing_key, {"a": X}),
         s2s.errors.MissingKeyError, ("the dict has no key 'b'",), E.reads_a_missing_key),
    Kind("list-operator", SYNTAX, "Python's operator on a tuple or list argument (`xs / "
         "2.0`, `1.0 - xs`, `-xs`; NumPy's `np.divide(xs, 2.0)` converts it): Python's "
         "TypeError, at your line", _grad_call(E.divides_a_list, [X, 2 * X]),
         s2s.TransformError, ("unsupported operand type(s) for /: 'list' and 'float'",),
         E.divides_a_list),
    Kind("float-labels", SYNTAX, "`np.bincount` of float labels: NumPy's TypeError from "
         "the code made from your line, at your line",
         _grad_call(E.counts_float_labels, X, np.array([0.0, 1.0, 1.0])),
         s2s.errors.CastError, ("Cannot cast array data", "np.bincount"),
         E.counts_float_labels),
    Kind("walrus", SYNTAX, "`(z := ...)`", _grad(E.uses_walrus), Syntax, (":=",),
         E.uses_walrus),
    Kind("fstring", SYNTAX, "f-string formatting arrays", _grad(C.uses_fstring_of_array),
         Syntax, ("f-string",), C.uses_fstring_of_array),
    Kind("star-call", SYNTAX, "`np.add(*x)` over an array", _grad(C.uses_star_call), Syntax,
         ("`*`",), C.uses_star_call),
    Kind("kwargs-call", SYNTAX, "`np.sum(x, **OPTIONS)`", _grad(C.uses_double_star_call),
         Syntax, ("`**`",), C.uses_double_star_call),
    Kind("list-comprehension", SYNTAX, "list comprehension filtered by array values",
         _grad(E.uses_list_comprehension), Syntax, ("comprehension", "length"),
         E.uses_list_comprehension),
    Kind("dict-comprehension", SYNTAX, "dict comprehension",
         _grad(C.uses_dict_comprehension), Syntax, ("comprehension",),
         C.uses_dict_comprehension),
    Kind("generator-expression", SYNTAX, "generator expression filtered by array values",
         _grad(C.uses_generator_expression), Syntax, ("comprehension", "length"),
         C.uses_generator_expression),
    Kind("set", SYNTAX, "a set of run-time values", _grad(E.uses_set), Syntax, ("set",),
         E.uses_set),
    Kind("match", SYNTAX, "`match` of a run-time value with a capture, sequence, mapping "
         "or class pattern", _grad(C.uses_match), Syntax, ("`match`", "known only when"),
         C.uses_match),
    Kind("raise", SYNTAX, "`raise` beside other statements in a branch",
         _grad(E.uses_raise), Syntax, ("raise",),
         E.uses_raise),
    Kind("import", SYNTAX, "`import` inside the function", _grad(E.uses_import), Syntax,
         ("import",), E.uses_import),
    Kind("chained-assignment", SYNTAX, "`a[0] = b = ...`",
         _grad(E.uses_chained_assignment), Syntax, ("chained",),
         E.uses_chained_assignment),
    Kind("attribute-assignment", SYNTAX, "`y.shape = (3,)`",
         _grad(C.uses_attribute_assignment), Syntax, ("assigned",),
         C.uses_attribute_assignment),
    # -- names, returns, memory ----------------------------------------------------------
    Kind("bare-return-in-loop", NAMES, "`return` without a value inside a loop",
         _grad(E.uses_return_in_loop), Syntax, ("return",), E.uses_return_in_loop),
    Kind("falls-off-end", NAMES, "a path that returns nothing", _grad(E.falls_off_end),
         Syntax, ("return",), E.falls_off_end),
    Kind("undefined-name", NAMES, "a name defined nowhere",
         _grad(E.uses_undefined_name), Transform, ("undefined_scale_factor",),
         E.uses_undefined_name),
    Kind("maybe-unassigned", NAMES, "a name assigned on one branch only",
         _grad(E.uses_maybe_unassigned), Transform, ("`y`",), E.uses_maybe_unassigned),
    Kind("write-into-argument", NAMES, "`x[0] = 5.0` into an argument",
         _grad(E.uses_subscript_assignment), Syntax, ("argument",),
         E.uses_subscript_assignment),
    Kind("inplace-method", NAMES, "`x.sort()` on an argument",
         _grad(C.uses_inplace_method_on_argument), Syntax, ("is an argument",),
         C.uses_inplace_method_on_argument),
    Kind("global-append", NAMES, "`LOG.append(x)` into a module global",
         _grad(C.uses_global_list_append), Syntax, ("side effect",),
         C.uses_global_list_append),
    Kind("global-write", NAMES, "`STATE['calls'] = ...` into a module global",
         _grad(C.uses_global_dict_write), Syntax, ("local",), C.uses_global_dict_write),
    Kind("stale-view", NAMES, "reading a view after its base was written",
         _grad(E.writes_into_a_viewed_array), Syntax, ("shares memory",),
         E.writes_into_a_viewed_array),
    Kind("dict-run-time-key", NAMES, "`out[i] = v` into a dict with a key known only "
         "when the function runs", _grad(C.writes_dict_key_known_at_run_time), Syntax,
         ("known only when the function runs",), C.writes_dict_key_known_at_run_time),
    Kind("dict-keys-in-loop", NAMES, "a loop adding a key to a dict",
         _grad(C.changes_dict_keys_in_a_loop), Syntax, ("changes the keys",),
         C.changes_dict_keys_in_a_loop),
    Kind("dict-keys-on-one-path", NAMES, "an `if` on a value adding a key on one path",
         _grad(C.changes_dict_keys_on_one_path), Syntax, ("other keys",),
         C.changes_dict_keys_on_one_path),
    Kind("dict-write-shared", NAMES, "writing into a dict another name refers to",
         _grad(C.writes_a_shared_dict), Syntax, ("another name",), C.writes_a_shared_dict),
    Kind("function-bound-in-loop", NAMES, "a function bound only inside a loop over "
         "`range(n)`, called after it, when the loop ran no iteration (raised when the "
         "code runs, as Python's UnboundLocalError)",
         _grad_call(C.binds_a_function_in_a_loop, X, 0), UnboundFunctionError,
         ("ran no iteration", "UnboundLocalError"), C.binds_a_function_in_a_loop),
    # -- calls ---------------------------------------------------------------------------
    Kind("missing-rule", CALLS, "a differentiable NumPy function with no rule "
         "(`np.i0`)", _grad(C.uses_missing_rule), Call,
         ("np.i0", "numpy.i0", "no derivative rule"), C.uses_missing_rule),
    Kind("nondiff-no-rule", CALLS, "a piecewise-constant NumPy function with no rule "
         "(`np.digitize`)", _grad(C.uses_nondiff_without_rule), Call,
         ("np.digitize", "not differentiable"), C.uses_nondiff_without_rule,
         hint=r"^\s*Instead: compute it outside the function .*nondiff=True"),
    Kind("unknown-submodule", CALLS, "`np.polynomial.hermite.hermval`",
         _grad(E.uses_unknown_numpy), Call, ("np.polynomial.hermite.hermval",),
         E.uses_unknown_numpy),
    Kind("random", CALLS, "a random draw (`np.random.normal`) in a function the "
         "differentiated one calls: its VJP would draw again", _grad(C.uses_random),
         s2s.TransformError, ("random draw", "second time"), C._noisy),
    Kind("random-shuffle", CALLS, "`np.random.shuffle(y)`: a draw that writes into "
         "its argument", _grad(C.uses_random_shuffle), Call, ("shuffle", "in place"),
         C.uses_random_shuffle),
    Kind("opaque-callable", CALLS, "a library's callable object (`np.vectorize(abs)`)", _grad(E.uses_opaque_call), Call,
         ("OPAQUE",), E.uses_opaque_call),
    Kind("builtin-max", CALLS, "Python's `max` with `key=` over an array and a number",
         _grad(E.uses_builtin_max), s2s.errors.TruthValueError, ("truth value",),
         E.uses_builtin_max),
    Kind("tolist", CALLS, "`.tolist()`", _grad(C.uses_tolist), Call, ("tolist",),
         C.uses_tolist, hint=r"^\s*Instead: drop `\.tolist\(\)`"),
    Kind("string-method", CALLS, "`'abc'.encode()`", _grad(C.uses_string_method), Call,
         ("encode",), C.uses_string_method,
         hint=r"^\s*Instead: compute the str outside the function"),
    Kind("object-attribute", CALLS, "an attribute of a non-array argument (`cfg.scale`)",
         _grad_call(C.reads_object_attribute, X, C.PlainConfig(2.0)), Syntax,
         ("`.scale`", "not an attribute of NumPy arrays"), C.reads_object_attribute,
         hint=r"^\s*Instead: pass the value as an argument"),
    # -- inputs and outputs ---------------------------------------------------------------
    Kind("int-input", INPUTS, "integer array input to grad",
         _grad_call(C.scalar_out, np.arange(3)), TypeError, ("int64",),
         hint="use vjp", jax=lambda J: jax_grad(J.scalar_out)(np.arange(3))),
    Kind("bool-input", INPUTS, "boolean input to grad",
         _grad_call(C.scalar_out, np.array([True, False])), TypeError, ("bool",),
         hint="use vjp", jax=lambda J: jax_grad(J.scalar_out)(np.array([True, False]))),
    Kind("complex-output", INPUTS, "grad of a complex output without holomorphic=True",
         _grad_call(C.complex_out, X), TypeError, ("complex128", "holomorphic=True"),
         hint="vjp directly", jax=lambda J: jax_grad(J.complex_out)(X)),
    Kind("holomorphic-real-input", INPUTS, "grad(..., holomorphic=True) of a real input",
         lambda: s2s.grad(C.complex_out, holomorphic=True)(X), TypeError,
         ("holomorphic=True", "float64"), hint="complex dtype",
         jax=lambda J: jax_grad(J.complex_out, holomorphic=True)(X)),
    Kind("object-input", INPUTS, "object-dtype array input",
         _grad_call(C.scalar_out, np.array([1.0, 2.0], dtype=object)), TypeError,
         ("not a valid JAX type",), hint="valid",
         jax=lambda J: jax_grad(J.scalar_out)(np.array([1.0, 2.0], dtype=object)),
         compare="contains"),
    Kind("string-input", INPUTS, "a string argument", _grad_call(C.two_args, "a", X),
         TypeError, ("not a valid JAX type",), hint="valid",
         jax=lambda J: jax_grad(J.two_args)("a", X)),
    Kind("none-output", INPUTS, "grad of a function returning None",
         _grad_call(E.none_out), TypeError, ("scalar-output",), hint="scalar-output",
         jax=lambda J: jax_grad(J.none_out)(X)),
    Kind("int-output", INPUTS, "grad of a function returning an int",
         _grad_call(E.int_out), TypeError, ("int64",), hint="use jax.vjp",
         jax=lambda J: jax_grad(J.int_out)(X)),
    Kind("vector-output", INPUTS, "grad of a vector output", _grad_call(C.vector_out),
         TypeError, ("(3,)",), hint="scalar-output",
         jax=lambda J: jax_grad(J.vector_out)(X)),
    Kind("none-output-jacrev", INPUTS, "jacrev of a function returning None",
         _none(s2s.jacrev), ValueError, (), hint=r"array",
         jax=lambda J: jax_mod().jacrev(J.none_out)(X), compare="contains"),
    Kind("none-output-hessian", INPUTS, "hessian of a function returning None",
         _none(s2s.hessian), ValueError, (), hint=r"array",
         jax=lambda J: jax_mod().hessian(J.none_out)(X), compare="contains"),
    Kind("jvp-shape", INPUTS, "jvp tangent of another shape",
         lambda: s2s.jvp(C.scalar_out, (X,), (np.ones(2),)), ValueError, ("(2,)",),
         hint="primal shape",
         jax=lambda J: jax_mod().jvp(J.scalar_out, (X,), (np.ones(2),))),
    Kind("jvp-dtype", INPUTS, "jvp tangent of another dtype",
         lambda: s2s.jvp(C.scalar_out, (X,), (np.ones(3, np.float32),)), TypeError,
         ("float32",), hint="expected tangent dtype",
         jax=lambda J: jax_mod().jvp(J.scalar_out, (X,), (np.ones(3, np.float32),))),
    Kind("jvp-tree", INPUTS, "jvp tangents of another tree structure",
         lambda: s2s.jvp(C.two_args, (X, X), (X,)), TypeError, ("tree structure",),
         hint="same tree structure",
         jax=lambda J: jax_mod().jvp(J.two_args, (X, X), (X,))),
    Kind("jvp-not-tuple", INPUTS, "jvp primals not in a tuple",
         lambda: s2s.jvp(C.scalar_out, X, X), TypeError, ("tuples or lists",),
         hint="must be tuples or lists",
         jax=lambda J: jax_mod().jvp(J.scalar_out, X, X)),
    Kind("vjp-shape", INPUTS, "vjp cotangent of another shape",
         lambda: s2s.vjp(C.vector_out, X)[1](np.ones(2)), ValueError, ("float64[2]",),
         hint=r"expected float64\[3\]",
         jax=lambda J: jax_mod().vjp(J.vector_out, X)[1](np.ones(2))),
    Kind("vjp-tree", INPUTS, "vjp cotangent of another tree structure",
         lambda: s2s.vjp(E.tuple_out, X)[1]((1.0,)), ValueError, ("tree structure",),
         hint="tree structure",
         jax=lambda J: jax_mod().vjp(J.tuple_out, X)[1]((1.0,))),
    # -- transform arguments ---------------------------------------------------------------
    Kind("argnums-range", ARGS, "argnums past the arguments",
         lambda: s2s.grad(C.two_args, argnums=2)(X, X), TypeError, ("argnums=2",),
         hint="requires at least 3 positional arguments",
         jax=lambda J: jax_grad(J.two_args, argnums=2)(X, X)),
    Kind("argnums-negative", ARGS, "argnums below -len(args)",
         lambda: s2s.grad(C.two_args, argnums=-3)(X, X), ValueError, ("-3",),
         hint="greater than or equal to -len",
         jax=lambda J: jax_grad(J.two_args, argnums=-3)(X, X)),
    Kind("argnums-type", ARGS, "argnums a string", lambda: s2s.grad(C.two_args, argnums="x"),
         TypeError, ("argnums",), hint="an int or a tuple of ints"),
    Kind("in-axes-range", ARGS, "in_axes past the rank",
         lambda: s2s.vmap(C.vector_out, in_axes=1)(X), ValueError, ("axis 1",),
         hint="rank should be at least 2",
         jax=lambda J: jax_mod().vmap(J.vector_out, in_axes=1)(X)),
    Kind("in-axes-length", ARGS, "in_axes tuple of the wrong length",
         lambda: s2s.vmap(C.two_args, in_axes=(0,))(X, X), ValueError, ("len(in_axes)=1",),
         hint="an int, None, or a tuple",
         jax=lambda J: jax_mod().vmap(J.two_args, in_axes=(0,))(X, X)),
    Kind("in-axes-float", ARGS, "in_axes a float",
         lambda: s2s.vmap(C.two_args, in_axes=0.0)(X, X), TypeError, ("0.0",),
         hint="an int, None, or a tuple",
         jax=lambda J: jax_mod().vmap(J.two_args, in_axes=0.0)(X, X)),
    Kind("in-axes-string", ARGS, "in_axes a string",
         lambda: s2s.vmap(C.two_args, in_axes="a")(X, X), TypeError, ("in_axes",),
         hint="an int, None, or a tuple",
         jax=lambda J: jax_mod().vmap(J.two_args, in_axes="a")(X, X)),
    Kind("in-axes-all-none", ARGS, "every in_axes None",
         lambda: s2s.vmap(C.two_args, in_axes=None)(X, X), ValueError, ("non-None",),
         hint="non-None value in in_axes or axis_size",
         jax=lambda J: jax_mod().vmap(J.two_args, in_axes=None)(X, X)),
    Kind("axis-sizes", ARGS, "batch axes of different sizes",
         lambda: s2s.vmap(C.two_args)(X, np.ones(2)), ValueError, ("inconsistent sizes",),
         hint="one axis had size",
         jax=lambda J: jax_mod().vmap(J.two_args)(X, np.ones(2))),
    Kind("out-axes-range", ARGS, "out_axes past the output's rank",
         lambda: s2s.vmap(C.vector_out, out_axes=2)(XS), ValueError, ("axis 2",),
         hint="out of bounds", compare="contains",
         jax=lambda J: jax_mod().vmap(J.vector_out, out_axes=2)(XS)),
    Kind("out-axes-none", ARGS, "out_axes None for a batched output",
         lambda: s2s.vmap(C.vector_out, out_axes=None)(XS), ValueError, ("None",),
         hint="batched on axis 0",
         jax=lambda J: jax_mod().vmap(J.vector_out, out_axes=None)(XS)),
    Kind("out-axes-string", ARGS, "out_axes a string",
         lambda: s2s.vmap(C.vector_out, out_axes="x")(XS), TypeError, ("out_axes",),
         hint="an int, None, or",
         jax=lambda J: jax_mod().vmap(J.vector_out, out_axes="x")(XS)),
    Kind("static-argnums-range", ARGS, "jit static_argnums past the parameters",
         lambda: s2s.jit(C.scalar_out, static_argnums=3), ValueError, ("static_argnums",),
         hint="only accepts 1 positional",
         jax=lambda J: jax_mod().jit(J.scalar_out, static_argnums=3), compare="contains"),
    # -- source ----------------------------------------------------------------------------
    Kind("exec", SOURCE, "a function built with exec()", lambda: s2s.grad(made_by_exec()),
         Source, ("cannot be found",)),
    Kind("builtin", SOURCE, "a builtin (`len`)", lambda: s2s.grad(len), Source,
         ("no source",)),
    Kind("numpy-function", SOURCE, "a NumPy function without a rule (`np.histogram`) "
         "passed as f (one with a rule, `np.sin`, is accepted)",
         lambda: s2s.grad(np.histogram), Source, ("no source",)),
    Kind("deleted-file", SOURCE, "the function's file deleted after import",
         lambda: s2s.grad(deleted_on_disk()), Source, ("cannot be found",)),
    Kind("changed-file", SOURCE, "the function's file edited after import",
         _changed_on_disk_grad, Source, ("changed",),
         hint=r"Instead: .*(reload|restart)"),
    # -- jit ------------------------------------------------------------------------------
    Kind("jit-global-mutation", JIT, "appending to a module global under s2s.jit (JAX)",
         _jit_side_effect(C.uses_global_list_append, "jax"), Syntax, ("side effect",),
         C.uses_global_list_append),
]


# ---- JAX, when installed ------------------------------------------------------------------


def jax_mod() -> Any:
    import jax

    return jax


def jax_grad(*args: Any, **kwargs: Any) -> Any:
    return jax_mod().grad(*args, **kwargs)


def _sanitize(text: str) -> str:
    text = re.sub(r"0x[0-9a-f]+", "0x…", text)
    return re.sub(r"'/[^']*/([^/']+)'", r"'…/\1'", text)


def render(results: dict[str, BaseException | None]) -> str:
    """docs/errors.md from the catalogue and what each kind raised."""
    out = [
        "# Errors s2s raises",
        "",
        "Generated by `python tools/errors_doc.py` from `tests/error_catalogue.py`; "
        "`tests/test_error_catalogue.py` fails when this file is stale.",
        "",
        "Every error about the user's program is a `s2s.TransformError` (subclasses "
        "`UnsupportedSyntaxError`, `UnsupportedCallError`, `SourceNotFoundError`, "
        "`NonDifferentiableError`): its message names the function, then file, line "
        "and column, quotes the line with a caret under the column, and ends with "
        "`Instead:` and what to write.  Misuse JAX itself reports raises JAX's class "
        "with JAX's first line (the test runs the same call through JAX).",
        "",
        "*Open* rows are kinds s2s answers wrongly or unclearly today; each is a strict "
        "xfail in the test, naming the fix.",
        "",
        "Numbers that are not errors (NaN and inf gradients, ties, integer and float32 "
        "inputs) are on [the sharp bits page](sharp-bits.md), each with s2s's value "
        "and JAX's.",
        "",
        f"{len(CATALOGUE)} kinds, {sum(k.open is not None for k in CATALOGUE)} open.",
    ]
    sections: list[str] = []
    for k in CATALOGUE:
        if k.section not in sections:
            sections.append(k.section)
    for section in sections:
        out += ["", f"## {section}", "", "| kind | bad input | raises | says instead |",
                "|---|---|---|---|"]
        for k in CATALOGUE:
            if k.section != section:
                continue
            err = results.get(k.id)
            if k.open:
                says = "*open*: " + k.open
            elif isinstance(err, s2s.TransformError) and err.hint:
                says = err.hint
            elif err is not None:
                says = "“" + str(err).splitlines()[0] + "”"
            else:
                says = ""
            says = _sanitize(says).replace("|", "\\|")
            out.append(f"| `{k.id}` | {k.what.replace('|', '/')} | `{k.error.__name__}`"
                       f" | {says} |")
    return "\n".join(out) + "\n"


def run_kind(k: Kind) -> BaseException | None:
    try:
        k.run()
    except BaseException as err:  # noqa: BLE001 - the catalogue records what it got
        return err
    return None
