"""Where a folder's masks are: the mask files (and which kind of them is read), the folder their
ids are relative to, the class and colour tables beside them, and whether a folder holds masks."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from labelgate.contract.classmap import ClassMap
from labelgate.readers.masks.colours import known_table
from labelgate.readers.masks.maskdecode import (
    MASK_SUFFIXES,
)

if TYPE_CHECKING:
    pass

__all__ = [
    "dataset_meta",
    "looks_like_masks",
    "mask_files",
    "mask_files_all",
    "mask_listing",
    "mask_paths",
    "mask_root",
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
    return _chosen(mask_files_all(root))


def _chosen(paths: list[Path]) -> list[Path]:
    train = [p for p in paths if p.name.endswith(("_labelTrainIds.png", "_labelTrainIds.tif"))]
    ids = [p for p in paths if p.name.endswith(("_labelIds.png", "_labelIds.tif"))]
    if train or ids:  # Cityscapes: colour, instanceIds and polygons are not class masks
        return train or ids
    return paths


def mask_files_all(root: Path) -> list[Path]:
    """Every file with a mask suffix under ``root`` (links not followed), in sorted path order."""
    found: list[tuple[str, ...]] = []  # path parts: sorted as paths sort, component by component
    top = str(root)
    for folder, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if not d.startswith((".", "__"))]
        parts = tuple(Path(os.path.relpath(folder, top)).parts) if folder != top else ()
        found.extend((*parts, f) for f in files if f.lower().endswith(MASK_SUFFIXES))
    found.sort()
    return [root.joinpath(*p) for p in found]


def mask_paths(root: Path) -> tuple[Path, list[Path]]:
    """The folder the masks' ids are relative to, and the mask files: ``root`` itself where it
    is one file, else those ``mask_files`` finds under ``mask_root``.

    Raises:
        InputError: no mask file is found.
    """
    base, files, _ = mask_listing(root)
    return base, files


def mask_listing(root: Path) -> tuple[Path, list[Path], list[Path]]:
    """``mask_paths``, and every mask file of its folder, those of another kind included (none
    for a single file), from one walk of the folder.

    Raises:
        InputError: no mask file is found.
    """
    from labelgate.errors import InputError

    base = mask_root(root)
    every = [] if root.is_file() else mask_files_all(base)
    files = [root] if root.is_file() else _chosen(every)
    if not files:
        raise InputError(
            f"no mask files ({', '.join(MASK_SUFFIXES)}) found under this folder", path=str(root)
        )
    return base, files, every


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
                if im.mode == "RGB" and im.width * im.height <= 1 << 24:
                    colours = im.getcolors(maxcolors=256)  # None: a photograph, not a mask
                    packed = [
                        (int(c[0]) << 16) | (int(c[1]) << 8) | int(c[2])
                        for _, c in colours or []
                        if isinstance(c, tuple)
                    ]
                    table = known_table(packed)
                    if table is not None:
                        return f"a folder of colour masks ({first.name}'s colours are {table})"
        except (OSError, UnidentifiedImageError, Image.DecompressionBombError):
            return None
    return None
