"""MosaicML Streaming's MDS datasets: ``index.json`` and its shards, plain or compressed.

Read without ``streaming`` (which imports torchvision and pins numpy below 2.2): each shard is a
``uint32`` sample count, ``uint32`` offsets, the writer's config as JSON, then the samples
(``streaming/base/format/mds/writer.py`` ``encode_joint_shard``); a sample is a ``uint32`` size
for each variable-size column, then every column's bytes, columns sorted by name
(``writer.py`` ``encode_sample``; ``reader.py`` ``decode_sample``). The label column's offset in a
sample is the fixed sizes before it plus the sizes the sample's own head gives, so only the label's
bytes of each sample are read. Rows: id ``shard:index``, source the shard, the row's position the
global sample index (shards in the index's order, as ``StreamingDataset`` numbers them).
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from labelgate.errors import InputError, one_line
from labelgate.io.bounded import load_json
from labelgate.readers.shards.frame import (
    IndexedReader,
    Shard,
    choose_field,
    count,
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
    import numpy as np
    import numpy.typing as npt

    from labelgate.core.annotations import AnnotationFacts
    from labelgate.readers.base import ReadOptions
    from labelgate.readers.common.sink import RowSink

__all__ = ["MdsReader", "read_mds"]

# The integer encodings (encodings.py: Int stores int64; the Scalar subclasses their numpy type).
_INTEGERS = {
    "int": "<i8",
    "int8": "i1",
    "int16": "<i2",
    "int32": "<i4",
    "int64": "<i8",
    "uint8": "u1",
    "uint16": "<u2",
    "uint32": "<u4",
    "uint64": "<u8",
}
_LAYOUT = ("column_names", "column_encodings", "column_sizes")


def _layout(config: dict[str, Any], where: str) -> tuple[list[str], list[str], list[int | None]]:
    """The columns, encodings and fixed sizes a shard's config gives.

    Raises:
        InputError: they are missing or of different lengths.
    """
    names, encodings, sizes = (config.get(k) for k in _LAYOUT)
    if not (
        isinstance(names, list)
        and isinstance(encodings, list)
        and isinstance(sizes, list)
        and len(names) == len(encodings) == len(sizes)
        and all(isinstance(n, str) for n in names)
        and all(isinstance(e, str) for e in encodings)
        and all(s is None or (isinstance(s, int) and s >= 0) for s in sizes)
    ):
        raise InputError(
            "an MDS shard's column_names, encodings and sizes do not match", path=where
        )
    return names, encodings, sizes


def _offsets(
    shard: Shard, sizes: list[int | None], column: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64] | None]:
    """Each sample's offset of ``column``, and its size where the column has none fixed."""
    import numpy as np

    variable = [i for i, s in enumerate(sizes) if s is None]
    n = len(shard.begins)
    at = np.full(n, 4 * len(variable) + sum(s or 0 for s in sizes[:column]), dtype=np.int64)
    for k, i in enumerate(variable):
        if i < column:
            at += shard.u32(np.full(n, 4 * k, dtype=np.int64))
    own = None
    if sizes[column] is None:
        own = shard.u32(np.full(n, 4 * variable.index(column), dtype=np.int64))
    return at, own


def _labels(shard: Shard, encoding: str, at: Any, own: Any) -> tuple[Any, Any, str]:
    """The label of each sample, which ones hold no integer, and why."""
    import numpy as np

    if encoding in _INTEGERS:
        return (
            gather(shard, at, np.dtype(_INTEGERS[encoding]).itemsize, _INTEGERS[encoding]),
            None,
            "",
        )
    # str_int: the integer as UTF-8 text (encodings.py StrInt); read sample by sample
    labels = np.zeros(len(at), dtype=np.int64)
    bad = np.zeros(len(at), dtype=bool)
    gather(shard, at + own, 0, "u1")  # bounds checked for every sample before any is read
    for i, (b, a, w) in enumerate(
        zip(shard.begins.tolist(), at.tolist(), own.tolist(), strict=True)
    ):
        text = bytes(shard.data[b + a : b + a + w])
        try:
            value = int(text.decode("ascii"))
            if not -(2**63) <= value < 2**63:
                raise ValueError(value)
            labels[i] = value
        except ValueError:
            bad[i] = True
    return labels, bad, "a str_int label that is not an int64 integer"


def read_mds(folder: Path, sink: RowSink, facts: AnnotationFacts, options: ReadOptions) -> None:
    """Every shard of ``folder/index.json`` into rows in ``sink``, each shard on its own
    (``frame.read_parts``): the index read and the label column chosen here, from the first
    shard's entry.

    Raises:
        InputError: the index or a shard cannot be read (the shard named), or no label column.
    """
    index, doc = load_index(folder, "MDS")
    if doc.get("version") != 2:
        raise InputError(
            f"MDS index version {doc.get('version')!r}; streaming reads 2", path=str(index)
        )
    found = entries(doc, "shards", index)
    shards = []
    for entry in found:  # every shard named is there, before any is read
        path, name, *_ = _where(entry, index)
        shards.append(listed(path, name, entry))
    label = None
    if found:
        names = _layout(found[0], str(shards[0].path))[0]
        label = choose_field(names, options.label_column, "MDS columns", str(shards[0].path))
    job = partial(_shard_rows, label=label or "", index=index)
    read_parts(shards, job, sink, facts, options, {"reader": "mds", "label": label})
    named = f"column {label!r}" if label else "column: none (no shard)"
    finish(facts, named, None if found else "an MDS index naming no shard")


def _where(entry: dict[str, Any], index: Path) -> tuple[Path, str, int, int, str | None]:
    """The file an index entry names, its name, samples, size as stored and compression.

    Raises:
        InputError: the entry is not an MDS shard's, or its file is missing.
    """
    if entry.get("format") != "mds":
        raise InputError(f"a shard of format {entry.get('format')!r}, not mds", path=str(index))
    codec = entry.get("compression") or None
    info = entry.get("zip_data") if codec else entry.get("raw_data")
    raw = entry.get("raw_data")
    if not isinstance(info, dict) or not isinstance(raw, dict):
        raise InputError("a shard entry has no raw_data or zip_data", path=str(index))
    path = shard_file(index.parent, info.get("basename"), index)
    name = str(info["basename"])
    if codec is not None and not isinstance(codec, str):
        raise InputError(f"shard {name!r}: compression {codec!r}", path=str(index))
    samples = count(entry, "samples", index)
    size = count(raw, "bytes", index) if codec else count(info, "bytes", index)
    return path, name, samples, size, codec


def _shard_rows(item: Listed, rows: LabelRows, *, label: str, index: Path) -> None:
    """One shard's rows: its label column gathered from every sample (runs on a worker, for a
    cluster)."""
    entry = json.loads(item.entry)
    path, name, samples, size, codec = _where(entry, index)
    shard = read_shard(path, name, samples, size, codec)
    names, encodings, sizes = _own_layout(shard, entry)
    if label not in names:
        raise InputError(f"shard {name!r} has no column {label!r}", path=str(path))
    column = names.index(label)
    encoding = encodings[column]
    if encoding not in _INTEGERS and encoding != "str_int":
        raise InputError(
            f"the label column {label!r} is encoded as {encoding!r}; labelgate reads the "
            f"integer encodings ({', '.join(_INTEGERS)}, str_int)",
            path=str(path),
        )
    at, own = _offsets(shard, sizes, column)
    labels, bad, why = _labels(shard, encoding, at, own)
    write_labels(rows, shard, labels, bad=bad, why=why)


def _own_layout(shard: Shard, entry: dict[str, Any]) -> tuple[list[str], list[str], list[Any]]:
    """The columns as the shard's own config gives them, which must be the index's."""
    try:
        config = load_json(bytes(shard.header), shard.path)
    except (ValueError, InputError) as exc:
        raise InputError(
            f"shard {shard.name!r}: its config is not JSON ({one_line(exc)})", path=shard.path
        ) from None
    if not isinstance(config, dict):
        raise InputError(f"shard {shard.name!r}: its config is not a JSON object", path=shard.path)
    own = _layout(config, shard.path)
    if own != _layout(entry, shard.path):
        raise InputError(
            f"shard {shard.name!r}: its columns differ from the ones index.json gives",
            path=shard.path,
        )
    return own


class MdsReader(IndexedReader):
    """MosaicML Streaming MDS datasets: ``index.json`` and its ``.mds`` shards."""

    name = "mds"
    title = "MosaicML Streaming MDS datasets (index.json and .mds shards)"
    suffixes = (".mds", ".json")
    signature = "an index.json of version 2 whose shards are of format mds"

    def holds(self, doc: dict[str, Any]) -> bool:
        shards = doc.get("shards")
        return (
            doc.get("version") == 2
            and isinstance(shards, list)
            and all(isinstance(s, dict) and s.get("format") == "mds" for s in shards)
        )

    read_folder = staticmethod(read_mds)
