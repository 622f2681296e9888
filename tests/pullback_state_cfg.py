"""A module whose attributes tests/pullback_state_fns.py reads (``cfgmod.SCALE``) and
tests/test_pullback_state.py changes after ``linearize()``."""

SCALE = 2.0
UNUSED = 0.0
