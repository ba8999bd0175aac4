"""The README's and docs' links resolve on GitHub (relative paths that exist), and the site's home
page (the README, rewritten by docs/hooks.py) links only to pages of the site or the repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .conftest import ROOT

LINK = re.compile(r"\]\(([^)\s]+)\)")
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_relative_links_exist(page: Path) -> None:
    for target in LINK.findall(page.read_text()):
        if target.startswith(("http://", "https://", "#", "mailto:")):
            continue
        path = (page.parent / target.split("#")[0]).resolve()
        assert path.exists(), f"{page.name}: {target}"


def test_site_home_page_links() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("hooks", ROOT / "docs" / "hooks.py")
    assert spec is not None and spec.loader is not None
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    home = hooks.home((ROOT / "README.md").read_text())
    for target in LINK.findall(home):
        if target.startswith(("https://", "http://", "#")):
            continue
        page = target.split("#")[0]
        assert (ROOT / "docs" / page).exists(), target  # a page of the site
