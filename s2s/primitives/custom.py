"""User-defined derivatives: ``custom_jvp``, ``custom_vjp`` and new primitives.

``custom_jvp`` and ``custom_vjp`` take JAX's signatures.  A call to a decorated function
inside a transformed function is a call to a user function like any other (vmap batches
the function itself), except where a derivative is taken:

* forward mode calls the JVP rule by name: ``y, y_dot = f_jvp((x,), (x_dot,))``, and its
  primal output is the one used, as in JAX;
* reverse mode transposes the JVP rule: the rule is linear in its tangents, so the
  cotangent of the inputs is the VJP of the rule with respect to its tangents, emitted as
  a helper function from the rule's own code (``f_jvp_vjp_tangents``);
* a ``custom_vjp`` function's backward calls ``fwd`` for the residuals and ``bwd`` for the
  cotangents.  The forward sweep evaluates ``fun`` itself, so ``fwd`` runs again in the
  backward sweep (the residuals are recomputed, as under ``jax.checkpoint``).  Forward mode
  of a ``custom_vjp`` function is refused, as in JAX.

``primitive`` registers a new primitive whose rules are written exactly as s2s's own
(``def softplus_vjp(g, ans, x)``, see ``s2s.primitives.registry``): they are inlined into
emitted code like the built-in ones.
"""

from __future__ import annotations

import ast
import builtins
import functools
import inspect
import textwrap
from typing import Any, Callable, Generic, Sequence, TypeVar

import numpy as np

from .. import syntax
from ..emit.code import compile_module
from . import registry

F = TypeVar("F", bound=Callable[..., Any])


def _check_nondiff(fun: Callable, nondiff_argnums: Sequence[int],
                   nondiff_argnames: Sequence[str]) -> tuple[int, ...]:
    params = list(inspect.signature(fun).parameters)
    nums = tuple(int(i) for i in nondiff_argnums)
    for i in nums:
        if not -len(params) <= i < len(params):
            raise ValueError(f"nondiff_argnums {i} out of range for {fun.__name__}"
                             f"{inspect.signature(fun)}")
    nums = tuple(sorted({i % len(params) for i in nums} | {
        params.index(n) for n in nondiff_argnames}))
    return nums


class _Custom(Generic[F]):
    """What custom_jvp and custom_vjp share: the wrapped function, called as it is."""

    def __init__(self, fun: F, nondiff_argnums: Sequence[int] = (),
                 nondiff_argnames: Sequence[str] = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = _check_nondiff(fun, nondiff_argnums, nondiff_argnames)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fun(*args, **kwargs)

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        return functools.partial(self, instance)


class custom_jvp(_Custom[F]):
    """A function with a JVP rule of its own (JAX's ``jax.custom_jvp``).

    ``@f.defjvp`` takes ``rule(primals, tangents) -> (primal_out, tangent_out)``; with
    ``nondiff_argnums`` those arguments come first and are absent from ``primals``.
    ``f.defjvps(*jvps)`` takes one ``jvp(tangent, primal_out, *primals)`` per argument
    (``None`` for one that passes no tangent).  Calling ``f`` runs the function itself.
    """

    def __init__(self, fun: F, nondiff_argnums: Sequence[int] = (),
                 nondiff_argnames: Sequence[str] = ()) -> None:
        super().__init__(fun, nondiff_argnums, nondiff_argnames)
        self.jvp: Callable | None = None
        self.jvps: tuple[Callable | None, ...] | None = None

    def defjvp(self, jvp: Callable, symbolic_zeros: bool = False) -> Callable:
        if symbolic_zeros:
            raise NotImplementedError(
                "s2s passes ordinary zero arrays as tangents; symbolic_zeros=True is "
                "not supported")
        self.jvp = jvp
        registry.bump()  # code emitted with an older rule is out of date
        return jvp

    def defjvps(self, *jvps: Callable | None) -> None:
        n = len(inspect.signature(self.fun).parameters) - len(self.nondiff_argnums)
        if len(jvps) != n:
            raise TypeError(f"defjvps for {self.__name__} needs {n} rules, got {len(jvps)}")
        self.jvps = jvps
        self.jvp = _jvp_from_jvps(self, jvps)
        registry.bump()

    def rule_for_transform(self) -> Callable:
        if self.jvp is None:
            raise AttributeError(
                f"No JVP defined for custom_jvp function {self.__name__} using defjvp.")
        return self.jvp


class custom_vjp(_Custom[F]):
    """A function with a VJP of its own (JAX's ``jax.custom_vjp``).

    ``f.defvjp(fwd, bwd)``: ``fwd(*args) -> (out, residuals)`` and
    ``bwd(residuals, g) -> tuple`` of one cotangent per argument (with
    ``nondiff_argnums``, ``bwd(*nondiff_args, residuals, g)`` and one per other argument).
    """

    def __init__(self, fun: F, nondiff_argnums: Sequence[int] = (),
                 nondiff_argnames: Sequence[str] = ()) -> None:
        super().__init__(fun, nondiff_argnums, nondiff_argnames)
        self.fwd: Callable | None = None
        self.bwd: Callable | None = None

    def defvjp(self, fwd: Callable, bwd: Callable, symbolic_zeros: bool = False,
               optimize_remat: bool = False) -> None:
        if symbolic_zeros:
            raise NotImplementedError(
                "s2s passes ordinary arrays to bwd; symbolic_zeros=True is not supported")
        self.fwd, self.bwd = fwd, bwd
        registry.bump()

    def rules_for_transform(self) -> tuple[Callable, Callable]:
        if self.fwd is None or self.bwd is None:
            raise AttributeError(
                f"No VJP defined for custom_vjp function {self.__name__} using defvjp.")
        return self.fwd, self.bwd


def _jvp_from_jvps(f: custom_jvp, jvps: tuple[Callable | None, ...]) -> Callable:
    """One ``(primals, tangents)`` rule summing the per-argument ones of ``defjvps``,
    written as source (so transforms read it like any rule)."""

    if f.nondiff_argnums:
        raise NotImplementedError("defjvps with nondiff_argnums: use defjvp")
    params = list(inspect.signature(f.fun).parameters)
    own = f.__name__ if f.__name__.isidentifier() else "fun"
    namespace: dict[str, Any] = {"np": np, own: f}
    terms = []
    for i, (p, rule) in enumerate(zip(params, jvps)):
        if rule is not None:
            namespace[f"jvp_{p}"] = rule
            terms.append(f"jvp_{p}({p}_dot, ans, {', '.join(params)})")
    name = f"{f.__name__}_jvp"
    unpack = lambda names: ", ".join(names) + ("," if len(names) == 1 else "")
    text = "\n".join([
        f"def {name}(primals, tangents):",
        f"    {unpack(params)} = primals",
        f"    {unpack([p + '_dot' for p in params])} = tangents",
        f"    ans = {own}({', '.join(params)})",
        f"    return ans, {' + '.join(terms) if terms else 'np.zeros_like(ans)'}",
    ]) + "\n"
    return compile_module(text, namespace, name)[name]


# ---- checked rules: JAX's messages when a rule returns the wrong structure -------------


def _str_short(x: Any) -> str:
    a = np.asarray(x)
    return f"{a.dtype.name}{list(a.shape)}".replace(" ", "")


def checked_jvp(rule: Callable, name: str) -> Callable:
    """``rule``, checking that it returns a pair whose tangent is shaped as the output."""
    @functools.wraps(rule)
    def run(*args: Any) -> Any:
        result = rule(*args)
        if not (isinstance(result, (tuple, list)) and len(result) == 2):
            raise TypeError(
                "Custom JVP rule must produce a pair (list or tuple of length two) "
                f"representing primal and tangent outputs, but got {result!r}.")
        out, out_dot = result
        for o, t in zip(_leaves(out), _leaves(out_dot)):
            if np.shape(o) != np.shape(t):
                raise TypeError(
                    "Custom JVP rule must produce primal and tangent outputs with "
                    f"corresponding shapes and dtypes. Expected {_str_short(o)} (tangent "
                    f"type of {_str_short(o)}) but got {_str_short(t)}.")
        return result

    run.__s2s_unwrap__ = rule  # type: ignore[attr-defined]
    return run


def checked_bwd(rule: Callable, nargs: int) -> Callable:
    """``bwd``, checking that it returns a tuple of one cotangent per argument."""
    @functools.wraps(rule)
    def run(*args: Any) -> Any:
        result = rule(*args)
        if not isinstance(result, tuple) or len(result) != nargs:
            got = type(result).__name__ if not isinstance(result, tuple) else (
                f"a tuple of {len(result)}")
            raise TypeError(
                "Custom VJP bwd rule must produce an output with the same container "
                "(pytree) structure as the args tuple of the primal function, and in "
                "particular must produce a tuple of length equal to the number of "
                f"arguments to the primal function, but got {got} for {nargs} "
                "argument(s).")
        if any(r is None for r in result):
            raise TypeError(
                "Custom VJP bwd rule returned None for an argument: s2s needs an array "
                "there; return np.zeros_like(x) for an argument with no cotangent.")
        return result

    run.__s2s_unwrap__ = rule  # type: ignore[attr-defined]
    return run


def _leaves(x: Any) -> list[Any]:
    if isinstance(x, (tuple, list)):
        return [leaf for item in x for leaf in _leaves(item)]
    if isinstance(x, dict):
        return [leaf for v in x.values() for leaf in _leaves(v)]
    return [x]


# ---- new primitives --------------------------------------------------------------------


class PrimitiveHandle:
    """A registered primitive; attach its rules with ``defvjp`` and ``defjvp``."""

    def __init__(self, prim: registry.Primitive) -> None:
        self.prim = prim

    @property
    def name(self) -> str:
        return self.prim.name

    def defvjp(self, rule: Callable) -> Callable:
        """``rule(g, ans, *params)`` returns one cotangent per differentiable parameter."""
        _check_params(rule, ["g", "ans", *self.prim.params], "VJP", self.prim.name)
        names = _rule_globals(rule, self.prim)  # (refused before anything changes)
        registry.defvjp(self.prim.name)(rule)
        self.prim.namespace.update(names)
        return rule

    def defjvp(self, wrt: str) -> Callable[[Callable], Callable]:
        """``rule(wrt_dot, ans, *params)``: the output tangent from ``wrt``'s tangent."""
        def register(rule: Callable) -> Callable:
            _check_params(rule, [wrt + "_dot", "ans", *self.prim.params], "JVP",
                          self.prim.name)
            names = _rule_globals(rule, self.prim)
            registry.defjvp(self.prim.name, wrt)(rule)
            self.prim.namespace.update(names)
            return rule

        return register

    def __repr__(self) -> str:
        return f"<s2s primitive {self.prim.name}>"


def primitive(impl: Callable, *, name: str | None = None,
              diff: Sequence[str] | None = None, elementwise: bool = False,
              nondiff: bool = False, note: str = "") -> PrimitiveHandle:
    """Register ``impl`` (a function called by name in user code) as a primitive.

    Its parameters are ``impl``'s; those without defaults carry derivatives unless
    ``diff`` names them.  Emitted code calls it by ``name`` (``impl.__name__`` by
    default), so the emitted module needs that name bound to ``impl``.
    ``elementwise=True`` batches it under vmap by broadcasting, as NumPy's ufuncs;
    otherwise vmap refuses it with a clear error.  Rules are attached with
    ``handle.defvjp`` and ``handle.defjvp("x")`` and are inlined into emitted code.
    """
    name = name or impl.__name__
    if name in registry.PRIMITIVES:
        raise ValueError(f"a primitive named {name!r} is already registered")
    if not name.isidentifier():
        raise ValueError(f"a primitive's name must be a Python identifier, got {name!r}")
    sig = str(inspect.signature(impl))
    prim = registry.defprim(
        name, impl, sig, diff=tuple(diff) if diff is not None else None,
        family="elementwise" if elementwise else "user", nondiff=nondiff,
        spelling=registry.call_spelling(name), note=note or "registered by the user",
    )
    prim.namespace[name] = impl
    prim.builtin = False
    return PrimitiveHandle(prim)


def _check_params(rule: Callable, expected: list[str], kind: str, name: str) -> None:
    got = list(inspect.signature(rule).parameters)
    if got != expected:
        raise TypeError(f"{kind} rule for {name} must take {expected}, takes {got}")


def _rule_globals(rule: Callable, prim: registry.Primitive) -> dict[str, Any]:
    """The module names a rule's body reads, which emitted code must see too."""
    try:
        text = inspect.getsource(rule)
    except (OSError, TypeError):
        raise TypeError(f"the source of rule {rule.__name__} of {prim.name} cannot be read "
                        "(s2s inlines a rule's code): define it with def in a file") from None
    fn = syntax.parse(textwrap.dedent(text)).body[0]
    if not isinstance(fn, ast.FunctionDef):
        raise TypeError(f"rule {rule.__name__} of {prim.name}: write it with def (s2s "
                        "inlines its body)")
    local = {a.arg for a in fn.args.args} | {
        n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    out: dict[str, Any] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and (
            node.id not in local and node.id != "np" and not hasattr(builtins, node.id)
        ):
            if node.id in rule.__globals__:
                out[node.id] = rule.__globals__[node.id]
            else:
                raise NameError(f"rule {rule.__name__} of {prim.name} reads `{node.id}`, "
                                "which is not a global of its module")
    return out
