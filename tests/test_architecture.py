"""The structure docs/architecture.md describes: modules of a readable size, packages that exist,
``__init__`` modules that only hand names on."""

from __future__ import annotations

import ast
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
    assert 'containers = ["labelgate.readers"]' in text  # no format imports another


def _beyond_reexports(init: Path) -> list[str]:
    """What an ``__init__`` holds beside its docstring, its imports and ``__all__``."""
    found = []
    for i, node in enumerate(ast.parse(init.read_text()).body):
        if i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring
        if isinstance(node, ast.Import | ast.ImportFrom):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else []
        if [getattr(t, "id", None) for t in targets] == ["__all__"]:
            continue
        found.append(f"line {node.lineno}: {type(node).__name__}")
    return found


def test_no_init_holds_logic() -> None:
    """A package's ``__init__`` re-exports its public names; functions, classes and state live
    in named modules, so that its face is all a reader of ``from labelgate.x import ...`` sees."""
    held = {
        str(p.relative_to(PACKAGE)): found
        for p in sorted(PACKAGE.rglob("__init__.py"))
        if (found := _beyond_reexports(p))
    }
    assert held == {}, f"move these into named modules: {held}"


def test_the_init_rule_sees_a_function_a_class_and_a_constant(tmp_path: Path) -> None:
    init = tmp_path / "__init__.py"
    init.write_text(
        '"""A package."""\n\nfrom x import y\n\n__all__ = ["y"]\n'
        "LIMIT = 3\n\ndef f() -> None: ...\n\nclass C: ...\n"
    )
    assert _beyond_reexports(init) == ["line 6: Assign", "line 8: FunctionDef", "line 10: ClassDef"]


def test_each_reader_package_says_what_it_reads_and_names_its_entry() -> None:
    readers = PACKAGE / "readers"
    for init in sorted(readers.glob("*/__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        assert doc, init.parent.name
        if init.parent.name != "common":
            assert "The entry is ``" in doc, init.parent.name
