"""Unpacking into names a tuple or list whose width s2s knows when it transforms the
call but which is not the number of names: `for a, b in pts` over 3-tuples appended
in a loop, `a, b = pts[0]`, `a, b = t` of a tuple argument, list literals, zip's and
enumerate's items. Python raises ValueError ("too many values to unpack (expected 2)",
"not enough values to unpack (expected 2, got 1)"); so does s2s, with Python's
message, located at the user's line, under grad, jvp, vmap, jacrev and s2s.jit on
both backends (it returned a number from the first items before).

The oracle for each error is Python running the same source (its message, its
line); for the right widths, JAX on the same source (jax_twin), float64 and float32.
The lines that unpack carry `# unpacks` in unpack_width_fns.py."""

from __future__ import annotations

import inspect
import traceback

import numpy as np
import pytest
import stmt_checks as C
import unpack_width_fns as F
from support import HAVE_JAX

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    from support import compiled, jax_twin

    J = jax_twin(F)

X = np.array([0.3, -0.5, 2.0, 0.1])
WRONG = [("grown_triples", ()), ("grown_singles", ()), ("grown_item", ()),
         ("passes_triple", ()), ("tuple_argument", ((0.5, 2.0, 3.0),)),
         ("tuple_argument", ((0.5,),)), ("rows_argument", ([(1.0, 2.0, 3.0)] * 2,)),
         ("rows_argument", ([(1.0, 2.0), (1.0, 2.0, 3.0)],)),
         ("named_tuple_argument", (F.Scales(0.5, 2.0, 3.0),)), ("literal_list_loop", ()),
         ("literal_in_loop_header", ()), ("list_literal_assigned", ()),
         ("tuple_literal_too_short", ()), ("starred_too_short", ()), ("zipped_three", ()),
         ("enumerated_three_names", ()), ("enumerated_zip", ()), ("nested_pair", ())]
WRONG_IDS = [f"{name}{len(rest[0]) if rest else ''}" + (
    "_mixed" if rest and isinstance(rest[0], list) and len({len(r) for r in rest[0]}) > 1
    else "") for name, rest in WRONG]
TRANSFORMS = ["grad", "jvp", "vmap", "jacrev", "jit_numpy", "jit_jax"]
RIGHT = [("grown_pairs", ()), ("grown_pair_item", ()), ("passes_pair", ()),
         ("pair_argument", ()), ("pair_argument", ((3.0, 0.25),)),
         ("literal_pairs_loop", ()), ("zipped_two", ()), ("enumerated_zip_two", ()),
         ("nested_pairs", ()), ("starred_rest", ())]
RIGHT_IDS = [f"{name}{len(rest)}" for name, rest in RIGHT]


def _unpacking_line(f) -> int:
    """The line of ``f``'s own file marked `# unpacks` in ``f`` (or the function it
    calls: `_product`)."""
    for fn in (f, F._product):
        lines, first = inspect.getsourcelines(fn)
        marked = [first + i for i, text in enumerate(lines) if "# unpacks" in text]
        if marked:
            return marked[0]
    raise AssertionError(f"no `# unpacks` line for {f.__name__}")


def _python_error(name, rest) -> ValueError:
    with pytest.raises(ValueError) as err:
        getattr(F, name)(X, *rest)
    return err.value


def _run(transform, f, rest):
    if transform == "grad":
        return s2s.grad(f)(X, *rest)
    if transform == "jvp":  # (a tuple argument passed as itself, zero tangents)
        import jax

        zeros = tuple(jax.tree_util.tree_map(lambda _: 0.0, r) for r in rest)
        return s2s.jvp(f, (X, *rest), (np.ones_like(X), *zeros))
    if transform == "vmap":
        in_axes = (0,) + (None,) * len(rest)
        return s2s.vmap(f, in_axes=in_axes)(np.stack([X, -X, 0.5 * X]), *rest)
    if transform == "jacrev":
        return s2s.jacrev(f)(X, *rest)
    backend = transform.removeprefix("jit_")
    static = tuple(i for i, r in enumerate(rest, 1) if type(r) is tuple)  # (hashable)
    return s2s.jit(f, backend=backend, static_argnums=static)(X, *rest)


def _check_error(err, name, rest) -> None:
    """Python's ValueError with Python's message, located at the unpacking line:
    s2s's located error (file, line, column, the quoted line), or Python's own
    traceback where the transform ran the function in Python first (jacrev, jit)."""
    want = _python_error(name, rest)
    line = _unpacking_line(getattr(F, name))
    assert isinstance(err, ValueError), err
    if isinstance(err, s2s.TransformError):
        assert err.what == str(want), (err.what, str(want))
        assert (err.loc.file, err.loc.line) == (F.__file__, line), err
        assert "# unpacks" in err.loc.text and err.loc.text[err.loc.col - 1:].strip(), err
        text = str(err)
        assert f'File "{F.__file__}", line {line}, column {err.loc.col}' in text, text
        assert err.loc.text.strip() in text and "<s2s" not in text, text
    else:
        assert str(err) == str(want), (str(err), str(want))
        frame = traceback.extract_tb(err.__traceback__)[-1]
        assert (frame.filename, frame.lineno) == (F.__file__, line), frame


@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("name, rest", WRONG, ids=WRONG_IDS)
def test_wrong_width_is_pythons_error(name, rest, transform) -> None:
    """Every wrong width under every transform: never a number."""
    f = getattr(F, name)
    for _ in range(2):  # (the second call: the cached transform refuses it again)
        with pytest.raises(ValueError) as err:
            _run(transform, f, rest)
        _check_error(err.value, name, rest)


def test_every_wrong_width_under_grad() -> None:
    """All the cases in the default tier (the sweep above samples them, and runs every
    transform under -m slow): grad refuses each one when it transforms it, at the
    unpacking line."""
    for name, rest in WRONG:
        for transform in ("grad",):
            with pytest.raises(s2s.TransformError) as err:
                _run(transform, getattr(F, name), rest)
            _check_error(err.value, name, rest)


def test_a_right_width_then_a_wrong_one() -> None:
    """A call of the right width, then one of another width: each call is checked
    against its own structure (a tuple argument of 2, then 3 items)."""
    grad = s2s.grad(F.tuple_argument)
    for t in ((0.5, 2.0), (0.5, 2.0, 3.0)):
        if len(t) == 2:
            np.testing.assert_allclose(grad(X, t), np.full_like(X, t[0] * t[1]))
            continue
        with pytest.raises(ValueError) as err:
            grad(X, t)
        _check_error(err.value, "tuple_argument", (t,))


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name, rest", RIGHT, ids=RIGHT_IDS)
def test_right_widths_against_jax(name, rest, dtype) -> None:
    """value_and_grad, jvp and vjp of the right widths equal JAX's."""
    C.grads(F, J, name, X, rest, dtype)


def test_the_reported_loop_at_its_right_width() -> None:
    """The reported loop (`for a, b in pts` over a grown list) of pairs: its gradient
    against JAX's, float64 and float32, in the default tier (the sweeps above, all the
    right widths under every transform, run under -m slow)."""
    import jax

    for name, rest in RIGHT[:1]:
        for dtype in (np.float64, np.float32):
            x = X.astype(dtype)
            got = s2s.grad(getattr(F, name))(x, *rest)
            assert np.asarray(got).dtype == dtype, (name, dtype)
            want = compiled(jax.grad(getattr(J, name)))(x, *rest)
            C.close(got, want, dtype, name)


@pytest.mark.slow
@pytest.mark.parametrize("name, rest", RIGHT, ids=RIGHT_IDS)
def test_right_widths_jacrev_vmap_jit(name, rest) -> None:
    """jacrev, vmap (of grad) and s2s.jit on both backends of the right widths."""
    import jax

    f, jf = getattr(F, name), getattr(J, name)
    C.close(s2s.jacrev(f)(X, *rest), jax.jacrev(jf)(X, *rest), np.float64, "jacrev")
    C.vmapped(F, name, np.stack([X, -X, 0.5 * X + 0.1]), rest, np.float64)
    C.jitted(F, J, name, X, rest)


def test_a_tuple_passed_by_keyword() -> None:
    """A tuple passed by keyword is typed as an array when s2s transforms the call, so
    its width is checked where the code runs (frontend/unpacking.py's kept check)."""
    with pytest.raises(ValueError) as err:
        s2s.grad(F.tuple_argument)(X, t=(0.5, 2.0, 3.0))
    _check_error(err.value, "tuple_argument", ((0.5, 2.0, 3.0),))
