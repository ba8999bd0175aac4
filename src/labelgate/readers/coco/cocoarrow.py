"""A block of COCO annotations read into columns by Arrow's JSON reader, without a Python object
per value: the usual annotations cleared from the columns (``readers/coco/cocofast.py``'s proof over
the same numbers), the others parsed one by one by orjson from their own bytes.

A block is made JSON lines by writing a newline over the comma between two objects (every byte
keeps its offset: each line is one element), its own line breaks (an indented file's) made tabs
first. When Arrow reads every line as an object, the lines joined by their commas are the block:
it is whole elements of valid JSON, one a line (as many rows as lines: Arrow reads ``{...} {...}``
on one line as two rows). Arrow is never handed a block nested deeper than the limit or one whose
first element is no object (its reader recurses, and it ends the process on a first line that is
``null``).

Arrow reads a little more than orjson does, and that block is not read here (the caller parses it
with orjson, which refuses it, and the file goes to the sequential read as before): bytes that are
not UTF-8 (Arrow does not check them), ``NaN`` and ``Infinity`` and numbers past a float's range
(Arrow reads them as floats that are not finite), and integers past int64 (Arrow reads them as
floats where the field is not typed). Every float Arrow read, in every field, is looked at: one
that is not finite or reaches 1e18 (where an integer of 19 digits would be) gives the block back,
and the caller's orjson path gives back any block holding such an integer. A block of unusual
values (an id that is no integer, a box that is no list of numbers, a field of two types,
keypoints, panoptic segments) Arrow refuses or this module gives back, and the caller reads it
as before (``cocofast.clear`` over orjson's objects).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from labelgate.errors import InputError
from labelgate.io.bounded import MAX_DEPTH, DepthGuard
from labelgate.readers.coco.cocofast import Cleared, ImageTable, boxes_clear, polygons_clear
from labelgate.readers.common import arrowcols
from labelgate.readers.common.arrowcols import numbers, offsets, valid
from labelgate.readers.common.imageindex import ImageIndex, ListedImages

__all__ = [
    "ImageColumns",
    "Lines",
    "bounded",
    "clear_block",
    "image_columns",
    "record_images",
    "shallow",
    "short",
]

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]

# A run of 19 digits: an integer orjson reads past int64 (as a float past 2**64) where the
# sequential read refuses it; such a block is given back (a long fraction too: only slower).
_DIGITS = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))
_LONG = b"0" * 19
# Arrow reads an integer of 19 digits and more as a float of at least this (typed as floats, or
# past int64 where inferred): such a block is given back, as the digits would give it back
_HUGE = 1e18
_SLICE = 1 << 20  # bytes fed to the nesting guard at once

_GAP = re.compile(rb"\},[ \t]*\{")  # between two elements (line breaks made tabs first)
_OBJECT = re.compile(rb"[ \t]*\{")  # the first element opens an object (each after it does)
# a line break is whitespace between two tokens, or a control character inside a string, which
# JSON forbids: as a tab, Arrow reads it as the one and refuses it as the other, as orjson does
_TABBED = bytes.maketrans(b"\n\r", b"\t\t")
_RLE, _RLE_SPACED = b'"segmentation":{', b'"segmentation": {'  # an object, not polygons
_RENAMED, _RENAMED_SPACED = b'"segmentatioN":{', b'"segmentatioN": {'  # a field of its own
_OTHERS = ("keypoints", "segments_info")  # annotations of tasks not cleared here


@dataclass(frozen=True, slots=True)
class Lines:
    """Where each element of a block lies in its bytes."""

    data: bytes
    starts: I64
    ends: I64

    def element(self, at: int) -> Any:
        """The element ``at`` as orjson parses it alone (``None`` where orjson refuses what
        Arrow read: the caller gives the file to the sequential read)."""
        import orjson

        try:
            return orjson.loads(self.data[int(self.starts[at]) : int(self.ends[at])])
        except orjson.JSONDecodeError:
            return None


def bounded(data: bytes, path: str) -> bool:
    """Whether a block (elements of an array in the top object) is ``shallow`` and ``short``
    (before orjson parses it)."""
    return short(data) and shallow(data, path)


def short(data: bytes) -> bool:
    """Whether a block holds no run of 19 digits (an integer orjson would read otherwise)."""
    return data.translate(_DIGITS).find(_LONG) < 0


def shallow(data: bytes, path: str) -> bool:
    """Whether a block nests no deeper than the limit. Checked before any parse: Arrow's reader
    recurses, and a block nested 100,000 deep would end the process."""
    guard = DepthGuard(MAX_DEPTH, path)
    guard.depth = 2  # a block starts inside the top object and its array
    view = memoryview(data)
    try:
        for at in range(0, len(data), _SLICE):  # the guard's arrays stay a few megabytes
            guard.feed(bytes(view[at : at + _SLICE]))
    except InputError:
        return False
    return True


def _schema() -> Any:
    """The usual annotation's fields and their types."""
    import pyarrow as pa

    floats = pa.list_(pa.float64())
    return pa.schema(
        [
            ("id", pa.int64()),
            ("image_id", pa.int64()),
            ("category_id", pa.int64()),
            ("bbox", floats),
            ("area", pa.float64()),
            ("iscrowd", pa.int64()),
            ("segmentation", pa.list_(floats)),
        ]
    )


def _lines(data: bytes) -> bytes | None:
    """The block as JSON lines, or ``None`` where it is not for Arrow (see the module)."""
    if data.find(b"\n") >= 0 or data.find(b"\r") >= 0:  # written over lines (indented)
        data = data.translate(_TABBED)
    if _OBJECT.match(data) is None:
        return None  # Arrow's reader ends the process on a first line that is ``null``
    if not data.isascii():  # Arrow does not check UTF-8; Python's strict decoder does
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return None
    # the writer's separator, as its first gap shows: a block that mixes two keeps a line of
    # two objects, which Arrow reads as two rows (the block then goes to orjson)
    found = _GAP.search(data, 0, 1 << 16)
    gap = b"},{" if found is None else found.group()
    spaced = gap != b"},{"
    lines = data.replace(gap, b"}\n" + gap[2:])  # the comma's place taken by the line's end
    # an RLE's key, written as the separator is (Arrow refuses an object under the polygons'
    # key: an RLE written otherwise sends the block to orjson)
    rle = _RLE_SPACED if spaced else _RLE
    if lines.find(rle) >= 0:
        lines = lines.replace(rle, _RENAMED_SPACED if spaced else _RENAMED)
    return lines


def _read(lines: bytes, schema: Any) -> tuple[int, dict[str, Any]] | None:
    """The lines as Arrow columns (the fields of ``schema`` typed, any other inferred) and their
    number of rows, or ``None`` where Arrow refuses them (any error of its own: it has failed on
    a column of nulls in lists) or reads a float that is not ``_modest`` (see the module)."""
    import pyarrow as pa
    import pyarrow.json as pj

    try:
        found = pj.read_json(
            pa.BufferReader(lines),
            read_options=pj.ReadOptions(use_threads=False, block_size=max(1 << 20, len(lines))),
            parse_options=pj.ParseOptions(
                explicit_schema=schema, unexpected_field_behavior="infer"
            ),
        )
        columns = {name: found.column(name).combine_chunks() for name in found.column_names}
        if not all(_modest(column) for column in columns.values()):
            return None
    except pa.ArrowException:
        return None
    return found.num_rows, columns


def _modest(array: Any) -> bool:
    """Whether every float in ``array`` (nested in lists and objects too) is finite and under
    ``_HUGE`` in magnitude."""
    import pyarrow as pa

    kind = array.type
    if pa.types.is_floating(kind):
        values = numbers(array if kind == pa.float64() else array.cast(pa.float64()), np.float64)
        with np.errstate(invalid="ignore"):
            modest = np.abs(values) < _HUGE  # NaN and infinities fail
        return bool((modest | ~valid(array)).all()) if array.null_count else bool(modest.all())
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return _modest(array.flatten())
    if pa.types.is_struct(kind):
        return all(_modest(array.field(i)) for i in range(kind.num_fields))
    return True


def clear_block(
    data: bytes, table: ImageTable, used: Counter[Any], background: int | None
) -> tuple[Cleared, Lines] | None:
    """``cocofast.clear`` of a block's annotations read as columns, and where each lies;
    ``None`` where the block is for orjson (see the module). ``data`` must be ``shallow``."""
    lines = _lines(data)
    found = None if lines is None else _read(lines, _schema())
    if lines is None or found is None:
        return None
    n, columns = found
    breaks = np.flatnonzero(np.frombuffer(lines, dtype=np.uint8) == 10)
    if n != len(breaks) + 1 or any(k in columns for k in _OTHERS):
        return None  # not one element a line (two on one, or none), keypoints, segments
    if any(columns[k].null_count for k in ("id", "image_id", "category_id", "bbox")):
        return None  # a key missing or null: the per-annotation read words it
    bbox = columns["bbox"]
    if bbox.values.null_count or not bool((np.diff(offsets(bbox)) == 4).all()):
        return None
    box = numbers(bbox.flatten(), np.float64).reshape(n, 4)
    ids = numbers(columns["id"], np.int64)
    categories = numbers(columns["category_id"], np.int64)
    codes = table.codes(numbers(columns["image_id"], np.int64))
    crowd = columns["iscrowd"]
    crowd = (numbers(crowd, np.int64) != 0) & valid(crowd)
    mask, width, height = boxes_clear(table, used, background, categories, codes, box, crowd)
    rle = columns.get("segmentatioN")
    if rle is not None:  # an RLE (or any object): judged one by one
        mask &= ~valid(rle)
    if not _polygons(columns, mask, width, height):
        return None
    starts = np.concatenate(([0], breaks + 1)).astype(np.int64)
    ends = np.concatenate((breaks, [len(lines)])).astype(np.int64)
    return Cleared(mask, ids, categories, codes, box), Lines(data, starts, ends)


@dataclass(frozen=True, slots=True)
class ImageColumns:
    """A file's images read as columns: integer ids (unique), sizes (NaN: none recorded, as
    where either is no number) and file names (``None``: none written)."""

    keys: I64
    width: F64
    height: F64
    files: Any  # an Arrow array of text: made Python strings once the workers have started
    order: I64  # the keys' positions in ascending order of key

    def table(self) -> ImageTable:
        """The image table a worker judges against."""
        return ImageTable(None, self.width, self.height, self.keys, self.order)


def image_columns(data: bytes) -> ImageColumns | None:
    """A file's images (``data``: the elements of its images array) read as columns, as the
    reader records them one image at a time; ``None`` where the ids are not unique integers, a
    size not a number or null, a file name not text or null, or the block not for Arrow (the
    images are then read one by one)."""
    import pyarrow as pa

    lines = _lines(data) if shallow(data, "the images") else None
    fields = [("id", pa.int64()), ("width", pa.float64()), ("height", pa.float64())]
    found = (
        None if lines is None else _read(lines, pa.schema([*fields, ("file_name", pa.string())]))
    )
    if lines is None or found is None or found[0] != lines.count(b"\n") + 1:
        return None
    ids, width, height, files = (found[1][k] for k in ("id", "width", "height", "file_name"))
    keys = numbers(ids, np.int64)
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    if ids.null_count or bool((ordered[1:] == ordered[:-1]).any()):
        return None  # the records keep the first image of an id: read one by one
    sized = valid(width) & valid(height)  # both numbers, or no size
    return ImageColumns(
        keys.copy(),
        np.where(sized, numbers(width, np.float64), np.nan),
        np.where(sized, numbers(height, np.float64), np.nan),
        files,
        order,
    )


def record_images(
    found: ImageColumns,
    sizes: dict[tuple[float, float], tuple[float, float]],
    index: ImageIndex,
    name: str,
    origin: Path,
) -> int:
    """Record the images read as columns as the reader's images handler records each one (one
    size tuple per distinct size in ``sizes``, its record in ``index`` named ``image <id>``;
    their sizes are looked up in the table, ``ImageSizes``), kept as columns
    (``ListedImages``); the number recorded."""
    sized = ~np.isnan(found.width)
    which = np.full(len(found.keys), -1, dtype=np.int32)  # -1: no size
    made: list[tuple[float, float]] = []
    if sized.any():  # each distinct (width, height) once: widths and heights coded apart
        widths, across = np.unique(found.width[sized], return_inverse=True)
        heights, down = np.unique(found.height[sized], return_inverse=True)
        pairs, which[sized] = np.unique(across * len(heights) + down, return_inverse=True)
        firsts = zip(
            (widths[pairs // len(heights)]).tolist(),
            heights[pairs % len(heights)].tolist(),
            strict=True,
        )
        made = [sizes.setdefault(t, t) for t in firsts]
    files = found.files.to_pylist()
    index.extend_columns(ListedImages(name, found.keys, found.order, files, which, made, origin))
    return len(found.keys)


def _polygons(columns: dict[str, Any], mask: Mask, width: Any, height: Any) -> bool:
    """``cocofast._polygons`` over the segmentation column: false where a chosen annotation's
    polygons hold a null (the per-annotation read words it)."""
    segs = columns["segmentation"]
    counts = np.diff(offsets(segs))
    lists = np.flatnonzero(valid(segs) & (counts > 0) & mask)
    if not len(lists):
        return True
    chosen = segs if len(lists) == len(segs) else segs.take(arrowcols.ints(lists.astype(np.int64)))
    polys = chosen.flatten()
    if polys.null_count:
        return False
    lengths = np.diff(offsets(polys))
    if bool((lengths % 2).any()):
        return False  # an odd polygon shifts every pair after it
    coords = polys.flatten()
    if coords.null_count:
        return False
    per_item = counts[lists]
    area = columns["area"]
    given = np.where(valid(area), numbers(area, np.float64), np.nan)[lists]
    at = lists.astype(np.int64)
    polygons_clear(mask, at, per_item, lengths, numbers(coords, np.float64), given, width, height)
    return True
