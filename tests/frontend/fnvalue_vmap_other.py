"""A helper in a module of its own (no NumPy): the function values given to it are
names of another module (tests/frontend/fnvalue_vmap_fns.py), which this module does
not bind."""


def apply_other(g, x):
    return g(x) * 2.0


def twice_other(g, x):
    return g(g(x))
