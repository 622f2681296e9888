import os
import sys

# every module s2s emits while the suite runs is checked: compiles, re-parses with
# libcst, stable under a second black pass (s2s.emitcode.CHECK_INVARIANTS)
os.environ.setdefault("S2S_CHECK_EMITTED", "1")

sys.path.insert(0, os.path.dirname(__file__))

try:  # JAX is the oracle; run it in float64 like the NumPy code under test
    import jax

    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_platforms", "cpu")
except ImportError:  # the suite falls back to recorded fixtures
    pass


def pytest_collection_modifyitems(config, items):
    """``slow`` sweeps run only when asked for (``-m slow``); CI runs the rest."""
    if "slow" in (config.option.markexpr or ""):
        return
    import pytest

    skip = pytest.mark.skip(reason="slow sweep: run with -m slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
