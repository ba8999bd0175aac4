"""The documentation site as a reader sees it: built by MkDocs, drawn by headless Chromium at
1,400 px (the tutorial's inline report keeps its own layout under Material's CSS), and the API
reference's docstrings rendered (no raw Sphinx roles, Returns as one description)."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.conftest import ROOT

# builds the site, executing the tutorial notebook; one worker runs them all (the site is built once, for the module)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("docs_site")]

WIDTH = 1400

# Measures, for each row of the report's findings table, its last cell (the fix column): width,
# right edge and that of the report box; written on <body> for --dump-dom to carry out.
MEASURE = """<script>
(function () {
  var out = [];
  document.querySelectorAll('.labelgate-report table').forEach(function (t) {
    var head = t.querySelector('tr');
    if (!head || head.lastElementChild.textContent !== 'fix') return;
    var box = t.closest('.labelgate-report').getBoundingClientRect();
    t.querySelectorAll('tr').forEach(function (tr, i) {
      if (i === 0) return;
      var r = tr.lastElementChild.getBoundingClientRect();
      out.push({width: r.width, right: r.right, boxRight: box.right});
    });
  });
  document.body.setAttribute('data-lg-measure', JSON.stringify(out));
})();
</script></body>"""


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("CI installs chromium (.ci/run): the site must be drawn")
        pytest.skip("chromium is not installed here")
    return found


def draw(page: Path, *flags: str) -> str:
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [
                chromium(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                "--no-first-run",
                "--disable-background-networking",
                f"--user-data-dir={profile}",
                f"--window-size={WIDTH},2400",
                *flags,
                page.as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        ).stdout


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocs_jupyter")
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def test_tutorial_report_keeps_its_fix_column(site: Path, tmp_path: Path) -> None:
    page = site / "tutorial" / "index.html"
    measured = tmp_path / "measured.html"
    measured.write_text(page.read_text().replace("</body>", MEASURE))
    dom = draw(measured, "--dump-dom")
    found = re.search(r'data-lg-measure="([^"]*)"', dom)
    assert found, "the page was not drawn"
    cells = json.loads(html.unescape(found[1]))
    assert cells, "no findings table in the tutorial's report"
    for cell in cells:
        assert cell["width"] >= 200, cell  # Material's table CSS once crushed it to ~1 character
        assert cell["right"] <= cell["boxRight"] + 1, cell  # not clipped by the output box
    shot = tmp_path / "tutorial.png"
    draw(page, f"--screenshot={shot}")
    head = shot.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(head[16:20], "big") == WIDTH


def test_api_reference_renders_docstrings(site: Path) -> None:
    text = (site / "api" / "index.html").read_text()
    assert not re.search(r":(class|func|meth|mod|data|attr|exc):", text)
    start = text.index('id="labelgate.api.validate"')
    returns = text[text.index("Returns", start) : text.index("Raises", start)]
    rows = re.findall(r"<tr[ >]", returns.split("<tbody>", 1)[1])
    assert len(rows) == 1, "validate's Returns is one description"
    words = " ".join(re.sub(r"<[^>]+>", " ", returns).split())
    assert "says whether training may start, and report.raise_for_errors() stops it" in words


def test_no_sphinx_roles_in_docstrings() -> None:
    """One docstring style (Google's, with Markdown code): no reStructuredText roles left."""
    found = [
        f"{p.relative_to(ROOT)}:{i}"
        for p in sorted((ROOT / "src" / "labelgate").rglob("*.py"))
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if re.search(r":(class|func|meth|mod|data|attr|exc):`", line)
    ]
    assert not found
