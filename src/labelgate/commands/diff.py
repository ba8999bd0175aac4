"""labelgate diff: validate the head revision of a dataset and compare it with the base."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from labelgate.checks.context import Context, join_values
from labelgate.commands.diffrows import row_changes
from labelgate.commands.diffvalues import ClassNames, class_names, same_maps
from labelgate.contract import Contract
from labelgate.contract.classmap import normalise_name
from labelgate.core.catalog import codes_in, entry
from labelgate.core.findings import apply_severity, finding
from labelgate.core.report import Finding, Report
from labelgate.errors import LabelgateError
from labelgate.run.changed import file_pairing, narrowed, with_pairing
from labelgate.run.validation import Validation, run

SHOWN_CHANGES = 1000  # relabelled rows listed in LG025's details; the count is complete

__all__ = ["DIFF_CODES", "diff"]

DIFF_CODES = {code: entry(code).title for code in codes_in("diff")}


def _named_as_base(contract: Contract, base_run: Any, head: list[str]) -> Contract:
    """HEAD's contract with BASE's name column, where BASE's content showed one and HEAD's
    tables hold that column too: a head that relabels many rows (its names no longer follow
    its labels on nearly all of them) is judged by the column BASE shows to be the names, so
    each row whose name now disagrees is LG010 by id."""
    columns = base_run.dataset.columns
    found = columns.name
    if contract.name_column is not None or found is None or columns.how.get("name") == "given":
        return contract
    if base_run.context.annotations is not None:
        return contract  # an annotation reader's rows: their names are its own
    from labelgate.inputs.dataset import read_schemas
    from labelgate.io.sources import resolve_inputs

    try:
        schemas = read_schemas(resolve_inputs(head))
    except LabelgateError:
        return contract  # HEAD's own run says what is wrong with it
    if not schemas or not all(found in s.schema.names for s in schemas):
        return contract
    return replace(contract, name_column=found)


def diff(
    base: list[str],
    head: list[str],
    base_contract: Contract,
    head_contract: Contract,
    *,
    threshold: float = 0.05,
    max_examples: int = 20,
    strict: bool = False,
    cache: str | None = None,
) -> Report:
    """Validate ``head`` fully, and compare it with ``base``.

    Args:
        cache: a folder keeping each Parquet file's partial result (``labelgate.run.cache``):
            both revisions read only the files it lacks, and the files are paired by content,
            then by name, so that rows are compared by id in the files that changed only.

    Returns:
        The head's report, with the comparison's findings (LG020-LG025) added and a ``diff``
        section: the class maps, label values, per-class and per-source shares, and row changes
        by id.
    """
    head_run = run(head, head_contract, max_examples=max_examples, strict=strict, cache=cache)
    base_run = run(base, base_contract, max_examples=max_examples, cache=cache)
    given = head_contract.name_column
    if given is None and head_run.dataset.columns.name is None:
        named = _named_as_base(head_contract, base_run, head)
        if named.name_column is not None:  # HEAD read again, by BASE's name column
            head_run.close()
            head_contract = named
            try:
                head_run = run(head, named, max_examples=max_examples, strict=strict, cache=cache)
            except BaseException:
                base_run.close()
                raise
    with head_run, base_run:
        head_report, head_ctx = head_run.report, head_run.context
        if given is None and head_contract.name_column is not None:
            said = f"name column {head_contract.name_column!r}: given"
            notes = tuple(
                f"name column {head_contract.name_column!r}: BASE's, found there by its content "
                "(a text column that follows the label), and read in HEAD as the names"
                if n == said
                else n
                for n in head_report.notes
            )
            head_report = replace(head_report, notes=notes)
        base_report, base_ctx = base_run.report, base_run.context
        found: list[Finding] = []
        base_names, head_names = same_maps(class_names(base_ctx), class_names(head_ctx))
        base_map, head_map = base_names.names, head_names.names
        found += _class_map_changes(
            base_names, head_names, base_ctx.contract.version, head_ctx.contract.version
        )
        base_values, head_values = _values(base_ctx), _values(head_ctx)
        new_values = sorted(set(head_values) - set(base_values))
        if new_values:
            found.append(
                finding(
                    "LG021",
                    count=sum(head_values[v] for v in new_values),
                    unit="rows",
                    message=f"label values new in head, unknown to base: {join_values(new_values)}",
                    fix="A new label value needs a class (and a model head that knows it), or it is a mistake.",
                    details={"values": {str(v): head_values[v] for v in new_values[:100]}},
                )
            )
        gone = sorted(v for v in base_values if v not in head_values and 0 <= v < head_ctx.k)
        if gone:
            found.append(
                finding(
                    "LG022",
                    count=len(gone),
                    unit="classes",
                    message=f"classes present in base are gone from head: {join_values(gone)}",
                    fix="Check whether rows of these classes were dropped on purpose.",
                    details={"classes": gone[:1000]},
                )
            )
        shares = _shifts(base_ctx, head_ctx, threshold)
        if shares:
            found.append(
                finding(
                    "LG023",
                    count=len(shares),
                    unit="shares",
                    message=f"shares moved by more than {threshold:.0%}: "
                    + "; ".join(
                        f"{s['what']} {s['key']!s} {s['base']:.1%} -> {s['head']:.1%}"
                        for s in shares[:8]
                    ),
                    fix="A large shift in a class's or a source's share changes what the model learns; confirm it is intended.",
                    details={"shifts": shares},
                )
            )
        pairing = file_pairing(base_run, head_run, base, head)
        rows = _rows_by_id(*narrowed(base_run, head_run, pairing))
        found += rows.pop("findings")
        # The head's findings had the overrides applied already; the comparison's get them here.
        findings = apply_severity([*head_report.findings, *found], head_ctx.contract.severity)
        summary = {
            "base": {
                "input": base_report.input,
                "counts": base_report.counts,
                "status": base_report.status,
            },
            "class_map": {
                "base": {str(k): v for k, v in sorted(base_map.items())},
                "head": {str(k): v for k, v in sorted(head_map.items())},
            },
            "label_values": {
                "base": {str(k): v for k, v in sorted(base_values.items())},
                "head": {str(k): v for k, v in sorted(head_values.items())},
            },
            "share_threshold": threshold,
            "rows": rows,
        }
        report = replace(head_report, findings=tuple(findings), diff=summary)
        return with_pairing(report, base_report, pairing)


def _class_map_changes(
    base_names: ClassNames,
    head_names: ClassNames,
    base_version: str | None,
    head_version: str | None,
) -> list[Finding]:
    """LG020 for a change of the map itself. An index one side lacks is added or dropped only
    where that side's map is declared: a map read from the data lacks the classes it has no
    (named) row of, which is LG022's to say, not a change of the map."""
    base, head = base_names.names, head_names.names
    base_index = {normalise_name(n): i for i, n in base.items()}
    renamed, reordered, added, dropped = [], [], [], []
    for i in sorted(set(base) | set(head)):
        b, h = base.get(i), head.get(i)
        if b is not None and h is not None and normalise_name(b) != normalise_name(h):
            moved_from = base_index.get(normalise_name(h))
            if moved_from is not None:
                reordered.append(f"{h!r} {moved_from} -> {i}")
            else:
                renamed.append(f"{i}: {b!r} -> {h!r}")
        elif b is None and h is not None and base_names.declared:
            added.append(f"{i}: {h!r}")
        elif h is None and b is not None and head_names.declared:
            dropped.append(f"{i}: {b!r}")
    out = []
    remap = renamed + reordered
    if remap:
        bumped = (
            base_version is not None and head_version is not None and base_version != head_version
        )
        parts = ([f"renamed {join_values(renamed, 5)}"] if renamed else []) + (
            [f"reordered {join_values(reordered, 5)}"] if reordered else []
        )
        out.append(
            finding(
                "LG020",
                severity="info" if bumped else "error",
                count=len(remap),
                unit="classes",
                message="the class map changed: "
                + "; ".join(parts)
                + (f" (contract version {base_version} -> {head_version})" if bumped else ""),
                fix=(
                    "A renamed or reordered class silently remaps every label of that index. If it is "
                    "intended, bump the contract's version (and re-pin); otherwise restore the map."
                ),
                details={"renamed": renamed, "reordered": reordered},
            )
        )
    if added or dropped:
        out.append(
            finding(
                "LG020",
                severity="warning",
                count=len(added) + len(dropped),
                unit="classes",
                message="classes "
                + "; ".join(
                    ([f"added {join_values(added, 5)}"] if added else [])
                    + ([f"dropped {join_values(dropped, 5)}"] if dropped else [])
                ),
                fix="The model head's size must follow the class count.",
                details={"added": added, "dropped": dropped},
            )
        )
    return out


def _values(ctx: Context) -> Counter[int]:
    values: Counter[int] = Counter(dict(ctx.scan.class_counts.items()))
    values.update(ctx.scan.other_values)
    return values


def _shifts(base: Context, head: Context, threshold: float) -> list[dict[str, Any]]:
    """Per-class and per-source shares that moved by more than ``threshold`` (absolute)."""
    out: list[dict[str, Any]] = []
    per_class = (_class_rows(base), _class_rows(head))
    per_source = (_source_rows(base), _source_rows(head))
    live_sources = {k for table in per_source for k, v in table.items() if v}
    tables: list[tuple[str, tuple[dict[str, int], dict[str, int]]]] = [("class", per_class)]
    if len(live_sources) > 1:
        tables.append(("source", per_source))
    for what, (b, h) in tables:
        bt, ht = sum(b.values()) or 1, sum(h.values()) or 1
        for key in sorted(set(b) | set(h)):
            bs, hs = b.get(key, 0) / bt, h.get(key, 0) / ht
            if abs(hs - bs) > threshold:
                out.append({"what": what, "key": key, "base": round(bs, 6), "head": round(hs, 6)})
    return out


def _class_rows(ctx: Context) -> dict[str, int]:
    return {str(i): n for i, n in ctx.scan.class_counts.items()}  # a class of 0 moves no share


def _source_rows(ctx: Context) -> dict[str, int]:
    return {name: int(ctx.scan.source_rows[s]) for s, name in enumerate(ctx.scan.source_names)}


def _rows_by_id(base: Validation, head: Validation) -> dict[str, Any]:
    """Rows added, removed and relabelled, matched by id (needs an id column in both)."""
    bid, hid = base.dataset.columns.id, head.dataset.columns.id
    if bid is None or hid is None:
        return {"findings": [], "compared": False}

    def pairs(done: Validation, column: str) -> Iterator[tuple[Any, Any]]:
        data = done.dataset
        for _, _, batch in data.chunks([column, data.columns.label]):
            yield batch.column(0), batch.column(1)

    rows = row_changes(pairs(base, bid), pairs(head, hid), SHOWN_CHANGES)
    added, removed, changed = rows.added, rows.removed, rows.changed
    b, h = rows.base, rows.head
    findings = []
    if changed:
        findings.append(
            finding(
                "LG025",
                count=len(changed),
                unit="rows",
                message=f"{len(changed)} rows keep their id but changed label: "
                + ", ".join(f"{k!r} {b[k]} -> {h[k]}" for k in changed[:5]),
                fix="Relabelling is a change to review: confirm each is a correction.",
                details={
                    "changes": [
                        {"id": k, "base": b[k], "head": h[k]} for k in changed[:SHOWN_CHANGES]
                    ]
                },
            )
        )
    if added or removed:
        findings.append(
            finding(
                "LG024",
                count=len(added) + len(removed),
                unit="rows",
                message=f"{len(added)} rows added, {len(removed)} removed (by id)",
                fix="",
                details={"added": added[:100], "removed": removed[:100]},
            )
        )
    return {
        "findings": findings,
        "compared": True,
        "added": len(added),
        "removed": len(removed),
        "changed": len(changed),
    }
