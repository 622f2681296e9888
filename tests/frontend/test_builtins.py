"""Python built-ins, scalars and module constants (issue 23, item 5), against JAX on
the same source (grad, value_and_grad, jvp, jacfwd/jacrev), a Python loop (vmap:
JAX's vmap refuses Python's `max` and `if` over traced values) and finite differences
(`float(x)`, `x.item()`, which JAX's grad refuses), float64 and float32."""

from __future__ import annotations

import builtin_fns as F
import numpy as np
import pytest
from support import HAVE_JAX, fd_grad, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)

X = np.array([0.3, -0.7, 1.1])
Y = np.array([0.9, 0.1, -0.3])

CASES = [  # (function, arguments, JAX can differentiate it)
    ("max_scalars", (X, Y), True),
    ("max_scalars", (Y, X), True),
    ("min_scalars", (X, Y), True),
    ("min_scalars", (0.1 * X, 3.0 * Y), True),
    ("max_tie", (X,), True),
    ("abs_scalar", (X,), True),
    ("static_builtins", (X,), True),
    ("membership", (X,), True),
    ("membership_const", (X,), True),
    ("config_wd", (X,), True),
    ("config_get", (X,), True),
    ("to_float", (X,), False),
    ("item_method", (X,), False),
    ("builds_containers", (X,), True),
    ("sorted_keys", (X,), True),
    ("enumerate_list", (X,), True),
    ("zip_constants", (X,), True),
    ("index_constant", (X,), True),
    ("r_constant", (X,), True),
    ("calls_max", (X, Y), True),
    ("type_test", (X,), True),
    ("max_with_key", (X,), True),
    ("max_with_key", (0.1 * X,), True),
    ("any_of_array", (X,), True),
    ("any_of_array", (-X * X,), True),
    ("isinstance_of_argument", (X,), True),
]
IDS = [f"{c[0]}-{k}" for k, c in enumerate(CASES)]
DTYPES = [np.float64, np.float32]


def _tol(dtype):
    return dict(rtol=1e-9, atol=1e-10) if dtype == np.float64 else dict(rtol=2e-4, atol=2e-5)


def _args(args, dtype):
    return tuple(np.asarray(a, dtype=dtype) for a in args)


def _oracle_grads(name, args, jax_ok):
    argnums = tuple(range(len(args)))
    if jax_ok:
        return jax.value_and_grad(getattr(J, name), argnums=argnums)(*args)
    f = getattr(F, name)
    return f(*args), tuple(fd_grad(f, tuple(np.asarray(a, np.float64) for a in args), k)[0]
                           for k in argnums)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name, args, jax_ok", CASES, ids=IDS)
def test_value_and_grad(name, args, jax_ok, dtype) -> None:
    args = _args(args, dtype)
    value, grads = s2s.value_and_grad(getattr(F, name), argnums=tuple(range(len(args))))(*args)
    want_value, want = _oracle_grads(name, args, jax_ok)
    tol = _tol(dtype) if jax_ok else dict(rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(value, want_value, **_tol(dtype))
    for g, w in zip(grads, want):
        assert g.dtype == dtype
        np.testing.assert_allclose(g, w, **tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name, args, jax_ok", CASES, ids=IDS)
def test_jvp(name, args, jax_ok, dtype) -> None:
    args = _args(args, dtype)
    r = np.random.default_rng(1)
    tangents = tuple(np.asarray(r.normal(size=a.shape), dtype=dtype) for a in args)
    out, out_dot = s2s.jvp(getattr(F, name), args, tangents)
    if jax_ok:
        want, want_dot = jax.jvp(getattr(J, name), args, tangents)
        tol = _tol(dtype)
    else:  # the directional derivative of finite differences
        f = getattr(F, name)
        want = f(*args)
        want_dot = sum(np.dot(g, t) for g, t in zip(_oracle_grads(name, args, False)[1],
                                                    tangents))
        tol = dict(rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out, want, **_tol(dtype))
    np.testing.assert_allclose(out_dot, want_dot, **tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name, args, jax_ok", CASES, ids=IDS)
def test_vmap_against_a_python_loop(name, args, jax_ok, dtype) -> None:
    if name in ("to_float", "item_method"):
        pytest.skip("float(x) of a batched value is refused by NumPy itself, as by JAX")
    f = getattr(F, name)
    batched = tuple(np.stack([a, 2.0 * a - 0.3, -a]).astype(dtype) for a in args)
    got = s2s.vmap(f)(*batched)
    want = np.stack([f(*example) for example in zip(*batched)])
    np.testing.assert_allclose(got, want, **_tol(dtype))


@pytest.mark.parametrize("name", ["max_scalars", "min_scalars", "config_get",
                                  "enumerate_list", "builds_containers"])
def test_jacobians_against_jax(name) -> None:
    args = next(c[1] for c in CASES if c[0] == name)
    f, jf = getattr(F, name), getattr(J, name)
    np.testing.assert_allclose(s2s.jacfwd(f)(*args), jax.jacfwd(jf)(*args), rtol=1e-9)
    np.testing.assert_allclose(s2s.jacrev(f)(*args), jax.jacrev(jf)(*args), rtol=1e-9)


@pytest.mark.parametrize("name, args, jax_ok", CASES, ids=IDS)
def test_jit_on_numpy(name, args, jax_ok) -> None:
    f = getattr(F, name)
    np.testing.assert_allclose(s2s.jit(f)(*args), f(*args), rtol=1e-12)
    np.testing.assert_allclose(s2s.jit(s2s.grad(f))(*args), s2s.grad(f)(*args), rtol=1e-12)


def test_a_tie_goes_to_the_first_argument_as_in_python() -> None:
    a = np.array([1.0, 2.0])
    b = np.array([2.0, 1.0])  # sum(a) == sum(b)
    for fn in ("max_scalars", "min_scalars"):
        got = s2s.grad(getattr(F, fn), argnums=(0, 1))(a, b)
        want = jax.grad(getattr(J, fn), argnums=(0, 1))(a, b)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w)
    gx, gy = s2s.grad(F.max_scalars, argnums=(0, 1))(a, b)
    assert np.all(gx == 2.0) and np.all(gy == 0.0)


def test_a_tuple_indexed_by_an_integer_argument() -> None:
    for i in (0, 2, 1):
        got = s2s.grad(F.tuple_by_int)(X, i)
        np.testing.assert_allclose(got, jax.grad(J.tuple_by_int)(X, i), rtol=1e-12)


def test_constants_are_read_at_each_call() -> None:
    """CONFIG["wd"], cfg.lr, CONFIG.get(...) changed between calls change the result,
    on the 1st, 3rd and 10th call (the later ones run the specialized code)."""
    transforms = {
        "grad": (s2s.grad(F.config_wd), lambda: jax.grad(J.config_wd)(X)),
        "get": (s2s.grad(F.config_get), lambda: jax.grad(J.config_get)(X)),
        "jit": (s2s.jit(F.config_wd), lambda: J.config_wd(X)),
        "jit_grad": (s2s.jit(s2s.grad(F.config_wd)), lambda: jax.grad(J.config_wd)(X)),
        "jvp": (lambda x: s2s.jvp(F.config_wd, (x,), (np.ones(3),))[1],
                lambda: jax.jvp(J.config_wd, (X,), (np.ones(3),))[1]),
        "vmap": (lambda x: s2s.vmap(F.config_wd)(np.stack([x, x]))[1],
                 lambda: J.config_wd(X)),
    }
    old = dict(F.CONFIG), F.cfg.lr
    try:
        for call in range(1, 11):
            F.CONFIG["wd"] = J.CONFIG["wd"] = 0.1 * call
            F.cfg.lr = J.cfg.lr = 1.0 / call
            if call == 3:
                F.CONFIG["missing"] = J.CONFIG["missing"] = 4.0  # .get finds it now
            for name, (ours, theirs) in transforms.items():
                np.testing.assert_allclose(ours(X), theirs(), rtol=1e-12, err_msg=name)
    finally:
        F.CONFIG.clear()
        F.CONFIG.update(old[0])
        J.CONFIG.clear()
        J.CONFIG.update(old[0])
        F.cfg.lr = J.cfg.lr = old[1]


def test_a_decision_on_a_constant_is_taken_again_when_it_changes() -> None:
    g = s2s.grad(F.membership_const)
    try:
        for mode in ("tanh", "sin", "tanh"):
            F.CONFIG["mode"] = J.CONFIG["mode"] = mode
            for _ in range(3):
                np.testing.assert_allclose(g(X), jax.grad(J.membership_const)(X))
    finally:
        F.CONFIG["mode"] = J.CONFIG["mode"] = "tanh"


def test_emitted_code_reads_well() -> None:
    g = s2s.grad(F.max_scalars)
    g(X, Y)
    text = s2s.source(g)
    assert "max_changes = sum_y > sum_x" in text and "if max_changes:" in text
    g = s2s.grad(F.config_get)
    g(X)
    text = s2s.source(g)
    assert 'CONFIG.get("wd", 1.0)' in text and 'CONFIG.get("missing", 0.25)' in text
    g = s2s.grad(F.zip_constants)
    g(X)
    assert "WEIGHTS[1] * sum_x_times_s_2" in s2s.source(g)


REFUSED = [  # (function, marker on the line, words of the message)
    ("missing_key", 'CONFIG["nope"]', "KeyError"),
]


@pytest.mark.parametrize("name, marker, words", REFUSED, ids=[r[0] for r in REFUSED])
def test_refused_at_the_users_line(name, marker, words) -> None:
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(getattr(F, name))
    err = info.value
    assert words in str(err) and "Instead:" in str(err), str(err)
    assert err.loc.file == F.__file__ and marker in err.loc.text
