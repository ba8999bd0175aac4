"""Pieces the renderers share: the check titles a report is judged on, and a one-line verdict."""

from __future__ import annotations

from labelgate.catalog import SCOPES, codes_in, entry
from labelgate.report import Report

__all__ = ["check_titles", "verdict"]


def check_titles(report: Report) -> dict[str, str]:
    """Code -> title of every check the report was judged on (the diff's checks for a diff)."""
    scopes = [s for s in SCOPES if s != "diff" or report.diff is not None]
    return {code: entry(code).title for code in codes_in(*scopes)}


def verdict(report: Report) -> str:
    """``PASS`` or ``FAIL`` with the error and warning counts."""
    errors = sum(f.severity == "error" for f in report.findings)
    warnings = sum(f.severity == "warning" for f in report.findings)
    strict = " (strict: warnings fail)" if report.strict else ""
    return f"{report.status.upper()}: {errors} error(s), {warnings} warning(s){strict}"
