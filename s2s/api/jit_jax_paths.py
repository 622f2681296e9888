"""A vmapped function's code on the JAX backend made per path of an ``if`` whose paths
give a value different ranks (``s2s.vmap``'s ``PathVariants``, on NumPy): under
``s2s.jit(s2s.vmap(f), backend="jax")`` the code of a signature is made from its first
call's example for the path that example takes, a guard ``if not t: raise OtherPath``
before it.  Where the trace knows the test (a shape: a loop's count; a static
argument), the guard runs as Python while JAX traces: a call taking another path
raises ``OtherPath`` in the trace, and the jit makes that path's code from the call
(``NeedExample`` with the paths missed) and traces again.  Where the test is traced,
the guard is refused at the user's ``if`` (``located.traced_at_user_line``)."""

from __future__ import annotations

from typing import Any, Callable

from ..backends.jax_backend import NeedExample
from ..errors import TransformError
from ..runtime import OtherPath

LIMIT = 16  # (variants of one signature: then refused, as PathVariants does)


def run_variants(variants: list | None, run: Callable[[str, Callable], Any]) -> Any:
    """``run(text, fn)`` of the first of a signature's variants (``(text, fn)``, the
    latest made first) that does not raise ``OtherPath`` in the trace; none does (or
    none was made yet): ``NeedExample`` with the ``(test, taken)`` pairs they raised."""
    missed: set[tuple] = set()
    for text, fn in variants or ():
        try:
            return run(text, fn)
        except OtherPath as err:
            missed.add((err.test, err.taken))
    raise NeedExample(tuple(sorted(missed, key=repr)))


def add_variant(variants: list, made: Any, paths: tuple, name: str) -> None:
    """``made`` (the ``(text, fn)`` for a call whose paths missed ``paths``) first
    among a signature's variants; refused past :data:`LIMIT`, or where the code
    made for these paths is one the signature has already (its ``if``s do not give
    one path for every example)."""
    if made in variants or len(variants) >= LIMIT:
        raise TransformError(
            f"vmap made batched code for {len(variants)} paths through the `if`s of "
            f"`{name}` whose paths give a value different ranks, and none runs this "
            "call under s2s.jit(backend='jax')", None,
            "give each such value one shape on every path (np.broadcast_to), or run "
            "it on the NumPy backend")
    variants.insert(0, made)
