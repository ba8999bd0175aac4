"""The report's tables, built from a scan result and the checks' context: counts, input, batches,
sources, classes and notes."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Any

import numpy as np

from labelgate.checks import Context
from labelgate.core.rules import Status
from labelgate.inputs.columns import Columns
from labelgate.io import InputFile
from labelgate.io.sources import typed
from labelgate.io.stream import FileSchema
from labelgate.scan import ScanResult
from labelgate.scan.result import PER_BATCH_MAX

if TYPE_CHECKING:
    from labelgate.core.annotations import AnnotationFacts

__all__ = [
    "batch_summary",
    "class_table",
    "classes_omitted",
    "counts",
    "input_table",
    "names_seen",
    "notes",
    "source_table",
]


def counts(scan: ScanResult) -> dict[str, int]:
    """Rows by status and, for tokens and masks, values (tokens, pixels) by status."""
    st = scan.row_status
    usable = int(st[Status.USABLE])
    ignored = int(st[Status.IGNORED])
    rejected = scan.rows - usable - ignored
    counts = {"rows": scan.rows, "usable": usable, "ignored": ignored, "rejected": rejected}
    if scan.tokens:
        vs = scan.value_status
        unit = "pixels" if scan.class_rows is not None else "tokens"
        counts |= {
            unit: scan.tokens,
            f"usable_{unit}": int(vs[Status.USABLE]),
            f"ignored_{unit}": int(vs[Status.IGNORED]),
            f"rejected_{unit}": scan.tokens - int(vs[Status.USABLE]) - int(vs[Status.IGNORED]),
        }
    return counts


def input_table(
    files: list[InputFile], schemas: list[FileSchema], scan: ScanResult, label_type: str
) -> dict[str, Any]:
    return {
        "rows": scan.rows,
        "label_type": label_type,
        "files": [
            {
                "path": f.path,
                "format": f.kind,
                "size": f.size,
                "rows": scan.file_rows[i],
                "row_groups": s.row_groups,
                "hash": f.digest(),
            }
            for i, (f, s) in enumerate(zip(files, schemas, strict=True))
        ],
    }


def batch_summary(ctx: Context) -> dict[str, Any]:
    from labelgate.checks.batches import failing_nan_batches

    scan = ctx.scan
    plan = scan.plan
    kept = plan.kept_batches(scan.rows)
    crash = scan.rejected_batches()
    nan = failing_nan_batches(ctx) if scan.rows else []
    failing = sorted(set(crash) | set(nan))
    return {
        "size": plan.size,
        "drop_last": plan.drop_last,
        "shuffle_seed": ctx.contract.batching.shuffle_seed,
        "count": kept,
        "last_size": plan.last_size(scan.rows),
        "dropped_rows": plan.dropped_rows(scan.rows),
        **({"unit": "images"} if plan.image is not None else {}),
        "with_rejected": len(crash),
        "no_usable": len(nan),
        # every failing batch, for the commands that act on them (smoke --before, repro); the
        # JSON document lists the first BATCHES_LISTED (Report.batch_table)
        "failing": failing,
        "failing_count": len(failing),
        "usable_per_batch": scan.usable_per_batch().tolist() if kept <= PER_BATCH_MAX else None,
    }


def source_table(scan: ScanResult) -> list[dict[str, Any]]:
    out = []
    for s, name in enumerate(scan.source_names):
        rows = int(scan.source_rows[s])
        if rows == 0:
            continue
        st = scan.source_status[s]
        out.append(
            {
                "source": name,
                "rows": rows,
                "usable": int(st[Status.USABLE]),
                "ignored": int(st[Status.IGNORED]),
                "rejected": rows - int(st[Status.USABLE]) - int(st[Status.IGNORED]),
            }
        )
    return out


def class_table(ctx: Context, facts: AnnotationFacts | None = None) -> list[dict[str, Any]]:
    """Usable targets per class; for detection, also the rows of each class rejected after the
    reading (``rejected``), so a class's annotations are all accounted for.

    Every class up to ``DENSE_LIMIT`` classes; above (K is input: it may be 2**31), the classes
    the data holds or the class map (or name column) names, and ``classes_omitted`` says how
    many are left out."""
    if ctx.task == "soft":
        return []  # a soft row is a distribution over the classes, not one of them
    scan = ctx.scan
    counts, rows = scan.class_counts, scan.class_rows
    rejected = facts.rejected_classes if facts is not None and facts.task == "detection" else None
    if counts.dense:
        listed = np.arange(ctx.k, dtype=np.int64)  # every class: K is at most DENSE_LIMIT
    else:
        named = ctx.contract.class_map.name_of() if ctx.contract.class_map else ctx.names_seen
        others = [i for i in (*named, *(rejected or ())) if 0 <= i < ctx.k]
        held = [counts.arrays()[0], np.array(others, np.int64)]
        held += [] if rows is None else [rows.arrays()[0]]
        listed = np.unique(np.concatenate(held))  # sorted, each once
    total = counts.total() or 1
    images = None if rows is None else rows.counts_of(listed).tolist()
    table = []
    for at, (i, n) in enumerate(
        zip(listed.tolist(), counts.counts_of(listed).tolist(), strict=True)
    ):
        row = {"index": i, "name": ctx.class_name(i), "count": n, "share": round(n / total, 6)}
        if images is not None:  # masks: count is of pixels; images holding the class
            row["images"] = images[at]
        if rejected is not None:
            row["rejected"] = rejected.get(i, 0)
        table.append(row)
    return table


def classes_omitted(ctx: Context, table: list[dict[str, Any]]) -> dict[str, int] | None:
    """How many classes of ``0..K-1`` the class table leaves out, and the first of them; ``None``
    where it lists them all (every K up to ``DENSE_LIMIT``)."""
    listed = len(table)  # every class present, in increasing index: the first gap is the first
    if ctx.task == "soft" or ctx.scan.class_counts.dense or listed == ctx.k:
        return None
    first = next((i for i, row in enumerate(table) if row["index"] != i), listed)
    return {"count": ctx.k - listed, "first": first}


def notes(
    columns: Columns, label_type: str, task: str, first: FileSchema, files: list[InputFile]
) -> list[str]:
    notes = [
        f"{role} column {getattr(columns, role)!r}: {how}" for role, how in columns.how.items()
    ]
    if first.headerless:
        notes.append("CSV without a header row: columns are named by position (0, 1, 2...)")
    base = label_type.removeprefix("list<item: ").removeprefix("large_list<item: ").rstrip(">")
    if base in ("int32", "int16", "int8", "uint16", "uint32", "uint64") or (
        task in ("tokens", "segmentation") and base.startswith(("double", "float", "halffloat"))
    ):  # float scalar labels are LG026's; soft and multi-hot targets are floats by design
        notes.append(
            f"labels are stored as {base}: cast to int64 before building the target (PyTorch "
            "accepts int64 and uint8 class indices, and raises RuntimeError for others: "
            "expected target dtype to be Long or Byte)"
        )
    if typed(files) and task != "multiclass" and base in ("string", "large_string", "string_view"):
        notes.append(  # a scalar column of digits is LG026's
            f"labels are stored as text ({base}): values such as '3' are read as class 3 here, "
            "but a loader must convert them to int64 before building the target"
        )
    if task == "tokens":
        notes.append("token task: rows are lists of targets, padded with ignore_index per batch")
    if task == "segmentation":
        notes.append(
            "segmentation task: a row is a mask, read as its distinct values and their pixel "
            "counts; counts of values are of pixels"
        )
    return notes


def names_seen(scan: ScanResult) -> dict[int, str]:
    """Each in-range label's most frequent name in the name column, among the sources that can
    be a reference (not 1-based ones)."""
    from labelgate.checks.classes import reference_sources

    sources = reference_sources(scan.pairs, scan.k)
    votes: dict[int, Counter[str]] = defaultdict(Counter)
    for (source, value, name), (count, _) in sorted(scan.pairs.items(), key=lambda kv: kv[1][1]):
        if source in sources and 0 <= value < scan.k:
            votes[value][name] += count
    return {value: c.most_common(1)[0][0] for value, c in votes.items()}
