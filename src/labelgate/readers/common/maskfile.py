"""Opening one mask file safely: only a regular file is opened (a FIFO named ``b.png`` would
block a reader forever), and a ``.npy`` header is read and its pixel count bounded before any
array is mapped or allocated (Pillow bounds PNG and TIFF the same way, docs/security.md)."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

__all__ = ["MAX_MASK_PIXELS", "load_npy", "require_regular"]

# Pillow's DecompressionBombError threshold (PIL/Image.py, _decompression_bomb_check: pixels over
# 2 * MAX_IMAGE_PIXELS, MAX_IMAGE_PIXELS = 1024 * 1024 * 1024 // 4 // 3): one bound for every mask
# format, about 13,000 x 13,000 pixels.
MAX_MASK_PIXELS = 2 * 89_478_485


def require_regular(path: Path | str) -> None:
    """Raise ``OSError`` unless ``path`` (after links) is a regular file: a mask reader reports
    it as unreadable (LG031) instead of blocking on a FIFO or reading a device."""
    mode = Path(path).stat().st_mode
    if not stat.S_ISREG(mode):
        raise OSError(f"not a regular file ({_kind(mode)})")


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a folder" if stat.S_ISDIR(mode) else "not a file"


def load_npy(path: Path | str, *, mmap: bool) -> Any:
    """A ``.npy`` array (never a pickle), after its header is checked: a 128-byte file may claim
    a shape of (10^6, 10^6), 7 TiB once allocated.

    Raises:
        OSError: not a regular file.
        ValueError: not a ``.npy`` file, or more than ``MAX_MASK_PIXELS`` pixels.
    """
    import numpy as np

    require_regular(path)
    with Path(path).open("rb") as f:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, _, _ = np.lib.format.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, _, _ = np.lib.format.read_array_header_2_0(f)
        else:
            raise ValueError(f"an unsupported .npy version {version}")
    pixels = 1
    for n in shape:
        pixels *= int(n)
    if pixels > MAX_MASK_PIXELS:
        raise ValueError(
            f"an array of {pixels:,} pixels, over the {MAX_MASK_PIXELS:,} a mask may hold"
        )
    return np.load(path, mmap_mode="r" if mmap else None, allow_pickle=False)
