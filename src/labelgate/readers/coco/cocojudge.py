"""The worker's side of a large COCO read in blocks (``readers/coco/cocoblocks.py``): a task's byte
ranges of annotations read as columns by Arrow (``readers/coco/cocoarrow.py``; a block Arrow does not
read, parsed by orjson), the usual annotations cleared in bulk (``readers/coco/cocofast.py``) and the
others judged by the reader's per-annotation function, in order; its rows, hits and tallies sent
back as one ``Partial``."""

from __future__ import annotations

import gc
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from labelgate.core.annotations import AnnotationFacts, Hits
from labelgate.core.codes import Code
from labelgate.core.report import Example
from labelgate.readers.coco.cocoarrow import bounded, clear_block, shallow, short
from labelgate.readers.coco.cocofast import Cleared, ImageSizes, ImageTable, clear
from labelgate.readers.coco.cocoshapes import CocoShapes
from labelgate.readers.common import arrowcols
from labelgate.readers.common.arrowcols import ints, repeated
from labelgate.readers.common.boxsizes import BoxSizes
from labelgate.readers.common.imageindex import GroupCodes
from labelgate.readers.common.ordered import Results, in_order
from labelgate.readers.common.sink import RowWriter

__all__ = ["Partial", "Tallies", "Task", "judge", "no_gc", "parse", "run_tasks"]


Boxes = list[tuple[tuple[float, float, float, float], Any, Example]]


@dataclass(slots=True)
class Tallies:
    """What the per-annotation function fills, for one range of annotations or the whole file."""

    used: Counter[Any] = field(default_factory=Counter)
    first_of: dict[Any, Example] = field(default_factory=dict)
    unlisted: tuple[dict[Any, list[Example]], Counter[Any]] = field(
        default_factory=lambda: ({}, Counter())
    )
    deferred: Boxes = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)


@dataclass(frozen=True, slots=True)
class Task:
    """One worker's share: byte ranges of annotations and what judging them needs."""

    path: str
    ranges: list[tuple[int, int]]
    images: Mapping[Any, tuple[float, float] | None]
    sources: dict[Any, str] | None
    source: str
    background: int | None
    limit: int | None
    annotate: Callable[..., None]
    key: Callable[[Any], Any]
    shapes: CocoShapes | None = None  # masks and keypoints: the keypoint names known
    inherited: int = 0  # the tables are the forking parent's, under this number (images empty)


@dataclass(frozen=True, slots=True)
class Partial:
    """A task's result: its rows (column lists, in order), its hits and its tallies; ``ok``
    false where a block did not parse as objects (the whole file is then read sequentially)."""

    ok: bool
    rows: int = 0
    tables: list[Any] = field(default_factory=list)  # pyarrow tables of the writer's schema
    hits: dict[Code, Hits] = field(default_factory=dict)
    tallies: Tallies = field(default_factory=Tallies)
    groups: GroupCodes = field(default_factory=GroupCodes)  # each row's image, in order
    shapes: CocoShapes | None = None  # masks and keypoints waiting for the whole file
    seen: dict[str, set[tuple[Any, Any]]] = field(default_factory=dict)  # records counted
    rejected: dict[int, str] = field(default_factory=dict)  # row -> the code rejecting it
    sizes: BoxSizes = field(default_factory=BoxSizes)  # the boxes' sizes per class


class _Collected(RowWriter):
    """A writer that keeps its rows as Arrow tables (a worker's, sent back to the parent)."""

    def __init__(self) -> None:
        super().__init__(Path(os.devnull), id_type="int")
        self.tables: list[Any] = []

    def cleared(self, found: Cleared, start: int, end: int, source: str) -> None:
        """Append the annotations ``start:end`` of a block, all cleared (``cocofast``)."""
        import pyarrow as pa

        count = end - start
        columns = [ints(found.ids[start:end]), ints(found.categories[start:end])]
        self._hold(pa.Table.from_arrays([*columns, repeated(source, count)], schema=self.schema))
        self.groups.extend_codes(found.codes[start:end])
        box = found.box[start:end]
        self.sizes.extend(found.categories[start:end], box[:, 2], box[:, 3])
        self.rows += count

    def _table(self, columns: dict[str, list[Any]]) -> Any:
        return arrowcols.table(columns, self.schema)  # from buffers: no pandas in the worker

    def _flush(self, *, whole: bool = False) -> None:
        self._hold()
        self.tables.extend(self._held)
        self._held, self._held_rows = [], 0

    def close(self) -> None:
        self._flush(whole=True)


@contextmanager
def no_gc() -> Iterator[None]:
    """The cycle collector paused while millions of acyclic objects are built (it would scan
    them again and again: three times the parse); restored as it was."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def parse(data: bytes, path: str) -> list[Any] | None:
    """The elements of one block, or ``None`` where it is not whole elements of valid JSON, nests
    deeper than the limit or holds a number orjson reads otherwise (the sequential read then
    words the problem)."""
    return _objects(data) if bounded(data, path) else None


def _objects(data: bytes) -> list[Any] | None:
    """The elements of a block already ``bounded`` (``shallow`` and ``short``), or ``None``
    where orjson refuses them."""
    import orjson

    try:
        items = orjson.loads(b"[" + data + b"]")
    except orjson.JSONDecodeError:
        return None
    return items if isinstance(items, list) else None


def judge(task: Task) -> Partial:
    """Parse and judge a task's annotations (in a worker process, a Dask task or inline)."""
    facts = AnnotationFacts("coco", "", limit=task.limit)
    tallies = Tallies()
    writer = _Collected()
    name = task.path  # the images' key, as the parent's (coco.read_coco)
    images: Mapping[Any, tuple[float, float] | None] = task.images
    sources = task.sources
    if task.inherited:
        images, sources = _INHERITED[task.inherited]
    table = _table(task.inherited, images)
    find = table.find  # the codes the parent seeds, without their keys (and no dict of them)

    def listed(key: Any) -> int | None:
        return find(key[1]) if key[0] == name else None

    writer.groups.expect(len(table), listed)
    shapes = None if task.shapes is None else task.shapes.worker(facts)
    unlisted = tallies.unlisted
    bg = task.background

    def annotate(item: dict[str, Any]) -> None:
        source = task.source
        if sources is not None:
            source = sources.get(task.key(item.get("image_id")), source)
        task.annotate(
            item,
            writer,
            facts,
            source,
            images,
            tallies.used,
            tallies.first_of,
            unlisted,
            tallies.deferred,
            tallies.counts,
            task.background,
            name,  # rows name their image as the image table does
            shapes,
        )

    with no_gc(), Path(task.path).open("rb") as f:
        for start, end in task.ranges:
            f.seek(start)
            data = f.read(end - start)
            if not shallow(data, task.path):
                return Partial(ok=False)
            found: Cleared | None = None
            fast = None if sources is not None else clear_block(data, table, tallies.used, bg)
            if fast is not None:  # read as columns (Arrow)
                found, lines = fast
                element: Callable[[int], Any] = lines.element
            else:  # read as objects (orjson), the block shallow, its digits looked at here
                items = _objects(data) if short(data) else None
                if items is None or not all(type(item) is dict for item in items):
                    return Partial(ok=False)
                element = items.__getitem__
                if sources is None:
                    found = clear(items, table, tallies.used, bg)
                if found is None:
                    for item in items:
                        annotate(item)
                    continue
            done = 0  # the cleared runs appended whole, the others judged in their place
            count = len(found.mask)
            for at in [*np.flatnonzero(~found.mask).tolist(), count]:
                if at > done:
                    writer.cleared(found, done, at, task.source)
                if at < count:
                    item = element(at)
                    if type(item) is not dict:
                        return Partial(ok=False)
                    annotate(item)
                done = at + 1
            found.count(tallies.used)
        writer.close()
    if shapes is not None:
        shapes.facts = AnnotationFacts("coco", "")  # sent back without the hits sent already
    return Partial(
        True,
        writer.rows,
        writer.tables,
        facts.hits,
        tallies,
        writer.groups,
        shapes,
        facts.seen,
        writer.rejected,
        writer.sizes,
    )


def run_tasks(
    tasks: list[Task], cluster: Callable[..., Any] | None, workers: int | None
) -> Results[Partial]:
    """Each task's partial, in order: on the cluster, in worker processes, or inline; started
    before this returns (the parent may record its images meanwhile)."""
    import pyarrow.compute  # noqa: F401  # before the workers fork: imported once, not in each

    workers = workers or len(os.sched_getaffinity(0))
    if len(tasks) < 2:
        workers = 1
    if cluster is not None or not tasks or not sys.platform.startswith("linux"):
        return in_order(judge, tasks, workers, cluster=cluster, window=8)
    return _Inheriting(tasks, workers)


AHEAD = 2  # tasks submitted per worker: one waiting while the parent merges a part

_INHERITED: dict[int, tuple[Mapping[Any, Any], dict[Any, str] | None]] = {}
_TABLES: dict[int, ImageTable] = {}  # a worker process's image table of each file, made once


class _Inheriting:
    """The tasks run without their image tables: the worker processes, forked (Linux) after the
    tables are left here, find them as the parent left them (a 200,000-image table pickled,
    sent and rebuilt for each task cost a tenth of a second a task); let go when closed."""

    def __init__(self, tasks: list[Task], workers: int) -> None:
        self._number = number = max(_INHERITED, default=0) + 1
        _INHERITED[number] = (tasks[0].images, tasks[0].sources)
        self._parts: Results[Partial] | None = None
        light = [replace(t, images={}, sources=None, inherited=number) for t in tasks]
        try:
            self._parts = in_order(judge, light, workers, window=8, ahead=AHEAD * workers)
        except BaseException:
            self.close()
            raise

    def __iter__(self) -> Iterator[Partial]:
        return self

    def __next__(self) -> Partial:
        try:
            if self._parts is None:
                raise StopIteration
            return next(self._parts)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        parts, self._parts = self._parts, None
        if parts is not None:
            parts.close()
        _INHERITED.pop(self._number, None)
        _TABLES.pop(self._number, None)


def _table(inherited: int, images: Mapping[Any, tuple[float, float] | None]) -> ImageTable:
    """The image table of a task's file: the one read as columns, or made once per worker
    process for inherited tables."""
    if isinstance(images, ImageSizes):
        return images.table
    if not inherited:
        return ImageTable.of(images)
    table = _TABLES.get(inherited)
    if table is None:
        table = _TABLES[inherited] = ImageTable.of(images)
    return table
