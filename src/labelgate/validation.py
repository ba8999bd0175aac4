"""The validation run: resolve inputs and columns, stream the labels once, run the checks, report."""

from __future__ import annotations

import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from labelgate import tables
from labelgate.checks import Context, run_checks
from labelgate.contract import Contract
from labelgate.dataset import Dataset, Mapper, open_dataset
from labelgate.environment import environment
from labelgate.errors import UsageError
from labelgate.io import InputFile
from labelgate.io.stream import FileSchema
from labelgate.report import Example, Finding, Report
from labelgate.scan import ScanResult
from labelgate.scan.plan import supported
from labelgate.scan.result import ID_MEMORY, PER_BATCH_MAX
from labelgate.section import check_section

if TYPE_CHECKING:
    from labelgate.annotations import AnnotationFacts
    from labelgate.formats import Converted
    from labelgate.scan.idkeys import IdKeys
    from labelgate.scan.plan import Spec
    from labelgate.scan.result import DuplicateIds

__all__ = ["Validation", "run", "validate", "validate_in_context"]

Progress = Callable[[int, int | None], None]


def validate(paths: list[str], contract: Contract, **options: Any) -> Report:
    """The report of ``run`` (same options)."""
    return run(paths, contract, **options).report


@dataclass(frozen=True, slots=True)
class Validation:
    """A finished validation, handed on to the commands that act on it (fix, repro, smoke, diff)
    so that none opens the input a second time.

    Attributes:
        report: the report.
        context: what the checks read: the scan result, the contract applied.
        dataset: the input as opened: files, schemas, columns, batch plan.
    """

    report: Report
    context: Context
    dataset: Dataset


def validate_in_context(
    paths: list[str], contract: Contract, **options: Any
) -> tuple[Report, Context]:
    """The report and the checks' context of ``run`` (same options)."""
    done = run(paths, contract, **options)
    return done.report, done.context


def run(
    paths: list[str],
    contract: Contract,
    *,
    max_examples: int = 20,
    strict: bool = False,
    progress: Progress | None = None,
    threads: int | None = None,
    in_pieces: bool = True,
    dask: str | None = None,
    id_memory: int | None = None,
    input_format: str = "auto",
    background: int | None = None,
    source_field: str | None = None,
) -> Validation:
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
        id_memory: bytes the duplicate-id check (LG014) may hold; past that it spills to
            temporary files, so its memory does not grow with the rows (default 128 MB).
        input_format: ``auto`` (detected from the path), ``table`` (Parquet, CSV, JSONL label
            columns), or an annotation format: ``coco``, ``yolo``, ``voc``, ``imagefolder``,
            ``hf`` (see ``labelgate.formats``).
        background: the detection background index (torchvision: 0), whose use as a label is
            LG032.
        source_field: for COCO, the field of each annotation's image to use as its source
            (default: the file's name).

    Returns:
        The report (failed checks are findings in it, not exceptions), the context the checks
        read, and the dataset as opened.

    Raises:
        UsageError: the contract or a column name cannot be used (LG001 included).
        InputError: an input is missing, empty, corrupt or truncated.
    """
    if max_examples < 0:
        raise UsageError(f"--max-examples must be 0 or more, got {max_examples!r}")
    if threads is not None and threads < 1:
        raise UsageError(f"--threads must be 1 or more, got {threads!r}")
    id_memory = ID_MEMORY if id_memory is None else id_memory
    if id_memory < 1 << 20:
        raise UsageError(f"--id-memory must be 1 MB or more, got {id_memory!r} bytes")
    with ExitStack() as stack:
        client = None
        if dask is not None:
            from labelgate.distributed import connect

            client = stack.enter_context(connect(dask))
        limit = None if max_examples == 0 else max_examples
        background = contract.background_index if background is None else background
        converted = _converted(
            paths, input_format, contract, background, limit, source_field, client
        )
        facts = None
        if converted is not None:
            if converted.facts.format == "masks":
                client = None  # the cluster decoded the masks; their histograms are a few rows
            elif client is not None and converted.paths != converted.inputs:
                raise UsageError(
                    f"--dask reads Parquet tables and masks; {converted.facts.format} is read "
                    "locally"
                )
            contract = _with_format(contract, converted)
            paths, facts = converted.paths, converted.facts
        data = open_dataset(paths, contract, None if client is None else _footers_on(client))
        done = _validate(
            data, max_examples, strict, progress, threads, in_pieces, client, id_memory, facts
        )
        return done if converted is None else _as_given(done, converted)


_KEPT: list[tempfile.TemporaryDirectory[str]] = []  # converted annotations, kept for this process


def _converted(
    paths: list[str],
    input_format: str,
    contract: Contract,
    background: int | None,
    limit: int | None,
    source_field: str | None,
    client: Any = None,
) -> Converted | None:
    """An annotation input read into rows, or ``None`` for a label table. The rows stay on disk
    until the process ends: fix, diff and repro read them again through the validation."""
    from labelgate.distributed import cluster_map
    from labelgate.formats import convert

    folder = tempfile.TemporaryDirectory(prefix="labelgate-format-")
    try:
        found = convert(
            paths,
            input_format,
            Path(folder.name),
            class_map=contract.class_map,
            background=background,
            limit=limit,
            source_field=source_field,
            task=contract.task,
            num_classes=contract.num_classes,
            colour_map=contract.color_map,
            cluster=None if client is None else partial(cluster_map, client),
        )
    except BaseException:
        folder.cleanup()
        raise
    if found is None:
        folder.cleanup()
        return None
    _KEPT.append(folder)
    return found


def _with_format(contract: Contract, converted: Converted) -> Contract:
    """The contract with the format's class map (and K from it, when not given); a class map
    given as well is compared with the format's own (LG030 where they differ)."""
    if converted.facts.task == "segmentation":
        if contract.task not in (None, "segmentation"):
            raise UsageError(f"masks are read for the segmentation task, not {contract.task!r}")
        contract = contract.replace(task="segmentation")
    own, given = converted.class_map, contract.class_map
    chosen = given if given is not None else own
    if contract.num_classes is None and chosen is not None:
        contract = contract.replace(num_classes=len(chosen.entries))
    if contract.num_classes is None:
        facts = converted.facts
        raise UsageError(
            f"--classes K is required: K cannot be read from this {facts.format} input, which "
            f"has no class map ({facts.why})"
        )
    if own is None:
        return contract
    if given is not None:
        a, b = given.name_of(), own.name_of()
        differ = sorted(i for i in set(a) | set(b) if a.get(i) != b.get(i))
        if differ:
            shown = "; ".join(f"{i}: {a.get(i)!r} vs {b.get(i)!r}" for i in differ[:5])
            converted.facts.hit(
                "LG030",
                message=f"the class map given ({given.origin}) and the format's own "
                f"({own.origin}) differ at {len(differ)} indices ({shown})",
                fix="make one the source of truth: a model trained with one map and evaluated "
                "with the other names every differing class wrongly",
                unit="classes",
                count=len(differ),
            )
        return contract
    return contract.replace(class_map=own)


def _as_given(done: Validation, converted: Converted) -> Validation:
    """The report naming the user's input and its format, not the converted rows."""
    report = done.report
    facts = converted.facts
    files = report.input.get("files", [])
    if converted.paths != converted.inputs:  # rows written by the reader: name the source
        files = [{"path": p, "format": facts.format} for p in converted.inputs]
    note = f"read as {facts.format} ({facts.why})"
    report = replace(
        report,
        input=report.input | {"files": files, "annotations": facts.to_dict()},
        notes=(note, *report.notes),
    )
    return replace(done, report=report)


def _validate(
    data: Dataset,
    max_examples: int,
    strict: bool,
    progress: Progress | None,
    threads: int | None,
    in_pieces: bool,
    client: Any,
    id_memory: int,
    facts: AnnotationFacts | None = None,
) -> Validation:
    contract, columns, files, schemas = data.contract, data.columns, data.files, data.schemas
    id_check = columns.id is not None and contract.severity.get("LG014") != "off"
    why_not = supported(data) if in_pieces else "sequential scan requested"
    if client is not None and why_not is not None:
        raise UsageError(f"--dask runs Parquet row groups as pieces, and here {why_not}")
    with ExitStack() as stack:
        keyed = None  # the ids, keyed by the scan's workers as they decode them (see scan.idkeys)
        if why_not is None and client is None and id_check and columns.id is not None:
            from labelgate.scan.idkeys import IdKeys
            from labelgate.scan.ids import integer_ids

            integer = integer_ids(data, columns.id)
            limit = None if max_examples == 0 else max_examples
            keyed = IdKeys(data.known_rows or 0, id_memory, integer=integer, limit=limit)
            stack.enter_context(keyed)
        if why_not is None:
            scan = _scan_in_pieces(data, max_examples, id_check, threads, progress, client, keyed)
        else:
            scan = _scan_sequentially(data, max_examples, progress)
        duplicates = None
        if id_check and columns.id is not None and not scan.ids_increasing:
            from labelgate.scan.ids import duplicate_ids

            if client is None:
                duplicates = duplicate_ids(
                    data, columns.id, scan, max_examples, memory=id_memory, keyed=keyed
                )
            else:
                duplicates = _duplicate_ids_on_dask(data, client, max_examples, id_memory, scan)
    label_type, task = str(data.label_type), data.task
    section = check_section(data, max_examples) if contract.pandera is not None else None
    ctx = Context(
        scan,
        contract,
        files,
        label_type,
        task,
        duplicates,
        _names_seen(scan),
        section=section,
        annotations=facts,
    )
    findings = _name_files(_completed(run_checks(ctx), data), files, scan.file_rows)
    report = Report(
        findings=tuple(findings),
        counts=tables.counts(scan),
        input=tables.input_table(files, schemas, scan, label_type),
        environment=environment(),
        contract=contract.to_dict() | {"columns_found": columns.how},
        batches=tables.batch_summary(ctx),
        sources=tables.source_table(scan),
        classes=tables.class_table(ctx),
        notes=tuple(tables.notes(columns, label_type, task, schemas[0], files)),
        strict=strict,
    )
    return Validation(report, ctx, data)


def _scan_sequentially(data: Dataset, max_examples: int, progress: Progress | None) -> ScanResult:
    from labelgate.scan.sequential import Chunk, Scan  # text inputs and the tasks pieces lack

    contract, columns = data.contract, data.columns
    scan = Scan(
        num_classes=data.k,
        ignore_index=contract.ignore_index,
        plan=data.plan,
        weights=contract.class_weights,
        max_examples=max_examples,
        files=len(data.files),
        soft_tolerance=contract.soft_tolerance if data.task == "soft" else None,
        multilabel=data.task == "multilabel",
        indices=contract.label_encoding == "indices",
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
                pixels=batch.column(columns.pixels) if columns.pixels else None,
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
    keyed: IdKeys | None = None,
) -> ScanResult:
    """Row groups in parallel, partial results merged in order (see ``labelgate.scan``);
    on a Dask cluster through ``client`` (see ``labelgate.distributed``)."""
    from labelgate.scan.partial import failing_only
    from labelgate.scan.plan import plan_pieces
    from labelgate.scan.runner import result_of, run_pieces, threads_default

    metadata = [sch.metadata for sch in data.schemas]
    pieces = plan_pieces(data, metadata)
    spec = _spec(data, max_examples, id_check)
    total = data.known_rows
    report = None if progress is None else (lambda rows: progress(rows, total))
    rows = sum(p.rows for p in pieces)
    # Past PER_BATCH_MAX batches the report lists no batch's usable rows, so the merge keeps only
    # the failing batches: the sparse batch table stays small however many rows there are.
    compact = None
    if data.plan.kept_batches(rows) > PER_BATCH_MAX:
        compact = failing_only(data.plan.size, rows)
    if client is not None:
        from labelgate.distributed import run_on_dask

        merged = run_on_dask(client, pieces, spec, progress=report, compact=compact)
    else:
        merged = run_pieces(
            pieces,
            spec,
            metadata,
            threads=threads or threads_default(),
            progress=report,
            keys=keyed,
            compact=compact,
        )
    return result_of(merged, spec, data.plan, len(data.files), complete=compact is None)


def _spec(data: Dataset, max_examples: int, id_check: bool) -> Spec:
    from labelgate.scan.plan import Spec

    columns = data.columns
    return Spec(
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


def _duplicate_ids_on_dask(
    data: Dataset, client: Any, max_examples: int, memory: int, scan: ScanResult
) -> DuplicateIds:
    """LG014 with its ids partitioned by key across the cluster's workers (see
    ``labelgate.distributed.duplicate_ids_on_dask``)."""
    from labelgate.distributed import duplicate_ids_on_dask
    from labelgate.scan.ids import Tally, integer_ids
    from labelgate.scan.plan import plan_pieces

    column = data.columns.id
    assert column is not None
    spec = _spec(data, max_examples, True)
    tally = Tally(spec.limit)
    pieces = plan_pieces(data, [sch.metadata for sch in data.schemas])
    integer = integer_ids(data, column)
    duplicate_ids_on_dask(client, pieces, spec, integer=integer, memory=memory, tally=tally)
    return tally.result(data, column, scan)


def _completed(findings: list[Finding], data: Dataset) -> list[Finding]:
    """Examples named by row alone get their row's id and source (the pieces read ids only for
    LG014; LG007 and LG010 name rows), and LG007's and LG014's their label value: one read, of
    those rows' row groups only for Parquet."""
    cols = data.columns
    columns = [c for c in (cols.id, cols.label, cols.source) if c]
    valued = ("LG007", "LG014")

    def lacking(f: Finding, e: Example) -> bool:
        return e.row >= 0 and (
            (cols.id is not None and e.id is None)
            or (cols.source is not None and e.source is None)
            or (f.code in valued and e.value is None and data.task == "multiclass")
        )

    rows = [e.row for f in findings for e in f.examples if lacking(f, e)]
    if not rows:
        return findings
    from labelgate.scan.ids import values_at

    at = values_at(rows, data, columns)

    def completed(f: Finding, e: Example) -> Example:
        if not lacking(f, e) or e.row not in at:
            return e
        values = dict(zip(columns, at[e.row], strict=True))
        source = values.get(cols.source or "")
        return replace(
            e,
            id=values.get(cols.id or "", e.id) if e.id is None else e.id,
            source=e.source if e.source is not None or source is None else str(source),
            value=values[cols.label] if f.code in valued and e.value is None else e.value,
        )

    return [replace(f, examples=tuple(completed(f, e) for e in f.examples)) for f in findings]


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
