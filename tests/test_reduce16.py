"""Issues 23 and 27 (reduce16).

* The alias checks of a call (api/arguments.py ``_shares``, ``_own_arrays``) over many
  arrays answer through an index of memory extents (api/overlaps.py), linear in their
  number: its answers are ``np.may_share_memory``'s, pair by pair, over views of every
  kind (reversed, strided, broadcast, size 0, 0-d, overlapping windows, one array
  twice), and a gradient with respect to a list of 40 arrays that are views of one
  buffer, or that is one array in many places, comes back with each leaf its own.
* Module containers (a tuple of dicts, a dict, a list; a callee's tuple-of-dicts
  default) keep the signature fast path (api/contents.py), and a value changed in
  place before the 2nd, 3rd and 10th calls gives that call the right gradient.
* Checks whose test is constants once loops are unrolled (ir/settled_checks.py): not
  emitted where they never fail, refused where they always fail.
* A list rebuilt by a comprehension over a list argument, read by a loop counter or
  an int argument (ir/unroll.py, ir/unroll_reads.py).
Oracles: ``np.may_share_memory`` pair by pair, closed forms (Python loops).
"""

from __future__ import annotations

import numpy as np
import pytest
import reduce16_fns as fns

import s2s
from s2s.api import arguments, overlaps


def _views(rng: np.random.Generator, count: int) -> list[np.ndarray]:
    """Arrays of every kind of layout over two buffers and some arrays of their own."""
    a = np.arange(60.0)
    b = np.arange(24.0).reshape(4, 6)
    made = [a, b, np.ones(3), np.empty(0), np.float64(2.0) * np.ones(())]
    kinds = [
        lambda: a[rng.integers(0, 30):rng.integers(30, 61)],
        lambda: a[::-1][rng.integers(0, 20)::rng.integers(1, 4)],
        lambda: a[rng.integers(0, 50):][:rng.integers(0, 3)],  # (size 0 or 1 or 2)
        lambda: b[:, rng.integers(0, 6)],
        lambda: b[rng.integers(0, 4)],
        lambda: b.T[::-2],
        lambda: np.broadcast_to(a[rng.integers(0, 60)], (3, 2)),
        lambda: np.lib.stride_tricks.sliding_window_view(a[:10], 3)[rng.integers(0, 8)],
        lambda: np.ones(rng.integers(0, 3)),
        lambda: made[rng.integers(0, len(made))],  # (one array twice)
        lambda: a[rng.integers(0, 60)],  # (a 0-d view)
        lambda: a.view(np.int32)[1::4],
    ]
    out = list(made)
    while len(out) < count:
        v = kinds[rng.integers(0, len(kinds))]()
        out.append(np.asarray(v) if np.ndim(v) == 0 and not isinstance(v, np.ndarray) else v)
    return out


@pytest.mark.parametrize("seed", range(3))
def test_extents_answer_as_may_share_memory_pair_by_pair(seed):
    rng = np.random.default_rng(seed)
    arrays = _views(rng, 60)
    for k in range(0, 60, 7):
        theirs, mine = arrays[:k], arrays[k:]
        index = overlaps.Extents(theirs)
        for a in mine:
            assert index.overlaps(a) == any(np.may_share_memory(a, b) for b in theirs)
    for k in (2, 17, 30, 60):
        some = [arrays[i] for i in rng.permutation(len(arrays))[:k]]
        want = any(np.may_share_memory(a, b) for i, a in enumerate(some)
                   for b in some[i + 1:])
        assert overlaps.any_overlap(some) == want
        seen, kept = overlaps.Disjoint(), []
        for a in some:
            assert seen.add_unless_overlapping(a) == any(np.may_share_memory(a, s)
                                                         for s in kept)
            if not any(np.may_share_memory(a, s) for s in kept):
                kept.append(a)


def test_shares_indexed_answers_as_pairwise():
    """``_shares`` past its pairwise budget (the index) says what it said before it."""
    rng = np.random.default_rng(5)
    arrays = _views(rng, 80)
    foreign = arguments._Arrays(arrays[:40])
    queries = arrays[40:] + [np.ones(3), arrays[0], arrays[1]]
    pairwise = [arguments._shares(g, list(foreign)) for g in queries]
    indexed = [arguments._shares(g, foreign) for g in queries * 2]
    assert foreign.indexed
    assert indexed == pairwise * 2


def test_gradient_lists_of_many_arrays_come_back_their_own():
    """``_fix_one`` and ``_own_arrays`` (a call's last step) over 40 leaves, past the
    pairwise budgets: a leaf that is an argument, a view of one, or a leaf twice is
    copied, the others are returned as they are."""
    buf = np.linspace(-1.0, 1.0, 90)
    ys = [buf[i:i + 5] for i in range(0, 80, 2)]
    fresh = [np.cos(y) for y in ys]
    grads = list(fresh)
    grads[3], grads[7], grads[11] = ys[3], buf[14:19], grads[10]  # (an argument, a view)
    got = arguments._own_arrays(arguments._fix_one(grads, ys, (ys,), False))
    assert type(got) is list and len(got) == len(ys)
    for k, (g, y) in enumerate(zip(got, ys)):
        np.testing.assert_array_equal(g, grads[k])
        assert not any(np.may_share_memory(g, a) for a in ys)
        assert not any(np.may_share_memory(g, h) for h in got[k + 1:])
        assert (g is grads[k]) == (k not in (3, 7, 11))


def test_alias_checks_of_many_leaves_are_linear(monkeypatch):
    """A gradient of 400 leaves with respect to 400 views: the checks that its leaves
    share no memory with the arguments or each other make fewer than 10 pairwise
    tests a leaf (main before issue 27: 80,000 for the leaves among themselves)."""
    buf = np.linspace(-1.0, 1.0, 1200)
    ys = [buf[3 * i:3 * i + 3] for i in range(400)]
    grads = [np.cos(y) for y in ys]
    grads[5] = ys[5]
    tests = []
    real = np.may_share_memory
    monkeypatch.setattr(np, "may_share_memory", lambda a, b, *r: tests.append(1) or real(
        a, b, *r))
    got = arguments._own_arrays(arguments._fix_one(grads, ys, (ys,), False))
    assert len(tests) < 10 * len(ys)
    assert got[5] is not ys[5] and not np.may_share_memory(got[5], buf)
    assert all(g is h for k, (g, h) in enumerate(zip(got, grads)) if k != 5)


def _list_loss(ys):
    t = 0.0
    for y in ys:
        t = t + np.sum(np.sin(y) * y)
    return t


def _expected(ys):
    return [np.sin(y) + y * np.cos(y) for y in ys]


@pytest.mark.slow
def test_list_of_views_gets_gradients_of_its_own():  # (its transform: 5 s)
    """40 arguments that are views of one buffer (and one array twice): each gradient
    leaf is a fresh array, none shares memory with an argument or another leaf,
    writing into one changes no later result; 1st, 3rd and 10th call."""
    buf = np.linspace(-1.0, 1.0, 90)
    ys = [buf[i:i + 5] for i in range(0, 80, 2)] + [buf[::-1][:4]]
    ys.append(ys[3])
    grad = s2s.grad(_list_loss)
    want = _expected(ys)
    for call in range(10):
        got = grad(ys)
        if call in (0, 2, 9):
            assert type(got) is list and len(got) == len(ys)
            for g, w in zip(got, want):
                np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
                assert g.flags.writeable
                assert not any(np.may_share_memory(g, y) for y in ys)
            assert not overlaps.any_overlap(got)
            for i, g in enumerate(got):
                assert not any(np.may_share_memory(g, h) for h in got[i + 1:])
            got[0][...] = 99.0
    assert not any(np.may_share_memory(buf, g) for g in got)


# ---- issue 27: module containers keep the signature fast path ----------------------

SPECS = ({"w": 2.0, "b": 1.0}, {"w": 3.0})
SPEC = {"w": 2.0, "v": np.array([1.0, 2.0])}
ROWS = [[0.5, 1.5], [2.5]]


def _by_specs(x):
    return np.sum(np.sin(x) ** 2) * SPECS[0]["w"]


def _by_spec(x):
    return np.sum(np.sin(x) ** 2 * SPEC["v"][0]) * SPEC["w"]


def _by_rows(x):
    return np.sum(np.sin(x) ** 2) * ROWS[1][0]


def _weighted(x, specs=({"w": 2.0},)):
    return np.sum(np.sin(x) ** 2) * specs[0]["w"]


def _by_default(x):
    return _weighted(x)


def _weight(name):
    return {"specs": lambda: SPECS[0]["w"], "spec": lambda: SPEC["w"] * SPEC["v"][0],
            "rows": lambda: ROWS[1][0],
            "default": lambda: _weighted.__defaults__[0][0]["w"]}[name]()


def _change(name, call):
    """Change the container in place (a value replaced, an array written into)."""
    w = float(call + 2)
    if name == "specs":
        SPECS[0]["w"] = w
    elif name == "spec":
        SPEC["w"] = w
        SPEC["v"][0] = w / 4  # (an array of it written into)
    elif name == "rows":
        ROWS[1][0] = w
    else:
        _weighted.__defaults__[0][0]["w"] = w


@pytest.mark.slow
@pytest.mark.parametrize("name,fn", [("specs", _by_specs), ("spec", _by_spec),
                                     ("rows", _by_rows), ("default", _by_default)])
def test_module_containers_changed_in_place_give_the_right_gradient(name, fn):
    """Changed in place before the 2nd, 3rd and 10th calls: each call's gradient is
    the closed form's with the value then held (2 sin x cos x w), float64 and float32;
    the calls between take the fast path (the code specialized to the signature)."""
    saved = (SPECS[0]["w"], SPEC["w"], SPEC["v"].copy(), ROWS[1][0],
             _weighted.__defaults__[0][0]["w"])
    try:
        for dtype in (np.float64, np.float32):
            grad = s2s.grad(fn)
            x = np.linspace(-0.7, 0.9, 8).astype(dtype)
            for call in range(12):
                if call in (1, 2, 9):
                    _change(name, call)
                got = grad(x)
                want = 2 * np.sin(x.astype(float)) * np.cos(x.astype(float)) * _weight(name)
                assert got.dtype == dtype
                tol = 1e-12 if dtype == np.float64 else 2e-6
                np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
            grad.wait_specialized()
            entries = [e for e in grad._by_signature.values() if e.text is not None]
            assert entries and entries[-1].valid()  # (the fast path's entry holds)
    finally:
        SPECS[0]["w"], SPEC["w"], ROWS[1][0] = saved[0], saved[1], saved[3]
        SPEC["v"][...] = saved[2]
        _weighted.__defaults__[0][0]["w"] = saved[4]


SPEC_X: dict = {}


def _by_spec_x(x):
    return np.sum(np.sin(x) ** 2) * SPEC_X["w"]


def test_module_tuple_of_dicts_changed_in_place_keeps_the_fast_path():
    """The default tier's case of the sweep above: ``SPECS[0]["w"]`` written before
    the 2nd and 3rd calls, float64."""
    saved = SPECS[0]["w"]
    try:
        grad = s2s.grad(_by_specs)
        x = np.linspace(-0.7, 0.9, 8)
        for call in range(4):
            if call in (1, 2):
                SPECS[0]["w"] = float(call + 2)
            want = 2 * np.sin(x) * np.cos(x) * SPECS[0]["w"]
            np.testing.assert_allclose(grad(x), want, rtol=1e-12, atol=1e-12)
        grad.wait_specialized()
        entries = [e for e in grad._by_signature.values() if e.text is not None]
        assert entries and entries[-1].valid()
    finally:
        SPECS[0]["w"] = saved


@pytest.mark.slow
def test_module_dict_key_added_or_value_made_an_array_leaves_the_fast_path():
    """A key added, a number made an array: the call goes the generic way and the
    gradient follows (the structure the code was made for changed)."""
    spec = SPEC_X
    spec.clear()
    spec["w"] = 2.0
    grad = s2s.grad(_by_spec_x)
    x = np.linspace(-0.7, 0.9, 8)
    for _ in range(3):
        grad(x)
    spec["extra"] = 1.0
    np.testing.assert_allclose(grad(x), 2 * np.sin(x) * np.cos(x) * 2.0, rtol=1e-12)
    spec["w"] = np.array(0.5)  # (a 0-d array where a float was)
    for _ in range(3):
        np.testing.assert_allclose(grad(x), np.sin(x) * np.cos(x), rtol=1e-12)


# ---- issue 27: checks decided by constants ------------------------------------------


@pytest.mark.slow
def test_constant_false_checks_are_not_emitted():
    """``if 3 == 0: raise`` (an unrolled loop's counter) and ``assert 3 > 0`` are
    dropped; the gradient is 6 cos(w) (1st, 3rd, 10th call, float64 and float32)."""
    grad = s2s.grad(fns.checked_in_loop)
    for call in range(10):
        w = np.linspace(-1.0, 1.0, 5) * (call + 1)
        for dtype in (np.float64, np.float32):
            got = grad(w.astype(dtype))
            tol = 1e-12 if dtype == np.float64 else 2e-6
            np.testing.assert_allclose(got, 6 * np.cos(w), rtol=tol, atol=tol)
    text = s2s.source(grad)
    assert "raise" not in text and "assert" not in text and "== 0" not in text, text


def test_constant_true_check_is_refused_where_written():
    with pytest.raises(s2s.TransformError) as err:
        s2s.grad(fns.always_raises)(np.ones(3))
    message = str(err.value)
    assert "fails at every call" in message and "`0 == 0`" in message
    assert "reduce16_fns.py" in message and "if n == 0:" in message


@pytest.mark.slow
def test_constant_true_check_under_a_branch_raises_when_it_runs():
    grad = s2s.grad(fns.raises_in_a_branch)
    w = np.linspace(-1.0, 1.0, 4)
    np.testing.assert_allclose(grad(w), np.cos(w), rtol=1e-12)
    with pytest.raises(TypeError, match="too large"):
        grad(w + 100.0)


# ---- issue 27: a list rebuilt by a comprehension, read by a key ---------------------


def test_rebuilt_list_read_by_a_loop_counter():
    _rebuilt_by_counter(np.float64)


@pytest.mark.slow
def test_rebuilt_list_read_by_a_loop_counter_float32():
    _rebuilt_by_counter(np.float32)


def _rebuilt_by_counter(dtype):
    """d/dy of sum((2y)^2) is 8y, per item (a Python loop's): 1st, 3rd, 10th call,
    values changing."""
    grad = s2s.grad(fns.rebuilt_by_counter)
    for call in range(10):
        ys = [np.arange(3.0, dtype=dtype) * (call + 1), np.ones(2, dtype) - call]
        got = grad(ys)
        assert type(got) is list and len(got) == 2
        tol = 1e-12 if dtype == np.float64 else 2e-5
        for g, y in zip(got, ys):
            assert g.dtype == dtype
            np.testing.assert_allclose(g, 8 * y.astype(float), rtol=tol, atol=tol)


@pytest.mark.slow
def test_rebuilt_list_read_by_an_int_argument():
    """``ys[i]`` for a Python int ``i``: 2 cos(2 ys[i]) at item i, zeros elsewhere."""
    grad = s2s.grad(fns.rebuilt_by_argument)
    ys = [np.linspace(0.0, 1.0, 3), np.linspace(-1.0, 0.5, 3), np.full(3, 0.25)]
    for call in range(10):
        i = (0, 2, 1)[call % 3]
        got = grad(ys, i)
        for k, (g, y) in enumerate(zip(got, ys)):
            want = 2 * np.cos(2 * y) if k == i else np.zeros(3)
            np.testing.assert_allclose(g, want, rtol=1e-12, atol=1e-12)
