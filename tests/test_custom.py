"""custom_jvp, custom_vjp and user primitives: s2s against JAX's own custom_jvp /
custom_vjp with the same rules (written again with jax.numpy), in float64."""

from __future__ import annotations

import re
import zlib
from functools import partial

import numpy as np
import pytest

import s2s
import custom_fns as C

jax = pytest.importorskip("jax")
jnp = jax.numpy
jax.config.update("jax_enable_x64", True)

RTOL, ATOL = 1e-10, 1e-12


def close(got, expected):
    got = got if isinstance(got, tuple) else (got,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=RTOL, atol=ATOL)


# ---- JAX twins: the same functions and rules ------------------------------------------


@jax.custom_jvp
def j_log1pexp(x):
    return jnp.log(1.0 + jnp.exp(x))


@j_log1pexp.defjvp
def _(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    return j_log1pexp(x), (1.0 - 1.0 / (1.0 + jnp.exp(x))) * x_dot


@jax.custom_jvp
def j_scaled_sin(x, y):
    return jnp.sin(x) * y


@j_scaled_sin.defjvp
def _(primals, tangents):
    (x, y), (x_dot, y_dot) = primals, tangents
    return j_scaled_sin(x, y), 0.5 * jnp.cos(x) * y * x_dot + jnp.sin(x) * y_dot


@jax.custom_jvp
def j_cube(x):
    return x**3


j_cube.defjvps(lambda x_dot, ans, x: 2.0 * x**2 * x_dot)


@partial(jax.custom_jvp, nondiff_argnums=(0,))
def j_power_n(n, x):
    return x**n


@j_power_n.defjvp
def _(n, primals, tangents):
    (x,), (x_dot,) = primals, tangents
    return x**n, n * x ** (n - 1) * x_dot * 1.5


@jax.custom_vjp
def j_clip_gradient(x):
    return x


j_clip_gradient.defvjp(lambda x: (x, ()), lambda res, g: (jnp.clip(g, -1.0, 1.0),))


@jax.custom_vjp
def j_mul_sin(x, y):
    return jnp.sin(x) * y


def _mul_sin_bwd(res, g):
    cos_x, sin_x, y = res
    return (0.5 * g * cos_x * y, g * sin_x)


j_mul_sin.defvjp(lambda x, y: (jnp.sin(x) * y, (jnp.cos(x), jnp.sin(x), y)), _mul_sin_bwd)


@partial(jax.custom_vjp, nondiff_argnums=(0,))
def j_scale_by(k, x):
    return k * x


j_scale_by.defvjp(lambda k, x: (k * x, None), lambda k, res, g: (2.0 * k * g,))

TWINS = {
    "f_log1pexp": lambda x: jnp.sum(j_log1pexp(x * 2.0)),
    "f_scaled_sin": lambda x, y: jnp.sum(j_scaled_sin(x, y) ** 2),
    "f_scaled_sin_const": lambda x: jnp.sum(j_scaled_sin(x, 3.0) ** 2),
    "f_cube": lambda x: jnp.sum(jnp.sin(j_cube(x))),
    "f_power_n": lambda x: jnp.sum(j_power_n(3.0, x)),
    "f_two_customs": lambda x: jnp.sum(j_scaled_sin(j_log1pexp(x), x)),
    "f_clip_gradient": lambda x: jnp.sum(j_clip_gradient(x) * 3.0 + x**2),
    "f_mul_sin": lambda x, y: jnp.sum(j_mul_sin(x, y) ** 2),
    "f_scale_by": lambda x: jnp.sum(jnp.tanh(j_scale_by(3.0, x))),
    "f_loop_customs": lambda x: jnp.sum(_loop_twin(x)),
}


def _plain_loop(x):
    s = x
    for _ in range(3):
        s = jnp.sin(s) * x + jnp.log1p(jnp.exp(s)) * 0.5
    return s


def _loop_twin(x):
    s = x
    for _ in range(3):
        s = j_mul_sin(s, x) + j_log1pexp(s) * 0.5
    return s
JVP_CASES = ["f_log1pexp", "f_scaled_sin", "f_scaled_sin_const", "f_cube", "f_power_n",
             "f_two_customs"]
VJP_CASES = ["f_clip_gradient", "f_mul_sin", "f_scale_by", "f_loop_customs"]


def draw(name: str, batch: tuple = ()) -> tuple:
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    n = 2 if name in ("f_scaled_sin", "f_mul_sin") else 1
    return tuple(rng.normal(size=batch + (4,)) * 1.3 for _ in range(n))


@pytest.mark.parametrize("name", JVP_CASES + VJP_CASES)
def test_grad_matches_jax(name: str) -> None:
    args = draw(name)
    argnums = tuple(range(len(args)))
    got = s2s.grad(getattr(C, name), argnums=argnums)(*args)
    close(got, jax.grad(TWINS[name], argnums=argnums)(*args))


@pytest.mark.parametrize("name", JVP_CASES + VJP_CASES)
def test_value_and_grad_uses_the_function_for_the_value(name: str) -> None:
    args = draw(name)
    value, _ = s2s.value_and_grad(getattr(C, name))(*args)
    close(value, TWINS[name](*args))


@pytest.mark.parametrize("name", JVP_CASES + VJP_CASES)
def test_rule_is_used_not_the_functions_own_derivative(name: str) -> None:
    """Each rule differs from its function's derivative: s2s follows the rule."""
    if name in ("f_log1pexp", "f_clip_gradient"):
        x = np.array([0.2, 3.0, -4.0, 1.5]) if name == "f_clip_gradient" else None
        if x is None:
            pytest.skip("log1pexp's rule is its exact derivative (a stability rewrite)")
        plain = jax.grad(lambda x: jnp.sum(x * 3.0 + x**2))(x)
        assert not np.allclose(s2s.grad(C.f_clip_gradient)(x), plain)
        return
    args = draw(name)
    plain_twin = {
        "f_scaled_sin": lambda x, y: jnp.sum((jnp.sin(x) * y) ** 2),
        "f_scaled_sin_const": lambda x: jnp.sum((jnp.sin(x) * 3.0) ** 2),
        "f_cube": lambda x: jnp.sum(jnp.sin(x**3)),
        "f_power_n": lambda x: jnp.sum(x**3.0),
        "f_two_customs": lambda x: jnp.sum(jnp.sin(jnp.log1p(jnp.exp(x))) * x),
        "f_mul_sin": lambda x, y: jnp.sum((jnp.sin(x) * y) ** 2),
        "f_scale_by": lambda x: jnp.sum(jnp.tanh(3.0 * x)),
        "f_loop_customs": lambda x: jnp.sum(_plain_loop(x)),
    }[name]
    assert not np.allclose(s2s.grad(getattr(C, name))(*args), jax.grad(plain_twin)(*args))


@pytest.mark.parametrize("name", JVP_CASES)
def test_jvp_matches_jax(name: str) -> None:
    args = draw(name)
    tangents = tuple(np.cos(a) for a in args)
    close(s2s.jvp(getattr(C, name), args, tangents), jax.jvp(TWINS[name], args, tangents))


@pytest.mark.parametrize("name", JVP_CASES)
def test_jvp_calls_the_rule_by_name(name: str) -> None:
    args = draw(name)
    s2s.jvp(getattr(C, name), args, args)
    text = s2s.source(getattr(C, name), "jvp")
    rule = {"f_cube": "cube_jvp", "f_two_customs": "log1pexp_jvp"}.get(
        name, name[2:].replace("_const", "") + "_jvp")
    assert f"{rule}(" in text


@pytest.mark.parametrize("name", JVP_CASES + VJP_CASES)
def test_vmap_of_grad_matches_jax(name: str) -> None:
    args = draw(name, batch=(3,))
    got = s2s.vmap(s2s.grad(getattr(C, name)))(*args)
    close(got, jax.vmap(jax.grad(TWINS[name]))(*args))


@pytest.mark.parametrize("name", JVP_CASES + VJP_CASES)
def test_vmap_runs_the_function(name: str) -> None:
    args = draw(name, batch=(3,))
    close(s2s.vmap(getattr(C, name))(*args), jax.vmap(TWINS[name])(*args))


@pytest.mark.parametrize("name", JVP_CASES)
def test_hessian_differentiates_the_rule(name: str) -> None:
    args = draw(name)[:1]
    f = getattr(C, name)
    if len(draw(name)) == 2:
        y = draw(name)[1]
        twin = lambda x: TWINS[name](x, y)  # noqa: E731
        got = s2s.hessian(f)(args[0], y)
    else:
        twin = TWINS[name]
        got = s2s.hessian(f)(*args)
    close(got, jax.hessian(twin)(*args))


@pytest.mark.parametrize("name", JVP_CASES + VJP_CASES)
def test_grad_of_grad_matches_jax(name: str) -> None:
    """Second order by reverse over reverse, on scalars (the rules are differentiated)."""
    f = getattr(C, name)
    args = tuple(a[0] for a in draw(name))
    got = s2s.grad(s2s.grad(f))(*args)
    close(got, jax.grad(jax.grad(TWINS[name]))(*args))


def test_custom_vjp_function_refuses_forward_mode_like_jax() -> None:
    x = draw("f_mul_sin")
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        jax.jvp(TWINS["f_mul_sin"], x, x)
    with pytest.raises(s2s.CustomRuleError,
                       match=r"can't apply forward-mode autodiff \(jvp\) to a custom_vjp"):
        s2s.jvp(C.f_mul_sin, x, x)
    with pytest.raises(TypeError):  # a TypeError, as JAX's
        s2s.jvp(C.f_mul_sin, x, x)


def test_missing_rules_raise_jaxs_attribute_errors() -> None:
    x = np.ones(3)
    with pytest.raises(AttributeError, match="No JVP defined for custom_jvp function "
                       "no_rule using defjvp."):
        s2s.grad(C.f_no_rule)(x)
    with pytest.raises(s2s.MissingRuleError, match="No JVP defined"):
        s2s.jvp(C.f_no_rule, (x,), (x,))
    with pytest.raises(AttributeError, match="No VJP defined for custom_vjp function "
                       "no_vjp using defvjp."):
        s2s.grad(C.f_no_vjp)(x)
    # without a derivative the rule is not needed
    np.testing.assert_allclose(s2s.vmap(C.f_no_rule)(np.ones((2, 3))), [6.0, 6.0])


def test_bwd_returning_a_bare_array_is_refused_with_jaxs_message() -> None:
    with pytest.raises(TypeError, match="Custom VJP bwd rule must produce an output with "
                       "the same container"):
        s2s.grad(C.f_bare_bwd)(np.ones(3))


def test_jvp_rule_tangent_of_wrong_shape_is_refused_with_jaxs_message() -> None:
    with pytest.raises(TypeError, match=r"Custom JVP rule must produce primal and tangent "
                       r"outputs with corresponding shapes and dtypes. Expected float64\[\] "
                       r"\(tangent type of float64\[\]\) but got float64\[3\]"):
        s2s.jvp(C.f_bad_tangent, (np.ones(3),), (np.ones(3),))


def test_calling_a_custom_function_runs_it() -> None:
    x = np.array([0.5, -2.0])
    np.testing.assert_allclose(C.log1pexp(x), np.log1p(np.exp(x)))
    assert C.log1pexp.__name__ == "log1pexp" and C.log1pexp.__doc__ is None


def test_stability_rule_keeps_gradient_finite_where_the_function_overflows() -> None:
    """JAX's own motivating example: log(1 + e^x) at x = 400 has a finite derivative."""
    x = np.array([400.0, 10.0])
    with np.errstate(over="ignore", invalid="ignore"):
        got = s2s.grad(C.f_log1pexp)(x)
    close(got, jax.grad(TWINS["f_log1pexp"])(x))
    np.testing.assert_allclose(got[0], 2.0)


# ---- user primitives ------------------------------------------------------------------


def test_user_primitive_rules_are_inlined_in_emitted_code() -> None:
    g = s2s.grad(C.f_softplus)
    x = np.array([0.3, -1.0, 2.0])
    close(g(x), jax.grad(lambda x: jnp.sum(jax.nn.softplus(x * 3.0) ** 2))(x))
    assert "np.exp(" in g.source and not re.search(r"\bsoftplus_vjp\b", g.source)
    assert "softplus(" in g.source  # the forward calls the primitive by name
    s2s.jvp(C.f_softplus, (x,), (x,))
    t = s2s.source(C.f_softplus, "jvp")
    assert "np.exp(" in t and not re.search(r"\bsoftplus_jvp\b", t)


def test_user_primitive_jvp_and_elementwise_vmap_match_jax() -> None:
    x = np.array([0.3, -1.0, 2.0])
    twin = lambda x: jnp.sum(jax.nn.softplus(x * 3.0) ** 2)  # noqa: E731
    close(s2s.jvp(C.f_softplus, (x,), (np.sin(x),)), jax.jvp(twin, (x,), (np.sin(x),)))
    xs = np.random.default_rng(0).normal(size=(4, 3))
    close(s2s.vmap(s2s.grad(C.f_softplus))(xs), jax.vmap(jax.grad(twin))(xs))
    close(s2s.hessian(C.f_softplus)(x), jax.hessian(twin)(x))


def test_user_primitive_without_batching_family_is_refused_by_vmap() -> None:
    a = np.random.default_rng(1).normal(size=(2, 3))
    twin = lambda a: jnp.sum(jnp.sin(jnp.sum(a, axis=1)))  # noqa: E731
    close(s2s.grad(C.f_rowsum)(a), jax.grad(twin)(a))
    close(s2s.jvp(C.f_rowsum, (a,), (np.cos(a),)), jax.jvp(twin, (a,), (np.cos(a),)))
    with pytest.raises(s2s.TransformError, match="rowsum"):
        s2s.vmap(C.f_rowsum)(np.ones((4, 2, 3)))


def test_user_primitive_is_listed_and_checked_like_builtins() -> None:
    from s2s.tools.cli import primitive_table

    rows = {r["name"]: r for r in primitive_table(include_user=True)}
    assert "softplus" not in {r["name"] for r in primitive_table()}
    assert rows["softplus"]["vjp"] and rows["softplus"]["jvp"] and rows["softplus"]["batch"]
    assert not rows["rowsum"]["batch"]
    with pytest.raises(ValueError, match="already registered"):
        s2s.primitive(C.softplus)
    with pytest.raises(TypeError, match=r"must take \['g', 'ans', 'a'\]"):
        C.ROWSUM.defvjp(lambda g, a: g)


def test_jupyter_shows_the_emitted_code_highlighted() -> None:
    import html
    import re as re_

    g = s2s.grad(C.f_softplus)
    g(np.ones(3))
    page = g._repr_html_()
    assert "<span style=" in page  # coloured
    title, code = page.split("</div>", 1)  # a title line, then the code
    assert "s2s.grad(f_softplus)" in title
    text = html.unescape(re_.sub(r"<[^>]+>", "", code))
    assert text.strip() == g.source.strip()  # and nothing but the code


def test_replacing_a_rule_regenerates_code_already_emitted() -> None:
    x = np.array([1.0, -2.0])
    g = s2s.grad(C.f_twice)
    v = s2s.vmap(s2s.grad(C.f_twice))
    np.testing.assert_allclose(g(x), 4.0 * x)  # d/dx 2x.x, the rule right
    np.testing.assert_allclose(v(np.stack([x, x])), [4.0 * x] * 2)
    try:
        C.set_twice_vjp(3)
        np.testing.assert_allclose(g(x), 5.0 * x)  # the new (wrong) rule is used at once
        np.testing.assert_allclose(v(np.stack([x, x])), [5.0 * x] * 2)
        np.testing.assert_allclose(s2s.grad(C.f_twice)(x), 5.0 * x)
    finally:
        C.set_twice_vjp(2)
    np.testing.assert_allclose(g(x), 4.0 * x)


def test_a_rule_whose_source_cannot_be_read_is_refused() -> None:
    namespace: dict = {}
    exec("def rowsum_vjp(g, ans, a):\n    return g\n", namespace)
    before = C.ROWSUM.prim.vjp
    with pytest.raises(TypeError, match="cannot be read"):
        C.ROWSUM.defvjp(namespace["rowsum_vjp"])
    assert C.ROWSUM.prim.vjp is before  # refused before anything changed


# ---- a custom function given to a transform directly -------------------------------------
# (`s2s.grad(log1pexp)`, as `jax.grad(j_log1pexp)`; it failed at a line of s2s's own
# source: "`*args` parameters are not supported", s2s/primitives/custom.py)

DIRECT = [
    ("log1pexp", lambda T, f: T.grad(f)(0.7), "grad"),
    ("log1pexp", lambda T, f: T.jvp(f, (np.array([0.3, -2.0]),), (np.array([1.0, 0.5]),)),
     "jvp"),
    ("scaled_sin", lambda T, f: T.grad(f, argnums=(0, 1))(0.4, 1.5), "grad"),
    ("scaled_sin", lambda T, f: T.jacfwd(f)(np.array([0.1, 0.9]), np.array([2.0, 3.0])),
     "jacfwd"),
    ("scaled_sin", lambda T, f: T.vmap(T.grad(f))(np.array([0.1, 0.9]), np.array([2.0, 3.0])),
     "vmap"),
    ("mul_sin", lambda T, f: T.grad(f, argnums=(0, 1))(0.4, 1.5), "grad"),
    ("mul_sin", lambda T, f: T.vjp(f, np.array([0.1, 0.9]), np.array([2.0, 3.0]))[1](
        np.array([1.0, -1.0])), "vjp"),
    ("mul_sin", lambda T, f: T.jacrev(f)(np.array([0.1, 0.9]), np.array([2.0, 3.0])),
     "jacrev"),
    ("clip_gradient", lambda T, f: T.vmap(T.grad(f))(np.array([0.3, -5.0])), "vmap"),
    ("power_n", lambda T, f: T.grad(f, argnums=1)(3, 0.8), "grad"),
]


class _S2S:
    grad, jvp, vjp, vmap, jacfwd, jacrev = (s2s.grad, s2s.jvp, s2s.vjp, s2s.vmap,
                                            s2s.jacfwd, s2s.jacrev)


@pytest.mark.parametrize("name,call,how", DIRECT, ids=[f"{n}-{h}" for n, _, h in DIRECT])
def test_a_custom_function_given_to_a_transform_directly(name, call, how) -> None:
    """The rules differ from the calculus (``0.5 * cos``): JAX's values say they ran."""
    got = call(_S2S, getattr(C, name))
    want = call(jax, globals()[f"j_{name}"])
    close(got, want)
