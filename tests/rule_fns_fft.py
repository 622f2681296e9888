"""Functions for the np.fft rows of the rule table (see rule_rows_fft.py): real losses
through complex intermediates, the same source run by JAX (jax.numpy.fft)."""

import numpy as np

# no array constants: NumPy would promote a float32 input's values to float64 where
# JAX keeps float32; weights come from sin/cos of the values instead


def f_rfft_power(x):
    return np.sum(np.sin(np.abs(np.fft.rfft(x)) ** 2))


def f_fft_filter(x, h):
    # a circular convolution with a filter h, through the frequency domain
    return np.sum(np.real(np.fft.ifft(np.fft.fft(x) * np.fft.fft(h))) ** 2)


def f_fft_conj(x):
    z = np.fft.fft(x, axis=0, norm="ortho")
    return np.sum(np.real(z * np.conj(z)) * np.cos(x))


def f_fft_pad_crop(x):
    return np.sum(np.abs(np.fft.fft(x, n=12))) + np.sum(np.abs(np.fft.ifft(x, n=5, norm="forward")))


def f_rfft_n(x):
    return np.sum(np.abs(np.fft.rfft(x, n=5, norm="ortho"))) + np.sum(np.abs(np.fft.rfft(x, n=11)))


def f_irfft_roundtrip(x):
    y = np.fft.irfft(np.fft.rfft(x) * np.fft.rfft(np.tanh(x[0])), n=8)
    return np.sum(np.sin(y) * y)


def f_irfft_n_norm(x):
    z = np.fft.rfft(x, axis=0)
    return np.sum(np.fft.irfft(z * 1.5, n=7, axis=0, norm="ortho") ** 2) + np.sum(
        np.fft.irfft(z, n=3, axis=0, norm="forward"))


def f_hfft_ihfft(x):
    z = np.fft.ihfft(x, norm="ortho")
    return np.sum(np.cos(np.fft.hfft(z * np.fft.rfft(np.cos(x[-1])), n=8))) + np.sum(np.abs(np.fft.ihfft(x, n=6)))


def f_hfft_real_input(x):
    return np.sum(np.sin(np.fft.hfft(x, norm="forward"))) + np.sum(np.fft.hfft(x, n=3) ** 2)


def f_fft2(x):
    return np.sum(np.sin(np.abs(np.fft.fft2(x)) ** 2)) + np.sum(np.real(np.fft.ifft2(x)) ** 3)


def f_fftn_axes(x):
    z = np.fft.fftn(x, axes=(0,), norm="ortho")
    return np.sum(np.abs(np.fft.ifftn(z * np.sin(x), axes=(-1, 0))) ** 2)


def f_rfftn_irfftn(x):
    z = np.fft.rfftn(x)
    y = np.fft.irfftn(z * z, axes=(0, 1))
    return np.sum(np.sin(y)) + np.sum(np.abs(np.fft.rfftn(x, axes=(0,), norm="forward")))


def f_fftshift(x):
    return np.sum(np.fft.fftshift(x) * np.cos(x)) + np.sum(np.fft.ifftshift(x * x, axes=(1,)) * np.sin(x))


def f_size_one_axis(x):
    z = np.fft.fft(x[:1], axis=0)
    return np.sum(np.abs(z) ** 2) + np.sum(np.fft.irfft(np.fft.rfft(x[:, :1]), n=1) ** 2)
