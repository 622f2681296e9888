"""Functions with rules of their own (s2s.custom_jvp / custom_vjp / primitive), for
tests/test_custom.py.  Each rule differs on purpose from the function's true derivative
where that is possible, so a test can tell the rule was used."""

from functools import partial

import numpy as np

import s2s

# ---- custom_jvp -----------------------------------------------------------------------


@s2s.custom_jvp
def log1pexp(x):
    return np.log(1.0 + np.exp(x))


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
    (x,) = primals
    (x_dot,) = tangents
    ans = log1pexp(x)
    # the stable form: 1 - 1/(1 + e^x) never divides inf by inf
    return ans, (1.0 - 1.0 / (1.0 + np.exp(x))) * x_dot


def f_log1pexp(x):
    return np.sum(log1pexp(x * 2.0))


@s2s.custom_jvp
def scaled_sin(x, y):
    return np.sin(x) * y


@scaled_sin.defjvp
def scaled_sin_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    ans = scaled_sin(x, y)
    # half the true x-derivative: a rule a test can tell from the function
    return ans, 0.5 * np.cos(x) * y * x_dot + np.sin(x) * y_dot


def f_scaled_sin(x, y):
    z = scaled_sin(x, y)
    return np.sum(z * z)


def f_scaled_sin_const(x):
    return np.sum(scaled_sin(x, 3.0) ** 2)


@s2s.custom_jvp
def cube(x):
    return x**3


cube.defjvps(lambda x_dot, ans, x: 2.0 * x**2 * x_dot)


def f_cube(x):
    return np.sum(np.sin(cube(x)))


@partial(s2s.custom_jvp, nondiff_argnums=(0,))
def power_n(n, x):
    return x**n


@power_n.defjvp
def power_n_jvp(n, primals, tangents):
    (x,) = primals
    (x_dot,) = tangents
    return x**n, n * x ** (n - 1) * x_dot * 1.5


def f_power_n(x):
    return np.sum(power_n(3.0, x))



def f_two_customs(x):
    a = log1pexp(x)
    b = scaled_sin(a, x)
    return np.sum(b)


# ---- custom_vjp -----------------------------------------------------------------------


@s2s.custom_vjp
def clip_gradient(x):
    return x


def clip_gradient_fwd(x):
    return x, ()


def clip_gradient_bwd(residuals, g):
    return (np.clip(g, -1.0, 1.0),)


clip_gradient.defvjp(clip_gradient_fwd, clip_gradient_bwd)


def f_clip_gradient(x):
    return np.sum(clip_gradient(x) * 3.0 + x**2)


@s2s.custom_vjp
def mul_sin(x, y):
    return np.sin(x) * y


def mul_sin_fwd(x, y):
    return np.sin(x) * y, (np.cos(x), np.sin(x), y)


def mul_sin_bwd(residuals, g):
    cos_x, sin_x, y = residuals
    return (0.5 * g * cos_x * y, g * sin_x)


mul_sin.defvjp(mul_sin_fwd, mul_sin_bwd)


def f_mul_sin(x, y):
    return np.sum(mul_sin(x, y) ** 2)


@partial(s2s.custom_vjp, nondiff_argnums=(0,))
def scale_by(k, x):
    return k * x


def scale_by_fwd(k, x):
    return k * x, None


def scale_by_bwd(k, residuals, g):
    return (2.0 * k * g,)


scale_by.defvjp(scale_by_fwd, scale_by_bwd)


def f_scale_by(x):
    return np.sum(np.tanh(scale_by(3.0, x)))


# ---- errors ---------------------------------------------------------------------------


@s2s.custom_jvp
def no_rule(x):
    return x * 2.0


def f_no_rule(x):
    return np.sum(no_rule(x))


@s2s.custom_vjp
def no_vjp(x):
    return x * 2.0


def f_no_vjp(x):
    return np.sum(no_vjp(x))


@s2s.custom_vjp
def bare_bwd(x):
    return x * 2.0


bare_bwd.defvjp(lambda x: (x * 2.0, None), lambda res, g: g * 2.0)


def f_bare_bwd(x):
    return np.sum(bare_bwd(x))


@s2s.custom_jvp
def bad_tangent(x):
    return np.sum(x)


@bad_tangent.defjvp
def bad_tangent_jvp(primals, tangents):
    (x,) = primals
    (x_dot,) = tangents
    return np.sum(x), x_dot  # the tangent keeps x's shape: wrong


def f_bad_tangent(x):
    return bad_tangent(x) * 2.0


# ---- a new primitive with rules written as s2s's own ---------------------------------


def softplus(x):
    return np.logaddexp(0.0, x)


SOFTPLUS = s2s.primitive(softplus, elementwise=True)


@SOFTPLUS.defvjp
def softplus_vjp(g, ans, x):
    return g * np.exp(x - ans)  # sigmoid(x) = exp(x - softplus(x))


@SOFTPLUS.defjvp("x")
def softplus_jvp(x_dot, ans, x):
    return x_dot * np.exp(x - ans)


def f_softplus(x):
    return np.sum(softplus(x * 3.0) ** 2)


def rowsum(a):
    return np.sum(a, axis=1)


ROWSUM = s2s.primitive(rowsum)


@ROWSUM.defvjp
def rowsum_vjp(g, ans, a):
    return np.broadcast_to(g[:, None], np.shape(a))


@ROWSUM.defjvp("a")
def rowsum_jvp(a_dot, ans, a):
    return np.sum(a_dot, axis=1)


def f_rowsum(a):
    return np.sum(np.sin(rowsum(a)))


def f_loop_customs(x):
    s = x
    for i in range(3):
        s = mul_sin(s, x) + log1pexp(s) * 0.5
    return np.sum(s)


def twice(x):
    return 2.0 * x


TWICE = s2s.primitive(twice, elementwise=True)


@TWICE.defjvp("x")
def twice_jvp(x_dot, ans, x):
    return x_dot * 2.0


def set_twice_vjp(scale):
    """Attach a VJP rule scaled by 2 (right) or 3 (wrong): a rule replaced later."""
    if scale == 2:
        @TWICE.defvjp
        def twice_vjp(g, ans, x):
            return g * 2.0
    else:
        @TWICE.defvjp
        def twice_vjp(g, ans, x):
            return g * 3.0


set_twice_vjp(2)


def f_twice(x):
    return np.sum(twice(x) * x)
