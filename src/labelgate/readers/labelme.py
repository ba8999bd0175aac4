"""LabelMe: labelme's JSON files (one per image, a folder of them) and MIT LabelMe's XML.

labelme JSON holds ``shapes`` (``label``, ``points``, ``shape_type``: ``rectangle``, ``polygon``,
``circle``, ``line``, ``linestrip``, ``point``, ``points``, ``mask``) and ``imageWidth`` /
``imageHeight``. The point counts are labelme's own (``labelme/utils/shape.py``,
``shape_to_mask``): a rectangle, circle and line take 2 points, a point 1, a polygon more than 2.
The class map is ``--class-names``, else labelme's ``labels.txt`` beside the files (its
``__ignore__`` line is no class and ``_background_`` is class 0: ``labelme2voc.py`` gives line i
the id i - 1), else the names found, sorted. A shape labelled ``__ignore__`` is a don't-care
region: counted, not a row. MIT LabelMe XML (``<annotation>`` with ``<object><polygon><pt>``)
is read the same way, a ``<deleted>1</deleted>`` object counted and skipped.

Rows: one per shape (id = ``file#n``, the n-th shape from 0), source = the folder, name = the
label.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from labelgate.contract.classmap import ClassMap, load_class_map
from labelgate.core.annotations import AnnotationFacts
from labelgate.core.report import Example
from labelgate.errors import ClassMapError, InputError, one_line
from labelgate.io.bounded import load_json
from labelgate.io.files import read_small_text
from labelgate.readers.base import Claim, Read, Reader, ReadOptions
from labelgate.readers.common.boxes import check_background, check_box, check_points, class_index
from labelgate.readers.common.boxsizes import BoxSizes
from labelgate.readers.common.imageindex import ImageRecord
from labelgate.readers.common.instances import POINT_TOLERANCE as _PX
from labelgate.readers.common.sink import RowSink, RowWriter, reject, reject_unplaced

__all__ = ["LabelMeReader", "is_labelme_json", "is_labelme_xml"]

IGNORE = "__ignore__"
# shape_type -> the points labelme's shape_to_mask asserts (polygon: more than 2)
_POINTS = {"rectangle": 2, "circle": 2, "line": 2, "point": 1, "mask": 2}
_LEAST = {"polygon": 3, "linestrip": 2, "points": 1}
_LISTS = ("labels.txt", "class_names.txt")


def _head(path: Path, size: int = 1 << 14) -> bytes:
    try:
        with path.open("rb") as f:
            return f.read(size).lstrip(b"\xef\xbb\xbf \t\r\n")
    except OSError:
        return b""


def is_labelme_json(path: Path) -> bool:
    """Whether a JSON file is labelme's: an object naming ``shapes`` and ``imagePath``."""
    head = _head(path)
    return head.startswith(b"{") and b'"shapes"' in head and b'"imagePath"' in head


def is_labelme_xml(path: Path) -> bool:
    """Whether an XML file is MIT LabelMe's: ``<annotation>`` whose objects are ``<polygon>``s of
    ``<pt>`` points (VOC's hold a ``<bndbox>``)."""
    head = _head(path)
    return (
        re.match(rb"(<\?.*?\?>\s*)?<annotation[\s>]", head, flags=re.S) is not None
        and b"<pt>" in head
        and b"<bndbox>" not in head
    )


def _files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    found = [p for p in root.rglob("*") if p.suffix.lower() in (".json", ".xml") and p.is_file()]
    return sorted(p for p in found if is_labelme_json(p) or is_labelme_xml(p))


def _shapes(path: Path) -> tuple[list[tuple[str, str, Any]], tuple[float, float] | None, int]:
    """(label, shape type, points) per shape, the image size, and deleted objects skipped."""
    if path.suffix.lower() == ".json":
        try:
            doc = load_json(read_small_text(path, "labelme file"), str(path))
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON ({one_line(exc)})", path=str(path)) from None
        if not isinstance(doc, dict) or not isinstance(doc.get("shapes"), list):
            raise InputError("not a labelme file: no 'shapes' list", path=str(path))
        drawn = [
            (str(s.get("label", "")), str(s.get("shape_type") or "polygon"), s.get("points"))
            for s in doc["shapes"]
            if isinstance(s, dict)
        ]
        return drawn, _size(doc.get("imageWidth"), doc.get("imageHeight")), 0
    try:
        tree = ET.fromstring(read_small_text(path, "LabelMe XML file"))
    except (ET.ParseError, LookupError) as exc:  # LookupError: an unknown declared encoding
        raise InputError(
            f"not a readable LabelMe XML file ({one_line(exc)})", path=str(path)
        ) from None
    shapes: list[tuple[str, str, Any]] = []
    deleted = 0
    for obj in tree.iter("object"):
        if (obj.findtext("deleted") or "0").strip() == "1":
            deleted += 1
            continue
        name = (obj.findtext("name") or "").strip()
        polygon = obj.find("polygon")
        if polygon is None:  # a mask object (<segm>): a region without vertices
            shapes.append((name, "mask", None))
            continue
        points = [[pt.findtext("x"), pt.findtext("y")] for pt in polygon.iter("pt")]
        kind = (polygon.findtext("type") or "").strip()
        shapes.append((name, "rectangle" if kind == "bounding_box" else "polygon", points))
    size = _size(tree.findtext("imagesize/ncols"), tree.findtext("imagesize/nrows"))
    return shapes, size, deleted


def _size(w: Any, h: Any) -> tuple[float, float] | None:
    try:
        size = float(w), float(h)
    except (TypeError, ValueError):
        return None
    return size if size[0] > 0 and size[1] > 0 else None


def _class_list(base: Path) -> ClassMap | None:
    """labelme's labels.txt (``__ignore__`` dropped, so ``_background_`` is 0) or a
    class_names.txt beside the files."""
    for name in _LISTS:
        p = base / name
        if not p.is_file():
            continue
        try:
            found = load_class_map(p)
        except ClassMapError as exc:
            raise InputError(exc.reason, path=str(p)) from None
        names = [n for _, n in found.entries if n.strip() != IGNORE]
        return ClassMap.from_names(names, origin=str(p))
    return None


def _read_file(
    path: Path,
    rel: str,
    source: str,
    writer: RowWriter,
    facts: AnnotationFacts,
    found: ClassMap,
    background: int | None,
    counts: Counter[str],
) -> None:
    shapes, size, deleted = _shapes(path)
    counts["files"] += 1
    writer.images.add(ImageRecord(rel, rel, None, size, path))
    counts["deleted"] += deleted
    index = found.index_of()
    for number, (name, kind, points) in enumerate(shapes):
        ident = f"{rel}#{number}"
        if name.strip() == IGNORE:
            counts["ignore_regions"] += 1
            continue
        counts[kind] += 1
        named = Example(row=writer.rows, id=ident, source=source, value=name)
        label = class_index(facts, name, index, found.origin, named)
        if label is None:
            reject(writer, counts, ident, source, rel, "LG030")
            continue
        example = Example(row=writer.rows, id=ident, source=source, value=label)
        try:  # a mask object of LabelMe XML has no vertices: nothing to read
            numbers = None if kind == "mask" and points is None else _numbers(points)
        except (TypeError, ValueError):  # labelme's own readers raise on it (formats.md)
            message = "shapes whose points are not [x, y] number pairs"
            fix = "redraw these shapes, or rewrite their points as [x, y] pairs"
            reject_unplaced(writer, facts, counts, example, rel, message=message, fix=fix)
            continue
        writer.add(ident, label, source, name, group=rel)
        check_background(facts, label, background, example)
        if numbers is not None:
            _geometry(facts, kind, numbers, size, example, writer.sizes)


def _numbers(raw: Any) -> list[tuple[float, float]]:
    """A shape's points as numbers (raises TypeError or ValueError on anything else)."""
    return [(float(x), float(y)) for x, y in raw]


def _geometry(
    facts: AnnotationFacts,
    kind: str,
    points: list[tuple[float, float]],
    size: tuple[float, float] | None,
    example: Example,
    sizes: BoxSizes,
) -> None:
    if kind in _POINTS and len(points) != _POINTS[kind]:
        need = _POINTS[kind]
        facts.hit(
            "LG031",
            example,
            message=f"{kind}s with {len(points)} points (labelme draws a {kind} from {need})",
            fix="redraw them: labelme's shape_to_mask asserts the point count",
        )
        return
    if kind in ("rectangle", "mask"):
        (xa, ya), (xb, yb) = points
        box = (min(xa, xb), min(ya, yb), max(xa, xb), max(ya, yb))
        check_box(facts, box, size, example, sizes=sizes)
    elif kind == "circle":
        (cx, cy), (px, py) = points
        r = ((px - cx) ** 2 + (py - cy) ** 2) ** 0.5
        check_box(facts, (cx - r, cy - r, cx + r, cy + r), size, example, sizes=sizes)
    elif kind in ("line", "point"):
        check_points(facts, points, size, example, shape=kind, least=_POINTS[kind], tolerance=_PX)
    elif kind in _LEAST:
        check_points(facts, points, size, example, shape=kind, least=_LEAST[kind], tolerance=_PX)
    else:
        facts.hit(
            "LG031",
            example,
            message=f"shapes of a type labelme does not draw ({kind!r})",
            fix="use rectangle, polygon, circle, line, linestrip, point, points or mask",
        )


def _names(files: list[Path]) -> Iterator[str]:
    for path in files:
        for name, _, _ in _shapes(path)[0]:
            if name.strip() not in (IGNORE, ""):  # an empty label is no class: LG030
                yield name.strip()


def _flags(files: list[Path]) -> list[str]:
    """The image flags labelme files set (``"flags": {"cat": true}``: image-level labels)."""
    seen: list[str] = []
    for path in files:
        if path.suffix.lower() != ".json":
            continue
        try:
            doc = load_json(read_small_text(path, "labelme file"), str(path))
        except json.JSONDecodeError:
            continue  # the read has said so
        flags = doc.get("flags") if isinstance(doc, dict) else None
        if isinstance(flags, dict):
            seen += [str(k) for k, v in flags.items() if v is True and str(k) not in seen]
    return seen


def _ignore_as_class(facts: AnnotationFacts, given: ClassMap) -> None:
    """A class map given with labelme's ``__ignore__`` line read as a class (LG030): labelme
    makes it -1 and ``_background_`` 0, so every index after it is one too high."""
    at = next((i for i, n in given.entries if n.strip() == IGNORE), None)
    if at is None:
        return
    facts.hit(
        "LG030",
        Example(row=-1, id=f"{Path(given.origin).name}:{at + 1}", source=None, value=IGNORE),
        message=f"the class map given holds labelme's {IGNORE} as class {at}: labelme2voc "
        "makes it -1 (no class), so the classes after it are one index higher than labelme's",
        fix=f"put labels.txt beside the JSON files (labelgate reads it as labelme does), or "
        f"remove the {IGNORE} line from the map given",
        unit="classes",
    )


def _empty(files: list[Path], counts: Counter[str]) -> str:
    """What labelme files without a shape that is a row hold, in words."""
    held = f"no shape in {len(files)} labelme files"
    if counts["ignore_regions"]:
        held += f" but {counts['ignore_regions']} {IGNORE} regions"
    flags = _flags(files)
    if flags:
        shown = ", ".join(repr(f) for f in flags[:5]) + (" ..." if len(flags) > 5 else "")
        held += (
            f"; their image flags ({shown}) are labelme's image-level labels, which are not "
            "read as targets"
        )
    return held


class LabelMeReader(Reader):
    """labelme JSON files (a folder of them) and MIT LabelMe XML files."""

    name = "labelme"
    title = "LabelMe (labelme JSON files, MIT LabelMe XML)"
    suffixes = (".json", ".xml")
    task = "detection"

    def detect(self, path: Path, task: str | None = None) -> Claim | None:
        if path.is_file():
            if path.suffix.lower() == ".json" and is_labelme_json(path):
                return Claim(0.95, "a JSON file with labelme's shapes and imagePath")
            if path.suffix.lower() == ".xml" and is_labelme_xml(path):
                return Claim(0.95, "an XML file with MIT LabelMe's <polygon><pt> objects")
            return None
        if not path.is_dir():
            return None
        for pattern, test, what in (
            ("*.json", is_labelme_json, "labelme JSON files"),
            ("*.xml", is_labelme_xml, "MIT LabelMe XML files"),
        ):
            first = next((p for p in sorted(path.glob(pattern)) if p.is_file()), None)
            if first is not None and test(first):
                return Claim(0.85, f"a folder of {what} ({first.name})")
        return None

    def read(
        self, paths: list[Path], sink: RowSink, facts: AnnotationFacts, options: ReadOptions
    ) -> Read:
        root = paths[0]
        base = root.parent if root.is_file() else root
        files = _files(root)
        if not files:
            raise InputError("no labelme JSON or MIT LabelMe XML files here", path=str(root))
        listed = _class_list(base)
        if options.class_map is not None:
            found, why = options.class_map, f"the class map given ({options.class_map.origin})"
            _ignore_as_class(facts, found)
        elif listed is not None:
            found = listed
            why = f"{Path(listed.origin).name} beside the files (__ignore__ is no class)"
        else:
            names = sorted(set(_names(files)))
            found = ClassMap.from_names(names, origin=f"{root} (the shape labels found, sorted)")
            why = "the shape labels found, sorted: indices depend on the labels present"
        writer = sink.rows(names=True)
        counts: Counter[str] = Counter()
        for path in files:
            rel = path.relative_to(base).as_posix()
            source = path.parent.name
            _read_file(path, rel, source, writer, facts, found, options.background, counts)
        writer.close()
        counts["shapes"] = writer.rows
        if counts["ignore_regions"]:
            facts.notes.append(
                f"{counts['ignore_regions']} shapes labelled {IGNORE} (don't-care regions, "
                "labelme2voc writes them as -1) are not rows"
            )
        if counts["deleted"]:
            facts.notes.append(f"{counts['deleted']} deleted LabelMe objects are not rows")
        facts.counts.update(counts)
        if not writer.rows:
            facts.empty = _empty(files, counts)
        return Read(found, why) if found.entries else Read()
