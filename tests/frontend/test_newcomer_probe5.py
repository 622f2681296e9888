"""Issues 23 and 27, the fifth newcomer probe: 32 everyday functions of kinds the
earlier probes did not try (an optimizer-state dict with an int counter, an EM
objective, a Kalman filter over a loop, velocity Verlet with np.roll, clip/where masks
at their kinks, norms of zero rows, cumsum/diff/roll, np.select/np.piecewise, np.interp
in its table, sort/max/median/argsort with ties, a config dict of functions, a
dataclass with default_factory fields, @property and @staticmethod on a model class,
try/except and f-string guards, itertools.accumulate/pairwise, batched einsum, a
Vandermonde fit, a running max, NaN-masked and inf-safe losses...) through grad at
calls 1, 3 and 10 with changing values, jvp, vmap of grad, hessian, jit of grad on
both backends, grad at kinks/ties/NaN/inf/size-1/0-size inputs (also after the code
specialized on ordinary values), and the caller writing into a result; in float64 and
float32 against JAX on the same source (``jax_twin``) or central differences.

The sweep (``-m slow``: each function compiles dozens of JAX programs) pins each
function's class; the default tier checks what the probe fixed against closed forms
and NumPy run as written (no JAX compile): a dict's int counter ``state["step"] += 1``
in a loop (refused), and ``d["k"] += v`` on a dict item another name also holds (a
WRONG NUMBER: NumPy adds in place, s2s gave the dict a new item; now refused)."""

from __future__ import annotations

import newcomer_harness as H
import newcomer_probe5_cases as C  # (pytest puts this directory on sys.path)
import newcomer_probe5_fns as F
import numpy as np
import pytest
from support import HAVE_JAX, jax_twin

import s2s

DTYPES = [np.float64, np.float32]

# the probe's classes (newcomer_probe5_cases.classify), per function; every function
# not named here is accepted and correct under every transform tried, in both dtypes
EXPECTED = {
    # (accepted since numpy_api11: `np.diff(c, prepend=0.0)` and `append=[0.0, 0.0]`,
    # which JAX refuses (a list: central differences are the oracle); `np.piecewise`;
    # `np.maximum.accumulate`: tests/frontend/test_numpy_api11.py)
    # (`{"tanh": np.tanh, ...}[CONFIG["act"]]`, a dict literal of functions read by a
    # module constant's key, refused before ("`np.tanh` is a ufunc, used here as a
    # value"), runs: the function the key picks, fncontainers.py; test_probe45_fixes.py)
    # (a dataclass default `h=HYPER` with list and dict fields, refused before ("`.bias`
    # is not an attribute of NumPy arrays"), runs: the code is made for the containers'
    # lengths, made again when they change: tests/frontend/test_probe45_fixes.py)
    # (`try: n = int(cfg["n"])` and `try: scale = cfg["scale"] except KeyError` of a
    # dict default, refused before ("a `try` around code that reads `cfg`"), run: the
    # missing key decided when transforming, the rest kept as Python (kept_try.py;
    # tests/frontend/test_probe45_fixes.py)
    # (`itertools.accumulate(parts)` over a list comprehension of known length, refused
    # before ("it defines `__new__`"), runs since numpy_api11: itertools.accumulate of
    # a known length is unrolled, tests/frontend/test_numpy_api11.py)
    # refused on purpose since this probe (NumPy's += writes into an array another name
    # holds; s2s used to give the dict a new item: a wrong value)
    "dict_item_read_then_added": "ok",
    "dict_item_from_a_name": "ok",
    # (alias15: ok now, was "refused": the list literal holding the item, read by
    # nothing before the write, is built again with the sum, as NumPy's `keep[0]` sees
    # it; a list read before the write stays refused, tests/frontend/test_alias15.py)
    "dict_item_kept_in_a_list": "ok",
}
# float32 only: values agree, but the dtype differs from JAX's (NumPy's promotion,
# which the function run as written follows)
EXPECTED_F32 = {
    # `mean, var = 0.0, 1.0` and `np.log(2 * np.pi * s)` of Python floats: float64 in
    # NumPy (JAX keeps float32): jvp's primal and tangent are float64, as NumPy's value
    "kalman_nll": "dtype",
    # `/ np.maximum(np.sum(ok), 1)`: float32 over int64 is float64 in NumPy
    "nan_masked_mse": "dtype",
}


@pytest.mark.slow
@pytest.mark.every_case
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", list(C.CASES))
def test_probe_sweep(name, dtype) -> None:
    """Each function's class is the one recorded: accepted and correct, or refused
    with a located TransformError (never WRONG, never an internal error)."""
    if name in SHARED_ITEMS:  # (JAX's arrays are immutable: its `+=` is no oracle here)
        pytest.skip("NumPy's in-place add: checked against NumPy's closed form below")
    label, verdicts = C.classify(name, jax_twin(F), dtype)
    assert label == H.pinned(name, dtype, EXPECTED, EXPECTED_F32), verdicts


def tol(dtype):
    return dict(rtol=1e-9, atol=1e-11) if dtype == np.float64 else dict(rtol=3e-5,
                                                                         atol=3e-6)


def _counter_in_dict_grad(w):
    """The gradient of counter_in_dict by the chain rule, step by step."""
    d = np.ones_like(w)
    for k in (1, 2, 3):
        d = d * (1.0 - 0.1 / k * np.cos(w))
        w = w - 0.1 / k * np.sin(w)
    return 2 * w * d * 0.125


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_an_int_counter_in_a_dict_in_a_loop(dtype) -> None:
    """``state["step"] += 1`` on a dict literal's int item in a loop was refused as a
    write "into an array `state_step` shares with another name"."""
    g = s2s.grad(F.counter_in_dict)
    for call in range(1, 4):  # (values changing between calls)
        w = (np.array([0.3, -0.7, 1.2]) * (1 + 0.1 * call)).astype(dtype)
        got = g(w)
        assert got.dtype == dtype
        np.testing.assert_allclose(got, _counter_in_dict_grad(w.astype(np.float64)),
                                   **tol(dtype))


SHARED_ITEMS = ["dict_item_read_then_added", "dict_item_from_a_name",
                "dict_item_kept_in_a_list"]


@pytest.mark.parametrize("name", SHARED_ITEMS)
def test_an_add_into_a_dict_item_another_name_holds_is_numpys(name) -> None:
    """NumPy's ``d["k"] += v`` adds into the array itself, which ``a = d["k"]`` or the
    name it was built from also hold: sum(x * x) here, where s2s once gave 0 (then a
    refusal); now that name is rebound to the sum too (held_dict_items.py)."""
    x = np.array([1.0, 2.0])
    assert getattr(F, name)(x.copy()) == 5.0  # (NumPy, run as written)
    value, grad = s2s.value_and_grad(getattr(F, name))(x)
    np.testing.assert_allclose(value, 5.0, rtol=1e-12)
    np.testing.assert_allclose(grad, 2.0 * x, rtol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", SHARED_ITEMS)
def test_an_add_into_a_shared_dict_item_under_every_transform(name, dtype) -> None:
    """NumPy's function is sum(x * x) (JAX's twin gives 0: its `+=` makes a new
    array, so it is no oracle here): gradient 2x, Hessian 2I, over calls 1, 3, 10,
    size 0 and 1 too; the result never shares memory with the argument."""
    f = getattr(F, name)
    t = tol(dtype)
    g, jit_g = s2s.grad(f), s2s.jit(s2s.grad(f))
    for call in (1, 3, 10):
        for x in (np.array([0.3, -0.7, 1.2]) * (1 + 0.1 * call), np.zeros(0), np.array([0.4])):
            x = x.astype(dtype)
            for got in (g(x), jit_g(x), s2s.jit(s2s.grad(f), backend="jax")(x)):
                np.testing.assert_allclose(got, 2.0 * x, **t)
                assert not np.shares_memory(got, x)
    x = np.array([0.3, -0.7, 1.2], dtype)
    np.testing.assert_allclose(s2s.jvp(f, (x,), (x[::-1],))[1], 2.0 * x @ x[::-1], **t)
    np.testing.assert_allclose(s2s.hessian(f)(x), 2.0 * np.eye(3), **t)
    batch = np.stack([x, 0.5 * x])
    np.testing.assert_allclose(s2s.vmap(s2s.grad(f))(batch), 2.0 * batch, **t)


@pytest.mark.slow
def test_an_add_into_a_dict_item_of_its_own_runs() -> None:
    x = np.array([1.0, -2.0, 0.5])
    value, grad = s2s.value_and_grad(F.dict_item_of_its_own)(x)
    np.testing.assert_allclose(value, F.dict_item_of_its_own(x), rtol=1e-12)
    np.testing.assert_allclose(grad, 8.0 * x, rtol=1e-12)  # (d/dx 2 * sum(2x * x))


@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
def test_det_of_a_singular_matrix_has_jaxs_gradient() -> None:
    """The derivative of det at a singular matrix raised NumPy's LinAlgError (then a
    located refusal, internal12); since sound12 it is JAX's adjugate, on both backends."""
    import jax

    x = np.array([0.3, -0.7])
    expected = np.asarray(jax.grad(jax_twin(F).det_of_rank_one)(x))
    for transform in (s2s.grad, lambda f: s2s.jit(s2s.grad(f)),
                      lambda f: s2s.jit(s2s.grad(f), backend="jax")):
        np.testing.assert_allclose(np.asarray(transform(F.det_of_rank_one)(x)), expected,
                                   atol=1e-12)


def test_every_parse_while_transforming_holds_s2s_lock(monkeypatch) -> None:
    """CPython 3.11 counts the AST constructor's depth in state all threads share: a
    parse on the caller's thread while the background specializer parses raises
    ``SystemError: AST constructor recursion depth mismatch`` (seen once in this probe,
    making ``s2s.jit(s2s.grad(f), backend="jax")``).  s2s parses under one lock
    (s2s/syntax.py), but two reads of a string literal did not: libcst's
    ``evaluated_value`` of a dict key (frontend/dicts.py, kwdicts.py)."""
    import ast

    from s2s import syntax

    unlocked, parse = [], ast.parse

    def checked(*args, **kwargs):
        if not syntax._LOCK._is_owned():
            unlocked.append(args[0])
        return parse(*args, **kwargs)

    monkeypatch.setattr(ast, "parse", checked)
    x = np.array([0.3, -0.7, 1.2])
    s2s.grad(F.counter_in_dict)(x)  # (`state["step"]` in a loop: dicts.py's key)
    s2s.grad(F.verlet_chain)(x)  # (np.roll(q, -1)'s gradient rolls by 1: elementwise.py)
    s2s.grad(F.spread_then_keyed)(x, {"a": x})  # ({**p, "b": ...}: kwdicts.py)
    assert not unlocked, unlocked
