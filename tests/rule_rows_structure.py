"""Rule-table entries for writes into arrays and lists grown with append.

Both are structural (reverse mode handles them beside the statement's rule), so they
are checked end to end; JAX cannot write into its arrays, so the write is checked
against finite differences only.
"""

import rule_fns_structure as F
from rule_table import E2ECase, normal

ROWS: list = []

E2E = [
    E2ECase(F.f_setitem, ("setitem",), (normal(2, 3),), jax=False),
    E2ECase(F.f_list_append, ("append", "make_list"), (normal(3, 3),)),
]
