"""The user-facing transformations: ``Transformed`` (grad, value_and_grad, vjp, jvp),
``vectorize`` (vmap, jacfwd, jacrev, hessian), ``jit`` and its backend glue."""

from . import family_grads  # noqa: F401 (installs grad's transform of a family: a lambda made again)
from .jacobians import hessian, jacfwd, jacrev
from .jit import jit
from .pushforward import jvp
from .transformed import Transformed, float0, grad, source, value_and_grad, vjp
from .vectorize import vmap

__all__ = ["Transformed", "float0", "grad", "value_and_grad", "vjp", "jvp", "source", "vmap", "jacfwd",
           "jacrev", "hessian", "jit"]
