"""The validation run: resolve inputs and columns, stream the labels once, run the checks, report."""

from __future__ import annotations

import platform
import subprocess
from collections import Counter, defaultdict
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import replace
from importlib import metadata
from typing import Any

import numpy as np

from labelgate.arrow import bool_mask, numbers
from labelgate.checks import Context, run_checks
from labelgate.checks.context import DuplicateIds
from labelgate.contract import Contract
from labelgate.dataset import Dataset, Mapper, open_dataset
from labelgate.detect import Columns
from labelgate.errors import UsageError
from labelgate.io import InputFile
from labelgate.io.stream import FileSchema
from labelgate.labels import Status
from labelgate.report import Example, Finding, Report
from labelgate.scan import ScanResult
from labelgate.scan.plan import supported
from labelgate.scan.sequential import Chunk, Scan

__all__ = ["validate", "validate_in_context"]

Progress = Callable[[int, int | None], None]


def validate(
    paths: list[str],
    contract: Contract,
    *,
    max_examples: int = 20,
    strict: bool = False,
    progress: Progress | None = None,
    threads: int | None = None,
    dask: str | None = None,
) -> Report:
    """Validate label files against a contract; see :func:`validate_in_context`."""
    report, _ = validate_in_context(
        paths,
        contract,
        max_examples=max_examples,
        strict=strict,
        progress=progress,
        threads=threads,
        dask=dask,
    )
    return report


def validate_in_context(
    paths: list[str],
    contract: Contract,
    *,
    max_examples: int = 20,
    strict: bool = False,
    progress: Progress | None = None,
    threads: int | None = None,
    in_pieces: bool = True,
    dask: str | None = None,
) -> tuple[Report, Context]:
    """Validate label files against a contract.

    Args:
        paths: files, directories or globs, read as one logical file in sorted path order.
        contract: the contract (``num_classes`` is required).
        max_examples: offending rows kept per finding (0 keeps all).
        strict: whether warnings fail the run.
        progress: called with (rows read, rows expected or ``None``) after each chunk.
        threads: threads scanning row groups in parallel (default: the cores available).
        in_pieces: scan Parquet row groups as independent pieces where the input allows it
            (``False`` forces the sequential scan; both give the same report).
        dask: run the pieces on a Dask cluster: ``local[N]`` or a scheduler address.

    Returns:
        The report (failed checks are findings in it, not exceptions), and the context the checks
        read (the scan, for commands that act on it, such as ``fix``).

    Raises:
        UsageError: the contract or a column name cannot be used (LG001 included).
        InputError: an input is missing, empty, corrupt or truncated.
    """
    if max_examples < 0:
        raise UsageError(f"--max-examples must be 0 or more, got {max_examples!r}")
    if threads is not None and threads < 1:
        raise UsageError(f"--threads must be 1 or more, got {threads!r}")
    with ExitStack() as stack:
        client = None
        if dask is not None:
            from labelgate.distributed import connect

            client = stack.enter_context(connect(dask))
        return _validate(
            paths, contract, max_examples, strict, progress, threads, in_pieces, client
        )


def _validate(
    paths: list[str],
    contract: Contract,
    max_examples: int,
    strict: bool,
    progress: Progress | None,
    threads: int | None,
    in_pieces: bool,
    client: Any,
) -> tuple[Report, Context]:
    data = open_dataset(paths, contract, None if client is None else _footers_on(client))
    contract, columns, files, schemas = data.contract, data.columns, data.files, data.schemas
    id_check = columns.id is not None and contract.severity.get("LG014") != "off"
    why_not = supported(data) if in_pieces else "sequential scan requested"
    if client is not None and why_not is not None:
        raise UsageError(f"--dask runs Parquet row groups as pieces, and here {why_not}")
    if why_not is None:
        scan = _scan_in_pieces(data, max_examples, id_check, threads, progress, client)
    else:
        scan = _scan_sequentially(data, max_examples, progress)
    duplicates = None
    if id_check and columns.id is not None and not scan.ids_increasing:
        duplicates = _duplicate_ids(data, columns.id, scan, max_examples)
    label_type, task = str(data.label_type), data.task
    section = _pandera_section(data, max_examples) if contract.pandera is not None else None
    ctx = Context(
        scan, contract, files, label_type, task, duplicates, _names_seen(scan), section=section
    )
    findings = _name_files(run_checks(ctx), files, scan.file_rows)
    report = Report(
        findings=tuple(findings),
        counts=_counts(scan),
        input=_input(files, schemas, scan, label_type),
        environment=environment(),
        contract=contract.to_dict() | {"columns_found": columns.how},
        batches=_batch_summary(ctx),
        sources=_source_table(scan),
        classes=_class_table(ctx),
        notes=tuple(_notes(columns, label_type, task, schemas[0])),
        strict=strict,
    )
    return report, ctx


def _scan_sequentially(data: Dataset, max_examples: int, progress: Progress | None) -> ScanResult:
    contract, columns = data.contract, data.columns
    scan = Scan(
        num_classes=data.k,
        ignore_index=contract.ignore_index,
        plan=data.plan,
        weights=contract.class_weights,
        max_examples=max_examples,
        files=len(data.files),
        soft_tolerance=contract.soft_tolerance if data.task == "soft" else None,
    )
    for index, first_row, batch in data.chunks(encoded=True):
        scan.feed(
            Chunk(
                first_row=first_row,
                file_index=index,
                labels=batch.column(columns.label),
                ids=batch.column(columns.id) if columns.id else None,
                sources=batch.column(columns.source) if columns.source else None,
                names=batch.column(columns.name) if columns.name else None,
            )
        )
        if progress is not None:
            progress(first_row + batch.num_rows, data.known_rows)
    return scan.result()


def _scan_in_pieces(
    data: Dataset,
    max_examples: int,
    id_check: bool,
    threads: int | None,
    progress: Progress | None,
    client: Any = None,
) -> ScanResult:
    """Row groups in parallel, partial results merged in order (see :mod:`labelgate.scan`);
    on a Dask cluster through ``client`` (see :mod:`labelgate.distributed`)."""
    from labelgate.scan.plan import Spec, plan_pieces
    from labelgate.scan.runner import ids_for_examples, result_of, run_pieces, threads_default

    columns = data.columns
    metadata = [sch.metadata for sch in data.schemas]
    pieces = plan_pieces(data, metadata)
    spec = Spec(
        num_classes=data.k,
        ignore_index=data.contract.ignore_index,
        batch_size=data.plan.size,
        label=columns.label,
        id=columns.id,
        source=columns.source,
        name=columns.name,
        max_examples=max_examples,
        read_ids=id_check,
    )
    total = data.known_rows
    report = None if progress is None else (lambda rows: progress(rows, total))
    if client is not None:
        from labelgate.distributed import run_on_dask

        merged = run_on_dask(client, pieces, spec, progress=report)
    else:
        merged = run_pieces(
            pieces, spec, metadata, threads=threads or threads_default(), progress=report
        )
    merged = ids_for_examples(merged, pieces, spec, metadata)
    return result_of(merged, spec, data.plan, len(data.files))


def _name_files(
    findings: list[Finding], files: list[InputFile], rows: tuple[int, ...]
) -> list[Finding]:
    """Name each example's file and row within it, where the input has several files."""
    if len(files) < 2:
        return findings
    starts = np.cumsum([0, *rows])

    def named(e: Example) -> Example:
        i = int(np.searchsorted(starts, e.row, side="right")) - 1
        return replace(e, file=files[i].path, file_row=e.row - int(starts[i]))

    return [replace(f, examples=tuple(named(e) for e in f.examples)) for f in findings]


FOOTERS_ON_CLUSTER = 64  # shards from which the cluster, not the driver, reads the footers


def _footers_on(client: Any) -> Mapper:
    """Read footers on the cluster when there are many shards, else on the driver's threads."""
    from labelgate.dataset import read_schemas
    from labelgate.distributed import cluster_map

    def mapper(fn: Callable[[InputFile], FileSchema], files: list[InputFile]) -> list[FileSchema]:
        if len(files) < FOOTERS_ON_CLUSTER:
            return read_schemas(files)
        return cluster_map(client, fn, files)

    return mapper


def _duplicate_ids(data: Dataset, column: str, scan: ScanResult, max_examples: int) -> DuplicateIds:
    """A second pass over the id column alone, taken only when ids are not strictly increasing.

    Holds one 8-byte key per row (the id, or its hash for text ids): the one part of a run whose
    memory grows with the rows.
    """
    import pyarrow as pa

    keys: list[np.ndarray[Any, Any]] = []
    for _, _, batch in data.chunks([column]):
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
    ids = _ids_at(wanted, data, column)
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


def _ids_at(rows: np.ndarray[Any, Any], data: Dataset, column: str) -> list[Any]:
    """The id of each of ``rows`` (sorted row positions), in one pass over the id column."""
    found: list[Any] = []
    for _, start, batch in data.chunks([column]):
        lo, hi = np.searchsorted(rows, [start, start + batch.num_rows])
        col = batch.column(0)
        found.extend(col[int(r) - start].as_py() for r in rows[lo:hi])
        if len(found) == len(rows):
            break
    return found


def _pandera_section(data: Dataset, max_examples: int) -> dict[str, Any]:
    """Check the contract's pandera section chunk by chunk (a pass over those columns alone).

    Checks that span rows (unique) see one chunk at a time.
    """
    from collections import Counter

    from labelgate.engines import plain
    from labelgate.pandera import section_failures, section_schema

    assert data.contract.pandera is not None
    schema = section_schema(data.contract.pandera)
    columns = list(schema.columns)
    missing = [c for c in columns if c not in data.schemas[0].schema.names]
    id_column = data.columns.id
    read = columns + ([id_column] if id_column and id_column not in columns else [])
    failing_rows: set[int] = set()
    by_check: Counter[str] = Counter()
    examples: list[Example] = []
    if missing:
        return {"rows": 0, "by_check": {}, "examples": [], "missing": missing}
    for _, first, batch in data.chunks(read):
        frame = batch.to_pandas()
        for row, column, check, value in section_failures(schema, frame[columns], first):
            by_check[f"{column}: {check}"] += 1
            if row < 0 or row in failing_rows:
                continue
            failing_rows.add(row)
            if max_examples == 0 or len(examples) < max_examples:
                ident = frame[id_column].iloc[row - first] if id_column else None
                b = int(data.plan.batch_of(row, 1)[0])
                examples.append(Example(row=row, id=plain(ident), batch=b, value=plain(value)))
    examples.sort(key=lambda e: e.row)
    return {
        "rows": len(failing_rows),
        "by_check": dict(by_check),
        "examples": examples,
        "missing": [],
    }


def _names_seen(scan: ScanResult) -> dict[int, str]:
    """Each in-range label's most frequent name in the name column, among the sources that can
    be a reference (not 1-based ones)."""
    from labelgate.checks.classes import reference_sources

    sources = reference_sources(scan.pairs, scan.k)
    votes: dict[int, Counter[str]] = defaultdict(Counter)
    for (source, value, name), (count, _) in sorted(scan.pairs.items(), key=lambda kv: kv[1][1]):
        if source in sources and 0 <= value < scan.k:
            votes[value][name] += count
    return {value: c.most_common(1)[0][0] for value, c in votes.items()}


def _counts(scan: ScanResult) -> dict[str, int]:
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
    crash = scan.rejected_batches()
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
        "usable_per_batch": scan.usable_per_batch().tolist() if kept <= 10_000 else None,
    }


def _source_table(scan: ScanResult) -> list[dict[str, Any]]:
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
    if ctx.task == "soft":
        return []  # a soft row is a distribution over the classes, not one of them
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
    if base in ("int32", "int16", "int8", "uint16", "uint32", "uint64") or (
        task != "multiclass" and base.startswith(("double", "float", "halffloat"))
    ):  # float scalar labels are LG026's
        notes.append(
            f"labels are stored as {base}: cast to int64 before building the target (PyTorch "
            "accepts int64 and uint8 class indices, and raises RuntimeError for others: "
            "expected target dtype to be Long or Byte)"
        )
    if task == "tokens":
        notes.append("token task: rows are lists of targets, padded with ignore_index per batch")
    return notes
