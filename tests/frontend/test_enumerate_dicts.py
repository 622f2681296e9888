"""``for i, (k, v) in enumerate(d.items())`` (``sorted(...)``, ``.keys()``,
``.values()``, a start, in a comprehension too): the loop over a dict's keys that
``for k, v in d.items()`` is, with ``i`` its counter; ``list(d.values())`` and
``list(d.items())`` of a dict argument, walked or indexed (issue 23; all were refused as
"the array method `.items()` is not supported").  Oracle: JAX on the same source, float64
and float32; vmap against a Python loop."""

from __future__ import annotations

import numpy as np
import pytest
from support import HAVE_JAX, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

import enumerate_dict_fns as F  # noqa: E402

if HAVE_JAX:
    import jax

    J = jax_twin(F)

ON_DICTS = ["weighted_items", "sorted_items_from_one", "sorted_keys", "values_only",
            "in_a_comprehension", "stacked_list_of_values", "first_and_last_of_the_copy",
            "loop_over_the_copy", "pairs_of_the_copy"]
X = np.array([0.3, -0.7, 1.1])


def _close(got, want, dtype) -> None:
    tol = dict(rtol=1e-9, atol=1e-12) if dtype == np.float64 else dict(rtol=2e-4, atol=2e-5)
    got, want = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), **tol)


def _params(dtype, call):
    s = (-1.0) ** call * (1 + call / 10)
    # keys out of order, so insertion order and sorted order differ
    return {"c": (X * s).astype(dtype), "a": (2 * X - s).astype(dtype),
            "b": (X[::-1] * s).astype(dtype)}


def _in_order(jf, keys):
    """JAX's oracle for a dict argument iterated in the caller's key order: JAX
    rebuilds a dict argument with its keys sorted (so ``p.items()`` under ``jax.grad``
    walks them sorted), Python and s2s in the order the caller wrote them; so the dict
    is made again, in the caller's order, inside the function JAX traces."""
    return lambda vals: jf(dict(zip(keys, vals)))


def _as_dict(keys, leaves):
    return dict(zip(keys, leaves))


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ON_DICTS)
def test_dict_arguments_against_jax(name, dtype) -> None:
    f, jf = getattr(F, name), getattr(J, name)
    g = s2s.grad(f)
    for call in (1, 2, 3, 10):  # values change; the third call runs specialized code
        p = _params(dtype, call)
        h = _in_order(jf, list(p))
        _close(g(p), _as_dict(p, jax.grad(h)(list(p.values()))), dtype)
    p = _params(dtype, 1)
    keys, vals, h = list(p), list(p.values()), _in_order(jf, list(p))
    value, grad = jax.value_and_grad(h)(vals)
    _close(s2s.value_and_grad(f)(p), (value, _as_dict(keys, grad)), dtype)
    t = {k: v[::-1].copy() for k, v in p.items()}
    _close(s2s.jvp(f, (p,), (t,)), jax.jvp(h, (vals,), (list(t.values()),)), dtype)
    batch = {k: np.stack([v, -v]) for k, v in p.items()}
    want = [jax.grad(h)([v[e] for v in batch.values()]) for e in range(2)]
    _close(s2s.vmap(s2s.grad(f))(batch),
           _as_dict(keys, [np.stack([w[j] for w in want]) for j in range(len(keys))]), dtype)
    for backend in ("numpy", "jax"):  # (the caller's key order on JAX too)
        _close(s2s.jit(s2s.grad(f), backend=backend)(p), _as_dict(keys, jax.grad(h)(vals)),
               dtype)
    # another key order is another structure: new code, never the old
    q = {k: p[k] for k in ("b", "c", "a")}
    _close(g(q), _as_dict(q, jax.grad(_in_order(jf, list(q)))(list(q.values()))), dtype)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_dict_built_in_the_function(dtype) -> None:
    f, jf = F.built_in_the_function, J.built_in_the_function
    for call in (1, 2, 3):
        x = (X * call).astype(dtype)
        _close(s2s.grad(f)(x), jax.grad(jf)(x), dtype)
    x = X.astype(dtype)
    _close(s2s.hessian(f)(x), jax.hessian(jf)(x), dtype)
    _close(s2s.jacfwd(s2s.grad(f))(x), jax.hessian(jf)(x), dtype)
    xs = np.stack([x, 2 * x])
    _close(s2s.vmap(s2s.grad(f))(xs), jax.vmap(jax.grad(jf))(xs), dtype)


def test_sorting_values_is_refused_located() -> None:
    with pytest.raises(s2s.errors.UnsupportedSyntaxError) as info:
        s2s.grad(F.zipped_keys_unsupported)({"a": X})
    text = str(info.value)
    assert "sorted() over a dict's values" in text and "enumerate_dict_fns.py" in text
    assert "sorted(p.values())" in text and "<s2s" not in text
