"""Issue 23, containers17: ``history["loss"].append(loss)`` into a dict literal's list
(frontend/dict_appends.py), a callee's ``range(n_layers)`` of an int its call knows and
its ``spec["kind"] == "scale"`` of a dict its caller built (frontend/bound_params.py
``ints_bound``), and ``sorted(..., key=..., reverse=...)`` over items whose keys are
known when transforming (frontend/sorted_keys.py).

The default tier checks grad (and jvp) against central differences over calls with
changing values, and the located refusals; the slow tier checks grad, jvp, vmap of grad
and hessian against JAX on the same source (``newcomer_harness.twin``), float64 and
float32."""

from __future__ import annotations

import containers17_fns as F
import newcomer_harness as H  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX

import s2s
from s2s.errors import TransformError

X4 = np.array([0.3, -0.7, 0.45, 1.2])
RUNS = ("history_steps", "history_in_branch", "layers_callee", "small_callee",
        "sorted_items_reverse", "sorted_ties_stable", "specs_of_other_keys")


def _calls(name, check):
    """``check(x)`` at calls 1, 3 and 10 of one transform, the values changing."""
    for c in (1, 3, 10):
        check(X4 * (1.0 + 0.07 * c) - 0.02 * c, c)


def _grad_over_calls(f, label) -> None:
    """grad at calls 1, 3 and 10 with changing values against central differences; the
    caller writing into each gradient changes nothing the next call gives."""
    g = s2s.grad(f)

    def check(x, c):
        got = g(x)
        np.testing.assert_allclose(got, H.fd_grad(f, (x,), 1e-6), rtol=1e-6, atol=1e-8,
                                   err_msg=f"{label} call {c}")
        got[...] = np.nan  # (the caller's in-place use of its result)

    _calls(label, check)


def test_dict_of_lists_grad() -> None:
    """``log["seen"].append(...)`` into a dict literal's list (one append under a
    static `if`), read by index and `sum`."""
    _grad_over_calls(F.history_in_branch, "history_in_branch")


def test_callee_int_default_and_literal() -> None:
    """``range(n)`` of a callee's default int and of a literal int in another call: two
    copies of the callee, each with its own keys."""
    _grad_over_calls(F.small_callee, "small_callee")


def test_sorted_ties_keep_their_order() -> None:
    """``sorted(pairs, key=..., reverse=True)``: a stable sort (ties keep their order
    with reverse=True too), each item's derivative back where it came from."""
    _grad_over_calls(F.sorted_ties_stable, "sorted_ties_stable")


def test_tuple_of_dicts_of_other_keys_into_a_callee() -> None:
    """``for s in specs`` over dict literals of other keys, each passed to a callee that
    branches on ``spec["kind"]`` and reads the keys that kind has (the other branches'
    keys missing: Python never reads them)."""
    _grad_over_calls(F.specs_of_other_keys, "specs_of_other_keys")


def test_refusals_are_located() -> None:
    """An append into a list another name holds, a sort by array values: refused at the
    user's line, saying why."""
    for name, line, said in (
            ("history_aliased", 'history["loss"].append(np.sum(w))',
             "not only this dict's item"),
            ("sorted_by_values", "ordered = sorted(parts.items(), key=lambda kv: "
             "np.sum(kv[1]))", "values known only when the code runs"),
            # (not yet run: a loop over a module constant's dicts is unrolled after the
            # callee is lowered, so its `spec["kind"]` is not this item's string there)
            ("module_specs", 'return x + spec["b"]', "has no key 'b'")):
        with pytest.raises(TransformError) as info:
            s2s.grad(getattr(F, name))(X4)
        text = str(info.value)
        assert said in text and line in text and "containers17_fns.py" in text, text
        assert "<s2s" not in text


@pytest.mark.slow
@pytest.mark.parametrize("name", RUNS)
def test_grad_against_central_differences(name) -> None:
    _grad_over_calls(getattr(F, name), name)


@pytest.mark.slow
def test_jvp_of_callee_and_dict_lists() -> None:
    """jvp of the callee bound per int (a lambda calls it, as the probe's stages do) and
    of the dict of lists: the directional derivative central differences give."""
    v = np.array([1.0, -0.5, 0.25, 2.0])
    for f in (lambda x: F.layers_callee(x), F.history_steps):

        def check(x, c, f=f):
            _, t = s2s.jvp(f, (x,), (v,))
            np.testing.assert_allclose(t, H.fd_grad(f, (x,), 1e-6) @ v, rtol=1e-6,
                                       atol=1e-8, err_msg=f"call {c}")

        _calls("jvp", check)


@pytest.mark.slow
def test_dict_lists_emitted_as_lists() -> None:
    """The dict's lists are lists of their own in the emitted code, appended in place
    as written (no dict rebuilt per append)."""
    g = s2s.grad(F.history_steps)
    g(X4)
    assert "history_loss.append(loss)" in g.source and "history_w = []" in g.source


# ---- against JAX ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def jax_twin():
    pytest.importorskip("jax")
    import jax

    jax.config.update("jax_enable_x64", True)
    return H.twin(F)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", RUNS)
def test_against_jax(name, dtype, jax_twin) -> None:
    """grad (calls 1, 3, 10), jvp, vmap of grad and hessian against JAX on the same
    source, in float64 and float32."""
    import jax

    f, j = getattr(F, name), getattr(jax_twin, name)
    tol = dict(rtol=1e-9, atol=1e-11) if dtype == np.float64 else dict(rtol=2e-4, atol=1e-5)
    g = s2s.grad(f)
    for c in (1, 3, 10):
        x = (X4 * (1.0 + 0.07 * c) - 0.02 * c).astype(dtype)
        got, want = g(x), np.asarray(jax.grad(j)(x))
        np.testing.assert_allclose(got, want, **tol, err_msg=f"grad call {c}")
        assert got.dtype == want.dtype
    x = X4.astype(dtype)
    v = np.array([1.0, -0.5, 0.25, 2.0], dtype)
    _, t = s2s.jvp(lambda y: f(y), (x,), (v,))
    np.testing.assert_allclose(t, jax.jvp(j, (x,), (v,))[1], **tol, err_msg="jvp")
    xs = np.stack([x, x[::-1] * 0.5, -x]).astype(dtype)
    np.testing.assert_allclose(s2s.vmap(s2s.grad(lambda y: f(y)))(xs),
                               jax.vmap(jax.grad(j))(xs), **tol, err_msg="vmap of grad")
    np.testing.assert_allclose(s2s.hessian(lambda y: f(y))(x), jax.hessian(j)(x), **tol,
                               err_msg="hessian")
