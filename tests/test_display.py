"""Notebook display: every transform has ``_repr_html_`` and ``_repr_markdown_`` that
never raise, showing the emitted code (exactly ``s2s.source``) once there is some,
and before that what the transform waits for.  The slow tier runs a real notebook."""

from __future__ import annotations

import html
import re

import numpy as np
import pytest

import s2s


def scalar(x):
    return np.sum(np.sin(x) ** 2)


def vector(x):
    return np.sin(x) * 2.0


X = np.array([0.1, 0.2, 0.3])


def transforms() -> dict:
    return {
        "grad": (s2s.grad(scalar), (X,)),
        "value_and_grad": (s2s.value_and_grad(scalar), (X,)),
        "vmap": (s2s.vmap(vector), (np.ones((4, 3)),)),
        "vmap(grad)": (s2s.vmap(s2s.grad(scalar)), (np.ones((4, 3)),)),
        "jacfwd": (s2s.jacfwd(vector), (X,)),
        "jacrev": (s2s.jacrev(vector), (X,)),
        "hessian": (s2s.hessian(scalar), (X,)),
        "jit": (s2s.jit(scalar), (X,)),
        "jit(grad)": (s2s.jit(s2s.grad(scalar)), (X,)),
        "checkpoint": (s2s.checkpoint(scalar), (X,)),
    }


TITLES = {"grad": "s2s.grad(scalar)", "value_and_grad": "s2s.value_and_grad(scalar)",
          "vmap": "s2s.vmap(vector)", "vmap(grad)": "s2s.vmap(s2s.grad(scalar))",
          "jacfwd": "s2s.jacfwd(vector)", "jacrev": "s2s.jacrev(vector)",
          "hessian": "s2s.hessian(scalar)", "jit": "s2s.jit(scalar)",
          "jit(grad)": "s2s.jit(s2s.grad(scalar))", "checkpoint": "s2s.checkpoint(scalar)"}


def _code_of(markdown: str) -> str | None:
    m = re.search(r"```python\n(.*)\n```", markdown, re.S)
    return m.group(1) if m else None


@pytest.mark.every_case
@pytest.mark.parametrize("name", list(TITLES))
def test_display_before_and_after_the_first_call(name: str) -> None:
    obj, args = transforms()[name]
    before_md, before_html = obj._repr_markdown_(), obj._repr_html_()  # never raise
    assert before_md.startswith(f"**{TITLES[name]}**")
    assert html.escape(TITLES[name]) in before_html
    code = _code_of(before_md)
    if code is None:  # what it waits for, said
        assert "Nothing emitted yet: call" in before_md
    obj(*args)
    after = obj._repr_markdown_()
    shown = _code_of(after)
    assert shown is not None, after
    if name == "checkpoint":  # a marked plain function: its own source is what runs
        assert "def scalar(x):" in shown
    else:
        assert shown == s2s.source(obj).rstrip()
        # the HTML is the same text, highlighted
        text = re.sub(r"<[^>]+>", "", obj._repr_html_().split("</div>", 1)[1])
        assert html.unescape(text).strip() == s2s.source(obj).strip()


def test_display_survives_a_source_that_raises(monkeypatch) -> None:
    g = s2s.grad(scalar)

    def broken(self):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(type(g), "source", property(broken))
    assert "Nothing emitted yet: boom" in g._repr_markdown_()
    assert "second line" not in g._repr_html_()


NOTEBOOK_CELLS = [
    "import numpy as np\nimport s2s",
    "def loss(w, x):\n    return np.mean(np.tanh(x @ w) ** 2)",
    "g = s2s.grad(loss)\ng",
    "g(np.ones(3), np.ones((4, 3)))\ng",
    "v = s2s.vmap(s2s.grad(loss), in_axes=(None, 0))\nv",
    "v(np.ones(3), np.ones((5, 4, 3)));\nv",
    "s2s.hessian(loss)",
    "s2s.jit(s2s.grad(loss))",
]


@pytest.mark.slow  # starts a Jupyter kernel
def test_a_real_notebook_displays_every_transform(tmp_path) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in NOTEBOOK_CELLS])
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    shown = {}
    for i, cell in enumerate(nb.cells):
        for out in cell.outputs:
            assert out.output_type != "error", (cell.source, out)
            if out.output_type == "execute_result":
                shown[i] = out.data
    assert "**s2s.grad(loss)**" in shown[2]["text/markdown"]
    assert "def loss_grad(w, x):" in shown[3]["text/markdown"]
    assert "Nothing emitted yet" in shown[4]["text/markdown"]
    assert "def loss_grad_vmap(w, x):" in shown[5]["text/markdown"]
    assert "text/html" in shown[6] and "s2s.hessian(loss)" in shown[6]["text/html"]
    assert "s2s.jit(s2s.grad(loss))" in shown[7]["text/markdown"]
