"""s2s: JAX's function transformations as readable source-to-source rewrites of NumPy.

    import s2s

    @s2s.grad
    def loss(w, x, y):
        pred = np.tanh(x @ w)
        return np.mean((pred - y) ** 2)

    loss(w, x, y)          # the gradient with respect to w
    print(s2s.source(loss))  # the emitted gradient, as Python
"""

from . import lax as lax  # s2s.lax: psum, pmean, ... over a named vmap axis
from . import tree_util as tree_util  # s2s.tree_util: pytrees, on optree
from .api import (
    Transformed,
    grad,
    hessian,
    jacfwd,
    jacrev,
    jit,
    jvp,
    source,
    value_and_grad,
    vjp,
    vmap,
)
from .api import transformed as _transformed
from .api.checkpoint import checkpoint
from .api.checkpoint import checkpoint_policies as checkpoint_policies  # (a namespace)
from .api.extras import ShapeDtypeStruct, eval_shape, linear_transpose, linearize, stop_gradient
from .errors import (
    CustomRuleError,
    MissingRuleError,
    NonDifferentiableError,
    SourceNotFoundError,
    TransformError,
    UnsupportedCallError,
    UnsupportedSyntaxError,
)
from .ledger import ledger  # (the function; the module s2s.ledger holds the ledger API)
from .primitives.custom import custom_jvp, custom_vjp, primitive
from .tools.selfcheck import selfcheck as _selfcheck
from .version import __version__ as __version__

_transformed.SELF_CHECK = _selfcheck  # g.selfcheck(): the root wires tools into api
# a vmap written in a function over an empty batch stacks zeros of g's output shape,
# which eval_shape computes (frontend/empty_batch.py finds it here, by this attribute)
vmap.__s2s_eval_shape__ = eval_shape  # type: ignore[attr-defined]

remat = checkpoint  # JAX's other name for it

__all__ = [
    "grad",
    "value_and_grad",
    "vjp",
    "jvp",
    "vmap",
    "jacfwd",
    "jacrev",
    "hessian",
    "jit",
    "source",
    "custom_jvp",
    "custom_vjp",
    "primitive",
    "checkpoint",
    "remat",
    "stop_gradient",
    "linearize",
    "linear_transpose",
    "eval_shape",
    "ShapeDtypeStruct",
    "ledger",
    "Transformed",
    "TransformError",
    "SourceNotFoundError",
    "UnsupportedSyntaxError",
    "UnsupportedCallError",
    "NonDifferentiableError",
    "CustomRuleError",
    "MissingRuleError",
]
