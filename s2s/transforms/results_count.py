"""The refusal of a primitive whose number of results the code computes when it runs
(``np.split`` with sections computed from values; ``split_like``, a join's gradient over
a list whose length only the call knows), read where reverse mode needs the count: its
kind analysis (``analysis.py``) when the code is differentiated or batched again."""

from __future__ import annotations

from typing import Any

from ..errors import TransformError


def results_unknown(s: Any) -> TransformError:
    """The located error for the statement ``s``."""
    if s.prim == "split_like":  # (a join's gradient, transformed again)
        return TransformError(
            "the gradient of this join (np.concatenate, a stack) of a list whose length is "
            "known only when the code runs (grown in a loop, a comprehension over "
            "`range(x.size)`) cannot be differentiated or batched again (hessian, vmap of "
            "grad): that needs the count of its pieces when s2s transforms the function",
            s.loc, "build the list with a count s2s knows (`range(4)`, a literal list), or "
            "compute the joined array without the list")
    return TransformError(
        f"`{s.prim}` returns a number of results the code computes when it runs (its "
        "sections are not constants), so its results cannot be differentiated one by one",
        s.loc, "give the sections as constants (np.split(x, 3) or a literal list of "
        "indices), or index the array directly")
