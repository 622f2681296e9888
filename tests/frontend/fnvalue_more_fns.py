"""Functions as values that s2s refused before (tests/frontend/test_function_values_more.py):
a function bound in a loop body and read after the loop, a loop calling the function
a name denoted before it and then binding the name again.

Loaded twice: as written (s2s transforms them) and by ``jax_twin`` with ``np`` bound
to ``jax.numpy`` (JAX's results are the oracle: it unrolls the Python loops)."""

import functools

import numpy as np

W = np.array([0.5, -1.0, 2.0, 0.25])


# ---- 1. a function bound in a loop body, read after the loop ------------------------


def lambda_after_loop(x, n):
    """The last iteration's lambda, reading the loop index and a name first bound in
    the body as the last iteration left them."""
    for k in range(n):
        w = np.sin(x) * (k + 1)
        g = lambda y: y * w + k  # noqa: E731
    return np.sum(g(x) * x)


def def_after_loop(x, n):
    """A nested def reading a carried value that the body changes after binding it:
    the call after the loop reads its last value."""
    acc = x
    for k in range(n):
        def g(y):
            return np.tanh(y * acc) + W[k % 4]

        acc = acc * 0.5 + np.cos(acc)
    return np.sum(g(x) * acc)


def bound_before_the_loop_too(x, n):
    """A loop that ran no iteration leaves the function bound before it."""
    g = np.cos
    for k in range(n):
        def g(y):  # noqa: F811
            return np.sin(y) * (k + 1.0)
    return np.sum(g(x) * x)


def lambda_after_while(x, n):
    i = 0
    while i < n:
        s = np.exp(0.1 * x * (i + 1))
        h = lambda y: y * s + i  # noqa: E731
        i = i + 1
    return np.sum(h(x) ** 2)


def captured_name_rebound_after(x, n):
    """The closure reads its variables when it runs: ``w`` rebound after the loop is
    read as rebound."""
    for k in range(n):
        w = x * (k + 2.0)
        g = lambda y: np.sin(y * w)  # noqa: E731
    w = np.cos(x)
    return np.sum(g(x))


def after_a_constant_loop(x, n):
    for k in range(3):
        g = lambda y: y * W[k] + np.sin(y) * n  # noqa: E731
    return np.sum(g(x) * x)


def passed_on_after_the_loop(x, n):
    for k in range(n):
        w = np.cos(x) + k
        g = lambda y: y * w  # noqa: E731
    return np.sum(apply(g, x))


def apply(f, y):
    return f(y) * y


def apply_at(f, y, k):
    return f(y, k) * y


# ---- 2. called before its binding in the body: the previous iteration's function ----


def rebound_in_the_loop(x, n):
    act = np.sin
    y = x
    for _ in range(n):
        y = act(y)
        act = np.tanh
    return np.sum(y)


def rebound_lambda_reading_the_body(x, n):
    """Iteration 1 calls np.sin; iteration k > 1 the lambda of iteration k - 1, which
    reads ``w`` as iteration k - 1 left it (the closure's cell)."""
    act = np.sin
    y = x
    for k in range(n):
        y = act(y) + 0.1 * y
        w = np.cos(y) * (1.0 + 0.1 * k)
        act = lambda v: np.sin(v * w)  # noqa: E731
    return np.sum(y * x)


def rebound_def_in_a_while(x, n):
    f = np.exp
    s = x * 0.1
    i = 0
    while i < n:
        s = f(s) * 0.5

        def f(v):
            return np.sin(v) + s

        i = i + 1
    return np.sum(f(x) * s)


# ---- as a callee of another transformed function -------------------------------------


def callee_of_all(x, n):
    return (lambda_after_loop(x, n) + def_after_loop(x, n) + bound_before_the_loop_too(x, n)
            + lambda_after_while(x, n) + captured_name_rebound_after(x, n)
            + passed_on_after_the_loop(x, n) + rebound_in_the_loop(x, n)
            + rebound_lambda_reading_the_body(x, n) + rebound_def_in_a_while(x, n))


# ---- 3. a recursive nested def reading the enclosing values, used as a value -------


def recursive_used_as_a_value(x, depth):
    a = np.cos(x)

    def r(y, k):
        f = r
        return y * a if k == 0 else f(np.sin(y) * a, k - 1)

    return np.sum(r(x, depth))


def recursive_passed_to_a_helper(x, depth):
    a = np.cos(x) + 0.5

    def r(y, k=0):
        if k >= depth:
            return np.tanh(y * a)
        return apply_at(r, y * 0.9, k + 1) + r(y, k=k + 1) * 0.5

    return np.sum(r(x) * a)


# ---- 4. a method given to a transform, its class overriding what it calls -------------


class Model:
    def __init__(self, w):
        self.w = w
        self.scale = 0.5

    def features(self, x):
        return np.tanh(x * self.w)

    def head(self, x):
        return x * self.scale + 1.0

    def loss(self, x):
        return np.sum(self.features(x) ** 2) + np.sum(self.head(x) * self.features(x))


class Deeper(Model):
    def features(self, x):
        return np.sin(x * self.w) * 2.0


class Deepest(Deeper):
    def head(self, x):
        return np.cos(x) * self.scale - x


def calls_each_model(x):
    """Each object's ``loss`` called inside a function (its own methods, as Python)."""
    return MODEL.loss(x) + DEEPER.loss(x * 0.5) + DEEPEST.loss(x)


W4 = np.array([0.5, -1.0, 2.0, 0.25])
MODEL, DEEPER, DEEPEST = Model(W4), Deeper(W4 * 0.5), Deepest(W4 + 1.0)


# ---- 5. a decorator's wrapper that does more than forward, with *args/**kwargs ------


def scaled(f):
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        return 2.0 * f(*args, **kwargs)

    return wrapper


def regularized(f):
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        out = f(*args, **kwargs)
        return out + 0.1 * np.sum(args[0] ** 2) * len(args)

    return wrapper


@scaled
def scaled_loss(x, w=2.0):
    return np.sum(np.sin(x) * w)


@regularized
def regularized_loss(x, w, scale=1.0):
    return np.sum(np.cos(x) * w) * scale


def calls_a_decorated(x):
    return scaled_loss(x * 0.5) * 2.0 + np.sum(x)


def calls_the_other_decorated(x):
    return regularized_loss(x, 3.0) + regularized_loss(x * 2.0, 0.5, scale=2.0)
