"""Rule-table entries for np.fft (rule_fns_fft.py), against jax.numpy.fft.

The rows call each rule directly on real inputs (the outputs are complex: the harness
draws a complex cotangent); the end-to-end cases are real losses through complex
intermediates, run by s2s and by JAX on the same source (grad, jvp, vmap, float32).
"""

from rule_table import E2ECase, Row, normal

import rule_fns_fft as F


def fft(name):
    return "fft." + name


def row(name, variant, shape, **params):
    return Row(fft(name), variant, (normal(*shape),), params, jax="numpy.fft." + name)


NORMS = {"none": None, "ortho": "ortho", "forward": "forward"}
ONE_D = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")

ROWS = (
    [row(n, f"norm_{k}", (3, 8), norm=v) for n in ONE_D for k, v in NORMS.items()]
    + [row(n, "axis0", (6, 3), axis=0) for n in ONE_D]
    + [row(n, "n_smaller", (2, 8), n=5) for n in ONE_D]
    + [row(n, "n_larger", (2, 5), n=9, norm="ortho") for n in ONE_D]
    + [row(n, "vector_odd", (7,)) for n in ONE_D]
    + [row(n, "size_one", (3, 1), axis=0) for n in ("fft", "ifft", "rfft")]
    + [row(n, f"norm_{k}", (3, 4), norm=v)
       for n in ("fft2", "ifft2", "fftn", "ifftn", "rfftn", "irfftn")
       for k, v in NORMS.items()]
    + [row(n, "axes", (3, 4, 5), axes=(0, -1))
       for n in ("fft2", "ifft2", "fftn", "ifftn", "rfftn", "irfftn")]
    + [row(n, "one_axis", (3, 4), axes=(-1,)) for n in ("fftn", "rfftn", "irfftn")]
    + [row(n, v, (3, 4), **p) for n in ("fftshift", "ifftshift")
       for v, p in (("all", {}), ("axes", {"axes": (1,)}))]
    + [row("ifftshift", "odd", (5, 3))]
)

E2E = [
    E2ECase(F.f_rfft_power, (fft("rfft"), "absolute"), (normal(3, 8),)),
    E2ECase(F.f_fft_filter, (fft("fft"), fft("ifft"), "real"), (normal(2, 8), normal(8))),
    E2ECase(F.f_fft_conj, (fft("fft"), "conjugate"), (normal(4, 3),)),
    E2ECase(F.f_fft_pad_crop, (fft("fft"), fft("ifft")), (normal(2, 8),)),
    E2ECase(F.f_rfft_n, (fft("rfft"),), (normal(3, 8),)),
    E2ECase(F.f_irfft_roundtrip, (fft("irfft"), fft("rfft")), (normal(2, 8),)),
    E2ECase(F.f_irfft_n_norm, (fft("irfft"),), (normal(6, 2),)),
    E2ECase(F.f_hfft_ihfft, (fft("hfft"), fft("ihfft")), (normal(2, 8),)),
    E2ECase(F.f_hfft_real_input, (fft("hfft"),), (normal(2, 5),)),
    E2ECase(F.f_fft2, (fft("fft2"), fft("ifft2")), (normal(3, 4),)),
    E2ECase(F.f_fftn_axes, (fft("fftn"), fft("ifftn")), (normal(3, 4),)),
    E2ECase(F.f_rfftn_irfftn, (fft("rfftn"), fft("irfftn")), (normal(3, 4),)),
    E2ECase(F.f_fftshift, (fft("fftshift"), fft("ifftshift")), (normal(3, 4),)),
    E2ECase(F.f_size_one_axis, (fft("fft"), fft("irfft")), (normal(3, 4),)),
]
