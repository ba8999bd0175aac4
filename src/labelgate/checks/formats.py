"""Checks on what an annotation-format reader found: boxes, class tables, records, class folders.

The reader (``labelgate.formats``) knows its format's words; it counts the failing records and
keeps the first few (by file and line, or by annotation id) in
``labelgate.annotations.AnnotationFacts``. These checks turn them into findings.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from labelgate.catalog import entry
from labelgate.checks.context import Context
from labelgate.checks.registry import check
from labelgate.report import Example, Finding

__all__ = ["FORMAT_CODES", "format_finding"]


def format_finding(ctx: Context, code: str) -> list[Finding]:
    """The finding of ``code`` from the reader's hits, if it counted any."""
    facts = ctx.annotations
    if facts is None or code not in facts.hits:
        return []
    h = facts.hits[code]
    plan, rows = ctx.scan.plan, ctx.scan.rows
    kept = plan.kept_batches(rows)

    def placed(e: Example) -> Example:
        """A row's batch, as for every row-level finding; a record that is no row has none."""
        if e.row < 0 or e.row >= rows:
            return e
        batch = int(plan.batch_of(e.row, 1)[0])
        return replace(e, batch=batch if batch < kept else None)

    return [
        Finding(
            code=code,
            severity=entry(code).severity,
            count=h.count,
            unit=h.unit,
            message=h.message,
            fix=h.fix,
            examples=tuple(placed(e) for e in h.examples),
            details=dict(h.details),
        )
    ]


# Each reader words its own findings (AnnotationFacts.hit); one function reports them all.
FORMAT_CODES = (
    "LG027",
    "LG028",
    "LG029",
    "LG030",
    "LG031",
    "LG032",
    "LG033",
    "LG036",
    "LG037",
    "LG038",
    "LG039",
)
for _code in FORMAT_CODES:
    check(_code)(partial(format_finding, code=_code))
