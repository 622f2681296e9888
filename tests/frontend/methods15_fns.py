"""Functions for test_methods15.py (issue 23): model classes as people write them: a
list of layers built in a loop in ``__init__`` (``append`` and ``self.layers =
self.layers + [...]``), walked in ``__call__``; ``p.steps += 2`` and ``p.w += v`` of
an object the function built."""

import numpy as np


class Layer:
    def __init__(self, w):
        self.w = w

    def apply(self, x):
        return np.tanh(self.w * x)


class AppendedNet:
    def __init__(self, ws):
        self.layers = []
        for w in ws:
            self.layers.append(Layer(w))

    def __call__(self, x):
        for layer in self.layers:
            x = layer.apply(x)
        return x


class ConcatenatedNet:
    def __init__(self, ws):
        self.layers = []
        for w in ws:
            self.layers = self.layers + [Layer(w)]

    def __call__(self, x):
        for layer in self.layers:
            x = layer.apply(x)
        return x


def layers_appended_in_init(x):
    net = AppendedNet([x, 2.0 * x, np.sin(x)])
    return np.sum(net(x)) + len(net.layers)


def layers_concatenated_in_init(x):
    net = ConcatenatedNet((np.cos(x), 0.5 * x))
    return np.sum(net(x) ** 2) + np.sum(net.layers[1].w * x)


class Terms:
    def __init__(self, ws):
        self.terms = []
        for w in ws:
            self.terms = self.terms + [np.sin(w)]
        self.count = len(self.terms)


def terms_grown_in_init(x):
    t = Terms([x, 2.0 * x, x * x])
    return np.sum(t.terms[2] * x) + np.sum(t.terms[0]) * t.count


def layers_of_the_call(ws, x):  # (ws: a tuple of the call; its length fixes the code)
    return np.sum(AppendedNet(ws)(x))


class Adder:
    def __init__(self, ws):
        self.terms = []
        for w in ws:
            self.add(np.sin(w))

    def add(self, v):
        self.terms = self.terms + [v]


def method_grows_in_init_loop(x):
    t = Adder([x, 2.0 * x])
    return np.sum(t.terms[1] * x)


class Checked:
    def __init__(self, ws):
        self.terms = []
        for w in ws:
            self.terms.append(np.sin(w))
        self.check()

    def check(self):
        pass


def init_loop_and_method(x):
    t = Checked([x, 2.0 * x])
    return np.sum(t.terms[1] * x)


class Stepper:
    def __init__(self, w):
        self.w = w
        self.steps = 0


def field_updated_in_place(x):
    p = Stepper(np.cos(x))  # (the array only p holds: NumPy's += changes nothing else)
    p.w *= x
    p.steps += 2
    p.w += 1.0
    p.steps *= 3
    return np.sum(p.w ** 2) * p.steps


def field_updated_in_a_loop(x):
    p = Stepper(np.sin(x))
    for k in range(3):
        p.w -= 0.1 * (p.w - x * k)
        p.steps += 1
    return np.sum(p.w ** 2) / p.steps


def argument_field_updated(x):
    p = Stepper(x)  # (p.w is the caller's array: += would change it)
    p.w += np.sin(x)
    return np.sum(p.w)


def read_field_updated(x):
    p = Stepper(np.cos(x))
    v = p.w  # (the same array: += changes v too)
    p.w += x
    return np.sum(v * x)


def kept_field_updated_in_a_loop(x):
    p = Stepper(np.cos(x))
    kept = []
    for _ in range(2):
        p.w += x
        kept.append(p.w)  # (the next iteration's += changes this item)
    return np.sum(kept[0] * x)


class Refusing:
    def __init__(self, w):
        self.w = w

    @property
    def v(self):
        return self.w

    @v.setter
    def v(self, value):
        self.w += value  # (the caller's array: NumPy would change it)

    def guarded(self, x):
        try:
            y = self.w * x
        except ValueError:
            y = x
        return y

    def stored(self, x):
        self.w[0] = x[0]
        return x


def setter_writes_in_place(x):
    r = Refusing(x)
    r.v = np.cos(x)
    return np.sum(r.w)


def method_with_try(x):
    return np.sum(Refusing(x).guarded(x))


def method_writes_an_item(x):
    r = Refusing(np.cos(x))
    return np.sum(r.stored(x))


class Dense:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    @property
    def norm(self):
        return np.sum(self.w ** 2) + np.sum(self.b ** 2)

    @staticmethod
    def act(z):
        return np.tanh(z)

    @classmethod
    def scaled(cls, w, k):
        return cls(w * k, w * 0.5)

    def pre(self, x):
        return self.w * x + self.b

    def forward(self, x):
        return self.act(self.pre(x))


class Residual(Dense):
    def __init__(self, w, b, k):
        super().__init__(w, b)
        self.k = k

    def forward(self, x):
        return x + self.k * super().forward(x)


def model_class(x):
    d = Dense.scaled(x, 3.0)
    r = Residual(np.cos(x), np.sin(x), 0.5)
    return np.sum(r.forward(d.forward(x))) + 0.1 * d.norm * r.norm


class Optimizer:
    def __init__(self, w):
        self.w = w
        self.t = 0

    def step(self, g, lr=0.1):
        self.w = self.w - lr * g
        self.t += 1
        return self  # (for chaining: opt = opt.step(g))


def chained_steps(x):
    opt = Optimizer(np.cos(x))
    for _ in range(3):
        opt = opt.step(np.sin(opt.w) - x)
    return np.sum(opt.w ** 2) * opt.t


def _terms_record(ws):
    record = {"terms": []}
    terms = record["terms"]  # (the dict's list, grown in the loop: concatenation)
    for w in ws:
        terms = terms + [np.sin(w)]
    record["terms"] = terms
    return record


def dict_list_grown(x):
    t = _terms_record([x, 2.0 * x, x * x])
    return np.sum(t["terms"][2] * x) + np.sum(t["terms"][0]) * len(t["terms"])


def layer_item_method(x):
    net = AppendedNet((x, np.cos(x)))  # (an item's method: "the array method `.apply()`")
    return np.sum(net.layers[1].apply(x)) + np.sum(net.layers[0].apply(2.0 * x))
