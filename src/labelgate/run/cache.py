"""``--cache DIR``: each input file's partial kept under a key of its bytes and of the run's
rules, so that a re-run reads only the files whose key is new and merges the rest.

An entry's key is a hash of: the file's content key (``labelgate.io.contentkey``: its size and
XXH3-128 of its bytes, or an object store's ETag), the contract applied and the scan's spec
(everything that can change a verdict: K, ignore_index, columns, batching, severities, the
examples kept), the file's batch alignment (``labelgate.scan.portable``), labelgate's version
and the entry format. An entry is written once its file is read, beside its final name then
renamed (``labelgate.io.atomic``), and only if the file's key did not change while it was read;
one that is too large, unreadable, of another key, or not exactly a partial of that file
(``labelgate.scan.portable.from_data``) is ignored, said in the report, and the file read again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from labelgate._version import __version__
from labelgate.errors import InputError, UsageError
from labelgate.io.atomic import write_text_atomic
from labelgate.io.bounded import MAX_ENTRIES, load_json
from labelgate.io.contentkey import content_key
from labelgate.scan.partial import Compact, Partial, merge
from labelgate.scan.plan import Piece, Spec
from labelgate.scan.portable import attach, detach, from_data, to_data

if TYPE_CHECKING:
    import pyarrow.parquet as pq

    from labelgate.inputs.dataset import Dataset
    from labelgate.readers.opened import Opened

__all__ = ["ENTRY_FORMAT", "MAX_ENTRY_BYTES", "FileCache", "for_input", "scan_cached"]

ENTRY_FORMAT = 1  # bumped whenever what an entry holds, or how a partial is made, changes
MAX_ENTRY_BYTES = 64 << 20  # an entry past this is neither written nor read


@dataclass(slots=True)
class FileCache:
    """The cache folder of one run, and what the run did with it.

    Attributes:
        folder: the folder (made if missing).
        files: each input file: its path, content key and whence its partial came
            (``"read"`` or ``"cache"``).
        ignored: entries found but not used (corrupt, of another key, inconsistent).
        unstored: partials that could not be written (the folder full or read-only).
        unused: why the run's scan used no cache (an input the pieces do not cover).
        reader: the reader that kept its files' rows in the cache (``tfrecord``: each shard's,
            ``labelgate.readers.shards.shardcache``), ``None`` where the scan keeps partials.
    """

    folder: Path
    files: list[dict[str, str]] = field(default_factory=list)
    ignored: int = 0
    unstored: int = 0
    unused: str | None = None
    reader: str | None = None

    @property
    def for_scan(self) -> bool:
        """Whether the scan keeps its files' partials here (not used, or a reader's)."""
        return self.unused is None and self.reader is None

    @classmethod
    def at(cls, folder: str) -> FileCache:
        """The cache in ``folder``, made if missing.

        Raises:
            UsageError: ``folder`` is not a folder, or cannot be made.
        """
        path = Path(folder)
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(
                f"--cache {folder!r}: cannot make that folder ({exc.strerror})"
            ) from None
        if not path.is_dir():
            raise UsageError(f"--cache {folder!r}: not a folder")
        return cls(path)

    @property
    def read(self) -> int:
        """Files read in this run."""
        return sum(f["from"] == "read" for f in self.files)

    @property
    def cached(self) -> int:
        """Files whose partial came from the cache."""
        return sum(f["from"] == "cache" for f in self.files)

    def summary(self) -> dict[str, Any]:
        """The report's ``cache`` section."""
        return {
            "folder": str(self.folder),
            "files_read": self.read,
            "files_cached": self.cached,
            "entries_ignored": self.ignored,
            "entries_not_stored": self.unstored,
            "unused": self.unused,
            "files": list(self.files),
        }

    def note(self) -> str:
        """The report's line on the cache."""
        if self.unused is not None:
            return f"cache ({self.folder}): not used: {self.unused}"
        extra = ""
        if self.ignored:
            extra += f"; {self.ignored} entries ignored (corrupt or not this file's), read again"
        if self.unstored:
            extra += f"; {self.unstored} partials could not be stored"
        files = "files" if self.reader is None else f"{self.reader} shards"
        return (
            f"cache ({self.folder}): {self.read} {files} read, {self.cached} from the cache{extra}"
        )

    def load(self, key: str, expect: dict[str, Any], rows: int, spec: Spec) -> Partial | None:
        """The detached partial stored under ``key``, or ``None`` (missing, or ignored)."""
        path = self._path(key)
        try:
            if path.stat().st_size > MAX_ENTRY_BYTES:
                self.ignored += 1
                return None
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError:
            self.ignored += 1
            return None
        try:
            entry = load_json(raw, str(path))
            if not isinstance(entry, dict) or set(entry) != {"header", "checksum", "partial"}:
                raise ValueError("not an entry")
            if entry["header"] != expect | {"key": key}:
                raise ValueError("another key")
            if entry["checksum"] != _checksum(entry["partial"]):
                raise ValueError("checksum")
            return from_data(entry["partial"], rows, int(expect["align"]), spec)
        except (ValueError, TypeError, KeyError, InputError, OverflowError, RecursionError):
            self.ignored += 1
            return None

    def store(self, key: str, header: dict[str, Any], part: Partial) -> None:
        """Keep ``part`` (detached) under ``key``; a failure to write is counted, not raised."""
        data = to_data(part)
        text = json.dumps(
            {"header": header | {"key": key}, "checksum": _checksum(data), "partial": data},
            separators=(",", ":"),
        )
        if len(text) > MAX_ENTRY_BYTES or text.count(",") >= MAX_ENTRIES:
            self.unstored += 1
            return
        path = self._path(key)
        try:
            path.parent.mkdir(exist_ok=True)
            write_text_atomic(path, text)
        except (OSError, UsageError):
            self.unstored += 1

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"


def for_input(cache: FileCache | None, opened: Opened | None) -> FileCache | None:
    """The run's cache; the reader's where it kept its files' rows there (shards), else unused
    where a reader converted the input (it read every file)."""
    if cache is None:
        return None
    if opened is not None and opened.converted:
        if opened.detected.reader.can("cache"):
            cache.reader = opened.format  # the scan reads the rows the reader assembled
        else:
            cache.unused = f"the {opened.format} input is read whole by its reader"
    return cache


def scan_cached(
    cache: FileCache,
    data: Dataset,
    pieces: list[Piece],
    spec: Spec,
    metadata: list[pq.FileMetaData],
    *,
    read: Callable[[list[Piece]], Iterator[tuple[int, Partial]]],
    compact: Compact | None = None,
    progress: Callable[[int], None] | None = None,
) -> Partial:
    """The merged partial of every piece, each file's from the cache where its key is there,
    the other files' through ``read`` (pieces -> (file index, that file's partial), in order).

    Raises:
        InputError: a file cannot be read or keyed.
    """
    size = spec.batch_size
    rules = _rules_key(data, spec)
    by_file: dict[int, list[Piece]] = {}
    for p in pieces:
        by_file.setdefault(p.file_index, []).append(p)
    parts: dict[int, Partial] = {}
    headers: dict[int, dict[str, Any]] = {}
    done_rows = 0
    for i, f in enumerate(data.files):
        mine = by_file.get(i)
        if not mine:  # no row group: nothing to scan or keep
            continue
        first, rows = mine[0].first_row, sum(p.rows for p in mine)
        headers[i] = {
            "format": ENTRY_FORMAT,
            "labelgate": __version__,
            "content": content_key(f),
            "rules": rules,
            "align": first % size,
        }
        got = cache.load(_entry_key(headers[i]), headers[i], rows, spec)
        cache.files.append({"path": f.path, "content": headers[i]["content"], "from": "read"})
        if got is not None:
            parts[i] = attach(got, first, i, size)
            cache.files[-1]["from"] = "cache"
            done_rows += rows
    if progress is not None and done_rows:
        progress(done_rows)
    todo = [p for p in pieces if p.file_index not in parts]
    for i, part in read(todo):
        parts[i] = part
        done_rows += part.rows
        if progress is not None:
            progress(done_rows)
        header = headers[i]
        local = detach(part, by_file[i][0].first_row, i, size)
        if local is not None and content_key(data.files[i]) == header["content"]:
            cache.store(_entry_key(header), header, local)  # the bytes read are the bytes keyed
    if not parts:
        return Partial(0, limit=spec.limit)
    return merge((parts[i] for i in sorted(parts)), compact)


def _rules_key(data: Dataset, spec: Spec) -> str:
    """A hash of everything besides the bytes that can change a file's partial or the verdict."""
    text = json.dumps(
        {"contract": data.contract.to_dict(), "spec": asdict(spec)},
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(text.encode()).hexdigest()


def _entry_key(header: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(header, sort_keys=True).encode()).hexdigest()


def _checksum(data: Any) -> str:
    text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()
