"""Issue 23: model classes as people write them, after methods15 (its list of what
it left): lists grown by two loops (``ir/unroll_chains.py``), a loop over a list
field in the function itself, a ``@property`` setter pair, a method returning a new
object of its class, in-place adds of float32 fields keeping float32.

The sweep (``-m slow``) runs methods16_fns.py's functions through grad at calls 1, 3
and 10, value_and_grad, jvp, vmap of grad, hessian, jit of grad on NumPy and on JAX,
and the aliasing check, float64 and float32, against JAX on the same source
(``newcomer_harness.twin``).  The default tier checks the wrong gradient fixed (a method growing a list field)
against central differences and its loop's refusal; the other tests, against central
differences too, run in the slow tier (the default tier's time is CI's)."""

from __future__ import annotations

import methods16_fns as F
import newcomer_harness as H  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX

import s2s

X4 = np.array([0.3, -0.7, 0.45, 1.2])
STAGES = ("grad", "value_and_grad", "jvp", "vmap_grad", "hessian", "jit", "jit_jax",
          "alias")
CASES = {name: ((X4,), {}) for name in (
    "two_loops_appending", "two_loops_in_init", "appended_then_walked",
    "two_loops_then_walked", "loop_over_layers", "loop_over_literal_layers",
    "loop_over_terms", "property_added_in_place", "property_read_by_name",
    "new_object_of_its_class", "method_grows_a_list")}
PROBE = H.Probe(F, CASES, STAGES, tol64=(1e-6, 1e-8))


@pytest.mark.slow
@pytest.mark.every_case
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", [*CASES])
def test_methods16_against_jax(name, dtype) -> None:
    label, verdicts = H.classify(PROBE, name, H.twin(F), dtype)
    assert label == "ok", verdicts


def _against_differences(fn, calls=(1, 3, 10)) -> None:
    g = s2s.grad(fn)
    for call in range(1, 13):
        x = X4 * (1.0 + 0.07 * call * (-1) ** call)
        got = g(x)
        if call in calls:
            np.testing.assert_allclose(got, H.fd_grad(fn, (x,), 1e-6), rtol=1e-6,
                                       atol=1e-8)
        assert not np.shares_memory(got, x)


@pytest.mark.slow
def test_two_loops_appending_to_one_list() -> None:
    """Two unrolled loops appending to one list, then ``out[4]`` (refused before: "index
    4 is out of range for a list of length 3": the second loop's appends were read as
    the first's list), and a list grown by appends walked by ``for v in out`` (refused
    before: "a tuple, list or dict argument can only be indexed with a constant key")."""
    _against_differences(F.two_loops_appending)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["two_loops_in_init", "appended_then_walked",
                                  "two_loops_then_walked"])
def test_grown_lists_against_differences(name) -> None:
    _against_differences(getattr(F, name))


@pytest.mark.slow
def test_a_loop_over_a_list_field_in_the_function() -> None:
    """``for l in net.layers: h = l(h)`` in the function itself, ``net`` built there
    with its layers appended in a loop of ``__init__`` (refused before: "a tuple, list
    or dict argument can only be indexed with a constant key", though no argument is
    indexed): the loop unrolls for the list the constructor returns."""
    _against_differences(F.loop_over_layers, calls=(1, 10))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["loop_over_literal_layers", "loop_over_terms"])
def test_loops_over_list_fields_against_differences(name) -> None:
    _against_differences(getattr(F, name))


@pytest.mark.slow
def test_a_property_setter_pair_added_in_place() -> None:
    """``p.w += v`` where ``w`` is a ``@property`` with a setter whose getter returns a
    field only ``p`` holds (refused before: "would change in place the array"), and
    ``v = p.w`` / ``d = p.doubled`` of a property bound to a name (refused before: "`v`
    is a function here, used as a value"): central differences."""
    _against_differences(F.property_added_in_place, calls=(1, 10))
    _against_differences(F.property_read_by_name, calls=(3,))


@pytest.mark.slow
@pytest.mark.parametrize("fn, spelled", [
    (F.property_added_into_a_shared_array, "p.w += ..."),
    (F.property_added_in_a_loop, "p.w += ..."),
])
def test_a_property_added_into_an_array_another_name_holds_is_refused(fn, spelled) -> None:
    """NumPy's ``p.w += v`` adds into the array the getter returns (``self._w``):
    where another name holds it (``w0``), refused, located, in your spelling (``p.w``,
    never the field behind it: a loop's refusal said `p._w`)."""
    with pytest.raises(s2s.UnsupportedSyntaxError) as info:
        s2s.grad(fn)(X4)
    text = str(info.value)
    assert f"`{spelled}` would change in place" in text and "_w" not in text, text
    assert "methods16_fns.py" in text and "p.w += x" in text, text


@pytest.mark.slow
def test_a_method_returning_a_new_object_of_its_class() -> None:
    """``type(self)(v, self.b)`` and ``self.__class__(...)`` in a method (refused
    before: "this expression cannot be resolved when transforming", and "the array
    method `.__class__()`"), and the object a method returns called at once,
    ``Affine(x, 0.1).with_w(v)(x)`` (refused: "call functions by name")."""
    _against_differences(F.new_object_of_its_class, calls=(1, 10))


def test_a_method_growing_a_list_field() -> None:
    """``g.grow(v)`` as a statement, ``grow`` doing ``self.terms = self.terms +
    [np.sin(v)]``: a WRONG gradient before (the `+` of the field's list and ``[v]``
    read as NumPy's add in the method's derivative: ``[9.77, 8.18, -4.16, -2.83]``
    where central differences give ``[14.41, 5.51, 2.36, 1.50]`` at X4; jvp raised
    IndexError): the method's ``self`` is the record of its fields, a list field's
    ``+`` Python's concatenation (transforms/list_operands.py)."""
    _against_differences(F.method_grows_a_list, calls=(1, 10))


def test_a_method_growing_a_list_in_a_loop_is_refused_in_your_names() -> None:
    """The same method called in a loop: refused, located at the loop, naming
    ``g.terms`` (it said `g_terms`, an internal name, "changes structure ... an array
    after it") and what to write instead."""
    for transform in (s2s.grad, lambda f: (lambda x: s2s.jvp(f, (x,), (x,)))):
        with pytest.raises(s2s.TransformError) as info:
            transform(F.method_grows_a_list_in_a_loop)(X4)
        text = str(info.value)
        assert "`g.terms` is a list a method called in this loop grows" in text, text
        assert "g_terms" not in text and "for i in range(3):" in text, text


A3 = np.eye(4) * 0.5 + 0.1
B3 = np.ones((4, 4)) * 0.3


def _nets(s: float) -> list:
    return [F.NetT([F.DenseT(A3 * s, 0.1 * np.ones(4)), F.DenseT(B3, -0.2 * s * np.ones(4))]),
            F.NetT([F.DenseT(A3, 0.1 * np.ones(4)), F.DenseT(B3 * s, np.ones(4)),
                    F.DenseT(A3 * s, np.zeros(4))])]


def _net_differences(fn, net, x, eps=1e-6) -> list:
    """Central differences of ``fn`` in each leaf of ``net``'s layers."""
    out = []
    for k, layer in enumerate(net.layers):
        for field in layer._fields:
            v = getattr(layer, field)
            g = np.zeros_like(v)
            for i in np.ndindex(v.shape):
                e = np.zeros_like(v)
                e[i] = eps
                at = [net._replace(layers=[*net.layers[:k], layer._replace(**{field: v + d}),
                                           *net.layers[k + 1:]]) for d in (e, -e)]
                g[i] = (fn(at[0], x) - fn(at[1], x)) / (2 * eps)
            out.append(g)
    return out


@pytest.mark.slow
def test_a_loop_over_a_list_field_of_an_argument() -> None:
    """``for l in net.layers: h = l(h)`` with ``net`` a NamedTuple argument holding
    NamedTuple layers (refused before: "`l` is a value in this function ... pass a
    function (not an object)"): the transform is made per call's classes of the
    items; grad in ``x`` and in ``net`` against central differences, two and three
    layers alternating over calls; the argument never changed."""
    fn = F.loop_over_argument_layers
    gx, gnet = s2s.grad(fn, argnums=1), s2s.grad(fn, argnums=0)
    for call in (1, 2, 5):
        s = 1.0 + 0.1 * call
        for net in _nets(s):
            x = X4 * s
            before = [np.copy(v) for layer in net.layers for v in layer]
            np.testing.assert_allclose(gx(net, x), H.fd_grad(lambda v: fn(net, v), (x,),
                                                             1e-6), rtol=1e-6, atol=1e-8)
            got = [v for layer in gnet(net, x).layers for v in layer]
            for a, b in zip(got, _net_differences(fn, net, x)):
                np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8)
            assert all(np.array_equal(a, b) for a, b in zip(
                [v for layer in net.layers for v in layer], before))


@pytest.mark.slow
def test_items_of_several_classes_by_a_loop_index_are_refused_located() -> None:
    """A list field whose items are of different classes, called by a loop's item:
    refused at the call, saying why; by constant indexes it runs."""
    net = F.NetT([F.DenseT(A3, np.ones(4)), F.SineT(B3, np.ones(4))])
    with pytest.raises(s2s.UnsupportedSyntaxError) as info:
        s2s.grad(F.loop_over_argument_layers, argnums=1)(net, X4)
    text = str(info.value)
    assert "objects are of different classes" in text and "h = l(h)" in text, text
    fn = F.argument_layers_by_index
    np.testing.assert_allclose(s2s.grad(fn, argnums=1)(net, X4), H.fd_grad(
        lambda v: fn(net, v), (X4,), 1e-6), rtol=1e-6, atol=1e-8)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="the JAX backend")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_argument_layers_under_every_transform(dtype) -> None:
    """jvp, vmap of grad (``net`` unbatched), hessian in ``x``, s2s.jit of grad on
    both backends: against central differences and grad, float64 and float32."""
    fn = F.loop_over_argument_layers
    tol = dict(rtol=1e-6, atol=1e-8) if dtype == np.float64 else dict(rtol=2e-3, atol=2e-4)
    for net in _nets(1.1):
        net = F.NetT([F.DenseT(*(v.astype(dtype) for v in layer)) for layer in net.layers])
        x = X4.astype(dtype)
        g = s2s.grad(fn, argnums=1)(net, x)
        want = H.fd_grad(lambda v: fn(net, v), (x.astype(np.float64),), 1e-6)
        np.testing.assert_allclose(g, want, **tol)
        assert g.dtype == dtype
        t = np.cos(np.arange(4.0)).astype(dtype)
        zero = F.NetT([F.DenseT(*(np.zeros_like(v) for v in layer)) for layer in net.layers])
        _, tangent = s2s.jvp(fn, (net, x), (zero, t))
        np.testing.assert_allclose(tangent, want @ t, **tol)
        xs = np.stack([x, x * dtype(0.5)])
        batched = s2s.vmap(s2s.grad(fn, argnums=1), in_axes=(None, 0))(net, xs)
        np.testing.assert_allclose(batched[0], g, **tol)
        hess = s2s.hessian(fn, argnums=1)(net, x)
        np.testing.assert_allclose(hess @ t, (s2s.grad(fn, argnums=1)(net, x + 1e-4 * t) - s2s.grad(
            fn, argnums=1)(net, x - 1e-4 * t)) / 2e-4, rtol=1e-3, atol=1e-3)
        for backend in ("numpy", "jax"):
            jitted = s2s.jit(s2s.grad(fn, argnums=1), backend=backend)
            np.testing.assert_allclose(np.asarray(jitted(net, x)), g, **tol)
