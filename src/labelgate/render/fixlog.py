"""The fix log for people (text) and machines (JSON)."""

from __future__ import annotations

import json

from labelgate.commands.fix import FixResult
from labelgate.render.hints import command_line

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
        held = (
            f"{result.rows_quarantined} rows"
            if result.rows_quarantined
            else "empty: no row needed it"
        )
        lines.append(f"quarantine: {result.quarantine} ({held})")
    if result.remap_table:
        lines.append(f"remap table: {result.remap_table}")
    if result.class_map:
        lines.append(f"class map: {result.class_map}")
    for s in result.sources:
        if s.action == "unchanged":  # the value maps above or below may still change its labels
            lines.append(f"source {s.name!r} ({s.rows} rows): no shift or remap of its own")
        else:
            lines.append(
                f"source {s.name!r} ({s.rows} rows): {s.action}; {s.changed} labels changed"
            )
    for mapping, count in result.value_maps.items():
        lines.append(f"value map {mapping}: {count} targets")
    for code, count in result.quarantined.items():
        lines.append(f"quarantined {count} rows for {code}")
    for s in result.sources:
        if s.pending:
            lines.append(
                f"not settled: source {s.name!r} still looks 1-based (LG011); pass {s.pending} "
                "if it is, or set LG011 to off in the contract if it is not"
            )
    if result.after is not None:
        remaining = [
            f"{f.code} {f.severity}" for f in result.after.findings if f.severity != "info"
        ]
        verdict = "passes" if not result.after.failed else "still fails"
        read_as: str | None = (result.after.input.get("annotations") or {}).get("format")
        command = command_line("validate", [result.output], result.after.contract, read_as)
        lines.append(f"{command}: {verdict}" + (f" ({', '.join(remaining)})" if remaining else ""))
    return "\n".join(lines) + "\n"
