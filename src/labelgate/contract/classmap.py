"""Class-name maps: reading them from txt, json, yaml or csv, and checking they are a bijection."""

from __future__ import annotations

import io
import json
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from labelgate.core.classrange import absent_of
from labelgate.core.findings import join_values
from labelgate.errors import ClassMapError, InputError
from labelgate.io.bounded import load_json, yaml_problem
from labelgate.io.classnames import (
    MAX_CLASS_NAMES,
    check_header,
    check_keys,
    check_names,
    check_source,
)
from labelgate.io.files import load_yaml, read_small_text

__all__ = ["ClassMap", "load_class_map", "normalise_name"]

_SPACE = re.compile(r"\s+")
_INDEX = re.compile(r"\s*-?\d+\s*")


def normalise_name(name: str) -> str:
    """Return the form under which two class names count as the same: case-folded, spaces collapsed."""
    return _SPACE.sub(" ", name.strip()).casefold()


@dataclass(frozen=True, slots=True)
class ClassMap:
    """A class-name map as written by its author, before any judgement on it.

    Attributes:
        entries: ``(index, name)`` pairs in the order they were written.
        origin: the file it came from, or ``"inline"``.
        trailing_blank_lines: blank lines at the end of a txt map (each would be read as a class
            by a loader that splits on newlines).
        declared: a class count the file states besides its names (YOLO ``nc``, Darknet
            ``classes``, Hugging Face ``num_classes``), or ``None``.
        placeholders: indices whose entry names no class to learn: one labelgate wrote itself to
            fill a gap (torchvision's ``N/A`` between COCO's sparse ids), a background entry, a
            COCO category that only groups the others: never a finding of their own.
    """

    entries: tuple[tuple[int, str], ...]
    origin: str = "inline"
    trailing_blank_lines: int = 0
    declared: int | None = None
    placeholders: frozenset[int] = frozenset()

    @classmethod
    def from_names(cls, names: list[str] | tuple[str, ...], *, origin: str = "inline") -> ClassMap:
        """Build a map whose index is the position in ``names``."""
        return cls(tuple(enumerate(names)), origin=origin)

    _names: Mapping[int, str] = field(init=False, repr=False, compare=False)
    _indices: Mapping[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Built once: a check asks for a name per class, and K reaches a vocabulary's size.
        names: dict[int, str] = {}
        indices: dict[str, int] = {}
        for index, name in self.entries:
            names.setdefault(index, name)
            indices.setdefault(normalise_name(name), index)
        object.__setattr__(self, "_names", MappingProxyType(names))
        object.__setattr__(self, "_indices", MappingProxyType(indices))

    def name_of(self) -> Mapping[int, str]:
        """Index -> name, keeping the first name written for an index."""
        return self._names

    def index_of(self) -> Mapping[str, int]:
        """Normalised name -> index, keeping the first index written for a name."""
        return self._indices

    def placeholders_at(self, mapping: Mapping[int, int]) -> frozenset[int]:
        """The placeholders (a COCO grouping category, a background entry) at the indices
        ``mapping`` gives them, where it keeps them: a reading that renumbers the indices."""
        return frozenset(mapping[i] for i in self.placeholders if mapping.get(i, -1) >= 0)

    def fingerprint(self) -> str:
        """A stable hash of the map: ``sha256:`` over its ``index<TAB>name`` lines, sorted."""
        import hashlib

        lines = "".join(f"{i}\t{name}\n" for i, name in sorted(self.entries))
        return "sha256:" + hashlib.sha256(lines.encode("utf-8")).hexdigest()

    def problems(self, num_classes: int, *, background: int | None = None) -> list[str]:
        """List every way this map fails to be a bijection between names and ``0..num_classes-1``.

        Args:
            num_classes: the number of classes K the model is built for.
            background: a detection background index inside ``0..K-1``, which the map need not
                name (torchvision's detection models count it in ``num_classes``).

        Returns:
            One sentence per problem, each naming the names or indices concerned; empty when the
            map is a bijection onto ``0..K-1``.
        """
        found: list[str] = []
        unnamed = {background} - {i for i, _ in self.entries} if background is not None else set()
        unnamed = {i for i in unnamed if 0 <= i < num_classes}
        if len(self.entries) + len(unnamed) != num_classes:
            found.append(
                f"the map has {len(self.entries)} entries"
                + (f" and the background {background}" if unnamed else "")
                + f" for {num_classes} classes"
            )
        by_name: defaultdict[str, list[int]] = defaultdict(list)
        spelled: dict[str, str] = {}
        for index, name in self.entries:
            key = normalise_name(name)
            by_name[key].append(index)
            spelled.setdefault(key, name)
        for key, indices in by_name.items():
            # a gap's fillers share their name by design; a class sharing it is named twice
            named = [i for i in indices if i not in self.placeholders]
            if key == "" and named:
                found.append(f"empty class name at index {join_values(named)}")
            elif len(indices) > 1 and named:
                found.append(f"name {spelled[key]!r} appears at indices {join_values(indices)}")
        index_counts = Counter(index for index, _ in self.entries)
        for index, count in sorted(index_counts.items()):
            if count > 1:
                found.append(f"index {index} is given {count} names")
        outside = sorted(i for i in index_counts if not 0 <= i < num_classes)
        if outside:
            found.append(f"indices outside 0..{num_classes - 1}: {join_values(outside)}")
        # K is input (it may be 2**31): the missing indices are counted, the first ten named
        missing, first = absent_of(num_classes, set(index_counts) | unnamed)
        if missing:
            found.append(f"no name for indices {join_values(first, total=missing)}")
        if self.declared is not None and self.declared != len(self.entries):
            found.append(
                f"{self.origin} states {self.declared} classes and names {len(self.entries)}"
            )
        if self.trailing_blank_lines:
            found.append(
                f"{self.origin} ends with {self.trailing_blank_lines} blank line(s): a loader that "
                "splits on newlines grows an extra, empty class from them"
            )
        return found


def load_class_map(path: str | Path) -> ClassMap:
    """Read a class-name map.

    Formats, by extension: ``.txt`` (or none), one name per line, index = line number;
    ``.json`` and ``.yaml``/``.yml``, a list of names or a mapping (index -> name or name -> index);
    ``.csv``, rows of ``index,name`` with or without a header, or of ``name,index`` (keras-retinanet's
    classes file, ``class_name,id``: keras_retinanet/preprocessing/csv_generator.py:45-61@7ac91dfb);
    ``.pbtxt``, a TF Object Detection label map (its items' ``id`` and ``name``).

    Args:
        path: the file to read.

    Returns:
        The map as written, duplicates and gaps included (judge it with ``ClassMap.problems``).

    Raises:
        ClassMapError: the file is missing, unreadable or not of its extension's format.
    """
    p = Path(path)
    origin = str(path)
    check_source(p, origin)  # the name and, for a link, its target
    try:
        text = read_small_text(p, "class-name map")
    except InputError as exc:
        raise ClassMapError(exc.reason, path=origin) from None
    suffix = p.suffix.lower()
    if suffix == ".json":
        try:
            data = load_json(text, origin)
        except json.JSONDecodeError as exc:  # its message is a position, never the content
            raise ClassMapError(f"not valid JSON: {exc}", path=origin) from None
        except InputError as exc:  # nested too deep, too many values
            raise ClassMapError(exc.reason, path=origin) from None
        return _printable(_from_structure(data, origin))
    if suffix in (".yaml", ".yml"):
        import yaml

        try:
            data = load_yaml(text)
        except yaml.YAMLError as exc:
            raise ClassMapError(f"not valid YAML: {yaml_problem(exc)}", path=origin) from None
        return _printable(_from_structure(data, origin))
    if suffix == ".csv":
        return _printable(_from_csv(text, origin))
    if suffix == ".pbtxt":
        from labelgate.io.pbtxt import parse_label_map

        return _printable(ClassMap(tuple(parse_label_map(text, origin)), origin=origin))
    return _printable(_from_lines(text, origin))


def _printable(found: ClassMap) -> ClassMap:
    """The map, if every name is printable text (a file of NUL-separated or control characters,
    such as /proc/self/environ, is no class map) and a class name (classnames.check_names)."""
    for index, name in found.entries:
        bad = next((c for c in name if unicodedata.category(c) in ("Cc", "Cs")), None)
        if bad is not None:
            raise ClassMapError(
                f"the name of class {index} holds the control character U+{ord(bad):04X}: "
                "not a class map",
                path=found.origin,
            )
    suffix = Path(found.origin).suffix.lower()
    what = {".txt": "line", ".names": "line", ".csv": "row"}.get(suffix, "entry")
    check_names(found.entries, found.origin, what=what)
    return found


def _from_lines(text: str, origin: str) -> ClassMap:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline that ends the last line
    lines = [line.rstrip("\r") for line in lines]
    blanks = 0
    while lines and lines[-1].strip() == "":
        lines.pop()
        blanks += 1
    if not lines:
        raise ClassMapError("the class-name map is empty", path=origin)
    return ClassMap(tuple(enumerate(lines)), origin=origin, trailing_blank_lines=blanks)


def _from_structure(data: Any, origin: str) -> ClassMap:
    declared = None
    if isinstance(data, dict):
        check_keys(data, origin)
    if isinstance(data, dict) and "names" in data and isinstance(data["names"], list | dict):
        # A YOLO data.yaml (names beside nc, path, train, val...) or a Hugging Face ClassLabel
        # (names beside num_classes): the names are the map, the count is checked against them.
        count = data.get("nc", data.get("num_classes"))
        declared = count if isinstance(count, int) and not isinstance(count, bool) else None
        data = data["names"]
    found = _names_of(data, origin)
    return found if declared is None else replace(found, declared=declared)


def _names_of(data: Any, origin: str) -> ClassMap:
    if isinstance(data, list | dict) and len(data) > MAX_CLASS_NAMES:
        raise ClassMapError(f"more than {MAX_CLASS_NAMES:,} class names", path=origin)
    if isinstance(data, list):
        if not all(isinstance(n, str) for n in data):
            raise ClassMapError("a list map must hold class names (strings)", path=origin)
        if not data:
            raise ClassMapError("the class-name map is empty", path=origin)
        return ClassMap(tuple(enumerate(data)), origin=origin)
    if isinstance(data, dict) and data:
        check_keys(data, origin)
        entries: list[tuple[int, str]] = []
        for number, (key, value) in enumerate(data.items(), start=1):
            index, name = (key, value) if _is_index(key) else (value, key)
            if not _is_index(index) or not isinstance(name, str):
                raise ClassMapError(_not_an_entry(data, number, value), path=origin)
            entries.append((int(index), name))
        return ClassMap(tuple(entries), origin=origin)
    raise ClassMapError("expected a list of names or a mapping of index to name", path=origin)


def _not_an_entry(data: dict[Any, Any], number: int, value: Any) -> str:
    """Why a mapping is no class map, naming the entry by position and its value's type, never
    its key or content (the file may be anything but a class map: a dataset card whose
    description runs to pages, a file of credentials)."""
    reason = f"entry {number} (a {type(value).__name__}) is neither index -> name nor name -> index"
    if "features" in data and ("description" in data or "dataset_name" in data):
        return (
            "a Hugging Face dataset_info.json, not a class map: give the dataset folder (or its "
            "Parquet files) as PATH and its ClassLabel names are the class map; or list the "
            f"names one per line in a .txt file ({reason})"
        )
    return reason


def _is_index(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    # what int() takes: not "²" (isdigit says yes) nor "--5" (lstrip("-") would pass it)
    return isinstance(value, str) and _INDEX.fullmatch(value) is not None


def _name_index(row: list[str]) -> bool:
    """Whether a CSV row is ``name,index``: two cells, the second an index."""
    return len(row) == 2 and _is_index(row[1])


def _from_csv(text: str, origin: str) -> ClassMap:
    import csv  # only for a class map in CSV: not at every start

    try:  # newline="": a lone carriage return ends a row, as the csv module wants
        rows = [
            r for r in csv.reader(io.StringIO(text, newline="")) if r and any(c.strip() for c in r)
        ]
    except csv.Error as exc:
        raise ClassMapError(f"not a CSV file ({exc})", path=origin) from None
    if rows and not _is_index(rows[0][0]) and not _name_index(rows[0]):
        check_header(rows[0], origin)
        rows = rows[1:]  # a header such as "index,name"
    flipped = bool(rows) and not _is_index(rows[0][0]) and _name_index(rows[0])
    entries: list[tuple[int, str]] = []
    for number, row in enumerate(rows, start=1):
        if flipped:  # keras-retinanet's 'class_name,id' rows
            if len(row) != 2 or not _is_index(row[1]):
                raise ClassMapError(f"row {number} is not 'name,index'", path=origin)
            entries.append((int(row[1]), row[0]))
            continue
        if len(row) < 2 or not _is_index(row[0]):
            raise ClassMapError(f"row {number} is not 'index,name'", path=origin)
        entries.append((int(row[0]), row[1]))
    if not entries:
        raise ClassMapError("the class-name map is empty", path=origin)
    return ClassMap(tuple(entries), origin=origin)
