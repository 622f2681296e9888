"""``scipy.integrate.odeint(func, y0, t, args=(...))`` and ``solve_ivp(fun, t_span,
y0, t_eval=..., args=(...))`` in a transformed function: one ``odeint`` statement
holding the dynamics as a callee (``primitives/ode.py``).

The dynamics is any function value s2s knows (a module-level ``def``, a nested ``def``
or a ``lambda``, a partial): it is lowered as a call with the solver's arguments
``(y, t, *args)`` would be, and that call's callee and argument list become the
statement's (a lifted function's captured values are passed as further ``args``, read
where the solver is called, as Python reads a closure's variables when it runs).
Options must be constants; ``Dfun``, ``full_output``, events and dense output are
refused at the call.  ``solve_ivp`` needs ``t_eval``: its result is a dict of ``t``
and ``y`` (``ys`` transposed) read by attribute (``sol.y``).
"""

from __future__ import annotations

import inspect
import sys
from typing import Any

import libcst as cst

from .. import runtime_ode
from ..ir.nodes import Const, Let, Var
from ..primitives import lookup_object

# the options passed on to the solver (constants); any other is refused at the call
ODEINT_OPTIONS = ("rtol", "atol", "mxstep", "hmax", "hmin", "h0", "mxordn", "mxords")
SOLVE_IVP_OPTIONS = ("method", "rtol", "atol", "max_step", "first_step")


def solver_of(obj: Any) -> str | None:
    """``"odeint"`` or ``"solve_ivp"`` where ``obj`` is SciPy's (or the runtime's)."""
    if obj is runtime_ode.integrate_odeint:
        return "odeint"
    if obj in (runtime_ode.integrate_odeint_adjoint, runtime_ode.integrate_odeint_tangent,
               runtime_ode.integrate_odeint_each, runtime_ode.integrate_odeint_adjoint_each,
               runtime_ode.integrate_odeint_tangent_each):
        return "derivative"
    integrate = sys.modules.get("scipy.integrate")
    if integrate is None:
        return None
    if obj is getattr(integrate, "odeint", None):
        return "odeint"
    if obj is getattr(integrate, "solve_ivp", None):
        return "solve_ivp"
    return None


def lower_ode(n: Any, obj: Any, text: str, node: cst.Call, target: str | None) -> Var:
    """The ``odeint`` statement of a call of SciPy's ``odeint`` or ``solve_ivp``."""
    which = solver_of(obj)
    if which == "derivative":  # (emitted code read again: vmap, jacfwd, jacrev)
        return _derivative(n, obj, text, node, target)
    if any(a.star for a in node.args):
        raise n.unsupported(node, f"`{text}` is called with `*`/`**` here",
                            "pass its arguments explicitly")
    sig = inspect.signature(obj)
    try:
        bound = sig.bind(*[a.value for a in node.args if a.keyword is None],
                         **{a.keyword.value: a.value for a in node.args if a.keyword})
    except TypeError as exc:
        raise n.unsupported(node, f"`{text}` cannot be called with these arguments: {exc}",
                            f"call it as {text}{sig}") from None
    given = dict(bound.arguments)
    if which == "solve_ivp":
        func_node, y0_node = given.pop("fun"), given.pop("y0")
        t_span = given.pop("t_span")
        t_node = given.pop("t_eval", None)
        if t_node is None:
            raise n.unsupported(node, f"`{text}` without `t_eval` returns the solver's own "
                                "times, which s2s cannot differentiate through",
                                "pass t_eval=... (the times you read the solution at)")
        allowed = SOLVE_IVP_OPTIONS
        given.update(given.pop("options", {}))  # (its **options: rtol, atol, ...)
    else:
        func_node, y0_node, t_node = given.pop("func"), given.pop("y0"), given.pop("t")
        allowed = ODEINT_OPTIONS
        if obj is runtime_ode.integrate_odeint:  # (emitted code, transformed again)
            return _runtime_form(n, given, func_node, y0_node, t_node, node, target, text)
    args_node = given.pop("args", None)
    tfirst = which == "solve_ivp"
    if "tfirst" in given and which == "odeint":  # func(t, y, *args)
        flag = n.exprs.expr(given.pop("tfirst"))
        if not isinstance(flag, Const):
            raise n.unsupported(node, f"`{text}`'s `tfirst=` must be a constant here",
                                "write tfirst=True or leave it out")
        tfirst = bool(flag.value)
    options: list[tuple[str, Any]] = []
    for key, value in given.items():
        if key not in allowed:
            if isinstance(value, cst.Name) and value.value in ("None", "False") or (
                    isinstance(value, cst.Integer) and value.value == "0"):
                continue  # (left at what s2s does anyway)
            raise n.unsupported(value, f"`{text}`'s `{key}=` is not supported by s2s "
                                "(it differentiates the solution at the given times only)",
                                f"leave `{key}` out; s2s passes on {', '.join(allowed)}")
        const = n.exprs.expr(value)
        if not isinstance(const, Const):
            raise n.unsupported(value, f"`{text}`'s `{key}=` must be a constant here",
                                f"write it as a literal ({key}=1e-8)")
        options.append((key, const.value))
    if which == "solve_ivp":
        span = n.exprs.expr(t_span)
        if not isinstance(span, Const):
            raise n.unsupported(t_span, "solve_ivp's `t_span` must be a constant here",
                                "write it as a literal, (0.0, 10.0)")
        options.append(("t_span", tuple(float(v) for v in span.value)))
    ys = _statement(n, func_node, y0_node, t_node, args_node, node,
                    None if which == "solve_ivp" else target, text,
                    {"solver": which, "tfirst": tfirst, "options": tuple(options)})
    if which != "solve_ivp":
        return ys
    y = n.emit(n.names.fresh("sol_y"), "transpose", (ys,), {}, node)
    return n.emit(n.exprs.target(target, "sol"), "make_dict", (n.lets[ys.name].args[1], y),
                  {"keys": ("t", "y")}, node)


def _statement(n: Any, func_node: Any, y0_node: Any, t_node: Any, args_node: Any,
               node: cst.Call, target: str | None, text: str, params: dict) -> Var:
    """The ``odeint`` statement: the dynamics lowered as a call ``func(y0, t, *args)``
    would be, that call's callee and arguments taken over."""
    fv = n.funcs.value_of(func_node)
    if fv is None or lookup_object(fv.obj) is not None:
        raise n.unsupported(func_node, f"`{text}`'s dynamics must be a Python function "
                            "s2s can read, your own (a def, a nested def or a lambda)",
                            "define the right-hand side with def and pass it by name")
    y0, t = n.exprs.expr(y0_node), n.exprs.expr(t_node)
    for_array = {"make_list", "make_tuple", "list"}
    if isinstance(y0, Var) and getattr(n.lets.get(y0.name), "prim", None) in for_array:
        y0 = n.emit(n.names.fresh("y0"), "asarray", (y0,), {}, node)  # (SciPy's reading)
    extra = _args(n, args_node, text)
    head = [t, y0] if params["tfirst"] else [y0, t]
    before = len(n.out)
    made = n.funcs.call(fv, node, None, (head + extra, {}))
    call = n.out[-1] if len(n.out) > before else None
    if not (isinstance(call, Let) and call.prim == "call" and isinstance(made, Var) and
            call.target == made.name and "custom" not in call.params):
        raise n.unsupported(func_node, f"`{text}`'s dynamics must be your own Python "
                            "function (not a NumPy function or a custom rule)",
                            "wrap it: def f(y, t): return np.sin(y)")
    n.out.pop()
    params = {"callee": call.params["callee"], "spelling": call.params["spelling"],
              **params}
    rest = list(call.args[2:])
    return n.emit(n.exprs.target(target, "ys"), "odeint", (y0, t, *rest), params, node)


def _args(n: Any, node: Any, text: str) -> list[Any]:
    """The atoms of ``args=(a, b)``: a tuple written there or one the code built."""
    if node is None:
        return []
    if isinstance(node, (cst.Tuple, cst.List)):
        if any(isinstance(e, cst.StarredElement) for e in node.elements):
            raise n.unsupported(node, f"`{text}`'s args spread a value here",
                                "write each argument: args=(a, b)")
        return [n.exprs.expr(e.value) for e in node.elements]
    return list(n.funcs.spread(cst.Arg(node, star="*")))


def _runtime_form(n: Any, given: dict, func_node: Any, y0_node: Any, t_node: Any,
                  node: cst.Call, target: str | None, text: str) -> Var:
    """``integrate_odeint(func, y0, t, args=..., solver=..., tfirst=..., **options)``
    in emitted code (grad of grad, vmap of grad read it): the same statement."""
    options = given.pop("options", {})
    solver = n.exprs.expr(given.pop("solver")).value if "solver" in given else "odeint"
    tfirst = n.exprs.expr(given.pop("tfirst")).value if "tfirst" in given else False
    consts = tuple((k, n.exprs.expr(v).value) for k, v in options.items())
    return _statement(n, func_node, y0_node, t_node, given.pop("args", None), node, target,
                      text, {"solver": solver, "tfirst": tfirst, "options": consts})


def _derivative(n: Any, obj: Any, text: str, node: cst.Call, target: str | None) -> Var:
    """``integrate_odeint_adjoint(<func>_adjoint, y0, ys, t, ys_bar, args=...)`` or
    ``integrate_odeint_tangent(<func>_tangent, y0, y0_dot, t, t_dot, args=...,
    args_dot=...)`` in emitted code that vmap (jacfwd, jacrev) reads: one statement
    over the arrays, the function by its name (vmap solves example by example; a
    derivative of it is refused)."""
    if obj not in (runtime_ode.integrate_odeint_adjoint, runtime_ode.integrate_odeint_tangent):
        raise n.unsupported(node, f"`{text}` is a batched ODE solve s2s emitted; "
                            "transforming it again is not supported",
                            "apply vmap outermost")
    sig = inspect.signature(obj)
    bound = sig.bind(*[a.value for a in node.args if a.keyword is None],
                     **{a.keyword.value: a.value for a in node.args if a.keyword})
    given = dict(bound.arguments)
    options = given.pop("options", {})
    fn_node = given.pop("adjoint" if "adjoint" in given else "tangent")
    solver = n.exprs.expr(given.pop("solver")).value if "solver" in given else "odeint"
    fixed = [n.exprs.expr(given.pop(k)) for k in list(sig.parameters)[1:5]]
    extra = _args(n, given.pop("args", None), text)
    dots = _args(n, given.pop("args_dot", None), text)
    fv = n.funcs.value_of(fn_node)
    if fv is None:
        raise n.unsupported(fn_node, "not the function s2s emitted here",
                            "transform the function that calls the solver")
    before = len(n.out)
    made = n.funcs.call(fv, node, None, ([fixed[0], fixed[0], fixed[2], *extra, *dots], {}))
    call = n.out[-1] if len(n.out) > before else None
    assert isinstance(call, Let) and isinstance(made, Var) and call.target == made.name
    n.out.pop()
    prim = "odeint_adjoint" if obj is runtime_ode.integrate_odeint_adjoint else \
        "odeint_tangent"
    params = {"spelling": call.params["spelling"], "solver": solver, "tfirst": False,
              "options": tuple((k, n.exprs.expr(v).value) for k, v in options.items()),
              "n_args": Const(len(extra), str(len(extra)))}
    if prim == "odeint_adjoint":  # (y0_bar, t_bar, and one per arg the adjoint returns)
        count = 2 + _returned_args(call.params["callee"])
        params["results"] = Const(count, str(count))
    return n.emit(n.exprs.target(target, "ode_bars" if prim == "odeint_adjoint" else
                                 "ys_dot"), prim, (*fixed, *extra, *dots), params, node)


def _returned_args(fn: Any) -> int:
    """How many args' cotangents an emitted ``<func>_adjoint`` returns: the length of
    the tuple it returns last."""
    lets = {s.target: s for s in fn.body if isinstance(s, Let)}
    value = fn.body[-1].value
    last = lets[value.name].args[-1]
    return len(lets[last.name].args) if isinstance(last, Var) else len(last.value)
