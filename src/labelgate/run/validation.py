"""The validation run: resolve inputs and columns, stream the labels once, run the checks, report."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from labelgate.checks import Context, run_checks
from labelgate.checks.section import check_section
from labelgate.contract import BOX_TASKS, Contract
from labelgate.core.environment import environment
from labelgate.core.report import Report
from labelgate.errors import InputError, UsageError
from labelgate.inputs.dataset import Dataset, open_dataset
from labelgate.inputs.resolved import Resolution
from labelgate.io import InputFile
from labelgate.run import tables
from labelgate.run.examples import completed_examples, named_files
from labelgate.run.frameworks import framework_background, framework_report, framework_rows
from labelgate.run.fwapplies import framework_applies, minival, repeated_ids
from labelgate.run.inputs import (
    DETECTION_BATCHES,
    as_given,
    as_unpacked,
    image_rows,
    read_input,
    unpacked_inputs,
    with_format,
)
from labelgate.run.producers import (
    duplicate_ids_on_dask_of,
    footers_on,
    scan_in_pieces,
    scan_sequentially,
)
from labelgate.run.readings import (
    named_ids,
    neutral_report,
    neutral_rows,
    readings,
    refused_report,
)
from labelgate.run.unusable import reject_boxes
from labelgate.scan.plan import supported
from labelgate.scan.result import ID_MEMORY

if TYPE_CHECKING:
    from labelgate.core.annotations import AnnotationFacts
    from labelgate.run.cache import FileCache

__all__ = ["Validation", "report_of", "run", "validate_in_context"]

Progress = Callable[[int, int | None], None]


def report_of(paths: list[str], contract: Contract, **options: Any) -> Report:
    """The report of ``run`` (same options); the run's files are released at once."""
    with run(paths, contract, **options) as done:
        return done.report


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
    _resources: ExitStack = field(default_factory=ExitStack, repr=False, compare=False)

    def close(self) -> None:
        """Release what the run made: the rows an annotation reader wrote (a temporary
        folder). The report stays readable; the dataset's files may not."""
        self._resources.close()

    def __enter__(self) -> Validation:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def validate_in_context(
    paths: list[str], contract: Contract, **options: Any
) -> tuple[Report, Context]:
    """The report and the checks' context of ``run`` (same options)."""
    with run(paths, contract, **options) as done:
        return done.report, done.context


def run(
    paths: Sequence[str | InputFile],
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
    found: Sequence[tuple[str, Any, str]] = (),
    cache: str | None = None,
) -> Validation:
    """Validate label files against a contract.

    Args:
        paths: files, directories or globs, read as one logical file in sorted path order, or
            a table held in memory (``labelgate.io.sources.held``).
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
            ``hf`` (see ``labelgate.readers``).
        background: the detection background index (torchvision: 0), whose use as a label is
            LG032.
        source_field: for COCO, the field of each annotation's image to use as its source
            (default: the file's name).
        found: what the caller found of the input (field, value, origin), where the contract
            does not say it: a DataFrame's label column, a Dataset's class names.
        cache: a folder keeping each Parquet file's partial result, so that a re-run reads only
            the files that changed (``labelgate.run.cache``).

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
    stack = ExitStack()
    unpacked = None
    try:
        unpacked = unpacked_inputs(paths, stack)  # stdin, .gz, .zst and .zip: read unpacked
        paths = unpacked.paths
        client = None
        if dask is not None:
            from labelgate.run.distributed import connect

            client = stack.enter_context(connect(dask))
        limit = None if max_examples == 0 else max_examples
        background = contract.background_index if background is None else background
        background, implied = framework_background(contract, background)
        store = None
        if cache is not None:
            from labelgate.run.cache import FileCache, for_input  # loaded only with --cache

            store = FileCache.at(cache)
        opened = read_input(
            paths,
            input_format,
            contract,
            background,
            limit,
            source_field,
            client,
            stack,
            progress,
            cache=store,
        )
        framework_applies(opened, contract)
        if opened is not None and opened.detected.reader.can("column"):
            contract = replace(contract, label_column=None)  # the reader read it into "label"
        resolution = Resolution(contract)
        if implied:
            resolution.found("background_index", background, implied)
        for name, value, origin in found:
            resolution.found(name, value, origin)
        facts = own = None
        if opened is not None:
            own = opened.read.class_map  # the format's own table, before any framework's reading
            if opened.format in ("masks", "coco") or opened.detected.reader.can("cache"):
                client = None  # the cluster read the masks, COCO blocks or shards; rows are local
            elif client is not None and opened.converted:
                if opened.facts is None or not opened.facts.counts.get("images_checked"):
                    raise UsageError(
                        "--dask reads Parquet tables, masks, COCO, TFRecord, WebDataset, MDS and "
                        "LitData shards and the images of a detection input; "
                        f"{opened.format} is read locally, and no "
                        "images of it were found to check (--images DIR names them)"
                    )
                client = None  # the cluster opened the images; the boxes are read here
            opened = framework_rows(opened, contract)
            if contract.framework is None:
                opened = neutral_rows(opened, contract)
            if opened.facts is not None and opened.facts.task == "detection":
                reject_boxes(opened.paths, opened.facts)  # no framework trains on them

            with_format(resolution, opened)
            paths, facts = opened.paths, opened.facts
        data = open_dataset(
            paths,
            contract,
            None if client is None else footers_on(client),
            resolution,
            images=image_rows(opened),
        )
        bg = background  # the one given, else the contract's, else the framework's
        task = data.contract.task if facts is None else facts.task  # a reader's, else the table's
        if bg is not None and task not in BOX_TASKS:
            raise UsageError(
                f"--background applies to detection inputs (an object labelled with it is "
                f"LG032), and this input's task is {task}: drop --background"
            )
        if bg is not None and data.k is not None and not 0 <= bg < data.k:
            raise UsageError(
                f"--background {bg} is no class index of K={data.k} (0..{data.k - 1}): the "
                "background is one of the model's classes; name it, or drop --background"
            )
        per_file = opened is not None and opened.read.ids_per_file and len(data.files) > 1
        done = _validate(
            data,
            max_examples,
            strict,
            progress,
            threads,
            in_pieces,
            client,
            id_memory,
            facts,
            ids_per_file=per_file,
            cache=None if store is None else for_input(store, opened),
        )
        if opened is not None:
            done = replace(done, report=as_given(done.report, opened))
        if contract.framework is not None:
            done = replace(done, report=framework_report(done.report, contract.framework, facts))
        if facts is not None and opened is not None:
            done = replace(done, report=refused_report(done.report, facts))
            if contract.framework is None and facts.task == "detection" and own is not None:
                dup = repeated_ids(done.report, facts)
                passes = ("detectron2",) if minival(done.report) else ()
                used = named_ids(done.report, facts)
                read = readings(own, opened.format, facts, contract.num_classes, dup, passes, used)
                report = neutral_report(done.report, read, done.context.contract, facts)
                done = replace(done, report=report)
    except InputError as exc:
        stack.close()
        raise exc if unpacked is None else unpacked.error(exc) from None
    except BaseException:
        stack.close()
        raise
    done = replace(done, report=as_unpacked(done.report, unpacked))
    if client is not None:  # the cluster is this call's alone: released now, not with the rows
        stack.close()
        stack = ExitStack()
    return replace(done, _resources=stack)


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
    *,
    ids_per_file: bool = False,
    cache: FileCache | None = None,
) -> Validation:
    """One scan and the checks; ``ids_per_file``: ids are unique within each file, not across
    them (COCO's annotation ids), so the duplicate-id check runs file by file."""
    contract, columns, files, schemas = data.contract, data.columns, data.files, data.schemas
    id_check = columns.id is not None and contract.severity.get("LG014") != "off"
    why_not = supported(data) if in_pieces else "sequential scan requested"
    if client is not None and why_not is not None:
        raise UsageError(f"--dask runs Parquet row groups as pieces, and here {why_not}")
    with ExitStack() as stack:
        keyed = None  # the ids, keyed by the scan's workers as they decode them (see scan.idkeys)
        # Ids are keyed as the scan decodes them; files taken from a cache are not decoded.
        keying = why_not is None and client is None and not ids_per_file
        keying = keying and (cache is None or not cache.for_scan)
        if keying and id_check and columns.id is not None:
            from labelgate.scan.idkeys import IdKeys
            from labelgate.scan.ids import integer_ids

            integer = integer_ids(data, columns.id)
            limit = None if max_examples == 0 else max_examples
            keyed = IdKeys(data.known_rows or 0, id_memory, integer=integer, limit=limit)
            stack.enter_context(keyed)
        if cache is not None and cache.for_scan and why_not is not None:
            cache.unused = why_not
        counted = None  # the predictions counted by the pieces, as they read the labels
        if why_not is None:
            usable = cache if cache is not None and cache.for_scan else None
            if contract.predictions is not None and client is None and usable is None:
                from labelgate.scan.witness import witness_in_pieces

                counted = witness_in_pieces(data, contract.predictions, limit=max_examples)
            scan = scan_in_pieces(
                data, max_examples, id_check, threads, progress, client, keyed, usable, counted
            )
        else:
            scan = scan_sequentially(data, max_examples, progress)
        duplicates = None
        if id_check and columns.id is not None and not scan.ids_increasing:
            from labelgate.scan.ids import duplicate_ids, duplicate_ids_per_file

            if ids_per_file:
                duplicates = duplicate_ids_per_file(
                    data, columns.id, scan, max_examples, memory=id_memory
                )
            elif client is None:
                duplicates = duplicate_ids(
                    data, columns.id, scan, max_examples, memory=id_memory, keyed=keyed
                )
            else:
                duplicates = duplicate_ids_on_dask_of(data, client, max_examples, id_memory, scan)
    label_type, task = str(data.label_type), data.task
    section = check_section(data, max_examples) if contract.pandera is not None else None
    ranks = None
    if contract.batching.distributed and data.plan.image is None:  # images: no empty batch
        from labelgate.scan.ranks import judge_data_ranks

        ranks = judge_data_ranks(data)
    witness = None
    if contract.predictions is not None:
        from labelgate.scan.witness import count_witness

        witness = count_witness(
            data, contract.predictions, scan, limit=max_examples, counted=counted
        )
    ctx = Context(
        scan,
        contract,
        files,
        label_type,
        task,
        duplicates,
        tables.names_seen(scan),
        section=section,
        annotations=facts,
        ranks=ranks,
        witness=witness,
    )
    findings = named_files(completed_examples(run_checks(ctx), data), files, scan.file_rows)
    classes = tables.class_table(ctx, facts)
    report = Report(
        findings=tuple(findings),
        counts=tables.counts(scan),
        input=tables.input_table(files, schemas, scan, label_type),
        environment=environment(),
        contract=contract.to_dict()
        | {"columns_found": columns.how, "resolved": data.resolved.provenance()},
        batches=tables.batch_summary(ctx),
        sources=tables.source_table(scan),
        classes=classes,
        classes_omitted=tables.classes_omitted(ctx, classes),
        notes=(
            *data.resolved.found(),
            *([witness.note()] if witness is not None else []),
            *tables.notes(columns, label_type, task, schemas[0], files),
            *(
                [DETECTION_BATCHES]
                if contract.task in BOX_TASKS and ctx.annotations is None
                else []
            ),
            *([] if cache is None else [cache.note()]),
        ),
        strict=strict,
        cache=None if cache is None else cache.summary(),
    )
    return Validation(report, ctx, data)
