"""One self-contained HTML page: verdict, findings, tables and plots drawn as inline SVG.

Everything is inline (no script, no stylesheet or font from the network), and every string that
comes from the data (class names, ids, sources, values, paths) is escaped.
"""

from __future__ import annotations

import math
import re
from html import escape

from labelgate.core.report import Example, Report
from labelgate.render.boxsizes import box_sizes_html
from labelgate.render.common import (
    base_paths,
    counted,
    example_value,
    framework_lines,
    omitted_classes,
    plain,
    verdict,
)
from labelgate.render.pictures import pictures_html

__all__ = ["render_html"]

COLOURS = {"usable": "#2b8a3e", "ignored": "#adb5bd", "rejected": "#c92a2a", "bar": "#1c7ed6"}
STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:70em;color:#212529}
table{border-collapse:collapse;margin:.5em 0 1.5em;display:table;table-layout:auto;width:auto;max-width:none;font-size:inherit;background:none;border:0}
td,th{border:1px solid #dee2e6;padding:.2em .6em;text-align:left;vertical-align:top;min-width:0;font-size:inherit;white-space:normal}
td.fix{min-width:16em}.nw{white-space:nowrap}
.error{color:#c92a2a}.warning{color:#e67700}.info{color:#1864ab}.pass{color:#2b8a3e}.fail{color:#c92a2a}
figure{margin:1em 0}figcaption{font-weight:600}code{background:#f1f3f5;padding:0 .2em}
.pictures{display:flex;flex-wrap:wrap;gap:.75em;margin:.5em 0 1.5em}
figure.picture{margin:0;padding:6px;border:1px solid #dee2e6;border-radius:4px;width:172px;box-sizing:border-box;overflow:hidden}
figure.picture img{display:block;max-width:100%;height:auto;margin:0 auto;image-rendering:pixelated}
figure.picture figcaption{font-weight:400;font-size:12px;overflow-wrap:anywhere;margin-top:4px}
.note{color:#495057;font-style:italic}
"""


def _e(value: object) -> str:
    return escape(str(value), quote=True)


# Flags (``--ignore-index 255``) and numbers with their unit (``188 px``) are copied and read
# whole: a browser would break ``--ignore-index`` after its hyphens.
_UNBROKEN = re.compile(
    r"(?<![\w-])--[A-Za-z][\w-]*(?:=[^\s<&,;)]+| (?:-?\d[\w.]*|[A-Z_]{2,}))?"
    r"|\d[\d,.]*\s(?:px|KB|MB|GB|KiB|MiB|GiB|ms|s)\b"
)


def _prose(text: object) -> str:
    """Escaped text whose flags and numbers with units do not break across lines."""
    return _UNBROKEN.sub(lambda m: f'<span class="nw">{m[0]}</span>', _e(text))


def _blank(value: object) -> str:
    """An id or source the row lacks: an empty cell, not a null."""
    return "" if value is None else _e(plain(value))


MAX_BINS = 200  # bars a plot draws at most: more items are aggregated into bins


def _nice_ticks(peak: float, count: int = 4) -> list[float]:
    """Round tick values from 0 to at least ``peak``: 1, 2 or 5 times a power of ten apart."""
    if peak <= 0:
        return [0.0, 1.0]
    raw = peak / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    return [step * i for i in range(math.ceil(peak / step) + 1)]


def _tick(value: float) -> str:
    if value >= 1_000_000:
        return f"{value / 1_000_000:g}M"
    if value >= 1_000:
        return f"{value / 1_000:g}k"
    return f"{value:g}"


def _bars(
    plot_id: str,
    caption: str,
    items: list[tuple[str, float, str]],
    *,
    x_title: str,
    y_title: str,
    hover: list[str] | None = None,
    marked: list[bool] | None = None,
    width: int = 900,
) -> str:
    """A bar chart with axes: (label, value, colour) per bar; y ticks at round values, x labels
    under the bars (every bar's up to 40, else about 20 of them), each bar's label and value on
    hover (SVG <title>). A ``marked`` bar also gets a red mark above the plot area, seen even when
    the bar has no height (a batch with no usable target)."""
    left, right, top, bottom = 56, 10, 16, 78
    height = 280
    inner_w, inner_h = width - left - right, height - top - bottom
    ticks = _nice_ticks(max((v for _, v, _ in items), default=0))
    peak = ticks[-1] or 1
    step = inner_w / max(len(items), 1)
    out = [
        f'<g class="axis y-axis"><line x1="{left}" y1="{top}" x2="{left}" y2="{top + inner_h}" stroke="#495057"/>'
    ]
    for t in ticks:
        y = top + inner_h - inner_h * t / peak
        out.append(
            f'<line x1="{left - 4}" y1="{y:.1f}" x2="{width - right}" y2="{y:.1f}" stroke="#e9ecef"/>'
            f'<text x="{left - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end">{_tick(t)}</text>'
        )
    out.append(
        f'<text x="14" y="{top + inner_h / 2:.1f}" font-size="12" text-anchor="middle" '
        f'transform="rotate(-90 14 {top + inner_h / 2:.1f})">{_e(y_title)}</text></g>'
    )
    every = 1 if len(items) <= 40 else math.ceil(len(items) / 20)
    bars, labels = [], []
    for i, (label, value, colour) in enumerate(items):
        h = inner_h * value / peak
        bar = min(max(step - 1, 0.5), 60)  # a few bars stay bars, not walls
        x, y = left + i * step + (max(step - 1, 0.5) - bar) / 2, top + inner_h - h
        tip = hover[i] if hover is not None else f"{label}: {value:g}"
        bars.append(
            f'<rect x="{x:.2f}" y="{y:.2f}" width="{bar:.2f}" height="{h:.2f}" '
            f'fill="{colour}"><title>{_e(tip)}</title></rect>'
        )
        if marked is not None and marked[i]:
            bars.append(
                f'<rect class="mark" x="{x:.2f}" y="{top - 10}" width="{max(bar, 2):.2f}" '
                f'height="8" fill="{COLOURS["rejected"]}"><title>{_e(tip)}</title></rect>'
            )
        if i % every == 0:
            cx = x + bar / 2
            shown = label if len(label) <= 16 else label[:15] + "…"
            labels.append(
                f'<text x="{cx:.1f}" y="{top + inner_h + 12}" font-size="10" text-anchor="end" '
                f'transform="rotate(-40 {cx:.1f} {top + inner_h + 12})">{_e(shown)}</text>'
            )
    out.append(
        f'<g class="axis x-axis"><line x1="{left}" y1="{top + inner_h}" x2="{width - right}" '
        f'y2="{top + inner_h}" stroke="#495057"/>{"".join(labels)}'
        f'<text x="{left + inner_w / 2:.1f}" y="{height - 4}" font-size="12" text-anchor="middle">'
        f"{_e(x_title)}</text></g>"
    )
    return (
        f'<figure><figcaption>{_e(caption)}</figcaption><svg id="{plot_id}" class="plot" role="img" '
        f'aria-label="{_e(caption)}" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}">{"".join(out)}{"".join(bars)}</svg>'
        "</figure>"
    )


def _stack(plot_id: str, caption: str, parts: list[tuple[str, int]], *, width: int = 900) -> str:
    """One horizontal bar split into parts (usable, ignored, rejected), each named on hover."""
    total = sum(n for _, n in parts) or 1
    x, rects = 0.0, []
    for name, n in parts:
        w = width * n / total
        rects.append(
            f'<rect x="{x:.2f}" y="0" width="{w:.2f}" height="28" fill="{COLOURS[name]}">'
            f"<title>{_e(name)}: {n} ({n / total:.1%})</title></rect>"
        )
        x += w
    legend = " · ".join(
        f'<span style="color:{COLOURS[name]}">■</span> {_e(name)} {n} ({n / total:.1%})'
        for name, n in parts
    )
    return (
        f'<figure><figcaption>{_e(caption)}</figcaption><svg id="{plot_id}" class="plot" role="img" '
        f'aria-label="{_e(caption)}" xmlns="http://www.w3.org/2000/svg" width="{width}" height="28" '
        f'viewBox="0 0 {width} 28">{"".join(rects)}</svg><div>{legend}</div></figure>'
    )


def _batch_plot(report: Report) -> str:
    """Usable targets per batch, in at most MAX_BINS bins of consecutive batches: a bin is red
    when one of its batches fails, and its batch range, the least usable count and the failing
    batches are on hover. Past the per-batch list (more than 10,000 batches), the failing
    batches per bin."""
    b = report.batches
    count = int(b.get("count") or 0)
    per_batch = b.get("usable_per_batch")
    failing = sorted(set(b.get("failing") or []))
    size = max(1, math.ceil(count / MAX_BINS))
    bins = math.ceil(count / size) if count else 0
    fails_in = [0] * bins
    for f in failing:
        if f < count:
            fails_in[f // size] += 1
    items, hover = [], []
    for i in range(bins):
        lo, hi = i * size, min(count, (i + 1) * size) - 1
        where = f"batch {lo}" if lo == hi else f"batches {lo}-{hi}"
        name = str(lo) if lo == hi else f"{lo}-{hi}"
        colour = COLOURS["rejected"] if fails_in[i] else COLOURS["usable"]
        fails = f"; {fails_in[i]} failing" if fails_in[i] else ""
        if per_batch is not None:
            chunk = per_batch[lo : hi + 1]
            least = min(chunk) if chunk else 0
            items.append((name, float(least), colour))
            hover.append(f"{where}: at least {least} usable targets{fails}")
        else:
            items.append((name, float(fails_in[i]), colour))
            hover.append(f"{where}: {fails_in[i]} failing")
    if per_batch is not None:
        caption = "usable targets per batch (failing batches in red)"
        y_title = "usable targets (least in bin)" if size > 1 else "usable targets"
    else:
        caption = f"failing batches ({b.get('count')} batches: too many to list each)"
        y_title = "failing batches"
    if size > 1:
        caption += f"; {count} batches in {bins} bins of {size}"
    if failing:  # every failing batch is drawn: the report holds them all, not the JSON's first
        caption += f"; {counted(len(failing), 'batches')} failing"
    marked = [n > 0 for n in fails_in]
    return _bars(
        "plot-batches",
        caption,
        items,
        x_title="batch",
        y_title=y_title,
        hover=hover,
        marked=marked,
    )


def _class_plot(report: Report) -> str:
    """Targets per class, named; past MAX_BINS classes, classes in bins of consecutive indices
    (the rarest class of each bin drawn, the bin's range and total on hover)."""
    classes = report.classes
    unit = "pixels" if classes and "images" in classes[0] else "targets"
    caption = f"usable {unit} per class"
    if len(classes) <= MAX_BINS:
        items = [
            (f"{k['index']} {k['name'] or ''}".strip(), float(k["count"]), COLOURS["bar"])
            for k in classes
        ]
        return _bars("plot-classes", caption, items, x_title="class", y_title=unit)
    size = math.ceil(len(classes) / MAX_BINS)
    items, hover = [], []
    for lo in range(0, len(classes), size):
        chunk = classes[lo : lo + size]
        least = min(chunk, key=lambda k: k["count"])
        total = sum(k["count"] for k in chunk)
        name = f"{chunk[0]['index']}-{chunk[-1]['index']}"
        colour = COLOURS["rejected"] if least["count"] == 0 else COLOURS["bar"]
        items.append((name, float(least["count"]), colour))
        shown = f" ({least['name']})" if least["name"] else ""
        hover.append(
            f"classes {name}: {total} {unit}; rarest {least['index']}{shown}: {least['count']}"
        )
    caption += f"; {len(classes)} classes in bins of {size}, the rarest of each drawn (red: a class never seen)"
    return _bars(
        "plot-classes",
        caption,
        items,
        x_title="class index",
        y_title=f"{unit} (rarest in bin)",
        hover=hover,
    )


def _boxes_per_image(report: Report) -> str:
    """A detection input's boxes per image (a bar per count, the last one that count or more),
    and per class the images holding it with their mean and largest count of its boxes."""
    counted = (report.input.get("annotations") or {}).get("boxes_per_image")
    if not counted:
        return ""
    bars = counted["histogram"]
    last = len(bars) - 1
    items = [
        (f"{n}+" if n == last and n >= 30 else str(n), float(v), COLOURS["bar"])
        for n, v in enumerate(bars)
    ]
    caption = f"boxes per image ({counted['images']} images)"
    plot = _bars("plot-boxes", caption, items, x_title="boxes in the image", y_title="images")
    names = {k["index"]: k.get("name") or "" for k in report.classes}
    rows = "".join(
        f"<tr><td>{_e(c['label'])}</td><td>{_e(names.get(c['label'], ''))}</td>"
        f"<td>{c['images']}</td><td>{c['mean']:g}</td><td>{c['most']}</td></tr>"
        for c in counted["classes"]
    )
    table = (
        "<table class=lg><tr><th>class</th><th>name</th><th>images holding it</th>"
        f"<th>its boxes per image (mean)</th><th>most</th></tr>{rows}</table>"
    )
    return plot + (table if rows else "")


def _batch(e: Example) -> str:
    if e.row < 0:  # a record that is no row (a folder, a malformed line)
        return ""
    return "dropped" if e.batch is None else str(e.batch)


def render_html(report: Report) -> str:
    """The report as one HTML page with its plots."""
    c = report.counts
    title = "labelgate diff" if report.diff is not None else "labelgate validate"
    status = report.status
    base = base_paths(report)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">",
        f"<title>{_e(title)}: {_e(status)}</title><style>{STYLE}</style></head><body>",
        f'<h1>{_e(title)}: <span class="{_e(status)}">{_e(verdict(report))}</span></h1>',
        "<p>Input: "
        + ", ".join(f"<code>{_e(f['path'])}</code>" for f in report.input["files"][:10])
        + ("" if base is None else f" against base <code>{_e(base)}</code>")
        + "</p>",
        f"<p>rows {c['rows']} = usable {c['usable']} + ignored {c['ignored']} + rejected {c['rejected']}; "
        f"K={_e(report.contract.get('num_classes'))}, ignore_index={_e(report.contract.get('ignore_index'))}, "
        f"{_e(report.batches['count'])} batches of {_e(report.batches['size'])}"
        f"{' ' + _e(report.batches['unit']) if report.batches.get('unit') else ''}</p>",
    ]
    lines = framework_lines(report)
    if lines:
        parts.append("<h2>Each framework's reading</h2><ul>")
        parts += [f"<li>{_e(line)}</li>" for line in lines]
        parts.append("</ul>")
    if report.findings:
        parts.append(
            "<h2>Findings</h2><table class=lg><tr><th>code</th><th>severity</th><th>count</th><th>finding</th><th>fix</th></tr>"
        )
        for f in report.findings:
            parts.append(
                f'<tr><td>{_e(f.code)}</td><td class="{_e(f.severity)}">{_e(f.severity)}</td>'
                f'<td>{_e(counted(f.count, f.unit))}</td><td>{_prose(f.message)}</td><td class="fix">{_prose(f.fix)}</td></tr>'
            )
        parts.append("</table>")
        pictures, note = pictures_html(report)
        for at, f in enumerate(report.findings):
            if not f.examples:
                continue
            parts.append(
                f"<h3>{_e(f.code)}: first rows</h3><table class=lg><tr><th>row</th><th>id</th><th>batch</th><th>source</th><th>value</th></tr>"
            )
            parts += [
                f"<tr><td>{'' if e.row < 0 else e.row}</td><td>{_blank(e.id)}</td><td>{_batch(e)}</td>"
                f"<td>{_blank(e.source)}</td><td>{_e(example_value(e))}</td></tr>"
                for e in f.examples[:20]
            ]
            parts.append("</table>")
            parts.append(pictures.get(at, ""))
        parts.append(note)
    parts.append("<h2>Plots</h2>")
    parts.append(_class_plot(report))
    sources = [(str(s["source"]), float(s["rows"]), COLOURS["bar"]) for s in report.sources]
    parts.append(
        _bars(
            "plot-sources",
            "rows per source",
            sources[:MAX_BINS],
            x_title="source"
            + (f" (first {MAX_BINS} of {len(sources)})" if len(sources) > MAX_BINS else ""),
            y_title="rows",
        )
    )
    parts.append(_batch_plot(report))
    parts.append(_boxes_per_image(report))
    parts.append(box_sizes_html(report))
    parts.append(
        _stack(
            "plot-share",
            "usable, ignored and rejected rows",
            [("usable", c["usable"]), ("ignored", c["ignored"]), ("rejected", c["rejected"])],
        )
    )
    if report.classes:
        parts.append(
            "<h2>Classes</h2><table class=lg><tr><th>index</th><th>name</th><th>count</th><th>share</th></tr>"
        )
        parts += [
            f"<tr><td>{k['index']}</td><td>{_e(k['name'] or '')}</td><td>{k['count']}</td><td>{k['share']:.1%}</td></tr>"
            for k in report.classes[:2000]
        ]
        parts.append("</table>")
        omitted = omitted_classes(report)
        if omitted:  # K past 65,536: the classes with no target are counted, not listed
            parts.append(f"<p>{_e(omitted)}</p>")
    if len(report.sources) > 1:
        parts.append(
            "<h2>Sources</h2><table class=lg><tr><th>source</th><th>rows</th><th>usable</th><th>ignored</th><th>rejected</th></tr>"
        )
        parts += [
            f"<tr><td>{_e(s['source'])}</td><td>{s['rows']}</td><td>{s['usable']}</td><td>{s['ignored']}</td><td>{s['rejected']}</td></tr>"
            for s in report.sources
        ]
        parts.append("</table>")
    env = report.environment
    parts.append(
        f"<p><small>labelgate {_e(env.get('labelgate'))}, Python {_e(env.get('python'))}, pyarrow {_e(env.get('pyarrow'))}</small></p>"
    )
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
