"""Generators and windows a function consumes, issue 23's eleventh pass
(``generators11_fns.py``): an early ``return`` in a generator's loop, ``yield from``
a generator, ``next(g)``/``next(g, d)`` then the rest, ``zip`` over sequences of
unequal lengths (``zip(x, x[1:])``, of three, of an array's rows, of a list of arrays,
of a grown list), ``itertools.pairwise``, ``list(zip(...))``; and the reads s2s
refuses, located: a generator read twice (before: the items twice, a wrong number),
in a loop, passed on, sent to, ``next`` under an ``if``, a module's generator object,
a generator that never ends.

Every expected value comes from JAX on the same source (``jax_twin``), float64 and
float32, at calls 1, 3 and 10 whose lengths change (5, 2, 1, 6 items...): grad,
value_and_grad, jvp, vmap, hessian, ``s2s.jit`` on both backends, and as a callee.
The default tier runs the refusals and one pass over each function; ``-m slow``
runs the sweeps."""

from __future__ import annotations

from functools import partial

import generators11_fns as F  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX, assert_close_to, central_grad, compiled, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)

X = np.array([0.3, -0.7, 1.2, 0.5, -0.2, 0.9])
DTYPES = [np.float64, np.float32]
CALLS = (1, 3, 10)
close = partial(assert_close_to, f64=1e-8, f32=5e-4)

# (name, the fewest items it reads)
GENERATORS = [("early_sum", 1), ("early_loop", 1), ("nested_early_sum", 1),
              ("chained_sum", 2), ("comprehension_of_pairs", 2), ("listed_waves", 1),
              ("zipped_generators", 1), ("two_nexts", 3), ("nexts_with_defaults", 1),
              ("next_then_the_rest", 1), ("next_of_a_call", 1), ("passed_on", 1),
              ("generator_caller", 3)]
WINDOWS = [("window_comprehension", 2), ("window_list", 2), ("window_array", 1),
           ("window_in_while", 1), ("window_of_three", 1), ("window_of_rows", 1),
           ("window_of_arrays", 1), ("window_of_grown", 1), ("pairwise_loop", 1),
           ("pairwise_sum", 2), ("pairwise_listed", 2), ("enumerated_window", 1),
           ("zip_of_constants", 4), ("window_caller", 2)]
ALL = GENERATORS + WINDOWS


def _x(call: int, dtype, fewest: int) -> np.ndarray:
    size = max(fewest, (5, 2, 1, 6, 3)[call % 5])  # (a length changing between calls)
    return (np.resize(X, size) * (1 + 0.1 * call) - 0.05 * call).astype(dtype)


def test_default_tier_against_finite_differences() -> None:
    """The default tier's oracle: central differences (the sweeps below: JAX)."""
    for name in ("early_sum", "two_nexts", "pairwise_loop"):
        g = s2s.grad(getattr(F, name))
        for size in (3, 6):
            x = np.resize(X, size) * 0.9
            assert_close_to(g(x), central_grad(getattr(F, name), x), f64=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("name,fewest", ALL, ids=[n for n, _ in ALL])
def test_grad_against_jax(name, fewest) -> None:
    """One gradient per function, its length changing over three calls."""
    g = s2s.grad(getattr(F, name))
    for call in (1, 2, 3):
        x = _x(call, np.float64, fewest)
        close(g(x), jax.grad(getattr(J, name))(x), np.float64)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name,fewest", ALL, ids=[n for n, _ in ALL])
def test_every_transform_against_jax(name, fewest, dtype) -> None:
    ours, theirs = getattr(F, name), getattr(J, name)
    g, vg = s2s.grad(ours), s2s.value_and_grad(ours)
    on_numpy, on_jax = s2s.jit(s2s.grad(ours)), s2s.jit(s2s.grad(ours), backend="jax")
    for call in CALLS:
        x = _x(call, dtype, fewest)
        v = (x[::-1] * 0.5 + 0.25).astype(dtype)
        expected = compiled(jax.grad(theirs))(x)
        close(g(x), expected, dtype)
        close(vg(x), compiled(jax.value_and_grad(theirs))(x), dtype)
        close(on_numpy(x), expected, dtype)
        close(on_jax(x), expected, dtype)
        close(s2s.jit(ours)(x), compiled(theirs)(x), dtype)
        close(s2s.jvp(ours, (x,), (v,)),
              compiled(lambda x, v: jax.jvp(theirs, (x,), (v,)))(x, v), dtype)
    x = _x(3, dtype, max(fewest, 3))
    batch = np.stack([x, 0.5 * x, x[::-1].copy()])
    close(s2s.vmap(ours)(batch), compiled(jax.vmap(theirs))(batch), dtype)
    close(s2s.vmap(g)(batch), compiled(jax.vmap(jax.grad(theirs)))(batch), dtype)
    close(s2s.hessian(ours)(x), compiled(jax.hessian(theirs))(x), dtype)


@pytest.mark.slow
def test_an_early_return_on_a_value() -> None:
    """``if v > c: return`` in the generator: JAX's grad decides it on the concrete
    value, as s2s's NumPy code does; under ``jit`` on JAX it is a traced ``if``,
    refused at the user's line as JAX refuses it."""
    g = s2s.grad(F.below_sum)
    for x in (np.array([0.1, 0.5, 0.9, 0.2]), np.array([0.2, 0.95, 0.1]), np.array([0.3, 0.4])):
        close(g(x), jax.grad(J.below_sum)(x), np.float64)
    with pytest.raises(s2s.TransformError) as info:
        s2s.jit(g, backend="jax")(np.array([0.1, 0.5]))
    assert "generators11_fns.py" in str(info.value)


@pytest.mark.slow
def test_the_window_stops_at_the_shortest_sequence() -> None:
    """Before: ``zip(x, x[1:])`` walked ``len(x)`` steps, an IndexError from the
    emitted code (NumPy), ``x[1:][len(x) - 1]`` read past the end."""
    x = np.array([0.3, -0.7, 1.2, 0.5])
    for name in ("window_comprehension", "window_of_rows", "window_in_while",
                 "zip_of_constants"):
        assert_close_to(s2s.grad(getattr(F, name))(x), central_grad(getattr(F, name), x),
                        f64=1e-6)
    text = s2s.source(s2s.grad(F.window_of_three))
    assert "shortest = x[:len_" in text and "range(len(shortest_2))" in text, text


def test_nexts_past_the_end_raise_at_the_users_line() -> None:
    """Python's ``next`` past the end raises StopIteration; s2s's read of the list
    raises Python's IndexError at that ``next`` (its line and column)."""
    with pytest.raises(IndexError) as info:
        s2s.grad(F.two_nexts)(np.array([0.3, 0.4]))
    text = str(info.value)
    assert "generators11_fns.py" in text and "c, d = next(g)" in text, text


def test_errors_in_a_generator_point_at_the_users_column() -> None:
    """The copy writes ``_s2s_items.append(v)`` for ``yield v``: its columns are moved
    back onto the user's (before: 12 columns to the right of the construct)."""
    fn = _module_function("""
import numpy as np

def gen(xs):
    for v in xs:
        yield v, np.sinn(v)

def use(x):
    return sum(a * b for a, b in gen(x))
""")
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(fn)(np.array([0.1, 0.2]))
    text = str(info.value)
    assert "line 6, column 21" in text, text


REFUSED = {
    "read_twice": ("read again", "return sum(g) + sum(g)", 25),
    "looped_twice": ("read again", "for v in g:", 14),
    "read_in_a_loop": ("in a loop that runs again", "t = t + sum(g) * (k + 1)", 21),
    "zipped_with_itself": ("read again", "zip(g, g)", 41),
    "passed_to_a_double_reader": ("read again", "return sum(items) + sum(items)", 29),
    "passed_on_returned": ("used as a value", "return items", 12),
    "next_then_sum": ("what `next` left", "return first + sum(g)", 24),
    "sent": ("`.send`", "return g.send(None)", 12),
    "next_under_an_if": ("on a path an `if` chooses", "a = a + next(g)", 22),
    "module_generator": ("generator object made outside", "for v in SPENT:", 14),
    "pairwise_of_a_call": ("`itertools.pairwise` of an expression", "pairwise(np.sin(x))",
                           34),
    "zipped_with_endless": ("never ends", "while True:", 5),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_at_the_users_line_and_column(name) -> None:
    """Before, the first four gave the items again (a wrong number, silently) and the
    module's generator object an internal TypeError."""
    why, line, column = REFUSED[name]
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(getattr(F, name))(np.array([0.1, 0.2, 0.3]))
    text = str(info.value)
    assert why in text and line in text and "generators11_fns.py" in text, text
    assert f", column {column}\n" in text, text


def _module_function(source: str):
    """The last function of ``source``, written to a file s2s can read."""
    import importlib.util
    import tempfile
    from pathlib import Path

    path = Path(tempfile.mkdtemp()) / "generators11_tmp.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("generators11_tmp", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.use


def test_module_state_a_generator_reads_changes_between_calls() -> None:
    """A generator reading a module's list (``SCALE[0]``) or an object's attribute
    (``STEPPER.c``, a module object's generator method) sees each call's value."""
    g, h = s2s.grad(F.module_scaled), s2s.grad(F.method_steps)
    x = np.array([0.3, -0.7, 1.2])
    try:
        for scale in (2.0, 5.0, 0.5):
            F.SCALE[0] = scale
            F.STEPPER.c = scale + 1.0
            assert_close_to(g(x), central_grad(F.module_scaled, x), f64=1e-6)
            assert_close_to(h(x), central_grad(F.method_steps, x), f64=1e-6)
    finally:
        F.SCALE[0] = 2.0
        F.STEPPER.c = 3.0


def test_a_generator_method_of_an_object_built_in_the_function_runs() -> None:
    """Refused here before the twelfth pass (``test_generators12.py``: against JAX)."""
    fn = _module_function("""
import numpy as np

class Stepper:
    def __init__(self, c):
        self.c = c

    def steps(self, xs):
        for v in xs:
            yield v * self.c

def use(x):
    s = Stepper(2.0)
    t = 0.0
    for v in s.steps(x):
        t = t + v
    return t
""")
    x = np.array([0.1, 0.2, -0.4])
    assert_close_to(s2s.grad(fn)(x), central_grad(fn, x), f64=1e-6)
