"""A method's ``self``: an object's attributes and methods read in its body.

Two ways a method's body runs under a transform:

* the object is **called inside** the transformed function (``net(x)`` for a module
  object ``net``, ``self.other(x)`` in a method of ``net``): the method is normalized
  bound to the object, and ``self`` is the object itself, a constant that emitted code
  spells by a name of its own (``net_self``) and reads at each call, as it reads a
  module object's attributes (``cfg.lr``): ``self.w`` is ``net_self.w``, read when the
  code runs, and ``self.other`` is the object's own method (its class's, a subclass's
  override included);
* the object is **given to a transform** (``s2s.grad(net.loss)``, ``s2s.grad(net)``):
  ``self`` is an argument, the dict of its data attributes (``api/methods.py``), and
  ``self.other(x)`` calls ``Class.other(self, x)`` for the class that defines the
  method being transformed.  Which function that is for the object given is checked
  when the transform is called (``self_methods.check_self_methods``): a subclass
  overriding it is refused, located.
"""

from __future__ import annotations

import builtins
import copy
import inspect
import sys
import types
from typing import Any

import libcst as cst

from ..errors import TransformError
from ..ir.names import stem
from ..ir.nodes import Const, Index, Let, Var, walk
from .built_objects import (
    Items,
    field_key,
    returned_dict,
    returned_keys,
    returned_record,
    specialized,
)
from .fnvalues import FnValue
from .generators import is_generator, listed
from .object_fields import is_classmethod
from .resolve import is_library
from .self_methods import SELF_METHODS, defining_class, for_class
from .super_calls import is_super


def bind_instance(n: Any) -> None:
    """For a method bound to an object, ``self`` denotes the object; for a classmethod
    called on its class (``Quadratic.from_config(cfg)``), ``cls`` the class (``cls(a,
    c)`` constructs one)."""
    fn = n.fn
    if not (inspect.ismethod(fn) and (not isinstance(fn.__self__, type) or is_classmethod(
            fn))):
        return
    code = fn.__func__.__code__
    if not code.co_argcount:
        return
    first = code.co_varnames[0]
    obj = fn.__self__
    base = type(obj).__name__
    base = base.lower() if base.isidentifier() else "object"
    n.resolver.aliases[first] = (obj, _spelling(obj, f"{base}_{first}"))
    n.bound_object = first


def plained_text(n: Any, obj: Any, callee: Any, text: str, plain: Any) -> tuple[Any, str]:
    """``(wrapper, text)``: the wrapper emitted code calls a callee returning objects
    it built through (``plain``'s: their fields as dicts; None where it builds none),
    and the name it calls the callee by: for a classmethod (``Quadratic.from_config``)
    one of its own (``Quadratic_from_config``) bound to that wrapper."""
    plained = plain(obj, callee) if plain else None
    if plained is None or "." not in text or not is_classmethod(obj):
        return plained, text
    name = "_".join(text.split("."))
    n.resolver.namespace[name] = plained
    n.names.taken.add(name)
    return plained, name


_SPELLED: dict[int, tuple[Any, str]] = {}  # id(object) -> (it, its name in emitted code)


def _spelling(obj: Any, base: str) -> str:
    """One name per object, process-wide (emitted modules merge callees' names)."""
    hit = _SPELLED.get(id(obj))
    if hit is not None and hit[0] is obj:
        return hit[1]
    taken = {name for _, name in _SPELLED.values()}
    name, i = base, 2
    while name in taken:
        name, i = f"{base}_{i}", i + 1
    _SPELLED[id(obj)] = (obj, name)
    return name


def is_instance_self(n: Any, name: str) -> bool:
    """Is ``name`` the ``self`` of a method bound to an object (read as the object)?"""
    return name in n.resolver.aliases and name not in n.env


def self_method(n: Any, node: cst.Attribute) -> Any:
    """``self.other`` in a method whose ``self`` is the dict of the object's attributes
    (the object given to a transform): ``Class.other`` with ``self`` passed first, as
    a FnValue; None where it is not that."""
    base, name = (node, "__call__") if isinstance(node, cst.Name) else (
        node.value, node.attr.value)  # (`self(x)`: its __call__)
    if is_super(n, base):
        return super_method(n, node, name)
    if isinstance(base, cst.Attribute) and root_is_local(n, base):  # (`self.l1(x)`)
        inner = record_of_atom(n, n.exprs.expr(base))
        if inner is not None:
            return _method(n, inner, n.exprs.expr(base), name)
    if not (isinstance(base, cst.Name) and base.value in n.env):
        return None
    made = record_method(n, base.value, name, node)
    if made is not None:  # (a method of an object the function built: `m.energy(x)`)
        return made
    owner = defining_class(n.fn)
    code = getattr(n.fn, "__code__", None)
    if owner is None or code is None or not code.co_argcount or (
            base.value != code.co_varnames[0]):
        return None
    found = inspect.getattr_static(owner, name, None)
    if isinstance(found, (staticmethod, classmethod)):  # (`self.squash(v)`: the class's)
        return _class_level(n, owner, name, node)
    if not isinstance(found, types.FunctionType):
        return None
    where = node.attr if isinstance(node, cst.Attribute) else node  # (at `other`)
    used = for_class(found, owner)  # (`other` of a subclass's object: its own class's)
    SELF_METHODS.setdefault(n.fn, {})[name] = (found, n.loc(where), n.display, used)
    cls_text = owner.__name__
    spelled = n.fn.__globals__.get(cls_text) is owner
    if spelled:
        n.resolver.bind_namespace(cls_text, node)
    return FnValue(used, f"{cls_text}.{name}" if spelled else name.strip("_"),
                   head=(Var(n.env[base.value]),), spelled=spelled)


def _class_level(n: Any, owner: type, name: str, node: Any) -> Any:
    """``self.squash(v)`` of a staticmethod or classmethod: ``Owner.squash(v)``."""
    if isinstance(inspect.getattr_static(owner, name), classmethod):
        raise n.unsupported(
            node, f"`self.{name}(...)` calls a classmethod of the object: s2s lowers "
            "a method of an argument's class, or a staticmethod, not a classmethod "
            "(its `cls` a class value)",
            f"make `{name}` a @staticmethod, or a module-level function")
    text = owner.__name__
    if n.fn.__globals__.get(text) is not owner:
        return None
    n.resolver.bind_namespace(text, node)
    return n.funcs.of_object(getattr(owner, name), f"{text}.{name}", node)


def record_of(n: Any, name: str) -> Any:
    """The ``Built`` of the object a local name holds, where the function built it
    (``m = Model(x)``: a class of its own, not a NamedTuple), else None."""
    made = record_of_atom(n, Var(n.env[name]) if name in n.env else None)
    return made if made is not None else object_param(n, name)


def record_of_atom(n: Any, atom: Any) -> Any:
    """The ``Built`` of the object ``atom`` holds: one built here, returned by a call,
    a parameter given one, or a field of one (``self.l1`` of a ``Net`` whose
    constructor built a ``Layer``)."""
    for _ in range(8):  # (through `m2 = m`)
        let = n.lets.get(atom.name) if isinstance(atom, Var) else None
        if let is None:
            return object_param(n, atom.name) if isinstance(atom, Var) else None
        if let.prim == "identity":
            atom = let.args[0]
            continue
        made = let.params.get("built") if let.prim == "make_dict" else None
        if let.prim == "call":  # (a function or method returning an object it built)
            made = returned_record(let.params.get("callee"))
        key = field_key(let)
        if key is not None:  # (`n.l1`: a field holding an object)
            outer = record_of_atom(n, let.args[0])
            made = getattr(outer, "fields", {}).get(key) if outer is not None else None
        elif let.prim == "getitem":  # (`ls[i]`, `for l in ls`: a list of one class's)
            made = _item_record(n, let.args[0])
        if made is not None and (made.plain or made.record):
            return made
        break
    return None


def through_identity(n: Any, let: Any) -> Any:
    """The statement that made the value ``let`` (``a = s``) passes on."""
    for _ in range(8):
        if let is None or let.prim != "identity" or not isinstance(let.args[0], Var):
            break
        let = n.lets.get(let.args[0].name)
    return let


def _item_record(n: Any, seq: Any) -> Any:
    """The ``Built`` every item of a list or tuple shares (one class, the same
    fields): one the function built, or a field holding one (``self.layers``)."""
    let = n.lets.get(seq.name) if isinstance(seq, Var) else None
    if let is not None and field_key(let) is not None:
        outer = record_of_atom(n, let.args[0])
        found = getattr(outer, "fields", {}).get(field_key(let))
        return found.built if isinstance(found, Items) else None
    if let is None or let.prim not in ("make_list", "make_tuple") or not let.args:
        return None
    return _same_class([record_of_atom(n, a) for a in let.args])


def _same_class(items: list) -> Any:
    first = items[0] if items else None
    if first is None or any(m is None or m.cls is not first.cls or tuple(m.keys) != tuple(
            first.keys) or getattr(m, "fields", None) != getattr(first, "fields", None)
                            for m in items):
        return None
    return first


def with_nested(n: Any, made: Any, values: list) -> Any:
    """``made`` for a plain class's object whose constructor is given NamedTuples the
    function built (``Holder(P(w, b))``): a copy knowing those fields' classes (its
    methods' ``self.p._replace(...)``; the object made again holds a ``P``)."""
    if not made.plain:
        return made
    nested = {k: b for k, v in zip(made.keys, values) if (b := _built_named_tuple(n, v))}
    if not nested:
        return made
    made = copy.copy(made)
    made.fields = {**getattr(made, "fields", {}), **nested}
    return made


def _built_named_tuple(n: Any, atom: Any) -> Any:
    """The ``Built`` of a NamedTuple the function built that ``atom`` names, or None."""
    let = n.lets.get(atom.name) if isinstance(atom, Var) else None
    made = let.params.get("built") if let is not None and let.prim == "make_dict" else None
    return made if getattr(made, "positional", False) else None


def _built_in(lets: dict, atom: Any) -> Any:
    let = lets.get(atom.name) if isinstance(atom, Var) else None
    made = let.params.get("built") if let is not None and let.prim == "make_dict" else None
    return made if made is not None and (made.plain or made.record) else None


def _dotted(node: Any) -> bool:
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)


def root_is_local(n: Any, node: Any) -> bool:
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name) and node.value in n.env


def object_param(n: Any, name: str) -> Any:
    """The ``Built`` of a parameter the caller passes an object it built (a callee
    written for that class: ``records_methods``), else None."""
    return getattr(n.fn, OBJECT_PARAMS, {}).get(name)


def typed_param(n: Any, name: str) -> Any:
    """The ``Built`` of a parameter whose class this transform knows (a NamedTuple
    argument whose methods a callee it is passed to calls: ``bound_params.py``)."""
    cls = (getattr(n, "param_types", None) or {}).get(name)
    if cls is None or n.env.get(name) != name or BUILT is None:
        return None
    made = BUILT(cls)
    return made if hasattr(made, "make") else None


# ``BUILT(cls)``: the ``Built`` of a pytree class, or why there is none (installed by
# s2s/api/records.py, as ``expressions.BUILT``)
BUILT: Any = None

OBJECT_PARAMS = "__s2s_object_params__"  # a callee's parameter -> the object's Built


def record_method(n: Any, base: str, name: str, node: Any) -> FnValue | None:
    """``m.energy`` (``m(x)``: its ``__call__``) for an object ``m`` the function
    built: the class's function with the object's record passed as ``self``."""
    made = record_of(n, base)
    if made is None:
        return _named_tuple_method(n, base, name)
    if isinstance(inspect.getattr_static(made.cls, name, None), property):
        return None  # (`v = p.w` of a property: the value its getter returns)
    inner = getattr(made, "fields", {}).get(name)
    if inner is not None:  # (`n.l1(x)`: a field holding an object, called)
        index = Index((Const(name, repr(name)),), False, attribute=True)
        field = n.emit(n.exprs.target(None, name), "getitem", (Var(n.env[base]),),
                       {"index": index}, node)
        return _method(n, inner, field, "__call__")
    return _method(n, made, Var(n.env[base]), name)


def object_method(n: Any, made: Any, atom: Any, name: str) -> FnValue | None:
    """``type(obj).name`` for the object ``atom`` of the ``Built`` ``made``, as a
    function value given the object first (``object_protocols.py``); None where the
    class's attribute is not a function of yours."""
    return _method(n, made, atom, name)


def _method(n: Any, made: Any, atom: Any, name: str, found: Any = None) -> FnValue | None:
    cls = made.cls  # (`found`: a parent's function `super().name` denotes)
    found = found or inspect.getattr_static(cls, name, None)
    head: tuple = (atom,)
    if isinstance(found, property):  # (`m.norm`: its getter, called)
        found = found.fget
    if isinstance(found, staticmethod):
        found, head = found.__func__, ()
    if not isinstance(found, types.FunctionType):
        return None
    used = for_class(found, cls)
    if is_generator(used):  # (`s.steps(x)`, `for h in layers:`: the list of its items)
        used = listed(used)
    if head:  # (its `self`: this object's record, so `self.m(...)` is the class's)
        code = used.__code__
        used = for_objects(used, {code.co_varnames[0]: made}, (
            f"{cls.__name__}_{name.strip('_')}")) if code.co_argcount else used
    # (a name of its own, no dot: emitted code calls it given the object made again)
    base_name = f"{cls.__name__}_{name.strip('_')}"
    text, i = base_name, 2
    while n.resolver.namespace.get(text, used) is not used or (
            text in n.names.taken and text not in n.resolver.namespace):
        text, i = f"{base_name}_{i}", i + 1
    n.resolver.namespace[text] = used
    n.names.taken.add(text)
    return FnValue(used, text, head=head, spelled=True)


def _method_of_built(n: Any, call: cst.Call, attr: str, func: Any) -> FnValue | None:
    try:
        cls, _ = n.resolver.resolve_dotted(call.func)
    except TransformError:  # (`d.with_w(v)(x)`: the object a method returned, called)
        if not isinstance(call.func, cst.Attribute) or attr != "__call__":
            return None
        atom = n.exprs.expr(call)
        made = record_of_atom(n, atom)
        return None if made is None else _method(n, made, atom, attr)
    if not isinstance(cls, type) or is_library(cls) or (  # (functools.partial: Python's)
            cls.__module__ or "builtins").split(".")[0] in sys.stdlib_module_names:
        return None
    atom = n.exprs.expr(call)
    made = record_of_atom(n, atom)
    found = None if made is None else _method(n, made, atom, attr)
    if found is None:
        raise n.unsupported(func, f"`.{attr}(...)` of the `{cls.__name__}` "
                            "built here: s2s calls the methods (functions) of your own "
                            "classes' objects", f"bind the object first (`obj = "
                            f"{cls.__name__}(...)`) and read its fields")
    return found


_FOR_OBJECTS: dict[tuple, Any] = {}


def for_objects(fn: Any, objects: dict[str, Any], name: str | None = None) -> Any:
    """``fn`` (your function or method) as a function of its own whose parameters
    named in ``objects`` are given an object of that ``Built``'s class: its body's
    ``p.method(...)`` and ``p.<class attribute>`` resolve on that class.  One per
    function and classes (the IR cache is keyed by the function)."""
    if not isinstance(fn, types.FunctionType) or not objects:
        return fn
    known = getattr(fn, OBJECT_PARAMS, {})
    if all(k in known and known[k].cls is v.cls for k, v in objects.items()):
        return fn  # (written for these objects already)
    name = name or fn.__name__
    base = getattr(fn, "__s2s_objects_of__", fn)
    key = (base, name, tuple(sorted((k, v.cls, tuple(v.keys)) for k, v in objects.items())))
    hit = _FOR_OBJECTS.get(key)
    if hit is None:
        hit = types.FunctionType(base.__code__, base.__globals__, name,
                                 base.__defaults__, base.__closure__)
        hit.__kwdefaults__ = base.__kwdefaults__
        hit.__dict__.update(base.__dict__)
        hit.__qualname__, hit.__module__ = base.__qualname__, base.__module__
        setattr(hit, OBJECT_PARAMS, dict(objects))
        hit.__s2s_objects_of__ = base  # type: ignore[attr-defined]
        _FOR_OBJECTS[key] = hit
    return hit


def passing_objects(n: Any, fn: Any, args: list, kwargs: dict) -> Any:
    """``helper(m, x)`` passing an object the function built: ``helper`` written for
    its class (``for_objects``), so its body may call ``m``'s methods."""
    if not isinstance(fn, types.FunctionType) or is_library(fn):
        return fn
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs).arguments
    except TypeError:
        return fn
    found = {}
    hint = n.rebuilt_hint or {}  # (emitted code read again: the objects it passes)
    parts = fn.__qualname__.split(".")
    method = len(parts) > 1 and parts[-2] != "<locals>"  # (a class's: self_methods.py)
    for i, (name, value) in enumerate(bound.items()):
        let = n.lets.get(value.name) if isinstance(value, Var) else None
        made = let.params.get("built") if let is not None and let.prim == "make_dict" \
            else None
        if made is None and isinstance(value, Var):
            made = hint.get(i) if i < len(args) else None
            made = made or (object_param(n, value.name) if let is None else None)
            made = made or (typed_param(n, value.name) if let is None and not (
                method) else None)  # (a function given an argument of a known class)
        if made is None and let is not None and let.prim in ("call", "identity"):
            made = record_of_atom(n, value)  # (an object a method returned: `a - b`)
        if made is not None and hasattr(made, "make"):  # (a NamedTuple, a registered
            found[name] = made  # class's object too: its methods called there)
    return for_objects(fn, found)


def class_attribute(n: Any, node: cst.Attribute, atom: Any = None) -> Any:
    """``c.scale`` (``self.scale`` in its method) for an object the function built,
    where ``scale`` is its class's attribute, not one its constructor sets: the
    class's, spelled ``Const.scale`` and read at each call; None otherwise."""
    base, attr = node.value, node.attr.value
    made = record_of(n, base.value) if isinstance(base, cst.Name) else record_of_atom(n, atom)
    if made is None or attr in made.keys:
        return None
    cls = made.cls
    found = inspect.getattr_static(cls, attr, None)
    if isinstance(found, property) and isinstance(found.fget, types.FunctionType):
        fv = _method(n, made, atom, attr)  # (`m.norm`: its getter)
        return None if fv is None else n.funcs.call(fv, node, None, passed=([], {}))
    if found is None or callable(found) or isinstance(found, (staticmethod, classmethod)):
        return None
    if n.fn.__globals__.get(cls.__name__) is not cls:
        raise n.unsupported(node, f"`.{attr}` is an attribute of the class "
                            f"`{cls.__name__}`, which this module does not name",
                            f"read it as `{cls.__name__}.{attr}` where the class is "
                            "a global, or set it in `__init__`")
    n.resolver.bind_namespace(cls.__name__, node)
    return Const(getattr(cls, attr), f"{cls.__name__}.{attr}")


def object_call(n: Any, node: cst.Call, target: str | None) -> Any:
    """A call of an object's method: ``self.other(x)`` or ``self(x)`` in a method,
    ``net.loss(x)`` for a module object; None where the callee is not one."""
    if (cls := class_of_object(n, node.func)) is not None:  # `type(self)(v, self.b)`
        made = node.with_changes(func=cls)
        n.desugar.alias(made, node)
        return n.exprs.expr_Call(made, target)
    func, fv = node.func, None
    if isinstance(func, cst.Attribute):
        root = func
        while isinstance(root, cst.Attribute):
            root = root.value
        if not isinstance(root, cst.Name) or root.value in n.local_names:
            fv = n.funcs.value_of(func)  # (`self.other`: frontend/functions.py)
        else:
            try:
                obj, text = n.resolver.resolve_dotted(func)
            except TransformError:
                return None
            if isinstance(obj, types.MethodType) and not isinstance(obj.__self__, type) \
                    and isinstance(obj.__func__, types.FunctionType):
                fv = n.funcs.of_object(obj, text, func)
    elif isinstance(func, cst.Name) and func.value in n.env:
        fv = self_method(n, func)  # (`self(x)`: its __call__)
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Subscript) and (
            fv is None):  # `net.layers[1].apply(x)`: an item of a list of objects
        atom = n.exprs.expr(func.value)
        made = record_of_atom(n, atom)
        fv = _method(n, made, atom, func.attr.value) if made is not None else None
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Call) and (
            fv is None):  # `Model(x).energy(x)`: built, then its method
        fv = _method_of_built(n, func.value, func.attr.value, func)
    elif isinstance(func, cst.Call):  # `Net(x)(x)`: built, then called
        fv = _method_of_built(n, func, "__call__", func)
    return n.funcs.call(fv, node, target) if fv is not None else None


def computed_call(n: Any, made: Any, node: cst.Call, text: str, target: str | None,
                  given: tuple | None = None) -> Any:
    """``Scaled(w)`` whose constructor computes: a call of its body as a function
    (``records.computed_init``, or ``record_init`` for a class of yours) returning the
    dict of the attributes it sets, each read into the dict marked ``built`` (the
    caller gets the object made of them).  ``given``: the call's arguments, lowered."""
    init, passed = made.init, None
    if made.record:  # (its static arguments written in: `if bias:` decided)
        args, kwargs = given or n.calls.call_args(node)
        init, *passed = specialized(made, args, kwargs,
                                    lambda a: record_of_atom(n, a) is not None)
        for a in [*args, *kwargs.values()]:  # (`bias=USE_BIAS`: decided by its value
            spelled = getattr(a, "text", None) if isinstance(a, Const) else None
            if spelled and spelled != repr(a.value):  # now: generated again if it changes)
                n.comps.static.watch(spelled.split(".")[0].split("[")[0])
    name, i = made.init.__name__, 2
    while n.resolver.namespace.get(name, init) is not init or (
            name in n.names.taken and name not in n.resolver.namespace):
        name, i = f"{made.init.__name__}_{i}", i + 1
    n.resolver.namespace[name] = init
    n.names.taken.add(name)  # (no local may shadow it)
    if star_params(init) and given is None:  # (`*ws`, `**opts`: a call plan's)
        fields = n.funcs.call(FnValue(init, name, spelled=True), node, None)
    else:
        fields = n.user_call(init, name, node, None,
                             passed=tuple(passed) if passed else None)
    keys = returned_keys(n.lets[fields.name].params["callee"]) if made.record else None
    if keys is not None and keys != tuple(made.keys):  # (set on a static test)
        made = copy.copy(made)
        made.keys = keys
    nested = _nested_records(n, n.lets[fields.name]) if made.record else {}
    if nested:  # (fields holding objects its constructor built or was given)
        made = copy.copy(made)
        made.fields = nested
    values = [n.emit(n.exprs.target(None, str(key)), "getitem", (fields,),
                     {"index": Index((Const(key, repr(key)),), False)}, node)
              for key in made.keys]
    out = n.exprs.target(target, stem(text.split(".")[-1].lower()))
    return n.emit(out, "make_dict", tuple(values), {"keys": tuple(made.keys), "built": made},
                  node)


def refuse_held_functions(n: Any, made: Any, node: cst.Call, text: str) -> None:
    """Refused, located: an argument of the constructor that is a function, or a
    list or tuple display of functions (``Stack([np.tanh, lambda v: ...])``).  The
    object is the dict of its fields, which emitted code carries as values; a
    function is no value (before: "`np.tanh` is a ufunc, used here as a value").  A
    constructor with ``*args`` is planned, its functions bound as a callee's are."""
    if made.init is not None and star_params(made.init):
        return
    kinds = (cst.Name, cst.Attribute, cst.Lambda)
    for arg in node.args:
        value = arg.value
        items = [e.value for e in value.elements if not isinstance(
            e, cst.StarredElement)] if isinstance(value, (cst.List, cst.Tuple)) else [value]
        for item in items:
            if isinstance(item, kinds) and n.funcs.value_of(item) is not None:
                shown = cst.Module([]).code_for_node(item)
                raise n.unsupported(item, f"`{text}(...)` is given a function (`{shown}`) "
                                    "to hold: s2s holds an object of your class built in "
                                    "the function as the dict of its fields, values emitted "
                                    "code carries, and a function is none (a field of "
                                    "functions, called or iterated through the object, is "
                                    "not supported yet)", "keep the functions in a list in "
                                    "the function and loop over it (`layers = [np.tanh, "
                                    "...]`, `for layer in layers: h = layer(h)`), or pass "
                                    "them to the method that calls them")


def _nested_records(n: Any, call: Any) -> dict[str, Any]:
    """Field -> ``Built`` for the fields of a record holding objects: built in the
    constructor (``self.l1 = Layer(w)``) or given to it (``Net(layer, ...)``)."""
    callee = call.params.get("callee")
    ret = returned_dict(callee)
    if ret is None:
        return {}
    lets = {s.target: s for s in walk(callee.body) if isinstance(s, Let)}
    out = {}
    for key, atom in zip(ret.params["keys"], ret.args):
        for _ in range(8):
            let = lets.get(atom.name) if isinstance(atom, Var) else None
            if let is not None and let.prim == "identity":
                atom = let.args[0]
                continue
            break
        made = let.params.get("built") if let is not None and let.prim == "make_dict" \
            else None
        if let is not None and let.prim in ("make_list", "make_tuple") and let.args:
            made = _same_class([_built_in(lets, a) for a in let.args])
            made = Items(made) if made is not None else None
        elif let is not None and let.prim == "make_list":  # (grown: init_lists.py)
            made = _appended_items(callee, lets, atom)
        elif let is not None and let.prim == "call":  # (made by a factory, a helper)
            made = returned_record(let.params.get("callee"))
        if let is None and isinstance(atom, Var) and atom.name in callee.params:
            given = call.args[callee.params.index(atom.name)]
            made = record_of_atom(n, given) or _built_named_tuple(n, given)
        if made is not None and (getattr(made, "record", False) or made.plain or getattr(
                made, "positional", False)):  # (a NamedTuple: `self.p._replace(...)`)
            out[key] = made
    return out


def _appended_items(callee: Any, lets: dict, atom: Var) -> Any:
    """``Items`` of a list built empty and grown only by ``append`` (``for w in ws:
    self.layers.append(Layer(w))``) of objects of one class, else None."""
    names, items = {atom.name}, []
    for let in walk(callee.body):
        if not isinstance(let, Let) or not let.args or not isinstance(let.args[0], Var) or (
                let.args[0].name not in names):
            continue
        if let.prim == "append":
            names.add(let.target)
            items.append(let.args[1])
        elif let.prim in ("pop", "setitem", "extend", "insert", "delitem"):
            return None
    made = _same_class([_built_in(lets, a) for a in items]) if items else None
    return Items(made) if made is not None else None


def threaded_call(n: Any, result: Any, node: cst.Call, target: str | None) -> Any:
    """``self = Base_init(w, **self)`` in a constructor (``record_methods.py``): the
    record the method gives back, read field by field into a dict of its own (its
    keys known here, so the constructor writes into it after the call)."""
    let = n.lets.get(result.name) if isinstance(result, Var) else None
    keys = returned_keys(let.params.get("callee")) if let is not None and (
        let.prim == "call") else None
    if keys is None:
        raise n.unsupported(node, "s2s cannot tell which attributes this method sets "
                            "(the dict it returns is not one it builds)",
                            "set the attributes in `__init__` itself")
    values = [n.emit(n.exprs.target(None, str(key)), "getitem", (result,),
                     {"index": Index((Const(key, repr(key)),), False)}, node)
              for key in keys]
    out = n.exprs.target(target, "fields")
    return n.emit(out, "make_dict", tuple(values), {"keys": tuple(keys)}, node)


def star_params(fn: Any) -> bool:
    return any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.KEYWORD_ONLY)
               for p in inspect.signature(fn).parameters.values())


def _named_tuple_method(n: Any, base: str, name: str) -> FnValue | None:
    """``p.apply(x)`` for a NamedTuple (or an object of a registered pytree class)
    ``p`` the function built: its class's function, given the object (made again
    from its fields where emitted code calls it)."""
    let = n.lets.get(n.env.get(base, ""))
    made = let.params.get("built") if let is not None and let.prim == "make_dict" \
        else None
    if made is None or getattr(made, "record", False) or getattr(made, "plain", False) \
            or name in made.keys:
        return None
    found = inspect.getattr_static(made.cls, name, None)
    if not isinstance(found, types.FunctionType) or is_library(found):
        return None
    return _method(n, made, Var(n.env[base]), name)


def super_method(n: Any, node: cst.Attribute, name: str) -> FnValue:
    """The function ``super().name`` denotes in the method ``n.fn``; refused, located,
    where it is not a method's (no ``self``, a class not at module level)."""
    code = getattr(n.fn, "__code__", None)
    parts = (code.co_qualname if code is not None else "").split(".")
    lexical = n.fn.__globals__.get(parts[0]) if len(parts) == 2 else None
    first = code.co_varnames[0] if code is not None and code.co_argcount else None
    if not isinstance(lexical, type) or first is None:
        raise n.unsupported(node, "`super()` outside a method of a module-level class",
                            "call the parent class's function: `Parent.name(self, ...)`")
    made = obj = None
    if is_instance_self(n, first):
        obj = n.resolver.aliases[first][0]
        cls = type(obj)
    elif first in n.env:
        made = record_of(n, first)
        cls = made.cls if made is not None else (defining_class(n.fn) or lexical)
    else:
        cls = lexical
    mro = cls.__mro__ if lexical in cls.__mro__ else lexical.__mro__
    owner = next((c for c in mro[mro.index(lexical) + 1:] if name in vars(c)), None)
    found = vars(owner).get(name) if owner is not None else None
    if not isinstance(found, types.FunctionType):
        raise n.unsupported(node, f"`super().{name}` is not a function of a parent class "
                            "s2s can call (a property, classmethod or a class of a library)",
                            f"call it as `{owner.__name__ if owner else 'Parent'}.{name}"
                            "(self, ...)`")
    if obj is not None:  # (a module object: the parent's function bound to it)
        text = f"{n.resolver.aliases[first][1]}_super_{name.strip('_')}"
        n.resolver.namespace[text] = types.MethodType(found, obj)
        n.names.taken.add(text)
        return FnValue(n.resolver.namespace[text], text, spelled=True)
    if made is not None:
        return _method(n, made, Var(n.env[first]), name, found=found)
    raise n.unsupported(node, "`super()` in a method given to a transform with its "
                        "object (`s2s.grad(obj.method)`: `self` the dict of its "
                        "attributes, which Python's `super()` cannot take)",
                        "transform a function that calls the object: "
                        "`s2s.grad(lambda x: obj.method(x))`")


def iterated_object(n: Any, iterable: Any) -> Any:
    """``for h in layers:`` (``for h in Layers(x):``) over an object of your class
    the function built: ``layers.__iter__()``, its ``__iter__`` method called (a
    generator method: the list of its items); refused, located, for a class without
    one (Python's TypeError: the object is not iterable; before, s2s walked its
    fields' names).  None for any other iterable."""
    if isinstance(iterable, cst.Name) and iterable.value in n.env:
        made = record_of(n, iterable.value)
        cls = None if made is None else made.cls
    elif isinstance(iterable, cst.Call) and _dotted(iterable.func):
        try:
            cls, _ = n.resolver.resolve_dotted(iterable.func)
        except TransformError:
            return None
        if not isinstance(cls, type) or is_library(cls) or (
                cls.__module__ or "builtins").split(".")[0] in sys.stdlib_module_names or (
                issubclass(cls, tuple)):
            return None
    else:
        return None
    if cls is None:
        return None
    if not isinstance(inspect.getattr_static(cls, "__iter__", None), types.FunctionType):
        raise n.unsupported(iterable, f"a `{cls.__name__}` object is not iterable "
                            "(Python's TypeError): its class defines no `__iter__`",
                            "walk one of its fields (`for v in obj.items:`), or give the "
                            "class an `__iter__` method")
    made = cst.Call(cst.Attribute(iterable, cst.Name("__iter__")))
    n.desugar.alias_tree(made, iterable)
    return made


ITERATING = (builtins.list, builtins.tuple, builtins.sum, builtins.max, builtins.min,
             builtins.sorted, builtins.enumerate, builtins.zip, builtins.any, builtins.all)


def iterated_args(n: Any, obj: Any, node: cst.Call) -> cst.Call:
    """``list(layers)``, ``max(layers)``, ``zip(layers, x)``... of an object the
    function built: its ``__iter__()`` passed instead (``iterated_object``)."""
    if obj not in ITERATING or not any(
            isinstance(a.value, (cst.Name, cst.Call)) for a in node.args):
        return node
    args = [a.with_changes(value=iterated_object(n, a.value)) if a.keyword is None and (
        not a.star) and iterated_object(n, a.value) is not None else a for a in node.args]
    if all(a is b for a, b in zip(args, node.args)):
        return node
    made = node.with_changes(args=args)
    n.desugar.alias_tree(made, node)
    return made


def class_of_object(n: Any, func: Any) -> Any:
    """``type(self)`` or ``self.__class__`` (called: ``type(self)(v, self.b)`` in a
    method returning a new object of its class) for a name holding an object of your
    class whose class this module names: that name (``Dense``), its position the
    expression's; else None."""
    if isinstance(func, cst.Call) and isinstance(func.func, cst.Name) and (
            func.func.value == "type") and len(func.args) == 1 and not (
            func.args[0].keyword or func.args[0].star):
        base = func.args[0].value
    elif isinstance(func, cst.Attribute) and func.attr.value == "__class__":
        base = func.value
    else:
        return None
    if not isinstance(base, cst.Name) or base.value not in n.env or (
            "type" in n.local_names and isinstance(func, cst.Call)):
        return None
    made = record_of(n, base.value)
    cls = getattr(made, "cls", None)
    if not isinstance(cls, type) or n.fn.__globals__.get(cls.__name__) is not cls:
        return None
    named = cst.Name(cls.__name__)
    n.desugar.alias(named, func)
    return named
