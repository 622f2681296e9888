"""A dict's keys where a loop writes it by a key known per call (issue 23, toward the
twelfth newcomer probe's ``momentum_object_dict``), and a key an ``if`` chooses.

``seen[k] = v`` in ``for k, p in params.items():`` adds a key each iteration; the
loop's body is lowered once, and reads of ``seen`` decided from the literal before
the loop (``seen.get("a", 0.5)``, ``"a" in seen``, ``len(seen)``) held for the first
iteration only: wrong gradients on main.  They are decided per call now, where the
loop over the dict's keys is unrolled (frontend/loop_keys.py).  ``d.get(k)`` with
the loop's key was refused ("a key known only when the function runs"); it is ``d[k]
if k in d else default``, decided per call.  ``k = "a"`` / ``k = "b"`` on the two
paths of an ``if`` on an array was read as the first path's constant (the value and
gradient of ``d.get("a")`` where Python reads ``d.get("b")``): the ``if``'s joined
names are marked joined (frontend/statements.py)."""

from __future__ import annotations

import dict_keys19_fns as F
import newcomer_harness as H  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX

import s2s

X = np.array([0.3, -0.7, 0.45, 1.2])
RUNS = ("const_get_items_loop", "const_in_items_loop", "len_items_loop", "get_loop_key",
        "get_then_write", "momentum_local_dict", "chosen_key")


@pytest.mark.parametrize("name", ["const_get_items_loop", "len_items_loop", "chosen_key"])
def test_wrong_on_main_against_central_differences(name) -> None:
    """Three of the functions main gave wrong numbers for: grad at calls 1, 3 (the
    first argument's sign flipped: ``chosen_key``'s other path) against central
    differences; the value too."""
    fn = getattr(F, name)
    g, vg = s2s.grad(fn), s2s.value_and_grad(fn)
    for call, x in enumerate((X, 1.1 * X, -X), start=1):
        np.testing.assert_allclose(g(x), H.fd_grad(fn, (x,), 1e-6), rtol=1e-6, atol=1e-8,
                                   err_msg=f"call {call}")
        if call == 3:
            np.testing.assert_allclose(vg(x)[0], fn(x), rtol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("name", RUNS)
def test_grad_vmap_and_float32_against_central_differences(name) -> None:
    """grad at calls 1, 3 and 10 (values changing), vmap of grad, and grad in float32,
    against central differences; the argument is not written."""
    fn = getattr(F, name)
    g, vg = s2s.grad(fn), s2s.vmap(s2s.grad(fn))
    for call in range(1, 11):
        x = X * (1.0 + 0.07 * call * (-1) ** call)
        before = x.copy()
        got = g(x)
        if call in (1, 3, 10):
            np.testing.assert_allclose(got, H.fd_grad(fn, (x,), 1e-6), rtol=1e-6, atol=1e-8)
        assert np.array_equal(x, before)
    batch = np.stack([X, -0.8 * X])
    np.testing.assert_allclose(vg(batch), np.stack([H.fd_grad(fn, (b,), 1e-6)
                                                    for b in batch]), rtol=1e-6, atol=1e-8)
    got = s2s.grad(fn)(X.astype(np.float32))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, H.fd_grad(fn, (X,), 1e-6), rtol=2e-3, atol=2e-4)


@pytest.mark.parametrize("name, text", [
    ("copy_items_loop", 'c.get("a", 0.5)'),
    ("grown_in_an_outer_loop", "vel[k] = v"),  # (the write that changes its keys)
])
def test_what_is_still_refused_is_located(name, text) -> None:
    """A copy of the growing dict read by a constant key (wrong on main), and a dict
    grown in a loop nested in another that carries it (its structure changes from one
    outer iteration to the next): refused at the user's line."""
    with pytest.raises(s2s.TransformError) as err:
        s2s.grad(getattr(F, name))(X)
    assert err.value.loc is not None and text in err.value.loc.text, str(err.value)


@pytest.mark.slow
@pytest.mark.every_case
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", RUNS)
def test_against_jax(name, dtype) -> None:
    """Every stage the newcomer probes check, against JAX on the same source (central
    differences where JAX refuses: ``chosen_key``'s ``if`` on an array under vmap);
    ``chosen_key``'s jit of grad on the JAX backend is refused, located, as JAX's
    jit refuses the ``if``."""
    probe = H.Probe(F, {name: ((X,), {"zeros": np.zeros(4)})},
                    ("grad", "value_and_grad", "jvp", "vmap_grad", "hessian", "jit",
                     "jit_jax", "special", "vmap_special", "alias_all"))
    label, verdicts = H.classify(probe, name, H.twin(F), dtype)
    if name == "chosen_key":
        assert [k for k, v in verdicts.items() if v[0] != "ok"] == ["jit_jax"], verdicts
        assert label == "both refuse", verdicts
    else:
        assert label == "ok", verdicts
