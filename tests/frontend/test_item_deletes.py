"""``del d["k"]`` and ``d.pop("k")`` of a dict the function built, ``del ys[-1]`` and
``ys.pop(-1)`` of a list it built (issue 23: JAX's trace runs them, s2s refused them):
each is a new version of the container without the item, checked as a write into it
is.  Expected values from JAX on the same source, float64 and float32, under grad,
value_and_grad, jvp, vmap, jacrev, hessian and ``s2s.jit`` on both backends."""

from __future__ import annotations

from functools import partial

import item_delete_fns as F  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX, assert_close_to, compiled, jax_twin

import s2s
from s2s.errors import TransformError

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)

WORKING = ["deletes_a_key", "pops_a_key", "deletes_then_rewrites", "deletes_the_last_item",
           "pops_minus_one", "deletes_in_a_loop", "deletes_two", "deletes_the_first_item"]
X = np.array([0.3, -0.7, 1.2])

close = partial(assert_close_to, f64=1e-9, f32=3e-4)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", WORKING)
def test_against_jax(name, dtype):
    ours, theirs = getattr(F, name), getattr(J, name)
    grad = s2s.grad(ours)
    for k in range(4):  # (the second call is the one s2s specializes)
        x = (X * (1.0 + k) - 0.1 * k).astype(dtype)
        close(grad(x), jax.grad(theirs)(x), dtype)
    v = (X[::-1] + 0.5).astype(dtype)
    close(s2s.value_and_grad(ours)(x), jax.value_and_grad(theirs)(x), dtype)
    close(s2s.jvp(ours, (x,), (v,)), jax.jvp(theirs, (x,), (v,)), dtype)
    close(s2s.jacrev(ours)(x), jax.jacrev(theirs)(x), dtype)
    close(s2s.hessian(ours)(x), jax.hessian(theirs)(x), dtype)
    batch = np.stack([x, 0.5 * x, x[::-1]])
    close(s2s.vmap(grad)(batch), jax.vmap(jax.grad(theirs))(batch), dtype)
    close(s2s.jit(ours)(x), theirs(x), dtype)
    close(s2s.jit(grad, backend="jax")(x), compiled(jax.grad(theirs))(x), dtype)


def test_deleted_values_are_not_computed_in_the_gradient():
    text = s2s.grad(F.deletes_a_key).source
    code = [line for line in text.splitlines() if not line.strip().startswith("#")]
    assert not any('"b"' in line or "x**2" in line for line in code), text


@pytest.mark.parametrize("name, says, at", [
    ("deletes_a_shared_dict", "another name", "del "),
    ("deletes_a_missing_key", "no key 'b'", "del "),
    ("deletes_on_one_path", "other keys after this `if`", "if "),  # (as a write there)
    ("deletes_an_attribute", "`del` of an attribute", "del "),
])
def test_refused_located(name, says, at):
    fn = getattr(F, name)
    with pytest.raises(TransformError, match=says) as err:
        s2s.grad(fn)(X)
    assert err.value.loc.file == F.__file__ and at in err.value.loc.text
