"""Issue 23's second leftovers (docs/python-subset.md):

1. a dict argument's keys as values: ``tuple(p)``, ``list(p)``, ``sorted(p)`` (and
   ``reverse=True``), ``tuple(p.keys())``, ``list(p.keys())``, ``[k for k in p]``,
   ``len(p)``, ``k in p``, ``for k in p`` (``tuple(p)`` was refused as "`tuple` is a
   class"): the literal of this call's keys, in the caller's order;
2. ``[a, b] * x`` where ``x`` is a differentiated (or vmapped) argument, or computed
   from one: NumPy's product (it was refused); ``[x] * n`` of an int ``n`` still is;
3. on the JAX backend, a dict that a lowered ``if`` (``lax.cond``) or loop
   (``fori_loop``, ``scan``, ``while_loop``) binds keeps the function's key order (it
   came back sorted);
4. messages about dicts whose structures differ name the real keys (one said ``()``
   for a dict argument's), located at the user's line;
5. dicts merged and copied (``{**p, "w": w}``, ``p | q``, ``dict(p, w=w)``,
   ``d.update(p)``, ``d = dict(p); d["k"] = v``: ``p | {...}`` had a zero gradient on
   main, silently; ``e = p.copy(); e["w"] = v`` raised NumPy's IndexError),
   ``tuple(p.values())``, ``sorted(p.items(), reverse=True)``, a comprehension's
   ``if`` on a dict's key (``if k != "b"``, ``k not in SKIP``: decided per call; it
   was refused as reading run-time values), ``dict(zip(...))``,
   ``divmod``, ``tuple(x.shape)``, a slice of a tuple literal indexed; ``len`` of a
   container argument under vmap (main read the batch size: silently wrong);
   ``a, b, c = p.values()``, ``next(iter(p.values()))``, ``max(p)``, ``(*x.shape,
   2)``, ``y.reshape(-1, *y.shape[1:])``, ``zip(*pairs)``, ``dict.fromkeys`` (all
   refused on main); ``out[k] = v`` in a loop over a dict's keys (refused on main).

Every expected value comes from JAX on the same source (``jax_twin``), float64 and
float32; a dict argument is rebuilt in the caller's order inside the function JAX
traces (JAX sorts a dict argument's keys; Python and s2s keep the caller's)."""

from __future__ import annotations

import idiom_leftover2_fns as F  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)

X = np.array([0.3, -0.7, 1.1])
DTYPES = [np.float64, np.float32]


def close(got, want, dtype, numpy_dtype=None) -> None:
    """``got`` equals ``want`` to ``dtype``'s precision, in its dtypes (``numpy_dtype``:
    the dtype NumPy computes the source in, where JAX's differs: a float32 array times
    a list holding a Python float is float64 in NumPy, float32 in JAX)."""
    tol = dict(rtol=1e-9, atol=1e-12) if dtype == np.float64 else dict(rtol=5e-4, atol=5e-5)
    got, want = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w), (np.shape(g), np.shape(w))
        expected = numpy_dtype or np.asarray(w).dtype
        assert np.asarray(g).dtype == expected, (np.asarray(g).dtype, expected)
        np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(w, np.float64), **tol)


def in_order(jf, keys, *before):
    """JAX's function of the dict's values, the dict made again in the caller's order
    inside the function JAX traces (``before``: positional arguments ahead of it)."""
    return lambda *args: jf(*args[:len(before)], dict(zip(keys, args[len(before)])))


def located(err: str) -> None:
    assert f'File "{F.__file__}", line ' in err and "<s2s:" not in err, err
    assert "Instead:" in err, err


# ---- the default tier: every item once, against central differences ------------------


def _moved(a, d, step):
    """``a + step * d`` leaf by leaf, a dict keeping its key order (jax's tree_map
    would sort it, and these functions read the order)."""
    if isinstance(a, dict):
        return {key: a[key] + step * d[key] for key in a}
    return a + step * d


def central(f, args, k, v, eps=1e-6):
    """The derivative of ``f`` along ``v`` in its argument ``k``."""
    lo, hi = list(args), list(args)
    lo[k], hi[k] = _moved(args[k], v, -eps), _moved(args[k], v, eps)
    return (f(*hi) - f(*lo)) / (2 * eps)


@pytest.mark.slow
def test_each_item_against_central_differences() -> None:
    """The sweeps below (JAX's oracle, float32 too) run under ``-m slow``; by default
    each item once: the gradient's projection on a direction against central
    differences of the function NumPy runs, at two key orders for a dict argument
    (the gradient in the caller's order).  (The JAX backend's lowered ``if``: the
    messages' last case, by default too.)"""
    p = {"c": X, "a": 2 * X - 1, "b": np.cos(X)}
    q = {"b": p["b"], "c": p["c"], "a": p["a"]}
    cases = [(F.tuple_of_keys, (p,), 0), (F.tuple_of_keys, (q,), 0),
             (F.list_times_argument, (X, 0.7, -1.3), 0),
             (F.union_with_a_literal, (X, {"w": X, "a": X - 1}), 0),
             (F.spread_and_override, (X, {"w": X, "a": X - 1}), 1)]
    for f, args, k in cases:
        v = {key: np.cos(3 * a) + 0.5 for key, a in args[k].items()} if isinstance(
            args[k], dict) else np.cos(3 * args[k]) + 0.5
        grad = s2s.grad(f, argnums=k)(*args)
        if isinstance(args[k], dict):
            assert list(grad) == list(args[k]), (f.__name__, list(grad))
            got = sum(np.vdot(grad[key], v[key]) for key in v)
        else:
            got = np.vdot(grad, v)
        np.testing.assert_allclose(got, central(f, args, k, v), rtol=1e-6, atol=1e-8,
                                   err_msg=f.__name__)
    xs = [np.stack([X, -X, 2 * X]), np.stack([np.cos(X)] * 3)]  # (a batch of 3)
    np.testing.assert_allclose(  # (vmap of len(xs) read the batch size on main)
        s2s.vmap(F.len_of_a_list_argument)(xs),
        [F.len_of_a_list_argument([xs[0][e], xs[1][e]]) for e in range(3)], rtol=1e-12)


# ---- 1. a dict argument's keys, as values -----------------------------------------

KEYS = ["tuple_of_keys", "list_of_keys_indexed", "sorted_keys_value",
        "sorted_keys_reversed", "keys_of_the_view", "comprehension_of_keys",
        "loop_and_tests", "keys_in_a_loop_header", "unpacked_views"]


def _params(dtype, call, order=("c", "a", "b")):
    s = (-1.0) ** call * (1 + call / 10)
    values = {"c": X * s, "a": 2 * X - s, "b": X[::-1] * s}
    return {k: values[k].astype(dtype) for k in order}  # (sorted order is another)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", KEYS)
def test_keys_of_a_dict_argument(name, dtype) -> None:
    """grad at calls 1, 2, 3 and 10 and in another key order (another signature);
    value_and_grad, jvp, vmap of the gradient, and jit of the gradient and of the
    function on both backends, against JAX with the dict in the caller's order."""
    f, jf = getattr(F, name), getattr(J, name)
    g = s2s.grad(f)
    for call, order in ((1, "cab"), (2, "cab"), (3, "cab"), (10, "cab"), (1, "bca")):
        p = _params(dtype, call, tuple(order))
        keys, vals = list(p), list(p.values())
        h = in_order(jf, keys)
        got = g(p)
        assert list(got) == keys
        close(got, dict(zip(keys, jax.grad(h)(vals))), dtype)
    p = _params(dtype, 1)
    keys, vals, h = list(p), list(p.values()), in_order(jf, list(p))
    value, grad = jax.value_and_grad(h)(vals)
    close(s2s.value_and_grad(f)(p), (value, dict(zip(keys, grad))), dtype)
    t = {k: np.cos(v) for k, v in p.items()}
    close(s2s.jvp(f, (p,), (t,)), jax.jvp(h, (vals,), (list(t.values()),)), dtype)
    batch = {k: np.stack([v, -2 * v]) for k, v in p.items()}
    close(s2s.vmap(s2s.grad(f))(batch),
          dict(zip(keys, jax.vmap(jax.grad(h))(list(batch.values())))), dtype)
    close(s2s.vmap(f)(batch), jax.vmap(h)(list(batch.values())), dtype)
    for backend in ("numpy", "jax"):
        close(s2s.jit(s2s.grad(f), backend=backend)(p), dict(zip(keys, jax.grad(h)(vals))),
              dtype)
        close(s2s.jit(f, backend=backend)(p), h(vals), dtype)


def test_keys_refusals_are_located() -> None:
    """``tuple(x)`` of an array and ``sorted(t)`` of a tuple of arrays (the values
    sorted in Python) are refused at the user's line, saying what to write."""
    for fn, arg, words in ((F.tuple_of_array, X, "tuple() of an array"),
                           (F.sorted_values, (X, X), "sorted() (or max(), min()) of a list")):
        with pytest.raises(s2s.TransformError) as info:
            s2s.grad(fn)(arg)
        assert words in str(info.value), str(info.value)
        located(str(info.value))


# ---- 2. a list times an array argument ----------------------------------------------

PRODUCTS = ["list_times_argument", "argument_times_tuple", "computed_times_list"]


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", PRODUCTS)
def test_list_times_an_array_argument(name, dtype) -> None:
    """``[a, b, 1.0] * x`` of a differentiated ``x`` (JAX refuses the spelling: its
    oracle is the same function with ``np.asarray`` of the list): grad in ``x`` and in
    all three, jvp, vmap over ``x`` and jit of the gradient on both backends."""
    f, jf = getattr(F, name), getattr(J, name + "_ref")
    x = X.astype(dtype)
    a, b = dtype(0.7), dtype(-1.3)
    for k in (1, 2, 3):  # (the third call runs the specialized code)
        close(s2s.grad(f)(x * k, a, b), jax.grad(jf)(x * k, a, b), dtype)
    close(s2s.grad(f, argnums=(0, 1, 2))(x, a, b), jax.grad(jf, argnums=(0, 1, 2))(x, a, b),
          dtype)
    as_numpy = np.asarray(f(x, a, b)).dtype  # (float64 where the list holds a 1.0)
    close(s2s.jvp(f, (x, a, b), (np.cos(x), dtype(1.0), dtype(0.5))),
          jax.jvp(jf, (x, a, b), (np.cos(x), dtype(1.0), dtype(0.5))), dtype, as_numpy)
    batch = np.stack([x, 2 * x])
    close(s2s.vmap(f, in_axes=(0, None, None))(batch, a, b),
          jax.vmap(jf, in_axes=(0, None, None))(batch, a, b), dtype, as_numpy)
    for backend in ("numpy", "jax"):
        close(s2s.jit(s2s.grad(f), backend=backend)(x, a, b), jax.grad(jf)(x, a, b), dtype)


def test_list_times_what_may_be_an_int_is_refused() -> None:
    """Where the call may pass a Python int (an argument no transform makes an array:
    ``grad`` in ``a`` only), ``[a, b] * x`` would be Python's repetition: refused,
    located, as ``[x * a] * n`` of an int ``n`` is."""
    cases = [(s2s.grad(F.list_times_argument, argnums=1), (X, 0.7, 1.3)),
             (s2s.grad(F.repeated_by_count), (X, 0.7, 3)),
             (s2s.vmap(F.repeated_by_count, in_axes=(0, None, None)),
              (np.stack([X, X]), 0.7, 3))]
    for fn, args in cases:
        with pytest.raises(s2s.TransformError) as info:
            fn(*args)
        err = str(info.value)
        assert "repeated a number of times known only when the function runs" in err, err
        located(err)


# ---- 3. dicts a lowered `if` or loop binds, on the JAX backend ----------------------

ORDERED = [("dict_through_if", (X,)), ("dict_through_if", (-X,)),
           ("dict_through_loop", (X, 3)), ("dict_through_while", (X,)),
           ("dict_in_a_tuple_through_if", (X,))]


def _keys(tree):
    if isinstance(tree, dict):
        return [list(tree)] + [k for v in tree.values() for k in _keys(v)]
    if isinstance(tree, (tuple, list)):
        return [k for v in tree for k in _keys(v)]
    return []


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name, args", ORDERED)
def test_dicts_keep_their_order_through_lax(name, args, dtype) -> None:
    """``s2s.jit(f, backend="jax")`` of a function whose dict a traced ``if`` or loop
    binds (``n`` traced too): the dict comes back in the order Python gives (it came
    back sorted), its values JAX's on the same source."""
    f, jf = getattr(F, name), getattr(J, name)
    args = tuple(a.astype(dtype) if isinstance(a, np.ndarray) else a for a in args)
    jitted = s2s.jit(f, backend="jax")
    for k in (1, 2):
        got = jitted(*args)
        assert _keys(got) == _keys(f(*args)), (_keys(got), _keys(f(*args)))
        close(got, jf(*args), dtype)
    if name == "dict_through_loop":  # (reverse mode: a static trip count, as JAX's)
        g = s2s.jit(s2s.grad(F.loss_of_a_dict_through_loop), backend="jax",
                    static_argnums=1)
        close(g(*args), jax.grad(J.loss_of_a_dict_through_loop)(*args), dtype)


# ---- 4. messages about dicts whose structures differ name the keys ------------------

MESSAGES = [
    (lambda: s2s.jvp(F.returns_other_keys, (X,), (X,)),
     "this `if` returns `{'w': *, 'b': *}` on one path and `{'w': *}` on the other"),
    (lambda: s2s.vjp(F.returns_other_keys, X)[1]({"w": X, "b": X}),
     "this `if` returns `{'w': *, 'b': *}` on one path and `{'w': *}` on the other"),
    (lambda: s2s.vmap(F.returns_other_keys)(np.stack([X, -X])),
     "this `if` returns `{'w': *, 'b': *}` on one path"),
    (lambda: s2s.grad(F.binds_an_argument_or_a_literal)(X, {"w": X, "a": X}),
     "binds `d` to `{'w': *, 'a': *}` on one path and `{'w': *}` on the other"),
    (lambda: s2s.grad(F.loop_adds_a_key)(X, {"w": X, "a": X}),
     "`d` changes structure inside the loop: `{'w': *}` before an iteration, "
     "`{'w': *, 'a': *}` after it"),
    (lambda: s2s.grad(F.empty_dict_on_one_path)(X),
     "on one path ('w') than on the other (no keys)"),
    (lambda: s2s.grad(F.reads_a_missing_key)({"a": X}),
     "the dict has no key 'b' in this call (its keys: 'a')"),
    (lambda: s2s.grad(F.key_chosen_by_a_value)(X, {"w": X, "a": X}),
     "can only be indexed with a constant key here"),
    (lambda: s2s.grad(F.key_rebound_in_a_loop)(X, {"w": X, "a": X}),
     "can only be indexed with a constant key here"),
    (lambda: s2s.jit(F.returns_other_keys, backend="jax")(X),
     "one path {'b': float64[3], 'w': float64[3]}, the other {'w': float64[3]}"),
]


@pytest.mark.every_case  # (all of them by default: no JAX compile but one)
@pytest.mark.parametrize("case", range(len(MESSAGES)))
def test_structure_messages_name_the_keys(case) -> None:
    """Each refusal names the keys each side has (main said ``()`` for a dict
    argument's, and jvp/vjp of a function returning other keys on two paths raised
    StopIteration/IndexError, jacfwd returned the first path's keys only), located
    at the user's line (the JAX backend's at the user's ``if``, not the lowered
    code's)."""
    run, words = MESSAGES[case]
    with pytest.raises(s2s.TransformError) as info:
        run()
    err = str(info.value)
    assert words in err, err
    assert "()" not in err.split("\n")[0], err
    located(err)


# ---- 5. dicts merged and copied; everyday idioms ------------------------------------

MERGES = ["spread_and_override", "union_with_a_literal", "literal_union_argument",
          "dict_with_keywords", "copy_then_write", "update_by_argument",
          "tuple_of_values_and_sorted_items", "copy_method_then_write", "filtered_by_key",
          "view_idioms", "written_by_the_loop_key", "dict_of_items"]


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", MERGES)
def test_dicts_merged_and_copied(name, dtype) -> None:
    """grad in both arguments (with and without a ``"w"`` in the argument, whose
    value the merge replaces), jvp, vmap and jit on both backends, against JAX with
    the dict in the caller's order."""
    f, jf = getattr(F, name), getattr(J, name)
    x = X.astype(dtype)
    for p in ({"w": 3 * x, "a": 2 * x - 1}, {"a": np.cos(x), "w": x[::-1].copy()},
              {"a": x + 0.5}):
        if name in ("union_with_a_literal", "copy_then_write",
                    "copy_method_then_write") or "w" in p:
            keys, vals = list(p), list(p.values())
            h = in_order(jf, keys, x)
            gx, gp = jax.grad(h, argnums=(0, 1))(x, vals)
            close(s2s.grad(f, argnums=(0, 1))(x, p), (gx, dict(zip(keys, gp))), dtype)
    p = {"w": 3 * x, "a": 2 * x - 1}
    keys, vals, h = list(p), list(p.values()), in_order(jf, list(p), x)
    t = {k: np.sin(v) for k, v in p.items()}
    close(s2s.jvp(f, (x, p), (x, t)), jax.jvp(h, (x, vals), (x, list(t.values()))), dtype)
    batch = np.stack([x, -2 * x])
    close(s2s.vmap(f, in_axes=(0, None))(batch, p),
          jax.vmap(h, in_axes=(0, None))(batch, vals), dtype)
    for backend in ("numpy", "jax"):
        close(s2s.jit(s2s.grad(f), backend=backend)(x, p), jax.grad(h)(x, vals), dtype)
        close(s2s.jit(f, backend=backend)(x, p), h(x, vals), dtype)


IDIOMS = ["dict_of_zip", "divmod_and_shape", "reversed_tuple_literal",
          "star_shapes_and_columns"]


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", IDIOMS)
def test_everyday_idioms(name, dtype) -> None:
    """``dict(zip(names, values))``, ``dict([("u", x), ...])``, ``divmod`` (of arrays
    and of a shape), ``tuple(x.shape)``, ``t[::-1][0]`` of a tuple literal (all
    refused on main): grad, jvp, vmap and jit on both backends against JAX."""
    f, jf = getattr(F, name), getattr(J, name)
    x = X.astype(dtype)
    for k in (1, 2, 3):
        close(s2s.grad(f)(x * k), jax.grad(jf)(x * k), dtype)
    close(s2s.jvp(f, (x,), (np.cos(x),)), jax.jvp(jf, (x,), (np.cos(x),)), dtype)
    batch = np.stack([x, -2 * x])
    close(s2s.vmap(f)(batch), jax.vmap(jf)(batch), dtype)
    for backend in ("numpy", "jax"):
        close(s2s.jit(s2s.grad(f), backend=backend)(x), jax.grad(jf)(x), dtype)
