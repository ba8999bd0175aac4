"""Masks decoded on every core (a process pool) or on a Dask cluster, a chunk per task, each
chunk's summaries sent back packed: the histograms of its masks concatenated into two arrays and
the few fields a mask has, in lists, instead of a pickled object and two arrays per mask.

A worker decodes at Pillow's pace; what the parent does per mask is the rest of the cost, and on
two cores every CPU second of the parent is taken from a worker. So the workers decode and
summarise, the parent unpacks plain lists and array views, and each worker takes the next chunk
as soon as it is done with one (``imap_unordered``), the parent putting the chunks back in order
before any mask is counted: the report does not depend on which worker finished first.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path

import numpy as np

from labelgate.readers.masks.maskdecode import EMPTY, I64, Decoded, decode

__all__ = ["CHUNK", "INLINE", "ClusterMap", "Packed", "decoded"]

Chunk = tuple[list[str], str, dict[int, int] | None]  # mask paths, their root, the colour map
# A chunk's masks: paths, modes, shapes, histogram lengths (-1: unread), values, pixels, and
# the masks whose other fields are not their defaults, by position in the chunk.
Packed = tuple[list[str], list[str], list[tuple[int, int]], I64, I64, I64, dict[int, Decoded]]

# [fn(x) for x in items], in order, on a cluster (labelgate.run.distributed.cluster_map).
ClusterMap = Callable[[Callable[[Chunk], Packed], list[Chunk]], list[Packed]]
CHUNK = 16  # masks per task, at least
MOST = 64  # masks per task, at most: a chunk is ~50 ms of decoding, the tail a worker may idle
INLINE = 64  # up to this many masks, no worker processes
_PLAIN = Decoded("", None, EMPTY)  # the defaults a plain mask keeps


def _plain(d: Decoded) -> bool:
    """Whether ``d`` is read and every field but its path, histogram, mode and shape is the
    default (a single-channel mask, nothing stray): the lists carry it whole."""
    return (
        d.values is not None
        and d.error is None
        and d.channels == _PLAIN.channels
        and d.stray == _PLAIN.stray
        and not d.colours
        and not d.mapped
    )


def _decode_packed(chunk: Chunk) -> Packed:
    paths, root, colour_map = chunk
    done = [decode(p, root, colour_map) for p in paths]
    lengths = np.array([-1 if d.values is None else len(d.values) for d in done], np.int64)
    read = [d for d in done if d.values is not None]
    values = np.concatenate([d.values for d in read if d.values is not None] or [EMPTY])
    pixels = np.concatenate([d.pixels for d in read] or [EMPTY])
    odd = {i: _stripped(d) for i, d in enumerate(done) if not _plain(d)}
    paths_of = [d.path for d in done]
    return paths_of, [d.mode for d in done], [d.shape for d in done], lengths, values, pixels, odd


def _stripped(d: Decoded) -> Decoded:
    """``d`` without its histogram (sent once, in the chunk's arrays)."""
    return replace(d, values=None if d.values is None else EMPTY, pixels=EMPTY)


def _unpacked(packed: Packed) -> Iterator[Decoded]:
    paths, modes, shapes, lengths, values, pixels, odd = packed
    ends = np.cumsum(np.maximum(lengths, 0)).tolist()
    start = 0
    for i, (path, mode, shape, end) in enumerate(zip(paths, modes, shapes, ends, strict=True)):
        unread = lengths[i] < 0
        vals = None if unread else values[start:end]
        px = EMPTY if unread else pixels[start:end]
        start = end
        d = odd.get(i)
        if d is None:
            yield Decoded(path, vals, px, mode, shape)
        else:
            yield replace(d, values=vals, pixels=px, mode=mode, shape=shape)


def decoded(
    files: list[Path],
    root: Path,
    colour_map: Mapping[int, int] | None,
    *,
    workers: int | None = None,
    cluster: ClusterMap | None = None,
) -> Iterator[Decoded]:
    """Every mask decoded, in order: inline for a few, else on ``workers`` processes (default:
    the cores available) or through ``cluster`` (a Dask map), a bounded number of chunks in
    flight on a cluster."""
    cmap = None if colour_map is None else dict(colour_map)
    workers = workers or len(os.sched_getaffinity(0))
    size = CHUNK if cluster is not None else max(CHUNK, min(MOST, len(files) // (8 * workers)))
    chunks = [
        ([str(p) for p in files[i : i + size]], str(root), cmap) for i in range(0, len(files), size)
    ]
    if cluster is not None:
        window = 64
        for i in range(0, len(chunks), window):
            for done in cluster(_decode_packed, chunks[i : i + window]):
                yield from _unpacked(done)
        return
    if len(files) <= INLINE or workers < 2:
        for chunk in chunks:
            yield from _unpacked(_decode_packed(chunk))
        return
    yield from _in_processes(chunks, workers)


def _numbered(item: tuple[int, Chunk]) -> tuple[int, Packed]:
    return item[0], _decode_packed(item[1])


def _in_processes(chunks: list[Chunk], workers: int) -> Iterator[Decoded]:
    import multiprocessing

    # fork where it is safe (Linux): the workers touch only Pillow and numpy, and fork needs no
    # importable __main__ (a notebook, a script without a main guard); spawn elsewhere.
    method = "fork" if sys.platform.startswith("linux") else "spawn"
    context = multiprocessing.get_context(method)
    with context.Pool(workers) as pool:
        waiting: dict[int, Packed] = {}  # chunks done before an earlier one
        at = 0
        for i, packed in pool.imap_unordered(_numbered, enumerate(chunks)):
            waiting[i] = packed
            while at in waiting:
                yield from _unpacked(waiting.pop(at))
                at += 1
