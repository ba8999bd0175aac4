"""Inputs that are packed: compressed (gzip, zstd), zipped, or piped on standard input, written out
into a folder the caller owns, with a bound on the bytes written (docs/security.md, "Limits").

- A compressed file is decompressed with pyarrow's ``CompressedInputStream`` (gzip and zstd:
  no dependency beyond pyarrow), a bounded piece at a time; past ``MAX_UNPACKED`` bytes it is
  refused as a decompression bomb and what was written is the caller's to remove.
- A zip's members are written below the folder only: a name that is absolute or climbs out
  (``../``, a drive, a backslash) is refused (zip-slip), a link is skipped, and the bytes
  written, counted as they inflate (never the sizes the archive states), are bounded together.
- Standard input is spooled to a file with the same bound (Parquet is read by seeking), and its
  format is told by its content (``sniff``).
"""

from __future__ import annotations

import stat
from pathlib import Path, PurePosixPath
from typing import IO, TYPE_CHECKING

from labelgate.errors import InputError, one_line
from labelgate.io.files import open_regular

if TYPE_CHECKING:
    import zipfile

__all__ = ["CODECS", "MAX_UNPACKED", "decompress", "sniff", "spool", "unzip"]

MAX_UNPACKED = 4 << 30  # bytes one packed input may unpack to: a 100 MB COCO file is 2.5% of it
CODECS = {"gzip": b"\x1f\x8b", "zstd": b"\x28\xb5\x2f\xfd"}  # codec -> magic bytes
_PIECE = 1 << 20


def _bound(limit: int | None) -> int:
    return MAX_UNPACKED if limit is None else limit  # read at each call: a test may lower it


def _bomb(shown: str, limit: int) -> InputError:
    return InputError(
        f"more than {limit >> 20:,} MB once unpacked: refused, a bound against decompression "
        "bombs (docs/security.md)",
        path=shown,
    )


def _copy(source: IO[bytes], target: Path, shown: str, limit: int, used: int = 0) -> int:
    """Copy ``source`` to a new file ``target``, a piece at a time; the bytes written so far
    (``used`` before this copy) returned.

    Raises:
        InputError: more than ``limit`` bytes in all.
    """
    with target.open("xb") as out:
        while piece := source.read(_PIECE):
            used += len(piece)
            if used > limit:
                raise _bomb(shown, limit)
            out.write(piece)
    return used


def decompress(path: Path, codec: str, target: Path, shown: str, limit: int | None = None) -> None:
    """Decompress ``path`` (``codec``: ``gzip`` or ``zstd``) into the new file ``target``, at
    most ``limit`` bytes of it (default ``MAX_UNPACKED``).

    Raises:
        InputError: the file is not a regular file, empty, not of its codec, truncated, or unpacks to
            more than ``limit`` bytes.
    """
    import pyarrow as pa

    with open_regular(path, "compressed file") as raw:
        head = raw.read(4)
        if not head:  # as any empty input is said to be
            raise InputError("file is empty (0 bytes)", path=shown)
        if head[: len(CODECS[codec])] != CODECS[codec]:
            raise InputError(f"not {codec} data (its first bytes are not {codec}'s)", path=shown)
        raw.seek(0)
        try:
            with pa.CompressedInputStream(pa.PythonFile(raw, mode="r"), codec) as stream:
                _copy(stream, target, shown, _bound(limit))
        except (pa.ArrowException, OSError, ValueError) as exc:
            if isinstance(exc, InputError):
                raise
            raise InputError(f"cannot decompress {codec} ({one_line(exc)})", path=shown) from None


def _member_path(info: zipfile.ZipInfo, shown: str) -> PurePosixPath | None:
    """Where a member goes below the folder, or ``None`` for one skipped (a folder, a link,
    macOS's ``__MACOSX`` forks).

    Raises:
        InputError: the name is absolute or leads outside the folder (zip-slip).
    """
    name = info.filename
    if stat.S_ISLNK(info.external_attr >> 16) or info.is_dir():
        return None
    parts = PurePosixPath(name).parts
    if (
        name.startswith(("/", "\\"))
        or "\\" in name
        or ".." in parts
        or (parts and ":" in parts[0])
        or "\x00" in name
    ):
        raise InputError(
            f"the member {name!r} leads outside the archive (an absolute name or '..'): refused",
            path=shown,
        )
    if not parts or parts[0] == "__MACOSX":
        return None
    return PurePosixPath(*parts)


def unzip(path: Path, folder: Path, shown: str, limit: int | None = None) -> None:
    """Write the members of the zip ``path`` below ``folder`` (which exists and is empty).

    Raises:
        InputError: not a zip, a member name leading out, an encrypted member, or more than
            ``limit`` bytes in all.
    """
    import zipfile  # loaded for a zip only

    with open_regular(path, "zip archive") as raw:
        try:
            archive = zipfile.ZipFile(raw)
        except (zipfile.BadZipFile, OSError) as exc:
            raise InputError(f"not a zip archive ({one_line(exc)})", path=shown) from None
        with archive:
            used = 0
            for info in archive.infolist():
                inside = _member_path(info, shown)
                if inside is None:
                    continue
                if info.flag_bits & 0x1:
                    raise InputError(f"the member {info.filename!r} is encrypted", path=shown)
                target = folder.joinpath(*inside.parts)
                target.parent.mkdir(parents=True, exist_ok=True)
                try:
                    with archive.open(info) as member:
                        used = _copy(member, target, shown, _bound(limit), used)
                except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError) as exc:
                    if isinstance(exc, InputError):
                        raise
                    raise InputError(
                        f"cannot read the member {info.filename!r} ({one_line(exc)})", path=shown
                    ) from None


def spool(stream: IO[bytes], target: Path, shown: str = "-", limit: int | None = None) -> None:
    """Copy a stream (standard input) into the new file ``target``.

    Raises:
        InputError: more than ``limit`` bytes.
    """
    try:
        _copy(stream, target, shown, _bound(limit))
    except OSError as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(f"cannot read ({one_line(exc)})", path=shown) from None


def sniff(path: Path) -> str:
    """The suffix that names what a file holds, told by its first bytes: ``.parquet`` (its
    ``PAR1`` magic), ``.gz``, ``.zst``, ``.zip``, ``.json`` (one document), ``.jsonl`` (a JSON
    value per line), ``.xml``, ``.tsv`` (a first line with tabs and no comma), else ``.csv``.

    Raises:
        InputError: the file is empty.
    """
    with path.open("rb") as f:
        head = f.read(4)
        if not head:
            raise InputError("standard input is empty (0 bytes)", path="-")
        magic = {b"PAR1": ".parquet", b"PK\x03\x04": ".zip", CODECS["zstd"]: ".zst"}
        if head in magic:
            return magic[head]
        if head[:2] == CODECS["gzip"]:
            return ".gz"
        f.seek(0)
        first = f.readline(_PIECE).lstrip(b"\xef\xbb\xbf \t\r\n")
        while not first:
            line = f.readline(_PIECE)
            if not line:
                return ".csv"
            first = line.lstrip(b" \t\r\n")
        rest = f.read(_PIECE).strip()
    if first[:1] == b"[":
        return ".json"
    if first[:1] == b"{":
        return _json_kind(first, rest)
    if first[:1] == b"<":
        return ".xml"
    return ".tsv" if b"\t" in first and b"," not in first else ".csv"


def _json_kind(first: bytes, rest: bytes) -> str:
    """A text opening with ``{``: JSON lines when its first line is a whole value and more
    follows; one document otherwise."""
    import json

    try:
        json.loads(first)
    except ValueError:
        return ".json"  # a document spread over lines
    return ".jsonl" if rest else ".json"
