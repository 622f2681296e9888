"""eval_shape: from a normalized function to the code that computes the shape and
dtype of each of its values from its arguments' shapes and dtypes, never their values.

Each array the function computes becomes a ``ShapeDtypeStruct`` built by its
primitive's shape rule (``primitives/shape_rules.py``)::

    # h = np.tanh(x @ w + b)
    x_at_w = ShapeDtypeStruct(matmul_shape(x.shape, w.shape), np.result_type(...))

Values known without the data stay concrete and are computed as written: constants,
shapes (``n = x.shape[0]``), what is computed from them.  An ``if`` or ``while`` on a
value that depends on the data is refused (as JAX's ``eval_shape`` refuses it); loops
over a known ``range`` run, each iteration's shapes computed in turn.
"""

from __future__ import annotations

from typing import Any

from ..emit.code import Block, Comment, Line, render_function
from ..errors import TransformError
from ..ir.kinds import LEAF, Seq, Tree
from ..ir.nodes import Break, Const, For, Function, If, Index, Let, Return, Slice, Var
from ..ir.spelling import atom_text
from ..ir.walk import param_atoms
from ..primitives import PRIMITIVES
from ..primitives.registry import KEYWORD_OPERANDS
from ..primitives.shape_rules import rule_for
from .analysis import facts
from .list_operands import per_call
from .module import Module, signature_text, stem
from .replay import Replay, by_field, spell, spell_buffers

# primitives evaluated as written when their operands are known (shapes, constants)
# except these, whose result may be large: their rule computes the shape instead
NEVER_RUN = {"zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like",
             "full_like", "arange", "linspace", "logspace", "geomspace", "eye",
             "identity", "tri", "indices", "tile", "repeat", "outer", "linalg.outer",
             "kron", "broadcast_to", "meshgrid", "pad", "resize", "diagflat", "vander",
             "tril_indices", "triu_indices", "diag_indices", "draw", "call", "kept"}
# what a rule computes about an abstract value that is known without the data
KNOWN_RESULTS = {"shape", "ndim", "size", "dtype", "len", "iscomplexobj", "isrealobj",
                 "is_", "is_not"}
# written as they are: containers of shape structs (and Python's own operators)
STRUCTURE = {"make_tuple", "make_list", "make_dict", "append", "pop", "identity"}
# Python's truth of an operand, which eval_shape does not have for an array
TRUTH = {"not_", "and_", "or_", "float", "int", "range", "reversed", "pyexpr"}


def emit_shapes(fn: Function, kinds: tuple, module: Module, name: str,
                known: tuple = (), kwonly_known: frozenset = frozenset()) -> str:
    """The shape code of ``fn`` for arguments of structures ``kinds``; ``known``
    gives, per argument, the leaf paths that hold values the code reads as they are
    (a bound method's numbers, as JAX closes over them), ``kwonly_known`` the
    keyword-only parameters that hold values (left at their defaults, or static);
    every other leaf is a ShapeDtypeStruct."""
    module.taken.add(name)
    module.taken |= fn.names.taken
    module.namespace.update(fn.namespace)
    fn = per_call(fn, kinds)
    shapes = _Shapes(fn, kinds, module)
    for p, paths in zip(fn.params, known):
        if () in paths:
            continue
        shapes.known_paths[p] = set(paths)
    text = shapes.build(name, tuple(() not in paths for paths in known) + (True,) * (
        len(fn.params) - len(known)), kwonly_known)
    module.functions.append(text)
    return name


class _Shapes:
    """One function's shape code, for a pattern of abstract (True) and known args."""

    def __init__(self, fn: Function, kinds: tuple, module: Module) -> None:
        self.fn, self.kinds, self.module = fn, kinds, module
        self.facts = facts(fn, kinds)
        self.replay = Replay(self.facts, effects=False)
        self.abstract: set[str] = set()
        self.items: dict[str, list[Any]] = {}  # a tuple or list built here -> its items
        # an argument container -> the paths of its leaves that are values, not shapes
        self.known_paths: dict[str, set[tuple]] = {}
        self.last_line: int | None = None

    # ---- what rules ask (primitives/shape_rules.py) -----------------------------------

    def text(self, atom: Any) -> str:
        return atom_text(atom)

    def is_abstract(self, atom: Any) -> bool:
        return isinstance(atom, Var) and atom.name in self.abstract

    def shape(self, atom: Any) -> str:
        if self.is_abstract(atom):
            return f"{atom.name}.shape"
        if isinstance(atom, Const) and not hasattr(atom.value, "shape") and not isinstance(
                atom.value, (tuple, list)):
            return "()"
        return f"np.shape({self.text(atom)})"

    def dtype(self, atom: Any) -> str:
        if self.is_abstract(atom):
            return f"{atom.name}.dtype"
        return f"np.result_type({self.text(atom)})"

    def scalar(self, atom: Any) -> str:
        return f"stand_in_0d({self.text(atom)})" if self.is_abstract(atom) or (
            isinstance(atom, Const) and hasattr(atom.value, "shape")) else self.text(atom)

    def op(self, s: Let, name: str) -> Any:
        """The atom passed for parameter ``name`` (None where left at its default)."""
        if name in s.params and name != KEYWORD_OPERANDS:
            return s.params[name]
        params = PRIMITIVES[s.prim].params
        keywords = s.params.get(KEYWORD_OPERANDS, ())
        if name in keywords:
            return s.args[len(s.args) - len(keywords) + list(keywords).index(name)]
        positional = s.args[: len(s.args) - len(keywords)]
        if name in params and params.index(name) < len(positional) and not any(
                p.startswith("*") for p in params[: params.index(name)]):
            return positional[params.index(name)]
        return None

    def operands(self, s: Let) -> list[Any]:
        return [a for a in list(s.args) + param_atoms(s) if isinstance(a, (Var, Const))]

    def call(self, s: Let, wrap: str, **replace: str) -> str:
        """The statement's NumPy call with each abstract operand in a ``wrap`` stand-in
        and the parameters ``replace`` names spelled so."""
        def spelled(atom: Any) -> str:
            if self.is_abstract(atom):
                return f"{wrap}({atom.name})"
            if wrap == "stand_in_0d" and isinstance(atom, Const) and hasattr(atom.value, "shape"):
                return f"stand_in_0d({atom.text})"
            return atom_text(atom)

        names = PRIMITIVES[s.prim].params
        keywords = s.params.get(KEYWORD_OPERANDS, ())
        args = [spelled(a) for a in s.args]
        params = {k: spelled(v) if isinstance(v, (Var, Const)) else atom_text(v)
                  for k, v in s.params.items() if k != KEYWORD_OPERANDS}
        if keywords:
            args, tail = args[: len(args) - len(keywords)], args[len(args) - len(keywords):]
            params.update(zip(keywords, tail))
        for key, text in replace.items():
            at = names.index(key) if key in names else len(args)
            if at < len(args) and not any(p.startswith("*") for p in names[:at]):
                args[at] = text
            else:
                params[key] = text
        return PRIMITIVES[s.prim].spelling(args, params)

    def index(self, index: Index) -> str:
        parts = []
        for item in index.items:
            if isinstance(item, Slice):
                bounds = [atom_text(a) if a is not None else "None"
                          for a in (item.lower, item.upper, item.step)]
                parts.append(f"slice({', '.join(bounds)})")
            else:
                parts.append(atom_text(item))
        return f"({', '.join(parts)}{',' if len(parts) == 1 else ''})"

    def refuse(self, s: Any, what: str, hint: str) -> None:
        raise TransformError(f"eval_shape: {what}", s.loc, hint).with_func(self.fn.name)

    # ---- the function -----------------------------------------------------------------

    def build(self, name: str, pattern: tuple, kwonly_known: frozenset = frozenset()) -> str:
        for p, abstract in zip(self.fn.params, pattern):
            if abstract:
                self.abstract.add(p)
        self.abstract |= set(self.fn.kwonly) - kwonly_known
        body: list[Any] = []
        self.block(self.fn.body, body)
        body = spell_buffers(body, self.fn.aliases)
        return render_function(name, signature_text(self.fn, self.fn.params, False,
                                                    self.module), body)

    def block(self, stmts: list[Any], out: list[Any]) -> None:
        for s in stmts:
            line = getattr(getattr(s, "loc", None), "line", None)
            if line is not None and line != self.last_line and not isinstance(s, Return):
                self.last_line = line
                out.append(Comment(s.loc.text.strip()))
            if isinstance(s, Let):
                self.let(s, out)
            elif isinstance(s, If):
                self.if_(s, out)
            elif isinstance(s, For):
                self.for_(s, out)
            elif isinstance(s, Break):
                out += self.replay.statements([s])
            elif isinstance(s, Return):
                out.append(Line(f"return {atom_text(s.value)}", keep=True))

    def let(self, s: Let, out: list[Any]) -> None:
        operands = self.operands(s)
        abstract = [a for a in operands if self.is_abstract(a)]
        if s.prim in ("make_tuple", "make_list"):
            self.items[s.target] = list(s.args)
        if s.prim == "kept":
            return  # (assert, print: run with values, which eval_shape does not have)
        if s.prim == "draw":
            self.refuse(s, "a random draw: eval_shape does not draw (it would move "
                           "NumPy's random state)", "pass the draws in as an argument")
        if s.prim == "call":
            out.append(Line(f"{s.target} = {self.callee(s)}"))
            return
        if s.prim in ("setitem", "add_at"):
            if not self.is_abstract(s.args[0]):
                self.refuse(s, "a write into an array known without the data",
                            "build the array from the arguments")
            out.append(Line(f"{s.target} = {atom_text(s.args[0])}"))
            self.abstract.add(s.target)
            return
        if s.prim == "getitem" and not self._array(s.args[0]):
            out.append(Line(f"{s.target} = {spell(by_field(s, self.facts))}"))
            if self._item_abstract(s) and not self._item_known(s):
                self.abstract.add(s.target)
            return
        if s.prim in STRUCTURE or (not abstract and s.prim not in NEVER_RUN):
            text = spell(s)
            if s.prim in ("append", "pop"):
                out.append(Line(text, keep=True))
                if s.prim == "append" and self.is_abstract(s.args[1]):
                    self.abstract.add(s.target)
                if s.prim == "pop" and self.is_abstract(s.args[0]):
                    self.abstract.add(s.target)
                return
            out.append(Line(f"{s.target} = {text}"))
            if abstract:
                self.abstract.add(s.target)
            return
        if s.prim in TRUTH:
            self.refuse(s, "this needs the value of an array (its truth, or a number "
                           "from it), which eval_shape does not have: it has only "
                           "shapes and dtypes", "compute the value outside the function "
                           "and pass its shape, or use np.where for a choice")
        rule = rule_for(s.prim)
        if rule is not None:
            text = rule(self, s)
        else:  # no rule: NumPy on small stand-ins (runtime_shapes.small_stand_in)
            text = f"struct_of({self.call(s, 'small_stand_in')})"
        out.append(Line(f"{s.target} = {text}"))
        if s.prim not in KNOWN_RESULTS:
            self.abstract.add(s.target)

    def _array(self, atom: Any) -> bool:
        """Is ``atom`` an array (not a tuple, list or dict the function holds)?"""
        if not isinstance(atom, Var):
            return not isinstance(getattr(atom, "value", None), (tuple, list, dict))
        if atom.name in self.items:
            return False
        kind = self.facts.kinds.get(atom.name)
        return not isinstance(kind, (Seq, Tree))

    def _item_abstract(self, s: Let) -> bool:
        base = s.args[0]
        items = self.items.get(base.name) if isinstance(base, Var) else None
        index = s.params.get("index")
        if items is not None and isinstance(index, Index) and len(index.items) == 1 and \
                isinstance(index.items[0], Const) and isinstance(index.items[0].value, int):
            try:
                return self.is_abstract(items[index.items[0].value])
            except IndexError:
                pass
        return self.is_abstract(base)

    def _item_known(self, s: Let) -> bool:
        """Is the item a value the call passed (a bound method's number)?  An item
        holding some such values hands their paths on."""
        base = s.args[0]
        paths = self.known_paths.get(base.name) if isinstance(base, Var) else None
        index = s.params.get("index")
        if not paths or not isinstance(index, Index) or len(index.items) != 1 or \
                not isinstance(index.items[0], Const):
            return False
        key = index.items[0].value
        inner = {p[1:] for p in paths if p[:1] == (key,)}
        if () in inner:
            return True
        if inner:
            self.known_paths[s.target] = inner
        return False

    def if_(self, s: If, out: list[Any]) -> None:
        if self.is_abstract(s.test):
            self.refuse(s, "an `if` on a value computed from the arguments: eval_shape "
                           "has their shapes and dtypes, not their values (JAX's "
                           "eval_shape refuses it too)",
                        "choose with np.where(test, a, b), or decide on a shape "
                        "(`if x.shape[0] > 1:`)")
        branches = []
        for branch in (s.body, s.orelse):
            items: list[Any] = []
            self.block(branch, items)
            branches.append(items)
        out.append(Block(f"if {atom_text(s.test)}:", *branches))

    def for_(self, s: For, out: list[Any]) -> None:
        if s.test is not None and self.is_abstract(s.test):
            self.refuse(s, "a `while` whose test is computed from the arguments' values",
                        "loop a number of times known from shapes or constants")
        while True:  # a carried value is abstract if any iteration makes it so
            before = set(self.abstract)
            for entry, exit_ in s.carried:
                if exit_ in self.abstract:
                    self.abstract.add(entry)
            body: list[Any] = []
            self.block(s.body, body)
            if all(exit_ not in self.abstract or entry in self.abstract
                   for entry, exit_ in s.carried) and self.abstract >= before:
                break
        body += [Line(f"{entry} = {exit_}") for entry, exit_ in s.carried]
        if s.test is None:
            out.append(Block(f"for {s.target} in {self.replay.range_text(s)}:", body, []))
        else:
            out.append(Block(f"while {atom_text(s.test)}:", body, []))

    def callee(self, s: Let) -> str:
        """The call of the callee's own shape code (emitted once per pattern of
        abstract and known arguments)."""
        callee = s.params["callee"]
        pattern = tuple(self.is_abstract(a) for a in s.args)
        key = ("eval_shape", id(callee), pattern)
        name = self.module.names.get(key)
        if name is None:
            name = f"{stem(callee)}_eval_shape"
            i = 2
            while name in self.module.taken:
                name, i = f"{stem(callee)}_eval_shape_{i}", i + 1
            self.module.names[key] = name
            self.module.taken.add(name)
            self.module.namespace.update(callee.namespace)
            kinds = tuple(self.facts.kinds.get(a.name) if isinstance(a, Var) else None
                          for a in s.args)
            kinds = tuple(k if k is not None else LEAF for k in kinds)
            inner = per_call(callee, kinds)
            self.module.functions.append(_Shapes(inner, kinds, self.module).build(
                name, pattern))
        self.abstract.add(s.target)
        return f"{name}({', '.join(atom_text(a) for a in s.args)})"
