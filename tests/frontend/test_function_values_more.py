"""Functions as values with a sound meaning that s2s refused before (issue 23, item 3):
a function bound in a loop body and read after the loop (the last iteration's, with
the values it closes over as that iteration left them; Python's UnboundLocalError,
located, after a loop that ran no iteration), and a loop calling the function a name
denoted before it and then binding the name again (iteration 1 calls the old
function, later ones the new one).

Every expected value comes from JAX on the same source (``jax_twin``: JAX unrolls the
Python loops over the int ``n``), float64 and float32; ``n`` is 0, 1, 3 and 10, and
changes between the 1st, 3rd and 10th call of one transformed function.  Each
parametrized sweep runs a sample of its cases by default (tests/conftest.py); -m slow
runs all."""

from __future__ import annotations

import inspect

import fnvalue_more_fns as F  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX, jax_twin

import s2s
from s2s.errors import UnboundFunctionError

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)

LOOPS = ["lambda_after_loop", "def_after_loop", "bound_before_the_loop_too",
         "lambda_after_while", "captured_name_rebound_after", "after_a_constant_loop",
         "passed_on_after_the_loop", "rebound_in_the_loop",
         "rebound_lambda_reading_the_body", "rebound_def_in_a_while", "callee_of_all"]
# (a loop that may run no iteration, and nothing bound the name before it)
UNBOUND_AT_ZERO = {"lambda_after_loop", "def_after_loop", "lambda_after_while",
                   "captured_name_rebound_after", "passed_on_after_the_loop",
                   "callee_of_all"}

X = np.array([0.3, -0.7, 1.2, 0.4])
V = np.array([1.0, -2.0, 0.5, 0.25])
BATCH = np.array([[0.3, -0.7, 1.2, 0.4], [0.1, 0.4, -0.9, 0.2], [-0.5, 0.6, 0.2, 1.1]])
DTYPES = [np.float64, np.float32]


def tol(dtype):
    return dict(rtol=1e-9, atol=1e-11) if dtype == np.float64 else dict(rtol=2e-4, atol=2e-5)


def close(got, expected, dtype):
    got_leaves = jax.tree_util.tree_leaves(got)
    expected_leaves = jax.tree_util.tree_leaves(expected)
    assert len(got_leaves) == len(expected_leaves)
    for g, e in zip(got_leaves, expected_leaves):
        assert np.shape(g) == np.shape(e), (np.shape(g), np.shape(e))
        if np.ndim(g):
            assert np.asarray(g).dtype == np.asarray(e).dtype, (np.asarray(g).dtype,
                                                                np.asarray(e).dtype)
        np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(e, np.float64),
                                   **tol(dtype))


def at(fn, n):
    """``fn`` with its trip count ``n`` fixed (for jvp, the Jacobians)."""
    return lambda y: fn(y, n)


TRANSFORMS = {
    "grad": lambda f, x, n: s2s.grad(f)(x, n),
    "value_and_grad": lambda f, x, n: s2s.value_and_grad(f)(x, n),
    "vjp": lambda f, x, n: (lambda out, pull: (out, pull(np.ones_like(out))))(
        *s2s.vjp(at(f, n), x)),
    "jvp": lambda f, x, n: s2s.jvp(at(f, n), (x,), (V.astype(x.dtype),)),
    "jacfwd": lambda f, x, n: s2s.jacfwd(f)(x, n),
    "jacrev": lambda f, x, n: s2s.jacrev(f)(x, n),
    "hessian": lambda f, x, n: s2s.hessian(f)(x, n),
    "vmap": lambda f, x, n: s2s.vmap(f, in_axes=(0, None))(BATCH.astype(x.dtype), n),
    "vmap_grad": lambda f, x, n: s2s.vmap(s2s.grad(f), in_axes=(0, None))(
        BATCH.astype(x.dtype), n),
    "jit": lambda f, x, n: s2s.jit(f)(x, n),
    "jit_grad": lambda f, x, n: s2s.jit(s2s.grad(f))(x, n),
}
ORACLE = {
    "grad": lambda f, x, n: jax.grad(f)(x, n),
    "value_and_grad": lambda f, x, n: jax.value_and_grad(f)(x, n),
    "vjp": lambda f, x, n: (lambda out, pull: (out, pull(np.ones_like(out))))(
        *jax.vjp(at(f, n), x)),
    "jvp": lambda f, x, n: jax.jvp(at(f, n), (x,), (V.astype(x.dtype),)),
    "jacfwd": lambda f, x, n: jax.jacfwd(f)(x, n),
    "jacrev": lambda f, x, n: jax.jacrev(f)(x, n),
    "hessian": lambda f, x, n: jax.hessian(f)(x, n),
    "vmap": lambda f, x, n: jax.vmap(f, in_axes=(0, None))(BATCH.astype(x.dtype), n),
    "vmap_grad": lambda f, x, n: jax.vmap(jax.grad(f), in_axes=(0, None))(
        BATCH.astype(x.dtype), n),
    "jit": lambda f, x, n: f(x, n),
    "jit_grad": lambda f, x, n: jax.grad(f)(x, n),
}


# (the callee of all of them compiles every twin: -m slow runs it)
HEAVY = [pytest.param(n, marks=pytest.mark.slow) if n == "callee_of_all" else n
         for n in LOOPS]


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
@pytest.mark.parametrize("name", HEAVY)
def test_against_jax(name, transform, dtype) -> None:
    """One transformed function called with n = 3, 1, 6 (calls 1 to 3: generic,
    specialized, fast path) and 2: against JAX, which unrolls each."""
    ours, theirs = getattr(F, name), getattr(J, name)
    made = {  # (one transformed function for every call, where the API allows)
        "vmap": s2s.vmap(ours, in_axes=(0, None)),
        "vmap_grad": s2s.vmap(s2s.grad(ours), in_axes=(0, None))}
    for call, n in enumerate((3, 1, 6, 2)):
        x = (X * (1.0 + 0.1 * call)).astype(dtype)
        if transform in ("grad", "value_and_grad", "jacfwd", "jacrev", "hessian", "jit"):
            fn = made.setdefault(transform, getattr(s2s, transform)(ours))
            got = fn(x, n)
        elif transform in made:
            got = made[transform](BATCH.astype(dtype), n)
        else:
            got = TRANSFORMS[transform](ours, x, n)
        close(got, ORACLE[transform](theirs, x, n), dtype)


@pytest.mark.parametrize("name", ["lambda_after_loop", "rebound_lambda_reading_the_body"] + [
    pytest.param(n, marks=pytest.mark.slow) for n in LOOPS if n not in (
        "lambda_after_loop", "rebound_lambda_reading_the_body")])
def test_ten_calls_changing_n(name) -> None:
    """Calls 1 to 10 of one gradient, ``n`` changing (0 where the name was bound
    before the loop), ``x`` too."""
    g = s2s.grad(getattr(F, name))
    for call, n in enumerate((2, 5, 1, 3, 10, 2, 1, 4, 3, 10)):
        if name not in UNBOUND_AT_ZERO and call in (3, 7):
            n = 0
        x = X * (1.0 + 0.05 * call)
        close(g(x, n), jax.grad(getattr(J, name))(x, n), np.float64)


@pytest.mark.parametrize("name", LOOPS)
def test_a_loop_that_ran_no_iteration(name) -> None:
    """n = 0 between calls of one transformed function: Python's UnboundLocalError
    where nothing bound the name before the loop (located at the read, naming the
    loop), else the function bound before it; the next call runs again."""
    g, vg = s2s.grad(F.__dict__[name]), s2s.value_and_grad(F.__dict__[name])
    theirs = getattr(J, name)
    for n in (2, 0, 3, 0, 1):
        x = X * (1.0 + 0.1 * n)
        if n == 0 and name in UNBOUND_AT_ZERO:
            with pytest.raises(UnboundLocalError):
                jax.grad(theirs)(x, n)
            fn = getattr(F, name)
            for run in (lambda: g(x, n), lambda: vg(x, n), lambda: s2s.jvp(
                    at(fn, n), (x,), (V,)), lambda: s2s.vmap(fn, in_axes=(0, None))(BATCH, n),
                    lambda: s2s.jacfwd(fn)(x, n)):
                with pytest.raises(UnboundLocalError) as info:
                    run()
                assert isinstance(info.value, NameError)
                if name != "callee_of_all":  # (a callee: Python's own error, its line)
                    _located(info.value, fn)
            # (these run the function as Python first: Python's own error)
            for run in (lambda: s2s.jit(fn)(x, n), lambda: s2s.hessian(fn)(x, n),
                        lambda: s2s.jacrev(fn)(x, n)):
                with pytest.raises(UnboundLocalError):
                    run()
            continue
        close(g(x, n), jax.grad(theirs)(x, n), np.float64)
        close(vg(x, n), jax.value_and_grad(theirs)(x, n), np.float64)


def _located(err, fn) -> None:
    message = str(err)
    lines, first = inspect.getsourcelines(fn)
    read = first + max(i for i, text in enumerate(lines) if "return" in text)
    loop = first + next(i for i, text in enumerate(lines) if text.strip().startswith(
        ("for ", "while ")))
    assert isinstance(err, UnboundFunctionError), type(err)
    assert f'File "{F.__file__}", line {read}' in message, message
    assert f"loop on line {loop}, which ran no iteration" in message, message
    assert "Instead:" in message and "<s2s:" not in message, message


@pytest.mark.parametrize("name", ["lambda_after_loop", "rebound_def_in_a_while"] + [
    pytest.param(n, marks=pytest.mark.slow) for n in (
        "def_after_loop", "bound_before_the_loop_too", "lambda_after_while",
        "rebound_in_the_loop", "rebound_lambda_reading_the_body", "callee_of_all")])
def test_jit_on_the_jax_backend(name) -> None:
    """s2s.jit(backend="jax") with ``n`` static (JAX too needs a concrete trip count):
    the loop binding a function stays Python there; against jax.jit of the twin."""
    ours, theirs = getattr(F, name), getattr(J, name)
    for n in (3, 2):
        close(s2s.jit(ours, backend="jax", static_argnums=1)(X, n),
              jax.jit(theirs, static_argnums=1)(X, n), np.float64)
        close(s2s.jit(s2s.grad(ours), backend="jax", static_argnums=1)(X, n),
              jax.grad(theirs)(X, n), np.float64)


def test_jit_on_the_jax_backend_one_iteration() -> None:
    """A loop of one iteration whose tape rows were stacked for lax.scan: the carried
    flag, False in every row, came back to the backward's `if flag:` as the scan's
    marker for a shared Python value, always true (a silently wrong gradient)."""
    close(s2s.jit(s2s.grad(F.rebound_def_in_a_while), backend="jax", static_argnums=1)(
        X, 1), jax.grad(J.rebound_def_in_a_while)(X, 1), np.float64)


def test_jit_on_the_jax_backend_with_a_traced_trip_count_is_located() -> None:
    """A traced ``n``: the loop binding a function stays Python, and its ``range(n)``
    is JAX's tracer error located at the user's loop, as ``jax.jit`` refuses it."""
    for name in ("lambda_after_loop", "bound_before_the_loop_too"):
        with pytest.raises(s2s.TransformError) as info:
            s2s.jit(getattr(F, name), backend="jax")(X, 2)
        assert "for k in range(n):" in str(info.value) and F.__file__ in str(info.value)


# ---- 3. a recursive nested def reading the enclosing values, used as a value -------


RECURSIVE = {"recursive_used_as_a_value": (2, 0, 5, 1, 10, 3),
             "recursive_passed_to_a_helper": (2, 0, 3, 1)}


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
@pytest.mark.parametrize("name", ["recursive_used_as_a_value", pytest.param(
    "recursive_passed_to_a_helper", marks=pytest.mark.slow)])  # (2**depth calls: slow)
def test_a_recursive_closure_used_as_a_value(name, transform, dtype) -> None:
    """``f = r`` and ``apply_at(r, ...)`` in ``r``'s own body: the closure itself
    (reading the outermost call's ``a``); its depth changes between calls."""
    ours, theirs = getattr(F, name), getattr(J, name)
    made = {"vmap": s2s.vmap(ours, in_axes=(0, None)),
            "vmap_grad": s2s.vmap(s2s.grad(ours), in_axes=(0, None))}
    depths = RECURSIVE[name] if transform == "grad" else RECURSIVE[name][:3]
    for call, depth in enumerate(depths):
        x = (X * (1.0 + 0.1 * call)).astype(dtype)
        if transform in ("grad", "value_and_grad", "jacfwd", "jacrev", "hessian", "jit"):
            got = made.setdefault(transform, getattr(s2s, transform)(ours))(x, depth)
        elif transform in made:
            got = made[transform](BATCH.astype(dtype), depth)
        else:
            got = TRANSFORMS[transform](ours, x, depth)
        close(got, ORACLE[transform](theirs, x, depth), dtype)


@pytest.mark.parametrize("name", ["recursive_used_as_a_value", pytest.param(
    "recursive_passed_to_a_helper", marks=pytest.mark.slow)])
def test_a_recursive_closure_on_the_jax_backend(name) -> None:
    ours, theirs = getattr(F, name), getattr(J, name)
    close(s2s.jit(ours, backend="jax", static_argnums=1)(X, 2),
          jax.jit(theirs, static_argnums=1)(X, 2), np.float64)
    close(s2s.jit(s2s.grad(ours), backend="jax", static_argnums=1)(X, 2),
          jax.grad(theirs)(X, 2), np.float64)


# ---- 4. a method given to a transform, its class overriding what it calls -------------


# (jacrev, hessian, vmap of grad and jit of grad of a bound method are refused or
# fail on main for any object, subclass or not: not part of this construct)
METHOD_TRANSFORMS = {
    "grad": (lambda f, x: s2s.grad(f)(x), lambda f, x: jax.grad(f)(x)),
    "value_and_grad": (lambda f, x: s2s.value_and_grad(f)(x),
                       lambda f, x: jax.value_and_grad(f)(x)),
    "vjp": (lambda f, x: (lambda out, pull: pull(np.ones_like(out)))(*s2s.vjp(f, x)),
            lambda f, x: (lambda out, pull: pull(np.ones_like(out)))(*jax.vjp(f, x))),
    "jvp": (lambda f, x: s2s.jvp(f, (x,), (V.astype(x.dtype),)),
            lambda f, x: jax.jvp(f, (x,), (V.astype(x.dtype),))),
    "jacfwd": (lambda f, x: s2s.jacfwd(f)(x), lambda f, x: jax.jacfwd(f)(x)),
    "vmap": (lambda f, x: s2s.vmap(f)(BATCH.astype(x.dtype)),
             lambda f, x: jax.vmap(f)(BATCH.astype(x.dtype))),
    "jit": (lambda f, x: s2s.jit(f)(x), lambda f, x: f(x)),
}


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("transform", sorted(METHOD_TRANSFORMS))
@pytest.mark.parametrize("obj", ["MODEL", "DEEPER", "DEEPEST"])
def test_a_method_of_a_subclass_object_given_to_a_transform(obj, transform, dtype) -> None:
    """``s2s.grad(DEEPER.loss)``: ``Model.loss`` transformed for ``Deeper``, so its
    ``self.features(x)`` is ``Deeper.features``; ``Deepest`` overrides ``head`` too.
    Against JAX on the twin's object."""
    ours, theirs = getattr(getattr(F, obj), "loss"), getattr(getattr(J, obj), "loss")
    x = X.astype(dtype)
    got, expected = (run(f, x) for run, f in zip(METHOD_TRANSFORMS[transform],
                                                  (ours, theirs)))
    close(got, expected, dtype)


@pytest.mark.slow
def test_an_objects_class_changing_between_calls() -> None:
    """One transform of a bound method, the object's class and attributes changing
    between calls 1 to 10 (``obj.__class__ = ...``): each call runs the methods of the
    class the object has then, as Python does."""
    obj, twin = F.Model(F.W4.copy()), J.Model(F.W4.copy())
    g, vg = s2s.grad(obj.loss), s2s.value_and_grad(obj.loss)
    classes = ("Model", "Deeper", "Deeper", "Deepest", "Model", "Deepest", "Deeper",
               "Model", "Deepest", "Deeper")
    try:
        for call, cls in enumerate(classes):
            obj.__class__, twin.__class__ = getattr(F, cls), getattr(J, cls)
            obj.scale = twin.scale = 0.5 + 0.1 * call
            x = X * (1.0 + 0.05 * call)
            close(g(x), jax.grad(twin.loss)(x), np.float64)
            close(vg(x), jax.value_and_grad(twin.loss)(x), np.float64)
            if call in (0, 3, 9):
                close(s2s.jvp(obj.loss, (x,), (V,)), jax.jvp(twin.loss, (x,), (V,)),
                      np.float64)
    finally:
        obj.__class__ = F.Model


@pytest.mark.slow
def test_the_objects_called_inside_a_function() -> None:
    close(s2s.grad(F.calls_each_model)(X), jax.grad(J.calls_each_model)(X), np.float64)
    close(s2s.jacrev(F.calls_each_model)(X), jax.jacrev(J.calls_each_model)(X),
          np.float64)
    close(s2s.jit(s2s.grad(F.calls_each_model), backend="jax")(X),
          jax.grad(J.calls_each_model)(X), np.float64)


# ---- 5. a decorator's wrapper that does more than forward, with *args/**kwargs ------


DECORATED = {  # name -> the calls: positional arguments after x, keywords
    "scaled_loss": [((), {}), ((3.0,), {}), ((), {"w": 0.5})],
    "regularized_loss": [((3.0,), {}), ((0.5,), {"scale": 2.0}), ((1.5, 0.5), {})],
    "calls_a_decorated": [((), {})],
    "calls_the_other_decorated": [((), {})],
}


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
# (not here: vmap of this wrapper; keywords through a partial of a wrapper:
# tests/frontend/test_inner_transforms_more.py)
@pytest.mark.parametrize("transform", ["grad", "value_and_grad", "jvp", "vjp", "jacfwd",
                                       "jacrev", "hessian", "jit", "jit_jax"])
@pytest.mark.parametrize("name", sorted(DECORATED))
def test_a_decorators_wrapper_that_does_more(name, transform, dtype) -> None:
    """``@scaled`` (``2.0 * f(*args, **kwargs)``) and ``@regularized`` (reads
    ``args[0]`` and ``len(args)``): the wrapper's code transformed with its
    parameters bound to each call's positional count and keywords; against JAX."""
    ours, theirs = getattr(F, name), getattr(J, name)
    made = {}
    for call, (rest, kw) in enumerate(DECORATED[name]):
        x = (X * (1.0 + 0.1 * call)).astype(dtype)

        if kw and transform not in ("grad", "value_and_grad", "jit", "jit_jax"):
            continue  # (jacfwd takes no keywords; a partial over a wrapper: not built)
        f, j = ours, theirs
        rest = tuple(np.asarray(r, dtype) for r in rest)
        zeros = tuple(np.zeros_like(r) for r in rest)
        if transform in ("grad", "value_and_grad", "jacfwd", "jacrev", "hessian"):
            fn = made.setdefault(transform, getattr(s2s, transform)(ours))
            got, expected = fn(x, *rest, **kw), getattr(jax, transform)(theirs)(x, *rest, **kw)
        elif transform == "jvp":
            got = s2s.jvp(f, (x, *rest), (V.astype(dtype), *zeros))
            expected = jax.jvp(j, (x, *rest), (V.astype(dtype), *zeros))
        elif transform == "vjp":
            got = (lambda out, pull: pull(np.ones_like(out)))(*s2s.vjp(f, x, *rest))
            expected = (lambda out, pull: pull(np.ones_like(out)))(*jax.vjp(j, x, *rest))
        elif transform == "vmap":
            axes = (0,) + (None,) * len(rest)
            got = s2s.vmap(f, in_axes=axes)(BATCH.astype(dtype), *rest)
            expected = jax.vmap(j, in_axes=axes)(BATCH.astype(dtype), *rest)
        elif transform == "jit":
            got = made.setdefault("jit", s2s.jit(ours))(x, *rest, **kw)
            expected = j(x, *rest, **kw)
        else:
            got = s2s.jit(s2s.grad(ours), backend="jax")(x, *rest, **kw)
            expected = jax.grad(theirs)(x, *rest, **kw)
        close(got, expected, dtype)


def test_a_decorators_wrapper_is_what_the_emitted_code_runs() -> None:
    g = s2s.grad(F.scaled_loss)
    close(g(X), jax.grad(J.scaled_loss)(X), np.float64)
    assert "2.0" in g.source, g.source


def test_the_emitted_code_reads_as_the_loop_does() -> None:
    """The flag and the loop's own names the function reads are carried out of the
    loop, the check raises before the call."""
    source = s2s.grad(F.lambda_after_loop).source
    assert "g_bound = False" in source and "if not g_bound:" in source, source
    assert "raise g_unbound()" in source, source
    source = s2s.grad(F.rebound_in_the_loop).source
    assert "if act_bound:" in source and "np.tanh(y)" in source, source
