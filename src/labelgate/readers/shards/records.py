"""TFRecord framing: each record's length and data, both CRCs checked, without TensorFlow.

A record is ``uint64 length``, ``uint32 masked_crc32c(length)``, ``data[length]``,
``uint32 masked_crc32c(data)``, little-endian (tensorflow/core/lib/io/record_writer.cc,
``RecordWriter::WriteRecord``@09860328); the mask rotates the CRC right by 15 bits and adds
``0xa282ead8`` (tsl/lib/hash/crc32c.h ``Mask``@08df8c40). CRC-32C is the Castagnoli polynomial
(RFC 3720 B.4): the ``crc32c`` package computes it where installed, this module's table
otherwise (the same value, far slower). A gzip file (TensorFlow's ``compression_type="GZIP"``)
is inflated as it is read.
"""

from __future__ import annotations

import gzip
import struct
import zlib
from collections.abc import Callable, Iterator
from contextlib import suppress
from functools import cache
from pathlib import Path
from typing import IO, Any

from labelgate.errors import InputError, one_line
from labelgate.io.uri import scrub_uris

__all__ = ["MAX_RECORD", "crc32c", "fast_crc", "framed", "head", "masked_crc", "records"]

MAX_RECORD = 1 << 30  # bytes: a longer record is a corrupt length, not an image
_MASK_DELTA = 0xA282EAD8
_POLY = 0x82F63B78  # CRC-32C (Castagnoli), reflected
_HEAD = struct.Struct("<QI")
_FOOT = struct.Struct("<I")


@cache
def _table() -> tuple[int, ...]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ _POLY if c & 1 else c >> 1
        table.append(c)
    return tuple(table)


def _python_crc32c(data: bytes | memoryview) -> int:
    table = _table()
    crc = 0xFFFFFFFF
    for b in bytes(data):
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


@cache
def _implementation() -> Callable[[bytes | memoryview], int]:
    try:
        from crc32c import crc32c as fast  # the C (and hardware) CRC-32C, where installed
    except ImportError:
        return _python_crc32c
    return fast


def crc32c(data: bytes | memoryview) -> int:
    """The CRC-32C of ``data``."""
    return _implementation()(data)


def fast_crc() -> bool:
    """Whether CRCs are computed by the ``crc32c`` package (else by this module's table)."""
    return _implementation() is not _python_crc32c


def masked_crc(data: bytes | memoryview) -> int:
    """TFRecord's masked CRC-32C of ``data``."""
    return _masked(crc32c(data))


def _masked(crc: int) -> int:
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def framed(head: bytes) -> bool:
    """Whether the first 12 bytes of a file are a TFRecord header (its length's CRC matches)."""
    if len(head) < 12:
        return False
    crc: int = struct.unpack("<I", head[8:12])[0]
    return masked_crc(head[:8]) == crc


def records(path: Path, name: str, uri: str | None = None) -> Iterator[memoryview]:
    """Every record's data in a TFRecord file, its framing and both CRCs checked; a shard on
    object storage (``uri``) is streamed once, front to back.

    A plain local file is mapped, not read: each record is a view of the mapping, its CRC
    computed there, so no record is copied (a gzip file or an object is read as a stream).

    Raises:
        InputError: the file is cut inside a record, a CRC does not match, or a length is
            past ``MAX_RECORD`` (``name`` and the record's index are named).
    """
    try:
        if uri is not None:
            yield from _streamed(_remote(uri), name)
            return
        with path.open("rb") as f:
            gzipped = f.read(2) == b"\x1f\x8b"
            size = f.seek(0, 2)
            if gzipped:
                with gzip.open(path, "rb") as inflated:
                    yield from _streamed(inflated, name)
                return
            if not size:
                return
            import mmap

            mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        yield from _mapped(mapped, size, name)
    except InputError:
        raise
    except (OSError, EOFError, zlib.error, ValueError) as exc:
        why = getattr(exc, "strerror", None) or scrub_uris(one_line(exc))
        raise InputError(f"cannot read this TFRecord shard ({why})", path=name) from None


def _mapped(mapped: Any, size: int, name: str) -> Iterator[memoryview]:
    """The records of a mapped file, each a view of the mapping."""
    crc = _implementation()
    view = memoryview(mapped)
    unpack = _HEAD.unpack_from
    at = index = 0
    try:
        while at < size:
            if at + 12 > size:
                raise _bad(name, index, "the file ends inside its header (truncated)")
            length, length_crc = unpack(mapped, at)
            if _masked(crc(view[at : at + 8])) != length_crc:
                raise _bad(name, index, "its length's CRC does not match (corrupt)")
            if length > MAX_RECORD:
                raise _bad(name, index, f"a length of {length:,} bytes (corrupt)")
            start, stop = at + 12, at + 12 + length
            if stop + 4 > size:
                raise _bad(name, index, "the file ends inside its data (truncated)")
            data = view[start:stop]
            if _masked(crc(data)) != _FOOT.unpack_from(mapped, stop)[0]:
                raise _bad(name, index, "its data's CRC does not match (corrupt)")
            yield data
            at, index = stop + 4, index + 1
    finally:
        with suppress(BufferError):  # a record still held by the caller keeps it mapped
            view.release()
            mapped.close()


def _streamed(f: Any, name: str) -> Iterator[memoryview]:
    """The records of a stream (a gzip file, an object), each read into memory."""
    index = 0
    while True:
        head = f.read(12)
        if not head:
            return
        if len(head) < 12:
            raise _bad(name, index, "the file ends inside its header (truncated)")
        length, crc = _HEAD.unpack(head)
        if masked_crc(head[:8]) != crc:
            raise _bad(name, index, "its length's CRC does not match (corrupt)")
        if length > MAX_RECORD:
            raise _bad(name, index, f"a length of {length:,} bytes (corrupt)")
        data = f.read(length)
        foot = f.read(4)
        if len(data) < length or len(foot) < 4:
            raise _bad(name, index, "the file ends inside its data (truncated)")
        if masked_crc(data) != _FOOT.unpack(foot)[0]:
            raise _bad(name, index, "its data's CRC does not match (corrupt)")
        yield memoryview(data)
        index += 1


def _remote(uri: str) -> Any:
    """An object's input stream (inflated where it is gzip), through pyarrow's filesystem."""
    from labelgate.io.sources import filesystem

    fs, inner = filesystem(uri)
    stream = fs.open_input_stream(inner)
    if uri.split("?", 1)[0].lower().endswith(".gz"):
        return gzip.GzipFile(fileobj=stream, mode="rb")
    return stream


def _opened(path: Path) -> IO[bytes] | gzip.GzipFile:
    """The file, inflated where it is gzip (TensorFlow's ``compression_type="GZIP"``)."""
    f = path.open("rb")
    if f.read(2) == b"\x1f\x8b":
        f.close()
        return gzip.open(path, "rb")
    f.seek(0)
    return f


def head(path: Path) -> bytes:
    """The first 12 bytes of a TFRecord file (inflated where it is gzip); ``b""`` where it
    cannot be read."""
    try:
        with _opened(path) as f:
            return f.read(12)
    except (OSError, EOFError, zlib.error):
        return b""


def _bad(name: str, index: int, what: str) -> InputError:
    return InputError(f"unreadable TFRecord shard: record {index}: {what}", path=name)
