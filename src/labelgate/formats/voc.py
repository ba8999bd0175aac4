"""Pascal VOC XML: one row per ``<object>``, its ``<name>`` looked up in the class map.

The class map is ``--class-names``, else a class list beside the files (``class_names.txt``,
``labels.txt``, or a datumaro ``labelmap.txt``); without one, the names found, sorted. A name not in
the map (``tvmonitor`` against ``tv``) is LG030 with its file, and its object is not a row. Rows:
id = ``file#object``, source = the folder, name = the object's name.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

from labelgate.annotations import AnnotationFacts
from labelgate.classmap import ClassMap, load_class_map, normalise_name
from labelgate.classnames import check_names, check_source
from labelgate.errors import ClassMapError, InputError, one_line
from labelgate.files import read_small_text
from labelgate.formats.rows import RowWriter, check_background, check_box
from labelgate.report import Example

__all__ = ["read_voc"]

_LISTS = ("class_names.txt", "labels.txt", "labelmap.txt")


def read_voc(
    root: Path,
    out: Path,
    facts: AnnotationFacts,
    given: ClassMap | None,
    background: int | None,
) -> ClassMap | None:
    """Read ``root`` (a folder of XML files, or one file) into rows at ``out``."""
    facts.task = "detection"
    files = [root] if root.is_file() else sorted(p for p in root.rglob("*.xml") if p.is_file())
    base = root.parent if root.is_file() else root
    found = given or _class_list(base)
    if found is None:  # a first pass for the names, each file dropped once read
        names = sorted(
            {(o.findtext("name") or "").strip() for p in files for o in _parse(p).iter("object")}
        )
        found = ClassMap.from_names(names, origin=f"{root} (the object names found, sorted)")
    index = found.index_of()
    writer = RowWriter(out, names=True)
    counts: Counter[str] = Counter()
    for path in files:
        tree = _parse(path)
        rel = path.relative_to(base).as_posix()
        source = path.parent.name
        size = _size(tree)
        counts["files"] += 1
        for number, obj in enumerate(tree.iter("object")):
            name = (obj.findtext("name") or "").strip()
            ident = f"{rel}#{number}"
            example = Example(row=-1, id=ident, source=source)
            label = index.get(normalise_name(name))
            if label is None:
                facts.hit(
                    "LG030",
                    example,
                    message="objects whose <name> is not in the class map",
                    fix=f"add the name to the class map ({found.origin}) or rename the "
                    "object to the map's spelling",
                )
                counts["objects_not_in_map"] += 1
                continue
            for flag in ("difficult", "truncated", "occluded"):
                if (obj.findtext(flag) or "").strip() == "1":
                    counts[flag] += 1
            writer.add(ident, label, source, name)
            example = Example(row=writer.rows - 1, id=ident, source=source, value=label)
            check_background(facts, label, background, example)
            box = _box(obj)
            if box is None:
                facts.hit(
                    "LG031",
                    example,
                    message="objects without a numeric <bndbox>",
                    fix="give each object xmin, ymin, xmax and ymax",
                )
                continue
            check_box(facts, box, size, example)
    writer.close()
    counts["objects"] = writer.rows
    facts.counts.update(counts)
    return found


def _parse(path: Path) -> ET.Element:
    try:
        return ET.fromstring(read_small_text(path, "VOC annotation"))
    except (ET.ParseError, InputError) as exc:
        raise InputError(
            f"not a readable Pascal VOC XML file ({one_line(exc)})", path=str(path)
        ) from None


def _class_list(base: Path) -> ClassMap | None:
    for name in _LISTS:
        p = base / name
        if not p.is_file():
            continue
        if name == "labelmap.txt":  # datumaro: 'name:r,g,b:parts:actions', '#' comments
            text = read_small_text(p, "label map")
            lines = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
            try:  # the class-map guard: a link to /etc/passwd would give its user names
                check_source(p, str(p))
                check_names(enumerate(lines), str(p), what="line")
            except ClassMapError as exc:
                raise InputError(exc.reason, path=str(p)) from None
            return ClassMap.from_names([ln.split(":")[0] for ln in lines], origin=str(p))
        try:
            return load_class_map(p)
        except ClassMapError as exc:
            raise InputError(exc.reason, path=str(p)) from None
    return None


def _size(tree: ET.Element) -> tuple[float, float] | None:
    try:
        w, h = float(tree.findtext("size/width") or ""), float(tree.findtext("size/height") or "")
    except ValueError:
        return None
    return (w, h) if w > 0 and h > 0 else None


def _box(obj: ET.Element) -> tuple[float, float, float, float] | None:
    try:
        return (
            float(obj.findtext("bndbox/xmin") or ""),
            float(obj.findtext("bndbox/ymin") or ""),
            float(obj.findtext("bndbox/xmax") or ""),
            float(obj.findtext("bndbox/ymax") or ""),
        )
    except ValueError:
        return None
