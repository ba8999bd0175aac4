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
from typing import TYPE_CHECKING

import numpy as np

from labelgate.contract.classmap import ClassMap
from labelgate.contract.values import CITYSCAPES_TRAIN_IDS
from labelgate.core.annotations import AnnotationFacts
from labelgate.core.report import Example
from labelgate.readers.base import Claim, Read, Reader, ReadOptions
from labelgate.readers.maskdecode import (
    EMPTY,
    MASK_SUFFIXES,
    ClusterMap,
    Decoded,
    decoded,
)

if TYPE_CHECKING:
    import pyarrow as pa

    from labelgate.readers.sink import RowSink

__all__ = [
    "MASK_SUFFIXES",
    "MasksReader",
    "dataset_meta",
    "looks_like_masks",
    "mask_files",
    "mask_paths",
    "mask_root",
    "read_masks",
]


def dataset_meta(root: Path) -> tuple[ClassMap | None, dict[int, int] | None]:
    """The class map and colour map of a ``dataset_meta.json`` beside the masks (Datumaro's
    common semantic segmentation layout: ``label_map`` and ``segmentation_colors``), if any.

    Raises:
        InputError: the file is there but malformed.
    """
    from labelgate.errors import InputError
    from labelgate.io.files import read_small_text

    folder = root.parent if root.is_file() else root
    meta = folder / "dataset_meta.json"
    if not meta.is_file() and folder.name == "masks":
        meta = folder.parent / "dataset_meta.json"
    if not meta.is_file():
        return None, None
    from labelgate.io.bounded import load_json

    try:
        data = load_json(read_small_text(meta, "dataset_meta.json"), str(meta))
        names = {int(k): str(v) for k, v in data.get("label_map", {}).items()}
        colours = data.get("segmentation_colors")
        colour_map = None
        if colours is not None:
            colour_map = {
                (int(r) << 16) | (int(g) << 8) | int(b): i for i, (r, g, b) in enumerate(colours)
            }
    except (ValueError, TypeError, AttributeError) as exc:
        raise InputError(f"not a readable dataset_meta.json: {exc}", path=str(meta)) from None
    class_map = ClassMap(tuple(sorted(names.items())), origin=str(meta)) if names else None
    return class_map, colour_map


def mask_root(root: Path) -> Path:
    """The folder the masks' ids are relative to: ``root`` (its folder, for one file), or its
    ``SegmentationClass`` (Pascal VOC) or ``masks`` (Datumaro) subfolder."""
    if root.is_file():
        return root.parent
    for sub in ("SegmentationClass", "masks"):
        if (root / sub).is_dir():
            return root / sub
    return root


def mask_files(root: Path) -> list[Path]:
    """The mask files under ``root`` (links not followed), in sorted path order; for a
    Cityscapes tree, the ``*_labelTrainIds`` files where there are any, else ``*_labelIds``."""
    found: list[tuple[str, ...]] = []  # path parts: sorted as paths sort, component by component
    top = str(root)
    for folder, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if not d.startswith((".", "__"))]
        parts = tuple(Path(os.path.relpath(folder, top)).parts) if folder != top else ()
        found.extend((*parts, f) for f in files if f.lower().endswith(MASK_SUFFIXES))
    found.sort()
    paths = [root.joinpath(*p) for p in found]
    train = [p for p in paths if p.name.endswith(("_labelTrainIds.png", "_labelTrainIds.tif"))]
    ids = [p for p in paths if p.name.endswith(("_labelIds.png", "_labelIds.tif"))]
    if train or ids:  # Cityscapes: colour, instanceIds and polygons are not class masks
        return train or ids
    return paths


def mask_paths(root: Path) -> tuple[Path, list[Path]]:
    """The folder the masks' ids are relative to, and the mask files: ``root`` itself where it
    is one file, else those ``mask_files`` finds under ``mask_root``.

    Raises:
        InputError: no mask file is found.
    """
    from labelgate.errors import InputError

    base = mask_root(root)
    files = [root] if root.is_file() else mask_files(base)
    if not files:
        raise InputError(
            f"no mask files ({', '.join(MASK_SUFFIXES)}) found under this folder", path=str(root)
        )
    return base, files


def looks_like_masks(root: Path) -> str | None:
    """Why ``root`` is a folder of segmentation masks, or ``None``."""
    if (root / "SegmentationClass").is_dir():
        return "a folder with Pascal VOC's SegmentationClass"
    if (root / "dataset_meta.json").is_file() and (root / "masks").is_dir():
        return "a folder with masks/ and a dataset_meta.json (Datumaro's semantic segmentation)"
    names = [p.name for p in root.rglob("*") if p.is_file()][:10_000]
    if any(n.endswith(("_labelIds.png", "_labelTrainIds.png")) for n in names):
        return "a folder of Cityscapes *_labelIds / *_labelTrainIds masks"
    if (
        names
        and all(n.lower().endswith((".npy", ".json", ".txt", ".yaml")) for n in names)
        and any(n.lower().endswith(".npy") for n in names)
    ):
        return "a folder of .npy arrays"
    first = next((p for p in sorted(root.rglob("*.png")) if p.is_file()), None)
    own = next((p for p in sorted(root.glob("*.png")) if p.is_file()), None)
    if own is not None and root.name.lower() in {"masks", "mask", "annotations", "labels", "gt"}:
        return f"a folder named {root.name!r} holding PNG files"
    if first is not None and not any(n.lower().endswith((".jpg", ".jpeg")) for n in names):
        from PIL import Image, UnidentifiedImageError

        try:
            with Image.open(first) as im:
                if im.mode in ("P", "L", "I;16", "I", "1"):
                    return f"a folder of single-channel PNG files ({first.name} is mode {im.mode})"
        except (OSError, UnidentifiedImageError):
            return None
    return None


@dataclass(slots=True)
class _Seen:
    """What the whole folder shows, for the dataset-level findings."""

    values: Counter[int] = field(default_factory=Counter)  # value -> pixels
    masks_with: Counter[int] = field(default_factory=Counter)  # value -> masks
    label_ids_named: int = 0  # files named *_labelIds
    white: list[Example] = field(default_factory=list)  # first masks holding 255
    high: list[Example] = field(default_factory=list)  # first masks holding 19..33


def read_masks(
    root: Path,
    sink: RowSink,
    facts: AnnotationFacts,
    *,
    num_classes: int | None,
    colour_map: Mapping[int, int] | None,
    cluster: ClusterMap | None = None,
    workers: int | None = None,
) -> None:
    """Decode every mask under ``root`` (or ``root`` itself, one file) into rows in ``sink``.

    Raises:
        InputError: no mask file is found.
    """
    import pyarrow as pa

    facts.task = "segmentation"
    base, files = mask_paths(root)
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
        writer.write_batch(_rows(batch, schema, seen))
    sink.close()
    facts.counts.update(counts)
    _whole(facts, seen, num_classes, colour_map is not None)


def _rows(batch: list[Decoded], schema: pa.Schema, seen: _Seen) -> pa.RecordBatch:
    """The masks' rows, the histograms concatenated once (no Python list per mask), and the
    folder's value totals updated from them."""
    import pyarrow as pa

    read = [d.values is not None for d in batch]
    lengths = np.array([0 if d.values is None else len(d.values) for d in batch], np.int64)
    offsets = pa.array(np.concatenate(([0], np.cumsum(lengths))).astype(np.int32))
    parts = [d.values for d in batch if d.values is not None]
    values = np.concatenate(parts) if parts else EMPTY
    pixels = np.concatenate([d.pixels for d in batch if d.values is not None] or [EMPTY])
    null = pa.array(~np.array(read, dtype=bool))
    if len(values):
        distinct, at = np.unique(values, return_inverse=True)
        totals = np.bincount(at, weights=pixels).astype(np.int64).tolist()
        holding = np.bincount(at).tolist()
        for v, px, n in zip(distinct.tolist(), totals, holding, strict=True):
            seen.values[v] += px
            seen.masks_with[v] += n
    paths = [d.path for d in batch]
    return pa.RecordBatch.from_arrays(
        [
            pa.array(paths, pa.string()),
            pa.ListArray.from_arrays(offsets, pa.array(values, pa.int64()), mask=null),
            pa.ListArray.from_arrays(offsets, pa.array(pixels, pa.int64()), mask=null),
            pa.array([p.rpartition("/")[0] or "." for p in paths], pa.string()),
        ],
        schema=schema,
    )


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


def _account(
    d: Decoded, row: int, facts: AnnotationFacts, seen: _Seen, counts: Counter[str]
) -> None:
    """One mask's facts: counts, and the per-mask findings (unreadable, colour, lossy)."""
    counts["masks"] += 1
    counts[f"mode {d.mode}"] += 1 if d.mode else 0
    if d.error is not None:
        facts.hit(
            "LG031",
            Example(row=row, id=d.path, value=d.error),
            message="mask files that cannot be read as class indices",
            fix="re-export these masks as single-channel PNG (mode L or P) or integer .npy arrays",
            unit="masks",
        )
        return
    if d.channels == 3 and d.values is None:
        top = sorted(d.colours.items(), key=lambda kv: -kv[1])
        shown = ", ".join(f"{_colour(c)}: {n} px" for c, n in top[:3])
        facts.hit(
            "LG038",
            Example(row=row, id=d.path, value=f"{len(top)} colours: {shown}"),
            message="three-channel (RGB) colour masks: a loader reads three channels of colours, "
            "not one of class indices, and the loss refuses the shape or learns colours",
            fix="give the colour-to-index table as the contract's color_map (index: [r, g, b]); "
            "with it, `labelgate fix` writes index masks",
            unit="masks",
        )
        return
    if d.channels == 3 and d.colours:
        top = sorted(d.colours.items(), key=lambda kv: -kv[1])
        px = sum(d.colours.values())
        facts.hit(
            "LG038",
            Example(row=row, id=d.path, value=", ".join(_colour(c) for c, _ in top[:5])),
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
            Example(row=row, id=d.path, value=what, pixels=max(px, 0)),
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
        seen.white.append(Example(row=row, id=d.path, value=255, pixels=px))
    ids = (values >= 19) & (values <= 33)
    if ids.any() and len(seen.high) < room:
        shown = values[ids].tolist()
        seen.high.append(Example(row=row, id=d.path, value=shown, pixels=int(d.pixels[ids].sum())))


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
    capabilities = frozenset({"files", "stack", "dask"})
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
            paths[0],
            sink,
            facts,
            num_classes=k,
            colour_map=options.colour_map if options.colour_map is not None else colours,
            cluster=options.cluster,
        )
        return Read(found, "dataset_meta.json beside the masks" if found is not None else "")
