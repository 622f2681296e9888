"""Round 7 of adversarial probes (docs/python-subset.md's recent idioms, the
specializer's guards): each test is a probe that found a wrong number or an error
raised from emitted code, and fails without its fix.  Oracles: JAX on the same source
(jax_twin), float64 and float32, or the function run example by example."""

from __future__ import annotations

import adversarial_round7_fns as F
import numpy as np
import pytest
from support import HAVE_JAX, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)

# x[0], x[1] and sum(x) of each change sign between them: each `if` takes both paths
X_POS = np.array([0.3, 0.5, 2.0])
X_NEG = np.array([-1.3, -0.5, 0.2])


def _central(f, x, eps=1e-6):
    return np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(x.size)])


def _located(err: s2s.TransformError) -> None:
    text = str(err)
    assert "adversarial_round7_fns.py" in text and "<s2s" not in text, text


# ---- a value whose rank depends on the path an `if` takes ----------------------------
# jacrev/jacfwd/hessian batch the function's code over a basis; that code was made for
# the ranks of the path the first call took, so a later call taking the other path
# reduced the wrong axes: jacrev(dict_rank_by_branch) gave [2.2, 3.4, 4.6] where JAX
# gives [1.4, 1.8, 2.2] (silently).  Then refused, located; now each path's code is
# made on the first call taking it (tests/frontend/test_rank_paths.py has the sweep).

BRANCH_RANKS = ["rank_by_branch", "dict_rank_by_branch", "tuple_rank_by_branch"]


def test_default_tier_jacrev_through_a_rank_changing_if() -> None:
    """The default tier's share (every case against JAX under -m slow): central
    differences as the oracle."""
    for name in ("dict_rank_by_branch",):
        f = getattr(F, name)
        jac = s2s.jacrev(f)
        for x in (X_NEG, X_POS):
            np.testing.assert_allclose(jac(x), _central(f, x), rtol=1e-6, atol=1e-8)


@pytest.mark.slow
@pytest.mark.parametrize("name", BRANCH_RANKS)
@pytest.mark.parametrize("first", [X_POS, X_NEG], ids=["pos_first", "neg_first"])
@pytest.mark.parametrize("transform", ["jacrev", "jacfwd"])
def test_a_jacobian_through_a_rank_changing_if_is_right(name, first, transform) -> None:
    f, fj = getattr(F, name), getattr(J, name)
    jac = getattr(s2s, transform)(f)
    for x in (first, X_NEG if first is X_POS else X_POS, first):
        np.testing.assert_allclose(jac(x), getattr(jax, transform)(fj)(x), rtol=1e-12)


@pytest.mark.parametrize("name", BRANCH_RANKS)
def test_vmap_over_a_rank_changing_if_is_refused_located(name) -> None:
    """With the test batched both paths run and np.where joins them: the ranks cannot
    be joined (it failed inside emitted code with NumPy's broadcast error)."""
    with pytest.raises(s2s.TransformError) as info:
        s2s.vmap(getattr(F, name))(np.stack([X_POS, X_NEG]))
    _located(info.value)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_same_rank_on_both_paths_still_runs(dtype) -> None:
    f, fj = F.same_rank_by_branch, J.same_rank_by_branch
    jac = s2s.jacrev(f)
    for x in (X_NEG, X_POS, X_NEG):
        x = x.astype(dtype)
        np.testing.assert_allclose(jac(x), jax.jacrev(fj)(x), rtol=1e-5)
    xs = np.stack([X_POS, X_NEG]).astype(dtype)
    np.testing.assert_allclose(s2s.vmap(s2s.grad(f))(xs),
                               [jax.grad(fj)(x) for x in xs], rtol=1e-5)


# ---- a traced integer used as a shape on the JAX backend ------------------------------
# jnp.ones(k) and x[:k] of a traced k raise JAX's TypeError/IndexError (not one of its
# ConcretizationTypeErrors): it left s2s as JAX's error, raised from a line of emitted
# code; now the TracedValueError every other traced value needing a Python value gets.


@pytest.mark.parametrize("name, quoted", [("ones_of_k", "np.ones(k)"), ("slice_k", "x[:k]")])
def test_a_traced_shape_on_the_jax_backend_is_a_traced_value_error(name, quoted) -> None:
    from s2s.backends import TracedValueError

    f = getattr(F, name)
    x = np.array([0.3, -0.5, 2.0])
    for jitted in (s2s.jit(s2s.grad(f), backend="jax"), s2s.jit(f, backend="jax")):
        with pytest.raises(TracedValueError) as info:
            jitted(x, 2)
        text = str(info.value)
        assert quoted in text and "static_argnums" in text, text
    static = s2s.jit(s2s.grad(f), backend="jax", static_argnums=1)
    np.testing.assert_allclose(static(x, 2), jax.grad(getattr(J, name))(x, 2), rtol=1e-12)


# ---- the specializer's common subexpressions and lists popped in place -----------------
# jvp of the gradient pops the cotangent list twice: `x_sq_bar = parts_bar[-1]`,
# `parts_bar.pop()`, `sin_x_bar = parts_bar[-1]`.  The specialized code (second call on)
# read the second as the first (one expression text, a common subexpression), so the
# Hessian weighted sin(x) as x ** 2's item: -5 sin(x) + 10 where it is -4 sin(x) + 10.


def test_a_popped_lists_reads_are_not_one_subexpression() -> None:
    f = F.list_grown_then_spliced
    h = s2s.hessian(f)
    for x in (X_POS, X_NEG, 0.5 * X_POS):  # (the 2nd call specializes, the 3rd reads it)
        np.testing.assert_allclose(h(x), np.diag(10.0 - 4.0 * np.sin(x)), rtol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_popped_lists_reads_against_jax(dtype) -> None:
    f, fj = F.list_grown_then_spliced, J.list_grown_then_spliced
    tol = 1e-12 if dtype == np.float64 else 1e-5
    h, g = s2s.hessian(f), s2s.grad(f)
    for k, x in enumerate((X_POS, X_NEG, 0.5 * X_POS, X_POS, X_NEG) * 2):
        x = x.astype(dtype)
        np.testing.assert_allclose(h(x), jax.hessian(fj)(x), rtol=tol)
        v = np.eye(3, dtype=dtype)[k % 3]
        np.testing.assert_allclose(s2s.jvp(g, (x,), (v,))[1],
                                   jax.jvp(jax.grad(fj), (x,), (v,))[1], rtol=tol)
