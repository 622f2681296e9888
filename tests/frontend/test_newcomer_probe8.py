"""Issue 23, the eighth newcomer probe: 40 everyday functions of kinds the earlier
probes did not try (``super().__init__`` with a ``@property``, ``__getitem__``/
``__len__``/``__iter__`` on user containers, operator overloading, a property setter,
``abc.ABC`` layers, a dataclass ``default_factory`` with ``__post_init__``, a user
generator; ``scipy.special`` erf/gammaln/betaln/digamma/expit/logit/softmax/logsumexp;
a training step returning a dict, nested ``enumerate(zip(...))``, ``reversed``, the
walrus in a comprehension, ``match`` on mappings, f-strings of shapes,
``numpy.typing``, ``math.fsum``, ``itertools``, ``functools.reduce``; ``np.einsum``
with ellipses, ``np.isfinite`` guards, ``np.linalg.norm`` ord/axis, one-sided
``clip``, ``cumsum`` losses, masked class means, ``take_along_axis``, ``np.pad``,
``polyder``, softplus three ways, causal multi-head attention, Huber by
``np.minimum``, reductions with ``where=``, ``np.cross``, ``triu_indices``,
``np.prod`` through zeros) through grad at calls 1, 3 and 10 with changing values,
jvp, vmap of grad, hessian, jit of grad on both backends, grad at kinks/ties/NaN/
size-1/0-size inputs (also after the code specialized on ordinary values) and vmap of
grad there, and the caller writing into a result; in float64 and float32 against JAX
on the same source (``newcomer_harness.twin``) or central differences where JAX cannot
run it.

The sweep (``-m slow``: each function compiles dozens of JAX programs) pins each
function's class (``python tools/probe_tally.py`` counts them).  The default tier
checks what the probe fixed, without JAX compiles."""

from __future__ import annotations

import newcomer_harness as H  # (pytest puts this directory on sys.path)
import newcomer_probe8_cases as C
import newcomer_probe8_fns as F
import numpy as np
import pytest
from support import HAVE_JAX

import s2s

DTYPES = [np.float64, np.float32]

# the probe's classes (newcomer_harness.classify), per function; every function not
# named here is accepted and correct under every transform tried, in both dtypes
EXPECTED: dict[str, str] = {
    # (ok since internal14: vmap of grad at the one-coefficient polynomial `[0.5]`,
    # `np.polyval(np.polyder(c), t)` of a batch of constants, np.polyval of no
    # coefficients gave x's shape without the batch axis, AxisError from emitted code)
    # (getitem_len_container: ok since loops14, `for i in range(len(params)): ...
    # params[i] * params[-1]` of a class with `__len__`/`__getitem__`, whose
    # `return self._items[i]` of the loop's run-time `i` was refused: "a tuple, list or
    # dict argument can only be indexed with a constant key here"; now read as
    # `np.stack(self._items)[i]`, ir/unroll.py; before that "the dict has no key -1",
    # and `box["a"]` read the field `a`, `len(obj)` counted the fields: wrong numbers)
    # `Stack([np.tanh, lambda v: ..., np.sin])` iterated by `__iter__`: "`Stack(...)`
    # is given a function (`np.tanh`) to hold: s2s holds an object of your class built
    # in the function as the dict of its fields ... a function is none" (since
    # fnvalues15; before: "`np.tanh` is a ufunc, used here as a value"); an object's
    # field of functions is not carried yet (fnvalues15's report says what it needs)
    "iter_container": "refused",
    # (operator_overload_vec: ok now, `2.0 * a` is `Vec.__rmul__(a, 2.0)`...; it was
    # refused: "an operator on a `Vec` object ... does not call its `__mul__`")
    # (ok since methods14: the setter's `self.steps += 1` of a field only ever a Python
    # number is `self.steps = self.steps + 1` (number_fields.py); it was refused:
    # "`self['steps'] += ...` would change in place an array that another name ...")
    "property_setter_update": "ok",
    # (dataclass_field_factory: ok now, the `default_factory` lambda's list literal
    # is written in and `sum(self.scales)` adds its items; it was refused: "Python's
    # built-in `sum` is supported over a list or tuple whose length is known...")
    # `train_step(out["w"], x, y) | {"first_norm": ...}` of a callee's returned dict:
    # "`|` of a dict and a value that is not a dict in this call"
    "train_step_returns_dict": "ok",
    # (match_mapping_pattern: ok since strings15: the tuple-of-dicts default `specs` is
    # made per its items' keys and `sum(penalty(w, s) for s in specs)` unrolled, each
    # `penalty` a copy for its dict's keys deciding `case {"kind": "l2", "weight":
    # lam}` (values compared where the code runs), `case _: raise` the check before
    # the chain; it was refused: "this `match` tests `spec`, a value known only when
    # the function runs")
    # (shape_fstring_checks: ok since strings15: `f"{rows}x{cols}"`,
    # `"shape={}".format(x.shape)`, `.endswith`, `str(x.shape).count(",")` of shapes
    # are computed where the code runs (shape_strings.py); it was refused: "an f-string
    # of values known only when the function runs is a string")
    # `math.fsum(w * t for ...)` of traced sums: "`math.fsum` (builtin_function_or_method)
    # is not a function s2s can transform"; JAX's grad raises ConcretizationTypeError
    "math_fsum_terms": "both refuse",
    # (ok since iter14, s2s/frontend/iterations.py, static_loops.py, walrus.py:
    # enumerate_zip_nested_unpack, reversed_list_layers, walrus_comprehension_scan,
    # itertools_combinations_pairs, functools_reduce_matmul; they were refused at
    # `zip(...)` inside a zip or `sorted`, `:=`, `itertools.combinations`, `*mats`)
    # (fixed by this probe, ok now: super_init_property's jit of grad on JAX, the zero
    # cotangent emitted code makes for the string field of `super().__init__(w,
    # name="scaled")`, `np.zeros_like(self["name"])`, raised JAX's "TypeError: data type
    # 'scaled' not understood")
}
# float32 only
EXPECTED_F32: dict[str, str] = {
}


@pytest.mark.slow
@pytest.mark.every_case
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", list(C.CASES))
def test_probe_sweep(name, dtype) -> None:
    """Each function's class is the one recorded: accepted and correct, or refused
    with a located TransformError (never WRONG, never an internal error)."""
    label, verdicts = C.classify(name, H.twin(F), dtype)
    assert label == H.pinned(name, dtype, EXPECTED, EXPECTED_F32), verdicts


# ---- what the probe fixed -----------------------------------------------------------------


@pytest.mark.skipif(not HAVE_JAX, reason="the JAX backend")
def test_a_string_fields_zero_on_the_jax_backend() -> None:
    """The zero cotangent emitted code makes for an object's string field
    (``self.name = "scaled"``: ``np.zeros_like(self["name"])``) raised JAX's TypeError
    "data type 'scaled' not understood" under ``s2s.jit(..., backend="jax")``; it is
    NumPy's unused string array, as on the NumPy backend."""
    import s2s.backends.jax_numpy as jnp_

    for fn in (jnp_.zeros_like, jnp_.ones_like, jnp_.empty_like):
        assert fn("scaled").dtype.kind == "U"


@pytest.mark.slow  # (a JAX compile)
@pytest.mark.skipif(not HAVE_JAX, reason="the JAX backend")
def test_super_init_with_a_string_keyword_runs_on_jax() -> None:
    """``super().__init__(w, name="scaled")`` and a ``@property``: jit of grad on JAX
    (internal TypeError before), three calls, against central differences."""
    x = np.array([0.3, -0.7, 0.45, 1.2])
    g = s2s.jit(s2s.grad(F.super_init_property), backend="jax")
    for call in range(3):
        xc = x * (1.0 + 0.1 * call)
        np.testing.assert_allclose(g(xc), H.fd_grad(F.super_init_property, (xc,), 1e-6),
                                   rtol=1e-6, atol=1e-9)


class Box:
    def __init__(self, a):
        self.a = a

    def __getitem__(self, key):
        return 3.0 * self.a


class Sized:
    def __init__(self, items):
        self.items = items

    def __len__(self):
        return 7


class Pair:
    def __init__(self, data):
        self.data = data

    def __sub__(self, other):
        return Pair(self.data - 2.0 * other.data)

    def __matmul__(self, other):
        return np.sum(self.data * other.data)

    def __neg__(self):
        return Pair(-3.0 * self.data)


def box_by_field_name(x):
    box = Box(x)
    return np.sum(box["a"] ** 2)  # Box.__getitem__: 9 * sum(x ** 2)


def len_of_built(x):
    return len(Sized([x, x])) * np.sum(x)  # Sized.__len__: 7 * sum(x)


def len_of_name(x):
    s = Sized([x])
    return len(s) * np.sum(x)


def operators_of_objects(x):
    a, b = Pair(x), Pair(np.cos(x))
    return (a - b) @ a


def negated_object(x):
    return np.sum((-Pair(x)).data)


@pytest.mark.parametrize("fn", [box_by_field_name, len_of_built, len_of_name,
                                operators_of_objects, negated_object])
def test_an_objects_protocol_syntax_calls_its_method(fn) -> None:
    """``box["a"]`` of an object whose class defines ``__getitem__`` gave the field
    ``a`` (grad 2x where Python's value has 18x), ``len(obj)`` the number of fields (1
    where ``__len__`` says 7), ``a - b`` of two objects a TypeError from emitted code
    (``dict - dict``): s2s held the object as the dict of its fields and never called
    the class's methods; then they were refused, located.  Now each is the call of
    the class's method Python makes (object_protocols.py), against central
    differences."""
    x = np.array([0.3, -0.7, 0.45])
    np.testing.assert_allclose(s2s.grad(fn)(x), H.fd_grad(fn, (x,), 1e-6),
                               rtol=1e-6, atol=1e-8)


@pytest.mark.slow  # (the default tier's budget: the sweep pins it too)
def test_a_container_objects_run_time_key_reads_its_list() -> None:
    """The probe's ``getitem_len_container`` (``for i in range(len(params)):
    params[i]``): ``__len__`` and ``__getitem__`` are called; the list field indexed
    by the loop's run-time ``i`` in ``__getitem__`` is read as ``np.stack(items)[i]``
    (loops14; it was refused there, "indexed with a constant key"), against central
    differences."""
    x = np.array([0.3, -0.7])
    np.testing.assert_allclose(s2s.grad(F.getitem_len_container)(x),
                               H.fd_grad(F.getitem_len_container, (x,), 1e-6),
                               rtol=1e-6, atol=1e-8)


class Unit:
    def __init__(self, w):
        self.w = w

    def __call__(self, x):
        return np.tanh(self.w * x)


class Units:
    def __init__(self, w):
        self.layers = [Unit(w * k) for k in (1.0, 0.5)]

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x * len(self.layers) + self.layers[0].w


def list_field_of_objects(x):
    return np.sum(Units(x)(x))


@pytest.mark.slow  # (the default tier's budget: ~1 s of transforms)
def test_a_field_holding_a_list_of_objects_is_not_refused() -> None:
    """``len(self.layers)`` and ``self.layers[0]`` of a field holding a list of
    objects are the list's: not refused by the check above (whose first version raised
    AttributeError there: the field's record has no class)."""
    x = np.array([0.3, -0.7])
    np.testing.assert_allclose(s2s.grad(list_field_of_objects)(x),
                               H.fd_grad(list_field_of_objects, (x,), 1e-6),
                               rtol=1e-6, atol=1e-9)
