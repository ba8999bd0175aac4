"""The versioned JSON report (its fields are documented in docs/report.md)."""

from __future__ import annotations

import json

from labelgate.core.report import Report, json_default

__all__ = ["render_json"]


def render_json(report: Report) -> str:
    """The report as JSON text, keys in a stable order."""
    return json.dumps(report.to_dict(), indent=2, ensure_ascii=False, default=json_default) + "\n"
