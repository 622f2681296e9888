"""Rule-table entries for the runtime's helpers (s2s/primitives/runtime_prims.py).

Emitted derivatives call these helpers, so a second derivative differentiates them:
each is a primitive with rules, checked here against an independent JAX twin
(tests/jax_runtime_twins.py: JAX's own pullbacks, gradients and nested JVPs).
Rank cases: matmul and dot of vectors, matrices and stacks; unbroadcast over added
and stretched axes; axis None, int, negative and tuple; zeros inside products.

The E2E functions below call the helpers directly, as emitted code does, and go
through ``s2s.grad``: the rules inline and the result matches ``jax.grad`` of the
same source, where the module's JAX twin imports the JAX twins of the helpers.
"""

import numpy as np
from rule_rows_linalg import spread
from rule_table import E2ECase, Row, const, normal, uniform

from s2s.runtime import (
    cumprod_bar,
    cumprod_bar_jet,
    cumprod_jet,
    cumprod_tangent,
    cumprod_tangent2,
    cov_weights,
    det_cofactor,
    dot_lhs_bar,
    dot_rhs_bar,
    einsum_bar,
    einsum_bars,
    in_place,
    kron_lhs_bar,
    kron_rhs_bar,
    list_item,
    matmul_lhs_bar,
    matmul_rhs_bar,
    matrix_norm_grad,
    multi_dot_bars,
    norm_grad,
    own_copy,
    prod_of_others,
    prod_of_others_jet,
    python_float,
    real_only,
    rhs_columns,
    sinc_taylor,
    special_digamma,
    special_erf,
    special_erfc,
    special_erfinv,
    special_expit,
    special_gammaln,
    special_log_softmax,
    special_logit,
    special_logsumexp,
    special_polygamma,
    special_softmax,
    special_xlog1py,
    special_xlogy,
    split_like,
    tensordot_lhs_bar,
    tensordot_rhs_bar,
    unbroadcast,
    vector_norm_grad,
    weights_along,
)

if np.__name__ == "jax.numpy":  # this module's JAX twin: the helpers' JAX twins
    from jax_runtime_twins import (  # noqa: F811
        cumprod_bar,
        cumprod_bar_jet,
        cumprod_jet,
        cumprod_tangent,
        cumprod_tangent2,
        cov_weights,
        det_cofactor,
        dot_lhs_bar,
        dot_rhs_bar,
        einsum_bar,
        einsum_bars,
        in_place,
        kron_lhs_bar,
        kron_rhs_bar,
        list_item,
        matmul_lhs_bar,
        matmul_rhs_bar,
        matrix_norm_grad,
        multi_dot_bars,
        norm_grad,
        own_copy,
        prod_of_others,
        prod_of_others_jet,
        python_float,
        real_only,
        rhs_columns,
        sinc_taylor,
        special_digamma,
        special_erf,
        special_erfc,
        special_erfinv,
        special_expit,
        special_gammaln,
        special_log_softmax,
        special_logit,
        special_logsumexp,
        special_polygamma,
        special_softmax,
        special_xlog1py,
        special_xlogy,
        split_like,
        tensordot_lhs_bar,
        tensordot_rhs_bar,
        unbroadcast,
        vector_norm_grad,
        weights_along,
    )
else:
    import jax_runtime_twins as T


    def row(prim, variant, args, params=None, **kw):
        """A row for the helper ``prim``, against its JAX twin of the same name."""
        return Row(prim, variant, args, params or {}, jax=getattr(T, prim), **kw)


    def shaped(fn, *shapes, **kw):
        """The shape of ``fn``'s result on zeros of these shapes (a cotangent's)."""
        return np.shape(fn(*(np.zeros(s) for s in shapes), **kw))


    def arrays(*shapes):
        """A list of arrays; the table's oracle sees them stacked (equal shapes)."""
        return lambda r: [r.normal(size=s) for s in shapes]


    def with_zeros(*shape):
        """Normal values with zeros, two of them in one row."""
        def draw(r):
            x = r.normal(size=shape)
            x.flat[[i % x.size for i in (0, 2, 5, 9)]] = 0.0
            return x
        return draw


    def jet(m, *shape, zeros=False):
        """A jet of 2**m coefficients; its value (coefficient 0) with zeros if asked."""
        def draw(r):
            x = r.normal(size=(2**m, *shape))
            if zeros:
                x[0].flat[[i % x[0].size for i in (0, 2, 5, 9)]] = 0.0
            return x
        return draw


    def positive(*shape):
        return uniform(1.0, 2.0)(*shape)


    def nonzero(*shape):
        return lambda r: r.uniform(0.5, 2.0, size=shape) * r.choice([-1.0, 1.0], shape)


    def moved_spread(m, n, batch, axes):
        """Matrices with well separated singular values, their axes at ``axes``."""
        return lambda r: np.moveaxis(spread(m, n, batch)(r), (-2, -1), axes)


    def pair_rows(lhs, rhs, product, cases, params=None):
        """Rows for a product's two cotangent helpers, cotangents drawn in the
        product's shape."""
        out = []
        for v, (s1, s2, *extra) in cases.items():
            kw = dict(zip(params or (), extra))
            g = shaped(product, s1, s2, **kw)
            args = (normal(*g), normal(*s1), normal(*s2)) + tuple(
                const(e) for e in extra)
            out += [row(lhs, v, args), row(rhs, v, args)]
        return out


    MATMULS = {
        "vec_vec": ((3,), (3,)), "mat_vec": ((4, 3), (3,)), "vec_mat": ((3,), (3, 2)),
        "mat_mat": ((2, 3), (3, 4)), "batch_mat": ((2, 3, 4), (4, 2)),
        "batch_vec": ((2, 3, 4), (4,)), "vec_batch": ((3,), (2, 3, 4)),
        "batch_batch": ((2, 3, 4), (2, 4, 5)),
        "broadcast_batch": ((2, 1, 3, 4), (5, 4, 2)),
    }
    DOTS = {
        "scalar_mat": ((), (2, 3)), "mat_scalar": ((2, 3), ()), "vec_vec": ((3,), (3,)),
        "mat_vec": ((4, 3), (3,)), "vec_mat": ((3,), (3, 2)),
        "mat_mat": ((2, 3), (3, 4)), "batch_vec": ((2, 3, 4), (4,)),
        "batch_mat": ((2, 3, 4), (4, 2)), "mat_batch": ((2, 3), (4, 3, 5)),
        "vec_batch": ((3,), (2, 3, 4)), "batch_batch": ((2, 3, 4), (5, 4, 2)),
    }
    TENSORDOTS = {
        "axes2": ((2, 3, 4), (3, 4, 5), 2), "axes0": ((2, 3), (4,), 0),
        "pairs": ((3, 2, 4), (2, 3, 5), ([1, 0], [0, 1])),
        "negative": ((2, 3, 4), (4, 5), ([-1], [0])),
        "scalar_pairs": ((2, 3), (4, 2), (0, 1)),
    }
    KRONS = {"matrices": ((2, 3), (4, 2)), "mixed_ranks": ((2, 3), (4,)),
             "rank3": ((2, 1, 2), (3, 2, 1))}
    EINSUMS = {  # variant -> (subscripts, operand shapes (equal), k)
        "matmul_first": ("ij,jk->ik", ((3, 3), (3, 3)), 0),
        "matmul_second": ("ij,jk->ik", ((3, 3), (3, 3)), 1),
        "implicit": ("ij,kj", ((3, 3), (3, 3)), 1),
        "summed_in_k": ("ij,jk->i", ((3, 3), (3, 3)), 1),
        "trace": ("ii", ((3, 3),), 0),
        "diagonal": ("ii->i", ((3, 3),), 0),
        "batch": ("bij,bjk->bik", ((2, 3, 3), (2, 3, 3)), 1),
        "ellipsis": ("...ij,...jk->...ik", ((2, 3, 3), (2, 3, 3)), 0),
        "repeated_and_shared": ("iij,jkl->ikl", ((3, 3, 3), (3, 3, 3)), 0),
        "three": ("ij,jk,kl->il", ((3, 3), (3, 3), (3, 3)), 1),
    }
    MULTI_DOTS = {"two": ((3, 3), (3, 3)), "three": ((3, 3), (3, 3), (3, 3)),
                  "vectors": ((3,), (3,)), "four": ((2, 2),) * 4}
    AXES = {"all": None, "1": 1, "neg": -1, "tuple": (0, 2), "neg_tuple": (-1, 0)}
    UNARY = {  # special_<name> -> drawer of a valid input of a given shape
        "erf": normal, "erfc": normal, "erfinv": uniform(-0.9, 0.9),
        "gammaln": uniform(0.2, 5.0), "digamma": uniform(0.2, 5.0),
        "expit": normal, "logit": uniform(0.05, 0.95),
    }
    A = np.array

    ROWS = (
        [
            row("unbroadcast", "added_axes", (normal(2, 3, 4), normal(3, 4))),
            row("unbroadcast", "stretched", (normal(2, 3, 4), normal(2, 1, 4))),
            row("unbroadcast", "added_and_stretched", (normal(5, 2, 3, 4), normal(3, 1))),
            row("unbroadcast", "to_scalar", (normal(2, 3), normal())),
            row("unbroadcast", "same", (normal(2, 3), normal(2, 3))),
            row("real_only", "matrix", (normal(2, 3),), {"what": "np.linalg.qr"}),
            row("python_float", "array", (normal(2, 3),)),
            row("python_float", "scalar", (normal(),)),
            row("cov_weights", "aweights", (positive(5), const("aweights"))),
            row("own_copy", "array", (normal(2, 3),)),
            row("own_copy", "scalar", (normal(),)),
            row("list_item", "row", (normal(2, 3), const(((1.0, 2.0), (3.0, 4.0))), const(1))),
            # (a 0-d read whose item is not a Python number: the read itself; a Python
            # number's item at a Python-int index is that number, whatever the read)
            row("list_item", "scalar", (normal(), const((np.float64(1.0), np.float64(2.0))),
                                        const(0))),
            row("in_place", "array", (normal(2, 3), normal(2, 3))),
            row("in_place", "broadcast", (normal(2, 3), normal(3))),
            row("in_place", "scalar", (normal(), normal())),
        ]
        + pair_rows("matmul_lhs_bar", "matmul_rhs_bar", np.matmul, MATMULS)
        + pair_rows("dot_lhs_bar", "dot_rhs_bar", np.dot, DOTS)
        + pair_rows("tensordot_lhs_bar", "tensordot_rhs_bar", np.tensordot, TENSORDOTS,
                    params=("axes",))
        + pair_rows("kron_lhs_bar", "kron_rhs_bar", np.kron, KRONS)
        + [
            row("einsum_bar", v, (normal(*shaped(lambda *o: np.einsum(s, *o), *shapes)),
                                  const(s), arrays(*shapes), const(k)))
            for v, (s, shapes, k) in EINSUMS.items()
        ]
        + [
            row("multi_dot_bars", v,
                (normal(*shaped(lambda *o: np.linalg.multi_dot(o), *shapes)),
                 arrays(*shapes)))
            for v, shapes in MULTI_DOTS.items()
        ]
        + [
            row("weights_along", "axis1", (normal(3), normal(2, 3, 4), const(1))),
            row("weights_along", "axis_neg", (normal(4), normal(2, 3, 4), const(-1))),
            row("weights_along", "axis0", (normal(2), normal(2, 3, 4), const(0))),
            row("weights_along", "same_rank", (normal(2, 3), normal(2, 3), const(1))),
            row("weights_along", "axis_none", (normal(2, 3), normal(2, 3), const(None))),
            row("rhs_columns", "vector_b", (normal(3), normal(3))),
            row("rhs_columns", "matrix_b", (normal(3, 2), normal(3, 2))),
            row("rhs_columns", "batch_vector_b", (normal(2, 3), normal(3))),
        ]
        # det's cofactor matrix given det(a) (drawn together: det_a must be a's det)
        + [row("det_cofactor", v, (lambda r, m=m: m.copy(),
                                   lambda r, m=m: np.linalg.det(m)))
           for v, m in (("invertible", A([[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]])),
                        ("stack", A([[[1.5, -0.3], [0.4, 0.9]], [[0.2, 1.1], [-1.0, 0.7]]])),
                        ("rank_two", A([[1.0, 2.0, 3.0], [2.0, 4.0, 6.5], [0.5, 1.0, 1.0]])),
                        ("rank_one", A([[1.0, 2.0], [2.0, 4.0]])))]
        # products: exact at zeros, the jets of every order included
        + [row("prod_of_others", f"axis_{a}", (normal(2, 3, 4),), {"axis": axis})
           for a, axis in AXES.items()]
        + [
            row("prod_of_others", "vector", (normal(5),)),
            row("prod_of_others", "scalar", (normal(),)),
            row("prod_of_others", "zeros_axis", (with_zeros(3, 4),), {"axis": 1}),
            row("prod_of_others", "zeros_all", (with_zeros(3, 4),)),
            row("prod_of_others_jet", "m1_axis", (jet(1, 3, 4),), {"axis": 1}),
            row("prod_of_others_jet", "m2_all", (jet(2, 2, 3),)),
            row("prod_of_others_jet", "m0_vector", (jet(0, 5),)),
            row("prod_of_others_jet", "m1_tuple", (jet(1, 2, 3, 4),), {"axis": (0, 2)}),
            row("prod_of_others_jet", "m2_zeros", (jet(2, 3, 4, zeros=True),),
                {"axis": -1}),
            row("cumprod_bar", "axis1", (normal(2, 3, 4), normal(2, 3, 4)), {"axis": 1}),
            row("cumprod_bar", "flat", (normal(12), normal(3, 4))),
            row("cumprod_bar", "zeros_neg", (normal(3, 4), with_zeros(3, 4)),
                {"axis": -1}),
            row("cumprod_tangent", "axis1", (normal(2, 3, 4), normal(2, 3, 4)),
                {"axis": 1}),
            row("cumprod_tangent", "flat", (normal(3, 4), normal(3, 4))),
            row("cumprod_tangent", "zeros_neg", (normal(3, 4), with_zeros(3, 4)),
                {"axis": -1}),
            row("cumprod_tangent2", "axis1", (normal(2, 3, 4), normal(2, 3, 4),
                                              normal(2, 3, 4)), {"axis": 1}),
            row("cumprod_tangent2", "flat", (normal(3, 4), normal(3, 4), normal(3, 4))),
            row("cumprod_tangent2", "zeros_neg", (normal(3, 4), normal(3, 4),
                                                  with_zeros(3, 4)), {"axis": -1}),
            row("cumprod_jet", "m1_axis", (jet(1, 3, 4),), {"axis": 1}),
            row("cumprod_jet", "m2_flat", (jet(2, 2, 3),)),
            row("cumprod_jet", "m2_zeros", (jet(2, 3, 4, zeros=True),), {"axis": -1}),
            row("cumprod_bar_jet", "m1_axis", (jet(1, 3, 4), jet(1, 3, 4)), {"axis": 1}),
            row("cumprod_bar_jet", "m2_flat", (jet(2, 6), jet(2, 2, 3))),
            row("cumprod_bar_jet", "m2_zeros", (jet(2, 3, 4), jet(2, 3, 4, zeros=True)),
                {"axis": -1}),
        ]
        # gradients of norms; the first row of each has a nonzero derivative
        + [
            row("vector_norm_grad", "default", (normal(5), positive(), const(None))),
            row("vector_norm_grad", "ord2", (normal(5), positive(), const(2))),
            row("vector_norm_grad", "ord3", (normal(5), positive(), const(3))),
            row("vector_norm_grad", "ord_half", (nonzero(5), positive(), const(0.5))),
            row("vector_norm_grad", "ord_neg1", (nonzero(5), positive(), const(-1))),
            row("vector_norm_grad", "ord1", (nonzero(5), positive(), const(1))),
            row("vector_norm_grad", "inf", (normal(5), positive(), const(np.inf))),
            row("vector_norm_grad", "neg_inf", (normal(5), positive(), const(-np.inf))),
            row("vector_norm_grad", "ord0", (normal(5), positive(), const(0))),
            row("vector_norm_grad", "axis_ord3", (normal(2, 3), positive(2, 1), const(3)),
                {"axis": 1}),
            row("vector_norm_grad", "tuple", (normal(2, 3, 4), positive(1, 3, 1),
                                              const(None)), {"axis": (0, 2)}),
            row("matrix_norm_grad", "fro", (normal(2, 3), positive(), const("fro"))),
            row("matrix_norm_grad", "nuc", (spread(3, 2), positive(), const("nuc"))),
            row("matrix_norm_grad", "default", (normal(2, 3), positive(), const(None))),
            row("matrix_norm_grad", "two_wide", (spread(2, 3), positive(), const(2))),
            row("matrix_norm_grad", "neg_two", (spread(3, 3), positive(), const(-2))),
            row("matrix_norm_grad", "one", (normal(3, 4), positive(), const(1))),
            row("matrix_norm_grad", "neg_inf", (normal(3, 4), positive(), const(-np.inf))),
            row("matrix_norm_grad", "nuc_batch", (spread(3, 3, 2), positive(2, 1, 1),
                                                  const("nuc"))),
            row("matrix_norm_grad", "two_axes", (moved_spread(3, 4, 2, (0, 2)),
                                                 positive(1, 2, 1), const(2)),
                {"axes": (0, 2)}),
            row("matrix_norm_grad", "fro_axes", (normal(3, 2, 4), positive(1, 2, 1),
                                                 const("fro")), {"axes": (2, 0)}),
            row("norm_grad", "vector_ord3", (normal(5), positive(), const(3), const(None))),
            row("norm_grad", "matrix_nuc", (spread(3, 2), positive(), const("nuc"),
                                            const(None))),
            row("norm_grad", "matrix_two", (spread(2, 3), positive(), const(2),
                                            const(None))),
            row("norm_grad", "vector_two_axis", (normal(2, 3, 4), positive(2, 1, 4),
                                                 const(2), const(1))),
            row("norm_grad", "matrix_neg2_pair", (moved_spread(3, 4, 2, (0, 2)),
                                                  positive(1, 2, 1), const(-2),
                                                  const((0, 2)))),
            row("norm_grad", "vector_neg1_tuple", (nonzero(2, 3), positive(2, 1),
                                                   const(-1), const((1,)))),
            row("norm_grad", "matrix_neg1", (normal(3, 4), positive(), const(-1),
                                             const(None))),
            row("norm_grad", "fro", (normal(2, 3), positive(), const(None), const(None))),
            row("norm_grad", "vector_inf", (normal(5), positive(), const(np.inf),
                                            const(None))),
        ]
        # scipy.special, as the runtime calls it
        + [row(f"special_{n}", "matrix", (d(2, 3),)) for n, d in UNARY.items()]
        + [
            row("special_polygamma", "trigamma", (const(1), uniform(0.5, 3.0)(2, 3))),
            row("special_polygamma", "order3", (const(3), uniform(0.5, 3.0)(2, 3))),
            row("sinc_taylor", "order3", (const(3), normal(4))),  # (derivative: order 4)
            row("sinc_taylor", "order2", (const(2), normal(2, 3))),
            row("special_logit", "at_edges", (const(A([0.0, 0.5, 1.0])),)),
            row("special_xlogy", "col_row", (normal(3, 1), uniform(0.2, 3.0)(4))),
            row("special_xlogy", "x_zero", (const(np.zeros((2, 3))),
                                            uniform(0.2, 3.0)(2, 3))),
            row("special_xlog1py", "scalar_array", (normal(), uniform(-0.8, 3.0)(2, 3))),
            row("special_logsumexp", "axis_all", (normal(2, 3, 4),), wrt=("a",)),
            row("special_logsumexp", "axis_tuple_keepdims", (normal(2, 3, 4),),
                {"axis": (0, 2), "keepdims": True}, wrt=("a",)),
            row("special_logsumexp", "axis_neg", (normal(2, 3, 4),), {"axis": -1},
                wrt=("a",)),
            row("special_logsumexp", "b_axis_1", (normal(2, 3), const(1),
                                                  uniform(0.3, 2.0)(3))),
            row("special_softmax", "axis_all", (normal(2, 3, 4),)),
            row("special_softmax", "axis_neg", (normal(2, 3, 4),), {"axis": -1}),
            row("special_log_softmax", "axis_tuple", (normal(2, 3, 4),),
                {"axis": (0, 2)}),
            row("special_log_softmax", "axis_0", (normal(2, 3, 4),), {"axis": 0}),
        ]
    )


# ---- end to end: the helpers called as emitted code calls them ----------------------

W23 = np.array([[0.3, -1.2, 0.7], [1.5, 0.4, -0.8]])
W22 = np.array([[0.6, -1.1], [0.2, 1.4]])
W32 = np.array([[0.5, -0.7], [1.2, 0.1], [-0.4, 0.8]])
W3 = np.array([-0.6, 1.1, 0.25])
SHAPE13 = np.ones((1, 3))
SHAPE234 = np.ones((2, 3, 4))
SHAPE3 = np.ones(3)


def f_unbroadcast(cot):
    return np.sum(np.sin(unbroadcast(cot * cot, SHAPE13)) * W3)


def f_real_only(x):
    return np.sum(np.sin(real_only(x * x, "np.linalg.qr")) * W3)


def f_python_float(x):
    return np.sum(np.sin(python_float(x * x)) * W3)


def f_own_copy(x):
    return np.sum(np.sin(own_copy(x * x)) * W3)


def f_cov_weights(x):
    return np.sum(np.sin(cov_weights(x * x, "aweights")) * W3)


def f_list_item(x):
    return np.sum(np.sin(list_item(x * x, ((1.0, 2.0, 3.0),), 0)) * W3)


def f_in_place(x):
    return np.sum(np.sin(in_place(x * x, x)) * W3)


def f_matmul_bars(cot, x1, x2):
    return np.sum(np.sin(matmul_lhs_bar(cot, x1, x2)) * W23) + np.sum(
        np.cos(matmul_rhs_bar(cot, x1, x2)) * W32
    )


def f_dot_bars(cot, x1, x2):
    return np.sum(np.sin(dot_lhs_bar(cot, x1, x2)) * W23) + np.sum(
        np.cos(dot_rhs_bar(cot, x1, x2)) * W32
    )


def f_tensordot_bars(cot, a, b):
    return np.sum(np.sin(tensordot_lhs_bar(cot, a, b, 1)) * W23) + np.sum(
        np.cos(tensordot_rhs_bar(cot, a, b, 1)) * W32
    )


def f_kron_bars(cot, a, b):
    return np.sum(np.sin(kron_lhs_bar(cot, a, b)) * W23) + np.sum(
        np.cos(kron_rhs_bar(cot, a, b)) * W22
    )


def f_einsum_bar(cot, a, b):
    first = einsum_bar(cot, "ij,jk->ik", [a, b], 0)
    second = einsum_bar(cot, "ij,jk->ik", [a, b], 1)
    return np.sum(np.sin(first) * W23) + np.sum(np.cos(second) * W32)


def f_einsum_bars(cot, a, b):
    bars = einsum_bars(cot, "ij,jk->ik", [a, b])
    return np.sum(np.sin(bars[0]) * W23) + np.sum(np.cos(bars[1]) * W32)


def f_split_like(x):
    # a (2, 3) block and a row (the list's arrays give only their shapes)
    top, row = split_like(np.sin(x), [x[:2], x[2]], 0)
    return np.sum(top * W23) + np.sum(np.cos(row) * W3)


def f_multi_dot_bars(cot, a, b):
    # square arrays: reverse mode reads the helper's list result as one array
    bars = multi_dot_bars(cot, [a, b])
    return np.sum(np.sin(bars[0]) * W22) + np.sum(np.cos(bars[1]) * W22.T)


def f_weights_along(w):
    return np.sum(np.sin(weights_along(w * w, SHAPE234, 1) * SHAPE234))


def f_rhs_columns(v):
    return np.sum(np.sin(rhs_columns(v * v, SHAPE3)) * W32)


def f_det_cofactor(a):
    return np.sum(np.sin(det_cofactor(a, np.linalg.det(a))) * W3)


def f_prod_of_others(a):
    return np.sum(np.sin(prod_of_others(a, 1)) * W23)


def f_prod_of_others_jet(x):
    return np.sum(np.sin(prod_of_others_jet(x, -1)) * W23)


def f_cumprod_bar(cot, a):
    return np.sum(np.sin(cumprod_bar(cot, a, 1)) * W23)


def f_cumprod_tangent(v, a):
    return np.sum(np.sin(cumprod_tangent(v, a, 1)) * W23)


def f_cumprod_tangent2(v, w, a):
    return np.sum(np.sin(cumprod_tangent2(v, w, a, 1)) * W23)


def f_cumprod_jet(x):
    return np.sum(np.sin(cumprod_jet(x, -1)) * W23)


def f_cumprod_bar_jet(h, x):
    return np.sum(np.sin(cumprod_bar_jet(h, x, 1)) * W23)


def f_vector_norm_grad(x, norm):
    return np.sum(np.sin(vector_norm_grad(x, norm, 3, 1)) * W23) + np.sum(
        vector_norm_grad(x, norm, None, 1) * W23
    )


def f_matrix_norm_grad(x, norm):
    return np.sum(np.sin(matrix_norm_grad(x, norm, "nuc")) * W32) + np.sum(
        matrix_norm_grad(x, norm, "fro") * W32
    )


def f_norm_grad(x, norm):
    return np.sum(np.sin(norm_grad(x, norm, 2, None)) * W32) + np.sum(
        norm_grad(x, norm, None, None) * W32
    )


def f_special_unary(x):
    # x in (0.2, 0.8): inside every domain
    return np.sum(
        (special_erf(x) + special_erfc(x) ** 2 + special_erfinv(x) + special_gammaln(x)
         + special_digamma(x) * x + special_polygamma(1, x) + special_expit(x)
         + special_logit(x) ** 2)
        * W23
    )


def f_special_binary(x, y):
    return np.sum((special_xlogy(x, y) + special_xlog1py(x, y) ** 2) * W23)


def f_special_axis(x):
    return (
        np.sum(special_logsumexp(x, axis=0) * W3)
        + np.sum(special_softmax(x, axis=1) * W23)
        + np.sum(special_log_softmax(x) * W23)
    )


def f_sinc_taylor(x):
    # constants whose derivatives are the next orders' (sinc's rules use them at 0)
    return np.sum((sinc_taylor(2, x) * x + sinc_taylor(3, x) + sinc_taylor(1, x) ** 2) * W23)


if np.__name__ != "jax.numpy":
    E2E = [
        E2ECase(f_unbroadcast, ("unbroadcast",), (normal(2, 3),)),
        E2ECase(f_real_only, ("real_only",), (normal(3),)),
        E2ECase(f_python_float, ("python_float",), (normal(3),)),
        E2ECase(f_own_copy, ("own_copy",), (normal(3),)),
        E2ECase(f_cov_weights, ("cov_weights",), (normal(3),)),
        E2ECase(f_list_item, ("list_item",), (normal(3),)),
        E2ECase(f_in_place, ("in_place",), (normal(3),)),
        E2ECase(f_matmul_bars, ("matmul_lhs_bar", "matmul_rhs_bar"),
                (normal(2, 2), normal(2, 3), normal(3, 2))),
        E2ECase(f_dot_bars, ("dot_lhs_bar", "dot_rhs_bar"),
                (normal(2, 2), normal(2, 3), normal(3, 2))),
        E2ECase(f_tensordot_bars, ("tensordot_lhs_bar", "tensordot_rhs_bar"),
                (normal(2, 2), normal(2, 3), normal(3, 2))),
        E2ECase(f_kron_bars, ("kron_lhs_bar", "kron_rhs_bar"),
                (normal(4, 6), normal(2, 3), normal(2, 2))),
        E2ECase(f_einsum_bar, ("einsum_bar",), (normal(2, 2), normal(2, 3), normal(3, 2))),
        E2ECase(f_einsum_bars, ("einsum_bars",), (normal(2, 2), normal(2, 3), normal(3, 2))),
        E2ECase(f_split_like, ("split_like",), (normal(3, 3),)),
        E2ECase(f_multi_dot_bars, ("multi_dot_bars",),
                (normal(2, 2), normal(2, 2), normal(2, 2))),
        E2ECase(f_weights_along, ("weights_along",), (normal(3),)),
        E2ECase(f_rhs_columns, ("rhs_columns",), (normal(3),)),
        E2ECase(f_det_cofactor, ("det_cofactor",),
                (lambda r: r.normal(size=(3, 3)) + 3.0 * np.eye(3),)),
        E2ECase(f_prod_of_others, ("prod_of_others",), (with_zeros(2, 3),)),
        E2ECase(f_prod_of_others_jet, ("prod_of_others_jet",), (jet(1, 2, 3),)),
        E2ECase(f_cumprod_bar, ("cumprod_bar",), (normal(2, 3), with_zeros(2, 3))),
        E2ECase(f_cumprod_tangent, ("cumprod_tangent",), (normal(2, 3), normal(2, 3))),
        E2ECase(f_cumprod_tangent2, ("cumprod_tangent2",),
                (normal(2, 3), normal(2, 3), normal(2, 3))),
        E2ECase(f_cumprod_jet, ("cumprod_jet",), (jet(0, 2, 3),)),
        E2ECase(f_cumprod_bar_jet, ("cumprod_bar_jet",), (jet(0, 2, 3), jet(0, 2, 3))),
        E2ECase(f_vector_norm_grad, ("vector_norm_grad",), (normal(2, 3), positive(2, 1))),
        E2ECase(f_matrix_norm_grad, ("matrix_norm_grad",), (spread(3, 2), positive())),
        E2ECase(f_norm_grad, ("norm_grad",), (spread(3, 2), positive())),
        E2ECase(f_special_unary,
                tuple(f"special_{n}" for n in (*UNARY, "polygamma")),
                (uniform(0.2, 0.8)(2, 3),)),
        E2ECase(f_special_binary, ("special_xlogy", "special_xlog1py"),
                (normal(2, 3), uniform(0.2, 3.0)(3))),
        E2ECase(f_sinc_taylor, ("sinc_taylor",), (normal(2, 3),), fd=False),
        E2ECase(f_special_axis,
                ("special_logsumexp", "special_softmax", "special_log_softmax"),
                (normal(2, 3),)),
    ]
