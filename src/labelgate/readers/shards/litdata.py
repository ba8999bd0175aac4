"""LitData's optimized datasets (``litdata.optimize``): ``index.json`` and its ``chunk-*.bin``.

Read without ``litdata`` (whose reader imports torch): a chunk is a ``uint32`` item count and
``uint32`` offsets, then the items (``litdata/streaming/writer.py`` ``_create_chunk``); an item is a
``uint32`` size for every leaf of the flattened sample, then the leaves' bytes
(``item_loader.py`` ``PyTreeLoader.encode_data``), in the order of the ``data_spec`` tree the
index keeps. Leaves are named by their path in that tree (``label``, ``meta.cls``, ``pair.0``); the
label is the leaf ``--label-column`` names, else the one named ``label``, ``cls`` or ``class``,
and must be an ``int`` (``serializers.py`` ``IntegerSerializer``: an int64). Chunks compressed
whole (``.zstd.bin``) are decompressed; batch-framed zstd chunks (litdata 0.2.76
``framed_zstd.py``) frame by frame. Rows: id ``chunk:index``, source the chunk.
"""

from __future__ import annotations

import json
import struct
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from labelgate.errors import InputError, one_line
from labelgate.io.bounded import load_json
from labelgate.readers.shards.frame import (
    MAX_SHARD,
    IndexedReader,
    Shard,
    choose_field,
    count,
    decompress,
    entries,
    finish,
    gather,
    listed,
    load_index,
    read_parts,
    read_shard,
    shard_file,
    write_labels,
)
from labelgate.readers.shards.listing import Shard as Listed
from labelgate.readers.shards.rows import LabelRows

if TYPE_CHECKING:
    from labelgate.core.annotations import AnnotationFacts
    from labelgate.readers.base import ReadOptions
    from labelgate.readers.common.sink import RowSink

__all__ = ["LitDataReader", "leaf_names", "read_litdata"]

_FOOTER = b"LDARW01\0"  # 0.2.76 item_loader.py: append_arrow_row_footer, then "<I" and this
_FRAMED = b"LDFZ01\0\0"  # framed_zstd.py: _FRAMED_MAGIC, then "<8sHHIII", then "<IIQII" per frame
_PREFIX = struct.Struct("<8sHHIII")
_FRAME = struct.Struct("<IIQII")


def leaf_names(spec: Any, origin: str) -> list[str]:
    """The path of every leaf of a ``data_spec`` tree, in flattening order.

    Raises:
        InputError: the spec is not the tree LitData writes.
    """
    names: list[str] = []

    def walk(node: Any, path: str, depth: int) -> None:
        if not isinstance(node, dict) or depth > 32:
            raise InputError("the index's data_spec is not a tree of nodes", path=origin)
        children = node.get("children_spec") or []
        if node.get("type") is None and not children:
            names.append(path or "0")
            return
        keys: Any = None
        if node.get("type") == "builtins.dict" and isinstance(node.get("context"), str):
            keys = load_json(node["context"], origin)
        if not isinstance(keys, list) or len(keys) != len(children):
            keys = list(range(len(children)))
        for key, child in zip(keys, children, strict=True):
            walk(child, f"{path}.{key}" if path else str(key), depth + 1)

    try:
        doc = load_json(spec, origin) if isinstance(spec, str) else None
    except ValueError:
        doc = None
    if not isinstance(doc, list) or len(doc) != 2:
        raise InputError("the index's data_spec is not LitData's [version, tree]", path=origin)
    walk(doc[1], "", 0)
    return names


def _framed(raw: bytes, name: str, samples: int, path: str) -> Shard:
    """A batch-framed chunk: its zstd frames decompressed into the items' bytes."""
    import numpy as np

    if len(raw) < _PREFIX.size:
        raise InputError(f"chunk {name!r} is shorter than its header", path=path)
    _, _, _, n, _, frames = _PREFIX.unpack_from(raw)
    table = _PREFIX.size + 4 * (n + 1)
    if n != samples or len(raw) < table + _FRAME.size * frames:
        raise InputError(f"chunk {name!r} holds {n:,} items; the index says {samples:,}", path=path)
    offsets = np.frombuffer(raw, "<u4", n + 1, _PREFIX.size).astype(np.int64)
    parts = []
    for f in range(frames):
        _, _, at, length, size = _FRAME.unpack_from(raw, table + _FRAME.size * f)
        if at + length > len(raw):
            raise InputError(f"chunk {name!r}: frame {f} runs past the file", path=path)
        parts.append(decompress("zstd", raw[at : at + length], size, path))
    data = np.frombuffer(b"".join(parts), dtype=np.uint8)
    if n and ((np.diff(offsets) < 0).any() or offsets[0] < 0 or offsets[-1] > len(data)):
        raise InputError(f"chunk {name!r}: its offsets are not inside its items", path=path)
    return Shard.spans(name, data, offsets, path)


def _footer(chunk: Shard, label: str) -> Any:
    """The labels of a chunk that carries its rows as a trailing Arrow IPC file (litdata 0.2.76
    writes one for samples of Arrow-safe leaves: the items may then be empty), or ``None``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    data = chunk.data
    if len(data) < 12 or bytes(data[-8:]) != _FOOTER:
        return None
    size = int(data[-12:-8].view("<u4")[0])
    if size > len(data) - 12:
        raise InputError(f"chunk {chunk.name!r}: its Arrow rows run past the file", path=chunk.path)
    first, *rest = label.split(".")
    try:
        reader = pa.ipc.open_file(pa.py_buffer(data[len(data) - 12 - size : len(data) - 12]))
        parts = []
        for i in range(reader.num_record_batches):
            column = reader.get_batch(i).column(first)  # the other columns' buffers not touched
            for field in rest:
                column = pc.struct_field(column, field)
            parts.append(column)
        labels = pa.chunked_array(parts, type=parts[0].type if parts else pa.int64())
    except (pa.ArrowException, KeyError) as exc:
        raise InputError(
            f"chunk {chunk.name!r}: its Arrow rows hold no label {label!r} ({one_line(exc)})",
            path=chunk.path,
        ) from None
    if (
        not pa.types.is_integer(labels.type)
        or labels.null_count
        or len(labels) != len(chunk.begins)
    ):
        raise InputError(
            f"chunk {chunk.name!r}: its Arrow label column is {labels.type}, with "
            f"{labels.null_count} nulls, for {len(labels)} of {len(chunk.begins)} items",
            path=chunk.path,
        )
    return labels.to_numpy()


def _chunk(path: Path, entry: dict[str, Any], config: dict[str, Any], index: Path) -> Shard:
    name = str(entry["filename"])
    samples = count(entry, "chunk_size", index)
    codec, level = config.get("compression"), config.get("compression_level") or "chunk"
    if codec and _ends_with(path, _FOOTER):  # Arrow rows: never wrapped again (writer.py)
        codec = None
    # the chunk's size as written: the file's, but for a chunk compressed whole (writer.py:272,
    # taken before write_chunk_to_file compresses it at :409)
    size = count(entry, "chunk_bytes", index) if "chunk_bytes" in entry else None
    if not codec:
        return read_shard(path, name, samples, size, None)
    if not isinstance(codec, str) or codec.partition(":")[0] != "zstd":
        raise InputError(f"chunks compressed with {codec!r}; LitData writes zstd", path=str(index))
    if level == "batch":
        if path.stat().st_size >= MAX_SHARD:
            raise InputError(f"chunk {name!r} is over 4 GiB", path=str(path))
        raw = path.read_bytes()
        if size is not None and len(raw) != size:
            raise InputError(
                f"shard {name!r} is {len(raw):,} bytes; the index says {size:,} (truncated?)",
                path=str(path),
            )
        if raw[:8] != _FRAMED:
            raise InputError(f"chunk {name!r} lacks the framed-zstd header", path=str(path))
        return _framed(raw, name, samples, str(path))
    if level != "chunk":
        raise InputError(
            f"chunks compressed per {level!r}; labelgate reads whole-chunk and batch-framed zstd",
            path=str(index),
        )
    return read_shard(path, name, samples, size, codec)


def _ends_with(path: Path, magic: bytes) -> bool:
    try:
        with path.open("rb") as f:
            f.seek(max(0, path.stat().st_size - len(magic)))
            return f.read() == magic
    except OSError:
        return False


def read_litdata(folder: Path, sink: RowSink, facts: AnnotationFacts, options: ReadOptions) -> None:
    """Every chunk of ``folder/index.json`` into rows in ``sink``.

    Raises:
        InputError: the index or a chunk cannot be read (the chunk named), or no label leaf.
    """
    index, doc = load_index(folder, "LitData")
    config = doc.get("config")
    if not isinstance(config, dict):
        raise InputError("the LitData index.json has no config", path=str(index))
    for key, expected in (("item_loader", "PyTreeLoader"), ("encryption", None)):
        if config.get(key) != expected:
            raise InputError(
                f"a LitData dataset with {key} {config.get(key)!r}; labelgate reads "
                "unencrypted PyTreeLoader chunks (optimize's default)",
                path=str(index),
            )
    formats = config.get("data_format")
    names = leaf_names(config.get("data_spec"), str(index))
    if not isinstance(formats, list) or len(formats) != len(names):
        raise InputError("the index's data_format does not match its data_spec", path=str(index))
    label = choose_field(names, options.label_column, "LitData sample", str(index))
    leaf = names.index(label)
    if formats[leaf] != "int":
        raise InputError(
            f"the label leaf {label!r} is serialized as {formats[leaf]!r}; labelgate reads int",
            path=str(index),
        )
    chunks = entries(doc, "chunks", index)
    shards = [
        listed(shard_file(folder, e.get("filename"), index), str(e["filename"]), e) for e in chunks
    ]
    job = partial(
        _chunk_rows, config=config, index=index, label=label, leaf=leaf, leaves=len(names)
    )
    read_parts(
        shards, job, sink, facts, options, {"reader": "litdata", "label": label, "config": config}
    )
    finish(facts, f"leaf {label!r}", None if chunks else "a LitData index naming no chunk")


def _chunk_rows(
    item: Listed,
    rows: LabelRows,
    *,
    config: dict[str, Any],
    index: Path,
    label: str,
    leaf: int,
    leaves: int,
) -> None:
    """One chunk's rows: its label leaf gathered from every item, or read from the chunk's
    Arrow rows (runs on a worker, for a cluster)."""
    import numpy as np

    chunk = _chunk(item.path, json.loads(item.entry), config, index)
    footer = _footer(chunk, label)
    if footer is not None:
        write_labels(rows, chunk, footer)
        return
    n = len(chunk.begins)
    at = np.full(n, 4 * leaves, dtype=np.int64)
    for k in range(leaf):  # every leaf's size is in the item's head (encode_data)
        at += chunk.u32(np.full(n, 4 * k, dtype=np.int64))
    if (chunk.u32(np.full(n, 4 * leaf, dtype=np.int64)) != 8).any():
        raise InputError(f"chunk {chunk.name!r}: a label leaf is not 8 bytes", path=chunk.path)
    write_labels(rows, chunk, gather(chunk, at, 8, "<i8"))


class LitDataReader(IndexedReader):
    """LitData optimized datasets: ``index.json`` and its ``chunk-*.bin`` files."""

    name = "litdata"
    title = "LitData optimized datasets (index.json and chunk-*.bin)"
    suffixes = (".bin", ".json")
    signature = "an index.json with chunks and a config of data_format and data_spec"

    def holds(self, doc: dict[str, Any]) -> bool:
        config = doc.get("config")
        return (
            isinstance(doc.get("chunks"), list)
            and isinstance(config, dict)
            and "data_format" in config
            and "data_spec" in config
        )

    read_folder = staticmethod(read_litdata)
