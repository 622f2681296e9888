"""A loss whose batch a module name holds, ``logistic_mean(w, XB, YB)``, specialized as
the same loss given the batch as arguments is (issue 27's mini-batch cell): the
guarded free arrays keep their shape level past the call of the user's function
(s2s/optimize/signature_facts.py), and the code's call of the helper emitted beside
it, which returns only arrays it made, counts as fresh (s2s/optimize/fresh.py), so
the call skips the walk for shared memory.  The batch is rebound to new arrays and
written in place between the 1st, 3rd and 10th calls, float64 and float32; each
result against a NumPy closed form (default tier) or ``jax.grad`` (slow)."""

from __future__ import annotations

import closure17_fns as F
import numpy as np
import pytest

import s2s
from s2s.optimize.fresh import returns_fresh

MX = MY = None  # the MLP's batch (this module's names)


def batch_mlp(w1, w2):
    h = np.tanh(MX @ w1)
    return 0.5 * np.mean(np.sum((h @ w2 - MY) ** 2, axis=1))


def mlp_closed(w1, w2, x, y):
    h = np.tanh(x @ w1)
    r = (h @ w2 - y) / x.shape[0]
    return x.T @ ((r @ w2.T) * (1.0 - h * h)), h.T @ r


def grad_closed(w, x, y):
    return x.T @ (-y / (1.0 + np.exp(y * (x @ w)))) / x.shape[0]


def _batch(n, dtype, seed):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(n, 5)).astype(dtype),
            rng.choice([-1.0, 1.0], n).astype(dtype))


def _steps(dtype):
    """(call number, how the batch changed): rebound before the 1st, 3rd and 10th
    calls, written in place before the others (the 2nd specializes)."""
    for i in range(1, 11):
        if i in (1, 3, 10):
            F.XB, F.YB = _batch(16, dtype, seed=i)
        else:
            rng = np.random.default_rng(100 + i)
            F.XB[...] = rng.normal(size=F.XB.shape)
            F.YB[::3] = -F.YB[::3]
        yield i


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_module_batch_rebound_and_written_in_place(dtype):
    tol = dict(rtol=1e-12, atol=1e-15) if dtype == np.float64 else dict(rtol=1e-5, atol=1e-6)
    g = s2s.grad(F.batch_loss)
    w = np.linspace(-1.0, 1.0, 5).astype(dtype)
    out = []
    for i in _steps(dtype):
        got = g(w)
        assert got.dtype == dtype, i
        want = grad_closed(w.astype(np.float64), F.XB.astype(np.float64),
                           F.YB.astype(np.float64))
        np.testing.assert_allclose(got, want, **tol, err_msg=f"call {i}")
        assert not np.shares_memory(got, F.XB) and not np.shares_memory(got, w)
        out.append(got)
        got[...] = np.nan  # (the caller writes into a result: later results keep theirs)
    assert len({id(a) for a in out}) == len(out)
    text = g.specialized_source
    assert text is not None
    # the batch's row count read as a number: the helper specialized, not as emitted
    assert "np.size(" not in text and "unbroadcast(" not in text, text
    assert returns_fresh(text, "batch_loss_grad"), text


@pytest.mark.parametrize("dtype", [pytest.param(np.float64, marks=pytest.mark.slow),
                                   np.float32])
def test_module_batch_of_two_gradients_each_its_own_array(dtype):
    """A tuple of gradients the code made (fresh: no walk for shared memory): each
    leaf its own array, written into by the caller, the next call's right."""
    global MX, MY
    tol = dict(rtol=1e-12, atol=1e-15) if dtype == np.float64 else dict(rtol=1e-4, atol=1e-6)
    g = s2s.grad(batch_mlp, argnums=(0, 1))
    rng = np.random.default_rng(4)
    w1, w2 = (rng.normal(size=(5, 6)) * 0.5).astype(dtype), rng.normal(size=(6, 3)).astype(dtype)
    for i in range(1, 11):
        if i in (1, 3, 10):
            MX, MY = rng.normal(size=(8, 5)).astype(dtype), rng.normal(size=(8, 3)).astype(dtype)
        else:
            MX[...] = rng.normal(size=MX.shape)
            MY[1] = -MY[1]
        got = g(w1, w2)
        want = mlp_closed(*(a.astype(np.float64) for a in (w1, w2, MX, MY)))
        for a, b in zip(got, want):
            assert a.dtype == dtype
            np.testing.assert_allclose(a, b, **tol, err_msg=f"call {i}")
        assert not np.shares_memory(got[0], got[1])
        assert not any(np.shares_memory(a, b) for a in got for b in (w1, w2, MX, MY))
        got[0][...], got[1][...] = np.nan, np.inf
    assert returns_fresh(g.specialized_source, "batch_mlp_grad")


def test_a_helper_beside_counts_as_fresh_only_when_it_returns_what_it_made():
    head = "import numpy as np\n\n\ndef h(x):\n    {}\n\n\ndef f(x, y):\n    {}\n"
    for helper, body, fresh in [
        ("return np.cos(x) * 2.0", "return h(x)", True),
        ("return np.cos(x) * 2.0", "z = h(y)\n    return (z, h(x))", True),
        ("return np.cos(x) * 2.0", "z = h(y)\n    return (z, z)", False),
        ("return x", "return h(x)", False),  # (its argument)
        ("return x.T", "return h(np.cos(x))", False),  # (a view of its argument)
        ("return h(x)", "return h(x)", False),  # (recursion: not known)
        ("return np.cos(x)", "h = np.asarray\n    return h(x)", False),  # (rebound)
        ("return (np.cos(x), np.sin(x))", "return h(x)", True),
        ("z = np.cos(x)\n    return (z, z)", "return h(x)", False),
    ]:
        assert returns_fresh(head.format(helper, body), "f") is fresh, (helper, body)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_module_batch_against_jax(dtype):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def jloss(w, x, y):
        return jnp.mean(jnp.log1p(jnp.exp(-y * (x @ w))))

    tol = dict(rtol=1e-12, atol=1e-15) if dtype == np.float64 else dict(rtol=1e-5, atol=1e-6)
    g = s2s.grad(F.batch_loss)
    w = np.random.default_rng(3).normal(size=5).astype(dtype)
    for i in _steps(dtype):
        got = g(w)
        want = np.asarray(jax.grad(jloss)(w, F.XB, F.YB))
        assert got.dtype == want.dtype == dtype
        np.testing.assert_allclose(got, want, **tol, err_msg=f"call {i}")
