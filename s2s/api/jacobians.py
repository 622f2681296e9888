"""The Jacobians, on batching: ``jacfwd(f)`` is the emitted ``vmap`` of the emitted
``jvp`` of ``f``, mapped over a basis of input tangents; ``jacrev(f)`` the ``vmap`` of
its ``vjp`` over a basis of output cotangents; ``hessian(f)`` is ``jacfwd(grad(f))``.
Every direction of the basis goes through one call of vectorised emitted code."""


import functools
import inspect
import keyword
import types
from typing import Any, Callable, Sequence

import numpy as np

from ..caches import LRU
from ..emit.code import compile_module, format_module
from ..errors import TransformError
from ..frontend.synthesize import signature_text, synthesize
from ..ir.kinds import LEAF, Kind, Leaf, Tree, kind_of
from ..transforms.analysis import return_kind
from ..transforms.ranks import run_silenced
from . import callables, dtypes_down, methods, pipeline, records, trees
from .arguments import check_outputs
from .display import NotebookDisplay
from .jacobian_text import JacobianPlan, jacobian_text
from .located import refusal_at_user_line, reraise_located
from .outputs import owned_module
from .pushforward import _jvp_transform
from .transformed import (
    _VJP,
    Transformed,
    _check_argnums,
    _check_float_inputs,
    _copies,
    _leaves,
    _normalize_argnums,
    _rebuild,
    grad,
    peel_source_loop,
)
from .trees import _map_leaves, has_nodes, plain, unplain
from .vectorize import Vmapped

__all__ = ["jacfwd", "jacrev", "jacobian", "hessian"]


# ---- vmap -------------------------------------------------------------------------


# ---- Jacobians -------------------------------------------------------------------


def _basis(leaves: list[Any]) -> tuple[int, list[np.ndarray]]:
    """One standard basis over all the leaves: n directions, per leaf (n, *shape)."""
    sizes = [int(np.size(x)) for x in leaves]
    n = sum(sizes)
    out, start = [], 0
    for x, k in zip(leaves, sizes):
        dtype = np.result_type(x)
        b = np.zeros((n, k), dtype=dtype)
        b[np.arange(start, start + k), np.arange(k)] = 1
        out.append(b.reshape((n,) + np.shape(x)))
        start += k
    return n, out


def _base_name(fun: Any) -> str:
    name = getattr(fun, "__name__", "f")
    return "lambda" if name == "<lambda>" else name


class _JacobianCode(NotebookDisplay):
    """What a transform of a Jacobian needs (``jacfwd(jacrev(f))``): its emitted code
    as a function of the same arguments, for one array argument and an array output.
    The function loops over the basis, calling the emitted JVP or VJP once per
    direction, so that any transform can read it; called directly, the Jacobian
    objects batch all directions through one vmapped call instead."""

    suffix = ""  # the emitted function's: jacfwd, jacrev

    def __init__(self, fun: Callable, argnums: int | Sequence[int], has_aux: bool,
                 holomorphic: bool = False) -> None:
        self.fun = fun
        self.argnums, self.tuple_out = _normalize_argnums(argnums)
        self.has_aux = has_aux
        self.holomorphic = holomorphic
        self.__name__ = f"{_base_name(fun)}_{self.suffix}"
        self.__qualname__ = self.__name__
        self._vmapped: dict[Any, Vmapped] = {}
        self._shown: Vmapped | None = None  # (what the latest call ran: ``source``)

    @property
    def source(self) -> str:
        """The batched code the latest call ran, made into text when read (a call
        that made it each time spent most of its time there)."""
        return "" if self._shown is None else self._shown.source

    @property
    def _namespace(self) -> dict[str, Any]:
        """The names the latest call's code runs with (s2s emit)."""
        return {} if self._shown is None else self._shown._default()[1].__globals__

    @property
    def mode(self) -> str:
        return self.__name__.rsplit("_", 1)[-1]

    def _per_objects(self, args: tuple) -> Any:
        """This Jacobian made per call's classes, dict keys and key strings
        (``callables.PerFunctionArgs``) where the function's code needs them
        (``helper(x, p)`` calling ``p.apply``, ``del d[k]``); else None."""
        names = callables.per_call_names(self.fun, args) if type(self) in (
            JacFwd, JacRev) else ()
        if not names:
            return None
        key = ("objects", names)
        per = self._vmapped.get(key)
        if per is None:
            nums = self.argnums if self.tuple_out else self.argnums[0]
            per = self._vmapped[key] = callables.PerFunctionArgs(self.fun, lambda f: type(
                self)(f, nums, self.has_aux, self.holomorphic), names)
        return per

    @property
    def ir(self) -> Any:
        return self._transform().ir

    def _refresh(self) -> None:
        self._transform()._refresh()

    def _output_kind(self, passed: tuple, kinds: tuple) -> Kind:
        """The structure ``fun`` returns for arguments of these structures."""
        fn = self.fun
        if hasattr(fn, "_generate_for"):  # a transformed function: its emitted code
            ir = pipeline.lower(fn._generate_for(passed, kinds)[1])
        else:
            ir = self._transform().ir
        return return_kind(ir, tuple(kinds))

    def __s2s_transform__(self) -> str:
        """User code calling a jacobian inlines its emitted code (see ``Transformed``)."""
        return "transformed"

    def _generate_for(self, passed: tuple, kinds: tuple,
                      args: tuple | None = None) -> tuple[str, Callable]:
        argnums = _check_argnums(self.argnums, self.tuple_out, len(passed))
        if self.has_aux:
            raise TransformError(
                f"a transform of {self.__name__} needs a Jacobian without has_aux",
                hint="transform the Jacobian of a function returning the array alone")
        out_kind = self._output_kind(passed, kinds)
        if not isinstance(out_kind, (Leaf, Tree)):
            raise TransformError(
                f"a transform of {self.__name__} needs a function returning arrays, or "
                "a dict, tuple or list of them (not a list grown in a loop)",
                hint="return the arrays in a tuple, or stack them into one array")
        t = self._transform()
        t._refresh()
        several = self.tuple_out
        if self.mode == "jacfwd":
            _, inner = t._generate(kinds, argnums, (len(passed), True))
        else:  # the cotangent itself, or a tuple of them for several arguments
            _, inner = t._generate(kinds, argnums, several)
        name = self.__name__
        callee = _base_name(self.fun)
        if not callee.isidentifier() or keyword.iskeyword(callee):
            callee = "fun"  # a lambda
        if getattr(self.fun, "__globals__", {}).get(callee, self.fun) is not self.fun:
            callee += "_fn"  # (the wrapper of a partial calls the function it binds by
            # this name: one module cannot hold both)
        fun = self.fun
        if isinstance(fun, Transformed) and not all(isinstance(k, Leaf) for k in kinds):
            fun = fun._generate_for(passed, kinds)[1]  # (its code for these structures:
            # called in the text, an object's methods read as its class's, not as arrays)
        text, namespace = jacobian_text(JacobianPlan(
            self.mode, name, callee, fun, inner, list(t.ir.params), dict(t.ir.defaults),
            kinds, argnums, self.tuple_out, out_kind, len(passed)))
        text = format_module(text)
        return text, compile_module(text, namespace, name)[name]


def keywords_in_place(fun: Any, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """Keyword arguments, which a Jacobian does not differentiate (JAX passes them
    on), in their parameters' places: ``f(x, scale=2.0)`` of the wrapper s2s makes
    for ``def f(x, **kw)`` (``def f(x, scale)``) is ``f(x, 2.0)``; and the keyword-only
    ones (``def f(x, *, k=2)``), passed on as keywords (``_keyword_adapter``)."""
    if not kwargs:
        return args, {}
    while not isinstance(fun, types.FunctionType) and (
            hasattr(fun, "fun") or hasattr(fun, "fn")):  # (of a gradient, a Jacobian:
        fun = getattr(fun, "fun", None) or fun.fn  # the function's own parameters)
    bound = inspect.signature(fun).bind(*args, **kwargs)
    bound.apply_defaults()
    return tuple(bound.args), {k: v for k, v in bound.kwargs.items() if k in kwargs}


def with_keywords(fun: Any, nargs: int, keys: tuple[str, ...]) -> Any:
    """``fun`` (a Jacobian of a Jacobian: ``jacfwd(jacrev(f))``, whose emitted code
    takes positional parameters only) with the keyword-only parameters ``keys`` after
    the call's ``nargs`` positional ones (``def f(x, k): return f(x, k=k)``, not
    differentiated): made once per ``(nargs, keys)``."""
    cache = getattr(fun, "_keyed", None)
    if cache is not None and (nargs, keys) in cache:
        return cache[(nargs, keys)]
    if isinstance(fun, _JacobianCode):
        nums = fun.argnums if fun.tuple_out else fun.argnums[0]
        if isinstance(fun, _Hessian):  # (of a gradient: the user's function's)
            made = hessian(_positional(fun.fun.fn, nargs, keys), nums, fun.has_aux,
                           fun.holomorphic)
        else:
            make = jacfwd if isinstance(fun, JacFwd) else jacrev
            made = make(with_keywords(fun.fun, nargs, keys), nums, fun.has_aux,
                        fun.holomorphic)
        fun._keyed = {**(cache or {}), (nargs, keys): made}
        return made
    return _positional(fun, nargs, keys)


def _positional(fn: Any, nargs: int, keys: tuple[str, ...]) -> Any:
    """``def f_keywords(x, k): return f(x, k=k)`` (its own name: a Jacobian's emitted
    code calls it by that name, and it calls ``f``)."""
    sig = inspect.signature(fn, follow_wrapped=False)
    named = [n for n, p in sig.parameters.items()
             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)][:nargs]
    named += [f"arg_{i}" for i in range(len(named), nargs)]
    name = fn.__name__
    text = (f"def {name}_keywords({signature_text(named + list(keys), [], set())}):\n"
            f"    return {name}({', '.join(named + [f'{k}={k}' for k in keys])})\n")
    return synthesize(text, f"{name}_keywords", {name: fn}, f"keywords-{name}")


def _keyword_adapter(fn: Any, nargs: int, keys: tuple[str, ...]) -> Any:
    """The emitted ``fn(x, x_dot, *, k=2)`` as a function of positional parameters
    (``def f_jvp(x, x_dot, k): return f_jvp(x, x_dot, k=k)``), which vmap gives the
    keyword-only values unbatched (``in_axes`` None), as JAX passes them on."""
    return callables.variadic_wrapper(fn, nargs, keys) if keys else fn


class JacFwd(_JacobianCode):
    """jacfwd: the vmap, over a basis of tangents, of the emitted JVP."""
    suffix = "jacfwd"

    def _transform(self) -> Transformed:
        return _jvp_transform(self.fun, self.has_aux)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        argnums = _check_argnums(self.argnums, self.tuple_out, len(args))
        if (per := self._per_objects(args)) is not None:
            return per(*args, **kwargs)
        args, kw = keywords_in_place(self.fun, args, kwargs)
        if kw and isinstance(self.fun, _JacobianCode):
            return with_keywords(self, len(args), tuple(kw))(*args, *kw.values())
        given, args = args, _plain_differentiated(args, argnums)
        _check_float_inputs("jacfwd", args, argnums, self.holomorphic, real_only=True)
        t = _jvp_transform(self.fun, self.has_aux)
        t._refresh()
        kinds = _kinds(args, argnums, len(t.ir.params))
        # inputs of one narrow float dtype (float32): the JVP returns its output too,
        # whose dtype the tangent takes (JAX's tangent has its output's dtype; NumPy
        # promotes a float32 tangent times a rule's float64 weights, `np.where(m, 0.5,
        # 1.0)`, to float64)
        narrow = dtypes_down.input_dtype(args, argnums) is not None
        tangent_only = not self.has_aux and not narrow
        try:  # (a refusal of emitted code, or of its vmap: at your line)
            _, jvp_fn = t._generate(kinds, argnums, (len(args), tangent_only),
                                    nargs=len(args), inner_args=args)
            v = self._vmapped.get((jvp_fn, *kw))  # one batched version per emitted JVP
            if v is None:
                v = Vmapped(_keyword_adapter(jvp_fn, len(args) + len(argnums), tuple(kw)),
                            in_axes=0, out_axes=0)
                v.__name__, v.shared_draws = self.__name__, True  # (one call's draws)
                self._vmapped[(jvp_fn, *kw)] = v
        except TransformError as err:
            raise refusal_at_user_line(err, t.ir) from None
        in_leaves = [leaf for i in argnums for leaf in _leaves(args[i])]
        n, basis = _basis(in_leaves)
        it = iter(basis)
        tangents = [_rebuild(kind_of(args[i]), [next(it) for _ in _leaves(args[i])])
                    for i in argnums]
        v.in_axes = (None,) * len(args) + (0,) * len(argnums) + (None,) * len(kw)
        # (the output batched too where it is only read for its dtype: vmap may not
        # prove it the same for every direction, a recursive closure's)
        v.out_axes = (None, 0, None) if self.has_aux else 0 if tangent_only else (0, 0)
        try:
            result = v(*args, *tangents, *kw.values()) if n else _no_directions(
                functools.partial(self.fun, **_copies(kw)) if kw else self.fun, args, self.has_aux)
        except (ValueError, IndexError, TypeError) as err:  # an `if` on an array: located at your line
            reraise_located(err, t.ir, _base_name(self.fun))
        except TransformError as err:  # (vmap refusing the emitted JVP: your line)
            err = refusal_at_user_line(err, t.ir)
            if peel_source_loop(t, err):  # (its loop peeled where the code comes from)
                return self(*args, **kwargs)
            raise err from None
        if n:
            self._shown = v  # (its text made when .source is read)
        elif self.has_aux and t.ir.free:  # (the user's code ran: a module's array copied)
            result = owned_module(result, t.ir.free)
        if n and narrow:  # (the tangent in its output's dtype)
            result = (_like_outputs(result[1], result[0]),) if not self.has_aux else (
                result[0], _like_outputs(result[1], result[0]), result[2])
            result = result if self.has_aux else result[0]
        out_dot = result[1] if self.has_aux else result
        if self.holomorphic:  # (a real output's tangent is real)
            check_outputs("jacfwd", out_dot, True)
        elif getattr(self.fun, "mode", None) in ("grad", "value_and_grad") and not any(
                np.iscomplexobj(leaf) for leaf in _arg_leaves(args)):
            # the emitted gradient of real inputs through complex values is cast to
            # its inputs' dtype only when it returns (JAX's real part): so is its
            # derivative here
            out_dot = _map_leaves(np.real, out_dot)
        if out_dot is None or isinstance(out_dot, np.ndarray) and out_dot.dtype == object:
            out = self.fun(*_copies(args), **_copies(kw))  # None out: None Jacobian, as JAX gives
            if (out[0] if self.has_aux else out) is None:
                return (None, result[2]) if self.has_aux else None
        jac = _split_jacobian(out_dot, [args[i] for i in argnums], self.tuple_out,
                              [given[i] for i in argnums])
        if given is not args and getattr(self.fun, "mode", None) == "grad":
            jac = _gradient_in_types(self.fun, given, args, jac)  # (a Hessian's rows)
        built = t.built_template()  # (the output's objects the function built)
        done = records.rebuild(built, (jac, result[2]) if self.has_aux else jac)
        return dtypes_down.through(self.fun, args, done)  # (of a gradient: a Hessian)


def _kinds(args: tuple, argnums: tuple[int, ...], nparams: int) -> tuple[Kind, ...]:
    """The arguments' kinds as the emitted code reads them: an object of a pytree class
    not differentiated (a NamedTuple whose methods the function calls) is its plain
    form, the dict of its fields, as grad's code reads it."""
    return tuple(kind_of(plain(a)) if i not in argnums and has_nodes(a, False) else
                 kind_of(a) for i, a in enumerate(args)) + (LEAF,) * (nparams - len(args))


def plain_objects(args: tuple, argnums: tuple[int, ...]) -> tuple:
    """The arguments not differentiated that are pytree objects (a NamedTuple whose
    methods the function calls) as the plain dicts of their fields, which the
    emitted code reads (and JAX traces)."""
    return tuple(trees.plain_dicts(plain(a)) if i not in argnums and has_nodes(a, False) else a
                 for i, a in enumerate(args))


def _arg_leaves(args: tuple) -> list[Any]:
    """The arrays of the arguments, those of a pytree object's fields among them."""
    return _leaves(plain(args) if has_nodes(args, False) else args)


def _like_outputs(rows: Any, out: Any) -> Any:
    """Batched tangents ``rows`` (a tree like ``out``'s) each cast to its output
    leaf's floating dtype where that is narrower of the same kind."""
    def one(r: Any, o: Any) -> Any:
        want = np.result_type(o)
        got = getattr(r, "dtype", None)
        if got is not None and want.kind == got.kind and want.kind in "fc" and \
                want.itemsize < got.itemsize:
            return np.asarray(r).astype(want)
        return r
    r_leaves, o_leaves = _leaves(rows), _leaves(out)
    if len(r_leaves) != len(o_leaves):
        return rows
    return _rebuild(kind_of(rows), [one(r, o) for r, o in zip(r_leaves, o_leaves)])


def _no_directions(fun: Any, args: tuple, has_aux: bool) -> Any:
    """jacfwd's batched result where the inputs have no element (no direction to
    batch over; vmap needs an example): (0, *out) zeros per output leaf, as JAX's."""
    out = fun(*_copies(args))
    primal, aux = out if has_aux else (out, None)
    rows = _map_leaves(lambda o: np.zeros((0, *np.shape(o)), np.result_type(
        np.asarray(o), np.float32)), primal)
    return (primal, rows, aux) if has_aux else rows


def _plain_differentiated(args: tuple, argnums: tuple[int, ...]) -> tuple:
    """The differentiated arguments holding pytree objects (a NamedTuple, a registered
    dataclass, None) in their plain forms, the dicts of their fields the emitted code
    reads; the Jacobian's blocks are made objects of their types again (``_block``)."""
    if not any(has_nodes(args[i], True) for i in argnums):
        return args
    return tuple(plain(a, ()) if i in argnums else a for i, a in enumerate(args))


def _block(x: Any, like: Any, parts: list[Any]) -> Any:
    """One input's block of a Jacobian, the leaves ``parts``, in the structure of
    ``like``, the argument as the caller passed it (``x``: as the emitted code read it)."""
    block = _rebuild(kind_of(x), parts)
    return block if like is x else unplain(like, block)


def _gradient_in_types(fun: Any, given: tuple, args: tuple, jac: Any) -> Any:
    """A Hessian of pytree objects: its outer structure, the gradient's (the plain
    form's dicts), in the arguments' types, as ``jax.hessian`` gives it."""
    if all(args[i] is given[i] for i in fun.argnums):
        return jac
    like = tuple(given[i] for i in fun.argnums) if fun.tuple_out else given[fun.argnums[0]]
    return unplain(like, jac)


def _split_jacobian(batched_out: Any, inputs: list[Any], tuple_out: bool,
                    likes: list[Any] | None = None) -> Any:
    """Rows (n, *out) of a batched result -> out-tree of in-tree blocks (*out, *in)."""
    likes = inputs if likes is None else likes
    def per_out(leaf: np.ndarray) -> Any:
        leaf = np.asarray(leaf)
        blocks, start = [], 0
        for x, like in zip(inputs, likes):
            xs = []
            for xl in _leaves(x):
                k = int(np.size(xl))
                part = leaf[start:start + k]
                part = np.moveaxis(part, 0, -1).reshape(leaf.shape[1:] + np.shape(xl))
                xs.append(part)
                start += k
            blocks.append(_block(x, like, xs))
        return tuple(blocks) if tuple_out else blocks[0]

    return _map_leaves(per_out, batched_out)


def jacfwd(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False) -> Any:
    """The Jacobian of ``fun`` by forward mode, as ``jax.jacfwd``: output dims first,
    input dims last; pytrees nest out-tree then in-tree.  Complex inputs need
    ``holomorphic=True`` (then the output must be complex too), as in JAX; JAX's
    jacfwd has no ``allow_int``."""
    return methods.bound_method(
        fun, lambda f, shift: jacfwd(f, shift(argnums), has_aux, holomorphic)) \
        or callables.transformable(fun, lambda f: _per_call_refusal(
            JacFwd(f, argnums, has_aux, holomorphic)))


def _per_call_refusal(jac: "_JacobianCode") -> "_JacobianCode":
    """``jac``, its function lowered now where that is refused for want of the
    call's values (a NamedTuple handed to a callee that calls its methods): the
    refusal then makes ``callables.transformable`` make the Jacobian per call's
    classes, which a transform of it (``vmap(jacfwd(f))``) needs as ``grad`` does
    (it read the methods as arrays': "the array method `.apply()`"); any other
    refusal is left to the call, as before."""
    try:
        jac.ir
    except TransformError as err:
        if getattr(err, "per_call", False):
            raise
    return jac



class JacRev(_JacobianCode):
    """jacrev: the vmap, over a basis of output cotangents, of the emitted VJP."""
    suffix = "jacrev"

    def _transform(self) -> Transformed:
        return vjp_transform(self.fun, self.has_aux)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        argnums = _check_argnums(self.argnums, self.tuple_out, len(args))
        if (per := self._per_objects(args)) is not None:
            return per(*args, **kwargs)
        args, kw = keywords_in_place(self.fun, args, kwargs)
        if kw and isinstance(self.fun, _JacobianCode):
            return with_keywords(self, len(args), tuple(kw))(*args, *kw.values())
        given, args = args, _plain_differentiated(args, argnums)
        _check_float_inputs("jacrev", args, argnums, self.holomorphic)
        try:
            out = self.fun(*_copies(args), **_copies(kw))  # (never on the caller's arrays)
        except (ValueError, IndexError, TypeError) as err:  # an `if` on an array: located at your line
            reraise_located(err, None, _base_name(self.fun))
        aux = None
        if self.has_aux:
            out, aux = out
        _no_array_out(self.__name__, out)
        built, out = out, plain(out) if has_nodes(out, False) else out
        check_outputs("jacrev", out, self.holomorphic)
        t = vjp_transform(self.fun, self.has_aux)
        t._refresh()
        if t.ir.free:  # (a module's array in aux: copied, as an argument's copy is)
            aux = owned_module(aux, t.ir.free)
        kinds = _kinds(args, argnums, len(t.ir.params))
        try:  # (a refusal of emitted code, or of its vmap: at your line)
            _, vjp_fn = t._generate(kinds, argnums, True, nargs=len(args), inner_args=args)
            v = self._vmapped.get((vjp_fn, *kw))
            if v is None:
                v = self._vmapped[(vjp_fn, *kw)] = Vmapped(_keyword_adapter(
                    vjp_fn, len(t.ir.params) + 1, tuple(kw)))
                v.__name__ = self.__name__
        except TransformError as err:
            raise refusal_at_user_line(err, t.ir) from None
        out_leaves = [np.asarray(x, dtype=np.result_type(np.asarray(x), np.float32))
                      for x in _leaves(out)]
        n, basis = _basis(out_leaves)
        cotangent = _rebuild(kind_of(out), basis)
        # the VJP function takes every parameter before the cotangent: the ones the
        # call leaves at their defaults are passed their defaults
        rest = tuple(t.ir.defaults[p] for p in t.ir.params[len(args):])
        v.in_axes = (None,) * (len(args) + len(rest)) + (0,) + (None,) * len(kw)
        v.out_axes = 0
        try:
            if n:
                rows = v(*args, *rest, cotangent, *kw.values())
                self._shown = v  # (its text made when .source is read)
            else:  # no output entry, no row: (0, *x.shape) per input, as JAX's
                rows = tuple(_rebuild(kind_of(args[i]), [np.zeros(
                    (0, *np.shape(x)), np.result_type(np.asarray(x), np.float32))
                    for x in _leaves(args[i])]) for i in argnums)
                rows = rows if self.tuple_out else rows[0]
        except (ValueError, IndexError, TypeError) as err:  # (a singular matrix: at your line)
            reraise_located(err, t.ir, _base_name(self.fun))
        except TransformError as err:  # (vmap refusing the emitted VJP: your line)
            raise refusal_at_user_line(err, t.ir) from None
        jac = _transpose_rows(rows, out, [args[i] for i in argnums], self.tuple_out,
                              [given[i] for i in argnums])
        jac = unplain(built, jac) if built is not out else jac  # (a NamedTuple out)
        if given is not args and getattr(self.fun, "mode", None) == "grad":
            jac = _gradient_in_types(self.fun, given, args, jac)  # (a Hessian's rows)
        return dtypes_down.through(self, args, (jac, aux) if self.has_aux else jac)


def _transpose_rows(rows: Any, out: Any, inputs: list[Any], tuple_out: bool,
                    likes: list[Any]) -> Any:
    """Rows (n_out, *in) per input leaf -> out-tree of in-tree blocks (*out, *in)."""
    per_input = [[np.asarray(r) for r in _leaves(x)] for x in (
        rows if isinstance(rows, tuple) else (rows,))]
    blocks_out, start = [], 0
    for o in _leaves(out):
        k = int(np.size(o))
        blocks = []
        for x, like, leaves in zip(inputs, likes, per_input):
            parts = [leaf[start:start + k].reshape(np.shape(o) + np.shape(leaf)[1:])
                     for leaf in leaves]
            blocks.append(_block(x, like, parts))
        blocks_out.append(tuple(blocks) if tuple_out else blocks[0])
        start += k
    return _rebuild(kind_of(out), blocks_out)


def vjp_transform(fun: Callable, has_aux: bool) -> Transformed:
    try:
        cache = _VJPS.setdefault(fun, {})
    except TypeError:  # not hashable: no caching
        cache = {}
    if has_aux not in cache:
        cache[has_aux] = _VJP(fun, has_aux)
    return cache[has_aux]


# (not weak: each transform holds its function, which would keep the key alive)
_VJPS: LRU[Any, dict] = LRU(128)


def jacrev(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False, allow_int: bool = False) -> Any:
    """The Jacobian of ``fun`` by reverse mode, as ``jax.jacrev``: output dims first,
    input dims last; pytrees nest out-tree then in-tree.  ``allow_int=True`` gives an
    integer argument's block as zeros in its dtype, as JAX; a complex output needs
    ``holomorphic=True`` (then the inputs must be complex too), as in JAX."""
    method = methods.bound_method(fun, lambda f, shift: jacrev(
        f, shift(argnums), has_aux, holomorphic, allow_int=allow_int))
    if method is not None:
        return method
    if allow_int:
        return methods.IntJacobian(lambda nums: jacrev(fun, nums, has_aux, holomorphic),
                                   fun, argnums, has_aux)
    return callables.transformable(fun, lambda f: _per_call_refusal(
        JacRev(f, argnums, has_aux, holomorphic)))


jacobian = jacrev


def hessian(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
            holomorphic: bool = False) -> Any:
    """The Hessian of a scalar ``fun``, as ``jax.hessian``: forward mode over the
    emitted gradient, ``jacfwd(grad(fun))``, vectorised over the basis."""
    method = methods.bound_method(
        fun, lambda f, shift: hessian(f, shift(argnums), has_aux, holomorphic))
    if method is not None:
        return method
    inner = grad(fun, argnums=argnums, has_aux=has_aux, holomorphic=holomorphic)
    if isinstance(inner, callables.PerArity):  # (*args/**kwargs: per call signature)
        return inner.remade(lambda f: hessian(f, argnums, has_aux, holomorphic))
    return _Hessian(inner, argnums, has_aux, holomorphic)


class _Hessian(JacFwd):
    """``jacfwd(grad(fun))``, with JAX's ValueError for an output with no array (the
    emitted gradient's output check is dead code to the forward pass over it)."""
    display_kind = "hessian"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        _check_argnums(self.argnums, self.tuple_out, len(args))
        args, kw = keywords_in_place(self.fun, args, kwargs)
        user_fn = self.fun.fn

        def run() -> Any:
            try:
                return run_silenced(functools.partial(user_fn, **_copies(kw)) if kw else user_fn,
                                    *_copies(args))  # (the Hessian's run prints)
            except (ValueError, IndexError, TypeError) as err:  # an `if` on an array: located at your line
                reraise_located(err, None, _base_name(user_fn))

        general = self.general_for(args, run)
        if general is not None:
            return with_keywords(general, len(args), tuple(kw))(
                *args, *kw.values()) if kw else general(*args)
        return super().__call__(*args, **kw)

    def general_for(self, args: tuple, run: Callable[[], Any]) -> Any:
        """``jacfwd(jacrev(fun))`` where the output for inputs of these shapes is not a
        scalar (``run()`` computes it, once per input shapes: the output's rank may
        follow them), else None."""
        checked = self.__dict__.setdefault("_checked", {})
        key = tuple(np.shape(leaf) for leaf in _arg_leaves(args))
        if key not in checked:
            checked[key] = self.check_output(run())
        return self._general if checked[key] else None

    def check_output(self, out: Any) -> bool:
        """Read the function's output (a value, or a traced one: its shape is what
        counts): True where it is not a scalar, whose Hessian is each output element's,
        as JAX's ``jacfwd(jacrev(fun))`` lays it out (output dims first)."""
        if self.has_aux and isinstance(out, tuple) and len(out) == 2:
            out = out[0]
        _no_array_out(self.__name__, out)
        if self.has_aux or (len(_leaves(out)) == 1 and np.ndim(out) == 0):
            return False
        if self._general is None:
            nums = self.argnums if self.tuple_out else self.argnums[0]
            holo = self.holomorphic
            self._general = jacfwd(jacrev(self.fun.fn, argnums=nums, holomorphic=holo),
                                   argnums=nums, holomorphic=holo)
        return True

    _general: Any = None


def _no_array_out(name: str, out: Any) -> None:
    if not _leaves(out) or any(leaf is None for leaf in _leaves(out)):
        raise ValueError(  # JAX: 'at least one array or dtype is required'
            f"{name}: the function returned {out!r}, which has no array to "
            "differentiate (JAX raises 'at least one array or dtype is required'). "
            "Instead: return the array (or a pytree of arrays) whose Jacobian you want."
        )
