"""The transform ledger: a signed, verifiable record of one transformation.

    from s2s.ledger import ledger, verify, save, load

    g = s2s.vmap(s2s.grad(loss), in_axes=(None, 0, 0))
    record = ledger(g, w, xs, ys)          # a JSON-serialisable dict
    save(record, "loss.ledger.json")
    verify(load("loss.ledger.json"))       # {"ok": True, ...} or the reason it is not

A record states what was transformed (the root function: module, file, qualified
name, sha256 of its source), how (the transform stack, innermost first, with every
parameter), what came out (each level's emitted module text and its sha256), which
primitive rules produced it (per IR statement: see ``provenance``), on what (the
example inputs, exactly, so the checks can be re-run), the evidence
(``s2s.selfcheck``: finite-difference probe, JVP/VJP identity, loop oracle, JAX
oracle), the versions and a timestamp.  The schema is ``docs/ledger-schema.json``.

Signing: HMAC-SHA256 over the canonical JSON of the record without its
``signature`` field (sorted keys, ``(",", ":")`` separators, ASCII, no NaN), with the
key from ``S2S_LEDGER_KEY`` (its UTF-8 bytes) or else the file named by
``S2S_LEDGER_KEY_FILE`` (its bytes, surrounding whitespace stripped).  The key never
enters the record, an error message or a log.  Without a key the record says it is
unsigned.

``verify`` checks what it can and stops at the first step that fails, with the
reason: schema, signature, internal hashes, the recorded checks' verdict, the
user's source (the recorded file's text, read and never run), the inputs.  It runs no
code the record names unless asked (``trust_code=True``, ``--trust-code``), and then
only after the signature step passed: it imports the recorded module (else loads its
file), regenerates the emitted code from the recorded stack and inputs, re-derives the
rule provenance and runs the checks again (they must pass and reproduce the recorded
report, measured errors aside).  An unsigned record is verified only by that
re-derivation: without ``trust_code`` nothing vouches for it, and ``verify`` says so.
"""

from __future__ import annotations

import ast
import base64
import contextlib
import datetime as _dt
import hashlib
import hmac
import importlib
import importlib.util
import inspect
import json
import os
import platform
import sys
import threading
import tokenize
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

from ..api.jit import Jitted
from ..api.transformed import JVPS, Transformed
from ..api.vectorize import JacFwd, JacRev, Vmapped, vjp_transform
from ..frontend.normalize import normalize
from ..frontend.source import parse_function
from ..ir.nodes import Function, Let, walk
from ..primitives import PRIMITIVES, load_all
from ..primitives.batching import rule_for
from ..transforms.vmap import HANDLED
from ..version import __version__
from . import selfcheck as _sc

__all__ = [
    "ledger", "verify", "sign", "canonical", "save", "load", "provenance",
    "encode_tree", "decode_tree", "LedgerError", "SCHEMA", "KEY_ENV", "KEY_FILE_ENV",
    "JvpOf", "VjpOf",
]

SCHEMA = "s2s-ledger/1"
KEY_ENV = "S2S_LEDGER_KEY"
KEY_FILE_ENV = "S2S_LEDGER_KEY_FILE"
CANONICAL = "json:sorted-keys,compact,ascii"  # how the signed bytes are made
JvpOf = _sc.JvpOf
VjpOf = _sc.VjpOf

REQUIRED = {
    "schema": str, "root": dict, "transforms": list, "emitted": list,
    "provenance": dict, "inputs": dict, "checks": dict, "versions": dict,
    "created": str, "signature": dict,
}


class LedgerError(ValueError):
    """A record cannot be made, signed or read (the message says why)."""


# ---- canonical JSON and signing -----------------------------------------------------


def canonical(record: dict[str, Any]) -> bytes:
    """The bytes a signature covers: the record without ``signature``, as sorted,
    compact, ASCII JSON."""
    body = {k: v for k, v in record.items() if k != "signature"}
    try:
        text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                          allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise LedgerError(f"record is not canonical JSON: {exc}") from None
    return text.encode("ascii")


def configured_key() -> bytes | None:
    """The signing key from the environment, or None when none is configured.

    A variable that is set but empty (or only whitespace) is an error, not "no key":
    treating it as unset would write unsigned records and accept unsigned ones where
    the user meant to sign."""
    value = os.environ.get(KEY_ENV)
    if value is not None:
        if not value.strip():
            raise LedgerError(f"{KEY_ENV} is set but empty: set it to the key, or unset "
                              "it to record unsigned")
        return value.encode("utf-8")
    path = os.environ.get(KEY_FILE_ENV)
    if path is not None:
        if not path.strip():
            raise LedgerError(f"{KEY_FILE_ENV} is set but empty: set it to the key "
                              "file's path, or unset it to record unsigned")
        try:
            data = Path(path).read_bytes().strip()
        except OSError as exc:
            raise LedgerError(f"{KEY_FILE_ENV} names a file that cannot be read "
                              f"({type(exc).__name__})") from None
        if not data:
            raise LedgerError(f"{KEY_FILE_ENV} names an empty file")
        return data
    return None


def _given_key(key: bytes | bool | None) -> bytes | None:
    """``key`` as given to ``ledger``/``sign``/``verify``: False is none, None the
    configured one; an empty key is refused."""
    if key is False:
        return None
    if key is None:
        return configured_key()
    if not isinstance(key, (bytes, bytearray)):
        raise LedgerError(f"a key is bytes, got {type(key).__name__}")
    if not bytes(key).strip():
        raise LedgerError("the key is empty: pass the key's bytes, or key=False to "
                          "record unsigned")
    return bytes(key)


def _mac(key: bytes, record: dict[str, Any]) -> str:
    return hmac.new(key, canonical(record), hashlib.sha256).hexdigest()


def sign(record: dict[str, Any], key: bytes | bool | None = None) -> dict[str, Any]:
    """The record with its ``signature`` set (from ``key``, else the configured key;
    with neither, or ``key=False``, marked unsigned).  Returns a new dict."""
    key = _given_key(key)
    out = {k: v for k, v in record.items() if k != "signature"}
    if key is None:
        out["signature"] = {
            "scheme": "none", "signed": False,
            "note": f"unsigned: no key configured ({KEY_ENV} or {KEY_FILE_ENV})",
        }
    else:
        out["signature"] = {"scheme": "hmac-sha256", "signed": True,
                            "canonical": CANONICAL,
                            "value": _mac(key, out)}
    return out


# ---- inputs, exactly ------------------------------------------------------------------


def encode_tree(x: Any) -> Any:
    """A pytree of arrays and Python scalars as JSON, bit-exact."""
    if isinstance(x, dict):
        for k in x:
            if not isinstance(k, (str, int)) or isinstance(k, bool):
                raise LedgerError(f"dict keys must be str or int to be recorded, got {k!r}")
        return {"dict": [[k, encode_tree(v)] for k, v in x.items()]}
    if isinstance(x, tuple) and not hasattr(x, "_fields"):
        return {"tuple": [encode_tree(v) for v in x]}
    if isinstance(x, list):
        return {"list": [encode_tree(v) for v in x]}
    if isinstance(x, (np.ndarray, np.generic)):  # first: np.float64 is a float
        a = np.asarray(x)
        if a.dtype.hasobject or a.dtype.fields is not None:
            raise LedgerError(f"arrays of dtype {a.dtype} cannot be recorded")
        a = a.astype(a.dtype.newbyteorder("<"))
        kind = "array" if isinstance(x, np.ndarray) else "scalar"
        return {kind: {"dtype": a.dtype.str, "shape": list(a.shape),
                       "data": base64.b64encode(np.ascontiguousarray(a).tobytes()).decode()}}
    if isinstance(x, bool):
        return {"bool": x}
    if isinstance(x, int):
        return {"int": x}
    if isinstance(x, float):
        return {"float": x.hex()}
    if x is None:
        return {"none": True}
    raise LedgerError(f"cannot record an input of type {type(x).__name__}")


def decode_tree(j: Any) -> Any:
    if not isinstance(j, dict) or len(j) != 1:
        raise LedgerError(f"malformed recorded input: {str(j)[:80]}")
    (tag, v), = j.items()
    if tag == "dict":
        return {k: decode_tree(e) for k, e in v}
    if tag == "tuple":
        return tuple(decode_tree(e) for e in v)
    if tag == "list":
        return [decode_tree(e) for e in v]
    if tag == "bool":
        return bool(v)
    if tag == "int":
        return int(v)
    if tag == "float":
        return float.fromhex(v)
    if tag == "none":
        return None
    if tag in ("array", "scalar"):
        dtype = np.dtype(v["dtype"])
        if dtype.hasobject or dtype.fields is not None:
            raise LedgerError(f"recorded inputs of dtype {dtype} are not allowed")
        a = np.frombuffer(base64.b64decode(v["data"]), dtype=dtype).reshape(v["shape"])
        a = a.astype(dtype.newbyteorder("="))
        return a.copy() if tag == "array" else a[()]
    raise LedgerError(f"unknown recorded input tag {tag!r}")


# ---- rule provenance ------------------------------------------------------------------


def _rule_id(rule: Callable) -> str:
    return f"{rule.__module__}.{rule.__qualname__}"


def _rule_hash(rule: Callable) -> str:
    try:
        text = inspect.getsource(rule).encode()
    except (OSError, TypeError):  # made at run time: its bytecode and names
        code = getattr(rule, "__code__", None)
        text = (code.co_code + repr(code.co_names).encode()) if code else \
            repr(type(rule)).encode()
    return hashlib.sha256(text).hexdigest()


def _custom_rules(custom: Any, kind: str) -> tuple[list[Callable], str]:
    """The user's own rules of a ``custom_jvp``/``custom_vjp`` function (read by
    attribute: ``jvp``/``jvps``, ``fwd``/``bwd``) for a transform of ``kind``."""
    jvps = [r for r in (getattr(custom, "jvps", None) or ()) if r is not None]
    jvp = getattr(custom, "jvp", None)
    fwd, bwd = getattr(custom, "fwd", None), getattr(custom, "bwd", None)
    if kind == "batch":
        return [], "custom rules: vmap batches the function itself"
    if jvps or jvp is not None:  # custom_jvp: reverse mode transposes the JVP rule
        return (jvps or [jvp]), ""
    if fwd is not None and bwd is not None:
        return ([fwd, bwd], "") if kind == "vjp" else ([], "custom_vjp: no forward mode")
    return [], "custom rules not defined"


def _rules_for(kind: str, prim_name: str) -> tuple[list[Callable], str]:
    """The rules a transform of ``kind`` applies to a statement of ``prim_name``, or
    why there are none."""
    prim = PRIMITIVES.get(prim_name)
    if prim is None:
        return [], "not a registered primitive"
    if kind == "batch":
        rule = rule_for(prim_name)
        if rule is not None:
            return [rule], ""
        return [], "handled by vmap itself" if prim_name in HANDLED else "no batching rule"
    if prim.nondiff:
        return [], "no derivative"
    if kind == "vjp":
        if prim.vjp is not None:
            return [prim.vjp], ""
    else:
        rules = [prim.jvps[p] for p in prim.diff if p in prim.jvps]
        if rules:
            return rules, ""
    if prim.family == "structure":
        return [], "structural: the transform handles it"
    return [], f"no {kind} rule"


def _custom_of(s: Let) -> Any:
    if not isinstance(s.params, dict):
        return None
    return s.params.get("custom") or s.params.get("custom_bwd")


def _statements(fn: Function, seen: set[int], kind: str) -> list[tuple[Function, Let]]:
    """Every Let, callees' included -- except the bodies of functions with rules of
    their own under a derivative: their rules, not their statements', apply."""
    out = []
    if id(fn) in seen:
        return out
    seen.add(id(fn))
    for s in walk(fn.body):
        if isinstance(s, Let):
            out.append((fn, s))
            if _custom_of(s) is not None and kind != "batch":
                continue
            callee = s.params.get("callee") if isinstance(s.params, dict) else None
            callee = getattr(callee, "function", callee)
            if isinstance(callee, Function):
                out += _statements(callee, seen, kind)
    return out


def _provenance_of(fn: Callable, kind: str, text: str, rules: dict[str, str]
                   ) -> list[dict[str, Any]]:
    """One entry per IR statement of ``fn``: where, which primitive, which rules."""
    ir = normalize(fn)
    suffix = {"vjp": "_bar", "jvp": "_dot"}.get(kind)
    entries = []
    for owner, s in _statements(ir, set(), kind):
        custom = _custom_of(s)
        if custom is not None:
            found, why = _custom_rules(custom, kind)
        else:
            found, why = _rules_for(kind, s.prim)
        loc = s.loc
        entry: dict[str, Any] = {
            "at": f"{Path(loc.file).name}:{loc.line}:{loc.col}" if loc else None,
            "function": owner.name, "prim": s.prim,
            "rules": [_rule_id(r) for r in found],
        }
        for r in found:
            rules[_rule_id(r)] = _rule_hash(r)
        if custom is not None:
            entry["custom"] = type(custom).__name__
        if why:
            entry["why_none"] = why
        if suffix is not None and found:
            entry["emitted"] = f"{s.target}{suffix}" in text
        entries.append(entry)
    return entries


def _compiled_parts(g: Any) -> list[list[tuple[str, str, Callable | None]]]:
    """Per level (innermost first): (part, rule kind, the function that part
    transforms) -- the function is the previous part's emitted function."""
    levels = list(reversed(_sc.layers(g)))
    current: Callable | None = _sc.root_of(g)
    plan: list[list[tuple[str, str, Callable | None]]] = []
    for spec, obj, _inner in levels:
        t = spec["transform"]
        parts: list[tuple[str, str, Callable | None]] = []
        if isinstance(obj, JacFwd):
            d = (JVPS.get(obj.fun) or {}).get(obj.has_aux)
            parts.append(("jvp", "jvp", current))
            current = d._last[1] if d is not None and d._last else None
            parts.append(("vmap", "batch", current))
            v = list(obj._vmapped.values())[-1] if obj._vmapped else None
            current = v._last[1] if v is not None and v._last else None
        elif isinstance(obj, JacRev):
            d = vjp_transform(obj.fun, obj.has_aux)
            parts.append(("vjp", "vjp", current))
            current = d._last[1] if d._last else None
            parts.append(("vmap", "batch", current))
            v = list(obj._vmapped.values())[-1] if obj._vmapped else None
            current = v._last[1] if v is not None and v._last else None
        elif isinstance(obj, Vmapped):
            parts.append(("vmap", "batch", current))
            current = obj._last[1] if obj._last else None
        elif isinstance(obj, Transformed):
            parts.append((t, "vjp", current))
            current = obj._last[1] if obj._last else None
        elif isinstance(obj, _sc.JvpOf):
            parts.append(("jvp", "jvp", current))
            d = (JVPS.get(obj.fn) or {}).get(obj.has_aux)
            current = d._last[1] if d is not None and d._last else None
        elif isinstance(obj, _sc.VjpOf):
            parts.append(("vjp", "vjp", current))
            d = obj._transformed
            current = d._last[1] if d is not None and d._last else None
        elif isinstance(obj, Jitted):
            parts.append(("jit", "none", None))  # runs the inner's code as it is
        plan.append(parts)
    return plan


def provenance(g: Any, emitted: list[dict[str, Any]]) -> dict[str, Any]:
    """Which primitive rules produced each level's emitted code (call ``g`` first)."""
    load_all()
    rules: dict[str, str] = {}
    levels = []
    texts = {(e["level"], e["part"]): e["text"] for e in emitted}
    for level, parts in enumerate(_compiled_parts(g)):
        for part, kind, fn in parts:
            if kind == "none":
                continue
            if fn is None:
                raise LedgerError(f"level {level} ({part}): the function it transforms "
                                  "is not reachable")
            levels.append({
                "level": level, "part": part, "rule_kind": kind,
                "function": getattr(fn, "__qualname__", "?"),
                "statements": _provenance_of(fn, kind, texts.get((level, part), ""), rules),
            })
    return {
        "granularity": "ir-statement",
        "note": "one entry per primitive application in the IR of the function each "
                "level transforms (the user's for level 0, the previous level's emitted "
                "code above); 'rules' are the rule functions that transform inlines or "
                "calls for it; 'emitted' says whether the emitted text binds the "
                "statement's cotangent/tangent name",
        "rules": dict(sorted(rules.items())),
        "levels": levels,
    }


# ---- the record -------------------------------------------------------------------------


def _root_info(fn: Callable) -> dict[str, Any]:
    parsed = parse_function(fn)
    module = getattr(fn, "__module__", None)
    file = inspect.getsourcefile(fn) or getattr(fn.__code__, "co_filename", None)
    return {
        "module": module,
        "qualname": fn.__qualname__,
        "file": str(Path(file).resolve()) if file else None,
        "source_sha256": parsed.source_hash,
        "line": fn.__code__.co_firstlineno,
    }


def _versions() -> dict[str, Any]:
    import importlib.metadata

    jax_module = sys.modules.get("jax")
    try:  # (without importing JAX: a second of startup)
        jax_version = getattr(jax_module, "__version__", None) or \
            importlib.metadata.version("jax")
    except importlib.metadata.PackageNotFoundError:
        jax_version = None
    return {"s2s": __version__, "numpy": np.__version__, "jax": jax_version,
            "python": platform.python_version()}


def ledger(g: Any, *example_args: Any, checks: bool = True, seed: int = 0,
           oracle: bool = True, key: bytes | bool | None = None) -> dict[str, Any]:
    """The record of the transformed function ``g`` called on ``example_args``.

    The call runs (an error it raises propagates: s2s refused the composition);
    ``checks`` runs the self-check (``oracle``: with JAX, when importable); the record
    is signed when a key is given or configured (``key=False``: unsigned).
    """
    _refuse_reentry("s2s.ledger.ledger")
    key = _given_key(key)  # (before the work: an empty or unreadable key is an error)
    if key is None:
        key = False
    try:
        stack = _sc.stack_of(g)
    except _sc.SelfCheckError as exc:
        raise LedgerError(str(exc)) from None
    if not stack:
        raise LedgerError(f"{g!r} is not an s2s transform")
    with _active("s2s.ledger.ledger ran the function and its checks"):
        return _record(g, stack, example_args, checks, seed, oracle, key)


def _record(g: Any, stack: list, example_args: tuple, checks: bool, seed: int,
            oracle: bool, key: bytes | bool) -> dict[str, Any]:
    out = g(*example_args)
    emitted = _sc.emitted_texts(g)
    record: dict[str, Any] = {
        "schema": SCHEMA,
        "root": _root_info(_sc.root_of(g)),
        "transforms": stack,
        "emitted": emitted,
        "provenance": provenance(g, emitted),
        "inputs": {"seed": seed, "args": encode_tree(tuple(example_args)),
                   "shapes": _sc._describe(tuple(example_args), "args")},
        "checks": (_sc.selfcheck(g, *example_args, seed=seed, oracle=oracle, out=out)
                   if checks else {"skipped": True, "passed": None,
                                   "note": "recorded with checks=False"}),
        "versions": _versions(),
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }
    return sign(record, key)


def save(record: dict[str, Any], path: str | os.PathLike) -> None:
    _refuse_reentry("s2s.ledger.save")
    Path(path).write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")


# ---- re-entry: code that ledger() or verify() runs must not record, save or verify ----
#
# ``ledger`` runs the user's function and its checks (the JAX oracle executes the
# function's module again); ``verify`` with ``trust_code`` imports or loads the
# recorded module.  A module that records a ledger at import (a script without a
# ``__main__`` guard) would otherwise record again from inside the checks, recursively,
# and ``verify`` would run it and let it overwrite the record being verified.

_ACTIVE = threading.local()


@contextlib.contextmanager
def _active(what: str) -> Iterator[None]:
    before = getattr(_ACTIVE, "what", None)
    _ACTIVE.what = what
    try:
        yield
    finally:
        _ACTIVE.what = before


def _refuse_reentry(call: str) -> None:
    what = getattr(_ACTIVE, "what", None)
    if what is not None:
        raise LedgerError(
            f"{call} was called while {what}: the module records, saves or verifies a "
            "ledger when it is imported; put that code under "
            "`if __name__ == \"__main__\":`")


def load(path: str | os.PathLike) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise LedgerError(f"cannot read {path}: {type(exc).__name__}: {exc}") from None
    if not isinstance(data, dict):
        raise LedgerError(f"{path} does not hold a JSON object")
    return data


# ---- verification -----------------------------------------------------------------------


class _Failed(Exception):
    def __init__(self, step: str, reason: str) -> None:
        super().__init__(reason)
        self.step = step
        self.reason = reason


def _schema_problems(record: Any) -> list[str]:
    if not isinstance(record, dict):
        return ["the record is not a JSON object"]
    problems = []
    for k, t in REQUIRED.items():
        if k not in record:
            problems.append(f"field {k!r} is missing")
        elif not isinstance(record[k], t):
            problems.append(f"field {k!r} should be a {t.__name__}")
    extra = sorted(set(record) - set(REQUIRED))
    if extra:
        problems.append(f"unknown fields {extra}")
    if problems:
        return problems
    if record["schema"] != SCHEMA:
        problems.append(f"schema is {record['schema']!r}, expected {SCHEMA!r}")
    for k in ("module", "qualname", "file", "source_sha256"):
        if not isinstance(record["root"].get(k), str):
            problems.append(f"root.{k} should be a string")
    for i, e in enumerate(record["emitted"]):
        if not isinstance(e, dict) or not all(isinstance(e.get(k), str)
                                              for k in ("text", "sha256", "transform")):
            problems.append(f"emitted[{i}] needs text, sha256 and transform")
    for i, t in enumerate(record["transforms"]):
        if not isinstance(t, dict) or "transform" not in t:
            problems.append(f"transforms[{i}] needs a 'transform'")
    return problems


_MAX_SOURCE_BYTES = 32 * 2 ** 20  # a recorded file larger than this is not read


def _recorded_lines(file: Any) -> tuple[list[str] | None, str]:
    """The recorded file's lines as ``inspect`` reads them (its text only: nothing
    is imported or run), or None and why they cannot be read here."""
    if not isinstance(file, str) or not file:
        return None, "the record names no file"
    path = Path(file)
    try:
        if not path.is_file():
            return None, f"the recorded file {file} does not exist here" if not \
                path.exists() else f"the recorded file {file} is not a regular file"
        if path.stat().st_size > _MAX_SOURCE_BYTES:
            return None, f"the recorded file {file} is too large to read"
        with tokenize.open(path) as fh:  # (the encoding its cookie declares)
            lines = fh.readlines()
    except (OSError, ValueError, SyntaxError, LookupError) as exc:
        return None, f"the recorded file {file} cannot be read ({type(exc).__name__})"
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    return lines, ""


def _definitions(tree: ast.Module, qualname: str) -> list[ast.AST]:
    """The definitions of ``qualname`` (``f`` or ``Class.f``) in a parsed module, as
    the module's top level (its ``if``/``try``/``with`` blocks too) binds them."""
    parts = qualname.split(".")
    found: list[ast.AST] = []
    blocks = (ast.stmt, ast.excepthandler, ast.match_case)

    def visit(nodes: list[ast.AST], depth: int) -> None:
        for node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if node.name != parts[depth]:
                    continue
                if depth == len(parts) - 1:
                    if not isinstance(node, ast.ClassDef):
                        found.append(node)
                elif isinstance(node, ast.ClassDef):
                    visit(node.body, depth + 1)
            elif isinstance(node, blocks):
                visit([c for c in ast.iter_child_nodes(node) if isinstance(c, blocks)],
                      depth)

    visit(tree.body, 0)
    return found


def _check_source_text(root: dict[str, Any], passed: Callable[[str, str], None],
                       skipped: Callable[[str, str], None]) -> bool:
    """The recorded function's text in the recorded file, hashed as s2s hashed it
    when recording; the file is read and parsed, never imported or run.  False when
    it cannot be compared here (the step is marked skipped, saying why)."""
    qualname, file = root["qualname"], root["file"]
    if "<locals>" in qualname or "<lambda>" in qualname:
        skipped("source", f"{qualname} cannot be found by qualified name in a file "
                          "(a local function or lambda)")
        return False
    lines, why = _recorded_lines(file)
    if lines is None:
        skipped("source", why + ": the function's source text was not compared")
        return False
    try:
        tree = ast.parse("".join(lines))
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise _Failed("source", f"the recorded file {file} does not parse "
                                f"({type(exc).__name__}): it is not the recorded "
                                "source") from None
    found = _definitions(tree, qualname)
    if not found:
        raise _Failed("source", f"the recorded file {file} defines no {qualname}")
    hashes = []
    for node in found:
        first = min([d.lineno for d in node.decorator_list] + [node.lineno])
        try:
            text = "".join(inspect.getblock(lines[first - 1:]))
        except Exception:  # (a tokenizer error inside the block)
            continue
        hashes.append((first, hashlib.sha256(text.encode()).hexdigest()))
    recorded, line = root["source_sha256"], root.get("line")
    if (line, recorded) in hashes:
        passed("source", f"{qualname} in {file} hashes as recorded (its text read, "
                         "not run)")
        return True
    same = [first for first, h in hashes if h == recorded]
    if same:
        raise _Failed("source", f"{qualname} starts on line {same[-1]}, recorded {line}")
    now = hashes[-1][1] if hashes else "?" * 12
    raise _Failed("source", f"the source of {qualname} changed since it was recorded "
                            f"(sha256 {now[:12]}..., recorded {recorded[:12]}...)")


def _load_root(root: dict[str, Any]) -> tuple[Callable, str]:
    """The recorded function, found by module and qualified name (the module as
    loaded or imported now, else the recorded file loaded under that name), and how
    it was found; its source hash decides whether it is still the recorded one.

    This imports and runs code the record names: only with ``trust_code``."""
    name, qualname, file = root["module"], root["qualname"], root["file"]
    if "<locals>" in qualname or "<lambda>" in qualname:
        raise _Failed("source", f"{qualname} is not reachable by module and qualified "
                                "name: records of local functions and lambdas cannot be "
                                "re-derived")
    module = sys.modules.get(name)
    load_as = name
    how = f"module {name}, already loaded"
    if name == "__main__":  # a script: only the script itself, else loaded from file
        main_file = getattr(module, "__file__", None)
        if not (main_file and file and Path(main_file).resolve() == Path(file)):
            module, load_as = None, "__s2s_ledger_main__"  # its main guard stays off
    elif module is None:
        try:
            module = importlib.import_module(name)
            how = f"module {name}, imported"
        except SystemExit as exc:
            raise _Failed("load", f"importing module {name} failed: "
                                  f"{_sc._reason(exc)}") from None
        except Exception:
            module = None
    if module is None:  # (an importable module wins: records move between checkouts)
        if not file or not Path(file).is_file():
            raise _Failed("load", f"module {name} cannot be imported and the recorded "
                                  f"file {file} does not exist")
        spec = importlib.util.spec_from_file_location(load_as, file)
        if spec is None or spec.loader is None:
            raise _Failed("load", f"the recorded file {file} cannot be loaded as a module")
        module = importlib.util.module_from_spec(spec)
        how = f"file {file}, loaded as module {load_as}"
        try:
            spec.loader.exec_module(module)
        except (Exception, SystemExit) as exc:
            raise _Failed("load", f"loading {file} failed: {_sc._reason(exc)}") from None
    obj: Any = module
    try:
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except AttributeError:
        raise _Failed("source", f"{name} has no {qualname} any more") from None
    return obj, how


def _first_difference(a: str, b: str) -> str:
    la, lb = a.splitlines(), b.splitlines()
    for i, (x, y) in enumerate(zip(la, lb), 1):
        if x != y:
            return f"line {i}: recorded {x.strip()!r}, regenerated {y.strip()!r}"
    return f"recorded {len(la)} lines, regenerated {len(lb)}"


# what re-derivation runs, and so what ``trust_code`` permits
_RUNS_CODE = ("load", "regenerate", "provenance", "checks")


def _names(record: Any) -> str:
    root = record.get("root") if isinstance(record, dict) else None
    root = root if isinstance(root, dict) else {}
    return f"module {root.get('module')!r}, file {root.get('file')!r}"


def verify(record: Any, key: bytes | bool | None = None,
           allow_unsigned: bool | None = None, rederive: bool = True,
           trust_code: bool = False) -> dict[str, Any]:
    """Verify a record; ``{"ok", "reason", "steps", "signed", "rederived"}``.

    ``key`` (None: the configured one; False: none, the environment unread) checks
    the signature.  An unsigned record is refused when a key is available, unless
    ``allow_unsigned``.

    Nothing the record names is imported or run unless ``trust_code``: without it,
    the schema, signature, hashes, recorded verdict, the source text in the recorded
    file (read, not run) and the inputs are checked, and the steps that run code are
    listed as skipped.  A signed record whose signature is valid is then verified;
    an unsigned one is not (nothing vouches for it but re-derivation), and the
    result says so.  With ``trust_code`` (after the signature step passed) the
    recorded module is imported, or its file loaded, and the record re-derived:
    regenerated, its provenance re-derived, its checks run again.  ``rederive=False``
    stops after the recorded checks' verdict.
    """
    _refuse_reentry("s2s.ledger.verify")
    steps: list[dict[str, Any]] = []
    signed = isinstance(record, dict) and isinstance(record.get("signature"), dict) and \
        record["signature"].get("signed") is True

    def passed(step: str, detail: str) -> None:
        steps.append({"step": step, "status": "passed", "detail": detail})

    def skipped(step: str, detail: str) -> None:
        steps.append({"step": step, "status": "skipped", "detail": detail})

    def failed(step: str, reason: str) -> dict[str, Any]:
        steps.append({"step": step, "status": "failed", "detail": reason})
        return {"ok": False, "reason": f"{step}: {reason}", "steps": steps,
                "signed": signed, "rederived": False}

    rederived = False
    try:
        with _active("s2s ledger verify checked a record"):
            problems = _schema_problems(record)
            if problems:
                raise _Failed("schema", "malformed record: " + "; ".join(problems))
            passed("schema", SCHEMA)
            _verify_signature(record, key, allow_unsigned, passed)
            for i, e in enumerate(record["emitted"]):
                if hashlib.sha256(e["text"].encode()).hexdigest() != e["sha256"]:
                    raise _Failed("hashes", f"emitted[{i}] ({e['transform']}) text does "
                                            "not hash to its recorded sha256: edited")
            passed("hashes", f"{len(record['emitted'])} emitted texts hash as recorded")
            if record["checks"].get("skipped"):
                raise _Failed("recorded checks", "the record carries no evidence: it was "
                                                 "made with checks=False")
            if not record["checks"].get("passed"):
                failed_checks = [f"{c['name']} at level {c['level']} ({c['transform']})"
                                 for c in record["checks"].get("checks", [])
                                 if c.get("status") == "failed"]
                raise _Failed("recorded checks", "the record's own checks did not pass: "
                              + (", ".join(failed_checks) if failed_checks
                                 else "none were run"))
            passed("recorded checks", "the record says its checks passed")
            if rederive:
                rederived = _rederive(record, passed, skipped, trust_code)
    except _Failed as f:
        return failed(f.step, f.reason)
    except SystemExit as exc:  # (the code a trusted record names exited)
        return failed("re-derivation", "verification could not proceed: the code the "
                                       f"record names exited ({_sc._reason(exc)})")
    except Exception as exc:  # a malformed part the schema step does not look into
        return failed("malformed record",
                      f"verification could not proceed: {_sc._reason(exc)}")
    not_run = [s["step"] for s in steps if s["status"] == "skipped"]
    if not rederived:
        runs = (f"re-deriving it runs the code it names ({_names(record)}): pass "
                "trust_code=True (--trust-code) if you trust that code")
        if not signed:
            return failed("unsigned", "nothing vouches for an unsigned record but "
                          "re-derivation, and it was not re-derived: " +
                          (runs if rederive else "rederive=False (--no-rederive)"))
        others = [s for s in not_run if s not in _RUNS_CODE]
        return {"ok": True, "reason": "verified without running code: the signature is "
                "valid; not re-derived (" + (runs if rederive else "rederive=False, "
                "--no-rederive") + ")" + (f"; not checked: {', '.join(others)}"
                                          if others else ""),
                "steps": steps, "signed": signed, "rederived": False}
    note = "" if signed else " (unsigned record: verified by re-derivation only)"
    return {"ok": True, "reason": "verified" + note, "steps": steps, "signed": signed,
            "rederived": True}


def _verify_signature(record: dict, key: bytes | bool | None,
                      allow_unsigned: bool | None,
                      passed: Callable[[str, str], None]) -> None:
    sig = record["signature"]
    try:
        key = _given_key(key)
    except LedgerError as exc:
        raise _Failed("signature", str(exc)) from None
    if sig.get("signed") is True:
        if sig.get("scheme") != "hmac-sha256" or not isinstance(sig.get("value"), str):
            raise _Failed("signature", f"unknown signature scheme {sig.get('scheme')!r}")
        if key is None:
            raise _Failed("signature", f"the record is signed but no key is configured "
                                       f"({KEY_ENV} or {KEY_FILE_ENV})")
        if set(sig) != {"scheme", "signed", "canonical", "value"} or \
                sig["canonical"] != CANONICAL:
            raise _Failed("signature", "the signature field has unexpected entries")
        if not hmac.compare_digest(_mac(key, record), sig["value"]):
            raise _Failed("signature", "HMAC-SHA256 mismatch: the record was changed "
                                       "after signing, or signed with another key")
        passed("signature", "HMAC-SHA256 valid")
        return
    if sig.get("signed") is not False or sig.get("scheme") != "none":
        raise _Failed("signature", "malformed signature field")
    if key is not None and not allow_unsigned:
        raise _Failed("signature", "the record is unsigned but a key is configured: "
                                   "unsigned records are refused (allow_unsigned to accept)")
    passed("signature", "unsigned record (no signature to check)")


def _rederive(record: dict, passed: Callable[[str, str], None],
              skipped: Callable[[str, str], None], trust_code: bool) -> bool:
    """The steps after the record's own: those that run no code always, the rest
    (``_RUNS_CODE``) only with ``trust_code``.  True when all of them ran."""
    root = record["root"]
    _check_source_text(root, passed, skipped)
    try:
        args = decode_tree(record["inputs"]["args"])
    except Exception as exc:
        raise _Failed("inputs", f"the recorded inputs cannot be read: {_sc._reason(exc)}"
                      ) from None
    if record["inputs"].get("shapes") != _sc._describe(tuple(args), "args"):
        raise _Failed("inputs", "the recorded shapes and dtypes are not the inputs'")
    if record["checks"].get("seed") != record["inputs"].get("seed"):
        raise _Failed("inputs", "the checks' seed is not the recorded seed")
    passed("inputs", f"{len(record['inputs']['shapes'])} input leaves as described")
    if not trust_code:
        why = "not run: it runs the code the record names (trust_code, --trust-code)"
        for step in _RUNS_CODE:
            skipped(step, why)
        return False
    fn, how = _load_root(root)
    try:
        now = parse_function(fn).source_hash
    except Exception as exc:
        if "is not the code that runs" in str(exc):  # the file was edited after import
            raise _Failed("source", f"the source of {root['qualname']} changed since it "
                                    "was recorded (its file no longer holds the code that "
                                    "runs)") from None
        raise _Failed("source", f"cannot read the source of {root['qualname']}: "
                                f"{_sc._reason(exc)}") from None
    if now != root["source_sha256"]:
        raise _Failed("source", f"the source of {root['qualname']} changed since it was "
                                f"recorded (sha256 {now[:12]}..., recorded "
                                f"{root['source_sha256'][:12]}...)")
    if root.get("line") != fn.__code__.co_firstlineno:
        raise _Failed("source", f"{root['qualname']} starts on line "
                                f"{fn.__code__.co_firstlineno}, recorded {root.get('line')}")
    passed("load", f"{root['qualname']} from {how}: the code that runs hashes as recorded")
    try:
        g = _sc.rebuild(fn, record["transforms"])
        out = g(*args)
        emitted = _sc.emitted_texts(g)
    except _Failed:
        raise
    except (Exception, SystemExit) as exc:
        raise _Failed("regenerate", "the recorded stack does not run on the recorded "
                                    f"inputs: {_sc._reason(exc)}") from None
    want = [(e["level"], e.get("part"), e["transform"], e["text"])
            for e in record["emitted"]]
    got = [(e["level"], e["part"], e["transform"], e["text"]) for e in emitted]
    if [w[:3] for w in want] != [x[:3] for x in got]:
        raise _Failed("regenerate", f"the recorded stack emits parts {[x[:3] for x in got]}, "
                                    f"the record lists {[w[:3] for w in want]}")
    for (level, part, _, a), (_, _, _, b) in zip(want, got):
        if a != b:
            raise _Failed("regenerate", f"regenerated code of level {level} ({part}) "
                          f"differs from the recorded: {_first_difference(a, b)}")
    passed("regenerate", f"{len(got)} emitted texts regenerated identically")
    try:
        prov = provenance(g, emitted)
    except Exception as exc:
        raise _Failed("provenance", f"cannot re-derive: {_sc._reason(exc)}") from None
    if prov != record["provenance"]:
        raise _Failed("provenance", _prov_difference(record["provenance"], prov))
    passed("provenance", f"{len(prov['rules'])} rules hash as recorded")
    recorded = record["checks"]
    if recorded.get("skipped"):
        raise _Failed("checks", "the record was made without checks: no evidence")
    oracle = any(c["name"] == "jax_oracle" for c in recorded.get("checks", []))
    note = ""
    if oracle and not _jax_importable():  # the rest of the evidence is re-run
        recorded = _without_oracle(recorded)
        oracle = False
        note = " (the JAX oracle was not re-run: jax is not importable here)"
    again = _sc.selfcheck(g, *args, seed=int(recorded.get("seed", 0)), oracle=oracle,
                          out=out)
    if not again["passed"]:
        failed = [c for c in again["checks"] if c["status"] == "failed"]
        raise _Failed("checks", "re-run checks fail: " + "; ".join(
            f"{c['name']} at level {c['level']} ({c['transform']}): error "
            f"{c.get('error', c.get('reason'))} > tolerance {c.get('tolerance')}"
            for c in failed))
    names = [(c["name"], c["level"], c["status"]) for c in recorded["checks"]]
    now_names = [(c["name"], c["level"], c["status"]) for c in again["checks"]]
    if names != now_names:
        raise _Failed("checks", f"re-run checks differ from the recorded: {now_names} "
                                f"against {names}")
    where = _report_difference(recorded, again)
    if where:
        raise _Failed("checks", f"the re-run report differs from the recorded at {where}")
    passed("checks", f"{again['counts']['passed']} checks pass again{note}")
    return True


def _jax_importable() -> bool:
    return importlib.util.find_spec("jax") is not None


def _without_oracle(report: dict[str, Any]) -> dict[str, Any]:
    checks = [c for c in report["checks"] if c["name"] != "jax_oracle"]
    statuses = [c["status"] for c in checks]
    return {**report, "checks": checks,
            "counts": {s: statuses.count(s) for s in ("passed", "failed", "unavailable")}}


# measured values, which may differ in the last bits between machines: the re-run
# must pass, not reproduce them; the JAX version is the verifier's, not the recorder's
_MEASURED = {"error", "jax"}
_COMPUTED = {"tolerance", "eps", "atol"}  # from the inputs: equal up to rounding


def _report_difference(a: Any, b: Any, path: str = "checks") -> str | None:
    """The first place the recorded self-check report ``a`` and the re-run ``b``
    differ, ignoring measured errors."""
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return f"{path} (keys {sorted(set(a) ^ set(b))})"
        for k in sorted(a):
            if k in _MEASURED:
                continue
            if k in _COMPUTED and isinstance(a[k], (int, float)) and \
                    isinstance(b[k], (int, float)):
                if abs(a[k] - b[k]) > 1e-9 * max(abs(a[k]), abs(b[k])):
                    return f"{path}.{k}"
                continue
            found = _report_difference(a[k], b[k], f"{path}.{k}")
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path} (length)"
        for i, (x, y) in enumerate(zip(a, b)):
            found = _report_difference(x, y, f"{path}[{i}]")
            if found:
                return found
        return None
    return None if a == b and type(a) is type(b) else path


def _prov_difference(a: dict, b: dict) -> str:
    for rule in sorted(set(a.get("rules", {})) | set(b.get("rules", {}))):
        x, y = a.get("rules", {}).get(rule), b.get("rules", {}).get(rule)
        if x != y:
            if x is None:
                return f"rule {rule} produced code but is not in the record"
            if y is None:
                return f"the record names rule {rule}, which regeneration does not use"
            return f"rule {rule} changed since recording (sha256 {y[:12]}..., recorded {x[:12]}...)"
    return "rule provenance differs from the recorded (statements or notes)"


# ``s2s.ledger(g)`` may be this function (exported from the package); the rest of the
# API stays reachable from it as attributes: ``s2s.ledger.verify(record)``
for _f in (verify, sign, save, load, canonical, provenance, configured_key):
    setattr(ledger, _f.__name__, _f)
ledger.JvpOf = JvpOf  # type: ignore[attr-defined]
ledger.VjpOf = VjpOf  # type: ignore[attr-defined]
ledger.LedgerError = LedgerError  # type: ignore[attr-defined]
