"""The HTML report's box sizes per class: a table of the quantiles of width, height and aspect
(``input.annotations.box_sizes``), and for the classes with the most boxes a small inline SVG
histogram of each, eight log-spaced bins to a decade. Bounded: the report's own caps (200
classes listed, 12 drawn)."""

from __future__ import annotations

from html import escape
from typing import Any

from labelgate.core.report import Report

__all__ = ["box_sizes_html"]

_DIMS = ("width", "height", "aspect")
_W, _H = 150, 36  # one histogram, in pixels


def box_sizes_html(report: Report) -> str:
    """The section, or "" where the input measured no box."""
    sizes = (report.input.get("annotations") or {}).get("box_sizes")
    if not sizes or not sizes["classes"]:
        return ""
    names = {k["index"]: k.get("name") or "" for k in report.classes}
    drawn = {h["label"]: h for h in sizes["histograms"]}
    head = "".join(f"<th>{d} (min, median, max)</th>" for d in _DIMS)
    rows = []
    for c in sizes["classes"]:
        cells = "".join(f"<td>{_spread(c[d])}{_svg(drawn.get(c['label']), d)}</td>" for d in _DIMS)
        rows.append(
            f"<tr><td>{escape(str(c['label']))}</td><td>{escape(names.get(c['label'], ''))}</td>"
            f"<td>{c['boxes']}</td>{cells}</tr>"
        )
    unmeasured = f"; {sizes['unmeasured']} boxes of further classes" if sizes["unmeasured"] else ""
    caption = (
        f"<p>box sizes per class ({sizes['boxes']} boxes, in {escape(sizes['unit'])}; aspect = "
        f"width / height; {sizes['unsized']} without a positive size{unmeasured}; quantiles "
        f"exact up to 512 boxes a class, else within 7.5%)</p>"
    )
    return (
        caption
        + f"<table class=lg><tr><th>class</th><th>name</th><th>boxes</th>{head}</tr>"
        + "".join(rows)
        + "</table>"
    )


def _spread(q: dict[str, float] | None) -> str:
    if q is None:
        return "-"
    return f"{q['min']:g}, {q['median']:g}, {q['max']:g}<br>"


def _svg(histogram: dict[str, Any] | None, dim: str) -> str:
    """A histogram of one dimension (bars on a log scale of the value), or ""."""
    if histogram is None:
        return ""
    counts = histogram[dim]["counts"]
    most = max(counts) or 1
    bar = _W / max(len(counts), 8)
    rects = "".join(
        f'<rect x="{i * bar:.1f}" y="{_H - n / most * _H:.1f}" width="{max(bar - 1, 1):.1f}" '
        f'height="{n / most * _H:.1f}" fill="#4c78a8"><title>{n}</title></rect>'
        for i, n in enumerate(counts)
    )
    label = f"{dim} histogram from {histogram[dim]['from']:g}, 8 bins a decade"
    return (
        f'<svg class="sizes" width="{_W}" height="{_H}" viewBox="0 0 {_W} {_H}" role="img" '
        f'aria-label="{escape(label)}">{rects}</svg>'
    )
