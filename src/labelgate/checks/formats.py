"""Checks on what an annotation-format reader found: boxes, class tables, records, class folders.

The reader (``labelgate.readers``) knows its format's words; it counts the failing records and
keeps the first few (by file and line, or by annotation id) in
``labelgate.core.annotations.AnnotationFacts``. These checks turn them into findings.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from labelgate.checks.context import Context
from labelgate.checks.registry import check
from labelgate.core.catalog import codes_raised_by
from labelgate.core.codes import Code
from labelgate.core.findings import finding
from labelgate.core.report import Example, Finding

__all__ = ["FORMAT_CODES", "format_finding"]


def format_finding(ctx: Context, code: Code) -> list[Finding]:
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
        finding(
            code,
            count=h.count,
            unit=h.unit,
            message=h.message,
            fix=h.fix,
            examples=tuple(placed(e) for e in h.examples),
            details=dict(h.details),
            severity=h.severity,
        )
    ]


# Each reader words its own findings (AnnotationFacts.hit); one function reports them all: the
# codes the catalog says readers raise.
FORMAT_CODES = codes_raised_by("reader")
for _code in FORMAT_CODES:
    check(_code)(partial(format_finding, code=_code))
