"""Rule-table entries for the runtime helpers that the rules of einsum_bar(s),
multi_dot_bars and split_like are written with (s2s/primitives/runtime_prims.py):
einsum_tangent and multi_dot_tangent (a product differentiated along directions,
lists like its operands), einsum_bars and multi_dot_bars with directions, only_at,
add_each and join_like.

Each is checked against a JAX twin defined here from JAX's own derivatives (nested
``jax.jvp`` of ``jnp.einsum`` / ``jnp.linalg.multi_dot``, ``jax.vjp`` of those, and
join_like as the pullback of the split_like twin), so the oracle shares no code with
the helpers.  The E2E functions call the helpers as emitted second derivatives do.
"""

import numpy as np

from rule_table import E2ECase, Row, const, normal
from s2s.runtime import (
    add_each,
    einsum_bars,
    einsum_tangent,
    join_like,
    multi_dot_bars,
    multi_dot_tangent,
    only_at,
    split_like,
    take_along_axis_bar,
)

PICK = np.array([[3, 0, 3, 1], [2, 2, 0, 1]])  # places along axis 1 of a (2, 4), repeated
PICK01 = np.array([[1, 0, 1], [1, 1, 0]])  # places along axis 0 of a (2, 3)
FLAT = np.array([5, 0, 5, 2, 1])  # places in a flattened (2, 3)
FLAT3 = np.array([4, 0, 4])


class Twins:
    """The helpers' JAX twins, written with JAX's derivatives (jax.numpy spelled out,
    so the rows use them without loading this module's twin inside a trace)."""

    def __init__(self):
        import jax
        import jax.numpy as jnp
        from jax_runtime_twins import split_like as jax_split_like

        def operands(xs, n):
            return tuple(xs[i] for i in range(n))

        def along(f, ops, tangents):
            """``f`` of the operands differentiated once along each tangent: nested
            JVPs."""
            n = len(ops)
            for t in tangents:
                f = (lambda f, t: lambda *o: jax.jvp(f, o, operands(t, n))[1])(f, t)
            return f(*operands(ops, n))

        def einsum_tangent(subscripts, ops, *tangents):
            return along(lambda *o: jnp.einsum(subscripts, *o), ops, tangents)

        def einsum_bars(cot, subscripts, ops, *tangents):
            xs = operands(ops, len(ops))
            return jax.vjp(lambda *o: einsum_tangent(subscripts, o, *tangents), *xs)[1](cot)

        def multi_dot_tangent(arrays, *tangents):
            return along(lambda *o: jnp.linalg.multi_dot(list(o)), arrays, tangents)

        def multi_dot_bars(cot, arrays, *tangents):
            xs = operands(arrays, len(arrays))
            return jax.vjp(lambda *o: multi_dot_tangent(o, *tangents), *xs)[1](cot)

        def only_at(items, k, value):
            return tuple(value if j == k else jnp.zeros(jnp.shape(items[j]))
                         for j in range(len(items)))

        def add_each(first, *rest):
            return tuple(first[i] + sum(r[i] for r in rest) for i in range(len(first)))

        def take_along_axis_bar(cot, indices, arr, axis=-1):
            pullback = jax.vjp(lambda a: jnp.take_along_axis(a, indices, axis=axis), arr)[1]
            return pullback(cot)[0]

        def join_like(pieces, cot, arrays, axis):
            pullback = jax.vjp(lambda c: jax_split_like(c, arrays, axis), cot)[1]
            return pullback(tuple(pieces[i] for i in range(len(arrays))))[0]

        self.__dict__.update(locals())


if np.__name__ == "jax.numpy":  # this module's JAX twin: the helpers' JAX twins
    _T = Twins()
    einsum_tangent, einsum_bars, multi_dot_tangent, multi_dot_bars = (  # noqa: F811
        _T.einsum_tangent, _T.einsum_bars, _T.multi_dot_tangent, _T.multi_dot_bars)
    only_at, add_each, join_like, split_like = (  # noqa: F811
        _T.only_at, _T.add_each, _T.join_like, _T.jax_split_like)
    take_along_axis_bar = _T.take_along_axis_bar  # noqa: F811
else:
    _T = Twins()

    def row(prim, variant, args, params=None, **kw):
        """A row for ``prim``, against its JAX twin."""
        return Row(prim, variant, args, params or {}, jax=getattr(_T, prim), **kw)

    def lists(n, *shape):
        """A list of n arrays of one shape; the table's oracle sees them stacked."""
        return lambda r: [r.normal(size=shape) for _ in range(n)]

    ROWS = [
        row("einsum_tangent", "one_direction",
            (const("ij,jk->ik"), lists(2, 3, 3), lists(2, 3, 3))),
        row("einsum_tangent", "two_directions",
            (const("ij,jk,kl->il"), lists(3, 2, 2), lists(3, 2, 2), lists(3, 2, 2))),
        row("einsum_tangent", "diagonal", (const("ii->i"), lists(1, 3, 3), lists(1, 3, 3))),
        row("multi_dot_tangent", "one_direction", (lists(3, 2, 2), lists(3, 2, 2))),
        row("multi_dot_tangent", "two_directions",
            (lists(3, 2, 2), lists(3, 2, 2), lists(3, 2, 2))),
        row("join_like", "rows", (lists(2, 2, 3), normal(4, 3), lists(2, 2, 3), const(0))),
        row("join_like", "columns",
            (lists(2, 3, 2), normal(3, 4), lists(2, 3, 2), const(-1))),
        row("take_along_axis_bar", "axis1", (normal(2, 4), const(PICK), normal(2, 4)),
            {"axis": 1}),
        row("take_along_axis_bar", "axis0", (normal(2, 3), const(PICK01), normal(2, 3)),
            {"axis": 0}),
        row("take_along_axis_bar", "flat", (normal(5,), const(FLAT), normal(2, 3)),
            {"axis": None}),
    ]

W22 = np.array([[0.6, -1.1], [0.2, 1.4]])
W23 = np.array([[0.3, -1.2, 0.7], [1.5, 0.4, -0.8]])
W32 = W23.T * 0.5
W33 = np.array([[0.5, -0.7, 0.3], [1.2, 0.1, -0.9], [-0.4, 0.8, 0.6]])
W3 = np.array([-0.6, 1.1, 0.25])


def f_einsum_tangent(a, b):
    # a (2, 3), b (3, 2): the einsum along one direction, then along two
    once = einsum_tangent("ij,jk->ik", [a, b], [np.cos(a), b * b])
    twice = einsum_tangent("ij,jk->ik", [a, b], [a * a, np.sin(b)], [np.sin(a), b])
    return np.sum(np.sin(once) * W22) + np.sum(twice * W22)


def f_einsum_directions(cot, a, b):
    # cot (2, 2), a (2, 3), b (3, 2)
    bars = einsum_bars(cot, "ij,jk->ik", [a, b], [np.sin(a), b * b])
    moved = only_at([a, b], 0, np.sin(a) * cot[0, 0])
    both = add_each(bars, moved)
    return np.sum(np.sin(both[0]) * W23) + np.sum(np.cos(both[1]) * W32)


def f_multi_dot_directions(a, b, c):
    # a (2, 3), b (3, 3), c (3,): a 1-D last array
    t = multi_dot_tangent([a, b, c], [np.sin(a), b, c * c])
    bars = multi_dot_bars(t, [a, b, c], [a, np.cos(b), c])
    return (np.sum(np.sin(bars[0]) * W23) + np.sum(bars[1] * W33)
            + np.sum(np.cos(bars[2]) * W3))


def f_join_like(x):
    # x (3, 3): a (2, 3) block and a row, cut and joined back
    pieces = split_like(np.sin(x), [x[:2], x[2]], 0)
    back = join_like((pieces[0] * pieces[0], np.cos(pieces[1])), x, [x[:2], x[2]], 0)
    return np.sum(back * W33)


def f_take_along_axis_bar(cot, x):
    # cot (2, 4), x (2, 4): places taken twice get both
    bar = take_along_axis_bar(np.sin(cot) * x, PICK, x, 1)
    flat = take_along_axis_bar(cot[0, :3] * cot[1, :3], FLAT3, x, None)
    return np.sum(np.cos(bar) * x) + np.sum(flat * flat)


if np.__name__ != "jax.numpy":
    E2E = [
        E2ECase(f_einsum_tangent, ("einsum_tangent",), (normal(2, 3), normal(3, 2))),
        E2ECase(f_einsum_directions, ("einsum_bars", "only_at", "add_each"),
                (normal(2, 2), normal(2, 3), normal(3, 2))),
        E2ECase(f_multi_dot_directions, ("multi_dot_tangent", "multi_dot_bars"),
                (normal(2, 3), normal(3, 3), normal(3))),
        E2ECase(f_join_like, ("split_like", "join_like"), (normal(3, 3),)),
        E2ECase(f_take_along_axis_bar, ("take_along_axis_bar",),
                (normal(2, 4), normal(2, 4))),
    ]
