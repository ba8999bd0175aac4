"""Pascal VOC XML: one row per ``<object>``, its ``<name>`` looked up in the class map.

The class map is ``--class-names``, else a class list beside the files (``class_names.txt``,
``labels.txt``, or a datumaro ``labelmap.txt``); without one, the names found, sorted. A name not in
the map (``tvmonitor`` against ``tv``) is LG030 with its file, and its object a rejected row; so
is an object without a numeric ``<bndbox>`` (LG031, counted in its class). Rows:
id = ``file#object``, source = the folder, name = the object's name.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from labelgate.contract.classmap import ClassMap, load_class_map, normalise_name
from labelgate.core.annotations import AnnotationFacts
from labelgate.core.findings import plural
from labelgate.core.report import Example
from labelgate.errors import ClassMapError, InputError, one_line
from labelgate.io.classnames import check_names, check_source
from labelgate.io.files import read_small_text
from labelgate.readers.base import Claim, Read, Reader, ReadOptions
from labelgate.readers.common.boxes import check_background, check_box, check_tables, tally
from labelgate.readers.common.imageindex import ImageRecord
from labelgate.readers.common.layout import is_voc_xml
from labelgate.readers.common.roots import Mixed, Root, Split, dataset_root
from labelgate.readers.common.sink import RowSink, reject, reject_unplaced

__all__ = ["VocReader", "read_voc"]

_LISTS = ("class_names.txt", "labels.txt", "labelmap.txt")


def read_voc(
    root: Path,
    sink: RowSink,
    facts: AnnotationFacts,
    given: ClassMap | None,
    background: int | None,
    splits: Sequence[Split] = (),
) -> tuple[ClassMap, str]:
    """Read ``root`` (a folder of XML files, or one file; with ``splits``, a dataset root whose
    splits keep their XML files in ``Split.path``, each split a source) into rows in ``sink``;
    the class map the names were looked up in, and how it was found."""
    facts.task = "detection"
    if splits:
        files = [(p, s.name) for s in splits for p in sorted(s.path.rglob("*.xml")) if p.is_file()]
    elif root.is_file():
        files = [(root, root.parent.name)]
    else:
        files = [(p, p.parent.name) for p in sorted(root.rglob("*.xml")) if p.is_file()]
    base = root.parent if root.is_file() else root
    listed = None if given is not None else _class_list(base)
    if listed is None and given is None and base.name == "Annotations":
        listed = _class_list(base.parent)  # the dataset root holds VOC's label map
    if listed is None and given is None and splits:
        listed = _split_lists(facts, root, splits)
    if given is not None:
        found, why = given, f"the class map given ({given.origin})"
    elif listed is not None:
        found, why = listed, f"{Path(listed.origin).name} beside the annotations ({listed.origin})"
    else:  # a first pass for the names, each file dropped once read
        names = sorted(
            {(o.findtext("name") or "").strip() for p, _ in files for o in _parse(p).iter("object")}
            - {""}  # an object without a name is no class: LG030
        )
        found = ClassMap.from_names(names, origin=f"{root} (the object names found, sorted)")
        why = "the object names found, sorted: indices depend on the names present"
    index = found.index_of()
    writer = sink.rows(names=True)
    counts: Counter[str] = Counter()
    for path, source in files:
        tree = _parse(path)
        rel = path.relative_to(base).as_posix()
        size = _size(tree)
        counts["files"] += 1
        file = (tree.findtext("filename") or "").strip() or None
        sink.images.add(ImageRecord(rel, rel, file, size, path))
        for number, obj in enumerate(tree.iter("object")):
            name = (obj.findtext("name") or "").strip()
            ident = f"{rel}#{number}"
            example = Example(row=writer.rows, id=ident, source=source, value=name)
            label = index.get(normalise_name(name))
            if label is None:
                h = facts.hit(
                    "LG030",
                    example,
                    message=f"objects named {name!r}, a <name> the class map does not declare",
                    fix=f"add the name to the class map ({found.origin}) or rename the "
                    "object to the map's spelling",
                )
                tally(h.details, "labels", name)
                counts["objects_not_in_map"] += 1
                reject(writer, counts, ident, source, rel, "LG030")
                continue
            for flag in ("difficult", "truncated", "occluded"):
                if (obj.findtext(flag) or "").strip() == "1":
                    counts[flag] += 1
            example = Example(row=writer.rows, id=ident, source=source, value=label)
            box = _box(obj)
            if box is None:  # detectron2's and ultralytics' VOC readers raise on it (formats.md)
                message = "objects without a numeric <bndbox>"
                fix = "give each object xmin, ymin, xmax and ymax"
                reject_unplaced(writer, facts, counts, example, rel, message=message, fix=fix)
                continue
            writer.add(ident, label, source, name, group=rel)
            check_background(facts, label, background, example)
            check_box(facts, box, size, example, sizes=writer.sizes)
    writer.close()
    counts["objects"] = writer.rows
    facts.counts.update(counts)
    if not writer.rows:
        facts.empty = f"no object in {counts['files']} VOC files"
    return found, why


def _parse(path: Path) -> ET.Element:
    try:
        return ET.fromstring(read_small_text(path, "VOC annotation"))
    except (ET.ParseError, LookupError, InputError) as exc:  # LookupError: unknown encoding
        raise InputError(
            f"not a readable Pascal VOC XML file ({one_line(exc)})", path=str(path)
        ) from None


def _split_lists(facts: AnnotationFacts, root: Path, splits: Sequence[Split]) -> ClassMap | None:
    """The class lists the splits keep in their own folders (the first's is the map), compared:
    a name that changes between splits, or a class only one split lists, is LG030."""
    lists = {s.name: _class_list(root / s.name) or _class_list(s.path) for s in splits}
    found = {name: cmap for name, cmap in lists.items() if cmap is not None}
    if not found:
        return None
    tables = {}
    for name, cmap in found.items():
        tables[name] = cmap.name_of()  # by index: its gaps are not spelled out
    check_tables(facts, tables)
    return next(iter(found.values()))


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


class VocReader(Reader):
    """Pascal VOC XML files (one ``<annotation>`` per image), or a folder of them."""

    name = "voc"
    title = "Pascal VOC XML (<annotation> files, or a folder of them)"
    suffixes = (".xml",)
    task = "detection"

    def detect(self, path: Path, task: str | None = None) -> Claim | None:
        if path.is_file():
            if path.suffix.lower() == ".xml" and is_voc_xml(path):
                return Claim(0.9, "a Pascal VOC XML file (root element <annotation>)")
            return None
        if not path.is_dir():
            return None
        own = _own_folder(path)
        if own is not None:
            where = "" if own.parent == path else f"{own.parent.name}/: "
            return Claim(0.8, f"a folder of Pascal VOC XML files ({where}{own.name}: <annotation>)")
        root = dataset_root(path)  # one such folder per split (Roboflow: XML beside the JPEGs)
        if isinstance(root, Root) and root.format == "voc":
            return Claim(0.8, root.why)
        return None

    def read(
        self, paths: list[Path], sink: RowSink, facts: AnnotationFacts, options: ReadOptions
    ) -> Read:
        given = paths[0]
        splits: tuple[Split, ...] = ()
        if given.is_dir() and _own_folder(given) is None:
            root = dataset_root(given)
            if isinstance(root, Mixed):
                raise InputError(f"{root}: validate each with its own path", path=str(given))
            if isinstance(root, Root) and root.format == "voc":
                splits = root.splits
                each = "; ".join(
                    f"{s.name}: {s.path.relative_to(given).as_posix()}/" for s in splits
                )
                facts.notes.append(
                    f"{given} read as {plural(len(splits), 'split')}, each a source ({each})"
                )
        found, why = read_voc(given, sink, facts, options.class_map, options.background, splits)
        return Read(found, why) if found.entries else Read()


def _own_folder(path: Path) -> Path | None:
    """The first VOC XML file of the folder holding ``path``'s own (VOC keeps them in one folder:
    the one given, its Annotations/, or Kaggle's annotations/ beside images/), or ``None``."""
    for folder in (path, path / "Annotations", path / "annotations"):
        first = next((p for p in sorted(folder.glob("*.xml")) if p.is_file()), None)
        if first is not None and is_voc_xml(first):
            return first
    return None
