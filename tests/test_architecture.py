"""The structure docs/architecture.md describes: modules of a readable size, packages that exist."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import ROOT

PACKAGE = ROOT / "src" / "labelgate"
MAX_LINES = 450


def test_no_module_passes_450_lines() -> None:
    long = {
        str(p.relative_to(PACKAGE)): n
        for p in PACKAGE.rglob("*.py")
        if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}, f"split these along their seams: {long}"


def test_the_packages_of_the_layers_exist_and_say_what_they_hold() -> None:
    doc = (ROOT / "docs" / "architecture.md").read_text()
    for package in ("core", "io", "contract", "inputs", "readers", "scan", "checks", "run"):
        init = PACKAGE / package / "__init__.py"
        assert init.is_file() and init.read_text().startswith('"""'), package
        assert f"{package}/" in doc, package
    for package in ("engines", "commands", "render", "cli", "integrations"):
        assert (PACKAGE / package / "__init__.py").is_file(), package
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert top == ["__init__.py", "__main__.py", "_version.py", "api.py", "errors.py", "torch.py"]


def test_layers_are_package_level_and_count_type_imports(tmp_path: Path) -> None:
    text = (ROOT / "pyproject.toml").read_text()
    assert "exclude_type_checking_imports = false" in text
    assert '"labelgate.readers | labelgate.checks"' in text
