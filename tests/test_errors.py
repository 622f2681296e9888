"""Bad input is refused clearly.

Unsupported source is refused when the transform is requested, with an error that
points at the user's file, line and column, quotes the line, puts a caret under the
column and says what to write instead.  Misuse that JAX itself reports (a non-scalar
output, integer inputs, a bad cotangent, ...) raises JAX's exception class with JAX's
wording; every such case runs the same call through real JAX and compares.
"""

from __future__ import annotations

import inspect
import re
from typing import Callable

import error_fns as E
import numpy as np
import pytest
from support import HAVE_JAX, jax, jax_twin

import s2s

# ---- locating the expected error -----------------------------------------------------

_MARKER = re.compile(r"#\s*ERR(?::\s*(?P<anchor>.+?))?\s*$")
_WHERE = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), column (?P<col>\d+)')


def marked_location(fn: Callable) -> tuple[int, int, str]:
    """(line, 1-based column, line text) of the ``# ERR`` marker in ``fn``'s source."""
    lines, first = inspect.getsourcelines(fn)
    hits = [(i, m) for i, text in enumerate(lines) if (m := _MARKER.search(text))]
    assert len(hits) == 1, f"{fn.__name__} needs exactly one # ERR marker"
    i, m = hits[0]
    text = lines[i].rstrip("\n")
    code = text[: m.start()]
    anchor = m.group("anchor")
    col = code.index(anchor) + 1 if anchor else len(code) - len(code.lstrip()) + 1
    return first + i, col, text


def assert_points_at(err: s2s.TransformError, fn: Callable) -> None:
    """``str(err)`` names the file, line and column of the marker, quotes the line,
    has a caret under the column and an ``Instead:`` hint."""
    line, col, text = marked_location(fn)
    message = str(err)
    where = _WHERE.search(message)
    assert where, f"no file/line/column in:\n{message}"
    assert where["file"] == E.__file__, message
    assert (int(where["line"]), int(where["col"])) == (line, col), message

    rows = message.splitlines()
    quoted = [i for i, row in enumerate(rows) if row.strip() == text.strip()]
    assert quoted, f"the offending line is not quoted:\n{message}"
    caret_row = rows[quoted[0] + 1]
    assert caret_row.strip() == "^", f"no caret line under the quote:\n{message}"
    # the caret stands under the character the column names
    quote = rows[quoted[0]]
    caret = caret_row.index("^")
    shift = (len(text) - len(text.lstrip())) - (len(quote) - len(quote.lstrip()))
    assert caret + shift == col - 1, message

    assert re.search(r"^\s*Instead: \S", message, re.M), f"no hint:\n{message}"


# ---- unsupported constructs: refused at transform time -------------------------------

Syntax, Call, Transform = (
    s2s.UnsupportedSyntaxError,
    s2s.UnsupportedCallError,
    s2s.TransformError,
)

# (function, the error class, a word the message must contain)
UNSUPPORTED = [
    (E.uses_try, Syntax, "try"),
    (E.uses_with, Syntax, "with"),
    (E.uses_return_in_loop, Syntax, "`return` without a value"),
    (E.uses_class, Syntax, "class"),
    (E.uses_global, Syntax, "global"),
    (E.uses_nonlocal, Syntax, "nonlocal"),
    (E.uses_del, Syntax, "del"),
    (E.uses_raise, Syntax, "raise"),
    (E.uses_import, Syntax, "import"),
    (E.uses_import_from, Syntax, "import"),
    (E.uses_yield, Syntax, "yield"),
    (E.uses_async, Syntax, "async"),
    (E.uses_list_comprehension, Syntax, "comprehension"),
    (E.uses_set, Syntax, "set"),
    (E.uses_fstring, Syntax, "f-string"),
    (E.uses_walrus, Syntax, ":="),
    (E.uses_chained_assignment, Syntax, "chained"),
    (E.uses_subscript_assignment, Syntax, "`x` is an argument"),
    (E.writes_into_a_viewed_array, Syntax, "`tail` shares memory with `y`, written into"),
    (E.reads_a_view_in_a_later_iteration, Syntax, "from the second iteration on"),
    (E.writes_where_a_loop_may_rebind_to_an_argument, Syntax,
     "may hold an array this function did not make"),
    (E.adds_into_an_argument, Syntax, "`x` is an argument"),
    (E.reverses_an_enumeration, Syntax, "reversed() is supported over range(...)"),
    (E.uses_bare_expression, Syntax, "expression statement"),
    (E.uses_unknown_numpy, Call, "np.polynomial.hermite.hermval"),
    (E.uses_opaque_call, Call, "OPAQUE"),
    (E.uses_undefined_name, Transform, "undefined_scale_factor"),
    (E.uses_maybe_unassigned, Transform, "`y`"),
    (E.falls_off_end, Syntax, "return"),
    (E.never_returns, Syntax, "return"),
]


def _id(entry) -> str:
    return entry.id if hasattr(entry, "marks") else entry[0].__name__


@pytest.mark.parametrize(
    "fn, error, word", UNSUPPORTED, ids=[_id(e) for e in UNSUPPORTED]
)
def test_unsupported_construct_is_refused_at_transform_time(fn, error, word) -> None:
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(fn)  # transform only: the result is never called
    err = info.value
    assert isinstance(err, error), f"{type(err).__name__}: {err}"
    first = str(err).splitlines()[0]
    assert fn.__name__ in first, first  # names the function it could not transform
    assert word in first, first
    assert_points_at(err, fn)


def test_a_name_bound_only_in_a_loop_is_read_after_it_as_python_reads_it() -> None:
    """(refused at transform time until probe4's names bound in a loop: the slow
    tier still expected the refusal) The last iteration's value, against the
    closed form ``d sum(2 x[-1]) / dx``; a loop that runs no iteration is Python's
    UnboundLocalError, at the loop."""
    g = s2s.grad(E.uses_loop_value_after_loop)
    for x in (np.array([1.0, 2.0, 3.0]), np.array([-0.5]), np.array([4.0, 1.0])):
        want = np.zeros_like(x)
        want[-1] = 2.0
        np.testing.assert_array_equal(g(x), want)
    with pytest.raises(UnboundLocalError) as err:
        g(np.zeros(0))
    assert err.value.loc.file == E.__file__ and "for v in x:" in err.value.loc.text


def test_builtin_max_with_a_key_is_python_s_max() -> None:
    """``max(x, 0.0, key=abs)`` transforms (built-in max/min with ``key=`` on run-time
    values, tests/frontend/test_runtime_builtins.py): on a number it is Python's max,
    checked against JAX; on an array its comparison has no truth value, as in plain
    NumPy, refused at the call at the user's line (no longer at transform time)."""
    g = s2s.grad(E.uses_builtin_max)
    for x in (-1.5, 0.75):
        np.testing.assert_allclose(g(x), 1.0)
        if HAVE_JAX:
            np.testing.assert_allclose(g(x), jax.grad(jax_twin(E).uses_builtin_max)(x))
    with pytest.raises(ValueError):
        E.uses_builtin_max(np.array([0.5, -2.0]))  # (plain Python refuses it too)
    with pytest.raises(s2s.TransformError) as info:
        g(np.array([0.5, -2.0]))
    assert "truth value" in str(info.value).splitlines()[0], str(info.value)
    assert_points_at(info.value, E.uses_builtin_max)


@pytest.mark.parametrize(
    "make",
    [s2s.value_and_grad, lambda f: s2s.vjp(f, np.ones(3))],
    ids=["value_and_grad", "vjp"],
)
def test_every_transform_refuses_unsupported_syntax(make) -> None:
    with pytest.raises(s2s.UnsupportedSyntaxError) as info:
        make(E.uses_return_in_loop)
    assert_points_at(info.value, E.uses_return_in_loop)


def test_error_inside_a_called_helper_names_the_helper() -> None:
    with pytest.raises(s2s.UnsupportedSyntaxError) as info:
        s2s.grad(E.calls_broken_helper)
    message = str(info.value)
    assert "broken_helper" in message.splitlines()[0]
    assert_points_at(info.value, E.broken_helper)


def test_transform_errors_are_exceptions_with_the_documented_hierarchy() -> None:
    for cls in (
        s2s.UnsupportedSyntaxError,
        s2s.UnsupportedCallError,
        s2s.SourceNotFoundError,
        s2s.NonDifferentiableError,
    ):
        assert issubclass(cls, s2s.TransformError)
    assert issubclass(s2s.TransformError, Exception)
    # a TransformError is not a TypeError/ValueError: JAX-style misuse is kept apart
    assert not issubclass(s2s.TransformError, (TypeError, ValueError))


# ---- no source to read ---------------------------------------------------------------


def _says_no_source(message: str) -> bool:
    return "cannot be found" in message or "no source" in message


def test_function_built_with_exec_has_no_source() -> None:
    namespace = {"np": np}
    exec("def made_by_exec(x):\n    return np.sum(x ** 2)\n", namespace)
    fn = namespace["made_by_exec"]
    assert fn(np.ones(2)) == 2.0  # a working function, only its source is missing
    with pytest.raises(s2s.SourceNotFoundError) as info:
        s2s.grad(fn)
    message = str(info.value)
    assert "made_by_exec" in message and _says_no_source(message), message
    assert "Instead:" in message


def test_lambda_built_with_eval_has_no_source() -> None:
    fn = eval("lambda x: x * 2.0", {})
    with pytest.raises(s2s.SourceNotFoundError) as info:
        s2s.grad(fn)
    assert _says_no_source(str(info.value)), str(info.value)


@pytest.mark.parametrize(
    "fn",
    [len, np.histogram, np.lexsort],
    ids=["len", "np.histogram", "np.lexsort"],
)
def test_builtin_or_library_function_has_no_source(fn) -> None:
    """A library function s2s has no rule for (NumPy functions with one are accepted,
    as jax.grad(jnp.sin) is: tests/frontend/test_functions_as_values.py)."""
    with pytest.raises(s2s.SourceNotFoundError) as info:
        s2s.grad(fn)
    message = str(info.value)
    assert "source" in message and _says_no_source(message), message


def test_transforming_a_non_callable_is_a_type_error_like_jax() -> None:
    with pytest.raises(TypeError) as ours:
        s2s.grad(3)
    if HAVE_JAX:
        with pytest.raises(TypeError) as theirs:
            jax.grad(3)
        assert str(ours.value) == str(theirs.value)


# ---- JAX-compatible misuse: JAX's exception class, JAX's wording ---------------------

X = np.array([0.5, -1.0, 2.0])


@pytest.fixture(scope="module")
def J():
    if not HAVE_JAX:
        pytest.skip("needs jax to compare error messages")
    return jax_twin(E)


def first_line(err: BaseException) -> str:
    return str(err).splitlines()[0] if str(err) else ""


def same_error(ours: Callable, theirs: Callable, prefix: str | None = None) -> None:
    """Both raise; ours is an instance of JAX's class and its first line is JAX's
    first line (or, where JAX prints traced values, starts with the same ``prefix``)."""
    with pytest.raises(Exception) as jax_info:
        theirs()
    jax_error = jax_info.value
    with pytest.raises(type(jax_error)) as our_info:
        ours()
    a, b = first_line(our_info.value), first_line(jax_error)
    if prefix is None:
        assert a == b
    else:
        assert b.startswith(prefix), f"the JAX oracle changed: {b}"
        assert a.startswith(prefix), a


def test_non_scalar_output(J) -> None:
    same_error(lambda: s2s.grad(E.vector_out)(X), lambda: jax.grad(J.vector_out)(X))
    same_error(
        lambda: s2s.value_and_grad(E.vector_out)(X),
        lambda: jax.value_and_grad(J.vector_out)(X),
    )


def test_non_scalar_output_message_is_exactly_jaxs(J) -> None:
    with pytest.raises(
        TypeError,
        match=re.escape(
            "Gradient only defined for scalar-output functions. Output had shape: (3,)."
        ),
    ):
        s2s.grad(E.vector_out)(X)


def test_shape_one_output_is_not_a_scalar(J) -> None:
    same_error(
        lambda: s2s.grad(E.shape_one_out)(X), lambda: jax.grad(J.shape_one_out)(X)
    )


def test_tuple_output_without_has_aux(J) -> None:
    prefix = "Gradient only defined for scalar-output functions. Output was"
    same_error(
        lambda: s2s.grad(E.tuple_out)(X), lambda: jax.grad(J.tuple_out)(X), prefix
    )
    same_error(
        lambda: s2s.value_and_grad(E.tuple_out)(X),
        lambda: jax.value_and_grad(J.tuple_out)(X),
        prefix,
    )


def test_none_output(J) -> None:
    same_error(lambda: s2s.grad(E.none_out)(X), lambda: jax.grad(J.none_out)(X))


def test_integer_output(J) -> None:
    same_error(lambda: s2s.grad(E.int_out)(X), lambda: jax.grad(J.int_out)(X))


@pytest.mark.parametrize(
    "value",
    [np.arange(3), 3, np.array([True, False]), True],
    ids=["int_array", "python_int", "bool_array", "python_bool"],
)
def test_integer_or_bool_input(J, value) -> None:
    same_error(
        lambda: s2s.grad(E.scalar_out)(value), lambda: jax.grad(J.scalar_out)(value)
    )
    same_error(
        lambda: s2s.value_and_grad(E.scalar_out)(value),
        lambda: jax.value_and_grad(J.scalar_out)(value),
    )


def test_integer_leaf_inside_a_pytree_input(J) -> None:
    tree = {"a": X, "b": np.arange(3)}
    same_error(lambda: s2s.grad(E.tree_in)(tree), lambda: jax.grad(J.tree_in)(tree))


def test_argnums_out_of_range(J) -> None:
    same_error(
        lambda: s2s.grad(E.two_args, argnums=2)(X, X),
        lambda: jax.grad(J.two_args, argnums=2)(X, X),
    )


def test_differentiated_argument_passed_by_keyword(J) -> None:
    same_error(lambda: s2s.grad(E.scalar_out)(x=X), lambda: jax.grad(J.scalar_out)(x=X))


def test_argnums_tuple_out_of_range(J) -> None:
    same_error(
        lambda: s2s.grad(E.two_args, argnums=(0, 5))(X, X),
        lambda: jax.grad(J.two_args, argnums=(0, 5))(X, X),
    )


def test_negative_argnums_in_range_works_like_jax(J) -> None:
    ours = s2s.grad(E.two_args, argnums=-1)(X, 2 * X)
    theirs = jax.grad(J.two_args, argnums=-1)(X, 2 * X)
    np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-12)


def test_negative_argnums_out_of_range(J) -> None:
    same_error(
        lambda: s2s.grad(E.two_args, argnums=-3)(X, X),
        lambda: jax.grad(J.two_args, argnums=-3)(X, X),
    )


def test_argnums_of_the_wrong_type(J) -> None:
    same_error(
        lambda: s2s.grad(E.scalar_out, argnums=1.0),
        lambda: jax.grad(J.scalar_out, argnums=1.0),
    )


def test_string_argument(J) -> None:
    same_error(
        lambda: s2s.grad(E.two_args)("hello", X),
        lambda: jax.grad(J.two_args)("hello", X),
    )


def test_string_argument_is_a_type_error(J) -> None:
    with pytest.raises(TypeError, match="is not a valid JAX type"):
        s2s.grad(E.two_args)("hello", X)


# has_aux: s2s may raise when the transform is requested or at the first call; JAX
# raises at the call and prints the traced value, so only the prefix is compared.
AUX = "expected function with aux output to return a two-element tuple, but got"


@pytest.mark.parametrize("name", ["scalar_out", "three_tuple"])
def test_has_aux_without_a_pair(J, name) -> None:
    ours, theirs = getattr(E, name), getattr(J, name)
    same_error(
        lambda: s2s.grad(ours, has_aux=True)(X),
        lambda: jax.grad(theirs, has_aux=True)(X),
        AUX,
    )
    same_error(
        lambda: s2s.value_and_grad(ours, has_aux=True)(X),
        lambda: jax.value_and_grad(theirs, has_aux=True)(X),
        AUX,
    )
    same_error(
        lambda: s2s.vjp(ours, X, has_aux=True),
        lambda: jax.vjp(theirs, X, has_aux=True),
        AUX,
    )


def test_has_aux_accepts_a_list_pair_like_jax(J) -> None:
    grads, aux = s2s.grad(E.list_aux, has_aux=True)(X)
    jgrads, jaux = jax.grad(J.list_aux, has_aux=True)(X)
    np.testing.assert_allclose(grads, np.asarray(jgrads), rtol=1e-12)
    np.testing.assert_allclose(aux, np.asarray(jaux), rtol=1e-12)


# vjp_fn checks its cotangent exactly, as jax.vjp does.


@pytest.mark.parametrize(
    "name, cotangent",
    [
        ("vector_out", np.ones(2)),  # shape
        ("vector_out", np.ones(3, np.float32)),  # dtype
        ("vector_out", 1.0),  # a scalar for a vector
        ("vector_out", (np.ones(3),)),  # tree: a tuple around the leaf
        ("vector_out", [np.ones(3)]),
        ("tuple_out", (1.0,)),  # tree: too short
        ("tuple_out", [1.0, 2.0]),  # tree: list for tuple
        ("tuple_out", (1, 2)),  # dtype: int for float
        ("tuple_out", (1.0, np.ones(3))),  # shape inside a tree
        ("dict_out", {"a": np.ones(3), "c": 1.0}),  # tree: wrong key
        ("dict_out", {"a": np.ones(3)}),  # tree: missing key
    ],
    ids=[
        "shape",
        "dtype",
        "scalar_for_vector",
        "tuple_around_leaf",
        "list_around_leaf",
        "short_tuple",
        "list_for_tuple",
        "int_dtype_in_tree",
        "shape_in_tree",
        "wrong_key",
        "missing_key",
    ],
)
def test_vjp_cotangent_checked_like_jax(J, name, cotangent) -> None:
    _, ours = s2s.vjp(getattr(E, name), X)
    _, theirs = jax.vjp(getattr(J, name), X)
    same_error(lambda: ours(cotangent), lambda: theirs(cotangent))


def test_an_iterator_where_s2s_does_not_walk_it_says_where_it_does() -> None:
    """A ``zip(...)`` kept in a name and walked twice, or given to ``len``: refused,
    located, saying where ``zip`` is supported (it said "`zip` is a class;
    constructing objects is not supported", probe 8; ``zip(x, zip(y, z))`` and
    ``sorted(zip(...))`` run since iter14, a kept zip walked once by a loop since
    internal14b)."""
    import iterator_place_fns as F

    for fn in (F.kept_zip, F.len_of_zip):
        with pytest.raises(s2s.TransformError) as info:
            s2s.grad(fn)(np.ones(3))
        text = str(info.value)
        assert "`zip(...)` is supported as what a `for` loop" in text
        assert "iterator_place_fns.py" in text and "is a class" not in text
