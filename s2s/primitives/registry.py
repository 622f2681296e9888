"""The primitive registry: one record per primitive, rules attached by decorators.

A primitive is a NumPy function (or operator, or array attribute) s2s knows how to
transform.  Its record says how the forward call is spelled in emitted code, which of
its parameters carry derivatives, and holds its rules.  A rule is an ordinary Python
function; the transforms read its *source* and inline its body into the emitted code
with names substituted, so the rule is exactly what a person reads in the output.

Rule signatures, with the primitive's own parameter names after the first two:

* VJP: ``def sin_vjp(g, ans, x)`` returns the cotangent of each differentiable
  parameter, in order (a tuple when there are several).  ``g`` is the output's
  cotangent and ``ans`` the forward output.
* JVP: ``def sin_jvp(x_dot, ans, x)``, one per differentiable parameter, returns the
  output tangent contributed by that parameter's tangent.

Inside a rule, ``if`` tests over non-array parameters (``axis is None``) are decided
while inlining, so the emitted code contains only the branch that applies.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import linecache
import sys
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .. import runtime, syntax
from ..errors import NonDifferentiableError
from ..ir.nodes import KEYWORD_OPERANDS, Const, Let


@dataclass
class Primitive:
    name: str  # canonical name: "sin", "add", "linalg.inv", "getitem"
    impl: Any  # the callable the forward statement runs (None for syntax-only prims)
    signature: inspect.Signature
    diff: tuple[str, ...]  # parameters that carry derivatives, in order
    family: str
    spelling: Callable[[list[str], dict[str, str]], str]  # forward code from arg texts
    nondiff: bool = False  # output never carries a derivative (comparisons, shapes)
    note: str = ""
    # several results (a tuple, like np.linalg.eigh): how many, as an int or from the
    # call's static arguments by parameter name (np.split(x, 3) -> 3)
    results: int | Callable[[dict[str, Any]], int] | None = None
    vjp: Callable | None = None
    jvps: dict[str, Callable] = field(default_factory=dict)
    # names emitted code must see for this primitive (a user's primitive and the module
    # names its rules read); s2s's own see only np and s2s.runtime
    namespace: dict[str, Any] = field(default_factory=dict)
    builtin: bool = True  # False for a primitive a user registered (s2s.primitive)
    # rewrites a call's arguments (IR atoms, constants known now) into the form the
    # rules read, at transform time: ``canonical(args, kwargs) -> (args, kwargs)``;
    # raises ``Refused`` for a form it cannot rewrite (np.einsum's sublists)
    canonical: Callable[[list, dict], tuple[list, dict]] | None = None
    # the batching default its family declares ("broadcasting", "reducer", ... in
    # batching.DEFAULTS; REFUSED where a batched operand has no spelling), used when
    # no explicit rule is registered under its name
    batch: str | None = None
    module: str = ""  # the module whose defprim registered it (its rules live there)
    # parameters that carry values but whose derivative s2s has no rule for, with why:
    # a derivative flowing into one is refused (``refuse_underived``), never dropped
    underived: dict[str, str] = field(default_factory=dict)

    @property
    def params(self) -> list[str]:
        return list(self.signature.parameters)

    @property
    def differentiable(self) -> bool:
        return not self.nondiff


PRIMITIVES: dict[str, Primitive] = {}
# id(python object) -> primitive name, for resolving calls by identity, never spelling
BY_OBJECT: dict[int, str] = {}
# ndarray method name -> primitive name (``x.sum(...)`` is ``np.sum(x, ...)``)
METHODS: dict[str, str] = {}
# ndarray attribute name -> primitive name (``x.T``, ``x.shape``)
ATTRIBUTES: dict[str, str] = {}
_KEEP_ALIVE: list[Any] = []  # objects whose id() is a key of BY_OBJECT
_GENERATION = [0]  # bumped whenever a primitive or a rule is (re)registered


def generation() -> int:
    """Changes whenever rules change: emitted code cached before is out of date."""
    return _GENERATION[0]


def bump() -> None:
    _GENERATION[0] += 1


def call_spelling(path: str) -> Callable[[list[str], dict[str, str]], str]:
    def spell(args: list[str], params: dict[str, str]) -> str:
        parts = list(args) + [f"{k}={v}" for k, v in params.items()]
        return f"{path}({', '.join(parts)})"

    return spell


def infix(op: str) -> Callable[[list[str], dict[str, str]], str]:
    return lambda args, params: f"{args[0]} {op} {args[1]}"


def prefix(op: str) -> Callable[[list[str], dict[str, str]], str]:
    return lambda args, params: f"{op}{args[0]}"


def attribute(attr: str) -> Callable[[list[str], dict[str, str]], str]:
    return lambda args, params: f"{args[0]}.{attr}"


def defprim(
    name: str,
    impl: Any,
    sig: str,
    *,
    diff: tuple[str, ...] | None = None,
    family: str,
    spelling: Callable[[list[str], dict[str, str]], str] | None = None,
    nondiff: bool = False,
    aliases: tuple[Any, ...] = (),
    methods: tuple[str, ...] = (),
    attributes: tuple[str, ...] = (),
    note: str = "",
    results: int | Callable[[dict[str, Any]], int] | None = None,
    canonical: Callable[[list, dict], tuple[list, dict]] | None = None,
    batch: str | None = None,
    override: bool = False,
    underived: dict[str, str] | None = None,
) -> Primitive:
    """Register a primitive (once: a second ``defprim`` of a name raises unless it
    says ``override=True``).

    ``sig`` is its Python parameter list, e.g. ``"(a, axis=None, keepdims=False)"``.
    By default the parameters without defaults are the differentiable ones.
    ``batch`` names the batching default (see ``FAMILY_BATCH``: the family's, unless
    given) that vmap uses where no rule is registered under ``name``.
    """
    if name in PRIMITIVES and not override:
        raise ValueError(f"a primitive named {name!r} is already registered; pass "
                         "override=True to replace it")
    signature = _parse_signature(sig)
    if diff is None:
        diff = tuple(
            p.name
            for p in signature.parameters.values()
            if p.default is inspect.Parameter.empty
        )
    if spelling is None:
        spelling = call_spelling("np." + name)
    prim = Primitive(
        name=name,
        impl=impl,
        signature=signature,
        diff=() if nondiff else diff,
        family=family,
        spelling=spelling,
        nondiff=nondiff,
        note=note,
        results=results,
        canonical=canonical,
        batch=batch if batch is not None else FAMILY_BATCH.get(family),
        module=_caller_module(),
        underived=underived or {},
    )
    PRIMITIVES[name] = prim
    bump()
    for obj in (impl, *aliases):
        if obj is not None:
            BY_OBJECT[id(obj)] = name
            _KEEP_ALIVE.append(obj)
    for m in methods:
        METHODS[m] = name
    for a in attributes:
        ATTRIBUTES[a] = name
    return prim


# Batching defaults by family: functions that act elementwise broadcast; families that
# make arrays from shapes and constants, or read facts of dtypes, take no batched
# operand (vmap copies their statements unbatched and refuses a batched one).
REFUSED = "refused"
FAMILY_BATCH = {
    **dict.fromkeys(("elementwise", "piecewise-constant", "binary", "comparison",
                     "special"), "broadcasting"),
    **dict.fromkeys(("constructor / integer-valued", "array facts"), REFUSED),
}


def _declaring_globals() -> dict[str, Any]:
    """The globals of the module that declared a primitive or a rule: the caller of
    ``defprim``/``deflinear``, past this module and a family's shorthand for it
    (``_defhelper``, ``_defspecial``: a ``_def*`` function another family may import)."""
    frame = sys._getframe(1)
    while frame.f_globals.get("__name__") == __name__ or \
            frame.f_code.co_name.startswith("_def"):
        frame = frame.f_back
    return frame.f_globals


def _caller_module() -> str:
    """The module that declared the primitive."""
    return _declaring_globals().get("__name__", "")


def _rule_name(rule: Callable) -> str:
    return f"{rule.__module__}.{rule.__qualname__}"


def _parse_signature(sig: str) -> inspect.Signature:
    namespace: dict[str, Any] = {}
    exec(f"def _spec{sig}: pass", {}, namespace)
    return inspect.signature(namespace["_spec"])


def defvjp(name: str, override: bool = False) -> Callable[[Callable], Callable]:
    """Attach the decorated function as the VJP rule of primitive ``name`` (once for a
    built-in primitive, unless ``override=True``)."""

    def register(rule: Callable) -> Callable:
        prim = PRIMITIVES[name]
        if prim.vjp is not None and prim.builtin and not override:
            raise ValueError(f"{name} already has the VJP rule {_rule_name(prim.vjp)}; "
                             "pass override=True to replace it")
        expected = ["g", "ans", *prim.params]
        got = list(inspect.signature(rule).parameters)
        if got != expected:
            raise TypeError(f"VJP rule for {name} must take {expected}, takes {got}")
        prim.vjp = rule
        bump()
        return rule

    return register


def defjvp(name: str, wrt: str, override: bool = False) -> Callable[[Callable], Callable]:
    """Attach the decorated function as the JVP rule of ``name`` for parameter ``wrt``
    (once for a built-in primitive, unless ``override=True``)."""

    def register(rule: Callable) -> Callable:
        prim = PRIMITIVES[name]
        if wrt in prim.jvps and prim.builtin and not override:
            raise ValueError(f"{name} already has the JVP rule {_rule_name(prim.jvps[wrt])} "
                             f"for {wrt}; pass override=True to replace it")
        expected = [wrt + "_dot", "ans", *prim.params]
        got = list(inspect.signature(rule).parameters)
        if got != expected:
            raise TypeError(f"JVP rule for {name} must take {expected}, takes {got}")
        prim.jvps[wrt] = rule
        bump()
        return rule

    return register


def linear_jvp_source(name: str, wrt: str, keywords: bool = False) -> str:
    """The JVP rule of a primitive linear in ``wrt``: the primitive's own spelling with
    ``wrt``'s tangent in its place (``np.reshape(a_dot, shape)``).  ``keywords`` passes
    the parameters that have defaults by keyword, as the call spells them."""
    prim = PRIMITIVES[name]
    args, params = [], {}
    for pname, p in prim.signature.parameters.items():
        text = pname + "_dot" if pname == wrt else pname
        if keywords and p.default is not p.empty:
            params[pname] = text
        else:
            args.append(text)
    stem = name.replace(".", "_") + "_jvp" + ("" if len(prim.diff) == 1 else "_" + wrt)
    signature = ", ".join([wrt + "_dot", "ans", str(prim.signature)[1:-1]])
    return f"def {stem}({signature}):\n    return {prim.spelling(args, params)}\n"


def deflinear(name: str, *wrt: str, keywords: bool = False) -> None:
    """Derive and register the JVP rule of ``name`` for each parameter of ``wrt`` in
    which it is linear (``linear_jvp_source``).  The rule is a real function with
    readable source (in ``linecache``), which the transforms inline as they do a
    hand-written one; ``python -m s2s primitives --rule NAME`` prints it."""
    # the declaring module's names, as a def's, and the runtime helpers emitted code
    # imports (a helper primitive's spelling names its helper, ``einsum_bar(...)``)
    declaring = _declaring_globals()
    namespace = {**{n: getattr(runtime, n) for n in runtime.__all__}, **declaring}
    for w in wrt:
        text = linear_jvp_source(name, w, keywords)
        filename = f"<s2s deflinear {name} {w}>"
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        local: dict[str, Any] = {}
        exec(compile(text, filename, "exec"), namespace, local)
        (rule,) = local.values()
        params = set(inspect.signature(rule).parameters)
        unknown = sorted({n.id for n in ast.walk(syntax.parse(text)) if isinstance(n, ast.Name)
                          and n.id not in params and n.id not in namespace
                          and not hasattr(builtins, n.id)})
        if unknown:  # the rule would raise NameError when it runs: say so now
            raise NameError(f"the derived JVP rule of {name} reads {', '.join(unknown)}, "
                            f"which {declaring.get('__name__')} does not define or import")
        rule.__module__ = namespace.get("__name__", __name__)
        defjvp(name, w)(rule)


def defbilinear(name: str, a: str, b: str, keywords: bool = False) -> None:
    """``deflinear`` in each of two operands of a bilinear primitive (``x1 @ x2``):
    the tangent is the sum of the two rules', each the product with one tangent."""
    deflinear(name, a, b, keywords=keywords)


class Refused(Exception):
    """A call form a primitive's rules do not read and its ``canonical`` cannot
    rewrite: ``Refused(what, hint)``; s2s reports it at the call, with the hint."""

    def __init__(self, what: str, hint: str) -> None:
        super().__init__(what)
        self.what = what
        self.hint = hint


# scipy.stats' distributions are objects whose methods are bound anew at each access
# (``norm.pdf is norm.pdf`` is False): such a method is known by its object and name
BY_METHOD: dict[tuple[int, str], str] = {}
# ... and a distribution's name (``norm``) by its class, for its frozen forms (a frozen
# distribution holds a copy of the distribution object)
FROZEN: dict[type, str] = {}
FROZEN_FORMS: dict[str, int] = {}  # a distribution's name -> its form's key


def lookup_object(obj: Any) -> Primitive | None:
    name = BY_OBJECT.get(id(obj))
    if name is None and ("scipy.special" in sys.modules or (
        getattr(obj, "__module__", None) in ("math", "s2s.runtime_scipy")
    )):
        from . import special  # noqa: F401  (registers SciPy's functions on first use)

        name = BY_OBJECT.get(id(obj))
    if name is None and ("scipy.stats" in sys.modules or (
        getattr(obj, "__module__", None) == "s2s.runtime_scipy"
    )):
        from . import stats  # noqa: F401  (and scipy.stats' methods)

        name = BY_OBJECT.get(id(obj))
    if name is None and _scipy_solvers_in_use(obj):
        from . import scipy_linalg  # noqa: F401  (scipy.linalg's and scipy.signal's)

        name = BY_OBJECT.get(id(obj))
    if name is None and inspect.ismethod(obj):
        name = BY_METHOD.get((id(obj.__self__), obj.__name__))
    if name is None and str(getattr(obj, "__module__", None)).startswith("jax"):
        name = _jax_spelling(obj)
    return PRIMITIVES[name] if name is not None else None


# JAX's spellings of s2s's primitives, ``(module, attribute) -> primitive``: a function
# s2s transforms may call ``jax.lax.psum`` where it means ``s2s.lax.psum``.  Read only
# once JAX is imported (s2s never imports it for this).
JAX_SPELLINGS: dict[tuple[str, str], str] = {("jax.lax", "stop_gradient"): "stop_gradient"}


def _jax_spelling(obj: Any) -> str | None:
    for (module, attr), name in JAX_SPELLINGS.items():
        found = sys.modules.get(module)
        if found is not None and getattr(found, attr, None) is obj:
            return name
    return None


def refuse_underived(prim: Primitive, s: Any, active: list[int]) -> None:
    """Raise ``NonDifferentiableError`` where an argument at one of the positions
    ``active`` (of statement ``s``) carries a derivative into a parameter of
    ``prim.underived``: a derivative s2s has no rule for is refused, not taken as 0."""
    if not prim.underived:
        return
    slots = arg_slots(s)
    for j in active:
        why = prim.underived.get(slots[j][0])
        if why is not None:
            raise NonDifferentiableError(
                f"`{s.prim}` has no derivative rule in `{slots[j][0]}`: {why}", s.loc,
                f"pass `{slots[j][0]}` as a constant (or under stop_gradient)")


# Calls that are another primitive's in other words (``np.add.reduce(a)`` is
# ``np.sum(a, axis=0)``, ``np.linalg.svd(a, compute_uv=False)`` is
# ``np.linalg.svdvals(a)``, ``np.select`` a chain of ``np.where``): a form rewrites the
# call's arguments (IR atoms) into steps, ``[(name, args, kwargs), ...]``, each a call
# of a registered primitive whose arguments may name an earlier step's result
# (``Result(k)``); the last step's result is the call's.  ``rewrite(args, kwargs, items)`` reads the
# items of a list the function built with ``items(atom)`` (None for any other value),
# and raises ``Refused`` for a form it cannot rewrite.  A form is found before the
# object's own primitive (``np.linalg.svd``'s form passes other calls on to it).
FORMS: dict[Any, tuple[Callable, str, str]] = {}  # key -> (rewrite, spelling, note)


class Result:
    """A form's step argument: the result of step ``k`` of the same form."""

    def __init__(self, k: int) -> None:
        self.k = k


def _form_key(obj: Any) -> Any:
    owner = getattr(obj, "__self__", None)  # np.add.reduce: bound anew at each access
    if owner is not None and (isinstance(owner, np.ufunc) or type(owner) in FROZEN):
        return (id(owner), obj.__name__)  # (norm.entropy, likewise)
    return id(obj)


def defform(obj: Any, spelling: str, rewrite: Callable, note: str) -> None:
    """Register ``rewrite`` as the form of calls of ``obj``, spelled ``spelling`` in
    listings (see ``FORMS``)."""
    FORMS[_form_key(obj)] = (rewrite, spelling, note)
    _KEEP_ALIVE.append(getattr(obj, "__self__", obj))
    bump()


def lookup_form(obj: Any) -> Callable | None:
    """The form registered for calls of ``obj``, or None."""
    found = FORMS.get(_form_key(obj))
    if found is None and "scipy.stats" in sys.modules and \
            "s2s.primitives.stats" not in sys.modules:
        from . import stats  # noqa: F401  (calls of distributions: frozen ones)

        found = FORMS.get(_form_key(obj))
    if found is None and _frozen_method(obj) is not None:
        return _frozen_method(obj)
    if found is None and "scipy.special" in sys.modules and \
            "s2s.primitives.special" not in sys.modules:
        from . import special  # noqa: F401  (logsumexp's return_sign)

        found = FORMS.get(_form_key(obj))
    if found is None and _scipy_solvers_in_use(obj):
        from . import scipy_linalg  # noqa: F401  (cho_factor, cho_solve, correlate)

        found = FORMS.get(_form_key(obj))
    return found[0] if found is not None else None


def _frozen_method(obj: Any) -> Callable | None:
    """A method of a distribution frozen outside the function (``D = norm(0.5, 2.0)``,
    ``D.logpdf(x)``): the distribution's method with the frozen parameters, numbers
    written as constants."""
    owner = getattr(obj, "__self__", None)
    dist = FROZEN.get(type(getattr(owner, "dist", None)))
    if dist is None or not hasattr(owner, "args") or not hasattr(owner, "kwds"):
        return None
    name = f"scipy.stats.{dist}.{obj.__name__}"
    name = name if name in PRIMITIVES else None
    moment = FORMS.get((FROZEN_FORMS.get(dist), obj.__name__))  # (D.entropy(): a form)

    def rewrite(args, kwargs, items):
        if name is None and moment is None:
            raise Refused(f"`{obj.__name__}` of a frozen {dist} has no rules in s2s",
                          f"call one of scipy.stats.{dist}'s methods s2s lists (s2s "
                          "primitives)")
        frozen = FORMS[FROZEN_FORMS[dist]][0]([Const(a, repr(a)) for a in owner.args],
                                          {k: Const(v, repr(v)) for k, v in
                                           owner.kwds.items()}, items)
        params = frozen[0][1][1:]
        if not all(isinstance(p.value, (int, float, np.number)) for p in params):
            raise Refused(f"a {dist} frozen outside the function with parameters that "
                          "are not numbers", "freeze it inside the function, or call "
                          f"scipy.stats.{dist}.{obj.__name__}(x, ...) with them")
        if name is None:
            return moment[0]([*args, *params], kwargs, items)
        return [(name, [*args[:1], *params, *args[1:]], kwargs)]
    return rewrite


def _scipy_solvers_in_use(obj: Any) -> bool:
    """Might ``obj`` be scipy.linalg's or scipy.signal's (registered on first use)?"""
    return ("scipy.linalg" in sys.modules or "scipy.signal" in sys.modules or getattr(
        obj, "__module__", None) == "s2s.runtime_scipy") and \
        "s2s.primitives.scipy_linalg" not in sys.modules


# Modules whose attributes resolve by identity: anything reached through them that is
# not a registered primitive is reported as an unsupported call, by its numpy name.
NUMPY_MODULES = {np, np.linalg, np.fft, np.random}


# primitives whose operands NumPy reads with ``np.asarray`` (``np.sum(items)`` of a
# list is ``np.sum(np.asarray(items))``), by their batching family and by name;
# functions that take a list of arrays as a list are not among them
ARRAY_LIKE_FAMILIES = ("broadcasting", "reducer", "cumulative", "normalizer", "along_axis")
ARRAY_LIKE_PRIMS = ("shape", "ndim", "size", "sort", "dot", "matmul", "outer", "linalg.norm")


# Python's own operations among them (`is`, `and`, `range`) and runtime helpers
PYTHON_LEVEL = ("is_", "is_not", "and_", "or_", "range", "real_only", "sign_turn",
                "contains")


def reads_arrays(name: str) -> bool:
    """Does the primitive ``name`` read each operand as ``np.asarray`` of it?"""
    p = PRIMITIVES.get(name)
    return p is not None and name not in PYTHON_LEVEL and (
        p.batch in ARRAY_LIKE_FAMILIES or name in ARRAY_LIKE_PRIMS)


def is_integer_constant(x: Any) -> bool:
    """Rule helper, decided while inlining: is ``x`` a Python int known now?"""
    return isinstance(x, int) and not isinstance(x, bool)


def is_number_constant(x: Any) -> bool:
    """Rule helper, decided while inlining: is ``x`` a real number known now?"""
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(
        x, (bool, np.bool_))


def is_basic_index(index: Any) -> bool:
    """Rule helper, decided while inlining: does NumPy's basic indexing apply?

    Basic indexes (ints, slices, None, ...) never repeat an element, so ``+=`` into
    them is exact; integer-array indexes may repeat, and need ``np.add.at``.
    """
    return bool(getattr(index, "is_basic", lambda: False)())


def names_each_once(index: Any) -> bool:
    """Rule helper, decided while inlining: does the index name no element twice (a
    basic index, or one boolean mask), so that a write's last value is its only one?"""
    return is_basic_index(index) or bool(getattr(index, "mask", False))


def arg_slots(s: Let) -> list[tuple[str, int | None]]:
    """For each argument of a statement: its parameter, and its place in ``*args``."""
    prim = PRIMITIVES[s.prim]
    keywords = s.params.get(KEYWORD_OPERANDS, ())
    slots: list[tuple[str, int | None]] = []
    for pname, p in prim.signature.parameters.items():
        if p.kind is p.VAR_POSITIONAL:
            rest = len(s.args) - len(slots) - len(keywords)
            slots += [(pname, k) for k in range(rest)]
            break
        if p.default is p.empty and pname not in s.params:
            slots.append((pname, None))
    return slots + [(name, None) for name in keywords]
