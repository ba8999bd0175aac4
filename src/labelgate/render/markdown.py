"""Markdown: the summary a reviewer reads on a pull request (and GitHub's step summary)."""

from __future__ import annotations

from labelgate.core.report import Example, Report, shown_batches
from labelgate.render.common import (
    base_paths,
    counted,
    example_value,
    framework_lines,
    omitted_classes,
    plain,
    verdict,
)

__all__ = ["cell", "render_markdown"]

ICON = {"error": "❌", "warning": "⚠️", "info": "ℹ️"}


def cell(value: object) -> str:
    """Text safe inside a Markdown table cell (data may hold pipes, newlines, HTML, or link and
    image syntax: ``[x](javascript:...)``, ``![](http://...)``)."""
    text = str(value).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
    for mark in "[]!":
        text = text.replace(mark, "\\" + mark)
    return text.replace("<", "&lt;").replace(">", "&gt;")


def _blank(value: object) -> str:
    """An id or source the row does not have: an empty cell, not a null."""
    return "" if value is None else plain(value)


def _row(e: Example) -> str:
    return "" if e.row < 0 else str(e.row)  # a record that is no row (a folder, a bad line)


def _batch(e: Example) -> str:
    if e.row < 0:
        return ""
    return "dropped" if e.batch is None else str(e.batch)


def render_markdown(report: Report) -> str:
    """Verdict, counts, findings with their first examples, per-source and per-class tables."""
    c = report.counts
    title = "labelgate diff" if report.diff is not None else "labelgate validate"
    files = ", ".join(f"`{cell(f['path'])}`" for f in report.input["files"][:5])
    base = base_paths(report)
    against = "" if base is None else f" against base `{cell(base)}`"
    out = [f"## {title}: {verdict(report)}", "", f"Input: {files}{against}", ""]
    out.append(
        f"Rows {c['rows']} = usable {c['usable']} + ignored {c['ignored']} + rejected {c['rejected']}"
    )
    b = report.batches
    out += [
        "",
        f"Batches: {counted(b['count'], 'batches')} of {b['size']} rows; failing batches: "
        + (shown_batches(b["failing"], b.get("failing_count"), mark="#") or "none"),
        "",
    ]
    lines = framework_lines(report)
    if lines:
        out += ["Each framework's reading (the verdict counts what fails under all):", ""]
        out += [f"- {cell(line)}" for line in lines] + [""]
    if report.findings:
        out += ["| | code | count | finding |", "|---|---|---:|---|"]
        for f in report.findings:
            out.append(
                f"| {ICON[f.severity]} {f.severity} | {f.code} | {counted(f.count, f.unit)} | {cell(f.message)} |"
            )
        out.append("")
        for f in report.findings:
            if f.severity == "info":
                continue
            out.append(f"<details><summary>{f.code}: {cell(f.fix) or 'details'}</summary>\n")
            if f.examples:
                out += ["| row | id | batch | source | value |", "|---:|---|---:|---|---|"]
                out += [
                    f"| {_row(e)} | {cell(_blank(e.id))} | {_batch(e)} | {cell(_blank(e.source))} "
                    f"| {cell(example_value(e))} |"
                    for e in f.examples[:10]
                ]
            out += ["", "</details>", ""]
    if len(report.sources) > 1:
        out += ["| source | rows | usable | ignored | rejected |", "|---|---:|---:|---:|---:|"]
        out += [
            f"| {cell(s['source'])} | {s['rows']} | {s['usable']} | {s['ignored']} | {s['rejected']} |"
            for s in report.sources
        ]
        out.append("")
    if report.classes and len(report.classes) <= 100:
        rejected = "rejected" in report.classes[0]  # detection: rows rejected per class
        out += [
            "| class | name | count | share |" + (" rejected |" if rejected else ""),
            "|---:|---|---:|---:|" + ("---:|" if rejected else ""),
        ]
        out += [
            f"| {k['index']} | {cell(k['name'] or '')} | {k['count']} | {k['share']:.1%} |"
            + (f" {k['rejected']} |" if rejected else "")
            for k in report.classes
        ]
        omitted = omitted_classes(report)
        if omitted:  # K past 65,536: the classes with no target are counted, not listed
            out += ["", omitted + "."]
        out.append("")
    if report.diff is not None:
        rows = report.diff["rows"]
        if rows.get("compared"):
            out.append(
                f"Rows by id against base: {rows['added']} added, {rows['removed']} removed, {rows['changed']} relabelled."
            )
            out.append("")
    return "\n".join(out) + "\n"
