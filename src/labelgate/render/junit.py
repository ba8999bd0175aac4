"""JUnit XML: one test case per check code, failed where the report has a failing finding."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from labelgate.core.report import Example, Finding, Report
from labelgate.render.common import base_paths, check_titles, example_value, quoted

__all__ = ["render_junit"]


def _detail(f: Finding) -> str:
    lines = [f.message, f"fix: {f.fix}" if f.fix else ""]
    lines += [_example(e) for e in f.examples]
    return "\n".join(line for line in lines if line)


def _example(e: Example) -> str:
    """One example as the text report words it: what the row lacks (no id, no source) is left
    out, not written as a null."""
    parts = [f"row {e.row}"] if e.row >= 0 else []
    if e.id is not None:
        parts.append(f"id {quoted(e.id)}")
    if e.row >= 0:
        parts.append("batch " + ("dropped" if e.batch is None else str(e.batch)))
    if e.source is not None:
        parts.append(f"source {quoted(e.source)}")
    if e.value is not None or e.row >= 0:
        parts.append(f"value {example_value(e)}")
    if e.file is not None:
        parts.append(e.file if e.file_row is None else f"{e.file} row {e.file_row}")
    return ", ".join(parts)


def render_junit(report: Report) -> str:
    """One ``<testsuite>``; a ``<testcase>`` per check code, named by its code.

    Errors (and warnings under ``strict``) are ``<failure>``; other findings are kept as
    ``<system-out>`` of a passing case, so readers show them without failing the build.
    """
    failing = {"error", "warning"} if report.strict else {"error"}
    by_code: dict[str, list[Finding]] = {}
    for f in report.findings:
        by_code.setdefault(f.code, []).append(f)
    titles = check_titles(report)
    name = "labelgate diff" if report.diff is not None else "labelgate validate"
    files = ", ".join(f["path"] for f in report.input["files"])
    failures = sum(any(f.severity in failing for f in by_code.get(code, [])) for code in titles)
    suite = ET.Element(
        "testsuite",
        name=name,
        tests=str(len(titles)),
        failures=str(failures),
        errors="0",
        skipped="0",
    )
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(properties, "property", name="input", value=files)
    base = base_paths(report)
    if base is not None:
        ET.SubElement(properties, "property", name="base", value=base)
    for code, title in titles.items():
        case = ET.SubElement(suite, "testcase", classname=name, name=f"{code} {title}")
        found = by_code.get(code, [])
        failed = [f for f in found if f.severity in failing]
        for f in failed:
            failure = ET.SubElement(
                case, "failure", message=f"{f.code} {f.severity}: {f.message}", type=f.severity
            )
            failure.text = _detail(f)
        rest = [f for f in found if f not in failed]
        if rest:
            ET.SubElement(case, "system-out").text = "\n\n".join(
                f"{f.severity}: {_detail(f)}" for f in rest
            )
    suites = ET.Element(
        "testsuites", name="labelgate", tests=suite.get("tests", "0"), failures=str(failures)
    )
    suites.append(suite)
    ET.indent(suites)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
    )
