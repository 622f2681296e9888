"""``scipy.linalg`` solvers and ``scipy.signal`` convolutions (JAX's are under
``jax.scipy``).

Registered only where SciPy is installed, the first time a function of ``scipy.linalg``
or ``scipy.signal`` is looked up.  Emitted code calls SciPy through the runtime's
helpers (``linalg_expm(a)``, ``signal_convolve(x, h, mode="same")``), each the same
primitive as the function it calls.  Matrices are 2-D (vmap makes stacks of them);
real values.

* ``solve_triangular(a, b, trans, lower, unit_diagonal)``: ``x = op(t)^-1 b`` with
  ``t`` the triangle of ``a`` the call reads (its diagonal 1 with ``unit_diagonal``);
  ``b``'s cotangent is the solve with the other ``trans``, ``a``'s the outer product
  ``-b_bar x^T`` (``-x b_bar^T`` transposed) kept to the triangle read.
* ``expm(a)``: the derivative is the Fréchet derivative ``L(a, e)``, the upper right
  block of ``expm([[a, e], [0, a]])`` (the block-matrix method); the VJP is ``L(a^T,
  g)``.  Higher orders follow: it is ``expm`` again.
* ``cho_factor(a, lower)`` is ``(c, lower)``: the factor ``c`` is a primitive of its own
  (``linalg_cho_factor``) whose triangle is the Cholesky factor of the symmetric matrix
  that triangle of ``a`` gives (the other triangle is ``a``'s, untouched, as LAPACK
  leaves it); ``cho_solve((c, lower), b)`` reads ``c``'s triangle.  Their derivatives
  follow that reading (finite differences agree; JAX's ``cho_factor`` derivative takes
  a non-symmetric tangent as given).
* ``solve_sylvester(a, b, q)``: ``a x + x b = q``; the tangent solves the same equation
  with ``q_dot - a_dot x - x b_dot``; the cotangent ``y`` solves it with ``a^T``,
  ``b^T`` and ``g``, and ``a_bar = -y x^T``, ``b_bar = -x^T y``.
* ``solve_banded((l, u), ab, b)``: the derivatives of a dense solve, the matrix's
  kept to the band (``banded_dense`` and ``dense_banded`` move between the band's
  storage and the matrix; each is the other's transpose).  JAX has no banded solver:
  checked by finite differences and a dense JAX twin (on the JAX backend the runtime
  solves the dense matrix).
* ``convolve(in1, in2, mode)`` (and ``fftconvolve`` with ``axes``, which vmap uses to
  convolve each example with its own kernel): bilinear; the cotangent of ``mode``'s
  result padded to the full result's shape (``conv_pad``) gives each operand's as a
  'valid' convolution with the other flipped.  ``correlate(in1, in2, mode)`` is
  ``convolve(in1, flip(in2), mode)`` (a form: SciPy's own identity, every mode).
"""

import numpy as np

from .. import runtime_scipy as rs
from ..ir.nodes import Const, Let
from ..ir.spelling import atom_text
from ..runtime import (
    banded_dense,
    conv_crop,
    conv_pad,
    dense_banded,
    linalg_cho_solve,
    linalg_expm,
    linalg_solve_banded,
    linalg_solve_sylvester,
    linalg_solve_triangular,
    matmul_lhs_bar,
    signal_convolve,
    signal_fftconvolve,
    unbroadcast,
)
from .batching import Batch, NoBatchRule, _with_batch, args_text, batch_rule, shifted, static
from .registry import (
    Refused,
    Result,
    call_spelling,
    defbilinear,
    defform,
    defjvp,
    deflinear,
    defprim,
    defvjp,
)

try:
    import scipy.linalg as _sl
    import scipy.signal as _ss
except ImportError:  # pragma: no cover - SciPy is optional
    _sl = _ss = None


def _defscipy(module, name, helper, sig, **kw):
    """``scipy.<module>.<name>``, spelled and aliased by its runtime helper."""
    impl = getattr(_sl if module == "linalg" else _ss, name) if kw.pop("own", True) \
        else getattr(rs, helper)
    defprim(f"scipy.{module}.{name}", impl, sig, spelling=call_spelling(helper),
            aliases=(getattr(rs, helper),) if impl is not getattr(rs, helper) else (),
            **kw)


def _trans(args, kwargs):
    """``trans`` as 0 or 1 ('N', 'T'; 'C' and 2 are 'T' for real matrices)."""
    names = ("a", "b", "trans", "lower", "unit_diagonal", "overwrite_b", "check_finite")
    given = dict(zip(names, args))
    given.update(kwargs)
    trans = given.get("trans")
    if trans is not None:
        value = trans.value if isinstance(trans, Const) else None
        if value not in (0, 1, 2, "N", "T", "C") or isinstance(value, bool):
            raise Refused("`trans=` must be written in the call: 0, 1, 2, 'N', 'T' or 'C'",
                          "pass trans=0 or trans='T'")
        code = 0 if value in (0, "N") else 1
        given["trans"] = Const(code, str(code))
    return [], given


def _solve_rule(b: Batch, s: Let, matrices: int) -> str:
    """A solve of ``matrices`` batched matrices against a right side that is a vector or
    a matrix per example: each operand given the batch axis, a vector as a column."""
    *mats, rhs = s.args[:matrices + 1]
    rest = [atom_text(a) for a in s.args[matrices + 1:]]
    if any(b.batched(a) for a in s.args[matrices + 1:]):
        raise NoBatchRule(f"`{s.prim}` with a batched argument after the right side")
    texts = [_with_batch(b, m) for m in mats]
    column = b.rank(rhs) == 1
    right = _with_batch(b, rhs)
    if column:
        right = f"{right}[..., None]"
    text = args_text(s, [*texts, right, *rest])
    return f"{text}[..., 0]" if column else text


if _sl is not None:
    # ---- solve_triangular ---------------------------------------------------------

    _defscipy("linalg", "solve_triangular", "linalg_solve_triangular",
              "(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, "
              "check_finite=True)", family="linalg", diff=("a", "b"), canonical=_trans,
              note="op(t) x = b, t the triangle of a read (unit_diagonal: ones on it); "
              "a 2-D, b a vector or a matrix; b is never overwritten")

    @defvjp("scipy.linalg.solve_triangular")
    def solve_triangular_vjp(g, ans, a, b, trans=0, lower=False, unit_diagonal=False,
                             overwrite_b=False, check_finite=True):
        if trans == 0:
            b_bar = linalg_solve_triangular(a, g, trans=1, lower=lower,
                                            unit_diagonal=unit_diagonal)
            a_bar = -matmul_lhs_bar(b_bar, a, ans)  # (x a vector: the outer product)
        else:
            b_bar = linalg_solve_triangular(a, g, trans=0, lower=lower,
                                            unit_diagonal=unit_diagonal)
            a_bar = -np.matrix_transpose(matmul_lhs_bar(b_bar, a, ans))
        if lower and unit_diagonal:
            return np.tril(a_bar, -1), b_bar
        if lower:
            return np.tril(a_bar), b_bar
        if unit_diagonal:
            return np.triu(a_bar, 1), b_bar
        return np.triu(a_bar), b_bar

    @defjvp("scipy.linalg.solve_triangular", "a")
    def solve_triangular_jvp_a(a_dot, ans, a, b, trans=0, lower=False,
                               unit_diagonal=False, overwrite_b=False, check_finite=True):
        if lower and unit_diagonal:
            t_dot = np.tril(a_dot, -1)
        elif lower:
            t_dot = np.tril(a_dot)
        elif unit_diagonal:
            t_dot = np.triu(a_dot, 1)
        else:
            t_dot = np.triu(a_dot)
        if trans != 0:
            t_dot = np.matrix_transpose(t_dot)
        return -linalg_solve_triangular(a, t_dot @ ans, trans=trans, lower=lower,
                                        unit_diagonal=unit_diagonal)

    @defjvp("scipy.linalg.solve_triangular", "b")
    def solve_triangular_jvp_b(b_dot, ans, a, b, trans=0, lower=False,
                               unit_diagonal=False, overwrite_b=False, check_finite=True):
        return linalg_solve_triangular(a, b_dot, trans=trans, lower=lower,
                                       unit_diagonal=unit_diagonal)

    @batch_rule("scipy.linalg.solve_triangular")
    def solve_triangular_rule(b: Batch, s: Let) -> str:
        """Stacks of matrices (SciPy and JAX solve them one by one)."""
        return _solve_rule(b, s, 1)

    # ---- expm -----------------------------------------------------------------------

    _defscipy("linalg", "expm", "linalg_expm", "(A)", family="linalg",
              batch="trailing_axes",
              note="derivative: the Fréchet derivative, expm of the block matrix "
              "[[A, E], [0, A]] (its upper right block); the VJP at A.T")

    @defvjp("scipy.linalg.expm")
    def expm_vjp(g, ans, A):
        n = np.shape(A)[-1]
        a_t = np.matrix_transpose(A)
        top = np.concatenate([a_t, g], axis=-1)
        bottom = np.concatenate([np.zeros_like(a_t), a_t], axis=-1)
        return linalg_expm(np.concatenate([top, bottom], axis=-2))[..., :n, n:]

    @defjvp("scipy.linalg.expm", "A")
    def expm_jvp(A_dot, ans, A):
        n = np.shape(A)[-1]
        top = np.concatenate([A, A_dot], axis=-1)
        bottom = np.concatenate([np.zeros_like(A), A], axis=-1)
        return linalg_expm(np.concatenate([top, bottom], axis=-2))[..., :n, n:]

    # ---- sqrtm ----------------------------------------------------------------------
    # s = sqrtm(a): s ds + ds s = da, a Sylvester equation in ds; the VJP solves its
    # transpose, s^T x + x s^T = g.  (JAX's sqrtm, through schur, has no derivative.)

    _defscipy("linalg", "sqrtm", "linalg_sqrtm", "(A)", family="linalg",
              batch="trailing_axes",
              note="s ds + ds s = dA (solve_sylvester); complex where SciPy's root is; "
              "a real A's cotangent is real")

    @defvjp("scipy.linalg.sqrtm")
    def sqrtm_vjp(g, ans, A):
        s_t = np.matrix_transpose(ans)
        return unbroadcast(linalg_solve_sylvester(s_t, s_t, g), A)

    @defjvp("scipy.linalg.sqrtm", "A")
    def sqrtm_jvp(A_dot, ans, A):
        return linalg_solve_sylvester(ans, ans, A_dot)

    # ---- cho_factor, cho_solve -----------------------------------------------------

    _defscipy("linalg", "cho_factor", "linalg_cho_factor",
              "(a, lower=False, overwrite_a=False, check_finite=True)", own=False,
              family="linalg", batch="trailing_axes",
              note="cho_factor(a, lower)'s factor: the Cholesky factor of the symmetric "
              "matrix one triangle of a gives (the other triangle a's, untouched)")

    @defvjp("scipy.linalg.cho_factor")
    def cho_factor_vjp(g, ans, a, lower=False, overwrite_a=False, check_finite=True):
        # the factor's cotangent through cholesky's (symmetric s_bar), then onto the
        # triangle read: the diagonal once, the rest from both triangles of s_bar
        if lower:
            l = np.tril(ans)
            l_bar = np.tril(g)
            rest = np.triu(g, 1)
        else:
            l = np.matrix_transpose(np.triu(ans))
            l_bar = np.matrix_transpose(np.triu(g))
            rest = np.tril(g, -1)
        l_t = np.matrix_transpose(l)
        p = l_t @ l_bar
        p = np.tril(p) - 0.5 * p * np.eye(np.shape(a)[-1])
        s = np.linalg.solve(l_t, np.matrix_transpose(np.linalg.solve(l_t, p)))
        s = s + np.matrix_transpose(s)
        if lower:
            return np.tril(s) - 0.5 * s * np.eye(np.shape(a)[-1]) + rest
        return np.triu(s) - 0.5 * s * np.eye(np.shape(a)[-1]) + rest

    @defjvp("scipy.linalg.cho_factor", "a")
    def cho_factor_jvp(a_dot, ans, a, lower=False, overwrite_a=False, check_finite=True):
        if lower:
            l = np.tril(ans)
            s_dot = np.tril(a_dot) + np.matrix_transpose(np.tril(a_dot, -1))
            rest = np.triu(a_dot, 1)
        else:
            l = np.matrix_transpose(np.triu(ans))
            s_dot = np.triu(a_dot) + np.matrix_transpose(np.triu(a_dot, 1))
            rest = np.tril(a_dot, -1)
        x = np.linalg.solve(l, np.matrix_transpose(np.linalg.solve(l, s_dot)))
        l_dot = l @ (np.tril(x) - 0.5 * x * np.eye(np.shape(a)[-1]))
        if lower:
            return l_dot + rest
        return np.matrix_transpose(l_dot) + rest

    _defscipy("linalg", "cho_solve", "linalg_cho_solve",
              "(c, b, lower=False, overwrite_b=False, check_finite=True)", own=False,
              family="linalg", diff=("c", "b"),
              note="cho_solve((c, lower), b): s x = b, s = l l^T from c's triangle l; "
              "b a vector or a matrix, never overwritten")

    @defvjp("scipy.linalg.cho_solve")
    def cho_solve_vjp(g, ans, c, b, lower=False, overwrite_b=False, check_finite=True):
        b_bar = linalg_cho_solve(c, g, lower=lower)
        s_bar = -matmul_lhs_bar(b_bar, c, ans)
        s_bar = s_bar + np.matrix_transpose(s_bar)
        if lower:
            return np.tril(s_bar @ np.tril(c)), b_bar
        return np.triu(np.triu(c) @ s_bar), b_bar

    @defjvp("scipy.linalg.cho_solve", "c")
    def cho_solve_jvp_c(c_dot, ans, c, b, lower=False, overwrite_b=False,
                        check_finite=True):
        if lower:
            l = np.tril(c)
            l_dot = np.tril(c_dot)
        else:
            l = np.matrix_transpose(np.triu(c))
            l_dot = np.matrix_transpose(np.triu(c_dot))
        s_dot = l_dot @ np.matrix_transpose(l) + l @ np.matrix_transpose(l_dot)
        return -linalg_cho_solve(c, s_dot @ ans, lower=lower)

    @defjvp("scipy.linalg.cho_solve", "b")
    def cho_solve_jvp_b(b_dot, ans, c, b, lower=False, overwrite_b=False,
                        check_finite=True):
        return linalg_cho_solve(c, b_dot, lower=lower)

    @batch_rule("scipy.linalg.cho_solve")
    def cho_solve_rule(b: Batch, s: Let) -> str:
        """Stacks of factors (SciPy and JAX solve them one by one)."""
        return _solve_rule(b, s, 1)

    def _lower(atom) -> bool:
        if not isinstance(atom, Const) or type(atom.value) is not bool:
            raise Refused("`lower` must be True or False written in the call (or come "
                          "from cho_factor in the function)",
                          "pass lower=True or lower=False")
        return atom.value

    def _cho_factor(args, kwargs, items):
        names = ("a", "lower", "overwrite_a", "check_finite")
        given = dict(zip(names, args))
        given.update(kwargs)
        lower = given.get("lower", Const(False, "False"))
        _lower(lower)
        return [("scipy.linalg.cho_factor", [given["a"]], {"lower": lower}),
                ("make_tuple", [Result(0), lower], {})]

    def _cho_solve(args, kwargs, items):
        names = ("c_and_lower", "b", "overwrite_b", "check_finite")
        given = dict(zip(names, args))
        given.update(kwargs)
        pair = items(given.get("c_and_lower"))
        if pair is None or len(pair) != 2:
            raise Refused("its first argument must be the pair (c, lower) cho_factor "
                          "returns, written in the function",
                          "cho_solve(cho_factor(a), b) or cho_solve((c, True), b)")
        return [("scipy.linalg.cho_solve", [pair[0], given["b"]],
                 {"lower": Const(_lower(pair[1]), repr(pair[1].value))})]

    defform(_sl.cho_factor, "scipy.linalg.cho_factor", _cho_factor,
            "(the factor, lower): the factor is linalg_cho_factor")
    defform(_sl.cho_solve, "scipy.linalg.cho_solve", _cho_solve,
            "linalg_cho_solve(c, b, lower=...) of the pair cho_factor returned")

    # ---- solve_sylvester -----------------------------------------------------------

    _defscipy("linalg", "solve_sylvester", "linalg_solve_sylvester", "(a, b, q)",
              family="linalg", batch="trailing_axes",
              note="a x + x b = q; the cotangent solves it with a.T, b.T")

    @defvjp("scipy.linalg.solve_sylvester")
    def solve_sylvester_vjp(g, ans, a, b, q):
        y = linalg_solve_sylvester(np.matrix_transpose(a), np.matrix_transpose(b), g)
        return -(y @ np.matrix_transpose(ans)), -(np.matrix_transpose(ans) @ y), y

    @defjvp("scipy.linalg.solve_sylvester", "a")
    def solve_sylvester_jvp_a(a_dot, ans, a, b, q):
        return linalg_solve_sylvester(a, b, -(a_dot @ ans))

    @defjvp("scipy.linalg.solve_sylvester", "b")
    def solve_sylvester_jvp_b(b_dot, ans, a, b, q):
        return linalg_solve_sylvester(a, b, -(ans @ b_dot))

    @defjvp("scipy.linalg.solve_sylvester", "q")
    def solve_sylvester_jvp_q(q_dot, ans, a, b, q):
        return linalg_solve_sylvester(a, b, q_dot)

    @batch_rule("scipy.linalg.solve_sylvester")
    def solve_sylvester_rule(b: Batch, s: Let) -> str:
        """Stacks (SciPy solves them one by one): every operand given the batch axis."""
        return args_text(s, [_with_batch(b, a) for a in s.args])

    # ---- solve_banded ----------------------------------------------------------------

    _defscipy("linalg", "solve_banded", "linalg_solve_banded",
              "(ab, b, lower=0, upper=0, overwrite_ab=False, overwrite_b=False, "
              "check_finite=True)", own=False, family="linalg", diff=("ab", "b"),
              note="solve_banded((lower, upper), ab, b): the banded matrix's derivatives "
              "through its dense form (banded_dense), kept to the band; JAX has none")

    @defvjp("scipy.linalg.solve_banded")
    def solve_banded_vjp(g, ans, ab, b, lower=0, upper=0, overwrite_ab=False,
                         overwrite_b=False, check_finite=True):
        a = banded_dense(ab, lower, upper)
        ab_t = dense_banded(np.matrix_transpose(a), upper, lower)
        b_bar = linalg_solve_banded(ab_t, g, lower=upper, upper=lower)
        return dense_banded(-matmul_lhs_bar(b_bar, a, ans), lower, upper), b_bar

    @defjvp("scipy.linalg.solve_banded", "ab")
    def solve_banded_jvp_ab(ab_dot, ans, ab, b, lower=0, upper=0, overwrite_ab=False,
                            overwrite_b=False, check_finite=True):
        a_dot = banded_dense(ab_dot, lower, upper)
        return -linalg_solve_banded(ab, a_dot @ ans, lower=lower, upper=upper)

    @defjvp("scipy.linalg.solve_banded", "b")
    def solve_banded_jvp_b(b_dot, ans, ab, b, lower=0, upper=0, overwrite_ab=False,
                           overwrite_b=False, check_finite=True):
        return linalg_solve_banded(ab, b_dot, lower=lower, upper=upper)

    @batch_rule("scipy.linalg.solve_banded")
    def solve_banded_rule(b: Batch, s: Let) -> str:
        """Stacks of bands (SciPy solves them one by one)."""
        return _solve_rule(b, s, 1)

    def _solve_banded(args, kwargs, items):
        names = ("l_and_u", "ab", "b", "overwrite_ab", "overwrite_b", "check_finite")
        given = dict(zip(names, args))
        given.update(kwargs)
        pair = given.pop("l_and_u", None)
        pair = items(pair) if pair is not None else None
        if pair is None or len(pair) != 2 or not all(
                isinstance(k, Const) and type(k.value) is int and k.value >= 0 for k in pair):
            raise Refused("`(l, u)` must be two ints written in the call",
                          "solve_banded((1, 1), ab, b)")
        if "ab" not in given or "b" not in given:
            raise Refused("it takes (l, u), ab and b", "solve_banded((1, 1), ab, b)")
        rest = {k: v for k, v in given.items() if k not in ("ab", "b")}
        return [("scipy.linalg.solve_banded", [given["ab"], given["b"]],
                 {"lower": pair[0], "upper": pair[1], **rest})]

    defform(_sl.solve_banded, "scipy.linalg.solve_banded", _solve_banded,
            "linalg_solve_banded(ab, b, lower=l, upper=u) ((l, u) constants)")

    for _name, _helper in (("banded_dense", banded_dense), ("dense_banded", dense_banded)):
        defprim(_name, _helper, "(x, lower, upper)", family="runtime", diff=("x",),
                spelling=call_spelling(_name), batch="trailing_axes",
                note="a band's dense matrix (banded_dense) and a matrix's band "
                "(dense_banded): each the other's transpose")

    @defvjp("banded_dense")
    def banded_dense_vjp(g, ans, x, lower, upper):
        return dense_banded(g, lower, upper)

    @defvjp("dense_banded")
    def dense_banded_vjp(g, ans, x, lower, upper):
        return banded_dense(g, lower, upper)

    deflinear("banded_dense", "x")
    deflinear("dense_banded", "x")

if _ss is not None:
    # ---- convolve, fftconvolve; correlate is convolve with the kernel flipped ------

    _defscipy("signal", "convolve", "signal_convolve",
              "(in1, in2, mode='full', method='auto')", family="linalg",
              note="bilinear: each operand's cotangent a 'valid' convolution of the "
              "full-shaped cotangent with the other flipped; in1 and in2 of one rank")

    @defvjp("scipy.signal.convolve")
    def convolve_vjp(g, ans, in1, in2, mode="full", method="auto"):
        full = conv_pad(g, in1, in2, mode)
        in1_bar = signal_convolve(full, np.flip(in2), mode="valid", method=method)
        in2_bar = signal_convolve(full, np.flip(in1), mode="valid", method=method)
        return in1_bar, in2_bar

    defbilinear("scipy.signal.convolve", "in1", "in2", keywords=True)

    _defscipy("signal", "fftconvolve", "signal_fftconvolve",
              "(in1, in2, mode='full', axes=None)", family="linalg",
              note="convolve by FFT over axes, broadcasting over the others")

    @defvjp("scipy.signal.fftconvolve")
    def fftconvolve_vjp(g, ans, in1, in2, mode="full", axes=None):
        full = conv_pad(g, in1, in2, mode, axes)
        in1_bar = signal_fftconvolve(full, np.flip(in2, axes), mode="valid", axes=axes)
        in2_bar = signal_fftconvolve(full, np.flip(in1, axes), mode="valid", axes=axes)
        return unbroadcast(in1_bar, in1), unbroadcast(in2_bar, in2)

    defbilinear("scipy.signal.fftconvolve", "in1", "in2", keywords=True)

    def _convolved(b: Batch, s: Let, axes) -> tuple[list[str], str]:
        """The operands with the batch axis and the per-example axes to convolve over."""
        in1, in2 = s.args[:2]
        if any(b.batched(a) for a in s.args[2:]):
            raise NoBatchRule(f"`{s.prim}` with a batched mode or axes")
        rank = max(b.rank(in1), b.rank(in2))
        texts = [_with_batch(b, a) for a in (in1, in2)]  # (JAX's broadcasts no axis)
        return texts, shifted(axes, rank)

    @batch_rule("scipy.signal.convolve", "scipy.signal.fftconvolve")
    def convolve_rule(b: Batch, s: Let) -> str:
        """Each example convolved with its own kernel: fftconvolve over the per-example
        axes, broadcasting over the batch axis."""
        axes = static(s, "axes", None) if s.prim.endswith("fftconvolve") else None
        texts, over = _convolved(b, s, axes)
        mode = static(s, "mode", "full")
        return f"signal_fftconvolve({texts[0]}, {texts[1]}, mode={mode!r}, axes={over})"

    for _name, _helper in (("conv_pad", conv_pad), ("conv_crop", conv_crop)):
        defprim(_name, _helper, "(cot, in1, in2, mode='full', axes=None)", family="runtime",
                spelling=call_spelling(_name), diff=("cot",),
                note="a convolution's cotangent padded to the full shape (conv_pad) and "
                "cropped back (conv_crop): each the other's transpose")

    @defvjp("conv_pad")
    def conv_pad_vjp(g, ans, cot, in1, in2, mode="full", axes=None):
        return conv_crop(g, in1, in2, mode, axes)

    @defvjp("conv_crop")
    def conv_crop_vjp(g, ans, cot, in1, in2, mode="full", axes=None):
        return conv_pad(g, in1, in2, mode, axes)

    deflinear("conv_pad", "cot", keywords=True)
    deflinear("conv_crop", "cot", keywords=True)

    @batch_rule("conv_pad", "conv_crop")
    def conv_pad_rule(b: Batch, s: Let) -> str:
        """The per-example axes (the batch axis is padded by nothing)."""
        cot, in1, in2 = s.args[:3]
        rank = b.rank(cot)
        axes = static(s, "axes", None)
        texts = [_with_batch(b, a) for a in (cot, in1, in2)]
        return args_text(s, texts, {"axes": shifted(axes, rank)})

    def _correlate(args, kwargs, items):
        names = ("in1", "in2", "mode", "method")
        given = dict(zip(names, args))
        given.update(kwargs)
        if "in1" not in given or "in2" not in given:
            raise Refused("it takes in1 and in2", "scipy.signal.correlate(in1, in2)")
        rest = {k: v for k, v in given.items() if k in ("mode", "method")}
        return [("flip", [given["in2"]], {}),
                ("scipy.signal.convolve", [given["in1"], Result(0)], rest)]

    defform(_ss.correlate, "scipy.signal.correlate", _correlate,
            "convolve(in1, np.flip(in2), mode, method): SciPy's identity, every mode")
