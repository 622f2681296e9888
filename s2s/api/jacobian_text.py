"""The text of a Jacobian function (``jacfwd``/``jacrev`` as code to transform again):
one loop per argument leaf over its basis of tangents (forward) or per output leaf over
its basis of cotangents (reverse), each filling its blocks of the Jacobian, laid out as
JAX lays it out (the output's tree, then the arguments')."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..ir.kinds import Kind, Leaf, leaf_paths, literal, path_text
from ..transforms.module import shared_default


@dataclass
class JacobianPlan:
    """What the text is written from: the emitted JVP/VJP it calls (``inner``), the
    function's parameters, defaults and argument structures, and the output's."""

    mode: str  # "jacfwd" or "jacrev"
    name: str
    callee: str  # the user's function's name in the text
    fun: Callable
    inner: Callable
    params: list[str]
    defaults: dict[str, Any]
    kinds: tuple[Kind, ...]
    argnums: tuple[int, ...]
    several: bool  # a tuple of Jacobians, one per argument
    out_kind: Kind
    npassed: int  # how many arguments the call passes


def jacobian_text(plan: JacobianPlan) -> tuple[str, dict[str, Any]]:
    """``(text, namespace)`` of the Jacobian function ``plan.name``."""
    params, kinds, argnums, several = plan.params, plan.kinds, plan.argnums, plan.several
    out_kind, inner, name, callee = plan.out_kind, plan.inner, plan.name, plan.callee
    call_args = ", ".join(params)
    taken = set(params) | {callee, inner.__name__, name, "np"}

    def local(base: str) -> str:  # a local name no parameter uses (`n`, `k`, ...)
        while base in taken:
            base += "_"
        taken.add(base)
        return base

    def suffix(i: int, path: tuple) -> str:
        """Names for one leaf's block: ``_x`` of argument x when there are several,
        ``_w1`` for ``params["w1"]`` (``_params_w1`` when there are several)."""
        parts = ([params[i]] if several else []) + [_name_part(k) for k in path]
        return "".join(f"_{p}" for p in parts)

    out = local("out")
    leaves = [(i, path) for i in argnums for path in leaf_paths(kinds[i])]
    outs = leaf_paths(out_kind)  # [()] for an array
    out_sfx = {o: "".join(f"_{_name_part(key)}" for key in o) for o in outs}
    k = local("k")
    body = [f"{out} = {callee}({call_args})"]
    # (output leaf, argument, argument leaf) -> its block of the Jacobian
    blocks: dict[tuple[tuple, int, tuple], str] = {}
    column = row = ""  # the name of one call's result, where it is a container
    if plan.mode == "jacfwd":
        # one loop per argument leaf over its basis directions (zero tangents for
        # the other leaves) fills a block for each output leaf
        for i, path in leaves:
            x = path_text(params[i], path)
            sfx = suffix(i, path)
            n, basis = local(f"n{sfx}"), local(f"basis{sfx}")
            columns = {o: local(f"columns{sfx}{out_sfx[o]}") for o in outs}
            tangents = ", ".join(literal(kinds[j], lambda q, j=j: (
                f"{basis}[{k}]" if (j, q) == (i, path)
                else f"np.zeros_like({path_text(params[j], q)})")) for j in argnums)
            # the emitted JVP takes the passed arguments, their tangents, then the
            # parameters left at their defaults
            jvp = f"{inner.__name__}(" + ", ".join(
                params[:plan.npassed] + [tangents] + params[plan.npassed:]) + ")"
            body += [f"{n} = np.size({x})", _basis_line(basis, n, x)]
            body += [_zeros_line(c, n, path_text(out, o)) for o, c in columns.items()]
            body.append(f"for {k} in range({n}):")
            if isinstance(out_kind, Leaf):
                body.append(f"    {columns[()]}[{k}] = {jvp}")
            else:
                column = column or local("column")
                body.append(f"    {column} = {jvp}")
                body += [f"    {c}[{k}] = {path_text(column, o)}"
                         for o, c in columns.items()]
            for o, c in columns.items():
                jac = local(f"jac{sfx}{out_sfx[o]}")
                body += [f"{jac} = np.moveaxis({c}, 0, -1)",
                         f"{jac} = np.reshape({jac}, np.shape({path_text(out, o)}) "
                         f"+ np.shape({x}))"]
                blocks[(o, i, path)] = jac
    else:
        # one loop per output leaf over its basis of cotangents: each backward pass
        # gives a row of every argument leaf's block
        for o in outs:
            y = path_text(out, o)
            n, basis = local(f"n{out_sfx[o]}"), local(f"basis{out_sfx[o]}")
            body += [f"{n} = np.size({y})", _basis_line(basis, n, y)]
            rows = {(i, path): local(f"rows{out_sfx[o]}{suffix(i, path)}")
                    for i, path in leaves}
            body += [_zeros_line(r, n, path_text(params[i], path))
                     for (i, path), r in rows.items()]
            cotangent = literal(out_kind, lambda q: f"{basis}[{k}]" if q == o
                                else f"np.zeros_like({path_text(out, q)})")
            vjp = f"{inner.__name__}({call_args}, {cotangent})"
            body.append(f"for {k} in range({n}):")
            if several or any(path for _, path in leaves):
                row = row or local("row")
                body.append(f"    {row} = {vjp}")
                body += [f"    {r}[{k}] = {path_text(row, ((argnums.index(i),) if several else ()) + path)}"
                         for (i, path), r in rows.items()]
            else:
                body.append(f"    {rows[leaves[0]]}[{k}] = {vjp}")
            for (i, path), r in rows.items():
                blocks[(o, i, path)] = (f"np.reshape({r}, np.shape({y}) + "
                                        f"np.shape({path_text(params[i], path)}))")

    def per_output(o: tuple) -> str:  # JAX's layout: out-tree, then in-trees
        results = [literal(kinds[i], lambda q, i=i: blocks[(o, i, q)]) for i in argnums]
        if not several:
            return results[0]
        return "(" + ", ".join(results) + ("," if len(results) == 1 else "") + ")"

    body.append(f"return {literal(out_kind, per_output)}")
    namespace = {"np": np, inner.__name__: inner, callee: plan.fun}
    signature = _signature(plan, namespace)
    text = f"import numpy as np\n\n\ndef {name}({', '.join(signature)}):\n" + "".join(
        f"    {line}\n" for line in body)
    return text, namespace


def _signature(plan: JacobianPlan, namespace: dict[str, Any]) -> list[str]:
    """The parameters with the function's defaults, for a caller that leaves them out:
    a default that prints as itself is written; another is bound in ``namespace``."""
    signature = []
    for p in plan.params:  # the function's defaults, for a caller that leaves them out
        if p not in plan.defaults:
            signature.append(p)
            continue
        value = plan.defaults[p]
        try:
            as_text = type(eval(repr(value), {})) is type(value) and (  # noqa: S307
                not shared_default(value))  # (the caller's object, shared)
        except Exception:
            as_text = False
        if not as_text:
            namespace[f"{p}_default"] = value
        signature.append(f"{p}={repr(value) if as_text else p + '_default'}")
    return signature


def _name_part(key: Any) -> str:
    """A dict key or a position as part of a Python name (``"w1"`` -> ``w1``)."""
    text = "".join(c if c.isalnum() or c == "_" else "_" for c in str(key))
    return text or "key"


# (in the dtypes JAX computes in: a basis in its value's dtype, each block in its
# value's: float32 stays float32 under any transform of the emitted loop)
def _basis_line(basis: str, n: str, like: str) -> str:
    return (f"{basis} = np.reshape(np.eye({n}), ({n},) + np.shape({like}))"
            f".astype(np.asarray({like}).dtype)")


def _zeros_line(name: str, n: str, like: str) -> str:
    return f"{name} = np.zeros(({n},) + np.shape({like}), dtype=np.asarray({like}).dtype)"
