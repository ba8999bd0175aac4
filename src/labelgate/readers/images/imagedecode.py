"""Opening images as a detection loader will, bounded, on every core: each file opened with
Pillow, its pixel count bounded before anything is decoded (a decompression bomb is a finding,
not a crash), its data verified, its size and EXIF orientation read.

The work per image is what the floor of ``benchmarks/images.py`` does (``Image.open``,
``verify()``, ``size``), plus the orientation tag (already in the header Pillow read) and, for a
JPEG, a look at its last bytes for the end-of-image marker: ``verify()`` does not read a JPEG's
scan data, so a truncated JPEG passes it, and Pillow's decoder raises "image file is truncated"
on it at training time.

What that costs beyond the floor is kept small: one ``lstat`` (a FIFO or a link is known before
anything is opened), a small file read whole in one call and parsed from memory (its last bytes
are then at hand), a larger one opened as a file and its last bytes read in one ``pread`` at the
size ``lstat`` gave. A chunk of images comes as compact tuples and goes back as the probes the
parent must judge: an image that decodes with its recorded size sends nothing back.
"""

from __future__ import annotations

import functools
import io
import os
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import BinaryIO

from labelgate.readers.common.maskfile import MAX_MASK_PIXELS
from labelgate.readers.common.ordered import in_order

__all__ = [
    "LEAVES",
    "LINK_LEAVES",
    "MISSING",
    "ClusterMap",
    "Found",
    "Item",
    "Probe",
    "probe",
    "probe_all",
]

MISSING = "images missing from the images folder"
LEAVES = "file names that leave the images folder (an absolute name or a '..' part)"
LINK_LEAVES = "file names that leave the images folder (a link pointing outside)"

CHUNK = 256  # images per task sent to a worker: a few hundred round trips for 100,000 images
INLINE = 64  # up to this many images, no process pool
_ROTATED = frozenset({5, 6, 7, 8})  # EXIF orientations that swap width and height
_TAIL = 1024  # bytes of a JPEG's end searched for its end-of-image marker
WHOLE = 1 << 16  # a file up to this size is read in one call and parsed from memory


@dataclass(frozen=True, slots=True)
class Probe:
    """What opening one image found.

    Attributes:
        missing: why there is no file to open (absent, or a link leaving the images folder).
        error: why it is unusable (``None``: it decodes), in words.
        bomb: the error is a decompression bomb (more pixels than the bound).
        size: (width, height) as stored, when the header was read.
        oriented: (width, height) once its EXIF orientation is applied.
    """

    missing: str | None = None
    error: str | None = None
    bomb: bool = False
    size: tuple[int, int] | None = None
    oriented: tuple[int, int] | None = None


def probe(path: str, root: str) -> Probe:
    """Open ``path`` (inside the images folder ``root``) as an image, within the pixel bound;
    never raises for a bad file."""
    with _quiet():
        return _probe(path, root)


@contextmanager
def _quiet() -> Iterator[None]:
    """Pillow's DecompressionBombWarning silenced (the pixel bound is checked here), once for
    a chunk of images rather than once per image."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _probe(path: str, root: str) -> Probe:
    try:
        # os, not pathlib: this runs once per image, and a Path per call costs more than the stat
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode) or not _inside(os.path.dirname(path), root):  # noqa: PTH120
            if not _inside(path, root):
                return Probe(missing=LINK_LEAVES)
            st = os.stat(path)  # noqa: PTH116
    except OSError:
        return Probe(missing=MISSING)
    if not stat.S_ISREG(st.st_mode):
        return Probe(error="not a regular file")
    size = st.st_size
    try:
        if size <= WHOLE:
            data = _whole(path, size)
            return _opened(io.BytesIO(data), data, size)
        with open(path, "rb") as f:  # noqa: PTH123 - the hot loop: no Path objects
            return _opened(f, None, size)
    except OSError as exc:
        return Probe(error=_reason(exc))


def _whole(path: str, size: int) -> bytes:
    """The ``size`` bytes of the regular file ``path``, in one ``read`` (more only where the
    system returns fewer): no buffered file object for an image of a few kilobytes."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        data = os.read(fd, size)
        while len(data) < size:
            more = os.read(fd, size - len(data))
            if not more:
                break
            data += more
        return data
    finally:
        os.close(fd)


@functools.lru_cache(maxsize=1024)
def _inside(path: str, root: str) -> bool:
    """Whether ``path``, links followed, lies in ``root`` (links followed)."""
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def _opened(f: BinaryIO, data: bytes | None, size: int) -> Probe:
    """The probe of the open image ``f``: ``data``, its bytes when it was read whole, else
    ``None`` (its last bytes are then read at ``size``, the size ``lstat`` gave)."""
    from PIL import Image

    try:
        # the caller silenced Pillow's DecompressionBombWarning: the pixel bound is checked here
        im = Image.open(f)
        w, h = im.size
        if w * h > MAX_MASK_PIXELS:
            return Probe(
                error=f"a decompression bomb: {w} x {h} pixels, over the "
                f"{MAX_MASK_PIXELS:,} Pillow decodes",
                bomb=True,
                size=(w, h),
            )
        orientation = 1
        if "exif" in im.info or im.format in ("TIFF", "MPO"):
            orientation = int(im.getexif().get(0x0112, 1) or 1)
        fmt = im.format
        im.verify()
        if fmt == "JPEG":
            if data is not None:
                tail = data[-_TAIL:]
            else:
                tail = os.pread(f.fileno(), _TAIL, max(0, size - _TAIL))
            if b"\xff\xd9" not in tail:
                return Probe(error="truncated: the JPEG has no end-of-image marker", size=(w, h))
    except Image.DecompressionBombError as exc:
        return Probe(error=f"a decompression bomb: {_reason(exc)}", bomb=True)
    except Exception as exc:  # noqa: BLE001 - any decoder error is the file's: unreadable
        return Probe(error=_reason(exc))
    oriented = (h, w) if orientation in _ROTATED else (w, h)
    return Probe(size=(w, h), oriented=oriented)


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split())[:160]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


# an image to probe: its path, its images folder, its size as recorded ((width, height) or None)
Item = tuple[str, str, tuple[float, float] | None]
# the probes a chunk sends back: (position in the chunk, probe), only those the parent judges
Found = list[tuple[int, Probe]]


def _probe_chunk(items: list[Item]) -> Found:
    """The probes of ``items`` that hold a finding, by position in the chunk: an image that
    decodes and has its recorded size once oriented (or none recorded) sends nothing back."""
    _inside.cache_clear()  # folders' links as they are now, shared by this chunk's images
    found: Found = []
    with _quiet():
        for at, (path, root, want) in enumerate(items):
            p = _probe(path, root)
            if p.missing is None and p.error is None:
                if want is None or p.oriented is None:
                    continue
                if (float(p.oriented[0]), float(p.oriented[1])) == want:
                    continue
            found.append((at, p))
    return found


# [fn(x) for x in items], in order, on a cluster (labelgate.run.distributed.cluster_map).
ClusterMap = Callable[[Callable[[list[Item]], Found], list[list[Item]]], list[Found]]
WINDOW = 64  # chunks handed to a cluster at a time: the futures held stay bounded


def probe_all(
    items: list[Item],
    workers: int | None = None,
    cluster: ClusterMap | None = None,
) -> Iterator[tuple[int, Found]]:
    """Every image probed, in order, a chunk at a time: (the chunk's first position in
    ``items``, its probes that hold a finding). Inline for a few, else on ``workers``
    processes (default: the cores available) or through ``cluster`` (a Dask map: each worker
    opens the files by their paths, which must be the same there), a bounded number of chunks
    in flight."""
    chunks = [items[i : i + CHUNK] for i in range(0, len(items), CHUNK)]
    workers = workers or len(os.sched_getaffinity(0))
    if len(items) <= INLINE:
        workers = 1
    if cluster is None and workers > 1:
        from PIL import Image

        Image.preinit()  # imported once here and inherited by forked workers, not once in each
    mapped = in_order(
        _probe_chunk, chunks, workers, cluster=cluster, window=WINDOW, ahead=4 * workers
    )
    for n, found in enumerate(mapped):
        yield n * CHUNK, found
