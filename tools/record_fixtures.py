"""Record JAX's gradients of the test corpus, so the suite can run without JAX.

    python tools/record_fixtures.py
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)

from corpus import CASES  # noqa: E402
from oracle import FIXTURES, record  # noqa: E402

if __name__ == "__main__":
    record(CASES)
    print(f"recorded {len(CASES)} cases into {FIXTURES}")
