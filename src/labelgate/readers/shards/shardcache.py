"""``--cache DIR`` for shards: each shard's part (``parts``) kept under a key of its bytes and of
what else the part depends on, so that a re-run reads only the shards whose bytes are new.

A key hashes the shard's content key (``labelgate.io.contentkey``: its size and XXH3-128 of its
bytes, or an object's ETag), the reader's rules (format, label field, examples kept), what the
dataset's index says of the shard where one lists it (MDS, LitData), labelgate's version and the
entry format: a shard rewritten under the same name is read again, one renamed is
not. An entry is an Arrow IPC file of the shard's rows, its findings as JSON in the schema's
metadata, written beside its final name then renamed (``labelgate.io.atomic``), and only if the
shard's key did not change while it was read. One that is too large, unreadable, of another key
or schema, or not consistent (rows rejected that are not null) is ignored, counted, and the
shard read again.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from labelgate._version import __version__
from labelgate.core.annotations import REJECTED, Hits
from labelgate.core.codes import READER_CODES, Code
from labelgate.core.report import Example
from labelgate.errors import InputError, UsageError
from labelgate.io.atomic import atomic_path
from labelgate.io.contentkey import content_key
from labelgate.io.sources import InputFile
from labelgate.readers.shards.listing import Shard
from labelgate.readers.shards.rows import Part

if TYPE_CHECKING:
    import pyarrow as pa

    from labelgate.readers.base import ShardCache

__all__ = ["ENTRY_FORMAT", "MAX_ENTRY_BYTES", "Key", "keyed", "load", "store"]

ENTRY_FORMAT = 1  # bumped whenever what an entry holds, or how a part is made, changes
MAX_ENTRY_BYTES = 256 << 20  # an entry past this is neither written nor read
_META = b"labelgate.shard"


@dataclass(frozen=True, slots=True)
class Key:
    """A shard's entry: its content key, the header its entry must carry, and its name."""

    content: str
    header: str
    name: str


def _file(shard: Shard) -> InputFile:
    if shard.uri is not None:
        return InputFile(shard.name, "shard", shard.size, location=shard.uri)
    return InputFile(str(shard.path), "shard", shard.path.stat().st_size)


def keyed(shard: Shard, rules: dict[str, Any]) -> Key:
    """The shard's key under ``rules``.

    Raises:
        InputError: the shard cannot be read to key it.
    """
    try:
        content = content_key(_file(shard))
    except OSError as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(
            f"cannot read it to key the cache ({exc.strerror})", path=shard.name
        ) from None
    doc: dict[str, Any] = {
        "format": ENTRY_FORMAT,
        "labelgate": __version__,
        "content": content,
        "rules": rules,
    }
    if shard.entry:  # an index's word on the shard (MDS, LitData) keys its part as well
        doc["entry"] = shard.entry
    header = json.dumps(doc, sort_keys=True, default=str)
    return Key(content, header, hashlib.sha256(header.encode()).hexdigest())


def load(cache: ShardCache, key: Key, schema: pa.Schema) -> Part | None:
    """The part kept under ``key``, or ``None`` (missing, or ignored and counted)."""
    import pyarrow as pa

    path = cache.folder / key.name[:2] / f"{key.name}.arrow"
    try:
        if path.stat().st_size > MAX_ENTRY_BYTES:
            cache.ignored += 1
            return None
        with pa.memory_map(str(path)) as source:
            table = pa.ipc.open_file(source).read_all()
    except FileNotFoundError:
        return None
    except (OSError, pa.ArrowException):
        cache.ignored += 1
        return None
    try:
        meta = (table.schema.metadata or {}).get(_META)
        if meta is None or not table.schema.remove_metadata().equals(schema):
            raise ValueError("another schema")
        doc = json.loads(meta)
        if doc["header"] != key.header:
            raise ValueError("another key")
        table.validate(full=True)
        part = _part(table.replace_schema_metadata(None), doc)
    except (ValueError, TypeError, KeyError, AttributeError, pa.ArrowException, RecursionError):
        cache.ignored += 1
        return None
    return part


def _part(table: pa.Table, doc: dict[str, Any]) -> Part:
    """A part from an entry's rows and findings, checked to be a part of those rows."""
    n = table.num_rows
    rejected = {int(row): str(code) for row, code in doc["rejected"]}
    labels = table.column(1)
    if any(not 0 <= row < n or labels[row].is_valid for row in rejected):
        raise ValueError("a rejected row that is not a null row of the part")
    counts = {str(k): int(v) for k, v in doc["counts"].items()}
    if counts.get(REJECTED, 0) != len(rejected):
        raise ValueError("rejected rows miscounted")
    hits: dict[Code, Hits] = {}
    for code, h in doc["hits"].items():
        if code not in READER_CODES:
            raise ValueError("not a reader's code")
        examples = [Example(row=int(r), id=i, source=s, value=v) for r, i, s, v in h["examples"]]
        if any(not 0 <= e.row < n for e in examples):
            raise ValueError("an example outside the part")
        hits[code] = Hits(
            int(h["count"]), examples, str(h["message"]), str(h["fix"]), str(h["unit"])
        )
    seen: dict[Code, list[tuple[Any, Any]]] = {
        c: [(i, s) for i, s in records] for c, records in doc["seen"].items() if c in READER_CODES
    }
    return Part(table, rejected, hits, seen, counts)


def store(cache: ShardCache, key: Key, shard: Shard, part: Part) -> None:
    """Keep ``part`` under ``key`` where the shard's bytes are still the bytes keyed; a failure
    to write is counted, not raised."""
    import pyarrow as pa

    try:
        if content_key(_file(shard)) != key.content:
            return  # rewritten while it was read: its part is of neither version
    except OSError:
        return
    doc = {
        "header": key.header,
        "rejected": sorted(part.rejected.items()),
        "counts": part.counts,
        "hits": {
            code: {
                "count": h.count,
                "message": h.message,
                "fix": h.fix,
                "unit": h.unit,
                "examples": [[e.row, e.id, e.source, e.value] for e in h.examples],
            }
            for code, h in part.hits.items()
        },
        "seen": {code: [list(r) for r in records] for code, records in part.seen.items()},
    }
    table = part.table.replace_schema_metadata({_META: json.dumps(doc, default=str).encode()})
    if table.nbytes > MAX_ENTRY_BYTES:
        cache.unstored += 1
        return
    path = cache.folder / key.name[:2] / f"{key.name}.arrow"
    try:
        path.parent.mkdir(exist_ok=True)
        with (
            atomic_path(path) as staged,
            pa.OSFile(str(staged), "wb") as out,
            pa.ipc.new_file(out, table.schema) as writer,
        ):
            writer.write_table(table)
    except (OSError, UsageError, pa.ArrowException):
        cache.unstored += 1
