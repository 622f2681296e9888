"""No silent wrong answers: every random program (tests/fuzz_programs.py, the
conformance fuzzer's generator) either gives JAX's answer or raises an s2s
``TransformError``; never another exception, never a wrong value.

Each program ``f(x, y)`` goes through ``grad`` (both arguments) against ``jax.grad`` on
the same source, ``jvp`` against the primal and JAX's gradient along the direction,
and ``vmap`` over 3 examples against a Python loop.  The
default run is ``S2S_SILENT_EXAMPLES`` programs (16: about 3 s here) at a fixed seed; ``-m slow``
runs ``S2S_SILENT_LONG`` (2000) more with longer programs.

Speed: this test checks values, not the emitted text's formatting (tests/
test_invariants.py and every other test run s2s's full pipeline), so it replaces
``s2s.api.pipeline.format_module`` (black, then the invariant re-parse: 60 % of the time
here) with a plain ``compile`` check of the same text.  The code that runs is the
code s2s emitted, unformatted; first-order transforms only, whose text s2s never
reads back.
"""

from __future__ import annotations

import os
import warnings
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings

import s2s
import s2s.api.pipeline as pipeline
from fuzz_programs import load, programs

jax = pytest.importorskip("jax")

SEED = int(os.environ.get("S2S_SILENT_SEED", "20261201"))
EXAMPLES = int(os.environ.get("S2S_SILENT_EXAMPLES", "16"))
LONG = int(os.environ.get("S2S_SILENT_LONG", "2000"))


def _compile_only(text: str) -> str:
    compile(text, "<s2s-silent-check>", "exec")
    return text


def close(got, expected, what: str) -> None:
    got, expected = np.asarray(got, float), np.asarray(expected, float)
    scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
    np.testing.assert_allclose(got, expected, rtol=1e-7, atol=1e-9 * scale, err_msg=what)


def check(source: str, r: np.random.Generator, outcomes: Counter) -> None:
    """Raises AssertionError for a wrong value, lets any non-s2s exception through."""
    f, fj = load(source)
    x, y = r.normal(size=4), r.normal(size=4)
    dx, dy = r.normal(size=4), r.normal(size=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        value = f(x, y)
    if not np.isfinite(value) or abs(value) > 1e8:
        outcomes["skipped: value out of range"] += 1
        return
    gj = jax.grad(fj, argnums=(0, 1))(x, y)  # the one JAX call: both checks read it
    for name, run in (
        ("grad", lambda: _grad(f, gj, x, y)),
        ("jvp", lambda: _jvp(f, gj, value, x, y, dx, dy)),
        ("vmap", lambda: _vmap(f, x, y, r)),
    ):
        try:
            run()
        except s2s.TransformError as exc:
            outcomes[f"refused {name}: {exc.what[:50]}"] += 1
        else:
            outcomes[f"matched {name}"] += 1


def _grad(f, gj, x, y) -> None:
    g = s2s.grad(f, argnums=(0, 1))(x, y)
    close(g[0], gj[0], "grad x vs jax.grad")
    close(g[1], gj[1], "grad y vs jax.grad")


def _jvp(f, gj, value, x, y, dx, dy) -> None:
    out, tangent = s2s.jvp(f, (x, y), (dx, dy))
    close(out, value, "jvp primal vs f")
    expected = np.dot(np.asarray(gj[0]), dx) + np.dot(np.asarray(gj[1]), dy)
    close(tangent, expected, "jvp tangent vs <jax.grad, direction>")


def _vmap(f, x, y, r) -> None:
    xs = np.stack([x, r.normal(size=4), r.normal(size=4)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        loop = np.array([f(xi, y) for xi in xs])
    if not (np.all(np.isfinite(loop)) and np.max(np.abs(loop)) < 1e8):
        return
    close(s2s.vmap(f, in_axes=(0, None))(xs, y), loop, "vmap vs loop")


def fuzz(n: int, steps: tuple[int, int], salt: int, monkeypatch) -> Counter:
    monkeypatch.setattr(pipeline, "format_module", _compile_only)
    outcomes: Counter = Counter()

    @seed(SEED + salt)
    @settings(max_examples=n, deadline=None, database=None,
              phases=[Phase.explicit, Phase.generate],  # no shrinking: report as found
              suppress_health_check=list(HealthCheck))
    @given(programs(steps=steps))
    def run(source: str) -> None:
        r = np.random.default_rng(len(source) * 7919 + source.count("("))
        try:
            check(source, r, outcomes)
        except AssertionError as exc:
            raise AssertionError(f"SILENT WRONG ANSWER for\n{source}\n{exc}") from None
        except Exception as exc:  # noqa: BLE001 - anything but a TransformError is a bug
            raise AssertionError(
                f"{type(exc).__name__} (not an s2s TransformError) for\n{source}\n{exc}"
            ) from exc

    run()
    return outcomes


def _assert_mostly_checked(outcomes: Counter, n: int) -> None:
    """A run that refused or skipped everything proves nothing."""
    print("outcomes:", dict(outcomes))
    for name in ("grad", "jvp", "vmap"):
        assert outcomes[f"matched {name}"] >= 0.7 * n, (name, dict(outcomes))


def test_every_program_is_right_or_refused(monkeypatch) -> None:
    outcomes = fuzz(EXAMPLES, (2, 6), 0, monkeypatch)
    _assert_mostly_checked(outcomes, EXAMPLES)


@pytest.mark.slow
def test_every_program_is_right_or_refused_long(monkeypatch) -> None:
    outcomes = fuzz(LONG, (2, 8), 1, monkeypatch)
    _assert_mostly_checked(outcomes, LONG)
