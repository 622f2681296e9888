"""A module whose attribute tests/vjp_frozen_fns.py reads (``vjp_frozen_cfg.SCALE``)
and tests/test_vjp_frozen.py rebinds after ``vjp()``."""

SCALE = 2.0
