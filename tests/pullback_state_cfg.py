"""A module whose attributes tests/pullback_state_fns.py reads (``cfgmod.SCALE``) and
tests/test_pullback_state.py changes after ``linearize()``."""

SCALE = 2.0
UNUSED = 0.0


class Node:
    def __init__(self, **fields):
        self.__dict__.update(fields)


DEEP = Node(scale=2.0)  # (an object a module holds: pullback_state_fns reads cfgmod.DEEP)
