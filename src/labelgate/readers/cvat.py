"""CVAT XML: "CVAT for images 1.1" (shapes per image) and "CVAT for video 1.1" (tracks).

The labels declared in ``<meta>`` (a task's, a job's or a project's ``<labels>``, in their order,
with their attributes) are the class map; ``--class-names`` replaces it. Rows: one per shape or
tag of an image (id = ``image_name#n``, the n-th shape from 0) and one per frame of a track where
the shape is not ``outside`` (id = ``track 3 frame 12``); label = the index of the shape's label,
source = the image's ``subset`` where CVAT wrote one, else the XML file's name, name = the label.
The file is parsed as it streams (``iterparse``), each image or track dropped once read.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from labelgate.contract.classmap import ClassMap
from labelgate.core.annotations import AnnotationFacts
from labelgate.core.report import Example
from labelgate.errors import InputError, one_line
from labelgate.readers.base import Claim, Read, Reader, ReadOptions
from labelgate.readers.common.boxes import (
    check_background,
    check_box,
    check_points,
    check_tables,
    class_index,
)
from labelgate.readers.common.imageindex import ImageRecord
from labelgate.readers.common.instances import POINT_TOLERANCE as _PX
from labelgate.readers.common.sink import RowSink, RowWriter, reject, reject_unplaced

__all__ = ["CvatReader", "is_cvat_xml", "read_cvat"]

# shape -> the points it needs (boxes and ellipses are judged as boxes)
_LEAST = {"polygon": 3, "polyline": 2, "points": 1}
_READ = 1 << 16  # bytes fed to expat at a time
_MAX_READ = 1 << 28
_SHAPES = {"box", "polygon", "polyline", "points", "ellipse", "cuboid", "mask", "skeleton", "tag"}


def is_cvat_xml(path: Path) -> bool:
    """Whether an XML file is a CVAT export: root ``<annotations>`` whose first element is
    ``<version>`` or ``<meta>`` (the first 4 KB are read). CVAT's exporter writes ``<version>``
    first, but neither its importer nor Datumaro's reads it: CVAT's ``load`` takes the elements
    as they come (``cvat/apps/dataset_manager/formats/cvat.py``, ``load``, cvat@00598ab8),
    Datumaro's needs ``<meta>`` (``plugins/data_formats/cvat/base.py:33-48``, datumaro@3d533b9)."""
    try:
        with path.open("rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    text = re.sub(rb"<\?.*?\?>|<!--.*?-->", b"", head, flags=re.S).lstrip(b"\xef\xbb\xbf")
    return re.match(rb"\s*<annotations>\s*<(version|meta)>", text) is not None


def _file(path: Path) -> Path:
    return path / "annotations.xml" if path.is_dir() else path


def _events(path: Path) -> Iterator[tuple[str, ET.Element]]:
    """The parse events of the file, fed to expat in reads that double while no event comes.

    expat before 2.6 lexes a token held over many reads again from its start at each read
    (CVE-2023-52425): ``iterparse``'s 16 KB reads took minutes on a 60 MB attribute. Doubling
    the read while a token stays open makes the work linear in its length; once events come,
    reads shrink back to ``_READ``.
    """
    parser: ET.XMLPullParser[ET.Element] = ET.XMLPullParser(events=("start", "end"))
    try:
        with path.open("rb") as f:
            size = _READ
            while chunk := f.read(size):
                parser.feed(chunk)
                got = False
                for event in parser.read_events():
                    got = True
                    yield event  # type: ignore[misc]
                size = _READ if got else min(size * 2, _MAX_READ)
            parser.close()
            yield from parser.read_events()  # type: ignore[misc]
    except (ET.ParseError, LookupError) as exc:  # LookupError: an unknown declared encoding
        raise InputError(
            f"not a readable CVAT XML file ({one_line(exc)})", path=str(path)
        ) from None


def declared(path: Path) -> tuple[list[str], dict[str, list[str]]]:
    """The labels ``<meta>`` declares, in order (skeleton parts left out), and each one's
    attribute names."""
    names: list[str] = []
    attributes: dict[str, list[str]] = {}
    for event, elem in _events(path):
        if event != "end":
            continue
        if elem.tag == "meta":
            for labels in elem.iter("labels"):
                for label in labels.findall("label"):
                    if (label.findtext("parent") or "").strip():
                        continue
                    name = (label.findtext("name") or "").strip()
                    names.append(name)
                    attributes[name] = [
                        (a.findtext("name") or "").strip() for a in label.iter("attribute")
                    ]
            break
        if elem.tag in ("image", "track"):  # no <meta> before the annotations
            break
    return names, attributes


def read_cvat(
    path: Path,
    writer: RowWriter,
    facts: AnnotationFacts,
    index: dict[str, int],
    origin: str,
    background: int | None,
    counts: Counter[str],
) -> None:
    """Stream one CVAT XML file into rows of ``writer``, labels looked up in ``index``."""
    video_size: tuple[float, float] | None = None
    for event, elem in _events(path):
        if event != "end":
            continue
        if elem.tag == "original_size":
            video_size = _size(elem.findtext("width"), elem.findtext("height"))
        elif elem.tag == "image":
            counts["images"] += 1
            name = elem.get("name") or elem.get("id") or "?"
            source = elem.get("subset") or path.name
            size = _size(elem.get("width"), elem.get("height"))
            shapes = [c for c in elem if c.tag in _SHAPES]
            writer.images.add(ImageRecord(name, name, elem.get("name"), size, path))
            for number, shape in enumerate(shapes):
                ident = f"{name}#{number}"
                _shape(shape, ident, source, size, writer, facts, index, origin, background, counts)
            elem.clear()
        elif elem.tag == "track":
            counts["tracks"] += 1
            tid = elem.get("id", "?")
            source = elem.get("subset") or path.name
            for shape in elem:
                if shape.tag not in _SHAPES:
                    continue
                if shape.get("outside") == "1":
                    counts["outside"] += 1  # the object has left the frame: no target there
                    continue
                ident = f"track {tid} frame {shape.get('frame', '?')}"
                shape.set("label", elem.get("label", ""))
                _shape(
                    shape,
                    ident,
                    source,
                    video_size,
                    writer,
                    facts,
                    index,
                    origin,
                    background,
                    counts,
                )
            elem.clear()


def _shape(
    shape: ET.Element,
    ident: str,
    source: str,
    size: tuple[float, float] | None,
    writer: RowWriter,
    facts: AnnotationFacts,
    index: dict[str, int],
    origin: str,
    background: int | None,
    counts: Counter[str],
) -> None:
    kind = shape.tag
    counts[kind + "es" if kind == "box" else kind + "s"] += 1
    if shape.get("occluded") == "1":
        counts["occluded"] += 1
    name = shape.get("label", "").strip()
    # the image: a listed image's name, or a track's frame (each frame an image of the video)
    image = ident.rsplit("#", 1)[0] if shape.get("frame") is None else f"frame {shape.get('frame')}"
    named = Example(row=writer.rows, id=ident, source=source, value=name)
    if not name:  # Datumaro's export of an annotation without a label, read back as one
        counts["unlabelled"] += 1
        _unlabelled(facts, named)
        reject(writer, counts, ident, source, image, "LG048")
        return
    label = class_index(facts, name, index, origin, named)
    if label is None:
        counts["not_in_map"] += 1
        reject(writer, counts, ident, source, image, "LG030")
        return
    example = Example(row=writer.rows, id=ident, source=source, value=label)
    try:
        geometry = _geometry(shape, kind)
    except ValueError:  # Datumaro's importer reads each coordinate with float() and raises
        message = "shapes whose coordinates are not numbers"
        fix = "re-export the task from CVAT: each coordinate is a number"
        reject_unplaced(writer, facts, counts, example, image, message=message, fix=fix)
        return
    writer.add(ident, label, source, name, group=image)
    if kind == "tag":
        return
    check_background(facts, label, background, example)
    if kind in ("box", "ellipse"):
        box, turned = geometry
        frame = None if turned else size  # a rotated box's corners are elsewhere
        check_box(facts, box, frame, example, sizes=writer.sizes)
    elif kind in _LEAST:
        check_points(facts, geometry, size, example, shape=kind, least=_LEAST[kind], tolerance=_PX)


def _geometry(shape: ET.Element, kind: str) -> Any:
    """A box or ellipse as its box (x0, y0, x1, y1) and whether it is rotated, the points of a
    polygon, polyline or points shape, else ``None`` (raises ValueError on a coordinate that
    is missing or not a number)."""
    if kind == "box":
        x0, y0, x1, y1 = (float(shape.get(k, "")) for k in ("xtl", "ytl", "xbr", "ybr"))
        return (x0, y0, x1, y1), float(shape.get("rotation", "0") or 0) != 0
    if kind == "ellipse":
        cx, cy, rx, ry = (float(shape.get(k, "")) for k in ("cx", "cy", "rx", "ry"))
        return (cx - rx, cy - ry, cx + rx, cy + ry), False
    if kind in _LEAST:
        return _points(shape.get("points", ""))
    return None


def _unlabelled(facts: AnnotationFacts, example: Example) -> None:
    """Count a shape whose label is empty (LG048): no class to train on, which Datumaro's CVAT
    importer reads as an annotation without a label and its exporters skip."""
    facts.hit(
        "LG048",
        example,
        message='shapes without a label (label=""): no training target',
        fix="label these shapes in CVAT, or delete them: a shape without a label trains "
        "nothing (Datumaro's exporters skip it; a loader looking '' up in the class map raises)",
    )


def _points(text: str) -> list[tuple[float, float]]:
    """CVAT's ``x1,y1;x2,y2;...`` (raises ValueError on anything else)."""
    out = []
    for pair in filter(None, text.strip().split(";")):
        x, y = pair.split(",")
        out.append((float(x), float(y)))
    return out


def _size(w: str | None, h: str | None) -> tuple[float, float] | None:
    try:
        size = float(w or ""), float(h or "")
    except ValueError:
        return None
    return size if size[0] > 0 and size[1] > 0 else None


class CvatReader(Reader):
    """CVAT for images / for video 1.1 XML files, or an export folder holding annotations.xml."""

    name = "cvat"
    title = "CVAT for images / for video 1.1 XML"
    suffixes = (".xml",)
    capabilities = frozenset({"many"})
    task = "detection"

    def detect(self, path: Path, task: str | None = None) -> Claim | None:
        if path.is_file() and path.suffix.lower() == ".xml" and is_cvat_xml(path):
            return Claim(0.95, "an XML file with CVAT's <annotations><version> or <meta>")
        if path.is_dir() and is_cvat_xml(path / "annotations.xml"):
            return Claim(0.9, "a folder with a CVAT annotations.xml")
        return None

    def read(
        self, paths: list[Path], sink: RowSink, facts: AnnotationFacts, options: ReadOptions
    ) -> Read:
        files = [_file(p) for p in paths]
        tables = {f.name if len(files) == 1 else str(f): declared(f) for f in files}
        check_tables(facts, {k: v[0] for k, v in tables.items()})
        first = files[0]
        names, attributes = next(iter(tables.values()))
        if options.class_map is not None:
            found, why = options.class_map, f"the class map given ({options.class_map.origin})"
        elif names:
            found = ClassMap.from_names(names, origin=f"{first} (<meta> labels)")
            why = f"the labels {first.name}'s <meta> declares, in their order"
        else:
            raise InputError(
                "no labels in <meta>: give the task's labels with --class-names", path=str(first)
            )
        writer = sink.rows(names=True)
        counts: Counter[str] = Counter()
        index = dict(found.index_of())
        for f in files:
            read_cvat(f, writer, facts, index, found.origin, options.background, counts)
        writer.close()
        counts["rows"] = writer.rows
        counts["attributes"] = sum(len(a) for a in attributes.values())
        if counts["outside"]:
            facts.notes.append(
                f"{counts['outside']} track frames marked outside (the object is out of view) "
                "are not rows"
            )
        facts.counts.update(counts)
        if not writer.rows:
            facts.empty = (
                f"no shape, tag or track frame in {counts['images']} images"
                if counts["images"]
                else "no image and no track"
            )
        if not any(counts[k] for k in ("boxes", "polygons", "polylines", "points", "ellipses")):
            facts.task = "classification"
        return Read(found, why)
