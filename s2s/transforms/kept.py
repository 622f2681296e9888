"""vmap's kept statements (``assert``, ``if ...: raise``, ``print``; see
frontend/kept.py): a check runs once per example, on that example's values, so an
``assert`` fires when it fires for any example (``assert x > 0`` on a per-example
scalar means "for every example", and ``x.ndim`` is the example's rank); a call (a
print) runs once, with the batched values.

A random draw gives each example its own numbers: a draw of shape ``S`` (its
``size=``, or ``rand``'s dimensions) becomes one draw of shape ``(batch,) + S``, so
example ``i`` gets the numbers a loop over the examples would draw for it when the
function draws once per call.  A generator made in the function from a literal seed
(``default_rng(0)``) gives every example the numbers one call draws, as NumPy called
once per example does (and as JAX's unbatched key does); one made otherwise
(``default_rng()``, a seed argument) is one for the whole batch."""

from __future__ import annotations

import ast
import re
from typing import Any

import numpy as np

from ..emit.code import Block
from ..ir.kinds import LEAF
from ..ir.nodes import Let
from ..ir.spelling import atom_text
from ..primitives.batching import NoBatchRule
from ..syntax import parse
from .replay import drawn_from, kept_item, literal_seeded


class KeptBatching:
    """The vmap transform's handler of ``kept`` statements (a mixin of vmap._Vmap)."""

    def kept(self, s: Let, out: list[Any]) -> None:
        """A kept statement: as written where nothing it reads is batched, else a
        check per example (on the examples on its path, under a batched `if`)."""
        batched = [a for a in s.args if self.batched(a)]
        if not batched:
            out += self.replay.statements([s])
            return
        if s.params["kind"] != "check":
            if self.write_masks:
                raise self.fail(s, NoBatchRule(
                    "a print or call on batched values inside an `if` or loop that "
                    "the examples take differently (it would show every example's "
                    "values, on the path or not)", "print after the `if` or loop"))
            if _reads_whole(s, {a.name for a in batched if hasattr(a, "name")}) or any(
                    self.kind(a.name) != LEAF for a in batched):  # (a container: as before)
                out += self.replay.statements([s])
                return
        elif s.params.get("items") and any(self.kind(a.name) != LEAF or self._has_items(a)
                                         for a in batched):
            return  # (a container, an array per example: it has items, unpacking.py)
        for a in batched if s.params["kind"] == "check" else ():
            if self.kind(a.name) != LEAF:
                raise self.fail(s, NoBatchRule(
                    f"an assert or raise reading `{a.name}`, a container of batched "
                    "values", "check its arrays one by one"))
        i = self.names.fresh("example")
        args = [f"{atom_text(a)}[{i}]" if a in batched else atom_text(a) for a in s.args]
        check = kept_item(s, args)
        if self.write_masks:  # only the examples on this path
            on = " and ".join(f"{'not ' if done else ''}{m}[{i}]"
                              for m, done in self.write_masks)
            check = Block(f"if {on}:", [check], [])
        out.append(Block(f"for {i} in range({self.use_batch_size()}):", [check], []))

    def _has_items(self, a: Any) -> bool:
        """Whether each example's ``a`` is an array of a rank 1 or more (or of a rank
        the probe did not see: its unpacking's width check reads it)."""
        try:
            return self.rank(a) >= 1
        except NoBatchRule:
            return True

    def draw(self, s: Let, out: list[Any]) -> None:
        """A random draw: one draw of shape ``(batch,) + S`` for a draw of shape ``S``;
        a generator's maker (``default_rng(seed)``, ``seed(0)``) runs as written."""
        params = s.params
        if any(self.batched(a) for a in s.args):
            raise self.fail(s, NoBatchRule(
                "a random draw whose arguments have a batch axis (a per-example seed, "
                "mean or size)", "draw with unbatched arguments and a size= "
                "(`mu + sigma * rng.standard_normal(size=np.shape(mu))`)"))
        seeded = dict(params["parts"]).get("random_state")  # (scipy.stats' rvs)
        if seeded is not None and not re.fullmatch(r"\d+", seeded):
            raise self.fail(s, NoBatchRule(
                "an rvs draw from a random_state= that is not a literal seed (each "
                "example would advance it)", "pass random_state=<int>, or none"))
        generator = drawn_from(s)
        maker = self.facts.producer.get(generator.name) if generator is not None else None
        if params["maker"] or params["method"] == "seed" or self.spec.shared_draws or (
                seeded is not None) or (maker is not None and maker.prim == "draw" and
                                        literal_seeded(maker)):
            # (a literal seed, `default_rng(0)` in the function: every example draws
            # the numbers one call draws, as NumPy called per example does)
            out += self.replay.statements([s])
            return
        parts = list(params["parts"])
        n = self.use_batch_size()
        size = _size_position(params["method"])
        spot = next((k for k, (kw, _) in enumerate(parts) if kw == "size"), None)
        if spot is None and size is not None and len(parts) > size and parts[size][0] is None:
            spot = size
        if params["method"] in ("rand", "randn"):  # their dimensions are positional
            parts.insert(0, (None, n))
        elif spot is not None:
            kw, text = parts[spot]
            known = next((a for k, a in zip(params["keys"], s.args) if k == text), None)
            if re.fullmatch(r"-?\d+", text):
                text = f"({n}, {text})"
            elif text.startswith("(") or known is not None and self.facts.producer.get(
                    known.name) is not None and self.facts.producer[known.name].prim == "shape":
                text = f"({n}, *{text})"
            else:
                text = f"({n}, *np.atleast_1d({text}))"
            parts[spot] = (kw, text)
        elif size is not None and all(text not in params["keys"] and np.ndim(
                _number(text)) == 0 for _, text in parts):
            parts.append(("size", n))
        else:
            raise self.fail(s, NoBatchRule(
                "a random draw whose shape vmap cannot give a batch axis (one without "
                "size=, from array parameters, or a permutation)",
                "pass size= (`rng.normal(0.0, 1.0, size=np.shape(x))`)"))
        batched = Let(s.target, s.prim, s.args, {**params, "parts": tuple(parts)}, s.loc)
        out += self.replay.statements([batched])
        self.b[s.target] = {()}

    # (implemented by vmap._Vmap)
    b: dict[str, set]
    spec: Any
    batched: Any
    facts: Any
    kind: Any
    fail: Any
    names: Any
    replay: Any
    use_batch_size: Any
    write_masks: list[tuple[str, bool]]



def _reads_whole(s: Let, batched: set[str]) -> bool:
    """Whether the kept call ``s`` (a print) passes each of its ``batched`` operands
    as it is (``print("y", y)``, ``f"{y}"``): it shows the batched value, once.  One
    computed on (``np.sum(x)``, ``x[0]``) or formatted (``f"{v:.4f}"``) inside the
    call would be computed on the whole batch (the sum of every example; a format
    spec a 1-d array refuses): the call then runs once per example."""
    template, keys = s.params["template"]
    names = {key for key, a in zip(keys, s.args) if getattr(a, "name", None) in batched}
    body = parse(template).body
    call = body[0].value if len(body) == 1 and isinstance(body[0], ast.Expr) else None
    if not isinstance(call, ast.Call):
        return False
    whole = set()
    for v in call.args + [k.value for k in call.keywords]:
        whole.add(id(v))
        if isinstance(v, ast.JoinedStr):
            whole |= {id(f.value) for f in v.values if isinstance(f, ast.FormattedValue)
                      and f.format_spec is None and f.conversion == -1}
    return all(id(n) in whole for n in ast.walk(call)
               if isinstance(n, ast.Name) and n.id in names)


def _size_position(method: str) -> int | None:
    """Where a generator method takes ``size`` positionally (from its signature line,
    ``normal(loc=0.0, scale=1.0, size=None)``), None where it takes none."""
    doc = getattr(np.random.Generator, method, None) or getattr(
        np.random.RandomState, method, None)
    line = ((getattr(doc, "__doc__", None) or "").strip().splitlines() or [""])[0]
    names = [p.split("=")[0].strip() for p in line.partition("(")[2].rstrip(")").split(",")]
    return names.index("size") if "size" in names else None


def _number(text: str) -> Any:
    try:
        return float(text)
    except ValueError:
        return np.zeros(2)  # (not a number: an array parameter)
