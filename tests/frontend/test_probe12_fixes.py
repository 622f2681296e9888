"""Issue 23, probe 12 (tests/frontend/newcomer_probe12_fns.py): forms s2s refused where
JAX (or Python) runs them, made to run (tests/frontend/probe12_fix_fns.py): a
``types.SimpleNamespace`` config as a default (of the transformed function or a callee)
or passed, read as a dataclass's fields; an assignment unpacking into attributes or
items (``self.lr, self.beta = lr, beta``, ``y[0], y[1] = y[1], y[0]``), lowered as
unpacking into fresh names then one write per element, as Python orders it.  Each
against central differences at changing values (no JAX); the probe's slow sweep runs the
probe's functions against JAX."""

from __future__ import annotations

import types

import numpy as np
import probe12_fix_fns as F
import pytest
from newcomer_harness import fd_grad

import s2s

X4 = np.array([0.3, -0.7, 0.45, 1.2])


def _calls(f, xs, *rest, tol=(1e-6, 1e-8)):
    g = s2s.grad(f)
    for x in xs:
        np.testing.assert_allclose(g(x, *rest), fd_grad(f, (x, *rest), 1e-6), *tol)


def test_namespace_default_read_at_each_call() -> None:
    """``cfg=types.SimpleNamespace(lr=0.1, steps=3)`` was refused ("`.steps` is not an
    attribute of NumPy arrays"); it is read as a dataclass default's fields, at each
    call: the default changed in place (``steps``: the loop's length; ``lr``) is seen.
    Against central differences, before and after the change; a namespace passed
    explicitly too."""
    f = F.namespace_default
    cfg = f.__defaults__[0]
    saved = dict(vars(cfg))
    try:
        _calls(f, [X4, X4 * 1.3])
        cfg.steps, cfg.lr = 5, 0.3
        _calls(f, [X4])
    finally:
        vars(cfg).update(saved)
    _calls(f, [X4], types.SimpleNamespace(lr=0.2, steps=2, wd=0.0))


@pytest.mark.slow  # (the default tier's budget)
def test_namespace_callee_default_under_transforms() -> None:
    """A callee's ``SimpleNamespace`` default: grad, jit of grad, vmap of grad."""
    f = F.namespace_callee_default
    _calls(f, [X4, -X4])
    np.testing.assert_allclose(s2s.jit(s2s.grad(f))(X4), fd_grad(f, (X4,), 1e-6), 1e-6, 1e-8)
    np.testing.assert_allclose(s2s.vmap(s2s.grad(f))(np.stack([X4, -X4]))[1],
                               fd_grad(f, (-X4,), 1e-6), 1e-6, 1e-8)


def test_unpack_into_attributes_and_items() -> None:
    """``self.a, self.b = a * 2.0, b`` in ``__init__`` (nested too) and ``p.a, p.b = p.b,
    p.a`` were refused ("only names can be unpacked into"); ``y[0], y[1] = y[1], y[0] *
    3.0`` of an array's elements and ``d["u"], d["v"] = ...`` of a dict's items too.
    The right side is read whole before any element is written (a swap swaps).  grad
    at two points and vmap of grad against central differences."""
    for f in (F.unpack_into_attributes, F.unpack_into_items):
        _calls(f, [X4, X4 * -0.8])
        np.testing.assert_allclose(s2s.vmap(s2s.grad(f))(np.stack([X4, -X4]))[1],
                                   fd_grad(f, (-X4,), 1e-6), 1e-6, 1e-8)


def test_swap_of_row_views_is_refused_located() -> None:
    """``y[0], y[1] = y[1], y[0]`` of a 2-D array's rows: NumPy's right side holds views,
    so the second write copies the new row 0 (both rows end as the old row 1); s2s
    refuses it at the user's line (the view would hold the new values), never a swap."""
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(F.swap_rows_views)(np.arange(4.0).reshape(2, 2))
    assert info.value.loc is not None and info.value.loc.line > 0
    assert "y[0], y[1] = y[1], y[0]" in str(info.value)


def test_tuple_of_a_generator_over_callee_parameters() -> None:
    """``tuple(a + h * b for a, b in zip(s, k))`` in a callee given tuples (RK4's
    ``axpy`` over a tuple state) was refused ("generator expressions over array values
    are not supported": the parameters' lengths are not known where the callee is
    normalized); it is the list comprehension (a list grown in a loop), then
    ``tuple(...)`` of it, as a ``for`` loop appending would be.  ``list(...)`` of one
    likewise.  grad at two points and vmap of grad against central differences."""
    f = F.tuple_of_generator_in_callee
    x3 = X4[:3]
    _calls(f, [x3, -1.3 * x3])
    np.testing.assert_allclose(s2s.vmap(s2s.grad(f))(np.stack([x3, -x3]))[1],
                               fd_grad(f, (-x3,), 1e-6), 1e-6, 1e-8)


def test_array_of_a_nested_comprehension() -> None:
    """``np.array([[np.sum(m[i:i+2, j:j+2] * k) for j in ...] for i in ...])`` (a 2-D
    convolution by comprehension) was refused ("`array` reads a list whose items are
    containers, not arrays"); each row is made an array first (``np.array([np.array(
    [...]) for i in ...])``, NumPy's values), three levels deep and with ``dtype=`` too.
    grad at two points and vmap of grad against central differences; a float32 input's
    gradient stays float32."""
    f = F.nested_comprehension_array
    m = np.array([[0.3, -0.7, 0.45, 1.2], [0.1, 0.5, -0.4, 0.9], [-1.1, 0.2, 0.6, -0.3]])
    _calls(f, [m, -0.6 * m])
    np.testing.assert_allclose(s2s.vmap(s2s.grad(f))(np.stack([m, -m]))[1],
                               fd_grad(f, (-m,), 1e-6), 1e-6, 1e-8)
    assert s2s.grad(f)(m.astype(np.float32)).dtype == np.float32


def test_starred_constant_one_argument_where_dict_spread() -> None:
    """``w0, *ws = WS`` of a module's tuple of weights ("this starred unpacking is not
    supported": the tuple read as a literal of its items), ``np.where(mask)`` with one
    argument (refused: "missing a required argument: 'x'"; it is ``np.nonzero(mask)``),
    ``dict(lr=0.1, **{"wd": 0.01})`` ("`dict` is a class": the literal ``{"lr": 0.1,
    **{...}}``; a key given twice, Python's TypeError, stays refused).  grad at two points
    against central differences."""
    _calls(F.starred_constant_where_dict_spread, [X4, -0.7 * X4])

    def twice(x):
        return np.sum(x) * dict(a=2.0, **{"a": 3.0})["a"]
    with pytest.raises(s2s.TransformError):
        s2s.grad(twice)(X4)


def test_string_field_set_by_unpacking() -> None:
    """``self.kind, self.scale = kind, scale`` with a string ``kind`` (decided when the
    code is made): the constructor's copy with ``kind`` written in counted ``kind`` as a
    name the body rebinds (an attribute's name read as one), so the call left it out and
    the copy still asked for it ("missing a required argument: 'kind'").  grad at two
    points against central differences."""
    _calls(F.string_field_by_unpacking, [X4, -0.9 * X4])
