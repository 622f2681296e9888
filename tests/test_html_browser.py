"""The page ``s2s html`` writes, in real headless Chromium: hovering a derivative block
highlights its user line (and back), clicking pins it, the rule box names the rule.

Needs ``pip install playwright`` and a Chromium: playwright's own
(``python -m playwright install chromium``), or a system one (``chromium``,
``chromium-headless-shell``; Debian: ``apt-get install chromium-headless-shell``), or
the path in ``S2S_CHROMIUM``.  Skipped, saying which is missing, otherwise.

The screenshot goes to the test's temporary folder; with ``S2S_UPDATE_SCREENSHOT=1``
also to ``docs/img/html-view.png`` (shown in the README).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from s2s.tools.cli import main

ROOT = Path(__file__).parent.parent


def _browser(p):
    candidates = [os.environ.get("S2S_CHROMIUM")] + [
        shutil.which(n) for n in ("chromium-headless-shell", "chromium", "chromium-browser",
                                  "google-chrome")]
    errors = []
    try:
        return p.chromium.launch()
    except Exception as exc:  # playwright's own browser is not installed
        errors.append(str(exc).splitlines()[0])
    for path in filter(None, candidates):
        try:
            return p.chromium.launch(executable_path=path, args=["--no-sandbox"])
        except Exception as exc:
            errors.append(f"{path}: {str(exc).splitlines()[0]}")
    pytest.skip("no Chromium for playwright (python -m playwright install chromium, or "
                "apt-get install chromium-headless-shell, or set S2S_CHROMIUM): "
                + "; ".join(errors))


def test_linked_highlighting_in_chromium(tmp_path) -> None:
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed (pip install playwright)")
    page_path = tmp_path / "quickstart.html"
    rc = main(["html", str(ROOT / "examples" / "quickstart.py") + ":loss",
               "--shapes", "w=3 x=8,3 y=8", "-o", str(page_path)])
    assert rc == 0
    source = (ROOT / "examples" / "quickstart.py").read_text().splitlines()
    tanh_line = str(next(i + 1 for i, ln in enumerate(source) if "np.tanh" in ln))
    with sync_api.sync_playwright() as p:
        browser = _browser(p)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(page_path.as_uri())
            block = page.locator(f'#derivative .blk[data-line="{tanh_line}"]').last
            user = page.locator(f'#source .src[data-line="{tanh_line}"]')
            other = page.locator('#source .src:not([data-line="' + tanh_line + '"])').last
            background = "el => getComputedStyle(el).backgroundColor"
            idle = user.evaluate(background)
            assert "hl" not in (user.get_attribute("class") or "")

            block.hover()  # the derivative block lights up its user line
            assert "hl" in user.get_attribute("class")
            assert user.evaluate(background) != idle
            assert "hl" not in (other.get_attribute("class") or "")
            assert "tanh_vjp" in page.inner_text("#rule")
            node = page.locator(f'#graph .node[data-line="{tanh_line}"]').last
            assert "hl" in node.get_attribute("class")

            page.mouse.move(2, 2)  # leaving clears it
            assert "hl" not in user.get_attribute("class")

            user.hover()  # and the user line lights up its derivative blocks
            assert "hl" in block.get_attribute("class")
            user.click()  # a click pins the highlight
            page.mouse.move(2, 2)
            assert "hl" in block.get_attribute("class")
            shot = tmp_path / "html-view.png"
            page.screenshot(path=str(shot), full_page=True)
            assert shot.stat().st_size > 10_000
            if os.environ.get("S2S_UPDATE_SCREENSHOT"):
                (ROOT / "docs" / "img").mkdir(parents=True, exist_ok=True)
                shutil.copy(shot, ROOT / "docs" / "img" / "html-view.png")
        finally:
            browser.close()


BRANCHES = '''import numpy as np


def pick(x, y):
    a = np.sin(x)
    if np.sum(a) > 0.0:
        b = a * y
    else:
        b = np.exp(x) * 2.0
    return np.sum(b)
'''


def test_if_and_else_branches_light_up_apart(tmp_path) -> None:
    """Hovering the `if` branch's line lights its blocks only (the else branch's
    statement binding the same name was lit too), and the `else:` line its `else:`s.
    (tests/test_cli_teach.py checks the same links in the page's HTML, without a
    browser.)"""
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed (pip install playwright)")
    src = tmp_path / "branches.py"
    src.write_text(BRANCHES)
    page_path = tmp_path / "branches.html"
    assert main(["html", f"{src}:pick", "--shapes", "x=3 y=3", "-o", str(page_path)]) == 0
    lines = BRANCHES.splitlines()
    in_if = str(lines.index("        b = a * y") + 1)
    in_else = str(lines.index("        b = np.exp(x) * 2.0") + 1)
    else_line = str(lines.index("    else:") + 1)
    with sync_api.sync_playwright() as p:
        browser = _browser(p)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(page_path.as_uri())
            page.locator(f'#source .src[data-line="{in_if}"]').hover()
            lit = page.locator("#derivative .blk.hl")
            texts = [lit.nth(i).inner_text() for i in range(lit.count())]
            assert texts and all("exp" not in t for t in texts), texts
            assert any("b = a * y" in t for t in texts)
            page.locator(f'#source .src[data-line="{in_else}"]').hover()
            texts = [lit.nth(i).inner_text() for i in range(lit.count())]
            assert any("exp_x" in t for t in texts) and all("a * y" not in t for t in texts)
            page.locator(f'#source .src[data-line="{else_line}"]').hover()
            texts = [lit.nth(i).inner_text().strip() for i in range(lit.count())]
            assert texts and set(texts) == {"else:"}, texts
        finally:
            browser.close()


LOOPS_AND_CALLS = '''import numpy as np


def step(h, w):
    return np.tanh(h * w)


def run(x, w):
    h = x
    for i in range(3):
        h = step(h, w) + 0.5 * h
    total = np.sum(h**2)
    return total
'''


def _loops_page(tmp_path):
    """playwright's API and the page ``s2s html`` writes for LOOPS_AND_CALLS' run."""
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed (pip install playwright)")
    src = tmp_path / "loops.py"
    src.write_text(LOOPS_AND_CALLS)
    page_path = tmp_path / "loops.html"
    assert main(["html", f"{src}:run", "--shapes", "x=3 w=3", "-o", str(page_path)]) == 0
    return sync_api, page_path


def _lit_texts(page) -> list[str]:
    lit = page.locator("#derivative .blk.hl")
    return [lit.nth(i).inner_text() for i in range(lit.count())]


def test_loops_and_calls_light_up_their_own_blocks(tmp_path) -> None:
    """Each user line lights exactly the derivative blocks s2s made for it: the loop
    body's line its forward and backward statements (the call's `step_vjp` and the
    tape pop), the callee's line its blocks inside `step_vjp`, nothing of the others."""
    sync_api, page_path = _loops_page(tmp_path)
    lines = LOOPS_AND_CALLS.splitlines()
    body = str(lines.index("        h = step(h, w) + 0.5 * h") + 1)
    callee = str(lines.index("    return np.tanh(h * w)") + 1)
    total = str(lines.index("    total = np.sum(h**2)") + 1)
    with sync_api.sync_playwright() as p:
        browser = _browser(p)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(page_path.as_uri())
            for line in (body, callee, total):
                page.locator(f'#source .src[data-line="{line}"]').first.hover()
                lit = page.locator("#derivative .blk.hl")
                ids = {lit.nth(i).get_attribute("data-line") for i in range(lit.count())}
                assert ids == {line}, (line, ids)  # only this line's blocks
                want = page.locator(f'#derivative .blk[data-line="{line}"]').count()
                assert lit.count() == want > 0
            page.locator(f'#source .src[data-line="{body}"]').first.hover()
            texts = "\n".join(_lit_texts(page))
            assert "step_vjp" in texts and "step(" in texts and "np.sum" not in texts, texts
            page.locator(f'#source .src[data-line="{callee}"]').first.hover()
            texts = "\n".join(_lit_texts(page))
            assert "tanh" in texts and "np.sum" not in texts, texts
        finally:
            browser.close()


def test_presentation_mode_scales_the_code_and_aligns_the_panes(tmp_path) -> None:
    sync_api, page_path = _loops_page(tmp_path)
    lines = LOOPS_AND_CALLS.splitlines()
    total = str(lines.index("    total = np.sum(h**2)") + 1)
    size = "el => parseFloat(getComputedStyle(el).fontSize)"
    with sync_api.sync_playwright() as p:
        browser = _browser(p)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 700})
            page.goto(page_path.as_uri())
            code = page.locator("#derivative .code")
            normal = code.evaluate(size)
            assert page.locator("#graph").is_visible()
            page.keyboard.press("p")  # the keyboard toggle
            assert "present" in page.locator("body").get_attribute("class")
            big = code.evaluate(size)
            assert big > 1.4 * normal and not page.locator("#graph").is_visible()
            page.keyboard.press("+")
            assert code.evaluate(size) > big
            page.keyboard.press("-")
            assert abs(code.evaluate(size) - big) < 0.5
            user = page.locator(f'#source .src[data-line="{total}"]')
            user.hover()  # its first block is scrolled beside it
            block = page.locator(f'#derivative .blk[data-line="{total}"]').first
            top = "el => el.getBoundingClientRect().top"
            assert abs(block.evaluate(top) - user.evaluate(top)) < 3
            page.locator("#present-toggle").click()  # the button toggles it too
            assert "present" not in (page.locator("body").get_attribute("class") or "")
            assert abs(code.evaluate(size) - normal) < 0.5
        finally:
            browser.close()
