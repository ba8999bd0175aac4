"""labelgate fix for segmentation masks: remap each mask's values through a table, into new files.

The table is ``--map-value`` (``V=N``, ``V=ignore``, or ``cityscapes``) and the contract's
``value_map``; colour masks are written as index masks through the contract's ``color_map``. Each
mask is written to ``--out DIR`` under its own relative path, atomically (a temporary file renamed
into place), in its own format (a P-mode PNG keeps its palette; a JPEG mask is written as PNG, never
lossily again); the originals are never written. The fixed folder is validated afterwards, and every
mask read is accounted for: written, or left out with the reason.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from labelgate.commands.fix import FixOptions, FixResult, SourceFix
from labelgate.contract import Contract
from labelgate.contract.classmap import ClassMap
from labelgate.errors import UsageError
from labelgate.io.atomic import atomic_path, folder_lock
from labelgate.io.files import check_inside
from labelgate.run.validation import report_of

__all__ = ["fix_masks"]


def fix_masks(path: str, contract: Contract, options: FixOptions) -> FixResult:
    """Write remapped copies of the masks under ``path`` into ``options.out`` (a folder).

    Raises:
        UsageError: nothing to remap, no K, the output folder is the input (or inside it), or a
            new value does not fit a mask's pixel type.
        InputError: no mask file is found.
    """
    from labelgate.readers.masks.masklayout import dataset_meta, mask_paths

    table: dict[int, int | None] = dict(contract.value_map or {})
    table.update(options.value_maps)
    root = Path(path)
    meta_names, meta_colours = dataset_meta(root)
    colours = contract.color_map if contract.color_map is not None else meta_colours
    if not table and colours is None:
        raise UsageError(
            "fix rewrites masks through a table: give --map-value V=N (or cityscapes), a "
            "contract value_map, or a color_map for colour masks"
        )
    out = Path(options.out)
    if out.resolve() == root.resolve() or root.resolve() in out.resolve().parents:
        raise UsageError(
            f"--out {options.out!r} would write inside the masks read: name a new folder"
        )
    base, files = mask_paths(root)
    names = contract.class_map if contract.class_map is not None else meta_names
    if contract.num_classes is None and names is None:
        raise UsageError("--classes K is required (or num_classes in the contract)")
    ignore = contract.ignore_index
    lookup = {old: ignore if new is None else new for old, new in table.items()}
    # one writer at a time: a run that validated the folder while another wrote into it would read
    # the other's temporary files, and two writers would leave a mix
    with folder_lock(out, "--out"):
        return _fix_into(out, path, contract, base, files, lookup, colours, names)


def _fix_into(
    out: Path,
    path: str,
    contract: Contract,
    base: Path,
    files: list[Path],
    lookup: dict[int, int],
    colours: Mapping[int, int] | None,
    names: ClassMap | None,
) -> FixResult:
    """Write every mask's remapped copy into ``out`` (held), then validate the folder."""
    from labelgate.readers.masks.maskdecode import LOSSY_SUFFIXES, unreadable

    root = Path(path)
    changed: Counter[str] = Counter()
    left: Counter[str] = Counter()
    written = 0
    for f in files:
        rel = f.relative_to(base)
        target = out / rel
        if f.suffix.lower() in LOSSY_SUFFIXES:
            target = target.with_suffix(".png")
        try:
            array, save = _load(f, colours)
        except Exception as exc:
            if not unreadable(exc):
                raise
            array = None  # the validation names it (LG031); it is left out, counted
        if array is None:
            left["LG031"] += 1  # not readable as class indices: the report names it
            continue
        new = _remap(array, lookup, changed, f)
        check_inside(out, target, [path])  # a linked subfolder of --out may lead into the input
        target.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(target) as tmp:
            save(new, tmp)
        written += 1
    # the fixed folder has no dataset_meta.json: its class map (and K) come from the input's
    after = report_of(
        [str(out)],
        contract.replace(task="segmentation", value_map=None, class_map=names),
        input_format="masks",
    )
    result = FixResult(
        rows_in=len(files),
        rows_fixed=written,
        rows_quarantined=len(files) - written,
        sources=[SourceFix(name=str(root), action="remapped", rows=len(files), changed=written)],
        value_maps=dict(changed),
        quarantined=dict(left),
        output=str(out),
        quarantine=None,
    )
    result.after = dataclasses.replace(after, input=after.input | {"files": [{"path": str(out)}]})
    return result


Saver = Any  # (array, path) -> None


def _load(path: Path, colours: Mapping[int, int] | None) -> tuple[npt.NDArray[Any] | None, Saver]:
    """The mask's class indices and how to write an array back in the mask's own format."""
    from labelgate.readers.common.maskfile import load_npy, require_regular

    if path.suffix.lower() == ".npy":
        array = load_npy(path, mmap=False)  # header and pixel count checked before allocating

        def save_npy(a: npt.NDArray[Any], tmp: Path) -> None:
            with tmp.open("wb") as stream:
                np.save(stream, a.astype(array.dtype, copy=False))

        ok = array.ndim == 2 and array.dtype.kind in "iu"
        return (array if ok else None), save_npy
    from PIL import Image

    require_regular(path)
    with Image.open(path) as im:
        mode, palette = im.mode, im.getpalette() if im.mode == "P" else None
        array = np.asarray(im)
    if array.ndim == 3 and colours is not None:
        from labelgate.readers.masks.maskdecode import pack_rgb

        packed = pack_rgb(array)
        index = np.full(packed.shape, 255, dtype=np.int64)
        for colour, i in colours.items():
            index[packed == colour] = i
        array, mode = index, "L"
    elif array.ndim != 2:
        return None, None

    def save_image(a: npt.NDArray[Any], tmp: Path) -> None:
        dtype = {"I;16": np.uint16, "I": np.int32}.get(mode, np.uint8)
        img = Image.fromarray(a.astype(dtype))
        if mode == "P" and palette:
            img.putpalette(palette)  # an L image given a palette becomes P: the indices kept
        suffix = tmp.suffix.lower()
        img.save(tmp, format={".tif": "TIFF", ".tiff": "TIFF", ".bmp": "BMP"}.get(suffix, "PNG"))

    return array, save_image


def _remap(
    array: npt.NDArray[Any], lookup: Mapping[int, int], changed: Counter[str], path: Path
) -> npt.NDArray[np.int64]:
    """``array`` with each value in ``lookup`` replaced; new values must fit the pixel type."""
    values, inverse = np.unique(array, return_inverse=True)
    new_values = values.astype(np.int64)
    for i, v in enumerate(values.tolist()):
        if v in lookup and lookup[v] != v:
            new_values[i] = lookup[v]
            changed[f"{v}={lookup[v]}"] += int((inverse == i).sum())
    info = np.iinfo(array.dtype) if array.dtype.kind in "iu" and array.dtype.itemsize < 8 else None
    if (
        info is not None
        and len(new_values)
        and (new_values.min() < info.min or new_values.max() > info.max)
    ):
        bad = [int(v) for v in new_values if not info.min <= v <= info.max]
        raise UsageError(
            f"{path}: value {bad[0]} does not fit its {array.dtype} pixels (for ignore, pass "
            "--ignore-index 255 to map onto 255)"
        )
    return new_values[inverse].reshape(array.shape)
