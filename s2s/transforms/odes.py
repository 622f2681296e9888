"""The derivatives of an ODE solve (``odeint``/``solve_ivp``, ``primitives/ode.py``):
functions written into the emitted module from the dynamics' own emitted derivatives.

Reverse mode (the adjoint method): ``<func>_adjoint(y, y_bar, t, *args)`` returns the
rates of the augmented state ``[y, y_bar, t0_bar, args_bar]`` in time, ``(f,
-y_bar·∂f/∂y, -y_bar·∂f/∂t, -y_bar·∂f/∂args)``, from ``<func>_vjp`` (reverse mode of
the user's function, emitted like any callee's); the runtime's
``integrate_odeint_adjoint`` integrates it from each output time back to the one
before with the same solver and options.  Forward mode (sensitivities):
``<func>_tangent(y, y_dot, t, *args, *args_dot)`` is ``<func>_jvp``, the tangent
equations integrated beside ``y`` by ``integrate_odeint_tangent``.
"""

from __future__ import annotations

import textwrap
from typing import Any

from ..emit.code import Line
from ..errors import NonDifferentiableError, TransformError
from ..ir.kinds import LEAF, Tree
from ..ir.names import NameTable
from ..ir.nodes import Function, Let, Var
from ..ir.spelling import atom_text
from ..primitives.ode import args_tuple, options_text
from .analysis import const_kind, return_kind
from .module import Module, stem


def _order(s: Let) -> tuple[int, int]:
    """The callee's positions of ``y`` and ``t`` (solve_ivp's ``fun(t, y)``)."""
    return (1, 0) if s.params.get("tfirst") else (0, 1)


def _call_text(s: Let, y: str, t: str, rest: list[str]) -> list[str]:
    yi, _ = _order(s)
    return [y, t, *rest] if yi == 0 else [t, y, *rest]


def _cotangent(out_kind: Any, bar: str) -> str:
    """The cotangent of the dynamics' result from the vector ``bar`` (a returned list
    of numbers gets the list of ``bar``'s items)."""
    if isinstance(out_kind, Tree) and all(c == LEAF for c in out_kind.children):
        items = [f"{bar}[{i}]" for i in range(len(out_kind.keys))]
        return ("(" if out_kind.type is tuple else "[") + ", ".join(items) + (
            ",)" if out_kind.type is tuple and len(items) == 1 else
            ")" if out_kind.type is tuple else "]")
    return bar


def adjoint_function(s: Let, kinds: tuple, active: list[int], module: Module,
                     vjp_of: Any) -> str:
    """The name of the adjoint ODE of ``s``'s dynamics (emitted once per module):
    ``active`` are the statement's argument positions that carry a cotangent."""
    callee: Function = s.params["callee"]
    yi, ti = _order(s)
    with_t = 1 in active
    extras = [j for j in active if j >= 2]
    positions = tuple(sorted([yi] + ([ti] if with_t else []) + extras))
    key = ("adjoint", id(callee), positions, kinds)
    if key in module.names:
        return module.names[key]
    vjp = vjp_of(callee, positions, kinds, module)
    names = NameTable(set(callee.params) | module.taken | {"np"})
    y, t = callee.params[yi], callee.params[ti]
    rest = list(callee.params[2:])
    bar, rate = names.fresh(f"{y}_bar"), names.fresh("rate")
    parts = {p: names.fresh(f"{callee.params[p]}_vjp") for p in positions}
    ct = _cotangent(return_kind(callee, kinds), bar)
    name = names.fresh(f"{stem(callee)}_adjoint")
    module.names[key] = name
    module.taken.add(name)
    call = ", ".join(_call_text(s, y, t, rest))
    lhs = ", ".join(parts[p] for p in positions)
    t_rate = f"-{parts[ti]}" if with_t else "0.0"
    args_rate = args_tuple([f"-{parts[j]}" for j in extras])
    doc = (f"The adjoint ODE of `{s.params['spelling']}`, integrated backward in time from "
           f"each output time to the one before: the rates of {y}, of its cotangent "
           f"{bar}, and of the cotangents of {t} and of the args (-{bar}·∂f/∂{t}, "
           f"-{bar}·∂f/∂args).")
    module.functions.append(
        f"def {name}({', '.join([y, bar, t, *rest])}):\n"
        f"{_docstring(doc)}"
        f"    {rate} = {s.params['spelling']}({call})\n"
        f"    {lhs} = {vjp}({call}, {ct})\n"
        f"    return {rate}, -{parts[yi]}, {t_rate}, {args_rate}\n")
    return name


def backward(state: Any, vjp_of: Any, s: Let, g: dict, adj: dict,
             active_args: list) -> list[Any]:
    """``y0_bar, t_bar, args_bar = integrate_odeint_adjoint(<func>_adjoint, ...)``."""
    kinds = _callee_kinds(state.facts.kinds, s, lambda a: isinstance(a, Var) and any(
        a.name == name for _, name in active_args))
    active = [i for i, _ in active_args]
    name = adjoint_function(s, kinds, active, state.module, vjp_of)
    texts = [atom_text(a) for a in s.args]
    y0, t, *extra = texts
    names = state.names
    y0_bar = names.fresh(f"{_stem(s.args[0], 'y0')}_bar") if 0 in active else "_"
    t_bar = names.fresh(f"{_stem(s.args[1], 't')}_bar") if 1 in active else "_"
    extras = {j: names.fresh(f"{_stem(s.args[j], 'arg')}_bar") for j in active if j >= 2}
    lhs = ", ".join([y0_bar, t_bar, *extras.values()])
    parts = [name, y0, s.target, t, g[()]] + ([f"args={args_tuple(extra)}"] if extra else [])
    out: list[Any] = [Line(f"{lhs} = integrate_odeint_adjoint("
                           f"{', '.join(parts + options_text(s.params, False))})")]
    bars = {0: y0_bar, 1: t_bar, **extras}
    for i, var in active_args:
        state.accumulate_tree(var, (), {(): bars[i]}, adj, out)
    return out


def tangent(state: Any, jvp_of: Any, s: Let, out: list[Any]) -> None:
    """``ys_dot = integrate_odeint_tangent(<func>_tangent, ...)`` after the solve."""
    kinds = _callee_kinds(state.facts.kinds, s, state.is_active)
    for a in s.args:
        state.settle(a, out)
    callee: Function = s.params["callee"]
    yi, ti = _order(s)
    extras = [j for j in range(2, len(s.args)) if state.is_active(s.args[j])]
    positions = tuple(sorted([yi] + extras))
    key = ("tangent", id(callee), positions, kinds)
    module = state.module
    if key not in module.names:
        jvp = jvp_of(callee, positions, kinds, module)
        names = NameTable(set(callee.params) | module.taken | {"np"})
        y, t = callee.params[yi], callee.params[ti]
        rest = list(callee.params[2:])
        dots = {p: names.fresh(f"{callee.params[p]}_dot") for p in positions}
        name = names.fresh(f"{stem(callee)}_tangent")
        module.names[key] = name
        module.taken.add(name)
        call = _call_text(s, y, t, rest) + [dots[p] for p in positions]
        doc = (f"The sensitivity equations of `{s.params['spelling']}`: its value and its "
               f"tangent, integrated beside {y} (the rate of {dots[yi]} is "
               f"∂f/∂{y}·{dots[yi]} + ∂f/∂args·args_dot).")
        module.functions.append(
            f"def {name}({', '.join([y, dots[yi], t, *rest] + [dots[j] for j in extras])}):\n"
            f"{_docstring(doc)}"
            f"    return {jvp}({', '.join(call)})\n")
    name = module.names[key]
    y0, t, *extra = [atom_text(a) for a in s.args]
    y0_dot = state.whole(s.args[0]) if state.is_active(s.args[0]) else \
        f"np.zeros(np.shape({y0}))"
    t_dot = state.whole(s.args[1]) if state.is_active(s.args[1]) else "0.0"
    parts = [name, y0, y0_dot, t, t_dot]
    if extra:
        parts += [f"args={args_tuple(extra)}",
                  f"args_dot={args_tuple([state.whole(s.args[j]) for j in extras])}"]
    dot = state.dot_name(s.target)
    out.append(Line(f"{dot} = integrate_odeint_tangent("
                    f"{', '.join(parts + options_text(s.params, False))})"))
    state.owned.add(dot)
    state.tan.setdefault(s.target, {})[()] = dot


def _callee_kinds(kinds: dict, s: Let, active: Any) -> tuple:
    """The structures the dynamics is called with: ``y`` and ``t`` arrays, then the
    ``args``' own; a container carrying a derivative is refused (the solvers' state
    and the adjoint's cotangents are arrays)."""
    every = tuple(kinds.get(a.name, LEAF) if isinstance(a, Var) else const_kind(a)
                  for a in s.args)
    for i, (a, kind) in enumerate(zip(s.args, every)):
        if kind != LEAF and active(a):
            what = ("y0" if i == 0 else "t") if i < 2 else "an item of args"
            raise TransformError(
                f"{what} of this ODE solve is a container (a list, tuple or dict) that "
                "carries a derivative; s2s differentiates solves over arrays", s.loc,
                "pass arrays: np.array([...]) for y0, each array as its own item of args")
    return (LEAF, LEAF) + every[2:]


def _docstring(text: str) -> str:
    """The text as comment lines opening a function's body (a docstring would be a
    string statement to the optimizer's rewrite, which keeps no comments)."""
    return "".join(f"    # {line}\n" for line in textwrap.wrap(text, 82))


def _stem(atom: Any, fallback: str) -> str:
    return atom.name if isinstance(atom, Var) else fallback


def refuse_again(s: Let) -> None:
    """The solves s2s emitted for an ODE's derivatives have no derivative of their own."""
    raise NonDifferentiableError(
        "a second derivative through this ODE solve (odeint/solve_ivp): s2s "
        "differentiates an ODE solve once, and the derivative of an ODE solve that s2s "
        "emitted has no derivative of its own (hessian, grad of grad and jvp of grad "
        "are not supported; vmap, jacfwd and jacrev of one derivative are)", s.loc,
        "differentiate the solve once (finite differences of the gradient give a "
        "Hessian-vector product)")
