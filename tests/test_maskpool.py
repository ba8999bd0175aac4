"""Masks decoded in packed chunks, on a process pool: every field of every mask as decoding it
alone gives, in the files' order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from labelgate.readers.masks.maskdecode import Decoded, decode
from labelgate.readers.masks.masklayout import mask_files
from labelgate.readers.masks.maskpool import INLINE, _decode_packed, _unpacked, decoded


def fields(d: Decoded) -> tuple[Any, ...]:
    """A mask's fields, its arrays as lists (comparable with ``==``)."""
    values = None if d.values is None else d.values.tolist()
    return (d.path, values, d.pixels.tolist(), d.mode, d.shape, d.channels, d.colours, d.stray,
            d.error, d.mapped)  # fmt: skip


def every_kind(root: Path, count: int) -> list[Path]:
    """``count`` masks cycling through what a mask folder holds: plain L and P PNGs, 16-bit,
    lossy JPEG, colour and grey RGB, unreadable and empty files, int32 and float ``.npy``; each
    of a size of its own, so chunks take unequal times."""
    rng = np.random.default_rng(3)
    for i in range(count):
        folder = root / f"{i % 5}"
        folder.mkdir(parents=True, exist_ok=True)
        a = np.zeros((24 + i % 9, 40), np.uint8)
        a[4:12, 3 : 10 + i % 20] = rng.integers(1, 6)
        kind = i % 10
        if kind == 0:
            Image.fromarray(a).save(folder / f"{i}.jpg", quality=50)
        elif kind == 1:
            Image.fromarray(np.stack([a * 40, a, 255 - a], -1)).save(folder / f"{i}.png")
        elif kind == 2:
            Image.fromarray(np.stack([a, a, a], -1)).save(folder / f"{i}.png")
        elif kind == 3:
            (folder / f"{i}.png").write_bytes(b"no png")
        elif kind == 4:
            np.save(folder / f"{i}.npy", a.astype(np.int32) - 1)
        elif kind == 5:
            np.save(folder / f"{i}.npy", a.astype(np.float32) + 0.5)
        elif kind == 6:
            Image.fromarray(a.astype(np.uint16) * 300).save(folder / f"{i}.png")
        elif kind == 7:
            Image.fromarray(a, "L").convert("P").save(folder / f"{i}.png")
        elif kind == 8:
            (folder / f"{i}.tif").write_bytes(b"")
        else:
            Image.fromarray(a).save(folder / f"{i}.png")
    return mask_files(root)


@pytest.mark.parametrize("colours", [None, {0x000000: 0, 0x28007F: 1}])
def test_a_packed_chunk_unpacks_to_each_mask_decoded_alone(
    tmp_path: Path, colours: dict[int, int] | None
) -> None:
    files = every_kind(tmp_path, 30)
    alone = [fields(decode(f, tmp_path, colours)) for f in files]
    chunk = ([str(f) for f in files], str(tmp_path), colours)
    unpacked = [fields(d) for d in _unpacked(_decode_packed(chunk))]
    assert unpacked == alone
    kinds = {(d[5], d[7] != (0, 0), d[8] is not None, d[9]) for d in unpacked}
    assert len(kinds) >= 4  # plain, colour, lossy, unreadable (mapped with a colour map)


def test_the_pool_keeps_the_files_order(tmp_path: Path) -> None:
    files = every_kind(tmp_path, 4 * INLINE + 7)
    alone = [fields(decode(f, tmp_path, None)) for f in files]
    pooled = [fields(d) for d in decoded(files, tmp_path, None, workers=2)]
    assert pooled == alone


def test_a_cluster_map_gets_packed_chunks_and_gives_the_same_masks(tmp_path: Path) -> None:
    files = every_kind(tmp_path, 40)
    calls: list[int] = []

    def cluster(fn: Any, items: list[Any]) -> list[Any]:
        calls.append(len(items))
        return [fn(x) for x in items]

    got = [fields(d) for d in decoded(files, tmp_path, None, cluster=cluster)]
    assert got == [fields(decode(f, tmp_path, None)) for f in files]
    assert calls == [3]  # chunks of 16 masks
