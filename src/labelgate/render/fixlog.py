"""The fix log for people (text) and machines (JSON)."""

from __future__ import annotations

import json

from labelgate.fix import FixResult

__all__ = ["render_fix"]


def render_fix(result: FixResult, fmt: str) -> str:
    """``result`` as ``text`` or ``json``."""
    if fmt == "json":
        return json.dumps(result.to_dict(), indent=2) + "\n"
    lines = [
        f"rows in {result.rows_in} = fixed {result.rows_fixed} + quarantined {result.rows_quarantined}",
        f"fixed file: {result.output}",
    ]
    if result.quarantine:
        lines.append(f"quarantine: {result.quarantine}")
    for s in result.sources:
        lines.append(f"source {s.name!r} ({s.rows} rows): {s.action}; {s.changed} labels changed")
    for mapping, count in result.value_maps.items():
        lines.append(f"value map {mapping}: {count} targets")
    for code, count in result.quarantined.items():
        lines.append(f"quarantined {count} rows for {code}")
    if result.after is not None:
        remaining = [
            f"{f.code} {f.severity}" for f in result.after.findings if f.severity != "info"
        ]
        verdict = "passes" if not result.after.failed else "still fails"
        lines.append(
            f"labelgate validate {result.output}: {verdict}"
            + (f" ({', '.join(remaining)})" if remaining else "")
        )
    return "\n".join(lines) + "\n"
