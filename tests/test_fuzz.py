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
``S2S_FUZZ_EXAMPLES`` examples (5: each program costs about a second here, most of
it s2s generating and black-formatting four transforms); ``-m slow`` runs 2000 more,
gathering every failure; ``S2S_FUZZ_LONG=10000`` with ``-m slow`` is the campaign
(``S2S_FUZZ_SALT`` draws another set of programs).  The long run prints each failure
with its program and class (the failed check and its blurred message), the first
program of each kind of refusal, and a table by class at the end; ``python
tests/test_fuzz.py replay LOG...`` reruns a log's failed programs on the current code.
Each bug found is a regression test below (a strict xfail while s2s has it).
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
EXAMPLES = int(os.environ.get("S2S_FUZZ_EXAMPLES", "3"))  # (5 until the suite passed five minutes on CI)
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
            refused(f"vmap unsupported: {exc.what[:60]}", source)
            return
        close(batched, loop, "vmap vs loop")
        # one composition: per-example gradients
        STAGE[0] = "vmap(grad)"
        try:
            got = s2s.vmap(s2s.grad(f), in_axes=(0, None))(xs, y)
        except TransformError as exc:
            refused(f"vmap(grad) unsupported: {exc.what[:80]}", source)
        else:
            expected = np.stack([jax.grad(fj)(xi, y) for xi in xs])
            close(got, expected, "vmap(grad) vs loop of jax.grad")
            OUTCOMES["vmap(grad) checked"] += 1
    OUTCOMES["checked"] += 1


def refused(what: str, source: str) -> None:
    """Count a refusal; the first of each kind prints its program (to reproduce)."""
    OUTCOMES[what] += 1
    if OUTCOMES[what] == 1 and OUTCOMES["programs"] > 0:
        print(f"FUZZ REFUSAL {what}\n{source}", flush=True)


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


XS_BOTH_PATHS = np.array([[-1.0, -1.0, -1.0, -1.0], [1.0, 1.0, 1.0, 1.0]])


@pytest.mark.parametrize("probe_path", ["false", "true"])
def test_none_join_regression(probe_path) -> None:
    """The emitted gradient binds `np.sum(x)`'s temporary on one path of the `if` only
    (None on the other) and reads it only when replaying that path backward; vmap used
    to select it with np.where(test, None, value) and multiply by None (TypeError)."""
    f, fj = load(NONE_JOIN)
    xs = XS_BOTH_PATHS if probe_path == "false" else XS_BOTH_PATHS[::-1]
    y = np.ones(4)
    expected = np.stack([jax.grad(fj)(x, y) for x in xs])
    close(s2s.vmap(s2s.grad(f), in_axes=(0, None))(xs, y), expected, "vmap(grad)")


ONE_PATH_NAME = """def f(x, y):
    c = np.sum(x) > 0.0
    if c:
        t = np.sin(x) * y
    s = np.sum(x)
    if c:
        s = s + np.sum(t)
    return s
"""


@pytest.mark.parametrize("probe_path", ["false", "true"])
def test_name_bound_on_one_path_read_under_the_same_test(probe_path) -> None:
    """A user's name bound on one path only and read only under the same test: each
    example that reads it has it; vmap and vmap(grad) equal loops (the gradient also
    reads it in np.zeros_like on the other path, which takes None)."""
    f, fj = load(ONE_PATH_NAME)
    xs = XS_BOTH_PATHS if probe_path == "false" else XS_BOTH_PATHS[::-1]
    y = np.array([0.5, -1.0, 2.0, 0.25])
    close(s2s.vmap(f, in_axes=(0, None))(xs, y), [f(x, y) for x in xs], "vmap")
    expected = np.stack([jax.grad(fj)(x, y) for x in xs])
    close(s2s.vmap(s2s.grad(f), in_axes=(0, None))(xs, y), expected, "vmap(grad)")


NEGATED_TEST = """def f(x, y):
    if np.mean(x) > 0.5:
        v0 = np.reciprocal(2.0 + np.sin(y))
    else:
        v0 = np.exp2(np.tanh(x))
    v1 = M @ x
    if np.mean(v1) > 0.5:
        v3 = np.flip(x)
    else:
        v3 = v0[IDX]
    return np.sum(v3 ** 2)
"""


@pytest.mark.parametrize("probe_path", ["false", "true"])
def test_one_path_name_read_under_the_negated_test(probe_path) -> None:
    """Campaign salt 13: the gradient replays the else path as `if not test:` and
    reads `np.tanh(x)` (bound on that path only) there; it was refused as read where
    the other path's examples reach."""
    f, fj = load(NEGATED_TEST)
    xs = np.array([[-1.0, 0.5, -0.3, 0.2], [1.0, 2.0, 0.5, 1.5], [0.3, -2.0, 1.0, 0.1]])
    xs = xs if probe_path == "false" else xs[::-1]
    y = np.array([0.5, -1.0, 2.0, 0.25])
    expected = np.stack([jax.grad(fj)(x, y) for x in xs])
    close(s2s.vmap(s2s.grad(f), in_axes=(0, None))(xs, y), expected, "vmap(grad)")

NONE_READ_ELSEWHERE = """def f(x, y):
    if np.sum(x) > 0.0:
        t = np.sin(x)
    else:
        t = None
    return np.sum(x) + np.sum(t)
"""


def test_none_on_one_path_read_by_every_example_is_a_transform_error() -> None:
    """Where an example of the other path would read the None (the loop raises for
    it), the batch cannot have one kind of result: a TransformError at the `if`."""
    f, _ = load(NONE_READ_ELSEWHERE)
    xs, y = XS_BOTH_PATHS[::-1], np.ones(4)  # the first example has t
    with pytest.raises(TypeError):
        f(xs[1], y)
    for g in (f, s2s.grad(f)):
        with pytest.raises(TransformError, match="bound on one path of this `if` only"):
            s2s.vmap(g, in_axes=(0, None))(xs, y)


UNKNOWN_RANK_IN_SELECT = """def f(x, y):
    v0 = np.sum(y) * y
    if np.sum(x) > -0.5:
        v1 = np.sum(y) * y
    else:
        v1 = np.sum(x) * x
    return np.sum(v1 ** 2)
"""


@pytest.mark.parametrize("probe_path", ["false", "true"])
def test_rank_in_select_of_a_path_the_probe_skipped(probe_path) -> None:
    """A value only the path the first example skips computes (`v1` under vmap's
    renaming): its rank is inferred from its primitive (this used to be refused as
    unknown), and the gradients equal JAX's."""
    f, fj = load(UNKNOWN_RANK_IN_SELECT)
    xs = XS_BOTH_PATHS if probe_path == "false" else XS_BOTH_PATHS[::-1]
    y = np.array([0.5, -1.0, 2.0, 0.25])
    expected = np.stack([jax.grad(fj)(x, y) for x in xs])
    close(s2s.vmap(s2s.grad(f), in_axes=(0, None))(xs, y), expected, "vmap(grad)")


def test_outer_same_arg_regression() -> None:
    f, fj = load("def f(x, y):\n    return np.sum(np.outer(x, x).sum(axis=0) * y)\n")
    x, y = np.array([0.3, -0.7, 1.1, 0.45]), np.array([0.5, 0.25, -1.0, 2.0])
    close(s2s.grad(f)(x, y), jax.grad(fj)(x, y), "grad of outer(x, x)")



# forms computed only on the path the first example skips: their ranks are inferred
# from the primitive and its operands (each was a 'rank unknown' refusal in campaigns)
SKIPPED_PATH_FORMS = [
    "x[IDX]", "M @ x", "x @ M", "np.dot(x, y) * x", "np.outer(x, y).sum(axis=0)",
    "np.mean(np.reshape(x, (2, 2)), axis=0)[IDX2]", "np.sort(x)", "np.take(x, IDX)",
    "np.reshape(x, (2, 2)).T.ravel()", "np.roll(x, 1)", "np.linalg.solve(A, x)",
    "np.trace(np.outer(x, y)) * x", "np.flip(x)", "np.tile(x[:2], 2)",
    "np.prod(1.0 + 0.1 * np.tanh(x)) * x", "sp.gammaln(x ** 2 + 1.0) * y",
]
DEFAULT_FORMS = {"x[IDX]", "M @ x", "np.mean(np.reshape(x, (2, 2)), axis=0)[IDX2]",
                 "np.linalg.solve(A, x)", "np.prod(1.0 + 0.1 * np.tanh(x)) * x"}


@pytest.mark.parametrize("form", [
    pytest.param(f, marks=[] if f in DEFAULT_FORMS else [pytest.mark.slow])
    for f in SKIPPED_PATH_FORMS])
def test_rank_of_a_form_on_the_skipped_path(form) -> None:
    f, fj = load(f"""def f(x, y):
    if np.sum(x) > 0.0:
        v = {form}
    else:
        v = np.sin(x)
    return np.sum(v ** 2)
""")
    xs = np.array([[-1.0, -0.5, -1.0, -1.0], [1.0, 0.5, 1.0, 1.0],
                   [0.3, 0.2, -0.1, 0.4]])
    y = np.array([0.5, -1.0, 2.0, 0.25])
    close(s2s.vmap(f, in_axes=(0, None))(xs, y), [f(x, y) for x in xs], "vmap")
    try:
        got = s2s.vmap(s2s.grad(f), in_axes=(0, None))(xs, y)
    except TransformError as exc:  # the gradient's own refusals (a write in a branch)
        assert "rank of" not in str(exc), exc
        return
    close(got, np.stack([jax.grad(fj)(x, y) for x in xs]), "vmap(grad)")

ADD_AT_ON_UNBATCHED_PATH = """def f(x, y):
    if np.sum(y) > 0.0:
        v0 = x[::-1]
    else:
        v0 = x[IDX]
    return np.sum(v0 * y)
"""


def test_add_at_path_of_an_unbatched_if_regression() -> None:
    """Campaign salt 11 (4 programs): the gradient writes x_bar on one path and a
    fresh x_bar_3 (np.add.at) on the other; the normalizer renamed the second path's
    version to the join, spelled x_bar, which that path never bound
    (UnboundLocalError in vmap's probe).  That path now binds the join: x_bar = x_bar_3."""
    f, fj = load(ADD_AT_ON_UNBATCHED_PATH)
    xs, y = XS_BOTH_PATHS * [[1.0, 2.0, 3.0, 4.0]], -np.array([0.5, 1.0, 2.0, 0.25])
    expected = np.stack([jax.grad(fj)(x, y) for x in xs])
    close(s2s.vmap(s2s.grad(f), in_axes=(0, None))(xs, y), expected, "vmap(grad)")

SPLIT_COUNT = """def f(x, y):
    v0 = np.concatenate([x[1:], x[:1]])
    return np.sum(v0 * y)
"""


def test_concatenate_gradient_under_vmap_regression() -> None:
    """np.concatenate's VJP once split by ends computed when the code runs, so vmap of
    its gradient could not count the pieces (a KeyError from the kind analysis, then a
    TransformError); it is one split_like call now, whose pieces the list's length
    counts: vmap of the gradient matches a loop over the examples, and JAX."""
    f, fj = load(SPLIT_COUNT)
    xs, y = XS_BOTH_PATHS * [[1.0, 2.0, 3.0, 4.0]], np.array([0.5, -1.0, 2.0, 0.25])
    g = s2s.grad(f)
    loop = np.stack([g(x, y) for x in xs])
    np.testing.assert_allclose(s2s.vmap(g, in_axes=(0, None))(xs, y), loop, rtol=1e-12)
    np.testing.assert_allclose(loop, np.stack([jax.grad(fj)(x, y) for x in xs]))

WRITTEN_ON_ONE_PATH_FRESH_ON_THE_OTHER = """def f(x, y):
    acc0 = y
    for i in range(1):
        acc0 = 0.5 * acc0 + 0.5 * np.tanh(x + acc0)
    v0 = acc0
    v1 = np.sum(x) * x
    v2 = y[IDX]
    v3 = v0 * v2
    v4 = sp.expit(v1)
    if np.sum(v4) > -0.5:
        v5 = v4[::-1]
    else:
        v5 = np.hypot(v1, 1.0 + v3 ** 2)
    return np.max(v5) + np.sum(v5)
"""


@pytest.mark.parametrize("probe_path", ["false", "true"])
def test_array_written_on_one_path_made_on_the_other_regression(probe_path) -> None:
    """Since vmap masks writes under a batched `if` (4c5e8e0): the gradient's true path
    makes v4_bar and writes v4_bar[::-1] (a masked write), the false path binds a
    fresh np.zeros_like(v4); vmap treated the join as one array written in place and
    emitted the false path's binding after the write, so every example got zeros (a
    silent wrong result).  Each path's array is now kept and the join selects."""
    f, fj = load(WRITTEN_ON_ONE_PATH_FRESH_ON_THE_OTHER)
    r = np.random.default_rng(3)
    y, xs = r.normal(size=4), r.normal(size=(3, 4))
    xs = np.concatenate([xs, -4.0 - xs])  # both paths (the sum of expit > -0.5 or not)
    xs = xs if probe_path == "true" else xs[::-1]
    expected = np.stack([jax.grad(fj)(x, y) for x in xs])
    assert np.any(expected[: len(xs) // 2] != 0.0)
    close(s2s.vmap(s2s.grad(f), in_axes=(0, None))(xs, y), expected, "vmap(grad)")


MADE_ON_ONE_PATH_WRITTEN_ON_THE_OTHER = """def f(x, y):
    z = np.zeros(4)
    z[0] = y[1]
    if np.sum(x) > 0.0:
        z = x * 2.0
        z[1] = y[0] * x[3]
    else:
        z[2] = np.sin(x[0])
    return np.sum(z * x) + z[3]
"""


@pytest.mark.parametrize("probe_path", ["false", "true"])
def test_array_made_on_the_true_path_written_in_place_on_the_other(probe_path) -> None:
    """The true path binds `z` to an array of its own before the false path writes
    into the `z` from before the `if`: the false path gets that one back (not the true
    path's), and the join selects per example; vmap and vmap(grad) against a loop and
    jax.grad."""
    f, _ = load(MADE_ON_ONE_PATH_WRITTEN_ON_THE_OTHER)
    jnp = jax.numpy

    def fj(x, y):  # JAX's twin: writes as .at[].set, per example
        z = jnp.zeros(4).at[0].set(y[1])
        if jnp.sum(x) > 0.0:
            z = (jnp.asarray(x) * 2.0).at[1].set(y[0] * x[3])
        else:
            z = z.at[2].set(jnp.sin(x[0]))
        return jnp.sum(z * x) + z[3]

    xs = XS_BOTH_PATHS * [[1.0, 2.0, 3.0, 4.0]]
    xs = np.concatenate([xs, 0.5 * xs[::-1]])
    xs = xs if probe_path == "false" else xs[::-1]
    y = np.array([0.5, -1.0, 2.0, 0.25])
    close(s2s.vmap(f, in_axes=(0, None))(xs, y), [f(x, y) for x in xs], "vmap")
    expected = np.stack([jax.grad(fj)(x, y) for x in xs])
    close(s2s.vmap(s2s.grad(f), in_axes=(0, None))(xs, y), expected, "vmap(grad)")
    close(s2s.vmap(s2s.grad(f, argnums=1), in_axes=(0, None))(xs, y),
          np.stack([jax.grad(fj, argnums=1)(x, y) for x in xs]), "vmap(grad wrt y)")

# ---- replaying a campaign's log ------------------------------------------------------

def replay(log: str) -> Counter:
    """Run again, on the code as it is now, every program a long run's log records
    as failed (``python tests/test_fuzz.py replay LOG...``); the classes that still
    fail."""
    text = open(log).read()
    found = re.findall(r"FUZZ FAILURE #\d+ (.*?)\n(def f\(x, y\):\n.*?)^-> ", text,
                       flags=re.S | re.M)
    still: Counter = Counter()
    for source, was in dict((src, kind) for kind, src in found).items():
        STAGE[0] = "value"
        try:
            check(source, np.random.default_rng(len(source) * 7919 + source.count("(")))
        except Exception as exc:  # noqa: BLE001 - every failure is reported
            still[classify(exc)] += 1
            print(f"STILL FAILS {classify(exc)} (was {was})\n{source}", flush=True)
        else:
            still["passes now (was " + was[:80] + ")"] += 1
    return still


if __name__ == "__main__":
    import sys

    if sys.argv[1:2] == ["replay"]:
        jax.config.update("jax_enable_x64", True)
        total: Counter = Counter()
        for path in sys.argv[2:]:
            total += replay(path)
        for kind, n in total.most_common():
            print(f"{n:6d}  {kind}")
