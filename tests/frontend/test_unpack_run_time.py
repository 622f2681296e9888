"""Unpacking a value whose length is known only when the function runs (issue 23):
``a, b = x[:n]``, ``a, b = pts`` of a list grown in a loop, ``p, q = pair`` of a tuple
passed by keyword, ``for a, b in rows`` of an array's rows, ``a, *mid, b = x[:n]``.
Python raises ValueError where the widths differ; s2s raised nothing and returned a
number from the first items.  Now a kept check before the items are read raises
Python's message as :class:`s2s.errors.UnpackError` at the user's line, under grad,
jvp, vmap, jacfwd, hessian and s2s.jit on both backends, at every call.

Oracles: Python running the same source (the error, its message, the line); JAX on
the same source (jax_twin) for the right widths, float64 and float32, over ten calls
whose values change (checked at the 1st, 3rd and 10th)."""

from __future__ import annotations

import functools
import traceback

import numpy as np
import pytest
import unpack_run_time_fns as F
from support import HAVE_JAX, assert_close_to

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax
    from support import jax_twin

    J = jax_twin(F)

X = np.array([0.3, -0.5, 2.0, 0.1])
# (name, the arguments after x): Python raises ValueError on each
WRONG = [("slice_of_three", ()), ("slice_of_three", (1,)), ("grown_list_whole", (3,)),
         ("grown_list_whole", (1,)), ("pair_by_keyword", ((1.0, 2.0, 3.0),)),
         ("rows_in_a_loop", (1,)), ("starred_of_a_slice", (1,))]
WRONG_IDS = [f"{name}-{i}" for i, (name, _) in enumerate(WRONG)]
RIGHT = [("slice_of_three", (2,)), ("grown_list_whole", ()), ("pair_by_keyword", ()),
         ("pair_by_keyword", ((1.5, -1.0),)), ("rows_in_a_loop", ()),
         ("starred_of_a_slice", ()), ("starred_of_a_slice", (4,)), ("whole_array", ())]
RIGHT_IDS = [f"{name}-{i}" for i, (name, _) in enumerate(RIGHT)]
TRANSFORMS = ["grad", "jvp", "vmap", "jacfwd", "hessian", "jit_numpy", "jit_jax"]

close = functools.partial(assert_close_to, f64=1e-9, f32=3e-4)


def _python_error(name, rest) -> str:
    with pytest.raises(ValueError) as err:
        getattr(F, name)(X, *rest)
    return str(err.value)


def _run(transform, f, x, rest):
    if transform == "grad":
        return s2s.grad(f)(x, *rest)
    if transform == "jvp":
        return s2s.jvp(lambda v: f(v, *rest), (x,), (np.ones_like(x),))
    if transform == "vmap":
        return s2s.vmap(f, in_axes=(0,) + (None,) * len(rest))(np.stack([x, -x]), *rest)
    if transform == "jacfwd":
        return s2s.jacfwd(f)(x, *rest)
    if transform == "hessian":
        return s2s.hessian(f)(x, *rest)
    backend = transform.removeprefix("jit_")
    static = tuple(range(1, 1 + len(rest)))  # (ints and tuples: static, as under jax.jit)
    return s2s.jit(s2s.grad(f), backend=backend, static_argnums=static)(x, *rest)


def _check_error(err, name, rest) -> None:
    """Python's message, at the line marked `# unpacks`: s2s's located UnpackError, or
    Python's own traceback where the transform ran the function in Python first."""
    want = _python_error(name, rest)
    assert isinstance(err, ValueError), err
    if isinstance(err, s2s.TransformError):
        assert isinstance(err, s2s.errors.UnpackError), err
        assert err.what == want, (err.what, want)
        assert err.loc.file == F.__file__ and "# unpacks" in err.loc.text, err
        assert "<s2s" not in str(err), err
    else:
        assert str(err) == want, (str(err), want)
        frame = traceback.extract_tb(err.__traceback__)[-1]
        assert frame.filename == F.__file__ and "# unpacks" in frame.line, frame


@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("name, rest", WRONG, ids=WRONG_IDS)
def test_wrong_width_is_pythons_error(name, rest, transform) -> None:
    """Every wrong width under every transform, twice (the second call runs the cached
    code): Python's error, never a number."""
    for _ in range(2):
        with pytest.raises(ValueError) as err:
            _run(transform, getattr(F, name), X, rest)
        _check_error(err.value, name, rest)


def test_each_wrong_width_under_grad_and_vmap() -> None:
    """The default tier: every case under grad (and under vmap, whose rank probe runs the
    check too, for two of them), each its located UnpackError."""
    for k, (name, rest) in enumerate(WRONG):
        for transform in ("grad", "vmap") if k in (2, 5) else ("grad",):
            with pytest.raises(s2s.errors.UnpackError) as err:
                _run(transform, getattr(F, name), X, rest)
            _check_error(err.value, name, rest)


def test_a_tuple_by_keyword_right_then_wrong_then_right() -> None:
    """``f(x, pair=(a, b, c))``: the keyword tuple is checked at each call; right
    widths before and after it give JAX's gradient."""
    grad = s2s.grad(F.pair_by_keyword)
    for k, pair in enumerate([(0.5, 2.0), (1.0, 2.0, 3.0), (1.5, -1.0), (0.5,)]):
        x = X * (1 + 0.1 * k)
        if k == 0:  # (the right width before the wrong one: it runs)
            grad(x, pair=pair)
            continue
        if len(pair) == 2:
            want = jax.grad(functools.partial(J.pair_by_keyword, pair=pair))(x)
            close(grad(x, pair=pair), want, np.float64)
            continue
        with pytest.raises(s2s.errors.UnpackError) as err:
            grad(x, pair=pair)
        _check_error(err.value, "pair_by_keyword", (pair,))


def test_the_check_reads_like_hand_written_code() -> None:
    """The emitted check: the length, one test, the raise; no check where the call's
    structure settles the width (a tuple argument passed by position)."""
    g = s2s.grad(F.grown_list_whole)
    g(X)
    text = s2s.source(g)
    assert "width = len(pts)\n    if width != 2:\n        raise unpack_error(width)" in text
    g = s2s.grad(F.pair_by_keyword)
    g(X, (0.5, 2.0))
    assert "unpack_error" not in s2s.source(g)
    with pytest.raises(s2s.errors.UnpackError):  # (decided when transforming the call)
        g(X, (0.5, 2.0, 1.0))


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name, rest", RIGHT, ids=RIGHT_IDS)
def test_right_widths_against_jax(name, rest, dtype) -> None:
    """The right widths over ten calls (the 1st, 3rd and 10th checked): grad, jvp,
    vmap of grad, jacfwd, hessian, s2s.jit on both backends, against JAX."""
    f, jf = getattr(F, name), getattr(J, name)
    jf_x = functools.partial(jf, **dict(zip(_names(f), rest)))
    grad, hess = s2s.grad(f), s2s.hessian(f)
    jits = [s2s.jit(grad, backend=b, static_argnums=tuple(range(1, 1 + len(rest))))
            for b in ("numpy", "jax")]
    for call in range(10):
        x = (X * (1 + 0.1 * call) - 0.05 * call).astype(dtype)
        got = grad(x, *rest)
        if call not in (0, 2, 9):
            continue
        want = jax.grad(jf_x)(x)
        close(got, want, dtype)
        for jitted in jits:
            close(jitted(x, *rest), want, dtype)
        v = np.linspace(-1.0, 1.0, x.size).astype(dtype)
        close(s2s.jvp(lambda u: f(u, *rest), (x,), (v,)), jax.jvp(jf_x, (x,), (v,)), dtype)
        close(s2s.jacfwd(f)(x, *rest), jax.jacfwd(jf_x)(x), dtype)
        close(hess(x, *rest), jax.hessian(jf_x)(x), dtype, f32=2e-3)
        xs = np.stack([x, -x, 0.5 * x])
        close(s2s.vmap(grad, in_axes=(0,) + (None,) * len(rest))(xs, *rest),
              jax.vmap(jax.grad(jf_x))(xs), dtype)


@pytest.mark.slow
def test_right_widths_once() -> None:
    """Each right width's gradient against JAX once, float64 (a quick look under
    ``-m slow -k once``; the sweep above runs every transform)."""
    for name, rest in RIGHT:
        f, jf = getattr(F, name), getattr(J, name)
        jf_x = functools.partial(jf, **dict(zip(_names(f), rest)))
        close(s2s.grad(f)(X, *rest), jax.grad(jf_x)(X), np.float64)


def _names(f) -> list[str]:
    import inspect

    return list(inspect.signature(f).parameters)[1:]
