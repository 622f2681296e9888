"""Issue 23, the ninth newcomer probe: 40 everyday functions aimed at soundness, where
wrong numbers hide (newcomer_probe9_fns.py): module state read by the function and
changed between calls (a module array written in place or rebound, a module dict's
value, a class attribute, a global flag, a closure variable rebound by ``nonlocal``, a
module list appended to, an array default written in place), integer, bool and 0-d
arguments, float32 with Python floats, kinks and NaN at them, size-0 and size-1 axes,
``keepdims``, ``argmax``/``sort``/``unique``, in-place updates, ``einsum``/``norm``/
``clip``/``cumsum``, and results that are an argument or a view of it; through grad at
calls 1, 3 and 10, value_and_grad, jvp, vmap of grad, hessian, jit of grad on both
backends, grad at special inputs (also after ten ordinary calls of grad, jit of grad
and hessian), vmap of grad there, and the caller writing into every transform's
results (``alias_all``); in float64 and float32 against JAX on the same source
(``newcomer_harness.twin``) or central differences where JAX cannot run it.

The sweep (``-m slow``: each function compiles dozens of JAX programs) pins each
function's class (``python tools/probe_tally.py`` counts them).  The module state
changed between calls (``STATE``) is checked against central differences of the
function as Python runs it at that call; the default tier runs two of the fixes'
tests, without JAX compiles, the rest is slow."""

from __future__ import annotations

import newcomer_harness as H  # (pytest puts this directory on sys.path)
import newcomer_probe9_cases as C
import newcomer_probe9_fns as F
import numpy as np
import pytest
from support import HAVE_JAX

import s2s

DTYPES = [np.float64, np.float32]

# the probe's classes (newcomer_harness.classify), per function; every function not
# named here is accepted and correct under every transform tried, in both dtypes
EXPECTED: dict[str, str] = {
    # `for c in np.unique(labels):` of an integer argument not differentiated: runs (a
    # run-time loop over the distinct values; loops14: it was "`np.unique` has no
    # derivative rule"); under jax.jit the loop's length is traced (s2s.jit(...,
    # backend="jax") and jax.jit refuse the data-dependent size alike)
    "unique_label_means": "both refuse",
    # `out[x > 0] = ...`: vmap of grad "a mask that differs per example" and JAX's jit
    # (NonConcreteBooleanIndexError) refuse alike; JAX's arrays refuse the write itself
    "masked_assign": "both refuse",
    # `x[i] ** 2 + np.sum(x[:i] ...)` of an int argument `i`: under jax.jit the slice's
    # bound is traced (s2s.jit(..., backend="jax") and jax.jit refuse alike)
    "int_index_arg": "both refuse",
    # (alias15: ok now, clip_copy_inplace's `y = x.copy(); y[y < 0] = 0.0` under vmap,
    # a write at a mask that differs per example, is `y[:] = np.where(y_less_0, 0.0, y)`;
    # it was "both refuse", "writing at a batched index"; JAX's arrays refuse the write
    # itself: tests/frontend/test_alias15.py checks it against a `jnp.where` twin)
    # (fixed by this probe, ok now: global_flag_l1's vmap of grad and hessian, the rank of
    # `np.isnan(...)` in the abs rule on the branch the first example did not take was
    # not inferred: "the rank of `where_isnan_absolute_x` is unknown")
}
# float32 only
EXPECTED_F32: dict[str, str] = {
    # value_and_grad's value and jvp's tangent float64 where JAX's are float32: NumPy's
    # own function promotes (`np.sum(...) * np.arange(n)`, `np.sum(x) * np.argmax(x)`:
    # float32 times int64 is float64 in NumPy, float32 in JAX); gradients float32 alike
    "standardize_rows": "dtype",
    "argmax_pick": "dtype",
}


@pytest.mark.slow
@pytest.mark.every_case
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", list(C.CASES))
def test_probe_sweep(name, dtype) -> None:
    """Each function's class is the one recorded: accepted and correct, or refused
    with a located TransformError (never WRONG, never an internal error)."""
    label, verdicts = C.classify(name, H.twin(F), dtype)
    assert label == H.pinned(name, dtype, EXPECTED, EXPECTED_F32), verdicts


# ---- module state changed between calls ---------------------------------------------------

W0, CFG0, TERMS0 = F.W.copy(), dict(F.CFG), list(F.TERMS)
DEFAULT = F.array_default_written.__defaults__[0]
DEFAULT0 = DEFAULT.copy()


def _reset() -> None:
    F.W = W0.copy()
    F.CFG = dict(CFG0)
    F.TERMS[:] = TERMS0
    F.Decay.rate = 0.5
    F.USE_L1 = False
    F.set_closure_scale(1.0)
    DEFAULT[:] = DEFAULT0


def _array_in_place(c):
    F.W[:] = W0 * (1.0 + 0.3 * c)


def _array_rebound(c):
    F.W = W0 * (1.0 - 0.2 * c)


def _dict_value(c):
    F.CFG["lam"] = 0.1 * (1 + c)
    F.CFG["bias"] = 0.5 - 0.2 * c


def _dict_rebound(c):
    F.CFG = {"lam": 0.05 * c, "bias": 0.3 * c}


def _class_attribute(c):
    F.Decay.rate = 0.5 + 0.25 * c


def _flag(c):
    F.USE_L1 = bool(c % 2)


def _closure(c):
    F.set_closure_scale(1.0 + c)


def _list_grown(c):
    F.TERMS[:] = TERMS0 + [0.25] * (c % 3)


def _list_values(c):
    F.TERMS[:] = [1.0, 0.5 + 0.1 * c]


def _default_in_place(c):
    DEFAULT[:] = DEFAULT0 * (1.0 + c)


# label: (function, the state at call c)
STATE = {
    "array_in_place": ("module_array_weights", _array_in_place),
    "array_rebound": ("module_array_weights", _array_rebound),
    "dict_value": ("module_dict_coef", _dict_value),
    "dict_rebound": ("module_dict_coef", _dict_rebound),
    "class_attribute": ("class_attr_rate", _class_attribute),
    "flag": ("global_flag_l1", _flag),
    "closure": ("closure_rebound", _closure),
    "list_grown": ("module_list_terms", _list_grown),
    "list_values": ("module_list_terms", _list_values),
    "default_in_place": ("array_default_written", _default_in_place),
}
TRANSFORMS = {  # name: (make, result -> the gradient's part compared)
    "grad": (s2s.grad, lambda g, x: g(x)),
    "jit": (lambda f: s2s.jit(s2s.grad(f)), lambda g, x: g(x)),
    "value_and_grad": (s2s.value_and_grad, lambda g, x: g(x)[1]),
    "vmap_grad": (lambda f: s2s.vmap(s2s.grad(f)), lambda g, x: g(np.stack([x, -x]))[1]),
    "jvp": (lambda f: f, lambda f, x: s2s.jvp(f, (x,), (np.ones_like(x),))[1]),
    "hessian_row": (s2s.hessian, lambda h, x: h(x)[0]),
}


def _expected(key, f, x):
    if key == "hessian_row":
        eps = 1e-4
        e = np.zeros_like(x)
        e[0] = eps
        return (H.fd_grad(f, (x + e,), 1e-5) - H.fd_grad(f, (x - e,), 1e-5)) / (2 * eps)
    if key == "vmap_grad":  # (the second example, -x)
        return H.fd_grad(f, (-x,), 1e-6)
    g = H.fd_grad(f, (x,), 1e-6)
    return np.sum(g) if key == "jvp" else g


def _state_case(label, key) -> None:
    name, at = STATE[label]
    f = getattr(F, name)
    make, run = TRANSFORMS[key]
    _reset()
    try:
        t = make(f)
        for c in range(1, 11):
            at(c)
            x = C.X4 * (1.0 + 0.05 * c)
            tol = (1e-4, 1e-4) if key == "hessian_row" else (1e-6, 1e-8)
            np.testing.assert_allclose(run(t, x), _expected(key, f, x), *tol,
                                       err_msg=f"{label} {key} call {c}")
    finally:
        _reset()


@pytest.mark.slow  # (the default tier's budget: seconds of transforms)
def test_module_state_read_at_each_call() -> None:
    """A module array written in place between calls: grad's gradient is the one of the
    function at that call (ten calls, central differences)."""
    _state_case("array_in_place", "grad")


@pytest.mark.slow
@pytest.mark.parametrize("key", list(TRANSFORMS))
@pytest.mark.parametrize("label", list(STATE))
def test_module_state_changed_between_calls(label, key) -> None:
    """Every kind of module state of the probe, changed before each of ten calls of one
    transform object: the result is the function's at that call (central differences
    of it as Python runs it; ``s2s.jit(..., backend="jax")`` is left out: it reads
    module state when JAX traces, as ``jax.jit``, docs/python-subset.md)."""
    _state_case(label, key)


# ---- what the probe fixed -----------------------------------------------------------------


def test_vmap_of_grad_through_a_module_flag_branch() -> None:
    """``if USE_L1: return np.sum(np.abs(x)) ...`` with the flag False: vmap of grad
    (and hessian, a vmap of jvp) refused "the rank of `where_isnan_absolute_x` is
    unknown": the rank of ``np.isnan(...)`` in abs's rule, on the branch the first
    example did not take, was not inferred (``isnan``/``isfinite`` are elementwise).
    Then the flag set: the branch runs, against central differences."""
    _reset()
    try:
        g = s2s.vmap(s2s.grad(F.global_flag_l1))
        xs = np.stack([C.X4, -0.5 * C.X4])
        for flag in (False, True, False):
            F.USE_L1 = flag
            np.testing.assert_allclose(
                g(xs), np.stack([H.fd_grad(F.global_flag_l1, (v,), 1e-6) for v in xs]),
                rtol=1e-6, atol=1e-8)
    finally:
        _reset()


MODE = "l2"
K = 3


def mode_branch(x):
    if MODE == "l2":
        return np.sum(x ** 2)
    elif MODE == "l1":
        return np.sum(np.abs(x))
    return np.sum(np.cosh(x))


def _helper(x):
    if MODE == "l2":
        return x ** 2
    return np.abs(x) * 3.0


def mode_in_callee(x):
    return np.sum(_helper(x) * np.cos(x))


def k_slices(x):
    return np.sum(x[:K] ** 2) + np.sum(np.cos(x[K:]))


def _fd_jacobian_row(f, x):
    return H.fd_grad(f, (x,), 1e-6)


def test_jacrev_reads_a_module_string_at_each_call() -> None:
    """``if MODE == "l2": ...`` with the module string ``MODE`` changed between calls:
    jacrev (the vmap of the VJP's emitted code, which spells the test ``MODE ==
    "l2"``) decided the test as a dict key's when its code was made and gave the old
    branch's Jacobian (``2x`` where ``sign(x)`` is the function's, the object made
    after the change too, the VJP's code being shared), and the hessian of a callee's
    such test a wrong row.  Against central differences of the function at each call."""
    global MODE
    x = np.array([0.3, -0.7, 0.45])
    j, h = s2s.jacrev(mode_branch), s2s.hessian(mode_in_callee)
    try:
        for MODE in ("l2", "l1", "cosh", "l1", "l2"):
            np.testing.assert_allclose(j(x), _fd_jacobian_row(mode_branch, x),
                                       rtol=1e-6, atol=1e-8, err_msg=MODE)
            e = np.array([1e-4, 0.0, 0.0])
            row = (_fd_jacobian_row(mode_in_callee, x + e)
                   - _fd_jacobian_row(mode_in_callee, x - e)) / 2e-4
            np.testing.assert_allclose(h(x)[0], row, rtol=1e-4, atol=1e-4, err_msg=MODE)
    finally:
        MODE = "l2"


@pytest.mark.slow  # (the default tier's budget: seconds of transforms)
def test_jacrev_reads_a_module_int_bound_at_each_call() -> None:
    """``x[:K]`` with the module int ``K`` changed between calls: jacrev's vmap of
    the VJP checked ``K`` in the emitted VJP's namespace (set only when that code is
    called itself), so its code specialized for ``K = 3`` ran at ``K = 4``: NumPy's
    ValueError from emitted code ("could not broadcast ... (1,2) into (1,1)")."""
    global K
    x = np.array([0.3, -0.7, 0.45, 1.2, 0.2])
    j = s2s.jacrev(k_slices)
    try:
        for K in (4, 0, 1, 2, 3, 4, 0, 1):
            np.testing.assert_allclose(j(x), _fd_jacobian_row(k_slices, x),
                                       rtol=1e-6, atol=1e-8, err_msg=str(K))
    finally:
        K = 3


SCALE = 2.0
ACT = np.tanh
SCALES = (1.0, 0.5)


def scaled_sin(x):
    return SCALE * np.sum(np.sin(x))


def act_sq(x):
    return np.sum(ACT(x) ** 2)


def scaled_powers(x):
    return sum(s * np.sum(x ** (i + 2)) for i, s in enumerate(SCALES))


def through_inner_grads(y):
    return np.sum((s2s.grad(scaled_sin)(y) + s2s.grad(act_sq)(y)
                   + s2s.grad(scaled_powers)(y)) * np.cos(y))


@pytest.mark.slow  # (the default tier's budget: seconds of transforms)
def test_a_transform_in_the_body_reads_module_state_at_each_call() -> None:
    """``s2s.grad(scaled_sin)(y)`` written in the body, the outer grad (and its jit)
    called after the module changed: the inner transform's emitted code kept the
    ``SCALE`` of the first call (its namespace was given the module's values only when
    that transform was called itself), and the caller was not made again when ``ACT``
    was rebound (the inner code inlines the function, so never reads the name) nor
    when ``SCALES`` grew (IndexError from emitted code, or a gradient of the old
    length): wrong gradients from the second call on.  Central differences of the
    function at each call."""
    global SCALE, ACT, SCALES
    x = np.array([0.3, -0.7, 0.45])
    g, j = s2s.grad(through_inner_grads), s2s.jit(s2s.grad(through_inner_grads))
    try:
        for c in range(4):
            SCALE, ACT, SCALES = 2.0 + c, (np.tanh, np.sin)[c % 2], (1.0, 0.5, 0.25)[:1 + c % 3]
            expected = H.fd_grad(through_inner_grads, (x,), 1e-6)
            np.testing.assert_allclose(g(x), expected, rtol=1e-6, atol=1e-8, err_msg=str(c))
            np.testing.assert_allclose(j(x), expected, rtol=1e-6, atol=1e-8, err_msg=str(c))
    finally:
        SCALE, ACT, SCALES = 2.0, np.tanh, (1.0, 0.5)
