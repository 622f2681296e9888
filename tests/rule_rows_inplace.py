"""Rule-table entries for ``np.add.at`` and ``list(x)``.

Both are structural for reverse mode (an in-place write, like setitem; a list, like
append), so they are checked end to end; JAX cannot add into its arrays in place, so
np.add.at is checked against finite differences here (its rules against
``a.at[index].add(v)`` in tests/test_closure.py).
"""

import rule_fns_inplace as F
from rule_table import E2ECase, normal

ROWS: list = []

E2E = [
    E2ECase(F.f_add_at, ("add_at",), (normal(4, 3),), jax=False),
    E2ECase(F.f_list_rows, ("list", "append"), (normal(3, 3),)),
]
