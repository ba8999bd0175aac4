"""Hugging Face datasets: ``save_to_disk`` folders and Parquet files with ``huggingface`` metadata.

The ``ClassLabel`` feature's ``names`` are the class map; read with pyarrow alone (no ``datasets``).
A ``save_to_disk`` folder's Arrow streams are copied to Parquet batch by batch; Parquet is read as
it is.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from labelgate.contract.classmap import ClassMap
from labelgate.core.annotations import AnnotationFacts
from labelgate.errors import InputError, one_line
from labelgate.io.bounded import load_json
from labelgate.io.classnames import MAX_CLASS_NAMES
from labelgate.io.files import read_small_text
from labelgate.readers.base import Claim, Read, Reader, ReadOptions
from labelgate.readers.common.sink import RowSink

__all__ = ["HfReader", "hf_features", "read_hf"]


def hf_features(path: Path) -> dict[str, Any] | None:
    """The ``features`` of a Parquet file's ``huggingface`` metadata, or ``None``."""
    import pyarrow as pa

    from labelgate.io.parquet import ParquetFile

    try:
        meta = ParquetFile(path).schema_arrow.metadata or {}
    except (pa.ArrowException, OSError):
        return None
    raw = meta.get(b"huggingface")
    if raw is None:
        return None
    try:
        doc = load_json(raw, str(path))
    except (ValueError, InputError):
        return None
    info = doc.get("info") if isinstance(doc, dict) else None  # every level type-checked
    features = info.get("features") if isinstance(info, dict) else None
    return features if isinstance(features, dict) else None


def class_label(features: dict[str, Any], origin: str) -> tuple[str, ClassMap] | None:
    """The first ``ClassLabel`` feature (or ``Sequence(ClassLabel)``): its column and names.

    Raises:
        InputError: the ClassLabel names more than ``MAX_CLASS_NAMES`` classes.
    """
    if not isinstance(features, dict):
        return None
    for column, feature in features.items():
        inner = feature.get("feature", feature) if isinstance(feature, dict) else None
        if isinstance(inner, dict) and inner.get("_type") == "ClassLabel":
            names = inner.get("names")
            if isinstance(names, list) and len(names) > MAX_CLASS_NAMES:
                raise InputError(
                    f"ClassLabel {column!r} names {len(names):,} classes, over the "
                    f"{MAX_CLASS_NAMES:,} a class map may hold",
                    path=origin,
                )
            if isinstance(names, list) and all(isinstance(n, str) for n in names):
                return column, ClassMap.from_names(names, origin=f"{origin} ClassLabel {column!r}")
    return None


def read_hf(path: Path, sink: RowSink, facts: AnnotationFacts) -> ClassMap | None:
    """The class map; a Parquet file is kept as it is, a save_to_disk folder's Arrow streams are
    written to ``sink``."""
    if path.is_file():
        features = hf_features(path) or {}
        found = class_label(features, str(path))
        facts.counts["files"] = 1
        _note(facts, found)
        sink.keep([str(path)])
        return found[1] if found else None
    info_path = path / "dataset_info.json"
    try:
        info = load_json(read_small_text(info_path, "dataset_info.json"), str(info_path))
    except (InputError, ValueError) as exc:
        raise InputError(
            f"cannot read dataset_info.json ({one_line(exc)})", path=str(path)
        ) from None
    if not isinstance(info, dict):
        raise InputError("dataset_info.json is not a JSON object", path=str(info_path))
    found = class_label(info.get("features") or {}, str(info_path))
    _note(facts, found)
    _to_parquet(sorted(path.glob("*.arrow")), sink, facts, path)
    return found[1] if found else None


def _note(facts: AnnotationFacts, found: tuple[str, ClassMap] | None) -> None:
    facts.counts["class_label_names"] = len(found[1].entries) if found else 0
    if found is None:
        facts.why += "; no ClassLabel feature, so no class names"


def _to_parquet(files: list[Path], sink: RowSink, facts: AnnotationFacts, folder: Path) -> None:
    import pyarrow as pa

    if not files:
        raise InputError("no .arrow files in this save_to_disk folder", path=str(folder))
    writer: Any = None
    counts: Counter[str] = Counter()
    try:
        for f in files:
            with pa.memory_map(str(f)) as source:
                reader = pa.ipc.open_stream(source)
                for batch in reader:
                    # Offsets checked against their buffers before any value is touched: a
                    # corrupt string offset would read past the mapped file (SIGBUS, no message).
                    batch.validate(full=True)
                    if writer is None:
                        writer = sink.batches(batch.schema)
                    writer.write_batch(batch)
                    counts["rows"] += batch.num_rows
            counts["arrow_files"] += 1
    except (pa.ArrowException, OSError) as exc:
        raise InputError(
            f"cannot read a datasets Arrow file ({one_line(exc)})", path=str(files[0])
        ) from None
    finally:
        if writer is not None:
            writer.close()
    facts.counts.update(counts)


class HfReader(Reader):
    """Hugging Face datasets: ``save_to_disk`` folders, Parquet with ``huggingface`` metadata."""

    name = "hf"
    title = "Hugging Face datasets (save_to_disk folders, Parquet with huggingface metadata)"
    suffixes = (".parquet", ".arrow")

    def detect(self, path: Path, task: str | None = None) -> Claim | None:
        if path.is_dir():
            names = {c.name for c in path.iterdir()}
            if "dataset_info.json" in names and any(n.endswith(".arrow") for n in names):
                return Claim(
                    0.95,
                    "a folder with dataset_info.json and .arrow files (datasets' save_to_disk)",
                )
            return None
        suffix = path.suffix.lower()
        if suffix in (".parquet", ".pq") and path.is_file() and hf_features(path) is not None:
            return Claim(0.95, "Parquet carrying Hugging Face 'huggingface' schema metadata")
        return None

    def read(
        self, paths: list[Path], sink: RowSink, facts: AnnotationFacts, options: ReadOptions
    ) -> Read:
        found = read_hf(paths[0], sink, facts)
        return Read(found, "the dataset's ClassLabel names" if found is not None else "")
