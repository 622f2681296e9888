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
"""

from __future__ import annotations

from typing import Any

import libcst as cst


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


def _reads_local(n: Any, value: Any) -> str | None:
    found: list[str] = []

    class Names(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            if node.value in n.local_names and not found:
                found.append(node.value)

        def visit_Attribute(self, node: cst.Attribute) -> bool:
            node.value.visit(self)  # (`cfg.n`: only the object's name is a read)
            return False

    value.visit(Names())
    return found[0] if found else None


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
    atom = n.calls.python_expression(call, n.names.fresh(name), name)
    n._bind(name, atom.name)
