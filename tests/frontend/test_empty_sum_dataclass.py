"""``sum(gen)`` over a dict that is empty at some calls is Python's 0 (plus the
start), and a dataclass that is no registered pytree, with a string field at its
default, passed where it is not differentiated (``grad(f, argnums=1)(cfg, x)``, as
``jax.grad`` takes it: the function reads its fields).  Against JAX on the same
source (tests/frontend/empty_sum_fns.py), float64 and float32, at the 1st, 3rd and
10th call with the values (and the dict's keys, the dataclass's string) changing."""

from __future__ import annotations

import empty_sum_fns as F
import numpy as np
import pytest
from support import assert_close_to, jax_twin

import s2s

jax = pytest.importorskip("jax")
J = jax_twin(F)

DICTS = [{}, {}, {}, {"a": 1.5}, {"a": 1.5, "b": -2.0}, {}, {"b": 3.0}, {}, {"a": 0.5}, {}]
TRANSFORMS = {
    "grad": (lambda f: s2s.grad(f), lambda f: jax.grad(f)),
    "value_and_grad": (lambda f: s2s.value_and_grad(f), lambda f: jax.value_and_grad(f)),
    "jit_grad": (lambda f: s2s.jit(s2s.grad(f), backend="numpy"), lambda f: jax.grad(f)),
    "jit_jax_grad": (lambda f: s2s.jit(s2s.grad(f), backend="jax"), lambda f: jax.grad(f)),
    "vmap_grad": (lambda f: s2s.vmap(s2s.grad(f), in_axes=(0, None)),
                  lambda f: jax.vmap(jax.grad(f), in_axes=(0, None))),
}
WITH_DICT = ["sum_of_values", "sum_of_products", "sum_with_start", "sum_filtered"]


def _x(k, dtype, batched):
    x = (np.array([0.3, -1.2, 0.7]) * (1 + 0.2 * k)).astype(dtype)
    return np.stack([x, 2 * x]) if batched else x


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("tname", list(TRANSFORMS))
@pytest.mark.parametrize("fname", WITH_DICT)
def test_a_sum_over_a_dict_empty_at_some_calls(fname, tname, dtype) -> None:
    ours, theirs = TRANSFORMS[tname]
    t, jt = ours(getattr(F, fname)), theirs(getattr(J, fname))
    for k, d in enumerate(DICTS):
        if fname == "sum_of_values" and d:
            continue  # (adding the arrays makes the output a vector: no gradient)
        x = _x(k, dtype, tname.startswith("vmap"))
        d = {key: (v * np.ones(3)).astype(dtype) for key, v in d.items()}
        got = t(x, d)
        if k in (0, 2, 3, 5, 9):
            assert_close_to(got, jt(x, d), dtype, dtype_of="expected-arrays")


@pytest.mark.slow  # (the sweep above samples the default tier's case)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("fname", ["sum_of_module_empty", "sum_of_local_empty"])
def test_a_sum_over_an_empty_module_or_local_dict(fname, dtype) -> None:
    for make, jmake in (TRANSFORMS[n] for n in ("grad", "jit_grad", "vmap_grad")):
        if make is TRANSFORMS["vmap_grad"][0]:
            t, jt = s2s.vmap(s2s.grad(getattr(F, fname))), jax.vmap(jax.grad(getattr(J, fname)))
        else:
            t, jt = make(getattr(F, fname)), jmake(getattr(J, fname))
        for k in range(3):
            x = _x(k, dtype, make is TRANSFORMS["vmap_grad"][0])
            assert_close_to(t(x), jt(x), dtype, dtype_of="expected-arrays")


def test_a_sum_of_nothing_has_no_gradient_as_in_jax() -> None:
    """Every item filtered out and nothing else: Python's int 0, which JAX's grad
    refuses (an integer output); s2s raises the same TypeError."""
    with pytest.raises(TypeError, match="real-valued outputs"):
        jax.grad(lambda x, d: sum(np.sum(v * x) for v in d.values()))(np.ones(3), {})
    with pytest.raises(TypeError, match="real-valued outputs"):
        s2s.grad(F.sum_of_nothing)(np.ones(3), {"b": np.ones(3)})


CONFIGS = [("a", 1.0), ("a", 1.0), ("a", 1.0), ("b", 2.0), ("b", -1.0), ("a", 0.5),
           ("a", 0.5), ("b", 3.0), ("a", 1.0), ("a", 2.0)]
DC = {
    "grad": (lambda f: s2s.grad(f, argnums=1), lambda f: jax.grad(f, argnums=1)),
    "grad_tuple": (lambda f: s2s.grad(f, argnums=(1,)), lambda f: jax.grad(f, argnums=(1,))),
    "value_and_grad": (lambda f: s2s.value_and_grad(f, argnums=1),
                       lambda f: jax.value_and_grad(f, argnums=1)),
    "jit_grad": (lambda f: s2s.jit(s2s.grad(f, argnums=1), backend="numpy"),
                 lambda f: jax.grad(f, argnums=1)),
}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("tname", list(DC))
def test_a_dataclass_with_a_string_field_not_differentiated(tname, dtype) -> None:
    ours, theirs = DC[tname]
    t, jt = ours(F.weighted), theirs(J.weighted)
    for k, (name, scale) in enumerate(CONFIGS):
        w = (np.array([1.0, -0.5, 2.0]) * scale).astype(dtype)
        x = _x(k, dtype, False)
        cfg = F.Cfg(w) if name == "a" and k % 2 else F.Cfg(w, name)  # (the default too)
        got = t(cfg, x)
        if k in (0, 2, 3, 9):
            assert_close_to(got, jt(J.Cfg(w, name), x), dtype, dtype_of="expected-arrays")
        np.testing.assert_array_equal(cfg.w, w)


def test_a_dataclass_differentiated_is_refused_as_jax_refuses_it() -> None:
    cfg, x = F.Cfg(np.ones(3)), np.ones(3)
    with pytest.raises(TypeError, match="not a valid JAX type"):
        jax.grad(J.weighted)(J.Cfg(np.ones(3)), x)
    with pytest.raises(TypeError, match="not a valid JAX type"):
        s2s.grad(F.weighted)(cfg, x)
