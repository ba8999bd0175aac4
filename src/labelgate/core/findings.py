"""Findings as the catalog defines them: built with the code's severity, and the contract's
severity overrides applied, in one place each."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from labelgate.core.catalog import SEVERITIES, entry, known
from labelgate.core.codes import Code
from labelgate.core.report import SEVERITY_ORDER, Example, Finding

__all__ = ["apply_severity", "finding", "join_values", "plural"]


def finding(
    code: Code,
    *,
    count: int,
    message: str,
    fix: str = "",
    severity: str | None = None,
    unit: str = "rows",
    examples: tuple[Example, ...] = (),
    batches: tuple[int, ...] = (),
    details: dict[str, Any] | None = None,
) -> Finding:
    """A finding of ``code``, its severity the catalog's unless the evidence says another.

    Raises:
        ValueError: the code is not in the catalog, or the severity is not one.
    """
    if not known(code):
        raise ValueError(f"{code!r} is not a check code of the catalog")
    level = entry(code).severity if severity is None else severity
    if level not in SEVERITIES[:3]:
        raise ValueError(f"a finding's severity is error, warning or info, got {level!r}")
    return Finding(
        code=code,
        severity=level,
        count=count,
        message=message,
        fix=fix,
        unit=unit,
        examples=examples,
        batches=batches,
        details={} if details is None else details,
    )


def apply_severity(findings: Iterable[Finding], overrides: Mapping[str, str]) -> list[Finding]:
    """Apply the contract's severity overrides (``off`` drops a finding); errors first, then
    warnings, then info, each in code order. Every command's findings pass through here."""
    out: list[Finding] = []
    for f in findings:
        level = overrides.get(f.code, f.severity)
        if level == "off":
            continue
        out.append(f if level == f.severity else replace(f, severity=level))
    out.sort(key=lambda f: (SEVERITY_ORDER[f.severity], f.code))
    return out


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 label``, ``2 labels``; ``many`` where adding an s is wrong (``batches``)."""
    return f"{count} {word}" if count == 1 else f"{count} {many or word + 's'}"


def join_values(values: list[Any], limit: int = 10, *, total: int | None = None) -> str:
    """``1, 2, 3 and 7 more``: the first ``limit`` values, and how many more of ``total``
    (default: the list's length) there are."""
    total = len(values) if total is None else total
    shown = ", ".join(str(v) for v in values[:limit])
    return shown + (f" and {total - limit} more" if total > limit else "")
