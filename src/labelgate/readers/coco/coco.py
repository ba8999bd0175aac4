"""COCO JSON (instances, keypoints, panoptic): streamed with ijson, never loaded whole.

Rows are annotations (panoptic: segments): id = the annotation id (panoptic: ``image/segment``),
label = the category id as written, source = the JSON file's name (or its split's:
``readers/coco/cocofiles.py``). The category table is the class map (index = category id). One pass:
images and categories may come before or after the annotations, so what needs them (boxes against
image sizes, categories not in the table, images not listed) is settled at the end from small
per-id tallies.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Container, Mapping
from pathlib import Path
from typing import Any

from labelgate.contract.classmap import ClassMap
from labelgate.core.annotations import AnnotationFacts
from labelgate.core.report import Example
from labelgate.errors import InputError
from labelgate.io.bounded import READ_SIZE, guarded_stream
from labelgate.readers.coco.cocoannotation import NUMBERS, annotation, tally_key
from labelgate.readers.coco.cocoarrow import ImageColumns, record_images
from labelgate.readers.coco.cocoblocks import read_blocks
from labelgate.readers.coco.cocojudge import Tallies
from labelgate.readers.coco.cocolayout import not_json
from labelgate.readers.coco.cocoshapes import CocoShapes
from labelgate.readers.common.boxes import check_box
from labelgate.readers.common.imageindex import ImageRecord
from labelgate.readers.common.layout import looks_like_coco
from labelgate.readers.common.sink import RowSink, RowWriter

__all__ = ["looks_like_coco", "read_coco"]


def read_coco(
    path: Path,
    sink: RowSink,
    facts: AnnotationFacts,
    background: int | None,
    source_field: str | None = None,
    task: str | None = None,
    *,
    cluster: Callable[..., Any] | None = None,
    least: int | None = None,
    block: int | None = None,
    workers: int | None = None,
    source_name: str | None = None,
    progress: Callable[[int, int | None], None] | None = None,
) -> ClassMap | None:
    """Stream ``path`` into rows in ``sink``; the source of a row is ``source_name`` (default the
    file's name: a split's, where several files share one), or with ``source_field`` that field
    of the annotation's image (``file_name``, ``license``...).
    Masks and keypoints are judged too (readers/coco/cocoshapes.py; ``task``: the one named).

    A file of ``least`` bytes or more (default ``cocoblocks.FAST_FROM``: any file that is not
    empty; any file with ``cluster``, a Dask map) is read in blocks of about ``block`` bytes
    on ``workers`` processes (default: the cores; inline for a single block) or the cluster
    (``readers/coco/cocoblocks.py``), where its layout allows; the report is the same.
    ``progress`` hears of the bytes read as the annotations are (the blocks judged).

    Raises:
        InputError: the file is not valid JSON, or not COCO.
    """
    import ijson

    facts.task = "detection"
    sink.images.sort = True  # torchvision's CocoDetection and detectron2 sort the image ids
    # Annotation ids are integers; panoptic segments are keyed ``image/segment`` (a segment id
    # is unique only within its image), so the first annotation decides the id column's type.
    writer: RowWriter | None = None
    source = path.name if source_name is None else source_name
    images: dict[Any, tuple[float, float] | None] = {}
    sources: dict[Any, str] | None = None if source_field is None else {}
    categories: list[tuple[int, str]] = []
    parents: set[str] = set()  # names given as another category's supercategory
    used: Counter[Any] = Counter()  # category id -> annotations naming it
    first_of: dict[Any, Example] = {}  # category id -> its first annotation
    missing_image: dict[Any, list[Example]] = {}  # image id not yet listed -> first annotations
    image_refs: Counter[Any] = Counter()  # image id not yet listed -> annotations naming it
    deferred: list[tuple[tuple[float, float, float, float], Any, Example]] = []  # before images
    counts: Counter[str] = Counter()
    doubled: Counter[Any] = Counter()  # image id listed more than once -> its repeats
    shapes = CocoShapes(facts, task)

    name = str(path)  # the images' key: files of one name (Roboflow's splits) list other images
    add = sink.images.add
    sizes: dict[tuple[float, float], tuple[float, float]] = {}

    def image(item: dict[str, Any]) -> None:  # once per listed image: kept lean
        if type(item) is not dict:
            raise InputError("an entry of images is not a JSON object", path=str(path))
        key = tally_key(item.get("id"))
        if sources is not None:
            value = item.get(source_field or "")
            sources[key] = "" if value is None else str(value)
            counts["images_with_source_field"] += value is not None
        w: Any = item.get("width")
        h: Any = item.get("height")
        size = (float(w), float(h)) if type(w) in NUMBERS and type(h) in NUMBERS else None
        if size is not None:
            size = sizes.setdefault(size, size)  # one tuple per distinct size, not per image
        if key in images:
            doubled[key] += 1
        images[key] = size  # the last image of an id stands, as in pycocotools' index
        counts["images"] += 1
        file = item.get("file_name")
        add(
            ImageRecord(
                (name, key), f"image {key}", file if type(file) is str else None, size, path
            )
        )

    def category(item: dict[str, Any]) -> None:
        if not isinstance(item, dict):
            raise InputError("an entry of categories is not a JSON object", path=str(path))
        cid, name = item.get("id"), item.get("name")
        if not isinstance(cid, int) or isinstance(cid, bool):
            raise InputError(f"category {cid!r} has no integer id", path=str(path))
        categories.append((cid, str(name)))
        parent = item.get("supercategory")
        if isinstance(parent, str) and parent not in _NO_PARENT and parent != name:
            parents.add(parent)
        shapes.category(item)

    known: list[Mapping[Any, tuple[float, float] | None]] = []  # sizes read as columns

    def all_images(found: ImageColumns, sized: Mapping[Any, Any]) -> None:  # at once
        counts["images"] += record_images(found, sizes, sink.images, name, path)
        known.append(sized)

    handlers = {"images": image, "categories": category}
    into = Tallies(used, first_of, (missing_image, image_refs), deferred, counts)
    writer = read_blocks(
        path,
        sink,
        facts,
        handlers,
        (annotation, tally_key),
        (images, sources),
        into,
        source,
        background,
        cluster=cluster,
        workers=workers,
        least=least,
        size=block,
        shapes=shapes,
        all_images=all_images,
        progress=progress,
    )
    if writer is not None:
        listed = known[0] if known else images
        tables = (listed, categories, parents)
        return _finish(path, writer, facts, tables, into, shapes, (doubled, source))
    # what a fast read gave up on had been read by the handlers: the sequential read starts clean
    images.clear()
    categories.clear()
    parents.clear()
    counts.clear()
    doubled.clear()
    shapes.forget()
    if sources is not None:
        sources.clear()
    try:
        # The arrays before "annotations" (usually images) in one pass of Python events that
        # stops there; the annotations with ijson's C item builder; an array that comes after
        # them (usually categories) in one more C pass.
        with path.open("rb") as f:
            done: set[str] = set()
            for key, item in _head(
                ijson.parse(guarded_stream(f, str(path)), use_float=True, buf_size=READ_SIZE), done
            ):
                handlers[key](item)
        with path.open("rb") as f:
            total = path.stat().st_size
            told = None if progress is None else (lambda n: progress(n, total))
            stream = guarded_stream(f, str(path), progress=told)
            for item in ijson.items(stream, "annotations.item", use_float=True, buf_size=READ_SIZE):
                if not isinstance(item, dict):
                    raise InputError("an entry of annotations is not a JSON object", path=str(path))
                if writer is None:
                    panoptic = "segments_info" in item
                    writer = sink.rows(id_type="string" if panoptic else "int")
                annotation(
                    item,
                    writer,
                    facts,
                    source
                    if sources is None
                    else sources.get(tally_key(item.get("image_id")), source),
                    images,
                    used,
                    first_of,
                    (missing_image, image_refs),
                    deferred,
                    counts,
                    background,
                    name,
                    shapes,
                )
        for key in ("images", "categories"):
            if key not in done:
                with path.open("rb") as f:
                    for item in ijson.items(
                        guarded_stream(f, str(path)),
                        f"{key}.item",
                        use_float=True,
                        buf_size=READ_SIZE,
                    ):
                        handlers[key](item)
    except (ijson.JSONError, UnicodeDecodeError) as exc:  # yajl passes on a few bad UTF-8 bytes
        raise InputError(not_json(path, exc), path=str(path)) from None
    if writer is None:
        writer = sink.rows(id_type="int")
    tables = (images, categories, parents)
    return _finish(path, writer, facts, tables, into, shapes, (doubled, source))


def _finish(
    path: Path,
    writer: RowWriter,
    facts: AnnotationFacts,
    tables: tuple[Mapping[Any, tuple[float, float] | None], list[tuple[int, str]], set[str]],
    into: Tallies,
    shapes: CocoShapes,
    doubled: tuple[Counter[Any], str],
) -> ClassMap | None:
    """What needs the whole file, once its rows are written: deferred boxes and shapes, the
    tallies, the image ids listed twice (and the file's source, which names them); the class
    map, its grouping categories placeholders."""
    images, categories, parents = tables
    counts = into.counts
    writer.close()
    if not counts["images"] and not categories and not writer.rows:
        raise InputError("no images, annotations or categories: not a COCO file", path=str(path))
    for xyxy, image, example in into.deferred:
        check_box(facts, xyxy, images.get(image), example)
    shapes.settle(images)
    _doubled(facts, *doubled)
    _settle(facts, categories, into.used, into.first_of, into.unlisted, images)
    counts["annotations"] = writer.rows
    counts["categories"] = len(categories)
    facts.counts.update(counts)
    if not categories:
        return None
    held = _grouping(categories, parents, into.used)
    return ClassMap(tuple(categories), origin=f"{path} (categories)", placeholders=held)


# What a COCO export writes as the supercategory of a category with no parent: rf-detr's
# ``_SUPERCATEGORY_PLACEHOLDERS`` (rfdetr/datasets/coco.py:59, rf-detr#1303).
_NO_PARENT = frozenset({"", "none", "null"})


def _grouping(
    categories: list[tuple[int, str]], parents: set[str], used: Container[Any]
) -> frozenset[int]:
    """The categories that only group others, as the first category of a Roboflow export
    (``{"id": 0, "name": "pieces", "supercategory": "none"}``, every class's supercategory
    ``"pieces"``): named as another category's supercategory, and used by no annotation.
    rf-detr trains no class for them (``filter_parent_categories``, rfdetr/datasets/coco.py:
    155-167, rf-detr#1303); an annotated parent keeps its class, and a table that would lose
    every category loses none, as there."""
    held = frozenset(cid for cid, name in categories if name in parents and cid not in used)
    return held if {cid for cid, _ in categories} - held else frozenset()


def _doubled(facts: AnnotationFacts, doubled: Counter[Any], source: str) -> None:
    """Images sharing an id (LG031): pycocotools' ``COCO.createIndex`` keys the images by id,
    ``imgs[img['id']] = img`` (``PythonAPI/pycocotools/coco.py:100-102``, cocoapi@8c9bcc3), so
    the last image of an id replaces the others and their annotations land on it; torchvision's
    ``CocoDetection`` and detectron2 take their image ids from that index."""
    if not doubled:
        return
    ids = list(doubled)
    shown = ", ".join(str(i) for i in ids[:10]) + (
        f" and {len(ids) - 10} more" if len(ids) > 10 else ""
    )
    h = facts.hit(
        "LG031",
        message=f"images listed under an id another image has (image ids {shown}): a loader "
        "indexing the images by id keeps one of them, and the annotations of all",
        fix="give every image of the file its own id (and its annotations that id)",
        unit="images",
        count=sum(doubled.values()),
    )
    if h.unit != "images":  # annotations of the file are LG031 too: one count of records
        h.unit = "records"
    room = len(ids) if facts.limit is None else max(0, facts.limit - len(h.examples))
    h.examples += [Example(row=-1, id=f"image {i}", source=source, value=i) for i in ids[:room]]
    h.details["image_ids"] = {str(i): n + 1 for i, n in list(doubled.items())[:50]}


def _head(events: Any, done: set[str]) -> Any:
    """(key, object) for each item of the images and categories arrays met before the
    annotations (whose key ends the pass); ``done`` gets the arrays read to their end."""
    import ijson

    builder: Any = None
    key = ""
    for prefix, event, value in events:
        if builder is None:
            if prefix == "" and event == "map_key" and value == "annotations":
                return
            if event == "start_map" and prefix in ("images.item", "categories.item"):
                key = prefix.split(".")[0]
                builder = ijson.ObjectBuilder()
                builder.event(event, value)
            elif event == "end_array" and prefix in ("images", "categories"):
                done.add(prefix)
            continue
        builder.event(event, value)
        if event == "end_map" and prefix == f"{key}.item":
            yield key, builder.value
            builder = None


def _settle(
    facts: AnnotationFacts,
    categories: list[tuple[int, str]],
    used: Counter[Any],
    first_of: dict[Any, Example],
    unlisted: tuple[dict[Any, list[Example]], Counter[Any]],
    images: Mapping[Any, tuple[float, float] | None],
) -> None:
    """What needs the whole file: categories used but not in the table, images not listed."""
    table = {cid for cid, _ in categories}
    unknown = sorted(c for c in used if c not in table)
    if unknown and categories:
        h = facts.hit(
            "LG030",
            message=f"annotations name category ids absent from the categories table: "
            f"{', '.join(str(c) for c in unknown[:20])}",
            fix="add these categories to the table, or map the annotations to categories in it",
            count=sum(used[c] for c in unknown),
        )
        h.examples = [first_of[c] for c in unknown[: facts.limit]]
        h.details = {"categories": {str(c): used[c] for c in unknown[:50]}}
    lost = [i for i in unlisted[1] if i not in images]
    if lost and images:
        examples = sorted((e for i in lost for e in unlisted[0][i]), key=lambda e: e.row)
        h = facts.hit(
            "LG031",
            message=f"annotations of images not in the images list (image ids "
            f"{', '.join(str(i) for i in lost[:10])})",
            fix="add the images, or drop their annotations: a loader indexing by image finds none",
            count=sum(unlisted[1][i] for i in lost),
        )
        h.examples = (h.examples + examples)[: facts.limit]
