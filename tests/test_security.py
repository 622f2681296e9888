"""Nothing s2s does on the command line runs code it was not asked to run, overwrites
the user's files, or lets a path or name escape into the code it writes.

* ``ledger verify`` runs no code a record names unless ``--trust-code`` is given, and
  then only after the signature step passed; a module that records at import cannot
  recurse, rewrite the record, or turn a failure into "OK";
* an empty key is an error, never "no key";
* ``emit -o`` / ``html -o`` never overwrite the function's source (also through a
  symlink or hard link), nor any existing file without ``--force``;
* every user-controlled string in an emitted module's docstring reads back exactly.

The code a record names writes a marker file whenever it runs: where no code may run,
the tests assert that the marker does not exist.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import io
import json
import os
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import s2s
from s2s.tools.cli import main
from s2s.tools.ledger import (
    KEY_ENV,
    KEY_FILE_ENV,
    LedgerError,
    ledger,
    load,
    save,
    sign,
)
from s2s.tools.ledger_verify import verify
from s2s.tools.teach.emit import read_meta

KEY = b"security test key"
ENV = {k: v for k, v in os.environ.items() if k not in (KEY_ENV, KEY_FILE_ENV)}


@pytest.fixture(autouse=True)
def no_env_key(monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    monkeypatch.delenv(KEY_FILE_ENV, raising=False)


def run_cli(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in argv])
    return rc, out.getvalue(), err.getvalue()


def run_s2s(*argv, cwd, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "s2s", *map(str, argv)],
                          capture_output=True, text=True, cwd=cwd,
                          env=ENV if env is None else env, timeout=300)


# ---- 9. verify runs no code a record names unless told to ---------------------------


def _marker_module(tmp_path: Path, name: str) -> tuple[object, Path, Path]:
    """A module in a file that appends to a marker file whenever it is executed,
    imported under ``name`` and then made unimportable (as someone else's code is)."""
    marker = tmp_path / f"{name}.ran"
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(f"""\
        import numpy as np
        with open({str(marker)!r}, "a") as _fh:
            _fh.write("ran\\n")


        def energy(x):
            return np.sum(np.sin(x) * x)
        """))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module, path, marker


@pytest.fixture()
def recorded(tmp_path):
    """A module-level function's records, signed and unsigned; the module is then
    unloaded and not importable by name (so verifying would have to load its file)."""
    name = f"s2s_sec_mod_{abs(hash(str(tmp_path))) % 10**8}"
    module, path, marker = _marker_module(tmp_path, name)
    g = s2s.grad(module.energy)
    signed = ledger(g, np.array([0.3, -0.2, 0.9]), key=KEY, oracle=False)
    unsigned = sign(signed, False)
    del sys.modules[name]
    marker.unlink()
    return signed, unsigned, path, marker


def _status(result) -> dict[str, str]:
    return {s["step"]: s["status"] for s in result["steps"]}


def test_verifying_an_unsigned_record_runs_none_of_its_code(recorded) -> None:
    _, unsigned, _, marker = recorded
    result = verify(unsigned)  # no key configured
    assert not marker.exists(), "verify executed the file the record names"
    assert not result["ok"] and not result["rederived"]
    assert result["reason"].startswith("unsigned: nothing vouches for an unsigned record")
    assert "--trust-code" in result["reason"]
    status = _status(result)
    assert status["source"] == "passed"  # the file's text was read, not run
    assert status["regenerate"] == status["checks"] == status["load"] == "skipped"
    result = verify(unsigned, key=KEY, allow_unsigned=True)
    assert not marker.exists() and not result["ok"]


def test_verifying_a_signed_record_runs_none_of_its_code(recorded) -> None:
    signed, _, _, marker = recorded
    result = verify(signed, key=KEY)
    assert not marker.exists(), "verify executed the file the record names"
    assert result["ok"] and result["signed"] and not result["rederived"]
    assert result["reason"].startswith("verified without running code")
    assert "--trust-code" in result["reason"]


def test_trust_code_runs_it_only_after_the_signature_checks_out(recorded) -> None:
    signed, unsigned, _, marker = recorded
    result = verify(signed, key=b"another key", trust_code=True)
    assert not result["ok"] and result["reason"].startswith("signature: HMAC-SHA256")
    result = verify(unsigned, key=KEY, trust_code=True)  # unsigned, not allowed
    assert not result["ok"] and result["reason"].startswith("signature:")
    edited = json.loads(json.dumps(signed))
    edited["transforms"][0]["argnums"] = 1
    assert not verify(edited, key=KEY, trust_code=True)["ok"]
    assert not marker.exists()
    result = verify(signed, key=KEY, trust_code=True)  # asked for, signature valid
    assert result["ok"] and result["rederived"], result
    assert marker.exists()  # (the flag does what it says)
    assert _status(result)["regenerate"] == _status(result)["checks"] == "passed"


def test_an_edited_source_file_is_refused_without_running_it(recorded) -> None:
    signed, _, path, marker = recorded
    path.write_text(path.read_text().replace("np.sin(x) * x", "np.cos(x) * x"))
    for trust in (False, True):
        result = verify(signed, key=KEY, trust_code=trust)
        assert not result["ok"]
        assert result["reason"].startswith("source: the source of energy changed")
    assert not marker.exists()  # refused from its text, before anything was loaded


def _evil_record(recorded, tmp_path: Path) -> tuple[Path, Path, Path]:
    """A record naming a module importable from where verify runs (the current
    directory is on ``sys.path`` under ``python -m``): its folder, the record, and the
    file the module writes when it runs."""
    _, unsigned, _, _ = recorded
    evil = tmp_path / "work"
    evil.mkdir()
    evil_marker = tmp_path / "evil.ran"
    (evil / "s2s_sec_evil.py").write_text(
        f"open({str(evil_marker)!r}, 'a').write('ran')\n")
    record = sign({**unsigned, "root": {**unsigned["root"], "module": "s2s_sec_evil"}},
                  False)
    path = evil / "rec.json"
    save(record, path)
    return evil, path, evil_marker


@pytest.mark.parametrize("flags", [(), ("--allow-unsigned",), ("--no-rederive",), ("--json",)],
                         ids=["plain", "allow-unsigned", "no-rederive", "json"])
def test_cli_verify_with_any_flag_imports_no_module_a_record_names(
        recorded, tmp_path, flags) -> None:
    """(A sweep, one subprocess a case: the default tier runs one of the four.)"""
    marker = recorded[3]
    evil, path, evil_marker = _evil_record(recorded, tmp_path)
    run = run_s2s("ledger", "verify", *flags, path, cwd=evil)
    assert run.returncode == 1, (flags, run.stdout, run.stderr)
    assert not evil_marker.exists() and not marker.exists(), flags
    assert "Traceback" not in run.stderr


def test_cli_verify_imports_no_module_a_record_names(recorded, tmp_path) -> None:
    """Unless told to (``--trust-code``), and never with a key configured."""
    evil, path, evil_marker = _evil_record(recorded, tmp_path)
    run = run_s2s("ledger", "verify", path, cwd=evil)
    assert run.returncode == 1 and not evil_marker.exists()
    assert "FAILED: unsigned: " in run.stdout and "--trust-code" in run.stdout
    assert "skipped  regenerate" in run.stdout
    # with a key configured, an unsigned record is refused before anything else
    run = run_s2s("ledger", "verify", "--trust-code", path, cwd=evil,
                  env={**ENV, KEY_ENV: "k"})
    assert run.returncode == 1 and "FAILED: signature: the record is unsigned" in run.stdout
    assert not evil_marker.exists()
    # asked for: the module imported by name runs (and is not the recorded function)
    run = run_s2s("ledger", "verify", "--trust-code", path, cwd=evil)
    assert run.returncode == 1 and evil_marker.exists()


# ---- 10. a module that records at import: no loop, no rewrite, no false "OK" ----------

SCRIPT = """\
import numpy as np
import s2s
from s2s.ledger import ledger, save

with open({marker!r}, "a") as _fh:
    _fh.write("ran\\n")


def energy(x):
    return x * x * 3.0


save(ledger(s2s.grad(energy), 0.5, key=False, oracle={oracle}), {record!r})
"""


def _script(tmp_path: Path, oracle: bool) -> tuple[Path, Path, Path]:
    marker, record = tmp_path / "script.ran", tmp_path / "rec.json"
    script = tmp_path / "train.py"
    script.write_text(SCRIPT.format(marker=str(marker), record=str(record), oracle=oracle))
    return script, marker, record


def _runs(marker: Path) -> int:
    return len(marker.read_text().splitlines()) if marker.exists() else 0


def test_verify_of_a_script_without_a_main_guard(tmp_path) -> None:
    script, marker, record = _script(tmp_path, oracle=False)
    subprocess.run([sys.executable, str(script)], check=True, env=ENV, cwd=tmp_path,
                   timeout=300)
    assert load(record)["root"]["module"] == "__main__"
    before, runs = record.read_bytes(), _runs(marker)
    run = run_s2s("ledger", "verify", record, cwd=tmp_path)
    assert run.returncode == 1 and "FAILED: unsigned:" in run.stdout
    assert _runs(marker) == runs and record.read_bytes() == before
    run = run_s2s("ledger", "verify", "--trust-code", record, cwd=tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "OK" not in run.stdout and "Traceback" not in run.stderr
    assert "FAILED: load: loading" in run.stdout
    assert '`if __name__ == "__main__":`' in run.stdout
    assert _runs(marker) == runs + 1  # loaded once: no re-execution loop
    assert record.read_bytes() == before  # the record verified was not rewritten


@pytest.mark.slow
def test_recording_from_a_module_that_records_at_import_does_not_recurse(tmp_path) -> None:
    pytest.importorskip("jax")  # the JAX oracle executes the module again
    script, marker, record = _script(tmp_path, oracle=True)
    subprocess.run([sys.executable, str(script)], check=True, env=ENV, cwd=tmp_path,
                   timeout=300)
    assert _runs(marker) <= 2  # the script, and at most one JAX twin of it
    oracle = next(c for c in load(record)["checks"]["checks"] if c["name"] == "jax_oracle")
    assert oracle["status"] == "unavailable" and "LedgerError" in oracle["reason"]


@pytest.mark.slow
def test_cli_verify_fails_when_the_record_file_changes_while_verifying(tmp_path) -> None:
    name = "s2s_sec_rewrites"
    path = tmp_path / f"{name}.py"
    rec = tmp_path / "rec.json"
    path.write_text(textwrap.dedent(f"""\
        import os
        import numpy as np
        if os.environ.get("S2S_SEC_REWRITE"):
            with open({str(rec)!r}, "a") as _fh:
                _fh.write(" ")


        def energy(x):
            return np.sum(x ** 3)
        """))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
        save(ledger(s2s.grad(module.energy), np.ones(2), key=False, oracle=False), rec)
    finally:
        del sys.modules[name]
    run = run_s2s("ledger", "verify", "--trust-code", rec, cwd=tmp_path)
    assert run.returncode == 0 and "OK: verified" in run.stdout, run.stdout + run.stderr
    run = run_s2s("ledger", "verify", "--trust-code", rec, cwd=tmp_path,
                  env={**ENV, "S2S_SEC_REWRITE": "1"})
    assert run.returncode == 1 and "OK" not in run.stdout
    assert f"FAILED: record file: the record file {rec} was changed" in run.stdout


def test_code_that_exits_while_verified_is_a_failure(tmp_path) -> None:
    name = "s2s_sec_exits"
    path = tmp_path / f"{name}.py"
    path.write_text("import os\nimport numpy as np\n"
                    "if os.environ.get('S2S_SEC_EXIT'):\n    raise SystemExit(0)\n\n\n"
                    "def energy(x):\n    return np.sum(x ** 3)\n")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
        record = ledger(s2s.grad(module.energy), np.ones(2), key=KEY, oracle=False)
    finally:
        del sys.modules[name]
    rec = tmp_path / "rec.json"
    save(record, rec)
    run = run_s2s("ledger", "verify", "--trust-code", rec, cwd=tmp_path,
                  env={**ENV, KEY_ENV: KEY.decode(), "S2S_SEC_EXIT": "1"})
    assert run.returncode == 1, run.stdout + run.stderr
    assert "FAILED: load: " in run.stdout and "SystemExit" in run.stdout


def test_ledger_and_save_refuse_to_run_inside_verify(recorded, monkeypatch) -> None:
    """What a trusted module runs while it is verified cannot record or save."""
    ledger_module = sys.modules["s2s.tools.ledger_verify"]
    signed, _, _, _ = recorded
    seen = []

    def spy(*args, **kwargs):
        for call in (lambda: save(signed, "/nonexistent/x.json"),
                     lambda: ledger(object(), 0.1),
                     lambda: verify(signed)):
            with pytest.raises(LedgerError, match="was called while s2s ledger verify"):
                call()
        seen.append(True)
        return original(*args, **kwargs)

    original = ledger_module._sc.rebuild
    monkeypatch.setattr(ledger_module._sc, "rebuild", spy)
    result = verify(signed, key=KEY, trust_code=True)
    assert result["ok"], result
    assert seen == [True]


# ---- 11. an empty key is an error ------------------------------------------------------


def test_an_empty_key_is_an_error_not_no_key(recorded, monkeypatch, tmp_path) -> None:
    signed, unsigned, _, marker = recorded
    g = s2s.grad(lambda x: np.sin(x) * x)
    for var, value in ((KEY_ENV, ""), (KEY_ENV, "  \n"), (KEY_FILE_ENV, "")):
        monkeypatch.setenv(var, value)
        with pytest.raises(LedgerError, match=f"{var} is set but empty"):
            ledger(g, 0.3)
        for record in (signed, unsigned):
            result = verify(record, trust_code=True)
            assert not result["ok"]
            assert result["reason"].startswith(f"signature: {var} is set but empty")
        monkeypatch.delenv(var)
    assert not marker.exists()
    for key in (b"", b" "):
        with pytest.raises(LedgerError, match="the key is empty"):
            sign(signed, key)
        with pytest.raises(LedgerError, match="the key is empty"):
            ledger(g, 0.3, key=key)
        assert verify(signed, key=key)["reason"].startswith("signature: the key is empty")
    rec = tmp_path / "rec.json"
    save(unsigned, rec)
    run = run_s2s("ledger", "verify", "--trust-code", rec, cwd=tmp_path,
                  env={**ENV, KEY_ENV: ""})
    assert run.returncode == 1
    assert f"FAILED: signature: {KEY_ENV} is set but empty" in run.stdout
    assert not marker.exists()


# ---- 12. emit -o / html -o never overwrite the source ---------------------------------

USER = """\
import numpy as np


def loss(w):
    return np.sum(np.sin(w) ** 2)
"""


@pytest.fixture()
def user_source(tmp_path) -> Path:
    path = tmp_path / "user_src.py"
    path.write_text(USER)
    return path


@pytest.mark.parametrize("command", ["emit", "html"])
def test_output_never_overwrites_the_source_file(user_source, tmp_path, command) -> None:
    link = tmp_path / "link.py"
    link.symlink_to(user_source)
    hard = tmp_path / "hard.py"
    os.link(user_source, hard)
    dangling = tmp_path / "dangling.py"
    for target, output in ((user_source, user_source), (user_source, link),
                           (link, user_source), (user_source, hard),
                           (Path(os.path.relpath(user_source)), user_source)):
        for force in ((), ("--force",)):
            rc, out, err = run_cli(command, f"{target}:loss", "-o", output, *force)
            assert rc == 2, (target, output, force, err)
            assert "is the source file of" in err and "refusing to overwrite" in err
            assert "Traceback" not in err and err.count("\n") == 1
            assert user_source.read_text() == USER
    assert link.is_symlink() and hard.read_text() == USER
    dangling.symlink_to(tmp_path / "elsewhere.txt")
    rc, _, err = run_cli(command, f"{user_source}:loss", "-o", dangling)
    assert rc == 2 and "exists" in err and not (tmp_path / "elsewhere.txt").exists()


@pytest.mark.parametrize("command", ["emit", "html"])
def test_output_refuses_an_existing_file_unless_forced(user_source, tmp_path,
                                                       command) -> None:
    other = tmp_path / "other.txt"
    other.write_text("keep me")
    rc, _, err = run_cli(command, f"{user_source}:loss", "-o", other)
    assert rc == 2 and f"-o {other} exists: refusing to overwrite it" in err
    assert "--force" in err and other.read_text() == "keep me"
    rc, _, err = run_cli(command, f"{user_source}:loss", "-o", other, "--force")
    assert rc == 0, err
    assert other.read_text() != "keep me"
    # a symlink at the output is replaced, not written through
    kept = tmp_path / "kept.txt"
    kept.write_text("keep me too")
    link = tmp_path / "out_link"
    link.symlink_to(kept)
    assert run_cli(command, f"{user_source}:loss", "-o", link)[0] == 2
    assert run_cli(command, f"{user_source}:loss", "-o", link, "--force")[0] == 0
    assert kept.read_text() == "keep me too" and not link.is_symlink()
    rc, _, err = run_cli(command, f"{user_source}:loss", "-o", tmp_path)
    assert rc == 2 and "is a directory" in err
    rc, _, err = run_cli(command, f"{user_source}:loss", "-o", tmp_path / "no" / "x.py")
    assert rc == 2 and "cannot write" in err and "Traceback" not in err


def test_emit_to_stdout_still_works(user_source) -> None:
    rc, out, _ = run_cli("emit", f"{user_source}:loss", "-o", "-")
    assert rc == 0 and "def loss_grad(w):" in out
    assert user_source.read_text() == USER


# ---- 13. user text in the emitted docstring is quoted --------------------------------

NASTY_DIRS = [
    'q"""\nopen("INJECTED", "w").write("x")\n"""',  # ends the docstring, runs code
    "C:\\Users\\new\\Name",  # \U and \N: invalid escapes in a plain literal
    "back\\slash\\",  # a trailing backslash
    "it's \"quoted\"",
    "tab\there and\rreturn",
    "line\u2028sep\x0bvt\x85nel",  # line breaks to str.splitlines
    "trailing space ",
    "\n# s2s-meta: {\"entry\": \"evil\"}",  # would pass for the meta line
    "unicode ☃ é 𝔘",
]


@pytest.mark.parametrize("name", NASTY_DIRS, ids=range(len(NASTY_DIRS)))
def test_emitted_docstring_reads_back_exactly(tmp_path, monkeypatch, name) -> None:
    folder = tmp_path / name
    folder.mkdir()
    source = folder / "user_src.py"
    source.write_text(USER.replace("def loss(w):", "def loss(w, s='\"\"\"\\\\U'):"))
    out = folder / 'out """\\N.py'
    rc, _, err = run_cli("emit", f"{source}:loss", "-o", out)
    assert rc == 0, err
    text = out.read_text(encoding="utf-8")
    tree = ast.parse(text)
    compile(text, str(out), "exec")
    doc = ast.get_docstring(tree, clean=False)
    assert f"\nSource function: loss(w, s='\"\"\"\\\\U') in {source}, line 4\n" in doc

    def between(start: str, end: str) -> str:
        i = doc.index(start) + len(start)
        return doc[i:doc.index(end, i)]

    assert shlex.split(between("\nRegenerate:", "\nCheck an edit:")) == [
        "s2s", "emit", f"{source}:loss", "--grad", "-o", str(out)]
    assert shlex.split(between("\nCheck an edit:", "\n\nNeeds only")) == [
        "s2s", "check", str(out), f"{source}:loss", "--grad"]
    meta = read_meta(text)
    assert meta["file"] == str(source) and meta["entry"] == "loss_grad"
    # nothing but the docstring, the meta comment and the module's code
    first = tree.body[0]
    assert isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
    assert not any(isinstance(n, ast.Expr) for n in tree.body[1:])
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(text, str(out), "exec"), namespace)
    assert not (tmp_path / "INJECTED").exists()
    assert namespace["loss_grad"](np.array([0.3, 0.5])) == pytest.approx(
        np.sin(2 * np.array([0.3, 0.5])))
