"""s2s.checkpoint: reverse mode over loops in segments (saved states, recomputation).

Every gradient here is compared with s2s's gradient without checkpointing and with an
independent oracle: jax.grad on the same source (numpy bound to jax.numpy; JAX runs the
Python loops eagerly), or central finite differences where JAX cannot run the program
(in-place writes).
"""

from __future__ import annotations

import os
import tracemalloc
import types
from pathlib import Path

import numpy as np
import pytest

import s2s
from s2s.api import float0

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jax.config.update("jax_enable_x64", True)

GOLDEN = Path(__file__).parent / "golden"


# ---- programs ----------------------------------------------------------------------


def carried_array(x, n):
    y = x
    for i in range(n):
        y = y * x + np.sin(y)
    return np.sum(y)


def carried_scalars(x, n):
    s = 0.0
    k = 1.0
    y = x
    for i in range(n):
        s = s + np.sum(y * y) / k
        k = k + 1.0
        y = np.tanh(y * 1.1 + x)
    return s + np.sum(y)


def scalar_input(a, n):
    t = a
    for i in range(n):
        t = np.sin(t) * a + 0.5 * t
    return t * t


def over_rows(m, w):
    h = np.zeros_like(w)
    for row in m:
        h = np.tanh(h * w + row)
    return np.sum(h**2)


def nested(x, n):
    y = x
    for i in range(n):
        z = y
        for j in range(i % 3 + 1):
            z = np.sin(z) * 0.9 + x
        y = y + z / (i + 1.0)
    return np.sum(y)


def branch_inside(x, n):
    y = x
    for i in range(n):
        if i % 2 == 0:
            y = np.sin(y) * x
        else:
            y = np.cos(y) + x
    return np.sum(y)


def step(y, x):
    return np.sin(y) * x + y


def calls_helper(x, n):
    y = x
    for i in range(n):
        y = step(y, x)
    return np.sum(y)


def stepped_range(x, n):
    y = x
    for i in range(2, n, 3):
        y = y * np.cos(x * i) + 0.1 * y**2
    return np.sum(y)


def offset_range(x, n):
    y = x
    for i in range(1, n):
        y = y * 0.9 + np.sin(y * i)
    return np.sum(y)


def nothing_carried_needed(x, n):
    s = 0.0
    for i in range(n):
        s = s + np.sum(np.sin(x * i) ** 2)
    return s


def two_loops(x, n):
    y = x
    for i in range(n):
        y = np.sin(y) + x
    z = y * 2.0
    for i in range(n):
        z = z * np.cos(z)
    return np.sum(z)


PROGRAMS = [
    (carried_array, lambda r: r.uniform(0.1, 0.5, size=4)),
    (carried_scalars, lambda r: r.uniform(0.1, 0.5, size=4)),
    (scalar_input, lambda r: r.uniform(0.1, 0.5)),
    (nested, lambda r: r.uniform(0.1, 0.5, size=3)),
    (branch_inside, lambda r: r.uniform(0.1, 0.5, size=3)),
    (calls_helper, lambda r: r.uniform(0.1, 0.5, size=3)),
    (stepped_range, lambda r: r.uniform(0.1, 0.5, size=3)),
    (offset_range, lambda r: r.uniform(0.1, 0.5, size=3)),
    (nothing_carried_needed, lambda r: r.uniform(0.1, 0.5, size=3)),
    (two_loops, lambda r: r.uniform(0.1, 0.5, size=3)),
]
NS = [-1, 0, 1, 2, 5, 9, 10]  # 9: a perfect square; 5, 10: not; -1: range(-1)


def jax_twin(fn):
    """``fn`` with ``np`` bound to jax.numpy (and the helpers it calls twinned too)."""
    g = dict(fn.__globals__)
    g["np"] = jnp
    g["step"] = types.FunctionType(step.__code__, g)
    return types.FunctionType(fn.__code__, g)


def assert_same(got, want, rtol=1e-10):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=1e-12)


# ---- gradients ---------------------------------------------------------------------


@pytest.mark.parametrize("every", ["sqrt", 3])
@pytest.mark.parametrize("fn,make", PROGRAMS, ids=[f.__name__ for f, _ in PROGRAMS])
def test_checkpointed_gradient_equals_plain_and_jax(fn, make, every) -> None:
    x = make(np.random.default_rng(0))
    plain = s2s.grad(fn)
    ckpt = s2s.grad(s2s.checkpoint(fn, every=every))
    twin = jax.grad(jax_twin(fn))
    for n in NS:
        got = ckpt(x, n)
        assert_same(got, plain(x, n))
        assert_same(got, twin(x, n))
    assert "checkpoints" in ckpt.source or fn is nothing_carried_needed
    assert "segment" in ckpt.source or every != "sqrt"


@pytest.mark.slow
def test_rows_of_an_array_both_arguments() -> None:
    r = np.random.default_rng(1)
    w = r.uniform(0.1, 0.5, size=3)
    ckpt = s2s.grad(s2s.checkpoint(over_rows), argnums=(0, 1))
    twin = jax.grad(jax_twin(over_rows), argnums=(0, 1))
    for rows in (0, 1, 7, 16):
        m = r.normal(size=(rows, 3))
        got, want = ckpt(m, w), twin(m, w)
        assert_same(got[0], want[0])
        assert_same(got[1], want[1])


def buffer_inside(x, n):
    y = x
    for i in range(n):
        z = np.zeros(2)
        z[0] = np.sum(y)
        z[1] = np.sum(y**2)
        y = y * 0.5 + np.sin(z[0]) * np.tanh(z[1]) + x
    return np.sum(y)


def test_array_made_and_written_inside_the_body_against_finite_differences() -> None:
    x = np.random.default_rng(2).uniform(0.1, 0.5, size=3)
    g = s2s.grad(s2s.checkpoint(buffer_inside))
    for n in (0, 1, 6):
        eps = 1e-6
        fd = np.array(
            [
                (buffer_inside(x + eps * e, n) - buffer_inside(x - eps * e, n))
                / (2 * eps)
                for e in np.eye(3)
            ]
        )
        got = g(x, n)
        np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-8)
        assert_same(got, s2s.grad(buffer_inside)(x, n))


def aux_loop(x, n):
    y = x
    for i in range(n):
        y = np.sin(y) + x
    return np.sum(y), y


def test_value_and_grad_vjp_and_aux_return_the_forward_values() -> None:
    x = np.random.default_rng(3).uniform(0.1, 0.5, size=3)
    f = s2s.checkpoint(aux_loop)
    grads, aux = s2s.grad(f, has_aux=True)(x, 7)
    jgrads, jaux = jax.grad(jax_twin(aux_loop), has_aux=True)(x, 7)
    assert_same(grads, jgrads)
    assert_same(aux, jaux)  # the final y, not a value the backward popped into `y`
    value, g = s2s.value_and_grad(s2s.checkpoint(carried_array))(x, 7)
    assert_same(value, carried_array(x, 7))
    assert_same(g, jax.grad(jax_twin(carried_array))(x, 7))
    out, vjp_fn = s2s.vjp(s2s.checkpoint(carried_array), x, 7)
    assert_same(vjp_fn(np.float64(2.0))[0], 2.0 * g)


@s2s.checkpoint(every=2)
def inner_loop(y, x, n):
    for i in range(n):
        y = np.sin(y) * x + y
    return y


def calls_checkpointed(x, n):
    z = inner_loop(x * 2.0, x, n)
    return np.sum(z**2)


def test_a_checkpointed_function_called_by_another() -> None:
    x = np.random.default_rng(4).uniform(0.1, 0.5, size=3)
    g = s2s.grad(calls_checkpointed)
    tw = {"np": jnp}
    twin_inner = types.FunctionType(inner_loop.__code__, tw)
    tw["inner_loop"] = twin_inner
    twin = types.FunctionType(calls_checkpointed.__code__, tw)
    for n in (0, 1, 5):
        assert_same(g(x, n), jax.grad(twin)(x, n))
    assert "checkpoints.append" in g.source  # in inner_loop's vjp helper


# ---- composition -------------------------------------------------------------------


def test_forward_over_checkpointed_gradient() -> None:
    r = np.random.default_rng(5)
    x, v = r.uniform(0.1, 0.5, size=3), r.normal(size=3)
    g = s2s.grad(s2s.checkpoint(carried_array))
    twin = jax.grad(jax_twin(carried_array))
    for n in (0, 1, 5):
        out, tangent = s2s.jvp(g, (x, n), (v, np.zeros((), float0)))
        jout, jtangent = jax.jvp(lambda x: twin(x, n), (x,), (v,))
        assert_same(out, jout)
        assert_same(tangent, jtangent)
        assert_same(
            tangent,
            s2s.jvp(s2s.grad(carried_array), (x, n), (v, np.zeros((), float0)))[1],
        )


def test_vmap_of_checkpointed_gradient() -> None:
    xs = np.random.default_rng(6).uniform(0.1, 0.5, size=(4, 3))
    v = s2s.vmap(s2s.grad(s2s.checkpoint(carried_array)), in_axes=(0, None))
    twin = jax.grad(jax_twin(carried_array))
    assert_same(v(xs, 6), np.stack([twin(x, 6) for x in xs]))


def test_jit_on_the_jax_backend_runs_the_checkpointed_gradient() -> None:
    x = np.random.default_rng(8).uniform(0.1, 0.5, size=4)
    g = s2s.grad(s2s.checkpoint(carried_array))
    j = s2s.jit(g, backend="jax", static_argnums=(1,))
    assert_same(j(x, 7), jax.grad(jax_twin(carried_array))(x, 7))


def scalar_loop(a):
    t = a
    for i in range(5):
        t = np.sin(t) * a + 0.5 * t
    return t


@pytest.mark.slow
def test_grad_of_grad_through_the_checkpointed_loop() -> None:
    """Reverse over the emitted gradient: its tapes (and the checkpoint list) are
    lists appended going forward and popped coming back, undone in turn."""
    expected = jax.grad(jax.grad(jax_twin(scalar_loop)))
    for f in (scalar_loop, s2s.checkpoint(scalar_loop)):
        for a in (0.3, -0.8):
            assert_same(s2s.grad(s2s.grad(f))(a), expected(a))


# ---- refusals and the API ----------------------------------------------------------


def while_loop(x):
    y = x
    while np.sum(y) < 10.0:
        y = y * 1.5 + 0.1
    return np.sum(y)


def breaks(x, n):
    y = x
    for i in range(n):
        y = y * 1.2
        if np.max(y) > 2.0:
            break
    return np.sum(y)


def writes_outer_buffer(x, n):
    h = np.zeros((n + 1, 3))
    h[0] = x
    for t in range(n):
        h[t + 1] = np.tanh(h[t] * 1.1 + 0.2)
    return np.sum(h[n] ** 2)


def backwards(x, n):
    y = x
    for i in reversed(range(n)):
        y = y * np.cos(x * i)
    return np.sum(y)


def variable_step(x, n, k):
    y = x
    for i in range(0, n, k):
        y = np.sin(y) * x
    return np.sum(y)


@pytest.mark.parametrize(
    "fn,args,what,line",
    [
        (while_loop, (np.ones(3) * 0.5,), "`while` loops", "while np.sum(y) < 10.0:"),
        (breaks, (np.ones(3) * 0.5, 4), "`break`", "for i in range(n):"),
        (
            writes_outer_buffer,
            (np.ones(3) * 0.5, 4),
            "writes into `h`",
            "h[t + 1] = np.tanh",
        ),
        (backwards, (np.ones(3) * 0.5, 4), "reversed", "for i in reversed(range(n)):"),
        (
            variable_step,
            (np.ones(3) * 0.5, 4, 2),
            "positive constant step",
            "for i in range(0, n, k):",
        ),
    ],
)
def test_loops_it_does_not_checkpoint_are_refused_where_they_are(fn, args, what, line):
    with pytest.raises(s2s.TransformError) as err:
        s2s.grad(s2s.checkpoint(fn))(*args)
    text = str(err.value)
    assert what in text and line in text and __file__ in text and "Instead:" in text
    s2s.grad(fn)(*args)  # without checkpointing they are differentiated


def test_checkpoint_api() -> None:
    f = s2s.checkpoint(carried_array)
    assert f is not carried_array and not hasattr(carried_array, "__s2s_checkpoint__")
    x = np.array([0.2, 0.3])
    assert f(x, 4) == carried_array(x, 4)  # runs the same code
    assert f.__name__ == "carried_array"
    assert s2s.checkpoint(every=5)(carried_array).__s2s_checkpoint__ == 5
    with pytest.raises(ValueError, match="every"):
        s2s.checkpoint(carried_array, every=0)
    with pytest.raises(ValueError, match="every"):
        s2s.checkpoint(carried_array, every="log")
    with pytest.raises(TypeError, match="before transforming"):
        s2s.checkpoint(s2s.grad(carried_array))
    # jvp and vmap ignore the mark
    _, t = s2s.jvp(f, (x, 4), (np.ones(2), np.zeros((), float0)))
    assert_same(
        t, s2s.jvp(carried_array, (x, 4), (np.ones(2), np.zeros((), float0)))[1]
    )


# ---- memory and the emitted code ---------------------------------------------------


def test_peak_memory_of_a_long_loop_is_smaller() -> None:
    """900 iterations on vectors of 2000: the tape holds at least one array per
    iteration (three as emitted, one once specialized: 14 MB); checkpointed, 31 saved
    states and one segment's tape of 31 iterations (about 2 MB)."""
    x = np.random.default_rng(7).uniform(0.1, 0.5, size=2000)
    peaks = []
    for f in (carried_array, s2s.checkpoint(carried_array)):
        g = s2s.grad(f)
        g(x, 2)  # generate and compile outside the measurement
        tracemalloc.start()
        g(x, 900)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    plain, ckpt = peaks
    assert plain > 900 * 2000 * 8
    assert ckpt < plain / 5, (plain, ckpt)


def test_emitted_source_matches_golden() -> None:
    """The emitted gradient of the corpus's loop_carried (tests/golden/
    loop_carried.grad.py without checkpointing), checkpointed."""
    import corpus_fns

    path = GOLDEN / "loop_carried_checkpoint.grad.py"
    g = s2s.grad(s2s.checkpoint(corpus_fns.loop_carried))
    g(np.array([0.1, 0.2, 0.3]), 5)
    text = g.source
    if os.environ.get("S2S_UPDATE_GOLDEN"):
        path.write_text(text)
    assert path.exists(), f"no golden file {path}; run with S2S_UPDATE_GOLDEN=1"
    assert text == path.read_text()
    assert text == s2s.source(g)


def read_before_loop(x, n):
    y = x * 2
    s = np.sum(np.sin(y))
    for i in range(n):
        y = y * 1.3
    return s + np.sum(y)


def written_before_loop(x, n):
    y = np.zeros(3)
    y[0] = x[0]
    y[1:] = x[1:] * 2
    s = np.sum(np.sin(y))
    for i in range(n):
        y = y * 1.3
    return s + np.sum(y)


def read_before_while(x):
    y = x * 2
    s = np.sum(np.sin(y))
    while np.sum(y) < 5.0:
        y = y * 1.3
    return s + np.sum(y)


@pytest.mark.parametrize(
    "mark", [lambda f: f, s2s.checkpoint], ids=["plain", "checkpoint"]
)
@pytest.mark.parametrize("fn", [read_before_loop, written_before_loop],
                         ids=["bound", "written"])
def test_value_read_before_a_loop_that_rebinds_it(mark, fn) -> None:
    """The loop rebinds `y`, which the code before it read: that code's backward
    needs the value before the loop (np.cos(y)), not the loop's last one (JAX for
    the first; central differences for the second, which writes into y)."""
    from support import fd_grad

    x = np.array([0.1, 0.3, 0.5])
    got = s2s.grad(mark(fn))(x, 4)
    if fn is read_before_loop:
        assert_same(got, jax.grad(jax_twin(fn))(x, 4))
    else:
        np.testing.assert_allclose(got, fd_grad(fn, (x, 4), 0)[0], rtol=1e-6, atol=1e-8)


def test_value_read_before_a_while_that_rebinds_it() -> None:
    x = np.array([0.1, 0.3, 0.5])
    assert_same(s2s.grad(read_before_while)(x), jax.grad(jax_twin(read_before_while))(x))


# ---- policies (JAX's jax.checkpoint_policies) ----------------------------------------

P = s2s.checkpoint_policies
SAVES_NOTHING = [None, P.nothing_saveable, P.dots_saveable, P.checkpoint_dots,
                 P.dots_with_no_batch_dims_saveable, P.save_only_these_names("h"),
                 P.save_from_both_policies(P.dots_saveable, P.nothing_saveable)]
SAVES_EVERYTHING = [P.everything_saveable, P.save_anything_except_these_names("h"),
                    P.save_any_names_but_these("h"),
                    P.save_from_both_policies(P.dots_saveable, P.everything_saveable)]


def _policy_params():
    """Every policy in float64; float32 for one of each plan (the rest: -m slow)."""
    for policy in SAVES_NOTHING + SAVES_EVERYTHING:
        yield pytest.param(policy, np.float64, id=f"{policy!r}-float64")
        marks = () if policy in (None, P.everything_saveable) else pytest.mark.slow
        yield pytest.param(policy, np.float32, id=f"{policy!r}-float32", marks=marks)


@pytest.mark.parametrize("policy, dtype", list(_policy_params()))
def test_every_policy_gives_jaxs_gradient(policy, dtype) -> None:
    jpolicy = None if policy is None else eval(
        repr(policy).replace("s2s.checkpoint_policies.", "jax.checkpoint_policies."),
        {"jax": jax})
    x = np.random.default_rng(5).uniform(0.1, 0.5, size=3).astype(dtype)
    g = s2s.grad(s2s.checkpoint(carried_array, policy=policy))
    want_fn = jax.grad(jax.checkpoint(_jax_twin(carried_array), policy=jpolicy,
                                      static_argnums=(1,)))
    for n in (1, 3, 10):  # (calls 1, 2, 3 with new counts)
        got = g(x, n)
        want = want_fn(jnp.asarray(x), n)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-10 if dtype == np.float64 else 2e-5)


def test_a_policy_decides_whether_the_loop_is_checkpointed() -> None:
    x = np.array([0.2, 0.3])
    for policy in SAVES_NOTHING:
        f = s2s.checkpoint(carried_array, policy=policy)
        assert f.__s2s_checkpoint__ == "sqrt"
        assert "checkpoints.append" in s2s.source(_called(s2s.grad(f), x))
    for policy in SAVES_EVERYTHING:
        f = s2s.checkpoint(carried_array, every=4, policy=policy)
        assert not hasattr(f, "__s2s_checkpoint__")
        assert "checkpoints" not in s2s.source(_called(s2s.grad(f), x))
    assert s2s.checkpoint(policy=P.nothing_saveable, every=3)(
        carried_array).__s2s_checkpoint__ == 3
    # JAX's own policy objects, by the same names
    assert hasattr(s2s.checkpoint(carried_array, policy=jax.checkpoint_policies.dots_saveable),
                   "__s2s_checkpoint__")
    assert not hasattr(s2s.checkpoint(
        carried_array, policy=jax.checkpoint_policies.save_anything_except_these_names("a")),
        "__s2s_checkpoint__")
    assert s2s.checkpoint(carried_array, prevent_cse=False)(x, 3) == carried_array(x, 3)


def test_policies_without_a_meaning_on_numpy_are_refused() -> None:
    with pytest.raises(ValueError, match="no device memory to offload"):
        s2s.checkpoint(carried_array, policy=jax.checkpoint_policies.offload_dot_with_no_batch_dims(
            "device", "pinned_host"))
    with pytest.raises(ValueError, match="s2s.checkpoint takes one of s2s.checkpoint_policies"):
        s2s.checkpoint(carried_array, policy=lambda prim, *args, **params: True)
    with pytest.raises(ValueError, match="static_argnums"):
        s2s.checkpoint(carried_array, static_argnums=(1,))


def test_everything_saveable_keeps_the_tape_and_nothing_saveable_does_not() -> None:
    x = np.random.default_rng(7).uniform(0.1, 0.5, size=2000)
    peaks = []
    for policy in (P.everything_saveable, P.nothing_saveable):
        g = s2s.grad(s2s.checkpoint(carried_array, policy=policy))
        g(x, 2)
        tracemalloc.start()
        g(x, 400)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    assert peaks[0] > 400 * 2000 * 8 and peaks[1] < peaks[0] / 4, peaks


def _called(g, x):
    g(x, 3)
    return g


def _jax_twin(fn):
    return types.FunctionType(fn.__code__, {**fn.__globals__, "np": jnp}, fn.__name__)
