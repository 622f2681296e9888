"""A callee's parameter left at a dataclass default (``def step(w, cfg=Cfg())``
called as ``step(x)`` from a lambda or another function), and defaults the caller
changes between calls.

The forward call of such a callee (``out = f_call(x, f_cfg)``, through the adapter
s2s writes for the call) passed the view of the default's fields emitted code reads
(a dict) to the user's function: ``dataclasses.replace`` raised TypeError from inside
the emitted code, and the second-order and vmap transforms of that code refused
(newcomer probe 11's ``dataclass_replace_cfg``).  The adapter now leaves the
parameter out, as the user's call did (frontend/fnvalues.py).  A default *replaced*
(``f.__defaults__ = (Cfg(lr=0.3),)``) gave the old object's gradient (a wrong number
on main, also for ``s2s.grad(f)`` itself): the callee's default is now a watched
binding (frontend/static.py) and a transform of ``f`` reads the defaults at each call
(api/keyword_trees.py), refusing, located, a default replaced by another class."""

from __future__ import annotations

import defaults19_fns as F
import newcomer_harness as H  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX

import s2s

X = np.array([0.3, -0.7, 1.1])


def _fd(fn, x):
    return H.fd_grad(fn, (x,), 1e-6)


def _close(got, want, rtol=1e-6, atol=1e-8, msg=""):
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=msg)


@pytest.fixture
def restore():
    """Each function's defaults and the default objects' fields, put back."""
    kept = {fn: (fn.__defaults__, [dataclasses_copy(d) for d in fn.__defaults__])
            for fn in (F.step, F.scaled)}
    yield
    for fn, (defaults, fields) in kept.items():
        fn.__defaults__ = defaults
        for d, saved in zip(defaults, fields):
            if saved is not None:
                d.__dict__.update(saved)


def dataclasses_copy(value):
    return dict(value.__dict__) if hasattr(value, "__dataclass_fields__") else None


@pytest.mark.slow
def test_a_lambda_calling_it_changes_in_place_between_calls(restore) -> None:
    """grad, value_and_grad and jit of grad of ``lambda x: step(x)`` (TypeError from
    emitted code before), the default's ``lr`` changed by the caller before calls 1, 3
    and 10, against central differences; the argument is not written."""
    fn = lambda x: F.step(x)  # noqa: E731 - the probe's spelling
    g, vg, jg = s2s.grad(fn), s2s.value_and_grad(fn), s2s.jit(s2s.grad(fn))
    cfg = F.step.__defaults__[0]
    for call in range(1, 11):
        cfg.lr = 0.1 + 0.02 * call * (-1) ** call
        x = X * (1.0 + 0.05 * call)
        before = x.copy()
        got = g(x)
        if call in (1, 3, 10):
            want = _fd(F.step, x)
            _close(got, want, msg=f"call {call}")
            value, grad = vg(x)
            _close(value, F.step(x), rtol=1e-12, atol=0)
            _close(grad, want)
            _close(jg(x), want)
        assert np.array_equal(x, before) and not np.shares_memory(got, x)


@pytest.mark.slow
def test_vmap_of_grad_and_hessian_of_a_lambda(restore) -> None:
    """vmap of grad and hessian of ``lambda x: step(x)`` (refused before: the emitted
    gradient passed the fields' view on), against central differences per example and
    of the gradient; the default's fields changed in place between the calls."""
    fn = lambda x: F.step(x)  # noqa: E731
    vg, hess = s2s.vmap(s2s.grad(fn)), s2s.hessian(fn)
    cfg = F.step.__defaults__[0]
    for lr in (0.1, 0.25):
        cfg.lr = lr
        batch = np.stack([X, -0.8 * X])
        _close(vg(batch), np.stack([_fd(F.step, b) for b in batch]))
        _close(hess(X), H.fd_jacobian(lambda v: _fd(F.step, v), X, 1e-4), rtol=1e-4,
               atol=1e-5)


@pytest.mark.slow
def test_a_caller_and_keywords_after_the_left_default(restore) -> None:
    """``2 * step(x) + ...`` and ``scaled(x, scale=-0.5)``, whose adapter leaves
    ``cfg`` out and passes ``scale`` by keyword: grad and jvp against central
    differences, float32 too."""
    for fn in (F.caller, F.keyword_after):
        for dtype, rtol in ((np.float64, 1e-6), (np.float32, 2e-3)):
            x = X.astype(dtype)
            got = s2s.grad(fn)(x)
            assert got.dtype == dtype
            _close(got, _fd(fn, X), rtol=rtol, atol=rtol * 1e-2, msg=f"{fn.__name__}")
            t = np.cos(np.arange(3.0)).astype(dtype)
            _, tangent = s2s.jvp(fn, (x,), (t,))
            _close(tangent, np.dot(_fd(fn, X), t), rtol=rtol, atol=rtol * 1e-2)


@pytest.mark.slow
def test_a_replaced_default_is_read_at_the_next_call(restore) -> None:
    """``f.__defaults__ = (Cfg(lr=0.3, steps=1),)`` after a call: grad of ``step``
    itself, of a lambda and of a caller, jit of grad and vmap of grad give the new
    object's gradient (each gave the old one's: a wrong number on main)."""
    fn = lambda x: F.step(x)  # noqa: E731
    made = [s2s.grad(F.step), s2s.grad(fn), s2s.jit(s2s.grad(F.step)),
            s2s.vmap(s2s.grad(fn))]
    caller = s2s.grad(F.caller)
    for new in (None, F.Cfg(lr=0.3, steps=1), F.Cfg(lr=0.05, decay=0.5)):
        if new is not None:
            F.step.__defaults__ = (new,)
        want = _fd(F.step, X)
        for g in made[:3]:
            _close(g(X), want, msg=f"default {new}")
        _close(made[3](X[None])[0], want)
        _close(caller(X), _fd(F.caller, X))


def test_the_default_tiers_share(restore) -> None:
    """The default tier's check (the slow tests run the rest): grad of ``lambda x:
    step(x)`` (TypeError from emitted code on main) and of ``step`` after its default
    is replaced (the old object's gradient on main), against central differences."""
    fn = lambda x: F.step(x)  # noqa: E731
    g, gf = s2s.grad(fn), s2s.grad(F.step)
    _close(g(X), _fd(F.step, X))
    _close(gf(X), _fd(F.step, X))
    F.step.__defaults__ = (F.Cfg(lr=0.3, steps=1),)
    _close(g(X), _fd(F.step, X))
    _close(gf(X), _fd(F.step, X))


@pytest.mark.slow
def test_a_default_replaced_by_another_class(restore) -> None:
    """A default replaced by an object of another class (``Doubled``, whose
    ``__post_init__`` ``replace`` runs): a caller's transform generates again and
    matches central differences; a transform of ``step`` itself, made for a ``Cfg``,
    refuses, located at the ``def`` (it ran the Cfg code on the new object), and one
    made again runs."""
    g, caller = s2s.grad(F.step), s2s.grad(F.caller)
    _close(g(X), _fd(F.step, X))
    F.step.__defaults__ = (F.Doubled(lr=0.1),)
    _close(caller(X), _fd(F.caller, X))
    with pytest.raises(s2s.TransformError) as err:
        g(X)
    assert err.value.loc is not None and "def step(w, cfg=Cfg())" in err.value.loc.text
    _close(s2s.grad(F.step)(X), _fd(F.step, X))


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", ["step", "caller", "keyword_after"])
def test_against_jax(name, dtype) -> None:
    """Every stage the newcomer probes check (grad at calls 1, 3, 10, value_and_grad,
    jvp, vmap of grad, hessian, jit of grad on both backends, the caller writing into
    the results) against JAX on the same source."""
    probe = H.Probe(F, {name: ((X,), {"zeros": np.zeros(3)})},
                    ("grad", "value_and_grad", "jvp", "vmap_grad", "hessian", "jit",
                     "jit_jax", "special", "vmap_special", "alias_all"))
    label, verdicts = H.classify(probe, name, H.twin(F), dtype)
    assert label == "ok", verdicts
