"""Functions for the indexing rows of the rule table (see rule_rows_indexing.py).

Keep the import as it is: the JAX twin rebinds it to jax.numpy.
"""

import numpy as np

W3 = np.array([-0.6, 1.1, 0.25])
W23 = np.array([[0.3, -1.2, 0.7], [1.5, 0.4, -0.8]])
W4 = np.array([0.5, -1.0, 2.0, 0.3])
IDX = np.array([2, 0, 2, -1])  # repeats and a negative index
LABELS = np.array([2, 0, 2, 1])  # (np.bincount's: repeats, a bin left empty)
PICK = np.array([[2, 0, 0], [1, 1, 2]])
W22 = np.array([[0.6, -1.1], [0.2, 1.4]])
KEEP = np.array([True, False, True])
KEEP4 = np.array([True, False, True, True])
POSITIVE = W23 > 0.0
DROP = np.array([0, 4])


def f_sort(x):
    return np.sum(np.sort(x) * W23) + np.sum(np.sort(np.sin(x), axis=0) * W23)


def f_sort_flat(x):
    return np.sort(x * x, axis=None) @ np.linspace(-1.0, 1.5, 6)


def f_take(x):
    return np.take(x, IDX) @ W4 + np.sum(np.take(np.sin(x), IDX, axis=1) * 0.5)


def f_take_method(x):
    return np.sum(x.take(IDX, axis=-1) @ W4)


def f_take_along_axis(x):
    order = np.argsort(x, axis=1)
    top = np.take_along_axis(x, order, axis=1)
    return np.sum(top * W23) + np.sum(np.take_along_axis(np.sin(x), PICK, axis=1) * W23)


def f_compress(x):
    c = np.compress(KEEP, x, axis=1)
    return np.sum(c * np.cos(x[:, :2])) + np.sum(np.compress(KEEP4, x) * -0.6)


def f_extract(x):
    return np.sum(np.extract(POSITIVE, np.sin(x)) * W4) + np.sum(
        np.extract(POSITIVE, x) ** 2
    )


def f_extract_data_dependent(x):
    return np.sum(np.extract(x > 0.0, x) ** 2)


def f_delete(x):
    d = np.delete(x, 1, axis=1)
    return np.sum(np.sin(d) * W22) + np.sum(np.delete(x, DROP) * W4)


# An axis in a name leaves the rules' `if axis < 0` to run time.
def f_take_axis_argument(x, axis):
    return np.sum(np.take(x, IDX, axis=axis) * np.sin(np.take(x, IDX, axis=axis)))


def f_take_neg_axis_argument(x, axis):
    return np.sum(np.take(np.sin(x), IDX, axis=axis) @ W4)


def f_sort_axis_argument(x, axis):
    return np.sum(np.sort(x, axis=axis) * W23)


def f_sort_flat_axis_argument(x, axis):
    return np.sort(np.sin(x), axis=axis) @ np.linspace(-1.0, 1.5, 6)


def f_bincount(x):
    counts = np.bincount(LABELS, weights=x * W4, minlength=4)
    return np.sum(np.sin(counts) * counts)
