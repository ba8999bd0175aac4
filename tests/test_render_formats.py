"""Reports for machines and people: JUnit, GitHub annotations, Markdown, and one HTML page."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import junitparser
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from labelgate import Batching, ClassMap, Contract, load_class_map
from labelgate.core.catalog import codes_in
from labelgate.core.report import Report
from labelgate.render import render
from labelgate.run.validation import report_of
from tests.conftest import SAMPLES, run_cli
from tests.support.chromium import dump_dom

XSS = "<script>alert(1)</script>"


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    """Labels whose class names, ids and sources carry markup, and a failing batch."""
    path = tmp_path / "hostile.parquet"
    pq.write_table(
        pa.table(
            {
                "id": [XSS, "a|b", "c\nd", "e%f", "g"] * 8,
                "label": [0, 1, 2, 7, -100] * 8,
                "source": [XSS, "web"] * 20,
            }
        ),
        path,
    )
    return path


def hostile_report(path: Path) -> Report:
    cmap = ClassMap.from_names([XSS, "dog", "bird"])
    return report_of(
        [str(path)], Contract(num_classes=3, class_map=cmap, batching=Batching(size=4))
    )


class TestJunit:
    def test_one_case_per_code_parsed_by_a_junit_reader(self, tmp_path: Path) -> None:
        out = tmp_path / "junit.xml"
        result = run_cli(
            "validate",
            "oob_0_2_4.parquet",
            "-k",
            "4",
            "--format",
            "junit",
            "-o",
            str(out),
            cwd=SAMPLES,
        )
        assert result.returncode == 1
        xml = junitparser.JUnitXml.fromfile(str(out))
        (suite,) = list(xml)
        cases = {case.name.split()[0]: case for case in suite}
        assert set(cases) == set(codes_in("input", "row", "batch", "class map", "dataset"))
        failed = {code for code, case in cases.items() if not case.is_passed}
        assert failed == {"LG004"}
        (failure,) = cases["LG004"].result
        assert "row 2, id 103, batch 0" in failure.text
        assert suite.tests == len(cases) and suite.failures == 1

    def test_strict_fails_warnings(self) -> None:
        report = report_of(
            [str(SAMPLES / "oob_0_2_4.parquet")], Contract(num_classes=4), strict=True
        )
        xml = junitparser.JUnitXml.fromstring(render(report, "junit"))
        failed = {case.name.split()[0] for suite in xml for case in suite if not case.is_passed}
        assert failed == {"LG004", "LG012"}


class TestGithub:
    def test_annotations_and_step_summary(self, tmp_path: Path) -> None:
        summary = tmp_path / "summary.md"
        env = {**os.environ, "GITHUB_STEP_SUMMARY": str(summary)}
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "labelgate",
                "validate",
                "oob_0_2_4.parquet",
                "-k",
                "4",
                "--format",
                "github",
            ],
            cwd=SAMPLES,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode == 1
        lines = proc.stdout.splitlines()
        assert lines[0].startswith("::error file=oob_0_2_4.parquet,title=LG004::1 label >= K=4")
        assert any(
            line.startswith("::warning file=oob_0_2_4.parquet,title=LG012::") for line in lines
        )
        assert lines[-1] == "::notice title=labelgate::FAIL: 1 error(s), 1 warning(s)"
        assert "## labelgate validate: FAIL" in summary.read_text()

    def test_escapes_workflow_command_characters(self, hostile: Path) -> None:
        text = render(hostile_report(hostile), "github")
        lines = text.splitlines()
        assert all(line.startswith("::") for line in lines)  # no message broke onto a new line
        assert len(lines) == len(hostile_report(hostile).findings) + 1


class TestMarkdown:
    def test_tables_escape_data(self, hostile: Path) -> None:
        text = render(hostile_report(hostile), "markdown")
        assert "<script>" not in text
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
        assert "a\\|b" in text
        assert "| ❌ error | LG004 |" in text


def rendered(page: Path) -> str:
    """The DOM headless Chromium builds from ``page`` (CI installs Chromium: .ci/run)."""
    return dump_dom(page)


class TestHtml:
    def test_self_contained_and_escaped(self, hostile: Path) -> None:
        page = render(hostile_report(hostile), "html")
        assert "<script" not in page.lower()
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
        assert not re.search(r"""(src|href)=["']?https?:""", page)  # nothing from the network
        for plot in ("plot-classes", "plot-sources", "plot-batches", "plot-share"):
            assert f'id="{plot}"' in page

    @pytest.mark.parametrize(("classes", "rows"), [(100, 40_000), (4, 200)])
    def test_plots_are_readable_at_any_size(self, classes: int, rows: int, tmp_path: Path) -> None:
        """Axes with ticks, class and source names, counts on hover, at most 200 bars: a
        100-class file of 1,250 batches and a 4-class file, rendered in headless Chromium."""
        import numpy as np

        labels = np.arange(rows) % classes
        nan_batch = rows // 64
        labels[nan_batch * 32 : nan_batch * 32 + 32] = -100  # one batch with no usable target
        names = [f"class_{i}" for i in range(classes)]
        source = np.where(np.arange(rows) < rows // 3, "web", "vendor")
        path = tmp_path / "labels.parquet"
        pq.write_table(pa.table({"label": labels, "source": source}), path)
        (tmp_path / "names.txt").write_text("\n".join(names) + "\n")
        report = report_of(
            [str(path)],
            Contract(num_classes=classes, class_map=load_class_map(tmp_path / "names.txt")),
        )
        page = tmp_path / "report.html"
        page.write_text(render(report, "html"))
        dom = rendered(page)
        svgs = re.findall(r'<svg id="(plot-\w+)".*?</svg>', dom, flags=re.S)
        assert svgs == ["plot-classes", "plot-sources", "plot-batches", "plot-share"]
        for plot in ("plot-classes", "plot-sources", "plot-batches"):
            svg = re.search(rf'<svg id="{plot}".*?</svg>', dom, flags=re.S).group(0)  # type: ignore[union-attr]
            assert 'class="axis y-axis"' in svg and 'class="axis x-axis"' in svg
            bars = re.findall(
                r'<rect x="[^"]+" y="[^"]+" width="[^"]+" height="[^"]+" fill="[^"]+"><title>', svg
            )
            assert 0 < len(bars) <= 200
            assert len(re.findall(r"<text ", svg)) >= 4  # tick labels and axis titles
        classes_svg = re.search(r'<svg id="plot-classes".*?</svg>', dom, flags=re.S).group(0)  # type: ignore[union-attr]
        assert (
            f"<title>{classes - 1} class_{classes - 1}: " in classes_svg
        )  # name and count on hover
        assert "<title>web: " in dom and "<title>vendor: " in dom
        batches = re.search(r'<svg id="plot-batches".*?</svg>', dom, flags=re.S).group(0)  # type: ignore[union-attr]
        assert 'class="mark"' in batches  # the failing bin is marked, though it has no height
        size = -(-(rows // 32) // 200)  # batches per bin
        lo = nan_batch // size * size
        where = f"batch {lo}" if size == 1 else f"batches {lo}-{lo + size - 1}"
        assert f"<title>{where}: at least 0 usable targets; 1 failing</title>" in batches
        if size > 1:
            assert f"1250 batches in {-(-1250 // size)} bins of {size}" in dom

    def test_renders_in_headless_chromium(self, hostile: Path, tmp_path: Path) -> None:
        page = tmp_path / "report.html"
        page.write_text(render(hostile_report(hostile), "html"))
        dom = rendered(page)
        assert dom.count("<svg") == 4
        for plot in ("plot-classes", "plot-sources", "plot-batches", "plot-share"):
            assert f'id="{plot}"' in dom
        assert dom.count("<rect") > 10  # the bars were drawn
        assert "<script>alert(1)</script>" not in dom  # shown as text, never parsed as markup
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom
