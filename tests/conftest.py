import math
import os
import sys
import zlib

import pytest

# every module s2s emits while the suite runs is checked: compiles, re-parses with
# libcst, stable under a second black pass (s2s.emit.code.CHECK_INVARIANTS)
os.environ.setdefault("S2S_CHECK_EMITTED", "1")
# a signature's second call specializes before it returns, so the third call runs the
# specialized code and the suite checks it (users' default specializes on a thread:
# tests/test_specialize.py tests that mode by name)
os.environ.setdefault("S2S_SPECIALIZE", "sync")

sys.path.insert(0, os.path.dirname(__file__))

# Bytecode: where PYTHONDONTWRITEBYTECODE is set (some CI and sandbox images set it),
# every pytest process recompiled s2s and re-ran pytest's assertion rewriting of every
# test module, and every `python -m s2s` subprocess recompiled s2s (about 0.5 s CPU
# each).  The suite tests s2s, not byte-compilation: it writes bytecode as Python does
# by default, for itself, its xdist workers and its subprocesses, into the __pycache__
# folders git ignores.  (Not a PYTHONPYCACHEPREFIX: Python then reads bytecode only
# there, and a first run would recompile every installed package too.)
# S2S_TEST_PYCACHE=0 keeps the environment as it is.
if sys.dont_write_bytecode and os.environ.get("S2S_TEST_PYCACHE", "1") != "0":
    sys.dont_write_bytecode = False
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

# JAX is the oracle, and compiling its programs was most of the suite's time: XLA's
# optimizing passes cost more than they save on arrays of a few elements
# (test_forward_rules e2e: 99 s with them, 43 s without); values are compared within
# tolerance anyway.  XLA's CPU fusion emitters (on by default in jaxlib 0.10) doubled
# each compile again: a Hessian of a 4-line function took 66-79 ms CPU to compile with
# them and 27-33 ms without, 22-26 ms with one codegen split (/tmp timing script, 29
# programs, jax 0.10.2); the older emitters compute the same values
os.environ.setdefault(
    "XLA_FLAGS", "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true"
    " --xla_cpu_use_fusion_emitters=false --xla_cpu_parallel_codegen_split_count=1")

try:  # JAX is the oracle; run it in float64 like the NumPy code under test
    import jax

    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_platforms", "cpu")
except ImportError:  # the suite falls back to recorded fixtures
    pass


# A sweep, a test function parametrized over many cases (every rule-table row, every
# corpus function), runs a fixed sample of its cases by default: SWEEP_SHARE of them, at
# least SWEEP_KEEP, chosen by a checksum of each case's id and file name (the same in
# every process and run, and the same cases for sibling sweeps of one table).  The
# others are marked slow, so `-m slow` runs them and `-m "slow or not slow"` runs
# everything.  A run that names cases (`-k`, or a node id) gets them all.
SWEEP_MIN = 2  # (8 until issue 25's suite time; 4 until the 190 default tests of the second 2026-12-06 merge: a pair of cases, float32 and float64 among them, runs one by default)
SWEEP_SHARE = 1 / 40  # (1/10, 1/20, then 1/25 until the second 2026-12-06 merge: the default suite must stay under 5 minutes)
SWEEP_KEEP = 1  # (2 until the idioms, SciPy and speed work of 2026-12-06 added 240 default tests)


def _sample_sweeps(config, items) -> None:
    if config.option.keyword or any("::" in str(a) for a in config.args):
        return
    sweeps: dict[tuple, list] = {}
    for item in items:
        if getattr(item, "callspec", None) is not None and "every_case" not in item.keywords:
            sweeps.setdefault((item.path, item.originalname), []).append(item)
    for cases in sweeps.values():
        if len(cases) < SWEEP_MIN:
            continue
        keep = max(SWEEP_KEEP, math.ceil(len(cases) * SWEEP_SHARE))
        # ranked by the case id within the file, not the test's name: sibling sweeps of
        # one table (a row's VJP, JVP, float32...) sample the same cases, so the
        # oracle's per-case caches (JAX compiles) are hit instead of filled again
        ranked = sorted(cases, key=lambda it: zlib.crc32(
            f"{it.path.name}::{it.callspec.id}".encode()))
        for item in ranked[keep:]:
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """``slow`` sweeps run only when asked for (``-m slow``, or any ``-m`` expression that
    names them); otherwise they are deselected, not listed as skips."""
    _sample_sweeps(config, items)
    if "slow" in (config.option.markexpr or ""):
        return
    slow = [item for item in items if "slow" in item.keywords]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if "slow" not in item.keywords]
