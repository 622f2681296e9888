"""``s2s.jit(f, backend="jax")`` of a plain function runs its source on JAX, whose
arrays are values: a write NumPy makes in place (``+=``, ``y[i] = v``, ``np.add.at``,
``.sort()``) that another name, view, container or the caller sees would rebind the
written name alone and give another number.  Such writes are refused at the user's
line, by the checks the grad path makes (``errors.mark_shared_write``); the NumPy
backend gives NumPy's result.  Every expected value is the plain NumPy function's
(the oracle), on a copy of the arguments."""

import inspect

import jaxalias15_fns as F
import numpy as np
import pytest

import s2s
from s2s.errors import TransformError

FNS = dict(inspect.getmembers(F, inspect.isfunction))
LINES, FIRST = inspect.getsourcelines(F)[0], 1
REFUSED = {  # function -> the line its refusal points at (marked `# refused`)
    name: next(i for i, t in enumerate(LINES, FIRST) if "# refused" in t and i > (
        inspect.getsourcelines(fn)[1]))
    for name, fn in FNS.items() if "# refused" in inspect.getsource(fn)}
RUNS = sorted(set(FNS) - set(REFUSED))  # (fresh arrays, an argument rebound: run)


def _values(dtype, call):
    """A call's argument: values that change from call to call."""
    return (np.array([0.3, -0.7, 1.2]) * (1 + call) + 0.1 * call).astype(dtype)


def _refused_at_the_write(name):
    with pytest.raises(TransformError) as err:
        s2s.jit(FNS[name], backend="jax")(_values(np.float64, 0))
    text = str(err.value)
    line = REFUSED[name]
    assert f'line {line}, column ' in text and F.__file__ in text, text
    assert LINES[line - FIRST].split("#")[0].strip() in text, text
    assert "Instead: " in text, text


def _numpy_backend_is_numpy(name, dtype):
    jitted = s2s.jit(FNS[name], backend="numpy")
    for call in range(10):
        x = _values(dtype, call)
        kept = x.copy()
        got = jitted(x)
        want = FNS[name](kept.copy())
        np.testing.assert_array_equal(x, kept)  # (the caller's array unchanged)
        np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == np.float32 else 1e-12)
        assert np.asarray(got).dtype == np.asarray(want).dtype


def test_a_dict_item_a_list_holds_is_refused_on_jax_and_numpys_on_numpy():
    _refused_at_the_write("dict_item_in_a_list_returned")
    _refused_at_the_write("dict_item_read_then_added")
    _numpy_backend_is_numpy("dict_item_in_a_list_returned", np.float64)


def test_a_field_added_in_place_through_another_name_is_refused_on_jax():
    """``w = b.w; b.w += 1.0`` of an object the function built: JAX's ``+=`` would
    leave ``w`` the old array (before: ``x + (x + 1)`` where NumPy gives ``2 (x + 1)``);
    refused there as on the grad path (object_setters.py), NumPy's on NumPy."""
    _refused_at_the_write("attr_added_through_another_name")
    _numpy_backend_is_numpy("attr_added_through_another_name", np.float64)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_shared_write_is_refused_at_its_line_on_jax(name):
    _refused_at_the_write(name)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", sorted(FNS))
def test_the_numpy_backend_gives_numpys_result(name, dtype):
    _numpy_backend_is_numpy(name, dtype)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", RUNS)
def test_unshared_writes_run_on_jax_as_numpy(name, dtype):
    jitted = s2s.jit(FNS[name], backend="jax")
    for call in (1, 3, 10):  # (calls 1, 3 and 10 given values that change)
        x = _values(dtype, call)
        kept = x.copy()
        got = np.asarray(jitted(x))
        want = FNS[name](kept.copy())
        np.testing.assert_array_equal(x, kept)
        np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == np.float32 else 1e-12)
        assert got.dtype == want.dtype
