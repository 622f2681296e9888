"""Issue 23: a dict written by keys from a constant walked beside an array
(keyed_zips_fns.py): ``acc[k] += v ** 2`` for ``k, v in zip("abab", x)`` into a
``collections.defaultdict``, ``enumerate`` of a constant string, a plain dict keyed
from a tuple of names, a constant beside two arrays, and the same in a callee called
twice (frontend/keyed_zips.py unrolls each over its constant's items).

The sweep (``-m slow``) runs each through newcomer_harness.classify (grad at calls 1, 3
and 10 with changing values, value_and_grad, jvp, vmap of grad, hessian, jit of grad on
both backends, special inputs, the caller writing into every result) in float64 and
float32 against JAX on the same source.  The default tier checks grad against central
differences at three calls and for an array longer than the constant (``zip`` cuts it),
float32, and the two refusals: an array shorter than the constant (Python's ``zip``
would stop early and leave the dict other keys) raises naming the user's line, and keys
computed from the array's values stay refused at their line."""

from __future__ import annotations

import keyed_zips_fns as F
import newcomer_harness as H  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX

import s2s

X4 = np.array([0.3, -0.7, 0.45, 1.2])
CASES = {
    "zip_string_keys": ((X4,), {"zeros": np.zeros(4)}),
    "enumerate_string_keys": ((X4,), {"zeros": np.zeros(4)}),
    "zip_tuple_keys_plain_dict": ((X4,), {"zeros": np.zeros(4)}),
    "zip_two_arrays": ((X4,), {"zeros": np.zeros(4)}),
    "keyed_in_callee": ((X4,), {"zeros": np.zeros(4)}),
}
PROBE = H.Probe(F, CASES, H.CONSTRUCT_STAGES, tol64=(1e-6, 1e-8), warm=("g", "jit"))


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", list(CASES))
def test_every_transform_against_jax(name, dtype) -> None:
    label, verdicts = H.classify(PROBE, name, H.twin(F), dtype)
    assert label == "ok", verdicts


@pytest.mark.parametrize("name", ["zip_string_keys", "zip_two_arrays", "keyed_in_callee"])
def test_grad_against_central_differences(name) -> None:
    f = getattr(F, name)
    g = s2s.grad(f)
    for c in (1, 3, 10):
        x = X4 * (1.0 + 0.07 * (c - 1) * (-1) ** c)
        got = g(x)
        np.testing.assert_allclose(got, H.fd_grad(f, (x,), 1e-6), rtol=1e-6, atol=1e-8,
                                   err_msg=f"{name} call {c}")
        got[...] = np.nan  # (the caller writes into the result: the next call's is new)
    longer = np.append(X4, [0.9, -0.4])  # (zip stops at the constant's end)
    np.testing.assert_allclose(g(longer), H.fd_grad(f, (longer,), 1e-6), rtol=1e-6,
                               atol=1e-8, err_msg=f"{name} longer")
    got = g(X4.astype(np.float32))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, H.fd_grad(f, (X4,), 1e-6), rtol=2e-3, atol=2e-4)


def test_shorter_array_raises_at_the_users_line() -> None:
    """``x`` of 3 items beside ``"abab"``: Python's loop would stop after three keys,
    a dict of other keys than the code made holds; s2s raises, naming the loop's line
    (the code it made reads four items), and a 4-item call after it runs again."""
    g = s2s.grad(F.zip_string_keys)
    with pytest.raises(ValueError) as err:
        g(X4[:3])
    text = str(err.value)
    assert "keyed_zips_fns.py, line 15" in text and 'zip("abab", x)' in text, text
    np.testing.assert_allclose(g(X4), H.fd_grad(F.zip_string_keys, (X4,), 1e-6),
                               rtol=1e-6, atol=1e-8)


def test_what_zip_walks_is_pythons() -> None:
    """``zip("ab", s)`` walks ``s``'s items as Python does: a dict's keys (``{1: 2.0, 0:
    3.0}``: 1 then 0, not ``s[0]``, ``s[1]``), an array's, a longer tuple's first two;
    called directly and in a callee (whose derivative code does not run the length
    check: ``list(s)`` read by position there)."""
    for s in ({1: 2.0, 0: 3.0}, np.array([2.0, 3.0]), (4.0, 5.0, 6.0)):
        for f in (F.walked_argument_in_callee, F._pairs):
            want = H.fd_grad(lambda x: f(x, s), (X4,), 1e-6)
            np.testing.assert_allclose(s2s.grad(f)(X4, s), want, rtol=1e-6, atol=1e-8,
                                       err_msg=f"{f.__name__} {s!r}")


def test_keys_from_values_refused_at_their_line() -> None:
    with pytest.raises(s2s.TransformError) as err:
        s2s.grad(F.refused_keys_from_values)(X4)
    text = str(err.value)
    assert "keyed_zips_fns.py" in text and "acc[k] += v" in text and "known only when" \
        in text, text
    assert "<s2s" not in text
