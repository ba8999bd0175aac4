"""Markdown: the summary a reviewer reads on a pull request (and GitHub's step summary)."""

from __future__ import annotations

from labelgate.core.report import Report
from labelgate.render.common import counted, example_value, verdict

__all__ = ["render_markdown"]

ICON = {"error": "❌", "warning": "⚠️", "info": "ℹ️"}


def _cell(value: object) -> str:
    """Text safe inside a Markdown table cell (data may hold pipes, newlines, HTML, or link and
    image syntax: ``[x](javascript:...)``, ``![](http://...)``)."""
    text = str(value).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
    for mark in "[]!":
        text = text.replace(mark, "\\" + mark)
    return text.replace("<", "&lt;").replace(">", "&gt;")


def render_markdown(report: Report) -> str:
    """Verdict, counts, findings with their first examples, per-source and per-class tables."""
    c = report.counts
    title = "labelgate diff" if report.diff is not None else "labelgate validate"
    files = ", ".join(f"`{_cell(f['path'])}`" for f in report.input["files"][:5])
    out = [f"## {title}: {verdict(report)}", "", f"Input: {files}", ""]
    out.append(
        f"Rows {c['rows']} = usable {c['usable']} + ignored {c['ignored']} + rejected {c['rejected']}"
    )
    b = report.batches
    out += [
        "",
        f"Batches: {counted(b['count'], 'batches')} of {b['size']} rows; failing batches: "
        + (", ".join(f"#{x}" for x in b["failing"][:20]) or "none"),
        "",
    ]
    if report.findings:
        out += ["| | code | count | finding |", "|---|---|---:|---|"]
        for f in report.findings:
            out.append(
                f"| {ICON[f.severity]} {f.severity} | {f.code} | {counted(f.count, f.unit)} | {_cell(f.message)} |"
            )
        out.append("")
        for f in report.findings:
            if f.severity == "info":
                continue
            out.append(f"<details><summary>{f.code}: {_cell(f.fix) or 'details'}</summary>\n")
            if f.examples:
                out += ["| row | id | batch | source | value |", "|---:|---|---:|---|---|"]
                out += [
                    f"| {e.row} | {_cell(e.id)} | {e.batch} | {_cell(e.source)} | {_cell(example_value(e))} |"
                    for e in f.examples[:10]
                ]
            out += ["", "</details>", ""]
    if len(report.sources) > 1:
        out += ["| source | rows | usable | ignored | rejected |", "|---|---:|---:|---:|---:|"]
        out += [
            f"| {_cell(s['source'])} | {s['rows']} | {s['usable']} | {s['ignored']} | {s['rejected']} |"
            for s in report.sources
        ]
        out.append("")
    if report.classes and len(report.classes) <= 100:
        out += ["| class | name | count | share |", "|---:|---|---:|---:|"]
        out += [
            f"| {k['index']} | {_cell(k['name'] or '')} | {k['count']} | {k['share']:.1%} |"
            for k in report.classes
        ]
        out.append("")
    if report.diff is not None:
        rows = report.diff["rows"]
        if rows.get("compared"):
            out.append(
                f"Rows by id against base: {rows['added']} added, {rows['removed']} removed, {rows['changed']} relabelled."
            )
            out.append("")
    return "\n".join(out) + "\n"
