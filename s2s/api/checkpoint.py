"""``s2s.checkpoint``: mark a function so that reverse mode recomputes its loops in
segments instead of taping every iteration (the transform is in
s2s/transforms/checkpoint.py; this is the decorator users call)."""

from __future__ import annotations

import functools
import sys
import types
from typing import Any, Callable

from ..transforms.checkpoint import MARK
from .display import display_checkpointed

__all__ = ["checkpoint", "checkpoint_policies"]


class Policy:
    """One of JAX's ``jax.checkpoint_policies``, as s2s reads it: what a checkpointed
    loop keeps going forward.  ``saves="nothing"``: the values the loop carries at
    each segment's start only (s2s's checkpointing); ``saves="everything"``: the
    whole tape, as without checkpointing."""

    def __init__(self, name: str, saves: str) -> None:
        self.name, self.saves = name, saves

    def __repr__(self) -> str:
        return f"s2s.checkpoint_policies.{self.name}"


def _names_policy(name: str, saves: str) -> Callable[..., Policy]:
    def make(*names: str) -> Policy:
        return Policy(f"{name}({', '.join(map(repr, names))})", saves)

    make.__name__ = make.__qualname__ = name
    return make


def _both(a: Any, b: Any) -> Policy:
    a, b = _policy(a), _policy(b)
    saves = "everything" if "everything" in (a.saves, b.saves) else "nothing"
    return Policy(f"save_from_both_policies({a!r}, {b!r})", saves)


# JAX's policies s2s takes.  s2s has no checkpoint_name, so no value in the function
# has a name: "all but these names" saves everything, "only these names" nothing.
# s2s recomputes a segment's matrix products with the rest (dots_saveable: less
# memory than JAX keeps, the same values).
checkpoint_policies = types.SimpleNamespace(
    everything_saveable=Policy("everything_saveable", "everything"),
    nothing_saveable=Policy("nothing_saveable", "nothing"),
    dots_saveable=Policy("dots_saveable", "nothing"),
    checkpoint_dots=Policy("checkpoint_dots", "nothing"),
    dots_with_no_batch_dims_saveable=Policy("dots_with_no_batch_dims_saveable", "nothing"),
    checkpoint_dots_with_no_batch_dims=Policy("checkpoint_dots_with_no_batch_dims",
                                              "nothing"),
    save_anything_except_these_names=_names_policy("save_anything_except_these_names",
                                                   "everything"),
    save_any_names_but_these=_names_policy("save_any_names_but_these", "everything"),
    save_only_these_names=_names_policy("save_only_these_names", "nothing"),
    save_from_both_policies=_both,
)

_OFFLOAD = ("offload_dot_with_no_batch_dims", "save_and_offload_only_these_names")


def _policy(policy: Any) -> Policy:
    """s2s's reading of ``policy``: one of s2s.checkpoint_policies, or JAX's own
    object of the same name (JAX's ``save_*_names(...)`` results by the factory that
    made them); anything else refused, saying why."""
    if policy is None:
        return checkpoint_policies.nothing_saveable
    if isinstance(policy, Policy):
        return policy
    jax_policies = getattr(sys.modules.get("jax"), "checkpoint_policies", None)
    for name, value in vars(checkpoint_policies).items():
        if isinstance(value, Policy) and getattr(jax_policies, name, None) is policy:
            return value
    qualname = getattr(policy, "__qualname__", "")
    factory = qualname.split(".")[0]
    if str(getattr(policy, "__module__", "")).startswith("jax") and "<locals>" in qualname:
        if factory in _OFFLOAD:
            raise ValueError(
                f"s2s.checkpoint(policy=jax.checkpoint_policies.{factory}(...)): s2s runs "
                "on NumPy, which has no device memory to offload from. Instead: "
                "policy=s2s.checkpoint_policies.nothing_saveable (the least memory)")
        made = getattr(checkpoint_policies, factory, None)
        if made is not None and factory.startswith("save_") and factory != (
                "save_from_both_policies"):
            return Policy(f"{factory}(...)", made().saves)
    raise ValueError(
        f"s2s.checkpoint takes one of s2s.checkpoint_policies (or JAX's of the same "
        f"name) as policy, got {policy!r}: s2s's recomputation has no JAX primitives to "
        "ask a policy function about. Instead: policy=s2s.checkpoint_policies."
        "nothing_saveable (save the loop's carried values only) or everything_saveable "
        "(keep the whole tape)")


def checkpoint(fun: Callable | None = None, *, every: int | str = "sqrt",
               policy: Any = None, prevent_cse: bool = True,
               static_argnums: int | tuple[int, ...] = ()) -> Any:
    """Mark ``fun`` so that reverse mode checkpoints its loops (see s2s/transforms/checkpoint.py).

    ``every="sqrt"`` saves the loop's carried values every ``int(sqrt(n)) + 1``
    iterations (``n`` the loop's number of iterations); an int ``every=k`` every
    ``k``.  Returns a new function object that runs ``fun``'s own code (``fun``
    itself is not changed); usable as ``@checkpoint`` or ``@checkpoint(every=100)``,
    and as ``s2s.grad(s2s.checkpoint(f))``.

    Checkpointed loops are the outermost ``for i in range(...)`` loops of ``fun`` (a
    positive constant step, if any).  A ``while`` loop, a loop that can ``break`` (or
    ``return``), or one that writes into an array or list made before it is refused
    with a TransformError when ``fun`` is differentiated: move such a loop into a
    function of its own.

    ``policy`` (JAX's, see ``s2s.checkpoint_policies``): ``nothing_saveable`` (also
    None, the dots and ``save_only_these_names`` policies) is the plan above;
    ``everything_saveable`` (and ``save_anything_except_these_names``, as no value has
    a name in s2s) keeps the whole tape, as without checkpointing.  The values are
    the same either way.  ``prevent_cse`` has no effect (NumPy merges no
    recomputation); ``static_argnums`` is accepted where it is empty.
    """
    if every != "sqrt" and not (type(every) is int and every > 0):
        raise ValueError(f"every must be 'sqrt' or a positive int, got {every!r}")
    plan = _policy(policy)
    if static_argnums not in ((), None):
        raise ValueError(
            "s2s.checkpoint(static_argnums=...) is not supported: s2s reads every "
            "argument at each call already. Instead: leave static_argnums out")
    if fun is None:
        return functools.partial(checkpoint, every=every, policy=plan,
                                 prevent_cse=prevent_cse)
    if not isinstance(fun, types.FunctionType):
        raise TypeError(
            f"s2s.checkpoint takes a Python function, got {fun!r}; checkpoint the "
            "function before transforming it: s2s.grad(s2s.checkpoint(f))"
        )
    marked = types.FunctionType(
        fun.__code__, fun.__globals__, fun.__name__, fun.__defaults__, fun.__closure__
    )
    marked.__kwdefaults__ = fun.__kwdefaults__
    marked.__dict__.update(fun.__dict__)
    marked.__qualname__ = fun.__qualname__
    marked.__module__ = fun.__module__
    marked.__doc__ = fun.__doc__
    marked.__annotations__ = dict(getattr(fun, "__annotations__", {}))
    if plan.saves == "nothing":
        setattr(marked, MARK, every)
    else:  # the whole tape is kept: not checkpointed, as JAX's everything_saveable
        vars(marked).pop(MARK, None)
    display_checkpointed(marked)
    return marked
