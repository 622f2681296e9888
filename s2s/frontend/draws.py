"""Random draws: ``np.random.normal(size=x.shape)``, ``np.random.rand(3)``,
``rng = np.random.default_rng(seed)`` then ``rng.normal(...)``, a method of a module's
generator (``RNG.uniform()``) or of a generator passed as an argument, and a
``scipy.stats`` distribution's ``rvs`` (``norm.rvs(loc, size=3)``, ``d.rvs(size=3)``
of ``d = norm(loc, scale)`` frozen in the function or at module level).

Each becomes one ``draw`` statement: the call as written, over its arguments lowered
as values (``x.shape`` is a shape read), run once per call in the forward computation,
as NumPy runs it; its value has no derivative (the gradient is the one with the draws
passed in as arguments).  The transforms never run it a second time: where they would
(a callee's VJP, a checkpointed loop's recomputation) they refuse it, located here.
"""

from __future__ import annotations

from typing import Any

import libcst as cst
import numpy as np

from ..errors import TransformError, UnsupportedCallError
from ..ir.nodes import Atom, Const, Var

# what makes a generator: its draws are methods of the value it returns
MAKERS = (np.random.default_rng, np.random.Generator, np.random.RandomState)
# methods that draw, of a generator: NumPy's own list, as the Generator class has them
# (and a RandomState's: `rs.randn(3)`, `rs.rand()`, `rs.randint(...)`, `rs.random_sample()`)
DRAWS = frozenset(name for cls in (np.random.Generator, np.random.RandomState)
                  for name in dir(cls) if not name.startswith("_") and callable(
                      getattr(cls, name))) - {"bit_generator", "spawn", "get_state",
                                              "set_state"}
# they change their argument in place: the array would differ from the one s2s read
IN_PLACE = frozenset({"shuffle"})


def is_draw(obj: Any) -> bool:
    """Is ``obj`` (what a call's function resolved to) a draw or a generator's maker:
    ``np.random.normal`` (a method of NumPy's global generator), a module generator's
    method, ``np.random.default_rng``, ``np.random.seed``?"""
    owner = getattr(obj, "__self__", None)
    if isinstance(owner, (np.random.RandomState, np.random.Generator)):
        return True
    if getattr(obj, "__name__", None) == "rvs" and str(  # scipy.stats: norm.rvs, D.rvs
            getattr(type(owner), "__module__", "")).startswith("scipy.stats"):
        return True
    return obj is np.random.seed or any(obj is m for m in MAKERS)


class DrawLowerer:
    """Lowers the random draws of one function into its Normalizer's output."""

    def __init__(self, n: Any) -> None:
        self.n = n  # the Normalizer: output, names, resolver, expressions
        self.generators: set[str] = set()  # names bound to a generator made here
        self.params: set[str] = set()  # the function's parameters (a generator passed in)

    def statement(self, node: cst.Expr) -> bool:
        """A draw as a statement of its own (``np.random.seed(0)``, a draw whose value
        is not used): kept, run once per call."""
        call = node.value
        if not isinstance(call, cst.Call):
            return False
        if isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Name) \
                and call.func.value.value in self.n.local_names:
            base = self.n.exprs.expr(call.func.value)
            if not self.is_generator_method(base, call.func.attr.value):
                return False
            self.method(call, base, call.func.attr.value, None)
            return True
        try:
            obj, _ = self.n.resolver.resolve_dotted(call.func)
        except TransformError:
            return False
        if not is_draw(obj):
            return False
        self.call(call, None, obj)
        return True

    def is_generator_method(self, base: Atom, method: str) -> bool:
        """``rng.normal`` for a generator made in the function or passed in (a
        parameter: an array has no such method)."""
        if method == "rvs" and isinstance(base, Var) and getattr(  # d = norm(loc, scale)
                self.n.lets.get(base.name), "prim", None) == "stats_frozen":
            return True
        if not isinstance(base, Var) or method not in DRAWS:
            return False
        return base.name in self.generators or base.name in self.params

    def call(self, node: cst.Call, target: str | None, obj: Any = None) -> Atom:
        """``np.random.normal(...)``, ``np.random.default_rng(0)``: one draw."""
        func = node.func
        method = getattr(obj, "__name__", "") or ""
        root = func
        while isinstance(root, cst.Attribute):
            root = root.value
        if isinstance(root, cst.Name):
            self.n.resolver.bind_namespace(root.value, root)
        func_text = cst.Module([]).code_for_node(func)
        maker = any(obj is m for m in MAKERS)
        return self._emit(node, target, func_text, method, [], maker)

    def method(self, node: cst.Call, base: Atom, method: str,
               target: str | None) -> Atom:
        """``rng.normal(...)`` on a generator made here or passed in."""
        return self._emit(node, target, "{0}." + method, method, [base], False)

    def _emit(self, node: cst.Call, target: str | None, func_text: str, method: str,
              head: list[Atom], maker: bool) -> Atom:
        n = self.n
        if method in IN_PLACE:
            raise UnsupportedCallError(
                f"`{method}` shuffles its argument in place, and s2s never writes into "
                "the arrays it reads", n.loc(node),
                "draw a shuffled copy: `y = rng.permutation(x)` "
                "(or `np.random.permutation(x)`)", n.display)
        operands: list[Atom] = []
        keys: list[str] = []

        def text_of(atom: Atom) -> str:
            if isinstance(atom, Const):
                return atom.text
            if atom in operands:
                return keys[operands.index(atom)]
            keys.append(f"__s2s_operand_{len(operands)}__")
            operands.append(atom)
            return keys[-1]

        func = func_text.format(*[text_of(a) for a in head])
        parts: list[tuple[str | None, str]] = []
        for arg in node.args:
            if arg.star == "**":
                raise n.unsupported(arg, "a draw's arguments spread with `**`",
                                    "pass them one by one")
            atom = n.exprs.expr(arg.value)  # (`rs.randn(*x.shape)`: spread as written)
            parts.append((arg.keyword.value if arg.keyword else None,
                          arg.star + text_of(atom)))
        params = {"func": func, "parts": tuple(parts), "keys": tuple(keys),
                  "method": method, "maker": maker}
        name = n.exprs.target(target, "rng" if maker else method or "draw")
        out = n.emit(name, "draw", tuple(operands), params, node)
        if maker:
            self.generators.add(out.name)
        return out
