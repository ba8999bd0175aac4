"""The README's and docs' links resolve on GitHub (relative paths that exist), the site's home
page (the README, rewritten by docs/hooks.py) links only to pages of the site or the repository,
and the README's command for the suite installs what the tests need."""

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


def test_the_readme_s_suite_command_installs_every_extra_a_test_needs() -> None:
    """A test that skips without a module one of pyproject's extras provides (the docs site's
    mkdocs, GX, dask) runs for a newcomer who followed the README, rather than skipping."""
    import tomllib

    def name(requirement: str) -> str:
        return re.split(r"[\[<>=!~ ;]", requirement, maxsplit=1)[0].lower().replace("_", "-")

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    provided: dict[str, set[str]] = {}
    for extra, requirements in extras["optional-dependencies"].items():
        for requirement in requirements:
            provided.setdefault(name(requirement), set()).add(extra)
    (command,) = [
        line
        for line in (ROOT / "README.md").read_text().splitlines()
        if "pip install -e" in line and "python -m pytest" in line
    ]
    installed = set(re.findall(r"\.\[([^\]]+)\]", command)[0].split(","))
    skipped = {
        name(m)
        for test in (ROOT / "tests").glob("*.py")
        for m in re.findall(r'importorskip\(\s*"(\w+)', test.read_text())
    }
    needed = {module: provided[module] for module in skipped if module in provided}
    assert "mkdocs" in needed and "great-expectations" in needed
    assert {m: e for m, e in needed.items() if not e & installed} == {}
