"""A tar shard walked header to header: every member's name, the bytes of the few asked for.

An uncompressed shard is read with ``os.pread``: each member's 512-byte header (its checksum
checked), then the next header at the data's end rounded up to 512 bytes, so a shard of images
costs one small read per member, not its size (4 KB at a header: the pax header webdataset's
writer puts before each member, and a label's data, come with it); a label member's data is read
where it is asked for. POSIX ustar names (``prefix/name``), pax ``path`` and ``size`` records and GNU long
names (``L``) are followed as Python's ``tarfile`` follows them. A compressed shard (``.tgz``)
is walked by ``tarfile``, which must inflate it. A header cut short, a bad header checksum or
a member whose data runs past the end of the file, or a file ending without the end-of-archive
zero block every tar writer puts there, is an error naming the shard, not a shorter shard. Members are filtered as webdataset's ``tar_file_iterator`` filters them
(src/webdataset/tariterators.py:128-147@e0953f9b): only regular files, no top-level
``__name__`` member, none matching ``__[^/]*__($|/)``.
"""

from __future__ import annotations

import os
import re
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from labelgate.errors import InputError, one_line
from labelgate.io.uri import scrub_uris

__all__ = ["MAX_MEMBER", "members"]

MAX_MEMBER = 1 << 20  # bytes of a label member read: a longer one is no label
_META = re.compile(r"__[^/]*__($|/)")
_BLOCK = 512
_ZEROS = bytes(_BLOCK)
_WINDOW = 8 * _BLOCK  # bytes read at a header: its pax header and a label's data come with it
_REGULAR = (b"0", b"\0", b"7")  # tarfile's REGTYPE, AREGTYPE, CONTTYPE

Member = tuple[str, bytes | None, int]


class _Bad(Exception):
    """A shard that is not a whole tar."""


def members(
    path: Path,
    name: str,
    wanted: Callable[[str], bool],
    *,
    uri: str | None = None,
    size: int = 0,
) -> Iterator[Member]:
    """(member name, its bytes where ``wanted(name)`` and it is at most ``MAX_MEMBER`` bytes,
    else ``None``, its size) of every member webdataset would read, in the shard's order; a
    shard on object storage (``uri``, of ``size`` bytes) is streamed once, front to back.

    Raises:
        InputError: the shard is not a tar, or is cut short (``name`` is named).
    """
    try:
        if uri is not None:
            walk = _remote(uri, size, wanted)
        else:
            with path.open("rb") as f:
                compressed = f.read(2) == b"\x1f\x8b"
            walk = _compressed(path, wanted) if compressed else _local(path, wanted)
        for fname, data, nbytes in walk:
            if "/" not in fname and fname.startswith("__") and fname.endswith("__"):
                continue
            if _META.match(fname):
                continue
            yield fname, data, nbytes
    except (_Bad, tarfile.TarError, EOFError, OSError, ValueError) as exc:
        raise InputError(
            f"unreadable tar shard ({scrub_uris(one_line(exc))}): truncated, or not a tar",
            path=name,
        ) from None


def _octal(field: bytes) -> int:
    if field[:1] and field[0] & 0x80:  # GNU base-256, for sizes past 8 GiB
        return int.from_bytes(field[1:], "big")
    text = field.split(b"\0", 1)[0].strip()
    return int(text, 8) if text else 0


class _Window:
    """Reads at offsets of one file through a window of ``_WINDOW`` bytes: a member's pax header,
    its header and a small label's data come in one ``pread``, not four."""

    def __init__(self, pread: Callable[[int, int], bytes]) -> None:
        self.pread = pread
        self.start = 0
        self.data = b""

    def read(self, at: int, size: int) -> bytes:
        end = at + size
        if not (self.start <= at and end <= self.start + len(self.data)):
            self.start, self.data = at, self.pread(max(size, _WINDOW), at)
        return self.data[at - self.start : end - self.start]


class _Forward:
    """``pread`` over a stream read once, front to back: what lies before an offset asked for
    (an image's bytes) is read and dropped."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.at = 0

    def pread(self, size: int, offset: int) -> bytes:
        while self.at < offset:
            skipped = len(self.stream.read(min(offset - self.at, 1 << 20)))
            if not skipped:
                return b""
            self.at += skipped
        data: bytes = self.stream.read(size)
        self.at += len(data)
        return data


def _local(path: Path, wanted: Callable[[str], bool]) -> Iterator[Member]:
    fd = os.open(path, os.O_RDONLY)
    try:
        yield from _plain(lambda n, at: os.pread(fd, n, at), os.fstat(fd).st_size, wanted)
    finally:
        os.close(fd)


def _remote(uri: str, size: int, wanted: Callable[[str], bool]) -> Iterator[Member]:
    from labelgate.io.sources import filesystem

    fs, inner = filesystem(uri)
    with fs.open_input_stream(inner) as stream:
        if uri.split("?", 1)[0].lower().endswith((".tgz", ".gz")):
            with tarfile.open(fileobj=stream, mode="r|*") as tar:
                for info in tar:
                    if info.isreg():
                        f = tar.extractfile(info) if wanted(info.name) else None
                        small = f is not None and info.size <= MAX_MEMBER
                        yield info.name, f.read() if small and f else None, info.size
            return
        yield from _plain(_Forward(stream).pread, size, wanted)


def _plain(
    pread: Callable[[int, int], bytes], end: int, wanted: Callable[[str], bool]
) -> Iterator[Member]:
    """The members of an uncompressed tar of ``end`` bytes, read through ``pread``."""
    window = _Window(pread)
    at = 0
    long_name: str | None = None
    pax: dict[str, str] = {}
    while True:
        head = window.read(at, _BLOCK)
        if head == _ZEROS:
            return  # the end-of-archive block
        if not head:  # a tar ends with zero blocks (POSIX ustar): without them it was cut
            raise _Bad(f"no end-of-archive block after byte {at}: cut short")
        if len(head) < _BLOCK:
            raise _Bad(f"a header cut short at byte {at}")
        try:
            stored = _octal(head[148:156])
            size = _octal(head[124:136])
        except ValueError:
            raise _Bad(f"no tar header at byte {at}") from None
        if stored != sum(head) - sum(head[148:156]) + 256 and stored != _signed_sum(head):
            raise _Bad(f"a bad header checksum at byte {at}")
        kind = head[156:157]
        data_at = at + _BLOCK
        size = int(pax.get("size", size)) if kind not in (b"x", b"g", b"L") else size
        if data_at + size > end:
            raise _Bad(f"a member's data runs past the end of the file (byte {end})")
        at = data_at + -(-size // _BLOCK) * _BLOCK
        if kind in (b"x", b"L"):
            body = window.read(data_at, size)
            if kind == b"L":
                long_name = body.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
            else:
                pax = _pax(body)
            continue
        if kind in (b"g", b"K"):
            continue
        fname = long_name or pax.get("path") or _name(head)
        long_name, pax = None, {}
        if kind not in _REGULAR:
            continue
        data = None
        if size <= MAX_MEMBER and wanted(fname):
            data = window.read(data_at, size)
        yield fname, data, size


def _signed_sum(head: bytes) -> int:
    """The checksum as some old tars wrote it, bytes read as signed (``tarfile`` takes both)."""
    import struct

    signed: tuple[int, ...] = struct.unpack_from("148b", head) + struct.unpack_from(
        "356b", head, 156
    )
    return 256 + sum(signed)


def _name(head: bytes) -> str:
    name = head[:100].split(b"\0", 1)[0]
    if head[257:262] == b"ustar":
        prefix = head[345:500].split(b"\0", 1)[0]
        if prefix:
            name = prefix + b"/" + name
    return name.decode("utf-8", "surrogateescape")


def _pax(body: bytes) -> dict[str, str]:
    """A pax header's records (``LEN key=value\\n``)."""
    out: dict[str, str] = {}
    at = 0
    while at < len(body):
        length, _, _ = body[at:].partition(b" ")
        if not length.isdigit() or int(length) <= 0:
            break
        record = body[at : at + int(length)]
        key, _, value = record.partition(b" ")[2].rstrip(b"\n").partition(b"=")
        out[key.decode("utf-8", "replace")] = value.decode("utf-8", "surrogateescape")
        at += int(length)
    return out


def _compressed(path: Path, wanted: Callable[[str], bool]) -> Iterator[Member]:
    with tarfile.open(path, mode="r:*") as tar:
        while (info := tar.next()) is not None:
            tar.members = []  # type: ignore[attr-defined]  # none kept, as webdataset does
            if not info.isreg():
                continue
            data = None
            if info.size <= MAX_MEMBER and wanted(info.name):
                f = tar.extractfile(info)
                data = f.read() if f is not None else None
            yield info.name, data, info.size
