"""A callee as vmap batches it for one call's constant arguments: its tests of a
parameter against ``None`` decided.

``def h(t, k=None): if k is None: k = t * 2.0`` called as ``h(x)`` and as
``h(x, 3.0)``: which path each call takes is known when s2s transforms the caller (a
constant, ``None`` or not, is passed), as JAX knows it (``None`` is a pytree with no
leaves; a Python number is not ``None``).  Left as an ``if``, vmap would batch both
paths with the ranks of the one its probe took, and refuse the ``if`` whose paths
bind values of different ranks (``k`` a scalar on one, an array on the other); each
call gets its own batched callee instead, with the decided ``if``'s path in its
place.  A nested function's default that is not a literal is read the same way
(``frontend/defaults.py``: ``(k_default if k is None else k)``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..ir.nodes import Const, For, Function, If, Let, Stmt, Var, walk

# (callee, which parameters are None) -> (the callee, its version): one object per
# pattern, so that vmap's key (the callee's id) names one batched version
_MEMO: dict[tuple, tuple[Function, Function]] = {}


def with_constant_tests(callee: Function, args: tuple) -> Function:
    """``callee`` with each ``p is None`` / ``p is not None`` of a parameter given a
    literal constant here (``args``: the call's atoms) decided, each ``if`` on such a
    test replaced by its path, and the constant passed on as itself where the callee
    calls another function with it (an adapter calling the function it adapts);
    ``callee`` itself where there is none."""
    rebound = {s.target for s in walk(callee.body) if isinstance(s, Let)} | {
        e for s in walk(callee.body) if isinstance(s, For) for pair in s.carried for e in pair}
    consts = {p: a for p, a in zip(callee.params, args) if isinstance(a, Const)
              and _literal(a) and p not in rebound}
    if not consts:
        return callee
    nones = {p: a.value is None for p, a in consts.items()}
    tests = {s.target: _decided(s, nones) for s in walk(callee.body) if isinstance(s, Let)}
    tests = {k: v for k, v in tests.items() if v is not None}
    if not any(isinstance(s, If) and isinstance(s.test, Var) and s.test.name in tests
               for s in walk(callee.body)):
        tests = {}
    passed = {a.name for s in walk(callee.body) if isinstance(s, Let) and s.prim == "call"
              for a in s.args if isinstance(a, Var) and a.name in consts}
    if not tests and not passed:
        return callee
    key = (id(callee), tuple(sorted(tests.items())),
           tuple((p, type(consts[p].value), consts[p].text) for p in sorted(passed)))
    hit = _MEMO.get(key)
    if hit is not None and hit[0] is callee:
        return hit[1]
    version = replace(callee, body=_folded(callee.body, tests,
                                           {p: consts[p] for p in passed}))
    _MEMO[key] = (callee, version)
    return version


def _literal(a: Const) -> bool:
    """A constant written as its value (``None``, ``3.0``), not a name of the caller's
    (which the callee's module may not bind)."""
    return type(a.value) in (type(None), bool, int, float, complex, str) and (
        a.text == repr(a.value))


def _decided(s: Let, nones: dict[str, bool]) -> bool | None:
    """The value of ``p is None`` (``is not``) for a parameter ``p`` in ``nones``."""
    if s.prim not in ("is_", "is_not") or len(s.args) != 2:
        return None
    a, b = s.args
    if isinstance(a, Const) and isinstance(b, Var):
        a, b = b, a
    if not (isinstance(a, Var) and a.name in nones and isinstance(b, Const)
            and b.value is None):
        return None
    return nones[a.name] if s.prim == "is_" else not nones[a.name]


def _folded(stmts: list[Stmt], tests: dict[str, bool], passed: dict[str, Const]
            ) -> list[Stmt]:
    out: list[Stmt] = []
    for s in stmts:
        if isinstance(s, If):
            if isinstance(s.test, Var) and s.test.name in tests:
                out += _folded(s.body if tests[s.test.name] else s.orelse, tests, passed)
                continue
            s = replace(s, body=_folded(s.body, tests, passed),
                        orelse=_folded(s.orelse, tests, passed))
        elif isinstance(s, For):
            s = replace(s, body=_folded(s.body, tests, passed))
        elif isinstance(s, Let) and s.target in tests:  # (the test itself: its value)
            value = tests[s.target]
            s = replace(s, prim="identity", args=(Const(value, repr(value)),), params={})
        elif isinstance(s, Let) and s.prim == "call":
            s = replace(s, args=tuple(passed.get(a.name, a) if isinstance(a, Var) else a
                                      for a in s.args))
        out.append(s)
    return out


__all__: list[Any] = ["with_constant_tests"]
