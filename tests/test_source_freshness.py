"""Every function s2s reads the text of is checked against the code that runs.

s2s differentiates the text it reads from a file (or a notebook cell's linecache
entry); the function it is given runs its code object.  When the two differ (the
file was edited after import, the cell was replaced) s2s refuses, located at the text
it found, for every kind of function: plain and nested defs, closures, lambdas that
capture variables (of a function, of a loop), callees, wrappers and a primitive's
rules.  A closure cell that changes value is not a changed source: the next call reads
the new value, as Python does.

Expected values: the derivative of the code that runs, by hand or from JAX.
"""

from __future__ import annotations

import functools
import importlib.util
import itertools
import linecache
import os
import re
import sys
import textwrap

import numpy as np
import pytest

import s2s
from s2s.frontend.source import parse_function
from support import HAVE_JAX, jax

_COUNTER = itertools.count()


def load(tmp_path, text: str):
    """Write ``text`` as a fresh module and import it (a name of its own each time)."""
    name = f"s2s_fresh_{os.getpid()}_{next(_COUNTER)}"
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(text))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module, path


def edit(path, old: str, new: str) -> None:
    """Change the file on disk (the module keeps running what it imported)."""
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    st = os.stat(path)  # a later mtime even on a coarse clock
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10_000_000))
    linecache.checkcache(str(path))


_WHERE = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), column (?P<col>\d+)')


def assert_refused_at(call, path, line_text: str) -> s2s.SourceNotFoundError:
    """``call()`` raises the located staleness error, quoting ``line_text``."""
    with pytest.raises(s2s.SourceNotFoundError, match="is not the code that runs") as info:
        call()
    message = str(info.value)
    where = _WHERE.search(message)
    assert where, message
    assert os.path.samefile(where["file"], path), message
    lines = path.read_text().splitlines()
    line = int(where["line"])
    assert lines[line - 1].strip() == line_text.strip(), message
    assert line_text.strip() in message and "^" in message, message
    col = int(where["col"])
    assert lines[line - 1][col - 1:].startswith(("lambda", "def", "@")), message
    assert "Instead:" in message
    return info.value


CAPTURES = """
import numpy as np


def make(a):
    return lambda x: a * x ** 2


def make_def(a):
    def inner(x):
        return a * x ** 2
    return inner


def make_nested(a):
    def middle(b):
        return lambda x: a * b * x ** 2
    return middle(3.0)
"""


@pytest.mark.parametrize("maker, line", [
    ("make", "return lambda x: a * x ** 2"),
    ("make_def", "def inner(x):"),
    ("make_nested", "return lambda x: a * b * x ** 2"),
])
def test_a_closure_or_capturing_lambda_whose_file_changed_is_refused(tmp_path, maker, line):
    mod, path = load(tmp_path, CAPTURES)
    fn = getattr(mod, maker)(2.0)
    edit(path, "x ** 2", "x ** 3")
    assert_refused_at(lambda: s2s.grad(fn), path, line.replace("x ** 2", "x ** 3"))
    assert_refused_at(lambda: s2s.jvp(fn, (1.5,), (1.0,)), path,
                      line.replace("x ** 2", "x ** 3"))
    assert_refused_at(lambda: s2s.vmap(fn)(np.ones(2)), path,
                      line.replace("x ** 2", "x ** 3"))


@pytest.mark.parametrize("maker, scale", [("make", 2.0), ("make_def", 2.0),
                                          ("make_nested", 6.0)])
def test_an_unedited_capturing_function_is_transformed(tmp_path, maker, scale):
    mod, _ = load(tmp_path, CAPTURES)
    fn = getattr(mod, maker)(2.0)
    assert s2s.grad(fn)(1.5) == pytest.approx(scale * 2 * 1.5)
    assert s2s.jvp(fn, (1.5,), (1.0,))[1] == pytest.approx(scale * 2 * 1.5)
    np.testing.assert_allclose(s2s.vmap(s2s.grad(fn))(np.array([1.0, 2.0])),
                               scale * 2 * np.array([1.0, 2.0]))


def test_a_capturing_lambda_edited_elsewhere_in_its_file_is_still_accepted(tmp_path):
    """Only the text of the function matters: another line's edit changes nothing."""
    mod, path = load(tmp_path, CAPTURES)
    fn = mod.make(2.0)
    edit(path, "return inner", "return inner  # edited")
    assert s2s.grad(fn)(1.5) == pytest.approx(6.0)


LOOPS = """
import numpy as np


def late_binding():
    out = []
    for k in range(3):
        out.append(lambda x: k * x ** 2)
    return out


def bound_early():
    out = []
    for k in range(3):
        out.append(lambda x, k=k: k * x ** 2)
    return out


in_comprehension = [lambda x: k * np.sin(x) for k in range(1, 4)]
"""


def test_lambdas_made_in_a_loop_read_the_loop_variable_as_python_does(tmp_path):
    mod, path = load(tmp_path, LOOPS)
    late, early = mod.late_binding(), mod.bound_early()
    x = 1.5
    for f in late:  # one cell, holding the loop's last value, k = 2
        assert f(x) == 2 * x ** 2
        assert s2s.grad(f)(x) == pytest.approx(2 * 2 * x)
    for k, f in enumerate(early):  # each its own default
        assert s2s.grad(f)(x) == pytest.approx(k * 2 * x)
    for k, f in zip(range(1, 4), mod.in_comprehension):  # the comprehension's cell: 3
        assert s2s.grad(f)(x) == pytest.approx(3 * np.cos(x))
    edit(path, "k * x ** 2)\n    return out\n\n\ndef bound_early",
         "k * x ** 3)\n    return out\n\n\ndef bound_early")
    # A lambda whose family was transformed before the edit (the same code object)
    # reuses that transform, made from the text that matched the code that runs
    # (api/family_grads.py): its gradient is the running code's. Reading its text
    # again (`.source`, a transform of its own) is refused.
    assert s2s.grad(late[1])(x) == pytest.approx(2 * 2 * x)
    assert_refused_at(lambda: s2s.grad(late[1]).source, path,
                      "out.append(lambda x: k * x ** 3)")
    assert s2s.grad(early[2])(x) == pytest.approx(2 * 2 * x)  # its text did not change


CELLS = """
import numpy as np


def make():
    a = 2.0

    def f(x):
        return a * x ** 2

    g = lambda x: a * np.sin(x)

    def set_a(value):
        nonlocal a
        a = value

    return f, g, set_a
"""


@pytest.mark.parametrize("which", [0, 1], ids=["def", "lambda"])
def test_a_closure_cell_that_changes_between_calls_is_read_again(tmp_path, which):
    """A free variable's new value is used by the next call (the 1st, 3rd and 10th call
    around the change); that is a read of the variable, not a stale source."""
    mod, _ = load(tmp_path, CELLS)
    fns = mod.make()
    f, set_a = fns[which], fns[2]
    x = np.array([0.5, -1.0, 2.0])
    expect = (lambda a: a * 2 * x) if which == 0 else (lambda a: a * np.cos(x))
    for transform in ("grad", "jvp", "vmap"):
        set_a(2.0)
        g = s2s.grad(f) if transform == "grad" else None
        for call in range(1, 13):
            if call == 4:
                set_a(-3.5)
            if call == 8:
                set_a(0.25)
            a = 2.0 if call < 4 else -3.5 if call < 8 else 0.25
            if transform == "grad":
                got = [g(xi) for xi in x]
            elif transform == "jvp":
                got = [s2s.jvp(f, (xi,), (1.0,))[1] for xi in x]
            else:
                got = s2s.vmap(s2s.grad(f))(x)
            np.testing.assert_allclose(got, expect(a), rtol=1e-12, err_msg=f"call {call}")


def test_an_edit_between_calls_of_an_existing_transform(tmp_path):
    """The transform keeps differentiating the code that runs (its source was checked
    when it was made); a new transform of the edited file is refused."""
    mod, path = load(tmp_path, CAPTURES)
    fns = [mod.make(2.0), mod.make_def(2.0)]
    grads = [s2s.grad(f) for f in fns]
    x = np.array([0.5, 1.5])
    for call in range(1, 11):
        if call == 2:
            edit(path, "x ** 2", "x ** 3")
        for f, g in zip(fns, grads):
            got = np.array([g(xi) for xi in x])
            np.testing.assert_allclose(got, 2.0 * 2 * x, err_msg=f"call {call}")
            np.testing.assert_allclose(f(x), 2.0 * x ** 2)  # the code that runs
    for f in fns:
        with pytest.raises(s2s.SourceNotFoundError, match="is not the code that runs"):
            s2s.grad(f)


CALLEES = """
import functools

import numpy as np


def make(a):
    return lambda t: a * t ** 2


square = make(2.0)


def helper(t):
    return np.sin(t) * 2.0


def caller(x):
    return np.sum(square(x) + helper(x))


def forward(f):
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        return f(*args, **kwargs)
    return wrapper


def scaled(f):
    @functools.wraps(f)
    def wrapper(x):
        return 3.0 * f(x)
    return wrapper


@forward
def forwarded(x):
    return np.sum(x ** 2)


@scaled
def scaled_sum(x):
    return np.sum(x ** 2)
"""


def test_a_callee_whose_file_changed_is_refused_where_it_is(tmp_path):
    mod, path = load(tmp_path, CALLEES)
    x = np.array([0.5, 1.5])
    np.testing.assert_allclose(s2s.grad(mod.caller)(x), 2.0 * 2 * x + 2.0 * np.cos(x))
    mod2, path2 = load(tmp_path, CALLEES)
    edit(path2, "a * t ** 2", "a * t ** 3")
    assert_refused_at(lambda: s2s.grad(mod2.caller), path2, "return lambda t: a * t ** 3")
    mod3, path3 = load(tmp_path, CALLEES)
    edit(path3, "np.sin(t) * 2.0", "np.sin(t) * 5.0")
    assert_refused_at(lambda: s2s.grad(mod3.caller)(x), path3, "def helper(t):")


@pytest.mark.parametrize("name, old, new, line", [
    ("forwarded", "np.sum(x ** 2)\n\n\n@scaled", "np.sum(x ** 4)\n\n\n@scaled",
     "def forwarded(x):"),
    ("scaled_sum", "return 3.0 * f(x)", "return 4.0 * f(x)", "def wrapper(x):"),
    ("scaled_sum", "np.sum(x ** 2)\n", "np.sum(x ** 4)\n", "def scaled_sum(x):"),
])
def test_wraps_wrappers_and_what_they_wrap_are_checked(tmp_path, name, old, new, line):
    mod, path = load(tmp_path, CALLEES)
    x = np.array([0.5, 1.5])
    scale = 3.0 if name == "scaled_sum" else 1.0
    np.testing.assert_allclose(s2s.grad(getattr(mod, name))(x), scale * 2 * x)
    mod2, path2 = load(tmp_path, CALLEES)
    edit(path2, old, new)
    fn = getattr(mod2, name)
    assert_refused_at(lambda: s2s.grad(fn)(x), path2, line)


def _cell(name: str, text: str) -> dict:
    """Run ``text`` as a notebook does: compiled under a cell's name, its lines in
    linecache under that name (IPython's way of giving cells a source)."""
    text = textwrap.dedent(text)
    linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    namespace: dict = {"__name__": "__main__"}
    exec(compile(text, name, "exec"), namespace)
    return namespace


def _replace_cell(name: str, text: str) -> None:
    text = textwrap.dedent(text)
    linecache.cache[name] = (len(text), None, text.splitlines(True), name)


NOTEBOOK = """
import numpy as np


def f(x):
    return np.sum(x ** 2)


def make(a):
    return lambda x: a * np.sum(x ** 2)


g = make(2.0)
h = lambda x: np.sum(np.sin(x))
"""


@pytest.mark.parametrize("which, line", [
    ("f", "def f(x):"), ("g", "return lambda x: a * np.sum(x ** 3)"),
    ("h", "h = lambda x: np.sum(np.sin(x) ** 3)"),
])
def test_a_notebook_cell_whose_text_was_replaced_is_refused(which, line):
    name = f"<ipython-input-{next(_COUNTER)}-{os.getpid():x}>"
    try:
        ns = _cell(name, NOTEBOOK)
        x = np.array([0.5, 1.5])
        want = {"f": 2 * x, "g": 2.0 * 2 * x, "h": np.cos(x)}[which]
        np.testing.assert_allclose(s2s.grad(ns[which])(x), want)
        fresh = _cell(name, NOTEBOOK)  # the cell run again: new functions, same text
        _replace_cell(name, NOTEBOOK.replace("x ** 2", "x ** 3").replace(
            "np.sin(x))", "np.sin(x) ** 3)"))
        with pytest.raises(s2s.SourceNotFoundError, match="its cell was edited") as info:
            s2s.grad(fresh[which])
        message = str(info.value)
        assert f'File "{name}"' in message and line in message, message
        assert "run the cell again" in message
    finally:
        linecache.cache.pop(name, None)


def test_methods_are_compiled_in_their_class_for_the_check(tmp_path):
    """``super()`` makes ``__class__`` a free variable, and ``self.__w`` is mangled
    with the class's name: the check compiles the text in a class body of that name,
    so that it compiles as the code that runs did (nothing was refused wrongly)."""
    mod, _ = load(tmp_path, """
        import numpy as np


        class Base:
            def scale(self):
                return 2.0


        class Model(Base):
            __w = 3.0

            def loss(self, x):
                s = super().scale()
                return s * np.sum(x ** 2)

            def private(self, x):
                return self.__w * np.sum(x ** 2)

            def outer(self, a):
                def inner(x):
                    return a * np.sum(x ** 2) * super(Model, self).scale()
                return inner
    """)
    for fn in (mod.Model.loss, mod.Model().outer(2.0), mod.Model.private,
               mod.Model().private):
        parse_function(fn)


RULES = """
import numpy as np

import s2s


def softplus(x):
    return np.log1p(np.exp(x))


def softplus_vjp(g, ans, x):
    return g * (1.0 / (1.0 + np.exp(-x)))


def loss(x):
    return np.sum(softplus(x))
"""


def test_a_primitive_rule_whose_file_changed_is_refused(tmp_path):
    """A user primitive's rule is inlined from its text: that text must be the rule."""
    mod, path = load(tmp_path, RULES.replace("softplus", f"softplus_{next(_COUNTER)}"))
    name = next(n for n in vars(mod) if n.startswith("softplus_") and not n.endswith("vjp"))
    impl, rule = getattr(mod, name), getattr(mod, name + "_vjp")
    s2s.primitive(impl).defvjp(rule)  # (a name of its own: registered for good)
    edit(path, "g * (1.0 / (1.0 + np.exp(-x)))", "g * 2.0")
    assert_refused_at(lambda: s2s.grad(mod.loss)(np.array([0.5, -1.0])), path,
                      f"def {name}_vjp(g, ans, x):")


@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
def test_captured_lambdas_match_jax(tmp_path):
    mod, _ = load(tmp_path, CAPTURES)
    jmod, _ = load(tmp_path, CAPTURES.replace("import numpy as np", "import jax.numpy as np"))
    x = 1.25
    for maker in ("make", "make_def", "make_nested"):
        got = s2s.grad(getattr(mod, maker)(0.7))(x)
        assert got == pytest.approx(float(jax.grad(getattr(jmod, maker)(0.7))(x)), rel=1e-12)
