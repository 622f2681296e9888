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

from typing import Any

from ..ir.nodes import Let
from ..ir.spelling import atom_text
from ..runtime_ode import integrate_odeint, integrate_odeint_adjoint, integrate_odeint_tangent
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


# The derivatives' helpers, in emitted code that vmap reads again (jacfwd is vmap of
# the emitted JVP, jacrev of the VJP): ``params["spelling"]`` names the emitted
# ``<func>_adjoint``/``<func>_tangent``, ``n_args`` how many of the trailing operands
# are ``args`` (the rest: ``args_dot``).  vmap solves example by example; their own
# derivatives are refused (transforms/odes.py).


def _split(s_args: list[str], params: dict) -> tuple[list[str], list[str], list[str]]:
    n = params["n_args"].value
    return s_args[:4], s_args[4:4 + n], s_args[4 + n:]


def _derivative_spelling(helper: str) -> Any:
    def spell(args: list[str], params: dict) -> str:
        fixed, extra, dots = _split(args, params)
        parts = [params["spelling"], *fixed]
        if extra or dots:
            parts.append(f"args={args_tuple(extra)}")
        if helper == "integrate_odeint_tangent" and (extra or dots):
            parts.append(f"args_dot={args_tuple(dots)}")
        return f"{helper}({', '.join(parts + options_text(params, False))})"

    return spell


defprim("odeint_adjoint", integrate_odeint_adjoint, "(y0, ys, t, ys_bar, *args)",
        diff=("y0", "ys", "t", "ys_bar", "args"), family="scipy.integrate",
        spelling=_derivative_spelling("integrate_odeint_adjoint"),
        results=lambda known: known["results"],
        note="odeint's cotangents by the adjoint ODE (emitted code); vmap solves each "
        "example, its derivative is refused")
defprim("odeint_tangent", integrate_odeint_tangent, "(y0, y0_dot, t, t_dot, *args)",
        diff=("y0", "y0_dot", "t", "t_dot", "args"), family="scipy.integrate",
        spelling=_derivative_spelling("integrate_odeint_tangent"),
        note="odeint's tangent by the sensitivity equations (emitted code); vmap solves "
        "each example, its derivative is refused")


@batch_rule("odeint_adjoint", "odeint_tangent")
def odeint_derivative_rule(b: Batch, s: Let) -> str:
    """One solve per example (``integrate_odeint_adjoint_each``, ...)."""
    texts = [atom_text(a) for a in s.args]
    flags = ["True" if b.batched(a) else "False" for a in s.args]
    fixed, extra, dots = _split(texts, s.params)
    fixed_b, extra_b, dots_b = _split(flags, s.params)
    helper = ("integrate_odeint_adjoint" if s.prim == "odeint_adjoint"
              else "integrate_odeint_tangent")
    values = fixed + [args_tuple(extra)] + ([args_tuple(dots)] if s.prim ==
                                            "odeint_tangent" else [])
    batched = fixed_b + [args_tuple(extra_b)] + ([args_tuple(dots_b)] if s.prim ==
                                                 "odeint_tangent" else [])
    parts = [s.params["spelling"], args_tuple(values), args_tuple(batched)]
    return f"{helper}_each({', '.join(parts + options_text(s.params, False))})"
