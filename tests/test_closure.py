"""s2s reads its own emitted gradients: the constructs they use, written by users.

For higher derivatives s2s transforms the code it emitted (``jvp`` of ``grad``).  That
code calls the user's functions, writes into arrays it made and puts overwritten
elements back, adds into them with ``np.add.at``, walks loops backwards, and keeps
tapes of tuples that it pops.  Each is also legitimate user code: here each is
differentiated with ``s2s.grad`` and checked against JAX, an oracle written in
jax.numpy, or finite differences where JAX cannot run the code (its arrays are
immutable); what stays refused is refused with a clear error.  The last tests
normalize every corpus case's emitted gradient.
"""

from __future__ import annotations

import linecache
import re

import numpy as np
import pytest

import closure_fns as C
import closure_fns_other
import s2s
from corpus import CASES
from s2s.ir.nodes import For, If, Let, walk
from s2s.ir.kinds import LEAF, SEQ, Seq, Tree
from s2s.frontend.normalize import normalize
from s2s.transforms.analysis import facts
from support import HAVE_JAX, assert_trees_close, fd_grad, jax, jax_twin

J = jax_twin(C) if HAVE_JAX else None
TOL = {"rtol": 1e-6, "atol": 1e-8}  # against central finite differences


def rng(*shape, seed=0):
    return np.random.default_rng(seed + sum(shape)).normal(size=shape)


def check_fd(fn, args, argnums=0):
    """s2s.grad against central finite differences, argument by argument."""
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    got = s2s.grad(fn, argnums=argnums)(*args)
    got = got if isinstance(argnums, tuple) else (got,)
    for g, i in zip(got, nums):
        (expected,) = fd_grad(fn, args, i)
        np.testing.assert_allclose(g, expected, **TOL)


def prims(fn) -> list[str]:
    return [s.prim for s in walk(normalize(fn).body) if isinstance(s, Let)]


# ---- 1: free names shared with a function in another module --------------------------


def test_a_name_bound_in_two_modules_to_one_object_is_one_name() -> None:
    args = (rng(3), rng(3, seed=1))
    check_fd(C.calls_other_module, args, (0, 1))
    if HAVE_JAX:
        twin = jax_twin(closure_fns_other)  # layer, traced by JAX, from both modules
        expected = jax.grad(lambda x, w: jax.numpy.sum(twin.layer(x, w) * C.SCALE),
                            argnums=(0, 1))(*args)
        assert_trees_close(s2s.grad(C.calls_other_module, argnums=(0, 1))(*args), expected)


def test_a_name_bound_in_two_modules_to_two_objects_is_refused() -> None:
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(C.reads_a_different_offset)
    assert "`OFFSET` names different objects" in str(info.value)
    check_fd(C.reads_other_offset, (rng(3), rng(3, seed=1)))  # other.OFFSET is fine


def test_rebinding_one_of_the_two_is_noticed_at_the_next_call(monkeypatch) -> None:
    g = s2s.grad(C.calls_other_module)
    args = (rng(3), rng(3, seed=1))
    g(*args)
    monkeypatch.setattr(closure_fns_other, "SCALE", 2.5)  # no longer C.SCALE
    with pytest.raises(s2s.TransformError, match="`SCALE` names different objects"):
        g(*args)
    monkeypatch.setattr(closure_fns_other, "SCALE", C.SCALE)
    g(*args)


# ---- 2: writes into arrays ------------------------------------------------------------


@pytest.mark.parametrize("fn", [
    C.view_read_before_write, C.shape_read_after_write, C.save_and_restore,
    C.element_copied_before_write,
], ids=lambda f: f.__name__)
def test_writes_with_views_read_only_while_up_to_date(fn) -> None:
    check_fd(fn, (rng(3),))


def test_list_of_an_arrays_rows() -> None:
    x = rng(3, 2)
    check_fd(C.list_of_rows, (x,))
    if HAVE_JAX:
        assert_trees_close(s2s.grad(C.list_of_rows)(x), jax.grad(J.list_of_rows)(x))


# ---- 3: np.add.at ---------------------------------------------------------------------


def test_add_at_is_one_statement_a_new_version_of_the_buffer() -> None:
    ir = normalize(C.scatter_add)
    (stmt,) = [s for s in walk(ir.body) if isinstance(s, Let) and s.prim == "add_at"]
    assert ir.aliases[stmt.target] == "buf"  # spelled in place, as buf
    assert "np.add.at(buf, idx, sin_x)" in s2s.grad(C.scatter_add).source


def test_add_at_matches_a_jax_oracle() -> None:
    x = rng(4)
    got = s2s.grad(C.scatter_add)(x)
    check_fd(C.scatter_add, (x,))
    if HAVE_JAX:
        jnp = jax.numpy

        def oracle(x):
            buf = jnp.zeros(4).at[jnp.array([0, 2, 2, 3])].add(jnp.sin(x))
            return jnp.sum(buf**2 * C.W4)

        np.testing.assert_allclose(got, jax.grad(oracle)(x), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("fn, args", [
    (C.scatter_add_read_around, (rng(5),)),
    (C.scatter_add_slices, (rng(3, 4), rng(3))),
    (C.scatter_add_in_loop, (rng(5),)),
], ids=["read_around", "slices", "in_loop"])
def test_add_at_gradients_match_finite_differences(fn, args) -> None:
    check_fd(fn, args, tuple(range(len(args))) if len(args) > 1 else 0)


@pytest.mark.skipif(not HAVE_JAX, reason="needs JAX")
def test_add_at_rules_match_jax() -> None:
    from s2s.ir.nodes import Const, Index
    from s2s.primitives import PRIMITIVES

    prim = PRIMITIVES["add_at"]
    jnp = jax.numpy
    r = np.random.default_rng(7)
    for idx, vshape in ((np.array([0, 2, 2, 1]), (4, 3)), (np.array([1, 1]), (3,))):
        a, v = r.normal(size=(3, 3)), r.normal(size=vshape)
        ans = a.copy()
        np.add.at(ans, idx, v)
        f = lambda a, v: a.at[idx].add(v)  # noqa: E731
        g = r.normal(size=ans.shape)
        out, pullback = jax.vjp(f, a, v)
        np.testing.assert_allclose(ans, out)
        for got, expected in zip(prim.vjp(g, ans, a, v, idx), pullback(g)):
            np.testing.assert_allclose(got, expected, rtol=1e-12)
        ta, tv = r.normal(size=a.shape), r.normal(size=v.shape)
        tangent = prim.jvps["a"](ta, ans, a, v, idx) + prim.jvps["values"](tv, ans, a, v, idx)
        np.testing.assert_allclose(tangent, jax.jvp(f, (a, v), (ta, tv))[1], rtol=1e-12)
    assert Index((Const(0, "0"),), False)  # (the IR's index is what rules receive)


def test_add_at_into_an_argument_is_refused() -> None:
    def adds_into_argument(x):
        np.add.at(x, np.array([0, 0]), 1.0)
        return np.sum(x)

    with pytest.raises(s2s.UnsupportedSyntaxError, match="is an argument"):
        s2s.grad(adds_into_argument)


# ---- 4: loops walking a range backwards ---------------------------------------------


def test_reversed_range_is_a_loop_over_reversed_steps() -> None:
    ir = normalize(C.reversed_loop)
    loop = next(s for s in ir.body if isinstance(s, For))
    producer = {s.target: s for s in walk(ir.body) if isinstance(s, Let)}
    assert producer[loop.iter.name].prim == "reversed"
    assert producer[producer[loop.iter.name].args[0].name].prim == "range"
    source = s2s.grad(C.reversed_loop)(rng(3), 3) is not None and s2s.grad(C.reversed_loop).source
    # the forward walks the range backwards; the backward sweep walks it forwards
    assert "for i in reversed(range(n)):" in source
    assert "for i in range(n):" in source


@pytest.mark.parametrize("fn, args", [
    (C.reversed_loop, (rng(3), 4)),
    (C.reversed_loop, (rng(3), 0)),
    (C.reversed_start_stop_step, (rng(3),)),
    (C.reversed_over_rows, (rng(4, 2),)),
    (C.reversed_over_array, (rng(4, 2),)),
    (C.reversed_with_break, (rng(3) * 0.3,)),
    (C.reversed_with_break, (rng(3) * 0.3 - 2.0,)),
], ids=["n4", "n0", "start_stop_step", "rows", "array", "break_taken", "break_not_taken"])
def test_reversed_loops_match_jax(fn, args) -> None:
    got = s2s.grad(fn)(*args)
    check_fd(fn, args)
    if HAVE_JAX:
        assert_trees_close(got, jax.grad(getattr(J, fn.__name__))(*args), rtol=1e-10)


@pytest.mark.parametrize("source, word", [
    ("def f(x):\n    for i, v in reversed(enumerate(x)):\n        x = x * v\n"
     "    return np.sum(x)\n", "over range(...) or one array"),
    # (a reversed(...) read once is the sequence reversed since objects17; read again,
    # Python's spent iterator gives nothing)
    ("def f(x):\n    r = reversed(range(3))\n    return np.sum(x) * (sum(r) + sum(r))\n",
     "read again"),
])
def test_reversed_elsewhere_is_refused(source, word, tmp_path) -> None:
    path = tmp_path / "rev.py"
    path.write_text("import numpy as np\n\n" + source)
    namespace: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    with pytest.raises(s2s.UnsupportedSyntaxError, match=re.escape(word)):
        s2s.grad(namespace["f"])


# ---- 5: tapes of tuples, pushed in one loop and popped in another ---------------------


def kinds_of(fn, *arg_kinds):
    return facts(normalize(fn), arg_kinds, (0,)).kinds


def test_a_tape_of_pairs_has_a_known_element_structure() -> None:
    ir = normalize(C.push_then_pop)
    lets = [s for s in walk(ir.body) if isinstance(s, Let)]
    pops = [s for s in lets if s.prim == "pop"]
    assert len(pops) == 1 and ir.aliases[pops[0].target] == "tape"
    last = next(s for s in lets if s.prim == "getitem" and s.target.startswith("tape_last"))
    assert last.params["index"].items[0].value == -1  # v = tape[-1], then tape.pop()
    kinds = kinds_of(C.push_then_pop, LEAF, LEAF)
    pair = Tree(tuple, (0, 1), (LEAF, LEAF))
    assert kinds["tape"] == Seq(pair) and kinds[last.target] == pair
    assert kinds["a"] == LEAF and repr(kinds["tape"]) == "[(*, *)...]"
    assert SEQ == Seq() == Seq(LEAF) and repr(SEQ) == "[*...]"


def test_pop_forms_normalize() -> None:
    assert prims(C.pop_one_element_tuples).count("pop") == 1
    assert kinds_of(C.pop_one_element_tuples, LEAF, LEAF)["tape"] == Seq(
        Tree(tuple, (0,), (LEAF,)))
    assert "pop" in prims(C.pop_discarded)  # a statement of its own, value unused


@pytest.mark.parametrize("fn, args", [
    (C.push_then_pop, (rng(3), 2)), (C.pop_one_element_tuples, (rng(3), 2)),
    (C.pop_discarded, (rng(3),)),
], ids=["pairs", "one_element", "discarded"])
@pytest.mark.slow
def test_reverse_mode_over_a_popped_list(fn, args) -> None:
    """``v = ys.pop()`` undone: the list's cotangent gets v's cotangent back, for the
    append that put v there to pop.  Checked against JAX (Python lists of traced
    arrays), at first order and by reverse over reverse."""
    tol = {"rtol": 1e-6, "atol": 1e-8}
    if HAVE_JAX:
        twin = getattr(J, fn.__name__)
        grad, hess = jax.grad(twin)(*args), jax.hessian(twin)(*args)
    else:
        tol = {"rtol": 1e-5, "atol": 1e-6}  # central differences of the function, then of its (checked) gradient
        (grad,) = fd_grad(fn, args, 0)
        g = s2s.grad(fn)
        hess = np.stack([fd_grad(lambda *a: g(*a)[i], args, 0)[0]
                         for i in range(args[0].size)])
    assert_trees_close(s2s.grad(fn)(*args), grad, **tol)
    assert_trees_close(s2s.jacrev(s2s.grad(fn))(*args), hess, **tol)
    assert_trees_close(s2s.hessian(fn)(*args), hess, **tol)


# ---- names an `if` binds on one path, read in a later `if` on that path -----------------


@pytest.mark.parametrize("fn", [C.two_ifs, C.two_ifs_negated, C.nested_paths],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("shift", [-3.0, 0.0, 3.0])
def test_names_bound_on_one_path_read_on_that_path(fn, shift) -> None:
    x = rng(3) * 0.3 + shift / 3
    check_fd(fn, (x,))
    v = rng(3, seed=5)
    _, tangent = s2s.jvp(fn, (x,), (v,))
    h = 1e-6
    np.testing.assert_allclose(tangent, (fn(x + h * v) - fn(x - h * v)) / (2 * h), **TOL)


@pytest.mark.parametrize("n", [0, 1, 4])
def test_names_bound_on_one_path_inside_a_loop(n) -> None:
    check_fd(C.paths_in_loop, (rng(3), n))


def test_a_container_bound_on_one_path_is_refused_by_the_transforms() -> None:
    x = rng(3)
    for transform in (lambda f: s2s.grad(f)(x), lambda f: s2s.jvp(f, (x,), (x,))):
        with pytest.raises(s2s.TransformError, match="holds a container and is None"):
            transform(C.pair_on_one_path)


def test_a_name_rebound_on_another_path_in_between_is_refused(tmp_path) -> None:
    path = tmp_path / "paths.py"
    path.write_text(
        "import numpy as np\n\n\ndef f(x):\n    s = np.sum(x)\n    if s > 0.0:\n"
        "        y = x * 2.0\n    if s > 5.0:\n        y = x * 3.0\n    if s > 0.0:\n"
        "        return np.sum(y)\n    return s\n"
    )
    namespace: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    with pytest.raises(s2s.TransformError, match="`y` may be used before it is assigned"):
        s2s.grad(namespace["f"])


# ---- gradients of recurrences written in place, read again ------------------------------


def emitted(fn, *args, argnums=0):
    t = s2s.grad(fn, argnums=argnums)
    t(*args)
    return t._last[1]


def test_a_tape_item_shares_only_its_own_memory() -> None:
    """The tape holds a view of the written array (read for its shape only) beside
    ints and fresh arrays: popping them after the backward puts rows back is fine."""
    x = rng(3, 2)
    check_fd(C.recurrence_added_input, (x,))
    assert normalize(emitted(C.recurrence_added_input, x)).body


@pytest.mark.slow
def test_a_view_read_after_the_backward_puts_elements_back_is_a_copy() -> None:
    """The backward reads h[t]'s values after putting row t + 1 back: right at run
    time (other rows), but s2s does not track which elements a view covers; so the
    emitted gradient binds the read as a copy, and transforming it again works."""
    x, w = rng(3, 2), rng(2, seed=3)
    check_fd(C.recurrence_scaled_state, (x, w), (0, 1))
    assert normalize(emitted(C.recurrence_scaled_state, x, w, argnums=1)).body
    g = s2s.grad(C.recurrence_scaled_state, argnums=1)
    fd = np.stack([(g(x, w + e) - g(x, w - e)) / 2e-6 for e in np.eye(2) * 1e-6], -1)
    np.testing.assert_allclose(s2s.jacfwd(g, argnums=1)(x, w), fd, rtol=1e-5, atol=1e-6)


# ---- s2s reads what it emitted ------------------------------------------------------------

# concatenate's VJP rule (s2s/primitives/shape.py) is inlined with a list comprehension
UNREADABLE = {"list_literal_append": "the concatenate VJP rule uses a list comprehension"}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_emitted_gradient_normalizes(case) -> None:
    if case.name in UNREADABLE:
        pytest.xfail(UNREADABLE[case.name])
    t = s2s.grad(case.fn, argnums=case.argnums, has_aux=case.has_aux)
    t(*case.args(), **case.kwargs)
    text, emitted = t._last
    assert linecache.getlines(emitted.__code__.co_filename)  # getsource can read it
    ir = normalize(emitted)
    assert ir.body and ir.name == emitted.__name__
    for s in walk(ir.body):
        if isinstance(s, If):
            assert all(j for j in s.joins)


@pytest.mark.slow
def test_second_order_through_rows_read_from_an_array_written_in_a_loop() -> None:
    """``y[i - 1]`` of a 2-D ``y`` is a view the gradient's tape keeps while ``y`` is
    written: the emitted gradient binds it as a copy, so forward mode over it (HVPs,
    the Hessian) reads the values of its own iteration."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def fill_rows_jax(x):
        y = jnp.ones((3, 4))
        for i in range(3):
            y = y.at[i].set(jnp.sin(x[i]) * y[i - 1])
        return jnp.sum(y * y)

    x, t = rng(3, 4), rng(3, 4, seed=2)
    from support import compiled

    got = s2s.jvp(s2s.grad(C.fill_rows), (x,), (t,))
    expected = compiled(lambda a, v: jax.jvp(jax.grad(fill_rows_jax), (a,), (v,)))(x, t)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(s2s.hessian(C.fill_rows)(x),
                               compiled(jax.hessian(fill_rows_jax))(x), rtol=1e-10, atol=1e-12)
