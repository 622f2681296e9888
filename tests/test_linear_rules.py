"""JVP rules derived by ``deflinear``/``defbilinear`` (a primitive linear in a
parameter: its own spelling with that tangent substituted) say what the hand-written
rules they replaced said: the same body, statement for statement (ast), so the
emitted code is unchanged.  tests/fixtures/linear_jvps.json keeps the hand-written
rules' source, as they were before they were deleted."""

from __future__ import annotations

import ast
import inspect
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import s2s  # noqa: F401  (registers everything)
from s2s.frontend.source import verified_source
from s2s.primitives import PRIMITIVES, load_all

load_all()
HAND_WRITTEN = json.loads(
    (Path(__file__).parent / "fixtures" / "linear_jvps.json").read_text())


def _body(text: str) -> str:
    fn = ast.parse(textwrap.dedent(text)).body[0]
    return ast.dump(ast.Module(body=fn.body, type_ignores=[]))


@pytest.mark.parametrize("key", sorted(HAND_WRITTEN))
def test_a_derived_rule_has_the_hand_written_body(key: str) -> None:
    name, wrt = key.split("|")
    rule = PRIMITIVES[name].jvps[wrt]
    assert rule.__code__.co_filename.startswith("<s2s deflinear ")
    assert rule.__module__ == PRIMITIVES[name].module
    assert _body(verified_source(rule)) == _body(HAND_WRITTEN[key])


def test_derived_rules_take_the_rule_signature() -> None:
    rule = PRIMITIVES["reshape"].jvps["a"]
    assert list(inspect.signature(rule).parameters)[:2] == ["a_dot", "ans"]
    assert inspect.getsource(rule) == ("def reshape_jvp(a_dot, ans, a, shape):\n"
                                       "    return np.reshape(a_dot, shape)\n")


@pytest.mark.slow
def test_the_cli_prints_a_primitives_rules() -> None:
    out = subprocess.run([sys.executable, "-m", "s2s", "primitives", "--rule", "matmul"],
                         capture_output=True, text=True, check=True).stdout
    assert "return x1_dot @ x2" in out and "derived by deflinear" in out
    assert "def matmul_vjp(g, ans, x1, x2):" in out
