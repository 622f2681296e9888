"""``s2s.jit(f, backend="jax")`` of a plain function the frontend refuses for a reason
of its own (an ``import`` inside, a ``try``, a ``class`` inside) runs ``f``'s text as
written, where JAX's arrays are values: an in-place write another name, view,
container, callee or the caller sees rebinds the written name alone.  Such a write is
now refused at its line (``api/unchecked_writes.py``: the frontend's alias check does
not run there); a write no other name sees still runs.  Every expected value is the
plain NumPy function's (the oracle), on a copy of the argument."""

import inspect

import jaxjit16_fns as F
import numpy as np
import pytest

import s2s
from s2s.errors import TransformError

HELPERS = {"ident", "bump", "bump_by", "set_first"}
FNS = {n: f for n, f in inspect.getmembers(F, inspect.isfunction)
       if f.__module__ == F.__name__ and n not in HELPERS}
LINES = inspect.getsourcelines(F)[0]
_UNSHARED = next(i for i, t in enumerate(LINES, 1) if t.startswith("# ---- unshared"))
RUNS = sorted(n for n, f in FNS.items() if f.__code__.co_firstlineno > _UNSHARED)
REFUSED = sorted(set(FNS) - set(RUNS))


def _marked_line(name):
    """The line a refusal of ``name`` points at: the `# refused` one in the function,
    or else in the first function it calls that has one."""
    fn = FNS[name]
    lines, first = inspect.getsourcelines(fn)
    for k, text in enumerate(lines):
        if "# refused" in text:
            return first + k
    helper = {"callee_adds_into_its_parameter": F.bump, "partial_callee_adds": F.bump_by,
              "callee_sets_an_item_of_its_parameter": F.set_first,
              "method_adds_into_a_field": F.Acc.add}[name]
    lines, first = inspect.getsourcelines(helper)
    return first + next(k for k, t in enumerate(lines) if "# refused" in t)
    raise AssertionError(name)


def _values(dtype, call):
    return (np.array([0.3, -0.7, 1.2]) * (1 + call) + 0.1 * call).astype(dtype)


def _refused_at_the_write(name):
    with pytest.raises(TransformError) as err:
        s2s.jit(FNS[name], backend="jax")
    assert err.value.shared_write
    text = str(err.value)
    line = _marked_line(name)
    assert f'line {line}, column ' in text and F.__file__ in text, text
    assert LINES[line - 1].split("#")[0].strip() in text, text
    assert "Instead: " in text, text


def test_the_reproducer_is_refused_where_it_gave_another_number():
    """Before: ``[0.942, -2.199, 3.770]``, where NumPy gives ``x * pi + 1``."""
    _refused_at_the_write("second_name_added")


@pytest.mark.parametrize("name", ["callee_adds_into_its_parameter", "sorted_in_place",
                                  "rows_added_in_a_for_loop"])
def test_a_callee_a_sort_a_loop_row_are_refused(name):
    _refused_at_the_write(name)


def test_unshared_writes_outside_the_subset_are_not_refused():
    """(No compile here: each is refused, or not, when jit is called; the slow tier
    runs them on JAX against NumPy.)"""
    for name in ("fresh_added", "counted", "dict_built", "list_sorted"):
        s2s.jit(FNS[name], backend="jax")


@pytest.mark.slow
@pytest.mark.parametrize("name", REFUSED)
def test_each_shared_write_outside_the_subset_is_refused_at_its_line(name):
    _refused_at_the_write(name)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", RUNS)
def test_unshared_writes_outside_the_subset_run_on_jax_as_numpy(name, dtype):
    jitted = s2s.jit(FNS[name], backend="jax")
    for call in (1, 3, 10):
        x = _values(dtype, call)
        kept = x.copy()
        got = np.asarray(jitted(x))
        want = np.asarray(FNS[name](kept.copy()))
        np.testing.assert_array_equal(x, kept)
        np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(REFUSED) - {"default_array_added"}))
def test_the_numpy_backend_still_gives_numpys_result(name):  # (a default: its state)
    jitted = s2s.jit(FNS[name], backend="numpy")
    for call in (1, 3):
        x = _values(np.float64, call)
        np.testing.assert_allclose(jitted(x), FNS[name](x.copy()), rtol=1e-12)
