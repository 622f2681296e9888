"""What a transform accepts besides a ``def``: ``functools.partial`` objects, NumPy
functions s2s has a rule for (``s2s.grad(np.sum)``, as ``jax.grad(jnp.sum)``), objects
with a ``__call__`` method, and functions with ``*args``/``**kwargs``.

Each becomes a Python function with a source (``frontend/synthesize.py``): a partial,
``def f(x): return f(partial_arg_0, x, k=partial_k)``, its bound values read from the
partial object when the transform runs (an array bound in it and changed in place
since is read as it is then); a NumPy function, ``def sum(a): return sum(a)`` over its
required parameters; a variadic function, one wrapper per call's positional count and
keyword names (``def f(xs_0, xs_1): return f(xs_0, xs_1)``), so argnums index
positional arguments as in JAX.
"""

from __future__ import annotations

import ast
import builtins
import functools
import inspect
import threading
import types
import weakref
from typing import Any, Callable

import numpy as np

from .. import syntax
from ..errors import TransformError
from ..frontend.passed_structure import (
    STR_ONLY,
    int_key_names,
    item_keys,
    key_names,
    merged_and_deleted,
    spread_names,
)
from ..frontend.synthesize import (
    BOUND,
    BoundType,
    DictKeys,
    ItemFunctions,
    SeqLength,
    signature_text,
    synthesize,
)
from ..frontend.typetests import ArgType, type_tested
from ..ir.names import PRIVATE
from ..primitives import lookup_object
from ..primitives.custom import custom_jvp, custom_vjp
from . import pipeline, value_methods
from .keyword_trees import by_keyword_objects, is_object, leaving_objects
from .object_types import object_type as _object_type
from .trees import Fields


def _is_variadic(fn: Any, follow_wrapped: bool = True) -> bool:
    if not isinstance(fn, (types.FunctionType, types.MethodType)):
        return False
    kinds = {p.kind for p in inspect.signature(
        fn, follow_wrapped=follow_wrapped).parameters.values()}
    return bool(kinds & {inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD})


def _per_call(fn: Any) -> bool:
    """Is ``fn`` transformed per call's positional count and keyword names: a function
    with ``*args``/``**kwargs``, or a decorator's wrapper with them that does more
    than forward to the function it wraps (its own code is what runs, its
    parameters bound to the call's structure, as for any variadic function; one
    that only forwards is the function it wraps: ``unwrap_forwarding``)."""
    if _is_variadic(fn) and not hasattr(fn, "__wrapped__"):
        return True
    if not isinstance(fn, types.FunctionType) or "__wrapped__" not in fn.__dict__:
        return False
    from ..frontend.resolve import unwrap_forwarding  # (libcst: deferred, as pipeline's)

    return _is_variadic(fn, follow_wrapped=False) and unwrap_forwarding(fn) is fn


def transformable(fun: Any, make: Callable[[Any], Any]) -> Any:
    """``make(fn)`` for the function ``fun`` denotes; a variadic one is made per call
    signature (``PerArity``)."""
    if isinstance(fun, PerArity):  # a transform of one: composed per call signature
        return fun.composed(make)
    if isinstance(fun, functools.partial) and _partial_is_variadic(fun):
        return PerArity(fun, make)  # (a partial of a decorator's *args wrapper)
    fn = as_function(fun)
    if _per_call(fn):
        return PerArity(fn, make)
    names = function_params(fn)
    keyed = dict_defaults(fn)  # (`def f(x, cfg={"a": 1.0})`: made per its keys, which
    if any(type(_default_of(fn, k)) in (tuple, list) for k in keyed):  # (a tuple of
        names = tuple(dict.fromkeys(function_params(fn, handed_too=True) + names))  # dicts)
    if names or keyed:  # the caller may change in place; `act=np.tanh`: per function)
        return PerFunctionArgs(fn, make, names + tuple(k for k in keyed if k not in names))
    if by_keyword_objects(fn) or _required_keyword_only(fn):  # (`def step(w,
        # cfg=OptConfig(...))`, `def f(x, *, p)`: per call's arity and keyword names,
        return PerArity(fn, make)  # the object's fields read, api/keyword_trees.py)
    try:
        return make(fn)
    except TransformError as err:
        # a parameter passed on (`inner(x, f)`), walked (`for f in fs`) or spread
        # (`g(v, **kw)`) that the code could lower were its functions or keys known:
        # made per call's functions and dict keys instead
        handed = function_params(fn, handed_too=True) if getattr(
            err, "per_call", False) else ()
        if not handed:
            raise
        return PerFunctionArgs(fn, make, handed)


def _required_keyword_only(fn: Any) -> bool:
    """Has the plain function ``fn`` a keyword-only parameter with no default (``def
    f(x, *, p)``)?  A transform of it is made per call's keywords, of a wrapper that
    takes them by position (``variadic_wrapper``): what a call gives it (a NamedTuple,
    a dict) has the structure the call passes, as a positional argument's."""
    if not isinstance(fn, types.FunctionType) or hasattr(fn, BOUND):
        return False
    code = fn.__code__
    kwonly = code.co_varnames[code.co_argcount:code.co_argcount + code.co_kwonlyargcount]
    return any(name not in (fn.__kwdefaults__ or {}) for name in kwonly)


def as_function(fun: Any, nargs: int | None = None, keys: tuple[str, ...] = (),
                args: tuple | None = None) -> Any:
    """A Python function with a source for ``fun`` (``fun`` itself where it is one);
    a variadic one, when ``nargs`` is given, as the wrapper for that many positional
    arguments and these keyword names; ``args``, where given, the call's positional
    values (their functions and classes bound: ``PerFunctionArgs``)."""
    if isinstance(fun, PerArity) and nargs is not None:
        return fun.for_call(nargs, keys)
    jitted = getattr(fun, "__s2s_jit_of__", None)
    if jitted is not None:  # s2s.grad(s2s.jit(f)) is f's gradient, as in JAX
        return as_function(jitted, nargs, keys)
    if isinstance(fun, functools.partial):
        if nargs is not None and _partial_is_variadic(fun):
            key = (nargs, tuple(sorted(keys)))
            return _cached(fun, key, lambda: _partial_wrapper(fun, *key))
        wrapper = _cached(fun, (), lambda: _partial_wrapper(fun))
        return wrapper if nargs is None else _defaults_bound(wrapper, nargs, keys)
    if isinstance(fun, (custom_jvp, custom_vjp)):  # (s2s.grad(f) of a custom_vjp f:
        # `def f(x): return f(x)`, whose call reads its rule, as a call in your code)
        return _cached(fun, ("custom", nargs, tuple(keys)),
                       lambda: _custom_wrapper(fun, nargs, tuple(keys)))
    if not isinstance(fun, (types.FunctionType, types.MethodType)) and not hasattr(
            fun, "_generate_for"):
        prim = lookup_object(fun)
        if prim is not None and getattr(builtins, getattr(fun, "__name__", ""), None) is not (
                fun):  # (np.sum, not Python's `len`)
            return _cached(fun, (), lambda: _primitive_wrapper(fun, prim))
        call = getattr(type(fun), "__call__", None)
        if isinstance(call, types.FunctionType) and not isinstance(fun, PerArity):  # a callable object: its method
            return types.MethodType(call, fun)
    if nargs is not None and _per_call(fun):
        key = (nargs, tuple(keys))  # (in the call's order: `kw`'s, as Python's)
        return _cached(fun, key, lambda: variadic_wrapper(fun, *key))
    return fun if nargs is None else _defaults_bound(fun, nargs, keys, args)


def _defaults_bound(fun: Any, nargs: int, keys: tuple[str, ...],
                    args: tuple | None = None) -> Any:
    """``fun`` for a call of ``nargs`` positional arrays and keywords ``keys``; where a
    parameter holds a function (``def f(x, act=np.tanh)``), a copy with the default
    bound (``PerFunctionArgs``)."""
    names = function_params(fun) or per_call_names(fun, args or ())
    names += tuple(k for k in dict_defaults(fun) if k not in names)  # (its keys: read
    if not names:  # per call, as `transformable`'s)  # (a pytree default left: its fields read, keyword_trees.py)
        left = _cached(fun, ("objects", nargs, tuple(keys)), lambda: leaving_objects(
            fun, nargs, tuple(keys)))
        return fun if left is None else left
    per = _cached(fun, ("functions",), lambda: PerFunctionArgs(fun, lambda f: f, names))
    if args is None or len(args) != nargs:
        return per.for_call(nargs, tuple(keys))
    return per.for_arguments(args, dict.fromkeys(keys, _NONE))


# the wrapper made for an object, per key: a transform of the same partial, NumPy
# function or arity reuses its wrapper (and so the IR and code cached for it)
_WRAPPERS: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()
_BY_ID: dict[int, tuple[Any, dict]] = {}  # objects that take no weak reference (ufuncs)


def _cached(obj: Any, key: tuple, make: Callable[[], Any]) -> Any:
    try:
        per = _WRAPPERS.setdefault(obj, {})
    except TypeError:
        per = _BY_ID.setdefault(id(obj), (obj, {}))[1]
    if key not in per:
        per[key] = make()
    return per[key]


def _primitive_wrapper(obj: Any, prim: Any) -> Any:
    name = prim.name.split(".")[-1]
    params = [p for p, v in prim.signature.parameters.items()
              if v.default is inspect.Parameter.empty and v.kind in (
                  v.POSITIONAL_ONLY, v.POSITIONAL_OR_KEYWORD)]
    text = f"def {name}({', '.join(params)}):\n    return {name}({', '.join(params)})\n"
    return synthesize(text, name, {name: obj}, f"numpy-{name}")


def _partial_is_variadic(p: functools.partial) -> bool:
    try:
        sig = inspect.signature(p)
    except (TypeError, ValueError):
        return False
    return any(q.kind in (q.VAR_POSITIONAL, q.VAR_KEYWORD) for q in sig.parameters.values())


def _partial_wrapper(p: functools.partial, nargs: int | None = None,
                     keys: tuple[str, ...] = ()) -> Any:
    """``def f(x, *, k=None): return f(partial_arg_0, x, k=k)``, ``k``'s default the
    value the partial binds; for a partial of a function with ``*args``/``**kwargs``
    (a decorator's wrapper), one per call's ``nargs`` positional arguments and
    keyword names ``keys``, as for a variadic function (``variadic_wrapper``)."""
    inner = as_function(p.func)
    name = getattr(inner, "__name__", "partial")
    name = name if name.isidentifier() else "partial"
    namespace: dict[str, Any] = {name: inner, PRIVATE: True}  # (no one else rebinds it)
    bound = []
    for i, value in enumerate(p.args):
        namespace[f"partial_arg_{i}"] = value
        bound.append(f"partial_arg_{i}")
    sig = inspect.signature(p)
    params, kwonly, defaulted, defaults, kwdefaults = [], [], set(), [], {}
    variadic = {q.kind for q in sig.parameters.values()} & {
        inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD}
    if variadic and nargs is None:
        raise TypeError(f"s2s transforms a partial of a function with named "
                        f"parameters; {p!r} leaves its parameters variadic")
    for pname, param in sig.parameters.items():
        if param.kind is param.VAR_POSITIONAL:
            named = len(params)
            params += [f"{pname}_{i}" for i in range(max(0, (nargs or 0) - named))]
            continue
        if param.kind is param.VAR_KEYWORD:
            taken = set(params) | set(kwonly)
            kwonly += [k for k in keys if k not in taken]
            continue
        if param.kind is param.KEYWORD_ONLY:
            kwonly.append(pname)
            if param.default is not param.empty:
                defaulted.add(pname)
                kwdefaults[pname] = param.default
        else:
            params.append(pname)
            if param.default is not param.empty:
                defaulted.add(pname)
                defaults.append(param.default)
    if variadic and (nargs or 0) > len(params):
        raise TypeError(f"{p!r} takes {len(params)} positional arguments, not {nargs}")
    called = name
    if not variadic:  # (`partial(f, p=params)` of a NamedTuple: positional, as f has it)
        before = len(params)
        params, kwonly = _objects_in_place(p, params, kwonly, kwdefaults, defaults)
        if len(params) > before:  # (a transform's own wrapper around this one calls it
            called = f"{name}_bound"  # `name`: the function it binds, spelled apart)
            namespace[called] = namespace.pop(name)
    keyword_only = set() if variadic else _keyword_only(p.func)
    passed = bound + [f"{k}={k}" if k in keyword_only else k for k in params] + [
        f"{k}={k}" for k in kwonly]
    for k, value in p.keywords.items():  # (bound into a **kwargs: not in the signature)
        if k not in params and k not in kwonly and k.isidentifier():
            namespace[f"partial_kw_{k}"] = value
            passed.append(f"{k}=partial_kw_{k}")
    text = (f"def {name}({signature_text(params, kwonly, defaulted)}):\n"
            f"    return {called}({', '.join(passed)})\n")
    fn = synthesize(text, name, namespace, f"partial-{name}")
    fn.__defaults__ = tuple(defaults) or None
    fn.__kwdefaults__ = kwdefaults or None
    return fn


def _keyword_only(fn: Any) -> set[str]:
    try:
        return {q.name for q in inspect.signature(fn).parameters.values()
                if q.kind is q.KEYWORD_ONLY}
    except (TypeError, ValueError):
        return set()


def _objects_in_place(p: functools.partial, params: list, kwonly: list, kwdefaults: dict,
                      defaults: list) -> tuple[list, list]:
    """A partial binding a pytree object by keyword to a positional parameter of its
    function (``partial(f, p=params)`` of ``def f(x, p)``): the wrapper takes it by
    position too, defaulting to the bound object (``def f(x, p=<params>)``), so a call
    passes it by position as a transform reads pytrees (``api/keyword_trees.py``); the
    parameters before the last such one move with it."""
    try:
        kinds = {q.name: q.kind for q in inspect.signature(p.func).parameters.values()}
    except (TypeError, ValueError):
        return params, kwonly
    lead = []
    for name in kwonly:  # (a keyword-only one, `def f(x, *, p)`, too: passed by keyword)
        if kinds.get(name) not in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                   inspect.Parameter.KEYWORD_ONLY) or name not in kwdefaults:
            break
        lead.append(name)
    last = max((k for k, name in enumerate(lead) if is_object(kwdefaults[name])), default=None)
    if last is None:
        return params, kwonly
    moved = lead[:last + 1]
    defaults += [kwdefaults.pop(name) for name in moved]
    return params + moved, kwonly[last + 1:]


def variadic_wrapper(fn: Any, nargs: int, keys: tuple[str, ...]) -> Any:
    """``def f(x, xs_0, xs_1, scale): return f(x, xs_0, xs_1, scale=scale)``; a
    decorator's ``wrapper(*args, **kwargs)`` takes the wrapped function's names
    (``def loss(x, w): return loss(x, w)``)."""
    sig = inspect.signature(fn, follow_wrapped=False)
    named = [n for n, p in sig.parameters.items()
             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if not named and hasattr(fn, "__wrapped__"):
        named = [n for n, p in inspect.signature(fn).parameters.items()
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    star = next((n for n, p in sig.parameters.items() if p.kind is p.VAR_POSITIONAL), "args")
    params = [named[i] if i < len(named) else f"{star}_{i - len(named)}"
              for i in range(nargs)]
    # (the keywords after the positional parameters, so that vmap batches them
    # in their places, as JAX batches keyword arguments along axis 0)
    keyed = [k for k in keys if k not in params]
    # (a lambda's `<lambda>` is no name a def can have: `lambda_fn`, as a nested one's)
    name = fn.__name__ if fn.__name__.isidentifier() else "lambda_fn"
    passed = params + [f"{k}={k}" for k in keyed]
    text = (f"def {name}({signature_text(params + keyed, [], set())}):\n"
            f"    return {name}({', '.join(passed)})\n")
    return synthesize(text, name, {name: fn}, f"variadic-{name}")


def _custom_wrapper(fun: Any, nargs: int | None, keys: tuple[str, ...]) -> Any:
    """``def f(x, y): return f(x, y)`` for a ``custom_jvp``/``custom_vjp`` function
    ``f`` of ``nargs`` positional arguments (its own parameters where None) and the
    keywords ``keys``: the call reads its rule, as one written in your code does."""
    params = [p.name for p in inspect.signature(fun.fun).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    n = len(params) if nargs is None else nargs
    names = [params[i] if i < len(params) else f"args_{i}" for i in range(n)]
    keyed = [k for k in keys if k not in names]
    name = fun.fun.__name__ if fun.fun.__name__.isidentifier() else "custom_fn"
    passed = names + [f"{k}={k}" for k in keyed]
    text = (f"def {name}({signature_text(names + keyed, [], set())}):\n"
            f"    return {name}({', '.join(passed)})\n")
    return synthesize(text, name, {name: fun}, f"custom-{name}")


class PerArity:
    """A transform of a function with ``*args``/``**kwargs`` (or a partial of one):
    one transform of a wrapper per number of positional arguments and keyword names
    a call passes."""

    def __init__(self, fn: Any, make: Callable[[Any], Any]) -> None:
        self.fn = fn
        self.make = make
        self._made: dict[tuple, Any] = {}
        self._lock = threading.Lock()
        self._last: Any = None
        named = fn.func if isinstance(fn, functools.partial) else fn
        self.__name__ = getattr(named, "__name__", "partial")
        self.__qualname__ = getattr(named, "__qualname__", self.__name__)

    def composed(self, make: Callable[[Any], Any]) -> "PerArity":
        """The transform ``make`` of each of this one's per-call transforms."""
        return self.remade(lambda wrapper: make(self.make(wrapper)))

    def remade(self, make: Callable[[Any], Any]) -> "PerArity":
        """The same per-call wrappers, each given to ``make`` instead."""
        return PerArity(self.fn, make)

    def for_arguments(self, args: tuple, kwargs: dict) -> Any:
        """The transform that runs a call with these arguments."""
        return self.for_call(len(args), tuple(kwargs))

    def for_call(self, nargs: int, keys: tuple[str, ...] = ()) -> Any:
        key = (nargs, tuple(keys))  # (in the call's order: `kw`'s, as Python's)
        with self._lock:
            made = self._made.get(key)
            if made is None:
                if not _is_variadic(self.fn) and _required_keyword_only(self.fn):
                    inspect.signature(self.fn).bind(*range(nargs), **dict.fromkeys(keys))
                made = self._made[key] = self.make(as_function(self.fn, *key) if isinstance(
                    self.fn, functools.partial) or not (_is_variadic(self.fn) or (
                        _required_keyword_only(self.fn))) else
                    variadic_wrapper(self.fn, *key))  # (a pytree default: _defaults_bound)
            self._last = made
        return made

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.for_call(len(args), tuple(kwargs))(*args, **kwargs)

    @property
    def source(self) -> str:
        if self._last is None:
            raise AttributeError("a transform of a function with *args has code per call "
                                 "signature: call it first")
        return self._last.source


# ---- parameters that hold functions -------------------------------------------------
# Parameters whose value is a function: ``def layer(x, act=np.tanh)``, ``def fit(w,
# loss_fn)`` called as ``s2s.grad(fit)(w, mse)``.
#
# JAX traces such a function with the function as it is; s2s transforms it once per
# set of functions a call passes (by identity; a parameter left out is its default):
# each is a copy of the function carrying the functions its parameters are bound to,
# which the frontend lowers with the parameter denoting the function
# (``frontend/bound_params.py``), as a callee taking a function argument is lowered.
# The call still passes the function, which the emitted code takes and does not read.
# The defaults and the code are read at each call: replacing ``f.__defaults__`` makes
# another copy.
#
# A parameter is one of these when its default is a function or when the body calls
# it (``act(x)``).

_FUNCTION_TYPES = (types.FunctionType, types.BuiltinFunctionType, np.ufunc,
                   functools.partial, types.MethodType)


_NONE = object()  # (no value passed, no default)


def function_params(fn: Any, handed_too: bool = False) -> tuple[str, ...]:
    """The parameters of the plain function ``fn`` that hold functions: a default that
    is one, or a name the body calls (``handed_too``: or passes to a call, spreads
    with ``**`` or walks with ``for``); () for any other function."""
    if not isinstance(fn, types.FunctionType) or hasattr(fn, BOUND):
        return ()  # (a copy made here: its functions bound already)
    try:
        sig = inspect.signature(fn, follow_wrapped=False)
    except (TypeError, ValueError):
        return ()
    plain = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    if any(p.kind not in plain for p in sig.parameters.values()):
        return ()  # (*args, **kwargs, positional-only: not wrapped here)
    called = _called_names(fn)  # (`act(x)`, and `p.apply(x)` of a method not an array's)
    parts = fn.__qualname__.split(".")
    own = next(iter(sig.parameters)) if len(parts) > 1 and parts[-2] != "<locals>" and (
        sig.parameters) else None  # (a method's `self`: the object, called as `self(x)`)
    tested = type_tested(fn)  # (`isinstance(scale, int)`: decided per call's type)
    built = _names_of(fn)[5]  # (`d[f"w{name}"]`, `cfg[key](x)`: a string made per call,
    handed = _handed_names(fn) | built if handed_too or built else frozenset()  # and
    # what the body hands on with it, as a refusal marked `per_call` would have it)
    return tuple(name for name, p in sig.parameters.items()
                 if name != own and (name in called or name in tested or name in handed
                                     or _is_function(p.default)))


def handed_objects(fn: Any, args: tuple) -> tuple[str, ...]:
    """The positional parameters of the plain function ``fn`` whose values in ``args``
    decide its code, where its body hands them on: an object of a user's pytree class
    passed to a callee calling its methods (``helper(x, p)``), a dict whose keys are
    merged, deleted or spread (``{**p, "a": 1}``, ``del d[k]``) and the string ``k`` it
    deletes by.  A transform made per call's values of these (``PerFunctionArgs``)
    lowers what the code could not otherwise (a lazy transform: jacfwd, jacrev, jvp)."""
    if not isinstance(fn, types.FunctionType) or hasattr(fn, BOUND) or not any(
            type(a) in (str, dict, tuple, list) or _object_type(a) is not None
            for a in args):
        return ()
    code = fn.__code__
    _, handed, spread, keys, starred, _ = _names_of(fn)
    return tuple(name for name, a in zip(code.co_varnames[:code.co_argcount], args)
                 if name in handed and (_object_type(a) is not None or (
                     name in keys and type(a) is str) or (name in spread and type(
                         a) is dict and all(isinstance(k, str) for k in a)) or (
                             name in starred and type(a) in (tuple, list))))


def per_call_names(fn: Any, args: tuple) -> tuple[str, ...]:
    """``handed_objects``; or, where ``args`` holds such values and the plain
    function ``fn`` is refused in a way a transform made per call's values may lower
    (a callee deleting by a string ``fn`` passes on: the refusal is marked
    ``per_call``), every name its body hands on (found once per function)."""
    names = handed_objects(fn, args)
    if names or not isinstance(fn, types.FunctionType) or hasattr(fn, BOUND):
        return names
    given = (*args, *(fn.__defaults__ or ()), *(fn.__kwdefaults__ or {}).values())
    if not any(type(a) in (str, dict, tuple, list) or _object_type(a) is not None
               for a in given):  # (a partial's wrapper: its bound values are defaults)
        return names
    found = _PROBED.get(fn)
    if found is None:
        try:
            pipeline.lower(fn)
            found = ()
        except TransformError as err:
            found = function_params(fn, handed_too=True) if getattr(
                err, "per_call", False) else ()
        _PROBED[fn] = found
    return found


_PROBED: "weakref.WeakKeyDictionary[Any, tuple]" = weakref.WeakKeyDictionary()


def _is_function(value: Any) -> bool:
    """A plain function: one a transform may take as a constant.  (Not an object
    with a ``__call__``: its fields may be what is differentiated.)"""
    return isinstance(value, _FUNCTION_TYPES)


def _strings(value: Any) -> bool:
    """A tuple of strings (``names=("tanh", "sin")`` walked for ``getattr(np, n)``),
    ints among them (``spec=("poly", 3)`` matched on): the code is made per its items
    (none is a float: no derivative is lost)."""
    return type(value) is tuple and any(type(v) is str for v in value) and all(
        type(v) in (str, int) for v in value)


def _function_sequence(value: Any) -> bool:
    """A tuple or list of plain functions (``(np.sin, np.tanh)``)."""
    return type(value) in (tuple, list) and bool(value) and all(map(_is_function, value))


def _item_functions(value: Any) -> ItemFunctions | None:
    """A dict, list or tuple holding plain functions among other values (not only
    functions: a tuple of functions is ``_function_sequence``'s)."""
    if type(value) not in (dict, list, tuple) or _function_sequence(value):
        return None
    pairs = value.items() if type(value) is dict else enumerate(value)
    found = {k: v for k, v in pairs if _is_function(v) and isinstance(k, (str, int))}
    return ItemFunctions(found) if found else None


def _default_of(fn: Any, name: str) -> Any:
    p = inspect.signature(fn, follow_wrapped=False).parameters.get(name)
    return None if p is None else p.default


def _called_names(fn: Any) -> frozenset[str]:
    """The plain names the body of ``fn`` calls (``act(x)``), from its source: read
    once per code object (a transform made again of the same function reads no
    source; it cost 0.4 ms a transform)."""
    return _names_of(fn)[0]


def _handed_names(fn: Any) -> frozenset[str]:
    """The plain names the body of ``fn`` passes to a call (``inner(x, f)``,
    ``compose(x, *fs)``) or walks (``for f in fs``): a parameter given functions
    there is bound to them, as one the body calls."""
    return _names_of(fn)[1]


def _names_of(fn: Any) -> tuple[frozenset[str], ...]:
    """(called, handed, spread with ``**``, keys, spread with ``*``, key-built) names
    of ``fn``'s body (keys: names a ``del d[k]`` or ``d.pop(k)`` deletes by, or a key
    is built from: ``d[f"w{k}"]``; key-built: those last)."""
    code = fn.__code__
    found = _CALLED.get(code)
    if found is None:
        found = _CALLED[code] = tuple(map(frozenset, _read_called_names(fn)))
    return found


_CALLED: "weakref.WeakKeyDictionary[Any, tuple]" = weakref.WeakKeyDictionary()


def _read_called_names(fn: Any) -> tuple[set[str], ...]:
    defined = syntax.function_node(fn) or syntax.lambda_node(fn)
    if defined is None:
        return set(), set(), set(), set(), set(), set()
    out, handed = set(), set()
    for node in ast.walk(defined):
        if isinstance(node, (ast.For, ast.comprehension)) and isinstance(node.iter, ast.Name):
            handed.add(node.iter.id)
        if isinstance(node, (ast.For, ast.comprehension)) and isinstance(
                node.iter, ast.Attribute) and (root := _attribute_root(node.iter)):
            handed.add(root)  # (`for l in net.layers`: its items' classes, per call)
        if isinstance(node, ast.Match) and isinstance(node.subject, ast.Name):
            handed.add(node.subject.id)  # (its string or keys: the cases decided per call)
        if not isinstance(node, ast.Call):
            continue
        handed |= {a.value.id if isinstance(a, ast.Starred) else a.id
                   for a in (*node.args, *(k.value for k in node.keywords))
                   if isinstance(a, ast.Name) or isinstance(a, ast.Starred) and isinstance(
                       a.value, ast.Name)}
        if isinstance(node.func, ast.Name):
            out.add(node.func.id)
        if isinstance(node.func, ast.Subscript) and isinstance(node.func.value, ast.Name):
            out.add(node.func.value.id)  # (`cfg["act"](x)`: an item of it is called)
        if isinstance(node.func, (ast.Subscript, ast.Attribute)) and isinstance(
                node.func.value, (ast.Subscript, ast.Attribute)) and (
                root := _attribute_root(node.func.value)):
            out.add(root)  # (`net.layers[0](h)`, `net.inner.apply(h)`)
        if _calls_its_first(node) and isinstance(node.args[0], ast.Name):
            out.add(node.args[0].id)  # (`functools.reduce(f, xs)`: f is called)
        elif isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
                and node.func.attr not in _VALUE_METHODS:
            out.add(node.func.value.id)  # (`p.apply(x)`: a method of p's class)
        elif isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
                and node.func.attr in STR_ONLY:
            handed.add(node.func.value.id)  # (`spec.split(",")`: per call's string)
    spread, starred = spread_names(defined)
    merged, keys = merged_and_deleted(defined)
    built = set(key_names(fn))  # (`d[f"w{name}"]`: made per call's string)
    return out, handed | merged | keys | built, spread | merged, keys | built, starred, built


def _attribute_root(node: Any) -> str | None:
    """``net`` of ``net.layers``, ``net.layers[0]``, ``net.inner.w``; None through an
    array's attribute (``x.T.reshape(...)``, ``x.dtype.type(v)``) or of no attribute."""
    seen = False
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Attribute) and node.attr in _VALUE_METHODS:
            return None
        seen = seen or isinstance(node, ast.Attribute)
        node = node.value
    return node.id if seen and isinstance(node, ast.Name) else None


def _calls_its_first(node: ast.Call) -> bool:
    """``functools.reduce(f, ...)``, ``map(f, ...)``: a call that calls its first
    argument (a parameter passed there holds a function, as one called does); not a
    ufunc's method (``np.add.reduce(x)`` reduces the array ``x``)."""
    func = node.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(
        func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in (
            "functools", "builtins") else None
    return name in ("reduce", "map") and bool(node.args)


# methods of arrays and of Python's containers (`x.sum()`, `params.items()`): a call of
# one does not make its parameter one whose class decides the code
_VALUE_METHODS = frozenset(
    name for t in (np.ndarray, dict, list, tuple, set, str) for name in dir(t))


class PerFunctionArgs(PerArity):
    """A transform of ``fn`` made per call's functions: those its parameters
    ``names`` receive, or their defaults."""

    def __init__(self, fn: Any, make: Callable[[Any], Any], names: tuple[str, ...]) -> None:
        super().__init__(fn, make)
        self.names = names
        code = fn.__code__
        self.positional = code.co_varnames[:code.co_argcount]
        self._places = tuple((name, self.positional.index(name) if name in self.positional
                              else None) for name in names)  # (None: keyword-only)
        self._held: dict[tuple, tuple] = {}  # (what a key's ids name, kept alive)
        self.tested = type_tested(fn)
        self.keyed = frozenset(dict_defaults(fn))  # (read per call: DictKeys)
        self.int_keys = int_key_names(fn)
        # (a parameter only passed on or walked: bound where it is given functions)
        self.handed = _handed_names(fn) - _called_names(fn) - self.tested - {
            name for name in names if _is_function(_default_of(fn, name))}

    def remade(self, make: Callable[[Any], Any]) -> "PerFunctionArgs":
        return PerFunctionArgs(self.fn, make, self.names)

    def for_arguments(self, args: tuple, kwargs: dict) -> Any:
        fn = self.fn
        bound = self._bound(args, kwargs)
        alive: tuple = (fn.__code__, fn.__defaults__, fn.__kwdefaults__)
        for v in bound.values():
            if isinstance(v, (DictKeys, SeqLength, str, int)) or _strings(v):  # (below)
                continue
            if _function_sequence(v):  # (its functions, not the tuple made for the call)
                alive += (type(v), *v)
                continue
            if isinstance(v, ItemFunctions):  # (`cfg["act"]`: its functions, by key)
                alive += tuple(v.functions.values())
                continue
            alive += tuple(m for c in v.classes() for m in _members(c)) if isinstance(
                v, BoundType) else (
                (v.cls,) if isinstance(v, ArgType) else (v,))
        key = (*map(id, alive), *bound, *(
            v.keys if isinstance(v, DictKeys) else v.key if isinstance(v, SeqLength) else v
            for v in bound.values() if isinstance(v, (DictKeys, SeqLength, str, int)) or (
                _strings(v))),
               *(tuple(v.functions) for v in bound.values() if isinstance(v, ItemFunctions)))
        made = self._made.get(key)  # (the hit: no lock; a dict read is atomic)
        if made is None:
            with self._lock:  # (a miss: made once, by one thread)
                made = self._made.get(key)
                if made is None:
                    made = self.make(_variant(fn, bound))
                    self._held[key] = alive  # (before the entry: its ids stay taken)
                    self._made[key] = made
        self._last = made
        return made

    def for_call(self, nargs: int, keys: tuple[str, ...] = ()) -> Any:
        """Without the call's values (a transform written in a function's body): the
        parameters it leaves out are their defaults; those it passes are not bound
        (a call of one is then refused, located)."""
        return self.for_arguments((_NONE,) * nargs, dict.fromkeys(keys, _NONE))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.for_arguments(args, kwargs)(*args, **kwargs)

    @property
    def source(self) -> str:
        if self._last is None:
            raise AttributeError(
                f"a transform of {self.fn.__name__} has code per function (or class) its "
                f"parameters {', '.join(self.names)} are given: call it first")
        return self._last.source

    def _bound(self, args: tuple, kwargs: dict) -> dict[str, Any]:
        fn, out = self.fn, {}
        defaults = fn.__defaults__ or ()
        first_default = len(self.positional) - len(defaults)
        for name, k in self._places:
            value = _NONE
            if kwargs and name in kwargs:
                value = kwargs[name]
            elif k is not None:
                if k < len(args):
                    value = args[k]
                elif k >= first_default:
                    value = defaults[k - first_default]
            elif name in (fn.__kwdefaults__ or {}):  # (keyword-only)
                value = fn.__kwdefaults__[name]
            if value is _NONE:
                continue
            held = _item_functions(value)  # (`cfg = {"act": np.tanh, "scale": 2.0}`)
            if held is not None and name not in self.tested:
                out[name] = held
                continue
            # (a value whose structure the code needs, here or in a callee given it:
            # `f(v, **kw)`, `del d[k]`, `h(*xs)`: its keys, its string, its length)
            if (name in self.handed or name in self.keyed) and type(value) is dict and all(
                    isinstance(k, str) for k in value):
                out[name] = DictKeys(tuple(value))
                continue
            if name in self.keyed and type(value) in (tuple, list) and (items := (
                    item_keys(value) if value else ())) is not None:  # (`for s in specs`:
                out[name] = SeqLength(len(value), items)  # each item's keys, unrolled)
                continue
            if name in self.int_keys and type(value) is int:  # (`d[f"W{i}"]`, `range(n)`
                out[name] = value  # of a loop building keys: this call's int)
                continue
            if name in self.handed and (type(value) is str or _strings(value)) or (
                    _function_sequence(value)):
                # (a string: its value; `fs[0](x)`, `for f in fs`: a container's functions)
                out[name] = value
                continue
            if name in self.handed:
                if _is_function(value) or _function_sequence(value):
                    out[name] = value
                elif type(value) in (tuple, list):
                    out[name] = SeqLength(len(value), item_keys(value))
                elif (typed := _object_type(value)) is not None:
                    out[name] = typed  # (`helper(x, p)` calling p's methods)
                continue
            if value is None or _is_function(value):
                out[name] = value
            elif (typed := _object_type(value)) is not None:
                out[name] = typed  # (its methods: its class's, frontend/bound_params.py)
            elif name in self.tested:  # (`isinstance(scale, int)`: decided for its type)
                out[name] = ArgType(_python_type(value))
        return out


def _python_type(value: Any) -> type:
    """The type Python's ``isinstance`` sees in the caller's value (a NamedTuple's
    or registered object's plain form: its class; a dict's: dict)."""
    if isinstance(value, Fields):
        return value.of_class or dict
    return type(value)


def _members(cls: type) -> tuple:
    """The class and what its classes' dicts hold, for a key: a method replaced on
    the class (``Affine.apply = ...``) makes another transform."""
    return (cls, *(v for c in cls.__mro__[:-1] for v in vars(c).values()))


def dict_defaults(fn: Any) -> tuple[str, ...]:
    """The parameters of the plain function ``fn`` whose default is a dict of string
    keys: a call leaving one out reads the dict as it is then, keys added in place
    included, so its keys are part of what the transform is made for."""
    if not isinstance(fn, types.FunctionType) or hasattr(fn, BOUND):
        return ()
    code = fn.__code__
    names = code.co_varnames[:code.co_argcount]
    defaults = fn.__defaults__ or ()
    out = [n for n, d in zip(names[len(names) - len(defaults):], defaults) if _keyed(d)]
    out += [n for n, d in (fn.__kwdefaults__ or {}).items() if _keyed(d)]
    return tuple(out)


def _keyed(default: Any) -> bool:
    """A dict of string keys, or a tuple or list of them (``specs=({"kind": "l2"},
    ...)``: each item's keys, ``item_keys``)."""
    return type(default) is dict and bool(default) and all(
        isinstance(k, str) for k in default) or type(default) in (tuple, list) and (
        item_keys(default) is not None)


def _variant(fn: Any, bound: dict[str, Any]) -> Any:
    """A copy of ``fn`` (its code, globals, closure, defaults) carrying ``bound``."""
    copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__,
                              fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__qualname__, copy.__module__ = fn.__qualname__, fn.__module__
    copy.__dict__.update(fn.__dict__, __s2s_variant_of__=fn)  # (its defaults: keyword_trees)
    setattr(copy, BOUND, dict(bound))
    return copy


value_methods.CALLED_NAMES = _called_names  # (api/value_methods.py)
