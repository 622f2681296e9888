"""Which function ``self.name(...)`` in a method denotes, recorded when the method is
lowered with ``self`` the dict of its object's attributes (``objects.self_method``),
and checked against the object's own class when the transform is called (a subclass
may override the method).  No libcst here: ``s2s/api/methods.py`` imports it.
"""

from __future__ import annotations

import inspect
from typing import Any

from ..errors import TransformError

# function -> {method name: (the function `self.name(...)` in its body resolved to,
# where it is written, the function's display name)}
SELF_METHODS: dict[Any, dict[str, tuple[Any, Any, str]]] = {}


def check_self_methods(func: Any, obj: Any) -> None:
    """The object's own methods are the ones ``self.name(...)`` resolved to when ``func``
    (a method given to a transform with its object) was transformed."""
    seen: set[int] = set()
    todo = [func]
    while todo:
        fn = todo.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        for name, (resolved, loc, display) in SELF_METHODS.get(fn, {}).items():
            actual = inspect.getattr_static(type(obj), name, None)
            if actual is not resolved:
                raise TransformError(
                    f"`self.{name}(...)` was transformed as `{resolved.__qualname__}` "
                    f"(the class defining `{fn.__qualname__}`), but this object is a "
                    f"`{type(obj).__name__}`, whose `{name}` is another function", loc,
                    f"call the object in the function you transform (`lambda x: "
                    f"obj.{getattr(func, '__name__', 'method')}(x)`: there `self` is the "
                    f"object, its own methods called), or write "
                    f"`{resolved.__qualname__}(self, ...)`", display)
            todo.append(resolved)
