"""Generators, windows and reductions of issue 23's twelfth pass
(``generators12_fns.py``): ``max``/``min`` of a generator's items, ``itertools.islice``
of one (or of a sequence), a generator method of an object the function builds and its
``__iter__`` (``for h in Layers(x):``, ``list(layers)``, ``max(layers)``); ``sum`` of a
window that is empty on some call (Python's 0, gradient 0); ``np.max``/``np.min`` with
``initial=`` over a size-0 axis (``initial``, as NumPy; gradient 0, as JAX); a print
with a format spec under ``s2s.jit(..., backend="jax")`` (a located TracedValueError,
as a value-dependent ``assert`` there); ``pairwise``/``zip`` loops carrying an
accumulator under ``hessian`` and ``vmap(grad)``.

Every expected value comes from JAX on the same source (``jax_twin``), float64 and
float32, at calls 1, 3 and 10 whose lengths change, or from central differences and
NumPy itself in the default tier."""

from __future__ import annotations

import functools
from functools import partial

import generators12_fns as F  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX, assert_close_to, central_grad, compiled, jax_twin

import s2s

if HAVE_JAX:
    import jax

    J = jax_twin(F)

X = np.array([0.3, -0.7, 1.2, 0.5, -0.2, 0.9])
DTYPES = [np.float64, np.float32]
SIZES = (5, 2, 1, 6, 3, 4, 2, 5, 1, 6)  # the length at calls 1 to 10
CHECKED = (1, 3, 10)
close = partial(assert_close_to, f64=1e-8, f32=5e-4)

# (name, the fewest items it reads)
GENERATORS = [("max_of_generator", 1), ("min_of_generator", 1),
              ("max_of_generator_bound", 1), ("islice_sum", 1), ("islice_loop", 1),
              ("islice_listed", 1), ("islice_step", 1), ("islice_max", 1),
              ("islice_of_array", 1), ("iterated_object", 1), ("iterated_name", 1),
              ("generator_method", 2), ("listed_object", 1)]
INITIAL = ["max_initial", "min_initial", "max_initial_axis", "min_initial_rows"]
WINDOWS = [("window_slice_sum", 3), ("window_slice_sum", 1),
           ("window_generator_sum", 2), ("window_generator_sum", 6),
           ("sliding_sums", None), ("window_of_generator", None)]
ACCUMULATORS = ["pairwise_accumulator", "zip_accumulator", "zip_rows_accumulator"]


def _x(call: int, dtype, fewest: int = 0) -> np.ndarray:
    size = max(fewest, SIZES[call - 1])
    return (np.resize(X, size) * (1 + 0.1 * call) - 0.05 * call).astype(dtype)


# ---- the default tier: one representative per item, no JAX --------------------------


def test_generators_against_finite_differences() -> None:
    """Before: `max(gen(x))` "Python's built-in `max` is not supported", islice of a
    generator refused at `sum`, `for h in Layers(x):` walked the object's field names
    (NumPy's TypeError from emitted code)."""
    for name in ("iterated_object",):  # (the rest: -m slow, against JAX)
        x = np.resize(X, 4) * 0.9
        assert_close_to(s2s.grad(getattr(F, name))(x), central_grad(getattr(F, name), x),
                        f64=1e-6)


def test_an_object_without_iter_is_refused_at_the_users_line() -> None:
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(F.not_iterable)(np.array([0.1, 0.2]))
    text = str(info.value)
    assert "not iterable" in text and "for h in Plain(x):" in text, text
    assert "generators12_fns.py" in text and ", column 14\n" in text, text


def test_an_empty_window_sums_to_zero() -> None:
    """Before: the located EmptyStackError (`sum(... for ...)`) and "`sum` is supported
    over a list or tuple whose length is known" (`sum(x[1:w])`); Python's is 0."""
    g = s2s.grad(F.window_slice_sum)
    x = np.array([0.3, -0.7, 1.2])
    for w in (3, 1, 0, 2):  # (empty at the 2nd and 3rd calls, not the 1st)
        f = functools.partial(F.window_slice_sum, w=w)
        assert_close_to(g(x, w), central_grad(f, x), f64=1e-6)
        assert s2s.jit(F.window_slice_sum)(x, w) == f(x)


def test_max_initial_over_a_size_0_axis() -> None:
    """Before: NumPy's "zero-size array to reduction operation maximum which has no
    identity" from the emitted `np.max(x)`.  NumPy's own value is `initial`."""
    g = s2s.grad(F.max_initial_axis)
    for size in (3, 0, 1):
        x = np.resize(X, size)
        with np.errstate(all="ignore"):
            assert s2s.jit(F.max_initial_axis)(x) == F.max_initial_axis(x)
            got = g(x)
        assert_close_to(got, central_grad(F.max_initial_axis, x) if size else np.zeros(0),
                        f64=1e-6)


@pytest.mark.skipif(not HAVE_JAX, reason="the JAX backend")
def test_a_format_spec_under_jit_on_jax_is_located() -> None:
    """Before: JAX's "unsupported format string passed to DynamicJaxprTracer.__format__"
    from a line of emitted code (vmap's `x[example]`)."""
    with pytest.raises(s2s.TransformError) as info:
        s2s.jit(s2s.vmap(F.printed_digits), backend="jax")(np.ones((2, 3)))
    text = str(info.value)
    assert "format spec" in text and "generators12_fns.py" in text, text
    assert 'print(f"{np.sum(x):.4f}")' in text and "jax.debug.print" in text, text


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="the JAX backend")
def test_a_format_spec_under_jit_on_jax_is_located_under_each_transform() -> None:
    for wrapped, x in ((s2s.grad(F.printed_digits), np.ones(3)),
                       (F.printed_digits, np.ones(3))):
        with pytest.raises(s2s.TransformError) as info:
            s2s.jit(wrapped, backend="jax")(x)
        text = str(info.value)
        assert "format spec" in text and 'print(f"{np.sum(x):.4f}")' in text, text
        assert "generators12_fns.py" in text, text


# ---- against JAX (slow) ----------------------------------------------------------------


# Python's max/min compare the items: JAX's grad decides on the concrete values, but
# jax.vmap (and jax.hessian, a jacfwd) traces them, so the oracle there is a Python
# loop of jax.grad over the examples and jax.jacrev of jax.grad
COMPARES = {"max_of_generator", "min_of_generator", "max_of_generator_bound",
            "islice_max", "iterated_name", "listed_object"}


def _batched(theirs, compares):
    if not compares:
        return compiled(jax.vmap(jax.grad(theirs)))
    return lambda b: np.stack([jax.grad(theirs)(row) for row in b])


def _every_transform(ours, theirs, dtype, fewest, compares=False) -> None:
    g, vg = s2s.grad(ours), s2s.value_and_grad(ours)
    on_numpy, on_jax = s2s.jit(s2s.grad(ours)), s2s.jit(s2s.grad(ours), backend="jax")
    h, vgb = s2s.hessian(ours), s2s.vmap(s2s.grad(ours))
    for call in range(1, 11):
        x = _x(call, dtype, fewest)
        got = g(x)
        if call not in CHECKED:
            continue
        expected = compiled(jax.grad(theirs))(x)
        close(got, expected, dtype)
        got[...] = np.nan  # (a later result must not share memory with this one)
        v = (x[::-1] * 0.5 + 0.25).astype(dtype)
        close(vg(x), compiled(jax.value_and_grad(theirs))(x), dtype)
        close(on_numpy(x), expected, dtype)
        close(on_jax(x), expected, dtype)
        close(s2s.jit(ours)(x), compiled(theirs)(x), dtype)
        close(s2s.jvp(ours, (x,), (v,)),
              compiled(lambda x, v: jax.jvp(theirs, (x,), (v,)))(x, v), dtype)
        batch = np.stack([x, 0.5 * x, x[::-1].copy()])
        close(vgb(batch), _batched(theirs, compares)(batch), dtype)
        close(h(x), jax.jacrev(jax.grad(theirs))(x) if compares else compiled(
            jax.hessian(theirs))(x), dtype)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name,fewest", GENERATORS, ids=[n for n, _ in GENERATORS])
def test_generators_against_jax(name, fewest, dtype) -> None:
    _every_transform(getattr(F, name), getattr(J, name), dtype, fewest, name in COMPARES)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name,w", WINDOWS, ids=[f"{n}-{w}" for n, w in WINDOWS])
def test_empty_windows_against_jax(name, w, dtype) -> None:
    """Windows empty at some calls (length 1 or 2: `x[2:]`, `x[w:]`, `x[1:1]`) but
    not at the first (vmap's and the Hessian's probe run the first call's example)."""
    ours, theirs = getattr(F, name), getattr(J, name)
    if w is not None:
        ours, theirs = partial(ours, w=w), partial(theirs, w=w)
    _every_transform(ours, theirs, dtype, 0)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", INITIAL)
def test_initial_over_size_0_axes_against_jax(name, dtype) -> None:
    ours, theirs = getattr(F, name), getattr(J, name)
    g, vgb = s2s.grad(ours), s2s.vmap(s2s.grad(ours))
    on_jax = s2s.jit(s2s.grad(ours), backend="jax")
    with np.errstate(all="ignore"):
        for size in (3, 0, 1, 0, 4):  # (size 0 at the 2nd and 4th calls)
            x = (np.resize(X, size) * 1.1).astype(dtype)
            expected = jax.grad(theirs)(x)
            close(g(x), expected, dtype)
            close(on_jax(x), expected, dtype)
            close(s2s.jit(ours)(x), theirs(x), dtype)
            close(s2s.jvp(ours, (x,), (np.ones_like(x),)),
                  jax.jvp(theirs, (x,), (np.ones_like(x),)), dtype)
            batch = np.stack([x, -0.5 * x])
            close(vgb(batch), jax.vmap(jax.grad(theirs))(batch), dtype)
            if size:
                close(s2s.hessian(ours)(x), jax.hessian(theirs)(x), dtype)
        for special in (np.nan, np.inf, -np.inf):  # (NaN/inf elements, as JAX)
            x = np.array([0.3, special, -0.2], dtype=dtype)
            close(g(x), jax.grad(theirs)(x), dtype)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", ACCUMULATORS)
def test_pairwise_accumulators_against_jax(name, dtype) -> None:
    """gens11 checked pairwise/zip windows under grad and jvp; here the loops carry an
    accumulator, under hessian and vmap(grad) too (lengths 1 to 6: no pair at 1)."""
    _every_transform(getattr(F, name), getattr(J, name), dtype, 0)


@pytest.mark.slow
def test_a_read_of_the_old_list_under_a_nested_batched_if_is_located() -> None:
    """docs/python-subset.md's "Not built yet" row (vmap of a gradient: a list copied,
    `.pop()`ed, the old list read in an `if` nested in an `if` on a batched value):
    refused at the user's inner `if`, not at a line of emitted code (so on main too:
    the row said "at a line of the emitted gradient"; this pins the row's wording)."""
    import list_copy_if_fns as L

    x = np.array([0.3, -0.7, 1.2, 0.5, 0.8])
    vg = s2s.vmap(s2s.grad(lambda y: np.sum(L.pop_read_in_nested_if(y, 5))))
    with pytest.raises(s2s.TransformError) as info:
        vg(np.stack([x, np.sin(x), -x]))
    text = str(info.value)
    assert "list_copy_if_fns.py" in text and "if x[i] > 0.6:" in text, text
    assert "bound on one path" in text and "<s2s:" not in text, text


@pytest.mark.slow
@pytest.mark.parametrize("name", ["max_of_generator", "min_of_generator", "islice_max"])
def test_max_of_items_with_a_nan_is_pythons(name) -> None:
    """Python's max keeps the first item unless a later one compares greater: a NaN
    first item wins, a later NaN never does.  Before: np.argmax picked the NaN (the
    value NaN where Python's and JAX's is a number).  The gradient of an item not
    chosen whose own derivative is NaN/inf stays NaN here (0 * NaN), where JAX's
    Python max hands it a symbolic zero: compared on the other items only."""
    g, f = s2s.grad(getattr(F, name)), s2s.jit(getattr(F, name))
    for x in ([0.3, np.nan, 1.2], [np.nan, 0.3, 1.2], [0.3, 1.2, np.nan],
              [0.5, 0.5, -0.5], [0.3]):
        x = np.array(x)
        close(f(x), getattr(J, name)(x), np.float64)
        finite = ~np.isnan(x)
        close(g(x)[finite], jax.grad(getattr(J, name))(x)[finite], np.float64)
