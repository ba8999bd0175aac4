"""One self-contained HTML page: verdict, findings, tables and plots drawn as inline SVG.

Everything is inline (no script, no stylesheet or font from the network), and every string that
comes from the data (class names, ids, sources, values, paths) is escaped.
"""

from __future__ import annotations

from html import escape

from labelgate.render.common import example_value, verdict
from labelgate.report import Report

__all__ = ["render_html"]

COLOURS = {"usable": "#2b8a3e", "ignored": "#adb5bd", "rejected": "#c92a2a", "bar": "#1c7ed6"}
STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:70em;color:#212529}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #dee2e6;padding:.2em .6em;text-align:left}
.error{color:#c92a2a}.warning{color:#e67700}.info{color:#1864ab}.pass{color:#2b8a3e}.fail{color:#c92a2a}
figure{margin:1em 0}figcaption{font-weight:600}code{background:#f1f3f5;padding:0 .2em}
"""


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _bars(
    plot_id: str, caption: str, items: list[tuple[str, float, str]], *, width: int = 900
) -> str:
    """A vertical bar chart: (label, value, colour) per bar, labels in <title> for hover."""
    height, top, bottom = 180, 10, 20
    peak = max((v for _, v, _ in items), default=0) or 1
    step = width / max(len(items), 1)
    bars = []
    for i, (label, value, colour) in enumerate(items):
        h = (height - top - bottom) * value / peak
        x, y = i * step, height - bottom - h
        bars.append(
            f'<rect x="{x:.2f}" y="{y:.2f}" width="{max(step - 1, 0.5):.2f}" height="{h:.2f}" fill="{colour}">'
            f"<title>{_e(label)}: {value:g}</title></rect>"
        )
    axis = f'<line x1="0" y1="{height - bottom}" x2="{width}" y2="{height - bottom}" stroke="#868e96"/>'
    note = f'<text x="0" y="{height - 4}" font-size="11">{len(items)} bars; max {peak:g}</text>'
    return (
        f'<figure><figcaption>{_e(caption)}</figcaption><svg id="{plot_id}" class="plot" role="img" '
        f'xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}">'
        f"{''.join(bars)}{axis}{note}</svg></figure>"
    )


def _stack(plot_id: str, caption: str, parts: list[tuple[str, int]], *, width: int = 900) -> str:
    """One horizontal bar split into parts (usable, ignored, rejected)."""
    total = sum(n for _, n in parts) or 1
    x, rects = 0.0, []
    for name, n in parts:
        w = width * n / total
        rects.append(
            f'<rect x="{x:.2f}" y="0" width="{w:.2f}" height="28" fill="{COLOURS[name]}">'
            f"<title>{_e(name)}: {n} ({n / total:.1%})</title></rect>"
        )
        x += w
    legend = " · ".join(f"{_e(name)} {n} ({n / total:.1%})" for name, n in parts)
    return (
        f'<figure><figcaption>{_e(caption)}</figcaption><svg id="{plot_id}" class="plot" role="img" '
        f'xmlns="http://www.w3.org/2000/svg" width="{width}" height="28" viewBox="0 0 {width} 28">'
        f"{''.join(rects)}</svg><div>{legend}</div></figure>"
    )


def _batch_plot(report: Report) -> str:
    per_batch = report.batches.get("usable_per_batch") or []
    failing = set(report.batches.get("failing") or [])
    items = [
        (
            f"batch {i}" + (" (fails)" if i in failing else ""),
            float(n),
            COLOURS["rejected"] if i in failing else COLOURS["usable"],
        )
        for i, n in enumerate(per_batch[:3000])
    ]
    caption = "usable targets per batch (failing batches in red)"
    if len(per_batch) > 3000 or not per_batch:
        caption += f"; {report.batches['count']} batches, plotted up to 3000"
    return _bars("plot-batches", caption, items)


def render_html(report: Report) -> str:
    """The report as one HTML page with its plots."""
    c = report.counts
    title = "labelgate diff" if report.diff is not None else "labelgate validate"
    status = report.status
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">",
        f"<title>{_e(title)}: {_e(status)}</title><style>{STYLE}</style></head><body>",
        f'<h1>{_e(title)}: <span class="{_e(status)}">{_e(verdict(report))}</span></h1>',
        "<p>Input: "
        + ", ".join(f"<code>{_e(f['path'])}</code>" for f in report.input["files"][:10])
        + "</p>",
        f"<p>rows {c['rows']} = usable {c['usable']} + ignored {c['ignored']} + rejected {c['rejected']}; "
        f"K={_e(report.contract.get('num_classes'))}, ignore_index={_e(report.contract.get('ignore_index'))}, "
        f"{_e(report.batches['count'])} batches of {_e(report.batches['size'])}</p>",
    ]
    if report.findings:
        parts.append(
            "<h2>Findings</h2><table><tr><th>code</th><th>severity</th><th>count</th><th>finding</th><th>fix</th></tr>"
        )
        for f in report.findings:
            parts.append(
                f'<tr><td>{_e(f.code)}</td><td class="{_e(f.severity)}">{_e(f.severity)}</td>'
                f"<td>{f.count} {_e(f.unit)}</td><td>{_e(f.message)}</td><td>{_e(f.fix)}</td></tr>"
            )
        parts.append("</table>")
        for f in report.findings:
            if not f.examples:
                continue
            parts.append(
                f"<h3>{_e(f.code)}: first rows</h3><table><tr><th>row</th><th>id</th><th>batch</th><th>source</th><th>value</th></tr>"
            )
            parts += [
                f"<tr><td>{e.row}</td><td>{_e(e.id)}</td><td>{_e(e.batch)}</td><td>{_e(e.source)}</td><td>{_e(example_value(e))}</td></tr>"
                for e in f.examples[:20]
            ]
            parts.append("</table>")
    parts.append("<h2>Plots</h2>")
    classes = [
        (f"{k['index']} {k['name'] or ''}".strip(), float(k["count"]), COLOURS["bar"])
        for k in report.classes[:2000]
    ]
    parts.append(_bars("plot-classes", "labels per class (usable targets)", classes))
    sources = [(str(s["source"]), float(s["rows"]), COLOURS["bar"]) for s in report.sources]
    parts.append(_bars("plot-sources", "rows per source", sources))
    parts.append(_batch_plot(report))
    parts.append(
        _stack(
            "plot-share",
            "usable, ignored and rejected rows",
            [("usable", c["usable"]), ("ignored", c["ignored"]), ("rejected", c["rejected"])],
        )
    )
    if report.classes:
        parts.append(
            "<h2>Classes</h2><table><tr><th>index</th><th>name</th><th>count</th><th>share</th></tr>"
        )
        parts += [
            f"<tr><td>{k['index']}</td><td>{_e(k['name'] or '')}</td><td>{k['count']}</td><td>{k['share']:.1%}</td></tr>"
            for k in report.classes[:2000]
        ]
        parts.append("</table>")
    if len(report.sources) > 1:
        parts.append(
            "<h2>Sources</h2><table><tr><th>source</th><th>rows</th><th>usable</th><th>ignored</th><th>rejected</th></tr>"
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
