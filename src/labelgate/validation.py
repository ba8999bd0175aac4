"""The validation run: resolve inputs and columns, stream the labels once, run the checks, report."""

from __future__ import annotations

import platform
import subprocess
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import replace
from importlib import metadata
from typing import Any

import numpy as np

from labelgate.arrow import bool_mask, numbers
from labelgate.batches import BatchPlan
from labelgate.checks import Context, run_checks
from labelgate.checks.context import DuplicateIds
from labelgate.contract import Contract
from labelgate.detect import Columns, detect_columns
from labelgate.errors import InputError, UsageError
from labelgate.io import InputFile, read_schema, resolve_inputs, stream_columns
from labelgate.io.stream import FileSchema
from labelgate.labels import Status, is_list_type
from labelgate.report import Example, Report
from labelgate.scan import Chunk, Scan

__all__ = ["validate"]

Progress = Callable[[int, int | None], None]


def validate(
    paths: list[str],
    contract: Contract,
    *,
    max_examples: int = 20,
    strict: bool = False,
    progress: Progress | None = None,
) -> Report:
    """Validate label files against a contract.

    Args:
        paths: files, directories or globs, read as one logical file in sorted path order.
        contract: the contract (``num_classes`` is required).
        max_examples: offending rows kept per finding (0 keeps all).
        strict: whether warnings fail the run.
        progress: called with (rows read, rows expected or ``None``) after each chunk.

    Returns:
        The report; failed checks are findings in it, not exceptions.

    Raises:
        UsageError: the contract or a column name cannot be used (LG001 included).
        InputError: an input is missing, empty, corrupt or truncated.
    """
    k = contract.num_classes
    if k is None:
        raise UsageError("--classes K is required (or num_classes in the contract)")
    if max_examples < 0:
        raise UsageError(f"--max-examples must be 0 or more, got {max_examples!r}")
    files = resolve_inputs(paths)
    schemas = [read_schema(f) for f in files]
    first = schemas[0]
    columns = detect_columns(
        first.schema,
        label=contract.label_column,
        id=contract.id_column,
        source=contract.source_column,
        name=contract.name_column,
        origin=files[0].path,
    )
    for f, s in zip(files[1:], schemas[1:], strict=True):
        missing = [c for c in columns.needed() if c not in s.schema.names]
        if missing:
            raise InputError(f"column(s) {', '.join(missing)} missing in this file", path=f.path)
    label_type = first.schema.field(columns.label).type
    task = _task(contract.task, label_type, columns.label)
    contract = contract.replace(
        task=task,
        label_column=columns.label,
        id_column=columns.id,
        source_column=columns.source,
        name_column=columns.name,
    )
    batching = contract.batching
    known_rows = _known_rows(files, schemas, columns, need=batching.shuffle_seed is not None)
    plan = BatchPlan.build(
        batching.size, drop_last=batching.drop_last, rows=known_rows, seed=batching.shuffle_seed
    )
    scan = Scan(
        num_classes=k,
        ignore_index=contract.ignore_index,
        plan=plan,
        weights=contract.class_weights,
        max_examples=max_examples,
        files=len(files),
    )
    offset = 0
    for index, (f, s) in enumerate(zip(files, schemas, strict=True)):
        for batch in stream_columns(f, columns.needed(), headerless=s.headerless):
            scan.feed(
                Chunk(
                    first_row=offset,
                    file_index=index,
                    labels=batch.column(columns.label),
                    ids=batch.column(columns.id) if columns.id else None,
                    sources=batch.column(columns.source) if columns.source else None,
                    names=batch.column(columns.name) if columns.name else None,
                )
            )
            offset += batch.num_rows
            if progress is not None:
                progress(offset, known_rows)
    _drop_dropped_batches(scan)
    duplicates = None
    if columns.id is not None and not scan.ids_increasing:
        duplicates = _duplicate_ids(files, schemas, columns.id, scan, max_examples)
    ctx = Context(scan, contract, files, str(label_type), task, duplicates, _names_seen(scan))
    findings = run_checks(ctx)
    return Report(
        findings=tuple(findings),
        counts=_counts(scan),
        input=_input(files, schemas, scan, str(label_type)),
        environment=environment(),
        contract=contract.to_dict() | {"columns_found": columns.how},
        batches=_batch_summary(ctx),
        sources=_source_table(scan),
        classes=_class_table(ctx),
        notes=tuple(_notes(columns, str(label_type), task, first)),
        strict=strict,
    )


def _task(wanted: str | None, label_type: Any, column: str) -> str:
    listy = is_list_type(label_type)
    found = "tokens" if listy else "multiclass"
    if wanted is not None and wanted != found:
        raise UsageError(
            f"task {wanted!r} needs {'a list' if wanted == 'tokens' else 'a scalar'} label column; "
            f"{column!r} is {label_type}"
        )
    return found


def _known_rows(
    files: list[InputFile], schemas: list[FileSchema], columns: Columns, *, need: bool
) -> int | None:
    if all(s.rows is not None for s in schemas):
        return sum(s.rows or 0 for s in schemas)
    if not need:
        return None
    total = 0  # text inputs state no row count: one counting pass over the label column
    for f, s in zip(files, schemas, strict=True):
        for batch in stream_columns(f, [columns.label], headerless=s.headerless):
            total += batch.num_rows
    return total


def _drop_dropped_batches(scan: Scan) -> None:
    """Examples in a batch that drop_last drops name no batch."""
    kept = scan.plan.kept_batches(scan.rows)
    for tally in scan.tallies.values():
        tally.examples = [
            e if e.batch is None or e.batch < kept else replace(e, batch=None)
            for e in tally.examples
        ]


def _duplicate_ids(
    files: list[InputFile], schemas: list[FileSchema], column: str, scan: Scan, max_examples: int
) -> DuplicateIds:
    """A second pass over the id column alone, taken only when ids are not strictly increasing.

    Holds one 8-byte key per row (the id, or its hash for text ids): the one part of a run whose
    memory grows with the rows.
    """
    import pyarrow as pa

    keys: list[np.ndarray[Any, Any]] = []
    for f, s in zip(files, schemas, strict=True):
        for batch in stream_columns(f, [column], headerless=s.headerless):
            col = batch.column(0)
            if pa.types.is_integer(col.type) and not col.null_count:
                keys.append(numbers(col).astype(np.int64))
            else:
                keys.append(_hash_text(col).view(np.int64))
    allkeys = np.concatenate(keys) if keys else np.zeros(0, np.int64)
    order = np.argsort(allkeys, kind="stable")
    ordered = allkeys[order]
    repeat = np.zeros(len(ordered), dtype=bool)
    repeat[1:] = ordered[1:] == ordered[:-1]
    rows = np.sort(order[repeat])
    distinct = len(np.unique(ordered[repeat]))
    limit = len(rows) if max_examples == 0 else max_examples
    wanted = rows[:limit]
    ids = _ids_at(wanted, files, schemas, column)
    kept = scan.plan.kept_batches(scan.rows)
    examples = []
    for row, id_ in zip(wanted.tolist(), ids, strict=True):
        batch = int(scan.plan.batch_of(row, 1)[0])
        examples.append(Example(row=row, id=id_, batch=batch if batch < kept else None))
    return DuplicateIds(rows=len(rows), distinct=distinct, examples=tuple(examples))


def _hash_text(column: Any) -> np.ndarray[Any, Any]:
    """FNV-1a (64-bit) of each value's text, vectorised over byte positions; null hashes to 0."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    text = (
        pc.cast(column, pa.large_string()) if not pa.types.is_large_string(column.type) else column
    )
    offsets = np.frombuffer(text.buffers()[1], np.int64)[text.offset : text.offset + len(text) + 1]
    data = np.frombuffer(text.buffers()[2] or b"", np.uint8)
    starts, lengths = offsets[:-1], np.diff(offsets)
    h = np.full(len(text), 0xCBF29CE484222325, np.uint64)
    prime = np.uint64(0x100000001B3)
    for j in range(int(lengths.max()) if len(lengths) else 0):
        live = lengths > j
        h[live] = (h[live] ^ data[starts[live] + j].astype(np.uint64)) * prime
    nulls = bool_mask(text.is_null())
    h[nulls] = 0
    return h


def _ids_at(
    rows: np.ndarray[Any, Any], files: list[InputFile], schemas: list[FileSchema], column: str
) -> list[Any]:
    """The id of each of ``rows`` (sorted row positions), in one pass over the id column."""
    found: list[Any] = []
    start = 0
    for f, s in zip(files, schemas, strict=True):
        for batch in stream_columns(f, [column], headerless=s.headerless):
            end = start + batch.num_rows
            lo, hi = np.searchsorted(rows, [start, end])
            col = batch.column(0)
            found.extend(col[int(r) - start].as_py() for r in rows[lo:hi])
            start = end
            if len(found) == len(rows):
                return found
    return found


def _names_seen(scan: Scan) -> dict[int, str]:
    """Each in-range label's most frequent name in the name column."""
    votes: dict[int, Counter[str]] = defaultdict(Counter)
    for (_, value, name), (count, _) in scan.pairs.items():
        if 0 <= value < scan.k:
            votes[value][name] += count
    return {value: c.most_common(1)[0][0] for value, c in votes.items()}


def _counts(scan: Scan) -> dict[str, int]:
    st = scan.row_status
    usable = int(st[Status.USABLE])
    ignored = int(st[Status.IGNORED])
    rejected = scan.rows - usable - ignored
    counts = {"rows": scan.rows, "usable": usable, "ignored": ignored, "rejected": rejected}
    if scan.tokens:
        vs = scan.value_status
        counts |= {
            "tokens": scan.tokens,
            "usable_tokens": int(vs[Status.USABLE]),
            "ignored_tokens": int(vs[Status.IGNORED]),
            "rejected_tokens": scan.tokens - int(vs[Status.USABLE]) - int(vs[Status.IGNORED]),
        }
    return counts


def _input(
    files: list[InputFile], schemas: list[FileSchema], scan: Scan, label_type: str
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


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _revision() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def environment() -> dict[str, Any]:
    """Versions and backend, read without importing torch (which is slow to import)."""
    from labelgate import __version__

    return {
        "labelgate": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "pyarrow": _version("pyarrow"),
        "numpy": np.__version__,
        "torch": _version("torch"),
        "backend": "cpu (validation runs no device code)",
        "code_revision": _revision(),
    }


def _batch_summary(ctx: Context) -> dict[str, Any]:
    from labelgate.checks.batches import failing_nan_batches

    scan = ctx.scan
    plan = scan.plan
    kept = plan.kept_batches(scan.rows)
    crash = np.flatnonzero(scan.batch_rejected[:kept] > 0).tolist()
    nan = failing_nan_batches(ctx) if scan.rows else []
    return {
        "size": plan.size,
        "drop_last": plan.drop_last,
        "shuffle_seed": ctx.contract.batching.shuffle_seed,
        "count": kept,
        "last_size": plan.last_size(scan.rows),
        "dropped_rows": scan.rows - min(scan.rows, kept * plan.size),
        "with_rejected": len(crash),
        "no_usable": len(nan),
        "failing": sorted(set(crash) | set(nan))[:1000],
        "usable_per_batch": scan.batch_usable[:kept].tolist() if kept <= 10_000 else None,
    }


def _source_table(scan: Scan) -> list[dict[str, Any]]:
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


def _class_table(ctx: Context) -> list[dict[str, Any]]:
    counts = ctx.scan.class_counts.tolist()
    total = sum(counts) or 1
    return [
        {"index": i, "name": ctx.class_name(i), "count": n, "share": round(n / total, 6)}
        for i, n in enumerate(counts)
    ]


def _notes(columns: Columns, label_type: str, task: str, first: FileSchema) -> list[str]:
    notes = [
        f"{role} column {getattr(columns, role)!r}: {how}" for role, how in columns.how.items()
    ]
    if first.headerless:
        notes.append("CSV without a header row: columns are named by position (0, 1, 2...)")
    base = label_type.removeprefix("list<item: ").removeprefix("large_list<item: ").rstrip(">")
    if base in ("int32", "int16", "int8", "uint16", "uint32", "uint64") or base.startswith(
        ("double", "float", "halffloat")
    ):
        notes.append(
            f"labels are stored as {base}: cast to int64 before building the target (PyTorch "
            "accepts int64 and uint8 class indices, and raises NotImplementedError for "
            "int32 and float)"
        )
    if task == "tokens":
        notes.append("token task: rows are lists of targets, padded with ignore_index per batch")
    return notes
