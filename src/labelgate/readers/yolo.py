"""YOLO label folders: ``class cx cy w h`` (or a polygon ``class x1 y1 x2 y2 ...``) per line.

The class list is ``data.yaml`` (names as list or dict, ``nc``), ``classes.txt`` or Darknet's
``obj.names`` (with ``obj.data``'s ``classes``). Rows are objects: id = ``file:line``, label = the
class id, source = the split (the first folder under the root). An empty label file is an image
without objects, not an error.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

from labelgate.contract.classmap import ClassMap, load_class_map
from labelgate.core.annotations import AnnotationFacts
from labelgate.core.report import Example
from labelgate.errors import ClassMapError, InputError
from labelgate.io.bounded import bounded_lines
from labelgate.io.files import read_small_text
from labelgate.readers.base import Claim, Read, Reader, ReadOptions
from labelgate.readers.boxes import check_background, check_box
from labelgate.readers.imageindex import ImageRecord
from labelgate.readers.layout import any_file
from labelgate.readers.sink import RowSink, RowWriter, in_int64, reject
from labelgate.readers.yoloshapes import check_mixed, check_pose, kpt_shape, row_fits

__all__ = ["CLASS_LISTS", "YoloReader", "read_yolo"]

CLASS_LISTS = {"classes.txt", "obj.names", "classes.names"}
_NOT_LABELS = CLASS_LISTS | {"train.txt", "val.txt", "valid.txt", "test.txt", "labels.txt"}
_MAX_LINE = 1 << 20  # bytes: a label line longer than this is not a label line


def read_yolo(
    root: Path,
    sink: RowSink,
    facts: AnnotationFacts,
    background: int | None,
    task: str | None = None,
) -> ClassMap | None:
    """Read every label file under ``root`` into rows in ``sink``; segment and pose rows are
    judged too (readers/yoloshapes.py; ``task``: the one named)."""
    facts.task = "detection"
    found = _class_list(root)
    shape = kpt_shape(root)
    writer = sink.rows()
    counts: Counter[str] = Counter()
    files = sorted(p for p in root.rglob("*.txt") if p.name not in _NOT_LABELS and p.is_file())
    under_labels = [p for p in files if "labels" in p.relative_to(root).parts[:-1]]
    for path in under_labels or files:
        rel = path.relative_to(root).as_posix()
        parts = path.relative_to(root).parts
        source = parts[0] if len(parts) > 1 else root.name
        counts["label_files"] += 1
        sink.images.add(_image(root, path, rel))
        objects = _read_file(path, (rel, source), writer, facts, counts, background, (shape, task))
        counts["objects"] += objects
        if objects == 0:
            counts["images_without_objects"] += 1
    writer.close()
    if not counts["label_files"]:
        raise InputError("no YOLO label files (.txt) under this folder", path=str(root))
    facts.counts.update(counts)
    if not writer.rows:
        facts.empty = f"no object in {counts['label_files']} label files"
    return found


def _image(root: Path, path: Path, rel: str) -> ImageRecord:
    """A label file's image: ultralytics finds it by swapping the last ``labels`` folder of the
    label file's path for ``images`` and the suffix for an image suffix (``img2label_paths``)."""
    parts = path.relative_to(root).parts
    at = max((i for i, p in enumerate(parts[:-1]) if p == "labels"), default=None)
    if at is None:
        return ImageRecord(rel, rel)
    labels = root.joinpath(*parts[: at + 1])
    stem = Path(*parts[at + 1 :]).with_suffix("").as_posix()
    return ImageRecord(rel, rel, stem, None, labels, stem=True)


def _class_list(root: Path) -> ClassMap | None:
    for name in ("data.yaml", "data.yml", "classes.txt", "obj.names", "classes.names"):
        p = root / name
        if p.is_file():
            try:
                found = load_class_map(p)
            except ClassMapError as exc:
                raise InputError(exc.reason, path=str(p)) from None
            data = root / "obj.data"
            if found.declared is None and data.is_file():
                text = read_small_text(data, "obj.data", error=ClassMapError)
                for line in text.splitlines():
                    key, _, value = line.partition("=")
                    if key.strip() == "classes" and value.strip().isdecimal():
                        from dataclasses import replace

                        found = replace(found, declared=int(value.strip()))
            return found
    return None


def _read_file(
    path: Path,
    named: tuple[str, str],
    writer: RowWriter,
    facts: AnnotationFacts,
    counts: Counter[str],
    background: int | None,
    shapes: tuple[tuple[int, int] | None, str | None] = (None, None),
) -> int:
    """Read one label file (``named``: its path from the root, its source) into rows; the
    objects that are usable rows, counted."""
    (rel, source), (kpt, task) = named, shapes
    widths: set[int] = set()  # the field counts of the file's rows
    objects = 0
    with path.open("rb") as f:
        for number, raw, _ in bounded_lines(f, _MAX_LINE):  # a line without end is not held
            line = raw.decode("utf-8", errors="replace").strip()
            if not line:
                continue
            fields = line.split()
            ident = f"{rel}:{number}"
            example = Example(row=writer.rows, id=ident, source=source, value=fields[0])
            n = len(fields)
            widths.add(n)
            if not row_fits(facts, n, kpt, example, task):  # a box, segment or pose row
                reject(writer, counts, ident, source, rel)  # ultralytics drops its image
                continue
            try:
                cls = int(fields[0])
                values = [float(v) for v in fields[1:]]
                if not in_int64(cls):  # no int64 target holds it
                    raise ValueError(cls)
            except ValueError:
                facts.hit(
                    "LG031",
                    example,
                    message="YOLO lines whose class is not an integer or whose "
                    "coordinates are not numbers",
                    fix="rewrite these lines: class ids are integers, coordinates numbers",
                )
                reject(writer, counts, ident, source, rel)
                continue
            writer.add(f"{rel}:{number}", cls, source, None, group=rel)
            objects += 1
            example = Example(
                row=writer.rows - 1,
                id=f"{rel}:{number}",
                source=source,
                value=cls,
            )
            check_background(facts, cls, background, example)
            if n == 5 or kpt is not None:
                cx, cy, w, h = values[:4]
                if n > 5 and kpt is not None:
                    check_pose(facts, values, kpt, example, task)
                box = (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)
            else:
                xs, ys = values[0::2], values[1::2]
                if not all(math.isfinite(v) for v in values):
                    box = (math.nan, math.nan, math.nan, math.nan)
                else:
                    box = (min(xs), min(ys), max(xs), max(ys))
            check_box(facts, box, None, example, normalised=True)
    check_mixed(facts, widths, kpt, Example(row=-1, id=rel, source=source), task)
    return objects


_MARKERS = {"data.yaml", "data.yml", "obj.data"} | CLASS_LISTS


def _label_files(root: Path) -> bool:
    """Whether a YOLO label file (a .txt that is not a class or split list) lies under ``root``."""
    return any_file(root, "*.txt", lambda p: p.name not in _NOT_LABELS)


class YoloReader(Reader):
    """YOLO / Darknet folders: a class list (data.yaml, classes.txt, obj.names) and .txt labels."""

    name = "yolo"
    title = "YOLO folders (data.yaml, classes.txt or obj.names beside .txt label files)"
    suffixes = (".txt",)
    task = "detection"

    def detect(self, path: Path, task: str | None = None) -> Claim | None:
        if not path.is_dir():
            return None
        names = {c.name for c in path.iterdir()}
        if names & _MARKERS and _label_files(path):
            return Claim(
                0.9,
                "a folder with a YOLO class list (data.yaml, classes.txt or "
                "obj.names) and .txt label files",
            )
        return None

    def read(
        self, paths: list[Path], sink: RowSink, facts: AnnotationFacts, options: ReadOptions
    ) -> Read:
        found = read_yolo(paths[0], sink, facts, options.background, options.task)
        return Read(found, "the YOLO class list" if found is not None else "")
