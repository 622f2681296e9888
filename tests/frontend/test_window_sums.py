"""Issue 23: a sliding window read whole inside the loop that fills it
(window_sums_fns.py): ``sum(buf) / len(buf)`` of a ``collections.deque(maxlen=3)``,
``np.stack(buf)`` of one whose ``maxlen`` is a parameter, ``np.stack(parts)`` of a list
whose front ``del parts[0]`` drops, a window of rows, the window built in a callee,
``list(buf)`` passed to a function of the user's (frontend/windows.py spells each whole
read as the window's slice, ``buf[buf_start:]``).

The sweep (``-m slow``) runs each through newcomer_harness.classify (grad at calls 1, 3
and 10 with changing values, value_and_grad, jvp, vmap of grad, hessian, jit of grad on
both backends, special inputs, the caller writing into every result) in float64 and
float32 against JAX on the same source.  The default tier checks grad against central
differences at three calls, 0-size and size-1 inputs, ``maxlen`` passed by position and
by keyword, and that the window handed to a function of the user's stays refused at its
line."""

from __future__ import annotations

import newcomer_harness as H  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
import window_sums_fns as F
from support import HAVE_JAX

import s2s

X5 = np.array([0.3, -0.7, 0.45, 1.2, 0.8])
M42 = np.array([[0.3, -0.7], [0.45, 1.2], [0.8, -0.2], [0.1, 0.5]])
CASES = {
    "deque_mean_window": ((X5,), {"zeros": np.zeros(5)}),
    "deque_default_maxlen": ((X5,), {"zeros": np.zeros(5)}),
    "list_window_np_mean": ((X5,), {"zeros": np.zeros(5)}),
    "rows_window": ((M42,), {"zeros": np.zeros((4, 2))}),
    "window_in_callee": ((X5,), {"zeros": np.zeros(5)}),
    "window_listed_to_callee": ((X5,), {"zeros": np.zeros(5)}),
}
PROBE = H.Probe(F, CASES, H.CONSTRUCT_STAGES, tol64=(1e-6, 1e-8), warm=("g", "jit"))


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", list(CASES))
def test_every_transform_against_jax(name, dtype) -> None:
    label, verdicts = H.classify(PROBE, name, H.twin(F), dtype)
    assert label == "ok", verdicts


@pytest.mark.parametrize("name", ["deque_mean_window", "list_window_np_mean",
                                  "rows_window", "window_in_callee"])
def test_grad_against_central_differences(name) -> None:
    f = getattr(F, name)
    g = s2s.grad(f)
    x0 = CASES[name][0][0]
    for c in (1, 3, 10):
        x = x0 * (1.0 + 0.07 * (c - 1) * (-1) ** c)
        got = g(x)
        np.testing.assert_allclose(got, H.fd_grad(f, (x,), 1e-6), rtol=1e-6, atol=1e-8,
                                   err_msg=f"{name} call {c}")
        got[...] = np.nan  # (the caller writes into the result: the next call's is new)
    for n in (1, 0):  # (size-1: the window never full; 0-size: the loop never runs)
        x = x0[:n]
        np.testing.assert_allclose(g(x), H.fd_grad(f, (x,), 1e-6) if n else np.zeros_like(
            x), rtol=1e-6, atol=1e-8, err_msg=f"{name} size {n}")


def test_maxlen_by_position_and_keyword() -> None:
    """``deque(maxlen=m)`` of a parameter: each call's ``m`` (1, 2, 4: a window of one,
    of two, never full), passed by position and by keyword, in float32 too."""
    f = F.deque_default_maxlen
    g = s2s.grad(f)
    for m in (1, 4, 2):
        want = H.fd_grad(lambda x: f(x, m), (X5,), 1e-6)
        np.testing.assert_allclose(g(X5, m), want, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(g(X5, m=m), want, rtol=1e-6, atol=1e-8)
        got = g(X5.astype(np.float32), m)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-4)


@pytest.mark.parametrize("name, line, words", [
    ("refused_window_passed", "acc = acc + _total(buf)", "used as a value"),
    ("refused_list_window_passed", "del parts[0]", "parts"),
])
def test_window_handed_out_is_refused_at_its_line(name, line, words) -> None:
    with pytest.raises(s2s.TransformError) as err:
        s2s.grad(getattr(F, name))(X5)
    text = str(err.value)
    assert "window_sums_fns.py" in text and line in text and words in text, text
    assert "<s2s" not in text
