"""Reading items of a list grown in a loop other than its last (issue 23): `hs[0]`,
`hs[k]` for an integer argument, `hs[-2]`, `hs[i]` in a later loop, `for h in hs`,
`zip(hs, cs)`, `sum(hs)`, slices (`hs[1:]`), an earlier item read inside the loop
that grows the list (`hs[i - 1]`), the last item read where the list grows after;
and `hs[k] = v` into such a list, which reverse mode's own code writes
(`hs_bar[k] = hs_bar[k] + g`), so second derivatives read it again.

Every value against JAX on the same source (jax_twin), float64 and float32: grad,
value_and_grad, jvp, vjp (stmt_checks.grads), jacfwd, jacrev, hessian, vmap, vmap of
grad, jvp of grad, grad of a function calling grad, s2s.jit on both backends;
adversarial calls below."""

from __future__ import annotations

import grown_read_fns as F
import numpy as np
import pytest
import stmt_checks as C
from support import HAVE_JAX, compiled, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)

X = np.array([0.3, -0.5, 2.0, 0.1])
CASES = [("first_two", ()), ("index_argument", ()), ("index_argument", (2,)),
         ("index_argument", (-3,)), ("later_loop", ()), ("for_items", ()),
         ("enumerated", ()), ("zipped", ()), ("summed", ()), ("sliced", ()), ("earlier_in_loop", ()),
         ("two_back", ()), ("two_back", (0,)), ("two_back", (1,)),
         ("last_then_grows", ()), ("count_argument", (0, 0)),
         ("count_argument", (1, -1)), ("count_argument", (10, 4)), ("with_break", ()),
         ("same_item_twice", ()), ("module_index", ()), ("assigns_item", ()),
         ("pairs_item", ()), ("stacked_and_items", ()), ("grows_after_later_loop", ()),
         ("read_then_grown_at_top", ()),
         ("caller", ())]
IDS = [f"{name}{rest}" for name, rest in CASES]
TRANSFORMS = ["jacfwd", "jacrev", "hessian", "vmap", "vmap_grad", "jvp_grad", "grad_grad"]
SWEPT = [t if t != "hessian" else pytest.param(t, marks=pytest.mark.slow) for t in TRANSFORMS]
# (hessians in the default tier: test_the_rows_function; all of them under -m slow)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name, rest", CASES, ids=IDS)
def test_grads_against_jax(name, rest, dtype) -> None:
    C.grads(F, J, name, X, rest, dtype)


def _pair(transform, f, jf):
    """The s2s transform of ``f`` and JAX's of ``jf``."""
    if transform == "vmap_grad":
        return s2s.vmap(s2s.grad(f)), jax.vmap(jax.grad(jf))
    if transform == "jvp_grad":
        t = np.linspace(-1.0, 0.7, X.size)
        return (lambda x: s2s.jvp(s2s.grad(f), (x,), (t.astype(x.dtype),))[1],
                lambda x: jax.jvp(jax.grad(jf), (x,), (t.astype(x.dtype),))[1])
    if transform == "grad_grad":  # reverse mode over the emitted `hs_bar[k] = ...`
        g = s2s.grad(f)
        return (s2s.grad(lambda x: np.sum(np.sin(x) * g(x))),
                jax.grad(lambda x: jax.numpy.sum(jax.numpy.sin(x) * jax.grad(jf)(x))))
    return getattr(s2s, transform)(f), getattr(jax, transform)(jf)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("transform", SWEPT)
@pytest.mark.parametrize("name, rest", CASES, ids=IDS)
def test_transforms_against_jax(name, rest, transform, dtype) -> None:
    """vmap over 5 examples (not the trip count 3: `len(hs)` under vmap was the batch
    size), twice (the second call runs the specialized code)."""
    if name == "with_break" and transform in ("vmap", "vmap_grad", "jacrev"):
        pytest.skip("the loop's exit depends on batched values: test_with_break_under_vmap")
    f, jf = C.bind(getattr(F, name), rest), C.bind(getattr(J, name), rest)
    x = C.cast(X, dtype)
    got_fn, want_fn = _pair(transform, f, jf)
    arg = np.stack([x, 0.5 * x, -x, x + 0.25, 0.1 * x]) if transform.startswith(
        "vmap") else x
    want = compiled(want_fn)(arg)  # (with_break's `if` on a value: op by op)
    for _ in range(2):
        C.close(got_fn(arg), want, dtype, transform)


@pytest.mark.slow
def test_the_rows_function() -> None:
    """The function of docs/python-subset.md's row (`hs[0] * hs[1]`) in the default
    tier whatever the sweeps above sample: the gradients, and the second
    derivatives that read the emitted `hs_bar[k] = ...` again."""
    C.grads(F, J, "first_two", X, (), np.float64)
    for transform in ("hessian", "grad_grad", "vmap_grad"):
        got_fn, want_fn = _pair(transform, F.first_two, J.first_two)
        arg = np.stack([X, -X, 0.5 * X]) if transform.startswith("vmap") else X
        C.close(got_fn(arg), compiled(want_fn)(arg), np.float64, transform)


@pytest.mark.parametrize("name, rest", [
    ("first_two", ()), ("index_argument", (2,)), ("later_loop", ()), ("zipped", ()),
    ("sliced", ()), ("earlier_in_loop", ()), ("two_back", (3,)),
    ("count_argument", (4, 1)), ("same_item_twice", ()), ("pairs_item", ()),
    ("assigns_item", ()), ("caller", ())])
def test_jit_on_both_backends(name, rest) -> None:
    """s2s.jit of the function and of its gradient, NumPy and JAX backends (lists
    grown in Python loops with static trip counts; on JAX the cotangent list's
    `hs_bar[k] = ...` stays a Python list write)."""
    C.jitted(F, J, name, X, rest)


def test_with_break_under_vmap() -> None:
    """A loop left by `break` on a per-example value: each example's list has its
    own length, so vmap (and vmap of the gradient) is refused at the user's line
    (jax.vmap refuses the `if` on a batched value too); the JAX backend refuses the
    `if` as jax.jit does."""
    xs = np.stack([X, 3.0 * X, -X])
    for f in (F.with_break, s2s.grad(F.with_break)):
        with pytest.raises(s2s.TransformError) as err:
            s2s.vmap(f)(xs)
        assert err.value.loc.file == F.__file__ and "<s2s" not in str(err.value)
    with pytest.raises(s2s.TransformError) as err:
        s2s.jit(F.with_break, backend="jax")(X)
    assert "if np.sum(h) > 1.5:" in err.value.loc.text


# ---- adversarial -------------------------------------------------------------------


@pytest.mark.slow
def test_trip_count_and_index_change_between_calls() -> None:
    """One transform object called with the count and the index changing (0 and 1
    trips, negative indexes, 10 trips), the 1st, 3rd and 10th calls against JAX."""
    g, jit_g = s2s.grad(F.count_argument), s2s.jit(s2s.grad(F.count_argument))
    h = s2s.hessian(F.count_argument)
    calls = [(3, 0), (0, 0), (1, -1), (10, 7), (1, 0), (3, 2), (0, -1), (10, -10),
             (2, 1), (3, 0)]
    for call, (n, k) in enumerate(calls, 1):
        x = X * (1.0 + 0.1 * call)
        want = jax.grad(J.count_argument)(x, n, k)
        C.close(g(x, n, k), want, np.float64, f"call {call}")
        C.close(jit_g(x, n, k), want, np.float64, f"jit, call {call}")
        if call == 10:
            C.close(h(x, n, k), jax.hessian(J.count_argument)(x, n, k), np.float64,
                    f"hessian, call {call}")
        else:
            h(x, n, k)  # (the hessian's 1st and 3rd calls: other counts and indexes)


@pytest.mark.parametrize("transform", ["grad", "value_and_grad", "jvp", "jacfwd",
                                       "vmap", "jit_grad"])
def test_index_out_of_range_is_pythons_error_at_the_users_line(transform) -> None:
    """`hs[5]` of a list a one-trip loop grew: Python's IndexError (an s2s
    ListIndexError, also an IndexError), located at the user's line, never at a line
    of emitted code; the same transform then runs a count that reaches it."""
    f = F.count_argument
    calls = {
        "grad": lambda n, k: s2s.grad(f)(X, n, k),
        "value_and_grad": lambda n, k: s2s.value_and_grad(f)(X, n, k),
        "jvp": lambda n, k: s2s.jvp(C.bind(f, (n, k)), (X,), (X,)),
        "jacfwd": lambda n, k: s2s.jacfwd(f)(X, n, k),
        "vmap": lambda n, k: s2s.vmap(f, in_axes=(0, None, None))(np.stack([X, X]), n, k),
        "jit_grad": lambda n, k: s2s.jit(s2s.grad(f))(X, n, k),
    }
    with pytest.raises(IndexError) as err:
        calls[transform](1, 5)
    e = err.value
    assert isinstance(e, s2s.TransformError) and e.loc.file == F.__file__, str(e)
    assert "hs[k] * hs[-1]" in e.loc.text and "<s2s" not in str(e), str(e)
    calls[transform](6, 5)  # (reaches it now)


def test_callers_writing_into_results_change_nothing() -> None:
    g = s2s.grad(F.first_two)
    want = np.array(g(X))
    for _ in range(3):
        out = g(X)
        out[:] = 99.0
    C.close(g(X), want, np.float64, "after writes")
    value, grads = s2s.value_and_grad(F.earlier_in_loop)(X)
    grads[:] = 0.0
    C.close(s2s.grad(F.earlier_in_loop)(X), jax.grad(J.earlier_in_loop)(X), np.float64,
            "value_and_grad")
    x = X.copy()
    s2s.grad(F.assigns_item)(x)
    np.testing.assert_array_equal(x, X)  # (the argument itself is not written)


def test_nan_and_a_module_constant_changed_between_calls() -> None:
    x = np.array([0.3, np.nan, 2.0, 0.1])
    for name in ("first_two", "earlier_in_loop", "sliced"):
        got, want = s2s.grad(getattr(F, name))(x), jax.grad(getattr(J, name))(x)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        C.close(got[~np.isnan(got)], np.asarray(want)[~np.isnan(got)], np.float64, name)
    g = s2s.grad(F.module_index)
    try:
        for index in (0, 2, -1):
            F.INDEX = J.INDEX = index
            C.close(g(X), jax.grad(J.module_index)(X), np.float64, f"INDEX={index}")
    finally:
        F.INDEX = J.INDEX = 1


def test_emitted_code_reads_as_written() -> None:
    """The read's backward adds into the cotangent list's item (one line, the index
    the user wrote); a slice's, item by item at its positions."""
    g = s2s.grad(F.first_two)
    g(X)
    text = s2s.source(g)
    assert "hs_bar = zeros_list(hs)" in text
    assert "hs_bar[0] = hs_bar[0] + hs_0_bar" in text
    assert "hs_bar[1] = hs_bar[1] + hs_1_bar" in text
    g = s2s.grad(F.sliced)
    g(X)
    text = s2s.source(g)
    assert "_positions = range(len(hs_bar))[1:]" in text
    assert "hs_bar[p] = hs_bar[p] + " in text


@pytest.mark.parametrize("name, line, says", [
    ("assigns_slice", "hs[1:] = [x, x]", "only one item of a list can be assigned"),
    ("assigns_known_length", "hs[0] = np.sin(x)", "a list of known length"),
    ("pairs_slice", "for a, b in ps[1:]:", "a slice of the list `ps`"),
])
def test_refusals_are_located(name, line, says) -> None:
    with pytest.raises(s2s.TransformError) as err:
        s2s.grad(getattr(F, name))(X)
    e = err.value
    assert says in str(e) and e.loc.file == F.__file__ and line in e.loc.text, str(e)


def test_a_per_example_index_under_vmap_is_refused_at_the_users_line() -> None:
    """`hs[k]` for a `k` computed from the values: grad runs (against JAX); under
    vmap each example has its own `k`, refused, located (jax.vmap cannot index a
    Python list with a traced index either)."""
    C.close(s2s.grad(F.per_example_index)(X), jax.grad(J.per_example_index)(X),
            np.float64, "grad")
    for f in (F.per_example_index, s2s.grad(F.per_example_index)):
        with pytest.raises(s2s.TransformError) as err:
            s2s.vmap(f)(np.stack([X, X[::-1]]))
        e = err.value
        assert e.loc.file == F.__file__ and "hs[k] * x" in e.loc.text, str(e)
