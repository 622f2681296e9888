"""Forward mode's calls: a user function's own emitted JVP, and custom rules.

A call to a user function calls its ``*_jvp`` helper, which returns ``(value,
tangent)``; a ``custom_jvp`` function's rule, called by name, gives both values.
"""

from __future__ import annotations

from typing import Any

from ..emit.code import Line
from ..errors import CustomRuleError, MissingRuleError
from ..ir.kinds import leaf_paths, path_text
from ..ir.nodes import Let, Var
from ..ir.spelling import atom_text
from ..primitives.custom import checked_jvp, custom_vjp
from .analysis import callee_of, const_kind
from .forward_state import ForwardState
from .module import bind_object, tuple_text


class Calls:
    """The tangents of the calls of one forward pass; ``jvp_of(callee, positions,
    kinds, module)`` names (and emits) a user callee's ``*_jvp`` helper."""

    def __init__(self, state: ForwardState, jvp_of: Any) -> None:
        self.state = state
        self.jvp_of = jvp_of  # (forward.callee_jvp)

    def call(self, s: Let, out: list[Any]) -> None:
        """A call to a user function: its own emitted JVP, returning both values."""
        if "custom" in s.params:
            self.custom_call(s, out)
            return
        state = self.state
        callee = callee_of(s)
        for a in s.args:
            state.settle(a, out)
        # (a constant's structure: a dict default the caller passes, `weights={...}`,
        # walked by `.items()` in the callee; LEAF before: KeyError from emitted code)
        kinds = tuple(state.kind(a.name) if isinstance(a, Var) else const_kind(a)
                      for a in s.args)
        positions = tuple(i for i, a in enumerate(s.args) if state.is_active(a))
        jvp_name = self.jvp_of(callee, positions, kinds, state.module)
        args = [atom_text(a) for a in s.args] + [state.whole(s.args[i]) for i in positions]
        dot = state.dot_name(s.target)
        out.append(Line(f"{s.target}, {dot} = {jvp_name}({', '.join(args)})"))
        state.owned.add(dot)
        for path in leaf_paths(state.kind(s.target)):
            state.tan.setdefault(s.target, {})[path] = path_text(dot, path)

    def custom_call(self, s: Let, out: list[Any]) -> None:
        """A ``custom_jvp`` function: its rule, called by name, gives both values."""
        state = self.state
        custom = s.params["custom"]
        if isinstance(custom, custom_vjp):
            raise CustomRuleError(
                "can't apply forward-mode autodiff (jvp) to a custom_vjp function.",
                s.loc, "define the function with s2s.custom_jvp to use forward mode",
            )
        try:
            rule = custom.rule_for_transform()
        except AttributeError as err:
            raise MissingRuleError(str(err), s.loc, "define its rule with @f.defjvp") from None
        name = bind_object(state.module, rule.__name__, checked_jvp(rule, rule.__name__),
                           f"{custom.__name__}_jvp")
        nondiff = [atom_text(a) for i, a in enumerate(s.args) if i in custom.nondiff_argnums]
        diff = [a for i, a in enumerate(s.args) if i not in custom.nondiff_argnums]
        for a in diff:
            state.settle(a, out)
        primals = tuple_text([atom_text(a) for a in diff])
        tangents = tuple_text([state.whole(a) for a in diff])
        dot = state.dot_name(s.target)
        out.append(Line(f"{s.target}, {dot} = {name}({', '.join(nondiff + [primals, tangents])})"))
        state.owned.add(dot)
        for path in leaf_paths(state.kind(s.target)):
            state.tan.setdefault(s.target, {})[path] = path_text(dot, path)
