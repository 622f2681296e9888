"""Bad input for the error catalogue (tests/test_error_catalogue.py): functions s2s
must refuse, one kind of problem each, beyond those in tests/error_fns.py.

As in error_fns.py, ``# ERR`` marks the line the error must point at, and
``# ERR: text`` puts the expected column under the first occurrence of ``text`` on that
line.  Keep every function valid, importable Python: s2s reads their source.
"""

# ruff: noqa
# fmt: off

import numpy as np

LOG = []
STATE = {"calls": 0}
OPTIONS = {"axis": 0}
BY_NAME = {"sum": OPTIONS}
XP = np.array([-1.0, 0.0, 1.0])
FP = np.array([0.0, 2.0, 1.0])


# ---- syntax outside the subset ----------------------------------------------------------


def uses_yield_from(x):
    yield from x  # ERR: yield from
    return np.sum(x)


def uses_generator_expression(x):
    return sum(v * 2.0 for v in x if v[0] > 0)  # ERR: v[0] > 0


def uses_dict_comprehension(x):
    d = {i: x[i] for i in range(2)}  # ERR: i: x
    return np.sum(d[0])


def uses_match(x):
    # A sequence pattern on a value computed when it runs: decided only where the
    # subject is known now (an array's shape is tested where it runs: probe 12b).
    s = np.sum(x)
    match s:  # ERR
        case (a, b):
            y = x * a + b
        case _:
            y = x.ravel()
    return np.sum(y)


def uses_decorated_inner_def(x):
    @staticmethod
    def inner(t):  # ERR
        return t * 2.0

    return np.sum(x)


def make_mutated_closure():
    total = np.zeros(3)

    def bump(x):
        nonlocal total  # ERR
        total = total + x
        return np.sum(total)

    return bump


mutated_closure = make_mutated_closure()


def uses_fstring_of_array(x):
    name = f"{x!r} has {np.sum(x):.3f}"  # ERR: x!r
    return np.sum(x)


def uses_star_call(x):
    return np.sum(np.add(*x))  # ERR: *x


def uses_double_star_call(x):
    # `**OPTIONS` of a module dict is read per call; a subscript of one is refused.
    return np.sum(x, **BY_NAME["sum"])  # ERR: **BY_NAME


def uses_attribute_assignment(x):
    y = x * 2.0
    y.shape = (3,)  # ERR
    return np.sum(y)


def uses_global_list_append(x):
    LOG.append(x)  # ERR
    return np.sum(x)


def uses_global_dict_write(x):
    STATE["calls"] = STATE["calls"] + 1  # ERR
    return np.sum(x)


def uses_inplace_method_on_argument(x):
    x.sort()  # ERR
    return np.sum(x)


def uses_missing_rule(x):
    return np.sum(np.i0(x))  # ERR: np.i0


def uses_nondiff_without_rule(x):
    return np.sum(x * np.digitize(x, XP))  # ERR: np.digitize


def uses_nondiff_unique(x):
    return np.sum(np.unique(x))  # ERR: np.unique


def _noisy(x):
    return x * np.random.normal(size=3)  # ERR: np.random.normal


def uses_random(x):
    """A draw in a callee: its VJP would recompute the callee's forward, draw again."""
    return np.sum(_noisy(x))


def uses_random_shuffle(x):
    y = x.copy()
    np.random.shuffle(y)  # ERR: np.random.shuffle
    return np.sum(y * x)


def uses_tolist(x):
    return np.sum(x).tolist() * 2.0  # ERR: tolist()


def uses_string_method(x):
    s = "abc".encode()  # ERR: encode
    return np.sum(x)


# ---- well-formed functions for input/argument misuse --------------------------------


def scalar_out(x):
    return np.sum(x ** 2)


def vector_out(x):
    return np.sin(x)


def two_args(x, y):
    return np.sum(x * y)


def complex_out(x):
    return np.sum(x) * (1.0 + 2.0j)


def generator(x):
    for v in x:
        yield v  # ERR: yield


async def coroutine(x):
    return np.sum(x)


class Model:
    def __init__(self, scale):
        self.scale = scale

    def loss(self, x):
        return np.sum(self.scale * x ** 2)

    def calls_itself(self, x):
        return self.loss(x) * 2  # ERR: loss


class ScaledModel(Model):
    def loss(self, x):
        return np.sum(self.scale * x ** 4)

    @staticmethod
    def static_loss(x):
        return np.sum(x ** 2)


def writes_its_own_array(x):
    y = x * 1.0
    y[0] = 3.0 * y[0]
    y[1:] += y[:-1]
    return np.sum(y * y)


CLOSED = np.array([1.0, 2.0, 3.0])


def reads_a_global(x):
    return np.sum(CLOSED * x ** 2)


# ---- functions for tests/test_no_mutation.py: in-place work, closures, globals ------


W_DEFAULT = np.array([0.25, -0.5, 1.5])


def with_default(x, w=W_DEFAULT):
    return np.sum(np.tanh(x * w))


def make_closure():
    scale = np.array([2.0, -1.0, 0.5])
    shift = 1.0

    def closed(x):
        y = x * scale + shift
        return np.sum(y * y)

    return closed


closed = make_closure()


def adds_at_into_its_own_buffer(x):
    acc = np.zeros(3)
    np.add.at(acc, np.array([0, 2, 2]), x * x)
    return np.sum(acc * x)


def writes_in_a_loop(x):
    y = x * 1.0
    for i in range(1, 3):
        y[i] = y[i - 1] * np.sin(y[i])
    return np.sum(y)


def appends_to_its_own_list(x):
    parts = []
    for i in range(3):
        parts.append(x * float(i + 1))
    return np.sum(np.stack(parts) ** 2)


def increments_a_copy(x):
    y = x * 1.0
    y += 1.0
    return np.sum(y * y)


def rebinds_argument_with_iadd(x):
    x += 1.0
    return np.sum(x * x)


def helper_writing_own(t):
    u = t * 2.0
    u[0] = u[0] ** 2
    return u


def calls_a_writing_helper(x):
    return np.sum(helper_writing_own(x) * CLOSED)


def tree_param(p):
    return np.sum(np.tanh(p["w"] * p["b"][0]) + p["b"][1])


def aliased_iadd(x):
    v = x
    v += 1.0
    return np.sum(v * x)


class PlainConfig:  # (not a pytree, nor a plain data object: its `scale` is a property;
    # a data-only object's attributes are read since objects18, a SimpleNamespace's since
    # probe 12)
    def __init__(self, scale):
        self._scale = scale

    @property
    def scale(self):
        return self._scale


def reads_object_attribute(x, cfg):
    return np.sum(cfg.scale * x)  # ERR: cfg


def writes_dict_key_known_at_run_time(x):
    out = {}
    for i in range(3):
        out[i] = x * i  # ERR: i]
    return np.sum(out[0])


def changes_dict_keys_in_a_loop(x):
    out = {"a": x}
    for i in range(3):
        out["b"] = x * i  # ERR
    return np.sum(out["b"])


def changes_dict_keys_on_one_path(x):
    out = {"a": x}
    if np.sum(x) > 0:  # ERR
        out["b"] = x
    return np.sum(out["a"])


def writes_a_shared_dict(x):
    out = {"a": x}
    alias = out
    out["b"] = x * 2.0  # ERR
    return np.sum(alias["a"])


def recursive_nested_def_used_as_a_value(x):
    a = np.cos(x)

    def r(y, k):
        f = r  # ERR: r
        return y * a if k == 0 else f(y, k - 1)

    return np.sum(r(x, 2))


def binds_a_function_in_a_loop(x, n):
    for _ in range(n):
        act = np.tanh
    return np.sum(act(x))  # ERR: act
