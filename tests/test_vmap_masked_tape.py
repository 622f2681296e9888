"""vmap of a gradient through a loop whose exit depends on the batched value.

Under vmap such a loop runs until the last example leaves it; its gradient's tape
then holds entries that are junk for the examples that had left, and the backward
``for _ in range(n_iter)`` runs ``np.max(n_iter)`` steps, each example its last
``n_iter`` (the tape's top is the junk).  An ``if`` on a batched value runs both
branches, pushing and popping for every example.  Oracle: a Python loop of
``jax.grad`` (or of the function itself) over the examples, in float64.
"""

from __future__ import annotations

import re
import sys

import numpy as np
import pytest

import corpus_fns
import s2s
from support import HAVE_JAX, jax, jax_twin

needs_jax = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

TOL = {"rtol": 1e-7, "atol": 1e-9}

# examples whose loops run different numbers of iterations, one of them none
BATCHES = {
    "while_shrinks": np.array([[0.1, 0.1, 0.1], [0.5, 0.9, 1.4], [1.0, 1.2, 1.5],
                               [0.4, 0.3, 0.5], [1.5, 1.5, 1.5]]),
    # every example skips the loop: the backward runs np.max(n_iter) = 0 steps
    "while_never_runs": np.array([[0.1, 0.05, 0.1], [0.02, 0.1, 0.15]]),
    "loop_continue": np.array([[0.5, -0.9, 1.4, 2.0], [0.1, 0.1, 0.1, -1.0],
                               [1.0, 1.2, 1.5, 0.3], [-1.0, -2.0, -3.0, -4.0]]),
    "while_break": np.array([[0.5, 0.9, 1.4], [0.1, 0.1, 0.1], [1.0, 1.2, 1.5],
                             [4.0, 4.0, 4.0], [2.9, 0.0, 0.0]]),
}
FN = {"while_never_runs": "while_shrinks"}


def _twin():
    jax.config.update("jax_enable_x64", True)
    return jax_twin(corpus_fns)


def _per_example(jfn, xs, *rest):
    return np.stack([np.asarray(jfn(x, *rest)) for x in xs])


@needs_jax
@pytest.mark.parametrize("inner", ["grad", "jacrev"])
@pytest.mark.parametrize("case", sorted(BATCHES))
def test_vmap_of_gradient_matches_per_example_jax(case, inner) -> None:
    name = FN.get(case, case)
    fn, jfn = getattr(corpus_fns, name), getattr(_twin(), name)
    xs = BATCHES[case]
    want = _per_example(getattr(jax, inner)(jfn), xs)
    batched = s2s.vmap(getattr(s2s, inner)(fn))
    for _ in range(2):  # the second call runs the code specialized to the shapes
        np.testing.assert_allclose(batched(xs), want, **TOL)


@needs_jax
@pytest.mark.parametrize("inner", ["grad", "jacrev"])
def test_for_loop_breaking_under_a_batched_test(inner) -> None:
    # loop_break's backward is `for _ in range(n_iter)`, n_iter counted by a masked
    # for loop (some examples break at different steps, one never does)
    xs = np.array([[0.5, 0.7, 0.9], [-1.0, -0.8, -0.5], [0.9, 1.0, 0.2],
                   [0.1, 0.2, 0.1]])
    want = _per_example(getattr(jax, inner)(_twin().loop_break), xs, 6)
    got = s2s.vmap(getattr(s2s, inner)(corpus_fns.loop_break), in_axes=(0, None))(xs, 6)
    np.testing.assert_allclose(got, want, **TOL)


def sum_doubling(x):
    y = x
    while np.sum(y) < 10.0:
        y = y * 2.0 + 0.1 * np.sin(y)
    return np.sum(y)


def hand_tape(x):
    ys = []
    y = x
    n = 0
    while np.sum(y) < 5.0:
        ys.append(y)
        y = y * 2.0 + 0.1
        n = n + 1
    total = 0.0
    for _ in range(n):
        v = ys.pop()
        total = total * 0.5 + np.sum(np.sin(v))
    return total


def count_loop(x, n):
    y = x
    for i in range(n):
        y = np.sin(y) * x[i % 3] + 0.5
    return np.sum(y)


@needs_jax
def test_loop_over_a_batched_count() -> None:
    # n is batched: every example runs max(n) steps, its own n of them; the backward
    # pops the tape in the steps that pushed each example's entries
    jfn = jax_twin(sys.modules[__name__]).count_loop
    xs = np.array([[0.1, 0.2, 0.3], [1.0, -0.5, 2.0], [0.3, 0.3, 0.3],
                   [0.7, 0.1, -0.2]])
    ns = np.array([3, 0, 5, 1])
    np.testing.assert_allclose(s2s.vmap(count_loop)(xs, ns),
                               [count_loop(x, n) for x, n in zip(xs, ns)], **TOL)
    want = np.stack([np.asarray(jax.grad(jfn)(x, int(n))) for x, n in zip(xs, ns)])
    got = s2s.vmap(s2s.grad(count_loop), in_axes=(0, 0))(xs, ns)
    np.testing.assert_allclose(got, want, **TOL)


def while_if(x):
    y = x
    while np.sum(y) < 6.0:
        if np.max(y) > 1.0:  # (an `if` on a batched value in a masked loop)
            y = y * 1.5 + np.sin(y)
        else:
            y = y * 2.0 + 0.3
    return np.sum(y**2)


def while_in_while(x):
    y = x
    total = 0.0
    while np.sum(y) < 8.0:
        z = y
        while np.max(z) < 2.0:
            z = z * 1.7 + 0.1
        total = total + np.sum(np.sin(z))
        y = y * 1.4 + 0.2
    return total + np.sum(y)


def while_continue(x):
    y = x
    k = 0.0
    while k < 5.0:
        k = k + 1.0
        if np.sum(y) > 3.0:
            continue
        y = y * 1.3 + 0.05 * k
    return np.sum(np.sin(y))


@needs_jax
@pytest.mark.parametrize("fn", [while_if, while_in_while, while_continue])
def test_branches_and_nested_loops_in_masked_loops(fn) -> None:
    jfn = getattr(jax_twin(sys.modules[__name__]), fn.__name__)
    xs = np.array([[0.1, 0.2, 0.3], [1.2, -0.5, 2.0], [0.3, 0.3, 0.3],
                   [0.7, 0.1, -0.2], [3.0, 3.0, 3.0], [0.9, 0.05, 0.4]])
    np.testing.assert_allclose(s2s.vmap(s2s.grad(fn))(xs),
                               _per_example(jax.grad(jfn), xs), **TOL)


LANES = np.array([[0.1, 0.2], [3.0, 3.0], [1.0, -0.5], [0.01, 0.02], [12.0, 0.0]])


@needs_jax
@pytest.mark.parametrize("fn", [sum_doubling, hand_tape])
def test_user_while_loops(fn) -> None:
    jfn = getattr(jax_twin(sys.modules[__name__]), fn.__name__)
    np.testing.assert_allclose(s2s.vmap(fn)(LANES), [fn(x) for x in LANES], **TOL)
    np.testing.assert_allclose(s2s.vmap(s2s.grad(fn))(LANES),
                               _per_example(jax.grad(jfn), LANES), **TOL)


def test_emitted_code_has_no_loop_over_examples() -> None:
    batched = s2s.vmap(s2s.grad(corpus_fns.while_shrinks))
    batched(BATCHES["while_shrinks"])
    text = s2s.source(batched)
    headers = [line.strip() for line in text.splitlines()
               if line.strip().startswith(("for ", "while "))]
    assert headers == ["while np.any(sum_y_greater_1):",
                       "for step in range(n_iter_max):"]
    lines = [line.strip() for line in text.splitlines()]
    assert "n_iter_max = np.max(n_iter)" in lines
    assert any(re.fullmatch(r"running = step >= n_iter_max - n_iter\s+#.*", line)
               for line in lines)
    assert "y_bar = np.where(running[:, None], y_bar_3, y_bar)" in lines


# ---- what stays refused: pops vmap cannot pair with the same example's push ------


def grow(x):
    ys = []
    y = x
    while np.sum(y) < 5.0:
        y = y * 2.0
        ys.append(y)
    return np.sum(y) + len(ys)


def pop_unconditionally(x):
    ys = []
    ys.append(x * 1.0)
    if np.sum(x) > 0:
        ys.append(x * 2.0)
    v = ys.pop()  # the examples that skipped the push pop x * 1.0
    return np.sum(v)


def same_list_both_paths(x):
    ys = []
    t = np.sum(x) > 0
    if t:
        ys.append(x * 2.0)
    else:
        ys.append(x * 3.0)
    if t:  # under vmap both pushes happen: this pop would take x * 3.0
        v = ys.pop()
    else:
        v = ys.pop() * 1.0
    return np.sum(v)


@pytest.mark.parametrize("fn, why", [
    (grow, "used other than by append and pop"),
    (pop_unconditionally, "a pop on other paths than its push"),
    (same_list_both_paths, "a pop on other paths than its push"),
])
def test_unpaired_pops_are_refused(fn, why) -> None:
    with pytest.raises(s2s.TransformError, match="cannot pair each pop") as err:
        s2s.vmap(fn)(LANES)
    assert why in str(err.value)
