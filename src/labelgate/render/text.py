"""The terminal report, drawn with rich."""

from __future__ import annotations

import re
import textwrap

from labelgate.core.report import Example, Finding, Report
from labelgate.render.common import base_paths, counted, framework_lines, quoted, task_shown
from labelgate.render.terminal import no_commands

__all__ = ["render_text"]

STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def _examples(f: Finding) -> list[str]:
    lines = []
    for e in f.examples[:10]:
        if e.row < 0:  # a record of an annotation file that is no row (a malformed line, a folder)
            lines.append(", ".join(_record(e)))
            continue
        parts = [f"row {e.row}" + ("" if e.file is None else f" ({e.file} row {e.file_row})")]
        if e.position is not None:
            parts.append(f"token {e.position}")
        if e.id is not None:
            parts.append(f"id {quoted(e.id)}")
        parts.append("batch " + ("dropped" if e.batch is None else str(e.batch)))
        if e.source is not None:
            parts.append(f"source {quoted(e.source)}")
        parts.append(f"value {quoted(e.value)}")
        if e.pixels is not None:
            parts.append(f"{e.pixels} px")
        lines.append(", ".join(parts))
    if len(f.examples) > 10:
        lines.append(f"... {len(f.examples) - 10} more examples in --format json")
    return lines


def _record(e: Example) -> list[str]:
    parts = [f"id {quoted(e.id)}"]
    if e.file is not None:  # an image a detection file names: its file name as written
        parts.append(f"file {quoted(e.file)}")
    if e.source is not None:
        parts.append(f"source {quoted(e.source)}")
    if e.value is not None:
        parts.append(f"value {quoted(e.value)}")
    return parts


_QUOTED = re.compile(r"(?<!\w)'[^'\n]{1,100}'(?!\w)")  # not the apostrophe of "source's"
# A number and its unit (``188 px``, ``128 MB``) stay on one line.
_UNIT = re.compile(r"(?<=\d) (?=(?:px|KB|MB|GB|KiB|MiB|GiB|ms|s)\b)")


def _wrapped(text: str, width: int, first: int, indent: str) -> str:
    """``text`` wrapped to ``width`` after a first-line prefix of ``first`` characters, later
    lines indented; words and quoted messages (``'t >= 0 && t < n_classes'``) are never split."""
    kept = _UNIT.sub("\xa0", _QUOTED.sub(lambda m: m[0].replace(" ", "\xa0"), text))
    out = textwrap.fill(
        kept,
        width=width,
        initial_indent=" " * first,
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    )
    return out[first:].replace("\xa0", " ")


def render_text(report: Report, *, color: bool = False, width: int = 100) -> str:
    """The report for a terminal: verdict, counts, each finding with evidence and fix, tables."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    # emoji=False: ":fire:" in an id stays text; markup from data is escaped line by line
    console = Console(
        record=True, width=width, force_terminal=color, no_color=not color, emoji=False
    )
    with console.capture() as capture:
        c = report.counts
        paths = ", ".join(f["path"] for f in report.input["files"][:3])
        more = len(report.input["files"]) - 3
        base = base_paths(report)
        console.print(
            f"[bold]labelgate{' diff' if base else ''}[/bold] {escape(paths)}"
            + (f" (+{more} files)" if more > 0 else "")
            + (f" against base {escape(base)}" if base else "")
        )
        k = report.contract.get("num_classes")
        ignore = report.contract.get("ignore_index")
        b = report.batches
        console.print(
            f"K={k}, ignore_index={ignore}, task {escape(task_shown(report))}, "
            f"{b['count']} batch{'' if b['count'] == 1 else 'es'} of {b['size']}"
            + (f" {b['unit']}" if b.get("unit") else "")
            + (", drop_last" if b["drop_last"] else "")
            + (f", shuffle seed {b['shuffle_seed']}" if b["shuffle_seed"] is not None else "")
        )
        console.print(
            f"rows {c['rows']} = usable {c['usable']} + ignored {c['ignored']} + "
            f"rejected {c['rejected']}"
        )
        for unit in ("tokens", "pixels"):
            if unit in c:
                console.print(
                    f"{unit} {c[unit]} = usable {c['usable_' + unit]} + ignored "
                    f"{c['ignored_' + unit]} + rejected {c['rejected_' + unit]}"
                )
        for note in report.notes:
            shown = _wrapped(note, width, len("note: "), "")
            console.print(f"[dim]note: {escape(shown)}[/dim]", soft_wrap=True)
        lines = framework_lines(report)
        if lines:
            console.print("each framework's reading (the verdict counts what fails under all):")
            for line in lines:
                console.print(f"  {escape(_wrapped(line, width, 2, '    '))}", soft_wrap=True)
        console.print()
        for f in report.findings:
            style = STYLE.get(f.severity, "")
            head = f"{f.code} {f.severity} ({counted(f.count, f.unit)}): "
            body = _wrapped(f.message, width, len(head), "    ")
            console.print(f"[{style}]{head}[/{style}]{escape(body)}", soft_wrap=True)
            for line in _examples(f):
                console.print(f"    {escape(_wrapped(line, width, 4, '      '))}", soft_wrap=True)
            if f.fix:
                fix = _wrapped(f.fix, width, len("  fix: "), "       ")
                console.print(f"  [dim]fix:[/dim] {escape(fix)}", soft_wrap=True)
        if len(report.sources) > 1:
            table = Table(title="per source", title_justify="left")
            for col in ("source", "rows", "usable", "ignored", "rejected"):
                table.add_column(col, justify="left" if col == "source" else "right")
            for s in report.sources:
                table.add_row(
                    escape(str(s["source"])),
                    *(str(s[x]) for x in ("rows", "usable", "ignored", "rejected")),
                )
            console.print(table)
        if report.classes and len(report.classes) <= 50:
            table = Table(title="per class (usable targets)", title_justify="left")
            rejected = "rejected" in report.classes[0]  # detection: rows rejected per class
            for col in ("index", "name", "count", "share", *(("rejected",) if rejected else ())):
                table.add_column(col, justify="left" if col == "name" else "right")
            for row in report.classes:
                table.add_row(
                    str(row["index"]),
                    escape(str(row["name"] or "")),
                    str(row["count"]),
                    f"{row['share']:.1%}",
                    *((str(row["rejected"]),) if rejected else ()),
                )
            console.print(table)
        verdict = report.status.upper()
        errors = sum(f.severity == "error" for f in report.findings)
        warnings = sum(f.severity == "warning" for f in report.findings)
        style = "bold red" if report.failed else "bold green"
        console.print(
            f"[{style}]{verdict}[/{style}]: {errors} error(s), {warnings} warning(s)"
            + (" (strict: warnings fail)" if report.strict else "")
        )
    return no_commands(capture.get())  # a wrap may start a line with "::" from data
