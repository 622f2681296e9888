"""vmap rules for the primitives of ``dtypes.py`` whose family has no default one.

Imported at the end of ``s2s/primitives/__init__.py`` (``s2s.batching`` reads the
complete registry when it is imported).
"""

from __future__ import annotations

from ..ir.spelling import atom_text
from .batching import Batch, Let, align, args_text, batch_rule, shifted, static


@batch_rule("allclose")
def allclose_rule(b: Batch, s: Let) -> str:
    """One bool per example: np.isclose over the example's axes, then np.all."""
    rank = max(b.rank(a) for a in s.args)
    params = ", ".join(f"{k}={atom_text(v)}"
                       for k, v in s.params.items())
    texts = [align(b, a, rank) for a in s.args]
    close = f"np.isclose({', '.join(texts + ([params] if params else []))})"
    if rank == 0:
        return close
    axes = tuple(range(1, rank + 1))
    return f"np.all({close}, axis={axes[0] if rank == 1 else axes})"


@batch_rule("logspace", "geomspace")
def spaced_rule(b: Batch, s: Let) -> str:
    """start and stop broadcast per example; the fractions run along axis 1, after
    the batch axis (NumPy's ``axis=`` puts them there)."""
    rank = max(b.rank(a) for a in s.args)
    return args_text(s, [align(b, a, rank) for a in s.args], {"axis": "1"})


@batch_rule("linspace")
def linspace_rule(b: Batch, s: Let) -> str:
    """start and stop broadcast per example; the fractions' axis moves past the batch
    axis (counted in the output, one axis more than start and stop)."""
    rank = max(b.rank(a) for a in s.args)
    axis = static(s, "axis", 0)
    return args_text(s, [align(b, a, rank) for a in s.args],
                     {"axis": shifted(axis % (rank + 1), rank + 1)})


@batch_rule("float64")
def float64_rule(b: Batch, s: Let) -> str:
    """Elementwise: the batched operand as it is."""
    return args_text(s, [atom_text(a) for a in s.args])
