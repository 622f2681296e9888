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

import base64
import contextlib
import datetime as _dt
import hashlib
import hmac
import inspect
import json
import os
import platform
import sys
import threading
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

from ..api import pipeline
from ..api.jacobians import JacFwd, JacRev, vjp_transform
from ..api.jit import Jitted
from ..api.transformed import JVPS, Transformed
from ..api.vectorize import Vmapped
from ..ir.nodes import Function, Let, walk
from ..primitives import PRIMITIVES, load_all
from ..primitives.batching import rule_for
from ..transforms.vmap import HANDLED
from ..version import __version__
from . import selfcheck as _sc

__all__ = [
    "ledger", "sign", "canonical", "save", "load", "provenance",
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


def given_key(key: bytes | bool | None) -> bytes | None:
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


def mac(key: bytes, record: dict[str, Any]) -> str:
    return hmac.new(key, canonical(record), hashlib.sha256).hexdigest()


def sign(record: dict[str, Any], key: bytes | bool | None = None) -> dict[str, Any]:
    """The record with its ``signature`` set (from ``key``, else the configured key;
    with neither, or ``key=False``, marked unsigned).  Returns a new dict."""
    key = given_key(key)
    out = {k: v for k, v in record.items() if k != "signature"}
    if key is None:
        out["signature"] = {
            "scheme": "none", "signed": False,
            "note": f"unsigned: no key configured ({KEY_ENV} or {KEY_FILE_ENV})",
        }
    else:
        out["signature"] = {"scheme": "hmac-sha256", "signed": True,
                            "canonical": CANONICAL,
                            "value": mac(key, out)}
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
    if prim_name == "odeint":  # (transforms/odes.py writes them from the dynamics)
        return [], ("the adjoint ODE <func>_adjoint, from the dynamics' own VJP" if
                    kind == "vjp" else "the sensitivity equations <func>_tangent, from "
                    "the dynamics' own JVP")
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
    ir = pipeline.lower(fn)
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
    from ..frontend.source import parse_function  # (libcst: the first transform's)

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
    refuse_reentry("s2s.ledger.ledger")
    key = given_key(key)  # (before the work: an empty or unreadable key is an error)
    if key is None:
        key = False
    try:
        stack = _sc.stack_of(g)
    except _sc.SelfCheckError as exc:
        raise LedgerError(str(exc)) from None
    if not stack:
        raise LedgerError(f"{g!r} is not an s2s transform")
    with active("s2s.ledger.ledger ran the function and its checks"):
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
    refuse_reentry("s2s.ledger.save")
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
def active(what: str) -> Iterator[None]:
    before = getattr(_ACTIVE, "what", None)
    _ACTIVE.what = what
    try:
        yield
    finally:
        _ACTIVE.what = before


def refuse_reentry(call: str) -> None:
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
