"""The report formats, and ``render``: a Report in one of them, each renderer imported when its
format is asked."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from labelgate.render.common import displayed

if TYPE_CHECKING:
    from labelgate.core.report import Report

__all__ = ["FORMATS", "render"]

FORMATS = ("text", "json", "junit", "github", "markdown", "pr-comment", "html")


def render(
    report: Report, fmt: str, *, color: bool = False, width: int = 100, link: str | None = None
) -> str:
    """Render ``report`` in ``fmt`` (one of ``FORMATS``); ``link``: where the full report is,
    for ``pr-comment``."""
    renderer: Callable[[Report], str]
    if fmt != "json":  # JSON escapes control characters itself; every human format gets them shown
        report = displayed(report)
    if fmt == "text":
        from labelgate.render.text import render_text

        return render_text(report, color=color, width=width)
    if fmt == "pr-comment":
        from labelgate.render.prcomment import render_pr_comment

        return render_pr_comment(report, link=link)
    if fmt == "json":
        from labelgate.render.json import render_json as renderer
    elif fmt == "junit":
        from labelgate.render.junit import render_junit as renderer
    elif fmt == "github":
        from labelgate.render.github import render_github as renderer
    elif fmt == "markdown":
        from labelgate.render.markdown import render_markdown as renderer
    elif fmt == "html":
        from labelgate.render.html import render_html as renderer
    else:
        raise ValueError(f"unknown format {fmt!r}")
    return renderer(report)
