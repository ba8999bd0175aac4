"""The terminal report: drawn with rich for a terminal, as plain text where rich adds nothing.

The report is first laid out as lines of styled spans and tables (``_document``). On a terminal
(colour) rich draws it. Without colour (a file, a pipe, a CI log: what most runs write) the same
layout is drawn here, character for character as rich draws it, whenever that is certain: every
span printable, no markup look-alike or backslash, lines rich would wrap and table cells ASCII
within the width. Anything else goes to rich as well, so the output never depends on which
drawer ran; importing rich (about 20 ms) is then paid only where it draws something.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass

from labelgate.core.report import Example, Finding, Report
from labelgate.render.common import (
    base_paths,
    counted,
    framework_lines,
    omitted_classes,
    quoted,
    task_shown,
)
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
        if e.position is not None:  # a token of its row, or a keypoint of its annotation
            parts.append(f"{'keypoint' if f.unit == 'keypoints' else 'token'} {e.position}")
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


Span = tuple[str, str]  # (text, rich style; "" for none)


@dataclass(frozen=True, slots=True)
class _Line:
    spans: tuple[Span, ...]
    soft: bool = False  # never wrapped (rich's soft_wrap); else rich wraps it at the width

    @property
    def text(self) -> str:
        return "".join(t for t, _ in self.spans)


@dataclass(frozen=True, slots=True)
class _Table:
    title: str
    columns: tuple[tuple[str, str], ...]  # (header, justify)
    rows: tuple[tuple[str, ...], ...]


def render_text(report: Report, *, color: bool = False, width: int = 100) -> str:
    """The report for a terminal: verdict, counts, each finding with evidence and fix, tables."""
    document = _document(report, width)
    plain = None if color else _plain(document, width)
    return no_commands(plain if plain is not None else _rich(document, color, width))


def _document(report: Report, width: int) -> list[_Line | _Table]:
    out: list[_Line | _Table] = []
    c = report.counts
    paths = ", ".join(f["path"] for f in report.input["files"][:3])
    more = len(report.input["files"]) - 3
    base = base_paths(report)
    out.append(
        _Line(
            (
                (f"labelgate{' diff' if base else ''}", "bold"),
                (
                    f" {paths}"
                    + (f" (+{more} files)" if more > 0 else "")
                    + (f" against base {base}" if base else ""),
                    "",
                ),
            )
        )
    )
    k = report.contract.get("num_classes")
    ignore = report.contract.get("ignore_index")
    b = report.batches
    out.append(
        _plain_line(
            f"K={k}, ignore_index={ignore}, task {task_shown(report)}, "
            f"{b['count']} batch{'' if b['count'] == 1 else 'es'} of {b['size']}"
            + (f" {b['unit']}" if b.get("unit") else "")
            + (", drop_last" if b["drop_last"] else "")
            + (f", shuffle seed {b['shuffle_seed']}" if b["shuffle_seed"] is not None else "")
        )
    )
    out.append(
        _plain_line(
            f"rows {c['rows']} = usable {c['usable']} + ignored {c['ignored']} + "
            f"rejected {c['rejected']}"
        )
    )
    for unit in ("tokens", "pixels"):
        if unit in c:
            out.append(
                _plain_line(
                    f"{unit} {c[unit]} = usable {c['usable_' + unit]} + ignored "
                    f"{c['ignored_' + unit]} + rejected {c['rejected_' + unit]}"
                )
            )
    for note in report.notes:
        out.append(_Line(((f"note: {_wrapped(note, width, len('note: '), '')}", "dim"),), True))
    lines = framework_lines(report)
    if lines:
        out.append(
            _plain_line("each framework's reading (the verdict counts what fails under all):")
        )
        for line in lines:
            out.append(_Line(((f"  {_wrapped(line, width, 2, '    ')}", ""),), True))
    out.append(_Line(()))
    for f in report.findings:
        head = f"{f.code} {f.severity} ({counted(f.count, f.unit)}): "
        body = _wrapped(f.message, width, len(head), "    ")
        out.append(_Line(((head, STYLE.get(f.severity, "")), (body, "")), True))
        for line in _examples(f):
            out.append(_Line(((f"    {_wrapped(line, width, 4, '      ')}", ""),), True))
        if f.fix:
            fix = _wrapped(f.fix, width, len("  fix: "), "       ")
            out.append(_Line((("  ", ""), ("fix:", "dim"), (f" {fix}", "")), True))
    if len(report.sources) > 1:
        counts = ("rows", "usable", "ignored", "rejected")
        out.append(
            _Table(
                "per source",
                (("source", "left"), *((x, "right") for x in counts)),
                tuple((str(s["source"]), *(str(s[x]) for x in counts)) for s in report.sources),
            )
        )
    if report.classes and len(report.classes) <= 50:
        rejected = "rejected" in report.classes[0]  # detection: rows rejected per class
        heads = ("index", "name", "count", "share", *(("rejected",) if rejected else ()))
        out.append(
            _Table(
                "per class (usable targets)",
                tuple((h, "left" if h == "name" else "right") for h in heads),
                tuple(
                    (
                        str(row["index"]),
                        str(row["name"] or ""),
                        str(row["count"]),
                        f"{row['share']:.1%}",
                        *((str(row["rejected"]),) if rejected else ()),
                    )
                    for row in report.classes
                ),
            )
        )
        omitted = omitted_classes(report)
        if omitted:  # K past 65,536: the classes with no target are counted, not listed
            out.append(_plain_line(omitted))
    errors = sum(f.severity == "error" for f in report.findings)
    warnings = sum(f.severity == "warning" for f in report.findings)
    out.append(
        _Line(
            (
                (report.status.upper(), "bold red" if report.failed else "bold green"),
                (
                    f": {errors} error(s), {warnings} warning(s)"
                    + (" (strict: warnings fail)" if report.strict else ""),
                    "",
                ),
            )
        )
    )
    return out


def _plain_line(text: str) -> _Line:
    return _Line(((text, ""),))


def _rich(document: list[_Line | _Table], color: bool, width: int) -> str:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    # emoji=False: ":fire:" in an id stays text; markup from data is escaped span by span
    console = Console(
        record=True, width=width, force_terminal=color, no_color=not color, emoji=False
    )
    with console.capture() as capture:
        for item in document:
            if isinstance(item, _Line):
                markup = "".join(
                    f"[{style}]{escape(text)}[/{style}]" if style else escape(text)
                    for text, style in item.spans
                )
                console.print(markup, soft_wrap=item.soft)
                continue
            table = Table(title=item.title, title_justify="left")
            for header, justify in item.columns:
                table.add_column(header, justify=justify)  # type: ignore[arg-type]
            for row in item.rows:
                table.add_row(*(escape(cell) for cell in row))
            console.print(table)
    return capture.get()


# Text rich would read otherwise than it is written: markup (a tag after "["), its escapes.
_MARKUP = re.compile(r"\\|\[[a-z#/@]")


def _exact(text: str, *, soft: bool) -> bool:
    """Whether rich draws ``text`` as it is: printable but for the line breaks of a line never
    wrapped (rich drops and expands some control characters), no markup look-alike, and where
    rich measures it (a line it wraps, a table cell), one column per character."""
    if _MARKUP.search(text):
        return False
    if soft:
        return all(part.isprintable() for part in text.split("\n"))
    return text.isprintable() and text.isascii()


def _plain(document: list[_Line | _Table], width: int) -> str | None:
    """The document as rich draws it without colour, or None where that is not certain."""
    out: list[str] = []
    for item in document:
        if isinstance(item, _Line):
            text = item.text
            if not _exact(text, soft=item.soft) or (not item.soft and len(text) > width):
                return None
            out.append(text)
            continue
        table = _plain_table(item, width)
        if table is None:
            return None
        out.extend(table)
    return "".join(line + "\n" for line in out)


def _plain_table(table: _Table, width: int) -> list[str] | None:
    """rich's default table (heavy head, a cell's padding one space) where it fits the width."""
    cells = [tuple(h for h, _ in table.columns), *table.rows]
    if not all(_exact(cell, soft=False) for row in cells for cell in row):
        return None
    widths = [max(len(row[i]) for row in cells) for i in range(len(table.columns))]
    total = sum(widths) + 3 * len(widths) + 1
    if total > width or len(table.title) > total or not _exact(table.title, soft=False):
        return None

    def row(values: tuple[str, ...], edge: str, inner: str) -> str:
        parts = (
            " " + (v.ljust(w) if justify == "left" else v.rjust(w)) + " "
            for v, w, (_, justify) in zip(values, widths, table.columns, strict=True)
        )
        return edge + inner.join(parts) + edge

    def rule(left: str, fill: str, cross: str, right: str) -> str:
        return left + cross.join(fill * (w + 2) for w in widths) + right

    return [
        table.title.ljust(total),
        rule("\u250f", "\u2501", "\u2533", "\u2513"),
        row(cells[0], "\u2503", "\u2503"),
        rule("\u2521", "\u2501", "\u2547", "\u2529"),
        *(row(r, "\u2502", "\u2502") for r in table.rows),
        rule("\u2514", "\u2500", "\u2534", "\u2518"),
    ]
