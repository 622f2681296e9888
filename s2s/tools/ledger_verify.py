"""Verifying a transform ledger record (``s2s.ledger.verify``): the record's schema,
signature, hashes, recorded verdict, the user's source (read, never run) and inputs;
with ``trust_code=True`` (after the signature passed), the re-derivation: import the
recorded module, regenerate the emitted code, re-derive the provenance and run the
checks again.  Making and signing records is :mod:`s2s.tools.ledger`.
"""

from __future__ import annotations

import ast
import hashlib
import hmac
import importlib
import importlib.util
import inspect
import sys
import tokenize
from pathlib import Path
from typing import Any, Callable

from .. import syntax
from . import selfcheck as _sc
from .ledger import (
    CANONICAL,
    KEY_ENV,
    KEY_FILE_ENV,
    REQUIRED,
    SCHEMA,
    JvpOf,
    LedgerError,
    VjpOf,
    active,
    canonical,
    configured_key,
    decode_tree,
    given_key,
    ledger,
    load,
    mac,
    provenance,
    refuse_reentry,
    save,
    sign,
)

__all__ = ["verify"]


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
        tree = syntax.parse("".join(lines))
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
    refuse_reentry("s2s.ledger.verify")
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
        with active("s2s ledger verify checked a record"):
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
        key = given_key(key)
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
        if not hmac.compare_digest(mac(key, record), sig["value"]):
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
    from ..frontend.source import parse_function  # (libcst: the first transform's)

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
