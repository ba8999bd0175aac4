"""A shard read on its own: its rows and what it found, with rows counted from 0. Made inline, on a
Dask worker (one task per shard) or taken from the cache (``shardcache``), each part is then added
to the run's rows in the shards' order as if its shard had been read there: its rows after the
rows before, its findings' rows moved by as many, so the report is the sequential read's.

A reader settles on the driver what depends on more than one shard (the label field, from the
first records) before any part is made; a part depends on its shard's bytes and that alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from labelgate.core.annotations import AnnotationFacts
from labelgate.readers.common.ordered import in_order
from labelgate.readers.common.sink import RowSink
from labelgate.readers.shards.listing import Shard
from labelgate.readers.shards.rows import LabelRows, Part

if TYPE_CHECKING:
    import pyarrow as pa

    from labelgate.readers.base import ReadOptions, ShardCache

__all__ = ["Part", "add_parts", "make_part"]

Job = Callable[[Shard, LabelRows], None]


class _Held(RowSink):
    """A sink keeping its one stream of batches in memory (a part's rows)."""

    def __init__(self) -> None:
        super().__init__(Path())
        self.held: list[pa.RecordBatch] = []
        self.schema: pa.Schema | None = None

    def batches(self, schema: pa.Schema) -> Any:
        self.schema = schema
        return self

    def write_batch(self, batch: pa.RecordBatch) -> None:
        self.held.append(batch)


def make_part(shard: Shard, *, job: Job, column: str, names: str | None, limit: int | None) -> Part:
    """``job`` run on one shard into rows of their own (runs on a worker)."""
    import pyarrow as pa

    facts = AnnotationFacts("", "", limit=limit)
    sink = _Held()
    rows = LabelRows(sink, facts, column, names=names)
    job(shard, rows)
    rows.close()
    assert sink.schema is not None
    return Part(
        pa.Table.from_batches(sink.held, sink.schema),
        dict(sink.batch_rejected),
        dict(facts.hits),
        {code: list(facts.seen.get(code, ())) for code in facts.hits},
        dict(facts.counts),
    )


def add_parts(
    shards: Sequence[Shard],
    job: Job,
    rows: LabelRows,
    *,
    rules: dict[str, Any],
    options: ReadOptions,
) -> None:
    """Each shard's part (``job``) added to ``rows`` in the shards' order: made on the cluster,
    or taken from the cache, where ``options`` gives one."""
    for part in _parts(
        shards, job, rows, rules=rules, cluster=options.cluster, cache=options.cache
    ):
        rows.extend(part)


def _parts(
    shards: Sequence[Shard],
    job: Job,
    rows: LabelRows,
    *,
    rules: dict[str, Any],
    cluster: Callable[..., Any] | None = None,
    cache: ShardCache | None = None,
) -> Iterator[Part]:
    """Each shard's part, in the shards' order: from ``cache`` where it holds the shard's bytes
    under ``rules`` (what else the part depends on: the format, the label field...), else made
    by ``job`` (on ``cluster`` where given, one task per shard) and kept in the cache."""
    make = partial(
        make_part,
        job=job,
        column=rows.column,
        names=rows.schema.names[3] if len(rows.schema) > 3 else None,
        limit=rows.facts.limit,
    )
    if cache is None:
        yield from in_order(make, list(shards), 1, cluster=cluster, window=16)
        return
    from labelgate.readers.shards.shardcache import keyed, load, store

    keys = [keyed(shard, rules) for shard in shards]
    found = [load(cache, key, rows.schema) for key in keys]
    todo = [shard for shard, part in zip(shards, found, strict=True) if part is None]
    made = iter(in_order(make, todo, 1, cluster=cluster, window=16))
    for shard, key, part in zip(shards, keys, found, strict=True):
        cache.files.append(
            {
                "path": shard.name,
                "content": key.content,
                "from": "read" if part is None else "cache",
            }
        )
        if part is None:
            part = next(made)
            store(cache, key, shard, part)
        yield part
