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

HELPERS = {"ident", "bump", "bump_by", "set_first", "static_callable_adds",
           "argument_method_adds"}
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
    for name in ("fresh_added", "dict_built"):
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


def _refused_in_the_trace(call, helper):
    with pytest.raises(TransformError) as err:
        call()
    assert err.value.shared_write
    lines, first = inspect.getsourcelines(helper)
    line = first + next(k for k, t in enumerate(lines) if "# refused" in t)
    assert f'line {line}, column ' in str(err.value), str(err.value)


def test_a_static_callable_or_an_arguments_method_writing_in_place_is_refused():
    """Functions no name in the jitted function says, reached while JAX traces it:
    ``g(y)`` for ``g = bump`` given static, ``m.step(y)`` of a registered pytree
    argument. Before: ``x * pi`` where NumPy gives ``x * pi + 1`` (both)."""
    jax = pytest.importorskip("jax")
    if not hasattr(F.Stepper, "tree_flatten"):
        jax.tree_util.register_pytree_node(
            F.Stepper, lambda m: ((m.w,), None), lambda aux, ch: F.Stepper(*ch))
    x = np.array([0.3, -0.7, 1.2])
    _refused_in_the_trace(lambda: s2s.jit(F.static_callable_adds, backend="jax",
                                          static_argnums=1)(x, F.bump), F.bump)
    _refused_in_the_trace(lambda: s2s.jit(F.argument_method_adds, backend="jax")(
        x, F.Stepper(np.ones(3))), F.Stepper.step)


# ---- strings inside pytree arguments under s2s.jit(..., backend="jax") -------------

# (tanh's derivative near saturation: s2s's 1 - tanh**2 and JAX's differ by rounding)
TOL = {np.float64: dict(rtol=1e-10, atol=1e-13), np.float32: dict(rtol=1e-4, atol=1e-6)}

import jaxjit16_str_fns as S  # noqa: E402


def _act_twin(jnp, x, kind):
    return jnp.tanh(x) if kind == "tanh" else jnp.sin(x) if kind == "sin" else x * x


def _twins(jnp):
    act = lambda x, k: _act_twin(jnp, x, k)  # noqa: E731
    return {
        "f_dict": (lambda x, c: jnp.sum(act(x * c["w"], c["kind"]) ** 2),
                   lambda k, i: {"kind": k, "w": 2.0 + i}),
        "f_tuple": (lambda x, c: jnp.sum(act(x * c[1], c[0]) ** 2),
                    lambda k, i: (k, 2.0 + i)),
        "f_nested": (lambda x, c: jnp.sum(act(x * c["layer"]["w"], c["layer"]["kind"]) ** 2)
                     + c["scale"] * jnp.sum(x),
                     lambda k, i: {"layer": {"kind": k, "w": 1.5 + i}, "scale": 0.5}),
        "f_list": (lambda x, ks: sum(jnp.sum(act(x, k)) for k in ks),
                   lambda k, i: [k, "square"]),
        "f_named": (lambda x, c: jnp.sum(act(x * c.w, c.kind) ** 2),
                    lambda k, i: S.Cfg(k, 2.0 + i)),
    }


def test_a_string_in_a_dict_argument_is_static_under_jit_of_grad():
    """Before: JAX's "Error interpreting argument ... of type <class 'str'> ... at
    path cfg['kind']". Now each string traces its own branch (two compilations for
    three calls), each gradient JAX's of the jax.numpy twin."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    twin, cfg = _twins(jnp)["f_dict"]
    g = s2s.jit(s2s.grad(S.f_dict), backend="jax")
    x = np.array([0.3, -0.7, 1.2])
    for i, kind in enumerate(["tanh", "sin", "tanh"]):
        c = cfg(kind, i)
        np.testing.assert_allclose(g(x, c), jax.grad(twin)(x, c), rtol=1e-12)
    assert g.cache_info().compilations == 2


def test_a_string_in_a_result_stays_jaxs_to_refuse():
    """The string an argument's dict carries is static on the way in; returned, it is
    JAX's error for a string result (as ``jax.jit``'s), never a ``Static`` node in the
    caller's dict (it was, for a result dict whose keys are sorted)."""
    pytest.importorskip("jax")
    with pytest.raises(TypeError, match="str"):
        s2s.jit(S.returns_the_string, backend="jax")(np.ones(3), {"kind": "a", "w": 2.0})


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("mode", ["grad", "value_and_grad", "plain", "keyword"])
@pytest.mark.parametrize("name", ["f_dict", "f_tuple", "f_nested", "f_list", "f_named"])
def test_strings_in_pytree_arguments_are_static_on_jax(name, mode, dtype):
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    twin, cfg = _twins(jnp)[name]
    fn = getattr(S, name)
    made = {"grad": s2s.grad, "value_and_grad": s2s.value_and_grad, "plain": lambda f: f,
            "keyword": s2s.grad}[mode](fn)
    want_of = {"grad": jax.grad, "value_and_grad": jax.value_and_grad,
               "plain": lambda f: f, "keyword": jax.grad}[mode](twin)
    jitted = s2s.jit(made, backend="jax")
    second = list(inspect.signature(fn).parameters)[1]
    kinds = ["tanh", "sin", "tanh", "other", "sin", "tanh", "other", "sin", "tanh", "sin"]
    for i, kind in enumerate(kinds):  # (calls 1 to 10, the string changing)
        x = (np.array([0.3, -0.7, 1.2]) * (1 + 0.1 * i)).astype(dtype)
        c = cfg(kind, i)
        got = jitted(x, **{second: c}) if mode == "keyword" else jitted(x, c)
        want = want_of(x, c)
        for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(g, w, **TOL[dtype])
    assert jitted.cache_info().compilations == 3  # (one per string)


@pytest.mark.slow
def test_a_string_in_a_dict_is_static_under_jit_of_vmap():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    twin, cfg = _twins(jnp)["f_dict"]
    vm = s2s.jit(s2s.vmap(S.f_dict, in_axes=(0, None)), backend="jax")
    xs = np.array([[0.3, -0.7, 1.2], [1.0, 0.5, -2.0]])
    for i, kind in enumerate(["tanh", "sin", "other", "tanh"]):
        c = cfg(kind, i)
        np.testing.assert_allclose(vm(xs, c), jax.vmap(twin, in_axes=(0, None))(xs, c),
                                   rtol=1e-12)


# ---- a NumPy default indexed by a traced value on JAX (probe 10's searchsorted_lerp) ---


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_numpy_default_indexed_by_a_traced_value_runs_on_jax(dtype):
    """Before: TracerArrayConversionError at ``grid[i]`` (located), under
    ``s2s.jit(f)`` and ``s2s.jit(s2s.grad(f))`` on JAX; the jax.numpy twin's default is
    a JAX array.  Knots, points outside the grid, calls 1, 3 and 10; the defaults
    unchanged; a default a Python int indexes (``x[:sizes[0]]``) stays concrete."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    def twin(x, grid=jnp.array([-1.0, 0.0, 0.5, 2.0]), table=jnp.array([1.0, 0.0, 0.5, 3.0])):
        i = jnp.clip(jnp.searchsorted(grid, x) - 1, 0, grid.size - 2)
        w = (x - grid[i]) / (grid[i + 1] - grid[i])
        return jnp.sum((1.0 - w) * table[i] + w * table[i + 1])

    kept = [d.copy() for d in S.lerp_default.__defaults__]
    value = s2s.jit(S.lerp_default, backend="jax")
    grad = s2s.jit(s2s.grad(S.lerp_default), backend="jax")
    points = [np.array([0.3, -0.7, 1.2, 1.9]), np.array([0.0, 0.5, -1.0, 2.0]),
              np.array([-2.0, 3.0, 0.25, -1.0])]
    for call in range(10):
        x = (points[call % 3] * (1 + 0.01 * call)).astype(dtype)
        np.testing.assert_allclose(value(x), twin(x), **TOL[dtype])
        np.testing.assert_allclose(grad(x), jax.grad(twin)(x), **TOL[dtype])
    for d, k in zip(S.lerp_default.__defaults__, kept):
        np.testing.assert_array_equal(d, k)
        assert type(d) is np.ndarray
    x = np.array([0.3, -0.7, 1.2])
    np.testing.assert_allclose(s2s.jit(s2s.grad(S.sliced_by_default), backend="jax")(x),
                               [1.8, -4.2, 0.0], rtol=1e-12)
