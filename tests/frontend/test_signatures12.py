"""The functions people actually write (issue 23; signatures12_fns.py): each under
grad, value_and_grad, jvp, vmap of grad, jacfwd/hessian and ``s2s.jit`` (NumPy and
JAX backends), float64 and float32, calls 1, 3 and 10 with changing values.

1. ``combine(*terms, **weights)`` reading ``weights.get(f"w{i}", 1.0)`` in a loop
   over ``enumerate(terms)`` (newcomer probe 6's ``star_args_kwargs``): refused
   ("an f-string of values known only when the function runs"); the loop now unrolls
   over the call's terms, so each key is a constant.
2. ``rng = np.random.default_rng(0)`` in a callee: refused under reverse mode (the
   callee's VJP runs its forward again); a generator from a literal seed draws the
   same numbers again, so that second run is sound.  Under vmap every example draws
   what one call draws (NumPy called per example, JAX's unbatched key), where the
   batch shared one generator (example 1 got the next numbers: WRONG against JAX).
   An unseeded draw, ``default_rng()``, a seed argument or a generator passed in
   stay refused at the draw.
3. Factories with statements before the nested ``def``, a nested ``def g(*args)``,
   and defaults that are a module's array or a factory's parameter: refused ("`g` is
   a function here, used as a value") except ``*args``.
4. ``for op in ops[:k]`` with ``k`` an argument: refused ("constant bounds").

Expected values: JAX on the same source (``twin``, ``np.random`` left NumPy's: the
draws are constants there too), central differences of the function run as written,
closed forms; never s2s.  The default tier runs one representative of each item
against central differences (no JAX); ``-m slow`` runs the JAX matrix."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import numpy as np
import pytest
import signatures12_fns as F  # (pytest puts this directory on sys.path)
from support import HAVE_JAX, assert_close_to, compiled, fd_grad

import s2s

X = np.array([0.3, -0.7, 0.45, 1.2])
DTYPES = [np.float64, np.float32]
CALLS = (1, 3, 10)


def _x(call: int, dtype=np.float64) -> np.ndarray:
    return (X * (1 + 0.1 * call) - 0.05 * call).astype(dtype)


def _fd(f, x, *rest) -> np.ndarray:
    return fd_grad(f, (x, *rest), 0)[0]


def _fd_hessian(f, x, *rest, eps=1e-5) -> np.ndarray:
    g = s2s.grad(f)  # (differences of the gradient, itself checked against differences)
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = eps
        cols.append((g(x + e, *rest) - g(x - e, *rest)) / (2 * eps))
    return np.stack(cols, axis=-1)


def twin():
    """signatures12_fns's source with numpy bound to jax.numpy and ``np.random``
    left NumPy's (a JAX user draws constants with NumPy too)."""
    path = Path(F.__file__)
    text = re.sub(r"^import numpy as np$", "import jax.numpy as np\nimport numpy as onp",
                  path.read_text(), flags=re.M)
    text = re.sub(r"\bnp\.random\.", "onp.random.", text)
    spec = importlib.util.spec_from_loader("signatures12_fns_jax", loader=None)
    module = importlib.util.module_from_spec(spec)
    module.__file__ = str(path)
    sys.modules[spec.name] = module
    exec(compile(text, str(path), "exec"), module.__dict__)
    return module


# ---- the default tier: one of each item, against central differences ---------------


def test_terms_weighted_by_fstring_keys_of_kwargs() -> None:
    """``combine(*terms, **weights)`` given directly: the derivative in each term is
    its weight (1.0 where not given)."""
    assert float(s2s.grad(F.combine)(1.5, -2.0, 0.25, w0=0.5, w2=3.0)) == 0.5
    assert float(s2s.grad(F.combine, argnums=2)(1.5, -2.0, 0.25, w0=0.5, w2=3.0)) == 3.0


@pytest.mark.slow
def test_star_args_kwargs_of_probe_6() -> None:
    x = _x(3)
    np.testing.assert_allclose(s2s.grad(F.star_args_kwargs)(x), _fd(F.star_args_kwargs, x),
                               rtol=1e-6, atol=1e-8)


@pytest.mark.slow
def test_combine_given_directly_at_ten_calls() -> None:
    """``combine`` given directly, its terms and weights changing between calls
    (the derivative in the first term is ``w0``, 1.0 where not given)."""
    g = s2s.grad(F.combine)
    for call in range(1, 11):
        w0 = 0.25 * call
        terms = [float(t) for t in range(1, 2 + call % 3)]
        weights = {"w0": w0} if call % 2 else {"w1": 3.0}
        got = g(*terms, **weights)
        assert float(got) == (w0 if call % 2 else 1.0), (call, got)


@pytest.mark.slow
@pytest.mark.parametrize("calls", [pytest.param(CALLS, marks=pytest.mark.slow), (1,)],
                         ids=["1-3-10", "1"])
def test_a_draw_from_a_literal_seed_in_a_callee(calls) -> None:
    """grad (vmap of grad and hessian too at calls 1, 3 and 10): the callee's forward
    run again draws the same numbers; NumPy's global stream is left as it was."""
    g, h, vg = (s2s.grad(F.noise_in_callee), s2s.hessian(F.noise_in_callee),
                s2s.vmap(s2s.grad(F.noise_in_callee)))
    for call in calls:
        x = _x(call)
        state = np.random.get_state()[1].copy()
        np.testing.assert_allclose(g(x), _fd(F.noise_in_callee, x), rtol=1e-6, atol=1e-8)
        if len(calls) > 1:
            rows = vg(np.stack([x, -x]))
            np.testing.assert_allclose(rows[1], _fd(F.noise_in_callee, -x), rtol=1e-6,
                                       atol=1e-8)
            np.testing.assert_allclose(h(x), _fd_hessian(F.noise_in_callee, x), rtol=1e-5,
                                       atol=1e-7)
        np.testing.assert_array_equal(np.random.get_state()[1], state)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["factory_statements", "factory_param_default",
                                  "factory_star_args", "factory_lambda"])
def test_factories_against_central_differences(name) -> None:
    fn = getattr(F, name)
    for call in CALLS:
        x = _x(call)
        np.testing.assert_allclose(s2s.grad(fn)(x), _fd(fn, x), rtol=1e-6, atol=1e-7)


def test_a_factory_default_of_a_module_array() -> None:
    """``def g(x, w=W0)`` in a factory, ``W0`` changed in place (call 3) and rebound
    (call 10) between calls: each call reads it as the factory's ``def`` would then."""
    g = s2s.grad(F.factory_module_default)
    saved = F.W0
    try:
        for call in (1, 3, 10):
            if call == 3:
                F.W0[:] = saved * 1.5
            if call == 10:
                F.W0 = np.array([1.0, 2.0, -3.0, 4.0])
            x = _x(call)
            got = g(x)
            np.testing.assert_allclose(got, _fd(F.factory_module_default, x), rtol=1e-6,
                                       atol=1e-8)
            assert not np.shares_memory(got, F.W0) and not np.shares_memory(got, x)
    finally:
        F.W0 = saved
        saved[:] = [0.5, -1.0, 2.0, 0.25]


def test_a_loop_over_functions_up_to_a_run_time_count() -> None:
    """One transform of ``for op in ops[:k]`` called with k = 1, 3, -1, 0:
    each call takes the functions its own k selects."""
    g = s2s.grad(F.first_k_ops)
    x = _x(1)
    for k in (1, 3, -1, 0):
        got = g(x, k)
        np.testing.assert_allclose(got, _fd(F.first_k_ops, x, k), rtol=1e-6, atol=1e-8,
                                   err_msg=str(k))
        got[:] = 7.0  # (a result written into: the next call's is its own)
    np.testing.assert_allclose(g(x, 2), _fd(F.first_k_ops, x, 2), rtol=1e-6, atol=1e-8)


REFUSED = {
    # name: (the line quoted, a phrase of the message)
    "unseeded_in_callee": ("np.random.normal(size=x.shape)", "second time"),
    "entropy_seeded_in_callee": ("rng = np.random.default_rng()", "second time"),
    "seed_argument_in_callee": ("rng = np.random.default_rng(seed)", "second time"),
    "generator_passed_to_callee": ("rng.normal(size=x.shape)", "second time"),
    "factory_draws": ("noise = np.random.normal(size=4)", "once per call of the factory"),
    "factory_writes": ('d["a"] = k', "does more than bind names"),
    "factory_local_default": ("def g(x, w=scale):", "a default of a factory's nested"),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_what_has_no_sound_meaning_is_refused_at_the_users_line(name) -> None:
    line, phrase = REFUSED[name]
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(getattr(F, name))(X)
    message = str(info.value)
    assert "signatures12_fns.py" in message and line in message, message
    assert phrase in message and "Instead:" in message, message


def test_a_run_time_step_of_functions_is_refused_at_the_slice() -> None:
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(F.run_time_step)(X, 2)
    message = str(info.value)
    assert "ops[::k]" in message and "this slice's step" in message, message
    assert "Instead:" in message, message


# ---- -m slow: against JAX on the same source -----------------------------------------

ONE_ARG = ["star_args_kwargs", "noise_in_callee", "noise_drawn_in_a_loop",
           "factory_statements", "factory_star_args", "factory_module_default",
           "factory_param_default", "factory_lambda"]
# on the JAX backend a loop is one traced body (lax.fori_loop): a draw in it is refused
# (JAX, tracing the Python loop, draws at each iteration; s2s gave one draw for all)
DRAWS_IN_LOOPS = {"noise_drawn_in_a_loop"}
# name: the run-time counts (as tuples of the arguments after x) each call passes
WITH_COUNTS = {"first_k_ops": [(1,), (3,), (-1,)], "first_k_module_ops": [(4,), (0,), (-3,)],
               "window_of_ops": [(1, -1), (-4, 4), (0, 9)],
               "every_other_op": [(4,), (-1,), (2,)]}


@pytest.fixture(scope="module")
def J():
    return twin()


def _close(got, expected, dtype) -> None:
    assert_close_to(got, expected, dtype, f64=1e-8, f32=5e-4, dtype_of="expected-arrays",
                    scale_atol=True)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", ONE_ARG)
def test_every_transform_matches_jax(name, dtype, J) -> None:
    import jax

    ours, theirs = getattr(F, name), getattr(J, name)
    g, vg = s2s.grad(ours), s2s.value_and_grad(ours)
    jitted, on_jax = s2s.jit(s2s.grad(ours)), s2s.jit(s2s.grad(ours), backend="jax")
    for call in CALLS:
        x = _x(call, dtype)
        v = (x[::-1] * 0.5 + 0.25).astype(dtype)
        expected = compiled(jax.grad(theirs))(x)
        _close(g(x), expected, dtype)
        _close(vg(x), compiled(jax.value_and_grad(theirs))(x), dtype)
        _close(jitted(x), expected, dtype)
        if name in DRAWS_IN_LOOPS:  # (one traced loop body would draw once: refused)
            with pytest.raises(s2s.TransformError, match="a random draw in a loop") as info:
                on_jax(x)
            assert "signatures12_fns.py" in str(info.value), info.value
        else:
            _close(on_jax(x), expected, dtype)
        _close(s2s.jvp(ours, (x,), (v,)),
               compiled(lambda x, v: jax.jvp(theirs, (x,), (v,)))(x, v), dtype)
        batch = np.stack([x, 0.5 * x, x[::-1].copy()])
        _close(s2s.vmap(g)(batch), compiled(jax.vmap(jax.grad(theirs)))(batch), dtype)
        _close(s2s.hessian(ours)(x), compiled(jax.hessian(theirs))(x), dtype)
        _close(s2s.jacfwd(g)(x), compiled(jax.jacfwd(jax.grad(theirs)))(x), dtype)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", list(WITH_COUNTS))
def test_slices_of_functions_match_jax(name, dtype, J) -> None:
    """One transform per function, called with each count in turn (JAX traces per
    count: the counts are static to it)."""
    import jax

    ours, theirs = getattr(F, name), getattr(J, name)
    g, vg = s2s.grad(ours), s2s.value_and_grad(ours)
    jitted, hess = s2s.jit(s2s.grad(ours)), s2s.hessian(ours)
    for call, rest in zip(CALLS, WITH_COUNTS[name]):
        x = _x(call, dtype)
        n = len(rest)
        expected = jax.grad(theirs)(x, *rest)
        _close(g(x, *rest), expected, dtype)
        _close(vg(x, *rest), jax.value_and_grad(theirs)(x, *rest), dtype)
        _close(jitted(x, *rest), expected, dtype)
        _close(hess(x, *rest), jax.hessian(theirs)(x, *rest), dtype)
        batch = np.stack([x, 0.5 * x])
        _close(s2s.vmap(g, in_axes=(0,) + (None,) * n)(batch, *rest),
               jax.vmap(jax.grad(theirs), in_axes=(0,) + (None,) * n)(batch, *rest), dtype)
        _close(s2s.jvp(lambda v: ours(v, *rest), (x,), (x[::-1].copy(),)),
               jax.jvp(lambda v: theirs(v, *rest), (x,), (x[::-1].copy(),)), dtype)
        on_jax = s2s.jit(s2s.grad(ours), backend="jax", static_argnums=tuple(range(1, n + 1)))
        _close(on_jax(x, *rest), expected, dtype)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_combine_given_directly_matches_jax(dtype, J) -> None:
    """``combine(*terms, **weights)`` transformed itself, in each term (argnums),
    its weights and count changing between calls."""
    import jax

    for call in CALLS:
        terms = tuple(np.asarray(t, dtype) for t in _x(call, dtype)[: 2 + call % 3])
        weights = {"w0": 0.5 * call, "w2": 2.0} if call != 3 else {"w1": -1.0}
        for k in range(len(terms)):
            _close(s2s.grad(F.combine, argnums=k)(*terms, **weights),
                   jax.grad(J.combine, argnums=k)(*terms, **weights), dtype)
        _close(s2s.value_and_grad(F.combine)(*terms, **weights),
               jax.value_and_grad(J.combine)(*terms, **weights), dtype)
        _close(s2s.grad(F.keyed_by_name)(_x(call, dtype), a0=0.5, b1=call * 1.0),
               jax.grad(J.keyed_by_name)(_x(call, dtype), a0=0.5, b1=call * 1.0), dtype)
