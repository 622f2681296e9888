"""The specializer's rewrite rules as a table one can read (docs/optimizer-rules.md is
made from it, with the zero-cotangent identities of ``zero.IDENTITIES``).

Each ``Rule`` states what the pass named rewrites (``lhs`` into ``rhs``, both Python
expressions over the names in ``shapes``, with NumPy as ``np`` and the emitted code's
runtime helpers), and the guard under which it does (``guard``, in words: every fact it
names comes from the call signature, ``signature_facts``, or is checked at each call).
The table is the specification the code is tested against, in
tests/test_optimizer_rules.py: both sides are evaluated on random values (float64 and
float32, NaN and inf, size-0 and size-1 axes) of every shape case in ``shapes``, which
satisfy the guard, and must agree; and for each rule a program (``witness``, in
tests/optimizer_rules_fns.py) is specialized and the rule's right side must be what
the code says where the generic code says its left side.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    name: str
    pass_: str  # the pass of specialize.PASSES that applies it (S2S_PASSES_OFF)
    lhs: str
    rhs: str
    guard: str
    shapes: tuple[dict[str, tuple], ...]  # each a case: a name's shape (() a 0-d array)
    witness: str  # a function of tests/optimizer_rules_fns.py it applies to ("": none)
    gone: str = ""  # what the witness's generic code spells and its specialized not
    exact: bool = True  # both sides round alike (else: equal to rounding)
    # the left side is float64 whatever its operands' dtype (NumPy promotes a Python
    # float beside a bool to its default float), the right side in the operands' dtype
    # (JAX's): the same values, in that dtype
    narrows: bool = False


_SAME = ({"x": (3,), "like": (3,)}, {"x": (2, 3), "like": (2, 3)},
         {"x": (0, 3), "like": (0, 3)}, {"x": (), "like": ()}, {"x": (1,), "like": (1,)})
_SPREAD = ({"s": (), "y": (3,)}, {"s": (3,), "y": (2, 3)}, {"s": (1,), "y": (0,)},
           {"s": (2, 1), "y": (2, 4)})
_FACTS = "(facts of the signature)"
# operands drawn from a few numbers (-1, -0.0, 0, 1, and inf, -inf, NaN among the
# special values), so that they tie
_TIES = ({"a": ("ties", (4, 5)), "b": ("ties", (4, 5))}, {"a": ("ties", (3, 4)),
                                                          "b": ("ties", ())},
         {"a": ("ties", (0, 3)), "b": ("ties", (3,))}, {"a": ("ties", ()), "b": ("ties", ())},
         {"a": ("ties", (2, 1)), "b": ("ties", (1, 3))})
_TIES_NUMBER = ({"a": ("ties", (4, 5))}, {"a": ("ties", ())}, {"a": ("ties", (0,))})

_PRODUCTS = ("x a 2-D float32 or float64 array, the axis a literal, keepdims a literal or "
             "absent, no other keyword (facts of the signature); the vector of ones of "
             "x's dtype (float32 wherever the signature has float32 arrays: a pass may "
             "have made a value float32 that the facts, read in the generic code, call "
             "float64; float32 ones are exact and promote to x's own dtype) a module "
             "constant of the specialized code (ones_5x1 = np.ones((5, 1))), read only "
             "by such products")

RULES: tuple[Rule, ...] = (
    Rule("an unbroadcast to its own shape disappears", "fixups",
         "unbroadcast(x, like)", "x",
         "shape(x) == shape(like), both real or both complex " + _FACTS,
         _SAME, "same_shape_product", "unbroadcast("),
    Rule("a broadcast to its own shape disappears", "fixups",
         "np.broadcast_to(x, np.shape(like))", "x",
         "shape(x) == the target shape, one dtype " + _FACTS, _SAME, "", ""),
    Rule("an unbroadcast is the sums it does", "fixups",
         "unbroadcast(x, like)", "x.sum(axis=0).sum(axis=(0,), keepdims=True)",
         "shape(x) == (n, m, k), shape(like) == (1, k) " + _FACTS + "; the axes are read "
         "off the two shapes: leading axes summed away, stretched ones kept",
         ({"x": (2, 3, 4), "like": (1, 4)}, {"x": (2, 5, 1), "like": (1, 1)},
          {"x": (3, 2, 0), "like": (1, 0)}), "row_bias", "unbroadcast(", exact=False),
    Rule("a broadcast operand of * is the operand", "fixups",
         "np.broadcast_to(s, np.shape(y)) * y", "s * y",
         "y has the broadcast's shape, which is the result's, and the result's dtype "
         + _FACTS + ": the operator broadcasts s to the same elements",
         _SPREAD, "scaled_by", "broadcast_to("),
    *(Rule(f"a broadcast operand of {sym} is the operand", "fixups",
           f"np.broadcast_to(s, np.shape(y)) {sym} y", f"s {sym} y",
           "as for *", _SPREAD, "") for sym in "+-/"),
    Rule("a scalar spread by expand_dims folds into a scalar", "fixups",
         "np.expand_dims(np.broadcast_to(s, np.shape(y)[:1]), 1) * y", "s * y",
         "s is a scalar (0-d, a fact, or a number); y has the result's shape and dtype",
         ({"s": (), "y": (4, 3)}, {"s": (), "y": (1, 1)}, {"s": (), "y": (0, 3)}),
         "onehot_mean", "expand_dims("),
    Rule("a mean's seed is a scalar times the cotangent", "shapes",
         "np.broadcast_to(g / np.size(x), np.shape(x)) * e", "g / 6 * e",
         "size(x) == 6 " + _FACTS + " (then fixups drops the broadcast); e has x's "
         "shape and dtype", ({"g": (), "x": (2, 3), "e": (2, 3)},
                             {"g": (), "x": (6,), "e": (6,)}),
         "mean_square", "np.size(", exact=False),
    Rule("the seed of a scalar output is one", "fill", "grad_seed(y)", "np.float64(1.0)",
         "y is a 0-d float64 " + _FACTS + "; grad_seed checks that in the generic code",
         ({"y": ()},), "scaled_sum", "grad_seed("),
    Rule("ones times a value is the value", "fill", "np.ones_like(e) * e", "e",
         "e has the product's shape and dtype (a fact), and is not a Python number where "
         "the product is NumPy's (a Python float over zero raises, np.float64's is inf)",
         ({"e": (3,)}, {"e": (0, 2)}, {"e": ()}), "", ""),
    Rule("ones over a value is one over it", "fill", "np.ones_like(e) / e", "1.0 / e",
         "e has the quotient's shape and dtype (a fact), not a Python number where the "
         "quotient is NumPy's (1.0 / 0.0 raises)", ({"e": (3,)}, {"e": (2, 2)}),
         "", ""),
    Rule("size, shape and ndim of a known shape are literals", "shapes",
         "(np.size(x), np.shape(x), np.ndim(x))", "(6, (2, 3), 2)",
         "shape(x) == (2, 3) (a fact)", ({"x": (2, 3)},), "mean_square", "np.size("),
    Rule("a vector right-hand side's columns are its items", "shapes",
         "rhs_columns(v, b)", "v[..., None]", "b 1-D, v at least 1-D (facts: an array)",
         ({"v": (3,), "b": (3,)}, {"v": (2, 3), "b": (3,)}, {"v": (0,), "b": (0,)}),
         "", ""),
    Rule("a matrix right-hand side is its own columns", "shapes", "rhs_columns(v, b)",
         "v", "b not 1-D (a fact)", ({"v": (3, 2), "b": (3, 2)}, {"v": (2, 3, 2),
                                                                  "b": (2, 3, 2)},
                                     {"v": (), "b": ()}), "", ""),
    Rule("a matrix's matrix_transpose is its .T", "shapes", "np.matrix_transpose(x)",
         "x.T", "x 2-D (a fact)", ({"x": (2, 3)}, {"x": (0, 3)}, {"x": (1, 1)}),
         "logdet", "matrix_transpose("),
    Rule("an item of a literal tuple is the literal", "shapes", "(32, 16)[1] * x",
         "16 * x", "the tuple a name's value, bound once in the function and never "
         "written into (q_shape = (32, 16) from the shape's fact); an int item bound "
         "to a name is read as the literal itself", ({"x": (3,)}, {"x": ()}), "", ""),
    Rule("an elementwise function of number literals is its value", "shapes",
         "np.sqrt(16) * x", "np.double(4.0) * x",
         "sqrt/exp/log/log1p/expm1/sin/cos/tanh/cbrt/reciprocal/maximum/minimum of int or "
         "float literals, "
         "the value finite and computed without a NumPy warning, in the result's NumPy "
         "type (a fact: a NumPy scalar is not weak)", ({"x": (3,)}, {"x": (0, 2)},
                                                      {"x": ()}),
         "scaled_rows", "= np.sqrt("),
    Rule("zeros_like of a known shape needs no argument", "shapes", "np.zeros_like(x)",
         "np.zeros((2, 3), dtype=np.float64)", "shape(x) == (2, 3), float64 (a fact)",
         ({"x": (2, 3)},), "picked", "zeros_like("),
    Rule("a matrix product's right cotangent, matrices", "matmul",
         "matmul_rhs_bar(g, x1, x2)", "x1.T @ g", "x1, x2, g all 2-D (facts)",
         ({"g": (4, 3), "x1": (4, 5), "x2": (5, 3)},
          {"g": (1, 1), "x1": (1, 2), "x2": (2, 1)}), "mlp", "matmul_rhs_bar(", exact=False),
    Rule("a matrix product's left cotangent, matrices", "matmul",
         "matmul_lhs_bar(g, x1, x2)", "g @ x2.T", "x1, x2, g all 2-D (facts)",
         ({"g": (4, 3), "x1": (4, 5), "x2": (5, 3)},), "mlp2", "matmul_lhs_bar(",
         exact=False),
    Rule("a matrix-vector product's right cotangent", "matmul",
         "matmul_rhs_bar(g, x1, x2)", "x1.T @ g", "x1 2-D, x2 and g 1-D (facts)",
         ({"g": (4,), "x1": (4, 5), "x2": (5,)},), "matvec", "matmul_rhs_bar(", exact=False),
    Rule("a vector-matrix product's left cotangent", "matmul",
         "matmul_lhs_bar(g, x1, x2)", "x2 @ g", "x1 and g 1-D, x2 2-D (facts)",
         ({"g": (3,), "x1": (5,), "x2": (5, 3)},), "vecmat", "matmul_lhs_bar(", exact=False),
    Rule("a vector-matrix product's right cotangent", "matmul",
         "matmul_rhs_bar(g, x1, x2)", "np.outer(x1, g)", "x1 and g 1-D, x2 2-D (facts)",
         ({"g": (3,), "x1": (5,), "x2": (5, 3)},), "vecmat", "matmul_rhs_bar("),
    Rule("a matrix-vector product's left cotangent", "matmul",
         "matmul_lhs_bar(g, x1, x2)", "np.outer(g, x2)", "x1 2-D, x2 and g 1-D (facts)",
         ({"g": (4,), "x1": (4, 5), "x2": (5,)},), "matvec", "matmul_lhs_bar("),
    Rule("a dot product's cotangents", "matmul", "matmul_rhs_bar(g, x1, x2)", "g * x1",
         "x1 and x2 1-D, g 0-d, all of one dtype (facts: NumPy's promotion of a Python "
         "float cannot then differ from the helper's)",
         ({"g": (), "x1": (4,), "x2": (4,)}, {"g": (), "x1": (0,), "x2": (0,)}),
         "dot", "matmul_rhs_bar("),
    Rule("a dot product's cotangents, dtypes apart", "matmul", "matmul_rhs_bar(g, x1, x2)",
         "np.multiply(g, x1, dtype=np.float64)",
         "x1 and x2 1-D, g 0-d, not all of one dtype; the dtype the result's (facts): the "
         "helper makes g an array (a Python float is then not weak) and multiplies in the "
         "result's dtype, as the right side does, one rounding per element (a float32 "
         "vector beside a float64 matrix's solve: a Gaussian process on float32 data)",
         ({"g": (), "x1": (4,), "x2": (4,)}, {"g": (), "x1": (0,), "x2": (0,)}), "", ""),
    Rule("add.at at a scalar index is +=", "addat", "add_at(x, i, v)", "iadd(x, i, v)",
         "i is a 0-d integer (a fact): one index cannot repeat, so the unbuffered add.at "
         "and the buffered += agree", ({"x": (5,), "v": (), "i": "index"},
                                       {"x": (1,), "v": (), "i": "index"}),
         "picked", "np.add.at("),
    Rule("a minus sign moves out of a sum", "signs", "np.sum(-x)", "-np.sum(x)",
         "none: exact in IEEE arithmetic (negation commutes with rounding)",
         ({"x": (4,)}, {"x": (0,)}, {"x": (2, 3)}), "", ""),
    Rule("add.at spreads a scalar itself", "fixups",
         "add_at(x, i, np.broadcast_to(s, np.shape(x[i])))", "add_at(x, i, s)",
         "s 0-d of x's dtype, the index integer arrays, the broadcast's shape what x[i] "
         "selects " + _FACTS + ": the same value added at the same places, in the same "
         "order (ufunc.at reads a broadcast array on its slow path)",
         ({"x": (5,), "s": (), "i": "labels"}, {"x": (4, 3), "s": (), "i": "labels"},
          {"x": (3, 0), "s": (), "i": "labels"}), "picked_rows", "broadcast_to("),
    Rule("a row sum of one pick per row is the picked value", "accumulate",
         "add_at(np.zeros_like(x), (np.arange(np.shape(x)[0]), i), s)"
         ".sum(axis=1, keepdims=True) * x", "s * x",
         "the zeros 2-D, the rows np.arange(n) (a name bound once to it, never written "
         "into), i an integer array of shape (n,), s 0-d of the zeros' dtype " + _FACTS +
         "; the sum an operand of an operator whose other operand has the result's shape "
         "(so a scalar in its place changes no shape); exact: s plus zeros",
         ({"x": (4, 3), "s": (), "i": "row labels"}, {"x": (1, 1), "s": (), "i": "row labels"},
          {"x": (0, 3), "s": (), "i": "row labels"}), "", ""),
    Rule("a negation of a negated factor cancels", "signs", "-((-x) * y / z)",
         "x * y / z", "x floating (a fact: -True raises); exact in IEEE arithmetic "
         "(negation commutes with rounding); applied after single uses are inlined, in "
         "loop bodies too", ({"x": (3,), "y": (3,), "z": (3,)},
                             {"x": (2, 3), "y": (3,), "z": ()},
                             {"x": (0,), "y": (0,), "z": (0,)}, {"x": (), "y": (), "z": ()}),
         "", ""),
    Rule("a negated factor's sign moves out of a sum", "signs", "((-x) * y).sum(axis=0)",
         "-(x * y).sum(axis=0)", "x floating (a fact); the sum's keywords only axis and "
         "keepdims; exact (negation commutes with rounding)",
         ({"x": (2, 3), "y": (3,)}, {"x": (0, 3), "y": (3,)}, {"x": (1, 1), "y": ()}),
         "", ""),
    Rule("a negation moves out of a sum over axes", "signs", "(-x).sum(axis=1, keepdims=True)",
         "-x.sum(axis=1, keepdims=True)", "x floating (a fact); the sum's keywords only "
         "axis and keepdims; exact (negation commutes with rounding)",
         ({"x": (2, 3)}, {"x": (2, 0)}, {"x": (0, 3)}), "", ""),
    Rule("a maximum of integer literals is a literal", "shapes", "max(64, 1)",
         "64", "Python's max (the emitted code binds no other) of int literals: a mean's "
         "count, size / max(size, 1), once the sizes are literals; exact: the same Python "
         "int", ({},), "row_mean", "max("),
    Rule("arithmetic of Python numbers is a number", "shapes", "2048 / 64", "32.0",
         "both operands int or float literals, + - * /, the result finite; exact: "
         "Python computes it as the code would, and a Python float is a weak scalar "
         "in NumPy's promotion as the expression was (a float32 cotangent divided by a "
         "mean's count stays float32, as in JAX)", ({},), "row_mean", "/ max("),
    Rule("an item of a tuple display is the item", "signs", "(np.sin(x), y)[1]", "y",
         "a literal index in range; no other item calls a function that writes into an "
         "array (the others are dead code)", ({"x": (3,), "y": (2,)}, {"x": (0,), "y": ()}),
         "", ""),
    Rule("a complex value with a zero imaginary part, read for its real part, is real",
         "fixups", "unbroadcast(np.expand_dims(np.real(g) + 1j * np.imag(s), (-2, -1)) "
         "* m, like)", "np.expand_dims(g, (-2, -1)) * m",
         "g, s, m, like real (facts), so np.imag(s) is zero; the complex name is bound "
         "once and every read is one product with a real m inside an unbroadcast to a "
         "real operand of the product's shape ((r + 0j) * m has real part r * m - 0 * 0)",
         ({"g": (), "s": (), "m": (3, 3), "like": (3, 3)},
          {"g": (2,), "s": (2,), "m": (2, 3, 3), "like": (2, 3, 3)},
          {"g": (), "s": (), "m": (0, 0), "like": (0, 0)}), "logdet", "1j *"),
    *(Rule(f"a {fn} operand's share is one comparison of the operands{which}", "ties",
           f"np.where({x} == (h := np.{fn}(a, {b})), np.where({y} == h, 0.5, 1.0), 0.0)",
           f"np.where({x} == {y}, np.float64(0.5), {x} {op} {y})",
           "h bound once to np.%s of names and numbers, real floating values (facts), "
           "none rebound or written into between h's binding and the share; exact: "
           "%s gives 1, a tie (-0.0 == 0.0, inf == inf) one half, a NaN on either side 0 "
           "(the result is NaN, equal to neither; no comparison with NaN holds); the "
           "comparisons promote as np.%s does; the share in h's dtype (a fact; "
           "np.float64(0.5) is written 0.5, np.float32(0.5) where h is float32): the left "
           "side's Python 0.5 beside a bool makes float64 whatever h is, and a float32 "
           "relu's backward ran in float64 from there on (JAX's runs in float32)"
           % (fn, f"{x} {op} {y}", fn), shapes, witness, "== h," if witness else "",
           narrows=True)
      for fn, op in (("maximum", ">"), ("minimum", "<"))
      for which, x, y, b, shapes, witness in (
          ("", "a", "b", "b", _TIES, f"relu_{fn}"),
          (", the other", "b", "a", "b", _TIES, ""),
          (", a number", "a", "0.0", "0.0", _TIES_NUMBER, "relu" if fn == "maximum" else ""))),
    Rule("a share times a cotangent is a product and a masked half", "ties",
         "g * np.where(a == b, np.float64(0.5), a > b)",
         "(t := g * (a > b), np.multiply(g, 0.5, out=t, where=a == b))[0]",
         "the share one of the rules above wrote (a > b, or a < b for np.minimum), bound "
         "by the product to a new name t in a statement of its own; g real floating, of "
         "the product's shape (not 0-d) and of the maximum's dtype (facts); spelled last, "
         "when no pass reads the code; exact: the same products g * 1, g * 0 and g * 0.5 "
         "in g's dtype, one rounding each (NaN and inf in g alike), without np.where's "
         "buffered cast of a bool array beside a scalar (a relu's backward: 1.17 -> 1.07 "
         "of the hand-written gradient in float64, 1.28 -> 1.12 in float32)",
         ({"g": (4, 5), "a": ("ties", (4, 5)), "b": ("ties", (4, 5))},
          {"g": (3, 4), "a": ("ties", (3, 4)), "b": ("ties", ())},
          {"g": (0, 3), "a": ("ties", (0, 3)), "b": ("ties", (3,))}), "relu", "np.where("),
    Rule("a power-of-two factor moves onto the smaller operand", "egraph",
         "c * (2 * x)", "2 * c * x",
         "c, x real floating (facts), c of fewer elements than x; exact: scaling by a "
         "power of two commutes with rounding (nothing overflowing or subnormal)",
         ({"c": (4, 1), "x": (4, 5)}, {"c": (), "x": (3,)}, {"c": (1, 3), "x": (0, 3)}),
         "", ""),
    Rule("a power-of-two factor moves out of a sum", "egraph",
         "(g * (-2 * d)).sum(axis=0, keepdims=True)", "-2 * (g * d).sum(axis=0, keepdims=True)",
         "g, d real floating (facts); exact, as the rule above: every term is scaled alike",
         ({"g": (4, 3), "d": (4, 3)}, {"g": (4, 1), "d": (4, 3)}, {"g": (0, 3), "d": (0, 3)}),
         "", ""),
    Rule("a divisor positive by construction moves out of a sum", "egraph",
         "(a * (b / (s := np.sqrt(v**2 + 1e-5))) / s).sum(axis=1, keepdims=True)",
         "(a * b).sum(axis=1, keepdims=True) / (s := np.sqrt(v**2 + 1e-5)) / s",
         "s a name bound once, never written into, to np.sqrt of a positive literal plus a "
         "value nonnegative by construction (squares, np.var, sums and means of such), or "
         "to a softmax's denominator np.exp(x - x.max(axis=k, keepdims=True)).sum(axis=k, "
         "keepdims=True) (the maximum's term is exp(0) = 1: a sum >= 1, or NaN); s "
         "of size 1 along the summed axes, which are not empty, and of the sum's rank "
         "(facts); keepdims=True: s is never 0, so neither side has a quotient the other "
         "lacks (equal to rounding; a NaN s makes both NaN, as not a sum of no terms)",
         ({"a": (4, 5), "b": (4, 5), "v": (4, 1)}, {"a": (2, 3), "b": (3,), "v": (2, 1)},
          {"a": (0, 3), "b": (0, 3), "v": (0, 1)}, {"a": (1, 1), "b": (1, 1), "v": (1, 1)}),
         "", "", exact=False),
    Rule("a softmax's denominator moves out of a sum", "egraph",
         "(a * b / (s := np.exp(x - x.max(axis=1, keepdims=True)).sum(axis=1, "
         "keepdims=True))).sum(axis=1, keepdims=True)",
         "(a * b).sum(axis=1, keepdims=True) / (s := np.exp(x - x.max(axis=1, "
         "keepdims=True)).sum(axis=1, keepdims=True))",
         "as the rule above, s a softmax's denominator (names bound once, the maximum's "
         "axes and keywords the sum's)", ({"a": (4, 5), "b": (4, 5), "x": (4, 3)},
                                           {"a": (2, 3), "b": (3,), "x": (2, 6)},
                                           {"a": (1, 1), "b": (1, 1), "x": (1, 1)}),
         "", "", exact=False),
    Rule("a constant times a constant over x folds", "egraph",
         "-0.5 * (-1.0 / s * e)", "0.5 / s * e",
         "s, e floating (facts); the e-graph's constant folding (exact for a power-of-two "
         "constant, as here; else equal to rounding)",
         ({"s": (4, 1), "e": (4, 3)}, {"s": (), "e": (3,)}), "", ""),
    Rule("a negated numerator's sign moves out of a quotient", "egraph",
         "x + (-a) / s * e", "x - a / s * e",
         "x, a, s, e floating (facts); exact: negation commutes with rounding, and "
         "adding a negation is subtracting (a softmax's max-shifted cross-entropy: "
         "one negation of a column less)",
         ({"x": (4, 3), "a": (4, 1), "s": (4, 1), "e": (4, 3)}, {"x": (), "a": (), "s": (),
                                                                  "e": ()}), "", ""),
    Rule("one over a value times another is their quotient", "egraph",
         "1.0 / (1.0 + e) * e", "e / (1.0 + e)",
         "e and the divisor floating (facts), also where they are indexed ((...)[:, None]); "
         "equal to rounding: one rounding for two (a logistic loss's sigmoid times its "
         "exponential); the reciprocal of a value beyond 1 / the smallest normal number "
         "is subnormal or zero, where the quotient need not be",
         ({"e": (5,)}, {"e": ()}, {"e": (0,)}, {"e": (2, 3)}), "", "", exact=False),
    Rule("a value less its share e / (1 + e) is the value over 1 + e", "egraph",
         "(-(d := z * (e := np.exp(u))) * b / (t := 1.0 + e) * e + b * d, "
         "b * d - d * e * b / t)",
         "(b * (d := z * (e := np.exp(u))) / (1.0 + e) + (b * d - b * d), "
         "b * d / (1.0 + e) + (b * d - b * d))",
         "t and e names bound once, never written into, to 1 + e and to np.exp(...) (so "
         "e >= 0 or NaN); a factor of the kept term q (here b * d) is e or a name bound "
         "once, never written into, to a product with the factor e; any order of the "
         "factors and of the two terms; real floating values (facts): the product rule's "
         "two terms of the tangent of a logistic loss's cotangent (a Hessian-vector "
         "product's), q * (1 - e / (1 + e)), as q / t, and q - q, zero where q is finite, "
         "NaN where it is not, as the left side's inf - inf (subexpr computes q once): "
         "two passes over the array fewer; equal to rounding (the right side does not "
         "cancel where e is large); NaN at the same elements: e = +inf makes d, so q, "
         "infinite or NaN, and an infinite or NaN q makes both sides NaN; elsewhere both "
         "finite (e / t < 1: no product overflows)",
         ({"z": (5,), "u": (5,), "b": (5,)}, {"z": (2, 3), "u": (2, 3), "b": (3,)},
          {"z": (0,), "u": (0,), "b": (0,)}, {"z": (), "u": (), "b": ()},
          {"z": (1,), "u": (1,), "b": ()}), "", "", exact=False),
    Rule("arithmetic computes into the intermediates nothing else holds", "buffers",
         "(a + a) * s - t * (a * t)",
         "(lambda o, p: (np.multiply(o, s, out=o), np.multiply(p, t, out=p), "
         "np.subtract(o, p, out=o))[2])(a + a, a * t)",
         "each array written into an operator's result no name holds, or a name bound "
         "once to a new array (an operator's, a ufunc's), read only as an operand and "
         "by no later statement; the result of the operator writing into it has its "
         "shape and dtype, real floating, at least 1 KiB (facts of the signature); the "
         "same operations in the same order (a sum or product of two numbers is the "
         "same either way round): exact, NaN and inf included; written as steps, "
         "out = a + a; out *= s; a *= t; a *= t; out -= a",
         ({"a": (4, 3), "s": (4, 3), "t": (4, 3)}, {"a": (3,), "s": (), "t": (3,)},
          {"a": (2, 3), "s": (1, 3), "t": (2, 1)}, {"a": (0, 3), "s": (3,), "t": (0, 3)}),
         "", ""),
    *(Rule(f"np.{fn} of a real value read by an operator is the value", "fixups",
           f"np.{fn}(x) * y", "x * y",
           "x real floating (a fact): the same elements and dtype; the operator makes a new "
           "array either way", ({"x": (3,), "y": (3,)}, {"x": (2, 3), "y": ()},
                                {"x": (0,), "y": (0,)}), "", "")
      for fn in ("conj", "real")),
    Rule("a sum over all axes of an array is its method", "methods", "np.sum(x)",
         "x.sum()", "x has at least one axis (a fact: then it is an ndarray)",
         ({"x": (4,)}, {"x": (2, 0)}), "picked", "np.sum("),
    Rule("a variance is NumPy's own steps", "shapes", "np.var(x, axis=-1, keepdims=True)",
         "((x - x.mean(axis=-1, keepdims=True)) ** 2).mean(axis=-1, keepdims=True)",
         "x a name of a float32 or float64 array (a fact), the axes literal and not empty "
         "(facts of the signature), ddof 0; exact: NumPy's var divides the sum by the count, "
         "subtracts, squares, sums and divides as these means do (the centred x is then "
         "shared with the variance's cotangent, which reads it too)",
         ({"x": (4, 5)}, {"x": (3, 1)}, {"x": (0, 3)}, {"x": (2, 3, 4)}), "var_scaled",
         "np.var("),
    Rule("a variance over all axes is NumPy's own steps", "shapes", "x.var()",
         "((x - x.mean(keepdims=True)) ** 2).mean()",
         "x a name of a float32 or float64 array with at least one element (facts); exact, "
         "as the rule above", ({"x": (4, 5)}, {"x": (1,)}, {"x": (7,)}), "", ""),
    Rule("SciPy's softmax is its own steps", "shapes", "special_softmax(x, axis=1)",
         "np.exp(x - x.max(axis=1, keepdims=True)) / "
         "np.exp(x - x.max(axis=1, keepdims=True)).sum(axis=1, keepdims=True)",
         "x a name of a float32 or float64 array (a fact), the axes literal and none empty "
         "(facts of the signature); exact: scipy.special.softmax takes these steps through "
         "its array-API namespace (NumPy's functions), which costs about as much again "
         "as the arithmetic on a 64 x 10 array",
         ({"x": (4, 5)}, {"x": (3, 1)}, {"x": (0, 3)}, {"x": (2, 3, 4)}), "", ""),
    Rule("a log-sum-exp's exponential is a softmax", "fixups",
         "np.exp(x - special_logsumexp(x, axis=1, keepdims=True))",
         "np.exp(x - np.minimum(x.max(axis=1, keepdims=True), np.finfo(np.float64).max)) / "
         "np.exp(x - np.minimum(x.max(axis=1, keepdims=True), np.finfo(np.float64).max))"
         ".sum(axis=1, keepdims=True)",
         "x a name of a float32 or float64 array, bound once and never written into, the "
         "axes literal and none empty, keepdims=True or every axis, no weights b (facts of "
         "the signature); the log-sum-exp (scipy.special.logsumexp's derivative reads it "
         "only here) is then dead code; the maximum made finite (its dtype's largest "
         "number for +inf), so a row with +inf gives NaN there and 0 elsewhere on both "
         "sides, as JAX's gradient does; equal to rounding (the right side never forms "
         "x - ans)",
         ({"x": (4, 5)}, {"x": (3, 1)}, {"x": (0, 3)}, {"x": (2, 3, 4)}), "", "", exact=False),
    Rule("a cotangent times a log-sum-exp's exponential divides the cotangent", "fixups",
         "g * np.exp(x - special_logsumexp(x, axis=1, keepdims=True))",
         "g / np.exp(x - np.minimum(x.max(axis=1, keepdims=True), np.finfo(np.float64).max))"
         ".sum(axis=1, keepdims=True) * np.exp(x - np.minimum(x.max(axis=1, keepdims=True), "
         "np.finfo(np.float64).max))",
         "as the rule above, and g of the sum's shape and x's dtype (facts): g's few "
         "elements are divided, not x's many; equal to rounding",
         ({"x": (4, 5), "g": (4, 1)}, {"x": (3, 1), "g": (3, 1)}, {"x": (0, 3), "g": (0, 1)},
          {"x": (2, 3, 4), "g": (2, 3, 1)}), "", "", exact=False),
    Rule("twice a floating name is its sum with itself", "literals", "2 * x", "x + x",
         "x a name of a real floating dtype (a fact); exact: doubling rounds nothing and "
         "both sides overflow to the same infinity (NumPy adds two arrays faster than it "
         "multiplies by a Python scalar)",
         ({"x": (3,)}, {"x": ()}, {"x": (0,)}, {"x": (2, 3)}), "tanh_energy", "2 * tanh_x"),
    Rule("an integer operand of floating arithmetic is a float", "literals", "1 - x",
         "1.0 - x", "x floating or complex (a fact), the integer at most 2048 in size "
         "(exact in every float dtype); exact: NumPy 2 takes either as the same weak "
         "scalar of x's dtype (an int costs it a conversion the float does not)",
         ({"x": (3,)}, {"x": ()}, {"x": (0,)}, {"x": (2, 3)}), "tanh_energy", "1 - tanh_x"),
    Rule("a matrix symmetric by construction is its own transpose", "solves",
         "(k := np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2) + 0.1 * np.eye(x.shape[0])).T",
         "np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2) + 0.1 * np.eye(x.shape[0])",
         "k a name bound once, never written into, to a square real matrix (facts) built "
         "of symmetric pieces: np.eye(n), np.diag(v) of a vector, a[:, None] + a[None, :] "
         "and a[:, None] * a[None, :], even functions (** 2, x * x, np.abs, np.square) of "
         "the antisymmetric a[:, None] - a[None, :] (x - y is exactly -(y - x); a scalar "
         "times or over it stays antisymmetric), and elementwise arithmetic and functions "
         "of symmetric values and scalars; a the same 1-D floating name, never written "
         "into; equal to rounding (bit for bit where NumPy's elementwise loop computes "
         "every element alike, as on the builds measured)",
         ({"x": (4,)}, {"x": (1,)}, {"x": (0,)}), "", "", exact=False),
    Rule("solves of one matrix share its factorization", "solves",
         "(np.linalg.inv(k), np.linalg.solve(k, b), np.linalg.solve(k, c))",
         "((s := np.linalg.solve(k, np.concatenate((np.eye(k.shape[0], dtype=np.float64), "
         "b[:, None], c), axis=1)))[:, :k.shape[0]], s[:, k.shape[0]], "
         "s[:, k.shape[0] + 1:])",
         "k a name bound once (or a parameter never rebound), never written into, 2-D "
         "square real (facts); each right side 1-D or 2-D, pure, its names bound before "
         "the first of the calls and not rebound until its own; every result of one dtype "
         "(np.linalg.solve casts to the common type anyway; np.eye in it); no result can "
         "escape as a view of the shared array (each read only by operators, reductions "
         "and matrix products: never returned, passed on, or bound to a name written "
         "into); the one solve placed before the first call; equal to rounding (NumPy's "
         "inv is this solve of the identity; LAPACK solves each column alike, though a "
         "blocked triangular solve may order a column's work by the number of columns)",
         ({"k": (4, 4), "b": (4,), "c": (4, 2)}, {"k": (1, 1), "b": (1,), "c": (1, 3)},
          {"k": (0, 0), "b": (0,), "c": (0, 2)}), "gp_nll", "np.linalg.inv(", exact=False),
    Rule("a sum along a matrix's rows is a product with ones", "products",
         "x.sum(axis=1)", "x @ np.ones((x.shape[1],), dtype=np.float64)",
         _PRODUCTS + "; the rows at most 128 long (NumPy sums up to 128 contiguous "
         "numbers with eight running sums, pairwise beyond: a dot product's few running "
         "sums have its error bound); equal to rounding (times one is exact: the same "
         "numbers added, in another order)",
         ({"x": (4, 5)}, {"x": (3, 1)}, {"x": (0, 3)}, {"x": (2, 0)}, {"x": (2, 128)}),
         "row_sums", "axis=1)", exact=False),
    Rule("a sum along a matrix's rows, kept 2-D, is a product with a column of ones",
         "products", "np.sum(x, axis=-1, keepdims=True)",
         "x @ np.ones((x.shape[1], 1), dtype=np.float64)", "as the rule above",
         ({"x": (4, 5)}, {"x": (3, 1)}, {"x": (0, 3)}, {"x": (2, 0)}), "", "",
         exact=False),
    Rule("a mean down a matrix's columns is a product with ones over the count",
         "products", "x.mean(axis=0, keepdims=True)",
         "np.ones((1, x.shape[0]), dtype=np.float64) @ x / x.shape[0]",
         _PRODUCTS + ", the count not zero (an empty mean's warning stays NumPy's); "
         "columns of any length (NumPy adds them one row after another); equal to "
         "rounding (NumPy's mean is the sum over the count, as here)",
         ({"x": (4, 5)}, {"x": (1, 3)}, {"x": (3, 0)}, {"x": (300, 2)}), "col_means",
         "axis=0, keepdims=True)", exact=False),
    Rule("a matrix product of a column and a row is their elementwise product",
         "products", "a @ b", "a * b",
         "a of shape (m, 1), b of shape (1, n), one real floating dtype (facts of the "
         "signature): each element is one product, rounded once either way (a zero's "
         "sign may differ where BLAS adds the product to zero), without BLAS's call: "
         "a Gaussian process's outer product of two solves, 60k instructions to 27k",
         ({"a": (4, 1), "b": (1, 3)}, {"a": (0, 1), "b": (1, 3)}, {"a": (2, 1), "b": (1, 0)},
          {"a": (1, 1), "b": (1, 1)}), "", "", exact=False),
    Rule("a stack of matrix-vector products with one matrix is a matrix product",
         "products", "(a @ v[..., None])[..., 0]", "v @ a.T",
         "a 2-D, v at least 1-D with a's columns as its last axis, one real floating "
         "dtype (facts of the signature): the same sums of the same products, in one "
         "BLAS call where the left side makes one per vector (a vmapped gradient's "
         "hidden-layer cotangent: a per-example MLP's 64.9 -> 62 us); equal to "
         "rounding (the order of a sum's additions may differ between the kernels)",
         ({"a": (3, 4), "v": (5, 4)}, {"a": (3, 4), "v": (4,)}, {"a": (0, 2), "v": (3, 2)},
          {"a": (2, 0), "v": (3, 0)}, {"a": (3, 4), "v": (2, 5, 4)}, {"a": (1, 1), "v": (1, 1)}),
         "", "", exact=False),
    Rule("a matrix product of plain float matrices and vectors is ndarray.dot", "products",
         "a @ b", "a.dot(b)",
         "a and b float32 or float64 arrays of one or two axes, at most 1024 elements each, "
         "4096 where one is a vector (BLAS's gemv either way: a 256 x 8 matrix times a "
         "vector 1.8 -> 1.1 us) (facts of the signature; larger products of matrices "
         "counted more instructions as dots), "
         "both plain np.ndarray objects: array arguments (the signature admits no "
         "subclass), the specialized code's constants, free names bound to plain "
         "arrays (their objects guarded), and what NumPy operators, np functions, "
         "methods, views and the runtime's helpers make of those alone (a subclass's @ "
         "may dispatch to its own __matmul__); spelled last, after the buffers pass; "
         "equal to rounding: NumPy's dot and matmul agree on matrices and vectors and "
         "call the same BLAS routine on contiguous or transposed operands (bit for bit "
         "there, NaN and inf alike), where a strided view makes matmul take its own "
         "loop and dot a contiguous copy (another order of the additions); the ufunc "
         "machinery of np.matmul gone (8.3k instructions to 4.2k for a 4 x 3 matrix "
         "times a column; an MLP's gradient makes seven products)",
         ({"a": (4, 3), "b": (3, 1)}, {"a": (4, 3), "b": (3,)}, {"a": (3,), "b": (3, 4)},
          {"a": (3,), "b": (3,)}, {"a": (0, 3), "b": (3, 0)}, {"a": (2, 0), "b": (0, 2)},
          {"a": (1, 1), "b": (1, 1)}, {"a": (5, 5), "b": (5, 5)}, {"a": (256, 8), "b": (8,)},
          {"a": (256,), "b": (256, 8)}), "", "", exact=False),
    Rule("a number beside a float64 array is a 0-d array", "literals",
         "(0.5 * x, x - 3, -0.25 / x, x > -0.25, x == 0.0, np.maximum(x, 0.0))",
         "(np.array(0.5, dtype=np.float64) * x, x - np.array(3.0, dtype=np.float64), "
         "np.array(-0.25, dtype=np.float64) / x, x > np.array(-0.25, dtype=np.float64), "
         "x == np.array(0.0, dtype=np.float64), np.maximum(x, np.array(0.0, dtype=np.float64)))",
         "x a float64 array of at least one axis (a fact; the number finite, an int at "
         "most 2048 in size), an operand of + - * /, a comparison, np.maximum or "
         "np.minimum; the 0-d array a module constant of the specialized code (c0_5 = "
         "np.array(0.5)), read only there; not where the signature has float32 arrays (a "
         "0-d array is not weak: beside float32 a float64 one would promote, and a "
         "value a pass made float32 may have a float64 fact); exact: NumPy converts the "
         "Python float to that float64 and runs the same loop (a Python scalar costs "
         "the operator a conversion: 0.5 * a on a 4 x 3 array, 5.3k instructions to "
         "4.0k)", ({"x": (4, 5)}, {"x": (1,)}, {"x": (0, 3)}), "", ""),
    Rule("a float64 seed beside float64 values is a number", "egraph",
         "np.float64(1.0) * 0.5 * g", "0.5 * g",
         "every operand but the seeds a float64 NumPy value, not a Python number "
         "(facts), no literal divisor (a Python float over zero raises); exact: the same "
         "float64 numbers in the same order and a float64 result, and the e-graph then "
         "folds the numbers (a log-determinant's cotangent)",
         ({"g": (3, 3)}, {"g": ()}, {"g": (0, 2)}), "", ""),
    Rule("adding a negated factor is subtracting", "signs",
         "(x + (-a) * b, x + (-a) / b, x + (-a))", "(x - a * b, x - a / b, x - a)",
         "x and a floating arrays (facts: -True raises); written after the products and "
         "solves passes, whose spellings the signs pass did not see (a solve's "
         "cotangent k_bar + -b_bar @ alpha.T, its column times row made k_bar + -b_bar * "
         "alpha.T); exact: x - p is x + (-p), and negation commutes with rounding",
         ({"x": (3, 4), "a": (3, 1), "b": (1, 4)}, {"x": (0, 2), "a": (0, 2), "b": (2,)},
          {"x": (1,), "a": (1,), "b": ()}), "", ""),
    Rule("new leading axes of an operand are broadcasting's", "literals",
         "(a - v[None, :], b * w[..., None].T)", "(a - v, b * w)",
         "v indexed by new axes then one whole slice per axis (a fact: its rank), the "
         "other operand of + - * / of at least as many axes as the index makes (a fact); "
         "exact: broadcasting puts the same leading axes of length 1, the same elements "
         "and shape, without the view (a mixture's x[:, None] - mu[None, :]; a vector's "
         "w[..., None].T, a solve's cotangent, is w[None, :])",
         ({"a": (4, 3), "v": (3,), "b": (3, 1), "w": (3,)},
          {"a": (4, 1), "v": (3,), "b": (2, 4), "w": (4,)},
          {"a": (0, 3), "v": (3,), "b": (0, 1), "w": (2,)},
          {"a": (2, 1, 3), "v": (3,), "b": (2, 1, 1), "w": (1,)},
          {"a": (2, 1), "v": (0,), "b": (1, 1), "w": (0,)}), "", ""),
    Rule("zeros plus a value in a view of all of them is the value", "accumulate",
         "iadd(np.zeros(np.shape(v)[1:], dtype=np.float64), (None, slice(None)), 2.0 * v)",
         "(2.0 * v)[0]",
         "b = np.zeros(s) and, the next statement, b[None, :] += v (new axes and whole "
         "slices: a view of every element of b); v an operator's new array (no name "
         "holds it) of that view's shape and b's dtype (facts), not reading b (its "
         "trailing whole slices dropped: v[0, :] is v[0]); equal "
         "to rounding: zero plus -0.0 is 0.0, where the view keeps -0.0 (as JAX's "
         "transpose of the index does); the zeros and the buffered add gone (a "
         "mixture's mu[None, :]: 27k instructions to 14k)",
         ({"v": (1, 3)}, {"v": (1, 0)}, {"v": (1, 1)}), "centered",
         "mu_bar[None, :] +=", exact=False),
    Rule("a power of two distributes over a scaled array plus a number", "literals",
         "(-0.25 * (0.9 * x + 0.1), 0.5 * (3.0 * x - 0.7))",
         "(-0.225 * x - 0.25 * 0.1, 1.5 * x - 0.5 * 0.7)",
         "the factor a power of two (a literal), x a float64 array (a fact), the sum's "
         "other term a Python number (a literal, or a name whose fact says so): one "
         "operation on the array less (label smoothing's cotangent); exact where nothing "
         "is subnormal or overflows: scaling by a power of two commutes with rounding",
         ({"x": (4, 3)}, {"x": (1,)}, {"x": (0, 2)}, {"x": ()}), "", ""),
    Rule("a maximum over axes is the ufunc's reduction", "methods",
         "(x.max(axis=1, keepdims=True), x.min(axis=0))",
         "(np.maximum.reduce(x, axis=1, keepdims=True), np.minimum.reduce(x, axis=0))",
         "x a real floating array of at least one axis (a fact), no keyword but axis and "
         "keepdims (literals); exact: the method runs this reduction through "
         "numpy/_core/_methods.py's _amax (_amin), whose Python frame is gone (11.6k "
         "instructions to 11.1k on a 4 x 3 array), an empty axis's error the same",
         ({"x": (4, 3)}, {"x": (1, 5)}, {"x": (2, 1)}), "", ""),
    Rule("an identity only read is a module constant", "literals",
         "(i := np.eye(3), 0.1 * i + x, np.concatenate((i, x), axis=1))[1:]",
         "(0.1 * EYE_3 + x, np.concatenate((EYE_3, x), axis=1))",
         "i bound once to np.eye or np.identity of literals (subexpr.MADE), never "
         "written into, every read an operand of an operator or an item of the tuple "
         "np.concatenate (or a stack) joins: every value made of it a new array; the "
         "constant made once with the specialized code and read-only (a write raises); "
         "exact: the same numbers (a Gaussian process's identity, 10k instructions a call)",
         ({"x": (3, 3)}, {"x": (3, 1)}), "", ""),
)
