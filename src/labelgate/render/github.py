"""GitHub Actions workflow commands: one annotation per finding, titled by its code."""

from __future__ import annotations

from labelgate.core.report import Report
from labelgate.render.common import base_paths, verdict

__all__ = ["render_github"]

LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def _data(text: str) -> str:
    """Escape a command's message (GitHub's rules: %, CR and LF)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    """Escape a command's property value (also : and ,)."""
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(report: Report) -> str:
    """``::error title=LG004,file=...::message`` lines, then the verdict as a notice."""
    file = report.input["files"][0]["path"] if report.input.get("files") else ""
    lines = []
    for f in report.findings:
        level = LEVEL[f.severity]
        if f.severity == "warning" and report.strict:
            level = "error"
        message = f"{f.message}" + (f" Fix: {f.fix}" if f.fix else "")
        lines.append(
            f"::{level} file={_property(file)},title={_property(f.code)}::{_data(message)}"
        )
    base = base_paths(report)
    against = "" if base is None else f" ({file} against base {base})"
    lines.append(f"::notice title=labelgate::{_data(verdict(report) + against)}")
    return "\n".join(lines) + "\n"
