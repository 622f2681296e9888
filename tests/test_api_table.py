"""JAX's transformation API, entry by entry, with s2s's status: each row calls s2s on a
tiny input and compares with JAX on the same input (or states that s2s refuses it,
with the first line of its message).  docs/comparison.md carries the table this
renders, between markers; ``python tools/errors_doc.py`` rewrites it and
test_the_comparison_page_is_current fails when it is stale.

Status: *supported* (the values equal JAX's), *accepted, no effect* (the option is
taken, the values equal JAX's, nothing changes in s2s), *refused: ...* (s2s raises).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import api_table_fns as F
import collective_jax_fns as FJ
import jax
import numpy as np
import pytest
from support import jax_twin

import s2s

jax.config.update("jax_enable_x64", True)  # (also when tools/errors_doc.py imports this)
J = jax_twin(F)
JX = jax_twin(FJ)
ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "comparison.md"
BEGIN, END = "<!-- api-table: begin (tests/test_api_table.py) -->", "<!-- api-table: end -->"
X = np.array([0.3, -1.2, 2.0])
XS = np.arange(6.0).reshape(3, 2) / 4 + 0.5


def same(got: Any, want: Any) -> None:
    """Equal pytrees of arrays (leaves in JAX's order), within float64 tolerance."""
    g, w = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(g) == len(w), (got, want)
    for a, b in zip(g, w):
        np.testing.assert_allclose(np.asarray(a, float), np.asarray(b, float),
                                   rtol=1e-10, atol=1e-12)


@dataclass
class Row:
    entry: str  # JAX's name
    option: str  # "" for the entry itself
    run: Callable[[], None]  # calls s2s and JAX and compares (raises where s2s refuses)
    no_effect: bool = False


def _vjp(fn, jfn, x, ct):
    return same(s2s.vjp(fn, x)[1](ct), jax.vjp(jfn, x)[1](ct))


def same_complex(got: Any, want: Any) -> None:
    """``same`` of the real and the imaginary parts."""
    same(np.real(got), np.real(want))
    same(np.imag(got), np.imag(want))


def _jit_same(**options):
    return lambda: same(s2s.jit(F.loss, **options)(X), jax.jit(J.loss, **options)(X))


def _same_type(got, want):
    """Equal values, and the same node types (by name: s2s's and JAX's NamedTuples are
    namesakes from two modules)."""
    def types(t):
        if isinstance(t, (tuple, list)):
            return (type(t).__name__, tuple(types(c) for c in t))
        return "leaf"

    assert types(got) == types(want), (types(got), types(want))
    same(got, want)


def _checkpointed(policy=None, jpolicy=None, **options):
    return lambda: same(
        s2s.grad(s2s.checkpoint(F.looped, policy=policy, **options))(X),
        jax.grad(jax.checkpoint(J.looped, policy=jpolicy, **options))(X))


def _vmapped(name, **options):
    return lambda: same(s2s.vmap(getattr(F, name), **options)(XS),
                        jax.vmap(getattr(J, name), **options)(XS))


ROWS = [
    Row("grad", "", lambda: same(s2s.grad(F.loss)(X), jax.grad(J.loss)(X))),
    Row("grad", "argnums", lambda: same(s2s.grad(F.loss2, argnums=(0, 1))(X, X),
                                        jax.grad(J.loss2, argnums=(0, 1))(X, X))),
    Row("grad", "has_aux", lambda: same(s2s.grad(F.with_aux, has_aux=True)(X),
                                        jax.grad(J.with_aux, has_aux=True)(X))),
    Row("grad", "holomorphic", lambda: same_complex(
        s2s.grad(F.loss, holomorphic=True)(X + 0.5j),
        jax.grad(J.loss, holomorphic=True)(X + 0.5j))),
    Row("grad", "allow_int", lambda: same(
        s2s.grad(F.count_loss, argnums=(0, 1), allow_int=True)(X, 3)[0],
        jax.grad(J.count_loss, argnums=(0, 1), allow_int=True)(X, 3)[0])),
    Row("value_and_grad", "", lambda: same(s2s.value_and_grad(F.loss)(X),
                                           jax.value_and_grad(J.loss)(X))),
    Row("value_and_grad", "has_aux", lambda: same(
        s2s.value_and_grad(F.with_aux, has_aux=True)(X),
        jax.value_and_grad(J.with_aux, has_aux=True)(X))),
    Row("vjp", "", lambda: _vjp(F.vector, J.vector, X, X[::-1])),
    Row("vjp", "has_aux", lambda: same(s2s.vjp(F.with_aux, X, has_aux=True)[2],
                                       jax.vjp(J.with_aux, X, has_aux=True)[2])),
    Row("jvp", "", lambda: same(s2s.jvp(F.vector, (X,), (X,)), jax.jvp(J.vector, (X,), (X,)))),
    Row("jvp", "has_aux", lambda: same(s2s.jvp(F.with_aux, (X,), (X,), has_aux=True),
                                       jax.jvp(J.with_aux, (X,), (X,), has_aux=True))),
    Row("linearize", "", lambda: same(s2s.linearize(F.vector, X)[1](X[::-1]),
                                      jax.linearize(J.vector, X)[1](X[::-1]))),
    Row("linear_transpose", "", lambda: same(s2s.linear_transpose(F.linear, X)(X),
                                             jax.linear_transpose(J.linear, X)(X))),
    Row("jacfwd", "", lambda: same(s2s.jacfwd(F.vector)(X), jax.jacfwd(J.vector)(X))),
    Row("jacfwd", "argnums", lambda: same(s2s.jacfwd(F.scaled, argnums=1)(X, 2.0),
                                          jax.jacfwd(J.scaled, argnums=1)(X, 2.0))),
    Row("jacfwd", "has_aux", lambda: same(s2s.jacfwd(F.with_aux, has_aux=True)(X),
                                          jax.jacfwd(J.with_aux, has_aux=True)(X))),
    Row("jacfwd", "holomorphic", lambda: same_complex(
        s2s.jacfwd(F.vector, holomorphic=True)(X + 0.5j),
        jax.jacfwd(J.vector, holomorphic=True)(X + 0.5j))),
    Row("jacrev", "", lambda: same(s2s.jacrev(F.vector)(X), jax.jacrev(J.vector)(X))),
    Row("jacrev", "argnums", lambda: same(s2s.jacrev(F.scaled, argnums=1)(X, 2.0),
                                          jax.jacrev(J.scaled, argnums=1)(X, 2.0))),
    Row("jacrev", "has_aux", lambda: same(s2s.jacrev(F.with_aux, has_aux=True)(X),
                                          jax.jacrev(J.with_aux, has_aux=True)(X))),
    Row("jacfwd", "allow_int", lambda: s2s.jacfwd(F.scaled, allow_int=True)(X, 3)),
    Row("jacrev", "allow_int", lambda: same(
        s2s.jacrev(F.scaled, argnums=(0, 1), allow_int=True)(X, 3),
        jax.jacrev(J.scaled, argnums=(0, 1), allow_int=True)(X, 3))),
    Row("jacrev", "holomorphic", lambda: s2s.jacrev(F.vector, holomorphic=True)(X)),
    Row("hessian", "", lambda: same(s2s.hessian(F.loss)(X), jax.hessian(J.loss)(X))),
    Row("hessian", "argnums", lambda: same(s2s.hessian(F.loss2, argnums=1)(X, X),
                                           jax.hessian(J.loss2, argnums=1)(X, X))),
    Row("hessian", "holomorphic", lambda: s2s.hessian(F.loss, holomorphic=True)(X)),
    Row("vmap", "", _vmapped("vector")),
    Row("vmap", "in_axes", lambda: same(s2s.vmap(F.scaled, in_axes=(1, None))(XS, 2.0),
                                        jax.vmap(J.scaled, in_axes=(1, None))(XS, 2.0))),
    Row("vmap", "out_axes", _vmapped("vector", out_axes=1)),
    Row("vmap", "axis_name", _vmapped("centred", axis_name="b")),
    Row("vmap", "axis_size", lambda: same(
        s2s.vmap(F.scaled, in_axes=(0, None), axis_size=3)(XS, 2.0),
        jax.vmap(J.scaled, in_axes=(0, None), axis_size=3)(XS, 2.0))),
    Row("vmap", "spmd_axis_name", lambda: s2s.vmap(F.vector, spmd_axis_name="b")(XS)),
    Row("jit", "", _jit_same()),
    Row("jit", "static_argnums", lambda: same(
        s2s.jit(F.scaled, static_argnums=1)(X, 2.0), jax.jit(J.scaled, static_argnums=1)(X, 2.0))),
    Row("jit", "static_argnames", lambda: same(
        s2s.jit(F.scaled, static_argnames="k")(X, k=2.0),
        jax.jit(J.scaled, static_argnames="k")(X, k=2.0))),
    Row("jit", "donate_argnums", _jit_same(donate_argnums=0), no_effect=True),
    Row("jit", "donate_argnames", _jit_same(donate_argnames="x"), no_effect=True),
    Row("jit", "keep_unused", _jit_same(keep_unused=True), no_effect=True),
    Row("jit", "inline", _jit_same(inline=True), no_effect=True),
    Row("jit", "backend", lambda: same(s2s.jit(F.loss, backend="jax")(X), jax.jit(J.loss)(X))),
    Row("checkpoint / remat", "", lambda: same(
        s2s.grad(s2s.checkpoint(F.looped))(X), jax.grad(jax.checkpoint(J.looped))(X))),
    Row("checkpoint / remat", "policy", lambda: [_checkpointed(policy=getattr(
        s2s.checkpoint_policies, name), jpolicy=getattr(jax.checkpoint_policies, name))()
        for name in ("nothing_saveable", "everything_saveable", "dots_saveable",
                     "dots_with_no_batch_dims_saveable")]),
    Row("checkpoint / remat", "policy=save_anything_except_these_names", _checkpointed(
        policy=s2s.checkpoint_policies.save_anything_except_these_names("h"),
        jpolicy=jax.checkpoint_policies.save_anything_except_these_names("h"))),
    Row("checkpoint / remat", "policy=offload_dot_with_no_batch_dims", lambda: s2s.checkpoint(
        F.looped, policy=jax.checkpoint_policies.offload_dot_with_no_batch_dims(
            "device", "pinned_host"))),
    Row("checkpoint / remat", "policy=(a function of your own)", lambda: s2s.checkpoint(
        F.looped, policy=lambda prim, *args, **params: True)),
    Row("checkpoint / remat", "prevent_cse", _checkpointed(prevent_cse=False), no_effect=True),
    Row("custom_jvp, custom_vjp", "", lambda: same(s2s.grad(F.custom_loss)(X),
                                                   jax.grad(J.custom_loss)(X))),
    Row("lax.stop_gradient", "", lambda: same(s2s.grad(F.stopped)(X), jax.grad(J.stopped)(X))),
    Row("lax.stop_gradient", "written jax.lax.stop_gradient in the function", lambda: same(
        s2s.grad(FJ.stopped)(X), jax.grad(JX.stopped)(X))),
    Row("eval_shape", "", lambda: same(
        [tuple(s2s.eval_shape(F.vector, X).shape)], [tuple(jax.eval_shape(J.vector, X).shape)])),
    Row("tree_util.tree_map, tree_leaves", "", lambda: same(s2s.tree_util.tree_leaves(s2s.tree_util.tree_map(
            np.sin, {"b": X, "a": (X, None)})), jax.tree_util.tree_leaves(
            jax.tree_util.tree_map(np.sin, {"b": X, "a": (X, None)})))),
    Row("tree_util.register_pytree_node_class", "", lambda: same(
        s2s.grad(lambda p: np.sum(p.a * p.b))(F.Pair(X, X)).a,
        jax.grad(lambda p: (p.a * p.b).sum())(J.Pair(X, X)).a)),
    Row("vmap", "of a bound method reading self", lambda: same(
        s2s.vmap(F.Scale(2.0).apply)(XS), jax.vmap(J.Scale(2.0).apply)(XS))),
    Row("vmap, grad, jacrev", "of a callable object reading self", lambda: (
        same(s2s.vmap(F.Linear(X))(XS[:, :1] * X), jax.vmap(J.Linear(X))(XS[:, :1] * X)),
        same(s2s.grad(F.LinearLoss(X))(X), jax.grad(J.LinearLoss(X))(X)),
        same(s2s.jacrev(F.Linear(X))(X), jax.jacrev(J.Linear(X))(X)))),
    Row("jvp, vjp", "of a bound method reading self", lambda: (same(
        s2s.jvp(F.Linear(X).loss, (X,), (X,)), jax.jvp(J.Linear(X).loss, (X,), (X,))),
        _vjp(F.Linear(X).predict, J.Linear(X).predict, X, X[::-1]))),
    Row("jacfwd, jacrev, hessian", "of a bound method reading self", lambda: (
        same(s2s.jacfwd(F.Linear(X).predict)(X), jax.jacfwd(J.Linear(X).predict)(X)),
        same(s2s.jacrev(F.Linear(X).predict)(X), jax.jacrev(J.Linear(X).predict)(X)),
        same(s2s.hessian(F.Linear(X).loss)(X), jax.hessian(J.Linear(X).loss)(X)))),
    Row("jvp, vjp", "of a function returning a NamedTuple", lambda: (
        _same_type(s2s.jvp(F.as_pair, (X,), (X,)), jax.jvp(J.as_pair, (X,), (X,))),
        _same_type(s2s.vjp(F.as_pair, X)[0], jax.vjp(J.as_pair, X)[0]),
        same(s2s.vjp(F.as_pair, X)[1](F.Out(X, X)), jax.vjp(J.as_pair, X)[1](J.Out(X, X))))),
    Row("vmap, jit", "of a function returning a NamedTuple", lambda: (
        _same_type(s2s.vmap(F.as_pair)(XS), jax.vmap(J.as_pair)(XS)),
        _same_type(s2s.jit(F.as_pair)(X), jax.jit(J.as_pair)(X)))),
    Row("jacfwd, jacrev", "of a function returning a NamedTuple", lambda: (
        _same_type(s2s.jacfwd(F.as_pair)(X), jax.jacfwd(J.as_pair)(X)),
        _same_type(s2s.jacrev(F.as_pair)(X), jax.jacrev(J.as_pair)(X)))),
    Row("value_and_grad", "has_aux returning a NamedTuple", lambda: _same_type(
        s2s.value_and_grad(F.pair_aux, has_aux=True)(X),
        jax.value_and_grad(J.pair_aux, has_aux=True)(X))),
    Row("grad", "of a NamedTuple read by position (p[0], a, b = p)", lambda: _same_type(
        s2s.grad(F.by_position)(F.Out(X, X[::-1])), jax.grad(J.by_position)(J.Out(X, X[::-1])))),
    Row("lax.psum, pmean", "", lambda: (_vmapped("centred", axis_name="b")(),
                                        _vmapped("summed", axis_name="b")())),
    Row("lax.pmax, pmin", "", _vmapped("spread", axis_name="b")),
    Row("lax.all_gather, axis_size", "", _vmapped("gathered", axis_name="b")),
    Row("lax.axis_index", "", _vmapped("indexed", axis_name="b")),
    Row("lax.psum, pmean", "written jax.lax.psum in the function", lambda: same(
        s2s.vmap(FJ.jax_spelled, axis_name="batch")(XS),
        jax.vmap(JX.jax_spelled, axis_name="batch")(XS))),
    Row("lax.psum, pmean, pmax, pmin, axis_size", "a tuple of axis names", lambda: same(
        s2s.vmap(s2s.vmap(FJ.both_axes, axis_name="rows"), axis_name="cols")(XS[None]),
        jax.vmap(jax.vmap(JX.both_axes, axis_name="rows"), axis_name="cols")(XS[None]))),
    Row("lax.all_gather, axis_index", "a tuple of axis names", lambda: (same(
        s2s.vmap(s2s.vmap(FJ.index_two, axis_name="rows"), axis_name="cols")(XS[None]),
        jax.vmap(jax.vmap(JX.index_two, axis_name="rows"), axis_name="cols")(XS[None])),
        same(s2s.vmap(s2s.vmap(FJ.gather_two, axis_name="rows"), axis_name="cols")(XS[None]),
             jax.vmap(jax.vmap(_gathered_by_psum, axis_name="rows"), axis_name="cols")(
                 XS[None])))),
    Row("lax.psum, pmean under grad", "", lambda: same(
        s2s.vmap(s2s.grad(lambda x: np.sum(F.centred(x) ** 2 * x)), axis_name="b")(XS),
        jax.vmap(jax.grad(lambda x: (J.centred(x) ** 2 * x).sum()), axis_name="b")(XS))),
]


def _gathered_by_psum(v):
    """JAX's all_gather over ("rows", "cols") as its psum of a one-hot of axis_index
    (JAX's vmap of all_gather itself stops at a tuple of names, jax 0.10)."""
    n = jax.lax.psum(1, ("rows", "cols"))
    one_hot = jax.nn.one_hot(jax.lax.axis_index(("rows", "cols")), n, dtype=v.dtype)
    return jax.lax.psum(one_hot.reshape((n,) + (1,) * v.ndim) * v, ("rows", "cols"))


def status(row: Row) -> str:
    try:
        row.run()
    except AssertionError:
        raise
    except Exception as exc:  # noqa: BLE001 - a refusal, reported by its first line
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        first = re.sub(r" at 0x[0-9a-f]+", "", first).replace(f"{ROOT}/", "")
        return f"refused: {type(exc).__name__}: {first}"
    return "accepted, no effect" if row.no_effect else "supported"


def table() -> str:
    lines = ["| JAX | option | s2s |", "|---|---|---|"]
    for row in ROWS:
        option = f"`{row.option}`" if row.option else ""
        text = status(row).replace("|", "\\|")
        lines.append(f"| `jax.{row.entry}` | {option} | {text} |")
    return "\n".join(lines)


def page_text() -> str:
    text = PAGE.read_text()
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{table()}\n{END}{tail}"


@pytest.mark.parametrize("row", ROWS, ids=[f"{r.entry}-{r.option}" for r in ROWS])
def test_each_row_runs_as_its_status_says(row: Row) -> None:
    assert status(row)  # (a wrong value fails here: an AssertionError propagates)


@pytest.mark.slow
def test_the_comparison_page_is_current() -> None:
    assert PAGE.read_text() == page_text(), (
        "docs/comparison.md's API table is stale: run python tools/errors_doc.py")
