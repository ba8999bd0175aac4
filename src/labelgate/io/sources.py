"""Turning the paths a user gave into an ordered list of readable input files."""

from __future__ import annotations

import glob
import hashlib
from dataclasses import dataclass
from pathlib import Path

from labelgate.errors import InputError

__all__ = ["KINDS", "InputFile", "resolve_inputs"]

KINDS = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".csv": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
}
_GLOB_CHARS = set("*?[")


@dataclass(frozen=True, slots=True)
class InputFile:
    """One file of the logical dataset.

    Attributes:
        path: the path as found (a directory's files are listed below it).
        kind: ``"parquet"``, ``"csv"`` or ``"jsonl"``.
        size: bytes on disk.
    """

    path: str
    kind: str
    size: int

    def digest(self) -> str:
        """A content hash: SHA-256 of the Parquet footer and size (which pin every page's
        location and statistics), or of the whole file for text formats."""
        h = hashlib.sha256()
        with Path(self.path).open("rb") as f:
            if self.kind == "parquet" and self.size >= 8:
                f.seek(-8, 2)
                tail = f.read(8)
                footer_len = int.from_bytes(tail[:4], "little")
                f.seek(max(0, self.size - 8 - footer_len))
                h.update(self.size.to_bytes(8, "little"))
                h.update(f.read(footer_len + 8))
            else:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
        return "sha256:" + h.hexdigest()


def _kind(path: Path) -> str | None:
    return KINDS.get(path.suffix.lower())


def resolve_inputs(paths: list[str]) -> list[InputFile]:
    """Expand files, directories and globs into one ordered list of input files.

    A directory contributes every supported file below it; a glob every match. Each argument's
    files are taken in sorted path order, arguments in the order given: the rows are read as one
    logical file in that order.

    Args:
        paths: what the user named.

    Returns:
        The input files, in reading order.

    Raises:
        InputError: a path does not exist, a directory or glob holds no supported file, or a file's
            format cannot be told from its extension.
    """
    files: list[InputFile] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found = sorted(
                str(f)
                for f in p.rglob("*")
                if f.is_file() and _kind(f) and not f.name.startswith(".")
            )
            if not found:
                raise InputError("directory holds no .parquet, .csv or .jsonl file", path=raw)
        elif p.is_file():
            found = [raw]
        elif _GLOB_CHARS & set(raw):
            # glob.glob, not Path.glob: the pattern may be absolute.
            found = sorted(f for f in glob.glob(raw, recursive=True) if Path(f).is_file())  # noqa: PTH207
            if not found:
                raise InputError("no file matches this pattern", path=raw)
        else:
            raise InputError("no such file or directory", path=raw)
        for f in found:
            kind = _kind(Path(f))
            if kind is None:
                raise InputError("unknown format: use a .parquet, .csv or .jsonl file", path=f)
            files.append(InputFile(path=f, kind=kind, size=Path(f).stat().st_size))
    return files
