"""Issue 23, the fourth newcomer probe: 38 everyday functions of kinds the third probe
did not try (a flax-like Module with ``__call__`` over a params dict, an Adam step, label
smoothing, a Lennard-Jones energy by broadcasting, RK4 forwarding ``*args``, Horner
over a default list, a config dataclass, dispatch tables, ``**kwargs`` forwarding, an
f-string einsum, ``lru_cache``, ``math.prod``, reshape by -1, ``+=`` on a copy, a
``while True`` with a tolerance, a generator helper, lambdas made in a loop...) through
grad at three calls with changing values, value_and_grad, jvp, vjp, vmap, jacfwd,
jacrev, hessian and jit on both backends, in float64 and float32, against JAX on the
same source (``jax_twin``), or central differences where JAX cannot run it.

The sweep (``-m slow``: each function compiles dozens of JAX programs) pins each
function's class; the default tier checks what the probe fixed, against closed forms
and central differences (no JAX compile): a callable object read by a subscript
(an internal SyntaxError), a bound object's loop over its layers and its
``self.act is not None`` (refused), a module object's function attribute replaced
between calls (silently stale), a name rebound after an early return (refused)."""

from __future__ import annotations

import newcomer_harness as H
import newcomer_probe4_cases as C  # (pytest puts this directory on sys.path)
import newcomer_probe4_fns as F
import numpy as np
import pytest
from support import HAVE_JAX, central_grad, jax_twin

import s2s

DTYPES = [np.float64, np.float32]
X = np.array([0.3, -0.7, 1.2])

# the probe's classes (newcomer_probe4_cases.classify), per function; every function
# not named here is accepted and correct under every transform tried, in both dtypes
EXPECTED = {
    # (vmap, jacfwd and hessian of `acc = 0.0; for c in coeffs: acc = acc * x + c`, a
    # carry changing rank in the loop, refused before, run since ir/peel.py peels the
    # first iteration: tests/frontend/test_carried_rank.py)
    # (`out.insert(0, g)` in a loop, refused before, runs since list_edits.py:
    # test_list_fronts.py)
    # `while True:` whose body binds `x_new` before its `break` (refused before: "may be
    # used before it is assigned"): every transform runs it, vmap too (which JAX
    # refuses); jit on JAX of its gradient is refused by both (a traced `while`)
    "fixed_point_while": "both refuse",
    # (the Hessian of `np.linalg.norm(m, ord=1, axis=0)`, refused before by vmap, runs;
    # in float32 its jacfwd returns float64: EXPECTED_F32)
    # (`f"{idx},{idx[1:]}->{idx[0]}"` of `idx = "ijk"[: a.ndim]`, refused before ("an
    # f-string of values known only when the function runs"), runs: the `+` of its
    # parts, literals.py; tests/frontend/test_probe45_fixes.py)
    # (a dataclass default `cfg=CFG` with a tuple field, refused before at `.act`, runs:
    # the code is made for the tuple, made again when it changes: test_probe45_fixes.py)
    # (`compose(x, np.sin, np.exp)` into `def compose(x, *fns)`, `fs.append(lambda v:
    # v * k)` in a loop and `[lambda v, k=k: ... for k in ...]` then `for f in fs`, all
    # refused before, run: tests/frontend/test_function_lists.py)
    # (a generator function consumed by `sum(...)`, refused before at its `yield`, runs
    # since frontend/generators.py: tests/frontend/test_consumed_functions.py)
    # (`zip(*pts)` of a list a comprehension over `range(x.shape[0])` built runs since
    # list_edits.zip_columns: each column its own list; test_list_fronts.py)
}
# float32 only: values agree, but the dtype differs from JAX's
EXPECTED_F32 = {
    # NumPy's promotion: `c * np.sin(t)` of a Python-float `t` is float64 in NumPy
    # (JAX keeps float32): s2s follows NumPy, as the function run as written does
    "rk4_forward_args": "dtype",
    # (jacfwd of `clip_array_bounds`, `norm_ords` and `discounted_returns` in float32
    # returned float64, a rule's float64 weights times the float32 tangent: now cast
    # to the output's dtype, as JAX's tangent has it: tests/test_jacfwd_dtypes.py)
}


@pytest.mark.slow
@pytest.mark.every_case
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", list(C.CASES))
def test_probe_sweep(name, dtype) -> None:
    """Each function's class is the one recorded: accepted and correct, or refused
    with a located TransformError (never WRONG, never an internal error)."""
    import jax.scipy.special

    J = jax_twin(F)
    J.sps = jax.scipy.special
    label, verdicts = C.classify(name, J, dtype)
    assert label == H.pinned(name, dtype, EXPECTED, EXPECTED_F32), verdicts


def tol(dtype):
    return dict(rtol=1e-9, atol=1e-11) if dtype == np.float64 else dict(rtol=3e-5,
                                                                         atol=3e-6)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_callable_objects_in_a_list(dtype) -> None:
    """``SCALES[0](x)`` (an internal SyntaxError: the adapter was named by the text
    ``SCALES[0]``) and a bound object's ``for layer in self.layers`` with each layer's
    ``self.act is not None`` (both refused): grad, jvp, vmap against closed forms."""
    x = X.astype(dtype)
    g = s2s.grad(F.subscript_callable)(x)
    assert g.dtype == dtype
    np.testing.assert_allclose(g, np.cos(x) + 2.0, **tol(dtype))
    want = 8 * np.sin(x) * np.cos(x)  # (sum((2 sin x)^2))'
    np.testing.assert_allclose(s2s.grad(F.chain_loss)(x), want, **tol(dtype))


@pytest.mark.slow  # (the default tier has 2 s for this file)
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_a_bound_objects_layers_under_jvp_and_vmap(dtype) -> None:
    x = X.astype(dtype)
    want = 8 * np.sin(x) * np.cos(x)
    t = np.array([1.0, -0.5, 2.0], dtype)
    _, tangent = s2s.jvp(F.chain_loss, (x,), (t,))
    np.testing.assert_allclose(tangent, want @ t, **tol(dtype))
    batch = np.stack([x, 0.5 * x])
    np.testing.assert_allclose(s2s.vmap(F.chain_loss)(batch),
                               [F.chain_loss(b) for b in batch], **tol(dtype))


def test_a_replaced_function_attribute_is_read_at_the_next_call() -> None:
    """The regression (silently stale before): a module object's function attribute
    (``NET.act``, ``SCALES[1].act`` inside ``CHAIN.layers``) replaced after a first
    call; the same transform object generates its code again and follows it."""
    g_net, g_chain = s2s.grad(F.net_loss), s2s.grad(F.chain_loss)
    try:
        np.testing.assert_allclose(g_net(X), 2 * np.cos(X), rtol=1e-12)
        np.testing.assert_allclose(g_chain(X), 8 * np.sin(X) * np.cos(X), rtol=1e-12)
        F.NET.act, F.SCALES[1].act = np.tanh, np.tanh
        np.testing.assert_allclose(g_net(X), 2 * (1 - np.tanh(X) ** 2), rtol=1e-12)
        np.testing.assert_allclose(g_chain(X), central_grad(F.chain_loss, X), rtol=1e-7)
        F.NET.act, F.SCALES[1].act = np.sin, None
        np.testing.assert_allclose(g_net(X), 2 * np.cos(X), rtol=1e-12)
        np.testing.assert_allclose(g_chain(X), 8 * np.sin(X) * np.cos(X), rtol=1e-12)
    finally:
        F.NET.act, F.SCALES[1].act = np.sin, None


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_rebinding_after_an_early_return(dtype) -> None:
    """``if flag: (if deep: return a) return b`` then ``x = x * 2.0; return c``
    (refused before as reaching the end without a return): each path's gradient,
    and vmap, against closed forms."""
    x = X.astype(dtype)
    for flag, deep, want in ((False, True, 24 * x ** 2), (True, True, np.ones_like(x)),
                             (True, False, 2 * x)):
        got = s2s.grad(F.rebind_after_early_return)(x, flag, deep)
        np.testing.assert_allclose(got, want, **tol(dtype))
    batch = np.stack([x, -x])
    np.testing.assert_allclose(s2s.vmap(F.early_return_flag_on)(batch),
                               [F.early_return_flag_on(b) for b in batch], **tol(dtype))


def test_the_generator_helper_it_refused_runs_now() -> None:
    """The generator helper this probe found refused runs as the list of its items
    (``frontend/generators.py``; against JAX: ``test_consumed_functions.py``).  (A
    function passed through ``*args`` runs now: ``test_function_lists.py``;
    ``zip(*rows)`` of a list built when the function runs: ``test_list_fronts.py``.)"""
    g = s2s.grad(F.generator_pairs)
    for scale in (1.0, -0.5, 2.0):
        np.testing.assert_allclose(g(X * scale), central_grad(F.generator_pairs, X * scale),
                                   rtol=1e-7, atol=1e-9)


def test_a_name_first_bound_in_a_loop_read_after_it() -> None:
    """``for v in x: y = 2 sin(v)`` then ``y ** 2 + v`` (refused before): the last
    iteration's values, under grad, vmap and jit; a loop that runs no iteration
    raises Python's UnboundLocalError at the loop, not an error inside emitted code."""
    want = np.zeros_like(X)
    want[-1] = 8 * np.sin(X[-1]) * np.cos(X[-1]) + 1.0
    g = s2s.grad(F.last_value_after_loop)
    for scale in (1.0, -0.5, 2.0):
        np.testing.assert_allclose(g(X * scale), central_grad(F.last_value_after_loop, X * scale),
                                   rtol=1e-7)
    np.testing.assert_allclose(g(X), want, rtol=1e-12)
    batch = np.stack([X, -2 * X])
    np.testing.assert_allclose(s2s.vmap(F.last_value_after_loop)(batch),
                               [F.last_value_after_loop(b) for b in batch], rtol=1e-12)
    with pytest.raises(UnboundLocalError) as info:
        g(np.zeros(0))
    assert isinstance(info.value, s2s.TransformError)
    assert info.value.loc.file == F.__file__ and "for v in x:" in info.value.loc.text


def test_a_none_carry_under_vmap_keeps_the_values_dtype() -> None:
    """``x_new = None`` before a ``while`` on a value, examples running different
    counts: the batched result is float (it was an object array), against a Python
    loop over the examples."""
    batch = np.stack([X, 0.5 * X, 2.0 * X])
    got = s2s.vmap(F.none_carry_while)(batch)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, [F.none_carry_while(b) for b in batch], rtol=1e-12)


def test_an_lru_cached_helper_is_its_function() -> None:
    """``@functools.lru_cache def causal_mask(n)`` called with a shape (refused
    before: "not a function s2s can transform"): the function it caches."""
    x = np.arange(8.0).reshape(4, 2) / 8
    m = np.tril(np.ones((4, 4)))
    np.testing.assert_allclose(s2s.grad(F.lru_cached_mask)(x), 2 * m.T @ m @ x, rtol=1e-12)
