"""Lists grown in a loop whose body reads them, on the JAX backend: the loop must
see the list as grown so far.  (A lowered loop extends its lists once the scan is
done; a body reading ``parts[-1]`` read the list as it was before the loop, and
``s2s.jit(f, backend="jax")`` gave silently wrong numbers.)  Against JAX on the
same source (jax_twin), float64 and float32."""

from __future__ import annotations

import grown_list_fns as G
import list_read_fns as F
import numpy as np
import pytest
import stmt_checks as C
from support import HAVE_JAX, compiled, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    JG, JF = jax_twin(G), jax_twin(F)

X = np.array([0.3, -0.5, 2.0, 0.1])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["reads_grown", "reads_in_while", "reads_length"])
def test_jit_on_jax_sees_the_grown_list(name, dtype) -> None:
    f, jf = getattr(G, name), getattr(JG, name)
    x = C.cast(X, dtype)
    g = s2s.jit(f, backend="jax")
    want = compiled(jf)(x)
    for _ in range(3):
        C.close(g(x), want, dtype, name)
    C.close(g(2.0 * x), compiled(jf)(2.0 * x), dtype, name + " (new values)")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["recurrence", "caller"])
def test_grad_on_jax_sees_the_grown_list(name, dtype) -> None:
    """reverse mode's forward sweep keeps such a list, read by the loop."""
    f, jf = getattr(F, name), getattr(JF, name)
    x = C.cast(X, dtype)
    C.close(s2s.jit(f, backend="jax")(x), compiled(jf)(x), dtype, "value")
    g = s2s.jit(s2s.grad(f), backend="jax")
    want = compiled(jax.grad(jf))(x)
    for _ in range(3):
        C.close(g(x), want, dtype, "grad")


# ---- the same lists through the jacobians and vmap (NumPy backend) ---------------

R = np.array([[0.3, -0.5], [2.0, 0.1], [0.7, 0.2]])
LISTS = [("last_item", X, ()), ("caller", X, ()), ("recurrence", X, ()),
         ("recurrence", X, (1,)), ("recurrence", X, (0,)), ("rnn", R, ()),
         ("grows_after_read", X, ())]
TRANSFORMS = ["jacrev", "jacfwd", "hessian", "vmap", "vmap_grad"]


def _pair(transform, f, jf):
    if transform == "vmap_grad":
        return s2s.vmap(s2s.grad(f)), jax.vmap(jax.grad(jf))
    return getattr(s2s, transform)(f), getattr(jax, transform)(jf)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("name, x, rest", LISTS,
                         ids=[f"{n}{r}" for n, _, r in LISTS])
@pytest.mark.slow
def test_jacobians_and_vmap_of_grown_lists(name, x, rest, transform, dtype) -> None:
    """A list grown in a loop (starting empty, or with the argument, `n=0`: a loop
    that never runs) through jacrev/jacfwd/hessian/vmap: jacrev's batched cotangents
    meet the list's unbatched zero cotangents (a raw AxisError before), vmap's
    batched appends meet the unbatched item it starts with (refused before), and
    vmap's rank inference followed `parts[-1]` of a loop the probe never ran into
    itself (RecursionError before); hessian of grows_after_read: the tangent list
    of a cotangent list appended to before the backward loop was 'a list that gets
    batched items after unbatched ones', located in emitted code."""
    f, jf = C.bind(getattr(F, name), rest), C.bind(getattr(JF, name), rest)
    x = C.cast(x, dtype)
    got_fn, want_fn = _pair(transform, f, jf)
    arg = np.stack([x, 0.5 * x, -x]) if transform.startswith("vmap") else x
    want = compiled(want_fn)(arg)
    for _ in range(2):
        C.close(got_fn(arg), want, dtype, transform)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n", [1, 3])
def test_jvp_of_grad_of_a_list_that_starts_with_an_item(n, dtype) -> None:
    """forward mode over reverse mode: the tangent of the list cotangent, zeros until
    an item gets one, was made after the primal append (one zero too many: every
    later pop took the wrong item's tangent, silently wrong numbers)."""
    f = C.bind(F.recurrence, (n,))
    jf = C.bind(JF.recurrence, (n,))
    x = C.cast(X, dtype)
    t = C.cast(np.array([1.0, 0.5, -0.3, 0.2]), dtype)
    _, got = s2s.jvp(s2s.grad(f), (x,), (t,))
    _, want = jax.jvp(jax.grad(jf), (x,), (t,))
    C.close(got, want, dtype, "jvp of grad")


def test_traced_count_is_refused_at_the_users_loop() -> None:
    """such a loop stays Python on the JAX backend: a count JAX traces is refused at
    the user's `for` (static_argnums keeps it a Python int, and the answer right)."""
    with pytest.raises(s2s.TransformError) as info:
        s2s.jit(G.reads_grown_traced_count, backend="jax")(X, 3)
    err = info.value
    assert err.loc is not None and err.loc.file == G.__file__, str(err)
    assert "for i in range(n)" in err.loc.text and "<s2s" not in str(err), str(err)
    g = s2s.jit(G.reads_grown_traced_count, backend="jax", static_argnums=(1,))
    for n in (0, 1, 3):
        C.close(g(X, n), JG.reads_grown_traced_count(X, n), np.float64, f"n={n}")
