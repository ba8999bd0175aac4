"""Renderers: pure functions from a Report to text."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from labelgate.report import Report

__all__ = ["FORMATS", "render"]

FORMATS = ("text", "json")


def render(report: Report, fmt: str, *, color: bool = False, width: int = 100) -> str:
    """Render ``report`` in ``fmt`` (one of :data:`FORMATS`)."""
    renderer: Callable[..., str]
    if fmt == "json":
        from labelgate.render.json import render_json as renderer
    elif fmt == "text":
        from labelgate.render.text import render_text as renderer

        return renderer(report, color=color, width=width)
    else:
        raise ValueError(f"unknown format {fmt!r}")
    return renderer(report)
