"""Differential fuzzing: random programs (tests/fuzz_programs.py) through s2s against
JAX on the same source and against central finite differences.

Each program ``f(x, y)`` is checked under

* ``grad`` (both arguments) against ``jax.grad``, and <grad, v> against a central
  difference along a random direction;
* ``jvp`` against ``jax.jvp``, and the tangent against the same central difference;
* ``vmap`` over 3 examples against a Python loop of ``f``;
* ``vmap(grad)`` (one composition) against a Python loop of ``jax.grad`` (JAX's own
  vmap cannot take a Python ``if`` on a batched value).

Finite differences are compared only where two step sizes agree (a step across a
kink or a branch switch is not evidence).  The default run is a fixed seed and
``S2S_FUZZ_EXAMPLES`` examples (25: each program costs about a second here, most of
it s2s generating and black-formatting four transforms); ``-m slow`` runs 2000 more,
gathering every failure; ``S2S_FUZZ_LONG=10000`` with ``-m slow`` is the campaign
(``S2S_FUZZ_SALT`` draws another set of programs).  Each bug found is a regression
test below (a strict xfail while s2s has it).
"""

from __future__ import annotations

import os
import re
import warnings
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings

import s2s
from fuzz_programs import load, programs
from s2s.errors import TransformError

jax = pytest.importorskip("jax")

SEED = int(os.environ.get("S2S_FUZZ_SEED", "20261130"))
EXAMPLES = int(os.environ.get("S2S_FUZZ_EXAMPLES", "25"))
TOL = {"rtol": 1e-7, "atol": 1e-9}
OUTCOMES: Counter = Counter()  # what each check did, for the long run's report
CLASSES: Counter = Counter()  # failures by classify()
STAGE = ["value"]  # the check running now, to classify a failure by where it happened


def close(got, expected, what: str, tol=TOL) -> None:
    got, expected = np.asarray(got, float), np.asarray(expected, float)
    scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
    np.testing.assert_allclose(got, expected, rtol=tol["rtol"], atol=tol["atol"] * scale,
                               err_msg=what)


def central(f, x, y, dx, dy, eps):
    return (f(x + eps * dx, y + eps * dy) - f(x - eps * dx, y - eps * dy)) / (2 * eps)


def fd_directional(f, x, y, dx, dy):
    """The directional derivative by central differences, or None where two step
    sizes disagree (a kink or a branch switch within reach)."""
    a = central(f, x, y, dx, dy, 1e-5)
    b = central(f, x, y, dx, dy, 2e-6)
    if not np.isfinite(a) or abs(a - b) > 1e-5 * max(1.0, abs(a)):
        return None
    return b


def check(source: str, r: np.random.Generator) -> None:
    f, fj = load(source)
    x, y = r.normal(size=4), r.normal(size=4)
    dx, dy = r.normal(size=4), r.normal(size=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        value = f(x, y)
    if not np.isfinite(value) or abs(value) > 1e8:
        OUTCOMES["rejected: value out of range"] += 1
        return
    fd = fd_directional(f, x, y, dx, dy)

    # grad
    STAGE[0] = "grad"
    g = s2s.grad(f, argnums=(0, 1))(x, y)
    gj = jax.grad(fj, argnums=(0, 1))(x, y)
    close(g[0], gj[0], "grad x vs jax")
    close(g[1], gj[1], "grad y vs jax")
    if fd is not None:
        close(np.dot(g[0], dx) + np.dot(g[1], dy), fd, "<grad, v> vs FD",
              {"rtol": 1e-5, "atol": 1e-6})
        OUTCOMES["fd checked"] += 1

    # jvp
    STAGE[0] = "jvp"
    out, tangent = s2s.jvp(f, (x, y), (dx, dy))
    outj, tangentj = jax.jvp(fj, (x, y), (dx, dy))
    close(out, outj, "jvp primal vs jax")
    close(tangent, tangentj, "jvp tangent vs jax")
    if fd is not None:
        close(tangent, fd, "jvp tangent vs FD", {"rtol": 1e-5, "atol": 1e-6})

    # vmap over x (y shared), against a loop
    xs = np.stack([x, r.normal(size=4), r.normal(size=4)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        loop = np.array([f(xi, y) for xi in xs])
    if np.all(np.isfinite(loop)) and np.max(np.abs(loop)) < 1e8:
        STAGE[0] = "vmap"
        try:
            batched = s2s.vmap(f, in_axes=(0, None))(xs, y)
        except TransformError as exc:  # a documented refusal, counted
            OUTCOMES[f"vmap unsupported: {exc.what[:60]}"] += 1
            return
        close(batched, loop, "vmap vs loop")
        # one composition: per-example gradients
        STAGE[0] = "vmap(grad)"
        try:
            got = s2s.vmap(s2s.grad(f), in_axes=(0, None))(xs, y)
        except TransformError as exc:
            OUTCOMES[f"vmap(grad) unsupported: {exc.what[:80]}"] += 1
        else:
            expected = np.stack([jax.grad(fj)(xi, y) for xi in xs])
            close(got, expected, "vmap(grad) vs loop of jax.grad")
            OUTCOMES["vmap(grad) checked"] += 1
    OUTCOMES["checked"] += 1


def classify(exc: BaseException) -> str:
    """A failure's class: the check that failed and the message's first line with
    numbers and generated names blurred, so one bug's failures count together."""
    text = str(exc).strip()
    if isinstance(exc, AssertionError):
        # assert_allclose: "\nNot equal to tolerance ...\nWHAT\n..."; keep WHAT
        lines = [ln for ln in text.splitlines() if ln.strip()]
        what = next((ln for ln in lines if " vs " in ln or ln.startswith("one ")), "")
        kind = "mismatch" if "Not equal" in text else "assert"
        head = f"{kind}: {what.strip()}"
    else:
        head = f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"
    head = re.sub(r"\b(v|acc|_?t|_b)\d+\w*", "<name>", head)
    head = re.sub(r"-?\d+(\.\d+)?(e-?\d+)?", "N", head)
    return f"[{STAGE[0]}] {head[:110]}"


def fuzz(n: int, steps=(2, 6), salt: int = 0, collect: bool = False) -> list:
    """Run n programs; stop at the first failure, or (``collect``) gather them all."""
    failures: list = []

    @seed(SEED + salt)
    @settings(max_examples=n, deadline=None, database=None,
              phases=[Phase.explicit, Phase.generate],  # no shrinking: report as found
              suppress_health_check=list(HealthCheck))
    @given(programs(steps=steps))
    def run(source):
        r = np.random.default_rng(len(source) * 7919 + source.count("("))
        OUTCOMES["programs"] += 1
        if collect and OUTCOMES["programs"] % 100 == 0:
            print("fuzz progress:", dict(OUTCOMES), "classes:", dict(CLASSES), flush=True)
        if not collect:
            check(source, r)
            return
        STAGE[0] = "value"
        try:
            check(source, r)
        except Exception as exc:  # noqa: BLE001 - every failure is reported
            OUTCOMES["FAILED"] += 1
            kind = classify(exc)
            CLASSES[kind] += 1
            failures.append((source, f"{type(exc).__name__}: {str(exc)[:600]}", kind))
            print(f"FUZZ FAILURE #{OUTCOMES['programs']} {kind}\n{source}-> "
                  + failures[-1][1], flush=True)

    run()
    return failures


def summary() -> str:
    """The long run's closing table: programs, outcomes, failures by class."""
    rows = [f"fuzz summary: {OUTCOMES['programs']} programs, {OUTCOMES['FAILED']} failed"]
    rows += [f"  {n:6d}  {what}" for what, n in sorted(OUTCOMES.items())]
    rows.append("failures by class:")
    rows += [f"  {n:6d}  {kind}" for kind, n in CLASSES.most_common()]
    return "\n".join(rows)


def test_fuzz_fixed_seed() -> None:
    fuzz(EXAMPLES)


@pytest.mark.slow
def test_fuzz_long() -> None:
    """``-m slow``: 2000 programs (``S2S_FUZZ_LONG``: 10000 for the campaign), every
    failure gathered and printed before the test fails."""
    n = int(os.environ.get("S2S_FUZZ_LONG", "2000"))
    salt = int(os.environ.get("S2S_FUZZ_SALT", "1"))  # a second campaign: another salt
    failures = fuzz(n, steps=(2, 8), salt=salt, collect=True)
    print("fuzz outcomes:", dict(OUTCOMES))
    for source, message, kind in failures:
        print("=" * 70, f"\n{kind}\n{source}-> {message}")
    print(summary())
    assert not failures, f"{len(failures)} of {n} programs failed (printed above)"


# ---- every failure the fuzzer found, kept ------------------------------------------

PROBE_BRANCH = """def f(x):
    if np.sum(x) > 0.0:
        v = np.cumsum(x)
    else:
        v = x * 1.0
    return np.sum(v)
"""


@pytest.mark.parametrize("order", ["false_branch_first"])
def test_probe_branch_regression(order) -> None:
    f, fj = load(PROBE_BRANCH)
    xs = np.array([[-1.0, -0.5, -1.0, -1.0], [1.0, 0.5, 1.0, 1.0], [2.0, 0.1, 0.3, 0.4]])
    expected = np.stack([jax.grad(fj)(x) for x in xs])
    close(s2s.vmap(s2s.grad(f))(xs), expected, "vmap(grad)")


def test_probe_branch_true_branch_first() -> None:
    """The same program is right when the probe takes the branch (keeps the xfail
    above honest: it fails for the reason it names)."""
    f, fj = load(PROBE_BRANCH)
    xs = np.array([[1.0, 0.5, 1.0, 1.0], [-1.0, -0.5, -1.0, -1.0], [2.0, 0.1, 0.3, 0.4]])
    expected = np.stack([jax.grad(fj)(x) for x in xs])
    close(s2s.vmap(s2s.grad(f))(xs), expected, "vmap(grad)")


NONE_JOIN = """def f(x, y):
    v0 = M @ y
    if np.sum(x) > -0.5:
        v1 = np.logaddexp(y, v0)
    else:
        v1 = np.sum(x) * x
    return np.sum(v1 ** 2)
"""


@pytest.mark.xfail(strict=True, raises=TypeError, reason=(
    "vmap(grad) with an if: the emitted gradient binds a name one branch computes to "
    "None on the other path (replayed ifs); vmap runs both branches under np.where, so "
    "the batched backward multiplies by None (TypeError)"))
def test_none_join_regression() -> None:
    f, fj = load(NONE_JOIN)
    xs = np.array([[-1.0, -1.0, -1.0, -1.0], [1.0, 1.0, 1.0, 1.0]])
    y = np.ones(4)
    expected = np.stack([jax.grad(fj)(x, y) for x in xs])
    close(s2s.vmap(s2s.grad(f), in_axes=(0, None))(xs, y), expected, "vmap(grad)")


UNKNOWN_RANK_IN_SELECT = """def f(x, y):
    v0 = np.sum(y) * y
    if np.sum(x) > -0.5:
        v1 = np.sum(y) * y
    else:
        v1 = np.sum(x) * x
    return np.sum(v1 ** 2)
"""


def test_unknown_rank_in_select_is_a_transform_error() -> None:
    f, _ = load(UNKNOWN_RANK_IN_SELECT)
    xs = np.array([[-1.0, -1.0, -1.0, -1.0], [1.0, 1.0, 1.0, 1.0]])
    with pytest.raises(TransformError, match="rank of"):
        s2s.vmap(s2s.grad(f), in_axes=(0, None))(xs, np.ones(4))


def test_outer_same_arg_regression() -> None:
    f, fj = load("def f(x, y):\n    return np.sum(np.outer(x, x).sum(axis=0) * y)\n")
    x, y = np.array([0.3, -0.7, 1.1, 0.45]), np.array([0.5, 0.25, -1.0, 2.0])
    close(s2s.grad(f)(x, y), jax.grad(fj)(x, y), "grad of outer(x, x)")
