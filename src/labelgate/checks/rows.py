"""Checks on rows as a whole: duplicate ids and the expected row count."""

from __future__ import annotations

from labelgate.checks.context import Context
from labelgate.checks.registry import check
from labelgate.core.findings import finding, plural
from labelgate.core.report import Finding


@check("LG014")
def duplicate_ids(ctx: Context) -> list[Finding]:
    dup = ctx.duplicates
    if dup is None or dup.rows == 0:
        return []
    return [
        finding(
            "LG014",
            count=dup.rows,
            unit="rows",
            message=(
                f"{plural(dup.rows, 'row')} {'repeats' if dup.rows == 1 else 'repeat'} an id "
                "already seen"
                + (" in their file" if dup.per_file else "")
                + f" ({plural(dup.distinct, 'id')} "
                + ("occurs" if dup.distinct == 1 else "occur")
                + " more than once): a duplicated shard or a join "
                "that fanned out"
            ),
            fix="Deduplicate by id, or check the export that wrote these rows twice.",
            examples=dup.examples,
        )
    ]


@check("LG017")
def expected_rows(ctx: Context) -> list[Finding]:
    expected = ctx.contract.expected_rows
    rows = ctx.scan.rows
    if expected is None or expected == rows:
        return []
    how = "fewer (a truncated export?)" if rows < expected else "more (a duplicated shard?)"
    return [
        finding(
            "LG017",
            count=abs(rows - expected),
            unit="rows",
            message=f"{rows} rows read, the contract expects {expected}: {abs(rows - expected)} {how}",
            fix="Find the missing or extra rows before training; update expected_rows if the dataset changed on purpose.",
        )
    ]


@check("LG019")
def pandera_section(ctx: Context) -> list[Finding]:
    section = ctx.section
    if section is None:
        return []
    if section["missing"]:
        return [
            finding(
                "LG019",
                count=len(section["missing"]),
                unit="columns",
                message=f"columns the contract's pandera section defines are missing: {', '.join(section['missing'])}",
                fix="Add the columns, or take them out of the contract's pandera section.",
            )
        ]
    if not section["rows"] and not section["by_check"]:
        return []
    listed = "; ".join(f"{k} x{n}" for k, n in sorted(section["by_check"].items())[:8])
    return [
        finding(
            "LG019",
            count=section["rows"],
            unit="rows",
            message=f"{section['rows']} rows fail the contract's pandera section: {listed}",
            fix="These columns are not labels but the contract covers them: fix them where the file is made.",
            examples=tuple(section["examples"]),
            details={"failures": section["by_check"]},
        )
    ]
