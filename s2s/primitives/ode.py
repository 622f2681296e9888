"""``scipy.integrate.odeint`` and ``solve_ivp``: a primitive that takes the user's
dynamics function.

The frontend (``frontend/odes.py``) lowers ``odeint(func, y0, t, args=(k,))`` to one
statement ``ys = odeint(y0, t, k)`` whose ``params`` hold ``func`` as a callee
(``callee``: its IR with parameters ``(y, t, *args)``, or ``(t, y, *args)`` for
solve_ivp's ``fun``; ``spelling``: its name in emitted code), the ``solver`` and its
``options`` (constants).  Emitted code calls the runtime's ``integrate_odeint``
(``s2s/runtime_ode.py``).  Its derivatives are not rules inlined from this file but
functions the transforms write from the callee's own emitted derivatives
(``transforms/odes.py``): reverse mode, the adjoint ODE ``<func>_adjoint`` built on
``<func>_vjp``; forward mode, the sensitivity equations ``<func>_tangent`` built on
``<func>_jvp``.  vmap solves example by example (``integrate_odeint_each``).
"""

from __future__ import annotations

from ..ir.nodes import Let
from ..ir.spelling import atom_text
from ..runtime_ode import integrate_odeint
from .batching import Batch, batch_rule
from .registry import defprim


def options_text(params: dict, order: bool = True) -> list[str]:
    """The solver and its options as keyword arguments in emitted code (``order``:
    with ``tfirst``, how the user's function takes ``t``; the functions s2s writes
    from it take ``y`` first)."""
    parts = [] if params["solver"] == "odeint" else [f"solver={params['solver']!r}"]
    if order and params.get("tfirst"):
        parts.append("tfirst=True")
    return parts + [f"{k}={v!r}" for k, v in params["options"]]


def args_tuple(texts: list[str]) -> str:
    return "(" + ", ".join(texts) + ("," if len(texts) == 1 else "") + ")"


def _spelling(args: list[str], params: dict) -> str:
    y0, t, *extra = args
    parts = [params["spelling"], y0, t] + ([f"args={args_tuple(extra)}"] if extra else [])
    return f"integrate_odeint({', '.join(parts + options_text(params))})"


defprim(
    "odeint", integrate_odeint, "(y0, t, *args)", diff=("y0", "t", "args"),
    family="scipy.integrate", spelling=_spelling, batch=None,
    note="scipy.integrate.odeint(func, y0, t, args) and solve_ivp(fun, t_span, y0, "
    "t_eval=...).y: reverse mode by the adjoint ODE (<func>_adjoint, integrated "
    "backward with the same solver), forward mode by the sensitivity equations "
    "(<func>_tangent); vmap solves each example",
)


@batch_rule("odeint")
def odeint_rule(b: Batch, s: Let) -> str:
    """One solve per example (``integrate_odeint_each``): the batch axis is first."""
    texts = [atom_text(a) for a in s.args]
    y0, t, *extra = texts
    batched = args_tuple(["True" if b.batched(a) else "False" for a in s.args])
    parts = [s.params["spelling"], y0, t, args_tuple(extra), batched]
    return f"integrate_odeint_each({', '.join(parts + options_text(s.params))})"
