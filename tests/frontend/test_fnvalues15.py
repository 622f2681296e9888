"""Issue 23: a closure with ``nonlocal`` state that the transformed function makes by
calling its factory (``loss = make_counter_loss()``) runs: its cells are locals of the
call (s2s/frontend/closure_cells.py).  A closure made outside the call, or one used
other than called on a line of its own, stays refused at the user's line.

The default tier checks values against closed forms and central differences (no JAX);
``-m slow`` runs every transform of the newcomer probes (grad at calls 1, 3 and 10 with
changing values, jvp, vmap of grad, hessian, jit of grad on both backends, aliasing)
against JAX on the same source, in float64 and float32."""

from __future__ import annotations

import fnvalues15_fns as F
import newcomer_harness as H  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX

import s2s

X = np.array([0.3, -0.7, 0.45, 1.2])

ACCEPTED = ["two_counters", "counter_in_loop", "counter_in_branch", "array_cell",
            "nested_calls", "made_again_in_loop", "module_constant_read", "caller_of_a_maker"]
PROBE = H.Probe(F, {name: ((X,), {"one": np.array([0.3]), "empty": np.zeros(0)})
                    for name in ACCEPTED},
                ("grad", "jvp", "vmap_grad", "hessian", "jit", "jit_jax", "special",
                 "alias"), no_hessian=frozenset(), tol64=(1e-6, 1e-8))


def test_counter_cells_are_threaded_through_the_calls() -> None:
    """Each call of the closure sees the count the one before left (the loop's
    ``i``-th call counts ``i + 1``), at three calls with changing values, against the
    closed form; the result is no view of the argument."""
    g_loop = s2s.grad(F.counter_in_loop)
    for call in range(3):
        x = X * (1.0 + 0.1 * call)
        # sum_i (i + 1) * sum((x (i + 1))^2): d/dx = 2 x sum_i (i + 1)^3
        out = g_loop(x)
        np.testing.assert_allclose(out, 2 * x * (1 + 8 + 27), rtol=1e-12)
        assert not np.shares_memory(out, x)


@pytest.mark.slow  # (the default tier's budget)
def test_an_array_cell_and_closures_made_again() -> None:
    """An array cell the derivative flows through (``total = total + scale * v``), and a
    closure made again in each iteration (each counts from 0)."""
    np.testing.assert_allclose(s2s.grad(F.array_cell)(X), H.fd_grad(F.array_cell, (X,), 1e-6),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s.grad(F.made_again_in_loop)(X), 3 * (1 + 2) * 2 * X,
                               rtol=1e-12)


def test_a_closure_whose_cells_outlive_the_call_is_refused_located() -> None:
    """A module's closure (``LOSS = make_counter_loss()``) writes a cell that outlives
    the call; a closure passed on as a value or called in a comprehension cannot be
    threaded: each refused at the user's line, naming it."""
    cases = [(F.module_closure, "nonlocal calls", "outlive"),
             (F.closure_as_value, "f = loss", "used here other than called"),
             (F.closure_in_comprehension, "sum(loss(x * k)", "used here other than called"),
             (F.called_in_a_target, "d[loss(x) > 0]", "used here other than called"),
             (F.two_factories_one_name, "loss = make_halves()", "two factories")]
    for fn, line, why in cases:
        with pytest.raises(s2s.TransformError) as info:
            s2s.grad(fn)(X)
        message = str(info.value)
        assert "fnvalues15_fns.py" in message and line in message and why in message, message


def test_a_module_constant_the_closure_reads_is_read_at_each_call() -> None:
    """``SCALE`` changed between calls: the gradient follows it."""
    g = s2s.grad(F.module_constant_read)
    try:
        for scale in (1.5, -0.25):
            F.SCALE = scale
            np.testing.assert_allclose(g(X), H.fd_grad(F.module_constant_read, (X,), 1e-6),
                                       rtol=1e-6, atol=1e-8)
    finally:
        F.SCALE = 1.5


def test_an_object_built_to_hold_functions_is_refused_at_the_function() -> None:
    """``Stack([np.tanh, lambda v: ...])`` (probe 8's ``iter_container``): the object
    is the dict of its fields, which carries no functions; refused at the function it
    is given, saying so (before: "`np.tanh` is a ufunc, used here as a value")."""
    for fn, shown in ((F.stack_of_functions, "np.tanh"), (F.layer_of_function, "relu")):
        with pytest.raises(s2s.TransformError) as info:
            s2s.grad(fn)(X)
        message = str(info.value)
        assert "fnvalues15_fns.py" in message and f"given a function (`{shown}`)" in message, (
            message)


def test_a_cell_not_only_a_number_keeps_numpys_in_place_add_refused() -> None:
    """A cell's ``total += v`` runs where the cell is only ever a Python number
    (``calls = 0``, ``calls += 1``); where it may hold an array NumPy adds into that
    array, which the closure's earlier result also is (``first`` below, NumPy's value
    ``sum((2x + sin x) ** 2)``, where a rebinding would give ``sum(2x (2x + sin x))``):
    refused at the ``+=`` (frontend/param_writes.py), as for any callee's parameter."""
    for fn in (F.array_cell_added_in_place, F.counter_stepped_by_a_value):
        with pytest.raises(s2s.TransformError) as info:
            s2s.grad(fn)(X)
        message = str(info.value)
        assert "fnvalues15_fns.py" in message and "+= ..." in message, message


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", ACCEPTED)
def test_every_transform_against_jax(name, dtype) -> None:
    label, verdicts = H.classify(PROBE, name, H.twin(F), dtype)
    assert label == "ok", verdicts
