"""A transform's outputs never share memory with arrays the user's module holds, also
where the array sits inside an object (``CFG.W``), a NamedTuple (``P.w``), a
callee's default (``def g(x, w=W0)``) or a global a helper returns: ``s2s.jit`` on
NumPy, ``value_and_grad``'s aux and ``jvp``'s primal output handed them back as they
are, so a caller writing into the result changed the module's array.  The oracle is
the plain function (values) and ``np.shares_memory``."""

from __future__ import annotations

import numpy as np
import pytest
import reachable_aliasing_fns as F

import s2s

X = np.array([0.5, -1.0, 2.0])


def _arrays(tree):
    if isinstance(tree, np.ndarray):
        return [tree]
    if isinstance(tree, (tuple, list)):
        return [a for t in tree for a in _arrays(t)]
    return []


def _module_arrays():
    return [F.CFG.W, F.PP.w, F.W0, F.G, F.BIG.W]


def _fresh(result):
    for a in _arrays(result):
        for m in _module_arrays():
            assert not np.shares_memory(a, m), "a result shares memory with a module array"


@pytest.mark.every_case
@pytest.mark.parametrize("name", ["attr", "field", "whole", "via_default", "via_helper",
                                  "big"])
def test_jit_on_numpy_returns_copies(name) -> None:
    fn = getattr(F, name)
    jitted = s2s.jit(fn)
    before = [m.copy() for m in _module_arrays()]
    for call in range(3):
        out = jitted(X * (1 + call))
        _fresh(out)
        np.testing.assert_array_equal(_arrays(out)[0], _arrays(fn(X))[0])
        for a in _arrays(out):
            a[...] = -7.0  # (the caller writes into what it got)
    for m, b in zip(_module_arrays(), before):
        np.testing.assert_array_equal(m, b)


@pytest.mark.every_case
@pytest.mark.parametrize("name", ["loss_attr", "loss_default", "loss_helper"])
def test_value_and_grads_aux_is_a_copy(name) -> None:
    fn = getattr(F, name)
    vg = s2s.value_and_grad(fn, has_aux=True)
    for call in range(3):
        x = X * (1 + call)
        (value, aux), grad = vg(x)
        _fresh(aux)
        np.testing.assert_array_equal(aux, fn(x)[1])
        aux[...] = -7.0
    _fresh(vg(X)[0][1])


def test_jvps_primal_output_is_a_copy() -> None:
    for call in range(3):
        out, tangent = s2s.jvp(F.attr, (X,), (np.ones(3),))
        _fresh(out)
        np.testing.assert_array_equal(out, F.CFG.W)
        np.testing.assert_array_equal(tangent, np.zeros(3))
