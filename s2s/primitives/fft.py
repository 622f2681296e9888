"""``np.fft``: discrete Fourier transforms, linear maps whose adjoints are transforms.

JAX's convention for complex values holds (a cotangent pairs with a tangent without
conjugation, and a real input's cotangent is real, ``unbroadcast`` taking the real
part): the DFT matrix is symmetric, so the VJP of ``fft(a, norm=norm)`` is
``fft(g, norm=norm)``, and of ``ifft`` ``ifft(g, norm=norm)``.  The real transforms
weight the Hermitian half: ``rfft``'s cotangent is the real part of ``fft`` of ``g``
zero-padded to the full length, ``irfft``'s is ``conj(rfft(g))`` with each bin that
stands for two (all but the first, and the middle one of an even length) counted
twice, and the norm that scales the inverse the way the forward one did ("forward" for
None).  ``n`` crops or zero-pads the input before the transform: the cotangent is
padded or cropped back to the input's length.  ``s`` of the n-dimensional transforms
is not supported (pad or crop the input first).  JVPs are the transforms themselves
(``deflinear``); vmap moves ``axis``/``axes`` past the batch axis.
"""

import numpy as np

from ..ir.nodes import Const, Let
from ..ir.spelling import atom_text
from ..runtime import unbroadcast, weights_along
from .batching import Batch, NoBatchRule, args_text, axis_arg, batch_rule, operand
from .registry import REFUSED, Refused, call_spelling, deflinear, defprim, defvjp

ONE_D = "(a, n=None, axis=-1, norm=None)"
N_D = "(a, s=None, axes=None, norm=None)"
TWO_D = "(a, s=None, axes=(-2, -1), norm=None)"


def _no_shape(args, kwargs):
    """The n-dimensional transforms' rules read ``s=None`` only."""
    s = kwargs.get("s", args[1] if len(args) > 1 else None)
    if s is not None and not (isinstance(s, Const) and s.value is None):
        raise Refused("`s=` (the transform's lengths) is not supported",
                      "pad or crop the input to the lengths first (np.pad, slicing), "
                      "then call the transform without s")
    return args, kwargs


def _deffft(name, sig, note):
    canonical = _no_shape if sig != ONE_D else None
    defprim("fft." + name, getattr(np.fft, name), sig, diff=("a",), family="fft",
            spelling=call_spelling("np.fft." + name), note=note, canonical=canonical)


# ---- the bins' frequencies: constants of the length -----------------------------------

for _name in ("fftfreq", "rfftfreq"):
    defprim("fft." + _name, getattr(np.fft, _name), "(n, d=1.0)", family="fft",
            nondiff=True, spelling=call_spelling("np.fft." + _name), batch=REFUSED,
            note="the sample frequencies of a length: a constant, no derivative flows")


# ---- complex to complex ---------------------------------------------------------------

_deffft("fft", ONE_D, "linear: the VJP is fft itself (the DFT matrix is symmetric)")


@defvjp("fft.fft")
def fft_vjp(g, ans, a, n=None, axis=-1, norm=None):
    a_bar = np.fft.fft(g, axis=axis, norm=norm)
    if n is not None:
        a_bar = np.take(np.concatenate([a_bar, np.zeros_like(a)], axis=axis),
                        np.arange(np.shape(a)[axis]), axis=axis)
    return unbroadcast(a_bar, a)


deflinear("fft.fft", "a", keywords=True)

_deffft("ifft", ONE_D, "linear: the VJP is ifft itself")


@defvjp("fft.ifft")
def ifft_vjp(g, ans, a, n=None, axis=-1, norm=None):
    a_bar = np.fft.ifft(g, axis=axis, norm=norm)
    if n is not None:
        a_bar = np.take(np.concatenate([a_bar, np.zeros_like(a)], axis=axis),
                        np.arange(np.shape(a)[axis]), axis=axis)
    return unbroadcast(a_bar, a)


deflinear("fft.ifft", "a", keywords=True)

for _name, _sig in (("fft2", TWO_D), ("fftn", N_D), ("ifft2", TWO_D), ("ifftn", N_D)):
    _deffft(_name, _sig, "linear: the VJP is the same transform; s= is not supported")


@defvjp("fft.fft2")
def fft2_vjp(g, ans, a, s=None, axes=(-2, -1), norm=None):
    return unbroadcast(np.fft.fft2(g, axes=axes, norm=norm), a)


@defvjp("fft.fftn")
def fftn_vjp(g, ans, a, s=None, axes=None, norm=None):
    return unbroadcast(np.fft.fftn(g, axes=axes, norm=norm), a)


@defvjp("fft.ifft2")
def ifft2_vjp(g, ans, a, s=None, axes=(-2, -1), norm=None):
    return unbroadcast(np.fft.ifft2(g, axes=axes, norm=norm), a)


@defvjp("fft.ifftn")
def ifftn_vjp(g, ans, a, s=None, axes=None, norm=None):
    return unbroadcast(np.fft.ifftn(g, axes=axes, norm=norm), a)


for _name in ("fft2", "fftn", "ifft2", "ifftn"):
    deflinear("fft." + _name, "a", keywords=True)

# ---- real to Hermitian, and back ------------------------------------------------------

_deffft("rfft", ONE_D, "linear: the VJP is the real part of fft of g zero-padded to the "
        "input's length")


@defvjp("fft.rfft")
def rfft_vjp(g, ans, a, n=None, axis=-1, norm=None):
    if n is None:
        return np.real(np.fft.fft(g, n=np.shape(a)[axis], axis=axis, norm=norm))
    a_bar = np.real(np.fft.fft(g, n=n, axis=axis, norm=norm))
    return np.take(np.concatenate([a_bar, np.zeros_like(a)], axis=axis),
                   np.arange(np.shape(a)[axis]), axis=axis)


deflinear("fft.rfft", "a", keywords=True)

_deffft("irfft", ONE_D, "linear: the VJP is conj(rfft(g)), the bins that stand for two "
        "counted twice, scaled as the inverse")


@defvjp("fft.irfft")
def irfft_vjp(g, ans, a, n=None, axis=-1, norm=None):
    if norm == "ortho":
        y = np.fft.rfft(g, axis=axis, norm="ortho")
    elif norm == "forward":
        y = np.fft.rfft(g, axis=axis, norm="backward")
    else:
        y = np.fft.rfft(g, axis=axis, norm="forward")
    bins = np.arange(np.shape(ans)[axis] // 2 + 1)
    once = weights_along(np.logical_or(bins == 0, bins == np.shape(ans)[axis] / 2), y, axis)
    a_bar = np.conj(np.where(once, y, 2 * y))
    if n is not None:
        a_bar = np.take(np.concatenate([a_bar, np.zeros_like(a)], axis=axis),
                        np.arange(np.shape(a)[axis]), axis=axis)
    return unbroadcast(a_bar, a)


deflinear("fft.irfft", "a", keywords=True)

_deffft("hfft", ONE_D, "irfft of conj(a) with the other norm: the VJP is rfft(g), the "
        "bins that stand for two counted twice")


@defvjp("fft.hfft")
def hfft_vjp(g, ans, a, n=None, axis=-1, norm=None):
    bins = np.arange(np.shape(ans)[axis] // 2 + 1)
    y = np.fft.rfft(g, axis=axis, norm=norm)
    once = weights_along(np.logical_or(bins == 0, bins == np.shape(ans)[axis] / 2), y, axis)
    a_bar = np.where(once, y, 2 * y)
    if n is not None:
        a_bar = np.take(np.concatenate([a_bar, np.zeros_like(a)], axis=axis),
                        np.arange(np.shape(a)[axis]), axis=axis)
    return unbroadcast(a_bar, a)


deflinear("fft.hfft", "a", keywords=True)

_deffft("ihfft", ONE_D, "conj(rfft(a)) with the other norm: the VJP is the real part of "
        "fft of conj(g) zero-padded to the input's length")


@defvjp("fft.ihfft")
def ihfft_vjp(g, ans, a, n=None, axis=-1, norm=None):
    length = n
    if n is None:
        length = np.shape(a)[axis]
    if norm == "ortho":
        a_bar = np.real(np.fft.fft(np.conj(g), n=length, axis=axis, norm="ortho"))
    elif norm == "forward":
        a_bar = np.real(np.fft.fft(np.conj(g), n=length, axis=axis, norm="backward"))
    else:
        a_bar = np.real(np.fft.fft(np.conj(g), n=length, axis=axis, norm="forward"))
    if n is not None:
        a_bar = np.take(np.concatenate([a_bar, np.zeros_like(a)], axis=axis),
                        np.arange(np.shape(a)[axis]), axis=axis)
    return a_bar


deflinear("fft.ihfft", "a", keywords=True)

_deffft("rfftn", N_D, "linear: the VJP is the real part of fftn of g, its last axis "
        "zero-padded to the input's; s= is not supported")


@defvjp("fft.rfftn")
def rfftn_vjp(g, ans, a, s=None, axes=None, norm=None):
    if axes is None:
        g = np.take(np.concatenate([g, np.zeros_like(a)], axis=-1),
                    np.arange(np.shape(a)[-1]), axis=-1)
    else:
        g = np.take(np.concatenate([g, np.zeros_like(a)], axis=axes[-1]),
                    np.arange(np.shape(a)[axes[-1]]), axis=axes[-1])
    return np.real(np.fft.fftn(g, axes=axes, norm=norm))


deflinear("fft.rfftn", "a", keywords=True)

_deffft("irfftn", N_D, "linear: the VJP is conj(rfftn(g)), the last axis's bins that "
        "stand for two counted twice, scaled as the inverse; s= is not supported")


@defvjp("fft.irfftn")
def irfftn_vjp(g, ans, a, s=None, axes=None, norm=None):
    if norm == "ortho":
        y = np.fft.rfftn(g, axes=axes, norm="ortho")
    elif norm == "forward":
        y = np.fft.rfftn(g, axes=axes, norm="backward")
    else:
        y = np.fft.rfftn(g, axes=axes, norm="forward")
    if axes is None:
        bins = np.arange(np.shape(ans)[-1] // 2 + 1)
        once = weights_along(np.logical_or(bins == 0, bins == np.shape(ans)[-1] / 2), y, -1)
    else:
        bins = np.arange(np.shape(ans)[axes[-1]] // 2 + 1)
        once = weights_along(np.logical_or(bins == 0, bins == np.shape(ans)[axes[-1]] / 2),
                             y, axes[-1])
    return unbroadcast(np.conj(np.where(once, y, 2 * y)), a)


deflinear("fft.irfftn", "a", keywords=True)

# ---- shifts: permutations, each the other's inverse -----------------------------------

for _name in ("fftshift", "ifftshift"):
    defprim("fft." + _name, getattr(np.fft, _name), "(x, axes=None)", family="fft",
            spelling=call_spelling("np.fft." + _name), note="a roll: the VJP is the "
            "inverse shift")


@defvjp("fft.fftshift")
def fftshift_vjp(g, ans, x, axes=None):
    return np.fft.ifftshift(g, axes=axes)


@defvjp("fft.ifftshift")
def ifftshift_vjp(g, ans, x, axes=None):
    return np.fft.fftshift(g, axes=axes)


for _name in ("fftshift", "ifftshift"):
    deflinear("fft." + _name, "x", keywords=True)

# ---- batching: the transformed axes move past the batch axis --------------------------

ONE_D_NAMES = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
N_D_NAMES = ("fftn", "ifftn", "rfftn", "irfftn", "fftshift", "ifftshift")


@batch_rule(*("fft." + n for n in ONE_D_NAMES + ("fft2", "ifft2") + N_D_NAMES))
def fft_rule(b: Batch, s: Let) -> str:
    """``axis``/``axes`` past the batch axis; ``axes=None`` names every per-example
    axis (``fftn`` with ``s=`` and no ``axes`` would name the last ones: refused)."""
    a = s.args[0]
    if any(b.batched(x) for x in s.args[1:]):
        raise NoBatchRule(f"`{s.prim}` with a batched argument other than the first")
    short = s.prim[len("fft."):]
    rank = b.rank(a)
    if short in ONE_D_NAMES:
        return args_text(s, [atom_text(a)], {"axis": axis_arg(b, s, "axis", rank, -1)})
    given = operand(s, "s")
    if given is not None and not (isinstance(given, Const) and given.value is None) \
            and operand(s, "axes") is None:
        raise NoBatchRule(f"`{s.prim}` with `s=` and no `axes=`", "give axes=")
    default = (-2, -1) if short in ("fft2", "ifft2") else None
    return args_text(s, [atom_text(a)], {"axes": axis_arg(b, s, "axes", rank, default)})
