"""A transform written in the function's body: ``s2s.grad(f, argnums=1)(x)``.

The transform object is made when s2s lowers the function (its options must be
constants) and called as a callee whose emitted code s2s inlines (``normalize.py``'s
``inline_transform``).  What it is applied to may be any function value s2s knows
(``functions.py``'s ``FnValue``):

* a ``def``, a ``lambda`` (its captured values passed after the call's arguments), a
  NumPy function, or another transform written there (``s2s.grad(s2s.grad(f))``,
  ``s2s.jacfwd(s2s.grad(f))``): the transform of that object, as JAX nests them;
* a ``functools.partial`` (written in the body or at module level): a small ``def``
  s2s writes that calls the function with the bound values, which are its trailing
  parameters (``def k_partial(x, bound_a=None): return k(x, a=bound_a)``);
* a choice (``f if c else g``): a choice of the transforms, ``T(f) if c else T(g)``,
  decided when s2s transforms the function for a constant test, else an ``if`` on
  the test when it is called (``functions.py``'s ``_call_choice``).
"""

from __future__ import annotations

import functools
import inspect
import keyword
import types
from typing import Any

import libcst as cst

from ..caches import LRU
from ..errors import TransformError
from ..ir.names import stem
from ..ir.nodes import Atom, Const, Index, Var
from .fnvalues import FnValue
from .resolve import is_literal
from .sequences import items_of
from .synthesize import synthesize

# the transforms made in bodies, per (transform, function, options)
_MADE: LRU[Any, Any] = LRU(256)


def watched(n: Any, obj: Any) -> Any:
    """The transform ``obj`` written in the body, its code made again where a module
    name it was made from changed kind (``ACT = np.sin``, a tuple's length), and those
    names the caller's ``n`` too, watched under names no code reads: its emitted code
    inlines ``ACT``'s function and never reads the name, so the caller kept calling
    the old code (a wrong gradient after ``ACT`` was rebound)."""
    refresh = getattr(obj, "_refresh", None)
    if refresh is not None:
        refresh()
    for name, var in obj.ir.free.items():
        n.resolver.free.setdefault(f"<{name} of {obj.__name__} {id(obj):x}>", var)
    return obj


def transform_value(lowerer: Any, transform: Any, text: str, node: cst.Call) -> FnValue:
    """``s2s.grad(f, argnums=1)`` in the body: the transform of the function ``f``
    denotes, made now."""
    n = lowerer.n
    if not node.args or node.args[0].keyword is not None:
        raise n.unsupported(node, f"`{text}` takes the function first",
                            f"write {text}(f, ...)")
    fv = lowerer.value_of(node.args[0].value)
    if fv is None:
        raise n.unsupported(node.args[0], f"`{text}` is given something s2s does not "
                            "know as a function here", "pass a function defined with "
                            "`def` or `lambda`, a partial of one, or a NumPy function")
    options: list[Any] = []
    keywords: dict[str, Any] = {}
    for arg in node.args[1:]:
        atom = n.exprs.expr(arg.value)
        if not isinstance(atom, Const) or arg.star:
            raise n.unsupported(arg, f"`{text}`'s options must be constants here",
                                "write them as literals (argnums=1)")
        if arg.keyword is None:
            options.append(atom.value)
        else:
            keywords[arg.keyword.value] = atom.value
    if fv.choice is None:  # (a choice's functions read their values on their paths)
        fv = lowerer.resolved(fv, node)
    return _of(lowerer, (transform, options, keywords), fv, text, node)


def _of(lowerer: Any, how: tuple, fv: FnValue, text: str, node: Any) -> FnValue:
    """The transform ``how`` of the function value ``fv``."""
    transform, options, keywords = how
    if fv.choice is not None:  # T(f if c else g) is T(f) if c else T(g)
        test, a, b = fv.choice
        return FnValue(None, "choice", choice=(test, _of(lowerer, how, a, text, node),
                                               _of(lowerer, how, b, text, node)))
    if type(fv.obj).__name__ == "KeptVmap":
        raise lowerer.n.unsupported(
            node.args[0], f"`{text}` is given a vmap kept as a value", "write "
            f"{text}(s2s.vmap(g))(x) with the vmap written there, or transform a "
            "function that calls the vmap")
    if fv.head or fv.keywords:
        fv = _bound(lowerer, fv, node)
    if isinstance(fv.obj, (ArityBound, PerCall)):  # (made per call's positional count)
        inner = fv.obj
        made = PerCall(lambda k: _made(lowerer, how, inner.for_call(k), text, node),
                       getattr(inner, "__name__", "fn"))
        return FnValue(made, f"{text.split('.')[-1]}_{made.__name__}", captured=fv.captured)
    made = _made(lowerer, how, fv.obj, text, node)
    name = getattr(fv.obj, "__name__", None) or "fn"
    if name == "<lambda>":
        name = "lambda"
    return FnValue(made, f"{text.split('.')[-1]}_{name}", captured=fv.captured)


def _made(lowerer: Any, how: tuple, obj: Any, text: str, node: Any) -> Any:
    """The transform ``how`` of the function ``obj``, made once per options."""
    transform, options, keywords = how
    try:  # (one object per function and options: their emitted code shares a name)
        key = (transform, obj, repr(options), repr(sorted(keywords.items())))
        made = _MADE.get(key)
        if made is None:
            made = _MADE[key] = transform(obj, *options, **keywords)
    except (TransformError, TypeError, ValueError) as err:
        raise lowerer.n.unsupported(node, f"`{text}` cannot be made here: {err}",
                                    f"call {text} with the options it takes") from None
    return made


def _bound(lowerer: Any, fv: FnValue, node: Any) -> FnValue:
    """A partial (``fv``'s ``head`` and ``keywords``) as a function of the arguments
    it still takes, the bound values (and a lifted function's captured ones) after
    them: ``def k_partial(x, bound_a=None): return k(x, a=bound_a)``."""
    n, obj = lowerer.n, fv.obj
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        sig = None
    bound = [*fv.head, *(v for _, v in fv.keywords), *(v for _, v in fv.captured)]
    if sig is None or any(isinstance(v, FnValue) for v in bound) or not callable(obj):
        raise n.unsupported(node.args[0], "a transform of a partial here takes a "
                            "partial of a Python or NumPy function binding arrays or "
                            "numbers", "bind the values in a `lambda` instead")
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in sig.parameters.values()):
        return _variadic_bound(lowerer, fv, node)
    named = {k for k, _ in (*fv.keywords, *fv.captured)}
    rest: list[inspect.Parameter] = []
    for p in list(sig.parameters.values())[len(fv.head):]:
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) or p.name in named:
            break  # (those after a bound one can only be passed by name)
        if p.default is not p.empty and not is_literal(p.default):
            break  # (left to the function's own default)
        rest.append(p)
    taken = {p.name for p in rest}
    params, extra = [p.name for p in rest], []

    def spelled(value: Any, hint: str) -> str:
        if isinstance(value, Const) and is_literal(value.value):
            return repr(value.value)
        name, i = f"bound_{hint}", 2
        while name in taken or keyword.iskeyword(name):
            name, i = f"bound_{hint}_{i}", i + 1
        taken.add(name)
        extra.append((name, value))
        return name

    head = [spelled(v, str(i)) for i, v in enumerate(fv.head)]
    kw = [f"{k}={spelled(v, k)}" for k, v in (*fv.keywords, *fv.captured)]
    base = getattr(obj, "__name__", "fn")
    callee = base if base.isidentifier() and base not in taken else "_fn"
    fname = f"{'lam' if base == '<lambda>' else base}_partial"
    args = ", ".join([*head, *params, *kw])
    text = f"def {fname}({', '.join(params + [e + '=None' for e, _ in extra])}):\n" \
           f"    return {callee}({args})\n"
    fn = synthesize(text, fname, {callee: obj}, f"partial-{fname}")
    defaults = [p.default for p in rest if p.default is not p.empty]
    fn.__defaults__ = tuple(defaults) + (None,) * len(extra) or None
    fn.__qualname__ = f"{n.fn.__qualname__}.<locals>.{fname}"
    return FnValue(fn, fname, captured=tuple(extra))


# partials of functions with *args made here, per (function, bound constants)
_PARTIALS: LRU[Any, Any] = LRU(256)


def _variadic_bound(lowerer: Any, fv: FnValue, node: Any) -> FnValue:
    """A partial of a function with ``*args``/``**kwargs`` (a decorator's wrapper):
    binding constants, that partial, which the api's transform makes per call's
    arity (``api/callables.py``); binding this function's values, a ``def`` per
    call's positional count whose trailing parameters are the bound values
    (``ArityBound``), the bound keywords passed by name and the bound positionals
    before the call's arguments, as ``functools.partial`` passes them."""
    values = [*fv.head, *(v for _, v in fv.keywords)]
    if fv.captured or not all(isinstance(v, Const) and is_literal(v.value)
                              for v in values):
        taken: set[str] = set()
        extra: list[tuple[str, Any]] = []

        def spelled(value: Any, hint: str) -> str:
            if isinstance(value, Const) and is_literal(value.value):
                return repr(value.value)
            name, i = f"bound_{hint}", 2
            while name in taken or keyword.iskeyword(name) or not name.isidentifier():
                name, i = f"bound_{hint}_{i}", i + 1
            taken.add(name)
            extra.append((name, value))
            return name

        head = [spelled(v, str(i)) for i, v in enumerate(fv.head)]
        kw = [(k, spelled(v, k)) for k, v in (*fv.keywords, *fv.captured)]
        made = ArityBound(fv.obj, head, kw, [e for e, _ in extra],
                          f"{lowerer.n.fn.__qualname__}.<locals>")
        return FnValue(made, fv.text, captured=tuple(extra))
    head = tuple(v.value for v in fv.head)
    keywords = tuple((k, v.value) for k, v in fv.keywords)
    key = (fv.obj, repr(head), repr(keywords))
    made = _PARTIALS.get(key)
    if made is None:
        made = _PARTIALS[key] = functools.partial(fv.obj, *head, **dict(keywords))
    return FnValue(made, fv.text)


class ArityBound:
    """A partial binding run-time values of a function with ``*args``/``**kwargs``:
    per call's positional count ``k``, ``def loss_partial(args_0, bound_scale=None):
    return loss(args_0, scale=bound_scale)`` (the bound values its trailing
    parameters, passed after the call's arguments)."""

    def __init__(self, fn: Any, head: list[str], kw: list[tuple[str, str]],
                 extra: list[str], where: str) -> None:
        self.fn, self.head, self.kw, self.extra, self.where = fn, head, kw, extra, where
        base = getattr(fn, "__name__", "fn")
        self.callee = base if base.isidentifier() and not base.startswith("bound_") \
            else "_fn"
        self.__name__ = f"{'lam' if base == '<lambda>' else base}_partial"
        self._per: dict[int, Any] = {}

    def for_call(self, k: int) -> Any:
        fn = self._per.get(k)
        if fn is None:
            params = [f"args_{i}" for i in range(k)]
            args = ", ".join([*self.head, *params, *(f"{n}={v}" for n, v in self.kw)])
            sig = ", ".join(params + [f"{e}=None" for e in self.extra])
            text = f"def {self.__name__}({sig}):\n    return {self.callee}({args})\n"
            fn = synthesize(text, self.__name__, {self.callee: self.fn},
                            f"partial-{self.__name__}-{k}")
            fn.__qualname__ = f"{self.where}.{self.__name__}"
            self._per[k] = fn
        return fn


class PerCall:
    """A transform written in the body of an ``ArityBound`` (or of another
    ``PerCall``): made per call's positional count, its bound values passed after
    the call's arguments (``functions.py``'s ``call``)."""

    takes_captured = True

    def __init__(self, make: Any, name: str) -> None:
        self.make, self.__name__ = make, name
        self._per: dict[int, Any] = {}

    def for_call(self, k: int, keys: tuple = ()) -> Any:
        if k not in self._per:
            self._per[k] = self.make(k)
        return self._per[k]


def gradient_part(obj: Any) -> tuple[Any, int | None] | None:
    """``(argnums, index)`` where the transform ``obj`` returns gradients (the whole
    result: index None; value_and_grad's item 1, has_aux's item 0); None otherwise
    (as ``api/dtypes_down.py`` reads the same objects)."""
    mode = getattr(obj, "mode", None) or getattr(obj, "suffix", None)
    if getattr(obj, "display_kind", None) == "hessian":
        mode = "hessian"
    argnums = getattr(obj, "argnums", None)
    if mode in ("grad", "jacrev", "hessian") and argnums is not None:
        return argnums, (0 if getattr(obj, "has_aux", False) else None)
    if mode == "value_and_grad" and argnums is not None:
        return argnums, 1
    return None


def cast_gradients(n: Any, obj: Any, positional: list[Atom], inline: Any, node: Any,
                   target: str | None) -> Atom:
    """The result of the transform ``obj`` inlined in the body (``inline(name)``
    emits the call), its gradients cast to their primals' dtypes, as the transform
    called from Python returns them and as JAX's are: ``g = np.astype(g_2,
    np.asarray(x).dtype)`` (a float32 ``x`` meeting a float64 module array inside
    gives a float32 gradient, which later code and an outer ``jvp``/``vmap``/``jacfwd``
    read); the call itself, bound to ``target``, for any other transform."""
    passed = next((a for a in positional if items_of(n, a) is not None or isinstance(
        a, Var) and a.name in n.lists), None)
    if passed is not None:  # (it read the list as an array: NumPy's number, or a
        raise n.unsupported(  # TypeError from its code where Python's `/` met the list)
            node, "a tuple or list passed to a transform written in the function: its code "
            "is made for array arguments", "pass an array (`np.stack([...])`), or apply "
            "the transform to a function of the items")
    part = gradient_part(obj)
    if part is None:
        return inline(target)
    out = inline(n.names.fresh(target) if target else None)
    argnums, index = part

    def item(seq: Atom, k: int) -> Atom:
        return n.emit(n.names.fresh(f"{stem(seq)}_{k}"), "getitem", (seq,), {
            "index": Index((Const(k, repr(k)),), False)}, node)

    def cast(g: Atom, i: int, name: str | None) -> Atom:
        x = positional[i] if 0 <= i < len(positional) else None  # (not -1: captured)
        if not isinstance(x, Var):  # (a literal's gradient has the literal's dtype)
            return g if name is None else n.emit(name, "identity", (g,), {}, node)
        array = n.emit(n.names.fresh(f"{stem(x)}_array"), "asarray", (x,), {}, node)
        dtype = n.emit(n.names.fresh(f"{stem(x)}_dtype"), "dtype", (array,), {}, node)
        return n.emit(name or n.names.fresh(f"{stem(g)}_cast"), "astype", (g, dtype), {},
                      node)

    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)

    def grads(g: Atom, name: str | None) -> Atom:
        if not getattr(obj, "tuple_out", not isinstance(argnums, int)):
            return cast(g, nums[0], name)
        pieces = [cast(item(g, k), i, None) for k, i in enumerate(nums)]
        return n.emit(name or n.names.fresh(f"{stem(g)}_cast"), "make_tuple", tuple(pieces),
                      {}, node)

    if index is None:
        return grads(out, target)
    pieces = [item(out, k) for k in range(2)]
    pieces[index] = grads(pieces[index], None)
    return n.emit(target or n.names.fresh(f"{stem(out)}_cast"), "make_tuple", tuple(pieces), {},
                  node)


def padding(obj: Any, given: int, captured: int) -> list[Const]:
    """The literal defaults of the positional parameters a call of the transform
    ``obj`` leaves out, which come before the ``captured`` values it passes after its
    arguments (``lambda t, k=2.0: ...`` reading ``a``: ``(x, 2.0, a)``)."""
    fn = obj
    for _ in range(16):  # (a transform of a transform ...: down to the function)
        if isinstance(fn, types.FunctionType) or fn is None:
            break
        fn = getattr(fn, "fn", None) or getattr(fn, "fun", None)
    if not captured or not isinstance(fn, types.FunctionType):
        return []
    params = [p for p in inspect.signature(fn).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    own = params[:len(params) - captured]
    return [Const(p.default, repr(p.default)) for p in own[given:]
            if p.default is not p.empty and is_literal(p.default)]
