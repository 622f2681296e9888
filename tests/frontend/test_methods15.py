"""Issue 23: model classes as people write them (s2s/frontend/init_lists.py,
object_setters.py): a list of layers built in a loop in ``__init__`` (``append`` or
``self.layers = self.layers + [...]``; a wrong gradient before: the loop-carried
record's list read as an array, its ``+`` as NumPy's), walked in ``__call__``;
``p.steps += 2`` / ``p.w += v`` of an object the function built.

The sweep (``-m slow``) runs methods15_fns.py's functions through grad at calls 1, 3
and 10, value_and_grad, jvp, vmap of grad, hessian, jit of grad on NumPy and on JAX,
grad at special inputs and the aliasing check, in float64 and float32, against JAX on
the same source (``newcomer_harness.twin``).  The default tier checks one function
against central differences at changing values, never sharing the argument."""

from __future__ import annotations

import methods15_fns as F
import newcomer_harness as H  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX

import s2s

X4 = np.array([0.3, -0.7, 0.45, 1.2])
WS = (np.array([0.5, 1.0, -0.3, 0.2]), np.array([1.2, -0.4, 0.8, 0.1]))

CASES = {
    "layers_appended_in_init": ((X4,), {"zeros": np.zeros(4)}),
    "layers_concatenated_in_init": ((X4,), {"zeros": np.zeros(4)}),
    "terms_grown_in_init": ((X4,), {"zeros": np.zeros(4)}),
    "field_updated_in_place": ((X4,), {"zeros": np.zeros(4)}),
    "field_updated_in_a_loop": ((X4,), {"zeros": np.zeros(4)}),
    "model_class": ((X4,), {"zeros": np.zeros(4)}),
    "chained_steps": ((X4,), {"zeros": np.zeros(4)}),
    "layer_item_method": ((X4,), {"zeros": np.zeros(4)}),
}
PROBE = H.Probe(F, CASES, ("grad", "value_and_grad", "jvp", "vmap_grad", "hessian",
                           "jit", "jit_jax", "special", "alias"), tol64=(1e-6, 1e-8))
# a dict's list grown in a loop of a helper: vmap of grad and hessian stay refused,
# located ("the array method `.pop()`": the grown copy's tape)
GROWN = H.Probe(F, {"dict_list_grown": ((X4,), {"zeros": np.zeros(4)})},
                ("grad", "value_and_grad", "jvp", "jit", "jit_jax", "special", "alias"),
                tol64=(1e-6, 1e-8))


@pytest.mark.slow
@pytest.mark.every_case
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", [*CASES, "dict_list_grown"])
def test_methods_against_jax(name, dtype) -> None:
    probe = GROWN if name == "dict_list_grown" else PROBE
    label, verdicts = H.classify(probe, name, H.twin(F), dtype)
    assert label == "ok", verdicts


def _against_differences(name: str) -> None:
    fn, g = getattr(F, name), s2s.grad(getattr(F, name))
    for call in range(1, 11):
        x = X4 * (1.0 + 0.07 * call)
        got = g(x)
        if call in (1, 3, 10):
            np.testing.assert_allclose(got, H.fd_grad(fn, (x,), 1e-6), rtol=1e-6,
                                       atol=1e-8)
        assert not np.shares_memory(got, x)


def test_layers_grown_in_a_loop_in_init() -> None:
    """``for w in ws: self.layers = self.layers + [Layer(w)]`` and ``__call__`` walking
    ``self.layers`` calling each layer's method (refused before: "`.w` is not an
    attribute of NumPy arrays"; the same loop growing a list of arrays gave a wrong
    gradient): grad at calls 1, 3 and 10 against central differences."""
    _against_differences("layers_concatenated_in_init")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["layers_appended_in_init", "terms_grown_in_init",
                                  "field_updated_in_place", "field_updated_in_a_loop",
                                  "model_class", "chained_steps", "dict_list_grown",
                                  "layer_item_method"])
def test_grown_in_init_against_differences(name) -> None:
    _against_differences(name)


@pytest.mark.slow
def test_layers_of_a_tuple_the_call_passes() -> None:
    """``AppendedNet(ws)`` of a tuple argument: grad by both arguments against central
    differences, at two lengths of ``ws``."""
    x = X4 * 0.9
    for ws in (WS, WS + (np.cos(X4),)):
        g_ws, g_x = s2s.grad(F.layers_of_the_call, argnums=(0, 1))(ws, x)
        np.testing.assert_allclose(g_x, H.fd_grad(lambda v: F.layers_of_the_call(ws, v),
                                                  (x,), 1e-6), rtol=1e-6, atol=1e-8)
        for k in range(len(ws)):
            def f(v, k=k):
                return F.layers_of_the_call(ws[:k] + (v,) + ws[k + 1:], x)
            np.testing.assert_allclose(g_ws[k], H.fd_grad(f, (ws[k],), 1e-6), rtol=1e-6,
                                       atol=1e-8)
            assert not np.shares_memory(g_ws[k], ws[k])


@pytest.mark.parametrize("fn, says, quoted", [  # (one case by default: conftest.py)
    (F.method_grows_in_init_loop, "calls `self.add(...)`, which grows the list "
     "`self.terms`, in a loop", "t = Adder([x, 2.0 * x])"),
    (F.init_loop_and_method, "grows the list `self.terms` in a loop where `self` is "
     "also passed on or its method called", "t = Checked([x, 2.0 * x])"),
])
def test_a_list_grown_where_s2s_cannot_hold_it_is_refused_located(fn, says, quoted) -> None:
    """A list field grown in a loop of ``__init__`` through a method, or where
    ``__init__`` also calls a method (a wrong gradient before): refused, located."""
    with pytest.raises(s2s.UnsupportedSyntaxError) as info:
        s2s.grad(fn)(X4)
    text = str(info.value)
    assert says in text and quoted in text and "methods15_fns.py" in text, text


@pytest.mark.slow
@pytest.mark.parametrize("fn, quoted", [
    (F.argument_field_updated, "p.w += np.sin(x)"),
    (F.read_field_updated, "p.w += x"),
    (F.kept_field_updated_in_a_loop, "p.w += x"),
])
def test_an_in_place_update_another_name_would_see_is_refused_located(fn, quoted) -> None:
    """``p.w += v`` where NumPy would change an array the caller's argument, a name
    (``v = p.w``) or a list a later iteration reads also holds: refused, located
    ("augmented assignment into an attribute is not supported" before, for any
    ``p.attr += v``)."""
    with pytest.raises(s2s.UnsupportedSyntaxError) as info:
        s2s.grad(fn)(X4)
    text = str(info.value)
    assert "would change in place the array `p.w` holds" in text and quoted in text \
        and "methods15_fns.py" in text, text


@pytest.mark.parametrize("fn, head, says, quoted", [  # (one case by default)
    (F.setter_writes_in_place, "`Refusing.v`", "`self.w += ...` would change in place",
     "self.w += value"),
    (F.method_with_try, "`Refusing.guarded`", "a `try` around array code only where",
     "y = self.w * x"),
    (F.method_writes_an_item, "`Refusing.stored`", "only a local array can be assigned",
     "self.w[0] = x[0]"),
])
def test_a_refusal_in_a_method_is_in_your_spelling(fn, head, says, quoted) -> None:
    """A refusal inside a method names the method as you wrote it (``Refusing.v``,
    not the function s2s writes, ``Refusing_v``) and says ``self.w`` (not
    ``self['w']``: "`self['w'] += ...`" and "write `self['w'] = self['w'] + ...`"
    before), quoting your line, file and column."""
    with pytest.raises(s2s.UnsupportedSyntaxError) as info:
        s2s.grad(fn)(X4)
    text = str(info.value)
    assert f"s2s cannot transform {head}" in text and says in text and quoted in text, text
    assert "methods15_fns.py" in text and "self['" not in text and "self[\"" not in text
    line = next(ln for ln in text.splitlines() if ln.startswith("  File"))
    number = int(line.split("line ")[1].split(",")[0])
    source = open(F.__file__).read().splitlines()[number - 1]
    column = int(line.split("column ")[1])
    assert source.strip() == quoted or source.strip().startswith(quoted), (source, text)
    # the column is the field's read: the write, or in a `try` the read whose
    # exceptions s2s cannot vet (since frontend/array_try.py, not the assignment)
    assert source[column - 1:].startswith("self.w"), (source, column)
