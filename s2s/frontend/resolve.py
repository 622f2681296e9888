"""Names -> objects, as Python resolves them when the function runs.

Locals are the lowering's (see ``scope``); this module resolves the rest: the closure,
then the function's globals, then builtins.  Each free name read is recorded (a
``FreeVar``) so a later call can tell whether the IR built from it still holds; a
call or attribute s2s cannot transform gets an error that says what to write instead.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import types
from typing import Any

import libcst as cst
import numpy as np

from .. import runtime
from ..errors import Loc, TransformError, UnsupportedCallError, UnsupportedSyntaxError
from ..ir.kinds import kind_of
from ..ir.names import UPSTREAM
from ..ir.nodes import Atom, Const, Var
from ..primitives import lookup_object
from .source import ParsedFunction, parse_function
from .type_info import info_value_error

# Names emitted code defines or imports itself; user names never take them.
RESERVED = {"np", "math", *runtime.__all__}


def _is_frozen_distribution(value: Any) -> bool:
    """A scipy.stats distribution with its parameters fixed (``norm(0.5, 2.0)``)."""
    return type(value).__name__.endswith("_frozen") and hasattr(value, "dist") and \
        hasattr(value, "args") and hasattr(value, "kwds")


class FreeVar:
    """A name the function reads from its closure or its module, re-read per call.

    The IR is built from the values free names had when it was normalized (which
    function ``helper`` is, whether ``SCALE`` is a scalar); ``fingerprint`` says when
    a later value would change the IR, and ``read`` gives the value a call should use.

    A function and a function it calls may read the same name from two places (two
    modules, or emitted code and the user's module it calls back into).  Emitted
    code puts both in one namespace, so that is allowed only while both places hold
    the very same object: ``also`` lists the other places, and the fingerprint
    changes when they stop agreeing (the next call then normalizes again, and says
    which name differs).
    """

    def __init__(self, name: str, cell: Any = None, scope: dict | None = None) -> None:
        self.name = name
        self.cell = cell
        self.scope = scope
        self.also: tuple["FreeVar", ...] = ()

    def read(self) -> Any:
        if self.cell is not None:
            return self.cell.cell_contents
        assert self.scope is not None
        upstream = self.scope.get(UPSTREAM)  # (the namespace of emitted code: it mirrors
        if upstream is not None and self.name in upstream:  # the user's module's names)
            return upstream[self.name].read()
        return self.scope[self.name]

    def bindings(self) -> tuple["FreeVar", ...]:
        return (self,) + self.also

    def same_binding(self, other: "FreeVar") -> bool:
        return self.cell is other.cell and self.scope is other.scope

    def covers(self, other: "FreeVar") -> bool:
        """Is every place ``other`` reads the name from one this one watches?"""
        return all(any(b.same_binding(o) for b in self.bindings()) for o in other.bindings())

    def joined(self, other: "FreeVar") -> "FreeVar":
        """One name read from the places of both (which hold the same object now)."""
        var = FreeVar(self.name, self.cell, self.scope)
        var.also = self.also + tuple(
            o for o in other.bindings() if not any(b.same_binding(o) for b in self.bindings())
        )
        return var

    def agrees(self) -> bool:
        """Do all the places this name is read from hold the same object?"""
        try:
            value = self.read()
            return all(o.read() is value for o in self.also)
        except (KeyError, ValueError):
            return False

    def fingerprint(self) -> Any:
        try:
            value = self.read()
        except (KeyError, ValueError):
            return None
        if isinstance(value, type) and not is_library(value):  # (its methods: built
            own: Any = ("class", id(value), _methods_of(value))  # objects call them)
        elif callable(value) or isinstance(value, types.ModuleType):
            # (a callable object's functions too: `self.act(y)` called the one it held)
            own = ("object", id(value), _functions_in(value))
        elif _is_frozen_distribution(value):  # its parameters are the IR's constants
            own = ("frozen", id(value), repr(value.args), repr(value.kwds))
        else:
            own = ("data", kind_of(value), np.ndim(value) if _is_number_like(value) else -1,
                   _functions_in(value))
        return (own, self.agrees()) if self.also else own


def _methods_of(cls: type) -> tuple:
    """A class's functions (its bases' too) by identity: an object the function builds
    calls them, so a method replaced after the class was read makes the IR stale."""
    try:
        return tuple((k, id(v)) for c in cls.__mro__[:-1] for k, v in vars(c).items()
                     if isinstance(v, (types.FunctionType, staticmethod, classmethod,
                                       property)))
    except (AttributeError, TypeError):
        return ()


def _functions_in(value: Any, depth: int = 0) -> tuple:
    """The functions a tuple, list, dict or object of your classes holds (nested too:
    ``self.layers[0].act``), by identity: the IR calls an item
    (``ACTIVATIONS["relu"](x)``, ``self.act(y)``) as the function it is now."""
    if isinstance(value, (tuple, list, dict)):
        items = value.items() if isinstance(value, dict) else enumerate(value)
    elif _plain_object(value) and depth < 6:
        items = vars(value).items()
    else:
        return ()
    out: list = []
    for key, item in items:
        inner = _functions_in(item, depth + 1)
        if callable(item) and not isinstance(item, type):
            out.append((key, id(item), inner) if inner else (key, id(item)))
        elif inner:
            out.append((key, inner))
    return tuple(out)


def _plain_object(value: Any) -> bool:
    """An object of a user's class whose attributes a method reads (not a function,
    a module, a class or a library's object)."""
    return hasattr(value, "__dict__") and not isinstance(value, (
        type, types.ModuleType, types.FunctionType, types.MethodType, functools.partial)) \
        and not is_library(type(value))


class ThroughVar(FreeVar):
    """A free name whose value emitted code reads through ``through``: a function
    that returns objects it built, called by emitted code as a wrapper giving their
    fields as dicts (s2s/api/records.py ``Plained``)."""

    def __init__(self, var: FreeVar, through: Any) -> None:
        super().__init__(var.name, var.cell, var.scope)
        self.also, self.through = var.also, through

    def read(self) -> Any:
        return self.through(super().read())


_NO_DEFAULT = object()  # what a DefaultVar reads for a parameter without a default


class DefaultVar(FreeVar):
    """A parameter's default, read from the function object as Python reads it when
    a call leaves the parameter out (``f.__defaults__`` / ``f.__kwdefaults__``, which
    may be replaced after the ``def`` ran), not from the source text.

    The IR is built from the default it has now (a callee's default is a constant
    in its caller's IR; the emitted signature spells it), so its fingerprint is the
    value itself: a replaced default makes the next call normalize and generate
    again, as a free name that changes kind does."""

    def __init__(self, fn: Any, param: str, keyword_only: bool) -> None:
        self.fn = getattr(fn, "__func__", fn)  # (a bound method: its function's)
        self.param = param
        self.keyword_only = keyword_only
        super().__init__(f"<default of {param} in {getattr(fn, '__qualname__', fn)} "
                         f"{id(self.fn):#x}>")

    def read(self) -> Any:
        fn = self.fn
        if self.keyword_only:
            return (fn.__kwdefaults__ or {}).get(self.param, _NO_DEFAULT)
        code = fn.__code__
        names = code.co_varnames[:code.co_argcount]
        defaults = fn.__defaults__ or ()
        k = names.index(self.param) - (len(names) - len(defaults))
        return defaults[k] if k >= 0 else _NO_DEFAULT

    def same_binding(self, other: "FreeVar") -> bool:
        return isinstance(other, DefaultVar) and other.fn is self.fn and (
            other.param == self.param)

    def agrees(self) -> bool:
        return True

    def fingerprint(self) -> Any:
        value = self.read()
        if value is _NO_DEFAULT:
            return ("no default",)
        if is_literal(value) or isinstance(value, (complex, np.generic)):
            return ("default", type(value).__qualname__, repr(value))
        return ("default object", id(value))  # (kept alive by the IR's defaults)


def live_defaults(fn: Any) -> dict[str, Any]:
    """Parameter name -> the default a call that leaves it out gets now."""
    f = getattr(fn, "__func__", fn)
    code = f.__code__
    names = code.co_varnames[:code.co_argcount]
    defaults = f.__defaults__ or ()
    out = dict(zip(names[len(names) - len(defaults):], defaults))
    out.update(f.__kwdefaults__ or {})
    return out


def _is_number_like(value: Any) -> bool:
    return isinstance(value, (int, float, np.ndarray, np.generic))


def unwrap_forwarding(fn: Any) -> Any:
    """The function a decorator's wrapper only forwards to, else ``fn``.

    ``@functools.wraps(f) def wrapper(*args, **kwargs): return f(*args, **kwargs)``
    runs ``f`` and nothing else, so transforming ``f`` is transforming the wrapper.
    A wrapper that does more (scales the result, prints) is transformed as written:
    its own code is what runs."""
    seen = set()
    while id(fn) not in seen:
        seen.add(id(fn))
        inner = _forwards_to(fn)
        if inner is None:
            return fn
        fn = inner
    return fn


def _forwards_to(fn: Any) -> Any:
    inner = getattr(fn, "__wrapped__", None)
    code = getattr(fn, "__code__", None)
    if inner is None or code is None or not isinstance(fn, types.FunctionType) or (
            fn.__name__ == "<lambda>"):
        return None
    try:
        node = parse_function(fn).node
    except TransformError:
        return None
    body = [s for i, s in enumerate(node.body.body) if not (i == 0 and is_docstring(s))]
    if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine) or len(
            body[0].body) != 1 or not isinstance(body[0].body[0], cst.Return):
        return None
    call = body[0].body[0].value
    if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Name):
        return None
    callee = call.func.value
    closure = dict(zip(code.co_freevars, fn.__closure__ or ()))
    try:
        target = closure[callee].cell_contents if callee in closure else (
            fn.__globals__.get(callee))
    except ValueError:
        return None
    if target is not inner:
        return None
    ps = node.params
    if any(p.default is not None for p in (*ps.posonly_params, *ps.params,
                                            *ps.kwonly_params)):
        return None  # (the wrapper's own defaults would be lost)
    expected: list[tuple[str, str | None, str]] = [
        ("", None, p.name.value) for p in (*ps.posonly_params, *ps.params)]
    if isinstance(ps.star_arg, cst.Param):
        expected.append(("*", None, ps.star_arg.name.value))
    expected += [("", p.name.value, p.name.value) for p in ps.kwonly_params]
    if ps.star_kwarg is not None:
        expected.append(("**", None, ps.star_kwarg.name.value))
    given = [(a.star, a.keyword.value if a.keyword else None,
              a.value.value if isinstance(a.value, cst.Name) else None) for a in call.args]
    return inner if given == expected else None


def transform_kind(obj: Any) -> str | None:
    """``"jvp"`` for s2s.jvp itself, ``"transformed"`` for a function s2s transformed.

    s2s's api marks them (``__s2s_transform__``: an attribute of the ``jvp`` function,
    a method of the transform classes); it is read from the function's own ``__dict__``
    or the object's class, so no ``__getattr__`` of a user's object runs."""
    if isinstance(obj, types.FunctionType):
        return obj.__dict__.get("__s2s_transform__")
    hook = getattr(type(obj), "__s2s_transform__", None)
    return hook(obj) if callable(hook) else None


def is_library(fn: Any) -> bool:
    module = getattr(fn, "__module__", "") or ""
    return module.split(".")[0] in ("numpy", "scipy", "jax", "s2s", "math")


class DefaultKeysVar(DefaultVar):
    """A callee's default tuple of dicts whose items' keys decide the copy its caller
    calls (``passed_structure.py``): a change of them in place (``f.__defaults__[0][0]
    ["w"] = 1.0`` adding a key) makes the caller's code again."""

    def __init__(self, fn: Any, param: str, keyword_only: bool) -> None:
        super().__init__(fn, param, keyword_only)
        self.name = self.name.replace("<default of", "<item keys of the default of", 1)

    def same_binding(self, other: "FreeVar") -> bool:
        return isinstance(other, DefaultKeysVar) and super().same_binding(other)

    def fingerprint(self) -> Any:
        value = self.read()
        return (*super().fingerprint(), tuple(tuple(v) if type(v) is dict else None
                                              for v in value) if type(value) in (
            tuple, list) else None)


def is_literal(value: Any) -> bool:
    if isinstance(value, (int, float, bool, str, type(None))):
        return True
    if isinstance(value, tuple):
        return all(is_literal(v) for v in value)
    return False


# NumPy functions whose values are piecewise constant (indexes, counts, tests): their
# derivative is zero where defined, as JAX's; an error for one without a rule says so.
_PIECEWISE_CONSTANT = frozenset("""
    digitize searchsorted argmax argmin argsort argpartition lexsort nanargmax nanargmin
    nonzero flatnonzero argwhere count_nonzero histogram histogram_bin_edges
    histogram2d histogramdd isclose allclose array_equal array_equiv isin any all
    around round rint floor ceil trunc fix sign left_shift right_shift gcd lcm packbits
    unpackbits tril_indices triu_indices unravel_index ravel_multi_index
""".split())


# Array methods that turn an array into Python objects
_TO_PYTHON = frozenset({"item", "tolist", "tobytes", "__float__", "__int__"})


def is_docstring(node: Any) -> bool:
    return (
        isinstance(node, cst.SimpleStatementLine)
        and len(node.body) == 1
        and isinstance(node.body[0], cst.Expr)
        and isinstance(node.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


# built-ins users reach for, and what to write instead (max, min, sum: _unknown_call)
_BUILTIN_ADVICE: dict[str, tuple[str, str]] = {
    "isinstance": ("it tests a Python type, which s2s does not know when it transforms "
                   "the function", "decide it outside and pass the choice as an argument "
                   "(a keyword with a default), or branch on `x.ndim` / `x.shape`"),
    "type": ("it reads a Python type, which s2s does not know when it transforms the "
             "function", "pass the choice as an argument"),
    "round": ("it returns a Python number, which carries no derivative", "use np.round"),
    "any": ("it iterates over an array in Python", "use np.any"),
    "all": ("it iterates over an array in Python", "use np.all"),
    "print": ("`print` returns None, which is no value to compute with",
              "call `print(...)` as a statement of its own: s2s keeps it"),
    "hasattr": ("it tests a Python object, which s2s does not know when it transforms "
                "the function", "pass the choice as an argument"),
    "getattr": ("it reads an attribute by name, which s2s cannot follow",
                "pass the value as an argument"),
    "sorted": ("it sorts in Python", "use np.sort"),
    "map": ("it calls a function over items in Python", "use array operations, or a "
            "`for` loop with `append`"),
    "filter": ("it selects items in Python", "use a boolean mask"),
}


_STATEMENT_ADVICE: dict[type, tuple[str, str]] = {
    cst.For: ("`for` loops are not supported yet",
              "write the loop with array operations (np.sum, np.cumsum, ...)"),
    cst.Try: ("`try` statements are not supported",
              "handle errors outside the transformed function"),
    cst.With: ("`with` statements are not supported",
               "enter the context outside the transformed function"),
    cst.FunctionDef: ("nested `def` inside a transformed function is not supported",
                      "define the helper at module level and call it"),
    cst.ClassDef: ("`class` definitions inside a transformed function are not "
                   "supported", "define classes outside; pass arrays in"),
    cst.Global: ("`global` is not supported: s2s never writes the module's globals",
                 "return the value instead of storing it in a global"),
    cst.Nonlocal: ("`nonlocal` in a closure made outside the call: its cells outlive "
                   "the call, and s2s never writes them (a closure the function makes "
                   "by calling its factory, `loss = make_loss()`, keeps its cells as "
                   "locals: closure_cells.py)", "make the closure inside the function, "
                   "or return the new value instead"),
    cst.Del: ("`del` is not supported", "let the name go out of use instead"),
    cst.Raise: ("`raise` is kept only as the whole body of an `if` with no `else` "
                "(`if <test>: raise ...`)",
                "write the check as its own `if <test>: raise Error(...)`, or as "
                "`assert <test>, message`"),
    cst.Import: ("`import` inside a transformed function is not supported",
                 "import at module level"),
    cst.ImportFrom: ("`import` inside a transformed function is not supported",
                     "import at module level"),
    cst.Match: ("a `match` is supported where each case is a literal, a dotted "
                "constant, `None`/`True`/`False`, alternatives of those or a last "
                "`case _:` (an `if`/`elif` chain); a capture, sequence, mapping or "
                "class pattern is not", "write the cases as `if`/`elif` tests "
                "(`if cfg.get(\"kind\") == \"relu\":`)"),
    cst.Break: ("`break` outside a loop", "remove it"),
    cst.Continue: ("`continue` outside a loop", "remove it"),
}


def statement_advice(node: Any) -> tuple[str, str]:
    if isinstance(node, (cst.FunctionDef,)) and node.asynchronous is not None:
        return ("`async def` is not supported", "use a plain `def`")
    if isinstance(node, (cst.For, cst.With)) and node.asynchronous is not None:
        return ("`async` statements are not supported", "use plain Python")
    for kind, advice in _STATEMENT_ADVICE.items():
        if isinstance(node, kind):
            return advice
    return (f"`{type(node).__name__}` statements are not supported",
            "use assignments, `if` and `return`")


def expression_advice(node: Any) -> tuple[str, str]:
    table: dict[type, tuple[str, str]] = {
        cst.Yield: (
            ("`yield from` makes" if isinstance(node, cst.Yield) and
             isinstance(node.value, cst.From) else "`yield` makes")
            + " this a generator function, which s2s does not transform (JAX refuses "
            "one given to a transform, which returns a generator, but runs one a "
            "function consumes, `sum(f(x))`, as Python does)",
            "return an array: append the values to a list and return "
            "np.stack(values)"),
        cst.Await: ("`await` is not supported", "use a plain function"),
        cst.Lambda: ("a `lambda` inside a transformed function is not supported",
                     "define a module-level function and call it"),
        cst.ListComp: ("list comprehensions over array values are not supported (only "
                       "over shapes and constants)", "use array operations"),
        cst.GeneratorExp: ("generator expressions (comprehensions) over array values "
                           "are not supported", "use array operations"),
        cst.DictComp: ("dict comprehensions are not supported yet",
                       "write a dict literal"),
        cst.SetComp: ("set comprehensions are not supported", "use arrays"),
        cst.Set: ("sets are not supported", "use tuples or arrays"),
        cst.FormattedString: ("f-strings are not supported", "remove formatting"),
        cst.NamedExpr: ("`:=` is not supported", "assign on its own line"),
        cst.ConcatenatedString: ("implicitly concatenated strings are not supported",
                                 "write one string literal"),
    }
    for kind, advice in table.items():
        if isinstance(node, kind):
            return advice
    return (f"`{type(node).__name__}` expressions are not supported",
            "use arithmetic, NumPy calls, subscripts and names")


class Resolver:
    """Resolves the free names of one function and records what it read."""

    def __init__(self, fn: Any, parsed: ParsedFunction) -> None:
        self.fn = fn
        self.p = parsed
        self.display = fn.__name__
        code = fn.__code__
        self.closure = dict(zip(code.co_freevars, fn.__closure__ or ()))
        self.namespace: dict[str, Any] = {}  # names emitted code binds to objects
        self.free: dict[str, FreeVar] = {}  # free names the IR was built from
        # a method's `self` bound to an object (frontend/objects.py): name -> (the
        # object, the name emitted code spells it by)
        self.aliases: dict[str, tuple[Any, str]] = {}

    def loc(self, node: cst.CSTNode) -> Loc:
        return self.p.loc(node)

    def unsupported(self, node: cst.CSTNode, what: str, hint: str) -> TransformError:
        return UnsupportedSyntaxError(what, self.loc(node), hint, self.display)

    def lookup_global(self, node: cst.Name) -> Any:
        name = node.value
        if name in self.aliases:
            obj, spelled = self.aliases[name]
            self.depends_on(FreeVar(spelled, cell=types.CellType(obj)), node)
            return obj
        if name in self.closure:
            try:
                value = self.closure[name].cell_contents
            except ValueError:
                pass
            else:
                self.depends_on(FreeVar(name, cell=self.closure[name]), node)
                return value
        elif name in self.fn.__globals__:
            self.depends_on(FreeVar(name, scope=self.fn.__globals__), node)
            return self.fn.__globals__[name]
        elif hasattr(builtins, name):
            return getattr(builtins, name)
        raise TransformError(
            f"the name `{name}` is not defined", self.loc(node),
            f"define `{name}` before transforming the function", self.display,
        )

    def depends_on(self, var: "FreeVar", node: Any) -> None:
        """Record that the IR was built from the current value of a free name."""
        known = self.free.get(var.name)
        if known is None:
            self.free[var.name] = var
        elif not known.covers(var):
            joined = known.joined(var)
            if not joined.agrees():
                raise TransformError(
                    f"`{var.name}` names different objects in {self.display} and a "
                    "function it calls; emitted code puts them in one module",
                    self.loc(node), f"rename one of the two `{var.name}`", self.display,
                )
            self.free[var.name] = joined

    def constant(self, obj: Any, text: str, node: Any) -> Const:
        """A global or closure value the function reads as data."""
        dtype = isinstance(obj, type) and (issubclass(obj, np.generic) or obj in (
            float, int, bool, complex))  # `dtype=np.float64`, `x.astype(float)`
        if (callable(obj) and not dtype) or isinstance(obj, types.ModuleType):
            raise TransformError(
                f"`{text}` is a {type(obj).__name__}, used here as a value",
                self.loc(node), "call it, or pass the value as an argument",
                self.display,
            )
        root = text.split(".")[0]
        self.bind_namespace(root, node)
        return Const(obj, text)

    def bind_namespace(self, root: str, node: Any) -> None:
        if root in self.namespace:
            return
        spelled = {text: obj for obj, text in self.aliases.values()}
        if root in spelled:
            self.namespace[root] = spelled[root]
            return
        if root in self.closure:
            obj = self.closure[root].cell_contents
        elif root in self.fn.__globals__:
            obj = self.fn.__globals__[root]
        else:
            obj = getattr(builtins, root, None)
            if obj is not None:
                return  # builtins are always there
        if _is_frozen_distribution(obj):  # D.logpdf(x): D's parameters read now
            self.depends_on(FreeVar(root, self.closure[root]) if root in self.closure
                            else FreeVar(root, scope=self.fn.__globals__), node)
        if root == "np" and obj is not np:
            raise TransformError(
                "`np` here is not NumPy, but emitted code uses `np` for NumPy",
                self.loc(node), "import your module under another name", self.display,
            )
        self.namespace[root] = obj

    def unknown_attribute(self, node: cst.Attribute, root: str | None,
                           attr: str) -> TransformError:
        """An attribute s2s has no rule for; a method's ``self.attr`` says so."""
        code = self.fn.__code__
        params = list(code.co_varnames[:code.co_argcount])
        first = params[0] if params else None
        qual = getattr(self.fn, "__qualname__", "").split(".")
        in_class = len(qual) > 1 and qual[-2] != "<locals>"
        method = inspect.ismethod(self.fn) or in_class
        array_attr = hasattr(np.ndarray, attr)
        if root is not None and root == first and method and not array_attr:
            rest = params[1:]
            name = self.fn.__name__
            return self.unsupported(
                node, f"this method reads `{root}.{attr}`, an attribute of the object "
                f"`{root}` (not an array): s2s transforms functions of arrays and "
                "cannot read into other objects",
                f"pass the arrays it reads as arguments: `def {name}("
                + ", ".join([attr, *rest]) + ")` at module level (or a @staticmethod), "
                f"called as `{name}(obj.{attr}, ...)`; `argnums` picks what to "
                "differentiate",
            )
        if not array_attr:
            return self.unsupported(
                node, f"`.{attr}` is not an attribute of NumPy arrays, and s2s reads "
                "only arrays' attributes",
                "pass the value as an argument, or use a NumPy function",
            )
        return self.unsupported(
            node, f"the array attribute `.{attr}` is not supported",
            "use a NumPy function instead (`python -m s2s primitives` lists them)",
        )

    def resolve_dotted(self, node: Any) -> tuple[Any, str]:
        """The object a dotted name of modules and globals denotes, and its text."""
        if isinstance(node, cst.Name):
            spelled = self.aliases.get(node.value, (None, node.value))[1]
            return self.lookup_global(node), spelled
        if isinstance(node, cst.Attribute):
            obj, text = self.resolve_dotted(node.value)
            attr = node.attr.value
            if not hasattr(obj, attr):
                raise TransformError(
                    f"`{text}` has no attribute `{attr}`", self.loc(node.attr),
                    "check the spelling", self.display,
                )
            return getattr(obj, attr), f"{text}.{attr}"
        raise self.unsupported(
            node, "this expression cannot be resolved when transforming",
            "call functions by name",
        )

    def unknown_call(self, obj: Any, text: str, node: Any) -> TransformError:
        module = getattr(obj, "__module__", "") or ""
        name = getattr(obj, "__name__", text)
        if (module.startswith("numpy") or isinstance(obj, np.ufunc)) and \
                name in _PIECEWISE_CONSTANT:
            return UnsupportedCallError(
                f"`{text}` ({module}.{name}) is not differentiable (it is piecewise "
                "constant: its derivative is zero wherever it is defined, as in JAX), "
                "and s2s has no rule for it",
                self.loc(node),
                "compute it outside the function and pass the result in as an "
                "argument you do not differentiate, or register it as a primitive "
                "with `nondiff=True` (docs/writing-rules.md)",
                self.display,
            )
        if obj is np.finfo or obj is np.iinfo:  # (kept as an object: its attribute alone)
            return info_value_error(name, self, node)
        if module.startswith("numpy") or isinstance(obj, np.ufunc):
            return UnsupportedCallError(
                f"`{text}` ({module}.{name}) has no derivative rule in s2s yet",
                self.loc(node),
                "rewrite it with supported NumPy functions (`python -m s2s "
                "primitives` lists them), or register a rule for it",
                self.display,
            )
        if obj in (builtins.zip, builtins.enumerate, builtins.map, builtins.filter,
                   builtins.reversed):  # (iterators: a loop's or comprehension's)
            return UnsupportedCallError(
                f"`{text}(...)` is supported as what a `for` loop or a comprehension "
                "walks (over sequences), not here (kept as a value, or inside a call "
                "that does not walk it)", self.loc(node), "walk it in a `for` "
                "loop, or unpack it there (`for i, (a, b) in enumerate(zip(x, y)):`)",
                self.display)
        if isinstance(obj, type):
            return UnsupportedCallError(
                f"`{text}` is a class; constructing objects is not supported",
                self.loc(node), "use NumPy arrays and functions", self.display,
            )
        if obj is builtins.max or obj is builtins.min or obj is builtins.sum:
            return UnsupportedCallError(
                f"Python's built-in `{text}` is not supported",
                self.loc(node), f"use np.{ {'max': 'maximum', 'min': 'minimum', 'sum': 'sum'}[text] }",
                self.display,
            )
        builtin = _BUILTIN_ADVICE.get(getattr(obj, "__name__", None)) if getattr(
            builtins, getattr(obj, "__name__", ""), None) is obj else None
        if builtin is not None:
            return UnsupportedCallError(
                f"Python's built-in `{text}` is not supported: {builtin[0]}",
                self.loc(node), builtin[1], self.display,
            )
        return UnsupportedCallError(
            f"`{text}` ({type(obj).__name__}) is not a function s2s can transform",
            self.loc(node),
            "call NumPy functions or Python functions defined in a file",
            self.display,
        )

    def unknown_method(self, base: Atom, method: str, node: Any) -> TransformError:
        def error(what: str, hint: str) -> TransformError:
            return UnsupportedCallError(what, self.loc(node), hint, self.display)

        if isinstance(base, Const) and not isinstance(
                base.value, (np.ndarray, np.generic)):
            kind = type(base.value).__name__
            return error(
                f"`.{method}()` is a method of a {kind} constant, not of an array; s2s "
                "calls only arrays' methods",
                f"compute the {kind} outside the function (a module constant), or use "
                "arrays and NumPy functions",
            )
        if method in _TO_PYTHON:
            return error(
                f"the array method `.{method}()` is not supported: it turns an array "
                "into Python numbers, which carry no derivative",
                f"drop `.{method}()`: a 0-d array works wherever a Python number does"
                + (" (index it, `x[i]`, for one element)" if method == "item" else ""),
            )
        fn = getattr(np, method, None)
        owner = getattr(self.fn, "__qualname__", "").split(".")
        if fn is None and isinstance(base, Var) and base.name == "self" and len(owner) > 1:
            return error(  # (a method: its object's data attributes are read, not methods)
                f"`self.{method}(...)` calls a method of the object: s2s reads an "
                "object's data attributes (`self.w`), not its methods",
                f"call the method's function, passing the object: "
                f"`{owner[-2]}.{method}(self, ...)`")
        if callable(fn) and lookup_object(fn) is not None:
            return error(f"the array method `.{method}()` is not supported",
                         f"call the NumPy function: np.{method}(x, ...)")
        if callable(fn):
            return error(f"the array method `.{method}()` is not supported",
                         f"call np.{method}(x, ...) if s2s has a rule for it "
                         "(`python -m s2s primitives` lists them)")
        err = error(f"the array method `.{method}()` is not supported",
                    "use NumPy functions (`python -m s2s primitives` lists the ones "
                    "s2s differentiates)")
        # (no NumPy name: a method of an object the caller passes on, `helper(x, p)`
        # calling `p.apply(x)`, which a transform made per call's classes may lower)
        err.per_call = True  # type: ignore[attr-defined]
        return err
