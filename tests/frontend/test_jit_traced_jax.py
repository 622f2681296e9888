"""``s2s.jit(..., backend="jax")`` where the code needs, as a Python value, a value JAX
traces (issue 23, items 1 and 7), an ``if`` whose paths give a value different ranks
under ``s2s.jit(s2s.vmap(f), backend="jax")``, and ``np.einsum`` of subscripts known
per call under vmap, jacfwd and jacrev.

* ``for i in range(n): out.append(...)`` with ``n`` traced (``jit(grad(f))``): JAX
  refuses ``range`` of a tracer; s2s refuses at the user's loop, naming
  ``static_argnums=1``; with it, s2s's results are JAX's (``static_argnums=1`` too).
* an ``if``/``while`` on a many-element array, an ``if`` whose branches bind different
  shapes, a ``while`` that grows a list: refused at the user's line (file, line,
  column, the line quoted; never ``<s2s:...>``) under grad, value_and_grad, jvp, vjp,
  vmap, jacfwd, jacrev, hessian and plain jit, where JAX refuses too.
* ``if t > 0:`` on an unbatched ``t`` whose paths give ``y`` ranks 1 and 0: JAX's
  jit refuses it (a traced ``t``); s2s refuses at the ``if``, naming
  ``static_argnums=1``; with it, and for a loop's count (a shape: Horner's rule), each
  signature gets its path's code, against JAX.
* ``np.einsum(subs, a, b)`` with ``subs`` a string argument (other subscripts at each
  call), an f-string of a module constant, a string built with ``+``: against JAX.

Every expected value is JAX's on the same source (``jax_twin``), float64 and float32,
over ten calls whose values change (the 1st, 3rd and 10th compared).  The default tier
runs a sample of each sweep (tests/conftest.py); all of them with ``-m slow``."""

from __future__ import annotations

import numpy as np
import pytest

import jit_traced_fns as F  # (pytest puts this directory on sys.path)
from support import HAVE_JAX, assert_close_to, jax_twin

import s2s
from s2s.backends import TracedValueError
from s2s.errors import TruthValueError

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)

CALLS = (1, 3, 10)
DTYPES = [pytest.param(np.float64, id="f64"), pytest.param(np.float32, id="f32")]


def _at(marker: str) -> tuple[int, int, str]:
    """The line, column and text of the statement marked ``# MARKER`` in the fns file."""
    with open(F.__file__) as fh:
        for k, line in enumerate(fh, 1):
            if line.rstrip().endswith(f"# {marker}"):
                text = line.rstrip("\n")
                return k, len(text) - len(text.lstrip()) + 1, text.strip()
    raise AssertionError(marker)


def _assert_located(err: BaseException, marker: str, *words: str) -> None:
    text = str(err)
    line, col, quoted = _at(marker)
    assert f'File "{F.__file__}", line {line}, column {col}' in text, text
    assert f"\n    {quoted}\n" in text, text
    assert "<s2s" not in text, text
    for word in words:
        assert word in text, (word, text)


def _jvp_of(f):
    def jvp_run(x, v):
        return s2s.jvp(f, (x,), (v,))

    return jvp_run


# ---- 1. a list grown over range(n) of a traced n ----------------------------------


GROW_REFUSED = {  # s2s's, run under jit on JAX
    "grad": lambda: s2s.jit(s2s.grad(F.grow), backend="jax"),
    "value_and_grad": lambda: s2s.jit(s2s.value_and_grad(F.grow), backend="jax"),
    "jacfwd": lambda: s2s.jit(s2s.jacfwd(F.grow), backend="jax"),
    "jacrev": lambda: s2s.jit(s2s.jacrev(F.grow), backend="jax"),
    "jit": lambda: s2s.jit(F.grow, backend="jax"),
}


@pytest.mark.slow  # (the default tier: test_default_tier_* below)
@pytest.mark.parametrize("transform", list(GROW_REFUSED))
def test_range_of_a_traced_count_refused_at_your_loop(transform) -> None:
    with pytest.raises(TracedValueError) as info:
        GROW_REFUSED[transform]()(np.array([0.5, -1.0, 2.0]), 3)
    _assert_located(info.value, "GROW_LOOP", "range", "static_argnums=1",
                    "static_argnames='n'")
    with pytest.raises(jax.errors.TracerIntegerConversionError):  # (JAX refuses too)
        jax.jit(jax.grad(J.grow))(np.array([0.5, -1.0, 2.0]), 3)


COUNTS = [2, 1, 4, 3, 1, 5, 2, 3, 6, 2]


def _grow_pair(transform: str):
    if transform == "vmap":
        return (s2s.jit(s2s.vmap(F.grow, in_axes=(0, None)), backend="jax",
                        static_argnums=1),
                jax.jit(jax.vmap(J.grow, in_axes=(0, None)), static_argnums=1))
    return (s2s.jit(getattr(s2s, transform)(F.grow), backend="jax", static_argnums=1),
            jax.jit(getattr(jax, transform)(J.grow), static_argnums=1))


@pytest.mark.slow  # (the default tier: test_default_tier_* below)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("transform", [
    "grad", "value_and_grad", "jacfwd", "jacrev", "hessian", "vmap"])
def test_range_of_a_static_count_against_jax(transform, dtype) -> None:
    ours, theirs = _grow_pair(transform)
    for call in range(1, 11):
        r = np.random.default_rng(call)
        x = r.normal(size=(2, 3) if transform == "vmap" else (3,)).astype(dtype)
        got = ours(x, COUNTS[call - 1])
        if call in CALLS:
            assert_close_to(got, theirs(x, COUNTS[call - 1]), dtype, scale_atol=True)


# ---- 2. if/while on a traced value, at your line ----------------------------------


def _vjp_of(f):
    def vjp_run(x):
        out, pull = s2s.vjp(f, x)
        return pull(np.ones_like(out))

    return vjp_run


def _run(transform: str, f, x):
    if transform == "jvp":
        return s2s.jit(_jvp_of(f), backend="jax")(x, np.ones_like(x))
    if transform == "vjp":
        return s2s.jit(_vjp_of(f), backend="jax")(x)
    if transform == "vmap":
        return s2s.jit(s2s.vmap(f), backend="jax")(np.stack([x, -x]))
    if transform == "jit":
        return s2s.jit(f, backend="jax")(x)
    return s2s.jit(getattr(s2s, transform)(f), backend="jax")(x)


TRANSFORMS = ["grad", "value_and_grad", "jvp", "vjp", "vmap", "jacfwd", "jacrev", "hessian",
              "jit"]
REFUSED = [  # (function, marker, the error, words of its message)
    ("array_if", "ARRAY_IF", TruthValueError, ("no truth value", "np.where")),
    ("array_while", "ARRAY_WHILE", TruthValueError, ("no truth value",)),
    ("shapes_if", "SHAPES_IF", TracedValueError, ("different structure, shape",)),
    ("grow_while", "GROW_WHILE", TracedValueError, ("while",)),
    ("calls_helper", "HELPER_IF", TruthValueError, ("no truth value",)),  # (a callee's)
]


def _refused_cases():
    for name, marker, error, words in REFUSED:
        for transform in TRANSFORMS:
            if name == "shapes_if" and transform == "vmap":
                continue  # (paths of different shapes per example: no batched value)
            if name == "grow_while" and transform == "vmap":
                continue  # (refused by vmap itself, at your line: test_carried_rank)
            yield pytest.param(name, marker, error, words, transform,
                               id=f"{name}-{transform}")


@pytest.mark.slow  # (the default tier: test_default_tier_* below)
@pytest.mark.parametrize("name,marker,error,words,transform", list(_refused_cases()))
def test_traced_control_flow_refused_at_your_line(name, marker, error, words,
                                                  transform) -> None:
    x = np.array([0.5, -1.0, 2.0])
    with pytest.raises(error) as info:
        _run(transform, getattr(F, name), x)
    _assert_located(info.value, marker, *words)


@pytest.mark.slow  # (the default tier: test_default_tier_* below)
@pytest.mark.parametrize("name", ["array_if", "array_while", "shapes_if", "grow_while",
                                  "calls_helper"])
def test_jax_refuses_the_same_sources(name) -> None:
    """The reference: ``jax.jit(jax.grad(f))`` of the same source raises too."""
    with pytest.raises((jax.errors.JAXTypeError, TypeError, ValueError)):
        jax.jit(jax.grad(getattr(J, name)))(np.array([0.5, -1.0, 2.0]))


# ---- 3. an `if` whose paths give a value different ranks, under jit(vmap) ---------


@pytest.mark.slow  # (the default tier: test_default_tier_located_errors)
def test_ranks_if_on_a_traced_test_refused_at_your_if() -> None:
    j = s2s.jit(s2s.vmap(F.ranks_if, in_axes=(0, None)), backend="jax")
    with pytest.raises(TracedValueError) as info:
        j(np.ones((2, 3)), 0.5)
    _assert_located(info.value, "RANKS_IF", "different ranks per example",
                    "static_argnums=1", "static_argnames='t'")
    with pytest.raises(jax.errors.TracerBoolConversionError):  # (JAX refuses too)
        jax.jit(jax.vmap(J.ranks_if, in_axes=(0, None)))(np.ones((2, 3)), 0.5)


TS = [0.7, -0.3, -1.1, 1.2, 0.7, -0.3, 2.0, -0.5, 0.1, 1.5]  # (both paths: 1st, 3rd, 10th)
LENGTHS = [3, 5, 0, 1, 5, 3, 0, 1, 5, 2]


def _per_path_pair(name: str):
    if name == "ranks_if":
        return (s2s.jit(s2s.vmap(F.ranks_if, in_axes=(0, None)), backend="jax",
                        static_argnums=1),
                jax.jit(jax.vmap(J.ranks_if, in_axes=(0, None)), static_argnums=1),
                lambda r, call, dtype: TS[call - 1])
    return (s2s.jit(s2s.vmap(F.horner, in_axes=(0, None)), backend="jax"),
            jax.jit(jax.vmap(J.horner, in_axes=(0, None))),
            lambda r, call, dtype: r.normal(size=LENGTHS[call - 1]).astype(dtype))


@pytest.mark.slow  # (the default tier: test_default_tier_* below)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["ranks_if", "horner"])
def test_per_path_code_under_jax_jit_against_jax(name, dtype) -> None:
    ours, theirs, second = _per_path_pair(name)
    for call in range(1, 11):
        r = np.random.default_rng(call)
        x = r.normal(size=(2, 3)).astype(dtype)
        other = second(r, call, dtype)
        got = ours(x, other)
        if call in CALLS:
            assert_close_to(got, theirs(x, other), dtype, scale_atol=True,
                            dtype_of="expected-arrays")


# ---- 4. np.einsum of subscripts known per call -------------------------------------


SUBS = [("ij,j->i", (2, 3), (3,)), ("ij,ij->i", (2, 3), (2, 3)),
        ("ji,j->i", (3, 2), (3,)), ("ij,jk", (2, 3), (3, 4)),
        ("...j,j->...", (2, 3), (3,))]


def _einsum_ours(transform: str):
    """s2s's transform of ``contract``, one object for every call (whose subscripts
    change: its code is made per string, or reads it when it runs)."""
    if transform == "vmap":
        return s2s.vmap(F.contract, in_axes=(0, None, None))
    if transform == "vmap_both":
        return s2s.vmap(F.contract, in_axes=(0, 0, None))
    if transform == "jit_vmap":
        return s2s.jit(s2s.vmap(F.contract, in_axes=(0, None, None)), backend="jax",
                       static_argnums=2)
    return getattr(s2s, transform)(F.contract)


def _einsum_theirs(transform: str, subs: str):
    def theirs_of(a, b):
        return J.contract(a, b, subs)

    if transform in ("vmap", "jit_vmap"):
        return jax.vmap(theirs_of, in_axes=(0, None))
    if transform == "vmap_both":
        return jax.vmap(theirs_of, in_axes=(0, 0))
    return getattr(jax, transform)(theirs_of)


EINSUM_TRANSFORMS = ["vmap", "vmap_both", "jacfwd", "jacrev", "hessian", "jit_vmap"]


@pytest.mark.slow  # (the default tier: test_default_tier_* below)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("transform", EINSUM_TRANSFORMS)
def test_einsum_of_a_string_argument_against_jax(transform, dtype) -> None:
    """One transform object called with other subscripts at each call."""
    ours = _einsum_ours(transform)
    for call in range(1, 11):
        subs, sa, sb = SUBS[(call - 1) % len(SUBS)]
        r = np.random.default_rng(call)
        batched = transform in ("vmap", "vmap_both", "jit_vmap")
        a = r.normal(size=((2,) if batched else ()) + sa).astype(dtype)
        b = r.normal(size=((2,) if transform == "vmap_both" else ()) + sb).astype(dtype)
        got = ours(a, b, subs)
        if call in CALLS + (4,):  # (the 4th: the 2nd's ranks, another output's rank)
            assert_close_to(got, _einsum_theirs(transform, subs)(a, b), dtype,
                            scale_atol=True)


@pytest.mark.slow  # (the default tier: test_default_tier_* below)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("transform", ["vmap", "jacfwd", "jacrev"])
@pytest.mark.parametrize("name", ["contract_fstring", "contract_joined"])
def test_einsum_of_subscripts_built_in_the_function_against_jax(name, transform,
                                                                dtype) -> None:
    extra = ("j",) if name == "contract_joined" else ()
    f, fj = getattr(F, name), getattr(J, name)
    if transform == "vmap":
        ours = s2s.vmap(f, in_axes=(0, None) + (None,) * len(extra))
        theirs = jax.vmap(lambda a, b: fj(a, b, *extra), in_axes=(0, None))
    else:
        ours = getattr(s2s, transform)(f)
        theirs = getattr(jax, transform)(lambda a, b: fj(a, b, *extra))
    for call in range(1, 11):
        r = np.random.default_rng(call)
        a = r.normal(size=(2, 2, 3) if transform == "vmap" else (2, 3)).astype(dtype)
        b = r.normal(size=3).astype(dtype)
        got = ours(a, b, *extra)
        if call in CALLS:
            assert_close_to(got, theirs(a, b), dtype, scale_atol=True)


def test_einsum_batched_code_reads_as_the_call() -> None:
    """The batched einsum of a string argument: the batch label put on the
    subscripts when the code runs (s2s.runtime.einsum_batched)."""
    v = s2s.vmap(F.contract, in_axes=(0, None, None))
    v(np.ones((2, 2, 3)), np.ones(3), "ij,j->i")
    assert "np.einsum(einsum_batched(subs, (True, False)), a, b)" in v.source
    assert s2s.runtime.einsum_batched("ij,jk", (False, True)) == "ij,zjk->zik"
    assert s2s.runtime.einsum_batched("...j,j->...", None) == "z...j,zj->z..."


# ---- the default tier: one of each kind, cheap (the sweeps above: -m slow) ---------


def test_default_tier_located_errors() -> None:
    """A traced count under jit(grad), an `if` on an array under jit(jvp), a traced
    `if` whose paths give different ranks under jit(vmap): each at your line."""
    x = np.array([0.5, -1.0, 2.0])
    with pytest.raises(TracedValueError) as info:
        s2s.jit(s2s.grad(F.grow), backend="jax")(x, 3)
    _assert_located(info.value, "GROW_LOOP", "range", "static_argnums=1")
    with pytest.raises(TruthValueError) as info:
        _run("jvp", F.array_if, x)
    _assert_located(info.value, "ARRAY_IF", "no truth value")
    with pytest.raises(TruthValueError) as info:  # (in a function the gradient calls)
        _run("grad", F.calls_helper, x)
    _assert_located(info.value, "HELPER_IF", "no truth value")
    with pytest.raises(TracedValueError) as info:
        s2s.jit(s2s.vmap(F.ranks_if, in_axes=(0, None)), backend="jax")(np.ones((2, 3)), 0.5)
    _assert_located(info.value, "RANKS_IF", "different ranks", "static_argnums=1")


def test_default_tier_static_count_and_paths() -> None:
    """With the count and the test static: calls of other counts and paths, against
    the function run by NumPy (its gradient by central differences)."""
    g = s2s.jit(s2s.grad(F.grow), backend="jax", static_argnums=1)
    x = np.array([0.5, -1.0, 2.0])
    for n in (2, 3, 2):
        want = 2 * x * sum((i + 1.0) ** 2 for i in range(n))
        np.testing.assert_allclose(g(x, n), want, rtol=1e-12)
    v = s2s.jit(s2s.vmap(F.ranks_if, in_axes=(0, None)), backend="jax", static_argnums=1)
    xs = np.array([[0.5, -1.0, 2.0], [0.3, 0.2, 0.1]])
    for t in (0.7, -0.3, 0.7):
        np.testing.assert_allclose(v(xs, t), [F.ranks_if(row, t) for row in xs],
                                   rtol=1e-12)


def test_default_tier_einsum_against_a_python_loop() -> None:
    """vmap of np.einsum of a string argument, other subscripts at each call, against
    the function per example."""
    v = s2s.vmap(F.contract, in_axes=(0, None, None))
    r = np.random.default_rng(0)
    for subs, sa, sb in SUBS:  # (the 4th: the 2nd's ranks, another output's rank)
        a, b = r.normal(size=(2,) + sa), r.normal(size=sb)
        np.testing.assert_allclose(v(a, b, subs), [F.contract(row, b, subs) for row in a],
                                   rtol=1e-12)


@pytest.mark.slow
def test_edge_inputs_against_jax() -> None:
    """An empty batch, a batch of one, NaN and inf through the einsum of a string
    argument under vmap; a size-1 and a 0-size example and NaN through the per-path
    code of ``ranks_if`` on both paths under ``s2s.jit(..., backend="jax")``."""
    v = s2s.vmap(F.contract, in_axes=(0, None, None))
    b = np.arange(3.0)
    for a in (np.zeros((0, 2, 3)), np.ones((1, 2, 3)), np.full((2, 2, 3), np.nan),
              np.full((2, 2, 3), np.inf)):
        want = jax.vmap(lambda x: J.contract(x, b, "ij,j->i"))(a)
        np.testing.assert_allclose(v(a, b, "ij,j->i"), want, rtol=1e-12)
    j = s2s.jit(s2s.vmap(F.ranks_if, in_axes=(0, None)), backend="jax", static_argnums=1)
    for xs in (np.ones((1, 3)), np.ones((2, 0)), np.full((2, 3), np.nan)):
        for t in (1.0, -1.0):
            want = jax.vmap(lambda x: J.ranks_if(x, t))(xs)
            np.testing.assert_allclose(j(xs, t), want, rtol=1e-12)
