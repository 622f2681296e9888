"""Functions as values, and the calls whose arguments are not all named arrays.

A function value never becomes an IR value: s2s knows, when it transforms the code,
which function each name or expression denotes (``FnValue``) and lowers each call of
it as a call of that function.  The values a function value carries (a partial's
bound arguments, the forward values a nested ``def`` or ``lambda`` closes over, the
test of ``f if c else g``) are ordinary atoms, passed to the call as arguments.

* a nested ``def``/``lambda`` is *lifted*: s2s writes a module-level ``def`` with the
  same body whose extra parameters are the names it reads from the enclosing function
  (``frontend/synthesize.py``), and calls it with their values at the call, as Python
  reads a closure's variables when it runs;
* a callee given a function value (``apply(np.tanh, x)``), keyword-only parameters,
  ``*args``/``**kwargs``, or defaults that are not literals is normalized for this
  call's *plan*: its IR takes one positional parameter per value (``xs_0, xs_1`` for
  ``*xs``, a function value's atoms), and the emitted forward code calls an adapter
  that puts the values back into the call's form.
"""

from __future__ import annotations

import functools
import inspect
import re
import types
from dataclasses import replace
from typing import Any

import libcst as cst

from ..errors import TransformError, UnsupportedCallError
from ..ir.names import readable, stem
from ..ir.nodes import Atom, Const, If, Let, Var
from ..primitives import lookup_object
from ..primitives.custom import custom_jvp, custom_vjp
from ..primitives.registry import lookup_form
from .defaults import snapshot_defaults
from .expressions import MAX_NAME, per_call
from .factories import made_function, without_given_defaults
from .fncontainers import containers
from .fnlists import enter_functions, pass_sequence
from .fnvalues import FnSeq, FnValue, Plan, Unbound, _adapter
from .generator_reads import check_consumed
from .generators import consumed, function_value
from .held_items import FnItems
from .inner_transforms import padding, transform_value
from .kept_vmap import KeptVmap
from .loop_functions import LoopFunctions, names_read, nested_locals
from .math_calls import applier
from .named_attrs import named_attribute
from .nested_types import typed
from .object_fields import method_value, plain_callee
from .objects import is_instance_self, passing_objects, self_method
from .passed_structure import passing_structure
from .recursive import given_functions, passing_captured
from .resolve import FreeVar, is_library, is_literal, transform_kind, unwrap_forwarding
from .source import literal_value
from .star_items import spread_items, star_count, star_items
from .static import watched_fields
from .synthesize import BOUND, synthesize
from .typetests import type_tested

# s2s's own transforms, which a function may apply to another inside its body
TRANSFORMS = frozenset({"grad", "value_and_grad", "jacfwd", "jacrev", "hessian"})


class FunctionLowerer:
    """Function values of one function, and the calls that need a plan."""

    def __init__(self, n: Any) -> None:
        self.n = n  # the Normalizer
        self.values: dict[str, FnValue] = {}  # user name -> the function it denotes
        self.prefix: list[Any] = []  # statements a plan puts before the body
        self.loops = LoopFunctions(n)  # functions bound in loop bodies

    # ---- which function an expression denotes -----------------------------------

    def names_function(self, name: str) -> bool:
        """Is ``name`` a function here (or one a loop may not have bound)?"""
        return name in self.values or name in self.loops.unbound

    def _named(self, node: Any) -> FnValue | None:
        """The function a module-level name (``relu``, ``np.tanh``) denotes, if any."""
        try:
            obj, text = self.n.resolver.resolve_dotted(node)
        except TransformError:
            return None
        return self.of_object(obj, text, node)

    def value_of(self, node: Any) -> FnValue | None:
        """The function ``node`` denotes (``layers[0]`` too), or None for a value."""
        if isinstance(node, cst.Name):
            if node.value in self.values:
                self.loops.read(node.value)
                # (after a loop that may have run no iteration: its flag checked)
                self.loops.check(node.value, self.values[node.value], node)
                return self.values[node.value]
            self.loops.refuse_after(node)
            return None if node.value in self.n.local_names else self._named(node)
        if isinstance(node, cst.Attribute):
            root = node
            while isinstance(root, cst.Attribute):
                root = root.value
            if isinstance(root, cst.Name) and is_instance_self(self.n, root.value):
                return self._named(node)  # (`self.other` of an object: its method)
            if not isinstance(root, cst.Name) or root.value in self.n.local_names:
                return self_method(self.n, node)  # (`self.other` of a method's dict)
            return self._named(node)
        if isinstance(node, cst.Lambda):
            return self.lift(node)
        if isinstance(node, cst.IfExp):
            return self._choice(node)
        if isinstance(node, cst.Call):
            return named_attribute(self, node) or self._made_by_call(node)
        return containers(self.n).item(node) if isinstance(node, cst.Subscript) else None

    def of_object(self, obj: Any, text: str, node: Any) -> FnValue | None:
        if isinstance(obj, type):
            return None  # (a dtype, a class)
        if isinstance(obj, functools.partial):
            inner = self.of_object(obj.func, f"{text}.func", node)
            if inner is None:
                return None
            root = text.split(".")[0]
            self.n.resolver.bind_namespace(root, node)
            head = tuple(self._constant(v, f"{text}.args[{i}]", node)
                         for i, v in enumerate(obj.args))
            keywords = tuple((k, self._constant(v, f"{text}.keywords[{k!r}]", node))
                             for k, v in obj.keywords.items())
            return replace(inner, head=inner.head + head, keywords=inner.keywords + keywords,
                           spelled=False)
        if transform_kind(obj) is not None or isinstance(obj, (
                custom_jvp, custom_vjp, KeptVmap)) or lookup_object(obj) is not None:
            return FnValue(obj, text, spelled=True)
        if isinstance(obj, types.FunctionType) and not is_library(obj):
            return function_value(obj, text)
        if method_value(obj):  # (an object's method: `net.loss`; `Quadratic.from_config`)
            return function_value(obj, text)
        call = getattr(type(obj), "__call__", None)
        if isinstance(call, types.FunctionType) and not isinstance(obj, type) and not (
                is_library(obj)):
            return FnValue(types.MethodType(call, obj), text, spelled=True)
        if isinstance(obj, functools._lru_cache_wrapper) and isinstance(  # (a cache only
                obj.__wrapped__, types.FunctionType):  # returns what the function does)
            return self.of_object(obj.__wrapped__, text, node)
        return None

    def _constant(self, value: Any, text: str, node: Any) -> Any:
        fn = self.of_object(value, text, node) if callable(value) else None
        if fn is not None:
            return fn
        return Const(value, repr(value) if is_literal(value) else text)

    def _choice(self, node: cst.IfExp) -> FnValue | None:
        a, b = self.value_of(node.body), self.value_of(node.orelse)
        if a is None or b is None:
            return None
        test = self.n.exprs.expr(node.test)
        if isinstance(test, Const):  # decided when s2s transforms the function
            return a if test.value else b
        return FnValue(None, "choice", choice=(test, a, b))

    def _made_by_call(self, node: cst.Call) -> FnValue | None:
        """``functools.partial(f, ...)`` or ``s2s.grad(f, ...)`` written in the body."""
        func = node.func
        if not isinstance(func, (cst.Name, cst.Attribute)):
            return None
        if isinstance(func, cst.Name) and func.value in self.values:  # (a factory of
            return made_function(self, self.value_of(func), node)  # the body's)
        root = func
        while isinstance(root, cst.Attribute):
            root = root.value
        if not isinstance(root, cst.Name) or root.value in self.n.local_names:
            return None
        try:
            obj, text = self.n.resolver.resolve_dotted(func)
        except TransformError:
            return None
        if obj is functools.partial:
            if not node.args or node.args[0].keyword is not None:
                raise self.n.unsupported(node, "functools.partial takes the function first",
                                         "write functools.partial(f, ...)")
            inner = self.value_of(node.args[0].value)
            if inner is None:
                raise self.n.unsupported(node.args[0], "this is not a function s2s knows",
                                         "pass a function defined in a file")
            args, kwargs = self.args_of(node.args[1:])
            return replace(inner, head=inner.head + tuple(args),  # (`helper(x, 0.5)`)
                           keywords=inner.keywords + tuple(kwargs.items()))
        if (getattr(obj, "__module__", None) or "").startswith("s2s.api") and getattr(
                obj, "__name__", "") in TRANSFORMS:
            return transform_value(self, obj, text, node)
        if (getattr(obj, "__module__", None) or "").startswith("s2s.api") and getattr(
                obj, "__name__", "") in ("jit", "vmap"):
            return _jit_or_vmap(self, obj.__name__, text, node)
        return made_function(self, FnValue(obj, text), node)  # (`make_loss(2.0)`)

    # ---- nested functions -------------------------------------------------------

    def define(self, node: cst.FunctionDef) -> None:
        """``def g(...)`` in the body: ``g`` denotes its lifted function from here."""
        if node.decorators or node.asynchronous is not None:
            raise self.n.unsupported(node, "a nested `def` with decorators (or `async`) is "
                                     "not supported", "define it at module level")
        self.bind(node.name.value, consumed(self.lift(node)), node)  # (a generator: listed)

    def bind(self, name: str, fv: FnValue, node: Any) -> None:
        self.loops.binding(name, node)  # (in a loop: frontend/loop_functions.py)
        self.n.env.pop(name, None)
        self.values[name] = fv

    def lift(self, node: cst.FunctionDef | cst.Lambda) -> FnValue:
        """A module-level ``def`` for a nested function or lambda, taking the names it
        reads from the enclosing function as extra (trailing) parameters."""
        n = self.n
        if id(node) in self.loops.lifted:  # (lifted before its loop: loop_functions.py)
            return self.loops.lifted[id(node)]
        node = snapshot_defaults(node, n)  # (`lambda t, k=a: ...`: `a` read here)
        params = node.params
        own = {p.name.value for p in (*params.posonly_params, *params.params,
                                       *params.kwonly_params)}
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                own.add(star.name.value)
        outer = n.local_names | set(n.resolver.closure) | set(self.values)
        own |= nested_locals(node, n)  # (`f = ...` in it is not the outer f)
        captured = [m for m in names_read(node) if m in outer and m not in own]
        recursive = isinstance(node, cst.FunctionDef) and node.name.value in captured
        if recursive:  # (it reads itself from a closure cell, as the nested def does)
            captured.remove(node.name.value)
            if captured:  # (its own calls pass what it read: `r(y, k - 1, a=a)`)
                node = passing_captured(located := node, captured)
        defaults = _literal_defaults(node, n)
        new = [cst.Param(cst.Name(m), default=cst.Name("None")) for m in captured]
        if isinstance(params.star_arg, cst.Param) or params.kwonly_params:
            params = params.with_changes(kwonly_params=[*params.kwonly_params, *new])
        else:
            params = params.with_changes(params=[*params.params, *new])
        loc = n.loc(located if recursive and captured else node)  # (the user's def)
        if isinstance(node, cst.Lambda):
            name = "lam"
            body = cst.IndentedBlock([cst.SimpleStatementLine([cst.Return(node.body)])])
            fdef = cst.FunctionDef(cst.Name(name), params, body)
            first = max(loc.line - 1, 1)
        else:
            name = node.name.value
            fdef = node.with_changes(params=params, leading_lines=[], decorators=[])
            first = loc.line
        text = cst.Module([fdef]).code
        # (columns: a lambda's body is written after `    return `, 11 columns in)
        shift = n.loc(node.body).col - 12 if isinstance(node, cst.Lambda) else loc.col - 1
        fn = synthesize(text, name, n.fn.__globals__, f"lifted-{name}", first,
                        (loc.file, n.p.lines, shift), recursive)
        fn.__qualname__ = f"{n.fn.__qualname__}.<locals>.{name}"
        by_keyword = bool(params.kwonly_params)  # (the captured names' style, above)
        fn.__defaults__ = tuple(defaults[0]) + (() if by_keyword else (None,) * len(new)) \
            or None
        fn.__kwdefaults__ = {**defaults[1], **({m: None for m in captured} if by_keyword
                                               else {})} or None
        # (read where the function is called or passed, as Python reads a closure's
        # variables when it runs: see ``resolved``)
        return FnValue(fn, name, captured=tuple((m, Unbound(m)) for m in captured))

    def resolved(self, fv: FnValue, node: Any) -> FnValue:
        """``fv`` with the captured names of functions this code lifted read now."""
        def one(value: Any) -> Any:
            if isinstance(value, Unbound):
                return self.read(value.name, node, value.fallback)
            return self.resolved(value, node) if isinstance(value, FnValue) else value

        if fv.choice is not None:
            return replace(fv, choice=tuple(one(v) for v in fv.choice))
        return replace(fv, head=tuple(one(v) for v in fv.head),
                       keywords=tuple((k, one(v)) for k, v in fv.keywords),
                       captured=tuple((k, one(v)) for k, v in fv.captured))

    def read(self, name: str, node: Any, fallback: Any = None) -> Any:
        """The value a captured name has here (``fallback``: its value where a loop
        that bound it has ended, as the last iteration left it)."""
        if name in self.values:
            return self.resolved(self.values[name], node)
        if fallback is not None and name not in self.n.env:
            return fallback
        if name in self.n.local_names and name not in self.n.env and name in self.n.bound:
            raise self.n.unsupported(
                node, f"a nested function reads `{name}`, which was bound only inside a "
                "loop or on one path of an `if` that has ended here (s2s keeps a loop's "
                "own names inside it)", f"call the function inside the loop (or branch), "
                f"or bind `{name}` before it too")
        if name in self.n.local_names and name not in self.n.env:
            raise self.n.unsupported(node, f"a nested function reads `{name}`, which is "
                                     "not assigned yet where it is called",
                                     f"assign `{name}` before the call")
        return self.n.exprs.expr(cst.Name(name))

    # ---- calls --------------------------------------------------------------------

    def args_of(self, args: Any, star: tuple[int, str] | None = None,
                ) -> tuple[list[Any], dict[str, Any]]:
        """A call's arguments as atoms or function values, ``*xs`` and ``**kw`` spread
        (``star``: the callee's item count and name for ``star_items``)."""
        out: list[Any] = []
        kwargs: dict[str, Any] = {}
        for arg in args:
            if pass_sequence(self.n, arg, out, kwargs):  # (`(np.sin, relu)`, `*fs`)
                continue
            if arg.star:
                items = _spread(self, arg, star)
                if isinstance(items, dict):
                    kwargs.update(items)
                else:
                    out += items
                continue
            value = self.value_of(arg.value) if _may_be_function(arg.value) else None
            atom = self.resolved(value, arg) if value is not None else self.n.exprs.expr(
                arg.value)
            if arg.keyword is not None:
                kwargs[arg.keyword.value] = atom
            else:
                out.append(atom)
        return out, kwargs

    def spread(self, arg: cst.Arg) -> Any:
        return _spread(self, arg)

    def call(self, fv: FnValue, node: Any, target: str | None,
             passed: tuple[list[Any], dict[str, Any]] | None = None) -> Atom:
        """A call of the function value ``fv`` (``passed``: its arguments, lowered)."""
        if isinstance(fv.obj, KeptVmap):  # `h = s2s.vmap(g)`, then `h(x)`
            return fv.obj.call(self, node, target, passed, self.resolved(fv, node))
        if passed is None:
            passed = self.args_of(node.args, star_count(fv, node))
        if fv.choice is not None:  # (each function's captured names read on its path)
            return _call_choice(self, fv, node, target, passed)
        fv = self.resolved(fv, node)
        args = [*fv.head, *passed[0]]
        kwargs = {**dict(fv.keywords), **passed[1]}
        kwargs = without_given_defaults(fv.obj, args, kwargs, passed[1])  # (factories)
        captured = dict(fv.captured)
        obj, text = unwrap_forwarding(fv.obj), fv.text  # (a decorator's forwarding wrapper)
        if callable(getattr(type(obj), "for_call", None)) and (
                not captured or getattr(obj, "takes_captured", False)):
            if kwargs:  # (a transform of a function with *args: the one for this call)
                raise self.n.unsupported(node, f"`{text}` takes positional arguments "
                                         "here", "pass the arguments by position")
            obj = obj.for_call(len(args))
        if transform_kind(obj) is not None:
            atoms = self._atoms([*args, *padding(obj, len(args), len(captured)),
                                 *captured.values()], text, node)
            if kwargs:
                raise self.n.unsupported(node, f"`{text}` takes positional arguments here",
                                         "pass the arguments by position")
            return self.n.inline_transform(obj, text, atoms, node, target)
        if isinstance(obj, (custom_jvp, custom_vjp)):
            return self.n.user_call(obj.fun, text, node, target, custom=obj,
                                    passed=(self._atoms(args, text, node), kwargs))
        form = lookup_form(obj)
        if form is not None:  # another primitive's call in other words
            return self.n.calls.form(form, self._atoms(args, text, node), {
                k: self._atoms([v], text, node)[0] for k, v in kwargs.items()},
                node, target, text)
        prim = lookup_object(obj)
        if prim is not None:
            atoms = self._atoms(args, text, node)
            return applier(self.n, obj)(prim.name, atoms, {k: self._atoms([v], text, node)[
                0] for k, v in kwargs.items()}, node, target, text)
        kwargs.update(captured)
        obj = passing_objects(self.n, obj, args, kwargs)  # (`helper(m, x)`, `m` built here)
        obj, text = passing_structure(self.n, obj, args, kwargs, text, node)  # (`pop(d, k)`)
        fn = getattr(obj, "__func__", obj)
        simple = fv.spelled and plain_callee(obj) and _plain(  # (a classmethod too)
            obj, args, kwargs) and not any(_frozen(self.n, v) for v in (*args, *kwargs.values()))
        if simple or fn in self.n.stack and not given_functions(self.n, fn, args, kwargs,
                                                                node):
            if fn in self.n.stack and text.isidentifier():  # (a recursive closure the
                self.n.resolver.namespace.setdefault(text, obj)  # callee cannot name)
            return self.n.user_call(obj, text, node, target,
                                    passed=(self._atoms(args, text, node), kwargs))
        return _planned_call(self, _carrying(fv, obj), args, kwargs, node, target)

    def _atoms(self, values: list[Any], text: str, node: Any, through: str = "") -> list[Atom]:
        if any(isinstance(v, (FnValue, FnSeq)) for v in values):
            raise _function_given(self.n, text, node, through)
        return [v.atom if isinstance(v, FnItems) else v for v in values]


    def enter(self, plan: Plan) -> list[str]:
        """Bind a planned callee's parameters (in its own Normalizer): IR parameters
        for atoms, function values, ``*args`` packed as a tuple, ``**kwargs`` as a dict."""
        n, params = self.n, []
        n.out = []
        for kind, name, detail in plan.entries:
            if kind in ("arg", "default", "frozen"):  # (frozen: a distribution, made again)
                params += _enter_frozen(n, name, detail) if kind == "frozen" else [name]
                n.env[name] = name
                n.bound.add(name)
            elif kind in ("fn", "fns", "fnstar", "items"):  # (fns: a tuple, fnlists.py)
                params += enter_functions(n, self.values, kind, name, detail)
            else:
                keys = [str(i) for i in range(detail)] if kind == "star" else list(detail)
                names = [n.names.fresh(f"{name}_{k}") for k in keys]
                params += names
                prim = "make_tuple" if kind == "star" else "make_dict"
                extra = {} if kind == "star" else {"keys": tuple(keys)}
                n.out.append(Let(name, prim, tuple(Var(m) for m in names), extra, n.loc(n.p.node)))
                n.lets[name] = n.out[-1]
                n.env[name] = name
                n.bound.add(name)
        _enter_roots(n, plan)
        self.prefix = list(n.out)
        plan.params = params
        return params

    # ---- map --------------------------------------------------------------------

    def map_call(self, node: cst.Call, target: str | None) -> Atom:
        """``map(f, xs)`` (in ``list(...)``/``tuple(...)`` too) over sequences whose
        length is known: a list of the calls."""
        if len(node.args) < 2 or any(a.keyword or a.star for a in node.args):
            raise self.n.unsupported(node, "map takes a function and sequences here",
                                     "write map(f, xs)")
        fv = self.value_of(node.args[0].value)
        if fv is None:
            raise self.n.unsupported(node.args[0], "this is not a function s2s knows",
                                     "pass a function defined in a file")
        generator = self.map_generator(node)
        if generator is not None:
            return self.n.comps.comprehension(generator, target)
        out = self.n.emit(self.n.exprs.target(target, "mapped"), "make_list",
                          tuple(self.map_items(node, fv)), {}, node)
        self.n.lists.add(out.name)
        return out

    def map_items(self, node: cst.Call, fv: Any) -> list[Atom]:
        """The calls ``map(f, xs, ...)`` makes, one per item (``sum(map(...))`` adds them)."""
        seqs = []
        for a in node.args[1:]:
            starred = cst.Arg(a.value, star="*")
            self.n.desugar.alias(starred, a)
            seqs.append(self.spread(starred))
        return [self.call(fv, node, None, (list(items), {})) for items in zip(*seqs)]

    def map_generator(self, node: cst.Call) -> cst.GeneratorExp | None:
        """``map(f, xs, ...)`` over a sequence known only when the function runs (an
        array, a list grown in a loop) as the generator ``(f(item) for item in xs)``
        (``zip`` over several), which lowers as a loop; None when every sequence is
        known when transforming (then it unrolls into the calls)."""
        seqs = [a.value for a in node.args[1:]]
        if all(self.n.comps.static.static_items(s) is not None for s in seqs):
            return None
        taken = set(names_read(cst.Lambda(cst.Parameters(), node))) | set(self.n.env)
        names = []
        for k in range(len(seqs)):
            name = "item" if len(seqs) == 1 else f"item{k}"
            while name in taken:
                name += "_"
            names.append(cst.Name(name))
        target: Any = names[0] if len(names) == 1 else cst.Tuple(
            [cst.Element(m) for m in names])
        over: Any = seqs[0] if len(seqs) == 1 else cst.Call(
            cst.Name("zip"), [cst.Arg(s) for s in seqs])
        call = cst.Call(node.args[0].value, [cst.Arg(m) for m in names])
        generator = cst.GeneratorExp(call, cst.CompFor(target, over))
        for new in (generator, generator.for_in, call, over, target, *names):
            self.n.desugar.alias(new, node)
        return generator


def _call_choice(self: FunctionLowerer, fv: FnValue, node: Any, target: str | None,
                 passed: tuple) -> Atom:
    """``(f if c else g)(x)``: an `if` on ``c`` calling one function per branch."""
    test, a, b = fv.choice
    name = target or self.n.names.fresh("out")
    outer, env = self.n.out, dict(self.n.env)
    branches = []
    for taken, branch in ((True, a), (False, b)):
        self.n.out = []
        # (on the test's path: a name only that branch of the `if` that bound the
        # function computed is bound here too, `if c: w = ...; act = lambda v: v * w`)
        self.n._enter_path(self.n._path(test, taken))
        atom = self.call(branch, node, name, passed)
        if not (isinstance(atom, Var) and atom.name == name):
            self.n.emit(name, "identity", (atom,), {}, node)
        self.n.paths.pop()
        self.n.env = dict(env)
        branches.append(self.n.out)
    self.n.out = outer
    self.n.out.append(If(test, branches[0], branches[1], self.n.loc(node), joins=[name]))
    return Var(name)


def _spread(self: FunctionLowerer, arg: cst.Arg, star: tuple[int, str] | None = None) -> Any:
    known = getattr(self.n, "spread_keys", {}).get(getattr(arg.value, "value", None))
    if arg.star == "**" and known is not None and self.n.env.get(arg.value.value) == known[0]:
        reads = {k: cst.Subscript(arg.value, [cst.SubscriptElement(cst.Index(
            cst.SimpleString(repr(k))))]) for k in known[1]}  # (a dict parameter whose
        for read in reads.values():  # keys the call knows: bound_params.py)
            self.n.desugar.alias_tree(read, arg)
        return {k: self.n.exprs.expr(read) for k, read in reads.items()}
    length = getattr(self.n, "spread_lengths", {}).get(getattr(arg.value, "value", None))
    if arg.star == "*" and length is not None and self.n.env.get(arg.value.value) == length[0]:
        return spread_items(self.n, arg, length[1])  # (a length this call gives)
    atom = self.n.exprs.expr(arg.value)
    if arg.star == "*" and isinstance(atom, Const) and isinstance(atom.value, (
            tuple, list)) and (atom.text.isidentifier() or _subscript_text(atom)):
        # a module or closure tuple (``f(x, *ARGS)``, ``*args[1:]``), numbers or arrays:
        # each item read from it at each call; its length and its items' kinds are
        # what the code assumes, and a change of either generates the code again
        self.n.comps.static.watch(atom.text.split("[")[0], static=False)
        return [Const(v, f"{atom.text}[{i}]") for i, v in enumerate(atom.value)]
    if arg.star == "**" and isinstance(atom, Const) and type(atom.value) is dict and all(
            isinstance(k, str) for k in atom.value) and atom.text.isidentifier():
        # (``f(x, **OPTS)`` over a module or closure dict: its keys decide the call)
        self.n.comps.static.watch(atom.text, static=False)
        return {k: Const(v, f"{atom.text}[{k!r}]") for k, v in atom.value.items()}
    if isinstance(atom, Const) and isinstance(atom.value, (tuple, list)) and all(
            is_literal(v) for v in atom.value) and arg.star == "*":
        return [Const(v, repr(v)) for v in atom.value]
    let = self.n.lets.get(atom.name) if isinstance(atom, Var) else None
    written = isinstance(atom, Var) and atom.name in self.n.buffer_root.values()
    if arg.star == "*" and let is not None and let.prim in ("make_tuple", "make_list") \
            and not written:
        return list(let.args)
    if arg.star == "**" and let is not None and let.prim == "make_dict" and \
            "keys" in let.params:
        return dict(zip(let.params["keys"], let.args))
    if arg.star == "*" and star is not None and isinstance(atom, Var):
        return star_items(self.n, arg, *star, atom)  # (a length known per call: checked)
    raise per_call(self.n.unsupported(
        arg, f"`{arg.star}` here spreads a value whose {'keys' if arg.star == '**' else 'length'} "
        "s2s does not know when it transforms the function (only a tuple, list or "
        "dict written in the function or named by a module or closure name, or a "
        "`*args`/`**kwargs` parameter)",
        "pass each argument explicitly"))


def _subscript_text(atom: Any) -> bool:
    """``ARGS[1:]``, ``args[0]``: a constant read from a name by subscripts."""
    if not (isinstance(atom, Const) and isinstance(atom.value, (tuple, list))):
        return False
    head, _, rest = atom.text.partition("[")
    return head.isidentifier() and rest.endswith("]") and "(" not in rest


def _carrying(fv: FnValue, obj: Any) -> FnValue:
    """``fv`` calling ``obj``, its function's copy carrying what its code needs."""
    return replace(fv, obj=obj) if obj is not fv.obj and hasattr(obj, BOUND) and not (
        fv.head) else fv


def _planned_call(self: FunctionLowerer, fv: FnValue, args: list[Any], kwargs: dict[str, Any],
                  node: Any, target: str | None) -> Atom:
    n = self.n
    obj = fv.obj
    check_consumed(n, node, fv)  # (a generator: its items read once)
    fn = getattr(obj, "__func__", obj)
    sig = inspect.signature(obj, follow_wrapped=False)  # (a wrapper: its own)
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as exc:
        raise TransformError(f"`{fv.text}` cannot be called with these arguments: {exc}",
                             n.loc(node), f"call it as {fv.text}{sig}", n.display) from None
    plan, atoms = Plan(), []
    for pname, p in sig.parameters.items():
        given = pname in bound.arguments
        value = bound.arguments.get(pname)
        if p.kind is p.VAR_POSITIONAL and value and all(isinstance(v, FnValue)
                                                        for v in value):
            plan.entries.append(("fnstar", pname, FnSeq(tuple(value))))
            _pass_roots(n, plan, plan.entries[-1][2], node)  # (`compose(x, np.sin, g)`)
            atoms += plan.entries[-1][2].leaves()
        elif p.kind is p.VAR_POSITIONAL:
            items = self._atoms(list(value or ()), fv.text, node, f"*{pname}")
            plan.entries.append(("star", pname, len(items)))
            atoms += items
        elif p.kind is p.VAR_KEYWORD:
            items = dict(value or {})
            plan.entries.append(("kw", pname, tuple(items)))
            atoms += self._atoms(list(items.values()), fv.text, node, f"**{pname}")
        elif not given and callable(p.default) and self.of_object(
                p.default, pname, node) is not None:
            template = self.of_object(p.default, f"{fv.text}.{pname}", node)
            plan.entries.append(("fn", pname, template))
            _pass_roots(n, plan, template, node)
        elif not given:
            plan.entries.append(("default", pname, typed(n, fn, pname, p.default)))
            atoms.append(_default(self, fn, pname, p.default, node))
        elif isinstance(value, FnItems):  # (`cfg` holding functions: held_items.py)
            plan.entries.append(("items", pname, value))
            for _, held in value.functions:
                _pass_roots(n, plan, held, node)
            atoms.append(value.atom)
        elif isinstance(value, FnSeq):  # (a tuple or list of functions: fnlists.py)
            plan.entries.append(("fns", pname, value))
            _pass_roots(n, plan, value, node)
            atoms += value.leaves()
        elif isinstance(value, FnValue):
            if isinstance(value.obj, KeptVmap) and not value.obj.portable() and not (
                    value.captured or value.keywords):  # (kept_fn: what it carries)
                raise n.unsupported(node, "a vmap kept as a value (`h = s2s.vmap(g)`) of "
                                    "a function that reads this function's values is "
                                    "passed to another function here",
                                    "pass `g`, and write `s2s.vmap(g)(x)` where it is called")
            plan.entries.append(("fn", pname, value))
            _pass_roots(n, plan, value, node)
            atoms += value.leaves()
        elif _frozen(n, value) is not None:
            frozen = _frozen(n, value).args
            plan.entries.append(("frozen", pname, (frozen[0].value, len(frozen) - 1)))
            atoms += frozen[1:]
        else:
            plan.entries.append(("arg", pname, typed(n, fn, pname, value)))
            atoms.append(value)
    callee = n.normalize_planned(obj, plan)
    if _called_as_written(n, fv, plan, node):  # `OBJ(x)`: the object, as the code reads it
        spelling = fv.text
        n.names.taken.add(spelling.split(".")[0])
    else:
        spelling, adapter = _adapter(obj, plan, _adapter_base(fv, obj))
        n.names.taken.add(spelling)
        n.resolver.namespace[spelling] = adapter
        # (a caller reading a global of that name refuses, naming it: emitted code
        # puts both in one module)
        n.resolver.depends_on(FreeVar(spelling, cell=types.CellType(adapter)), node)
    for var in callee.free.values():
        n.resolver.depends_on(var, node)
    for key, value in callee.namespace.items():
        n.resolver.namespace.setdefault(key, value)
    first = next((a for a in atoms if isinstance(a, Var)), None)
    base = readable(obj.__name__)
    base = f"{base}_{stem(n.named(first))}" if first is not None else base
    if len(base) > MAX_NAME:
        base = readable(obj.__name__)
    return n.emit(n.exprs.target(target, base), "call", tuple(atoms),
                  {"callee": callee, "spelling": spelling}, node)


def _function_given(n: Any, text: str, node: Any, through: str) -> TransformError:
    """A function passed where s2s passes none: to a library function, or through a
    ``*args``/``**kwargs`` parameter (``through``: ``compose(x, np.sin, np.exp)``)."""
    if through:
        return UnsupportedCallError(
            f"`{text}` is given a function through its `{through}` parameter here, "
            "beside values; s2s passes a `*args` of functions only (a tuple of "
            "functions in the callee), not functions inside `**kwargs` or mixed with "
            "values", n.loc(node), "name a parameter for the values, or for each "
            f"function (`def {text.split('.')[-1]}(x, f, g)`)", n.display)
    return UnsupportedCallError(
        f"`{text}` is given a function as an argument here; s2s passes functions only "
        "to your own Python functions", n.loc(node),
        "call the function first and pass its result", n.display)


def _adapter_base(fv: FnValue, obj: Any) -> str:
    """The adapter's name stem: the callee's last dotted name (``LAYERS[0](x)`` gives
    ``LAYERS_0``: a name, not its text; ``GRID.__getitem__``, ``getitem``: no dunder)."""
    last = re.sub(r"^__(\w+)__$", r"\1", obj.__name__ if not fv.spelled else fv.text.split(".")[-1])
    return last if last.isidentifier() else re.sub(r"\W+", "_", last).strip("_") or "fn"


def _pass_roots(n: Any, plan: Plan, value: FnValue, node: Any) -> None:
    """The objects this caller's names for ``value`` denote (``f_fn``: a parameter's
    function), for the callee, whose module does not bind them: its code calls them
    by those names (bound to None there, its derivative's call failed)."""
    for text in value.texts():
        root = text.split(".")[0]
        if root.isidentifier():
            n.resolver.bind_namespace(root, node)
            if n.resolver.namespace.get(root) is not None:
                plan.roots[root] = n.resolver.namespace[root]


def _enter_roots(n: Any, plan: Plan) -> None:
    """In the callee: the caller's names for the functions it passes (_pass_roots)."""
    for root, obj in plan.roots.items():
        n.resolver.namespace.setdefault(root, obj)
        n.resolver.depends_on(FreeVar(root, cell=types.CellType(obj)), n.p.node)


def _called_as_written(n: Any, fv: FnValue, plan: Plan, node: Any) -> bool:
    """Can emitted code call a callable object by the name the code reads it by
    (``OBJ(x)``, ``mod.OBJ(x)``), each value passed to a positional parameter?"""
    obj = fv.obj
    if not (fv.spelled and (isinstance(obj, types.MethodType) and obj.__name__ == "__call__"
                            or isinstance(obj, types.FunctionType) and type_tested(obj))
            and all(part.isidentifier() for part in fv.text.split("."))):
        return False  # (a function testing its parameters' types: `powered(x, 2)`)
    root = fv.text.split(".")[0]
    if root in n.local_names or root in n.funcs.values or not plan.passes_as_is(obj):
        return False
    n.resolver.bind_namespace(root, node)
    return root in n.resolver.namespace


def _frozen(n: Any, value: Any) -> Any:
    """The ``stats_frozen`` statement that made ``value`` (``d = norm(loc, scale)``
    passed to a function: its plan passes the parameters), or None."""
    let = n.lets.get(value.name) if isinstance(value, Var) else None
    return let if let is not None and let.prim == "stats_frozen" else None


def _enter_frozen(n: Any, name: str, detail: tuple) -> list[str]:
    """A planned callee's frozen distribution ``name``, ``detail`` ``(dist, how many
    parameters)``: made again from its parameters, the IR parameters returned."""
    names = [n.names.fresh(f"{name}_{i}") for i in range(detail[1])]
    n.out.append(Let(name, "stats_frozen", (Const(detail[0], repr(detail[0])),
                                            *map(Var, names)), {}, n.loc(n.p.node)))
    n.lets[name] = n.out[-1]
    return names


def _default(self: FunctionLowerer, fn: Any, pname: str, default: Any, node: Any) -> Const:
    """A parameter left at its default: a literal as written, another object (an
    array, a tuple of arrays) by a name bound to it in emitted code."""
    if is_literal(default):
        return Const(default, repr(default))
    name = self.n.names.fresh(f"{fn.__name__}_{pname}")
    value = watched_fields(self.n, fn, pname, default, node)  # (`cfg=OptConfig(...)`)
    self.n.resolver.namespace[name] = value
    return Const(value, name)


def _literal_defaults(node: Any, n: Any) -> tuple[list[Any], dict[str, Any]]:
    """A nested function's defaults, which must be literals (Python evaluates them
    where the ``def`` runs; s2s, which lifts the function out, reads only literals)."""
    positional: list[Any] = []
    keywords: dict[str, Any] = {}
    ps = node.params
    for p in (*ps.posonly_params, *ps.params, *ps.kwonly_params):
        if p.default is None:
            continue
        text = cst.Module([]).code_for_node(p.default)
        try:
            value = literal_value(text)
        except (ValueError, SyntaxError):
            what = "`lambda`" if isinstance(node, cst.Lambda) else "nested `def`"
            raise n.unsupported(
                p.default, f"a {what}'s default `{p.name.value}={text}` is not a literal: "
                "Python evaluates it where the function is defined, and s2s, which lifts "
                "the function out, reads only literal defaults",
                f"read `{text}` in the body instead (it is passed in as the function runs)",
            ) from None
        if p in ps.kwonly_params:
            keywords[p.name.value] = value
        else:
            positional.append(value)
    return positional, keywords


def _plain(fn: Any, args: list[Any], kwargs: dict[str, Any]) -> bool:
    """Does the existing call path take this call: atoms only, positional parameters,
    and literal defaults for those not passed?"""
    if any(isinstance(v, (FnValue, FnSeq, Unbound, FnItems)) for v in (*args, *kwargs.values())) or (
            type_tested(fn)):  # (`isinstance(scale, int)`: decided per call's types)
        return False
    sig = inspect.signature(fn, follow_wrapped=False)
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError:
        return True  # (the existing path reports it)
    for name, p in sig.parameters.items():
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            return False
        if name not in bound.arguments and not is_literal(p.default):
            return False
    return True


def _may_be_function(node: Any) -> bool:
    return isinstance(node, (cst.Name, cst.Attribute, cst.Lambda, cst.IfExp, cst.Call))


def _jit_or_vmap(lowerer: FunctionLowerer, which: str, text: str, node: cst.Call) -> FnValue:
    """``s2s.jit(g)`` in the body: ``g`` itself (the outer transform's code runs).
    ``s2s.vmap(g)`` kept as a value: a ``KeptVmap`` (called, see ``inner_vmap``)."""
    if which == "vmap":  # (called, it is frontend/inner_vmap.py's comprehension)
        kept = KeptVmap.made(lowerer, node)
        return FnValue(kept, text, captured=kept.carried())
    inner = lowerer.value_of(node.args[0].value) if node.args and \
        node.args[0].keyword is None else None
    if inner is None:
        raise lowerer.n.unsupported(node, f"`{text}` inside a transformed function takes "
                                    "a function s2s knows first",
                                    f"write {text}(f)(x) for a function f")
    return inner
