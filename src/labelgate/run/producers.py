"""The scan's producers for one run: row groups as pieces (threads or a Dask cluster) or the
sequential scan, the duplicate-id pass on a cluster, and footers read where the shards are."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from labelgate.inputs.dataset import Dataset, Mapper
from labelgate.io import InputFile
from labelgate.io.stream import FileSchema
from labelgate.scan import ScanResult
from labelgate.scan.result import PER_BATCH_MAX

if TYPE_CHECKING:
    import pyarrow.parquet as pq

    from labelgate.run.cache import FileCache
    from labelgate.scan.idkeys import IdKeys
    from labelgate.scan.partial import Partial
    from labelgate.scan.plan import Piece, Spec
    from labelgate.scan.predslices import PieceWitness
    from labelgate.scan.result import DuplicateIds

__all__ = [
    "FOOTERS_ON_CLUSTER",
    "duplicate_ids_on_dask_of",
    "footers_on",
    "scan_in_pieces",
    "scan_sequentially",
]

Progress = Callable[[int, int | None], None]


def scan_sequentially(data: Dataset, max_examples: int, progress: Progress | None) -> ScanResult:
    from labelgate.scan.chunks import Chunk
    from labelgate.scan.sequential import Scan  # text inputs and the tasks pieces lack

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


def scan_in_pieces(
    data: Dataset,
    max_examples: int,
    id_check: bool,
    threads: int | None,
    progress: Progress | None,
    client: Any = None,
    keyed: IdKeys | None = None,
    cache: FileCache | None = None,
    witness: PieceWitness | None = None,
) -> ScanResult:
    """Row groups in parallel, partial results merged in order (see ``labelgate.scan``);
    on a Dask cluster through ``client`` (see ``labelgate.run.distributed``); with ``cache``,
    only the files whose partial it lacks (see ``labelgate.run.cache``); on threads, the rows
    counted against their predictions in ``witness`` as they are read."""
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
    if cache is not None:
        from labelgate.run.cache import scan_cached

        merged = scan_cached(
            cache,
            data,
            pieces,
            spec,
            metadata,
            read=_file_reader(spec, metadata, threads or threads_default(), client),
            compact=compact,
            progress=report,
        )
    elif client is not None:
        from labelgate.run.distributed import run_on_dask

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
            witness=witness,
        )
    return result_of(merged, spec, data.plan, len(data.files), complete=compact is None)


def _file_reader(
    spec: Spec, metadata: list[pq.FileMetaData], threads: int, client: Any
) -> Callable[[list[Piece]], Iterator[tuple[int, Partial]]]:
    """What reads the files a cache lacks: each file's pieces, on threads or one task per file
    on the cluster, yielding (file index, its partial) in order."""

    def on_threads(pieces: list[Piece]) -> Iterator[tuple[int, Partial]]:
        from labelgate.scan.runner import run_by_file

        return run_by_file(pieces, spec, metadata, threads=threads)

    def on_cluster(pieces: list[Piece]) -> Iterator[tuple[int, Partial]]:
        from functools import partial

        from labelgate.run.distributed import cluster_map, scan_group

        files: dict[int, list[Piece]] = {}
        for p in pieces:
            files.setdefault(p.file_index, []).append(p)
        done = cluster_map(client, partial(scan_group, spec=spec), list(files.values()))
        return zip(files, done, strict=True)

    return on_threads if client is None else on_cluster


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


def duplicate_ids_on_dask_of(
    data: Dataset, client: Any, max_examples: int, memory: int, scan: ScanResult
) -> DuplicateIds:
    """LG014 with its ids partitioned by key across the cluster's workers (see
    ``labelgate.run.distributed.duplicate_ids_on_dask``)."""
    from labelgate.run.distributed import duplicate_ids_on_dask
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


FOOTERS_ON_CLUSTER = 64  # shards from which the cluster, not the driver, reads the footers


def footers_on(client: Any) -> Mapper:
    """Read footers on the cluster when there are many shards, else on the driver's threads."""
    from labelgate.inputs.dataset import read_schemas
    from labelgate.run.distributed import cluster_map

    def mapper(fn: Callable[[InputFile], FileSchema], files: list[InputFile]) -> list[FileSchema]:
        if len(files) < FOOTERS_ON_CLUSTER:
            return read_schemas(files)
        return cluster_map(client, fn, files)

    return mapper
