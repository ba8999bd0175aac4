"""The text report drawn without rich is, character for character, what rich draws, and the
plain drawer is the one a run without colour takes for ordinary reports."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labelgate import Contract
from labelgate.core.report import Example, Finding, Report
from labelgate.render import text
from labelgate.run.validation import report_of
from tests.conftest import SAMPLES

# Text as data brings it: printable ASCII, markup look-alikes, wide and control characters.
PIECES = st.lists(
    st.sampled_from([*"abc XYZ09_-.,:'()[]/\\#@", "[bold]", "[/", "é", "猫", "\t", "\r", "\n"]),
    max_size=30,
).map("".join)


@pytest.fixture(scope="module")
def reports() -> list[Report]:
    return [
        report_of([str(SAMPLES / name)], Contract(num_classes=4))
        for name in ("oob_0_2_4.parquet", "two_sources_one_based.parquet")
    ]


def drawn(report: Report, width: int) -> tuple[str | None, str]:
    document = text._document(report, width)
    return text._plain(document, width), text._rich(document, False, width)


class TestPlainDrawer:
    def test_ordinary_reports_are_drawn_plain_and_equal(self, reports: list[Report]) -> None:
        for report in reports:
            plain, rich = drawn(report, 100)
            assert plain is not None
            assert plain == rich

    @settings(max_examples=60, deadline=None)
    @given(
        path=PIECES,
        note=PIECES,
        message=PIECES,
        value=PIECES,
        source=PIECES,
        names=st.lists(PIECES, min_size=4, max_size=4),
        width=st.sampled_from([40, 60, 100]),
    )
    def test_plain_equals_rich_whenever_it_draws(
        self,
        reports: list[Report],
        path: str,
        note: str,
        message: str,
        value: str,
        source: str,
        names: list[str],
        width: int,
    ) -> None:
        base = reports[1]
        finding = Finding(
            "LG004",
            "error",
            1,
            message,
            fix=note,
            examples=(Example(row=0, id=value, batch=0, source=source, value=value),),
        )
        report = replace(
            base,
            input={**base.input, "files": [{**base.input["files"][0], "path": path}]},
            notes=(note, *base.notes),
            findings=(finding, *base.findings),
            sources=[{**base.sources[0], "source": source}, *base.sources[1:]],
            classes=[{**row, "name": n} for row, n in zip(base.classes, names, strict=True)],
        )
        plain, rich = drawn(report, width)
        if plain is not None:
            assert plain == rich

    def test_what_rich_would_read_otherwise_goes_to_rich(self, reports: list[Report]) -> None:
        for note in ("[bold]x[/bold]", "a\\", "bell \x07", "erase \x1b[2J"):
            report = replace(reports[0], notes=(note,))
            plain, rich = drawn(report, 100)
            assert plain is None, note
            assert text.render_text(report) == text.no_commands(rich)
