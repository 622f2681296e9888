"""s2s.selfcheck: each check passes on s2s's own transforms and fails on wrong answers.

A check that cannot fail is no evidence, so every kind of check is also run on an
answer known to be wrong (a perturbed output, or a primitive registered with a wrong
rule) and must fail there.
"""

import json

import numpy as np
import pytest

import s2s
from s2s.tools.cli_ledger import custom_rule_user, wrong_rule
from s2s.tools.selfcheck import (
    JvpOf,
    SelfCheckError,
    VjpOf,
    rebuild,
    root_of,
    selfcheck,
    stack_of,
)


def loss(w, x, y):
    pred = np.tanh(x @ w)
    return np.mean((pred - y) ** 2)


def vec(x):
    return np.sin(x) * np.sum(x ** 2)


def cubic(x):
    return np.sum(x ** 3 * np.cos(x))


def pair(a, b):
    return np.sum(np.exp(a) * b), a * 2.0


def writes(x):
    y = np.zeros(3)
    y[0] = np.sum(x ** 2)
    return np.sum(y)


def rng():
    return np.random.default_rng(7)


def data():
    r = rng()
    return r.normal(size=3), r.normal(size=(5, 3)), r.normal(size=5)


def statuses(report):
    return {(c["name"], c["level"]): c["status"] for c in report["checks"]}


def perturbed(out):
    """The same structure with every float leaf moved by 0.1."""
    if isinstance(out, tuple):
        return tuple(perturbed(o) for o in out)
    if isinstance(out, list):
        return [perturbed(o) for o in out]
    if isinstance(out, dict):
        return {k: perturbed(v) for k, v in out.items()}
    return np.asarray(out) + 0.1


CASES = {
    "grad": lambda: (s2s.grad(loss), data()),
    "value_and_grad": lambda: (s2s.value_and_grad(loss, argnums=(0, 2)), data()),
    "jvp": lambda: (JvpOf(vec), ((data()[0],), (np.array([1.0, -0.5, 2.0]),))),
    "vjp": lambda: (VjpOf(vec), ((data()[0],), np.array([0.3, 1.0, -1.0]))),
    "vmap": lambda: (s2s.vmap(vec), (rng().normal(size=(4, 3)),)),
    "vmap_grad": lambda: (s2s.vmap(s2s.grad(loss), in_axes=(None, 0, 0)),
                          (data()[0], rng().normal(size=(3, 5, 3)),
                           rng().normal(size=(3, 5)))),
    "jacfwd": lambda: (s2s.jacfwd(vec), (data()[0],)),
    "jacrev": lambda: (s2s.jacrev(vec), (data()[0],)),
    "hessian": lambda: (s2s.hessian(cubic), (data()[0],)),
    "grad_grad": lambda: (s2s.grad(s2s.grad(lambda_free_scalar)), (0.4,)),
    "jit": lambda: (s2s.jit(s2s.grad(loss), backend="numpy"), data()),
}


def lambda_free_scalar(x):
    return np.sin(x) * x ** 2


@pytest.mark.parametrize("name", sorted(CASES))
def test_passes_on_s2s_transforms_and_fails_on_a_wrong_output(name):
    g, args = CASES[name]()
    report = selfcheck(g, *args)
    json.dumps(report, allow_nan=False)  # JSON-serialisable, no NaN
    assert report["passed"], report["checks"]
    top = len(report["stack"]) - 1
    own = [c for c in report["checks"] if c["level"] == top and c["name"] not in
           ("jvp_vjp_identity",)]
    assert own, "the outermost level has no check"
    for c in report["checks"]:
        if c["status"] == "passed":
            assert c["error"] <= c["tolerance"]
    # the same checks against a wrong answer: the output-comparing ones must fail
    bad = selfcheck(g, *args, out=perturbed(g(*args)))
    assert not bad["passed"]
    for c in bad["checks"]:
        if c["level"] == top and c["name"] in ("fd_probe", "loop_oracle", "value",
                                               "jit_matches_unjitted", "jax_oracle"):
            assert c["status"] in ("failed", "unavailable"), c


def test_each_level_is_checked_on_the_arguments_it_receives():
    g, args = CASES["hessian"]()
    report = selfcheck(g, *args)
    s = statuses(report)
    assert s[("fd_probe", 1)] == "passed"  # jacfwd against FD of grad(cubic)
    assert s[("fd_probe", 0)] == "passed"  # grad(cubic) against FD of cubic
    g, args = CASES["vmap_grad"]()
    s = statuses(selfcheck(g, *args))
    assert s[("loop_oracle", 1)] == "passed" and s[("fd_probe", 0)] == "passed"


def test_a_wrong_vjp_rule_fails_fd_probe_and_identity():
    x = np.array([0.3, -1.2, 0.8])
    with wrong_rule():
        report = selfcheck(s2s.grad(custom_rule_user), x)
    s = statuses(report)
    assert not report["passed"]
    assert s[("fd_probe", 0)] == "failed"
    assert s[("jvp_vjp_identity", 0)] == "failed"  # its JVP rule is right
    # the wrong gradient is 2 sin(x); finite differences see 2 cos(x)
    fd = next(c for c in report["checks"] if c["name"] == "fd_probe")
    assert fd["error"] > 100 * fd["tolerance"]


def test_jax_oracle_compares_with_jax_when_importable():
    pytest.importorskip("jax")
    g, args = CASES["value_and_grad"]()
    s = statuses(selfcheck(g, *args))
    assert s[("jax_oracle", 0)] == "passed"
    x = np.array([0.3, -1.2, 0.8])
    with wrong_rule():
        s = statuses(selfcheck(s2s.grad(custom_rule_user), x))
    assert s[("jax_oracle", 0)] == "failed"


def test_a_twin_jax_cannot_trace_is_unavailable_not_failed():
    pytest.importorskip("jax")
    report = selfcheck(s2s.grad(writes), np.array([1.0, 2.0]))
    oracle = next(c for c in report["checks"] if c["name"] == "jax_oracle")
    assert oracle["status"] == "unavailable" and "JAX could not run" in oracle["reason"]
    assert report["passed"]  # fd_probe and the identity still passed


def test_oracle_off_and_float32_inputs():
    w, x, y = (a.astype(np.float32) for a in data())
    report = selfcheck(s2s.grad(loss), w, x, y, oracle=False)
    assert report["passed"]
    assert all(c["name"] != "jax_oracle" for c in report["checks"])
    fd = next(c for c in report["checks"] if c["name"] == "fd_probe")
    assert fd["rtol"] > 1e-4  # float32 tolerances


def test_seed_changes_the_direction_but_not_the_verdict():
    g, args = CASES["grad"]()
    a, b = selfcheck(g, *args, seed=1), selfcheck(g, *args, seed=2)
    ea = next(c["error"] for c in a["checks"] if c["name"] == "fd_probe")
    eb = next(c["error"] for c in b["checks"] if c["name"] == "fd_probe")
    assert a["passed"] and b["passed"] and ea != eb


def test_stack_of_and_rebuild_round_trip():
    g = s2s.vmap(s2s.grad(pair, argnums=(0, 1), has_aux=True), in_axes=(0, None))
    assert stack_of(g) == [
        {"transform": "grad", "argnums": [0, 1], "has_aux": True},
        {"transform": "vmap", "in_axes": [0, None], "out_axes": 0, "axis_size": None},
    ]
    assert root_of(g) is pair
    a, b = rng().normal(size=(4, 3)), rng().normal(size=3)
    h = rebuild(pair, stack_of(g))
    for u, v in zip(np.broadcast_arrays(*[np.asarray(t) for t in _leaves(g(a, b))]),
                    np.broadcast_arrays(*[np.asarray(t) for t in _leaves(h(a, b))])):
        np.testing.assert_array_equal(u, v)
    assert stack_of(s2s.hessian(cubic)) == [
        {"transform": "grad", "argnums": 0, "has_aux": False},
        {"transform": "jacfwd", "argnums": 0, "has_aux": False},
    ]


def _leaves(t):
    if isinstance(t, (tuple, list)):
        return [x for v in t for x in _leaves(v)]
    return [t]


def test_jvp_and_vjp_wrappers_match_the_functions():
    x, t = data()[0], np.array([1.0, 2.0, 3.0])
    out, tan = JvpOf(vec)((x,), (t,))
    out2, tan2 = s2s.jvp(vec, (x,), (t,))
    np.testing.assert_array_equal(tan, tan2)
    u = np.array([1.0, 0.0, -1.0])
    _, cts = VjpOf(vec)((x,), u)
    np.testing.assert_array_equal(cts[0], s2s.vjp(vec, x)[1](u)[0])
    assert "def vec_jvp" in JvpOf(vec).source


def test_non_transforms_are_refused():
    with pytest.raises(SelfCheckError):
        selfcheck(loss, *data())
    _, vjp_fn = s2s.vjp(vec, data()[0])
    with pytest.raises(SelfCheckError, match="VjpOf"):
        selfcheck(vjp_fn, np.ones(3))


def _corpus_cases(step):
    from corpus import CASES as CORPUS

    return [c for c in CORPUS[::step] if not c.kwargs]


def _check_corpus_case(case):
    g = s2s.grad(case.fn, argnums=case.argnums, has_aux=case.has_aux)
    report = selfcheck(g, *case.args())
    assert report["passed"], [c for c in report["checks"] if c["status"] != "passed"]
    for c in report["checks"]:  # no false alarm: s2s's gradients are right there
        assert c["status"] in ("passed", "unavailable"), (case.name, c)
        if c["name"] != "jax_oracle":
            assert c["status"] == "passed", (case.name, c)


@pytest.mark.parametrize("case", _corpus_cases(10), ids=lambda c: c.name)
def test_no_false_alarm_on_a_sample_of_the_corpus(case):
    _check_corpus_case(case)


@pytest.mark.slow
@pytest.mark.parametrize("case", _corpus_cases(1), ids=lambda c: c.name)
def test_no_false_alarm_on_the_corpus(case):
    _check_corpus_case(case)
