"""Pytree objects the function builds and returns: ``Params(w * 2, b)`` of a
NamedTuple, a registered class or a registered dataclass.

Inside the emitted code such an object is the dict of its fields (as a pytree argument
is, s2s/api/trees.py): the frontend lowers the call of the class to a dict literal
(``{"w": w_times_2, "b": b}``), marked with the ``Built`` that says how to make the
object again.  At the API's boundary the transforms rebuild the user's type where the
function returned one (``template`` reads the returned value's producers in the IR,
``rebuild`` applies it): vmap's batched output, jvp's primal and tangent outputs,
jacfwd's Jacobian (an out-tree of the object's type), aux outputs, as JAX returns
them.

A registered class is built this way when its constructor stores each argument as a
child unchanged (found by calling it once on markers and flattening the result): a
constructor that computes, or keeps an argument as static data, is refused at the
call with that reason.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import weakref
from typing import Any

from .. import syntax
from ..ir.nodes import Function, Let, Return, Var, walk
from ..transforms import ranks
from . import trees
from .tree_util import NODES


class Built:
    """How the function's call ``cls(...)`` maps to the fields of its plain form:
    ``params[i]`` (a constructor parameter) is the field ``keys[i]``."""

    def __init__(self, cls: type, params: tuple[str, ...], keys: tuple[Any, ...],
                 positional: bool, init: Any = None) -> None:
        self.cls, self.params, self.keys, self.positional = cls, params, keys, positional
        self.signature = inspect.signature(cls)
        # a constructor that computes: its body as a function of its arguments that
        # returns the dict of the attributes it sets (``computed_init``)
        self.init = init
        self.plain = False  # a class of your own, not a pytree (``plain_class``)
        self.record = False  # built as the record of its fields (``_record``)

    def make(self, fields: dict) -> Any:
        nested = getattr(self, "fields", None)
        if nested:  # (fields holding objects: made again too)
            fields = {k: nested[k].make(v) if k in nested and isinstance(
                v, (dict, list, tuple)) else v for k, v in fields.items()}
        if self.record:  # the object of those fields, its __init__ not run again
            obj = object.__new__(self.cls)
            for k, v in fields.items():
                object.__setattr__(obj, k, v)
            return obj
        if self.init is not None:  # as JAX rebuilds a node: unflatten, not __init__
            obj = object.__new__(self.cls)
            vars(obj).update(fields)
            flatten, unflatten = NODES[self.cls]
            children, aux = flatten(obj)
            return unflatten(aux, list(children))
        return self.cls(**{p: fields[k] for p, k in zip(self.params, self.keys)})

    def __repr__(self) -> str:
        return f"<built {self.cls.__qualname__}>"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Built) and other.cls is self.cls

    def __hash__(self) -> int:
        return hash(self.cls)


class _Marker:
    """What a constructor is called with to see where each argument goes."""


def built(cls: Any) -> Built | str | None:
    """The ``Built`` of a pytree class (None: not a pytree node; a string: why s2s
    cannot build it in the function)."""
    if not isinstance(cls, type):
        return None
    if issubclass(cls, tuple) and hasattr(cls, "_fields"):  # a NamedTuple
        return Built(cls, tuple(cls._fields), tuple(cls._fields), True)
    if cls not in NODES:
        from ..frontend.built_objects import attribute_hooks, creation_hooks

        if cls.__module__.split(".")[0] not in ("builtins", "numpy", "scipy") and (
                why := creation_hooks(cls) or attribute_hooks(cls)):
            return why
        return plain_class(cls) or _record(cls)
    try:
        params = inspect.signature(cls).parameters.values()
    except (TypeError, ValueError):
        return "its constructor's signature cannot be read"
    names = [p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    if len(names) != len(params):
        return "its constructor takes *args, **kwargs or positional-only parameters"
    markers = {n: _Marker() for n in names}
    try:
        made = cls(**markers)
        node = trees._fields(made)
    except Exception:  # (a constructor that computes on its arguments)
        return computed_init(cls, names)
    assert node is not None
    keys, children, _ = node
    by_marker = {id(m): n for n, m in markers.items()}
    found = [by_marker.get(id(c)) for c in children]
    if None in found or sorted(found) != sorted(names):  # type: ignore[type-var]
        return computed_init(cls, names)
    return Built(cls, tuple(found), tuple(keys), False)  # type: ignore[arg-type]


def plain_class(cls: type) -> Built | None:
    """A class of your own, not a pytree, whose ``__init__`` only stores its
    parameters (``self.w = w``, each once): built in the function as the dict of
    those attributes, read by attribute there (``p.w``) and made again by calling
    the class where the function returns one.  None for any other class (its
    construction stays refused)."""
    init = cls.__dict__.get("__init__")
    if init is None or not inspect.isfunction(init) or cls.__module__ == "builtins" \
            or any("__slots__" in vars(k) for k in cls.__mro__[:-1]) or \
            cls.__mro__[1:] != (object,):
        return None
    try:
        fn = syntax.parse(textwrap.dedent(inspect.getsource(init))).body[0]
    except (OSError, TypeError, SyntaxError):
        return None
    args = fn.args
    if not isinstance(fn, ast.FunctionDef) or fn.decorator_list or args.vararg or \
            args.kwarg or args.posonlyargs or not args.args:
        return None
    me, names = args.args[0].arg, [a.arg for a in args.args[1:] + args.kwonlyargs]
    stored: dict[str, str] = {}  # parameter -> attribute
    for st in fn.body:
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant):
            continue  # (a docstring)
        target = st.targets[0] if isinstance(st, ast.Assign) and len(st.targets) == 1 \
            else None
        if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                and target.value.id == me and isinstance(st.value, ast.Name)
                and st.value.id in names and st.value.id not in stored
                and target.attr not in stored.values()):
            return None
        stored[st.value.id] = target.attr
    if sorted(stored) != sorted(names) or any(hasattr(type(inspect.getattr_static(
            cls, a, None)), "__set__") for a in stored.values()):
        return None  # (`self.w = w` of a property: its setter runs, built_objects.py)
    made = Built(cls, tuple(names), tuple(stored[n] for n in names), False)
    made.plain = True  # (a callee it is passed to gets the object: _rebuilding)
    return made


def _record(cls: type) -> Built | str | None:
    """An unregistered class of yours whose constructor computes (a dataclass too):
    the record of its fields (``frontend/built_objects.py``)."""
    from ..frontend.built_objects import RecordInit, record_init

    made = record_init(cls)
    if not isinstance(made, RecordInit):
        return made
    out = Built(cls, made.params, made.keys, False, init=made.fn)
    out.record = out.plain = True  # (a callee it is passed to gets the object)
    out.factories = made.factories
    return out


def computed_init(cls: type, names: list[str]) -> Built | str:
    """A registered class whose constructor computes on its arguments, built in the
    function as JAX builds it: the constructor's body runs (as a function s2s writes
    from its text: ``self.w = v`` sets the key "w" of the dict it returns), and the
    object given back is ``unflatten(aux, children)`` of those attributes, never a
    second ``__init__`` (JAX's rebuild).  A string says why not."""
    from ..frontend.synthesize import synthesize

    init = cls.__init__
    try:
        lines, first = inspect.getsourcelines(init)
    except (OSError, TypeError):
        return "its constructor computes on its arguments and has no source to read"
    tree = syntax.parse(textwrap.dedent("".join(lines)))
    fn = tree.body[0]
    if not isinstance(fn, ast.FunctionDef) or not fn.args.args:
        return "its constructor computes on its arguments and is not a plain `def`"
    me = fn.args.args[0].arg
    why = _unreadable_init(fn, me)
    if why:
        return f"its constructor computes on its arguments and {why}"
    keys = [t.attr for st in ast.walk(fn) if isinstance(st, (ast.Assign, ast.AnnAssign))
            for t in (st.targets if isinstance(st, ast.Assign) else [st.target])
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
            and t.value.id == me]
    fn.args.args = fn.args.args[1:]
    fn.decorator_list, fn.returns = [], None
    fn.name = f"{cls.__name__}_init"
    fn.body = ([syntax.parse(f"{me} = {{}}").body[0]] + [_SelfItems(me).visit(st)
                                                      for st in fn.body]
               + [syntax.parse(f"return {me}").body[0]])
    text = ast.unparse(ast.fix_missing_locations(fn)) + "\n"
    made = synthesize(text, fn.name, init.__globals__, "init")
    made.__defaults__ = init.__defaults__
    made.__kwdefaults__ = init.__kwdefaults__
    return Built(cls, tuple(names), tuple(dict.fromkeys(keys)), False, init=made)


def _unreadable_init(fn: Any, me: str) -> str:
    """Why s2s cannot write the constructor's body as a function ("" where it can)."""
    for node in ast.walk(fn):
        if isinstance(node, ast.Return) and node.value is not None:
            return "returns a value"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and (
                isinstance(node.func.value, ast.Name) and node.func.value.id == me
                or isinstance(node.func.value, ast.Call)):  # self.m(), super().m()
            return "calls a method (of the object, or super()'s)"
    return ""


class _SelfItems:
    """``self.w`` (read or set) as ``self["w"]``: the constructor's object is the dict
    of its attributes."""

    def __init__(self, me: str) -> None:
        self.me = me

    def visit(self, node: Any) -> Any:
        class Rewrite(ast.NodeTransformer):
            def visit_Attribute(inner, node: ast.Attribute) -> Any:  # noqa: N805
                inner.generic_visit(node)
                if isinstance(node.value, ast.Name) and node.value.id == self.me:
                    return ast.copy_location(ast.Subscript(
                        value=node.value, slice=ast.Constant(node.attr), ctx=node.ctx), node)
                return node

        return Rewrite().visit(node)


def _plain_result(value: Any) -> Any:
    value = _records_plain(value)
    return trees.plain(value) if trees.has_nodes(value, False) else value


def _records_plain(value: Any) -> Any:
    """Objects of your classes the code built (records), as the dicts of their
    fields, in tuples, lists and dicts too."""
    if isinstance(value, (tuple, list)) and not hasattr(value, "_fields"):
        return type(value)(_records_plain(v) for v in value)
    if isinstance(value, dict):
        return {k: _records_plain(v) for k, v in value.items()}
    cls = type(value)
    cls = cls.__dict__.get("__s2s_numpy_original__", cls)  # (translated for JAX)
    if cls.__module__.split(".")[0] in ("builtins", "numpy") or cls in NODES or \
            not hasattr(value, "__dict__") or isinstance(value, type):
        return value
    if cls not in _RECORD_CLASSES:
        made = built(cls)
        _RECORD_CLASSES[cls] = isinstance(made, Built) and (made.record or made.plain)
    if _RECORD_CLASSES[cls]:
        return {k: _records_plain(v) for k, v in vars(value).items()}
    return value


_RECORD_CLASSES: "weakref.WeakKeyDictionary[type, bool]" = weakref.WeakKeyDictionary()


class Plained:
    """A user function that returns objects it built, as emitted code calls it: its
    result as the dicts of their fields (a transform of the emitted code reads the
    function itself: ``__s2s_unwrap__``)."""

    def __init__(self, fn: Any) -> None:
        self.__s2s_unwrap__ = fn
        self.__name__ = getattr(fn, "__name__", "fn")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _plain_result(self.__s2s_unwrap__(*args, **kwargs))

    def __repr__(self) -> str:
        return f"<{self.__name__}, its built objects as dicts>"


_PLAINED: "weakref.WeakKeyDictionary[Any, Plained]" = weakref.WeakKeyDictionary()


class Rebuilding:
    """A user function the emitted code passes NamedTuples the function built (held
    as the dicts of their fields): called with the objects made again, so it reads
    them as Python does (``p[0]``, ``a, b = p``, ``p.w``); its result as plain
    containers.  A transform of the emitted code reads the function itself."""

    def __init__(self, fn: Any, made: dict[int, Built]) -> None:
        self.fn, self.made = fn, made
        self.__s2s_unwrap__ = getattr(fn, "__s2s_unwrap__", fn)
        self.__s2s_rebuilt__ = made  # (the frontend reading emitted code learns them)
        self.__name__ = getattr(fn, "__name__", "fn")

    def __call__(self, *args: Any) -> Any:
        args = tuple(self.made[i].make(a) if i in self.made and isinstance(a, dict) else a
                     for i, a in enumerate(args))
        return _plain_result(self.fn(*args))

    def __repr__(self) -> str:
        return f"<{self.__name__}, given the objects its caller built>"


def plained(fn: Any, callee: Any) -> Plained | None:
    if not isinstance(callee, Function) or template(callee) is None and not (
            _appends_built(callee)):
        return None
    try:
        if fn not in _PLAINED:
            _PLAINED[fn] = Plained(fn)
        return _PLAINED[fn]
    except TypeError:  # (takes no weak reference)
        return Plained(fn)


class BuiltOutputs:
    """Where a transformed function's result holds objects it built (``template``),
    worked out once per IR; transforms mix it in."""

    ir: Function
    _built: tuple[Any, Any] | None = None

    def built_template(self) -> Any:
        ir = self.ir
        if self._built is None or self._built[0] is not ir:
            self._built = (ir, template(ir))
        return self._built[1]


def install_frontend_hooks() -> None:
    """Give the frontend its hooks into this module (it does not import the api);
    api/pipeline.lower calls this as it loads the frontend, which ``import s2s`` does
    not (libcst is the largest import s2s has)."""
    from ..frontend import expressions

    expressions.BUILT = expressions.objects.BUILT = built
    expressions.PLAINED = plained
    expressions.REBUILT = Rebuilding


ranks.PLAIN = _plain_result  # (vmap's probe runs user callees as they are)


# ---- the returned value's types ----------------------------------------------------


def _appends_built(ir: Function) -> bool:
    """Does the function append objects it built to a list (``[Layer(w) for w in
    ws]``, a loop's ``.append(Layer(w))``)?  Python's run of it holds them as objects
    where emitted code reads the dicts of their fields (a TypeError: "'Layer' object
    is not subscriptable"), so emitted code calls it through ``Plained``."""
    lets = {s.target: s for s in walk(ir.body) if isinstance(s, Let)}

    def built_here(atom: Any) -> bool:
        for _ in range(8):
            s = lets.get(atom.name) if isinstance(atom, Var) else None
            if s is None or s.prim != "identity":
                break
            atom = s.args[0]
        return s is not None and (s.prim == "make_dict" and s.params.get("built") is not None
                                  or s.prim == "call" and isinstance(s.params.get(
                                      "callee"), Function) and template(
                                      s.params["callee"]) is not None)

    return any(s.prim == "append" and len(s.args) == 2 and built_here(s.args[1])
               for s in lets.values())


def template(ir: Function) -> Any:
    """Where the function's returned value holds objects it built: ``("dict", built,
    {key: sub})``, ``("seq", [sub, ...])``, or None (nothing to rebuild)."""
    return _returned(ir, 0)


def _returned(fn: Function, depth: int) -> Any:
    if depth > 8:  # (a recursive function: rebuild no further)
        return None
    lets: dict[str, list[Let]] = {}
    for s in walk(fn.body):
        if isinstance(s, Let):
            lets.setdefault(s.target, []).append(s)
    ret = next((s for s in reversed(fn.body) if isinstance(s, Return)), None)
    if ret is None:
        return None

    def of(atom: Any, seen: frozenset) -> Any:
        if not isinstance(atom, Var) or atom.name in seen:
            return None
        seen = seen | {atom.name}
        for s in lets.get(atom.name, []):
            found = _of_let(s, lambda a: of(a, seen), depth)
            if found is not None:
                return found
        return None

    return of(ret.value, frozenset())


def _of_let(s: Let, of: Any, depth: int) -> Any:
    if s.prim == "make_dict" and "keys" in s.params:
        subs = {k: of(a) for k, a in zip(s.params["keys"], s.args)}
        made = s.params.get("built")
        if made is not None or any(v is not None for v in subs.values()):
            return ("dict", made, subs)
    elif s.prim in ("make_tuple", "make_list"):
        items = [of(a) for a in s.args]
        if any(v is not None for v in items):
            return ("seq", items)
    elif s.prim == "identity":
        return of(s.args[0])
    elif s.prim == "call" and isinstance(s.params.get("callee"), Function):
        return _returned(s.params["callee"], depth + 1)
    return None


def rebuild(t: Any, value: Any) -> Any:
    """``value`` (a plain output) with the objects ``t`` names made again."""
    if t is None:
        return value
    if t[0] == "seq":
        if not isinstance(value, (tuple, list)) or len(value) != len(t[1]):
            return value
        return type(value)(rebuild(s, v) for s, v in zip(t[1], value))
    _, made, subs = t
    if not isinstance(value, dict):
        return value
    fields = {k: rebuild(subs.get(k), v) for k, v in value.items()}
    if made is None or set(fields) != set(made.keys):
        return fields
    return made.make(fields)


def rebuild_aux(t: Any, result: Any, mode: str) -> Any:
    """grad's ``(grads, aux)`` and value_and_grad's ``((value, aux), grads)`` with
    the aux output's objects made again (``t``: the template of ``(value, aux)``)."""
    if t is None or t[0] != "seq" or len(t[1]) != 2 or t[1][1] is None:
        return result
    if mode == "grad":
        return result[0], rebuild(t[1][1], result[1])
    (value, aux), grads = result
    return (value, rebuild(t[1][1], aux)), grads


def returned_arguments(ir: Function, depth: int = 0) -> Any:
    """Where the function returns its own parameters (``return p``, ``return p, y``):
    ``("arg", i)`` for the ``i``-th parameter, ``("seq", [sub, ...])`` for a tuple or
    list holding some; None where it returns none.  (A pytree argument is its plain
    dict inside the emitted code, so vmap's batched output has lost its type.)"""
    ret = next((s for s in reversed(ir.body) if isinstance(s, Return)), None)
    if ret is None or depth > 8:  # (a recursive function: no further)
        return None
    lets = {s.target: s for s in walk(ir.body) if isinstance(s, Let)}

    def of(atom: Any, depth: int) -> Any:
        if not isinstance(atom, Var) or depth > 32:
            return None
        if atom.name in ir.params and atom.name not in lets:
            return ("arg", ir.params.index(atom.name))
        s = lets.get(atom.name)
        if s is None:
            return None
        if s.prim == "identity":
            return of(s.args[0], depth + 1)
        if s.prim in ("make_tuple", "make_list"):
            items = [of(a, depth + 1) for a in s.args]
            return ("seq", items) if any(v is not None for v in items) else None
        callee = s.params.get("callee") if s.prim == "call" else None
        if isinstance(callee, Function) and len(callee.params) == len(s.args):
            inner = returned_arguments(callee, depth + 1)  # (`q = helper(p)`)
            return through(inner, s.args, depth)
        return None

    def through(t: Any, atoms: tuple, depth: int) -> Any:
        if t is None:
            return None
        if t[0] == "arg":
            return of(atoms[t[1]], depth + 1)
        items = [through(sub, atoms, depth) for sub in t[1]]
        return ("seq", items) if any(v is not None for v in items) else None

    return of(ret.value, 0)


def in_argument_kinds(t: Any, value: Any, args: tuple) -> Any:
    """``value`` (vmap's batched output) with each returned argument of a pytree class
    (a NamedTuple, a registered object) made an object of that class again, as JAX's
    vmap returns it (``t``: ``returned_arguments``)."""
    if t is None:
        return value
    if t[0] == "arg":
        like = args[t[1]] if t[1] < len(args) else None
        if isinstance(value, dict) and trees.has_nodes(like, False):
            return trees.unplain(like, value)
        return value
    if not isinstance(value, (tuple, list)) or len(value) != len(t[1]):
        return value
    return type(value)(in_argument_kinds(s, v, args) for s, v in zip(t[1], value))


__all__ = ["Built", "BuiltOutputs", "built", "template", "rebuild", "rebuild_aux",
           "returned_arguments", "in_argument_kinds"]
