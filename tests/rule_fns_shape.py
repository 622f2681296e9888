"""Functions for the joining/splitting rows of the rule table (see rule_rows_shape.py)."""

import numpy as np

W = np.array([0.5, -1.0, 2.0])


def f_concatenate(x, y):
    z = np.concatenate([x, y * 2.0, x], axis=0)
    return np.sum(np.sin(z) * W)


def f_split(x):
    a, b, c = np.split(x * x, 3)
    return np.sum(a * 3.0 + np.sin(b) - c**2)


W2 = np.array([0.9, -1.3])
W4 = np.array([0.5, -1.0, 2.0, 0.3])
W23 = np.array([[0.3, -1.2, 0.7], [1.5, 0.4, -0.8]])
W32 = np.array([[0.5, -0.7], [1.2, 0.1], [-0.4, 0.8]])
W234 = np.reshape(np.linspace(-1.0, 1.3, 24), (2, 3, 4))
W342 = np.moveaxis(W234, 0, -1)


def weights(shape):
    """Fixed, non-uniform weights of a shape."""
    return np.reshape(np.linspace(-1.0, 1.5, np.size(np.zeros(shape))), shape)


def f_array_split(x):
    a, b = np.array_split(x * x, 2, axis=1)  # (2, 2) and (2, 1)
    return np.sum(a * 3.0) + np.sum(np.sin(b))


def f_hsplit(x):
    a, b, c = np.hsplit(np.sin(x), 3)
    return np.sum(a * 2.0 - b * c)


def f_vsplit(x):
    a, b = np.vsplit(x * x, [1])
    return np.sum(a * W4) + np.sum(b * np.cos(b))


def f_dsplit(x):
    a, b = np.dsplit(x * x, 2)
    return np.sum(a * 2.0) - np.sum(np.sin(b))


def f_stack(x, y):
    s = np.stack([x, np.sin(y), x * y], axis=1)
    return np.sum(s * weights((2, 3, 3)))


def f_hstack(x, y):
    h = np.hstack([x, y * 2.0])  # (2, 3) and (2, 2)
    v = np.hstack((x[0], y[1]))  # 1-D pieces
    return np.sum(np.sin(h) * weights((2, 5))) + np.sum(v * weights((5,)))


def f_vstack(x, y):
    v = np.vstack([x, y[0], np.cos(x)])  # a 1-D piece becomes a row
    return np.sum(np.sin(v) * weights((5, 3)))


def f_dstack(x, y):
    d = np.dstack([x, y])
    return np.sum(np.sin(d) * weights((2, 3, 2)))


def f_column_stack(x, y):
    c = np.column_stack((x[0], np.sin(y)))  # a 1-D piece becomes a column
    return np.sum(c * weights((3, 3)))


def f_append(x, y):
    a = np.append(x, y * 2.0, axis=0)
    b = np.append(x, np.sin(y))
    return np.sum(np.sin(a) * weights((5, 3))) + np.sum(b * weights((15,)))


def f_squeeze(x):
    s = np.squeeze(np.reshape(x, (1, 2, 1, 3)), axis=(0, 2))
    t = np.reshape(x, (2, 1, 3)).squeeze()
    return np.sum(s * W23) + np.sum(np.sin(t) * W23)


def f_expand_dims(x):
    e = np.expand_dims(x, (0, -1))
    return np.sum(np.sin(e) * np.reshape(W23, (1, 2, 3, 1)))


def f_atleast_1d(x):
    return np.sum(np.atleast_1d(np.sum(x * W23)) * 2.0) + np.sum(np.atleast_1d(x) * W23)


def f_atleast_2d(x):
    a = np.atleast_2d(x[0])
    return np.sum(np.sin(a) * weights((1, 3)))


def f_atleast_3d(x):
    a = np.atleast_3d(x)
    return np.sum(np.sin(a) * np.reshape(W23, (2, 3, 1)))


def f_swapaxes(x):
    return np.sum(np.swapaxes(x, 0, 1) * W32) + np.sum(x.swapaxes(1, 0) @ W2)


def f_moveaxis(x):
    m = np.moveaxis(x, 0, -1)  # (3, 4, 2)
    return np.sum(np.sin(m) * W342)


def f_flip(x):
    return np.sum(np.flip(x) * W23) + np.sum(np.flip(np.sin(x), axis=1) * W23)


def f_fliplr(x):
    return np.sum(np.fliplr(x * x) * W23)


def f_flipud(x):
    return np.sum(np.flipud(np.sin(x)) * W23)


def f_rot90(x):
    return np.sum(np.rot90(x) * W32) + np.sum(np.rot90(np.sin(x), 2) * W23)


def f_roll(x):
    rolled = np.roll(np.sin(x), (1, -2), axis=(0, 1))
    return np.sum(np.roll(x, 1) * W23) + np.sum(rolled * W23)


def f_broadcast_to(x):
    b = np.broadcast_to(x[0], (4, 3))
    return np.sum(np.sin(b) * weights((4, 3)))


def f_broadcast_arrays(x, y):
    a, b = np.broadcast_arrays(x, y)  # (2, 3) and (3,)
    return np.sum(np.sin(a) * b * W23)


def f_meshgrid(x, y):
    gx, gy = np.meshgrid(x, y)  # (len(y), len(x))
    ix, iy = np.meshgrid(x, y * 2.0, indexing="ij")
    return np.sum(np.sin(gx) * gy * W23) + np.sum(ix * np.cos(iy) * W32)


def f_tile(x):
    t = np.tile(x, (2, 1, 2))  # (2, 2, 6)
    u = np.tile(x[0], 2)
    return np.sum(np.sin(t) * weights((2, 2, 6))) + np.sum(u * weights((6,)))


def f_repeat(x):
    r = np.repeat(x, 2, axis=1)
    s = x.repeat(3, axis=-2)
    return np.sum(np.sin(r) * weights((2, 6))) + np.sum(s * weights((6, 3)))


def f_repeat_counts(x):
    s = x.repeat(np.array([2, 0]), axis=0)  # a repeat count per row
    t = np.repeat(x, [1, 2, 0, 1, 1, 3])  # flattened
    return np.sum(np.sin(s) * weights((2, 3))) + np.sum(t * weights((8,)))


def f_repeat_flat(x):
    return np.sum(np.repeat(np.sin(x), 3) * weights((18,)))


def f_pad(x):
    p = np.pad(x, ((1, 0), (2, 1)))
    q = np.pad(np.sin(x), 2, mode="reflect")
    return np.sum(p * weights((3, 6))) + np.sum(q * weights((6, 7)))


def f_pad_modes(x):
    e = np.pad(x, (1, 2), mode="edge")
    w = np.pad(x, ((0, 1), (3, 0)), mode="wrap")
    s = np.pad(x, 1, mode="symmetric")
    total = np.sum(e * weights((5, 6))) + np.sum(w * weights((3, 6)))
    return total + np.sum(s * weights((4, 5)))


def f_full(x):
    row = np.full((2, 3), x[0])  # an array fill value, broadcast
    return np.sum(np.full((2, 3), np.sum(x * W23)) * W23) + np.sum(row * W23)


def f_full_like(x):
    return np.sum(np.full_like(x, np.sum(np.sin(x))) * W23)
