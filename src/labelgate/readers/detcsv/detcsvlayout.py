"""The detection CSV layouts, recognised from a file's first rows: TF Object Detection's (an
image, a class-name and ``xmin..ymax`` header), OpenImages' box header, keras-retinanet's
header-less ``path,x1,y1,x2,y2,class_name`` rows; where each layout keeps its columns."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Layout", "first_rows", "integer", "layout_of"]

_HEAD = 65_536  # bytes read to recognise a layout
_SAMPLE = 20  # rows of them looked at
_IMAGES = ("filename", "file_name", "image", "image_id", "image_path", "path")
_LABELS = ("class", "class_name", "label", "category", "name")
_BOX = ("xmin", "ymin", "xmax", "ymax")
_OPENIMAGES = ("ImageID", "LabelName", "XMin", "YMin", "XMax", "YMax")
_OPENIMAGES_FLAGS = ("IsOccluded", "IsTruncated", "IsGroupOf", "IsDepiction", "IsInside")


@dataclass(frozen=True, slots=True)
class Layout:
    """Where a detection CSV's columns are, and how its loader reads them.

    Attributes:
        kind: ``tfod``, ``openimages`` or ``retinanet``.
        title: the layout in words, for the report.
        image, label, box, size, source: column positions (box: x0, y0, x1, y1; size: width,
            height).
        flags: counted 0/1 columns, by name (OpenImages' ``IsGroupOf``...).
        header: whether the first row is a header.
        normalised: coordinates in [0, 1] (OpenImages), else pixels.
        integers: coordinates the loader parses with ``int()`` (keras-retinanet).
        sort: the dataset's images in sorted order (TF Object Detection's grouping).
        suffix: what the image column lacks of the file name (OpenImages' ``.jpg``).
    """

    kind: str
    title: str
    image: int
    label: int
    box: tuple[int, int, int, int]
    size: tuple[int, int] | None = None
    source: int | None = None
    flags: tuple[tuple[str, int], ...] = ()
    header: bool = True
    normalised: bool = False
    integers: bool = False
    sort: bool = False
    suffix: str = ""

    @property
    def width(self) -> int:
        """The columns a row must have."""
        used: list[int] = [self.image, self.label, *self.box, self.source or 0]
        used.extend(self.size or ())
        return max(used) + 1


def layout_of(rows: list[list[str]]) -> Layout | None:
    """The layout of a CSV from its first rows, or ``None`` where it is none of them (a table
    whose label column holds integers is a label table, not a detection CSV of names)."""
    if not rows:
        return None
    header = [c.strip() for c in rows[0]]
    if set(_OPENIMAGES) <= set(header):
        at = header.index
        return Layout(
            "openimages",
            "an OpenImages box CSV",
            at("ImageID"),
            at("LabelName"),
            (at("XMin"), at("YMin"), at("XMax"), at("YMax")),
            source=at("Source") if "Source" in header else None,
            flags=tuple((f, at(f)) for f in _OPENIMAGES_FLAGS if f in header),
            normalised=True,
            suffix=".jpg",
        )
    lower = [c.lower() for c in header]
    image = next((lower.index(c) for c in _IMAGES if c in lower), None)
    label = next((lower.index(c) for c in _LABELS if c in lower), None)
    if image is not None and label is not None and set(_BOX) <= set(lower):
        x0, y0, x1, y1 = (lower.index(c) for c in _BOX)
        size = (
            (lower.index("width"), lower.index("height"))
            if {"width", "height"} <= set(lower)
            else None
        )
        found = Layout(
            "tfod", "a TF Object Detection CSV", image, label, (x0, y0, x1, y1), size, sort=True
        )
        names = [r[label].strip() for r in rows[1:] if len(r) > label and r[label].strip()]
        return found if names and not all(integer(n) for n in names) else None
    shaped = [_retinanet_row(r) for r in rows]
    boxed = any(any(c.strip() for c in r[1:6]) for r in rows)
    if boxed and None not in shaped and 2 * sum(s is True for s in shaped) >= len(rows):
        return Layout(
            "retinanet", "a keras-retinanet CSV", 0, 5, (1, 2, 3, 4), header=False, integers=True
        )
    return None


def integer(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _retinanet_row(row: list[str]) -> bool | None:
    """Whether a row is keras-retinanet's: ``path,x1,y1,x2,y2,class_name`` with numeric
    coordinates and a name, or ``path,,,,,`` (``True``); a malformed one (``False``); or of
    another shape, fewer columns or no path (``None``)."""
    if len(row) < 6 or not row[0].strip():
        return None
    cells = [c.strip() for c in row[1:6]]
    if not any(cells):
        return True
    return all(_number(c) for c in cells[:4]) and bool(cells[4]) and not _number(cells[4])


def first_rows(path: Path) -> list[list[str]]:
    try:
        with path.open("rb") as f:
            data = f.read(_HEAD)
    except OSError:
        return []
    lines = data.decode("utf-8-sig", errors="replace").splitlines()
    if len(data) == _HEAD:
        lines = lines[:-1]  # the last line may be cut
    try:
        return [r for r in csv.reader(lines[: _SAMPLE + 1]) if r]
    except csv.Error:
        return []
