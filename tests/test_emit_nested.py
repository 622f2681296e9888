"""Gradients that call a function the user's module does not define at its top level
(a nested ``def``, a ``lambda``, a function chosen by a test, a nested function reading
the enclosing function's values, partials, a callable object) read as plain source:
``s2s emit`` writes a module that runs where s2s cannot be imported, and the text
``s2s.source`` shows defines (or says where it gets) every name it reads.

Expected values: JAX's gradient of the same source (tests/emit_nested_fns.py, NumPy
bound to jax.numpy), in float64 and float32, at the first, third and tenth call of
the emitted module (each call on new inputs); the default tier's two cases, central
differences of the function (the sweeps against JAX are ``-m slow``: each emits a
module and starts a Python, about 1.5 s a case).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import emit_nested_fns as fns
import numpy as np
import pytest
from support import HAVE_JAX, jax, jax_twin

import s2s
from s2s.tools.cli import main

FNS = Path(fns.__file__)
# function -> (its --shapes, the forward it calls as the emitted code spells it, the
# line defining it in the written module)
CASES = {
    "nested": ("x=4", "sq(x)", "def sq(v):"),
    "lam": ("x=4", "lam(x)", "def lam(v):"),  # (`lam`: the lambda; `lam_2` if taken)
    "chosen": ("x=4", "lam", "v**2 * np.sin(v)"),
    "closes": ("x=4 y=4", "inner(x, a, y)", "def inner(v, a=None, y=None):"),
    "partial_in_body": ("x=4", "helper(x, 0.5)", "def helper(v, w):"),
    "partial_at_module": ("x=4", "helper_call(x, 0.25)", "def helper_call(v, w):"),
    "callable_object": ("x=4", "SCALED(x)", "SCALED.__dict__.update({\"c\": 0.75})"),
    "passes_nested": ("x=4", "apply_cube(x)", "def cube(v):"),
}


def run_cli(*argv: object) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in argv])
    return rc, err.getvalue()


def inputs(name: str, dtype: str, call: int) -> list[np.ndarray]:
    """The arguments of the emitted module's ``call``-th call (new values each)."""
    rng = np.random.default_rng(100 + call)
    n = 2 if name == "closes" else 1
    return [rng.uniform(-1.5, 1.5, size=4).astype(dtype) for _ in range(n)]


def without_s2s(code: str, folder: Path) -> str:
    """Run ``code`` in a Python that imports numpy but not s2s (no site hooks, no
    PYTHONPATH: the editable install of s2s and the tree are both out of reach)."""
    site = str(Path(np.__file__).parent.parent)
    prelude = f"import sys\nsys.path[:0] = [{str(folder)!r}, {site!r}]\n"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-I", "-S", "-c", prelude + code],
                          capture_output=True, text=True, cwd=folder, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def twin():
    if not HAVE_JAX:
        pytest.skip("JAX is the oracle here")
    return jax_twin(fns)


def emit_and_run(name: str, dtype: str, tmp_path: Path) -> tuple[list, np.ndarray]:
    """``s2s emit`` of ``name``'s gradient, imported and called on ten inputs where s2s
    cannot be imported: (the inputs, the ten results)."""
    shapes, call, defined = CASES[name]
    out = tmp_path / f"{name}_grad.py"
    rc, err = run_cli("emit", f"{FNS}:{name}", "--shapes", shapes, "-o", out)
    assert rc == 0, err
    text = out.read_text()
    assert not re.search(r"^\s*(from s2s|import s2s)", text, re.M)
    plain = text  # (`lam_2`, `inner_2` where another module's took the name first)
    for base in set(re.findall(r"[A-Za-z_]\w*", defined + call)):
        plain = re.sub(rf"\b{base}_\d+\b", base, plain)
    assert defined in plain and f"= {call}" in plain, text
    calls = [inputs(name, dtype, i) for i in range(10)]
    np.savez(tmp_path / "args.npz", *[a for args in calls for a in args])
    printed = without_s2s(textwrap.dedent(f"""
        try:
            import s2s
        except ImportError:
            pass
        else:
            raise SystemExit("s2s is importable here")
        import numpy as np
        import {name}_grad as m
        data = np.load("args.npz")
        flat = [data[f"arr_{{i}}"] for i in range(len(data.files))]
        n = len(flat) // 10
        got = [m.{name}_grad(*flat[i * n:(i + 1) * n]) for i in range(10)]
        np.save("got.npy", np.stack(got))
        print(sorted({{k.split(".")[0] for k in sys.modules}} & {{"s2s", "libcst", "black"}}))
    """), tmp_path)
    assert printed.strip() == "[]"  # nothing of s2s's was loaded
    return calls, np.load(tmp_path / "got.npy")


def test_a_nested_function_reading_the_enclosing_values_runs_without_s2s(tmp_path) -> None:
    """The default tier's case (the sweep below runs them all against JAX): ``closes``,
    whose nested ``inner`` reads ``a`` and ``y``, against central differences."""
    calls, got = emit_and_run("closes", "float64", tmp_path)
    h = 1e-6
    for i in (0, 2, 9):
        x, y = calls[i]
        expected = [(fns.closes(x + h * e, y) - fns.closes(x - h * e, y)) / (2 * h)
                    for e in np.eye(len(x))]
        np.testing.assert_allclose(got[i], expected, rtol=1e-6, atol=1e-8)
    assert not np.allclose(got[2], got[9])


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_emitted_module_runs_without_s2s(name, dtype, tmp_path, twin) -> None:
    calls, got = emit_and_run(name, dtype, tmp_path)
    rtol, atol = (1e-10, 1e-12) if dtype == "float64" else (2e-5, 2e-6)
    for i in (0, 2, 9):  # the first, third and tenth call
        expected = np.asarray(jax.grad(getattr(twin, name))(*calls[i]))
        assert expected.dtype == np.dtype(dtype)
        np.testing.assert_allclose(got[i], expected, rtol=rtol, atol=atol)
    # (the inputs changed between calls: a module that cached a result would fail)
    assert not np.allclose(got[2], got[9])


def _run_source(text: str, entry: str, args: list) -> object:
    """``text`` run as a reader would: in a copy of the user's module's namespace."""
    namespace = dict(vars(fns))
    exec(compile(text, f"<source of {entry}>", "exec"), namespace)
    return namespace[entry](*args)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["nested", "closes", "callable_object", "passes_nested",
                                  "partial_at_module", "lam", "chosen", "partial_in_body"])
def test_source_defines_what_it_reads(name, twin) -> None:
    """``s2s.source`` of grad, value_and_grad and jvp: the text, executed in the user's
    module, runs and gives s2s's (and JAX's) numbers; black leaves it as it is."""
    import black

    f = getattr(fns, name)
    args = inputs(name, "float64", 0)
    tangents = inputs(name, "float64", 1)
    g = s2s.grad(f)
    for _ in range(3):  # (the third call's code: the one specialized to the signature)
        g(*args)
    text = s2s.source(g)
    assert black.format_str(text, mode=black.Mode()) == text
    got = _run_source(text, f"{name}_grad", args)
    np.testing.assert_allclose(got, jax.grad(getattr(twin, name))(*args), rtol=1e-10)
    np.testing.assert_allclose(got, g(*args), rtol=1e-12)

    vg = s2s.value_and_grad(f)
    value, grad = vg(*args)
    got_value, got_grad = _run_source(s2s.source(vg), f"{name}_value_and_grad", args)
    assert got_value == pytest.approx(float(value), rel=1e-12)
    np.testing.assert_allclose(got_grad, grad, rtol=1e-12)

    primal, tangent = s2s.jvp(f, tuple(args), tuple(tangents))
    got_primal, got_tangent = _run_source(s2s.source(f, "jvp"), f"{name}_jvp",
                                          [*args, *tangents])
    expected = jax.jvp(getattr(twin, name), tuple(args), tuple(tangents))
    assert got_primal == pytest.approx(float(expected[0]), rel=1e-12)
    assert got_tangent == pytest.approx(float(expected[1]), rel=1e-10)
    assert float(tangent) == pytest.approx(float(expected[1]), rel=1e-10)
    assert float(primal) == pytest.approx(float(expected[0]), rel=1e-12)


def test_forward_call_reads_the_nested_function_by_name() -> None:
    """No hidden adapter: ``sq(x)`` calls the nested ``def sq``, listed after the
    emitted functions (whose lines keep the numbers tracebacks show)."""
    g = s2s.grad(fns.nested)
    x = inputs("nested", "float64", 0)[0]
    g(x)
    text = s2s.source(g)
    # (`sq`, or `sq_2` where another module's nested `sq` took the name first in
    # this process: names of functions s2s lists are process-wide)
    called = re.search(r"sq_x = (sq(_\d+)?)\(x\)", text)
    assert called is not None and "sq_call" not in text, text
    emitted, listing = text.split("# ---- forward functions the code above calls")
    assert "def nested_grad(x):" in emitted and f"def {called.group(1)}(v):" in listing
    assert g.source == text  # (the property and the function show the same text)
    h = 1e-6
    expected = [(fns.nested(x + h * e) - fns.nested(x - h * e)) / (2 * h)
                for e in np.eye(len(x))]
    np.testing.assert_allclose(_run_source(text, "nested_grad", [x]), expected, rtol=1e-6)


def test_emit_refuses_an_object_it_cannot_write(tmp_path) -> None:
    rc, err = run_cli("emit", f"{FNS}:holds_a_list", "--shapes", "x=3",
                      "-o", tmp_path / "out.py")
    assert rc == 2
    assert "'HOLDER', a Holder object whose fields are not all numbers" in err
    assert not (tmp_path / "out.py").exists()


def test_a_global_named_like_a_nested_function_is_refused_at_the_users_line(
        tmp_path, monkeypatch) -> None:
    """Emitted code calls ``nested_other.outer``'s nested ``tripled`` by that name; a
    caller in another module reading its own global ``tripled`` cannot share the
    module: a located refusal, never the wrong ``tripled`` called.  (A name no other
    test's nested function takes: the names are process-wide, `tripled_2` after.)"""
    (tmp_path / "nested_other.py").write_text(textwrap.dedent("""
        import numpy as np

        def outer(x):
            def tripled(v):
                return np.sin(v) * 3.0
            return tripled(x) * x
    """))
    (tmp_path / "nested_caller.py").write_text(textwrap.dedent("""
        import numpy as np
        import nested_other

        def tripled(v):
            return v * 7.0

        def f(x):
            return np.sum(nested_other.outer(x) + tripled(x))
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    import nested_caller

    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(nested_caller.f)(np.array([0.2, 0.5]))
    text = str(info.value)
    assert "`tripled` names different objects" in text and "rename one of the two `tripled`" in text
    assert "nested_caller.py\", line 9" in text


@pytest.mark.slow
@pytest.mark.parametrize("name", ["closes", "callable_object", "passes_nested"])
def test_emitted_hessian_runs_without_s2s(name, tmp_path, twin) -> None:
    """``--hessian``: the same forwards (and the callable object ``self`` reads)."""
    out = tmp_path / "hess.py"
    rc, err = run_cli("emit", f"{FNS}:{name}", "--hessian", "--shapes", CASES[name][0],
                      "-o", out)
    assert rc == 0, err
    args = inputs(name, "float64", 3)
    np.savez(tmp_path / "args.npz", *args)
    without_s2s(textwrap.dedent(f"""
        import numpy as np
        import hess
        data = np.load("args.npz")
        args = [data[f"arr_{{i}}"] for i in range(len(data.files))]
        np.save("got.npy", hess.{name}_hessian(*args))
    """), tmp_path)
    expected = np.asarray(jax.hessian(getattr(twin, name))(*args))
    np.testing.assert_allclose(np.load(tmp_path / "got.npy"), expected, rtol=1e-9, atol=1e-12)
