"""``s2s.tree_util``: JAX's pytree functions and registrations (s2s/api/tree_util.py)."""

from .api.tree_util import (  # noqa: F401
    PyTreeDef,
    __all__,
    all_leaves,
    register_dataclass,
    register_pytree_node,
    register_pytree_node_class,
    tree_flatten,
    tree_flatten_with_path,
    tree_leaves,
    tree_map,
    tree_map_with_path,
    tree_structure,
    tree_unflatten,
    treedef_is_leaf,
)
