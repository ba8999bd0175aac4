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
from labelgate.core.findings import plural
from labelgate.core.report import Example
from labelgate.errors import ClassMapError, InputError
from labelgate.io.bounded import bounded_lines
from labelgate.io.files import read_small_text
from labelgate.readers.base import Claim, Read, Reader, ReadOptions
from labelgate.readers.common.boxes import check_background, check_box
from labelgate.readers.common.imageindex import ImageRecord
from labelgate.readers.common.layout import any_file
from labelgate.readers.common.roots import Root, dataset_root
from labelgate.readers.common.sink import RowSink, RowWriter, in_int64, reject
from labelgate.readers.yolo.yolodata import data_yaml, read_data_yaml
from labelgate.readers.yolo.yoloshapes import (
    check_mixed,
    check_pose,
    kpt_shape,
    kpt_shape_of,
    row_fault,
)

__all__ = ["CLASS_LISTS", "YoloReader", "read_labels", "read_yolo"]

CLASS_LISTS = {"classes.txt", "obj.names", "classes.names"}
_NOT_LABELS = CLASS_LISTS | {"train.txt", "val.txt", "valid.txt", "test.txt", "labels.txt"}
_MAX_LINE = 1 << 20  # bytes: a label line longer than this is not a label line


def read_yolo(
    root: Path,
    sink: RowSink,
    facts: AnnotationFacts,
    background: int | None,
    task: str | None = None,
    shape: tuple[int, int] | None = None,
) -> ClassMap | None:
    """Read every label file under ``root`` into rows in ``sink``; segment and pose rows are
    judged too (readers/yolo/yoloshapes.py; ``task``: the one named; ``shape``: the keypoints of a
    YAML kept outside the folder, where data.yaml declares none)."""
    found = _class_list(root)
    files = sorted(p for p in root.rglob("*.txt") if p.name not in _NOT_LABELS and p.is_file())
    under_labels = [p for p in files if "labels" in p.relative_to(root).parts[:-1]]
    chosen = [(p, _split(root, p), root) for p in under_labels or files]
    read_labels(chosen, sink, facts, background, (kpt_shape(root) or shape, task), root)
    return found


def read_labels(
    files: list[tuple[Path, str, Path]],
    sink: RowSink,
    facts: AnnotationFacts,
    background: int | None,
    shapes: tuple[tuple[int, int] | None, str | None],
    where: Path,
) -> None:
    """Read label files, each (file, its source, the folder its id is relative to), into rows
    in ``sink``.

    Raises:
        InputError: there is no label file (``where`` is named).
    """
    facts.task = "detection"
    writer = sink.rows()
    writer.sizes.unit = "normalised"
    counts: Counter[str] = Counter()
    for path, source, base in files:
        rel = path.relative_to(base).as_posix()
        counts["label_files"] += 1
        sink.images.add(_image(base, path, rel))
        objects = _read_file(path, (rel, source), writer, facts, counts, background, shapes)
        counts["objects"] += objects
        if objects == 0:
            counts["images_without_objects"] += 1
    writer.close()
    if not counts["label_files"]:
        raise InputError("no YOLO label files (.txt) under this folder", path=str(where))
    facts.counts.update(counts)
    if not writer.rows:
        facts.empty = f"no object in {counts['label_files']} label files"


def _split(root: Path, path: Path) -> str:
    """A label file's source: its split, the first folder under the root (Roboflow's
    ``train/labels/``), or the one under ``labels/`` (ultralytics' ``labels/train/``)."""
    parts = path.relative_to(root).parts
    if len(parts) > 2 and parts[0] == "labels":
        return parts[1]
    return parts[0] if len(parts) > 1 else root.name


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
            fault = row_fault(facts, n, kpt, example, task)  # a box, segment or pose row?
            if fault is not None:
                reject(writer, counts, ident, source, rel, fault)  # ultralytics drops its image
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
                reject(writer, counts, ident, source, rel, "LG031")
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
            check_box(facts, box, None, example, normalised=True, sizes=writer.sizes)
    check_mixed(facts, widths, kpt, Example(row=-1, id=rel, source=source), task)
    return objects


_MARKERS = {"data.yaml", "data.yml", "obj.data"} | CLASS_LISTS


def _label_files(root: Path) -> bool:
    """Whether a YOLO label file (a .txt that is not a class or split list) lies under ``root``."""
    return any_file(root, "*.txt", lambda p: p.name not in _NOT_LABELS)


class YoloReader(Reader):
    """YOLO / Darknet folders: a class list (data.yaml, classes.txt, obj.names) and .txt labels;
    an ultralytics dataset YAML given as the path; a labels tree whose class list lies outside."""

    name = "yolo"
    title = "YOLO folders (data.yaml, classes.txt or obj.names beside .txt label files)"
    suffixes = (".txt", ".yaml")
    task = "detection"

    def detect(self, path: Path, task: str | None = None) -> Claim | None:
        if path.is_file():
            if data_yaml(path) is not None:  # above a label table's 0.8; a contract has no train:
                return Claim(0.9, "an ultralytics dataset YAML (train, val and names or nc)")
            return None
        if not path.is_dir():
            return None
        names = {c.name for c in path.iterdir()}
        if names & _MARKERS and _label_files(path):
            return Claim(
                0.9,
                "a folder with a YOLO class list (data.yaml, classes.txt or "
                "obj.names) and .txt label files",
            )
        root = dataset_root(path)
        if isinstance(root, Root) and root.format == "yolo":
            # No class list: K from --classes or --class-names. Above masks by their look (0.7),
            # level with VOC's folders (which hold no .txt rows).
            return Claim(0.8, root.why + " (--class-names names one, e.g. the dataset YAML)")
        return None

    def read(
        self, paths: list[Path], sink: RowSink, facts: AnnotationFacts, options: ReadOptions
    ) -> Read:
        given = options.class_map
        outside = None  # a YAML named by --class-names (ultralytics keeps coco8-pose.yaml there)
        if given is not None and given.origin.lower().endswith((".yaml", ".yml")):
            outside = kpt_shape_of(Path(given.origin))
        if paths[0].is_file():
            if paths[0].suffix.lower() == ".txt":  # one label file: a class list is beside it
                raise InputError(
                    "a YOLO label file alone: give the folder that holds the label files and "
                    "its class list (classes.txt, obj.names or data.yaml), or the data.yaml",
                    path=str(paths[0]),
                )
            return _read_yaml(paths[0], sink, facts, options, outside)
        found = read_yolo(paths[0], sink, facts, options.background, options.task, outside)
        return Read(found, "the YOLO class list" if found is not None else "")


def _read_yaml(
    path: Path,
    sink: RowSink,
    facts: AnnotationFacts,
    options: ReadOptions,
    outside: tuple[int, int] | None,
) -> Read:
    """The splits of an ultralytics dataset YAML, each a source.

    Raises:
        InputError: the YAML names a split folder that is not there (the folder beside it, if
            it holds label files, is named: validated as a folder, its split folders are read).
    """
    try:
        data = read_data_yaml(path)
    except InputError as exc:
        inside = path.name in _MARKERS  # a data.yaml kept in its dataset's root
        if exc.path != str(path) or not inside or YoloReader().detect(path.parent) is None:
            raise
        hint = f"; the label folders beside it are read when the folder is given ({path.parent})"
        raise InputError(exc.reason + hint, path=exc.path) from None
    facts.notes.extend(data.notes)
    files: list[tuple[Path, str, Path]] = []
    for split in data.splits:
        base = data.root if split.path.is_relative_to(data.root) else split.path.parent
        if split.name in data.labels:
            found = data.labels[split.name]
        else:
            found = sorted(
                p for p in split.path.rglob("*.txt") if p.name not in _NOT_LABELS and p.is_file()
            )
        files.extend((p, split.name, base) for p in found)
    each = "; ".join(f"{s.name}: {s.path}" for s in data.splits)
    facts.notes.append(
        f"{path} read as {plural(len(data.splits), 'split')}, each a source ({each})"
    )
    shape = kpt_shape_of(path) or outside
    read_labels(files, sink, facts, options.background, (shape, options.task), path)
    return Read(data.class_map, f"the names of {path.name}")
