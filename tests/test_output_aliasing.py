"""No transform returns memory the caller owns: a value, an aux output, a primal
output, a batched output that is (or views) an argument or a module array comes back
as a copy, so a caller writing into a result never changes their input
(api/outputs.py; the gradients: tests/test_soundness.py).  Each case runs ten times
with values changing between calls (the first call runs the emitted code, the second
specializes, the third on run the specialized code); the 1st, 3rd and 10th are
compared with JAX on the same source (tests/output_aliasing_fns.py), in float64 and
float32; at every call no result leaf shares memory with an input, then every result
is overwritten and the inputs and the module array must be as they were."""

from __future__ import annotations

import numpy as np
import output_aliasing_fns as F
import pytest
from support import assert_close_to

import s2s

jax = pytest.importorskip("jax")
from support import jax_twin  # noqa: E402

J = jax_twin(F)
W0 = F.W.copy()


def _arrays(tree):
    if isinstance(tree, np.ndarray):
        yield tree
    elif isinstance(tree, dict):
        for v in tree.values():
            yield from _arrays(v)
    elif isinstance(tree, (tuple, list)):
        for v in tree:
            yield from _arrays(v)


def _tree_map(f, tree):
    if isinstance(tree, F.Params):
        return F.Params(*(_tree_map(f, v) for v in tree))
    if isinstance(tree, dict):
        return {k: _tree_map(f, v) for k, v in tree.items()}
    if isinstance(tree, (tuple, list)):
        return type(tree)(_tree_map(f, v) for v in tree)
    return f(tree)


def _halves(tree):
    """Tangents and cotangents: 0.5 in each leaf's shape and dtype."""
    return _tree_map(lambda a: np.full(np.shape(a), 0.5, np.asarray(a).dtype), tree)


def _vjp(vjp, f, a):
    out, pullback, aux = vjp(f, *a, has_aux=True)
    return out, pullback(_halves(out)), aux


def _jit_jvp(f):
    jitted = s2s.jit(lambda *p: s2s.jvp(f, p, _halves(p)), backend="numpy")
    return lambda a: jitted(*a)


# transform name -> (s2s: a function of f giving the call of the arguments, JAX's
# result of f and the arguments); one s2s transform serves the ten calls of a case,
# as in a training loop (its second call specializes, the third runs that code)
TRANSFORMS = {
    "grad_aux": (lambda f: _star(s2s.grad(f, has_aux=True)),
                 lambda f, a: jax.grad(f, has_aux=True)(*a)),
    "value_and_grad_aux": (lambda f: _star(s2s.value_and_grad(f, has_aux=True)),
                           lambda f, a: jax.value_and_grad(f, has_aux=True)(*a)),
    "jit_value_and_grad_aux": (
        lambda f: _star(s2s.jit(s2s.value_and_grad(f, has_aux=True), backend="numpy")),
        lambda f, a: jax.value_and_grad(f, has_aux=True)(*a)),
    "jvp_aux": (lambda f: lambda a: s2s.jvp(f, a, _halves(a), has_aux=True),
                lambda f, a: jax.jvp(f, a, _halves(a), has_aux=True)),
    "vjp_aux": (lambda f: lambda a: _vjp(s2s.vjp, f, a),
                lambda f, a: _vjp(jax.vjp, f, a)),
    "vmap": (lambda f: lambda a, v=s2s.vmap(f): v(*_batch(a)),
             lambda f, a: jax.vmap(f)(*_batch(a))),
    "jacrev_aux": (lambda f: _star(s2s.jacrev(f, has_aux=True)),
                   lambda f, a: jax.jacrev(f, has_aux=True)(*a)),
    "jacfwd_aux": (lambda f: _star(s2s.jacfwd(f, has_aux=True)),
                   lambda f, a: jax.jacfwd(f, has_aux=True)(*a)),
}
PLAIN = {  # functions with no aux: their output is an argument
    "value_and_grad": (lambda f: _star(s2s.value_and_grad(f)),
                       lambda f, a: jax.value_and_grad(f)(*a)),
    "jit_value_and_grad": (lambda f: _star(s2s.jit(s2s.value_and_grad(f), backend="numpy")),
                           lambda f, a: jax.value_and_grad(f)(*a)),
    "jvp": (lambda f: lambda a: s2s.jvp(f, a, _halves(a)),
            lambda f, a: jax.jvp(f, a, _halves(a))),
    "jit_jvp": (_jit_jvp, lambda f, a: jax.jvp(f, a, _halves(a))),
    "vjp": (lambda f: lambda a: s2s.vjp(f, *a)[0], lambda f, a: jax.vjp(f, *a)[0]),
    "vmap": TRANSFORMS["vmap"],
    "linearize": (lambda f: lambda a: s2s.linearize(f, *a)[0],
                  lambda f, a: jax.linearize(f, *a)[0]),
    "jit_function": (lambda f: _star(s2s.jit(f, backend="numpy")),
                     lambda f, a: jax.jit(f)(*a)),
}


def _star(t):
    return lambda a: t(*a)


def _batch(args):
    return _tree_map(lambda a: np.stack([a, 2.0 * a]), args)


def _args(name, k, dtype):
    """The arguments of call ``k``: new values at each call."""
    x = (np.array([0.5, -1.0, 2.0]) * (1.0 + 0.1 * k)).astype(dtype)
    if name == "aux_is_a_namedtuple":  # (the aux a Params, as JAX returns it)
        return (F.Params(x, (x[:2] - 1.0).copy()),)
    if name == "aux_of_dict":
        return ({"w": x, "b": (x[:2] - 1.0).copy()},)
    if name in ("second", "pair_out"):
        return x, (x[::-1] + 1.0).copy()
    if name == "identity_0d":
        return (x[0].copy(),)
    return (x,)


PLAIN_FNS = ("identity", "second", "pair_out", "identity_0d", "module_array_out")
AUX = ["aux_is_x", "aux_is_view", "aux_is_reshaped", "aux_is_module_array",
       "aux_is_a_tree", "aux_is_fresh", "aux_of_dict", "aux_of_a_module_list"]
CASES = [(f, t) for f in AUX for t in TRANSFORMS] + \
    [("aux_is_a_namedtuple", t) for t in TRANSFORMS if t.startswith(
        ("grad", "value", "jit", "jvp", "vjp"))] + \
    [(f, t) for f in PLAIN_FNS for t in PLAIN
     if not (t.startswith(("value", "jit_value")) and f != "identity_0d")]


def _run(fname, tname, dtype, table) -> None:
    ours, theirs = table[tname]
    name = "identity" if fname == "identity_0d" else fname
    call = ours(getattr(F, name))
    for k in range(10):
        args = _args(fname, k, dtype)
        kept = _tree_map(lambda a: a.copy(), args)
        out = call(args)
        inputs = list(_arrays(args)) + [F.W, F.WS[1]]
        for r in _arrays(out):
            for a in inputs:
                assert not np.shares_memory(r, a), f"{tname} call {k + 1}: a result is an input"
        if k in (0, 2, 9):
            expected = theirs(getattr(J, name), args)
            assert_close_to(out, expected, dtype, dtype_of="expected-arrays")
            if fname == "aux_is_a_namedtuple":
                assert type(out[-1] if tname.startswith(("jvp", "vjp", "grad")) else
                            out[0][1]) is F.Params
        for r in _arrays(out):
            if r.flags.writeable:
                r[...] = -7.0  # the caller writes into a result
        for a, b in zip(_arrays(args), _arrays(kept)):
            np.testing.assert_array_equal(a, b, err_msg=f"{tname} call {k + 1}")
        np.testing.assert_array_equal(F.W, W0)
        np.testing.assert_array_equal(F.WS[1], [0.5, 0.25, -1.0])


@pytest.mark.slow  # (the default tier: the two cases below)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("fname,tname", CASES)
def test_no_output_shares_memory_with_an_input(fname, tname, dtype) -> None:
    table = PLAIN if fname in PLAIN_FNS else TRANSFORMS
    _run(fname, tname, dtype, table)


KEYWORD = {
    "grad": (s2s.grad, jax.grad), "value_and_grad": (s2s.value_and_grad, jax.value_and_grad),
    "jit_value_and_grad": (lambda f, has_aux: s2s.jit(s2s.value_and_grad(
        f, has_aux=has_aux), backend="numpy"), jax.value_and_grad),
    "jacrev": (s2s.jacrev, jax.jacrev), "jacfwd": (s2s.jacfwd, jax.jacfwd),
    "hessian": (s2s.hessian, jax.hessian),
}


@pytest.mark.slow  # (the default tier: test_an_aux_that_is_the_argument... by hand)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("tname", list(KEYWORD))
def test_a_keyword_argument_returned_as_aux_is_a_copy(tname, dtype) -> None:
    ours, theirs = KEYWORD[tname]
    t = ours(F.aux_is_keyword, has_aux=True)
    for k in range(10):
        x = (np.array([0.5, -1.0, 2.0]) * (1 + k)).astype(dtype)
        w = (np.array([2.0, 1.0, -3.0]) - k).astype(dtype)
        out = t(x, w=w)
        if k in (0, 2, 9):
            assert_close_to(out, theirs(J.aux_is_keyword, has_aux=True)(x, w=w), dtype,
                            dtype_of="expected-arrays")
        for r in _arrays(out):
            assert not np.shares_memory(r, w) and not np.shares_memory(r, x)
            r[...] = -7.0
        np.testing.assert_array_equal(w, (np.array([2.0, 1.0, -3.0]) - k).astype(dtype))


def test_an_aux_and_a_jvp_output_that_are_arguments_against_jax() -> None:
    """The default tier's cases of the sweep above: a dict argument's arrays in the
    aux (float64), the jvp of a function returning its second argument (float32)."""
    _run("aux_of_dict", "value_and_grad_aux", np.float64, TRANSFORMS)
    _run("second", "jvp", np.float32, PLAIN)


def test_an_aux_that_is_the_argument_is_the_callers_no_more() -> None:
    """By hand, no oracle needed: the aux of ``return loss, x`` was ``x`` itself
    at every call (and a jvp's output of ``return x`` too)."""
    x = np.array([1.0, 2.0, 3.0])
    g = s2s.value_and_grad(F.aux_is_x, has_aux=True)
    for k in range(4):
        (value, aux), grad = g(x)
        assert value == 14.0 and not np.shares_memory(aux, x)
        np.testing.assert_array_equal(grad, [2.0, 4.0, 6.0])
        aux[...] = 0.0
        np.testing.assert_array_equal(x, [1.0, 2.0, 3.0])
    out, tangent = s2s.jvp(F.identity, (x,), (np.ones(3),))
    out[...] = 0.0
    np.testing.assert_array_equal(x, [1.0, 2.0, 3.0])


# what the code's text says: the items of its returned tuple that may be foreign
TEXTS = [
    ("a = x**2\n    s = np.sum(a)\n    aux = (s, x)\n"
     "    return aux, np.broadcast_to(grad_seed(s), np.shape(a)) * 2 * x", (True, False)),
    ("return ((np.sum(x**2), x * 1.0), x + x)", (False, False)),
    ("return (x + x, [x[0], x[1], x + x])", (False, True)),
    ("return x * 2, W[0]", (False, True)),  # a module array
    ("t = np.einsum('ij->ji', x)\n    return x * 2, t", (False, True)),  # a view
    ("t = helper(x * 2)\n    return x * 2, t", (False, True)),  # may return anything
    ("t = max(x * 2, 3.0)\n    return x * 2, t", (False, False)),
    ("t = max(x, 3.0)\n    return x * 2, t", (False, True)),
    ("t = x.T\n    for i in range(3):\n        u = t\n    return x * 2, u", (False, True)),
    ("u = []\n    u.append(x)\n    return x * 2, u", (False, True)),
    ("u = {}\n    u['a'] = x\n    return x * 2, u", (False, True)),
    ("u = np.add(x, 1.0, out=x)\n    return x * 2, u", (False, True)),
    ("u = x if x.ndim else np.zeros(3)\n    return x * 2, u", (False, True)),
    ("u = stop_gradient(x)\n    return x * 2, u", (False, True)),
    ("if x.ndim:\n        return x, x * 2\n    return x * 2, x * 3", (True, False)),
    ("if x.ndim:\n        return x, x * 2\n    return x * 2", None),
    ("return x", None),
]


def test_the_static_reading_of_returned_items() -> None:
    from s2s.optimize.aliases import foreign_items
    from s2s.optimize.fresh import returns_fresh

    for body, want in TEXTS:
        text = f"def f(x):\n    {body}\n"
        assert foreign_items(text, "f") == want, body
    for body, fresh in [("return np.cos(x) * 2.0", True), ("return stop_gradient(x)", False),
                        ("return helper(x)", False), ("return np.einsum('ii->i', x)", False),
                        ("return real_only(x * 2.0, 'w')", True)]:
        assert returns_fresh(f"def f(x):\n    {body}\n", "f") is fresh, body
