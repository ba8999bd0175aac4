"""Packed inputs made readable before detection: a compressed file decompressed, a zip's members
written out, standard input spooled, each into a folder the run owns (``readers/manifest.py``
says which paths are packed; ``io/packed.py`` unpacks them, bounded). What the readers then read
is named in the report as the user gave it."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from labelgate.errors import InputError, UsageError
from labelgate.io.packed import decompress, sniff, spool, unzip
from labelgate.readers.manifest import COMPRESSED, STDIN, packing

__all__ = ["Unpacked", "unpack"]


@dataclass(frozen=True, slots=True)
class Unpacked:
    """The paths to read, and the inputs they stand for.

    Attributes:
        paths: what the readers read: the user's paths, or what was unpacked for them.
        given: each path unpacked (a file, or a zip's folder) -> the input as the user gave it.
        notes: what was unpacked, for the report.
    """

    paths: list[Any]
    given: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def shown(self, text: str) -> str:
        """``text`` with every path unpacked named as the user's input (a file of a zip as
        ``export.zip/annotations.xml``, the path ``zipfile.Path`` gives it)."""
        for written in sorted(self.given, key=len, reverse=True):
            text = text.replace(written, self.given[written])
        return text

    def error(self, exc: InputError) -> InputError:
        """``exc`` naming the user's input, not what was unpacked for it."""
        if not self.given:
            return exc
        return type(exc)(self.shown(exc.reason), path=self.shown(exc.path))


def unpack(
    paths: Sequence[Any], folder: Callable[[], Path], stdin: IO[bytes] | None = None
) -> Unpacked:
    """Unpack the packed paths among ``paths`` (other items, a table in memory included, are
    kept as they are); ``folder`` makes the folder they are written into, asked once at most.

    Raises:
        UsageError: ``-`` given twice.
        InputError: a packed input cannot be unpacked, or unpacks past the bound.
    """
    kinds = [packing(p) if isinstance(p, str) else None for p in paths]
    if not any(kinds):
        return Unpacked(list(paths))
    if kinds.count("stdin") > 1:
        raise UsageError("standard input (-) can be read once: give it once")
    root = folder()
    out: list[Any] = []
    given: dict[str, str] = {}
    notes: list[str] = []
    for index, (raw, kind) in enumerate(zip(paths, kinds, strict=True)):
        if kind is None:
            out.append(raw)
            continue
        place = root / str(index)
        place.mkdir()
        if kind == "stdin":
            written, note = _stdin(place, stdin)
        elif kind == "zip":
            written, note = _zip(Path(raw), place, raw)
        else:
            target = place / Path(raw).stem
            decompress(Path(raw), kind, target, raw)
            written, note = target, f"{raw}: decompressed ({kind}, {_size(target)})"
        out.append(str(written))
        given[str(written)] = raw
        notes.append(note)
    return Unpacked(out, given, tuple(notes))


def _stdin(place: Path, stdin: IO[bytes] | None) -> tuple[Path, str]:
    """Standard input spooled and named by what its content is; compressed: decompressed."""
    stream = stdin if stdin is not None else sys.stdin.buffer
    spooled = place / "stdin"
    spool(stream, spooled)
    suffix = sniff(spooled)
    codec = COMPRESSED.get(suffix)
    if suffix == ".zip":
        folder, _ = _zip(spooled, place / "zip", STDIN)
        return folder, "standard input: a zip archive, read as the folder of its members"
    if codec is not None:
        inner = place / "inner"
        decompress(spooled, codec, inner, STDIN)
        spooled.unlink()  # the compressed copy is not needed: the bound holds once, not twice
        suffix = sniff(inner)
        spooled = inner
        what = f"{codec}-compressed "
    else:
        what = ""
    if suffix in (".gz", ".zst", ".zip"):
        raise InputError("compressed twice: decompress it once before piping it", path=STDIN)
    named = spooled.rename(place / f"stdin{suffix}")
    told = _NAMES.get(suffix, suffix.lstrip(".").upper())
    return named, f"standard input: {what}{told} ({_size(named)}), told by its content"


def _zip(path: Path, place: Path, shown: str) -> tuple[Path, str]:
    """A zip's members written out; the folder to read (the one folder it holds, if only one)."""
    folder = place / "members"
    folder.mkdir(parents=True)
    unzip(path, folder, shown)
    inside = list(folder.iterdir())
    if not inside:
        raise InputError("the zip archive holds no file", path=shown)
    files = sum(1 for f in folder.rglob("*") if f.is_file())
    if len(inside) == 1 and inside[0].is_dir():
        folder = inside[0]
    return folder, f"{shown}: a zip archive of {files} file(s), read as the folder they make"


_NAMES = {".parquet": "Parquet", ".json": "JSON", ".jsonl": "JSON lines", ".xml": "XML"}


def _size(path: Path) -> str:
    n = path.stat().st_size
    return f"{n:,} bytes" if n < 1 << 20 else f"{n / (1 << 20):,.1f} MB"
