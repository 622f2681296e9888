"""The functions people actually write (issue 23, thirteenth round; signatures13_fns.py),
each under grad, value_and_grad, jvp, vmap of grad, hessian and ``s2s.jit`` (NumPy and
JAX backends), float64 and float32, calls 1, 3 and 10 with changing values.

1. A dataclass registered with ``meta_fields=["n_layers", "name"]`` whose function
   reads ``range(p.n_layers)``: differentiated, it was refused ("`.n_layers` is not a
   field of this argument"); its meta fields are now read as they are (static data,
   no derivative), a gradient of it is an object of its class with the same meta
   fields, as ``jax.grad``'s is.
2. ``def f(x, *, p)`` called ``s2s.grad(f)(x, p=params)`` with a NamedTuple (or
   ``functools.partial(f, p=params)`` given to a transform): refused at ``p.a`` ("not
   an attribute of NumPy arrays"); the transform is made per call's keywords, of a
   wrapper taking them by position, so ``p`` is read as its fields.  Left out:
   Python's TypeError (a missing keyword-only argument).
5. ``np.random.RandomState(0)`` in the function and its ``.normal``, ``.uniform``,
   ``.randn(*x.shape)``, ``.choice``: refused at ``.randn`` ("the array method"), then
   at ``*x.shape`` ("spread with `*`"); the draws are constants to derivatives, made at
   each call (a module's RandomState advances per call), as ``default_rng``'s are.
3. ``params[name]`` with ``name`` a parameter with no default and no annotation,
   given a string: refused ("can only be indexed with a constant key"); the transform
   is made per call's string, as for ``name="w"`` or ``name: str``.  A key the dict
   lacks: Python's KeyError, located.  An int (``x[i]``) still reads at run time.
4. ``sum(args[2:])`` of a ``*args`` (and ``terms[::2]`` of a tuple the function
   built): refused ("can only be indexed with a constant key"); a constant slice of a
   tuple or list made of known items is now the tuple of the items it picks.
   ``sorted(gen(x))`` stays refused ("`sorted` is not supported") -- not done.
6. ``for op in ops[:k]`` called with a float ``k``: accepted (each call took the
   functions ``i < k`` selects); now Python's TypeError ("slice indices must be
   integers"), located at the slice (``k``'s type is part of the call's signature).
7. ``ACTS = [lambda z: np.tanh(z), lambda z: z * z, ...]`` on one line, called as
   ``ACTS[i](h)``: refused ("cannot tell which lambda on line ..."); the lambda is the
   one whose columns hold its code's instruction positions.

Expected values: JAX on the same source (``twin``: numpy bound to jax.numpy, the class
registered with ``jax.tree_util`` too), central differences of the function run as
written; never s2s.  The default tier runs items 1 and 6 against central differences
(no JAX; about 0.4 s and 0.25 s after the suite's first transform); the other items'
central-difference tests and the JAX matrix are ``-m slow``."""

from __future__ import annotations

import functools
import importlib.util
import re
import sys
from pathlib import Path

import numpy as np
import pytest
import signatures13_fns as F  # (pytest puts this directory on sys.path)
from support import HAVE_JAX, assert_close_to, compiled, fd_grad

import s2s

X = np.array([0.3, -0.7, 0.45, 1.2])
DTYPES = [np.float64, np.float32]
CALLS = (1, 3, 10)


def _x(call: int, dtype=np.float64) -> np.ndarray:
    return (X * (1 + 0.1 * call) - 0.05 * call).astype(dtype)


def _layers(call: int, dtype=np.float64, cls=None) -> object:
    x = _x(call, dtype)
    return (cls or F.Layers)(x[::-1] * 0.5, x * 0.1, 1 + call % 4,
                             "mlp" if call % 2 else "other")


def twin():
    """signatures13_fns's source with numpy bound to jax.numpy and the class
    registered with ``jax.tree_util`` (JAX's own pytree registry)."""
    path = Path(F.__file__)
    text = re.sub(r"^import numpy as np$", "import jax\nimport jax.numpy as np",
                  path.read_text(), flags=re.M)
    text = text.replace("s2s.tree_util.register_dataclass", "jax.tree_util.register_dataclass")
    text = re.sub(r"^import jax.numpy as np$", "import jax.numpy as np\nimport numpy as onp",
                  text, flags=re.M)
    text = re.sub(r"\bnp\.random\.", "onp.random.", text)  # (draws: NumPy's constants)
    spec = importlib.util.spec_from_loader("signatures13_fns_jax", loader=None)
    module = importlib.util.module_from_spec(spec)
    module.__file__ = str(path)
    sys.modules[spec.name] = module
    exec(compile(text, str(path), "exec"), module.__dict__)
    return module


def _close(got, expected, dtype) -> None:
    assert_close_to(got, expected, dtype, f64=1e-8, f32=5e-4, dtype_of="expected-arrays",
                    scale_atol=True)


# ---- central differences (the default tier: items 1 and 6) ---------------------------


def test_a_meta_field_of_a_differentiated_dataclass() -> None:
    """``range(p.n_layers)`` and ``p.name == "mlp"`` read from the differentiated
    object, its meta fields changing between calls: the gradient against central
    differences, an object of its class carrying the call's meta fields."""
    g = s2s.grad(F.deep)
    for call in (1, 2):
        p, x = _layers(call), _x(call)
        got = g(p, x)
        assert type(got) is F.Layers and (got.n_layers, got.name) == (p.n_layers, p.name)
        fw, fb = fd_grad(lambda w, b: F.deep(F.Layers(w, b, p.n_layers, p.name), x),
                         (p.w, p.b), 0)[0], fd_grad(
            lambda w, b: F.deep(F.Layers(w, b, p.n_layers, p.name), x), (p.w, p.b), 1)[0]
        np.testing.assert_allclose(got.w, fw, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(got.b, fb, rtol=1e-6, atol=1e-8)
        assert not np.shares_memory(got.w, p.w) and not np.shares_memory(got.b, p.b)


@pytest.mark.slow
def test_a_keyword_only_namedtuple() -> None:
    """``s2s.grad(f)(x, p=params)`` of ``def f(x, *, p, scale=1.0)``, the scale
    given at some calls: central differences; left out, Python's TypeError."""
    g = s2s.grad(F.keyword_only)
    for call in (1, 2, 3):
        x = _x(call)
        p = F.Params(x[::-1] * 0.5, x + 1.0)
        kw = {"scale": 0.5 * call} if call % 2 else {}
        got = g(x, p=p, **kw)
        np.testing.assert_allclose(got, fd_grad(lambda v: F.keyword_only(v, p=p, **kw),
                                                (x,), 0)[0], rtol=1e-6, atol=1e-8)
        assert not np.shares_memory(got, x)
    with pytest.raises(TypeError, match="'p'"):
        g(X)


def test_a_float_bound_of_a_slice_of_functions_is_pythons_type_error() -> None:
    """``OPS[:k]`` with k = 2.0 (and through a callee): Python's TypeError at the
    slice; an int (a bool too, as Python's slice takes it) runs, one transform."""
    g = s2s.grad(F.first_k)
    for call, k in ((1, 2), (3, 2.0), (10, -1), (4, np.float64(1.0)), (5, True)):
        x = _x(call)
        if isinstance(k, float):
            with pytest.raises(TypeError, match="slice indices must be integers") as info:
                g(x, k)
            message = str(info.value)
            assert "signatures13_fns.py" in message and "for op in OPS[:k]:" in message
            assert "Instead:" in message, message
            continue
        np.testing.assert_allclose(g(x, k), fd_grad(F.first_k, (x, k), 0)[0], rtol=1e-6,
                                   atol=1e-8)
    with pytest.raises(TypeError, match="slice indices must be integers"):
        s2s.grad(F.first_k_in_callee)(X)
    with pytest.raises(TypeError, match="slice indices must be integers"):
        F.first_k(X, 2.0)  # (Python's own)


def test_a_dict_read_by_a_plain_string_parameter_stays_refused() -> None:
    """``params[name]`` with ``name`` a parameter with no string default or annotation
    stays a located refusal: made per call (sigs13), every function indexing by such a
    parameter (``z[label]`` with an int label) went through the per-call wrapper, twice
    the cost of a call of a cross-entropy's gradient and no ``specialized_source``
    (merge, reverted).  ``x[i]`` with an int reads as before."""
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(F.by_name)({"a": X, "b": X}, X, "a")
    assert "signatures13_fns.py" in str(info.value) and "<s2s" not in str(info.value)
    gi = s2s.grad(F.index_by_int)
    assert "def index_by_int_grad(x, i):" in s2s.source(gi)
    for i in (0, 2, -1):
        np.testing.assert_allclose(gi(X, i), fd_grad(F.index_by_int, (X, i), 0)[0],
                                   rtol=1e-6, atol=1e-8)


@pytest.mark.slow
def test_lambdas_on_one_line() -> None:
    """``ACTS[i](h)`` and ``for act in ACTS[::-1]`` over three lambdas of one line:
    each is its own (central differences tell them apart)."""
    for fn in (F.acts, F.acts_looped):
        for call in (1, 3):
            x = _x(call)
            np.testing.assert_allclose(s2s.grad(fn)(x), fd_grad(fn, (x,), 0)[0],
                                       rtol=1e-6, atol=1e-8)


@pytest.mark.slow
def test_random_state_draws() -> None:
    """A RandomState made in the function: central differences of the function run as
    written (its draws the same at each run); a module's RandomState: each call's
    gradient is that call's draws, against a RandomState of the same seed drawing in
    step (a Python loop), the draws not shared between calls."""
    g = s2s.grad(F.state_draws)
    for call in (1, 3):
        x = _x(call)
        np.testing.assert_allclose(g(x), fd_grad(F.state_draws, (x,), 0)[0], rtol=1e-6,
                                   atol=1e-7)
    F.RS.seed(5)
    reference = np.random.RandomState(5)
    gm = s2s.grad(F.module_state_draws)
    for call in range(1, 4):
        x = _x(call)
        r, u = reference.randn(4), reference.uniform(size=4)
        np.testing.assert_allclose(gm(x), r + 2 * x * u, rtol=1e-12, atol=1e-12)


@pytest.mark.slow
def test_slices_of_star_args() -> None:
    """``sum(args[2:])`` in each argument (argnums), the count changing between calls;
    ``terms[::2]`` and ``terms[-1:0:-2]`` of a local tuple: central differences."""
    for call, rest in ((1, (1.5, -2.0, 0.25, 3.0)), (3, (0.5, 1.0, 2.0)), (10, (1.0, 2.0))):
        x = _x(call)
        for k in range(1 + len(rest)):
            got = s2s.grad(F.sum_tail, argnums=k)(x, *rest)
            np.testing.assert_allclose(got, fd_grad(F.sum_tail, (x, *rest), k)[0],
                                       rtol=1e-6, atol=1e-7, err_msg=f"{call} {k}")
        np.testing.assert_allclose(s2s.grad(F.every_other)(x),
                                   fd_grad(F.every_other, (x,), 0)[0], rtol=1e-6, atol=1e-7)


# ---- -m slow: against JAX on the same source -----------------------------------------


@pytest.fixture(scope="module")
def J():
    return twin()


@pytest.fixture(scope="module")
def jax_registered():
    """F.Layers registered with JAX too (``s2s.jit(..., backend="jax")`` hands the
    object to ``jax.jit``, which flattens it by JAX's registry)."""
    import jax

    try:
        jax.tree_util.register_dataclass(F.Layers, data_fields=["w", "b"],
                                         meta_fields=["n_layers", "name"])
    except ValueError:  # (registered already)
        pass


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_meta_fields_match_jax(dtype, J, jax_registered) -> None:
    import jax

    g, vg = s2s.grad(F.deep), s2s.value_and_grad(F.deep)
    jitted, on_jax = s2s.jit(s2s.grad(F.deep)), s2s.jit(s2s.grad(F.deep), backend="jax")
    for call in CALLS:
        x, p, q = _x(call, dtype), _layers(call, dtype), _layers(call, dtype, J.Layers)
        expected = compiled(jax.grad(J.deep))(q, x)
        for got in (g(p, x), jitted(p, x), on_jax(p, x)):
            assert type(got) is F.Layers and got.n_layers == p.n_layers, got
            _close((got.w, got.b), (expected.w, expected.b), dtype)
        value, grads = vg(p, x)
        e_value, e_grads = jax.value_and_grad(J.deep)(q, x)
        _close((value, grads.w, grads.b), (e_value, e_grads.w, e_grads.b), dtype)
        _close(s2s.grad(F.deep, argnums=1)(p, x), jax.grad(J.deep, argnums=1)(q, x), dtype)
        t = _layers(call + 1, dtype)
        t.n_layers, t.name = p.n_layers, p.name
        tq = J.Layers(t.w, t.b, p.n_layers, p.name)
        _close(s2s.jvp(F.deep, (p, x), (t, x[::-1].copy())),
               jax.jvp(J.deep, (q, x), (tq, x[::-1].copy())), dtype)
        batch = np.stack([x, 0.5 * x, x[::-1].copy()])
        _close(s2s.vmap(s2s.grad(F.deep_after), in_axes=(0, None))(batch, p),
               jax.vmap(jax.grad(J.deep_after), in_axes=(0, None))(batch, q), dtype)
        _close(s2s.hessian(F.deep_after)(x, p), jax.hessian(J.deep_after)(x, q), dtype)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_keyword_only_namedtuple_matches_jax(dtype, J) -> None:
    import jax

    g, vg, h = (s2s.grad(F.keyword_only), s2s.value_and_grad(F.keyword_only),
                s2s.hessian(F.keyword_only))
    jitted = s2s.jit(s2s.grad(F.keyword_only))
    on_jax = s2s.jit(s2s.grad(F.keyword_only), backend="jax")
    for call in CALLS:
        x = _x(call, dtype)
        p, q = F.Params(x[::-1] * 0.5, x + 1.0), J.Params(x[::-1] * 0.5, x + 1.0)
        expected = jax.grad(J.keyword_only)(x, p=q)
        for got in (g(x, p=p), jitted(x, p=p), on_jax(x, p=p)):
            _close(got, expected, dtype)
        _close(vg(x, p=p, scale=2.0), jax.value_and_grad(J.keyword_only)(x, p=q, scale=2.0),
               dtype)
        _close(h(x, p=p), jax.hessian(J.keyword_only)(x, p=q), dtype)
        ours = functools.partial(F.keyword_only, p=p)
        theirs = functools.partial(J.keyword_only, p=q)
        v = x[::-1].copy()
        _close(s2s.jvp(ours, (x,), (v,)), jax.jvp(theirs, (x,), (v,)), dtype)
        batch = np.stack([x, 0.5 * x, v])
        _close(s2s.vmap(s2s.grad(ours))(batch), jax.vmap(jax.grad(theirs))(batch), dtype)
        _close(s2s.hessian(ours)(x), jax.hessian(theirs)(x), dtype)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", ["acts", "acts_looped", "first_k_in_range",
                                  "state_draws", "every_other"])
def test_one_argument_functions_match_jax(name, dtype, J) -> None:
    import jax

    ours, theirs = getattr(F, name), getattr(J, name)
    g, vg = s2s.grad(ours), s2s.value_and_grad(ours)
    jitted, on_jax = s2s.jit(s2s.grad(ours)), s2s.jit(s2s.grad(ours), backend="jax")
    for call in CALLS:
        x = _x(call, dtype)
        v = (x[::-1] * 0.5 + 0.25).astype(dtype)
        expected = compiled(jax.grad(theirs))(x)
        for got in (g(x), jitted(x), on_jax(x)):
            _close(got, expected, dtype)
        _close(vg(x), compiled(jax.value_and_grad(theirs))(x), dtype)
        _close(s2s.jvp(ours, (x,), (v,)),
               compiled(lambda x, v: jax.jvp(theirs, (x,), (v,)))(x, v), dtype)
        batch = np.stack([x, 0.5 * x, x[::-1].copy()])
        _close(s2s.vmap(g)(batch), compiled(jax.vmap(jax.grad(theirs)))(batch), dtype)
        _close(s2s.hessian(ours)(x), compiled(jax.hessian(theirs))(x), dtype)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_slices_of_star_args_match_jax(dtype, J) -> None:
    import jax

    for call, n in zip(CALLS, (4, 3, 5)):
        x = _x(call, dtype)
        rest = tuple(np.asarray(0.5 * (k + 1) - call * 0.1, dtype) for k in range(n))
        for k in (0, 1, n):
            _close(s2s.grad(F.sum_tail, argnums=k)(x, *rest),
                   jax.grad(J.sum_tail, argnums=k)(x, *rest), dtype)
        _close(s2s.value_and_grad(F.sum_tail)(x, *rest),
               jax.value_and_grad(J.sum_tail)(x, *rest), dtype)
        _close(s2s.jit(s2s.grad(F.sum_tail))(x, *rest), jax.grad(J.sum_tail)(x, *rest), dtype)
        _close(s2s.jit(s2s.grad(F.sum_tail), backend="jax")(x, *rest),
               jax.grad(J.sum_tail)(x, *rest), dtype)
        _close(s2s.hessian(F.sum_tail)(x, *rest), jax.hessian(J.sum_tail)(x, *rest), dtype)
        v = x[::-1].copy()
        _close(s2s.jvp(lambda y: F.sum_tail(y, *rest), (x,), (v,)),
               jax.jvp(lambda y: J.sum_tail(y, *rest), (x,), (v,)), dtype)
        batch = np.stack([x, 0.5 * x, v])
        axes = (0,) + (None,) * n
        _close(s2s.vmap(s2s.grad(F.sum_tail), in_axes=axes)(batch, *rest),
               jax.vmap(jax.grad(J.sum_tail), in_axes=axes)(batch, *rest), dtype)
