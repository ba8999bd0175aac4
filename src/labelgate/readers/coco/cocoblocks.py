"""A large COCO file read at its parser's speed: the top-level arrays cut into blocks of whole
elements (``readers/coco/cocolayout.py``), each block read as columns by Arrow (or parsed by orjson)
and judged in worker processes or Dask tasks (``readers/coco/cocojudge.py``), the partial tallies
merged in file order, so every count, example and message is the one the sequential read gives.
The images are read as columns too (``readers/coco/cocoarrow.py``): the workers start on their table
while this process records them.

What the fast path does not know (a file too small to be worth it, panoptic segments, the
annotations before the images, a block that does not parse, an entry that is no object) it gives
back (``None``), and the reader reads the file the sequential way, errors and all.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import closing, contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from labelgate.core.annotations import AnnotationFacts
from labelgate.readers.coco.cocoarrow import ImageColumns, image_columns
from labelgate.readers.coco.cocofast import ImageSizes
from labelgate.readers.coco.cocojudge import Partial, Tallies, Task, no_gc, run_tasks
from labelgate.readers.coco.cocojudge import parse as _parse
from labelgate.readers.coco.cocolayout import Layout, blocks, find_layout, release
from labelgate.readers.coco.cocoshapes import CocoShapes
from labelgate.readers.common.imageindex import GroupCodes, ImageIndex
from labelgate.readers.common.memory import trim_heap
from labelgate.readers.common.ordered import Results
from labelgate.readers.common.replay import replay
from labelgate.readers.common.replay import shifted as _shifted
from labelgate.readers.common.sink import RowSink, RowWriter

__all__ = ["BLOCK", "FAST_FROM", "read_blocks"]

FAST_FROM = 0  # bytes: any file with content (a 1 MB file: 0.04 s in blocks, 0.14 s sequentially)
BLOCK = 4 << 20  # bytes parsed at once: their objects stay in the tens of megabytes
OVERSIZE = 8  # a block this many times BLOCK: not parsed whole, the file read sequentially
TASK = 48 << 20  # bytes of annotations per task at most: its rows travel back at once
DEFERRED = 1_000_000  # boxes of unlisted images kept for the end (as the sequential read)


def merge(into: Tallies, part: Tallies, base: int) -> None:
    """Add one range's tallies to the file's, its rows moved by ``base``."""
    into.used.update(part.used)
    for cid, example in part.first_of.items():
        into.first_of.setdefault(cid, _shifted(example, base))
    for image, examples in part.unlisted[0].items():
        kept = into.unlisted[0].setdefault(image, [])
        kept.extend(_shifted(e, base) for e in examples[: max(0, 3 - len(kept))])
    into.unlisted[1].update(part.unlisted[1])
    room = max(0, DEFERRED - len(into.deferred))
    into.deferred.extend((box, im, _shifted(e, base)) for box, im, e in part.deferred[:room])
    into.counts.update(part.counts)


def _elements(view: Any, layout: Layout, key: str, path: str, size: int) -> Iterator[Any]:
    """The elements of an array (images, categories) a block at a time, each block's pages
    released once parsed; ``None`` for a block that does not parse."""
    for start, end in blocks(view, *layout.arrays[key], size):
        if end - start > OVERSIZE * size:
            yield None
            return
        items = _parse(bytes(view[start:end]), path)
        release(view, start, end)
        yield items


@contextmanager
def _mapped(path: Path) -> Iterator[Any]:
    """The file's bytes mapped read-only, or ``None`` where they cannot be (a file system that
    does not map, a file emptied since it was looked at): the sequential read then reads it."""
    import mmap

    with path.open("rb") as f:
        try:
            view = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):
            yield None
            return
        with view:
            yield view


def _heads(
    view: Any,
    layout: Layout,
    keys: Sequence[str],
    handlers: Mapping[str, Callable[[dict[str, Any]], None]],
    path: str,
    size: int,
) -> bool:
    """The arrays before the annotations (``keys``) through their handlers, a block at a time
    (no block outlives this call); false where a block does not parse."""
    with no_gc():
        for key in keys:
            for items in _elements(view, layout, key, path, size):
                if items is None:
                    return False
                for item in items:
                    if type(item) is dict:  # the sequential head pass builds objects only
                        handlers[key](item)
    return True


PREMADE = 64 << 20  # bytes of images read as columns at once, at most


def _premade(view: Any, layout: Layout) -> ImageColumns | None:
    """The images array read as columns (``cocoarrow.image_columns``) where it is not too large
    and reads so; ``None``: the images are for their handler, one by one."""
    start, end = layout.arrays["images"]
    if end - start > PREMADE:
        return None
    found = image_columns(bytes(view[start:end]))
    release(view, start, end)
    return found


def read_blocks(
    path: Path,
    sink: RowSink,
    facts: AnnotationFacts,
    handlers: Mapping[str, Callable[[dict[str, Any]], None]],
    job: tuple[Callable[..., None], Callable[[Any], Any]],
    tables: tuple[Mapping[Any, tuple[float, float] | None], dict[Any, str] | None],
    into: Tallies,
    source: str,
    background: int | None,
    *,
    cluster: Callable[..., Any] | None = None,
    workers: int | None = None,
    least: int | None = None,
    size: int | None = None,
    shapes: CocoShapes | None = None,
    all_images: Callable[[ImageColumns, Mapping[Any, Any]], None] | None = None,
    progress: Callable[[int, int | None], None] | None = None,
) -> RowWriter | None:
    """Read ``path`` the fast way: the image and category handlers called on each entry (or
    ``all_images`` on the images read as columns, all at once, with their sizes to look up in
    place of the handler's), the
    annotations judged by ``job`` (the per-annotation function and the key of an image id)
    against ``tables`` (image sizes, sources) in ``into``, hits added to ``facts``;
    ``progress`` told the bytes of the file judged as each task's part comes back.

    Returns:
        the writer holding the rows (closed by the caller), or ``None``: the file is for the
        sequential read, and the handlers may have been called (the caller forgets what they
        kept). ``facts`` and ``into`` are changed only when a writer is returned.

    Raises:
        InputError: what a handler raises, where the sequential read raises it too.
    """
    least = FAST_FROM if least is None else least
    size = BLOCK if size is None else size
    listed = len(sink.images)  # the images of the files read before this one
    if cluster is None and path.stat().st_size < max(least, 1):
        return None
    with _mapped(path) as view:
        if view is None:
            return None
        layout = find_layout(view)
        if layout is None or ("images" in layout.arrays and layout.before("annotations", "images")):
            return None
        cuts = blocks(view, *layout.arrays["annotations"], size)
        if any(end - start > OVERSIZE * size for start, end in cuts):
            return None  # no cut for long (one huge entry, entries that are no objects)
        first = blocks(view, cuts[0][0], cuts[0][1], 1, most=1)[0] if cuts else (0, 0)
        items = _parse(bytes(view[first[0] : first[1]]), str(path)) if cuts else None
        if not items or type(items[0]) is not dict or "segments_info" in items[0]:
            return None  # no annotations, or panoptic segments: keyed image/segment
        present = [k for k in ("images", "categories") if k in layout.arrays]
        early = [k for k in present if layout.before(k, "annotations")]
        premade = None
        if "images" in early and all_images is not None and tables[1] is None:
            premade = _premade(view, layout)  # recorded once the workers have started
        if premade is not None:  # the workers and the reader look the images up in its table
            tables = (ImageSizes(premade.table()), None)
        rest = [k for k in early if k != "images" or premade is None]
        if not _heads(view, layout, rest, handlers, str(path), size):
            return None
    own = AnnotationFacts(facts.format, facts.why, limit=facts.limit)
    tallies = Tallies()
    tasks = _tasks(path, cuts, job, tables, source, background, facts.limit, workers)
    if shapes is not None:
        tasks = [replace(t, shapes=shapes.worker(AnnotationFacts("coco", ""))) for t in tasks]
    writer = RowWriter(sink.folder / f"coco-{len(sink.paths)}.parquet", id_type="int")
    try:
        with closing(_run(tasks, cluster, workers)) as parts:
            if premade is not None and all_images is not None:
                with no_gc():  # 600,000 new tuples: the collector would scan them again and again
                    all_images(premade, tables[0])  # recorded while the workers judge
            _expect(writer.groups, sink.images, listed, str(path), tables[0])
            total = path.stat().st_size
            for task, part in zip(tasks, parts, strict=False):
                if progress is not None:
                    progress(task.ranges[-1][1] if task.ranges else total, total)
                if not part.ok:
                    _abandon(writer)
                    return None
                base = writer.rows
                with no_gc():
                    for table in part.tables:
                        writer.extend_table(table)
                    writer.rejected.update((base + r, c) for r, c in part.rejected.items())
                    writer.groups.extend(part.groups, sink.images.canonical)
                    writer.sizes.merge(part.sizes)
                    if shapes is not None and part.shapes is not None:
                        shapes.adopt(part.shapes, functools.partial(_shifted, base=base))
                    for code, hits in part.hits.items():
                        replay(own, code, hits, base, part.seen.get(code))
                    merge(tallies, part.tallies, base)
                del part
                trim_heap()  # each part unpickled leaves megabytes of freed heap behind
            if progress is not None:
                progress(total, total)  # what follows the annotations is read at once
        late = [k for k in present if k not in early]  # categories after the annotations
        with _mapped(path) as view:
            if view is None:
                _abandon(writer)
                return None
            for key in late:
                for items in _elements(view, layout, key, str(path), size):
                    if items is None:
                        _abandon(writer)
                        return None
                    for item in items:  # every entry, as the sequential read's last pass
                        handlers[key](item)
    except BaseException:
        _abandon(writer)
        raise
    for code, hits in own.hits.items():
        replay(facts, code, hits, 0, own.seen.get(code))
    merge(into, tallies, 0)
    sink.adopt(writer)
    return writer


def _expect(
    groups: GroupCodes, index: ImageIndex, before: int, name: str, images: Mapping[Any, Any]
) -> None:
    """Seed the parent's codes as each task expects them (``images``' keys in order). When
    every listed image was new to ``index`` (no other file of the run listed the same file name
    and id), its position there is its code: the index's own table serves, no second one."""
    count = len(index) - before
    if count != len(images):
        groups.seed((name, key) for key in images)
        return

    def listed(key: Any) -> int | None:
        at = index.position(key)
        return None if at is None or at < before else at - before

    def key(code: int) -> Any:
        return index.records[before + code].key

    groups.expect(count, listed, key, indexed=before)


def _abandon(writer: RowWriter) -> None:
    """Drop the rows of a fast read given up (the sequential read writes its own)."""
    writer.close()
    writer.path.unlink(missing_ok=True)


def _tasks(
    path: Path,
    cuts: list[tuple[int, int]],
    job: tuple[Callable[..., None], Callable[[Any], Any]],
    tables: tuple[Mapping[Any, tuple[float, float] | None], dict[Any, str] | None],
    source: str,
    background: int | None,
    limit: int | None,
    workers: int | None,
) -> list[Task]:
    """The blocks in a few tasks per worker (the image table travels once per task), none of
    more than ``TASK`` bytes (its rows come back at once)."""
    per = -(-len(cuts) // (4 * (workers or len(os.sched_getaffinity(0)))))
    per = max(1, min(per, TASK // max(1, cuts[0][1] - cuts[0][0]) if cuts else 1))
    return [
        Task(str(path), cuts[i : i + per], *tables, source, background, limit, *job)
        for i in range(0, len(cuts), per)
    ]


def _run(
    tasks: list[Task], cluster: Callable[..., Any] | None, workers: int | None
) -> Results[Partial]:
    """Each task's partial, in order (``cocojudge.run_tasks``), started."""
    return run_tasks(tasks, cluster, workers)
