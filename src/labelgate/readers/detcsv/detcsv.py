"""Detection CSVs whose class column holds names, one box a row: TF Object Detection's, OpenImages'
and keras-retinanet's layouts, each name looked up in the class map.

- TF Object Detection (datitran/raccoon_dataset's ``xml_to_csv.py:23``@93938849, Roboflow's TF
  CSV): header ``filename,width,height,class,xmin,ymin,xmax,ymax`` (or another image, label and
  ``xmin..ymax`` header holding class names). ``generate_tfrecord.py`` turns each ``class`` text
  into its label map id (``class_text_to_int``, lines 30-35: ``raccoon`` -> 1) and groups the
  rows by ``filename`` (``split``, lines 38-41, pandas' sorted groups): images in sorted order.
- OpenImages box files: header ``ImageID,Source,LabelName,Confidence,XMin,XMax,YMin,YMax,...``,
  coordinates normalised to [0, 1], the x pair before the y pair (TFDS'
  ``object_detection/open_images.py`` ``_load_bboxes`` builds ``BBox(ymin, xmin, ymax, xmax)``
  from them@0f37b56b); ``LabelName`` is a machine id (``/m/07j7r``), the image is
  ``ImageID.jpg`` and an id absent from ``class-descriptions-boxable.csv`` is skipped by
  keras-retinanet's generator (``keras_retinanet/preprocessing/open_images.py:79-89,152-164``
  @7ac91dfb).
- keras-retinanet: no header, ``path,x1,y1,x2,y2,class_name`` a row, ``path,,,,,`` an image
  without objects, each coordinate parsed by ``int()``, names looked up in a ``class_name,id``
  classes file (``keras_retinanet/preprocessing/csv_generator.py:45-99``@7ac91dfb).

The class map is ``--class-names``, else the format's own map beside the CSV (one ``.pbtxt``;
keras-retinanet's ``classes.csv``; OpenImages' ``class-descriptions-boxable.csv`` there or one
level up), else the names found, sorted. A TF Object Detection label map numbers classes from 1,
0 being the background's (``label_map_util.py:37-39``), so with one the background index is 0.
Rows: id = ``csv:line:image``, label = the name's index, source = OpenImages' ``Source`` (else
the CSV's name), name = the class text; each row's image for batches of images.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from labelgate.contract.classmap import ClassMap, load_class_map, normalise_name
from labelgate.core.annotations import AnnotationFacts
from labelgate.core.report import Example
from labelgate.errors import ClassMapError, InputError, one_line
from labelgate.io.classnames import check_names, check_source
from labelgate.io.files import read_small_text
from labelgate.readers.base import Claim, Read, Reader, ReadOptions
from labelgate.readers.common.boxes import check_background, check_box
from labelgate.readers.common.imageindex import ImageRecord
from labelgate.readers.common.sink import RowSink
from labelgate.readers.detcsv.detcsvlayout import Layout, first_rows, integer, layout_of

__all__ = ["DetectionCsvReader"]

# What each layout's loader does with a class text its map lacks.
_LOADS = {
    "tfod": "generate_tfrecord.py's class_text_to_int gives it no id (None, lines 31-35), "
    "which the TFRecord's int64 list refuses",
    "retinanet": "keras-retinanet raises 'unknown class name' (csv_generator.py:95-96)",
    "openimages": "keras-retinanet's OpenImages generator drops the box without a word "
    "(open_images.py:154-155)",
}
_NOT_INTEGER = (
    "box coordinates that are not integers: keras-retinanet parses each with int() and raises "
    "'malformed x1' for the whole file (csv_generator.py:83-86)"
)


class DetectionCsvReader(Reader):
    """Detection CSVs of class names: TF Object Detection, OpenImages, keras-retinanet."""

    name = "detcsv"
    title = "detection CSVs of class names (TF Object Detection, OpenImages, keras-retinanet)"
    suffixes = (".csv",)
    task = "detection"

    def detect(self, path: Path, task: str | None = None) -> Claim | None:
        if task not in (None, "detection") or not path.is_file():
            return None
        if path.suffix.lower() != ".csv":
            return None
        found = layout_of(first_rows(path))
        if found is None:
            return None
        if found.kind == "retinanet":
            return Claim(0.85, "a CSV of keras-retinanet rows (path,x1,y1,x2,y2,class_name)")
        return Claim(0.9, f"{found.title}: a header of image, class name and box columns")

    def read(
        self, paths: list[Path], sink: RowSink, facts: AnnotationFacts, options: ReadOptions
    ) -> Read:
        path = paths[0]
        found = layout_of(first_rows(path))
        if found is None:
            raise InputError(
                "not a detection CSV: no TF Object Detection, OpenImages or keras-retinanet "
                "layout of image, box and class-name columns",
                path=str(path),
            )
        facts.task = "detection"
        given = options.class_map
        cmap, why = (
            (given, f"the class map given ({given.origin})")
            if given
            else _beside(path, found, facts)
        )
        if cmap is None:
            names = sorted({n for _, row in _rows(path, found) if (n := _name(row, found))})
            if not names:
                raise InputError(
                    f"no row holds the header's {found.width} columns and a class name: no box "
                    "to judge",
                    path=str(path),
                )
            cmap = ClassMap.from_names(names, origin=f"{path} (the class names found, sorted)")
            why = "the class names found, sorted: indices depend on the names present"
            facts.notes.append(
                "class indices here are the sorted names (0..N-1), not what a loader gives them: "
                "TF Object Detection numbers them from 1 through its .pbtxt label map, "
                "keras-retinanet from 0 through its classes file; give that map (--class-names, "
                "or a .pbtxt beside the CSV) to judge the indices that train"
            )
        background = options.background
        if background is None and Path(cmap.origin).suffix.lower() == ".pbtxt":
            background = facts.background = 0
            facts.notes.append(
                "background index 0: a TF Object Detection label map reserves id 0 for the "
                "background (research/object_detection/utils/label_map_util.py:37-39@02c04f49), "
                "so K counts it"
            )
        _read(path, found, cmap, background, sink, facts)
        return Read(cmap, why)


def _beside(path: Path, layout: Layout, facts: AnnotationFacts) -> tuple[ClassMap | None, str]:
    """The format's own class map beside the CSV, and how it was found."""
    folder = path.parent
    if layout.kind == "tfod":
        maps = sorted(p for p in folder.glob("*.pbtxt") if p.is_file())
        if len(maps) > 1:
            facts.notes.append(
                f"{len(maps)} .pbtxt label maps beside the CSV: none taken (--class-names names one)"
            )
            return None, ""
        if maps:
            return _load(maps[0]), f"{maps[0].name} beside the CSV ({maps[0]})"
    if layout.kind == "retinanet":
        classes = folder / "classes.csv"
        if classes.is_file() and classes.resolve() != path.resolve():
            return _load(classes), f"classes.csv beside the CSV ({classes})"
    if layout.kind == "openimages":
        for where in (folder, folder.parent):
            found = sorted(where.glob("*class-descriptions-boxable.csv"))
            if len(found) == 1:
                return _descriptions(found[0]), f"{found[0].name} ({found[0]}), in its row order"
    return None, ""


def _load(path: Path) -> ClassMap:
    try:
        return load_class_map(path)
    except ClassMapError as exc:
        raise InputError(exc.reason, path=str(path)) from None


def _descriptions(path: Path) -> ClassMap:
    """OpenImages' ``MID,DisplayName`` rows: a class's index is its row (open_images.py:79-89),
    a ``LabelName,DisplayName`` header skipped; the MIDs are the names the boxes carry."""
    try:
        check_source(path, str(path))
        rows = [
            r for r in csv.reader(io.StringIO(read_small_text(path, "class list"), newline="")) if r
        ]
        if rows and rows[0][0].strip() == "LabelName":
            rows = rows[1:]
        entries = tuple(enumerate(r[0].strip() for r in rows))
        check_names(entries, str(path), what="row")
    except (ClassMapError, csv.Error) as exc:
        raise InputError(one_line(exc), path=str(path)) from None
    if not entries:
        raise InputError("an empty class list", path=str(path))
    return ClassMap(entries, origin=str(path))


def _rows(path: Path, layout: Layout) -> Iterator[tuple[int, list[str]]]:
    """(line, cells) of each non-empty record after the header."""
    try:
        with path.open(newline="", encoding="utf-8-sig") as f:
            reader = csv.reader(f)
            if layout.header:
                next(reader, None)
            for row in reader:
                if any(c.strip() for c in row):
                    yield reader.line_num, row
    except (UnicodeDecodeError, csv.Error) as exc:
        raise InputError(f"not a readable CSV file ({one_line(exc)})", path=str(path)) from None


def _name(row: list[str], layout: Layout) -> str:
    return row[layout.label].strip() if len(row) >= layout.width else ""


def _read(
    path: Path,
    layout: Layout,
    cmap: ClassMap,
    background: int | None,
    sink: RowSink,
    facts: AnnotationFacts,
) -> None:
    index = cmap.index_of()
    spelled = {name for _, name in cmap.entries}
    writer = sink.rows(names=True)
    writer.sizes.unit = "normalised" if layout.normalised else "pixels"
    sink.images.sort = layout.sort
    counts: Counter[str] = Counter()
    csv_name = path.name
    for line, row in _rows(path, layout):
        where = f"{csv_name}:{line}"
        if len(row) < layout.width:
            _malformed(
                facts,
                Example(row=-1, id=where, source=csv_name),
                f"rows of fewer than {layout.width} columns",
            )
            continue
        image = row[layout.image].strip()
        if not image:
            _malformed(facts, Example(row=-1, id=where, source=csv_name), "rows without an image")
            continue
        ident = f"{where}:{image}"
        source = (row[layout.source].strip() if layout.source is not None else "") or csv_name
        size = _size(row, layout)
        sink.images.add(ImageRecord(image, image, image + layout.suffix, size, path))
        if layout.kind == "retinanet" and not any(c.strip() for c in row[1:6]):
            counts["negative_rows"] += 1  # 'path,,,,,': an image without objects
            continue
        for flag, at in layout.flags:
            counts[flag] += at < len(row) and row[at].strip() == "1"
        example = Example(row=-1, id=ident, source=source)
        name = row[layout.label].strip()
        label = index.get(normalise_name(name)) if name else None
        if label is None:
            if not name:
                _malformed(facts, example, "boxes without a class name")
            else:
                _unknown(facts, example, name, cmap, layout.kind)
            counts["boxes_not_in_map"] += 1
            continue
        writer.add(ident, label, source, name, group=image)
        example = Example(row=writer.rows - 1, id=ident, source=source, value=label)
        if name not in spelled:
            _respelled(facts, example, name, cmap)
        check_background(facts, label, background, example)
        box, problem = _box(row, layout)
        if box is None:
            _malformed(facts, example, problem)
            continue
        check_box(facts, box, size, example, normalised=layout.normalised, sizes=writer.sizes)
    writer.close()
    counts["boxes"] = writer.rows
    counts["images"] = len(sink.images)
    facts.counts.update({k: v for k, v in counts.items() if v})


def _size(row: list[str], layout: Layout) -> tuple[float, float] | None:
    if layout.size is None:
        return None
    try:
        w, h = float(row[layout.size[0]]), float(row[layout.size[1]])
    except ValueError:
        return None
    return (w, h) if w > 0 and h > 0 else None


def _box(row: list[str], layout: Layout) -> tuple[tuple[float, float, float, float] | None, str]:
    cells = [row[i].strip() for i in layout.box]
    try:
        x0, y0, x1, y1 = (float(c) for c in cells)
    except ValueError:
        return None, "boxes whose coordinates are not numbers"
    if layout.integers and not all(integer(c) for c in cells):
        return None, _NOT_INTEGER
    return (x0, y0, x1, y1), ""


def _malformed(facts: AnnotationFacts, example: Example, message: str) -> None:
    facts.hit(
        "LG031",
        example,
        message=message,
        fix="correct these rows: the CSV's loader fails on them or drops them",
    )


def _unknown(
    facts: AnnotationFacts, example: Example, name: str, cmap: ClassMap, kind: str
) -> None:
    shown = name if len(name) <= 60 else name[:57] + "..."
    hits = facts.hit(
        "LG030",
        example,
        message=f"boxes of class {shown!r}, which the class map does not declare",
        fix=f"add the name to the class map ({cmap.origin}) or correct the class text: "
        + _LOADS[kind],
    )
    named = hits.details.setdefault("names", [])
    if isinstance(named, list) and shown not in named and len(named) < 20:
        named.append(shown)


def _respelled(facts: AnnotationFacts, example: Example, name: str, cmap: ClassMap) -> None:
    mapped = cmap.name_of()[cmap.index_of()[normalise_name(name)]]
    facts.hit(
        "LG030",
        example,
        message=f"boxes of class {name[:60]!r}, which the class map spells {mapped[:60]!r}",
        fix="spell the class as the map does: TF Object Detection's label map lookup and "
        "keras-retinanet's classes compare names exactly",
    )
