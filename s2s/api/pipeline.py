"""The pipeline on one screen: the stages that turn a user's function into the code a
transform runs, each a call into the floor that owns it.

    lower       parse: source → libcst, checked against the code   frontend/source.py
                desugar: returns out of loops, jumps hoisted (CST)  frontend/desugar.py
                normalize: names resolved, A-normal SSA IR          frontend/normalize.py
                memory check: aliasing and in-place writes (IR)     ir/memory.py
    transform   unroll: container loops, per call structure         ir/unroll.py
                analyse: kinds, producers, activity (Facts)         transforms/analysis.py
                emit: the transform's statements, one dispatcher    transforms/base.py
    format      imports header + render → black → output invariants  emit/
    compile     the module run in a linecache-registered namespace   emit/
    specialize  on a later call with one signature: the code for it optimize/

``Transformed`` (grad, value_and_grad, vjp, jvp) runs them in this order, caching the
text and the compiled function per call structure; vmap and the jacobians run the same
stages with their own transforms (``emit_vmap``, the jacobian loops).  Each transform's
entry (``emit_reverse``, ``emit_forward``, ``emit_vmap``) unrolls and analyses the IR
for the call structure it is given, so ``transform`` below hands it the lowered IR.
"""

from __future__ import annotations

import re
from typing import Any, Callable

import numpy as np

from .. import runtime
from ..emit.code import compile_module, format_module
from ..ir.nodes import Function
from ..transforms.module import Module
from . import records

__all__ = ["lower", "transform", "format_emitted", "compile_emitted", "header"]


def lower(fn: Callable, fresh: bool = False) -> Function:
    """The user's function as IR (parsed, desugared, names resolved, normalized;
    ``fresh`` normalizes again, callees included).  The frontend, and libcst with it,
    loads on the first call: ``import s2s`` does not pay for the parser."""
    from ..frontend.normalize import normalize

    records.install_frontend_hooks()
    return normalize(fn, fresh=fresh)


def transform(ir: Function, emit: Callable[[Function, Module], None]) -> Module:
    """The transform's emitted functions: ``emit`` (``emit_reverse``, ``emit_forward``
    with their spec bound) fills a fresh module from the IR."""
    module = Module()
    emit(ir, module)
    return module


def format_emitted(module: Module) -> str:
    """The module's text: the imports its code needs, then its functions, formatted by
    black and checked (compiles, re-parses, black-stable)."""
    body = "\n\n".join(module.functions)
    return format_module(header(body) + body)


def compile_emitted(text: str, name: str, namespace: dict[str, Any]) -> Callable:
    """The function ``name`` of the emitted text, run with NumPy, s2s's runtime helpers
    and the objects the emitted code names (``namespace``)."""
    ns = {"np": np, **{k: getattr(runtime, k) for k in runtime.__all__}}
    ns.update(namespace)
    return compile_module(text, ns, name)[name]


_CALLED = re.compile(r"\b(\w+)\(")


def header(body: str) -> str:
    """``import numpy as np``, and the runtime helpers the body calls."""
    # (one pass over the body for every name called in it: a search per helper took
    # seconds on a long emitted module)
    called = set(_CALLED.findall(body))
    used = [name for name in runtime.__all__ if name in called]
    lines = ["import numpy as np"]
    if used:
        lines.append(f"from s2s.runtime import {', '.join(used)}")
    return "\n".join(lines) + "\n\n\n"
