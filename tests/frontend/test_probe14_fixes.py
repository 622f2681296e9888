"""Issue 23, probe 14 (tests/frontend/newcomer_probe14_fns.py): forms s2s failed on or
refused where JAX or Python runs them, made to run (tests/frontend/probe14_fix_fns.py).

- A loop over ``zip(LAYERS.items(), (1.0, 0.5))`` of a module dict was an internal
  TypeError (``'dict_items' object is not subscriptable``: the loop indexed
  ``LAYERS.items()[0]``), and ``for name, (w, b) in LAYERS.items():`` was refused
  ("loop targets must be names"); a module dict whose values are tuples of arrays of
  different shapes was an internal ValueError (``np.ndim`` of the ragged tuple).  Now
  frontend/module_dicts.py unrolls zips (and ``enumerate`` of zips) of module dict walks
  with walks known when the code is generated, and each copy unpacks a value its target
  unpacks (``w, b = LAYERS["first"]``).
- ``carry, ys = init, []`` then ``ys.append(y)`` was refused ("`ys.append` needs a list
  this function built itself"), and ``params, offset = {}, 0`` then ``params[name] =
  ...`` ("`params` may share memory with an argument"): a tuple literal assigned to
  distinct names, none of which its elements read, is assigned one name after the
  other (unpacking.split_literal), each as its own statement binds.
- ``np.eye(n, dtype=bool)`` (and ``np.tri``, ``np.identity``) was refused ("got an
  unexpected keyword argument 'dtype'"): the constructors take ``dtype=``.
- ``if kind == "a": return ...`` / ``if kind == "b": return ...`` then a last ``raise``
  was refused ("`raise` is kept only as the whole body of an `if` with no `else`"):
  once the returns are hoisted the raise is the chain's ``else``, which
  frontend/raise_branches.py rewrites as a check (desugar.function_body runs it again
  after hoisting).
- ``items.sort(key=lambda kv: kv[0])`` / ``parts.reverse()`` of a list the function
  built was refused ("an expression statement is evaluated only for its side
  effect"): the name is bound to ``sorted(items, key=...)`` / ``list(reversed(parts))``
  (frontend/list_edits.py), refused, located, where another name refers to the list.
- ``cfg = cfg or {"scale": 1.5}`` of a ``None`` default, then ``cfg.get(...)``, was
  refused ("the array method `.get()` is not supported": the ``or_`` primitive's value):
  a name ``or`` a container literal is ``cfg if cfg else {...}``, Python's value.
- ``np.hamming(M)`` had no rule ("has no derivative rule in s2s yet"): the window
  functions ``hamming``, ``hanning``, ``blackman``, ``bartlett``, ``kaiser`` are
  constants of the length (non-differentiable constructor primitives).
- ``parts = np.array_split(x, 2)`` walked by ``enumerate`` in a generator was refused
  ("a tuple, list or dict argument can only be indexed with a constant key here"): a
  split whose sections are known now (an int, a tuple or list of indices) is a list of
  that many parts (frontend/calls.py), which loops and comprehensions unroll.
- vmap (and vmap of grad) of ``np.concatenate([[0.0], q, [0.0]])`` was an internal
  ValueError ("all the input arrays must have same number of dimensions"): the constant
  list ``[0.0]`` counted rank 0 when repeated along the batch (primitives/batching.py's
  batched_items), one unit axis too many.

Each against JAX on the same source (float64 and float32) or central differences, at
changing values and after the module's dict changes."""

from __future__ import annotations

import numpy as np
import probe14_fix_fns as F
import pytest
from newcomer_harness import fd_grad
from support import HAVE_JAX

import s2s

X2 = np.array([0.3, -0.7])
X4 = np.array([0.3, -0.7, 0.45, 1.2])

MODULE_DICT_LOOPS = ["zip_items_nested", "zip_items_indexed", "zip_keys_values",
                     "zip_two_module_dicts", "enumerate_zip_items", "items_unpacked_value",
                     "items_value_indexed", "items_unpacked_continue"]


def _calls(f, xs, tol=(1e-6, 1e-8)):
    g = s2s.grad(f)
    for x in xs:
        np.testing.assert_allclose(g(x), fd_grad(f, (x,), 1e-6), *tol)


@pytest.mark.parametrize("name", MODULE_DICT_LOOPS)
def test_module_dict_loops_against_central_differences(name) -> None:
    """grad of each loop form at three values (one object), against central
    differences of the function as Python runs it."""
    _calls(getattr(F, name), [X2, X2 * -1.7, X2 * 0.1])


def test_module_dict_values_read_at_each_call(monkeypatch) -> None:
    """The values are read where the code runs: a value replaced in the module dict
    (same kinds) is seen by the next call of the same grad object; a value of another
    length raises Python's ValueError at the unpacking, as Python does."""
    g = s2s.grad(F.zip_items_nested)
    g(X2)
    w, b = F.LAYERS["second"]
    monkeypatch.setitem(F.LAYERS, "second", (w * -2.0, b + 1.0))
    np.testing.assert_allclose(g(X2), fd_grad(F.zip_items_nested, (X2,), 1e-6), 1e-6, 1e-8)
    monkeypatch.setitem(F.LAYERS, "second", (w, b, b))
    with pytest.raises(ValueError):
        F.zip_items_nested(X2)
    with pytest.raises(ValueError):
        g(X2)


def test_zip_with_a_runtime_sequence_is_located() -> None:
    """``zip(COEF.values(), x)`` of an array argument (an internal IndexError before):
    refused, located at the user's line."""
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(F.zip_values_with_array)(X2)
    assert "zipping the module dict `COEF`" in str(info.value)
    assert "probe14_fix_fns.py" in str(info.value)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", MODULE_DICT_LOOPS)
def test_module_dict_loops_against_jax(name, dtype) -> None:
    """grad, jvp, vmap of grad, hessian and jit of grad (both backends) against JAX on
    the same source."""
    _against_jax(name, dtype, X2)


def _against_jax(name, dtype, x):
    import jax
    from support import jax_twin

    J = jax_twin(F)
    f, fj = getattr(F, name), getattr(J, name)
    tol = (2e-3, 2e-4) if dtype == np.float32 else (1e-7, 1e-9)
    x = x.astype(dtype)
    batch = np.stack([x, x * dtype(-0.8), x * dtype(1.3)])
    t = np.cos(np.arange(x.size) + 1.0).reshape(x.shape).astype(dtype)
    pairs = [(s2s.grad(f)(x), jax.grad(fj)(x)),
             (s2s.value_and_grad(f)(x)[0], jax.value_and_grad(fj)(x)[0]),
             (s2s.jvp(f, (x,), (t,))[1], jax.jvp(fj, (x,), (t,))[1]),
             (s2s.vmap(s2s.grad(f))(batch), jax.vmap(jax.grad(fj))(batch)),
             (s2s.hessian(f)(x), jax.hessian(fj)(x))]
    for backend in ("numpy", "jax"):
        jit = s2s.jit(s2s.grad(f), backend=backend)
        for c in (1.0, 0.7, -1.3):
            pairs.append((jit(x * dtype(c)), jax.grad(fj)(x * dtype(c))))
    for ours, theirs in pairs:
        np.testing.assert_allclose(ours, theirs, *tol)
        assert np.asarray(ours).dtype == np.asarray(theirs).dtype


TUPLE_STARTS = ["tuple_literal_list_start", "scan_helper_tuple_start",
                "tuple_literal_reads_its_targets"]


@pytest.mark.parametrize("name", TUPLE_STARTS)
def test_tuple_literal_starts_against_central_differences(name) -> None:
    """grad at three values (one object) against central differences; the statement
    whose right side reads its own targets keeps Python's order (``a, b = b * a, a``)."""
    x = np.array([0.3, -0.7, 0.45, 1.2])
    _calls(getattr(F, name), [x, x * -1.3, x * 0.2])


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", TUPLE_STARTS)
def test_tuple_literal_starts_against_jax(name, dtype) -> None:
    """value_and_grad, jvp, vmap of grad, hessian and jit of grad (both backends)
    against JAX on the same source."""
    _against_jax(name, dtype, np.array([0.3, -0.7, 0.45, 1.2]))


M42 = np.array([[0.1, 0.3], [2.2, -0.4], [0.3, 1.9], [2.5, 2.1]])


def test_eye_dtype_keyword() -> None:
    """A boolean ``np.eye`` mask in ``np.where`` and float32 constructors of the
    input's dtype: grad against central differences at three values, vmap of grad
    against a loop of grads, float32 gradients stay float32."""
    _calls(F.eye_bool_mask, [M42, M42 * 1.4, M42[:3]])
    _calls(F.eye_dtype_of_input, [M42[:3, :], M42[1:, :] * -0.6])
    batch = np.stack([M42, M42 * 0.5])
    got = s2s.vmap(s2s.grad(F.eye_bool_mask))(batch)
    np.testing.assert_allclose(got, np.stack([s2s.grad(F.eye_bool_mask)(b) for b in batch]),
                               1e-12, 1e-12)
    for f in (F.eye_bool_mask, F.eye_dtype_of_input):
        assert s2s.grad(f)(M42.astype(np.float32)).dtype == np.float32


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", ["eye_bool_mask", "eye_dtype_of_input"])
def test_eye_dtype_against_jax(name, dtype) -> None:
    _against_jax(name, dtype, M42)


def test_returns_then_raise() -> None:
    """Each static kind against central differences; an unknown kind raises the
    user's ValueError; value tests: each return where its test holds, the raise
    where none does; vmap of grad fires when one example reaches the raise and
    matches a loop of grads when none does."""
    _calls(F.kernel_by_name, [X4, X4 * -2.0])
    _calls(F.two_kernels, [X4, X4 * 0.3])
    with pytest.raises(ValueError, match="unknown kernel 'cauchy'"):
        s2s.grad(F.unknown_kernel)(X4)
    f = F.returns_by_value_then_raise
    _calls(f, [X4, X4 * 0.3, X4 * 2.0])
    with pytest.raises(ValueError, match="too small"):
        s2s.grad(f)(X4 * 0.01)
    batch = np.stack([X4, X4 * 0.3])
    np.testing.assert_allclose(s2s.vmap(s2s.grad(f))(batch),
                               np.stack([s2s.grad(f)(b) for b in batch]), 1e-12, 1e-12)
    with pytest.raises(ValueError, match="too small"):
        s2s.vmap(s2s.grad(f))(np.stack([X4, X4 * 0.01]))


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_returns_then_raise_against_jax(dtype) -> None:
    _against_jax("two_kernels", dtype, X4)


def test_list_sort_and_reverse() -> None:
    """Each against central differences at three values; a list another name refers
    to is refused at the user's line (Python would change both)."""
    for f in (F.list_sort_by_key, F.list_sort_reverse_ints, F.list_reverse_of_values):
        _calls(f, [X4, X4 * -1.4, X4 * 0.2])
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(F.list_sort_seen_by_another_name)(X4)
    assert "the name `other` refers to it too" in str(info.value)
    assert "items.sort(key=lambda kv: kv[0])" in str(info.value)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", ["list_sort_by_key", "list_reverse_of_values"])
def test_list_sort_against_jax(name, dtype) -> None:
    _against_jax(name, dtype, X4)


def test_config_or_default() -> None:
    """The None default takes the literal (grad against central differences at three
    values); a dict of other keys passed is refused at the user's line (its keys
    differ from the literal's on the other path); a number ``or`` a number is as
    before."""
    _calls(F.config_or_default, [X4, X4 * -1.4, X4 * 0.2])
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(F.config_or_default)(X4, {"act": "relu"})
    assert 'cfg = cfg or {"act": "softplus", "scale": 1.5}' in str(info.value)
    _calls(F.scalar_or_default, [X4, X4 * 2.0])


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_config_or_default_against_jax(dtype) -> None:
    _against_jax("config_or_default", dtype, X4)


X6 = np.array([0.3, -0.7, 0.45, 1.2, -0.1, 0.8])


def test_window_functions() -> None:
    """Windows of a fixed width and of the input's length (5 and 6: the window
    changes with the shape between calls) against central differences."""
    _calls(F.windowed_frames, [X6, X6 * -1.2, np.append(X6, 0.4)])
    _calls(F.window_zoo, [X6, X6[:5] * 0.7, X6 * 2.0])


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", ["windowed_frames", "window_zoo"])
def test_window_functions_against_jax(name, dtype) -> None:
    _against_jax(name, dtype, X6)


@pytest.mark.parametrize("name,x", [("array_split_parts", X6[:5]),
                                    ("split_at_indices_loop", X6[:5]),
                                    ("split_sections_list", M42)])
def test_split_parts_loop(name, x) -> None:
    """grad at three values (lengths 5 and 6 for the uneven array_split) against
    central differences; vmap of grad against a loop of grads."""
    f = getattr(F, name)
    xs = [x, x * -1.3, np.append(x, 0.7)] if x.ndim == 1 else [x, x * -1.3]
    _calls(f, xs)
    batch = np.stack([x, x * 0.5])
    np.testing.assert_allclose(s2s.vmap(s2s.grad(f))(batch),
                               np.stack([s2s.grad(f)(b) for b in batch]), 1e-12, 1e-12)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", ["array_split_parts", "split_at_indices_loop"])
def test_split_parts_against_jax(name, dtype) -> None:
    _against_jax(name, dtype, X6[:5])


@pytest.mark.parametrize("name,x", [("pad_by_list_literals", X6[:5]),
                                    ("stack_and_rows_of_literals", M42[:3])])
def test_constant_lists_joined_under_vmap(name, x) -> None:
    """vmap and vmap of grad against loops of the function and of grad (three
    examples), grad against central differences (JAX's ``jnp.concatenate`` refuses a
    list item: no JAX oracle)."""
    f = getattr(F, name)
    batch = np.stack([x, x * 0.5, x * -1.2])
    np.testing.assert_allclose(s2s.vmap(f)(batch), np.stack([f(b) for b in batch]),
                               1e-12, 1e-12)
    np.testing.assert_allclose(s2s.vmap(s2s.grad(f))(batch),
                               np.stack([s2s.grad(f)(b) for b in batch]), 1e-12, 1e-12)
    _calls(f, [x, x * -0.7])
