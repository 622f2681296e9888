"""Loops over a list or tuple of layers (`for W, b in params[:-1]`, `for layer in layers`).

The container's structure, its length included, is fixed per call signature, so the
transforms unroll such a loop when they generate code for that signature
(`s2s.ir.unroll.unroll_container_loops`), as JAX unrolls the Python loop while tracing.
Every expected value is JAX's, on the same source (this file, re-read with jax.numpy).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import numpy.random as npr  # (kept NumPy's in the JAX twin of this file)
import pytest

import s2s
import syntax_fns as F
from support import compiled, jax_twin, leaves


def enumerate_layers(params, x):
    h = x
    for i, (W, b) in enumerate(params):
        h = np.tanh(h @ W + b) * (i + 1)
    return np.sum(h**2)


def reversed_layers(params, x):
    h = x
    for W, b in reversed(params):
        h = np.sin(h @ W.T + b)
    return np.sum(h**2)


def zipped_scales(params, scales, x):
    h = x
    for (W, b), s in zip(params, scales):
        h = np.tanh(h @ W + b) * s
    return np.sum(h**2)


def every_other_layer(params, x):
    h = x
    for W, b in params[::2]:
        h = np.tanh(h @ W + b)
    for W, b in params[1:]:
        h = h + 0.5 * np.cos(h @ W)
    return np.sum(h**2)


def squared_norms(ws):
    total = 0.0
    for w in ws:
        total = total + np.sum(w**2)
    return total


def residual_blocks(blocks, x):
    h = x
    for block in blocks:
        skip = h
        for W, b in block:
            h = np.tanh(h @ W + b)
        h = h + skip
    return np.sum(h**2)


def repeated_layers(params, x):
    h = x
    for W, b in params:
        for _ in range(2):
            h = np.tanh(h @ W + b)
    return np.sum(h**2)


def sliced_layers(params, x):
    h = x
    for W, b in params[::-1]:
        h = np.tanh(h @ W + b)
    for W, b in params[-2:]:
        h = np.tanh(h @ W + b)
    for W, b in params[1:-1]:
        h = np.tanh(h @ W + b)
    for W, b in params[-1:0:-2]:
        h = np.tanh(h @ W + b)
    return np.sum(h**2)


def local_layers(W1, b1, W2, b2, x):
    layers = [(W1, b1), (W2, b2)]
    h = x
    for W, b in layers:
        h = np.tanh(h @ W + b)
    return np.sum(h**2)


def grown_then_looped(W, x):
    hs = []
    h = x
    for _ in range(3):
        h = np.tanh(h @ W)
        hs.append(h)
    total = 0.0
    for v in hs:
        total = total + np.sum(v**2)
    return total


def steps_of_layers(params, x):
    h = x
    for _ in range(3):
        for W, b in params:
            h = np.tanh(h @ W + b)
    return np.sum(h**2)


def steps_with_a_local(params, x):
    h = x
    for _ in range(2):
        g = h * 2
        for W, b in params:
            g = np.tanh(g @ W + b)
        h = g + h
    return np.sum(h**2)


def while_of_layers(params, x):
    h = x
    n = 0
    while n < 2:
        for W, b in params:
            h = np.tanh(h @ W + b)
        n = n + 1
    return np.sum(h**2)


def steps_that_break(params, x):
    h = x
    for _ in range(3):
        for W, b in params:
            h = np.tanh(h @ W + b)
        if np.sum(h) > 100.0:
            break
    return np.sum(h**2)


def calls_a_layer_loop(params, x):
    return 2.0 * _layers_inside(params, x) + np.sum(x)


def _layers_inside(params, x):
    h = x
    for W, b in params:
        h = np.tanh(h @ W + b)
    return np.sum(h**2)


def named_layers(params, x):
    h = x
    for name in ("first", "second"):
        h = np.tanh(h @ params[name]["W"] + params[name]["b"])
    return np.sum(h**2)


def layers_by_key(layers, x):
    h = x
    for i, name in enumerate(layers):
        h = np.tanh(h @ layers[name]["W"] + layers[name]["b"]) * (i + 1)
    return np.sum(h**2)


def layers_second_first(layers, x):
    h = x
    for i, name in enumerate(("second", "first")):
        h = np.tanh(h @ layers[name]["W"] + layers[name]["b"]) * (i + 1)
    return np.sum(h**2)


def layer_outputs(params, x):
    h = x
    for W, b in params:
        h = np.tanh(h @ W + b)
    return h


def loop_in_branch(params, x):
    h = x
    if np.sum(x) > 0:
        for W, b in params:
            h = np.tanh(h @ W + b)
    return np.sum(h**2)


def loop_in_branch_after(params, x):
    h = x
    if np.sum(x) > 0:
        h = h * 2
        for W, b in params:
            h = np.tanh(h @ W + b)
        h = h - 1.0
    else:
        h = h + 1
    return np.sum(h**2)


def branch_in_layers(params, x):
    h = x
    for W, b in params:
        z = h @ W + b
        if np.sum(z) > 0:
            h = np.tanh(z)
        else:
            h = np.sin(z) * 0.5
    return np.sum(h**2)


_R = npr.default_rng(7)


def _pairs(sizes: list[int]) -> list[tuple[np.ndarray, np.ndarray]]:
    return [(_R.standard_normal((m, n)) / np.sqrt(m), _R.standard_normal(n))
            for m, n in zip(sizes[:-1], sizes[1:])]


def _square(k: int, n: int = 4) -> list[tuple[np.ndarray, np.ndarray]]:
    return _pairs([n] * (k + 1))


def _named(keys: list[str]) -> dict[str, dict[str, np.ndarray]]:
    return {k: {"W": W, "b": b} for k, (W, b) in zip(keys, _square(len(keys)))}


X = _R.standard_normal((5, 4))
Y = np.eye(3)[_R.integers(0, 3, 5)]

# name -> (module holding it, args): params (the container) first
CASES: dict[str, tuple[str, tuple]] = {
    "mlp_loss": ("F", (_pairs([4, 6, 5, 3]), X, Y)),
    "dict_layers_loss": ("F", ([{"W": W, "b": b} for W, b in _pairs([4, 6, 3])], X)),
    "enumerate_layers": ("T", (_square(3), X)),
    "reversed_layers": ("T", (_square(3), X)),
    "zipped_scales": ("T", (_square(2), [_R.standard_normal(4), _R.standard_normal(4)], X)),
    "every_other_layer": ("T", (_square(3), X)),
    "squared_norms": ("T", ([_R.standard_normal((2, 3)), _R.standard_normal(5)],)),
    "residual_blocks": ("T", ([_square(2), _square(1)], X)),
    "repeated_layers": ("T", (tuple(_square(2)), X)),
    "sliced_layers": ("T", (_square(5), X)),
    "local_layers": ("T", (*_square(1)[0], *_square(1)[0], X)),
    # an unrolled loop inside a loop that stays: the outer loop carries its value
    "steps_of_layers": ("T", (_square(2), X)),
    "steps_with_a_local": ("T", (_square(2), X)),
    "while_of_layers": ("T", (_square(2), X)),
    "calls_a_layer_loop": ("T", (_square(3), X)),  # a user function's loop: its helper
    # dicts of layers, by a literal tuple of names or by the dict's own keys (inserted
    # in sorted order here: JAX iterates the dict it rebuilds, whose keys are sorted)
    "named_layers": ("T", (_named(["second", "first"]), X)),
    "layers_by_key": ("T", (_named(["first", "second", "third"]), X)),
    "layers_second_first": ("T", (_named(["second", "first"]), X)),
}


@pytest.fixture(scope="module")
def jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


@pytest.fixture(scope="module")
def twins(jax) -> dict[str, Any]:
    return {"F": jax_twin(F), "T": jax_twin(sys.modules[__name__])}


def _fns(name: str, twins: dict[str, Any]) -> tuple[Any, Any]:
    where = CASES[name][0]
    mine = F if where == "F" else sys.modules[__name__]
    return getattr(mine, name), getattr(twins[where], name)


def close(actual: Any, expected: Any, rtol: float = 1e-10, atol: float = 1e-12) -> None:
    """The same containers (types, lengths, keys) and values within tolerance."""
    assert _structure(actual) == _structure(expected), (actual, expected)
    for a, e in zip(leaves(actual), leaves(expected)):
        a, e = np.asarray(a), np.asarray(e)
        assert a.shape == e.shape and a.dtype == e.dtype, (a, e)
        np.testing.assert_allclose(a, e, rtol=rtol, atol=atol)


def _structure(tree: Any) -> Any:
    if isinstance(tree, (tuple, list)):
        return (type(tree).__name__, [_structure(t) for t in tree])
    if isinstance(tree, dict):
        return {k: _structure(v) for k, v in tree.items()}
    return "leaf"


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CASES))
def test_grad_and_value_and_grad(name, jax, twins) -> None:
    fn, twin = _fns(name, twins)
    args = CASES[name][1]
    argnums = tuple(range(len(args)))
    close(s2s.grad(fn, argnums=argnums)(*args),
          compiled(jax.grad(twin, argnums=argnums))(*args))
    value, grads = s2s.value_and_grad(fn)(*args)
    jvalue, jgrads = compiled(jax.value_and_grad(twin))(*args)
    close(value, jvalue)
    close(grads, jgrads)


@pytest.mark.parametrize("name", ["mlp_loss", "dict_layers_loss", "residual_blocks",
                                  "every_other_layer", "steps_of_layers",
                                  "calls_a_layer_loop"])
def test_vmap_over_examples(name, jax, twins) -> None:
    """The layers unbatched, x (and y) batched on a new leading axis."""
    fn, twin = _fns(name, twins)
    args = CASES[name][1]
    batched = tuple(np.stack([a, 0.5 * a, -a]) for a in args[1:])
    in_axes = (None,) + (0,) * len(batched)
    close(s2s.vmap(fn, in_axes=in_axes)(args[0], *batched),
          compiled(jax.vmap(twin, in_axes=in_axes))(args[0], *batched))
    close(s2s.vmap(s2s.grad(fn), in_axes=in_axes)(args[0], *batched),
          compiled(jax.vmap(jax.grad(twin), in_axes=in_axes))(args[0], *batched))


def test_jacrev_of_a_vector_output(jax, twins) -> None:
    fn, twin = layer_outputs, twins["T"].layer_outputs
    params, x = _square(2), X[0]
    close(s2s.jacrev(fn)(params, x), jax.jacrev(twin)(params, x))
    close(s2s.jacrev(fn, argnums=1)(params, x), jax.jacrev(twin, argnums=1)(params, x))


@pytest.mark.slow
def test_grad_of_grad(jax, twins) -> None:
    """The emitted gradient has no loop left; differentiating it again is plain."""
    fn, twin = _fns("reversed_layers", twins)
    params, x = CASES["reversed_layers"][1]

    hvp = s2s.jacrev(s2s.grad(fn, argnums=1), argnums=1)(params, x[0])
    close(hvp, jax.hessian(twin, argnums=1)(params, x[0]))


@pytest.mark.parametrize("name", list(CASES))
def test_jvp(name, jax, twins) -> None:
    fn, twin = _fns(name, twins)
    args = CASES[name][1]
    tangents = tuple(jax.tree_util.tree_map(lambda a: 0.3 * a + 1.0, a) for a in args)
    close(s2s.jvp(fn, args, tangents), jax.jvp(twin, args, tangents))


@pytest.mark.slow
def test_jacfwd_and_hessian(jax, twins) -> None:
    fn, twin = layer_outputs, twins["T"].layer_outputs
    params, x = _square(2), X[0]
    close(s2s.jacfwd(fn)(params, x), jax.jacfwd(twin)(params, x))
    f2, t2 = _fns("reversed_layers", twins)
    close(s2s.hessian(f2, argnums=1)(params, x), jax.hessian(t2, argnums=1)(params, x))


def test_the_emitted_code_is_unrolled_and_quotes_the_loop() -> None:
    params, x, y = CASES["mlp_loss"][1]
    g = s2s.grad(F.mlp_loss)
    g(params, x, y)
    text = s2s.source(g)
    code = [ln.strip() for ln in text.splitlines() if not ln.strip().startswith("#")]
    assert not any(ln.startswith("for ") for ln in code)
    assert not any("len(" in ln or "params[:-1]" in ln for ln in code)
    assert "params[0]" in text and "params[1]" in text and "params[2]" not in text
    # each layer's backward is headed by its iteration, then the user's line as always
    for k in (2, 1):
        assert (f"# (unrolled) for W, b in params[:-1]: iteration {k} of 2\n"
                "    # h = np.tanh(h @ W + b)\n") in text


@pytest.mark.slow
def test_a_length_is_part_of_the_signature(jax, twins) -> None:
    """Calls with other depths get other unrolled gradients, each right (the second
    call of a signature runs the code specialized to its shapes)."""
    fn, twin = _fns("enumerate_layers", twins)
    g = s2s.grad(fn)
    for k in (1, 4, 4, 2):
        params = _square(k)
        close(g(params, X), jax.grad(twin)(params, X))


def test_an_empty_list_of_layers(jax, twins) -> None:
    fn, twin = _fns("repeated_layers", twins)
    close(s2s.grad(fn, argnums=(0, 1))((), X), jax.grad(twin, argnums=(0, 1))((), X))


@pytest.mark.parametrize("name", ["loop_in_branch", "loop_in_branch_after", "branch_in_layers"])
def test_loops_and_branches(name, jax, twins) -> None:
    """A layer loop inside an `if` (its value joined under a name of its own), and an
    `if` inside a layer loop: both paths against JAX; vmap with the test batched (JAX
    refuses a Python `if` on a traced value) against a loop over the examples."""
    fn, twin = getattr(sys.modules[__name__], name), getattr(twins["T"], name)
    params = _square(2)
    for x in (X, -X):
        close(s2s.grad(fn, argnums=(0, 1))(params, x),
              jax.grad(twin, argnums=(0, 1))(params, x))
        tangents = ([(0.5 * W, b + 1.0) for W, b in params], x + 0.25)
        close(s2s.jvp(fn, (params, x), tangents), jax.jvp(twin, (params, x), tangents))
    xs = np.stack([X, -X, X + 1.0])
    close(s2s.vmap(fn, in_axes=(None, 0))(params, xs), np.stack([fn(params, x) for x in xs]))


def test_vmap_of_the_gradient_of_a_layer_loop_in_a_branch(jax, twins) -> None:
    """The gradient reads the unrolled layers' values in a second `if` on the same
    test; the element `params[1]` it bound on one path only was given a None on the
    other path and refused as a container; that join is dead and is dropped now.
    Per example against JAX's gradient of each example (both paths)."""
    params, xs = _square(2), np.stack([X, -X, X + 1.0])
    got = s2s.vmap(s2s.grad(loop_in_branch, argnums=1), in_axes=(None, 0))(params, xs)
    twin = twins["T"].loop_in_branch
    close(got, np.stack([jax.grad(twin, argnums=1)(params, x) for x in xs]))


def test_a_list_grown_in_a_loop_is_not_unrolled(jax, twins) -> None:
    """Its length is known only when the code runs: `for v in hs` stays a loop (not
    unrolled for the empty list `hs = []`), its reads of the grown list's items
    differentiated (refused before; tests/frontend/test_grown_list_reads.py)."""
    W = _square(1)[0][0]
    g = s2s.grad(grown_then_looped)
    close(g(W, X), jax.grad(twins["T"].grown_then_looped)(W, X))
    text = s2s.source(g)
    assert "for k in reversed(range(" in text and "hs_bar[k] = hs_bar[k] + " in text


def test_a_layer_loop_inside_a_loop_that_breaks_is_still_refused() -> None:
    """The outer loop would have to carry the unrolled layers' value, and its `break`
    leave with it: not done, so the layer loop stays a loop, refused."""
    with pytest.raises(s2s.TransformError, match="constant key"):
        s2s.grad(steps_that_break)(_square(2), X)


def test_a_dict_of_layers_is_iterated_in_its_own_order() -> None:
    """`for name in layers` walks the keys in the dict's order, as the NumPy function
    does (JAX's traced function gets a dict rebuilt with sorted keys, so its loop runs
    "first" before "second" here: its value is not the function's)."""
    layers = _named(["second", "first"])
    value, grads = s2s.value_and_grad(layers_by_key)(layers, X)
    assert value == pytest.approx(layers_by_key(layers, X), rel=1e-12)
    close(grads, s2s.grad(layers_second_first)(layers, X))
