"""``labelgate explain``: every catalog code prints its entry and its own paragraph of
docs/checks.md, and every example fails with its code and passes without it."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from labelgate import validate
from labelgate.cli import main
from labelgate.core.catalog import CATALOG
from labelgate.explain.examples import EXAMPLES
from labelgate.explain.text import explain

ROOT = Path(__file__).resolve().parent.parent


def _generator():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("explanations", ROOT / "docs/explanations.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_packaged_paragraphs_are_the_page_s() -> None:
    """Run ``python docs/explanations.py`` after editing docs/checks.md."""
    gen = _generator()
    assert gen.OUT.read_text(encoding="utf-8") == gen.rendered()


@pytest.mark.parametrize("entry", CATALOG, ids=lambda e: e.code)
def test_every_code_prints_its_catalog_entry_and_paragraph(entry) -> None:  # type: ignore[no-untyped-def]
    page = _generator().paragraphs((ROOT / "docs/checks.md").read_text(encoding="utf-8"))
    text = explain(entry.code.lower())
    assert text.startswith(f"{entry.code}: {entry.title}\n")
    assert f"finds: {entry.finds}" in text
    assert page[entry.code] in text  # the page's own words, whole
    assert page[entry.code].startswith("**LG")  # the paragraph that opens with its codes


@pytest.mark.parametrize("code", sorted(EXAMPLES))
def test_each_example_fails_with_its_code_and_passes_without_it(tmp_path: Path, code: str) -> None:
    example = EXAMPLES[code]
    for csv, flags, found in (
        (example.fails, example.flags, True),
        (example.passes, example.passing_flags, False),
    ):
        path = tmp_path / f"{found}.csv"
        path.write_text(csv)
        options = dict(zip(flags[::2], flags[1::2], strict=True))
        report = validate(
            str(path),
            classes=int(options["--classes"]),
            ignore_index=int(options.get("--ignore-index", -100)),
            batch_size=int(options.get("--batch-size", 32)),
        )
        assert (code in {f.code for f in report.findings}) == found, (code, found, csv)
        text = explain(code)
        assert csv.splitlines()[1] in text


def test_an_unknown_code_is_a_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "LG999"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("labelgate: error: 'LG999' is no check code") and "\n" not in err


def test_explain_prints_through_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "LG004"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("LG004: labels >= K") and "fails: labelgate validate" in out
    assert json.loads((ROOT / "src/labelgate/explain/paragraphs.json").read_text())["LG004"] in out
