"""Source functions for tests/frontend/test_grown_list_reads.py (loaded by jax_twin
too): reading items of a list grown in a loop other than its last, under reverse
mode (issue 23)."""

import numpy as np


def first_two(x):
    """two early items, read after the loop (the row of docs/python-subset.md)."""
    hs = []
    h = x
    for i in range(3):
        h = np.tanh(h)
        hs.append(h)
    return np.sum(hs[0] * hs[1])


def index_argument(x, k=1):
    """an item named by an integer argument, and one counted from the end."""
    hs = []
    h = x
    for i in range(3):
        h = np.tanh(h) + 0.5 * x
        hs.append(h)
    return np.sum(hs[k] * hs[-2])


def later_loop(x):
    """every item, read in a later loop over `range(len(hs))`."""
    hs = []
    h = x
    for i in range(3):
        h = np.tanh(h) * x
        hs.append(h)
    s = 0.0
    for i in range(len(hs)):
        s = s + np.sum(hs[i] * (i + 1.0))
    return s


def for_items(x):
    """`for h in hs:` after the loop that grew it."""
    hs = []
    h = x
    for i in range(3):
        h = np.sin(h) + x
        hs.append(h)
    s = 0.0
    for h in hs:
        s = s + np.sum(h**2)
    return s


def enumerated(x):
    """`for i, g in enumerate(hs)` after the loop that grew it."""
    hs = []
    h = x
    for i in range(3):
        h = np.sin(h) + x
        hs.append(h)
    s = 0.0
    for i, g in enumerate(hs):
        s = s + np.sum(g * (i + 1.0))
    return s + np.sum(hs[-2] * hs[1])


def zipped(x):
    """two grown lists read in step by `zip`."""
    hs = []
    cs = []
    h = x
    for i in range(3):
        h = np.sin(h) + x
        hs.append(h)
        cs.append(np.cos(h))
    s = 0.0
    for a, b in zip(hs, cs):
        s = s + np.sum(a * b)
    return s


def summed(x):
    """`sum(hs)` of a grown list."""
    hs = []
    h = x
    for i in range(3):
        h = np.sin(h) * x
        hs.append(h)
    return np.sum(sum(hs) * x)


def earlier_in_loop(x):
    """inside the growing loop: an earlier item by a computed index (`hs[i - 1]`)."""
    hs = [x]
    for i in range(1, 4):
        hs.append(np.tanh(hs[i - 1]) + 0.5 * hs[-1])
    return np.sum(hs[-1] * hs[1])


def two_back(x, n=3):
    """inside the growing loop: the item before the last (`hs[-2]`)."""
    hs = [x, 2.0 * x]
    for i in range(n):
        hs.append(np.tanh(hs[-2]) * hs[-1])
    return np.sum(hs[-1])


def last_then_grows(x):
    """the last item read before the list grows again; the list unread after."""
    hs = [x]
    s = 0.0
    for i in range(3):
        s = s + np.sum(hs[-1] ** 2)
        hs.append(np.sin(hs[-1]))
    return s


def count_argument(x, n=3, k=0):
    """the trip count and the index from integer arguments (0 and 1 trips too)."""
    hs = [x]
    h = x
    for i in range(n):
        h = np.cos(h) * x
        hs.append(h)
    return np.sum(hs[k] * hs[-1])


def with_break(x):
    """a loop left by `break` on a value; items read after it."""
    hs = []
    h = x
    for i in range(6):
        h = np.tanh(h) + 0.3 * x
        hs.append(h)
        if np.sum(h) > 1.5:
            break
    return np.sum(hs[0] * hs[len(hs) // 2])


def same_item_twice(x):
    """one item read twice, and one array appended twice (two items, one value)."""
    hs = []
    h = x
    for i in range(3):
        h = np.sin(h) + x
        hs.append(h)
        hs.append(h)
    return np.sum(hs[1] * hs[1]) + np.sum(hs[2] * hs[3] * hs[-1])


def stacked_and_items(x):
    """the list stacked, and items of it read: two uses of one list."""
    hs = []
    h = x
    for i in range(3):
        h = np.sin(h) + x
        hs.append(h)
    return np.sum(np.stack(hs) * x) + np.sum(hs[0] * hs[2])


def grows_after_later_loop(x):
    """a loop over `range(len(hs))`, then the list grows again (the backward loop
    runs over the length the forward loop saw)."""
    hs = []
    h = x
    for i in range(3):
        h = np.sin(h) + x
        hs.append(h)
    s = 0.0
    for i in range(len(hs)):
        s = s + np.sum(hs[i] * x)
    hs.append(np.cos(s) * x)
    return s + np.sum(hs[-1] * hs[0])


def caller(x):
    """the functions above as callees of another."""
    return first_two(x) + 0.5 * later_loop(x) + earlier_in_loop(x)


def sliced(x):
    """a slice of a grown list, stacked; and its items summed by a loop."""
    hs = []
    h = x
    for i in range(4):
        h = np.sin(h) * x + 0.1
        hs.append(h)
    s = 0.0
    for g in hs[::2]:
        s = s + np.sum(g * g)
    return np.sum(np.stack(hs[1:]) * x) + s


INDEX = 1  # a module constant read at each call (a test changes it between calls)


def module_index(x):
    """an item named by a module constant."""
    hs = []
    h = x
    for i in range(3):
        h = np.sin(h) + x
        hs.append(h)
    return np.sum(hs[INDEX] * x)


def assigns_item(x):
    """`hs[k] = v` into a list the function grew (s2s's own backward code writes so)."""
    hs = []
    for i in range(3):
        hs.append(np.sin(x * (i + 1.0)))
    hs[1] = hs[1] * hs[2] + x
    hs[-1] = np.cos(hs[0])
    return np.sum(hs[1] * hs[2]) + np.sum(np.stack(hs))


def pairs_item(x):
    """items that are pairs, an early one read (one of its leaves only, too)."""
    ps = []
    h = x
    for i in range(3):
        h = np.sin(h) + x
        ps.append((h, np.cos(h) * x))
    a, b = ps[0]
    c = ps[1][1]
    return np.sum(a * b) + np.sum(c * ps[-1][0])


# refused


def assigns_slice(x):
    hs = []
    for i in range(3):
        hs.append(x * i)
    hs[1:] = [x, x]
    return np.sum(hs[0])


def assigns_known_length(x):
    hs = [x, 2.0 * x]
    hs[0] = np.sin(x)
    return np.sum(hs[0] * hs[1])


def pairs_slice(x):
    ps = []
    for i in range(3):
        ps.append((x * i, np.sin(x)))
    s = 0.0
    for a, b in ps[1:]:
        s = s + np.sum(a * b)
    return s


def per_example_index(x):
    """an index computed from the values: under vmap, one per example."""
    hs = []
    h = x
    for i in range(3):
        h = np.sin(h) + x
        hs.append(h)
    k = np.argmax(x) % 3
    return np.sum(hs[k] * x)


def read_then_grown_at_top(x):
    """an item read, then the list grown again, nothing reading it after."""
    hs = []
    h = x
    for i in range(3):
        h = np.sin(h) + x
        hs.append(h)
    a = hs[0]
    hs.append(a * 2.0)
    return np.sum(a * x)
