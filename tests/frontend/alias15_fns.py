"""Functions of tests/frontend/test_alias15.py: in-place writes and aliasing where
NumPy's semantics are clear (issue 23, alias15).  The ``*_jx`` twins are the same
functions written as JAX's user writes them (``jnp.where`` for a write at a mask, a
new array for ``+=``), each taking its ``jax.numpy`` module as ``np``."""

from __future__ import annotations

import numpy as np

W = np.array([0.5, 1.5, -2.0])


# ---- 1. a write at a boolean mask that differs per example ------------------------------


def clip_sq(x):
    y = x.copy()
    y[y < 0] = 0.0
    return np.sum(y ** 2)


def clip_sq_jx(np, x):
    return np.sum(np.where(x < 0, 0.0, x) ** 2)


def clip_returned(x):
    y = x.copy()
    y[y < 0] = 0.0
    return y


def clip_returned_jx(np, x):
    return np.where(x < 0, 0.0, x)


def band_set(x):
    """A mask of two tests (``&``) and its complement (``~``), a batched scalar value."""
    y = np.sin(x)
    m = (x > -0.5) & (x < 0.5)
    y[m] = np.sum(x) * 0.25
    y[~m] = -1.0
    return np.sum(y * x)


def band_set_jx(np, x):
    m = (x > -0.5) & (x < 0.5)
    y = np.where(m, np.sum(x) * 0.25, np.sin(x))
    y = np.where(~m, -1.0, y)
    return np.sum(y * x)


def rows_set(x):
    """A mask of rows (of a matrix per example), one row written to every row it
    selects."""
    y = x ** 2
    y[np.sum(x, axis=1) > 0] = np.tanh(x[0])
    return np.sum(y * x)


def rows_set_jx(np, x):
    m = np.sum(x, axis=1) > 0
    return np.sum(np.where(m[:, None], np.tanh(x[0]), x ** 2) * x)


def masked_from(x):
    """``y[m] = v[m]``: the elements of another array, at the same mask."""
    y = np.zeros_like(x)
    m = x > 0.2
    v = np.sin(x) * W
    y[m] = v[m]
    return np.sum(y * np.cos(x))


def masked_from_jx(np, x):
    m = x > 0.2
    y = np.where(m, np.sin(x) * W, 0.0).astype(x.dtype)  # (the write casts, as NumPy's)
    return np.sum(y * np.cos(x))


def masked_rows_from(x):
    """``y[m] = v[m]`` at a mask of rows, ``v`` one column wide (broadcast along the
    row written)."""
    y = np.zeros_like(x)
    m = np.sum(x, axis=1) > 0
    v = np.sin(x[:, :1]) * 2.0
    y[m] = v[m]
    return np.sum(y * x)


def masked_rows_from_jx(np, x):
    m = np.sum(x, axis=1) > 0
    return np.sum(np.where(m[:, None], np.sin(x[:, :1]) * 2.0, 0.0) * x)


def masked_from_changed(x):
    """``v[m] * 2``: the selected elements changed after the read: refused."""
    y = np.zeros_like(x)
    m = x > 0.2
    y[m] = x[m] * 2
    return np.sum(y)


def per_element_value(x):
    """A value with one element per selected element (``x[:2]``): refused."""
    y = np.zeros_like(x)
    y[x > 0.2] = x[:2]
    return np.sum(y)


def int_positions_of_a_mask(x):
    """``m & 1`` is an int array (positions 0 and 1), not a mask: refused under vmap."""
    y = x.copy()
    y[(x > 0) & 1] = 0.0
    return y


# ---- 2. `d["k"] += v` on an item a list holds ---------------------------------------------


def dict_item_in_a_list_and_a_constant(x):
    state = {"acc": np.ones_like(x)}
    keep = [2.0, state["acc"]]
    state["acc"] += x
    return np.sum(keep[1] * x) * keep[0]


def dict_item_in_a_list_returned(x):
    state = {"acc": np.zeros_like(x)}
    keep = [state["acc"]]
    state["acc"] += x
    return keep[0]


def dict_item_in_a_list_read_before(x):
    """The list read before the write (``first = keep[0]``): refused, located."""
    state = {"acc": np.zeros_like(x)}
    keep = [state["acc"]]
    first = keep[0]
    state["acc"] += x
    return np.sum(first * x) + np.sum(keep[0])


def dict_item_in_a_list_with_an_array(x):
    """The list holds another array too: refused (not rebuilt), located."""
    state = {"acc": np.zeros_like(x)}
    keep = [state["acc"], x]
    state["acc"] += x
    return np.sum(keep[0] * keep[1])


# ---- 3. NumPy's copies and the object a second name changes -------------------------------


def fancy_copy_added(z):
    c = z[[0, 1]]
    c += 5
    return np.sum(c * z[:2])


def fancy_copy_added_jx(np, z):
    c = z[np.array([0, 1])]
    c = c + 5
    return np.sum(c * z[:2])


def fancy_copy_held(z):
    """``d = c`` holds the copy: ``c += 5`` changes ``d`` too: refused, located."""
    c = z[[0, 1]]
    d = c
    c += 5
    return np.sum(d * z[:2])


def list_appended_through_another_name(x):
    a = [x]
    b = a
    b.append(x * 2)
    return np.sum(a[0] * a[1])


# ---- 4. np.add.at of batched values into an unbatched float32 array -----------------------


def add_at_float32(x):
    y = np.zeros(4, dtype=np.float32)
    np.add.at(y, [0, 0, 2], x * W)
    return y


def add_at_float32_jx(np, x):
    y = np.zeros(4, dtype=np.float32)
    return y.at[np.array([0, 0, 2])].add((x * W).astype(np.float32))
