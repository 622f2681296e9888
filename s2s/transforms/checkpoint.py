"""Checkpointing long loops in reverse mode: recompute instead of keeping a tape.

Reverse mode saves, for every iteration of a loop, the values its backward reads (a
tape: a Python list appended going forward, popped coming back), so the gradient of an
``n``-iteration loop holds ``n`` iterations' values at once.  ``s2s.checkpoint(f)``
marks ``f`` so that reverse mode splits each of its outermost ``for`` loops into
segments of ``every`` iterations (``every="sqrt"``: about ``√n``):

* forward, the loop runs without a tape and saves only its carried values at the start
  of each segment (``checkpoints.append((y,))``);
* backward, for each segment from the last, it pops those values, runs the segment's
  iterations again onto the ordinary tape, and runs their backward.

Peak memory is then about ``n / every`` saved states plus one segment's tape, instead
of ``n`` iterations' tape; the price is one more forward pass.  The emitted code says
all of this in plain Python (``s2s.source``)::

    segment = int(np.sqrt(len(range(n)))) + 1
    for start in range(0, n, segment):
        checkpoints.append((y,))
        stop = np.minimum(start + segment, n)
        for i in range(start, stop):
            ...

JAX's ``jax.checkpoint`` (``jax.remat``) rematerializes a function's values in its
backward pass; s2s already does that for every user function a differentiated function
calls (its ``*_vjp`` helper runs the callee's forward again), so what this adds is the
loop-level policy.  Forward mode and vmap ignore the mark.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..emit.code import Block, Comment, Line
from ..errors import TransformError
from ..ir.nodes import Const, For, Let, Var, walk
from ..ir.spelling import atom_text
from ..ir.walk import loop_breaks
from .replay import dead_code, spell, uses_of

__all__ = ["MARK", "policy_of", "segmented_backward"]

# the attribute s2s.checkpoint sets on the function it returns: the loop policy
MARK = "__s2s_checkpoint__"


def policy_of(fn: Any) -> int | str | None:
    """The checkpoint policy of a normalized function (``ir.Function``), or None."""
    return getattr(getattr(fn, "pyfunc", None), MARK, None)


# ---- reverse mode: called from reverse.py's loop emission ------------------------


@dataclass
class Segments:
    """How one checkpointed loop is emitted, shared by its forward and backward."""

    checkpoints: str | None  # the list of saved carried values (None: nothing to save)
    entries: list[str]  # the carried names saved at each segment's start
    segment_line: (
        Line | None
    )  # `segment = int(np.sqrt(len(range(n)))) + 1`; None: constant
    starts: str  # `range(0, n, segment)`: the first index of each segment
    start: str  # the name of a segment's first index
    stop_line: Line  # `stop = np.minimum(start + segment, n)`
    inner: str  # `range(start, stop)`: one segment's indices
    plain: str  # the loop's own range, `range(n)`


def segmented_backward(r: Any, s: For, pre: list[Any], loop: Block) -> list[Any]:
    """The backward of loop ``s`` in segments: pop a segment's saved values, run its
    iterations again onto the tape (``Replay.block`` pushes as usual), then run
    ``loop``'s body (the ordinary backward, which pops that tape) over them."""
    _check_loop(r, s)
    a, b, step = _bounds(r, s)
    every = policy_of(r.fn)
    start = r.names.fresh("start")
    stop = r.names.fresh("stop")
    recompute_body = r.replay.quiet().block(s.body) + [
        Line(f"{entry} = {exit_}") for entry, exit_ in s.carried
    ]
    step_text = "" if step == 1 else f", {step}"
    recompute = dead_code(
        [
            Block(
                f"for {s.target} in range({start}, {stop}{step_text}):",
                recompute_body,
                [],
            )
        ],
        set(),
    )
    if not recompute:
        return pre + [loop]  # the backward reads nothing the loop computed: no tape
    plain = f"range({b})" if a == "0" and step == 1 else f"range({a}, {b}{step_text})"
    if every == "sqrt":
        segment = r.names.fresh("segment")
        # the number of iterations (`len(range(n))`: a negative n runs none)
        length = (
            b if plain == f"range({b})" and b.startswith("len(") else f"len({plain})"
        )
        segment_line: Line | None = Line(f"{segment} = int(np.sqrt({length})) + 1")
    else:
        segment, segment_line = str(every), None
    span = segment if step == 1 else f"{segment} * {step}"
    used = uses_of(recompute)
    entries = [e for e, _ in s.carried if e in used]
    checkpoints = r.names.fresh("checkpoints") if entries else None
    seg = Segments(
        checkpoints=checkpoints,
        entries=entries,
        segment_line=segment_line,
        starts=f"range({a}, {b}, {span})",
        start=start,
        stop_line=Line(f"{stop} = np.minimum({start} + {span}, {b})"),
        inner=f"range({start}, {stop}{step_text})",
        plain=plain,
    )
    r.replay.checkpointed[id(s)] = seg
    if checkpoints is not None:
        # (a list like a tape: made empty at the top, and the names it restores are
        # kept aside where a returned value lives in one of them)
        r.replay.tapes[id(s)] = (checkpoints, entries)
    body: list[Any] = [
        Comment(
            "run this segment again from its checkpoint, onto the tape"
            if checkpoints
            else "run this segment again, onto the tape"
        )
    ]
    if checkpoints is not None:
        body.append(Line(f"{_unpack(entries)} = {checkpoints}.pop()"))
    body.append(seg.stop_line)
    body += recompute
    body.append(Block(f"for {s.target} in reversed({seg.inner}):", loop.body, []))
    return pre + [Block(f"for {start} in reversed({seg.starts}):", body, [])]


def _check_loop(r: Any, s: For) -> None:
    """Refuse the loops this pass does not checkpoint, where they are."""
    hint = (
        "move the loop into a function of its own that is not wrapped in "
        "s2s.checkpoint (s2s differentiates calls to it), or drop s2s.checkpoint"
    )
    if s.test is not None:
        raise TransformError(
            "s2s.checkpoint does not checkpoint `while` loops yet", s.loc, hint
        )
    if s.counter is not None or loop_breaks(s.body):
        raise TransformError(
            "s2s.checkpoint does not checkpoint a loop that can `break` or `return` "
            "yet",
            s.loc,
            hint,
        )
    made_inside = {t.target for t in walk(s.body) if isinstance(t, Let)}
    for t in walk(s.body):
        if isinstance(t, Let) and t.prim in ("setitem", "add_at", "append", "pop"):
            root = r.fn.aliases.get(t.target, t.target)
            first = root if t.prim in ("setitem", "add_at") else _list_root(r, t)
            if first not in made_inside or first in {e for e, _ in s.carried}:
                raise TransformError(
                    f"s2s.checkpoint does not checkpoint a loop that writes into "
                    f"`{root}`, made before the loop, yet (running a segment again "
                    "would write into it twice)",
                    t.loc,
                    hint,
                )


def _list_root(r: Any, t: Let) -> str:
    base = t.args[0]
    name = base.name if isinstance(base, Var) else t.target
    return r.fn.aliases.get(name, name)


def _bounds(r: Any, s: For) -> tuple[str, str, int]:
    """``(start, stop, step)`` of the loop's range, spelled; refused unless it walks
    forward by a positive constant step."""
    prod = r.facts.producer[s.iter.name]
    if prod.prim == "reversed":
        raise TransformError(
            "s2s.checkpoint does not checkpoint a loop over reversed(...) yet",
            s.loc,
            "loop over range(n) and index with n - 1 - i",
        )
    parts = []
    for a in prod.args:
        inner = r.facts.producer.get(a.name) if isinstance(a, Var) else None
        parts.append(
            spell(inner) if inner is not None and inner.prim == "len" else atom_text(a)
        )
    if len(parts) == 1:
        return "0", parts[0], 1
    if len(parts) == 2:
        return parts[0], parts[1], 1
    step = prod.args[2]
    if not (isinstance(step, Const) and type(step.value) is int and step.value > 0):
        raise TransformError(
            "s2s.checkpoint checkpoints loops over range(start, stop, step) with a "
            "positive constant step only",
            s.loc,
            "loop over range(m) and compute the index from i",
        )
    return parts[0], parts[1], step.value


def _unpack(names: list[str]) -> str:
    return f"({names[0]},)" if len(names) == 1 else ", ".join(names)
