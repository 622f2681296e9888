"""Dicts read by their keys (issue 23, items 4 and 5): ``kw.get(k, default)``,
``"k" in kw`` / ``not in`` decided when the code is generated (the untaken branch is
never lowered), ``len(kw)``, ``kw.items()``, ``**kw`` passed on, ``dict(kw, a=...)``,
``{**kw, "a": 1}``, ``kw.pop(k, default)``, on ``**kwargs`` parameters (keys: the call's keyword names) and
dict arguments (keys: per call); and ``x in y`` over arrays, NumPy's
``(y == x).any()``.

Oracles: JAX on the same source (``jax_twin``) for the dict functions, float64 and
float32; for ``in`` over arrays, which JAX's traced arrays refuse, the decision is
made by a Python loop over the elements and the function's body with that decision
is JAX's (``*_body`` in the fns module), checked against NumPy's own run of the
function too."""

from __future__ import annotations

from functools import partial

import kwargs_dict_fns as F  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX, assert_close_to, central_grad, fd_grad, jax_tol, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)

X = np.array([0.3, -0.7, 1.2])
W = np.array([1.5, -0.25, 0.75])
BATCH = np.array([[0.3, -0.7, 1.2], [0.1, 0.4, -0.9]])
DTYPES = [np.float64, np.float32]

# (function, positional arguments, keyword arguments)
DICT_CASES = [
    ("get_default", (X,), {}),
    ("get_default", (X,), {"scale": 3.0}),
    ("get_array_default", (X,), {}),
    ("get_array_default", (X,), {"w": W}),
    ("get_value_default", (X,), {}),
    ("get_value_default", (X,), {"w": W}),
    ("get_none", (X,), {}),
    ("get_none", (X,), {"shift": 0.5}),
    ("branch_on_key", (X,), {}),
    ("branch_on_key", (X,), {"scale": W}),
    ("branch_not_in", (X,), {}),
    ("branch_not_in", (X,), {"scale": 2.0}),
    ("choice_on_key", (X,), {}),
    ("choice_on_key", (X,), {"scale": 2.0, "shift": 1.0}),
    ("choice_on_key", (X,), {"shift": -1.0}),
    ("key_tests", (X,), {}),
    ("key_tests", (X,), {"scale": 2.0}),
    ("key_tests", (X,), {"scale": 2.0, "other": 1.0}),
    ("walks_kw", (X,), {"b": 2.0, "a": W}),
    ("passes_kw", (X,), {"shift": 2.0}),
    ("passes_kw", (X,), {}),
    ("merges_kw", (X,), {"scale": 2.0}),
    ("merges_kw", (X,), {"shift": 2.0}),
    ("spreads_kw", (X,), {"scale": 2.0, "shift": 0.5}),
    ("spreads_kw", (X,), {}),
    ("calls_with_keys", (X,), {}),
    ("pops_kw", (X,), {}),
    ("pops_kw", (X,), {"scale": 2.0, "shift": W}),
    ("pops_kw", (X,), {"shift": 1.0}),
    ("with_scale", (X,), {}),
    ("with_params", (X,), {}),
    ("dict_get", (X, {"w": W}), {}),
    ("dict_get", (X, {"w": W, "b": 2.0}), {}),
    ("dict_in", (X, {"w": W}), {}),
    ("dict_in", (X, {"b": 2.0, "w": W}), {}),
    ("dict_not_in", (X, {"w": W}), {}),
    ("dict_not_in", (X, {"w": W, "b": W * 2.0}), {}),
]
DICT_IDS = [f"{n}-{'-'.join(kw) or (list(a[1]) if len(a) > 1 else 'none')}"
            for n, a, kw in DICT_CASES]


tol = partial(jax_tol, f64=1e-9, f32=2e-4)
close = partial(assert_close_to, f64=1e-9, f32=2e-4, dtype_of="given")


def cast(tree, dtype):
    return jax.tree_util.tree_map(
        lambda a: np.asarray(a, dtype) if isinstance(a, (np.ndarray, float)) else a, tree)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("case", range(len(DICT_CASES)), ids=DICT_IDS)
def test_dicts_against_jax(case, dtype) -> None:
    """grad (every positional argument), value_and_grad, s2s.jit on both backends and
    the gradient jitted on JAX, against JAX on the same source."""
    name, args, kwargs = DICT_CASES[case]
    args, kwargs = cast(args, dtype), cast(kwargs, dtype)
    ours, theirs = getattr(F, name), getattr(J, name)
    for argnums in range(len(args)):
        close(s2s.grad(ours, argnums=argnums)(*args, **kwargs),
              jax.grad(theirs, argnums=argnums)(*args, **kwargs), dtype)
    close(s2s.value_and_grad(ours)(*args, **kwargs),
          jax.value_and_grad(theirs)(*args, **kwargs), dtype)
    expected = theirs(*args, **kwargs)
    close(s2s.jit(ours)(*args, **kwargs), expected, dtype)
    close(s2s.jit(ours, backend="jax")(*args, **kwargs), expected, dtype)
    close(s2s.jit(s2s.grad(ours), backend="jax")(*args, **kwargs),
          jax.grad(theirs)(*args, **kwargs), dtype)


@pytest.mark.slow
@pytest.mark.parametrize("case", range(len(DICT_CASES)), ids=DICT_IDS)
def test_dicts_jacobians_and_vmap(case) -> None:
    """jacfwd, jacrev, hessian; vmap and vmap of grad with the keyword values batched
    along axis 0 (JAX's rule for keywords), against JAX."""
    name, args, kwargs = DICT_CASES[case]
    ours, theirs = getattr(F, name), getattr(J, name)
    for make, oracle in ((s2s.jacfwd, jax.jacfwd), (s2s.jacrev, jax.jacrev),
                         (s2s.hessian, jax.hessian)):
        close(make(ours)(*args, **kwargs), oracle(theirs)(*args, **kwargs))
    batch = tuple(jax.tree_util.tree_map(lambda a: np.stack([a, a * 0.5 + 0.1]), a)
                  for a in args)
    keywords = {k: np.stack([np.asarray(v), np.asarray(v) * 0.5 - 0.2])
                for k, v in kwargs.items()}
    close(s2s.vmap(ours)(*batch, **keywords), vmapped(theirs, batch, keywords))
    close(s2s.vmap(s2s.grad(ours))(*batch, **keywords),
          vmapped(jax.grad(theirs), batch, keywords))


def vmapped(fn, batch, keywords):
    """JAX's vmap; where it refuses a Python test on a batched keyword (`kw["shift"] >
    0.0`), a loop over the examples of JAX's function."""
    try:
        return jax.vmap(fn)(*batch, **keywords)
    except jax.errors.TracerBoolConversionError:
        rows = [fn(*jax.tree_util.tree_map(lambda a: a[k], batch),
                   **{n: v[k] for n, v in keywords.items()}) for k in range(2)]
        return jax.tree_util.tree_map(lambda *r: np.stack(r), *rows)


CALLEE_TRANSFORMS = {  # (ours, JAX's) on X, BATCH
    "jvp": (lambda f: s2s.jvp(f, (X,), (W,)), lambda f: jax.jvp(f, (X,), (W,))),
    "vjp": (lambda f: s2s.vjp(f, X)[1](1.5), lambda f: jax.vjp(f, X)[1](1.5)),
    "hessian": (lambda f: s2s.hessian(f)(X), lambda f: jax.hessian(f)(X)),
    "vmap": (lambda f: s2s.vmap(f)(BATCH), lambda f: jax.vmap(f)(BATCH)),
    "vmap_grad": (lambda f: s2s.vmap(s2s.grad(f))(BATCH),
                  lambda f: jax.vmap(jax.grad(f))(BATCH)),
    "jit_jax_grad": (lambda f: s2s.jit(s2s.grad(f), backend="jax")(X),
                     lambda f: jax.grad(f)(X)),
}


@pytest.mark.parametrize("transform", list(CALLEE_TRANSFORMS))
@pytest.mark.parametrize("name", ["with_scale", "with_params", "calls_with_keys"])
def test_callees_with_keywords_under_every_transform(name, transform) -> None:
    """Callees given keywords (not batched: constants of the caller) and dicts:
    jvp, vjp, hessian, vmap, vmap of grad, the gradient jitted on JAX."""
    ours, theirs = CALLEE_TRANSFORMS[transform]
    close(ours(getattr(F, name)), theirs(getattr(J, name)))


def test_keys_are_part_of_the_signature_never_stale_code() -> None:
    """One transform called with the key, without it, with it again (other values),
    and on to the 10th call (specialized code, fast path): new code per key set, as
    JAX traces per pytree structure; the code for no key has no `scale` in it."""
    g = s2s.grad(F.branch_on_key)
    jg = jax.grad(J.branch_on_key)
    sources = {}
    for call in range(10):
        x = X * (1.0 + 0.1 * call)
        kwargs = {"scale": W * call} if call % 3 != 1 else {}
        close(g(x, **kwargs), jg(x, **kwargs))
        sources[tuple(kwargs)] = g.source
    assert "scale" not in sources[()] and "x_times_scale" in sources[("scale",)]
    assert "if" not in sources[()].split("def branch_on_key")[-1]  # (no dead branch)
    d = s2s.grad(F.dict_in, argnums=(0, 1))
    for call in range(10):
        params = {"w": W + call, "b": 0.5 * call} if call % 2 else {"w": W - call}
        close(d(X, params), jax.grad(J.dict_in, argnums=(0, 1))(X, params))


def test_jax_backend_short_circuits_and_chooses_on_traced_values() -> None:
    """``s2s.jit(f, backend="jax")`` of the function's own code: ``"shift" in kw and
    kw["shift"] > 0.0`` reads ``kw["shift"]`` only where the key is there (Python's
    short circuit), and ``1.0 if t else 0.0`` on a traced ``t`` is a ``jnp.where``
    (one compiled function for both signs of ``shift``), as NumPy runs it."""
    jitted = s2s.jit(F.choice_on_key, backend="jax")
    for kwargs in ({}, {"shift": 1.0}, {"shift": -1.0}, {"scale": 2.0, "shift": 0.5}):
        close(jitted(X, **kwargs), F.choice_on_key(X, **kwargs))


def test_keyword_order_is_the_calls() -> None:
    """``kw`` holds the keywords in the call's order, as Python's ``**kw`` does: a
    sum over ``kw.items()`` in that order, and code per order."""
    v = s2s.value_and_grad(F.walks_kw)
    close(v(X, a=W, b=2.0), jax.value_and_grad(J.walks_kw)(X, a=W, b=2.0))
    close(v(X, b=2.0, a=W), jax.value_and_grad(J.walks_kw)(X, b=2.0, a=W))


def test_array_default_is_read_at_each_call() -> None:
    """``kw.get("w", W0)``: the module's array, changed in place between calls (1st,
    2nd: specialized, 10th), is read again, as Python reads it (finite differences)."""
    g = s2s.grad(F.get_array_default)
    saved = F.W0.copy()
    try:
        for call in range(1, 11):
            F.W0[:] = saved * call
            np.testing.assert_allclose(g(X), fd_grad(F.get_array_default, (X,), 0)[0],
                                       rtol=1e-6, atol=1e-8)
    finally:
        F.W0[:] = saved


def test_a_keyword_array_returned_stays_the_callers() -> None:
    """``kw["w"]`` returned: its value and Jacobians as JAX's; writing into vmap's
    output, or into grad's aux, leaves the caller's array as it was (JAX's are
    immutable copies; s2s's aux is a copy: tests/test_output_aliasing.py)."""
    w, ws = W.copy(), np.stack([W, 2.0 * W])
    close(s2s.jacrev(F.returns_kw_array)(X, w=w), jax.jacrev(J.returns_kw_array)(X, w=w))
    close(s2s.jacfwd(F.returns_kw_array)(X, w=w), jax.jacfwd(J.returns_kw_array)(X, w=w))
    out = s2s.vmap(F.returns_kw_array)(BATCH, w=ws)
    close(out, jax.vmap(J.returns_kw_array)(BATCH, w=ws))
    out[1][...] = 0.0
    (value, aux), grad = s2s.value_and_grad(F.returns_kw_array, has_aux=True)(X, w=w)
    close(((value, aux), grad), jax.value_and_grad(J.returns_kw_array, has_aux=True)(X, w=w))
    assert not np.shares_memory(aux, w)
    aux[...] = 0.0
    np.testing.assert_array_equal(w, W)
    np.testing.assert_array_equal(ws, np.stack([W, 2.0 * W]))
    close(s2s.jit(F.returns_kw_array, backend="jax")(X, w=w), J.returns_kw_array(X, w=w))


# ---- `x in y` over arrays --------------------------------------------------------


def member(v, array) -> bool:
    """Python's loop over the elements: is one of them equal to ``v``?"""
    return any(a == v for a in np.asarray(array, np.float64).ravel().tolist())


HIT = np.array([0.3, 2.0, 1.2])
NEAR = np.array([0.3, np.nextafter(2.0, 3.0), 1.2])  # (one ulp from equal)
IN_CASES = {  # name: (arguments, the decision from a Python loop)
    "in_array-hit": ("in_array", (HIT,), lambda x: member(2.0, x)),
    "in_array-near": ("in_array", (NEAR,), lambda x: member(2.0, x)),
    "in_array_if-hit": ("in_array_if", (HIT,), lambda x: member(2.0, x)),
    "in_array_if-miss": ("in_array_if", (X,), lambda x: member(2.0, x)),
    "in_array_if-empty": ("in_array_if", (np.zeros(0),), lambda x: member(2.0, x)),
    "not_in_array-hit": ("not_in_array", (X, np.array(1.2)), lambda x, v: member(v, x)),
    "not_in_array-miss": ("not_in_array", (X, np.array(0.5)), lambda x, v: member(v, x)),
    "in_computed": ("in_computed", (X,), lambda x: member(1.0, np.round(x))),
    "in_computed-miss": ("in_computed", (X * 0.1,), lambda x: member(1.0, np.round(x))),
    "in_other-nan": ("in_other", (X, np.array([np.nan, 2.0]), np.array(2.0)),
                     lambda y, x, v: member(v, x)),
    "in_other-nan-v": ("in_other", (X, np.array([np.nan, 2.0]), np.array(np.nan)),
                       lambda y, x, v: member(v, x)),
    "in_tuple_arg-hit": ("in_tuple_arg", (X, (1.0, 2.0)), lambda x, p: member(2.0, p)),
    "in_tuple_arg-miss": ("in_tuple_arg", (X, (1.0, 3.0)), lambda x, p: member(2.0, p)),
    "in_element_of_tuple": ("in_element_of_tuple", (X, (np.array([2.0, 1.0]), 3.0)),
                            lambda x, p: member(2.0, p[0])),
    "in_element_of_tuple-miss": ("in_element_of_tuple", (X, (np.array([0.5, 1.0]), 3.0)),
                                 lambda x, p: member(2.0, p[0])),
}


def body(name, found):
    return lambda *a: getattr(J, f"{name}_body")(*a, found)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("case", list(IN_CASES))
def test_in_over_arrays(case, dtype) -> None:
    """grad, value_and_grad, jvp, jacfwd, jacrev, hessian, s2s.jit on both backends:
    the value is NumPy's own run of the function; the derivatives are JAX's of the
    branch a Python loop's decision takes (the test itself has no derivative, as a
    comparison's)."""
    name, args, decide = IN_CASES[case]
    args = cast(args, dtype)
    ours, found = getattr(F, name), decide(*args)
    theirs = body(name, found)
    value = ours(*args)  # (NumPy's ndarray.__contains__, run as written)
    np.testing.assert_allclose(value, theirs(*args), **tol(dtype))
    close(s2s.value_and_grad(ours)(*args), jax.value_and_grad(theirs)(*args), dtype)
    if not isinstance(args[-1], tuple):
        tangents = tuple(np.ones_like(a) for a in args)
        close(s2s.jvp(ours, args, tangents), jax.jvp(theirs, args, tangents), dtype)
    if dtype == np.float64 and args[0].size:
        for make, oracle in ((s2s.jacfwd, jax.jacfwd), (s2s.jacrev, jax.jacrev),
                             (s2s.hessian, jax.hessian)):
            close(make(ours)(*args), oracle(theirs)(*args))
    np.testing.assert_allclose(s2s.jit(ours)(*args), value, **tol(dtype))
    if not isinstance(args[-1], tuple):  # (a tuple argument on JAX: a pytree, no `in`)
        np.testing.assert_allclose(s2s.jit(ours, backend="jax")(*args), value, **tol(dtype))
    close(s2s.jit(s2s.grad(ours), backend="jax")(*args), jax.grad(theirs)(*args), dtype)


def test_in_decided_afresh_at_each_call() -> None:
    """One transform called 10 times (generic code, specialized, fast path), the
    array holding 2.0 on every other call: each call's own decision, on NumPy and
    jitted on JAX (one compiled `lax.cond`); a caller writing into a result changes
    neither the next result nor its input."""
    g, v = s2s.grad(F.in_array_if), s2s.value_and_grad(F.in_array_if)
    on_jax = s2s.jit(s2s.grad(F.in_array_if), backend="jax")
    for call in range(10):
        x = HIT * (1.0 + 0.1 * call) if call % 2 else X * (1.0 + 0.1 * call)
        x[1] = 2.0 if call % 2 else x[1]
        kept = x.copy()
        expected = jax.grad(body("in_array_if", member(2.0, x)))(x)
        got = g(x)
        close(got, expected)
        got[...] = 7.0
        close(v(x), jax.value_and_grad(body("in_array_if", member(2.0, x)))(x))
        close(on_jax(x), expected)
        np.testing.assert_array_equal(x, kept)


def test_in_over_arrays_under_vmap() -> None:
    """A batched test: each example's own decision (the `if` is a where over the
    examples), against a loop over the examples of JAX's body for its decision."""
    xs = np.array([[0.3, 2.0, 1.2], [0.3, -0.7, 1.2], [2.0, 2.0, 2.0]])
    for name in ("in_array", "in_array_if"):
        expected = [body(name, member(2.0, x))(x) for x in xs]
        grads = [jax.grad(body(name, member(2.0, x)))(x) for x in xs]
        close(s2s.vmap(getattr(F, name))(xs), np.array(expected))
        close(s2s.vmap(s2s.grad(getattr(F, name)))(xs), np.stack(grads))
    vs = np.array([1.2, 0.5, 2.0])  # (`v not in x`, v batched, x not)
    ours = s2s.vmap(F.not_in_array, in_axes=(None, 0))(X, vs)
    close(ours, np.array([body("not_in_array", member(v, X))(X, v) for v in vs]))
    close(s2s.vmap(F.calls_in_array)(xs), np.array([F.calls_in_array(x) for x in xs]))


def test_in_a_callee_and_the_emitted_test() -> None:
    """``in`` in a callee (each call its own decision), and the code it becomes:
    ``np.any(x == 2.0)``, no Python ``in``."""
    g = s2s.grad(F.calls_in_array)
    for x in (HIT, X, HIT / 2.0):  # (the first call's test, the second's, neither)
        first, second = member(2.0, x), member(2.0, 2.0 * x)
        close(g(x), jax.grad(lambda x: body("in_array_if", first)(x) + body(
            "in_array_if", second)(x * 2.0))(x))
    source = s2s.grad(F.in_array_if).source
    assert "np.any(" in source and " in x" not in source


# ---- refusals, located at the user's line ----------------------------------------


def key_at_run_time(x, keys, **kw):
    return np.sum(x * kw.get(keys[0], 1.0))


def run_time_key_in_dict(x, params):
    return np.sum(x) * (np.sum(x) in params)


def string_key_in_array(x):
    return np.sum(x) * x.get("w", 1.0)


def spreads_dict_argument(x, params):
    return np.sum(x * F.scaled(x, **{**params, "shift": 1.0}))


def pops_shared(x, **kw):
    alias = kw
    s = kw.pop("scale", 1.0)
    return np.sum(x * s) + len(alias)


def pops_missing(x, **kw):
    return np.sum(x * kw.pop("scale"))


def pops_in_loop(x, **kw):
    s = 1.0
    for _ in range(2):
        s = s * kw.pop("scale", 1.0)
    return np.sum(x * s)


def in_grown_list(x):
    parts = []
    for row in x:
        parts.append(row)
    return np.sum(x) * (1.0 in parts)


@pytest.mark.parametrize("fn, args, said", [
    (key_at_run_time, (X, ("scale",)), "key known only when the function runs"),
    (run_time_key_in_dict, (X, {"w": W}), "key known only when the function runs"),
    (string_key_in_array, (X,), "only a dict has keys"),
    (in_grown_list, (np.ones((2, 3)),), "grown with `append`"),
    (pops_shared, (X,), "for another name"),
    (pops_missing, (X,), "raises KeyError"),
    (pops_in_loop, (X,), "changes the keys of the dict `kw`"),
], ids=["get-run-time-key", "in-run-time-key", "get-of-array", "in-grown-list", "pop-shared", "pop-missing", "pop-in-loop"])
def test_refusals_are_located(fn, args, said) -> None:
    keywords = {"scale": 2.0} if fn in (key_at_run_time, pops_shared, pops_in_loop) else {}
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(fn)(*args, **keywords)
    err = str(info.value)
    assert said in err and __file__ in err and "Instead:" in err and "<s2s:" not in err, err


def test_a_merged_dict_argument_spread_runs_per_call_keys() -> None:
    """``F.scaled(x, **{**params, "shift": 1.0})`` (refused until issue 23's item 4):
    the transform is made per call's keys (tests/frontend/test_runtime_keys.py)."""
    for params in ({"scale": W}, {"scale": W, "shift": -2.0}):
        want = central_grad(lambda t: spreads_dict_argument(t, params), X)
        np.testing.assert_allclose(s2s.grad(spreads_dict_argument)(X, params), want,
                                   rtol=1e-6, atol=1e-8)


def test_in_over_a_list_of_arrays_is_pythons_ambiguity_located() -> None:
    """``x in [a, b]`` of arrays: Python compares with ``==`` and takes the truth value
    of an array: NumPy's ValueError, raised as s2s.errors.TruthValueError at the user's line
    (under vmap the examples are scalars, and the test is per example)."""
    with pytest.raises(ValueError):
        F.in_list_of_arrays(X, [X + 0.0, X + 1.0])
    for make in (s2s.grad, s2s.value_and_grad, s2s.jacrev):
        with pytest.raises(s2s.errors.TruthValueError) as info:
            make(F.in_list_of_arrays)(X, [X + 0.0, X + 1.0])
        assert "kwargs_dict_fns.py" in str(info.value) and "if x in items" in str(info.value)
    xs = np.array([0.3, 1.0, 2.0])
    got = s2s.vmap(F.in_list_of_arrays)(xs, [xs, xs + 1.0])
    close(got, np.array([F.in_list_of_arrays(float(x), [float(x), x + 1.0]) for x in xs]))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_partial_of_a_kwargs_function_given_to_transforms(dtype) -> None:
    """``functools.partial(f, scale=...)`` of a ``def f(x, **kw)``: given to grad,
    jacfwd, hessian and vmap of grad, a keyword at the call overriding the bound one."""
    import functools

    x = np.array([0.5, -1.5, 2.0], dtype=dtype)
    f, jf = (functools.partial(g, scale=3.0) for g in (F.branch_on_key, J.branch_on_key))
    close = dict(rtol=1e-9) if dtype == np.float64 else dict(rtol=2e-4, atol=1e-5)
    np.testing.assert_allclose(s2s.grad(f)(x), jax.grad(jf)(x), **close)
    np.testing.assert_allclose(s2s.jacfwd(f)(x), jax.jacfwd(jf)(x), **close)
    np.testing.assert_allclose(s2s.hessian(f)(x), jax.hessian(jf)(x), **close)
    xs = np.stack([x, 2 * x])
    np.testing.assert_allclose(s2s.vmap(s2s.grad(f))(xs), jax.vmap(jax.grad(jf))(xs),
                               **close)
    np.testing.assert_allclose(s2s.grad(f)(x, scale=5.0), jax.grad(jf)(x, scale=5.0),
                               **close)
