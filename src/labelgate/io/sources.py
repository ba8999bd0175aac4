"""Turning the paths a user gave into an ordered list of readable input files."""

from __future__ import annotations

import functools
import glob
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from labelgate.errors import InputError, one_line
from labelgate.io.uri import display_uri

__all__ = ["DELIMITED", "KINDS", "InputFile", "held", "resolve_inputs", "typed"]

KINDS = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".csv": "csv",
    ".tsv": "tsv",  # CSV delimited by tabs
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
}
DELIMITED = {"csv": ",", "tsv": "\t"}  # kind -> delimiter of the text tables
_GLOB_CHARS = set("*?[")


@dataclass(frozen=True, slots=True)
class InputFile:
    """One file of the logical dataset.

    Attributes:
        path: the path as found (a directory's files are listed below it).
        kind: ``"parquet"``, ``"csv"``, ``"tsv"``, ``"jsonl"``, or ``"memory"`` for a table held in memory.
        size: bytes on disk (in memory: the table's buffers).
        location: the URI of a file on an object store.
        table: the Arrow table, for a table held in memory (by reference: never copied).
    """

    path: str
    kind: str
    size: int
    location: str | None = None
    table: Any = field(default=None, compare=False, repr=False)

    @property
    def uri(self) -> bool:
        """Whether the file lives on a filesystem named by a URI (``s3://``, ``gs://``...)."""
        return self.location is not None

    def open(self) -> Any:
        """What pyarrow's readers take: the local path, or a random-access file opened through
        pyarrow's filesystem for the URI (credentials from the usual environment)."""
        if self.location is None:
            return self.path
        fs, inner = filesystem(self.location)
        return fs.open_input_file(inner)

    def digest(self) -> str:
        """A content hash: SHA-256 of the Parquet footer and size (which pin every page's
        location and statistics), or of the whole file for text formats; for an in-memory
        table, of its schema and row count (its data is not hashed)."""
        whole = self.kind not in ("memory", "parquet")
        h = _sha256(self.size if whole else 0)
        if self.kind == "memory":
            table = self.table
            h.update(table.schema.to_string().encode())
            h.update(table.num_rows.to_bytes(8, "little"))
            return "sha256:" + str(h.hexdigest())
        with Path(self.path).open("rb") if self.location is None else self.open() as f:
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
        return "sha256:" + str(h.hexdigest())


def _sha256(size: int) -> Any:
    """A SHA-256 for ``size`` bytes: the interpreter's own below a megabyte (a footer, a small
    file), OpenSSL's past it (``hashlib``'s first import loads libcrypto, about 30 ms of a start
    that reads three rows). The two give the same digest."""
    if size < 1 << 20:
        own = _own_sha256()
        if own is not None:
            return own()
    import hashlib

    return hashlib.sha256()


@functools.cache
def _own_sha256() -> Any:
    """The interpreter's own SHA-256 constructor, looked up once: a module that is missing
    (``_sha2`` before CPython 3.12) is searched for on every path entry each time it is asked."""
    import importlib

    for name in ("_sha2", "_sha256"):  # CPython 3.12+, 3.11
        try:
            return importlib.import_module(name).sha256
        except (ImportError, AttributeError):
            continue
    return None


def _kind(path: Path) -> str | None:
    return KINDS.get(path.suffix.lower())


def typed(files: list[InputFile]) -> bool:
    """Whether every file stores its columns' types: CSV (and TSV) holds text, whatever a
    column is."""
    return all(f.kind not in DELIMITED for f in files)


def held(table: Any, given_as: str) -> InputFile:
    """An Arrow table held in this process, as an input (read by reference, no copy); it lives
    as long as the caller holds it, registered nowhere."""
    return InputFile(
        path=f"{given_as} (in memory)", kind="memory", size=int(table.nbytes), table=table
    )


def resolve_inputs(paths: Sequence[str | InputFile]) -> list[InputFile]:
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
        if isinstance(raw, InputFile):  # a table held in memory
            files.append(raw)
            continue
        if is_uri(raw):
            files.extend(_remote(raw))
            continue
        p = Path(raw)
        if p.is_dir():
            found = sorted(
                str(f)
                for f in p.rglob("*")
                if f.is_file() and _kind(f) and not f.name.startswith(".")
            )
            if not found:
                raise InputError("directory holds no .parquet, .csv, .tsv or .jsonl file", path=raw)
        elif p.is_file():
            found = [raw]
        elif _GLOB_CHARS & set(raw):
            # glob.glob, not Path.glob: the pattern may be absolute.
            found = sorted(f for f in glob.glob(raw, recursive=True) if Path(f).is_file())  # noqa: PTH207
            if not found:
                raise InputError("no file matches this pattern", path=raw)
        elif p.exists():
            raise InputError("not a regular file (a device, a FIFO or a socket)", path=raw)
        elif p.is_symlink():
            raise InputError("a link to nothing (its target does not exist)", path=raw)
        else:
            raise InputError("no such file or directory", path=raw)
        for f in found:
            kind = _kind(Path(f))
            if kind is None:
                contract = Path(f).suffix.lower() in (".yaml", ".yml")
                raise InputError(
                    "unknown format: use a .parquet, .csv, .tsv or .jsonl file"
                    + ("; a contract is given with --schema" if contract else ""),
                    path=f,
                )
            files.append(InputFile(path=f, kind=kind, size=Path(f).stat().st_size))
    return files


def is_uri(path: str) -> bool:
    """``s3://bucket/key`` and the like (``file://`` included); not a Windows drive letter."""
    scheme, sep, _ = path.partition("://")
    return bool(sep) and len(scheme) > 1


def shown(uri: str) -> str:
    """A URI as reports and messages show it: without its user-info (``KEY:SECRET@``) or its
    query string, which may hold an endpoint or even keys (``?access_key=...``)."""
    return display_uri(uri)


def filesystem(uri: str) -> tuple[Any, str]:
    """pyarrow's filesystem for a URI and the path inside it.

    Raises:
        InputError: the URI's filesystem is unknown or cannot be reached.
    """
    import pyarrow as pa
    import pyarrow.fs as pafs

    try:
        fs, inner = pafs.FileSystem.from_uri(uri)
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise InputError(f"cannot open this location ({one_line(exc)})", path=shown(uri)) from None
    return fs, str(inner)


def _remote(uri: str) -> list[InputFile]:
    """The files at a URI: one file, or every supported file below a prefix, in sorted order."""
    import pyarrow as pa
    import pyarrow.fs as pafs

    fs, inner = filesystem(uri)
    scheme = uri.partition("://")[0]
    query = uri.partition("?")[2]
    suffix = f"?{query}" if query else ""
    try:
        info = fs.get_file_info(inner)
        if info.type == pafs.FileType.Directory:
            listed = fs.get_file_info(pafs.FileSelector(inner, recursive=True))
            found = sorted(
                (
                    i
                    for i in listed
                    if i.type == pafs.FileType.File and not i.base_name.startswith(".")
                ),
                key=lambda i: i.path,
            )
            found = [i for i in found if _kind(Path(i.base_name))]
            if not found:
                raise InputError("holds no .parquet, .csv or .jsonl file", path=shown(uri))
        elif info.type == pafs.FileType.File:
            found = [info]
        else:
            raise InputError("no such file or prefix", path=shown(uri))
    except (pa.ArrowException, OSError) as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(f"cannot list ({one_line(exc)})", path=shown(uri)) from None
    out = []
    for i in found:
        kind = _kind(Path(i.base_name))
        if kind is None:
            raise InputError("unknown format: use a .parquet, .csv or .jsonl file", path=shown(uri))
        full = f"{scheme}://{i.path}"
        if kind != "parquet":
            raise InputError("only Parquet is read through a URI", path=full)
        out.append(InputFile(path=shown(full), kind=kind, size=int(i.size), location=full + suffix))
    return out
