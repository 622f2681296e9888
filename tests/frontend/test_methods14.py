"""Issue 23: your class's methods changing the object (s2s/frontend/number_fields.py,
object_setters.py): ``self.steps += 1`` of a field only ever a Python number (in a
setter, a method, ``__init__``), ``p.bump(v)`` as a statement of an object the
function built, ``self.terms.append(v)`` in ``__init__`` of a list it built there;
refused, located, where an array another name holds would change in place.

The sweep (``-m slow``) runs methods14_fns.py's functions through grad at calls 1, 3
and 10, value_and_grad, jvp, vmap of grad, jit of grad on NumPy and on JAX, grad at
special inputs and the aliasing check, in float64 and float32, against JAX on the
same source (``newcomer_harness.twin``).  The default tier checks two functions
against central differences at changing values, the refusals and aliasing."""

from __future__ import annotations

import methods14_fns as F
import newcomer_harness as H  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX

import s2s

X4 = np.array([0.3, -0.7, 0.45, 1.2])

CASES = {
    "setter_counts": ((X4,), {"zeros": np.zeros(4)}),
    "method_counts": ((X4,), {"zeros": np.zeros(4)}),
    "init_appends_terms": ((X4,), {"zeros": np.zeros(4)}),
    "method_statement": ((X4,), {"zeros": np.zeros(4)}),
    "init_concatenates_terms": ((X4,), {"zeros": np.zeros(4)}),
    "number_field_set_by_the_function": ((X4,), {"zeros": np.zeros(4)}),
}
PROBE = H.Probe(F, CASES, ("grad", "value_and_grad", "jvp", "vmap_grad", "jit",
                           "jit_jax", "special", "alias"), tol64=(1e-6, 1e-8))


@pytest.mark.slow
@pytest.mark.every_case
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", list(CASES))
def test_methods_against_jax(name, dtype) -> None:
    label, verdicts = H.classify(PROBE, name, H.twin(F), dtype)
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


def test_a_setter_updates_a_number_field_in_place() -> None:
    """A setter's ``self.steps += 1`` and ``self.scale *= 0.5`` (fields only ever a
    Python number: "`self['steps'] += ...` would change in place an array ..."
    before): grad at calls 1, 3 and 10 against central differences, never sharing
    the argument."""
    _against_differences("setter_counts")


@pytest.mark.slow  # (~1 s of CPU for method_counts; the default tier keeps the above)
@pytest.mark.parametrize("name", ["method_counts", "init_appends_terms",
                                  "method_statement", "init_concatenates_terms",
                                  "number_field_set_by_the_function"])
def test_methods_against_differences(name) -> None:
    """``self.calls += 1`` in ``__init__`` and ``self.calls -= 1`` in a method called
    as a statement (``t.advance(x)``: "an expression statement is evaluated only for
    its side effect" before); ``self.terms.append`` in ``__init__`` (refused before;
    ``self.terms = self.terms + [v]`` written so gave a wrong gradient: the
    concatenation differentiated as an array's ``+``); ``p.bump(v)`` as a
    statement."""
    _against_differences(name)


@pytest.mark.parametrize("fn, says, quoted", [  # (one case by default: conftest.py)
    (F.array_field_updated_in_place, "would change in place an array",
     "self.w += value"),
    (F.number_field_set_to_array, "as a Python number, and this value may be an array",
     "p.steps = x"),
    (F.init_append_aliased, "another field or name holds too",  # (was: "evaluated
     "self.terms.append(x)"),  # only for its side effect", the message of before)
    (F.passed_object_bumped, "evaluated only for its side effect", "p.bump(x)"),
    (F.held_object_bumped, "holds it too", "p.bump(x)"),
])
def test_a_change_another_name_would_see_is_refused_located(fn, says, quoted) -> None:
    """Where Python would change an array or list another name holds (a field holding
    the caller's array, a field the class counts as a number set to an array, a list
    field another field holds, an object the caller passed or a list holds): refused
    at the user's line."""
    args = (F.Bumped(X4), X4) if fn is F.passed_object_bumped else (X4,)
    with pytest.raises(s2s.UnsupportedSyntaxError) as info:
        s2s.grad(fn, argnums=len(args) - 1)(*args)
    text = str(info.value)
    assert says in text and quoted in text and "methods14_fns.py" in text, text
