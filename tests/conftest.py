import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

try:  # JAX is the oracle; run it in float64 like the NumPy code under test
    import jax

    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_platforms", "cpu")
except ImportError:  # the suite falls back to recorded fixtures
    pass
