"""The specializer's last spellings (s2s/optimize/literals.py ``last_spellings``,
passes.py ``whole_views``, the e-graph's float64 seeds): on the programs they were
written for, the specialized gradient is the closed-form one (NumPy written out by
hand: an oracle s2s does not make) at the 1st, 3rd and 10th call, and with NaN, inf,
size-1 and size-0 axes it is the generic code's, element for element (NaN where it
is NaN; a zero's sign aside, which ``whole_views`` may flip).  Each program's
specialized code shows the spelling, so a test here fails where the rewrite is gone
or wrong.  The rows' own two sides are tests/test_optimizer_rules.py's."""

from __future__ import annotations

import numpy as np
import pytest

import s2s


def mixture(mu, x, logw):
    d = x[:, None] - mu[None, :]
    lp = logw - 0.5 * d**2
    m = np.max(lp, axis=1, keepdims=True)
    lse = m + np.log(np.sum(np.exp(lp - m), axis=1, keepdims=True))
    return -np.sum(lse)


def mixture_hand(mu, x, logw):
    d = x[:, None] - mu
    lp = logw - 0.5 * d**2
    r = np.exp(lp - lp.max(axis=1, keepdims=True))
    r /= r.sum(axis=1, keepdims=True)
    return -(r * d).sum(axis=0)


def smoothed(logits, labels):
    soft = 0.9 * labels + 0.1 / logits.shape[1]
    logp = logits - np.max(logits, axis=1, keepdims=True)
    logp = logp - np.log(np.exp(logp).sum(axis=1, keepdims=True))
    return -np.sum(soft * logp) / logits.shape[0]


def smoothed_hand(logits, labels):
    soft = 0.9 * labels + 0.1 / logits.shape[1]
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True) - soft) / logits.shape[0]


def gp_nll(ell, x, y):
    sq = (x[:, None] - x[None, :]) ** 2
    k = np.exp(-0.5 * sq / ell**2) + 0.1 * np.eye(x.shape[0])
    alpha = np.linalg.solve(k, y)
    return 0.5 * (y @ alpha) + 0.5 * np.linalg.slogdet(k)[1]


def gp_nll_hand(ell, x, y):
    sq = (x[:, None] - x) ** 2
    rbf = np.exp(-0.5 * sq / ell**2)
    kinv = np.linalg.inv(rbf + 0.1 * np.eye(x.shape[0]))
    alpha = kinv @ y
    return 0.5 * np.sum((kinv - np.outer(alpha, alpha)) * (rbf * sq / ell**3))


def _args(name: str, rng, n: int = 5) -> tuple:
    if name == "mixture":
        return rng.normal(size=3), rng.normal(size=n) * 2, np.log(np.full(3, 1 / 3))
    if name == "smoothed":
        return rng.normal(size=(n, 4)) * 2, np.eye(4)[rng.integers(0, 4, n)]  # (1/4: a power of two)
    x = np.sort(rng.uniform(0, 3, n))
    return np.float64(0.7), x, np.sin(x) + 0.1 * rng.normal(size=n)


PROGRAMS = {"mixture": (mixture, mixture_hand, ")[0]\n"),  # (whole_views)
            "smoothed": (smoothed, smoothed_hand, "cm0_225 * labels - 0.25 *"),
            "gp_nll": (gp_nll, gp_nll_hand, "k_bar - b_bar * k_solved[:, 5]\n")}


@pytest.mark.slow  # (each specializes through the e-graph: seconds; the rows' two sides
@pytest.mark.parametrize("name", sorted(PROGRAMS))  # run in the default tier)
def test_the_specialized_gradient_is_the_closed_form_one(name) -> None:
    fn, hand, spelled = PROGRAMS[name]
    g = s2s.grad(fn)
    rng = np.random.default_rng(5)
    args = _args(name, rng, 4)
    for call in range(1, 11):
        got = g(*args)
        if call in (1, 3, 10):
            np.testing.assert_allclose(got, hand(*args), rtol=1e-10, atol=1e-12)
    text = g.specialized_source
    assert spelled in text and "np.float64(1.0)" not in text, text
    # (the identity a module constant, read-only: literals.constant_arrays)
    assert name != "gp_nll" or "eye_4.flags.writeable = False" in text, text
    if name != "smoothed":  # (no view made by the index's adjoint: zeros + add gone)
        assert "np.zeros(" not in text.split("def ", 1)[1], text


@pytest.mark.slow
def test_special_values_and_sizes_are_the_generic_codes() -> None:
    """(smoothed's labels at inf differ from the generic code before these rewrites
    too: the zero-cotangent pass drops the max's backward, NaN only there.)"""
    rng = np.random.default_rng(6)
    for n in (1, 0, 4):
        args = list(_args("mixture", rng, n))
        if n:  # (NaN, inf and -inf among the points)
            args[1][rng.permutation(n)[:3]] = [np.nan, np.inf, -np.inf][:n]
        args[0][0] = -0.0
        specialized, generic = s2s.grad(mixture), s2s.grad(mixture)
        generic.specialize = False
        with np.errstate(all="ignore"):
            for _ in range(3):
                got, want = specialized(*args), generic(*args)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


@pytest.mark.slow
def test_non_finite_inputs_are_non_finite_where_the_generic_codes_are() -> None:
    """The zero-cotangent pass drops the max's backward, a cotangent zero for finite
    inputs: with inf or NaN in a row it is NaN, and the row's kept terms are already
    non-finite (g - sum(g) * softmax with an infinite sum), so the specialized
    gradient is non-finite at the generic code's positions and equal elsewhere
    (a label row [0, 0, 0, -inf]: [-inf, -inf, -inf, nan] against all NaN, JAX's)."""
    rng = np.random.default_rng(7)
    for trial in range(24):
        logits, labels = _args("smoothed", rng, 3)
        picked = logits if trial % 2 else labels
        where = rng.choice(picked.size, 1 + trial % 3, replace=False)
        picked.flat[where] = rng.choice([np.nan, np.inf, -np.inf], where.size)
        specialized, generic = s2s.grad(smoothed), s2s.grad(smoothed)
        generic.specialize = False
        with np.errstate(all="ignore"):
            for _ in range(3):
                got, want = specialized(logits, labels), generic(logits, labels)
        finite = np.isfinite(want)
        np.testing.assert_array_equal(np.isfinite(got), finite, err_msg=str(trial))
        np.testing.assert_allclose(got[finite], want[finite], rtol=1e-12, atol=1e-15)
    assert "winners" not in specialized.specialized_source  # (the pass ran)


@pytest.mark.slow
def test_a_float32_signature_keeps_its_numbers() -> None:
    """A 0-d float64 constant beside float32 would promote (a 0-d array is not a weak
    scalar): a signature with float32 arrays keeps Python numbers, and stays float32."""
    rng = np.random.default_rng(8)
    args = tuple(np.asarray(a, dtype=np.float32) for a in _args("mixture", rng))
    g = s2s.grad(mixture)
    for _ in range(3):
        got = g(*args)
    assert got.dtype == np.float32
    assert "np.array(" not in g.specialized_source, g.specialized_source
    np.testing.assert_allclose(got, mixture_hand(*(a.astype(np.float64) for a in args)),
                               rtol=2e-5, atol=1e-6)
