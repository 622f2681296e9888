"""``s2s ledger``: verify a transform record, and the semantic proof matrix.

    s2s ledger verify RECORD.json [--trust-code] [--allow-unsigned] [--no-rederive] [--json]
    s2s ledger matrix [--json | --markdown] [--write docs/ledger-matrix.md]

The matrix runs a fixed set of cases through s2s and the ledger, now: valid
compositions must be recorded with passing evidence and verify; invalid ones must be
refused, by s2s when the transform is asked for or called, or by ``verify`` when a
record was tampered with.  Every verdict comes from running the case; ``expect`` is
only what ``tests/test_ledger.py`` compares the verdict with.  The matrix verifies
the records it has just made, of its own functions, so it re-derives them
(``trust_code=True``); ``s2s ledger verify`` runs no code a record names unless given
``--trust-code``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import re
import sys
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

from .. import api as public  # the transforms, as s2s exports them
from ..api import jacobians, pushforward
from ..api import transformed as api
from ..frontend.normalize import normalize
from ..primitives import load_all
from ..primitives import registry as reg
from .ledger import LedgerError, ledger, load, sign
from .ledger_verify import verify
from .selfcheck import JvpOf, VjpOf

__all__ = ["register", "CASES", "run_matrix", "matrix_markdown"]

MATRIX_KEY = b"s2s ledger matrix: a demonstration key, not a secret"
OTHER_KEY = b"some other key"


# ---- the functions the cases transform (module level: records name them) ----------


def mse(w, x, y):
    pred = np.tanh(x @ w)
    return np.mean((pred - y) ** 2)


def two_args(a, b):
    return np.sum(np.sin(a) * b) + np.sum(a ** 2 * b)


def mlp(params, x, y):
    h = np.tanh(x @ params["W1"] + params["b1"])
    out = h @ params["W2"]
    return np.mean((out - y) ** 2)


def with_aux(w, x):
    z = x @ w
    return np.sum(z ** 2), np.max(z)


def vec(x):
    return np.sin(x) * np.sum(x ** 2)


def affine(w, x):
    return np.tanh(w @ x)


def scalar(x):
    return np.sin(x) * x ** 3


def loop_sum(x):
    total = 0.0
    for i in range(4):
        total = total + np.sum(np.cos(x * (i + 1)))
    return total


def halve_until_small(x):
    s = np.sum(x ** 2)
    y = x
    while s > 1e-2:
        y = y * 0.5
        s = np.sum(y ** 2)
    return np.sum(np.sin(y))


def branch(x):
    s = np.sum(x)
    if s > 0:
        out = np.sum(x ** 3)
    else:
        out = np.sum(np.exp(x))
    return out


def rowsum(x):
    return np.sum(x ** 2)


def non_scalar(x):
    return np.sin(x)


def index_power(x, n):
    return np.sum(x ** n)


def not_a_pair(x):
    return np.sum(x ** 2)


def with_try(x):
    try:
        y = np.log(x)
    except ValueError:
        y = x
    return np.sum(y)


def vmapped_while(x):
    y = x
    while np.sum(y ** 2) > 1e-2:
        y = y * 0.5
    return np.sum(y)


def branch_loop(x):
    if np.sum(x) > 0.0:
        for i in range(3):
            x = np.sin(x) * 2.0
    return np.sum(x)


def my_sin(x):
    return np.sin(x)


def custom_rule_user(x):
    return np.sum(my_sin(x) * 2.0)


# ---- a deliberately wrong rule, registered only while a case runs -----------------

WRONG_PRIM = "ledger_matrix_wrong_sin"


@contextlib.contextmanager
def wrong_rule() -> Iterator[None]:
    """``my_sin`` as a primitive whose VJP rule is wrong (``g * sin(x)``: the
    derivative of sin is cos); its JVP rule is right.  Undone afterwards."""
    load_all()
    reg.defprim(WRONG_PRIM, my_sin, "(x)", family="elementwise",
                spelling=reg.call_spelling("np.sin"),
                note="test-only: a deliberately wrong VJP rule")

    @reg.defvjp(WRONG_PRIM)
    def wrong_sin_vjp(g, ans, x):
        return g * np.sin(x)

    @reg.defjvp(WRONG_PRIM, "x")
    def wrong_sin_jvp(x_dot, ans, x):
        return x_dot * np.cos(x)

    try:
        yield
    finally:
        reg.PRIMITIVES.pop(WRONG_PRIM, None)
        reg.BY_OBJECT.pop(id(my_sin), None)
        if my_sin in reg._KEEP_ALIVE:
            reg._KEEP_ALIVE.remove(my_sin)
        _forget(custom_rule_user)


def _forget(fn: Callable) -> None:
    """Drop what s2s cached for ``fn`` while the wrong rule was registered.

    s2s's caches (the IR memo, the emitted-text cache, the jvp/vjp transform objects)
    are not keyed on the rule registry, so without this a later ``grad(fn)`` would
    reuse the wrong rule's code.  (A registry generation in the cache keys would make
    this unnecessary; reported to the lead.)
    """
    for key in [k for k in api._TEXT_CACHE if id(fn) in k]:
        del api._TEXT_CACHE[key]
    api.JVPS.pop(fn, None)
    pushforward.forget(fn)
    jacobians._VJPS.pop(fn, None)
    try:  # drops the memoized IR first; without the rule, s2s refuses the call
        normalize(fn, fresh=True)
    except Exception:
        pass


# ---- cases -------------------------------------------------------------------------


@dataclass
class Case:
    name: str
    expect: str  # "accepted" or "rejected": what the test compares the verdict with
    what: str
    run: Callable[[], dict[str, Any]]


def _rng() -> np.random.Generator:
    return np.random.default_rng(20261130)


def _reason(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).strip().splitlines() if ln.strip()]
    text = lines[0] if lines else ""
    if text.endswith(":") and len(lines) > 1:
        text += " " + lines[1]
    return f"{type(exc).__name__}: {text}"


def _evidence(record: dict[str, Any]) -> str:
    checks = record["checks"].get("checks", [])
    parts = []
    for c in checks:
        where = "stack" if c["transform"] == "stack" else f"L{c['level']} {c['transform']}"
        parts.append(f"{c['name']} ({where}) {c['status']}")
    return "; ".join(parts)


def _record_and_verify(make: Callable[[], tuple[Any, tuple]],
                       edit: Callable[[dict], dict] | None = None,
                       verify_key: bytes | bool = MATRIX_KEY,
                       checks: bool = True) -> dict[str, Any]:
    try:
        g, args = make()
        record = ledger(g, *args, key=MATRIX_KEY, checks=checks)
    except Exception as exc:
        return {"verdict": "rejected", "stage": "s2s", "reason": _reason(exc)}
    if edit is not None:
        record = edit(record)
    result = verify(record, key=verify_key, trust_code=True)  # (its own record)
    if not result["ok"]:
        return {"verdict": "rejected", "stage": "verify", "reason": result["reason"],
                "record_checks_passed": record["checks"].get("passed")}
    return {"verdict": "accepted", "stage": "verify",
            "reason": f"recorded, signed and verified ({len(result['steps'])} steps)",
            "evidence": _evidence(record), "record_checks_passed": True}


def _accept(name: str, what: str, make: Callable[[], tuple[Any, tuple]]) -> Case:
    return Case(name, "accepted", what, lambda: _record_and_verify(make))


def _reject(name: str, what: str, make: Callable[[], tuple[Any, tuple]],
            edit: Callable[[dict], dict] | None = None,
            verify_key: bytes | bool = MATRIX_KEY,
            checks: bool = True) -> Case:
    return Case(name, "rejected", what,
                lambda: _record_and_verify(make, edit, verify_key, checks))


def _mse_args() -> tuple:
    r = _rng()
    return r.normal(size=3), r.normal(size=(5, 3)), r.normal(size=5)


def _mlp_args() -> tuple:
    r = _rng()
    params = {"W1": r.normal(size=(3, 4)) * 0.5, "b1": r.normal(size=4) * 0.1,
              "W2": r.normal(size=(4, 2)) * 0.5}
    return params, r.normal(size=(6, 3)), r.normal(size=(6, 2))


def _x3() -> np.ndarray:
    return np.array([0.3, -1.2, 0.8])


def _resign(record: dict, **changes: Any) -> dict:
    return sign({**record, **changes}, MATRIX_KEY)


def _edit_emitted(record: dict) -> dict:
    out = json.loads(json.dumps(record))
    e = out["emitted"][0]
    e["text"] = e["text"].replace("np.cos(", "np.sin(", 1)
    return out  # the signature is left as it was


def _edit_emitted_unsigned(record: dict) -> dict:
    import hashlib

    out = _edit_emitted(record)
    e = out["emitted"][0]
    e["sha256"] = hashlib.sha256(e["text"].encode()).hexdigest()  # consistent hashes
    return _unsigned(out)


def _unsigned(record: dict) -> dict:
    return sign(record, False)


def _forge_stack(record: dict) -> dict:
    stack = json.loads(json.dumps(record["transforms"]))
    stack[0]["argnums"] = 1  # claims the gradient with respect to b
    return _resign(record, transforms=stack)


def _forge_rule(record: dict) -> dict:
    prov = json.loads(json.dumps(record["provenance"]))
    rule = next(r for r in prov["rules"] if r.endswith(".sin_vjp"))
    prov["rules"][rule] = "0" * 64
    return _resign(record, provenance=prov)


def _source_changed() -> dict[str, Any]:
    """A user module is recorded, then edited on disk: verify must notice."""
    body = textwrap.dedent("""\
        import numpy as np


        def energy(x):
            return np.sum(np.sin(x) ** 2)
        """)
    with tempfile.TemporaryDirectory() as tmp:
        name = "s2s_ledger_matrix_user_module"
        path = Path(tmp) / f"{name}.py"
        path.write_text(body)
        sys.path.insert(0, tmp)
        try:
            importlib.invalidate_caches()
            module = importlib.import_module(name)
            record = ledger(public.grad(module.energy), _x3(), key=MATRIX_KEY)
            first = verify(record, key=MATRIX_KEY, trust_code=True)
            if not first["ok"]:
                return {"verdict": "rejected", "stage": "verify",
                        "reason": "before the edit: " + first["reason"]}
            path.write_text(body.replace("** 2", "** 3"))
            result = verify(record, key=MATRIX_KEY, trust_code=True)
        finally:
            sys.path.remove(tmp)
            sys.modules.pop(name, None)
    if result["ok"]:
        return {"verdict": "accepted", "stage": "verify", "reason": result["reason"]}
    return {"verdict": "rejected", "stage": "verify", "reason": result["reason"]}


def _wrong_rule_case() -> dict[str, Any]:
    with wrong_rule():
        return _record_and_verify(lambda: (public.grad(custom_rule_user), (_x3(),)))


def _lying_checks_case() -> dict[str, Any]:
    """The wrong rule's record, edited to claim its checks passed and signed again
    with the right key: only running the checks again can refuse it."""
    def claim_passed(record: dict) -> dict:
        out = json.loads(json.dumps(record))
        out["checks"]["passed"] = True
        for c in out["checks"]["checks"]:
            c["status"] = "passed"
        out["checks"]["counts"] = {"passed": len(out["checks"]["checks"]),
                                   "failed": 0, "unavailable": 0}
        return _resign(out)

    with wrong_rule():
        return _record_and_verify(lambda: (public.grad(custom_rule_user), (_x3(),)),
                                  edit=claim_passed)


def _cases() -> list[Case]:
    s2s = public  # the cases read as user code does
    x3 = _x3
    cases = [
        _accept("grad", "grad(mse) w.r.t. the weights",
                lambda: (s2s.grad(mse), _mse_args())),
        _accept("grad argnums=(0, 1)", "two gradients at once",
                lambda: (s2s.grad(two_args, argnums=(0, 1)), (x3(), x3() ** 2))),
        _accept("grad of a dict pytree", "a 2-layer MLP's parameters as a dict",
                lambda: (s2s.grad(mlp), _mlp_args())),
        _accept("value_and_grad has_aux", "value, aux and gradient",
                lambda: (s2s.value_and_grad(with_aux, has_aux=True),
                         (x3(), _rng().normal(size=(4, 3))))),
        _accept("jvp", "forward mode of a vector function",
                lambda: (JvpOf(vec), ((x3(),), (np.array([1.0, 0.5, -2.0]),)))),
        _accept("vjp", "reverse mode of a vector function",
                lambda: (VjpOf(vec), ((x3(),), np.array([0.2, 1.0, -0.7])))),
        _accept("vmap in_axes=(None, 0)", "one weight matrix, a batch of inputs",
                lambda: (s2s.vmap(affine, in_axes=(None, 0)),
                         (_rng().normal(size=(2, 3)), _rng().normal(size=(5, 3))))),
        _accept("vmap(grad) per-example", "per-example gradients of mse",
                lambda: (s2s.vmap(s2s.grad(mse), in_axes=(None, 0, 0)),
                         (_rng().normal(size=3), _rng().normal(size=(4, 2, 3)),
                          _rng().normal(size=(4, 2))))),
        _accept("grad(grad)", "second derivative of a scalar function",
                lambda: (s2s.grad(s2s.grad(scalar)), (0.7,))),
        _accept("jvp(grad) HVP", "Hessian-vector product by forward over reverse",
                lambda: (JvpOf(s2s.grad(mse)),
                         (_mse_args(), (np.array([1.0, -1.0, 0.5]), np.zeros((5, 3)),
                                        np.zeros(5))))),
        _accept("jacfwd", "Jacobian by forward mode",
                lambda: (s2s.jacfwd(vec), (x3(),))),
        _accept("jacrev", "Jacobian by reverse mode",
                lambda: (s2s.jacrev(vec), (x3(),))),
        _accept("hessian", "jacfwd(grad(f))", lambda: (s2s.hessian(mse), _mse_args())),
        _accept("grad through a for loop", "a loop with a carried sum",
                lambda: (s2s.grad(loop_sum), (x3(),))),
        _accept("grad through a value-dependent while",
                "reverse mode through a while whose trip count depends on x (JAX "
                "refuses this for lax.while_loop; s2s tapes the iterations)",
                lambda: (s2s.grad(halve_until_small), (np.array([1.0, 2.0, 3.0]),))),
        _accept("grad through an if", "a branch on a value",
                lambda: (s2s.grad(branch), (x3(),))),
        _accept("jit(grad)", "the emitted gradient under s2s.jit (numpy backend)",
                lambda: (s2s.jit(s2s.grad(mse), backend="numpy"), _mse_args())),
        _accept("vmap(vmap)", "a doubly batched reduction",
                lambda: (s2s.vmap(s2s.vmap(rowsum)), (_rng().normal(size=(3, 4, 2)),))),
        # ---- invalid compositions: s2s refuses them -----------------------------
    ]
    return cases + _cases_continued()


def _cases_continued() -> list[Case]:
    """The matrix's refusals and the compositions that follow them, in its order."""
    s2s = public  # (as in _cases)
    x3 = _x3
    return [
        _reject("grad of a non-scalar output", "grad(sin) on a vector",
                lambda: (s2s.grad(non_scalar), (x3(),))),
        _reject("vmap with inconsistent batch sizes", "axes of size 3 and 4",
                lambda: (s2s.vmap(two_args), (np.ones(3), np.ones(4)))),
        _reject("grad w.r.t. an integer argument", "argnums=0 on an int array",
                lambda: (s2s.grad(index_power), (np.arange(3), 2.0))),
        _reject("jvp tangent of the wrong shape", "primal (3,), tangent (2,)",
                lambda: (JvpOf(vec), ((x3(),), (np.ones(2),)))),
        _reject("vjp cotangent of the wrong shape", "output (3,), cotangent (4,)",
                lambda: (VjpOf(vec), ((x3(),), np.ones(4)))),
        _reject("grad argnums out of range", "argnums=2 with two arguments",
                lambda: (s2s.grad(two_args, argnums=2), (x3(), x3()))),
        _reject("has_aux without a pair", "has_aux=True, one output",
                lambda: (s2s.grad(not_a_pair, has_aux=True), (x3(),))),
        _reject("unsupported syntax", "a try statement",
                lambda: (s2s.grad(with_try), (x3(),))),
        _accept("vmap of a batched while condition",
                "examples finish at different iterations: the loop runs while any "
                "does, finished ones keep their values",
                lambda: (s2s.vmap(vmapped_while),
                         (np.array([[1.0, 2.0], [0.05, 0.05], [3.0, -1.0]]),))),
        _accept("vmap of grad through a batched while condition",
                "each example pops its own tape entries: the backward loop runs its "
                "last n steps under a mask",
                lambda: (s2s.vmap(s2s.grad(vmapped_while)),
                         (np.array([[1.0, 2.0], [0.05, 0.05], [3.0, -1.0]]),))),
        _reject("vmap of a loop inside a batched if",
                "the branch loops: both branches cannot run as values; s2s refuses it",
                lambda: (s2s.vmap(branch_loop),
                         (np.array([[1.0, 2.0], [-0.5, 0.05], [3.0, -1.0]]),))),
        # ---- records that must not verify -------------------------------------------
        _reject("emitted code edited after signing", "np.cos -> np.sin in the record",
                lambda: (s2s.grad(scalar), (0.7,)), edit=_edit_emitted),
        _reject("emitted code edited, unsigned, hashes fixed",
                "same edit, sha256 recomputed, signature dropped: re-derivation",
                lambda: (s2s.grad(scalar), (0.7,)), edit=_edit_emitted_unsigned,
                verify_key=False),  # no key at all: re-derivation only
        Case("user source changed since signing", "rejected",
             "the user's module edited on disk after recording", _source_changed),
        _reject("forged transform stack", "argnums 0 -> 1, re-signed with the key",
                lambda: (s2s.grad(two_args), (x3(), x3() ** 2)), edit=_forge_stack),
        _reject("forged rule provenance", "sin_vjp's hash replaced, re-signed",
                lambda: (s2s.grad(scalar), (0.7,)), edit=_forge_rule),
        _reject("wrong key", "signed with the matrix key, checked with another",
                lambda: (s2s.grad(mse), _mse_args()), verify_key=OTHER_KEY),
        _reject("unsigned record where a key is configured", "signature stripped",
                lambda: (s2s.grad(mse), _mse_args()), edit=_unsigned),
        _reject("record without evidence", "recorded with checks=False",
                lambda: (s2s.grad(mse), _mse_args()), checks=False),
        Case("record whose checks fail (wrong rule)", "rejected",
             "a primitive registered with a deliberately wrong VJP rule",
             _wrong_rule_case),
        Case("record claiming checks it fails", "rejected",
             "the wrong rule's record edited to say passed, re-signed with the key",
             _lying_checks_case),
    ]


CASES = _cases


def run_matrix() -> list[dict[str, Any]]:
    """Run every case now; one dict per case (case, verdict, reason, ...)."""
    rows = []
    for case in _cases():
        try:
            found = case.run()
        except Exception as exc:  # a case that crashes is reported, not hidden
            found = {"verdict": "error", "stage": "matrix", "reason": _reason(exc)}
        rows.append({"case": case.name, "what": case.what, "expect": case.expect,
                     **found})
    return rows


_HEX = re.compile(r"\b[0-9a-f]{8,}\b(\.\.\.)?")


def _stable(text: str) -> str:
    """Reasons as the matrix file shows them: hashes and paths elided."""
    text = _HEX.sub("…", text)
    text = re.sub(r"error \S+ > tolerance \S+?(;|$)", r"error above tolerance\1", text)
    # the first differing line quotes emitted code, which changes with the core's
    # naming: the JSON output keeps it, the file says only that it differs
    text = re.sub(r"(differs from the recorded): line \d+: .*$",
                  r"\1 (`--json` quotes the first differing line)", text)
    text = re.sub(r"<s2s:[^>]*>", "<s2s:…>", text)
    return text.replace("|", "/")


def matrix_markdown(rows: list[dict[str, Any]]) -> str:
    accepted = sum(r["verdict"] == "accepted" for r in rows)
    rejected = sum(r["verdict"] == "rejected" for r in rows)
    lines = [
        "# Ledger matrix",
        "",
        "Generated by `s2s ledger matrix --write docs/ledger-matrix.md` (the cases are in",
        "`s2s/tools/cli_ledger.py`); `tests/test_ledger.py` runs them again and fails when a",
        "verdict or this file changes.  Every verdict comes from running s2s and the",
        "ledger: *accepted* means recorded, signed, verified by re-derivation, with",
        "every check passing; *rejected* means s2s refused the composition, or `verify`",
        "refused the record, for the reason shown.  Hashes and quoted emitted lines are",
        "elided (`s2s ledger matrix --json` has them).",
        "",
        f"{len(rows)} cases: {accepted} accepted, {rejected} rejected.",
        "",
        "| case | what | verdict | stage | reason / evidence |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        detail = r.get("evidence") or r["reason"]
        lines.append(f"| {r['case']} | {_stable(r['what'])} | **{r['verdict']}** | "
                     f"{r['stage']} | {_stable(detail)} |")
    return "\n".join(lines) + "\n"


# ---- the command line ------------------------------------------------------------


def _verify_cmd(args: argparse.Namespace) -> int:
    path = Path(args.record)
    try:
        before = path.read_bytes()
        record = load(path)
    except OSError as exc:
        print(f"s2s ledger verify: cannot read {path}: {type(exc).__name__}",
              file=sys.stderr)
        return 2
    except LedgerError as exc:
        print(f"s2s ledger verify: {exc}", file=sys.stderr)
        return 2
    result = verify(record, allow_unsigned=args.allow_unsigned,
                    rederive=not args.no_rederive, trust_code=args.trust_code)
    try:
        after = path.read_bytes()
    except OSError:
        after = None
    if after != before:  # (code a trusted record names may write files)
        reason = (f"the record file {path} was changed while it was verified (by the "
                  "code the record names): nothing it says now was verified; restore it "
                  "and move the code that writes it under `if __name__ == \"__main__\":`")
        result = {**result, "ok": False, "reason": f"record file: {reason}",
                  "steps": result["steps"] + [{"step": "record file", "status": "failed",
                                               "detail": reason}]}
    if args.json:
        json.dump(result, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:  # (details quote the record's text: no control characters reach the terminal)
        for step in result["steps"]:
            print(_printable(f"{step['status']:>7}  {step['step']}: {step['detail']}"))
        print(_printable(("OK: " if result["ok"] else "FAILED: ") + result["reason"]))
    return 0 if result["ok"] else 1


def _printable(text: str) -> str:
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _matrix_cmd(args: argparse.Namespace) -> int:
    rows = run_matrix()
    text = matrix_markdown(rows)
    if args.write:
        Path(args.write).write_text(text)
    if args.json:
        json.dump(rows, sys.stdout, indent=1)
        sys.stdout.write("\n")
    elif args.markdown:
        sys.stdout.write(text)
    elif not args.write:
        for r in rows:
            print(f"{r['verdict']:<9} {r['case']:<46} {r['reason']}")
    bad = [r for r in rows if r["verdict"] not in ("accepted", "rejected")]
    return 1 if bad else 0


def register(subparsers: Any) -> None:
    ledger = subparsers.add_parser("ledger", help="transform records: verify, matrix")
    sub = ledger.add_subparsers(dest="ledger_command", required=True)
    v = sub.add_parser(
        "verify", help="verify a record (exit 1 with the reason if not)",
        description="Verify a ledger record without running any code it names: schema, "
                    "signature, hashes, the recorded checks' verdict, the function's "
                    "source text in the recorded file (read, not run) and the inputs. "
                    "A valid signature verifies the record; an unsigned record is "
                    "verified only by re-deriving it, which needs --trust-code.")
    v.add_argument("record", help="a record saved by s2s.ledger.save")
    v.add_argument("--trust-code", action="store_true",
                   help="also re-derive the record: import the module it names (else "
                        "load its file), regenerate the code and run the checks again. "
                        "This runs code the record names, after the signature step "
                        "passed: only for records whose code you trust")
    v.add_argument("--allow-unsigned", action="store_true",
                   help="accept an unsigned record even when a key is configured")
    v.add_argument("--no-rederive", action="store_true",
                   help="check schema, signature, hashes and the recorded verdict only")
    v.add_argument("--json", action="store_true", help="the result as JSON")
    v.set_defaults(handler=_verify_cmd)
    m = sub.add_parser("matrix", help="run the semantic proof matrix")
    form = m.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true",
                      help="a JSON list: case, verdict, reason, ...")
    form.add_argument("--markdown", action="store_true", help="docs/ledger-matrix.md")
    m.add_argument("--write", metavar="PATH", help="write the markdown to PATH")
    m.set_defaults(handler=_matrix_cmd)
