"""Iteration idioms (issue 23, reduce15): ``functools.reduce`` over ``[m] + list(mats)``
and ``[*mats, m]`` with ``mats`` a passed tuple, under vmap of grad and hessian (each
copy of the lambda is one function's code to vmap's probe, ``transforms/vmap.py``; the
reduce's tests on the list's length are decided per call, ``ir/unroll_lengths.py``),
and lists (of arrays, of tuples) read by a loop's run-time index, stacked once before
the loop (``ir/unroll_reads.py``).

The default tier checks against central differences and the emitted code's stacks; the
slow tier compares every transform with JAX on the same source (``reduce15_fns.py``,
``newcomer_harness.twin``), float64 and float32, with lengths 0, 1 and 5 between calls,
size-1 matrices, NaN in one item, and aliasing."""

from __future__ import annotations

import newcomer_harness as H  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
import reduce15_fns as F
from support import HAVE_JAX

import s2s
from s2s.errors import StackShapeError

M = np.array([[0.3, -0.7], [0.45, 1.2]])
RNG = np.random.default_rng(15)


def close(a, b, rtol=1e-6, atol=1e-8) -> None:
    for u, v in zip(_leaves(a), _leaves(b)):
        np.testing.assert_allclose(np.asarray(u), np.asarray(v), rtol=rtol, atol=atol)


def _leaves(t):
    if isinstance(t, (tuple, list)):
        return [x for v in t for x in _leaves(v)]
    return [t]


def _mats(count, size=2, dtype=np.float64):
    return tuple((RNG.normal(size=(size, size)) * 0.6).astype(dtype) for _ in range(count))


# ---- default tier -----------------------------------------------------------------------------


def test_a_reduce_over_a_passed_tuple_and_a_stacked_loop_read_run() -> None:
    """``functools.reduce(np.matmul, [*mats, m])`` was refused ("constant key"); its
    gradient now matches central differences.  A list read by a loop's counter is
    stacked once, before the loop (it was stacked at each read: n * n copies), and
    the gradient matches central differences."""
    mats = _mats(2)
    close(s2s.grad(F.matmul_last)(M, mats),
          H.fd_grad(F.matmul_last, (M, mats), 1e-6))
    x = np.array([0.3, -0.7, 0.5])
    xs = [np.array([1.0, 2.0]), np.array([0.5, -1.0]), np.array([2.0, 0.1])]
    g = s2s.grad(F.indexed_loop)
    close(g(x, xs), H.fd_grad(F.indexed_loop, (x, xs), 1e-6))
    text = s2s.source(g)
    assert text.count("np.stack(") == 1, text
    stack, loop = text.index("np.stack("), text.index("for i in range(")
    assert stack < loop, text


# ---- slow tier: central differences, lengths, the stacks ---------------------------------------


@pytest.mark.slow
def test_two_loops_over_one_list_stack_once_each_and_a_list_grown_between_again() -> None:
    """Two reads in one loop share one stack; after ``ys.append(...)`` the list is
    another value, stacked again (not the stack of the list before the append)."""
    g = s2s.grad(F.indexed_twice, argnums=(0, 1))
    x = np.array([0.3, -0.2, 0.5])
    xs = [np.array([1.0, 2.0]) * (k + 1) for k in range(4)]
    close(g(x, xs)[0], H.fd_grad(F.indexed_twice, (x, xs), 1e-6))
    assert s2s.source(g).count("np.stack(") == 2


@pytest.mark.slow
def test_items_of_another_shape_at_one_position_are_refused_located() -> None:
    """A list of tuples whose first positions have two shapes: the located
    StackShapeError at the user's ``w, b = pairs[i]`` (NumPy's bare ValueError before
    the read was located past a stack of another position)."""
    x = np.array([0.3, -0.2])
    pairs = [(np.ones(2), np.zeros(2)), (np.ones(3), np.zeros(3))]
    with pytest.raises(StackShapeError) as info:
        s2s.grad(F.pairs_loop)(x, pairs)
    assert "w, b = pairs[i]" in str(info.value) and "reduce15_fns.py" in str(info.value)
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(F.indexed_loop)(x, [np.ones(2), np.ones(3)])
    assert "np.tanh(xs[i] * x[i])" in str(info.value)


# ---- slow tier: against JAX --------------------------------------------------------------------

REDUCES = ("chain_trace", "sum_from_zero", "scaled_from_half", "matmul_last")
READS = ("indexed_loop", "indexed_twice", "pairs_loop")


def _jax():
    import jax

    jax.config.update("jax_enable_x64", True)
    return jax, H.twin(F)


def _stages(name, dtype, lengths):
    """``{stage: (ours, theirs)}`` thunks over calls whose ``mats`` length changes."""
    jax, J = _jax()
    ours, theirs = getattr(F, name), getattr(J, name)
    g, jg = s2s.grad(ours), jax.grad(theirs)
    vg = s2s.vmap(s2s.grad(ours), in_axes=(0, None))
    jvg = jax.vmap(jax.grad(theirs), in_axes=(0, None))
    hs, jit, jj = s2s.hessian(ours), s2s.jit(s2s.grad(ours)), s2s.jit(
        s2s.grad(ours), backend="jax")
    out = []
    for call, count in enumerate(lengths, 1):
        m = (M * (1 + 0.05 * call)).astype(dtype)
        mats = _mats(count, dtype=dtype)
        batch = np.stack([m, m * dtype(0.8), -m])
        t = np.cos(np.arange(4.0)).reshape(2, 2).astype(dtype)
        out += [
            (f"grad@{call}", lambda m=m, mats=mats: g(m, mats),
             lambda m=m, mats=mats: jg(m, mats)),
            (f"vmap_grad@{call}", lambda b=batch, mats=mats: vg(b, mats),
             lambda b=batch, mats=mats: jvg(b, mats)),
            (f"hessian@{call}", lambda m=m, mats=mats: hs(m, mats),
             lambda m=m, mats=mats: jax.hessian(theirs)(m, mats)),
            (f"jvp@{call}", lambda m=m, mats=mats, t=t: s2s.jvp(
                lambda a: ours(a, mats), (m,), (t,)),
             lambda m=m, mats=mats, t=t: jax.jvp(lambda a: theirs(a, mats), (m,), (t,))),
            (f"jit@{call}", lambda m=m, mats=mats: jit(m, mats),
             lambda m=m, mats=mats: jg(m, mats)),
            (f"jit_jax@{call}", lambda m=m, mats=mats: jj(m, mats),
             lambda m=m, mats=mats: jax.jit(jg)(m, mats)),
        ]
    return out


@pytest.mark.slow
@pytest.mark.every_case
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", REDUCES)
def test_reduces_against_jax(name, dtype) -> None:
    """grad, vmap of grad, hessian, jvp, jit on NumPy and on JAX, at calls 1 to 10 whose
    ``mats`` has 2, 0, 1, 5, 2, 3, 0, 1, 5, 2 matrices (values changing too)."""
    rtol, atol = (2e-3, 2e-4) if dtype == np.float32 else (1e-7, 1e-9)
    for stage, ours, theirs in _stages(name, dtype, (2, 0, 1, 5, 2, 3, 0, 1, 5, 2)):
        a, b = ours(), theirs()
        try:
            close(a, b, rtol, atol)
        except AssertionError as err:
            raise AssertionError(f"{stage}: {err}") from None


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
def test_size_one_matrices_nan_and_aliasing_against_jax() -> None:
    """1x1 matrices; NaN in one item (where JAX has NaN, s2s has NaN); no result shares
    memory with an argument, and writing into a result leaves the next call's."""
    jax, J = _jax()
    for name in REDUCES:
        ours, theirs = getattr(F, name), getattr(J, name)
        if name in ("chain_trace", "sum_from_zero"):
            continue  # (their np.eye(2) and `@ m` are 2x2)
        one = np.array([[0.7]])
        for count in (0, 1, 5):
            mats = _mats(count, size=1)
            close(s2s.grad(ours)(one, mats), jax.grad(theirs)(one, mats))
    for name in REDUCES:
        ours, theirs = getattr(F, name), getattr(J, name)
        mats = _mats(3)
        mats = (mats[0], np.where(np.eye(2) > 0, np.nan, mats[1]), mats[2])
        a, b = s2s.grad(ours)(M, mats), np.asarray(jax.grad(theirs)(M, mats))
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        close(np.nan_to_num(a), np.nan_to_num(b))
        problem = H.aliasing(s2s.grad(ours), (M, _mats(2)))
        assert problem is None, (name, problem)
        vg = s2s.vmap(s2s.grad(ours), in_axes=(0, None))
        mats = _mats(2)
        batch = np.stack([M, 2 * M])
        first = vg(batch, mats)
        assert not any(np.shares_memory(first, x) for x in (batch, *mats))
        kept = first.copy()
        first[...] = 123.0
        close(vg(batch, mats), kept)


def _read_args(name, n, dtype, nan=False):
    x = RNG.normal(size=n).astype(dtype)
    xs = [RNG.normal(size=2).astype(dtype) for _ in range(max(n, 1) + (name == "indexed_twice"))]
    if nan and len(xs) > 1:
        xs[1] = np.array([np.nan, 0.5], dtype)
    if name == "pairs_loop":
        xs = [(v, v * dtype(0.5) + dtype(1)) for v in xs]
    return x, xs


@pytest.mark.slow
@pytest.mark.every_case
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", READS)
def test_run_time_reads_against_jax(name, dtype) -> None:
    """grad in both arguments (the list's items too) at lengths 3, 0, 1, 5, 3 (NaN in
    one item at the last), vmap of grad over x, jit on both backends, against JAX."""
    jax, J = _jax()
    ours, theirs = getattr(F, name), getattr(J, name)
    rtol, atol = (2e-3, 2e-4) if dtype == np.float32 else (1e-7, 1e-9)
    g, jg = s2s.grad(ours, argnums=(0, 1)), jax.grad(theirs, argnums=(0, 1))
    jit, jj = s2s.jit(g), s2s.jit(g, backend="jax")
    for k, n in enumerate((3, 0, 1, 5, 3)):
        x, xs = _read_args(name, n, dtype, nan=k == 4)
        want = jg(x, xs)
        for got in (g(x, xs), jit(x, xs), jj(x, xs)):
            for u, v in zip(_leaves(got), _leaves(want)):
                v = np.asarray(v)
                np.testing.assert_array_equal(np.isnan(u), np.isnan(v))
                close(np.nan_to_num(u), np.nan_to_num(v), rtol, atol)
    x, xs = _read_args(name, 4, dtype)
    batch = np.stack([x, x * dtype(0.8), -x])
    close(s2s.vmap(s2s.grad(ours), in_axes=(0, None))(batch, xs),
          jax.vmap(jax.grad(theirs), in_axes=(0, None))(batch, xs), rtol, atol)
    assert H.aliasing(s2s.grad(ours), (x, xs)) is None
