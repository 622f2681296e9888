"""Rules on the argument forms NumPy accepts beside the common one, through every
transform (grad, jvp, vjp, vmap) against JAX on the same source, in float64 and
float32.  The systematic rows are in rule_rows_uncommon_forms.py (checked by
test_rules.py, test_forward_rules.py and test_vmap_rules.py); this file holds what
that table does not express: transforms with an array output (vjp), Python-float
arguments, and forms refused at transform time with a located error."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import rule_fns_forms as F  # noqa: E402
import s2s  # noqa: E402
from rule_table import rng_for, twin_of  # noqa: E402

TOL = {64: {"rtol": 1e-10, "atol": 1e-12}, 32: {"rtol": 2e-5, "atol": 2e-5}}


def close(got, expected, bits=64):
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    if bits == 32:
        assert got.dtype == expected.dtype == np.float32, (got.dtype, expected.dtype)
    np.testing.assert_allclose(got, expected, **TOL[bits])


def test_vstack_of_an_array_argument_sends_each_row_its_cotangent() -> None:
    """Each row its own cotangent: it repeated the first row's ([0.878, 0.878])."""
    x = np.array([0.5, -0.14])
    close(s2s.grad(F.f_vstack_sin)(x), jax.grad(twin_of(F.f_vstack_sin))(x))


def test_linspace_is_differentiable_in_start() -> None:
    """JAX: -0.3439 at a = 1.2; s2s had linspace as a constant (derivative 0)."""
    got = s2s.grad(F.f_linspace_sin)(1.2)
    close(got, jax.grad(twin_of(F.f_linspace_sin))(1.2))
    assert abs(float(got) + 0.3439) < 1e-4


@pytest.mark.slow
def test_einsum_sublists_are_read_as_subscripts() -> None:
    """x was taken for np.einsum's subscripts: a zero derivative, and with two
    operands a JVP that called np.zeros_like((0, 1)) and crashed."""
    r = rng_for("einsum-sublists")
    x, y = r.normal(size=(2, 3)), r.normal(size=(3, 2))
    twin = twin_of(F.f_einsum_sublists)
    got = s2s.grad(F.f_einsum_sublists, argnums=(0, 1))(x, y)
    for g, e in zip(got, jax.grad(twin, argnums=(0, 1))(x, y)):
        close(g, e)
    tangents = (r.normal(size=(2, 3)), r.normal(size=(3, 2)))
    close(s2s.jvp(F.f_einsum_sublists, (x, y), tangents)[1],
          jax.jvp(twin, (x, y), tangents)[1])
    assert "np.einsum(\"ab->ba\", x)" in s2s.source(s2s.grad(F.f_einsum_sublists_transpose))


@pytest.mark.parametrize("fn", [F.r_einsum_sublist_name, F.r_einsum_label_out_of_range])
def test_einsum_sublists_not_known_now_are_refused_at_the_call(fn) -> None:
    with pytest.raises(s2s.TransformError, match="sublists must be constants") as err:
        s2s.grad(fn)(np.ones((2, 3)))
    assert "rule_fns_forms.py" in str(err.value) and "np.einsum(x, " in str(err.value)


# x ** y at a Python-float 0.0: the rule's x1 ** (x2 - 1) raised ZeroDivisionError
# (0.0 ** -0.5); np.power gives inf, as JAX's derivative is
POWER_AT_ZERO = {
    "sqrt": (F.p_sqrt, (0.0,)),
    "power_2_5": (F.p_power_2_5, (0.0,)),
    "power_float_one": (F.p_power_float_one, (0.0,)),
    "power_float_zero": (F.p_power_float_zero, (0.0,)),
    "np_power_negative": (F.p_np_power_negative, (0.0,)),
    "np_power_negative_zero": (F.p_np_power_negative, (-0.0,)),
    "np_power_both": (F.p_np_power, (0.0, 0.5)),
    "np_power_negative_exponent": (F.p_np_power, (0.0, -2.0)),
    "zero_base": (F.p_zero_base, (0.5,)),
    "zero_base_two": (F.p_zero_base, (2.0,)),
}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # 0.0 ** -0.5, on purpose
@pytest.mark.parametrize("key", POWER_AT_ZERO)
def test_power_at_a_python_float_zero_matches_jax(key: str) -> None:
    fn, args = POWER_AT_ZERO[key]
    argnums = tuple(range(len(args)))
    twin = twin_of(fn)
    got = s2s.grad(fn, argnums=argnums)(*args)
    for g, e in zip(got, jax.grad(twin, argnums=argnums)(*args)):
        close(g, e)  # inf where JAX has inf, nan where it has nan
    tangents = tuple(1.0 for _ in args)
    close(s2s.jvp(fn, args, tangents)[1], jax.jvp(twin, args, tangents)[1])
    got2 = s2s.grad(s2s.grad(fn, argnums=0))(*args)  # emitted np.power stays np.power
    close(got2, jax.grad(jax.grad(twin, argnums=0))(*args))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_power_at_zero_in_float32_arrays_matches_jax() -> None:
    x = np.array([0.0, 0.25, 4.0], np.float32)
    for fn in (F.p_sqrt, F.p_np_power_negative, F.p_power_float_zero):
        twin = twin_of(fn)
        out, pullback = s2s.vjp(fn, x)
        g = np.ones(3, np.float32)
        close(pullback(g)[0], jax.vjp(twin, x)[1](g)[0], 32)


def test_a_negative_float_power_of_python_zero_raises_as_the_function_does() -> None:
    """``x ** -1.0`` on the Python float 0.0 raises in the function itself; the
    gradient runs the same line (JAX, on arrays, gives -inf)."""
    with pytest.raises(ZeroDivisionError):
        F.p_power_negative(0.0)
    with pytest.raises(ZeroDivisionError):
        s2s.grad(F.p_power_negative)(0.0)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # 0 / 0, on purpose
def test_var_of_one_element_with_ddof_one_is_nan_as_jax() -> None:
    """count - ddof = 0: NumPy and JAX divide (nan); the rule's Python float raised
    ZeroDivisionError."""
    x = rng_for("var-ddof").normal(size=(2, 3))
    twin = twin_of(F.s_var_of_one_with_ddof)
    close(s2s.grad(F.s_var_of_one_with_ddof)(x), jax.grad(twin)(x))
    t = np.ones((2, 3))
    close(s2s.jvp(F.s_var_of_one_with_ddof, (x,), (t,))[1], jax.jvp(twin, (x,), (t,))[1])


# (function, shape of its argument): functions with an array output
VJP_CASES = {
    "joins_of_rows": (F.j_joins_of_rows, (2, 3)),
    "linspace": (F.j_linspace, (2, 3)),
    "einsum_sublists": (F.j_einsum_sublists, (2, 3)),
    "inner": (F.j_inner, (2, 3)),
    "repeat_polyval_and_empty_axes": (F.j_repeat_polyval_and_empty_axes, (2, 3)),
}


@pytest.mark.slow
@pytest.mark.parametrize("bits", [64, 32])
@pytest.mark.parametrize("key", VJP_CASES)
def test_vjp_jvp_and_vmap_match_jax(key: str, bits: int) -> None:
    fn, shape = VJP_CASES[key]
    dtype = np.float64 if bits == 64 else np.float32
    r = rng_for("forms-" + key)
    x = r.normal(size=shape).astype(dtype)
    twin = twin_of(fn)
    out, pullback = s2s.vjp(fn, x)
    expected_out, expected_pullback = jax.vjp(twin, x)
    close(out, expected_out, bits)
    g = r.normal(size=np.shape(out)).astype(dtype)
    close(pullback(g)[0], expected_pullback(g)[0], bits)
    t = r.normal(size=shape).astype(dtype)
    close(s2s.jvp(fn, (x,), (t,))[1], jax.jvp(twin, (x,), (t,))[1], bits)
    xs = np.stack([x, 2 * x, -x])
    close(s2s.vmap(fn)(xs), jax.vmap(twin)(xs), bits)
