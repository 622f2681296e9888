"""Issue 23: functions the newcomer probes 4 and 5 pinned ``refused`` where JAX runs
them (tests/frontend/newcomer_probe4_fns.py, newcomer_probe5_fns.py), made to run,
and adversarial variations: values and configuration changing between calls, keys
added to a default in place, float32, vmap, a derivative through a dict's item; what
stays refused is located.  The default tier checks closed forms (no JAX compile); the
JAX comparisons are ``slow``."""

from __future__ import annotations

import newcomer_harness as H
import numpy as np
import probe45_fns as F  # (pytest puts this directory on sys.path)
import pytest
from support import HAVE_JAX, jax_twin

import s2s

DTYPES = [np.float64, np.float32]
X = np.array([0.3, -0.7, 1.2])


def tol(dtype):
    return dict(rtol=1e-12, atol=1e-14) if dtype == np.float64 else dict(rtol=2e-6,
                                                                          atol=2e-7)


def test_each_fix_on_one_call() -> None:
    """The default tier's case of each fix below (one transform each, closed forms):
    a `try` around a dict default's lookup, a dataclass default holding a list, a dict
    literal of functions read by a module constant's key, an f-string of run-time
    strings."""
    np.testing.assert_allclose(s2s.grad(F.try_dict_default)(X), 1.5 * X ** 2, rtol=1e-12)
    np.testing.assert_allclose(s2s.grad(F.dataclass_containers)(X),
                               F.dataclass_containers_grad(X, F.HYPER), rtol=1e-12)
    np.testing.assert_allclose(s2s.grad(F.literal_dict_of_functions)(X),
                               _literal_dict_grad(X, F.CONFIG), rtol=1e-12)
    a, b = np.arange(6.0).reshape(2, 3) / 7, np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(s2s.grad(F.einsum_fstring)(a, b), 2 * (a @ b)[:, None] * b,
                               rtol=1e-12)


# ---- a `try` around a dict's lookup --------------------------------------------------

# the dict of each call (None: the default) and the (n, scale) Python gives
TRY_CALLS = [(None, (3, 0.5)), ({"n": "2", "scale": 2.0}, (2, 2.0)),
             ({"n": "bad"}, (2, 0.5)), ({"scale": 3.0}, (2, 3.0)),
             ({"n": "4", "scale": -1.0, "extra": 1}, (4, -1.0)), (None, (3, 0.5))]


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_a_try_around_a_dict_lookup_follows_each_calls_dict(dtype) -> None:
    """``try: n = int(cfg["n"]) except (KeyError, ValueError): n = 2`` and ``try:
    scale = cfg["scale"] except KeyError: scale = 0.5`` of a dict default (refused
    before: "a `try` around code that reads `cfg`"): one gradient object over calls
    whose dicts lack a key, hold a bad string, hold more keys; the default's."""
    g = s2s.grad(F.try_dict_default)
    for k, (cfg, (n, scale)) in enumerate(TRY_CALLS * 2):
        x = (X * (1 + 0.1 * k)).astype(dtype)
        got = g(x) if cfg is None else g(x, cfg)
        assert got.dtype == dtype
        np.testing.assert_allclose(got, n * x.astype(float) ** (n - 1) * scale, **tol(dtype))


@pytest.mark.slow
def test_a_key_added_to_the_default_in_place_is_read_at_the_next_call() -> None:
    g = s2s.grad(F.try_dict_default)
    np.testing.assert_allclose(g(X), 3 * X ** 2 * 0.5, rtol=1e-12)
    default = F.try_dict_default.__defaults__[0]
    default["scale"] = 4.0
    try:
        np.testing.assert_allclose(g(X), 3 * X ** 2 * 4.0, rtol=1e-12)
        default["n"] = "1"
        np.testing.assert_allclose(g(X), np.full(3, 4.0), rtol=1e-12)
    finally:
        default.clear()
        default["n"] = "3"
    np.testing.assert_allclose(g(X), 3 * X ** 2 * 0.5, rtol=1e-12)


def test_the_derivative_flows_through_a_lookup_decided_now() -> None:
    """``scale = cfg["scale"]`` with the key there cannot raise: the lookup is code of
    its own, so differentiating the dict gives d/d scale (a kept `try` would drop it)."""
    x = np.array([0.5, -2.0])
    got = s2s.grad(F.try_dict_default, argnums=1)(x, {"scale": 2.0})
    np.testing.assert_allclose(got["scale"], np.sum(x ** 2), rtol=1e-12)


@pytest.mark.slow
def test_a_try_around_array_code_or_a_differentiated_item_is_refused_located() -> None:
    with pytest.raises(s2s.TransformError, match="a `try` around array code only where") as e:
        s2s.grad(F.try_lookup_of_array_code)(X, {"s": 2.0})  # (np.sum: not an ufunc)
    assert "probe45_fns.py" in str(e.value) and 's = cfg["s"] * np.sum(x)' in str(e.value)
    with pytest.raises(s2s.TransformError, match="this `try` reads `cfg`, which carries "
                       "a derivative") as e:
        s2s.grad(F.try_dict_default, argnums=1)(X, {"n": 2.0, "scale": 2.0})
    assert "probe45_fns.py" in str(e.value) and "    try:" in str(e.value)
    with pytest.raises(s2s.TransformError, match="which carries a derivative"):
        s2s.grad(F.try_dict_argument, argnums=1)(X, {"scale": 2.0})  # (JAX: float(tracer))
    with pytest.raises(s2s.TransformError, match="a `try` over values with a batch "
                       "axis") as e:
        s2s.vmap(F.try_dict_argument)(np.ones((2, 3)), {"scale": np.array([1.0, 2.0])})
    assert "probe45_fns.py" in str(e.value)


# ---- a dataclass default holding containers ------------------------------------------


def _hyper_steps(m):
    """Changes to the default of module ``m``'s function (``F`` or its JAX twin), in
    place and by replacing it, each then checked."""
    fn, h = m.dataclass_containers, m.HYPER
    return [lambda: None, lambda: h.scales.append(2.0), lambda: setattr(h, "act", "sin"),
            lambda: h.names.update(a=1), lambda: setattr(h, "dims", (1, 3)),
            lambda: setattr(h, "scales", [0.5]), lambda: setattr(
                fn, "__defaults__", (m.Hyper(scales=[0.3, 0.2]),)),
            lambda: fn.__defaults__[0].scales.pop()]


@pytest.mark.slow
def test_an_item_appended_to_a_dataclass_defaults_list_is_walked_at_the_next_call() -> None:
    """(The default tier's case of the test below: unrolled over the old list, the
    gradient missed the new item's term.)"""
    g = s2s.grad(F.dataclass_containers)
    np.testing.assert_allclose(g(X), F.dataclass_containers_grad(X, F.HYPER), rtol=1e-12)
    F.HYPER.scales.append(2.0)
    try:
        np.testing.assert_allclose(g(X), F.dataclass_containers_grad(X, F.HYPER),
                                   rtol=1e-12)
    finally:
        F.HYPER.__init__()


@pytest.mark.slow
def test_a_dataclass_defaults_containers_are_read_as_they_are_at_each_call() -> None:
    """``def f(x, h=HYPER)`` whose dataclass holds a list, a dict and a tuple (refused
    before: "`.bias` is not an attribute of NumPy arrays"): the code is made for the
    containers' lengths, so an item appended in place, a field set, the default
    replaced make it again at the next call (unrolled over the old list: a wrong
    number).  grad and s2s.jit of grad (NumPy), one object each, against the gradient
    by hand."""
    saved = F.dataclass_containers.__defaults__
    g, jit = s2s.grad(F.dataclass_containers), s2s.jit(s2s.grad(F.dataclass_containers))
    try:
        for k, step in enumerate(_hyper_steps(F)):
            step()
            x = X * (1 + 0.1 * k)
            want = F.dataclass_containers_grad(x, F.dataclass_containers.__defaults__[0])
            np.testing.assert_allclose(g(x), want, rtol=1e-12, err_msg=str(k))
            np.testing.assert_allclose(jit(x), want, rtol=1e-12, err_msg=str(k))
        other = F.Hyper(scales=[1.0, -1.0], act="sin")  # (passed: its fields read)
        np.testing.assert_allclose(g(X, other), F.dataclass_containers_grad(X, other),
                                   rtol=1e-12)
    finally:
        F.dataclass_containers.__defaults__ = saved
        F.HYPER.__init__()


# ---- a dict literal of functions read by a module constant's key ---------------------

ACTS = {"tanh": (np.tanh, lambda v: 1.0 - np.tanh(v) ** 2), "sin": (np.sin, np.cos),
        "softplus": (lambda v: np.log1p(np.exp(v)), lambda v: 1.0 / (1.0 + np.exp(-v)))}


def _literal_dict_grad(x, cfg):
    """literal_dict_of_functions' gradient by the chain rule."""
    f, d = ACTS[cfg["act"]]
    g, h = np.ones_like(x), x
    for _ in range(cfg["layers"]):
        g = g * cfg["scale"] * d(cfg["scale"] * h)
        h = f(cfg["scale"] * h)
    g = g - np.sin(np.sum(x))
    g[0] += (np.cos, lambda v: 1.0 - np.tanh(v) ** 2)[cfg["pick"]](x[0])
    return g


@pytest.mark.slow
def test_a_dict_literal_of_functions_follows_the_module_constant_key(monkeypatch) -> None:
    """``{"tanh": np.tanh, "softplus": lambda v: ...}[CONFIG["act"]]`` (refused before:
    "`np.tanh` is a ufunc, used here as a value"): the function the key picks, the key
    and the loop count changing between calls of one gradient object."""
    g = s2s.grad(F.literal_dict_of_functions)
    for k, (act, layers, pick) in enumerate([("softplus", 2, 1), ("tanh", 2, 1),
                                             ("sin", 3, 0), ("softplus", 1, -1)]):
        monkeypatch.setitem(F.CONFIG, "act", act)
        monkeypatch.setitem(F.CONFIG, "layers", layers)
        monkeypatch.setitem(F.CONFIG, "pick", pick)
        x = X * (1 + 0.1 * k)
        np.testing.assert_allclose(g(x), _literal_dict_grad(x, F.CONFIG), rtol=1e-12,
                                   err_msg=act)
    monkeypatch.setitem(F.CONFIG, "act", "relu")
    with pytest.raises(s2s.TransformError, match="this dict has no item 'relu'") as e:
        g(X)
    assert "probe45_fns.py" in str(e.value)
    g = s2s.grad(F.literal_dict_by_a_value)  # (a string argument: an `if` over the keys)
    for key, d in (("sin", np.cos), ("tanh", ACTS["tanh"][1]), ("sin", np.cos)):
        np.testing.assert_allclose(g(X, key), d(X), rtol=1e-12)
    with pytest.raises(KeyError, match="relu"):
        g(X, "relu")


# ---- an f-string of strings computed when the function runs --------------------------


@pytest.mark.slow
def test_an_fstring_of_run_time_strings_is_their_sum_per_call() -> None:
    """``spec = f"{idx},{idx[1:]}->{idx[0]}"`` of ``idx = "ijk"[:a.ndim]`` (refused
    before: "an f-string of values known only when the function runs"): the ``+`` of
    its parts, made where the code runs, so a call of another rank gets its own
    subscripts (one gradient object over ranks 2, 3, 2)."""
    g = s2s.grad(F.einsum_fstring)
    r = np.random.default_rng(0)
    for shape in ((2, 3), (2, 3, 2), (3, 2)):
        a, b = r.normal(size=shape), r.normal(size=shape[1:])
        c = np.tensordot(a, b, axes=(tuple(range(1, a.ndim)), tuple(range(b.ndim))))
        want = 2 * c.reshape((-1,) + (1,) * (a.ndim - 1)) * b  # (d/da sum(c ** 2))
        np.testing.assert_allclose(g(a, b), want, rtol=1e-12)
    a = r.normal(size=(2, 3))
    np.testing.assert_allclose(s2s.grad(F.einsum_fstring_braces)(a), 2 * a.sum(1)[:, None]
                               * np.ones_like(a) * 5, rtol=1e-12)  # (len("{ij}2") == 5)


def test_fstrings_of_shape_made_strings_are_formatted_where_the_code_runs() -> None:
    """``f"{s!s}->"`` and ``f"{s}->"`` of ``s = "ij"[:a.ndim]`` (also bound on two
    paths of a flag) are strings made from shapes, computed where the code runs
    (strings15: ``shape_strings.py``; they were refused, "an f-string of values known
    only when the function runs"), against central differences."""
    a = np.arange(6.0).reshape(2, 3) / 5
    for fn, args in [(F.fstring_with_a_conversion, (a,)),
                     (F.fstring_of_a_string_from_two_paths, (a, True)),
                     (F.fstring_of_a_string_from_two_paths, (a[0], False))]:
        np.testing.assert_allclose(s2s.grad(fn)(*args), H.fd_grad(fn, args, 1e-6),
                                   rtol=1e-6, atol=1e-8)


# ---- against JAX (slow: each compiles JAX programs) ----------------------------------


def against_jax(name, x, rest=(), dtype=np.float64, calls=(1, 3, 10), twin=None):
    """grad at ``calls`` (one object, x scaled per call), jvp, vmap of grad, hessian,
    ``s2s.jit`` of grad on both backends of ``F.<name>(x, *rest)`` against JAX on the
    same source (``twin``, else a new one), in ``dtype``."""
    import jax

    ours, theirs = getattr(F, name), getattr(twin or jax_twin(F), name)
    rtol, atol = (1e-9, 1e-11) if dtype == np.float64 else (2e-4, 2e-5)

    def close(got, want):
        for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
            assert np.asarray(g).dtype == np.asarray(w).dtype, (g, w)
            np.testing.assert_allclose(np.asarray(g, float), np.asarray(w, float), rtol=rtol,
                                       atol=atol)

    x, rest = x.astype(dtype), H.cast(rest, dtype)
    at = [x * dtype(1 + 0.07 * (c - 1) * (-1) ** c) for c in range(1, max(calls) + 1)]
    one, its = H.bind_rest(ours, rest), H.bind_rest(theirs, rest)
    g, jg = s2s.grad(one), jax.grad(its)
    for c in range(1, max(calls) + 1):
        got = g(at[c - 1])
        if c in calls:
            close(got, jg(at[c - 1]))
    t = np.cos(np.arange(x.size) + 1.0).reshape(x.shape).astype(dtype)
    close(s2s.jvp(one, (x,), (t,)), jax.jvp(its, (x,), (t,)))
    batch = np.stack([x, x * dtype(0.8), x * dtype(-1.1)])
    close(s2s.vmap(s2s.grad(one))(batch), jax.vmap(jg)(batch))
    close(s2s.hessian(one)(x), jax.hessian(its)(x))
    for backend in ("numpy", "jax"):
        jit = s2s.jit(s2s.grad(one), backend=backend)
        for c in (1, 2, 3):
            got = jit(at[c - 1])
        close(got, jg(at[2]))


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("cfg", [c for c, _ in TRY_CALLS[:5]], ids=str)
def test_a_try_around_a_dict_lookup_against_jax(cfg, dtype) -> None:
    against_jax("try_dict_default", X, () if cfg is None else (cfg,), dtype)
    if cfg is not None and "scale" in cfg:
        against_jax("try_dict_argument", X, (cfg,), dtype, calls=(1, 3))


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_a_dataclass_default_holding_containers_against_jax(dtype) -> None:
    """Each change of the default, then grad at calls 1 and 3, jvp, vmap of grad, hessian,
    s2s.jit of grad on both backends (made after the change: on JAX the default is read
    when JAX traces, as jax.jit reads it) against JAX on the same source."""
    saved, twin = F.dataclass_containers.__defaults__, jax_twin(F)
    try:
        for k, (ours, theirs) in enumerate(zip(_hyper_steps(F), _hyper_steps(twin))):
            ours()
            theirs()
            if k in (2, 4, 5):  # (the other changes cost compiles and test nothing new)
                continue
            against_jax("dataclass_containers", X, (), dtype, calls=(1, 3), twin=twin)
    finally:
        F.dataclass_containers.__defaults__ = saved
        F.HYPER.__init__()


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("act", ["softplus", "tanh"])
def test_a_dict_literal_of_functions_against_jax(act, dtype, monkeypatch) -> None:
    twin = jax_twin(F)
    for m in (F, twin):
        monkeypatch.setitem(m.CONFIG, "act", act)
    against_jax("literal_dict_of_functions", X, (), dtype, twin=twin)
    against_jax("literal_dict_by_a_value", X, ("sin" if act == "softplus" else act,), dtype,
                calls=(1, 3), twin=twin)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_an_fstring_of_run_time_strings_against_jax(dtype) -> None:
    r = np.random.default_rng(1)
    for shape in ((2, 3), (2, 3, 2)):
        against_jax("einsum_fstring", r.normal(size=shape), (r.normal(size=shape[1:]),),
                    dtype, calls=(1, 3))
    against_jax("einsum_fstring_braces", r.normal(size=(2, 3)), (), dtype, calls=(1, 3))
