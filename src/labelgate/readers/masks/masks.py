"""Segmentation masks: PNG (L, P, I;16, I), TIFF, BMP, JPEG and ``.npy`` files, one row per mask.

A mask holds 10^5-10^6 targets; none is a row. Each mask is decoded once (on every core, in
processes: decoders may hold the GIL; or on a Dask cluster) into its histogram, the distinct values
and their pixel counts, written as one row (id = the path under the root, label = the values,
``pixels`` = the counts, source = the folder), and the scan judges each distinct value once,
weighted by its pixel count (the ``segmentation`` task). A P-mode PNG is read as palette indices,
as Pascal VOC stores its classes. Besides the per-pixel rules, the reader names the encodings that
make a mask wrong as a whole: a three-channel colour mask (LG038: mapped through the contract's
``color_map`` when it has one), a lossy save (LG037), a 0/255 binary mask (LG036) and Cityscapes
``labelIds`` where ``trainIds`` are expected (LG039).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from labelgate.contract.values import CITYSCAPES_TRAIN_IDS
from labelgate.core.annotations import AnnotationFacts
from labelgate.core.drawing import Drawing
from labelgate.core.report import Example
from labelgate.readers.base import Claim, Read, Reader, ReadOptions
from labelgate.readers.common.imageindex import ImageRecord
from labelgate.readers.masks.colours import known_table
from labelgate.readers.masks.maskdecode import EMPTY, MASK_SUFFIXES, Decoded
from labelgate.readers.masks.masklayout import (
    dataset_meta,
    looks_like_masks,
    mask_listing,
)
from labelgate.readers.masks.maskpool import ClusterMap, decoded
from labelgate.readers.masks.maskrows import mask_batch

if TYPE_CHECKING:
    import pyarrow as pa

    from labelgate.readers.common.sink import RowSink

__all__ = ["MasksReader", "read_masks"]


@dataclass(slots=True)
class _Seen:
    """What the whole folder shows, for the dataset-level findings."""

    values: Counter[int] = field(default_factory=Counter)  # value -> pixels
    masks_with: Counter[int] = field(default_factory=Counter)  # value -> masks
    label_ids_named: int = 0  # files named *_labelIds
    white: list[Example] = field(default_factory=list)  # first masks holding 255
    high: list[Example] = field(default_factory=list)  # first masks holding 19..33


def read_masks(
    roots: list[Path],
    sink: RowSink,
    facts: AnnotationFacts,
    *,
    num_classes: int | None,
    colour_map: Mapping[int, int] | None,
    cluster: ClusterMap | None = None,
    workers: int | None = None,
) -> None:
    """Decode every mask under ``roots`` (folders or single files, read as one input: ids
    relative to the folder they share) into rows in ``sink``; mask files a folder holds but the
    reader leaves out (Cityscapes' other kinds) are counted in a note.

    Raises:
        InputError: no mask file is found.
    """
    import pyarrow as pa

    facts.task = "segmentation"
    found = [mask_listing(root) for root in roots]
    base = found[0][0]
    if len(found) > 1:
        base = Path(os.path.commonpath([str(b) for b, _, _ in found]))
        facts.notes.append(f"{len(roots)} mask paths read as one input, ids relative to {base}")
    files = [f for _, fs, _ in found for f in fs]
    for (folder, kept, every), root in zip(found, roots, strict=True):
        if root.is_dir():
            _note_left_out(facts, folder, kept, every)
    schema = pa.schema(
        [
            ("id", pa.string()),
            ("label", pa.list_(pa.int64())),
            ("pixels", pa.list_(pa.int64())),
            ("source", pa.string()),
        ]
    )
    seen = _Seen()
    counts: Counter[str] = Counter()
    row = 0
    writer = sink.batches(schema)
    for batch in _batched(decoded(files, base, colour_map, workers=workers, cluster=cluster)):
        for d in batch:
            _account(d, row, facts, seen, counts)
            row += 1
            sink.images.add(_image_of(d))
        writer.write_batch(_rows(batch, schema, seen))
    sink.close()
    facts.counts.update(counts)
    _whole(facts, seen, num_classes, colour_map is not None)


def _image_of(d: Decoded) -> ImageRecord:
    """The image a mask pairs with (``--images``): the mask's path with any image suffix, and
    the mask's width and height."""
    size = None if d.error is not None else (float(d.shape[1]), float(d.shape[0]))
    stem = _without_suffix(d.path)
    return ImageRecord(d.path, d.path, stem, size, None, stem=True)


def _without_suffix(path: str) -> str:
    """``str(PurePosixPath(path).with_suffix(""))`` for a normalised relative path, without a
    Path object per mask: the last suffix of its name, as pathlib finds it, removed."""
    folder, slash, name = path.rpartition("/")
    at = name.rfind(".")
    return folder + slash + name[:at] if 0 < at < len(name) - 1 else path


def _note_left_out(
    facts: AnnotationFacts, folder: Path, kept: list[Path], every: list[Path]
) -> None:
    """Name the mask files of ``folder`` the reader leaves out (a second kind of mask: Cityscapes'
    colour, instanceIds or labelIds beside the trainIds), so none is skipped without a word."""
    if len(kept) == len(every):  # kept is drawn from every: none left out
        return
    chosen = set(kept)
    left = [p for p in every if p not in chosen]
    if left:
        shown = ", ".join(p.name for p in left[:3]) + (", ..." if len(left) > 3 else "")
        facts.notes.append(
            f"{len(left)} other mask files in {folder.name}/ left out, of another kind than the "
            f"{len(kept)} read ({shown}): give them as their own input to check them"
        )


def _rows(batch: list[Decoded], schema: pa.Schema, seen: _Seen) -> pa.RecordBatch:
    """The masks' rows, the histograms concatenated once (no Python list per mask), and the
    folder's value totals updated from them."""

    read = np.array([d.values is not None for d in batch], dtype=bool)
    lengths = np.array([0 if d.values is None else len(d.values) for d in batch], np.int64)
    parts = [d.values for d in batch if d.values is not None]
    values = np.concatenate(parts) if parts else EMPTY
    pixels = np.concatenate([d.pixels for d in batch if d.values is not None] or [EMPTY])
    if len(values):
        distinct, at = np.unique(values, return_inverse=True)
        totals = np.bincount(at, weights=pixels).astype(np.int64).tolist()
        holding = np.bincount(at).tolist()
        for v, px, n in zip(distinct.tolist(), totals, holding, strict=True):
            seen.values[v] += px
            seen.masks_with[v] += n
    return mask_batch(schema, [d.path for d in batch], lengths, read, values, pixels)


def _batched(items: Iterable[Decoded], size: int = 4096) -> Iterator[list[Decoded]]:
    batch: list[Decoded] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _colour(c: int) -> str:
    return f"#{c:06x} ({c >> 16}, {(c >> 8) & 255}, {c & 255})"


def _drawn(d: Decoded, row: int, **fields: Any) -> Example:
    """An example naming mask ``d``, drawn in the HTML report as the mask file itself."""
    return Example(row=row, id=d.path, drawing=Drawing("mask", image=d.path), **fields)


def _account(
    d: Decoded, row: int, facts: AnnotationFacts, seen: _Seen, counts: Counter[str]
) -> None:
    """One mask's facts: counts, and the per-mask findings (unreadable, colour, lossy)."""
    counts["masks"] += 1
    counts[f"mode {d.mode}"] += 1 if d.mode else 0
    if d.error is not None:
        # a value past int64 is the example's value, a number as written; other reasons are words
        past = d.past is not None
        facts.hit(
            "LG031",
            Example(row=row, id=d.path, value=d.past if past else d.error),
            message="mask files holding values past int64, which no class index reaches"
            if past
            else "mask files that cannot be read as class indices",
            fix="re-export these masks as single-channel PNG (mode L or P) or integer .npy arrays",
            unit="masks",
        )
        return
    if d.channels == 3 and d.values is None:
        top = sorted(d.colours.items(), key=lambda kv: -kv[1])
        shown = ", ".join(f"{_colour(c)}: {n} px" for c, n in top[:3])
        table = known_table(d.colours)
        offered = (
            f"; every colour of the first such mask is in {table} (docs/segmentation.md lists "
            "it): if the dataset was painted with it, that table is the color_map, in its order"
            if table is not None
            else ""
        )
        facts.hit(
            "LG038",
            _drawn(d, row, value=f"{len(top)} colours: {shown}"),
            message="three-channel (RGB) colour masks: a loader reads three channels of colours, "
            "not one of class indices, and the loss refuses the shape or learns colours",
            fix="give the colour-to-index table as the contract's color_map (index: [r, g, b]); "
            "with it, `labelgate fix` writes index masks" + offered,
            unit="masks",
        )
        return
    if d.channels == 3 and d.colours:
        top = sorted(d.colours.items(), key=lambda kv: -kv[1])
        px = sum(d.colours.values())
        facts.hit(
            "LG038",
            _drawn(d, row, value=", ".join(_colour(c) for c, _ in top[:5])),
            message="colour masks holding colours absent from the contract's color_map (their "
            "pixels are not counted as targets)",
            fix="add the colours to color_map, or repaint those pixels with a listed colour",
            unit="pixels",
            count=px,
        )
    elif d.channels == 3:
        counts["colour masks mapped" if d.mapped else "grey masks in three channels"] += 1
    values = d.values
    assert values is not None
    if d.stray != (0, 0):
        n, px = d.stray
        what = (
            f"{n} rare values on {px} edge pixels"
            if px > 0
            else "a lossy file format (no stray value yet)"
        )
        facts.hit(
            "LG037",
            _drawn(d, row, value=what, pixels=max(px, 0)),
            message="masks saved lossily (JPEG): compression leaves stray values along every "
            "class edge, each a wrong class or an out-of-range target",
            fix="re-export the masks as PNG from their source; rounding the stray values back "
            "guesses each edge pixel's class",
            unit="masks",
        )
    if d.path.endswith("_labelIds.png"):
        seen.label_ids_named += 1
    room = 20 if facts.limit is None else facts.limit
    if len(seen.white) < room and len(values) and values[-1] == 255 and values.max() == 255:
        px = int(d.pixels[values == 255][0])
        seen.white.append(_drawn(d, row, value=255, pixels=px))
    if len(seen.high) < room:  # the examples kept: no look at the other masks' values
        ids = (values >= 19) & (values <= 33)
        if ids.any():
            shown = values[ids].tolist()
            px = int(d.pixels[ids].sum())
            seen.high.append(_drawn(d, row, value=shown, pixels=px))


def _whole(facts: AnnotationFacts, seen: _Seen, k: int | None, mapped: bool) -> None:
    """The findings only the whole folder shows: 0/255 binary masks, Cityscapes labelIds."""
    values = set(seen.values)
    if k == 2 and 255 in values and values <= {0, 255}:
        facts.hit(
            "LG036",
            message=f"binary masks saved as 0/255 for a 2-class problem: 255 on "
            f"{seen.values[255]} pixels in {seen.masks_with[255]} masks, the foreground drawn "
            "as white instead of class 1; CrossEntropyLoss and F.one_hot(mask, 2) raise on it, "
            "or with ignore_index=255 the foreground is never learned",
            fix="`labelgate fix --input-format masks --map-value 255=1 --out FIXED_DIR` (or "
            "divide by 255 in the loader)",
            unit="masks",
            count=seen.masks_with[255],
        )
        facts.hits["LG036"].examples.extend(seen.white)
    high = sorted(v for v in values if v >= 19)
    cityscapes = (
        k == 19 and not mapped and high and max(values) <= 33 and min(values) >= -1
    ) and set(high) != {255}
    if cityscapes or (seen.label_ids_named and k == 19 and set(high) - {255}):
        table = ", ".join(f"{a}->{b}" for a, b in CITYSCAPES_TRAIN_IDS.items())
        masks = max(seen.label_ids_named, max((seen.masks_with[v] for v in high), default=0))
        facts.hit(
            "LG039",
            message=f"Cityscapes labelIds (values up to {max(values)}) where the 19 trainIds are "
            f"expected: ids {', '.join(map(str, high[:10]))} are >= K=19",
            fix=f"map labelId to trainId ({table}; every other id to 255, ignored): `labelgate "
            "fix --input-format masks --map-value cityscapes --ignore-index 255 --out FIXED_DIR`; "
            "or read the *_labelTrainIds.png files cityscapesScripts' createTrainIdLabelImgs "
            "writes",
            unit="masks",
            count=masks,
        )
        facts.hits["LG039"].examples.extend(seen.high)
        facts.hits["LG039"].details["value_map"] = {
            str(a): b for a, b in CITYSCAPES_TRAIN_IDS.items()
        }


class MasksReader(Reader):
    """Segmentation masks: PNG (palette included), TIFF, BMP, JPEG, .npy; a file or a folder."""

    name = "masks"
    title = "segmentation masks (PNG, TIFF, BMP, JPEG, .npy)"
    suffixes = MASK_SUFFIXES
    capabilities = frozenset({"files", "stack", "dask", "many"})
    task = "segmentation"

    def detect(self, path: Path, task: str | None = None) -> Claim | None:
        if path.is_file():
            if path.suffix.lower() in MASK_SUFFIXES:
                return Claim(0.6, f"a {path.suffix.lower()} mask file")
            return None
        if not path.is_dir():
            return None
        if task == "segmentation":
            return Claim(0.99, "a folder, with the segmentation task")
        why = looks_like_masks(path)
        if why is not None and not (path / "Annotations").is_dir():
            return Claim(0.7, why)
        return None

    def read(
        self, paths: list[Path], sink: RowSink, facts: AnnotationFacts, options: ReadOptions
    ) -> Read:
        found, colours = dataset_meta(paths[0])
        named = options.class_map if options.class_map is not None else found
        k = options.num_classes
        if k is None and named is not None:
            k = len(named.entries)
        read_masks(
            paths,
            sink,
            facts,
            num_classes=k,
            colour_map=options.colour_map if options.colour_map is not None else colours,
            cluster=options.cluster,
        )
        return Read(found, "dataset_meta.json beside the masks" if found is not None else "")
