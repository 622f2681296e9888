"""A cheap self-check of a transformed function on given inputs.

    g = s2s.grad(loss)
    report = selfcheck(g, w, x, y)      # a JSON-serialisable dict
    report["passed"]                    # True when no check failed and one passed

Every level of the transform stack is checked against the function it transforms,
with evidence that does not come from the transform itself:

* ``fd_probe`` (grad, value_and_grad, jvp, vjp, jacfwd, jacrev): central finite
  differences of the inner function along a random direction (jvp: along the given
  tangents), evaluated in float64, against the transform's answer contracted with
  that direction.
* ``jvp_vjp_identity`` (the same transforms): ``<u, J v> = <J^T u, v>`` for random
  ``u`` and ``v``, with ``J v`` from ``s2s.jvp`` and ``J^T u`` from ``s2s.vjp`` of the
  inner function: forward and reverse mode, built from different rules, must agree.
* ``loop_oracle`` (vmap): the inner function called on each example in a Python loop
  (up to 8 examples, spread over the batch) against the batched result.
* ``jit_matches_unjitted`` (jit): the compiled function against the function it wraps.
* ``value`` (value_and_grad): the value against the inner function's.
* ``jax_oracle`` (whole stack, when JAX is importable): the root function's module is
  loaded again with ``numpy`` bound to ``jax.numpy`` and the same stack is applied
  with JAX's transforms; a twin JAX cannot trace is reported ``unavailable``, not
  failed.  It turns on ``jax_enable_x64``, as s2s's JAX backend does.

Inner levels are checked on the arguments they receive: the same ones under grad,
jacfwd, jacrev and jit; the first example under vmap; the primals under jvp and vjp.
A check that cannot be run (s2s cannot transform the inner function that way) is
``unavailable`` with the reason; only ``failed`` makes the report fail.

``jvp`` and ``vjp`` are functions in s2s (and JAX), not transform objects; to check
or record them, wrap the function: ``JvpOf(f)(primals, tangents)`` and
``VjpOf(f)(primals, cotangent)``.
"""

from __future__ import annotations

import hashlib
import math
import re
import sys
import types
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..api.pushforward import jvp as s2s_jvp
from ..api.transformed import float0
from ..api.transformed import vjp as s2s_vjp
from .selfcheck_stack import (
    JvpOf,
    SelfCheckError,
    VjpOf,
    apply_spec,
    axes_py,
    common_transform,
    emitted_texts,
    flatten,
    inner_args,
    is_node,
    layers,
    peel,
    per_arg_axes,
    rebuild,
    root_of,
    stack_of,
    take_example,
    unflatten,
)

__all__ = [  # (the stack's names are selfcheck_stack's, importable from here too)
    "selfcheck", "JvpOf", "VjpOf", "peel", "stack_of", "root_of", "rebuild",
    "emitted_texts", "SelfCheckError", "SCHEMA", "layers", "apply_spec", "inner_args",
    "flatten", "unflatten",
]

SCHEMA = "s2s-selfcheck/1"
MAX_EXAMPLES = 8  # vmap loop oracle: examples checked, spread over the batch


# ---- leaves ------------------------------------------------------------------------


def _is_float(x: Any) -> bool:
    return np.issubdtype(np.result_type(x), np.floating)


def _to64(tree: Any) -> Any:
    return unflatten(tree, [np.asarray(x, np.float64) if _is_float(x) else x
                            for _, x in flatten(tree)])


def _describe(tree: Any, where: str) -> list[dict[str, Any]]:
    return [{"path": where + p, "shape": list(np.shape(x)),
             "dtype": np.result_type(x).name if _arraylike(x) else type(x).__name__}
            for p, x in flatten(tree)]


def _arraylike(x: Any) -> bool:
    return isinstance(x, (np.ndarray, np.generic, int, float, bool, complex)) or hasattr(
        x, "__array__")


def _batch_size(args: tuple, in_axes: Any, axis_size: int | None) -> int:
    for a, ax in zip(args, per_arg_axes(in_axes, len(args))):
        found = _sizes(a, ax)
        if found:
            return found[0]
    assert axis_size is not None
    return axis_size


def _sizes(value: Any, axes: Any) -> list[int]:
    if axes is None:
        return []
    if isinstance(axes, int):
        return [np.shape(x)[axes] for _, x in flatten(value)]
    if isinstance(axes, dict):
        return [n for k in value for n in _sizes(value[k], axes[k])]
    return [n for v, a in zip(value, axes) for n in _sizes(v, a)]


# ---- measuring ---------------------------------------------------------------------


def _num(x: float) -> Any:
    """A JSON-safe float (non-finite values as strings)."""
    x = float(x)
    return x if math.isfinite(x) else str(x)


def _tols(dtypes: list[np.dtype], f64: tuple[float, float],
          f32: tuple[float, float]) -> tuple[float, float]:
    low = any(np.dtype(d).itemsize < 8 for d in dtypes if np.issubdtype(d, np.floating))
    return f32 if low else f64


def _compare(got: list[Any], want: list[Any], rtol: float, atol: float) -> tuple[float, float]:
    """(max abs error, tolerance rtol*max|value| + atol) over paired leaves."""
    err, scale = 0.0, 0.0
    for a, b in zip(got, want):
        a = np.asarray(a, np.float64)
        b = np.asarray(b, np.float64)
        if a.shape != b.shape:
            return math.inf, 0.0
        if a.size:
            diff = np.abs(a - b)
            diff = np.where(np.isnan(a) & np.isnan(b), 0.0, diff)
            err = max(err, float(np.max(diff)) if not np.all(np.isnan(diff)) else math.inf)
            scale = max(scale, float(np.max(np.abs(np.nan_to_num(b)))),
                        float(np.max(np.abs(np.nan_to_num(a)))))
    if len(got) != len(want):
        return math.inf, 0.0
    return err, rtol * scale + atol


def _check(name: str, level: int, transform: str, err: float, tol: float,
           **detail: Any) -> dict[str, Any]:
    passed = err <= tol
    return {"name": name, "level": level, "transform": transform,
            "status": "passed" if passed else "failed", "error": _num(err),
            "tolerance": _num(tol), **detail}


def _unavailable(name: str, level: int, transform: str, reason: str) -> dict[str, Any]:
    return {"name": name, "level": level, "transform": transform,
            "status": "unavailable", "reason": reason}


def _reason(exc: BaseException) -> str:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {first}"[:300]


def _direction(rng: np.random.Generator, leaves: list[Any]) -> list[np.ndarray]:
    """A random unit direction over float leaves (zeros for the others)."""
    dirs = [rng.standard_normal(np.shape(x)) if _is_float(x) else
            np.zeros(np.shape(x)) for x in leaves]
    norm = math.sqrt(sum(float(np.sum(d * d)) for d in dirs)) or 1.0
    return [d / norm for d in dirs]


def _shifted(args: tuple, nums: tuple[int, ...], dirs: dict[int, list[np.ndarray]],
             step: float) -> tuple:
    out = list(args)
    for i in nums:
        leaves = [x for _, x in flatten(args[i])]
        moved = [np.asarray(x, np.float64) + step * d if _is_float(x) else x
                 for x, d in zip(leaves, dirs[i])]
        moved = [m if np.ndim(x) or not _is_float(x) else float(m)
                 for m, x in zip(moved, leaves)]
        out[i] = unflatten(args[i], moved)
    return tuple(out)


def _first(out: Any, has_aux: bool) -> Any:
    return out[0] if has_aux else out


def _fd(h: Callable, args: tuple, nums: tuple[int, ...], dirs: dict, has_aux: bool,
        eps: float) -> list[np.ndarray]:
    """Central difference of each output leaf of ``h`` along ``dirs``, in float64."""
    base = _to64(args)
    plus = [np.asarray(x, np.float64) for _, x in
            flatten(_first(h(*_shifted(base, nums, dirs, eps)), has_aux))]
    minus = [np.asarray(x, np.float64) for _, x in
             flatten(_first(h(*_shifted(base, nums, dirs, -eps)), has_aux))]
    return [(p - m) / (2 * eps) for p, m in zip(plus, minus)]


def _eps(args: tuple, nums: tuple[int, ...]) -> float:
    size = max([float(np.max(np.abs(np.asarray(x, np.float64)))) for i in nums
                for _, x in flatten(args[i]) if _is_float(x) and np.size(x)] or [0.0])
    return 1e-6 * (1.0 + size)


def _resolve_nums(argnums: Any, nargs: int) -> tuple[tuple[int, ...], bool]:
    if isinstance(argnums, int):
        return (argnums % nargs,), False
    return tuple(a % nargs for a in argnums), True


def _dot(a: list[Any], b: list[Any]) -> tuple[float, float]:
    """<a, b> and sum |a_i b_i| (the scale cancellation is measured against)."""
    total, scale = 0.0, 0.0
    for x, y in zip(a, b):
        p = np.asarray(x, np.float64) * np.asarray(y, np.float64)
        total += float(np.sum(p))
        scale += float(np.sum(np.abs(p)))
    return total, scale


# ---- the checks per level ----------------------------------------------------------

FD_TOL = ((1e-5, 1e-7), (2e-3, 1e-4))  # (rtol, atol) for float64, lower precision
EXACT_TOL = ((1e-9, 1e-12), (1e-4, 1e-6))  # same computation, other route


def _fd_probe(spec: dict, level: int, h: Callable, args: tuple, out: Any,
              rng: np.random.Generator) -> dict[str, Any]:
    t = spec["transform"]
    has_aux = spec.get("has_aux", False)
    if t in ("jvp", "vjp"):
        primals = tuple(args[0])
        nums = tuple(i for i, p in enumerate(primals)
                     if all(_is_float(x) for _, x in flatten(p)))
        call_args, tuple_out = primals, True
    else:
        nums, tuple_out = _resolve_nums(spec["argnums"], len(args))
        call_args = args
    if t == "jvp":
        tangents = tuple(args[1])
        dirs = {i: [np.asarray(x, np.float64) for _, x in flatten(tangents[i])]
                for i in nums}
    else:
        dirs = {i: _direction(rng, [x for _, x in flatten(call_args[i])]) for i in nums}
    eps = _eps(call_args, nums)
    fd = _fd(h, call_args, nums, dirs, has_aux, eps)
    value_leaves = [x for _, x in flatten(_first(h(*_to64(call_args)), has_aux))]
    value_scale = max([float(np.max(np.abs(v))) for v in value_leaves if np.size(v)] or [0])
    dtypes = [np.result_type(x) for i in nums for _, x in flatten(call_args[i])]
    rtol, atol = _tols(dtypes, *FD_TOL)
    atol *= 1.0 + value_scale
    if t in ("grad", "value_and_grad"):
        grads = out[1] if t == "value_and_grad" else out
        if has_aux and t == "grad":
            grads = out[0]
        per = grads if tuple_out else (grads,)
        an = sum(_dot([x for _, x in flatten(g)], dirs[i])[0] for g, i in zip(per, nums))
        err, tol = _compare([an], fd, rtol, atol)
        what = "d/de f(x + e v) against <grad, v>"
    elif t == "jvp":
        got = [x for _, x in flatten(out[1])]
        err, tol = _compare(got, fd, rtol, atol)
        what = "d/de f(x + e t) against the output tangent"
    elif t == "vjp":
        ct = [x for _, x in flatten(args[1])]
        lhs = _dot(ct, fd)[0]
        rhs = sum(_dot([x for _, x in flatten(out[1][i])], dirs[i])[0] for i in nums)
        err, tol = _compare([rhs], [lhs], rtol, atol * (1 + _dot(ct, ct)[0] ** 0.5))
        what = "<u, d/de f(x + e v)> against <vjp(u), v>"
    else:  # jacfwd, jacrev
        jac = out[0] if has_aux else out
        hout = _first(h(*call_args), has_aux)
        got = _jac_times(jac, hout, [(i, call_args[i]) for i in nums], dirs, tuple_out)
        err, tol = _compare(got, fd, rtol, atol)
        what = "d/de f(x + e v) against J v"
    return _check("fd_probe", level, t, err, tol, eps=eps, compares=what,
                  rtol=rtol, atol=_num(atol))


def _jac_times(jac: Any, hout: Any, inputs: list[tuple[int, Any]],
               dirs: dict[int, list[np.ndarray]], tuple_out: bool) -> list[np.ndarray]:
    """Jacobian blocks (out dims, in dims) contracted with the direction, per output."""
    found = []

    def walk(j: Any, o: Any) -> None:
        if isinstance(o, dict):
            for k in o:
                walk(j[k], o[k])
            return
        if is_node(o):
            for jj, oo in zip(j, o):
                walk(jj, oo)
            return
        per = j if tuple_out else (j,)
        total = np.zeros(np.shape(o))
        for blocks, (i, x) in zip(per, inputs):
            for (_, block), d in zip(flatten(blocks), dirs[i]):
                block = np.asarray(block, np.float64)
                total = total + np.tensordot(block, d, axes=d.ndim)
        found.append(total)

    walk(jac, hout)
    return found


def _identity(spec: dict, level: int, h: Callable, args: tuple, out: Any,
              rng: np.random.Generator) -> dict[str, Any]:
    """<u, J v> (s2s.jvp of h) against <J^T u, v> (s2s.vjp of h)."""
    t = spec["transform"]
    has_aux = spec.get("has_aux", False)
    if t in ("jvp", "vjp"):
        primals = tuple(args[0])
        nums = tuple(i for i, p in enumerate(primals)
                     if all(_is_float(x) for _, x in flatten(p)))
    else:
        primals = tuple(args)
        nums, _ = _resolve_nums(spec["argnums"], len(args))
    try:
        hout = _first(h(*primals), has_aux)
        outs = [x for _, x in flatten(hout)]
        if not all(_is_float(x) for x in outs):
            return _unavailable("jvp_vjp_identity", level, t,
                                "the inner function has a non-float output")
        u = [np.asarray(d, np.result_type(x)) for d, x in zip(_direction(rng, outs), outs)]
        dirs = {i: _direction(rng, [x for _, x in flatten(primals[i])]) for i in nums}
        tangents = []
        for i, p in enumerate(primals):
            leaves = [x for _, x in flatten(p)]
            if i in nums:
                ts = [np.asarray(d, np.result_type(x)) if np.ndim(x) else
                      np.result_type(x).type(d) for d, x in zip(dirs[i], leaves)]
            else:
                ts = [np.zeros(np.shape(x), np.result_type(x)) if _is_float(x) else
                      np.zeros(np.shape(x), _float0()) for x in leaves]
            tangents.append(unflatten(p, ts))
        found = s2s_jvp(h, primals, tuple(tangents), has_aux=has_aux)
        jv = [x for _, x in flatten(found[1])]
        vj = s2s_vjp(h, *primals, has_aux=has_aux)[1](unflatten(hout, u))
    except Exception as exc:  # s2s cannot take both modes of this function
        return _unavailable("jvp_vjp_identity", level, t, _reason(exc))
    lhs, s1 = _dot(u, jv)
    rhs, s2 = 0.0, 0.0
    for i in nums:
        r, s = _dot([x for _, x in flatten(vj[i])], dirs[i])
        rhs, s2 = rhs + r, s2 + s
    dtypes = [np.result_type(x) for x in outs]
    rtol, atol = _tols(dtypes, *EXACT_TOL)
    err = abs(lhs - rhs)
    return _check("jvp_vjp_identity", level, t, err, rtol * max(s1, s2) + atol,
                  compares="<u, jvp(v)> against <vjp(u), v>", rtol=rtol, atol=atol)


def _float0() -> np.dtype:
    return float0


def _loop_oracle(spec: dict, level: int, h: Callable, args: tuple, out: Any
                 ) -> dict[str, Any]:
    in_axes = axes_py(spec["in_axes"])
    out_axes = axes_py(spec["out_axes"])
    n = _batch_size(args, in_axes, spec["axis_size"])
    per_arg = per_arg_axes(in_axes, len(args))
    picks = sorted({int(round(k)) for k in np.linspace(0, n - 1, min(n, MAX_EXAMPLES))})
    got, want = [], []
    for b in picks:
        example = tuple(take_example(a, ax, b) for a, ax in zip(args, per_arg))
        expected = h(*example)
        sliced = _out_take(out, expected, out_axes, b)
        got += [x for _, x in flatten(sliced)]
        want += [x for _, x in flatten(expected)]
    dtypes = [np.result_type(x) for x in want if _arraylike(x)]
    rtol, atol = _tols(dtypes, *EXACT_TOL)
    err, tol = _compare(got, want, rtol, atol)
    return _check("loop_oracle", level, "vmap", err, tol, examples=picks, batch=n,
                  compares="each example through the inner function, in a loop",
                  rtol=rtol, atol=atol)


def _out_take(out: Any, like: Any, axes: Any, b: int) -> Any:
    if axes is None:
        return out
    if isinstance(axes, int):
        if isinstance(like, dict):
            return {k: _out_take(out[k], like[k], axes, b) for k in like}
        if is_node(like):
            return type(like)(_out_take(o, l, axes, b) for o, l in zip(out, like))
        return np.take(np.asarray(out), b, axis=axes)
    if isinstance(axes, dict):
        return {k: _out_take(out[k], like[k], axes[k], b) for k in like}
    return type(like)(_out_take(o, l, a, b) for o, l, a in zip(out, like, axes))


def _jit_check(level: int, h: Callable, args: tuple, out: Any) -> dict[str, Any]:
    want = [x for _, x in flatten(h(*args))]
    got = [x for _, x in flatten(out)]
    rtol, atol = _tols([np.result_type(x) for x in want], *EXACT_TOL)
    err, tol = _compare(got, want, rtol, atol)
    return _check("jit_matches_unjitted", level, "jit", err, tol, rtol=rtol, atol=atol)


def _value_check(spec: dict, level: int, h: Callable, args: tuple, out: Any
                 ) -> dict[str, Any]:
    want = [x for _, x in flatten(h(*args))]
    got = [x for _, x in flatten(out[0])]
    rtol, atol = _tols([np.result_type(x) for x in want], *EXACT_TOL)
    err, tol = _compare(got, want, rtol, atol)
    return _check("value", level, spec["transform"], err, tol, rtol=rtol, atol=atol)


DERIVATIVES = ("grad", "value_and_grad", "jvp", "vjp", "jacfwd", "jacrev")


def _level_checks(spec: dict, level: int, h: Callable, args: tuple, out: Any,
                  rng: np.random.Generator) -> list[dict[str, Any]]:
    t = spec["transform"]
    found = []
    if t in DERIVATIVES:
        if t == "value_and_grad":
            found.append(_value_check(spec, level, h, args, out))
        try:
            found.append(_fd_probe(spec, level, h, args, out, rng))
        except Exception as exc:
            found.append({"name": "fd_probe", "level": level, "transform": t,
                          "status": "failed", "reason": _reason(exc)})
        found.append(_identity(spec, level, h, args, out, rng))
    elif t == "vmap":
        found.append(_loop_oracle(spec, level, h, args, out))
    elif t == "jit":
        found.append(_jit_check(level, h, args, out))
    return found


# ---- the JAX oracle ----------------------------------------------------------------

_TWINS: dict[tuple[str, str], types.ModuleType] = {}


def jax_twin(fn: Callable) -> Callable:
    """``fn`` with its module loaded again, ``numpy`` bound to ``jax.numpy``."""
    name = getattr(fn, "__module__", None) or "module"
    module = sys.modules.get(name)
    path = getattr(module, "__file__", None) or getattr(
        getattr(fn, "__code__", None), "co_filename", None)  # (loaded from a file)
    if path is None or not Path(path).exists() or "<locals>" in fn.__qualname__ or \
            "<lambda>" in fn.__qualname__:
        raise SelfCheckError(f"{fn.__qualname__} is not a module-level named function")
    text = Path(path).read_text()
    key = (path, hashlib.sha256(text.encode()).hexdigest())
    twin = _TWINS.get(key)
    if twin is None:
        for pattern, repl in (
            (r"^import numpy as (\w+)\s*$", r"import jax.numpy as \1"),
            (r"^import numpy\s*$", "import jax.numpy as numpy"),
            (r"^from numpy import ", "from jax.numpy import "),
            (r"^import s2s\s*$", f"import {_SHIM} as s2s"),
            (r"^from s2s import ", f"from {_SHIM} import "),
        ):
            text = re.sub(pattern, repl, text, flags=re.M)
        _install_shim()
        twin = types.ModuleType(f"{name}__jax_twin")
        twin.__file__ = path
        twin.__package__ = getattr(module, "__package__", None) or name.rpartition(".")[0]
        sys.modules[twin.__name__] = twin  # (dataclasses look their module up)
        exec(compile(text, path, "exec"), twin.__dict__)
        _TWINS[key] = twin
    obj: Any = twin
    for part in fn.__qualname__.split("."):
        obj = getattr(obj, part)
    return obj


_SHIM = "s2s__jax_twin_shim"


class _TwinPrimitive:
    """``s2s.primitive`` in a twin: JAX differentiates the function itself."""

    def __init__(self, impl: Callable, **_: Any) -> None:
        self.name = getattr(impl, "__name__", "primitive")

    def defvjp(self, rule: Callable) -> Callable:
        return rule

    def defjvp(self, wrt: str) -> Callable[[Callable], Callable]:
        return lambda rule: rule


def _install_shim() -> None:
    """The ``s2s`` a twin imports: JAX's ``custom_jvp``/``custom_vjp`` (so the oracle
    applies the user's rules as JAX would), primitives JAX differentiates itself,
    and s2s for every other name.  The twin does not register anything with s2s."""
    if _SHIM in sys.modules:
        return
    import jax  # (the oracle: JAX is optional)

    # every other name is the package's own: it is loaded (this module is inside it),
    # and read from sys.modules at each use, so tools does not import the root
    shim = types.ModuleType(_SHIM)
    shim.custom_jvp = jax.custom_jvp  # type: ignore[attr-defined]
    shim.custom_vjp = jax.custom_vjp  # type: ignore[attr-defined]
    shim.primitive = _TwinPrimitive  # type: ignore[attr-defined]
    shim.__getattr__ = lambda name: getattr(sys.modules["s2s"], name)  # type: ignore[attr-defined]
    sys.modules[_SHIM] = shim


def _jax_transform(spec: dict, f: Callable) -> Callable:
    import jax

    t = spec["transform"]
    made = common_transform(jax, spec, f)
    if made is not None:
        return made
    if t == "jit":
        return f  # compiling changes no value
    if t == "jvp":
        return lambda primals, tangents: jax.jvp(f, tuple(primals), tuple(tangents),
                                                 has_aux=spec["has_aux"])
    if t == "vjp":
        def vjp(primals: Any, cotangent: Any) -> Any:
            found = jax.vjp(f, *primals, has_aux=spec["has_aux"])
            return (found[0], found[1](cotangent)) + tuple(found[2:])
        return vjp
    raise SelfCheckError(f"unknown transform {t!r}")


def _jax_oracle(g: Any, args: tuple, out: Any, top: int) -> dict[str, Any]:
    try:
        import jax
    except ImportError:
        return _unavailable("jax_oracle", top, "stack", "jax is not importable")
    try:
        jax.config.update("jax_enable_x64", True)
        f = jax_twin(root_of(g))
        for spec in stack_of(g):
            f = _jax_transform(spec, f)
        try:  # one compiled program: op by op, JAX compiles each operation apart
            expected = jax.jit(f)(*args)
        except Exception:  # noqa: BLE001 - a Python `if` on a value, a static argument
            expected = f(*args)
    except Exception as exc:
        return _unavailable("jax_oracle", top, "stack", "JAX could not run the twin: "
                            + _reason(exc))
    # JAX orders dict keys; s2s keeps insertion order: compare by sorted paths
    got_paths = sorted((p, x) for p, x in flatten(out) if not _is_float0(x))
    want_paths = sorted((p, x) for p, x in flatten(_plain(expected)) if not _is_float0(x))
    if [p for p, _ in got_paths] != [p for p, _ in want_paths]:
        return {"name": "jax_oracle", "level": top, "transform": "stack",
                "status": "failed", "reason": "output structures differ: s2s "
                f"{[p for p, _ in got_paths]}, JAX {[p for p, _ in want_paths]}"}
    got = [x for _, x in got_paths]
    want = [x for _, x in want_paths]
    dtypes = [np.result_type(x) for x in got if _arraylike(x)]
    rtol, atol = _tols(dtypes, (1e-9, 1e-12), (1e-4, 1e-6))
    err, tol = _compare(got, want, rtol, atol)
    return _check("jax_oracle", top, "stack", err, tol, jax=jax.__version__,
                  compares="the same stack applied by JAX to the jax.numpy twin",
                  rtol=rtol, atol=atol)


def _plain(tree: Any) -> Any:
    """JAX's outputs as NumPy arrays, containers kept."""
    return unflatten(tree, [np.asarray(x) for _, x in flatten(tree)])


def _is_float0(x: Any) -> bool:
    dt = getattr(x, "dtype", None)
    return dt is not None and (dt == _float0() or str(dt) == "float0")


# ---- the entry point ---------------------------------------------------------------


def selfcheck(g: Any, *args: Any, seed: int = 0, oracle: bool = True,
              out: Any = None) -> dict[str, Any]:
    """Check the transformed function ``g`` on ``args``; a JSON-serialisable report.

    ``out``: ``g(*args)`` when the caller already has it (else it is computed; an
    error calling ``g`` propagates: a composition s2s refuses is no self-check).
    """
    stack = layers(g)  # outermost first
    if not stack:
        raise SelfCheckError(f"{g!r} is not an s2s transform")
    rng = np.random.default_rng(seed)
    if out is None:
        out = g(*args)
    checks: list[dict[str, Any]] = []
    level_args, level_out = tuple(args), out
    top = len(stack) - 1
    for depth, (spec, obj, inner) in enumerate(stack):
        level = top - depth
        if depth:
            level_out = obj(*level_args)
        checks += _level_checks(spec, level, inner, level_args, level_out, rng)
        level_args = inner_args(spec, level_args)
    if oracle:
        checks.append(_jax_oracle(g, tuple(args), out, top))
    statuses = [c["status"] for c in checks]
    passed = "failed" not in statuses and "passed" in statuses
    return {
        "schema": SCHEMA,
        "seed": seed,
        "stack": stack_of(g),
        "inputs": _describe(tuple(args), "args"),
        "output": _describe(out, "out"),
        "checks": checks,
        "counts": {s: statuses.count(s) for s in ("passed", "failed", "unavailable")},
        "passed": passed,
    }
