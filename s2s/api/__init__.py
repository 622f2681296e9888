"""The user-facing transformations: ``Transformed`` (grad, value_and_grad, vjp, jvp),
``vectorize`` (vmap, jacfwd, jacrev, hessian), ``jit`` and its backend glue."""

# (family_grads: grad and vjp of a lambda made again, its family's transform; importing
# it installs transformed.FAMILY_MEMBER)
from .family_grads import vjp
from .jacobians import hessian, jacfwd, jacrev
from .jit import jit
from .pushforward import jvp
from .transformed import Transformed, float0, grad, source, value_and_grad
from .vectorize import vmap

__all__ = ["Transformed", "float0", "grad", "value_and_grad", "vjp", "jvp", "source", "vmap", "jacfwd",
           "jacrev", "hessian", "jit"]
