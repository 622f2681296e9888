"""The specializer's ``buffers`` pass (s2s/optimize/buffers.py): arithmetic computes into
the intermediates nothing else holds.  Checked two ways: on straight-line code given
the arguments' shapes and dtypes, where the rewritten function must give the original's
values bit for bit (NaN and inf among the inputs) and must leave alone every array that
is read later, broadcast into a larger result, of another dtype or small; and through
``s2s.jvp`` of ``s2s.grad`` (a Hessian-vector product, the pass's reason), against JAX
at the 1st, 3rd and 10th call with values changing between calls, in float64 and
float32, against the code with the pass off bit for bit, and with the caller writing
into the results."""

from __future__ import annotations

import ast

import numpy as np
import pytest

import s2s
from s2s import syntax
from s2s.api.transformed import JVPS
from s2s.optimize.buffers import reuse_intermediates


def _rewrite(text: str, layouts: dict[str, tuple]) -> str:
    """``text``'s function with the pass run, the parameters' layouts given; a NumPy
    ufunc of one parameter has that parameter's layout (as the probe would record)."""
    module = syntax.parse(text)
    fn = module.body[0]

    def fact(node: ast.AST):
        if isinstance(node, ast.Name) and node.id in layouts:
            return layouts[node.id]
        if isinstance(node, ast.Call) and len(node.args) == 1 and \
                isinstance(node.args[0], ast.Name):
            return layouts.get(node.args[0].id)
        return None

    reuse_intermediates(fn, fact, {n.id for n in ast.walk(module) if isinstance(n, ast.Name)})
    return ast.unparse(module)


def _run(text: str, args: list[np.ndarray]):
    namespace = {"np": np}
    exec(compile(text, "<test>", "exec"), namespace)
    fn = next(v for k, v in namespace.items() if k.startswith("f"))
    with np.errstate(all="ignore"):
        return fn(*[a.copy() for a in args])


def _same_bits(got, want) -> None:
    for a, b in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)


HVP = """
def f(x, x_dot):
    tanh_x = np.tanh(x)
    v = 1.0 - tanh_x**2
    tanh_x_dot = x_dot * v
    twice = tanh_x + tanh_x
    return (twice * v, (tanh_x_dot + tanh_x_dot) * v - twice * (tanh_x_dot * twice))
"""


@pytest.mark.every_case
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_steps_give_the_same_bits_and_write_only_dead_arrays(dtype) -> None:
    n = 300
    layout = ((n,), np.dtype(dtype))
    new = _rewrite(HVP, {"x": layout, "x_dot": layout})
    # (twice * v stays: twice and v are read by both returned items)
    assert "tanh_x += tanh_x" in new and "tanh_x_dot *= twice" in new, new
    assert "twice * v," in new and "v *=" not in new and "twice *=" not in new, new
    rng = np.random.default_rng(0)
    for call in range(3):
        x, v = (rng.normal(size=n).astype(dtype) * 3 for _ in range(2))
        x[:3], v[3:6] = [np.nan, np.inf, -np.inf], [np.inf, np.nan, -np.inf]
        _same_bits(_run(new, [x, v]), _run(HVP, [x, v]))


CASES = {
    # an array read by a later statement is not written into
    "read later": ("""
def f(a, b):
    p = a * b
    q = p * b
    return q + p
""", {"a": (600,), "b": (600,)}, "p *=", "q += p"),
    # a smaller intermediate is not written into a larger result (b broadcasts it)
    "broadcast": ("""
def f(a, b):
    p = a * 2.0
    return p * b
""", {"a": (1, 300), "b": (4, 300)}, "*=", None),
    # nor a float32 one into a float64 result
    "dtype": ("""
def f(a, b):
    p = a * 2.0
    return p * b
""", {"a": (300,), "b": (300,)}, "*=", None),
    # small arrays: NumPy's cache makes them cheaply
    "small": ("""
def f(a, b):
    return (a + b) * a - b
""", {"a": (64,), "b": (64,)}, "=", None),
    # a returned item's operand that an earlier item reads stays as it is
    "items": ("""
def f(a, b):
    p = a * b
    return (p + a, (p * b) * a)
""", {"a": (300,), "b": (300,)}, "p *=", "out_1 *= a"),
    # a name read other than as an operand may be held elsewhere: not written into
    "held": ("""
def f(a, b):
    p = a * b
    c = p[::2]
    return (p * b, c)
""", {"a": (300,), "b": (300,)}, "p *=", None),
}


@pytest.mark.every_case
@pytest.mark.parametrize("case", sorted(CASES))
def test_arrays_read_again_broadcast_widened_small_or_held_are_not_written(case) -> None:
    text, shapes, absent, present = CASES[case]
    dtypes = {"a": np.float32 if case == "dtype" else np.float64, "b": np.float64}
    layouts = {k: (s, np.dtype(dtypes[k])) for k, s in shapes.items()}
    new = _rewrite(text, layouts)
    body = new.split("def f(a, b):", 1)[1]
    assert absent not in body.replace("==", ""), new
    if present is not None:
        assert present in body, new
    rng = np.random.default_rng(1)
    args = [rng.normal(size=s).astype(dtypes[k]) for k, s in shapes.items()]
    _same_bits(_run(new, args), _run(text, args))


def tanh_sq(x):
    return np.sum(np.tanh(x) ** 2)


def _hvp(x, v):
    return s2s.jvp(G, (x,), (v,))


G = s2s.grad(tanh_sq)


@pytest.mark.slow  # (JAX's compile and two specializings: tests/test_passes_off.py
@pytest.mark.parametrize("dtype", [np.float64, np.float32])  # runs the pass by default)
def test_an_hvp_at_a_thousand_elements_is_jaxs_at_calls_1_3_and_10(dtype) -> None:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    def twin(x):
        return jnp.sum(jnp.tanh(x) ** 2)

    want_fn = jax.jit(lambda x, v: jax.jvp(jax.grad(twin), (x,), (v,)))
    rng = np.random.default_rng(2)
    tol = dict(rtol=2e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    for call in range(1, 11):
        x, v = (rng.normal(size=1000).astype(dtype) for _ in range(2))
        x0, v0 = x.copy(), v.copy()
        got = _hvp(x, v)
        if call in (1, 3, 10):
            want = want_fn(x, v)
            for a, b in zip(got, want):
                assert a.dtype == dtype and a.shape == (1000,)
                np.testing.assert_allclose(a, np.asarray(b), **tol)
        out, out_dot = got
        assert not np.shares_memory(out, out_dot)
        out[:] = 7.0  # the caller writes into the results: the inputs stay
        out_dot[:] = 7.0
        np.testing.assert_array_equal(x, x0)
        np.testing.assert_array_equal(v, v0)
    G.wait_specialized()
    JVPS[G][False].wait_specialized()
    text = JVPS[G][False].specialized_source
    assert "+= tanh_x" in text and "-= " in text, text  # (the pass applied)


@pytest.mark.slow
def test_with_the_pass_off_the_hvp_is_the_same_bits(monkeypatch) -> None:
    rng = np.random.default_rng(3)
    x, v = (rng.normal(size=500) * 3 for _ in range(2))
    x[:3], v[3:6] = [np.nan, np.inf, -np.inf], [np.inf, np.nan, -np.inf]
    results = {}
    texts = {}
    for off in ("", "buffers"):
        monkeypatch.setenv("S2S_PASSES_OFF", off)
        g = s2s.grad(tanh_sq)  # (a new transform: specialized with the switch as set)
        with np.errstate(all="ignore"):
            results[off] = [s2s.jvp(g, (x,), (v,)) for _ in range(3)]
        texts[off] = JVPS[g][False].specialized_source
    assert texts[""] != texts["buffers"] and "*=" not in texts["buffers"]
    for got, want in zip(results[""], results["buffers"]):
        _same_bits(got, want)


@pytest.mark.slow  # (four signatures specialized: a few seconds)
def test_jvps_hot_path_takes_each_calls_own_plan_across_shapes_and_dtypes() -> None:
    """s2s.jvp's hot path keeps the latest call's plan beside its shapes and dtype
    objects: calls alternating shapes, dtypes and byte order (an equal dtype that is
    another object) each run their own signature's code, checked against the HVP's
    formula 2 (1 - t^2)(1 - 3 t^2) v, t = tanh(x) (a Python loop's oracle, in
    float64), and return arrays of their inputs' dtype that writing into leaves the
    inputs as they were."""
    g = s2s.grad(tanh_sq)
    rng = np.random.default_rng(5)
    layouts = [(300, "<f8"), (300, "<f4"), (7, "<f8"), (300, ">f8"), (300, "<f8")]
    for rounds in range(3):
        for n, dt in layouts:
            x = rng.normal(size=n).astype(dt)
            v = rng.normal(size=n).astype(dt)
            x0, v0 = x.copy(), v.copy()
            out, out_dot = s2s.jvp(g, (x,), (v,))
            t = np.tanh(x.astype(np.float64))
            want = [2 * (1 - a * a) * (1 - 3 * a * a) * w
                    for a, w in zip(t, v.astype(np.float64))]
            tol = 1e-5 if np.dtype(dt).itemsize == 4 else 1e-12
            np.testing.assert_allclose(out_dot, want, rtol=tol, atol=tol)
            np.testing.assert_allclose(out, 2 * t * (1 - t**2), rtol=tol, atol=tol)
            assert out.dtype == out_dot.dtype == np.dtype(dt).newbyteorder("=")
            out[...] = 1.0
            out_dot[...] = 1.0
            np.testing.assert_array_equal(x, x0)
            np.testing.assert_array_equal(v, v0)
