"""Transforms and vmaps written inside the transformed function, the cases
tests/frontend/test_inner_transforms_more.py covers: a body vmap over an empty batch
whose ``g`` is a lambda or nested ``def`` (its own reverse-mode code); a kept vmap of
a lambda capturing the making function's values, passed to another function; a
gradient of a ``functools.partial`` in a body jitted on JAX; callees on a path the
probe did not take whose arguments that path computes in a loop or pops from a list;
keywords bound by a partial of a ``*args`` decorator's wrapper.

Loaded twice: as written (s2s transforms them, ``s2s_grad`` ... are s2s's) and by
``jax_twin`` with ``np`` bound to ``jax.numpy`` and ``s2s_grad`` ... to JAX's (JAX's
results are the oracle)."""

import functools

import numpy as np

W = np.array([0.5, -1.0, 2.0])
SCALE = [1.5]  # changed by the tests between calls (read at each call)

# replaced by the tests: s2s's transforms here, JAX's in the twin
s2s_grad = s2s_vmap = s2s_value_and_grad = None


# ---- 1. a body vmap over a batch that may be empty, of a lambda or nested def --------


def empty_lambda_capturing(x, m):
    """``g`` a lambda reading ``x``: its reverse code has a cotangent for ``x``."""
    out = s2s_vmap(lambda r: np.sin(r) * x)(m)
    return np.sum(out * W) + np.sum(x**2)


def empty_nested_def(x, m):
    """A nested def given ``x`` as an unmapped argument; the output stays a vector
    (jacrev's basis is not empty when ``m`` is)."""
    def g(r, v):
        return np.cos(r * v) * v

    out = s2s_vmap(g, in_axes=(0, None))(m, x)
    return x * (1.0 + np.sum(out))


def empty_pair_lambda(x, m):
    """``g`` returns a pair, mapped over the columns, stacked on axis 1."""
    a, b = s2s_vmap(lambda r: (np.sin(r * x), r * np.sum(x)), in_axes=1, out_axes=1)(m)
    return np.sum(a) + np.sum(b * b) + np.sum(np.tanh(x))


def empty_vector_out(x, m):
    """The output itself has the batch's size: empty when ``m`` is (jacrev's
    Jacobian then has no row, as JAX's)."""
    return s2s_vmap(lambda r, v: np.sin(r) * v, in_axes=(1, None), out_axes=1)(m, x) * x[0]


# ---- 2. a kept vmap of a lambda capturing the making function's values, passed on ----


def apply_twice(f, m):
    return f(m) + 0.5 * f(m * 2.0)


def apply_sum(f, m):
    return np.sum(f(m))


def kept_lambda_capturing_passed_on(x):
    h = s2s_vmap(lambda r: np.sin(r) * x)
    return np.sum(apply_twice(h, np.outer(x, W)) * W)


def kept_def_capturing_passed_on(x):
    a = np.cos(x) * SCALE[0]

    def g(r, s):
        return np.tanh(r * a) * s

    h = s2s_vmap(g, in_axes=(0, None))
    return apply_sum(lambda m: h(m, x[1]), np.outer(W, x)) + apply_sum(
        lambda m: h(m, 2.0), np.outer(x, x))


def apply_nested(f, m):
    return apply_sum(f, m) * 2.0


def two_kept_vmaps_passed_on(x):
    """Two kept vmaps of lambdas reading different values, one passed on twice."""
    h1 = s2s_vmap(lambda r: np.sin(r * x))
    h2 = s2s_vmap(lambda r: np.cos(r) * x[0] * SCALE[0])
    return apply_nested(h1, np.outer(x, W)) + apply_sum(h2, np.outer(W, x))


# ---- 3. a gradient of a partial written in the body ----------------------------------


def weighted(y, w, k=1.0):
    return np.sum(np.sin(y * w) * k)


def grad_of_partial(x):
    g = s2s_grad(functools.partial(weighted, w=np.cos(x), k=2.0))(x)
    return np.sum(g * x)


def grad_of_partial_positional(x):
    g = s2s_grad(functools.partial(weighted, W))(x)
    return np.sum(g**2)


def value_and_grad_of_partial(x):
    v, g = s2s_value_and_grad(functools.partial(weighted, w=x * 2.0))(np.cos(x))
    return v * np.sum(g)


# ---- 4. a callee on the path the probe did not take, its arguments from a loop -------


def pair_energy(y, w):
    return np.sum(np.sin(y) * w)


def loop_args_on_the_other_path(x):
    if np.sum(x) > 0:
        w = x * 1.0
        for _ in range(3):
            w = w * 0.5 + np.sin(x)
        y = pair_energy(x, w)
    else:
        y = np.sum(np.cos(x) * x)
    return y


def popped_args_on_the_other_path(x):
    if np.sum(x) > 0:
        parts = [x * 2.0, np.sin(x)]
        last = parts.pop()
        y = pair_energy(x, last) + np.sum(parts[0])
    else:
        y = np.sum(np.cos(x) * x)
    return y


def called_in_a_loop_on_the_other_path(x):
    if np.sum(x) > 0:
        acc = x
        for k in range(2):
            acc = acc + pair_energy(x, acc) * W
        y = np.sum(acc)
    else:
        y = np.sum(np.cos(x) * x)
    return y


def grown_list_args_on_the_other_path(x):
    if np.sum(x) > 0:
        hs = []
        for k in range(3):
            hs.append(np.sin(x * (k + 1)))
        y = pair_energy(x, hs[-1])
    else:
        y = np.sum(np.cos(x) * x)
    return y


def loop_args_on_an_unbatched_path(x, c):
    """Under ``vmap(..., in_axes=(0, None))`` the test is the same for every example:
    a later call with the other ``c`` runs the path the first call's probe did not."""
    if c > 0:
        w = x * 1.0
        for _ in range(3):
            w = w * 0.5 + np.sin(x)
        parts = [w, x * c]
        last = parts.pop()
        y = pair_energy(x, w) + pair_energy(last, parts[0])
    else:
        y = np.sum(np.cos(x) * x) * c
    return y


# ---- 5. keywords bound by a partial of a *args decorator's wrapper -------------------


def deco(fn):
    def wrapper(*args, **kw):
        return fn(*args, **kw)

    return wrapper


@deco
def loss(x, scale=1.0):
    return np.sum(np.sin(x) * scale) + np.sum(x**2) * scale


@deco
def loss_kw(x, w, *, scale=1.0, shift=0.0):
    return np.sum(np.sin(x * w) * scale) + shift * np.sum(x)


def scaled_deco_wrapper(fn):
    def wrapper(*args, **kw):
        return 2.0 * fn(*args, **kw)

    return wrapper


@scaled_deco_wrapper
def loss_doubled(x, scale=1.0):
    return np.sum(np.cos(x) * scale)


def wrapping_deco(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kw):
        return fn(*args, **kw) * 0.5

    return wrapper


@wrapping_deco
def loss_wrapped(x, scale=1.0, *, shift=0.0):
    return np.sum(np.tanh(x) * scale) + shift * np.sum(x**2)


def forwarding_deco(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kw):
        return fn(*args, **kw)

    return wrapper


@forwarding_deco
def loss_forwarded(x, scale=1.0):
    return np.sum(np.cos(x) * scale)


LOSS_3 = functools.partial(loss, scale=3.0)
LOSS_WRAPPED = functools.partial(loss_wrapped, scale=-2.0, shift=0.25)
LOSS_FORWARDED = functools.partial(loss_forwarded, scale=4.0)
LOSS_KW = functools.partial(loss_kw, w=W, scale=3.0, shift=0.5)
LOSS_DOUBLED = functools.partial(loss_doubled, scale=-0.5)


def grad_of_deco_partial_in_body(x):
    g = s2s_grad(functools.partial(loss, scale=3.0))(x)
    return np.sum(g * x)


def grad_of_deco_partial_run_time_scale(x):
    g = s2s_grad(functools.partial(loss, scale=np.sum(x)))(x)
    return np.sum(g * W)


def grad_of_deco_kw_partial_in_body(x):
    g = s2s_grad(functools.partial(loss_kw, w=W, scale=3.0, shift=0.5))(x)
    return np.sum(g * x)


def deco_partial_called_in_body(x):
    return LOSS_3(x) * np.sum(x)


def deco_kw_partial_called_in_body(x):
    return LOSS_KW(x) + LOSS_KW(x * 2.0, shift=-1.0)


def deco_partial_made_in_body(x):
    p = functools.partial(loss_doubled, scale=np.cos(x[0]))
    return p(x) + p(x, scale=2.0)


def grad_of_wrapped_partial_in_body(x):
    g = s2s_grad(functools.partial(loss_wrapped, scale=3.0, shift=np.sum(x)))(x)
    return np.sum(g * x)


def grad_of_forwarded_partial_in_body(x):
    g = s2s_grad(functools.partial(loss_forwarded, scale=np.cos(x[0])))(x * 2.0)
    return np.sum(g * W)


def wrapped_partial_called_in_body(x):
    p = functools.partial(loss_wrapped, shift=x[1])
    return p(x, 3.0) + LOSS_WRAPPED(x) + LOSS_WRAPPED(x, scale=0.5)
