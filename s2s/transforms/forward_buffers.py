"""Forward mode's writes in place and lists: the tangent's buffer changes with the
value's.

``y[i] = v`` writes ``v``'s tangent into ``y``'s tangent buffer (``y_dot[i] =
v_dot``), ``ys.append(v)`` appends ``v_dot`` to ``ys_dot`` (a list of known length
gets a slot instead), ``ys.pop()`` pops it, and an item of a list grown in a loop
reads its tangent from the tangent list.
"""

from __future__ import annotations

from typing import Any

from ..emit.code import Line
from ..ir.kinds import Seq, Tree, leaf_paths, path_text
from ..ir.nodes import Let, Var
from ..ir.spelling import atom_text
from .forward_state import ForwardState


class Buffers:
    """The tangents of the writes in place and list operations of one forward pass."""

    def __init__(self, state: ForwardState) -> None:
        self.state = state

    def pop(self, s: Let, out: list[Any]) -> None:
        """The tangent list loses its last item too."""
        state = self.state
        base = state.kind(s.args[0].name)
        if isinstance(base, Tree):  # (a list of known length: its items' tangents
            last = len(base.keys) - 1  # but the last one's)
            kept = {path: text for path, text in state.tan.get(s.args[0].name, {}).items()
                    if path and path[0] != last}
            if kept:
                state.tan[s.target] = kept
            return
        current = state.tan.get(s.args[0].name, {}).get(())
        if current is not None:
            out.append(Line(f"{current}.pop()", keep=True))
            state.tan[s.target] = {(): current}

    def seq_item(self, s: Let, out: list[Any]) -> bool:
        """An item of a list grown in a loop: its tangents."""
        state = self.state
        if not isinstance(s.args[0], Var) or not isinstance(state.kind(s.args[0].name), Seq):
            return False  # (a constant's item, `W[k]`: getitem's rule)
        current = state.tan.get(s.args[0].name, {}).get(())
        if current is not None:
            index = atom_text(s.params["index"])
            name = state.dot_name(s.target)
            out.append(Line(f"{name} = {current}[{index}]"))
            for path in leaf_paths(state.kind(s.target)):
                state.tan.setdefault(s.target, {})[path] = path_text(name, path)
        return True

    def setitem(self, s: Let, out: list[Any]) -> None:
        """``y[i] = v``: the tangent buffer gets ``v``'s tangent (or 0) at ``i``."""
        state = self.state
        if s.target not in state.facts.active:
            return
        base, value = s.args
        state.settle(base, out)
        state.settle(value, out)
        if isinstance(state.kind(s.target), Seq):
            self._list_item(s, out)
            return
        name = state.buffer_name(s.target)
        current = state.tan.get(base.name, {}).get(()) if isinstance(base, Var) else None
        if current is None:
            out.append(Line(f"{name} = np.zeros_like({atom_text(base)})"))
        elif current != name or name not in state.owned:
            out.append(Line(f"{name} = np.copy({current})"))
        state.owned.add(name)
        index = atom_text(s.params["index"])
        written = state.whole(value) if state.is_active(value) else "0.0"
        out.append(Line(f"{name}[{index}] = {written}", keep=True))
        state.tan[s.target] = {(): name}

    def _list_item(self, s: Let, out: list[Any]) -> None:
        """``ys[k] = v`` into a list grown in a loop: the tangent list's item too."""
        state = self.state
        base, value = s.args
        name = state.buffer_name(s.target)
        current = state.tan.get(base.name, {}).get(())
        if current is None:  # (the primal write ran already: the list's length)
            out.append(Line(f"{name} = zeros_list({base.name})"))
        elif current != name or name not in state.owned:
            out.append(Line(f"{name} = list({current})"))
        state.owned.add(name)
        out.append(Line(f"{name}[{atom_text(s.params['index'])}] = {state.whole(value)}",
                        keep=True))
        state.tan[s.target] = {(): name}

    def append(self, s: Let, out: list[Any]) -> None:
        """``ys.append(v)``: a list of known length gets a slot; a grown one a list."""
        state = self.state
        if s.target not in state.facts.active:
            return
        base, item = s.args
        state.settle(base, out)
        state.settle(item, out)
        kind = state.kind(s.target)
        if isinstance(kind, Tree):
            n = len(kind.keys) - 1
            for path, text in state.tan.get(base.name, {}).items():
                state.tan.setdefault(s.target, {})[path] = text
            if state.is_active(item):
                for path, text in state.tan.get(item.name, {}).items():
                    state.tan.setdefault(s.target, {})[(n,) + path] = text
            return
        name = state.buffer_name(s.target)
        current = state.tan.get(base.name, {}).get(())
        if current is None and isinstance(state.kind(base.name), Tree):
            # a list of known length grown from here on (the other path of an `if`
            # grows it in a loop): its items' tangents, as a list
            out.append(Line(f"{name} = {state.whole(base)}"))
        elif current is None:
            # (the primal append ran already: zeros for the items before it)
            zeros = state.zeros(base.name)
            if zeros.startswith("zeros_list("):
                zeros = f"zeros_list({base.name}[:-1])"
            out.append(Line(f"{name} = {zeros}"))
        elif current != name or name not in state.owned:
            out.append(Line(f"{name} = list({current})"))
        state.owned.add(name)
        out.append(Line(f"{name}.append({state.whole(item)})", keep=True))
        state.tan[s.target] = {(): name}
