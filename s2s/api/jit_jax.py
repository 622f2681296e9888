"""s2s's transforms on the JAX backend: what ``s2s.jit(f, backend="jax")`` runs.
:func:`call` runs an s2s transform (grad, value_and_grad, vmap, jacfwd/jacrev) or a
user function on JAX values: the emitted code, prepared for JAX by
:class:`~s2s.backends.jax_backend.JaxBackend`, with the names it reads from the user's
module translated (:class:`Translator`: NumPy becomes ``s2s.backends.jax_numpy``, a user
function its lowered copy, an s2s transform called inside the code its emitted code run
on JAX).  The backend itself knows nothing of transforms."""

from __future__ import annotations

import copy
import functools
import types
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from ..backends import jax_numpy, jax_runtime_ode
from ..backends.base import TracedValueError
from ..backends.jax_backend import (
    SITE_DIRS,
    JaxBackend,
    lowered_user_code,
)
from ..backends.jax_defaults import indexable
from ..backends.jax_order import keyed, plain
from ..errors import TransformError, TruthValueError, UnsupportedCallError
from ..frontend.kept_vmap import KeptVmap
from ..frontend.resolve import DefaultVar
from ..ir.kinds import LEAF, kind_of
from ..ir.nodes import For, Function, Let, walk
from . import (
    arguments,
    dtypes_down,
    jacobians,
    jit_jax_free,
    jit_jax_reads,
    pushforward,
    records,
    signatures,
    trees,
    vectorize,
)
from . import transformed as api
from .callables import PerArity
from .emitted import emitted_for, shadow
from .jacobians import (
    JacFwd,
    JacRev,
    _basis,
    _Hessian,
    keywords_in_place,
    with_keywords,
)
from .jit_jax_located import _at_user_line, _in_translated, _run
from .jit_jax_objects import (
    _LIBRARIES,
    _followed,
    _KeptVmapOnJax,
    _meta,
    _ModuleOnJax,
    _ObjectOnJax,
    _user_class,
    _user_object,
)
from .jit_jax_paths import add_variant, run_variants  # noqa: F401 (jit's)
from .jit_jax_pytrees import (
    RebuiltOnJax,
    as_translated,
    reading_translated,
    register_translated,
)
from .jit_jax_results import _cast_like, _cast_tree, _in_order_of, _postprocess
from .jit_jax_scipy import scipy_linalg_on_jax, scipy_on_jax
from .keyword_trees import as_positional
from .located import not_iterable_at_user_line, unpack_at_user_line
from .pullbacks import own_namespace
from .transformed import Transformed, _check_argnums, _leaves, _rebuild
from .unchecked_writes import callee_write
from .vectorize import Vmapped, in_argument_types

# ---- running s2s objects and user code on the JAX backend ----


def refresh(backend: JaxBackend, jfn: Callable, translator: "Translator | None" = None) -> None:
    """Give ``jfn`` the current values of the names it reads from the user's
    module (as the NumPy code would read them), translated for JAX."""
    fn, names = jfn.__s2s_numpy__  # type: ignore[attr-defined]
    free = getattr(fn, "__s2s_free__", None)
    if free:
        signatures.read_free_names(fn)
    translator = translator or Translator(backend)
    target = jfn.__globals__
    defaults = {n for n, var in free or () if type(var) is DefaultVar}
    plain_vars = {n: var for n, var in free or () if type(var) in jit_jax_reads.READ_VARS
                  or n in defaults}  # (an array default: read at every call, in place too)
    for name in names:  # (a NumPy default indexed by a traced value: jax_defaults)
        value = fn.__globals__[name]
        var = plain_vars.get(name)
        if var is not None and not jit_jax_reads.private(var):  # (read at every call)
            value = jit_jax_free.read(jit_jax_reads.var_key(var), jit_jax_reads.var_getter(var),
                                      value)
        elif type(value) is np.ndarray and name in arguments._held_names(fn):  # (a
            value = jit_jax_reads.held(fn.__globals__, name, value)  # callee's default)
        value = translator(value)
        target[name] = indexable(value) if name in defaults else value
    if fn.__defaults__ or fn.__kwdefaults__:  # (`def f_grad(x, grid=grid_default)`:
        jfn.__defaults__, jfn.__kwdefaults__ = jit_jax_reads.defaults(fn, indexable)  # an
        # array's read at every call, as the NumPy code's own default object is)


def translate(backend: JaxBackend, value: Any) -> Any:
    return Translator(backend)(value)

def call(backend: JaxBackend, fun: Any, args: tuple, kwargs: dict, examples: dict | None = None,
         example_key: Any = None, texts: list | None = None,
         unchecked: str | None = None) -> Any:
    """Run ``fun`` (an s2s transform or a user function) on JAX values: the body
    of the function ``jax.jit`` traces.  ``examples`` holds a vmapped function's
    code per signature (``example_key``); ``texts`` gets the emitted text run;
    ``unchecked``: the frontend's reason for refusing a user ``fun`` (the user
    functions it reaches are then checked for in-place writes as they are translated:
    ``unchecked_writes.callee_write``)."""
    texts = texts if texts is not None else []
    if isinstance(fun, Transformed) and (kwargs or fun._by_keyword[1]):  # (a pytree
        args, kwargs = as_positional(fun._by_keyword, args, kwargs)  # by default)
    if isinstance(fun, (JacFwd, JacRev)) and (per := fun._per_objects(args)) is not None:
        fun = per.for_arguments(args, kwargs)  # (a NamedTuple passed to a callee)
    if isinstance(fun, (Vmapped, Transformed, JacFwd, JacRev)):
        check_odes(getattr(fun, "ir", None))
    if isinstance(fun, Vmapped):
        given = args
        if trees.has_nodes(args, False):  # (a NamedTuple: its plain form, as on NumPy)
            args = trees.plain_args(args, ())

        def run(text: str, fn: Callable) -> Any:
            jfn = backend.prepare(fn, text)
            refresh(backend, jfn)
            texts.append(jfn.__s2s_text__)
            return _run(backend, jfn, args, kwargs, fun.ir)

        # (its code made per path of an `if` whose paths give a value different
        # ranks, where the trace knows the test: a shape, a static argument)
        out = run_variants((examples or {}).get(example_key), run)
        # (a vmapped gradient in its inputs' dtype, as JAX's and the NumPy backend's)
        out = dtypes_down.through(fun.inner, args, out)
        return in_argument_types(fun.inner, given, out)  # (a gradient in their types)
    if isinstance(fun, Transformed):
        if fun.mode not in ("grad", "value_and_grad"):
            raise TransformError(
                f"s2s.jit of a {fun.mode} object is not supported",
                hint="jit a function that calls s2s.jvp/s2s.vjp, or the grad",
            )
        argnums = _check_argnums(fun.argnums, fun.tuple_out, len(args))
        if trees.needs_plain(args, argnums, objects=True):  # (a NamedTuple, a registered
            # class's object, a dataclass default (no jit argument: jax.jit refuses one),
            # its plain form, the gradient rebuilt in its type, as on NumPy)
            return trees.call_plain(fun, args, kwargs, argnums, run=lambda *a, **k: call(
                backend, fun, a, k, examples, example_key, texts))
        text, fn = emitted_for(fun, shadow(args), kwargs)
        jfn = backend.prepare(fn, text)
        refresh(backend, jfn)
        texts.append(jfn.__s2s_text__)
        try:
            ran = _run(backend, jfn, args, kwargs, fun.ir)
        except TypeError as err:  # (`a, b = np.sum(x)` in a callee run as written)
            not_iterable_at_user_line(err, fun)
            raise
        return _postprocess(fun, ran, args, argnums)
    if isinstance(fun, (JacFwd, JacRev)):
        return jacobian_on_jax(backend, fun, args, kwargs)
    if isinstance(fun, PerArity):  # (a transform of a *args function: this call's)
        return call(backend, fun.for_arguments(args, kwargs), args, kwargs,
                    examples, example_key, texts)
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun!r}")
    translator = Translator(backend)
    if unchecked is not None:  # (the function itself checked when jitted)
        translator.checking = (unchecked, fun, {id(fun), id(getattr(fun, "__func__", fun))})
    translated = translator(fun)
    text = getattr(translated, "__s2s_text__", None)
    if text is not None:  # s2s.source shows the user's code as it runs
        texts.append(text)
    try:
        return backend.run(translated, tuple(as_translated(a, translator) for a in args), {
            k: as_translated(v, translator) for k, v in kwargs.items()})
    except (TracedValueError, TruthValueError) as err:
        raise _in_translated(_at_user_line(err, fun, args)) from err.__cause__
    except ValueError as err:  # (`a, b = t` of 3 items: raised at your line)
        unpack_at_user_line(err, fun)
        raise
    except TypeError as err:  # (`a, b = np.sum(x)`: raised at your line)
        not_iterable_at_user_line(err, fun)
        raise


def check_odes(ir: Any, seen: set | None = None) -> None:
    """An odeint/solve_ivp call in the function (or a function it calls) with an
    option JAX's odeint has no counterpart for (``jax_runtime_ode.refusal``), a
    scipy.stats rvs draw, or a draw in a loop: refused at that call before tracing."""
    if ir is None:
        return
    seen = set() if seen is None else seen
    if id(ir) in seen:
        return
    seen.add(id(ir))
    for s in walk(ir.body):
        if isinstance(s, Let) and s.prim == "odeint":
            refused = jax_runtime_ode.refusal(s.params["solver"], dict(s.params["options"]))
            if refused is not None:
                raise UnsupportedCallError(
                    refused[1], s.loc, func=ir.name,
                    hint="run it on the NumPy backend (s2s.jit(f, backend='numpy')), or "
                    "leave the option out: on the JAX backend s2s solves with "
                    "jax.experimental.ode.odeint")
        if isinstance(s, For) and any(isinstance(t, Let) and t.prim == "draw"
                                      for t in walk(s.body)):
            draw = next(t for t in walk(s.body) if isinstance(t, Let) and t.prim == "draw")
            raise UnsupportedCallError(
                "a random draw in a loop: on the JAX backend the loop runs as one traced "
                "body (lax.fori_loop), whose draw would give every iteration the same "
                "numbers", draw.loc, func=ir.name, hint="draw every iteration's numbers "
                "at once before the loop (`zs = rng.normal(size=(n, *x.shape))`, then "
                "`zs[i]`), or run it on the NumPy backend (s2s.jit(f, backend='numpy'))")
        if not isinstance(s, Let):
            continue
        if s.prim == "draw" and s.params.get("method") == "rvs":
            raise UnsupportedCallError(
                "scipy.stats' rvs draws with SciPy's generator, which JAX cannot run",
                s.loc, func=ir.name, hint="run it on the NumPy backend, or draw with "
                "np.random (s2s.jit(f, backend='numpy'))")
        callee = s.params.get("callee")
        if isinstance(callee, Function) and any(
                isinstance(t, Let) and t.prim == "stats_frozen" and all(
                    getattr(a, "name", None) in callee.params for a in t.args[1:])
                for t in callee.body):  # (its plan's: the distribution made again)
            raise UnsupportedCallError(
                f"a scipy.stats distribution frozen in the function is passed to "
                f"`{callee.name}`: SciPy cannot freeze a distribution of JAX's traced "
                "values", s.loc, func=ir.name, hint="pass its parameters and freeze "
                "it in the callee, or run it on the NumPy backend")
        if isinstance(callee, Function):
            check_odes(callee, seen)


# ---- translating what emitted code reads from the user's module ---------------------


_NUMPY_GLOBALS = "__s2s_numpy_globals__"  # translated module globals: the user's


class Translator:
    """Values from the user's module, as code on JAX must see them.

    NumPy (and its ``linalg``/``fft``, its functions and ufuncs under any name) becomes
    :mod:`s2s.backends.jax_numpy`; ``scipy.special`` becomes ``jax.scipy.special``; a
    user function becomes a copy of itself whose module globals (and closure) are
    translated the same way; emitted code is compiled for JAX; s2s transforms called
    inside run their emitted code on JAX.  Anything else is kept.
    """

    def __init__(self, backend: JaxBackend) -> None:
        self.backend = backend
        self.checking: tuple | None = None  # (call's `unchecked`: reason, function, ids)
        self._functions: dict[int, Any] = {}
        self._globals: dict[int, dict] = {}
        self._filled: dict[int, set[str]] = {}

    def __call__(self, value: Any) -> Any:
        if isinstance(value, types.ModuleType):
            return self._module(value)
        if isinstance(value, np.ufunc):
            return getattr(jax_numpy, value.__name__, value)
        if isinstance(value, Transformed):
            return OnJax(value, self.backend)
        mapped = _S2S_FUNCTIONS.get(id(value))
        if mapped is not None and mapped[0] is value:
            return getattr(S2SOnJax(self.backend), mapped[1])
        if isinstance(value, types.FunctionType):
            return self._function(value)
        if isinstance(value, KeptVmap):  # (an adapter passing `h = s2s.vmap(g)` on)
            return _KeptVmapOnJax(value, self)
        if isinstance(value, functools.partial):  # (its function on JAX, values kept)
            return functools.partial(self(value.func), *value.args, **value.keywords)
        if isinstance(value, records.Plained):  # (returns objects it built: on JAX)
            return records.Plained(self(value.__s2s_unwrap__))
        if isinstance(value, records.Rebuilding):  # (given the objects its caller built)
            return records.Rebuilding(self(value.fn), {
                i: self._built(b) for i, b in value.made.items()})
        if isinstance(value, types.MethodType) and isinstance(
                value.__func__, types.FunctionType) and not isinstance(value.__self__, type):
            return types.MethodType(self(value.__func__), self._object(value.__self__))
        if _user_object(value) or _followed(value):  # (a callable object: its __call__
            return _ObjectOnJax(value, self)  # on JAX; a free name's: its attributes too)
        if _user_class(value):  # (`Model(x)` in a function jit runs: methods on JAX)
            return self._class(value)
        if _holds_functions(value):  # (`ACTIVATIONS["relu"](x)` in emitted code)
            if isinstance(value, dict):
                return {k: self(v) for k, v in value.items()}
            return type(value)(self(v) for v in value)
        if callable(value) and not isinstance(value, type):
            module = getattr(value, "__module__", None) or ""
            if module.split(".")[0] in ("numpy", "scipy"):
                return self._library_function(value, module)
        return value

    def _object(self, obj: Any) -> Any:
        """An object of the user's: its attributes as they are, its methods (and a
        ``__call__``) run on JAX."""
        return _ObjectOnJax(obj, self) if _user_object(obj) or any(
            isinstance(v, types.FunctionType) for v in vars(type(obj)).values()) else obj

    def _built(self, made: Any) -> Any:
        """How an object is made again, as one whose methods run on JAX."""
        if not made.record and not getattr(made, "positional", False) and hasattr(
                made, "cls") and type(made.cls).__call__ is type.__call__:
            return RebuiltOnJax(made, self._class(made.cls))  # (a registered class)
        if not made.record:
            return made
        if hasattr(made, "built") and not hasattr(made, "cls"):  # (a list of them)
            out = copy.copy(made)
            out.built = self._built(made.built)
            return out
        out = copy.copy(made)
        out.cls = self(made.cls)
        nested = getattr(made, "fields", None)
        if nested:
            out.fields = {k: self._built(b) for k, b in nested.items()}
        return out

    def _class(self, cls: type) -> type:
        """A class of the user's as code on JAX calls it: a subclass whose methods
        (``__init__`` too) are their translated copies."""
        found = self._functions.get(id(cls))
        if found is None:  # (each class's methods just before it in the MRO, so
            bases: list[type] = []  # `super()` in one, its `__class__` the user's
            for klass in cls.__mro__[:-1]:  # class, runs the next one's on JAX too)
                own = {k: self._member(v) for k, v in vars(klass).items()
                       if _translatable_member(v)}
                bases += [type(klass.__name__, (), own), klass] if own else [klass]
            found = _meta(type(cls))(cls.__name__, tuple(bases), {
                "__module__": cls.__module__, "__qualname__": cls.__qualname__,
                "__s2s_numpy_original__": cls, "__s2s_translator__": self})
            register_translated(found, cls)  # (its objects: pytrees on JAX)
            self._functions[id(cls)] = found
        return found

    def _member(self, v: Any) -> Any:
        """A method, staticmethod, classmethod or property of a class, on JAX."""
        if isinstance(v, (staticmethod, classmethod)):
            return type(v)(self(v.__func__))
        if isinstance(v, property):
            return property(reading_translated(self(v.fget), self))
        return reading_translated(self(v), self)

    def _module(self, module: types.ModuleType) -> Any:
        name = module.__name__
        if name == "numpy":
            return jax_numpy
        if name.startswith("numpy."):
            sub = name.split(".")[1]
            return getattr(jax_numpy, sub, module)
        if name == "scipy.special":
            import jax.scipy.special

            return jax.scipy.special
        if name == "s2s":
            return S2SOnJax(self.backend, module)
        if name == "scipy.linalg":
            return scipy_linalg_on_jax()
        if name == "scipy":  # (`import scipy.special`, then `scipy.special.erf(x)`)
            return scipy_on_jax(module, self._module)
        filename = getattr(module, "__file__", None) or ""
        if name.split(".")[0] in _LIBRARIES or not filename or filename.startswith(
                SITE_DIRS):
            return module
        found = self._functions.get(id(module))
        if found is None:  # (`import mylib`, then `mylib.helper(x)`: helper on JAX)
            found = self._functions[id(module)] = _ModuleOnJax(module, self)
        return found

    def _library_function(self, fn: Any, module: str) -> Any:
        name = getattr(fn, "__name__", None)
        if name is None:
            return fn
        if module.startswith("scipy.special"):
            import jax.scipy.special

            return getattr(jax.scipy.special, name, fn)
        if module.startswith("scipy.linalg"):
            return getattr(scipy_linalg_on_jax(), name, fn)
        if module.startswith("scipy.integrate") and name in ("odeint", "solve_ivp"):
            return getattr(jax_runtime_ode, f"scipy_{name}")  # (JAX's odeint)
        if module.startswith("numpy"):
            for sub in ("linalg", "fft"):
                if f".{sub}" in module:
                    return getattr(getattr(jax_numpy, sub), name, fn)
            return getattr(jax_numpy, name, fn)
        return fn

    def _function(self, fn: types.FunctionType) -> Any:
        filename = fn.__code__.co_filename
        if filename.startswith("<s2s:"):
            jfn = self.backend.prepare(fn)
            refresh(self.backend, jfn, self)
            return jfn
        module = (fn.__module__ or "").split(".")[0]
        if module in ("numpy", "scipy"):
            return self._library_function(fn, fn.__module__)
        if module in _LIBRARIES or filename.startswith(SITE_DIRS):
            return fn
        found = self._functions.get(id(fn))
        if found is not None:
            return found
        if self.checking is not None and id(fn) not in self.checking[2]:
            refusal = callee_write(fn, self.checking[1], self.checking[0])
            if refusal is not None:  # (a static argument's function, an argument's
                raise refusal  # method: in-place writes, as the jitted function's)
        new_globals = self._translated_globals(fn.__globals__, fn.__code__)
        closure = None
        if fn.__closure__ is not None:  # (filled below, once `new` is registered: a
            closure = tuple(types.CellType() for _ in fn.__closure__)  # cell may hold fn)
        code, text = fn.__code__, None
        cells_in_order = closure or ()
        lowered = lowered_user_code(fn, new_globals)
        if lowered is not None:
            code, text = lowered
            self._translated_globals(fn.__globals__, code)  # (names the lowering added)
            cells = dict(zip(fn.__code__.co_freevars, closure or ()))
            closure = tuple(cells[n] for n in code.co_freevars) or None
        new = types.FunctionType(code, new_globals, fn.__name__, None, closure)
        self._functions[id(fn)] = new  # (its defaults may name it)
        new.__defaults__, new.__kwdefaults__ = jit_jax_reads.defaults(  # (`act=np.tanh`:
            fn, lambda d: indexable(self(d)))  # JAX's; an array's read at every call)
        new.__qualname__ = fn.__qualname__
        new.__s2s_numpy_original__ = fn  # type: ignore[attr-defined]
        if text is not None:
            new.__s2s_text__ = text  # type: ignore[attr-defined]
        self._functions[id(fn)] = new
        for name, cell, source in zip(fn.__code__.co_freevars, cells_in_order,
                                      fn.__closure__ or ()):
            try:  # (`__class__`, zero-argument super()'s: the user's class itself)
                cell.cell_contents = source.cell_contents if name == "__class__" else \
                    self(jit_jax_free.read(("cell", id(source)), jit_jax_reads.cell_getter(source),
                                           source.cell_contents))
            except ValueError:  # not yet bound
                pass
        return new

    def _translated_globals(self, module_globals: dict, code: types.CodeType) -> dict:
        """The JAX copy of a module's globals, with the names ``code`` (and the code
        nested in it) reads translated: one copy per module, filled by name as the
        functions translated read them (translating every global of a module with
        many functions cost a second per ``s2s.jit``, for names nothing runs)."""
        key = id(module_globals)
        new = self._globals.get(key)
        if new is None:
            new = dict(module_globals)
            new[_NUMPY_GLOBALS] = module_globals  # (a function made by the code: _original)
            self._globals[key] = new  # before filling: recursion finds it
            self._filled[key] = set()
        filled = self._filled[key]
        for name in _global_names(code):
            if name in filled or name.startswith("__") or name not in module_globals:
                continue
            filled.add(name)  # (before translating: a function may read itself)
            new[name] = self(jit_jax_free.read(  # (read at every call: jit_jax_free)
                ("scope", key, name), jit_jax_reads.module_getter(module_globals, name),
                module_globals[name]))
        return new


def _translatable_member(v: Any) -> bool:
    fn = v.fget if isinstance(v, property) else getattr(v, "__func__", v) if isinstance(
        v, (staticmethod, classmethod)) else v
    return isinstance(fn, types.FunctionType) and not fn.__code__.co_filename.startswith("<")


def _holds_functions(value: Any) -> bool:
    """A plain tuple, list or dict with a function among its items (nested too)."""
    if type(value) not in (tuple, list, dict):
        return False
    items = value.values() if isinstance(value, dict) else value
    return any(_holds_functions(v) or (callable(v) and not isinstance(v, type))
               for v in items)


def _global_names(code: types.CodeType) -> set[str]:
    """Every name ``code`` and the code objects inside it (lambdas, nested functions,
    comprehensions) may read as a global."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


def _original(fun: Any) -> Any:
    """What s2s transforms read of a function the traced code passes them: the user's
    own function behind a translated copy; the s2s transform behind an :class:`OnJax`
    (``s2s.jvp(s2s.grad(f), ...)``: a transform of a transform); a function made while
    the translated code ran (a lambda, a nested ``def``) with the user's module
    globals and its closure's functions as the user's, not their JAX copies."""
    if isinstance(fun, OnJax):
        return fun.t
    found = getattr(fun, "__s2s_numpy_original__", None)
    if found is not None:
        return found
    if isinstance(fun, S2SOnJax):
        return fun._s2s if fun._s2s is not None else fun
    if isinstance(fun, functools.partial):  # (its bound values: the traced ones)
        return functools.partial(_original(fun.func), *fun.args, **fun.keywords)
    if not isinstance(fun, types.FunctionType):
        return fun
    module_globals = fun.__globals__.get(_NUMPY_GLOBALS)
    if module_globals is None:
        return fun
    closure = None
    if fun.__closure__ is not None:
        cells = []
        for cell in fun.__closure__:
            try:
                cells.append(types.CellType(_original(cell.cell_contents)))
            except ValueError:  # not yet bound
                cells.append(types.CellType())
        closure = tuple(cells)
    new = types.FunctionType(fun.__code__, module_globals, fun.__name__, fun.__defaults__,
                             closure)
    new.__kwdefaults__ = fun.__kwdefaults__
    new.__qualname__ = fun.__qualname__
    return new


# ---- s2s transforms called inside code that runs on JAX ----------------------------


class OnJax:
    """An s2s transform called from code traced by JAX: runs its emitted code on JAX."""

    def __init__(self, t: Transformed, backend: JaxBackend) -> None:
        self.t = t
        self.backend = backend
        self.__name__ = t.__name__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return call(self.backend, self.t, args, kwargs)


class S2SOnJax(types.ModuleType):
    """The ``s2s`` module as code traced on the JAX backend sees it."""

    def __init__(self, backend: JaxBackend, s2s: types.ModuleType | None = None) -> None:
        super().__init__("s2s")
        self._backend = backend
        self._s2s = s2s  # the user's ``s2s`` module (None: only the transforms)

    def __getattr__(self, name: str) -> Any:
        found = _S2S_FUNCTIONS_BY_NAME.get(name)
        if found is None and self._s2s is None:
            raise AttributeError(name)
        value = found if found is not None else getattr(self._s2s, name)
        if name == "vmap":  # traced code batches with JAX's own vmap (what s2s.vmap
            # means example by example; its own code needs concrete ranks)
            def vmap(fun: Any = None, in_axes: Any = 0, out_axes: Any = 0) -> Any:
                if fun is None:
                    return lambda f: jax.vmap(f, in_axes=in_axes, out_axes=out_axes)
                return jax.vmap(fun, in_axes=in_axes, out_axes=out_axes)

            return vmap
        if name in ("grad", "value_and_grad"):
            def transform(fun: Any = None, *a: Any, **k: Any) -> Any:
                if fun is None:
                    return lambda f: OnJax(value(_original(f), *a, **k), self._backend)
                return OnJax(value(_original(fun), *a, **k), self._backend)

            transform.__name__ = name
            return transform
        if name == "jvp":
            return lambda fun, primals, tangents, has_aux=False: jvp_on_jax(
                self._backend, fun, primals, tangents, has_aux)
        if name == "vjp":
            return lambda fun, *primals, has_aux=False: vjp_on_jax(
                self._backend, fun, primals, has_aux)
        if name in ("jacfwd", "jacrev", "hessian", "jacobian"):
            def jacobian(fun: Any, *a: Any, **k: Any) -> Any:
                made = value(_original(fun), *a, **k)

                def on_jax(*args: Any) -> Any:
                    jac = made.for_call(len(args)) if isinstance(made, PerArity) else made
                    return jacobian_on_jax(self._backend, jac, args, {})

                on_jax.__s2s_numpy_original__ = made  # type: ignore[attr-defined]
                return on_jax  # (a transform of it, s2s.jvp(s2s.jacrev(f)): of `made`)

            jacobian.__name__ = name
            return jacobian
        return value


_S2S_FUNCTIONS = {id(getattr(api, n)): (getattr(api, n), n)
                  for n in ("grad", "value_and_grad", "vjp")}
_S2S_FUNCTIONS[id(pushforward.jvp)] = (pushforward.jvp, "jvp")


for _f in (vectorize.vmap, jacobians.jacfwd, jacobians.jacrev, jacobians.hessian):
    _S2S_FUNCTIONS[id(_f)] = (_f, _f.__name__)
_S2S_FUNCTIONS_BY_NAME = {n: f for f, n in _S2S_FUNCTIONS.values()}


def jvp_on_jax(backend: JaxBackend, fun: Callable, primals: Any, tangents: Any,
               has_aux: bool = False) -> Any:
    """``s2s.jvp`` with its emitted forward-mode code run on JAX values."""
    fun = _original(fun)
    arguments._check_tangents(shadow(tuple(primals)), shadow(tuple(tangents)))
    primals, tangents = tuple(primals), tuple(tangents)
    api.check_array_types("jvp", (primals, tangents))
    t = pushforward._jvp_transform(fun, has_aux)
    t._refresh()
    active = api._inexact_args(primals)
    kinds = tuple(kind_of(p) for p in primals) + (LEAF,) * (len(t.ir.params) - len(primals))
    text, fn = t._generate(kinds, active, (len(primals), False), nargs=len(primals),
                           inner_args=primals)
    jfn = backend.prepare(fn, text)
    refresh(backend, jfn)
    result = _run(backend, jfn, (*primals, *(tangents[i] for i in active)), {}, t.ir)
    out, out_dot = result[0], _in_order_of(result[1], result[0])
    fixed = [_cast_like(d, o) if jnp.issubdtype(jnp.result_type(o), jnp.inexact)
             else np.zeros(np.shape(o), api.float0)
             for d, o in zip(_leaves(out_dot), _leaves(out))]
    out_dot = _rebuild(kind_of(out), fixed)
    down = dtypes_down.target(fun, primals)  # (of a gradient: in its inputs' dtype)
    if down is not None:
        out, out_dot = dtypes_down.cast_at(down, out), dtypes_down.cast_at(down, out_dot)
    if has_aux:
        return out, out_dot, result[2]
    return out, out_dot


def vjp_on_jax(backend: JaxBackend, fun: Callable, primals: tuple,
               has_aux: bool = False) -> Any:
    """``s2s.vjp`` on JAX values: the user's function runs translated (its ``numpy``
    is jax.numpy), and ``vjp_fn(cotangent)`` runs the emitted VJP code on JAX."""
    fun = _original(fun)
    api.check_array_types("vjp", primals)
    t = api._VJP(fun, has_aux)
    try:  # the value from the emitted JVP code (its control flow is lowered; XLA
        # drops the unused tangents), else from the user's own code
        found = jvp_on_jax(backend, fun, primals, _zero_tangents(primals), has_aux)
        out = (found[0], found[2]) if has_aux else found[0]
    except TransformError:
        out = call(backend, fun, primals, {})
    out, aux = api._split_aux(out, has_aux)
    float_args = api._inexact_args(primals)
    kinds = tuple(kind_of(p) for p in primals) + (LEAF,) * (len(t.ir.params) - len(primals))
    run = None
    if float_args:  # (the code and the objects its names hold fixed now, as on NumPy:
        # api/pullbacks.py; the primals copied: the caller may write into its arrays)
        t._refresh()
        text, fn = t._generate(kinds, float_args, True, nargs=len(primals),
                               inner_args=primals)
        jfn = backend.prepare(fn, text)
        refresh(backend, jfn)
        run = (own_namespace(jfn), trees._copies(primals),
               tuple(t.ir.defaults[p] for p in t.ir.params[len(primals):]))

    def vjp_fn(cotangent: Any) -> tuple[Any, ...]:
        api._check_cotangent(shadow(cotangent), shadow(out))
        grads: Any = ()
        if run is not None:
            grads = _run(backend, run[0], (*run[1], *run[2], cotangent), {}, t.ir)
        it = iter(grads)
        return tuple(
            _cast_tree(next(it), p) if i in float_args else
            _rebuild(kind_of(p), [np.zeros(np.shape(x), api.float0) for x in _leaves(p)])
            for i, p in enumerate(primals))

    vjp_fn.__name__ = t.__name__
    if has_aux:
        return out, vjp_fn, aux
    return out, vjp_fn


def _zero_tangents(tree: Any) -> Any:
    """Zero tangents of ``tree``'s structure (float0 for integer and bool leaves)."""
    if isinstance(tree, tuple) and not hasattr(tree, "_fields"):
        return tuple(_zero_tangents(v) for v in tree)
    if isinstance(tree, list):
        return [_zero_tangents(v) for v in tree]
    if isinstance(tree, dict):
        return {k: _zero_tangents(v) for k, v in tree.items()}
    dtype = jnp.result_type(tree)
    if not jnp.issubdtype(dtype, jnp.inexact):
        return np.zeros(np.shape(tree), api.float0)
    return jnp.zeros(np.shape(tree), dtype)


# ---- jacfwd, jacrev, hessian ---------------------------------------------------------


def jacobian_on_jax(backend: JaxBackend, jac: Any, args: tuple, kwargs: dict) -> Any:
    """``jacfwd``/``jacrev``/``hessian`` on JAX values: the emitted JVP (one column
    per input direction) or VJP (one row per output direction) run over the standard
    basis by ``lax.map``, a loop XLA compiles once; the blocks laid out as the NumPy
    backend lays them out (output dims first, then input dims)."""
    if isinstance(jac, _Hessian):  # (of a vector output: jacfwd(jacrev(f)), as on NumPy)
        general = jac.general_for(args, lambda: call(backend, jac.fun.fn, args, kwargs))
        if general is not None:
            return jacobian_on_jax(backend, general, args, kwargs)
    if kwargs:  # (keyword arguments: passed on, not differentiated, as in JAX)
        positional, kw = keywords_in_place(jac.fun, args, kwargs)
        if kw:
            return jacobian_on_jax(backend, with_keywords(jac, len(positional), tuple(kw)),
                                   (*positional, *kw.values()), {})
        args = positional
    argnums = _check_argnums(jac.argnums, jac.tuple_out, len(args))
    args = jacobians.plain_objects(args, argnums)  # (a NamedTuple f calls methods of)
    for i in argnums:
        for leaf in _leaves(args[i]):
            if not jnp.issubdtype(jnp.result_type(leaf), jnp.floating):
                raise TypeError(f"{jac.mode} requires real-valued inputs, but got "
                                f"{jnp.result_type(leaf).name}")
    fun, has_aux = _original(jac.fun), jac.has_aux
    inputs = [args[i] for i in argnums]
    if isinstance(jac, JacFwd):
        n, basis = _basis([shadow(leaf) for x in inputs for leaf in _leaves(x)])

        def column(directions: Any) -> Any:
            it = iter(directions)
            tangents = list(_zero_tangents(args))
            for i in argnums:
                tangents[i] = _rebuild(kind_of(args[i]), [next(it) for _ in _leaves(args[i])])
            found = jvp_on_jax(backend, fun, args, tuple(tangents), has_aux)
            return (found[1], found[2]) if has_aux else found[1]

        # (lax.map would rebuild the dicts of what it maps sorted: jax_order)
        mapped = plain(jax.lax.map(lambda d: keyed(column(d)), tuple(basis)))
        out_dot, aux = mapped if has_aux else (mapped, None)
        blocks = _tree_leaves_map(lambda c: _columns_to_blocks(c, inputs, jac.tuple_out),
                                  out_dot)
    else:
        out, vjp_fn, *rest = vjp_on_jax(backend, fun, args, has_aux)
        aux = rest[0] if has_aux else None
        out_leaves = _leaves(out)
        m, basis = _basis([np.zeros(np.shape(o), np.result_type(shadow(o), np.float32))
                           for o in out_leaves])

        def row(directions: Any) -> Any:
            grads = vjp_fn(_rebuild(kind_of(out), list(directions)))
            return tuple(grads[i] for i in argnums)

        rows = plain(jax.lax.map(lambda d: keyed(row(d)), tuple(basis)))
        blocks = _rows_to_blocks(rows, out, inputs, jac.tuple_out)
    # (of a gradient, a Hessian: in its inputs' dtype, as the NumPy backend's)
    source = jac.fun if isinstance(jac, JacFwd) else jac
    if has_aux:
        aux = plain(jax.tree_util.tree_map(lambda a: a[0], keyed(aux))) \
            if isinstance(jac, JacFwd) else aux
        return dtypes_down.through(source, args, (blocks, aux))
    return dtypes_down.through(source, args, blocks)


def _tree_leaves_map(f: Callable, tree: Any) -> Any:
    if isinstance(tree, (tuple, list)) and not hasattr(tree, "_fields"):
        return type(tree)(_tree_leaves_map(f, t) for t in tree)
    if isinstance(tree, dict):
        return {k: _tree_leaves_map(f, v) for k, v in tree.items()}
    return f(tree)


def _columns_to_blocks(columns: Any, inputs: list, tuple_out: bool) -> Any:
    """One output leaf's columns ``(n, *out)`` -> its in-tree of ``(*out, *in)``."""
    blocks, start = [], 0
    for x in inputs:
        parts = []
        for leaf in _leaves(x):
            k = int(np.size(leaf))
            part = jnp.moveaxis(columns[start:start + k], 0, -1)
            parts.append(part.reshape(columns.shape[1:] + np.shape(leaf)))
            start += k
        blocks.append(_rebuild(kind_of(x), parts))
    return tuple(blocks) if tuple_out else blocks[0]


def _rows_to_blocks(rows: tuple, out: Any, inputs: list, tuple_out: bool) -> Any:
    """Rows ``(m, *in)`` per input leaf -> out-tree of in-trees of ``(*out, *in)``."""
    per_input = [_leaves(r) for r in rows]
    blocks_out, start = [], 0
    for o in _leaves(out):
        k = int(np.size(o))
        blocks = [_rebuild(kind_of(x), [
            leaf[start:start + k].reshape(np.shape(o) + np.shape(leaf)[1:])
            for leaf in leaves]) for x, leaves in zip(inputs, per_input)]
        blocks_out.append(tuple(blocks) if tuple_out else blocks[0])
        start += k
    return _rebuild(kind_of(out), blocks_out)
