"""A ``try`` around Python code that computes no array, kept as Python::

    try:
        n = int(CONFIG["n"])
    except KeyError:
        n = 3

becomes one statement of Python, run once per call in the forward computation (as
kept statements are) and carrying no derivative::

    n = kept_try(lambda: int(CONFIG["n"]), (KeyError, lambda: 3))

``kept_try`` (bound where the code runs) calls the body, and on an exception the
first handler whose classes match, as Python does (a bare ``except:`` matches any),
re-raising where none does.  Kept only where the body and each handler assign one
and the same name from expressions that read no value of the function (module
constants, literals, builtins: nothing a derivative could flow through) and there is
no ``else``, ``finally`` or ``except ... as``; any other ``try`` is refused at its
line, a ``try`` around array code saying so.

A dict parameter's item read by a string literal (``cfg["n"]``) is no array code: it
may be read in a kept ``try`` (the transforms refuse it where ``cfg`` carries a
derivative or a batch axis, as any kept Python).  Where the transform is made per the
dict's keys (a dict default, ``api/callables.py``), a ``try`` whose body is only the
lookup (``scale = cfg["scale"]``, ``n = int(cfg["n"])``) is decided now when the key
is missing (the ``except`` that catches KeyError runs, as code of its own) and, for a
bare lookup, when it is there (the body, as code of its own: its derivative flows).
"""

from __future__ import annotations

import builtins
from typing import Any

import libcst as cst

from .source import literal_value


def kept_try(body: Any, *handlers: Any) -> Any:
    """``body()``, or on an exception the first ``(classes, handler)`` matching it."""
    try:
        return body()
    except BaseException as exc:  # noqa: BLE001 - matched against the user's handlers
        for classes, handler in handlers:
            if isinstance(exc, classes):
                return handler()
        raise


def _assigned(n: Any, block: Any, where: Any) -> tuple[str, Any]:
    """``(name, value)`` of a block that is one ``name = value``, else refused."""
    body = block.body if isinstance(block, cst.IndentedBlock) else [block]
    smalls = [s for line in body for s in (
        line.body if isinstance(line, cst.SimpleStatementLine) else [line])]
    if len(smalls) != 1 or not isinstance(smalls[0], cst.Assign) or len(
            smalls[0].targets) != 1 or not isinstance(smalls[0].targets[0].target, cst.Name):
        raise n.unsupported(where, "s2s keeps a `try` as Python only where its body and "
                            "each `except` assign one name (`n = int(cfg[\"n\"])`)",
                            "compute the value before the function and pass it in, or "
                            "test with `if` (`n = int(cfg[\"n\"]) if \"n\" in cfg else 3`)")
    return smalls[0].targets[0].target.value, smalls[0].value


_CONVERSIONS = (int, float, str, bool)


def _keyed_read(n: Any, node: Any) -> tuple[str, str] | None:
    """``(name, key)`` for ``cfg["k"]``, a string literal key read from a parameter
    the function has not rebound (a dict's item: no array code)."""
    if not (isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and len(
            node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) and isinstance(
            node.slice[0].slice.value, cst.SimpleString)):
        return None
    name = node.value.value
    if name not in getattr(n, "arguments", ()) or n.env.get(name) != name:
        return None
    key = literal_value(node.slice[0].slice.value.value)
    return (name, key) if isinstance(key, str) else None


def _reads_local(n: Any, value: Any) -> str | None:
    found: list[str] = []

    class Names(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            if node.value in n.local_names and not found:
                found.append(node.value)

        def visit_Subscript(self, node: cst.Subscript) -> bool:
            return _keyed_read(n, node) is None  # (`cfg["n"]`: a dict's item)

        def visit_Attribute(self, node: cst.Attribute) -> bool:
            node.value.visit(self)  # (`cfg.n`: only the object's name is a read)
            return False

    value.visit(Names())
    return found[0] if found else None


def _caught(n: Any, handler: cst.ExceptHandler) -> tuple | None:
    """The classes an ``except`` names, where they are Python's own exceptions (not
    shadowed), else None; a bare ``except:`` catches BaseException."""
    parts = [] if handler.type is None else handler.type.elements if isinstance(
        handler.type, cst.Tuple) else [cst.Element(handler.type)]
    classes = []
    for part in parts:
        node = part.value
        cls = getattr(builtins, node.value, None) if isinstance(node, cst.Name) else None
        if not (isinstance(cls, type) and issubclass(cls, BaseException)) or node.value in (
                n.local_names) or node.value in n.fn.__globals__:
            return None
        classes.append(cls)
    return tuple(classes) or (BaseException,)


def decided_try(n: Any, node: cst.Try) -> list[Any] | None:
    """The statements a ``try`` runs, where that is known now (module docstring): its
    body is one ``name = cfg["k"]`` (or ``int(...)``, ``float``, ``str``, ``bool`` of
    it), with no ``else``, ``finally`` or ``except ... as``, and ``cfg``'s keys are
    what this transform is made for.  Without ``"k"`` the lookup raises KeyError
    before anything else runs: the first ``except`` catching it (None where an
    ``except`` before it names classes not Python's own; the body itself where none
    catches it: the lookup is then refused, located, as outside a ``try``).  With it, a
    bare lookup cannot raise: the body."""
    if node.orelse is not None or node.finalbody is not None or not node.handlers or any(
            h.name is not None for h in node.handlers):
        return None
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else []
    small = body[0].body if len(body) == 1 and isinstance(
        body[0], cst.SimpleStatementLine) else []
    if len(small) != 1 or not isinstance(small[0], cst.Assign):
        return None
    value, bare = small[0].value, True
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and len(
            value.args) == 1 and value.args[0].keyword is None and not value.args[0].star and (
            getattr(builtins, value.func.value, None) in _CONVERSIONS) and (
            value.func.value not in n.local_names) and value.func.value not in n.fn.__globals__:
        value, bare = value.args[0].value, False
    read = _keyed_read(n, value)
    keys = n.dicts.known(n.env.get(read[0])) if read is not None else None
    if keys is None:
        return None
    if read[1] in keys:
        return list(body) if bare else None
    for h in node.handlers:
        caught = _caught(n, h)
        if caught is None:
            return None
        if issubclass(KeyError, caught):
            return list(h.body.body) if isinstance(h.body, cst.IndentedBlock) else [h.body]
    return list(body)


def lower_kept_try(n: Any, node: cst.Try) -> None:
    """A ``try`` statement lowered by the Normalizer ``n`` (module docstring)."""
    if node.orelse is not None or node.finalbody is not None or not node.handlers or any(
            h.name is not None for h in node.handlers):
        raise n.unsupported(node, "s2s keeps a `try` as Python only with `except` "
                            "clauses and no `else`, `finally` or `except ... as`",
                            "compute the value before the function and pass it in")
    name, value = _assigned(n, node.body, node)
    blocks = [(h, *_assigned(n, h.body, h)) for h in node.handlers]
    for h, other, _ in blocks:
        if other != name:
            raise n.unsupported(h, f"this `except` assigns `{other}`, the `try` `{name}`: "
                                "s2s keeps a `try` as Python only where each part assigns "
                                "the same name", f"assign `{name}` in each part")
    for part in [value] + [v for _, _, v in blocks] + [h.type for h in node.handlers
                                                        if h.type is not None]:
        local = _reads_local(n, part)
        if local is not None:
            raise n.unsupported(node, f"a `try` around code that reads `{local}`, a value "
                                "of the function: an exception has no derivative, so s2s "
                                "keeps a `try` only around code reading module constants "
                                "and literals", "check the condition with `if` (or "
                                "`np.where`), or catch the error outside the function")
    helper = n.names.fresh("kept_try")
    n.resolver.namespace[helper] = kept_try

    def thunk(v: Any) -> cst.Lambda:
        return cst.Lambda(cst.Parameters(), v)

    args = [cst.Arg(thunk(value))]
    for h, _, v in blocks:
        caught = h.type if h.type is not None else cst.Name("BaseException")
        args.append(cst.Arg(cst.Tuple([cst.Element(caught), cst.Element(thunk(v))])))
    call = cst.Call(cst.Name(helper), args)
    n.desugar.alias_tree(call, node)
    atom = n.calls.python_expression(call, n.names.fresh(name), name, values=True)
    n._bind(name, atom.name)
