"""Decoding one mask into its histogram, and what its encoding says: lossy saves, colour masks,
unreadable files (``maskpool`` runs it on every core, or on a Dask cluster)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from labelgate.readers.common.maskfile import load_npy, require_regular

if TYPE_CHECKING:
    pass

__all__ = [
    "EMPTY",
    "I64",
    "LOSSY_SUFFIXES",
    "MASK_SUFFIXES",
    "Decoded",
    "decode",
    "pack_rgb",
    "unreadable",
]

MASK_SUFFIXES = (".png", ".tif", ".tiff", ".bmp", ".npy", ".jpg", ".jpeg")
LOSSY_SUFFIXES = (".jpg", ".jpeg")
RARE_SHARE = 0.005  # a value on fewer than 0.5% of a mask's pixels is rare
STRAY_VALUES = 4  # rare values, mostly isolated pixels, from which a mask is a lossy save
ISOLATED_SHARE = 0.3
I64 = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class Decoded:
    """One mask, decoded and summarised; the pixels themselves are not kept.

    Attributes:
        path: the mask's path under the root (its id).
        values, pixels: the distinct values and their pixel counts (empty when ``values`` is
            ``None``: the mask cannot be read as class indices).
        mode: how it was stored (``P``, ``L``, ``I;16``, ``RGB``, ``npy int32``...).
        shape: height and width.
        channels: 1, or 3 for a colour mask.
        colours: for a colour mask, its distinct colours (``0xRRGGBB``) with their pixel counts,
            those absent from the colour map only where one was given.
        stray: rare values lying on class edges (a lossy save), with their pixel count.
        error: why the file cannot be read as a mask (``None`` when it can).
        mapped: whether the values come from colours through the colour map.
        past: the largest value as written, when the mask holds values past int64 (``error``
            says so): the example's value, a number however large.
    """

    path: str
    values: I64 | None
    pixels: I64
    mode: str = ""
    shape: tuple[int, int] = (0, 0)
    channels: int = 1
    colours: dict[int, int] = field(default_factory=dict)
    stray: tuple[int, int] = (0, 0)
    error: str | None = None
    mapped: bool = False
    past: int | None = None


def decode(path: Path | str, root: Path | str, colour_map: Mapping[int, int] | None) -> Decoded:
    """Decode one mask into its histogram and what its encoding says (never raises on bad input:
    a file that is no mask comes back with ``error`` set)."""
    rel = os.path.relpath(path, root).replace(os.sep, "/")
    lossy = str(path).lower().endswith(LOSSY_SUFFIXES)
    try:
        array, mode = _read(path)
    except Exception as exc:
        if unreadable(exc):
            return Decoded(rel, None, EMPTY, error=_reason(exc))
        raise
    return _summarise(rel, array, mode, colour_map, lossy=lossy)


EMPTY = np.zeros(0, np.int64)


def unreadable(exc: BaseException) -> bool:
    """Whether ``exc`` says a file is no readable mask (rather than a defect): an I/O or format
    error (Pillow raises SyntaxError for a bad header), or a decompression bomb, a file claiming
    more pixels than Pillow agrees to decode."""
    if isinstance(exc, (OSError, ValueError, SyntaxError)):
        return True
    from PIL import Image

    return isinstance(exc, Image.DecompressionBombError)


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split())[:200]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _read(path: Path | str) -> tuple[npt.NDArray[Any], str]:
    if str(path).lower().endswith(".npy"):
        array = load_npy(path, mmap=True)  # regular file, header and pixels checked first
        return array, f"npy {array.dtype}"
    from PIL import Image

    require_regular(path)
    with Image.open(path) as im:
        mode = im.mode
        if mode == "1":
            return np.asarray(im, dtype=np.uint8), mode
        if mode in ("LA", "PA"):
            return np.asarray(im)[..., 0], mode
        if mode in ("CMYK", "YCbCr", "LAB", "HSV"):
            return np.asarray(im.convert("RGB")), mode
        return np.asarray(im), mode


def _summarise(
    rel: str,
    array: npt.NDArray[Any],
    mode: str,
    colour_map: Mapping[int, int] | None,
    *,
    lossy: bool,
) -> Decoded:
    if array.ndim == 3 and array.shape[-1] == 1:
        array = array[..., 0]
    if array.ndim == 3 and array.shape[-1] in (3, 4):
        rgb = np.ascontiguousarray(array[..., :3])
        if (rgb[..., 0] == rgb[..., 1]).all() and (rgb[..., 1] == rgb[..., 2]).all():
            grey = _summarise(rel, rgb[..., 0], mode, None, lossy=lossy)
            return Decoded(
                rel, grey.values, grey.pixels, mode, grey.shape, 3, {}, grey.stray, grey.error
            )
        return _colours(rel, rgb, mode, colour_map)
    if array.ndim != 2:
        return Decoded(rel, None, EMPTY, mode, error=f"an array of shape {array.shape}, not 2-D")
    shape = (int(array.shape[0]), int(array.shape[1]))
    if array.dtype.kind == "f":
        whole = np.isfinite(array) & (array == np.floor(array))
        if not whole.all():
            return Decoded(
                rel, None, EMPTY, mode, shape, error="floating-point values that are not integers"
            )
        array = array.astype(np.int64)
    elif array.dtype.kind == "b":
        array = array.astype(np.uint8)
    elif array.dtype.kind not in "iu":
        return Decoded(rel, None, EMPTY, mode, shape, error=f"values of type {array.dtype}")
    elif array.dtype == np.uint64 and array.size and int(array.max()) >> 63:
        top = int(array.max())  # as written: no int64 target holds it, clamping would invent one
        error = "values past int64"
        return Decoded(rel, None, EMPTY, mode, shape, error=error, past=top)
    values, pixels, heads, lengths = _histogram(array)
    stray = _stray(array, values, pixels, (heads, lengths))
    if lossy and stray == (0, 0):
        stray = (0, -1)  # a lossy file format, whether or not this mask shows it yet
    return Decoded(rel, values, pixels, mode, shape, 1, {}, stray)


def _histogram(array: npt.NDArray[Any]) -> tuple[I64, I64, npt.NDArray[Any], I64]:
    """Distinct values and pixel counts, from the runs of equal values along the rows: a mask
    is piecewise constant, so its runs are few and counting them is far cheaper than counting
    every pixel (a noisy mask costs what a plain count would). Returns the values, their pixel
    counts, and the runs (each run's value and length)."""
    flat = array.ravel()
    if not flat.size:
        return EMPTY, EMPTY, EMPTY, EMPTY
    starts = np.concatenate(([0], np.flatnonzero(flat[1:] != flat[:-1]) + 1))
    lengths = np.diff(np.append(starts, flat.size))
    heads = flat[starts]
    if heads.dtype.kind == "u" and heads.dtype.itemsize <= 2:
        counts = np.bincount(heads, weights=lengths, minlength=1).astype(np.int64)
        values = np.flatnonzero(counts)
        return values.astype(np.int64), counts[values], heads, lengths
    values, at = np.unique(heads.astype(np.int64), return_inverse=True)
    counts = np.bincount(at, weights=lengths, minlength=len(values)).astype(np.int64)
    return values, counts, heads, lengths


def _stray(
    array: npt.NDArray[Any], values: I64, pixels: I64, runs: tuple[npt.NDArray[Any], I64]
) -> tuple[int, int]:
    """Rare values whose pixels are mostly isolated (no 4-neighbour of the same value): what a
    lossy (JPEG) save leaves along every class edge; a small object, however thin its outline,
    has same-valued neighbours. Returns (how many such values, their pixels), or (0, 0).

    The runs decide first, at no cost: unless most rare pixels lie in runs of one or two pixels
    along the rows, the mask is not lossy and its pixels are not looked at again.
    """
    total = int(pixels.sum())
    rare = values[pixels < RARE_SHARE * total]
    if len(rare) < STRAY_VALUES:
        return (0, 0)
    heads, lengths = runs
    in_rare_runs = np.isin(heads, rare)
    short = int(lengths[in_rare_runs & (lengths <= 2)].sum())
    if short < 0.5 * int(lengths[in_rare_runs].sum()):
        return (0, 0)
    if array.dtype == np.uint8:
        lut = np.zeros(256, dtype=bool)
        lut[rare] = True
        in_rare = lut[array]
    else:
        in_rare = np.isin(array, rare)
    ys, xs = np.nonzero(in_rare)
    if not len(ys):
        return (0, 0)
    own = array[ys, xs]
    h, w = array.shape
    alone = np.ones(len(ys), dtype=bool)
    for dy, dx in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        y, x = ys + dy, xs + dx
        inside = (y >= 0) & (y < h) & (x >= 0) & (x < w)
        same = np.zeros(len(ys), dtype=bool)
        same[inside] = array[y[inside], x[inside]] == own[inside]
        alone &= ~same
    if int(alone.sum()) < ISOLATED_SHARE * len(ys):
        return (0, 0)
    return (len(rare), len(ys))


def _colours(
    rel: str, rgb: npt.NDArray[np.uint8], mode: str, colour_map: Mapping[int, int] | None
) -> Decoded:
    """A colour mask: through the colour map where one is given, else its colours only."""
    shape = (int(rgb.shape[0]), int(rgb.shape[1]))
    colours, counts = np.unique(pack_rgb(rgb), return_counts=True)
    if colour_map is None:
        return Decoded(
            rel,
            None,
            EMPTY,
            mode,
            shape,
            3,
            dict(zip(colours.tolist(), counts.tolist(), strict=True)),
        )
    index = np.array([colour_map.get(c, -1) for c in colours.tolist()], dtype=np.int64)
    known = index >= 0
    unknown = dict(zip(colours[~known].tolist(), counts[~known].tolist(), strict=True))
    values, at = np.unique(index[known], return_inverse=True)
    pixels = np.bincount(at, weights=counts[known], minlength=len(values)).astype(np.int64)
    return Decoded(rel, values.astype(np.int64), pixels, mode, shape, 3, unknown, mapped=True)


def pack_rgb(rgb: npt.NDArray[Any]) -> I64:
    """Each pixel's colour as one integer, ``0xRRGGBB`` (the key of a colour map)."""
    packed: I64 = (rgb[..., 0].astype(np.int64) << 16) | (rgb[..., 1].astype(np.int64) << 8)
    packed |= rgb[..., 2]
    return packed
