"""Source functions for tests/frontend/test_built_objects.py (loaded by jax_twin too):
objects of your own classes built inside the function, their attributes and methods."""

import dataclasses

import numpy as np

SCALE = 2.0  # read in a constructor (changed between calls by a test)


@dataclasses.dataclass
class Cfg:
    """a dataclass s2s does not know (not registered)."""

    lr: float = 0.1
    wd: float = 0.01


@dataclasses.dataclass
class Noise:
    w: np.ndarray
    bias: np.ndarray = dataclasses.field(default_factory=lambda: np.ones(3))
    gain: float = 1.5


@dataclasses.dataclass(frozen=True)
class Frozen:
    w: np.ndarray
    k: float = 2.0

    def __post_init__(self):
        object.__setattr__(self, "w2", self.w * self.k)


@dataclasses.dataclass
class Derived:
    a: np.ndarray
    b: np.ndarray
    squared: bool = True

    def __post_init__(self):
        self.total = self.a + self.b
        if self.squared:  # (a static test)
            self.norm = np.sum(self.total ** 2)


class Model:
    def __init__(self, w):
        self.w = w
        self.w2 = w * 2.0  # __init__ computes

    def __call__(self, x):
        return np.tanh(self.w2 * x)

    def energy(self, x):
        return np.sum(self.w * x ** 2)

    def both(self, x):  # a method calling the others
        return self.energy(x) + np.sum(self(x)) * self.w2[0]

    def scaled(self, k):  # a method building an object of its class
        return Model(self.w * k)


class Const:
    scale = 3.0  # a class attribute

    def __init__(self):
        self.offset = 0.5 * self.scale  # (the class attribute, read at each call)

    def apply(self, x):
        return x * self.scale + self.offset


def squash(v):
    return np.tanh(v) * SCALE


class Layer:
    def __init__(self, w, b=None, bias=True):
        self.w = squash(w)  # calls a helper; reads a module constant
        if bias:  # a static test: the attribute is set or not
            self.b = b if b is not None else np.zeros_like(w)

    def forward(self, x):
        return np.sin(self.w * x + self.b)


class Clipped:
    def __init__(self, w, lo=-1.0):
        if lo > 0:  # a static value: decided per call structure
            raise ValueError("lo must be <= 0")
        self.w = np.maximum(w, lo)
        self.lo = lo


def defaults(x):
    c = Cfg()
    return np.sum(x ** 2) * c.wd + c.lr


def keyword_array_field(x):
    c = Cfg(wd=x[0])
    return np.sum(x ** 2) * c.wd


def positional_fields(x):
    c = Cfg(x[1] * 3.0, np.cos(x[0]))
    return c.lr * c.wd + np.sum(x)


def factory_field(x):
    n = Noise(np.sin(x))
    m = Noise(x, bias=x * x, gain=0.5)
    return np.sum(n.w * n.bias * n.gain) + np.sum(m.w + m.bias * m.gain)


def frozen_post_init(x):
    f = Frozen(x, k=3.0)
    return np.sum(f.w2 * f.w) + np.sum(Frozen(np.exp(x)).w2)


def post_init(x):
    d = Derived(x, np.sin(x))
    e = Derived(x, x * 2.0, squared=False)
    return d.norm + np.sum(d.total * x) + np.sum(e.total)


def computing_init(x):
    m = Model(x)
    return np.sum(m(x)) + m.energy(x)


def method_calls_method(x):
    m = Model(np.cos(x))
    return m.both(x * 2.0)


def no_argument_init(x):
    c = Const()
    return np.sum(x * c.scale) + np.sum(c.apply(x))


def helper_and_static_test(x):
    a = Layer(x)
    b = Layer(x * 0.5, b=np.cos(x))
    c = Layer(x, bias=False)
    return np.sum(a.forward(x) + b.forward(x) * c.w)


def uses(m, x):
    return m.energy(x) + np.sum(m(x) * m.w)


def passed_to_a_callee(x):
    m = Model(x * 1.5)
    return uses(m, np.sin(x))


def two_instances(x):
    m1 = Model(x)
    m2 = Model(x[::-1] * 0.5)
    return np.sum(m1(x) * m2(x)) + m1.energy(m2.w2)


def built_in_a_loop(x):
    acc = 0.0
    for k in range(1, 4):
        m = Model(x * k)
        acc = acc + m.energy(x) * 0.1
    return acc


def built_in_a_comprehension(x):
    models = [Model(x * k) for k in (1.0, 0.5)]
    return sum(np.sum(m(x)) for m in models)


def a_raise_never_taken(x):
    c = Clipped(x, lo=-0.4)
    return np.sum(c.w * x) + c.lo


def reads_module_constant(x):
    a = Layer(x, bias=False)
    return np.sum(a.w * x)


def replaced(x):
    c = Cfg(wd=x[0])
    d = dataclasses.replace(c, lr=x[1] * 2.0)
    return d.lr * d.wd + c.lr


def returns_one(x):
    return Model(x * 2.0)


def field_of_array(x):
    c = Cfg(lr=x, wd=np.sin(x))
    return np.sum(c.lr * c.wd)


def calls_another(x):  # a transformed function's callee that builds objects
    return computing_init(x) * 2.0 + defaults(x)


# refused, located


class Base:
    def __init__(self, w):
        self.w = w


class Child(Base):
    def __init__(self, w):
        super().__init__(w)
        self.v = w * 2.0


class CallsMethod:
    def __init__(self, w):
        self.w = self.prepare(w)

    def prepare(self, w):
        return w * 2.0


REGISTRY = []


class Registers:
    def __init__(self, w):
        self.w = w * 2.0
        REGISTRY.append(self)


def with_super(x):
    return np.sum(Child(x).v)


def init_calls_a_method(x):
    return np.sum(CallsMethod(x).w)


def init_changes_module_state(x):
    return np.sum(Registers(x).w)


def mutated_after_escaping(x):
    m = Model(x)
    ms = [m]
    m.w = x * 3.0
    return np.sum(ms[0].w)


def attribute_set_in_function(x):
    m = Model(x)
    m.w = x * 3.0
    return m.energy(x)


def missing_attribute(x):
    c = Layer(x, bias=False)
    return np.sum(c.b)


def method_of_a_call(x):
    return Model(x).energy(x) + np.sum(Const().apply(x))


def carried_in_a_loop(x):
    m = Model(x)
    for _ in range(3):
        m = Model(np.sin(m.w2))
    return m.energy(x)


def chosen_by_a_test(x):
    m = Model(x) if np.sum(x) > 0 else Model(-x)
    return m.energy(x)


def passes_it_on(m, x):
    return uses(m, x) * 2.0


def passed_through_two_callees(x):
    return passes_it_on(Model(x), x)


def method_returning_an_object(x):
    m = Model(x).scaled(2.0)
    return m.energy(x)


def local_class(x):
    class Local:
        def __init__(self, w):
            self.w = w * 2.0

    return np.sum(Local(x).w)


def cubic_energy(self, x):  # put in place of Model.energy by a test
    return np.sum(self.w * x ** 3)


class Net:  # objects holding objects
    def __init__(self, w, first=None):
        self.l1 = first if first is not None else Model(w)
        self.l2 = Model(w * 0.5)

    def __call__(self, x):
        return self.l2(self.l1(x)) + self.l1.w2

    @property
    def size(self):  # a property: its getter, called
        return np.sum(self.l1.w ** 2)


def nested_objects(x):
    n = Net(x)
    given = Net(x, first=Model(np.cos(x)))
    return np.sum(n(x) * given.l1(x)) + n.size + np.sum(Net(x * 2.0)(x))


@dataclasses.dataclass
class Box:  # fields named as array attributes: the fields, not `np.size(b)`
    size: np.ndarray
    ndim: float = 3.0


def fields_named_like_array_attributes(x):
    b = Box(x * 2.0)
    return np.sum(b.size * x) * b.ndim


class MLP:  # a field holding a list of objects, walked in a method
    def __init__(self, w):
        self.layers = [Model(w * k) for k in (1.0, 0.5)]

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def list_of_objects(x):
    h = np.sum(MLP(x)(x))
    for m in [Model(x), Model(np.sin(x))]:
        h = h + m.energy(x)
    return h


@dataclasses.dataclass
class WithHidden:
    a: np.ndarray
    c: float = dataclasses.field(init=False, default=2.5)  # (not a parameter)
    notes: list = dataclasses.field(default_factory=list)

    def __post_init__(self):
        self.b = self.a * self.c


@dataclasses.dataclass
class Sub(WithHidden):  # a dataclass of a dataclass: its fields, its base's __post_init__
    k: float = 3.0

    def energy(self):
        return np.sum(self.b * self.k)


@dataclasses.dataclass(kw_only=True)
class KwOnly:
    a: np.ndarray
    b: float = 1.0


class Slotted:
    __slots__ = ("w",)

    def __init__(self, w):
        self.w = w * 2.0


def dataclass_variants(x):
    h = np.sum(WithHidden(x).b) + Sub(np.sin(x), k=0.5).energy()
    return h + np.sum(KwOnly(a=x, b=2.0).a * KwOnly(a=x).b) + np.sum(Slotted(x).w * x)


class Star:
    def __init__(self, *ws):
        self.ws = ws


class Globals:
    def __init__(self, w):
        global SCALE
        SCALE = 2.0  # (a write: a `global` that only reads is kept)
        self.w = w


def star_init(x):
    return np.sum(Star(x, x).ws[0])


def global_in_init(x):
    return np.sum(Globals(x).w)


@dataclasses.dataclass(frozen=True)
class FrozenAssigns:
    a: np.ndarray

    def __post_init__(self):
        self.b = self.a * 2.0  # Python raises FrozenInstanceError


class Hooked:
    def __init__(self, w):
        self.w = w

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value * 2.0)


def frozen_assigns(x):
    return np.sum(FrozenAssigns(x).b)


def attribute_hook(x):
    return np.sum(Hooked(x).w)


MODEL = Model(np.ones(3))  # a module-level object beside the built ones


def isinstance_tests(x):  # (run by s2s.jit on JAX as Python: its classes translated)
    ok = isinstance(MODEL, Model) and isinstance(Model(x), Model)
    return np.sum(Model(x)(x)) * (2.0 if ok else 1.0) + np.sum(MODEL(x))


USE_BIAS = True  # a module flag given to a constructor (changed by a test)


class Flagged:
    def __init__(self, w, squashed=True):
        if squashed:  # (decided when transforming: a literal, or USE_BIAS read now)
            self.w = squash(w)
        else:
            self.w = w * 3.0


def flag_from_module(x):
    return np.sum(Flagged(x, squashed=USE_BIAS).w * x) + np.sum(Flagged(x).w)


@dataclasses.dataclass
class Holder:  # a dataclass holding an object: given one, or made by its factory
    scale: float = 1.0
    model: Model = dataclasses.field(default_factory=lambda: Model(np.ones(3)))

    def apply(self, x):
        return self.model(x) * self.scale


def dataclass_holding_an_object(x):
    given = Holder(scale=2.0, model=Model(x))
    made = Holder()
    return np.sum(given.apply(x)) + np.sum(made.apply(x)) + np.sum(given.model.w2)
