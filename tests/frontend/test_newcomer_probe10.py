"""Issue 23, the tenth newcomer probe: 44 everyday functions in styles the nine earlier
probes did not cover (newcomer_probe10_fns.py): numerical methods written out with
Python loops and slices, ML losses and steps, array idioms (ufunc methods, ``np.add.at``,
``np.bincount``, ``np.searchsorted``, ``np.fmax`` with NaN, the stack family, tuple
axes), and Python forms (``for ... else``, in-place updates through a second name or a
view, ``y.sort()``, ``np.fill_diagonal``, unpacking an array, ``slice`` objects,
``np.finfo``, chained comparisons), through grad at calls 1, 3 and 10, value_and_grad,
jvp, vmap of grad, hessian, jit of grad on both backends, grad at special inputs (also
after ten ordinary calls), vmap of grad there and the caller writing into every
transform's results; in float64 and float32 against JAX on the same source
(``newcomer_harness.twin``) or central differences where JAX cannot run it.

The sweep (``-m slow``: each function compiles dozens of JAX programs) pins each
function's class (``python tools/probe_tally.py`` counts them).  The functions whose
source means something else on JAX's arrays (``NUMPY_SEMANTICS``) and the module state
changed between calls (``STATE``) are checked against central differences of the
function as Python runs it; the default tier runs the fixes' tests, without JAX
compiles."""

from __future__ import annotations

import newcomer_harness as H  # (pytest puts this directory on sys.path)
import newcomer_probe10_cases as C
import newcomer_probe10_fns as F
import numpy as np
import pytest
from support import HAVE_JAX

import s2s

DTYPES = [np.float64, np.float32]

# the probe's classes (newcomer_harness.classify), per function; every function not
# named here is accepted and correct under every transform tried, in both dtypes
EXPECTED: dict[str, str] = {
    # `np.bincount(labels, weights=x)` (a primitive since issue 23's ufunc16: linear in
    # the weights) runs under every transform but s2s.jit(..., backend="jax"): the
    # labels are traced there, and the counts' length is their values' (located
    # TracedValueError); the JAX twin's jit refuses alike (float32: "dtype" below)
    "bincount_weighted": "both refuse",
    # `np.hstack([x, [1.0]])`: JAX's hstack refuses the list item (its twin fails in
    # every stage); s2s's vmap refuses `np.concatenate(..., axis=None)` ("vmap cannot
    # batch this", and so hessian); s2s.jit on JAX raised jax.numpy's TypeError from
    # emitted code before this probe (an internal error; fixed: the backend's joins
    # read a list item as an array)
    "stack_family": "both refuse",
    # `a = b = x * 2.0; a += 1.0` (chained assignment accepted by this probe) and
    # `v = y[1:]; v *= 3.0`: in NumPy one object changed through two names; s2s
    # refuses the in-place write, located ("would change in place an array that
    # another name ... also refers to"); JAX's arrays give the source another meaning
    # (`+=` rebinds one name), so the probe's twin raises (no oracle runs it)
    "multi_target_inplace": "both refuse",
    "view_inplace_base": "both refuse",
    # `np.fill_diagonal(g, 0.0)` as a statement: s2s refuses a NumPy call kept for its
    # effect; JAX's needs `inplace=False` (raises as written)
    "fill_diagonal_gram": "both refuse",
    # `m[np.ix_([0, 2], [1, 0])]`: "`np.ix_` has no derivative rule in s2s yet"; JAX's
    # ix_ refuses the lists as written
    "slice_objects_ix": "both refuse",
}
# float32 only
EXPECTED_F32: dict[str, str] = {
    # value_and_grad's value and jvp's tangent float64 where JAX's are float32: NumPy's
    # own function promotes (`np.sin(t)` of the Python-float clock is an np.float64;
    # `np.asarray([x[0], 1.0])` is float64); gradients float32 alike
    "heun_float_clock": "dtype",
    "array_of_scalars": "dtype",
    # (`schedule_step_state`, `lr = SCHEDULE[STEP % len(SCHEDULE)]` of a module list,
    # and `for_else_static`, a tuple default's Python floats read in a kept loop, gave
    # a float64 value where NumPy's own function gives float32: the item was read
    # through its array, `np.asarray(SCHEDULE)[i]`, `np.stack(items)[i]`, a float64
    # NumPy scalar; now `list_item` gives the Python number, weak as Python's read:
    # tests/test_dtype16.py)
    # NumPy's bincount sums float32 weights into float64 (JAX's stays float32): the
    # value and jvp's tangent float64, as NumPy's own function; gradients float32
    "bincount_weighted": "dtype",
}
# the float32 entries that come before EXPECTED's (a class both dtypes share otherwise)
F32_FIRST = {"bincount_weighted"}


@pytest.mark.slow
@pytest.mark.every_case
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", list(C.CASES))
def test_probe_sweep(name, dtype) -> None:
    """Each function's class is the one recorded: accepted and correct, or refused
    with a located TransformError (never WRONG, never an internal error)."""
    label, verdicts = C.classify(name, C.twin(), dtype)
    pin = EXPECTED_F32[name] if dtype == np.float32 and name in F32_FIRST else \
        H.pinned(name, dtype, EXPECTED, EXPECTED_F32)
    assert label == pin, verdicts


# ---- NumPy's meaning, not JAX's: central differences of every transform ---------------------

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


def _against_fd(f, key, calls, at=lambda c: None):
    make, run = TRANSFORMS[key]
    t = make(f)
    for c in range(1, calls + 1):
        at(c)
        x = C.X4 * (1.0 + 0.05 * c)
        tol = (1e-4, 1e-4) if key == "hessian_row" else (1e-6, 1e-8)
        np.testing.assert_allclose(run(t, x), _expected(key, f, x), *tol,
                                   err_msg=f"{key} call {c}")


@pytest.mark.slow
@pytest.mark.parametrize("key", list(TRANSFORMS))
@pytest.mark.parametrize("name", sorted(C.NUMPY_SEMANTICS - set(EXPECTED)))
def test_numpy_semantics_against_central_differences(name, key) -> None:
    """``y = x.copy(); y.sort()``: every transform gives the derivative of what NumPy
    computes (JAX's arrays give the same source another meaning; the probe's other two
    such functions, an array written in place through a second name or a view, are
    refused, pinned in EXPECTED)."""
    _against_fd(getattr(F, name), key, 3)


# ---- module state changed between calls ---------------------------------------------------

MODEL0 = (F.MODEL.w.copy(), F.MODEL.b)


def _reset() -> None:
    F.MODEL = F.Affine(MODEL0[0].copy(), MODEL0[1])
    F.STEP = 0
    F.SCHEDULE[:] = [1.0, 0.5, 0.25, 0.125]


def _instance_in_place(c):
    F.MODEL.w[:] = MODEL0[0] * (1.0 + 0.3 * c)


def _instance_attribute_rebound(c):
    F.MODEL.b = 0.1 * c - 0.2


def _instance_replaced(c):
    F.MODEL = F.Affine(MODEL0[0] * (-1.0) ** c, 0.05 * c)


def _step_counter(c):
    F.STEP = c


def _schedule_values(c):
    F.SCHEDULE[c % 4] = 2.0 + c


STATE = {
    "instance_in_place": ("callable_instance_state", _instance_in_place),
    "instance_attribute_rebound": ("callable_instance_state", _instance_attribute_rebound),
    "instance_replaced": ("callable_instance_state", _instance_replaced),
    "step_counter": ("schedule_step_state", _step_counter),
    "schedule_values": ("schedule_step_state", _schedule_values),
}


@pytest.mark.slow
@pytest.mark.parametrize("key", list(TRANSFORMS))
@pytest.mark.parametrize("label", list(STATE))
def test_module_state_changed_between_calls(label, key) -> None:
    """A module object (its array written in place, its attribute rebound, the object
    replaced) and a module step counter and schedule list, changed before each of ten
    calls of one transform object: the result is the function's at that call (central
    differences of it as Python runs it)."""
    name, at = STATE[label]
    _reset()
    try:
        _against_fd(getattr(F, name), key, 10, at)
    finally:
        _reset()


# ---- what the probe fixed -----------------------------------------------------------------


def zeros_init_step(w):
    m = v = np.zeros_like(w)
    g = 2.0 * w + np.sin(w)
    m = 0.9 * m + 0.1 * g
    v = 0.99 * v + 0.01 * g ** 2
    return np.sum(m * v + w ** 2)


def test_chained_assignment_to_names() -> None:
    """``m = v = np.zeros_like(w)`` (the probe's ``adam_zeros_init``) was refused,
    "chained assignment `a = b = ...` is not supported": it is ``m = ...; v = m``, one
    array bound to two names as Python binds it.  Against central differences; and a
    later in-place write through one of the names (NumPy would change the other too)
    is still refused, located at the write."""
    x = C.X4
    np.testing.assert_allclose(s2s.grad(zeros_init_step)(x),
                               H.fd_grad(zeros_init_step, (x,), 1e-6), rtol=1e-6, atol=1e-8)
    with pytest.raises(s2s.TransformError, match=r"(?s)`a \+= \.\.\.`.*a \+= 1\.0"):
        s2s.grad(F.multi_target_inplace)(x)


def test_builtin_sum_of_an_array_row() -> None:
    """``sum(m[0])``, Python's sum over a row of an array argument, was refused
    ("Python's built-in `sum` is supported over a list or tuple whose length is known
    ...") where ``sum(m)`` and ``sum(m[1:])`` ran: it adds the row's elements, as
    ``np.sum(m[0], axis=0)`` (Python's 0 of an empty row).  Grad against central
    differences."""
    m = C.M32
    np.testing.assert_allclose(s2s.grad(F.builtin_sum_rows)(m),
                               H.fd_grad(F.builtin_sum_rows, (m,), 1e-6), rtol=1e-6, atol=1e-8)


def ufunc_outers(x):
    o = np.add.outer(x, x ** 2)
    d = np.subtract.outer(x, np.cos(x))
    return np.sum(np.multiply.outer(x, x) * o) + np.sum(np.exp(-d ** 2))


def test_ufunc_outer_methods() -> None:
    """``np.add.outer``, ``np.subtract.outer``, ``np.multiply.outer`` (the probe's
    ``ufunc_outer_reduce``) were refused, "`np.add.outer` (builtin_function_or_method)
    is not a function s2s can transform", where jax.grad runs them: they are
    ``np.tensordot(a, b, axes=0)`` (add and subtract of each with the other's ones).
    Grad against central differences (vmap of grad: the slow test below)."""
    x = C.X4
    np.testing.assert_allclose(s2s.grad(ufunc_outers)(x), H.fd_grad(ufunc_outers, (x,), 1e-6),
                               rtol=1e-6, atol=1e-8)


@pytest.mark.slow  # (the default tier's budget)
def test_ufunc_outer_methods_under_vmap() -> None:
    """vmap of grad of the outer forms: the example's own outer, not the batch's."""
    x = C.X4
    np.testing.assert_allclose(s2s.vmap(s2s.grad(ufunc_outers))(np.stack([x, -x]))[1],
                               H.fd_grad(ufunc_outers, (-x,), 1e-6), rtol=1e-6, atol=1e-8)


def test_bincount_with_weights_is_differentiated() -> None:
    """``np.bincount(labels, weights=x)`` (the probe's ``bincount_weighted``) was
    refused, first as "not differentiable (it is piecewise constant ...)", then as
    having no rule: the counts with weights are sums of ``x`` (jax.grad
    differentiates them), and it is a primitive now (tests/test_ufunc16.py).  Grad
    against central differences."""
    np.testing.assert_allclose(s2s.grad(F.bincount_weighted)(C.X5),
                               H.fd_grad(F.bincount_weighted, (C.X5,), 1e-6),
                               rtol=1e-6, atol=1e-8)


@pytest.mark.skipif(not HAVE_JAX, reason="the JAX backend")
def test_jax_backend_joins_a_list_item() -> None:
    """``np.hstack([x, [1.0]])`` (the probe's ``stack_family``) under
    ``s2s.jit(..., backend="jax")`` raised jax.numpy's TypeError from emitted code,
    "hstack requires ndarray or scalar arguments, got <class 'list'>": NumPy reads
    the item ``[1.0]`` as an array, so the JAX backend's joins do too (no compile
    here: the backend's ``np.hstack`` on a JAX array; the slow test below jits it)."""
    import jax.numpy as jnp

    import s2s.backends.jax_numpy as jnp_s2s

    got = jnp_s2s.hstack([jnp.asarray([0.5, 2.0]), [1.0]])
    np.testing.assert_array_equal(np.asarray(got), [0.5, 2.0, 1.0])


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="the JAX backend")
def test_jax_backend_jit_of_stack_family() -> None:
    """The probe's ``stack_family`` under ``s2s.jit(s2s.grad(f), backend="jax")``, three
    calls, against central differences."""
    x = np.array([0.3, -0.7, 0.45])
    g = s2s.jit(s2s.grad(F.stack_family), backend="jax")
    for c in (1.0, 1.3, -0.8):
        np.testing.assert_allclose(np.asarray(g(x * c)), H.fd_grad(F.stack_family, (x * c,), 1e-6),
                                   rtol=1e-6, atol=1e-8)
