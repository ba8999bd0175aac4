"""The pull-request comment: in a few lines, what blocks and what changed, with a link to the
full report. It fits one GitHub comment (65,536 characters) however many rows and findings."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from labelgate.render.common import base_paths, counted, plain, verdict
from labelgate.render.markdown import ICON, cell

if TYPE_CHECKING:
    from labelgate.core.report import Finding, Report

__all__ = ["LIMIT", "MARKER", "render_pr_comment"]

LIMIT = 65_536  # GitHub's longest comment body, in characters
MARKER = "<!-- labelgate pr-comment -->"  # finds the comment to update on the next push
MESSAGE = 300  # characters of a finding's message shown; the full report has them whole
ROWS = 30  # rows of a table shown; the full report has them all
RELABELLED = 10  # relabelled rows listed by id in the changes table


def _fit(value: object, limit: int = MESSAGE) -> str:
    """``value`` escaped for a table cell, and cut to ``limit`` characters (never inside an
    escape: an entity such as ``&lt;``, or a backslash)."""
    text = cell(value)
    for mark in "`*_~":  # no code span, emphasis or strike-through made by the data
        text = text.replace(mark, "\\" + mark)
    if len(text) <= limit:
        return text
    cut = re.sub(r"&[a-z]*$", "", text[: limit - 1])
    if (len(cut) - len(cut.rstrip("\\"))) % 2:
        cut = cut[:-1]
    return cut + "…"


def _findings(findings: list[Finding], more: str) -> list[str]:
    out = ["| | code | count | finding |", "|---|---|---:|---|"]
    out += [
        f"| {ICON[f.severity]} {f.severity} | {f.code} | {counted(f.count, f.unit)} "
        f"| {_fit(f.message)} |"
        for f in findings[:ROWS]
    ]
    if len(findings) > ROWS:
        out.append(f"| | | | and {len(findings) - ROWS} more {more} in the full report |")
    return [*out, ""]


def _changes(report: Report) -> list[str]:
    """The comparison with BASE as one table: counts, rows by id, share shifts, relabelled rows."""
    assert report.diff is not None
    base = report.diff["base"]["counts"]
    head = report.counts
    out = ["| change | base | head |", "|---|---:|---:|"]
    out += [f"| {what} | {base[what]} | {head[what]} |" for what in ("rows", "usable", "rejected")]
    rows = report.diff["rows"]
    if rows.get("compared"):
        out.append(
            f"| rows by id | | {rows['added']} added, {rows['removed']} removed, "
            f"{rows['changed']} relabelled |"
        )
    by_code = {f.code: f for f in report.findings}
    shifts: list[dict[str, Any]] = by_code["LG023"].details["shifts"] if "LG023" in by_code else []
    out += [
        f"| {s['what']} {_fit(s['key'], 80)} share | {s['base']:.1%} | {s['head']:.1%} |"
        for s in shifts[:ROWS]
    ]
    if len(shifts) > ROWS:
        out.append(f"| and {len(shifts) - ROWS} more shares moved | | |")
    changes: list[dict[str, Any]] = (
        by_code["LG025"].details["changes"] if "LG025" in by_code else []
    )
    out += [
        f"| id {_fit(plain(c['id']), 80)} relabelled | {_fit(plain(c['base']), 80)} "
        f"| {_fit(plain(c['head']), 80)} |"
        for c in changes[:RELABELLED]
    ]
    if rows.get("changed", 0) > RELABELLED:
        out.append(f"| and {rows['changed'] - RELABELLED} more relabelled rows | | |")
    return [*out, ""]


def render_pr_comment(report: Report, *, link: str | None = None) -> str:
    """What blocks first, then what changed against BASE (for ``diff``), then the rest, and a
    link to the full report.

    Args:
        report: the report.
        link: where the full report is (the CI run's artifact); ``None``: the comment says the
            report files hold it.
    """
    diffing = report.diff is not None
    title = "labelgate diff" if diffing else "labelgate validate"
    icon = "❌" if report.failed else "✅"
    files = report.input["files"]
    shown = ", ".join(f"{_fit(f['path'], 200)}" for f in files[:3])
    shown += f" (+{len(files) - 3} files)" if len(files) > 3 else ""
    base = base_paths(report)
    against = "" if base is None else f" against base {_fit(base, 600)}"
    c = report.counts
    out = [
        MARKER,
        f"## {icon} {title}: {verdict(report)}",
        "",
        f"{shown}{against}: {c['rows']} rows = usable {c['usable']} + ignored {c['ignored']} "
        f"+ rejected {c['rejected']}",
        "",
    ]
    failing = {"error", "warning"} if report.strict else {"error"}
    blocking = [f for f in report.findings if f.severity in failing]
    rest = [f for f in report.findings if f.severity not in failing]
    out += ["### What blocks", ""]
    out += _findings(blocking, "blocking findings") if blocking else ["Nothing blocks.", ""]
    if diffing:
        out += ["### What changed", "", *_changes(report)]
    if rest:
        out += ["### Also found", "", *_findings(rest, "findings")]
    where = f"[The full report]({link})" if link else "The full report (the report files)"
    out.append(
        f"{where} has every finding with its rows and fix, and the per-class and per-source tables."
    )
    text = "\n".join(out) + "\n"
    assert len(text) <= LIMIT, len(text)  # bounded by construction: ROWS rows of MESSAGE chars
    return text
