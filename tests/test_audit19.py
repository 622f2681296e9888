"""Audit 19 (issue 23, objects and methods): what it found, pinned.

An argument object whose class defines a method named as a dict's (``Store.get``)
passed on to a function of yours that calls ``st.get("s")``: s2s ran the dict's
``get`` on the object's fields there (``grad(passed_on)(w, Store(2, 3))`` gave
``2 cos(w)`` where Python's gives ``30 cos(w)``; also through a keyword, ``*args``,
a keyword-only parameter, a constructor, a partial, and the class's own method
calling ``self.get``).  Now refused at the callee's line (api/value_methods.py
follows the object into the functions it is given); a callee that calls no such
method, or an array method of a field (``s.w.sum()``), runs and matches central
differences."""

from __future__ import annotations

import audit19_fns as F
import numpy as np
import pytest
from support import central_grad

import s2s
from s2s.errors import TransformError

W = np.array([0.3, -0.2, 0.5])


@pytest.mark.parametrize("fn, line", [
    (F.passed_on, 'return np.sum(np.sin(w) * st.get("s"))'),
    (F.passed_by_keyword, 'return np.sum(np.sin(w) * st.get("s"))'),
    (F.passed_in_a_tuple, 'return np.sum(np.sin(w) * st.get("s"))'),
    (F.spread_on, 'return np.sum(np.sin(w) * st.get("s"))'),
    (F.own_method_calls_it, 'return self.get("s") * k'),
    (F.given_to_a_constructor, 'self.k = st.get("s")'),
    (F.through_a_partial, 'return np.sum(np.sin(w) * st.get("s"))'),
    (F.through_a_local_name, "return h(w, st)"),
    (F.in_a_nested_function, 'return o.get("s")'),
])
def test_a_class_method_named_as_a_dicts_in_a_callee_is_refused_at_its_line(fn, line):
    st = F.Store(2.0, 3.0)
    runs = [lambda: s2s.grad(fn)(W, st), lambda: s2s.value_and_grad(fn)(W, st),
            lambda: s2s.vmap(fn, in_axes=(0, None))(np.stack([W, -W]), st),
            lambda: s2s.jvp(fn, (W, st), (W, st)), lambda: s2s.vjp(fn, W, st)]
    for run in runs:
        with pytest.raises(TransformError) as err:
            run()
        assert err.value.loc is not None and err.value.loc.file.endswith("audit19_fns.py")
        assert err.value.loc.text.strip() == line, err.value
        assert "<s2s" not in str(err.value)


def test_keyword_passing_is_checked_too() -> None:
    st = F.Store(2.0, 3.0)
    for fn, kw in ((F.passed_on, {"st": st}), (F.keyword_only, {"st": st})):
        with pytest.raises(TransformError) as err:
            s2s.grad(fn)(W, **kw)
        assert "st.get" in err.value.loc.text


def test_a_callee_calling_no_such_method_runs_over_calls() -> None:
    """The class defines ``get`` (``sum``), the callee reads fields only (an array's
    ``sum`` of a field): not refused, Python's number at calls 1, 3 and 10 with the
    object's fields changed by the caller between them."""
    st, s = F.Store(2.0, 3.0), F.Summer(np.array([1.0, 2.0]))
    for call in (1, 3, 10):
        st.t, s.w = 3.0 + call, np.array([1.0, 2.0]) * call
        w = W * (1 + 0.1 * call)
        for fn, obj in ((F.callee_not_calling_it, st), (F.field_method_in_a_callee, s)):
            got = s2s.grad(fn)(w, obj)
            np.testing.assert_allclose(got, central_grad(lambda v: fn(v, obj), w),
                                       rtol=1e-7, atol=1e-9)


def test_a_callee_rebound_between_calls_is_checked_again() -> None:
    """The check's pass is kept per function and argument classes only while the
    names it followed still denote what they did: ``CALLEE`` rebound to a function
    calling ``st.get`` after a first call is refused at the second."""
    st = F.Store(2.0, 3.0)
    g = s2s.grad(F.through_a_rebound_global)
    try:
        np.testing.assert_allclose(g(W, st), central_grad(
            lambda v: F.through_a_rebound_global(v, st), W), rtol=1e-7, atol=1e-9)
        F.CALLEE = F.inner
        with pytest.raises(TransformError) as err:
            g(W, st)
        assert "st.get" in err.value.loc.text
    finally:
        F.CALLEE = F._reads_a_field
