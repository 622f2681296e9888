"""Issue 23, the functions people write (objects12): a dict item read by a string
argument (``params[name]`` with ``name="w"`` or ``name: str``), by an f-string of an
int argument (``params[f"W{i}"]``) and in a ``for i in range(n)`` loop building the
keys (unrolled per call's ``n``, or a module constant's); a dataclass default argument
whose fields are read (``cfg=OptConfig(...)``, changed in place between calls), a
NamedTuple passed by keyword (``s2s.grad(f)(x, p=params)``) or bound by keyword in a
``functools.partial``; a model built by a ``@classmethod`` constructor
(``Quadratic.from_config(cfg)`` returning ``cls(...)``, on a subclass too).  Expected values from JAX
on the same source (tests/frontend/objects12_fns.py), float64 and float32, the
string, int or count changing between calls (the 1st, 3rd and 10th compared); the
default tier against central differences and a Python loop."""

from __future__ import annotations

import functools
from functools import partial

import numpy as np
import objects12_fns as F  # (pytest puts this directory on sys.path)
import pytest
from support import HAVE_JAX, assert_close_to, central_grad

import s2s

X = np.array([0.3, -0.7, 1.2])
close = partial(assert_close_to, f64=1e-9, f32=3e-4)
COMPARED = (0, 2, 9)
NAMES = ["w", "W1", "b0", "w", "W2", "b2", "W0", "w", "b1", "W1"]


def _call(k, dtype=np.float64):
    x = (X * (1 + 0.1 * k)).astype(dtype)
    params = {key: v.astype(dtype) for key, v in F.mlp_params(X - 0.05 * k).items()}
    return x, params


# ---- the default tier: central differences, NumPy run as written ----------------------


def test_string_argument_key_against_central_differences():
    """``params[name]``: each call's string picks the item (a later string is never
    read through the code made for an earlier one); the caller's dict unchanged and
    the gradient no view of it."""
    grad = s2s.grad(F.name_key)
    for k, name in enumerate(["W1", "w"]):
        x, params = _call(k)
        before = {key: v.copy() for key, v in params.items()}
        g = grad(params, x, name)
        assert set(g) == set(params) and not any(np.any(g[key]) for key in g if key != name)
        np.testing.assert_allclose(g[name], central_grad(
            lambda t: F.name_key({**params, name: t}, x, name), params[name]), rtol=1e-6)
        for key in params:
            np.testing.assert_array_equal(params[key], before[key])
            assert not np.shares_memory(g[key], params[key])


def _module_attribute_key(params, x):
    return F.name_key(params, x, F.KEY)


FREE_KEYS = (_module_attribute_key, F.global_key, F.global_index)


def _free_keys(calls, dtype, check, fns=FREE_KEYS):
    """``check(k, got, params, x, name)`` on calls ``calls`` of a jvp of a lambda closing
    over ``name`` and grads of ``fns`` (of a module attribute's string, a module's
    string, a module's int, each passed to a callee keyed by it: ``F.KEY``,
    ``F.INDEX`` set per call, restored after)."""
    saved = (F.KEY, F.INDEX)
    grads = [s2s.grad(f, argnums=1) for f in fns]
    try:
        for k in calls:
            x, params = _call(k, dtype)
            name = F.KEY = NAMES[k]
            F.INDEX = k % 3
            jvp = s2s.jvp(lambda t: F.name_key(params, t, name), (x,), (np.cos(x),))  # noqa: B023
            check(k, (jvp, *(g(params, x) for g in grads)), params, x, name)
    finally:
        F.KEY, F.INDEX = saved


def test_free_string_passed_to_a_callee_read_at_each_call():
    """A closure's string passed to a callee keyed by it (``name_key(params, t,
    name)`` in a lambda made again per call): the code is made again when the string
    changes (before, a later call read the key of an earlier one: jvp 5.66 where JAX
    gives 0.33); calls 1, 3 and 10 in float32 against float64 central differences of
    the function run as written (a module attribute's and a module's string and int:
    the slow tier, against JAX)."""

    def check(k, got, params, x, name):
        ((value, tangent),) = got
        assert tangent.dtype == np.float32
        p64 = {key: a.astype(np.float64) for key, a in params.items()}
        x64 = x.astype(np.float64)
        want = central_grad(lambda t: F.name_key(p64, t, name), x64)
        np.testing.assert_allclose(value, F.name_key(p64, x64, name), rtol=1e-5)
        np.testing.assert_allclose(tangent, want @ np.cos(x64), rtol=1e-4, atol=1e-5)

    _free_keys(COMPARED, np.float32, check, ())


def test_module_string_in_a_dict_literal_passed_to_a_callee():
    """``by_kind(x, {"kind": KIND})`` (the callee's copy made for the dict's string):
    made again when ``KIND`` changes (before, the first call's branch ran on: a wrong
    gradient), against central differences."""
    g, saved = s2s.grad(F.held_kind), F.KIND
    try:
        for kind in ("tanh", "other", "tanh"):
            F.KIND = kind
            np.testing.assert_allclose(g(X), central_grad(F.held_kind, X), rtol=1e-6,
                                       atol=1e-8)
    finally:
        F.KIND = saved


def test_loop_over_range_of_an_int_argument_against_central_differences():
    """``for i in range(n): params[f"W{i}"]``: unrolled per call's ``n`` (2, then 0:
    never the code of an earlier count)."""
    grad = s2s.grad(F.loop_keys)
    for k, n in enumerate((2, 0)):
        x, params = _call(k)
        want = central_grad(lambda t: F.loop_keys(t, params, n), x)
        np.testing.assert_allclose(grad(x, params, n), want, rtol=1e-6, atol=1e-8)


@pytest.mark.slow
def test_more_counts_and_the_index_after_the_loop():
    """Counts 3, 1, 0, 2 over one object; ``i`` after the loop is the last index."""
    grad = s2s.grad(F.loop_keys)
    for k, n in enumerate((3, 1, 0, 2)):
        x, params = _call(k)
        want = central_grad(lambda t: F.loop_keys(t, params, n), x)
        np.testing.assert_allclose(grad(x, params, n), want, rtol=1e-6, atol=1e-8)
    after = s2s.grad(F.loop_keys_after)
    for n in (2, 3):
        x, params = _call(n)
        np.testing.assert_allclose(after(x, params, n), central_grad(
            lambda t: F.loop_keys_after(t, params, n), x), rtol=1e-6, atol=1e-8)


@pytest.mark.slow
def test_int_key_and_module_count_against_central_differences():
    """``params[f"W{i}"]`` of an int argument, per call's int; ``range(N_LAYERS)`` of
    a module constant changed between calls: generated again for the new count."""
    grad = s2s.grad(F.int_key, argnums=1)
    for k, i in enumerate((0, 2, 1)):
        x, params = _call(k)
        np.testing.assert_allclose(grad(params, x, i), central_grad(
            lambda t: F.int_key(params, t, i), x), rtol=1e-6, atol=1e-8)
    grad = s2s.grad(F.loop_keys_module)
    try:
        for k, count in enumerate((3, 1, 2)):
            F.N_LAYERS = count
            x, params = _call(k)
            np.testing.assert_allclose(grad(x, params), central_grad(
                lambda t: F.loop_keys_module(t, params), x), rtol=1e-6, atol=1e-8)
    finally:
        F.N_LAYERS = 3


def test_an_array_index_keeps_its_loop():
    """Only a loop whose body keys a subscript by a string built from its variable
    is unrolled: ``x[i + 1]`` in a ``range`` loop stays a loop."""
    grad = s2s.grad(F.shifted_products)
    np.testing.assert_allclose(grad(X), central_grad(F.shifted_products, X), rtol=1e-6)
    assert "for i in" in s2s.source(grad)


def test_missing_key_is_located():
    """A string or int naming no key: refused at the user's line, naming the key."""
    x, params = _call(0)
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(F.name_key)(params, x, "nope")
    assert "'nope'" in str(info.value) and "objects12_fns.py" in str(info.value)
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(F.int_key)(params, x, 7)
    assert "'W7'" in str(info.value)


def test_dataclass_default_read_at_each_call():
    """``def f(w, cfg=OptConfig(...))`` called as ``f(w)``: its fields read at each
    call (a default changed in place between calls gives the new answer), directly
    and as a callee; against central differences of the function run as written."""
    grad, outer = s2s.grad(F.momentum_steps), s2s.grad(F.calls_momentum_steps)
    saved = (F.DEFAULT_CFG.lr, F.DEFAULT_CFG.steps)
    try:
        for k, (lr, steps) in enumerate([(0.1, 3), (0.3, 0)]):
            F.DEFAULT_CFG.lr, F.DEFAULT_CFG.steps = lr, steps
            x = X * (1 + 0.1 * k)
            np.testing.assert_allclose(grad(x), central_grad(F.momentum_steps, x),
                                       rtol=1e-6, atol=1e-8)
            np.testing.assert_allclose(outer(x), central_grad(F.calls_momentum_steps, x),
                                       rtol=1e-6, atol=1e-8)
    finally:
        F.DEFAULT_CFG.lr, F.DEFAULT_CFG.steps = saved


def test_namedtuple_by_keyword():
    """``s2s.grad(f)(x, p=params)`` and ``s2s.grad(partial(f, p=params))(x)``: the
    NamedTuple's fields read (refused before: "`.w` is not an attribute of NumPy
    arrays"); the partial's result no view of the bound arrays."""
    p = F.Params(np.cos(X), np.sin(X))
    want = central_grad(lambda t: F.nt_loss(t, p), X)
    np.testing.assert_allclose(s2s.grad(F.nt_loss)(X, p=p), want, rtol=1e-6, atol=1e-8)
    with pytest.raises(TypeError, match="positional"):  # (argnums count positionals,
        s2s.grad(F.nt_loss, argnums=1)(X, p=p)  # as JAX's: no gradient by keyword)
    g = s2s.grad(functools.partial(F.nt_loss, p=p))(X)
    np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-8)
    assert not any(np.shares_memory(g, a) for a in (X, p.w, p.b))


def test_classmethod_constructor_against_central_differences():
    """``Quadratic.from_config(cfg)`` building ``cls(...)``, its method read then
    (refused before: "`Quadratic.from_config` (method) is not a function s2s can
    transform"); on a subclass ``cls`` is the subclass, whose method runs."""
    for f in (F.classmethod_model, F.classmethod_of_subclass):
        np.testing.assert_allclose(s2s.grad(f)(X), central_grad(f, X), rtol=1e-6,
                                   atol=1e-8)


# ---- against JAX (slow) -------------------------------------------------------------

if HAVE_JAX:
    import jax

    from support import jax_twin

    J = jax_twin(F) if HAVE_JAX else None

needs_jax = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
DTYPES = pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])


@pytest.mark.slow
@needs_jax
@DTYPES
def test_string_keys_against_jax(dtype):
    """grad (in the dict and in ``x``), value_and_grad, jvp, vmap of grad, hessian,
    jacfwd and ``s2s.jit`` of grad on both backends (the string static), over ten
    calls whose strings change, the 1st, 3rd and 10th compared with JAX."""
    made = {
        "grad": s2s.grad(F.name_key), "vg": s2s.value_and_grad(F.name_key, argnums=1),
        "jit": s2s.jit(s2s.grad(F.name_key, argnums=1)),
        "jit_jax": s2s.jit(s2s.grad(F.name_key, argnums=1), backend="jax",
                           static_argnums=2),
    }
    for k, name in enumerate(NAMES):
        x, params = _call(k, dtype)
        got = {key: m(params, x, name) for key, m in made.items()}
        if k not in COMPARED:
            continue
        close(got["grad"], jax.grad(J.name_key)(params, x, name), dtype)
        close(got["vg"], jax.value_and_grad(J.name_key, argnums=1)(params, x, name), dtype)
        want = jax.grad(J.name_key, argnums=1)(params, x, name)
        close(got["jit"], want, dtype)
        close(got["jit_jax"], want, dtype)
        one = lambda f: (lambda t: f(params, t, name))  # noqa: E731
        close(s2s.jvp(one(F.name_key), (x,), (np.cos(x),)),
              jax.jvp(one(J.name_key), (x,), (np.cos(x),)), dtype)
        close(s2s.hessian(one(F.name_key))(x), jax.hessian(one(J.name_key))(x), dtype)
        close(s2s.jacfwd(s2s.grad(one(F.name_key)))(x),
              jax.jacfwd(jax.grad(one(J.name_key)))(x), dtype)
        xs = np.stack([x, x * dtype(0.5), -x])
        close(s2s.vmap(s2s.grad(one(F.name_key)))(xs),
              jax.vmap(jax.grad(one(J.name_key)))(xs), dtype)
        close(s2s.grad(F.annotated_key)(params, x, name),
              jax.grad(J.annotated_key)(params, x, name), dtype)


@pytest.mark.slow
@needs_jax
@DTYPES
def test_int_keys_and_loops_against_jax(dtype):
    """``params[f"W{i}"]`` and ``for i in range(n)`` over ten calls whose ints change
    (n = 0 too), grad, value_and_grad, hessian, vmap of grad and ``s2s.jit`` on both
    backends (the int static), against JAX."""
    counts = [3, 1, 2, 0, 3, 2, 1, 3, 0, 2]
    made = {"loop": s2s.grad(F.loop_keys, argnums=(0, 1)),
            "loop_jit": s2s.jit(s2s.grad(F.loop_keys)),
            "loop_jj": s2s.jit(s2s.grad(F.loop_keys), backend="jax", static_argnums=2),
            "int": s2s.value_and_grad(F.int_key, argnums=1),
            "after": s2s.grad(F.loop_keys_after)}
    for k, n in enumerate(counts):
        x, params = _call(k, dtype)
        i = n % 3
        got = {"loop": made["loop"](x, params, n), "loop_jit": made["loop_jit"](x, params, n),
               "loop_jj": made["loop_jj"](x, params, n), "int": made["int"](params, x, i),
               "after": made["after"](x, params, max(n, 1))}
        if k not in COMPARED:
            continue
        close(got["loop"], jax.grad(J.loop_keys, argnums=(0, 1))(x, params, n), dtype)
        want = jax.grad(J.loop_keys)(x, params, n)
        close(got["loop_jit"], want, dtype)
        close(got["loop_jj"], want, dtype)
        close(got["int"], jax.value_and_grad(J.int_key, argnums=1)(params, x, i), dtype)
        close(got["after"], jax.grad(J.loop_keys_after)(x, params, max(n, 1)), dtype)
        one = lambda f: (lambda t: f(t, params, n))  # noqa: E731
        close(s2s.hessian(one(F.loop_keys))(x), jax.hessian(one(J.loop_keys))(x), dtype)
        xs = np.stack([x, x * dtype(0.5), -x])
        close(s2s.vmap(s2s.grad(one(F.loop_keys)))(xs),
              jax.vmap(jax.grad(one(J.loop_keys)))(xs), dtype)


@pytest.mark.slow
@needs_jax
@DTYPES
def test_objects_by_keyword_and_default_against_jax(dtype):
    """The dataclass default, the NamedTuple by keyword, by a partial's keyword and
    as a default: grad over ten calls (the default changed in place, the NamedTuple's
    values changing), value_and_grad, jvp, vmap of grad, hessian, jacfwd of grad,
    ``s2s.jit`` of grad on both backends, against JAX (``s2s.jit(..., backend="jax")``
    against ``jax.jit`` called alike: both read a default when they compile)."""
    cases = {
        "default": (F.momentum_steps, J.momentum_steps, lambda x, p: (x,), {}),
        "callee": (F.calls_momentum_steps, J.calls_momentum_steps, lambda x, p: (x,), {}),
        "nt_default": (F.nt_default, J.nt_default, lambda x, p: (x,), {}),
        "keyword": (F.nt_loss, J.nt_loss, lambda x, p: (x,), "p"),
    }
    saved = (F.DEFAULT_CFG.lr, F.DEFAULT_CFG.steps, J.DEFAULT_CFG.lr, J.DEFAULT_CFG.steps)
    made, made_jax = {}, {}
    try:
        for k in range(10):
            lr, steps = (0.1, 3) if k % 3 == 0 else (0.2, 1) if k % 3 == 1 else (0.05, 2)
            F.DEFAULT_CFG.lr = J.DEFAULT_CFG.lr = lr
            F.DEFAULT_CFG.steps = J.DEFAULT_CFG.steps = steps
            x = (X * (1 + 0.1 * k)).astype(dtype)
            p = F.Params(np.cos(x + k), np.sin(x - k))
            for label, (ours, theirs, args, kw) in cases.items():
                kwargs = {kw: p} if kw else {}
                kwj = {kw: J.Params(*p)} if kw else {}
                for tname, make in (("grad", s2s.grad), ("jit", lambda f: s2s.jit(
                        s2s.grad(f))), ("jj", lambda f: s2s.jit(s2s.grad(f), backend="jax"))):
                    key = (label, tname)
                    if key not in made:
                        made[key] = make(ours)
                    got = made[key](x, **kwargs)
                    # (on JAX a default is read when the code compiles, as jax.jit's)
                    if tname == "jj" and key not in made_jax:
                        made_jax[key] = jax.jit(jax.grad(theirs))
                    want = made_jax[key](x, **kwj) if tname == "jj" else None
                    if k in COMPARED:
                        close(got, jax.grad(theirs)(x, **kwj) if want is None else want,
                              dtype)
                if k not in COMPARED:
                    continue
                fn = ours if not kw else partial(ours, p=p)
                jf = theirs if not kw else partial(theirs, p=J.Params(*p))
                close(s2s.value_and_grad(fn)(x), jax.value_and_grad(jf)(x), dtype)
                close(s2s.jvp(fn, (x,), (np.cos(x),)), jax.jvp(jf, (x,), (np.cos(x),)), dtype)
                xs = np.stack([x, x * dtype(0.5), -x])
                close(s2s.vmap(s2s.grad(fn))(xs), jax.vmap(jax.grad(jf))(xs), dtype)
                close(s2s.hessian(fn)(x), jax.hessian(jf)(x), dtype)
                close(s2s.jacfwd(s2s.grad(fn))(x), jax.jacfwd(jax.grad(jf))(x), dtype)
                close(s2s.jit(s2s.grad(fn))(x), jax.grad(jf)(x), dtype)
    finally:
        F.DEFAULT_CFG.lr, F.DEFAULT_CFG.steps, J.DEFAULT_CFG.lr, J.DEFAULT_CFG.steps = saved


@pytest.mark.slow
@needs_jax
@DTYPES
@pytest.mark.parametrize("name", ["classmethod_model", "classmethod_of_values",
                                  "classmethod_of_subclass"])
def test_classmethod_constructors_against_jax(name, dtype):
    """grad at calls 1, 3 and 10 (values changing), value_and_grad, jvp, vmap of grad,
    hessian, ``s2s.jit`` of grad on both backends, against JAX."""
    ours, theirs = getattr(F, name), getattr(J, name)
    g, jn, jj = s2s.grad(ours), s2s.jit(s2s.grad(ours)), s2s.jit(s2s.grad(ours),
                                                                backend="jax")
    for k in range(10):
        x = (X * (1 + 0.1 * k * (-1) ** k)).astype(dtype)
        got = (g(x), jn(x), jj(x))
        if k in COMPARED:
            for one in got:
                close(one, jax.grad(theirs)(x), dtype)
    x = X.astype(dtype)
    close(s2s.value_and_grad(ours)(x), jax.value_and_grad(theirs)(x), dtype)
    close(s2s.jvp(ours, (x,), (np.cos(x),)), jax.jvp(theirs, (x,), (np.cos(x),)), dtype)
    xs = np.stack([x, x * dtype(0.5), -x])
    close(s2s.vmap(s2s.grad(ours))(xs), jax.vmap(jax.grad(theirs))(xs), dtype)
    close(s2s.hessian(ours)(x), jax.hessian(theirs)(x), dtype)


@pytest.mark.slow
@needs_jax
@DTYPES
def test_free_keys_against_jax(dtype):
    """A closure's string (jvp and vjp of a lambda made again per call), a module
    attribute's and a module's string and a module's int passed to a callee keyed by
    them, a module's string in a dict literal passed to a callee comparing it, a
    module's int a callee's ``range`` builds keys from, over ten calls whose values
    change, the 1st, 3rd and 10th against JAX."""

    def check(k, got, params, x, name):
        jvp, *grads = got
        one = lambda f: (lambda t: f(params, t, name))  # noqa: E731
        close(jvp, jax.jvp(one(J.name_key), (x,), (np.cos(x),)), dtype)
        out, pull = s2s.vjp(one(F.name_key), x)
        want_out, want_pull = jax.vjp(one(J.name_key), x)
        close(out, want_out, dtype)
        close(pull(dtype(1.5)), want_pull(dtype(1.5)), dtype)
        want = jax.grad(J.name_key, argnums=1)(params, x, name)
        close(grads[0], want, dtype)
        close(grads[1], want, dtype)
        close(grads[2], jax.grad(J.int_key, argnums=1)(params, x, k % 3), dtype)

    _free_keys(range(10), dtype, lambda k, *a: check(k, *a) if k in COMPARED else None)
    saved = (F.KIND, F.COUNT)
    made = (s2s.grad(F.held_kind), s2s.grad(F.global_count))
    try:
        for k in range(10):
            F.KIND, F.COUNT = ("tanh", "other")[k % 2], (2, 3, 1, 0)[k % 4]
            J.KIND, J.COUNT = F.KIND, F.COUNT  # (the twin: a module of its own)
            x = (X * (1 + 0.1 * k)).astype(dtype)
            got = [g(x) for g in made]
            if k in COMPARED:
                close(got[0], jax.grad(J.held_kind)(x), dtype)
                close(got[1], jax.grad(J.global_count)(x), dtype)
    finally:
        F.KIND, F.COUNT = saved
        J.KIND, J.COUNT = saved
