"""Functions for the reduction rows of the rule table (see rule_rows_reductions.py).

Outputs are weighted by fixed, non-uniform constants so that a rule cannot pass by
accident with a cotangent of all ones.  Keep the import as it is: the JAX twin
rebinds it to jax.numpy.
"""

import numpy as np

W3 = np.array([-0.6, 1.1, 0.25])
W4 = np.array([0.5, -1.0, 2.0, 0.3])
W2 = np.array([0.9, -1.3])
W23 = np.array([[0.3, -1.2, 0.7], [1.5, 0.4, -0.8]])
W24 = np.array([[0.5, -1.0, 2.0, 0.3], [1.2, 0.1, -0.4, 0.8]])
WEIGHTS3 = np.array([0.5, 2.0, 1.25])


def f_var(x):
    return np.var(np.sin(x), axis=0) @ W3 + np.var(x)


def f_var_method_ddof(x):
    return np.sum(x.var(axis=-1, ddof=1, keepdims=True) * x)


def f_std(x):
    return np.std(x * 2.0, axis=1) @ W2 + np.std(x)


def f_std_method(x):
    return np.sum(x.std(axis=(0, 1), ddof=1) * W4)


def f_ptp(x):
    return np.ptp(x, axis=1) @ W2 + np.ptp(x**2, keepdims=True)[0, 0]


def f_median(x):
    return np.median(x, axis=-1) @ W2 + np.median(np.sin(x))


def f_average(x):
    return np.average(x, axis=0) @ W3 + np.average(np.cos(x))


def f_average_weights(x):
    return np.sum(np.average(x, axis=1, weights=WEIGHTS3) * W2) + np.average(
        x**2, weights=x * 0.0 + 1.5
    )


def f_nansum(x):
    y = np.where(x > 1.0, np.nan, x)
    return np.nansum(y * y, axis=0) @ W3 + np.nansum(np.sin(y))


def f_nanmean(x):
    y = np.where(x > 1.0, np.nan, x)
    return np.nanmean(y * y, axis=1, keepdims=True)[1, 0] + np.nanmean(np.sin(y))


def f_nanvar(x):
    y = np.where(x > 1.0, np.nan, x)
    return np.nanvar(y, axis=1) @ W2 + np.nanvar(y, ddof=1)


def f_nanstd(x):
    y = np.where(x > 1.0, np.nan, x)
    return np.nanstd(y, axis=1) @ W2 + np.nanstd(y)


def f_nanmax(x):
    y = np.where(x > 1.0, np.nan, x)
    return np.nanmax(y, axis=0) @ W3 + np.nanmax(y * W3)


def f_nanmin(x):
    y = np.where(x < -1.0, np.nan, x)
    return np.nanmin(y, axis=1) @ W2 + np.nanmin(y * W3)


def f_cumsum(x):
    return np.sum(np.cumsum(x, axis=1) * W23) + np.cumsum(x)[4]


def f_cumsum_method(x):
    return np.sum(x.cumsum(-2) * np.sin(x))


def f_cumprod(x):
    return np.sum(np.cumprod(x, axis=0) * W23) + np.cumprod(x)[-1]


def f_cumprod_method(x):
    return np.sum(x.cumprod(axis=1) * W23)


def f_running_max_min(x):
    return np.sum(np.maximum.accumulate(x) * W23) + np.sum(np.minimum.accumulate(x, axis=1))


def f_logaddexp_reduce(x):
    return np.sum(np.logaddexp.reduce(x) ** 2) + np.sum(np.logaddexp2.reduce(x, axis=1) * x[0, :2])


def f_nancumsum(x):
    y = np.where(x > 1.0, np.nan, x)
    return np.sum(np.nancumsum(y, axis=1) * W23) + np.nancumsum(y)[3]


def f_nancumprod(x):
    y = np.where(x > 1.0, np.nan, x)
    return np.sum(np.nancumprod(y, axis=0) * W23) + np.nancumprod(y)[-1]


def f_cumulative_sum(x):
    total = np.cumulative_sum(x, axis=1, include_initial=True)
    return np.sum(total * W24) + np.cumulative_sum(x[0]) @ W3


def f_cumulative_prod(x):
    total = np.cumulative_prod(x, axis=0)
    return np.sum(total * W23) + np.cumulative_prod(x[1], include_initial=True) @ W4


# An axis in a name leaves the rules' `if axis is None` to run time.
def f_var_axis_argument(x, axis):
    return np.sum(np.var(x, axis=axis) * W3) + np.sum(np.cumsum(x, axis=axis) * W23)


def f_median_axis_argument(x, axis):
    return np.sum(np.median(x, axis=axis) * W3)
