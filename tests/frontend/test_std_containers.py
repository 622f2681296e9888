"""Issue 23: standard-library containers and iteration helpers built inside the
transformed function (std_containers_fns.py): ``collections.deque`` (``maxlen``,
``appendleft``, ``popleft``, ``extend``, iteration, indexing: frontend/deques.py),
``collections.defaultdict`` (``float``, ``int``, a ``lambda`` factory: default_dicts.py),
``itertools.chain.from_iterable`` (iterations.py) and a method naming its function by
a string field, ``getattr(self, "act_" + self.kind)``, of objects the function built
(named_attrs.py).

The sweep (``-m slow``) runs each function through newcomer_harness.classify: grad at
calls 1, 3 and 10 with changing values, value_and_grad, jvp, vmap of grad, hessian,
jit of grad on both backends, special inputs (also after ten ordinary calls), the
caller writing into every result; float64 and float32, against JAX on the same
source.  The default tier checks grad against central differences at three calls and
that the forms s2s does not hold are refused at the user's line."""

from __future__ import annotations

import newcomer_harness as H  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
import std_containers_fns as F
from support import HAVE_JAX

import s2s

X4 = np.array([0.3, -0.7, 0.45, 1.2])
CASES = {
    "chain_groups": ((X4,), {"zeros": np.zeros(4)}),
    "getattr_kind_layers": ((X4,), {"zeros": np.zeros(4)}),
    # (`u.kind = "cube"` after `Unit("tanh", 2.0)`: the method is made for "cube", the
    # string the object holds when called, not the constructor's)
    "getattr_kind_rewritten": ((X4,), {"zeros": np.zeros(4)}),
    "deque_maxlen_window": ((X4,), {"zeros": np.zeros(4)}),
    "deque_both_ends": ((X4,), {"zeros": np.zeros(4)}),
    # (appends in a loop over an array, read after it: the sliding window, windows.py)
    "deque_last_two_rows": ((X4,), {"zeros": np.zeros(4)}),
    "defaultdict_keyed": ((X4,), {"zeros": np.zeros(4)}),
    "defaultdict_counts": ((X4,), {"zeros": np.zeros(4)}),
    "defaultdict_lambda": ((X4,), {"zeros": np.zeros(4)}),
}
PROBE = H.Probe(F, CASES, H.CONSTRUCT_STAGES, tol64=(1e-6, 1e-8), warm=("g", "jit"))

# a deque's list with `del buf[0]` under `if len(buf) > 3` (the window past maxlen): the
# second-order transforms of its emitted code refuse, as for the same list written by hand
# ("`buf_kept_5_bar` may hold an array this function did not make here"); every other
# stage runs and matches JAX
SECOND_ORDER_REFUSED = {"deque_maxlen_window", "deque_both_ends"}
SECOND_ORDER_STAGES = {"vmap_grad", "hessian", "vmap_special:zeros"}

# name: (line the refusal points at, words of its message)
REFUSED = {
    "refused_defaultdict_passed": ("return _total(acc)", "used as a value"),
    "refused_defaultdict_comprehension": ("return sum(acc[k] for k", "only on some paths"),
    "refused_deque_rotate": ("buf.rotate(1)", "`buf.rotate`"),
    "refused_deque_returned": ("return buf", "used as a value"),
}


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", list(CASES))
def test_every_transform_against_jax(name, dtype) -> None:
    label, verdicts = H.classify(PROBE, name, H.twin(F), dtype)
    if name not in SECOND_ORDER_REFUSED:
        assert label == "ok", verdicts
        return
    bad = {stage: v for stage, v in verdicts.items() if v[0] != "ok"}
    assert set(bad) == SECOND_ORDER_STAGES and all(
        v[0] == "refused" for v in bad.values()), verdicts


@pytest.mark.parametrize("name", ["deque_both_ends", "defaultdict_keyed", "chain_groups",
                                  "getattr_kind_layers"])
def test_grad_against_central_differences(name) -> None:
    f = getattr(F, name)
    g = s2s.grad(f)
    for c in (1, 3, 10):
        x = X4 * (1.0 + 0.07 * (c - 1) * (-1) ** c)
        got = g(x)
        np.testing.assert_allclose(got, H.fd_grad(f, (x,), 1e-6), rtol=1e-6, atol=1e-8,
                                   err_msg=f"{name} call {c}")
        got[...] = np.nan  # (the caller writes into the result: the next call's is new)


@pytest.mark.parametrize("name", list(REFUSED))
def test_refused_at_the_users_line(name) -> None:
    line, words = REFUSED[name]
    with pytest.raises(s2s.TransformError) as err:
        s2s.grad(getattr(F, name))(X4)
    text = str(err.value)
    assert "std_containers_fns.py" in text and line in text and words in text, text
    assert "<s2s" not in text
