"""``s2s check``: is an edited derivative module still right?

The edited module's entry function runs on random inputs (shapes from ``--shapes``,
``S2S_SHAPES`` in the function's module, else vectors of 3; values from ``--domain``,
else the first of [-1.5, 1.5] and [0.1, 0.9] where the function is finite), and each of
its outputs is compared with two oracles: the derivative s2s generates afresh from the
original function, and central finite differences of the original function (no s2s
code involved).  An output is correct when it agrees with both, at every draw; the
command exits 0 only when every output is correct.
"""

from __future__ import annotations

import argparse
import inspect
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .common import Derivation, TeachError, TransformChoice, derive, load_target
from .emit import read_meta

# ---- finite differences (the independent oracle) ------------------------------------


def _with(args: list[Any], i: int, value: Any) -> list[Any]:
    out = list(args)
    out[i] = value
    return out


def fd_grad(f: Callable, args: list[Any], i: int, h: float = 1e-6) -> Any:
    x = np.asarray(args[i], dtype=float)
    g = np.zeros(x.shape)
    for k in np.ndindex(x.shape):
        step = h * max(1.0, abs(x[k]))
        xp, xm = x.copy(), x.copy()
        xp[k] += step
        xm[k] -= step
        g[k] = (f(*_with(args, i, xp)) - f(*_with(args, i, xm))) / (2 * step)
    return g


def fd_jacobian(f: Callable, args: list[Any], i: int, h: float = 1e-6) -> np.ndarray:
    x = np.asarray(args[i], dtype=float)
    cols = []
    for k in np.ndindex(x.shape):
        step = h * max(1.0, abs(x[k]))
        xp, xm = x.copy(), x.copy()
        xp[k] += step
        xm[k] -= step
        cols.append((np.asarray(f(*_with(args, i, xp)), float)
                     - np.asarray(f(*_with(args, i, xm)), float)) / (2 * step))
    stacked = np.stack(cols)  # (n_in, *out)
    out_shape = stacked.shape[1:]
    return np.moveaxis(stacked, 0, -1).reshape(out_shape + x.shape)


def fd_hessian(f: Callable, args: list[Any], i: int, j: int, h: float = 1e-4) -> np.ndarray:
    xi = np.asarray(args[i], dtype=float)
    xj = np.asarray(args[j], dtype=float)
    H = np.zeros(xi.shape + xj.shape)
    for a in np.ndindex(xi.shape):
        for b in np.ndindex(xj.shape):
            total = 0.0
            for si, sj, sign in ((1, 1, 1), (1, -1, -1), (-1, 1, -1), (-1, -1, 1)):
                new = list(args)
                u = xi.copy()
                u[a] += si * h
                new[i] = u
                v = (u if i == j else xj).copy()
                v[b] += sj * h
                new[j] = v
                total += sign * f(*new)
            H[a + b] = total / (4 * h * h)
    return H


def _fd_one(choice: TransformChoice, f: Callable, args: list[Any],
            tangents: list[Any]) -> Any:
    """The oracle for one (unbatched) example, structured as s2s's API returns it."""
    nums = choice.argnums if isinstance(choice.argnums, tuple) else (choice.argnums,)
    nums = tuple(n % len(args) for n in nums)
    single = not isinstance(choice.argnums, tuple)
    kind = choice.kind
    if kind is None:
        return f(*args)
    if kind in ("grad", "value_and_grad"):
        grads = tuple(fd_grad(f, args, i) for i in nums)
        grads = grads[0] if single else grads
        return (f(*args), grads) if kind == "value_and_grad" else grads
    if kind in ("jacfwd", "jacrev"):
        jacs = tuple(fd_jacobian(f, args, i) for i in nums)
        return jacs[0] if single else jacs
    if kind == "hessian":
        rows = tuple(tuple(fd_hessian(f, args, i, j) for j in nums) for i in nums)
        return rows[0][0] if single else rows
    if kind == "jvp":
        h = 1e-6
        plus = [np.asarray(a, float) + h * np.asarray(t) for a, t in zip(args, tangents)]
        minus = [np.asarray(a, float) - h * np.asarray(t) for a, t in zip(args, tangents)]
        return f(*args), (np.asarray(f(*plus), float) - np.asarray(f(*minus), float)) / (2 * h)
    raise TeachError(f"no finite-difference oracle for {kind}")


def fd_oracle(choice: TransformChoice, f: Callable, args: list[Any],
              tangents: list[Any]) -> Any:
    if not choice.vmapped:
        return _fd_one(choice, f, args, tangents)
    axes = choice.in_axes if isinstance(choice.in_axes, tuple) else (choice.in_axes,) * len(args)
    n = next(np.shape(a)[ax] for a, ax in zip(args, axes) if ax is not None)
    per = [_fd_one(choice, f, [a if ax is None else np.take(a, b, axis=ax)
                               for a, ax in zip(args, axes)], tangents) for b in range(n)]
    return _stack(per)


def _stack(items: list[Any]) -> Any:
    if isinstance(items[0], tuple):
        return tuple(_stack([it[k] for it in items]) for k in range(len(items[0])))
    return np.stack([np.asarray(it, float) for it in items])


# ---- comparing ------------------------------------------------------------------------


def _flatten(value: Any, path: tuple = ()) -> list[tuple[tuple, Any]]:
    if isinstance(value, (tuple, list)):
        return [x for i, v in enumerate(value) for x in _flatten(v, path + (i,))]
    if isinstance(value, dict):
        return [x for k, v in value.items() for x in _flatten(v, path + (k,))]
    return [(path, value)]


def _label(choice: TransformChoice, fname: str, params: list[str], path: tuple) -> str:
    nums = choice.argnums if isinstance(choice.argnums, tuple) else (choice.argnums,)
    names = [params[n % len(params)] for n in nums]
    single = not isinstance(choice.argnums, tuple)
    kind = choice.kind
    tail = " (per example)" if choice.vmapped else ""

    def d(i: int) -> str:
        return f"d{fname}/d{names[i]}"

    if kind is None:
        return f"{fname}{''.join(f'[{p}]' for p in path)}{tail}"
    if kind == "jvp":
        return (f"{fname} (value)" if path[:1] == (0,) else f"{fname}_dot (tangent)") + \
            "".join(f"[{p}]" for p in path[1:])
    if kind == "value_and_grad":
        if path[:1] == (0,):
            return f"{fname} (value){tail}"
        path = path[1:]
    if kind in ("grad", "value_and_grad", "jacfwd", "jacrev"):
        return (d(0) if single else d(path[0])) + tail
    if kind == "hessian":
        if single:
            return f"d²{fname}/d{names[0]}²{tail}"
        return f"d²{fname}/d{names[path[0]]} d{names[path[1]]}{tail}"
    return str(path)


@dataclass
class Row:
    label: str
    shape: tuple
    err_fresh: float = 0.0
    err_fd: float = 0.0
    oracle_gap: float = 0.0
    problem: str = ""
    verdict: str = "correct"


def _compare(row: Row, got: Any, fresh: Any, fd: Any, rtol: float, fd_rtol: float) -> None:
    fresh = np.asarray(fresh, float)
    fd = np.asarray(fd, float)
    try:
        got = np.asarray(got, float)
    except (TypeError, ValueError):
        row.problem = f"not an array ({type(got).__name__})"
        return
    if got.shape != fresh.shape:
        row.problem = f"shape {got.shape}, expected {fresh.shape}"
        return
    if not np.all(np.isfinite(got)):
        row.problem = "not finite"
        return
    scale = max(float(np.max(np.abs(fresh), initial=0.0)), 1e-3)
    e_fresh = float(np.max(np.abs(got - fresh), initial=0.0))
    e_fd = float(np.max(np.abs(got - fd), initial=0.0))
    gap = float(np.max(np.abs(fresh - fd), initial=0.0))
    row.err_fresh = max(row.err_fresh, e_fresh)
    row.err_fd = max(row.err_fd, e_fd)
    row.oracle_gap = max(row.oracle_gap, gap)
    if gap > fd_rtol * scale:
        row.problem = row.problem or (
            "the two oracles disagree here (finite differences vs s2s): a kink or "
            "branch near the inputs? try --domain or --seed")
    elif e_fresh > rtol * scale or e_fd > fd_rtol * scale:
        row.problem = row.problem or "wrong values"


def _load_module(path: Path) -> types.ModuleType:
    module = types.ModuleType(f"s2s_checked_{path.stem}")
    module.__file__ = str(path)
    code = compile(path.read_text(), str(path), "exec")
    exec(code, module.__dict__)
    return module


def _entry(module: types.ModuleType, args: argparse.Namespace, meta: dict | None,
           d: Derivation) -> Callable:
    names = []
    if args.entry:
        names.append(args.entry)
    if meta and meta.get("entry"):
        names.append(meta["entry"])
    if d.choice.kind in ("hessian", "jacfwd"):  # the wrapper s2s emit writes
        names += [f"{d.target.name}_{d.choice.kind}_full", f"{d.target.name}_{d.choice.kind}"]
    else:
        names.append(d.entry)
    for n in names:
        fn = getattr(module, n, None)
        if callable(fn):
            return fn
    raise TeachError(f"{args.module} defines none of {', '.join(dict.fromkeys(names))}: "
                     "name the function to check with --entry")


def _choice_from_meta(meta: dict | None) -> dict | None:
    if not meta:
        return None
    t = dict(meta["transform"])
    if isinstance(t.get("argnums"), list):
        t["argnums"] = tuple(t["argnums"])
    if isinstance(t.get("in_axes"), list):
        t["in_axes"] = tuple(t["in_axes"])
    return t


def check(args: argparse.Namespace, out: Any = None) -> int:
    import sys

    out = out or sys.stdout
    path = Path(args.module)
    if not path.is_file():
        raise TeachError(f"no such file: {args.module}")
    meta = read_meta(path.read_text())
    target = load_target(args.target)
    choice = TransformChoice.from_args(args, default=_choice_from_meta(meta))
    if meta and meta.get("sha256") and meta["sha256"] != target.source_hash():
        print(f"note: {target.spec} changed since {path} was emitted "
              "(its sha256 differs): checking against the function as it is now", file=out)
    try:
        module = _load_module(path)
    except Exception as exc:
        print(f"{path}: cannot run the module: {type(exc).__name__}: {exc}", file=out)
        return 1
    params = list(inspect.signature(target.fn).parameters)
    rows: dict[tuple, Row] = {}
    entry_fn = None
    for trial in range(args.trials):
        d = derive(target, choice, args.shapes, args.domain, args.seed + trial, args.batch,
                   args.example)
        if entry_fn is None:
            entry_fn = _entry(module, args, meta, d)
            print(f"checking {entry_fn.__name__} in {path} against "
                  f"{choice.describe(target.name)}, {args.trials} random draws "
                  f"(shapes {', '.join(f'{n}={np.shape(a)}' for n, a in zip(params, d.args))})",
                  file=out)
        fresh = d.result
        fd = fd_oracle(choice, target.fn, d.args, d.tangents)
        call = d.args + (d.tangents if choice.kind == "jvp" else [])
        try:
            got = entry_fn(*call)
        except Exception as exc:
            print(f"  the edited {entry_fn.__name__} raised {type(exc).__name__}: {exc}",
                  file=out)
            print("INCORRECT: the edited module fails on these inputs", file=out)
            return 1
        fresh_leaves = _flatten(fresh)
        fd_leaves = dict(_flatten(fd))
        got_leaves = dict(_flatten(got)) if isinstance(got, (tuple, list, dict)) == isinstance(
            fresh, (tuple, list, dict)) else {(): got}
        for p, fresh_leaf in fresh_leaves:
            row = rows.setdefault(p, Row(_label(choice, target.name, params, p),
                                         np.shape(fresh_leaf)))
            if p not in got_leaves:
                row.problem = row.problem or "missing from the edited result"
                continue
            _compare(row, got_leaves[p], fresh_leaf, fd_leaves[p], args.rtol, args.fd_rtol)
    width = max(len(r.label) for r in rows.values())
    print(f"  {'output':<{width}}  {'shape':<10} {'max |edit - s2s|':>17} "
          f"{'max |edit - fd|':>16}  verdict", file=out)
    bad = 0
    for r in rows.values():
        verdict = "correct" if not r.problem else f"WRONG: {r.problem}"
        if "oracles disagree" in r.problem:
            verdict = f"UNSURE: {r.problem}"
        bad += bool(r.problem)
        print(f"  {r.label:<{width}}  {str(r.shape):<10} {r.err_fresh:>17.2e} "
              f"{r.err_fd:>16.2e}  {verdict}", file=out)
    if bad:
        print(f"{bad} of {len(rows)} outputs are not correct", file=out)
        return 1
    print(f"all {len(rows)} outputs correct", file=out)
    return 0
