"""Source functions for tests/frontend/test_constructors.py (loaded by jax_twin too):
constructors calling their object's methods (super().__init__ chains, self.method(...),
*args/**kwargs, InitVar), NamedTuple methods, and objects carried through loops or
chosen by an `if` on a value."""

import abc
import dataclasses
from typing import NamedTuple

import numpy as np

import s2s.tree_util as tu

GAIN = 1.5  # read in a base class's constructor (changed between calls by a test)


class Base:
    shift = 0.25  # a class attribute a base's __init__ reads (changed by a test)

    def __init__(self, w):
        self.w = np.tanh(w) * GAIN + self.shift


class Middle(Base):
    def __init__(self, w, k=2.0):
        super().__init__(w * k)
        self.m = np.sin(w)


class Leaf(Middle):
    def __init__(self, w):
        super().__init__(w, k=3.0)  # a chain of three __init__s
        self.total = self.w * self.m

    def energy(self, x):
        return np.sum(self.total * x ** 2)


class Left(Base):
    def __init__(self, w):
        super().__init__(w)
        self.left = self.w * 2.0


class Right(Base):
    def __init__(self, w):
        super().__init__(w + 1.0)
        self.right = np.cos(w)


class Diamond(Left, Right):
    def __init__(self, w):
        super().__init__(w)  # Left, then Right, then Base: Python's MRO
        self.both = self.left + self.right


class Explicit(Base):
    def __init__(self, w):
        Base.__init__(self, w * w)  # the base's __init__ by name
        self.e = self.w * w


class Inherits(Middle):  # no __init__ of its own: Middle's
    def score(self):
        return np.sum(self.w * self.m)


class Prepared:
    def __init__(self, w, scale=2.0):
        self.w = w
        self.prepare(w * scale)  # a method setting attributes
        self.n = self.norm()  # a method reading them

    def prepare(self, w):  # (`w` is also a field: passed by position)
        self.w2 = np.sin(w) + self.w
        self.check()

    def check(self):
        assert self.w2.shape == self.w.shape, "shapes differ"

    def norm(self):
        return np.sum(self.w2 ** 2) + self.helper(1.0)

    def helper(self, c):
        return c * np.sum(self.w)


class ByKeyword(Prepared):
    def __init__(self, w):
        super().__init__(w=w, scale=0.5)
        self.prepare(w=self.w2)  # a keyword for a parameter named like a field


class Stars:
    def __init__(self, *ws, scale=1.0, **opts):
        self.ws = ws
        self.total = sum(ws) * scale
        self.gain = opts.get("gain", 2.0)


class Forwarding(Base):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.v = self.w * 2.0


@dataclasses.dataclass
class WithInitVar:
    w: np.ndarray
    scale: dataclasses.InitVar[float] = 2.0

    def __post_init__(self, s):
        self.w2 = self.w * s


@dataclasses.dataclass
class PostBase:
    a: np.ndarray

    def __post_init__(self):
        self.a2 = self.a ** 2


@dataclasses.dataclass
class PostChild(PostBase):
    b: float = 3.0

    def __post_init__(self):
        super().__post_init__()
        self.ab = self.a2 * self.b


class Params(NamedTuple):
    w: np.ndarray
    b: np.ndarray

    def apply(self, x):
        return np.tanh(self.w * x + self.b)

    def l2(self):
        w, b = self
        return np.sum(w ** 2) + np.sum(self[1] ** 2)


class Model:
    def __init__(self, w):
        self.w = w
        self.w2 = w * 2.0

    def energy(self, x):
        return np.sum(self.w * x ** 2)


# ---- constructors calling methods ----------------------------------------------


def super_chain(x):
    return Leaf(x).energy(x)


def diamond(x):
    d = Diamond(x)
    return np.sum(d.both * d.w)


def explicit_base_init(x):
    return np.sum(Explicit(x).e)


def inherited_init(x):
    return Inherits(x, k=0.5).score()


def init_calls_methods(x):
    p = Prepared(x)
    q = Prepared(np.exp(x), scale=1.0)
    return p.n * q.n + np.sum(p.w2 * x)


def keyword_for_a_field_name(x):
    b = ByKeyword(x)
    return np.sum(b.w2) * b.n


def star_args_init(x):
    s = Stars(x, x * 2.0, scale=3.0, gain=x[0])
    t = Stars(np.sin(x))
    return np.sum(s.ws[1] * s.total) * s.gain + np.sum(t.total) * t.gain


def forwarding_init(x):
    c = Forwarding(x)
    d = Forwarding(w=np.cos(x))
    return np.sum(c.v * d.w)


def initvar_field(x):
    s = WithInitVar(x, scale=x[0])
    t = WithInitVar(np.sin(x))
    return np.sum(s.w2 * t.w2)


def post_init_super(x):
    c = PostChild(x, b=2.0)
    return np.sum(c.ab + c.a2)


def named_tuple_methods(x):
    p = Params(x, np.cos(x))
    return np.sum(p.apply(x)) + p.l2()


def as_a_callee(x):
    return super_chain(x * 2.0) + init_calls_methods(np.sin(x))


# ---- objects carried through a loop, chosen by a test --------------------------


def record_carried(x):
    m = Model(x)
    for _ in range(3):
        m = Model(np.sin(m.w2))
    return m.energy(x)


def record_carried_with_index(x):
    m = Leaf(x)
    for i in range(4):
        m = Leaf(m.total * 0.5 + x * i)
    return m.energy(x)


def dict_carried(x):
    d = {"w": x, "v": 2.0 * x}
    for _ in range(3):
        d = {"w": np.sin(d["v"]), "v": d["w"] * 2.0}
    return np.sum(d["w"] * d["v"])


def tuple_carried(x):
    t = (x, np.cos(x))
    for _ in range(3):
        t = (t[1] * 0.5, np.sin(t[0]))
    return np.sum(t[0] * t[1])


def record_in_a_while(x):
    m = Model(x)
    k = 0
    while k < 3:
        m = Model(np.tanh(m.w2 + m.w))
        k += 1
    return m.energy(x)


def record_carried_with_break(x):
    m = Model(x)
    for i in range(5):
        if i == 3:
            break
        m = Model(np.sin(m.w2))
    return m.energy(x)


def record_chosen(x):
    m = Model(x) if np.sum(x) > 0 else Model(-x)
    return m.energy(x)


def record_chosen_by_if_statement(x):
    if np.sum(x ** 3) > 0.5:
        m = Leaf(x)
    else:
        m = Leaf(np.cos(x))
    return m.energy(x) + np.sum(m.m)


def dict_chosen(x):
    d = {"a": x, "b": x * 2.0} if np.max(x) > 1.0 else {"a": np.sin(x), "b": x}
    return np.sum(d["a"] * d["b"])


def chosen_then_carried(x):
    m = Model(x) if np.sum(x) > 0 else Model(x * 0.5)
    for _ in range(2):
        m = Model(np.sin(m.w2)) if np.sum(m.w) > 0 else Model(np.cos(m.w))
    return m.energy(x)


# ---- refused: no sound meaning here ---------------------------------------------


class WithNew:
    def __new__(cls, w):
        return object.__new__(cls)

    def __init__(self, w):
        self.w = w


class Meta(type):
    def __call__(cls, *args):
        return super().__call__(*args)


class WithMeta(metaclass=Meta):
    def __init__(self, w):
        self.w = w


class GetAttribute:
    def __init__(self, w):
        self.w = w

    def __getattribute__(self, name):
        return object.__getattribute__(self, name)


class Recursive:
    def __init__(self, w):
        self.w = w
        self.grow(3)

    def grow(self, k):
        self.w = self.w * 2.0
        if k > 0:
            self.grow(k - 1)


class ValueOfASetter:
    def __init__(self, w):
        self.w = self.prepare(w)

    def prepare(self, w):
        self.w0 = w
        return w * 2.0


class KwargsMethod:
    def __init__(self, w):
        self.setup(w=w)

    def setup(self, **kw):
        self.w = kw["w"]


def with_new(x):
    return np.sum(WithNew(x).w)


def with_metaclass(x):
    return np.sum(WithMeta(x).w)


def with_getattribute(x):
    return np.sum(GetAttribute(x).w)


def local_class(x):
    class Local:
        def __init__(self, w):
            self.w = w

    return np.sum(Local(x).w)


def recursive_method(x):
    return np.sum(Recursive(x).w)


def value_of_a_setter(x):
    return np.sum(ValueOfASetter(x).w)


def kwargs_method(x):
    return np.sum(KwargsMethod(x).w)


class Abstract(abc.ABC):  # a metaclass that leaves construction to __init__
    def __init__(self, w):
        self.w = w * 2.0

    @abc.abstractmethod
    def score(self, x):
        ...


class Concrete(Abstract):
    def __init__(self, w):
        super().__init__(w)
        self.v = np.sin(w)

    def score(self, x):
        return np.sum(self.w * self.v * x)


def abstract_base(x):
    return Concrete(x).score(x)


def carried_back(x):
    m = Model(x)
    for _ in range(2):
        m = Model(np.sin(m.w2))
    return m


def chosen_back(x):
    return Model(x) if np.sum(x) > 0 else Model(np.cos(x))


def changes_structure_in_loop(x):
    m = Model(x)
    for _ in range(2):
        m = Leaf(m.w)  # another class: the loop's structure changes
    return np.sum(m.w)


@tu.register_pytree_node_class
class Registered:
    """a pytree class of yours (registered with s2s.tree_util)."""

    def __init__(self, w, b):
        self.w = w
        self.b = b

    def tree_flatten(self):
        return (self.w, self.b), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)

    def loss(self, x):
        return np.sum(np.tanh(x * self.w + self.b) ** 2)


def takes_registered(r, x):
    return np.sum(r.w * x) * r.loss(x)


def registered_class_method(x):
    r = Registered(x, np.cos(x))
    return r.loss(x) + takes_registered(r, x)


class Inner:
    def __init__(self, w):
        self.w = w * 2.0


class Outer:
    def __init__(self, w):
        self.inner = Inner(w)  # a record holding a record
        self.v = np.sin(w)


def nested_record_carried(x):
    n = Outer(x)
    for _ in range(2):
        n = Outer(n.inner.w * 0.5 + n.v)
    return np.sum(n.inner.w * n.v)


def nested_record_chosen(x):
    n = Outer(x) if np.sum(x) > 0 else Outer(-x)
    return np.sum(n.inner.w * n.v)
