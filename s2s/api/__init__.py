"""The user-facing transformations: ``Transformed`` (grad, value_and_grad, vjp, jvp),
``vectorize`` (vmap, jacfwd, jacrev, hessian), ``jit`` and its backend glue."""

from .transformed import Transformed, float0, grad, jvp, source, value_and_grad, vjp
from .vectorize import hessian, jacfwd, jacrev, vmap
from .jit import jit

__all__ = ["Transformed", "float0", "grad", "value_and_grad", "vjp", "jvp", "source", "vmap", "jacfwd",
           "jacrev", "hessian", "jit"]
