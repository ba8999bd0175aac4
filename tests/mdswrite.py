"""An MDS writer for tests, following mosaicml/streaming's own (commit 89e7bb9):
``streaming/base/format/mds/writer.py`` (``encode_sample`` 92-117, ``get_config`` 119-131,
``encode_joint_shard`` 133-144), ``base/writer.py`` (shard names 165-185, config 229-241, the
shard entry 424-436, ``index.json`` 271-282) and ``mds/encodings.py`` (``Int`` int64, the Scalar
types, ``StrInt``, ``Bytes``, ``Str``).

``streaming`` itself is not installed with the dev extra (it pins numpy below 2.2 and
transformers below 5, and imports torchvision, whose PyPI build does not load with the CPU torch):
tests/fixtures/mds_written/ holds shards its ``MDSWriter`` wrote, and a test holds this writer
byte-identical to them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

_FIXED = {"int": 8, **{t: np.dtype(t).itemsize for t in ("int8", "int16", "int32", "int64")}}
_FIXED |= {t: np.dtype(t).itemsize for t in ("uint8", "uint16", "uint32", "uint64")}


def encode(encoding: str, value: Any) -> bytes:
    """One column's bytes, as ``mds_encode`` writes them."""
    if encoding == "int":
        return np.int64(value).tobytes()
    if encoding in _FIXED:
        return np.dtype(encoding).type(value).tobytes()
    if encoding in ("str", "str_int"):
        return str(value).encode("utf-8")
    if encoding == "bytes":
        return bytes(value)
    raise ValueError(encoding)


def write_mds(
    out: Path,
    columns: dict[str, str],
    shards: list[list[dict[str, Any]]],
    *,
    compression: str | None = None,
    size_limit: int | None = 1 << 26,
) -> Path:
    """``shards`` (lists of samples) as MDS shards and ``index.json`` in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    names = sorted(columns)
    encodings = [columns[n] for n in names]
    sizes = [_FIXED.get(e) for e in encodings]
    config = {
        "version": 2,
        "format": "mds",
        "compression": compression,
        "hashes": [],
        "size_limit": size_limit,
        "column_names": names,
        "column_encodings": encodings,
        "column_sizes": sizes,
    }
    config_data = json.dumps(config, sort_keys=True).encode("utf-8")
    entries = []
    for number, samples in enumerate(shards):
        encoded = []
        for sample in samples:
            data = [encode(e, sample[n]) for n, e in zip(names, encodings, strict=True)]
            head = [len(d) for d, s in zip(data, sizes, strict=True) if s is None]
            encoded.append(np.array(head, np.uint32).tobytes() + b"".join(data))
        offsets = np.array([0] + [len(s) for s in encoded]).cumsum().astype(np.uint32)
        offsets += 4 + len(offsets.tobytes()) + len(config_data)
        raw = (
            np.uint32(len(samples)).tobytes() + offsets.tobytes() + config_data + b"".join(encoded)
        )
        raw_name = f"shard.{number:05}.mds"
        raw_info = {"basename": raw_name, "bytes": len(raw), "hashes": {}}
        zip_info = None
        if compression:
            import pyarrow as pa

            packed = pa.compress(raw, codec=compression.partition(":")[0], asbytes=True)
            zip_name = f"{raw_name}.{compression.partition(':')[0]}"
            zip_info = {"basename": zip_name, "bytes": len(packed), "hashes": {}}
            (out / zip_name).write_bytes(packed)
        else:
            (out / raw_name).write_bytes(raw)
        entries.append(
            {"samples": len(samples), "raw_data": raw_info, "zip_data": zip_info} | config
        )
    with (out / "index.json").open("w") as f:
        json.dump({"version": 2, "shards": entries}, f, sort_keys=True)
    return out


def plain_samples() -> list[dict[str, Any]]:
    """12 samples: a caption and an image (variable size, before the label), an int label; K=4,
    sample 6 labelled 4 (the planted fault)."""
    return [
        {
            "caption": f"photo number {i}" + "!" * (i % 3),
            "image": bytes(range(i % 7 + 3)) * 5,
            "label": 4 if i == 6 else i % 4,
        }
        for i in range(12)
    ]


def zstd_samples() -> list[dict[str, Any]]:
    """8 samples of an int16 ``cls`` and a fixed-size image; the second shard (samples 4-7)
    1-based: 1..4 with 0 unused, K=4."""
    return [
        {"cls": i % 4 + (1 if i >= 4 else 0), "image": bytes([i]) * 16, "path": f"img/{i}.png"}
        for i in range(8)
    ]


PLAIN_COLUMNS = {"caption": "str", "image": "bytes", "label": "int"}
ZSTD_COLUMNS = {"cls": "int16", "image": "bytes", "path": "str"}
