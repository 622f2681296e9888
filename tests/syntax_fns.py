"""Small NumPy functions written the ways users write Python: annotations, odd
docstrings, keyword-only parameters, continuations, unpacking, augmented assignments,
decorators, methods, constants.  tests/test_syntax_forms.py transforms each one and
compares it with JAX running the same source (tests/support.py ``jax_twin``)."""

import functools
import math

import numpy as np

SCALE = 1.5
OFFSET = np.array([0.25, -0.5, 0.75])


# ---- annotations and docstrings ------------------------------------------------


def annotated(x: np.ndarray, w: np.ndarray) -> float:
    return np.sum(np.tanh(x * w))


def annotated_assign(x: np.ndarray) -> float:
    y: np.ndarray = x * 2.0
    z: float = np.sum(y**2)
    return z


def annotated_no_value(x):
    y: np.ndarray
    y = np.sin(x)
    return np.sum(y)


def docstring_multi(x):
    """A docstring
    over several lines."""
    return np.sum(x**3)


def docstring_single_quotes(x):
    'single-quoted docstring'
    return np.sum(np.exp(x))


def docstring_raw(x):
    r"""Raw docstring with a \backslash."""
    return np.sum(x * x)


def docstring_then_comment(x):
    """Doc."""
    # a comment after the docstring
    y = x + 1.0  # trailing comment
    return np.sum(y * y)


# ---- parameters ----------------------------------------------------------------


def kwonly_default(x, *, scale=2.0):
    return np.sum(scale * x**2)


def kwonly_required(x, *, w):
    return np.sum(x * w)


def positional_default(x, a=3.0, b=0.5):
    return np.sum(a * np.sin(b * x))


def posonly(x, w, /):
    return np.sum(x @ w)


def none_default(x, w=None):
    if w is None:
        w = np.ones_like(x)
    return np.sum(w * x**2)


def true_default(x, square=True):
    if square:
        return np.sum(x**2)
    return np.sum(x)


def false_default(x, square=False):
    if square:
        return np.sum(x**2)
    return np.sum(np.abs(x))


# ---- layout: continuations, semicolons, parentheses ------------------------------


def paren_multiline(x, w):
    y = (
        np.sin(x) * w
        + np.cos(x) / (1.0 + w**2)
        - 0.5 * x
    )
    return np.sum(y)


def backslash(x):
    y = np.sin(x) + \
        np.cos(x) * \
        2.0
    return np.sum(y)


def semicolons(x):
    a = x * 2.0; b = a + 1.0; c = b * a
    return np.sum(c)


def semicolon_trailing(x):
    y = np.sin(x);
    return np.sum(y);


def long_expression(x, w):
    return np.sum(np.sin(x) * w + np.cos(x) * w**2 - np.tanh(x * w) + np.exp(-x**2) * 0.5 - np.log1p(w**2) * x + np.sqrt(1.0 + x**2) * np.arctan(w) - (x - w) ** 2 / (1.0 + x**2 + w**2))


def deeply_nested(x):
    return np.sum(np.sin(np.cos(np.tanh(np.exp(np.sin(np.cos(np.tanh(x * 0.5))))))))


# ---- operators and precedence ----------------------------------------------------


def neg_pow(x):
    return np.sum(-x**2)


def pow_neg(x):
    return np.sum(x**-1)


def pow_neg_float(x):
    return np.sum(x ** -0.5)


def unary_chain(x):
    return np.sum(- - x * +x)


def chained_cmp(x):
    y = x[0]
    if 0.0 < y < 10.0:
        return np.sum(x**2)
    return np.sum(x)


def cond_expr(x):
    y = np.sin(x) if x[0] > 0 else np.cos(x)
    return np.sum(y)


def cond_expr_nested(x):
    s = np.sum(x)
    k = 2.0 if s > 10.0 else 3.0 if s > 0.0 else 4.0
    return s * k


def matmul_T(x, y):
    return np.sum(x.T @ y)


def python_abs(x):
    return np.sum(abs(x))


def python_abs_scalar(x):
    return abs(np.sum(x)) * 2.0


def python_len(x):
    return np.sum(x) / len(x)


def floordiv_mod(x):
    n = len(x) // 2
    return np.sum(x[:n]) - np.sum(x[n:]) * (len(x) % 2 + 1)


def bool_ops(x):
    s = np.sum(x)
    if s > 0 and x[0] > 0 or x[1] < -5.0:
        return s**2
    return -s


def not_op(x):
    if not x[0] > 0:
        return np.sum(x)
    return np.sum(x**2)


def is_not_none(x, w=None):
    if w is not None:
        x = x * w
    return np.sum(x**2)


# ---- subscripts ----------------------------------------------------------------


def ellipsis_none(x):
    y = x[..., None] * x[None, ...]
    return np.sum(y**2)


def newaxis(x):
    y = x[:, np.newaxis] * x[np.newaxis, :]
    return np.sum(np.sin(y))


def negative_step(x):
    return np.sum(x[::-1] * x)


def slices_mixed(m):
    return np.sum(m[1:, :-1] * m[:-1, 1:]) + np.sum(m[-1])


# ---- assignments ----------------------------------------------------------------


def aug_all(x):
    y = x * 1.0
    y += 1.0
    y -= 0.5
    y *= x
    y /= 2.0
    y **= 2
    return np.sum(y)


def aug_matmul(x, w):
    y = x @ w
    y @= w
    return np.sum(y)


def aug_floordiv_int(x):
    n = len(x)
    n //= 2
    n %= 3
    return np.sum(x) * (n + 1)


def tuple_unpack(x):
    a, b = np.sin(x), np.cos(x)
    return np.sum(a * b)


def tuple_unpack_paren(x):
    (a, b) = (x * 2.0, x + 1.0)
    return np.sum(a * b)


def list_target(x):
    [a, b] = x[0], x[1]
    return a * b


def nested_unpack(x):
    (a, b), c = (x[0], x[1]), x[2]
    return a * b + c**2


def nested_unpack_call(x):
    pair = (np.sin(x), np.cos(x))
    (a, b), c = pair, x
    return np.sum(a * b * c)


def starred_unpack(x):
    a, *rest = x[0], x[1], x[2]
    return a * rest[0] * rest[1]


def starred_middle(x):
    first, *mid, last = x[0], x[1], x[2], x[3]
    return first * last + mid[0] * mid[1]


def swap(x, y):
    a, b = x, y
    a, b = b, a * 2.0
    return np.sum(a * b**2)


def pass_statement(x):
    if x[0] > 0:
        pass
    else:
        x = x * 2.0
    return np.sum(x**2)


# ---- loops ----------------------------------------------------------------------


def range_negative_step(x):
    s = 0.0
    for i in range(len(x) - 1, -1, -1):
        s = s * 0.5 + x[i]
    return s


def range_step_two(x):
    s = 0.0
    for i in range(0, len(x), 2):
        s = s + x[i] ** 2
    return s


def enumerate_loop(x):
    s = 0.0
    for i, v in enumerate(x):
        s = s + (i + 1.0) * v**2
    return s


def enumerate_start(x):
    s = 0.0
    for i, v in enumerate(x, 1):
        s = s + i * np.sin(v)
    return s


def zip_loop(x, y):
    s = 0.0
    for a, b in zip(x, y):
        s = s + a * b
    return s


def enumerate_zip(x, y):
    s = 0.0
    for i, (a, b) in enumerate(zip(x, y)):
        s = s + i * a * b
    return s


def loop_over_rows(m):
    s = 0.0
    for row in m:
        s = s + np.sum(np.tanh(row))
    return s


def underscore_loop(x):
    y = x
    for _ in range(3):
        y = np.sin(y)
    return np.sum(y)


def while_loop(x):
    y = x
    k = 0
    while k < 4:
        y = y * 0.9 + np.sin(y)
        k += 1
    return np.sum(y)


# ---- names from outside ----------------------------------------------------------


def module_constant(x):
    return np.sum(SCALE * x + OFFSET)


def math_pi(x):
    return np.sum(np.sin(math.pi * x)) + math.e * np.sum(x)


def np_pi(x):
    return np.sum(np.cos(np.pi * x / 2.0))


def math_funcs(x):
    s = np.sum(x)
    return math.sqrt(2.0) * s + math.log(3.0) * s**2


# ---- calls and decorators ---------------------------------------------------------


def _helper(x, k=2.0):
    return np.sin(x) * k


def call_kwargs(x):
    return np.sum(_helper(x, k=3.0) + _helper(x))


def _logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


@_logged
def decorated(x):
    return np.sum(np.exp(-x**2))


@_logged
@_logged
def decorated_twice(x):
    return np.sum(np.sin(x) ** 2)


def _scaled(x, scale):
    return np.sum(np.tanh(scale * x))


partial_fn = functools.partial(_scaled, scale=2.5)


class Model:
    def __init__(self, scale):
        self.scale = scale
        self.w = np.array([1.0, -2.0, 0.5])

    def loss(self, x):
        return np.sum(self.scale * np.sin(x * self.w))

    @staticmethod
    def static_loss(x):
        return np.sum(x**4)

    @classmethod
    def class_loss(cls, x):
        return np.sum(np.cos(x))


# ---- side effects ------------------------------------------------------------------


def with_print(x):
    y = np.sin(x)
    print("y =", y)
    return np.sum(y**2)


def with_assert(x):
    assert x.ndim == 1, "x must be a vector"
    return np.sum(x**2)


def with_assert_shape(x, w):
    assert x.shape == w.shape
    return np.sum(x * w)


# ---- newer syntax --------------------------------------------------------------------


def walrus(x):
    if (s := np.sum(x)) > 0:
        return s**2
    return s


def fstring_unused(x):
    name = f"x has {len(x)} entries"
    return np.sum(x**2)


def unicode_names(x):
    α = 0.5
    β = np.sin(x)
    return np.sum(α * β**2)


def tuple_return(x):
    return np.sum(x**2), np.sum(x)


def comment_lines(x):
    # first
    y = x * 2.0

    # second, after a blank line

    return np.sum(y**2)


# ---- more everyday forms ----------------------------------------------------------------


def string_block_comment(x):
    y = x * 2.0
    """A string used as a block comment in the middle of the body."""
    z = np.sin(y)
    "another one"
    return np.sum(z)


def ellipsis_statement(x):
    if x[0] > 100.0:
        ...
    return np.sum(x**2)


def string_mode(x, reduction="mean"):
    y = x**2
    if reduction == "mean":
        return np.mean(y)
    elif reduction == "sum":
        return np.sum(y)
    return np.max(y)


def shape_unpack(m):
    n, k = m.shape
    return np.sum(m) / (n * k) + m.shape[-1] * np.sum(m[0])


def ndim_branch(x):
    if x.ndim == 1:
        x = x[None, :]
    return np.sum(np.tanh(x))


def builtin_sum_list(x):
    parts = [np.sin(x), np.cos(x), x**2]
    return np.sum(sum(parts))


def builtin_pow(x):
    return np.sum(pow(x, 3))


def float_of_constant(x):
    n = float(len(x))
    return np.sum(x) / n


def float_of_value(x):
    s = float(np.sum(x))
    return s * np.sum(x)


def isinstance_check(x, scale=2.0):
    if isinstance(scale, float):
        return np.sum(scale * x**2)
    return np.sum(x)


def pairwise(x):
    d = x[:, None] - x[None, :]
    return np.sum(d**2)


def einsum_string(a, x):
    return np.sum(np.einsum("ij,j->i", a, x) ** 2)


def methods_chain(m):
    return m.reshape(-1).sum() + m.mean(axis=0).sum() + m.T.dot(m).trace()


def keepdims(m):
    return np.sum(m / np.sum(m, axis=-1, keepdims=True) * m)


def return_ifexp(x):
    s = np.sum(x)
    return s**2 if s > 0 else -s


def while_true_break(x):
    y = x
    k = 0
    while True:
        y = np.sin(y)
        k = k + 1
        if k >= 3:
            break
    return np.sum(y)


def fill_zeros(x):
    y = np.zeros_like(x)
    for i in range(len(x)):
        y[i] = x[i] ** 2 + i
    return np.sum(y * x)


def params_tuple(params, x):
    w, b = params
    return np.sum(np.tanh(x * w + b))


def params_dict(params, x):
    return np.sum(params["w"] * x + params["b"])


def return_in_loop(x):
    s = 0.0
    for i in range(len(x)):
        s = s + x[i] ** 2
        if s > 1.0:
            return s
    return s * 2.0


def return_in_nested_loop(m):
    s = 0.0
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            s = s + m[i, j] ** 2
            if s > 2.0:
                return s
    return s


def for_else(x):
    s = 0.0
    for v in x:
        s = s + v
    else:
        s = s * 2.0
    return s


def generator_sum(x):
    return sum(x[i] ** 2 for i in range(len(x)))


def list_comp_values(x):
    ys = [np.sin(v) for v in x]
    return np.sum(np.stack(ys))


def del_statement(x):
    y = x * 2.0
    del x
    return np.sum(y)


def scalar_base_pow(x):
    return np.sum(2.0 ** x + x ** 0.5 + np.e ** x)


def astype_asarray(x):
    y = np.asarray(x, dtype=np.float64)
    z = y.astype(np.float64)
    return np.sum(np.array(z) ** 2)


def any_all(x):
    if np.all(x > -10.0) and not np.any(x > 10.0):
        return np.sum(x**2)
    return np.sum(x)


def global_lambda_caller(x):
    return np.sum(square(x)) + np.sum(cube(x))


square = lambda v: v * v  # noqa: E731
cube = lambda v, k=3: v**k  # noqa: E731


def min_max_builtin(x):
    return max(np.sum(x), 0.0) + min(x[0], x[1])


def round_builtin(x):
    return np.sum(x) * round(2.6)


def kwonly_helper_caller(x):
    return _kw_helper(x, scale=3.0)


def _kw_helper(x, *, scale=1.0):
    return np.sum(scale * np.sin(x))


def item_method(x):
    s = np.sum(x).item()
    return s * np.sum(x)


def builtin_sum_tuple_start(x):
    return sum((np.sin(x), x**2), np.ones_like(x)).sum()


def builtin_sum_grown(x):
    parts = []
    for v in x:
        parts.append(v**2)
    return sum(parts)


def builtin_sum_grown_used(x):
    parts = [x[0]]
    for v in x:
        parts.append(v**2)
    return sum(parts) + np.sum(np.stack(parts))


def builtin_sum_named_list(x):
    parts = [np.sin(x), x**2]
    return np.sum(sum(parts))


class Plain:
    def loss(self, x):
        return np.sum(np.sin(x) * x)

    def reads_self(self, x):
        return np.sum(x) * helper_of(self)


def helper_of(obj):
    return 2.0


# ---- decorators that do more than forward --------------------------------------------------


def _doubler(fn):
    @functools.wraps(fn)
    def wrapper(x):
        return 2.0 * fn(x)

    return wrapper


@_doubler
def doubled(x):
    return np.sum(np.sin(x))


def _printing(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        print("calling", fn.__name__)
        return fn(*args, **kwargs)

    return wrapper


@_printing
def printed(x):
    return np.sum(x**2)


@_logged
def decorated_helper(x):
    return np.sin(x) * 3.0


def calls_decorated(x):
    return np.sum(decorated_helper(x) * x)


# ---- accumulators -------------------------------------------------------------------------


def accumulate_float(x):
    s = 0.0
    for v in x:
        s += v**2
    s -= 1.0
    s *= 2.0
    return s


def accumulate_count(x):
    y = x
    k = 0
    while k < 3:
        y = np.sin(y) + 0.5 * y
        k += 1
    return np.sum(y)


def accumulate_len(x):
    n = len(x)
    n += 1
    return np.sum(x) * n


def aug_view_next_iteration(x):
    y = 0.0
    for i in range(2):
        y += 1.0
        y = x
    return np.sum(y)


# ---- := (on only when parse.HOIST_WALRUS is set) ------------------------------------------


def walrus_assign(x):
    y = (n := len(x)) * x + (m := np.sin(x)) * m
    return np.sum(y) / n


def walrus_elif(x):
    s = np.sum(x)
    if s > 100.0:
        return s
    elif (t := np.sum(x**2)) > 1.0:
        return t * s
    return s


def walrus_in_return(x):
    return np.sum((z := x * 2.0) * z)


def walrus_after_read(x):
    a = 1.0
    y = a * x + (a := 2.0) * x
    return np.sum(y)


def walrus_in_ifexp(x):
    s = np.sum(x)
    return s if s > 0 else (t := s * 2.0)


def walrus_in_while(x):
    k = 0
    y = x
    while (k := k + 1) < 4:
        y = np.sin(y)
    return np.sum(y)


def break_after_inner_loop(m):
    s = 0.0
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            s = s + m[i, j] ** 2
        if s > 2.0:
            break
    return s


def while_with_break(x):
    y = x
    k = 0
    while k < 100:
        y = np.sin(y)
        k = k + 1
        if k >= 3:
            break
    return np.sum(y)


def floor_mod_ops(x):
    return np.sum(x // 0.5 + x % 0.75 + np.where(x > 0, x, 0.0) * (x != 0.1))


def vector_matmul(x):
    return x @ x + abs(-x) @ x


def helper_pair(x):
    return np.sin(x), np.cos(x)


def unpack_helper_result(x):
    a, b = helper_pair(x)
    (c, d) = helper_pair(a)
    return np.sum(a * b + c * d)


def closure_maker(k):
    def inner(x):
        return np.sum(k * np.sin(x))

    return inner


closure_fn = closure_maker(1.5)


def conditional_import_free(x, mode="tanh"):
    act = np.tanh if mode == "tanh" else np.sin
    return np.sum(act(x))


def aug_alias_name(x):
    y = x * 1.0
    t = y
    y += 1.0
    return np.sum(t * x)


def aug_alias_list_in_loop(x):
    y = x * 1.0
    ts = []
    for i in range(3):
        y += 1.0
        ts.append(y)
    return np.sum(np.stack(ts) * x)


def aug_parameter_alias(x):
    t = x
    x += 1.0
    return np.sum(t * x)


def dtype_objects(x):
    a = x.astype(np.float64)
    b = np.zeros(3, dtype=np.float64) + np.asarray(x, dtype=float)
    return np.sum(a * b) + np.sum(np.ones_like(x, dtype=np.float64) * x)


def mlp_loss(params, x, y):
    """A small MLP's cross-entropy, written the usual way."""
    h = x
    for W, b in params[:-1]:
        h = np.tanh(h @ W + b)
    W, b = params[-1]
    logits = h @ W + b
    logits -= logits.max(axis=-1, keepdims=True)
    log_probs = logits - np.log(np.sum(np.exp(logits), axis=-1, keepdims=True))
    return -np.mean(np.sum(log_probs * y, axis=-1))


def dict_layers_loss(layers, x):
    h = x
    for layer in layers:
        h = np.tanh(h @ layer["W"] + layer["b"])
    return np.sum(h**2)


def _default_changer(fn):
    @functools.wraps(fn)
    def wrapper(x, k=5.0):
        return fn(x, k)

    return wrapper


@_default_changer
def wrapped_default(x, k=2.0):
    return np.sum(k * np.sin(x))
