"""Rule-table entries for joining and splitting (sequence arguments, several results)."""

import rule_fns_shape as F
from rule_table import E2ECase, Row, normal


def arrays(*shapes):
    """A list of arrays (a sequence argument); JAX sees them stacked, same result."""
    return lambda r: [r.normal(size=s) for s in shapes]


# Primitives with several results (split) are checked end to end only: JAX's vjp
# needs their cotangent as a list, which the directly-called table does not build.
ROWS = [
    Row("concatenate", "axis0", (arrays((2, 3), (2, 3)),), {"axis": 0}),
    Row("concatenate", "axis1", (arrays((2, 3), (2, 3), (2, 3)),), {"axis": 1}),
]

E2E = [
    E2ECase(F.f_concatenate, ("concatenate", "make_list"), (normal(2, 3), normal(4, 3))),
    E2ECase(F.f_split, ("split",), (normal(6, 2),)),
]
