"""Walks over IR statements that several transforms share (one copy each).

``all_*`` functions look into every nested block; ``block_defs`` and ``loop_breaks``
stay at one block's level, as their docstrings say.
"""

from __future__ import annotations

from .nodes import Break, For, If, Let, Stmt, atoms_in, uses, walk


def depending(body: list[Stmt], sources: set[str]) -> set[str]:
    """Names in ``body`` whose values may depend on those named ``sources``."""
    found = set(sources)

    def visit(stmts: list[Stmt]) -> None:
        for s in stmts:
            if isinstance(s, Let):
                if any(v in found for v in uses(s)):
                    found.add(s.target)
            elif isinstance(s, If):
                visit(s.body)
                visit(s.orelse)
            elif isinstance(s, For):
                while True:  # a carried value feeds the next iteration
                    before = len(found)
                    visit(s.body)
                    found.update(e for e, x in s.carried if x in found)
                    if len(found) == before:
                        break
            elif isinstance(s, Break):
                found.update(e for e, x in s.copies if x in found)

    if sources:
        visit(body)
    return found


def loop_breaks(stmts: list[Stmt]) -> list[Break]:
    """The breaks that leave the loop whose body this is (not nested loops')."""
    out: list[Break] = []
    for s in stmts:
        if isinstance(s, Break):
            out.append(s)
        elif isinstance(s, If):
            out += loop_breaks(s.body) + loop_breaks(s.orelse)
    return out


def loop_counter(s: For) -> str | None:
    """The name counting a loop's iterations, when the backward needs the count."""
    return s.target if s.test is not None else s.counter


def all_fors(stmts: list[Stmt]) -> list[For]:
    out: list[For] = []
    for s in stmts:
        if isinstance(s, For):
            out.append(s)
            out += all_fors(s.body)
        elif isinstance(s, If):
            out += all_fors(s.body) + all_fors(s.orelse)
    return out


def all_reads(stmts: list[Stmt]) -> set[str]:
    """Every name a block reads, at any depth."""
    found: set[str] = set()
    for s in walk(stmts):
        found |= set(uses(s))
    return found


def block_defs(stmts: list[Stmt]) -> set[str]:
    """Names a block binds at its own level (and the joins of its ifs)."""
    out: set[str] = set()
    for s in stmts:
        if isinstance(s, Let):
            out.add(s.target)
        elif isinstance(s, If):
            out |= set(s.joins)
        elif isinstance(s, For) and loop_counter(s) is not None:
            out.add(loop_counter(s))  # a loop's iteration count, set at this level
    return out


def all_bodies(stmts: list[Stmt]) -> list[list[Stmt]]:
    """A statement list and every list nested in it."""
    out = [stmts]
    for s in stmts:
        if isinstance(s, If):
            out += all_bodies(s.body) + all_bodies(s.orelse)
        elif isinstance(s, For):
            out += all_bodies(s.body)
    return out


def all_lets(stmts: list[Stmt]) -> list[Let]:
    out: list[Let] = []
    for s in stmts:
        if isinstance(s, Let):
            out.append(s)
        elif isinstance(s, If):
            out += all_lets(s.body) + all_lets(s.orelse)
        elif isinstance(s, For):
            out += all_lets(s.body)
    return out


def param_atoms(s: Let) -> list:
    """The atoms among a statement's parameters (an index, an axis; not a callee)."""
    return [a for k, v in s.params.items() if k != "callee" for a in atoms_in(v)]


def effective_carried(s: For) -> list[tuple[str, str]]:
    """A loop's carried pairs, with the values only a nested loop rebinds.

    A nested loop leaves its result under its entry name, so a value that only the
    nested loop updates looks unchanged at this level (``acc`` before and after);
    each iteration still hands it to the next, as the pair ``(acc, acc)``.
    """
    carried = list(dict.fromkeys(s.carried))  # (a pair listed twice is one value)
    entries = {e for e, _ in carried}
    defined = {t.target for t in walk(s.body) if isinstance(t, Let)}
    for inner in walk(s.body):
        if isinstance(inner, For):
            for entry, _ in inner.carried:
                if entry not in entries and entry not in defined:
                    carried.append((entry, entry))
                    entries.add(entry)
    return carried
