"""The teaching commands: s2s show, emit, check, explain, html.

Numbers are compared with central finite differences of the user's function (an
oracle that runs no s2s code) and with s2s's API.
"""

from __future__ import annotations

import contextlib
import html
import io
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import s2s
from s2s.tools.cli import main
from s2s.tools.teach.check import fd_grad, fd_hessian
from s2s.tools.teach.common import highlight_ansi, highlight_html, load_target, parse_shapes

ANSI = re.compile(r"\x1b\[[0-9;]*m")

MODULE = '''
import numpy as np

SCALE = 2.0
OFFSETS = np.array([0.5, -0.25, 1.0, 0.0, 0.125])


def helper(a):
    return np.sin(a) * SCALE


def loss(w, x, y):
    pred = np.tanh(x @ w + OFFSETS)
    r = pred - helper(y)
    return np.mean(r ** 2) + np.sum(np.log(1.0 + w ** 2))


def three(x):
    y = np.sin(x)
    z = y * x
    return np.sum(z ** 2)


S2S_SHAPES = {"loss": {"w": (3,), "x": (5, 3), "y": (5,)}}
'''


@pytest.fixture(scope="module")
def user_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("user") / "teachmod.py"
    path.write_text(MODULE)
    return path


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in argv])
    return rc, out.getvalue(), err.getvalue()


def inputs(seed: int = 1):
    rng = np.random.default_rng(seed)
    return rng.normal(size=3), rng.normal(size=(5, 3)), rng.normal(size=5)


# ---- show --------------------------------------------------------------------------


def test_show_prints_the_emitted_gradient_plain_when_piped(user_file) -> None:
    rc, out, _ = run_cli("show", f"{user_file}:loss")
    assert rc == 0
    assert not ANSI.search(out)
    fn = load_target(f"{user_file}:loss").fn
    g = s2s.grad(fn)
    g(*inputs())
    assert out == g.source


def test_show_colours_on_request_and_both_highlighters_keep_the_text(user_file) -> None:
    rc, out, _ = run_cli("show", f"{user_file}:loss", "--color", "always")
    assert rc == 0 and ANSI.search(out)
    plain = run_cli("show", f"{user_file}:loss")[1]
    assert ANSI.sub("", out) == plain
    own = highlight_ansi(plain, use_pygments=False)  # the fallback without pygments
    assert ANSI.search(own) and ANSI.sub("", own) == plain
    assert "_bar" in own and "\x1b[35mw_bar" in own  # cotangents stand out
    page = highlight_html(plain)
    assert page.startswith("<pre") and "<span style=" in page
    assert re.sub(r"<[^>]+>", "", page).replace("&gt;", ">").replace("&lt;", "<") \
        .replace("&quot;", '"').replace("&#x27;", "'").replace("&amp;", "&") == plain


def test_show_other_transforms(user_file) -> None:
    target = f"{user_file}:three"
    assert "x_dot" in run_cli("show", target, "--jvp")[1]
    vm = run_cli("show", target, "--grad", "--vmap", "0")[1]
    assert "def three_grad_vmap(x)" in vm
    hess = run_cli("show", target, "--hessian")[1]
    assert "def three_grad_jacfwd" in hess
    two = run_cli("show", f"{user_file}:loss", "--argnums", "0,2")[1]
    assert "return (w_bar, y_bar)" in two


def test_bad_targets_are_reported_not_raised(user_file) -> None:
    rc, _, err = run_cli("show", f"{user_file}:nope")
    assert rc == 2 and "has no attribute 'nope'" in err
    rc, _, err = run_cli("show", "no/such/file.py:f")
    assert rc == 2 and "no such file" in err
    rc, _, err = run_cli("show", f"{user_file}:loss", "--shapes", "w=3 x=4 y=5")
    assert rc == 2 and "--shapes" in err


def test_parse_shapes() -> None:
    assert parse_shapes("w=3 x=8,3 y=()", ["w", "x", "y"]) == {"w": (3,), "x": (8, 3), "y": ()}
    assert parse_shapes("3; 8x3", ["w", "x"]) == {"w": (3,), "x": (8, 3)}


# ---- emit --------------------------------------------------------------------------


def _without_s2s(code: str, folder: Path) -> str:
    """Run ``code`` in a Python that can import numpy but not s2s (no site hooks: the
    editable install of s2s is one)."""
    site = str(Path(np.__file__).parent.parent)
    prelude = f"import sys\nsys.path[:0] = [{str(folder)!r}, {site!r}]\n"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    done = subprocess.run([sys.executable, "-I", "-S", "-c", prelude + code],
                          capture_output=True, text=True, cwd=folder, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_emit_writes_a_standalone_module_that_runs_without_s2s(user_file, tmp_path) -> None:
    out = tmp_path / "loss_grad.py"
    rc, _, _ = run_cli("emit", f"{user_file}:loss", "-o", out)
    assert rc == 0
    text = out.read_text()
    assert not re.search(r"^\s*(from s2s|import s2s)", text, re.M)
    assert "Source sha256:   " + load_target(f"{user_file}:loss").source_hash() in text
    assert f"Regenerate:      s2s emit {user_file}:loss --grad -o {out}" in text
    assert "def unbroadcast(" in text and "def helper(a):" in text
    assert "SCALE = 2.0" in text and "OFFSETS = np.array([0.5, -0.25, 1.0, 0.0, 0.125]" in text
    w, x, y = inputs()
    np.savez(tmp_path / "args.npz", w=w, x=x, y=y)
    printed = _without_s2s(textwrap.dedent("""
        try:
            import s2s
        except ImportError:
            pass
        else:
            raise SystemExit("s2s is importable here")
        import numpy as np
        import loss_grad
        a = np.load("args.npz")
        np.save("g.npy", loss_grad.loss_grad(a["w"], a["x"], a["y"]))
        print(sorted({m.split(".")[0] for m in sys.modules} & {"s2s", "libcst", "black"}))
    """), tmp_path)
    assert printed.strip() == "[]"  # nothing of s2s's was loaded
    got = np.load(tmp_path / "g.npy")
    fn = load_target(f"{user_file}:loss").fn
    np.testing.assert_allclose(got, fd_grad(fn, [w, x, y], 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(got, s2s.grad(fn)(w, x, y), rtol=1e-12, atol=1e-14)


def test_emit_hessian_and_jvp_standalone(user_file, tmp_path) -> None:
    rc, _, _ = run_cli("emit", f"{user_file}:three", "--hessian", "-o", tmp_path / "h.py")
    assert rc == 0
    rc, _, _ = run_cli("emit", f"{user_file}:three", "--jvp", "-o", tmp_path / "j.py")
    assert rc == 0
    x = np.array([0.3, -0.7, 1.1])
    t = np.array([1.0, 0.5, -2.0])
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "t.npy", t)
    _without_s2s(textwrap.dedent("""
        import numpy as np, h, j
        x, t = np.load("x.npy"), np.load("t.npy")
        np.save("H.npy", h.three_hessian(x))
        np.save("J.npy", np.array(j.three_jvp(x, t)))
    """), tmp_path)
    fn = load_target(f"{user_file}:three").fn
    np.testing.assert_allclose(np.load(tmp_path / "H.npy"), fd_hessian(fn, [x], 0, 0),
                               rtol=1e-5, atol=1e-6)
    value, tangent = np.load(tmp_path / "J.npy")
    h = 1e-6
    assert value == pytest.approx(fn(x), rel=1e-12)
    assert tangent == pytest.approx((fn(x + h * t) - fn(x - h * t)) / (2 * h), rel=1e-6)


def test_emit_refuses_what_it_cannot_copy(tmp_path) -> None:
    path = tmp_path / "bigconst.py"
    path.write_text("import numpy as np\nW = np.ones((20000, 1))\n\n\n"
                    "def f(x):\n    return np.sum(x * W)\n")
    rc, _, err = run_cli("emit", f"{path}:f", "-o", tmp_path / "out.py")
    assert rc == 2
    assert "'W', an array of 20000" in err and not (tmp_path / "out.py").exists()


# ---- check -------------------------------------------------------------------------


@pytest.fixture()
def emitted(user_file, tmp_path) -> Path:
    out = tmp_path / "d.py"
    assert run_cli("emit", f"{user_file}:three", "-o", out)[0] == 0
    return out


def _edit(path: Path, old: str, new: str) -> Path:
    text = path.read_text()
    assert old in text, text
    edited = path.with_name("edited.py")
    edited.write_text(text.replace(old, new))
    return edited


def test_check_passes_the_untouched_module_and_a_correct_refactoring(user_file, emitted) -> None:
    rc, out, _ = run_cli("check", emitted, f"{user_file}:three")
    assert rc == 0, out
    assert "correct" in out and "all 1 outputs correct" in out
    # the student's rewrite: 2 * z as z + z, and the product rule spelled as one line
    edited = _edit(emitted, "z_bar = z_sq_bar * (2 * z)", "z_bar = z_sq_bar * (z + z)")
    rc, out, _ = run_cli("check", edited, f"{user_file}:three")
    assert rc == 0, out


def test_check_catches_a_sign_flip(user_file, emitted) -> None:
    edited = _edit(emitted, "y_bar * np.cos(x)", "y_bar * -np.cos(x)")
    rc, out, _ = run_cli("check", edited, f"{user_file}:three")
    assert rc == 1, out
    assert "WRONG" in out and "1 of 1 outputs are not correct" in out


def test_check_catches_a_missing_term(user_file, emitted) -> None:
    # drop the product rule's second term: d(y * x)/dx loses y
    edited = _edit(emitted, "x_bar = x_bar + y_bar * np.cos(x)", "x_bar = y_bar * np.cos(x)")
    rc, out, _ = run_cli("check", edited, f"{user_file}:three")
    assert rc == 1 and "WRONG" in out


def test_check_reports_each_output(user_file, tmp_path) -> None:
    out_path = tmp_path / "two.py"
    assert run_cli("emit", f"{user_file}:loss", "--argnums", "0,2", "-o", out_path)[0] == 0
    edited = _edit(out_path, "return (w_bar, y_bar)", "return (w_bar, -y_bar)")
    rc, out, _ = run_cli("check", edited, f"{user_file}:loss")  # flags from the header
    assert rc == 1
    rows = {ln.split()[0]: ln for ln in out.splitlines() if ln.startswith("  d")}
    assert rows["dloss/dw"].rstrip().endswith("correct") and "WRONG" not in rows["dloss/dw"]
    assert "WRONG" in rows["dloss/dy"]


def test_check_reports_a_module_that_raises(user_file, emitted) -> None:
    edited = _edit(emitted, "z_bar = z_sq_bar * (2 * z)", "z_bar = z_sq_bar @ np.ones((2, 2))")
    rc, out, _ = run_cli("check", edited, f"{user_file}:three")
    assert rc == 1 and "raised" in out


# ---- explain -----------------------------------------------------------------------


def test_explain_labels_every_stage(user_file) -> None:
    rc, out, _ = run_cli("explain", f"{user_file}:three")
    assert rc == 0
    titles = ["1. Source", "2. Normalised form", "3. Forward sweep", "4. Backward sweep",
              "5. Optimised result"]
    at = [out.index(t) for t in titles]
    assert at == sorted(at)
    ir = out[at[1]:at[2]]
    assert re.search(r"z_sq = z \*\* 2\s+# power, line \d+", ir)
    forward, backward = out[at[2]:at[3]], out[at[3]:at[4]]
    assert "values it reads by name (single assignment: no copies): three, y, z, z_sq" in forward
    assert "arguments it reads: x" in forward
    assert backward.splitlines()[2].startswith("three_bar = grad_seed(three)")
    assert "def three_grad(x):" in out[at[4]:]


# ---- html --------------------------------------------------------------------------


def test_html_page_links_blocks_to_user_lines(user_file, tmp_path) -> None:
    page = tmp_path / "p.html"
    assert run_cli("html", f"{user_file}:loss", "-o", page)[0] == 0
    text = page.read_text()
    assert "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "<svg" in text and "tanh_vjp" in text
    lines = MODULE.splitlines()
    tanh_line = next(i + 1 for i, ln in enumerate(lines) if "np.tanh" in ln)
    blocks = re.findall(r'<div class="blk" data-line="(\d+)">(.*?)</div>', text, re.S)
    linked = {int(n) for n, _ in blocks}
    sources = {int(n) for n in re.findall(r'<div class="src" data-line="(\d+)"', text)}
    assert linked <= sources
    # the block computing tanh's cotangent is linked to the tanh line
    tanh_blocks = [re.sub(r"<[^>]+>", "", body) for n, body in blocks if int(n) == tanh_line]
    assert any("(1 - pred**2)" in b for b in tanh_blocks)
    assert re.search(rf'<g class="node" data-line="{tanh_line}"', text)


def test_emit_jacfwd_and_check_it(user_file, tmp_path) -> None:
    # jacfwd's emitted function is itself named three_jacfwd: the wrapper must not shadow it
    out = tmp_path / "jac.py"
    assert run_cli("emit", f"{user_file}:three", "--jacfwd", "-o", out)[0] == 0
    namespace: dict = {}
    exec(compile(out.read_text(), str(out), "exec"), namespace)
    from s2s.tools.teach.check import fd_jacobian

    x = np.array([0.4, -1.2, 0.9])
    entry = namespace[__import__("json").loads(
        re.search(r"# s2s-meta: (.*)", out.read_text()).group(1))["entry"]]
    fn = load_target(f"{user_file}:three").fn
    np.testing.assert_allclose(entry(x), fd_jacobian(fn, [x], 0), rtol=1e-6, atol=1e-9)
    rc, text, _ = run_cli("check", out, f"{user_file}:three")
    assert rc == 0, text


def test_transform_argument_errors_are_reported(user_file) -> None:
    rc, _, err = run_cli("show", f"{user_file}:three", "--argnums", "0,1")
    assert rc == 2 and "requires at least 2 positional arguments" in err


# ---- html: the branches of an if ---------------------------------------------------------

BRANCHES = '''
import numpy as np


def pick(x, y):
    a = np.sin(x)
    if np.sum(a) > 0.0:
        b = a * y
    else:
        b = np.exp(x) * 2.0
    return np.sum(b)


def chain(x):
    if x > 1.0:
        z = x ** 3
    elif x > 0.0:
        z = np.sin(x)
    else:
        z = -x
    return z


def early(x, y):
    r = np.sqrt(y)
    if x > 0.0:
        return x * y
    return r


def looped(x):
    s = 0.0
    for i in range(3):
        if s < 1.0:
            s = s + np.sin(x * i)
        else:
            s = s * 0.5
    return s


S2S_SHAPES = {"pick": {"x": (3,), "y": (3,)}, "chain": {"x": ()},
              "early": {"x": (), "y": ()}, "looped": {"x": ()}}
'''


@pytest.fixture(scope="module")
def branches_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("branches") / "branchmod.py"
    path.write_text(BRANCHES)
    return path


def _page_blocks(path: Path, name: str, tmp_path: Path, *flags: str):
    """The derivative pane's blocks: (user line or None, text, html), and the page."""
    page = tmp_path / f"{name}.html"
    assert run_cli("html", f"{path}:{name}", "-o", page, "--force", *flags)[0] == 0
    text = page.read_text()
    pane = text[text.index('id="derivative"'):text.index('id="rule"')]
    blocks = [(int(n) if n else None, html.unescape(re.sub(r"<[^>]+>", "", body)), body)
              for n, body in re.findall(r'<div class="blk"(?: data-line="(\d+)")?>(.*?)</div>',
                                        pane, re.S)]
    return blocks, text


def _line(source: str, text: str) -> int:
    return next(i + 1 for i, ln in enumerate(source.splitlines()) if ln.strip() == text)


def _linked(blocks, line: int) -> str:
    return "\n".join(t for n, t, _ in blocks if n == line)


def test_html_if_branches_link_to_their_own_lines(branches_file, tmp_path) -> None:
    """Each branch's code is linked to its own line: hovering the `if` branch's line
    lit the else branch's statement (both bind `b`, and the first binding won), and the
    backward sweep's else branch followed the if branch's last comment."""
    blocks, _ = _page_blocks(branches_file, "pick", tmp_path)
    in_if, in_else = _line(BRANCHES, "b = a * y"), _line(BRANCHES, "b = np.exp(x) * 2.0")
    else_line = _line(BRANCHES, "else:")
    assert "b = a * y" in _linked(blocks, in_if) and "exp" not in _linked(blocks, in_if)
    assert "b = exp_x * 2.0" in _linked(blocks, in_else)
    assert "exp_x_bar = b_bar * 2.0" in _linked(blocks, in_else)
    # the user's `else:` line lights the emitted `else:`s, not a join's zeros
    assert {t.strip() for n, t, _ in blocks if n == else_line} == {"else:"}
    # the zeros a branch binds for the other path belong to the `if`
    if_line = _line(BRANCHES, "if np.sum(a) > 0.0:")
    for n, t, _ in blocks:
        if "np.zeros_like" in t:
            assert n == if_line, (n, t)


def test_html_elif_chain_and_early_return(branches_file, tmp_path) -> None:
    blocks, _ = _page_blocks(branches_file, "chain", tmp_path)
    for text in ("z = x ** 3", "z = np.sin(x)", "z = -x"):
        linked = _linked(blocks, _line(BRANCHES, text))
        others = {"z = x ** 3": "x**3", "z = np.sin(x)": "np.sin", "z = -x": "= -x"}
        assert others[text] in linked
        assert all(o not in linked for t, o in others.items() if t != text), (text, linked)
    # the elif line: the outer `else:`, its test and its `if` (forward and backward)
    assert {ln.strip() for ln in _linked(blocks, _line(BRANCHES, "elif x > 0.0:")).split(
        "\n")} == {"else:", "x_greater_0 = x > 0.0", "if x_greater_0:"}
    blocks, _ = _page_blocks(branches_file, "early", tmp_path)
    assert "early = r" in _linked(blocks, _line(BRANCHES, "return r"))
    assert "early = r" not in _linked(blocks, _line(BRANCHES, "return x * y"))


def test_html_blocks_with_else_keep_their_colours(branches_file, tmp_path) -> None:
    """A block ending inside an `if` body, or an `else:` alone, is not valid Python on
    its own: it was shown uncoloured.  The page colours the whole module once."""
    for name in ("pick", "chain", "looped"):
        blocks, _ = _page_blocks(branches_file, name, tmp_path)
        for _, text, body in blocks:
            for word in ("else", "if", "for", "return"):
                if re.search(rf"(^|\n)\s*{word}\b", text):
                    assert re.search(rf'<span style="[^"]*">{word}</span>', body), (word, text)


def test_html_branches_in_a_loop_and_forward_mode(branches_file, tmp_path) -> None:
    blocks, _ = _page_blocks(branches_file, "looped", tmp_path)
    in_if, in_else = _line(BRANCHES, "s = s + np.sin(x * i)"), _line(BRANCHES, "s = s * 0.5")
    assert "np.sin" in _linked(blocks, in_if) and "0.5" not in _linked(blocks, in_if)
    assert "0.5" in _linked(blocks, in_else) and "np.sin" not in _linked(blocks, in_else)
    blocks, _ = _page_blocks(branches_file, "pick", tmp_path, "--jvp")
    in_if, in_else = _line(BRANCHES, "b = a * y"), _line(BRANCHES, "b = np.exp(x) * 2.0")
    assert "exp" not in _linked(blocks, in_if) and "exp" in _linked(blocks, in_else)


# ---- example arguments (--args), --version and the help text ----------------------

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_args_show_every_example_the_shapes_flag_cannot_express() -> None:
    """A dict of parameters and an integer step count: ``--shapes`` cannot say them."""
    mlp = ("init(np.random.default_rng(0), 4), np.linspace(-1, 1, 8)[:, None], "
           "np.zeros((8, 1))")
    rc, out, err = run_cli("show", f"{EXAMPLES / 'mlp.py'}:loss", "--args", mlp)
    assert rc == 0, err
    module = load_target(f"{EXAMPLES / 'mlp.py'}:loss").module
    args = eval(mlp, {"np": np, **vars(module)})
    g = s2s.grad(module.loss)
    g(*args)
    assert out == g.source and "W1_bar" in out
    rc, out, err = run_cli("show", f"{EXAMPLES / 'ode_sensitivity.py'}:final_state",
                           "--args", "np.array([0.7, 2.0, 1.5]), 20, 2.0")
    assert rc == 0 and "def final_state_grad(theta, steps, T)" in out, err


def test_args_may_name_a_function_of_the_module(user_file, tmp_path) -> None:
    own = tmp_path / "with_args.py"  # a file of its own: user_file's module may be loaded
    own.write_text(user_file.read_text() + textwrap.dedent('''

        def make_args():
            return np.ones(3), np.ones((5, 3)), np.zeros(5)
    '''))
    rc, out, err = run_cli("show", f"{own}:loss", "--args", "make_args")
    assert rc == 0 and "def loss_grad(w, x, y)" in out, err


def test_bad_args_are_reported_where_they_are(user_file) -> None:
    rc, _, err = run_cli("show", f"{user_file}:loss", "--args", "undefined_name")
    assert rc == 2 and "--args 'undefined_name': NameError" in err
    rc, _, err = run_cli("show", f"{user_file}:loss", "--args", "np.ones(3), np.ones(4)")
    assert rc == 2 and "fails on the inputs --args gives" in err
    rc, _, err = run_cli("show", f"{user_file}:loss", "--args", "make_args", "--shapes", "w=3")
    assert rc == 2 and "not both" in err


@pytest.mark.slow
def test_version_and_help_for_every_flag() -> None:
    from s2s.tools.cli import build_parser

    r = subprocess.run([sys.executable, "-m", "s2s", "--version"], capture_output=True,
                       text=True)
    assert r.returncode == 0 and r.stdout.strip() == f"s2s {s2s.__version__}"
    parser = build_parser()
    parsers = [parser]
    for action in parser._actions:  # the subcommands' parsers, and theirs
        if hasattr(action, "choices") and isinstance(action.choices, dict):
            parsers += list(action.choices.values())
            for sub in action.choices.values():
                for a in sub._actions:
                    if hasattr(a, "choices") and isinstance(a.choices, dict):
                        parsers += list(a.choices.values())
    missing, markup = [], []
    for p in parsers:
        for a in p._actions:
            if a.option_strings and not a.help:
                missing.append(f"{p.prog} {a.option_strings[0]}")
        text = p.format_help()
        if "``" in text or ":func:" in text or ":class:" in text:
            markup.append(p.prog)
    assert not missing, f"flags without help: {missing}"
    assert not markup, f"reST markup in --help: {markup}"
