"""The transform ledger: records, signing, verification, tampering, the CLI, the matrix."""

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import s2s
from s2s.tools import cli_ledger
from s2s.tools.cli import main
from s2s.tools.ledger import (
    KEY_ENV,
    KEY_FILE_ENV,
    LedgerError,
    canonical,
    decode_tree,
    encode_tree,
    ledger,
    load,
    save,
    sign,
)
from s2s.tools.ledger_verify import verify
from s2s.tools.selfcheck import JvpOf

ROOT = Path(__file__).parent.parent
SCHEMA = ROOT / "docs" / "ledger-schema.json"
MATRIX = ROOT / "docs" / "ledger-matrix.md"
KEY = b"test key \x00\xff"


def loss(w, x, y):
    pred = np.tanh(x @ w)
    return np.mean((pred - y) ** 2)


def vec(x):
    return np.sin(x) * np.sum(x ** 2)


def energy(x):
    return np.sum(np.sin(x) * x ** 2)


if hasattr(s2s, "custom_jvp"):  # (the lead's custom rules, when present)

    @s2s.custom_jvp
    def half_sin(x):
        return np.sin(x)

    @half_sin.defjvp
    def half_sin_jvp(primals, tangents):
        (x,) = primals
        (x_dot,) = tangents
        return np.sin(x), 0.5 * np.cos(x) * x_dot  # half the derivative, on purpose

    def uses_half_sin(x):
        return np.sum(half_sin(x) ** 2)


square_sum = lambda x: np.sum(x ** 2)  # noqa: E731


def args():
    r = np.random.default_rng(3)
    return r.normal(size=3), r.normal(size=(4, 3)), r.normal(size=4)


@pytest.fixture(autouse=True)
def no_env_key(monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    monkeypatch.delenv(KEY_FILE_ENV, raising=False)


@pytest.fixture(scope="module")
def signed():
    return ledger(s2s.grad(loss), *args(), key=KEY)


# ---- the record ------------------------------------------------------------------


def test_record_fields_and_schema(signed):
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(signed, json.loads(SCHEMA.read_text()))
    unsigned = ledger(s2s.vmap(s2s.grad(loss), in_axes=(None, 0, 0)),
                      args()[0], np.ones((2, 4, 3)), np.ones((2, 4)))
    jsonschema.validate(unsigned, json.loads(SCHEMA.read_text()))
    assert signed["root"]["qualname"] == "loss"
    assert signed["root"]["file"] == str(Path(__file__).resolve())
    assert signed["transforms"] == [{"transform": "grad", "argnums": 0, "has_aux": False}]
    assert "def loss_grad(w, x, y):" in signed["emitted"][0]["text"]
    assert signed["checks"]["passed"] is True
    assert signed["signature"]["signed"] is True
    assert unsigned["signature"] == {
        "scheme": "none", "signed": False,
        "note": f"unsigned: no key configured ({KEY_ENV} or {KEY_FILE_ENV})"}
    assert [t["transform"] for t in unsigned["transforms"]] == ["grad", "vmap"]


def test_provenance_names_the_rules_and_their_hashes(signed):
    prov = signed["provenance"]
    assert prov["granularity"] == "ir-statement"
    prims = {s["prim"]: s for s in prov["levels"][0]["statements"]}
    assert prims["tanh"]["rules"] == ["s2s.primitives.elementwise.tanh_vjp"]
    assert prims["tanh"]["at"] == f"{Path(__file__).name}:{loss.__code__.co_firstlineno + 1}:12"
    assert prims["tanh"]["emitted"] is True
    import hashlib
    import inspect

    from s2s.primitives import PRIMITIVES

    src = inspect.getsource(PRIMITIVES["tanh"].vjp)
    assert prov["rules"]["s2s.primitives.elementwise.tanh_vjp"] == \
        hashlib.sha256(src.encode()).hexdigest()
    # a composition: the outer level's rules apply to the inner's emitted code
    record = ledger(s2s.hessian(energy), np.array([0.1, 0.2, 0.3]), checks=False)
    parts = [(lv["level"], lv["part"], lv["rule_kind"]) for lv in
             record["provenance"]["levels"]]
    assert parts == [(0, "grad", "vjp"), (1, "jvp", "jvp"), (1, "vmap", "batch")]
    assert record["provenance"]["levels"][1]["function"] == "energy_grad"


def test_a_custom_rule_is_named_in_the_provenance_and_judged_by_its_evidence():
    if not hasattr(s2s, "custom_jvp"):
        pytest.skip("s2s.custom_jvp is not available")
    record = ledger(s2s.grad(uses_half_sin), np.array([0.3, -0.5, 1.2]), key=KEY)
    stmts = record["provenance"]["levels"][0]["statements"]
    call = next(s for s in stmts if s.get("custom"))
    assert call["rules"] == [f"{__name__}.half_sin_jvp"] and call["emitted"]
    assert not any(s["function"] == "half_sin" for s in stmts)  # its body's rules
    status = {c["name"]: c["status"] for c in record["checks"]["checks"]}
    # finite differences see the true derivative, not the rule's half of it
    assert status["fd_probe"] == "failed"
    try:
        import jax  # noqa: F401
    except ImportError:
        pass
    else:  # JAX applies the same custom rule: s2s applied it faithfully
        assert status["jax_oracle"] == "passed"
    result = verify(record, key=KEY)
    assert not result["ok"] and "fd_probe" in result["reason"]


def test_inputs_round_trip_bit_exactly():
    tree = (np.array([1.5, np.nan, -np.inf], np.float32), {"a": 3, 7: [True, None]},
            0.1, np.float64(2.5), np.arange(6).reshape(2, 3), np.zeros((0, 2)))
    back = decode_tree(json.loads(json.dumps(encode_tree(tree))))
    assert back[0].dtype == np.float32
    np.testing.assert_array_equal(back[0], tree[0])
    assert back[1] == {"a": 3, 7: [True, None]} and list(back[1]) == ["a", 7]
    assert back[2] == 0.1 and type(back[2]) is float
    assert back[3] == 2.5 and isinstance(back[3], np.float64)
    np.testing.assert_array_equal(back[4], tree[4])
    assert back[5].shape == (0, 2)
    with pytest.raises(LedgerError):
        encode_tree(object())


def test_canonical_json_ignores_order_and_signature():
    a = {"b": 1, "a": [1, 2], "signature": {"x": 1}}
    b = {"a": [1, 2], "b": 1}
    assert canonical(a) == canonical(b) == b'{"a":[1,2],"b":1}'
    with pytest.raises(LedgerError):
        canonical({"x": float("nan")})


# ---- keys --------------------------------------------------------------------------


def test_key_from_environment_and_from_file(monkeypatch, tmp_path):
    g = s2s.grad(loss)
    monkeypatch.setenv(KEY_ENV, "env-secret-123")
    record = ledger(g, *args())
    text = json.dumps(record)
    assert record["signature"]["signed"] and "env-secret-123" not in text
    assert verify(record)["ok"]
    monkeypatch.delenv(KEY_ENV)
    path = tmp_path / "key"
    path.write_bytes(b"env-secret-123\n")  # the same key, from a file
    monkeypatch.setenv(KEY_FILE_ENV, str(path))
    result = verify(record)
    assert result["ok"] and "env-secret-123" not in json.dumps(result)
    path.write_bytes(b"zz-other-9")
    result = verify(record)
    assert not result["ok"] and "zz-other-9" not in json.dumps(result)
    assert result["reason"].startswith("signature: HMAC-SHA256 mismatch")
    monkeypatch.setenv(KEY_FILE_ENV, str(tmp_path / "missing"))
    result = verify(record)
    assert not result["ok"] and "cannot be read" in result["reason"]


def test_signed_record_without_a_key_and_unsigned_with_one(signed):
    result = verify(signed)  # no key configured
    assert not result["ok"] and "no key is configured" in result["reason"]
    unsigned = sign(signed, key=False)
    assert not unsigned["signature"]["signed"]
    result = verify(unsigned, key=KEY)
    assert not result["ok"] and "unsigned" in result["reason"]
    assert verify(unsigned, key=KEY, allow_unsigned=True, trust_code=True)["ok"]
    result = verify(unsigned, trust_code=True)
    assert result["ok"] and not result["signed"] and "unsigned" in result["reason"]
    # without permission to run its code, nothing vouches for an unsigned record
    for result in (verify(unsigned), verify(unsigned, key=KEY, allow_unsigned=True)):
        assert not result["ok"] and result["reason"].startswith("unsigned: ")
        assert "--trust-code" in result["reason"] and not result["rederived"]


# ---- tampering ---------------------------------------------------------------------


def _leaf_paths(obj, path=()):
    if isinstance(obj, dict):
        if not obj:
            yield path
        for k, v in obj.items():
            yield from _leaf_paths(v, path + (k,))
    elif isinstance(obj, list):
        if not obj:
            yield path
        for i, v in enumerate(obj):
            yield from _leaf_paths(v, path + (i,))
    else:
        yield path


def _changed(value):
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return value + "x"
    if value is None:
        return 0
    return ["edited"]  # an empty container


def _edit(record, path):
    out = copy.deepcopy(record)
    target = out
    for p in path[:-1]:
        target = target[p]
    target[path[-1]] = _changed(target[path[-1]])
    return out


def test_every_field_of_a_signed_record_is_covered_by_the_signature(signed):
    assert verify(signed, key=KEY)["ok"]
    paths = [p for p in _leaf_paths(signed) if p and p[0] != "signature"]
    assert len(paths) > 100
    for path in paths:
        result = verify(_edit(signed, path), key=KEY)
        assert not result["ok"], path
        assert result["reason"].startswith(("signature: HMAC-SHA256 mismatch",
                                            "schema:")), (path, result["reason"])
    for field in list(signed):  # removing a field
        broken = {k: v for k, v in signed.items() if k != field}
        result = verify(broken, key=KEY)
        assert not result["ok"] and result["reason"].startswith("schema:"), field
    for path in _leaf_paths(signed["signature"]):
        result = verify(_edit(signed, ("signature",) + path), key=KEY)
        assert not result["ok"] and result["reason"].startswith("signature:"), path


def _unsigned_edit(record, path, value):
    out = copy.deepcopy(record)
    target = out
    for p in path[:-1]:
        target = target[p]
    target[path[-1]] = value
    return sign(out, key=False)


def test_re_derivation_catches_edits_a_signature_would_also_catch(signed):
    """Unsigned records rest on re-derivation alone: each claim it can re-derive is
    checked (the example inputs, versions and timestamp are covered only by a
    signature)."""
    base = sign(signed, key=False)
    assert verify(base, key=False, trust_code=True)["ok"]
    text = base["emitted"][0]["text"]
    edited_text = text.replace("np.tanh", "np.sinh", 1)
    import hashlib

    cases = {
        ("root", "source_sha256"): ("0" * 64, "source:"),
        ("root", "qualname"): ("vec", "source:"),
        ("transforms", 0, "argnums"): (1, "regenerate:"),
        ("emitted", 0, "text"): (edited_text, "hashes:"),
        ("emitted", 0, "sha256"): ("0" * 64, "hashes:"),
        ("provenance", "levels", 0, "statements", 0, "prim"): ("sin", "provenance:"),
        ("checks", "passed"): (False, "recorded checks:"),
        ("schema",): ("s2s-ledger/0", "schema:"),
    }
    for path, (value, reason) in cases.items():
        result = verify(_unsigned_edit(base, path, value), key=False, trust_code=True)
        assert not result["ok"] and result["reason"].startswith(reason), (path, result)
    both = _unsigned_edit(base, ("emitted", 0, "text"), edited_text)
    both["emitted"][0]["sha256"] = hashlib.sha256(edited_text.encode()).hexdigest()
    result = verify(both, key=False, trust_code=True)
    assert not result["ok"] and result["reason"].startswith("regenerate:")
    assert "np.sinh" in result["reason"]


def test_verify_reruns_the_checks(signed, monkeypatch):
    """A record whose claims all re-derive, but whose checks fail when run again."""
    with cli_ledger.wrong_rule():
        record = ledger(s2s.grad(cli_ledger.custom_rule_user),
                        np.array([0.3, -1.2, 0.8]), key=KEY)
        assert not record["checks"]["passed"]
        # a record that lies about its checks: signed, claims passed
        lying = copy.deepcopy(record)
        lying["checks"]["passed"] = True
        for c in lying["checks"]["checks"]:
            c["status"] = "passed"
        lying = sign(lying, KEY)
        assert verify(lying, key=KEY)["ok"]  # (signed, and its code not run)
        result = verify(lying, key=KEY, trust_code=True)
    assert not result["ok"] and result["reason"].startswith("checks: re-run checks fail")
    assert "fd_probe" in result["reason"]


def test_local_functions_cannot_be_re_derived():
    def inner(x):
        return np.sum(x ** 2)

    record = ledger(s2s.grad(inner), np.ones(2), key=KEY)
    result = verify(record, key=KEY, trust_code=True)
    assert not result["ok"] and "<locals>" in result["reason"]
    assert verify(record, key=KEY, rederive=False)["ok"]
    record = ledger(s2s.grad(square_sum), np.ones(2), key=KEY)
    result = verify(record, key=KEY, trust_code=True)
    assert not result["ok"] and "lambdas cannot be re-derived" in result["reason"]


# ---- the command line ----------------------------------------------------------------


@pytest.mark.slow
def test_cli_verify_in_a_fresh_process(tmp_path):
    """Another process regenerates the same emitted code (the record's function is in
    an importable module) and checks the signature from the environment."""
    record = ledger(JvpOf(cli_ledger.vec), (np.array([0.3, 0.2]),), (np.ones(2),),
                    key=b"cli-key")
    path = tmp_path / "rec.json"
    save(record, path)
    env = {**os.environ, KEY_ENV: "cli-key"}
    env.pop(KEY_FILE_ENV, None)
    run = subprocess.run([sys.executable, "-m", "s2s", "ledger", "verify", "--trust-code",
                          str(path)], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "OK: verified\n" in run.stdout and "cli-key" not in run.stdout
    assert "regenerated identically" in run.stdout
    env[KEY_ENV] = "wrong"
    run = subprocess.run([sys.executable, "-m", "s2s", "ledger", "verify", str(path)],
                         capture_output=True, text=True, env=env, cwd=tmp_path)
    assert run.returncode == 1 and "FAILED: signature: HMAC-SHA256 mismatch" in run.stdout


def test_cli_verify_exit_codes(tmp_path, capsys, signed, monkeypatch):
    path = tmp_path / "rec.json"
    save(sign(signed, b"k"), path)
    monkeypatch.setenv(KEY_ENV, "k")
    assert main(["ledger", "verify", str(path)]) == 0
    assert "OK: verified" in capsys.readouterr().out
    assert main(["ledger", "verify", "--json", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["ok"] is True
    tampered = load(path)
    tampered["transforms"][0]["argnums"] = 1
    save(tampered, path)
    assert main(["ledger", "verify", str(path)]) == 1
    assert "FAILED: signature" in capsys.readouterr().out
    (tmp_path / "bad.json").write_text("{not json")
    assert main(["ledger", "verify", str(tmp_path / "bad.json")]) == 2


# ---- the matrix ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def matrix_rows():
    import io
    from contextlib import redirect_stdout

    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main(["ledger", "matrix", "--json"]) == 0
    return json.loads(buf.getvalue())


@pytest.mark.slow
def test_matrix_verdicts(matrix_rows):
    for row in matrix_rows:
        assert {"case", "verdict", "reason"} <= set(row)
        assert row["verdict"] == row["expect"], row
    accepted = [r for r in matrix_rows if r["verdict"] == "accepted"]
    rejected = [r for r in matrix_rows if r["verdict"] == "rejected"]
    assert len(accepted) >= 12 and len(rejected) >= 12
    for r in accepted:
        assert "fd_probe" in r["evidence"] or "loop_oracle" in r["evidence"]
        assert "failed" not in r["evidence"]
    names = {r["case"] for r in matrix_rows}
    for needed in ("grad of a non-scalar output", "vmap with inconsistent batch sizes",
                   "grad w.r.t. an integer argument", "jvp tangent of the wrong shape",
                   "emitted code edited after signing", "user source changed since signing",
                   "forged transform stack", "wrong key", "unsupported syntax",
                   "record whose checks fail (wrong rule)",
                   "grad through a value-dependent while"):
        assert needed in names


@pytest.mark.slow
def test_matrix_doc_is_up_to_date(matrix_rows):
    from s2s.tools.cli_ledger import matrix_markdown

    pytest.importorskip("jax")  # the evidence column names the JAX oracle's status
    assert MATRIX.read_text() == matrix_markdown(matrix_rows), (
        "regenerate: python -m s2s ledger matrix --write docs/ledger-matrix.md")


@pytest.mark.slow
def test_matrix_leaves_the_registry_as_it_was(matrix_rows):
    from s2s.primitives import PRIMITIVES

    assert cli_ledger.WRONG_PRIM not in PRIMITIVES
    with pytest.raises(s2s.TransformError):  # refused, not the wrong rule's code
        s2s.grad(cli_ledger.custom_rule_user)(np.ones(3))


@pytest.mark.slow
def test_unsigned_edit_of_every_field_is_caught_or_documented_as_unrederivable():
    """Without a signature, every claim that can be re-derived is: editing any field
    fails verification, except the ones docs/ledger.md lists as covered by the
    signature alone (input values, measured errors, versions, timestamp)."""
    base = ledger(s2s.vmap(s2s.grad(loss), in_axes=(None, 0, 0)), args()[0],
                  np.full((2, 4, 3), 0.1), np.ones((2, 4)), key=False)
    assert verify(base, key=False, trust_code=True)["ok"]
    slipped = []
    for path in _leaf_paths(base):
        if not path or path[0] == "signature":
            continue
        result = verify(sign(_edit(base, path), False), key=False, trust_code=True)
        if result["ok"]:
            slipped.append(path)
    for path in slipped:
        assert (path[0] in ("versions", "created") or path in (("root", "module"),
                                                                ("root", "file"))
                or path[:2] == ("inputs", "args")
                or (path[:2] == ("checks", "checks") and path[-1] in ("error", "jax"))
                ), path


def test_the_function_is_found_by_module_name_or_else_by_file(tmp_path, monkeypatch):
    record = ledger(s2s.grad(cli_ledger.scalar), 0.5, key=False)
    moved = sign({**record, "root": {**record["root"], "file": "/elsewhere/cli_ledger.py"}},
                 False)
    assert verify(moved, key=False, trust_code=True)["ok"]  # another checkout: by name
    path = tmp_path / "ledger_test_user_mod.py"
    path.write_text("import numpy as np\n\n\ndef cube_sum(x):\n"
                    "    return np.sum(x ** 3)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    module = importlib.import_module("ledger_test_user_mod")
    record = ledger(s2s.grad(module.cube_sum), np.ones(2), key=False)
    del sys.modules["ledger_test_user_mod"]
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p != str(tmp_path)])
    result = verify(record, key=False, trust_code=True)  # not importable: from its file
    assert result["ok"], result
    path.unlink()
    result = verify(record, key=False, trust_code=True)
    assert not result["ok"] and "does not exist" in result["reason"]


def test_verifying_without_jax_re_runs_the_rest_of_the_evidence(signed, monkeypatch):
    import importlib

    ledger_module = importlib.import_module("s2s.tools.ledger_verify")
    monkeypatch.setattr(ledger_module, "_jax_importable", lambda: False)
    result = verify(signed, key=KEY, trust_code=True)
    assert result["ok"], result
    assert "JAX oracle was not re-run" in result["steps"][-1]["detail"]


@pytest.mark.slow
def test_a_script_run_as_main_is_verified_from_its_file(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(
        "import sys\nimport numpy as np\nimport s2s\nfrom s2s.ledger import ledger, save\n"
        "\n\ndef energy(x):\n    return np.sum(np.cos(x) * x)\n\n\n"
        "if __name__ == '__main__':\n"
        "    save(ledger(s2s.grad(energy), np.ones(3), key=False, oracle=False), sys.argv[1])\n"
    )
    rec = tmp_path / "rec.json"
    env = {k: v for k, v in os.environ.items() if k not in (KEY_ENV, KEY_FILE_ENV)}
    subprocess.run([sys.executable, str(script), str(rec)], check=True, env=env)
    record = load(rec)
    assert record["root"]["module"] == "__main__"
    result = verify(record, key=False, trust_code=True)
    assert result["ok"], result  # loaded from the file, without running its main block
