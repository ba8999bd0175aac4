"""Annotation formats: COCO, YOLO, Pascal VOC, ImageFolder, Hugging Face datasets and segmentation
masks, read natively.

Each reader turns its format into the rows every check reads (label, id, source, and where it
applies the class name), written to a temporary Parquet file as they are read (a bounded number of
rows held at once), and gives the format's own class map and an
``labelgate.annotations.AnnotationFacts``: what was read and the records that break the
format's rules (boxes, class tables, malformed lines, class folders), for the checks in
``labelgate.checks.formats``. The scan, the checks, the report and its formats then run as for
any Parquet input.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from labelgate.annotations import AnnotationFacts
from labelgate.classmap import ClassMap
from labelgate.errors import InputError, UsageError

__all__ = ["INPUT_FORMATS", "Converted", "convert", "detect"]

INPUT_FORMATS = ("auto", "table", "coco", "yolo", "voc", "imagefolder", "hf", "masks")


@dataclass(frozen=True, slots=True)
class Converted:
    """An annotation input, made readable as a table.

    Attributes:
        paths: what the scan reads: the rows written to a temporary Parquet file, or the user's
            own Parquet files (Hugging Face Parquet needs no conversion).
        facts: what the reader found.
        class_map: the class map the format carries, or ``None``.
        inputs: the paths the user gave.
    """

    paths: list[str]
    facts: AnnotationFacts
    class_map: ClassMap | None
    inputs: list[str]


def detect(paths: list[str], task: str | None = None) -> tuple[str, str]:
    """The format of ``paths`` and why: ``table`` for Parquet, CSV and JSONL label tables;
    ``masks`` for mask images (or any image folder, with the segmentation task).

    Raises:
        InputError: a path does not exist.
    """
    if len(paths) != 1:
        return "table", "several paths are read as one table"
    p = Path(paths[0])
    if any(c in paths[0] for c in "*?[") or "://" in paths[0]:
        return "table", "a glob or URI is read as a table"
    if not p.exists():
        raise InputError("no such file or directory", path=paths[0])
    if p.is_file():
        suffix = p.suffix.lower()
        from labelgate.formats.masks import MASK_SUFFIXES

        if suffix in MASK_SUFFIXES:
            return "masks", f"a {suffix} mask file"
        if suffix == ".json":
            from labelgate.formats.coco import looks_like_coco

            if looks_like_coco(p):
                return "coco", "a JSON file with COCO's images/annotations/categories keys"
            raise InputError(
                "a JSON file is read as COCO (images, annotations, categories); this is not one "
                "(JSON Lines label tables end in .jsonl)",
                path=paths[0],
            )
        if suffix == ".xml":
            return "voc", "a Pascal VOC XML file"
        if suffix in (".parquet", ".pq"):
            from labelgate.formats.hf import hf_features

            if hf_features(p) is not None:
                return "hf", "Parquet carrying Hugging Face 'huggingface' schema metadata"
        return "table", f"a {suffix or 'extensionless'} file"
    if not p.is_dir():  # a device or FIFO: the table reader says what it is
        return "table", "not a regular file"
    if task == "segmentation":
        return "masks", "a folder, with the segmentation task"
    return _detect_folder(p)


def _detect_folder(p: Path) -> tuple[str, str]:
    names = {c.name for c in p.iterdir()}
    if "dataset_info.json" in names and any(n.endswith(".arrow") for n in names):
        return "hf", "a folder with dataset_info.json and .arrow files (datasets' save_to_disk)"
    from labelgate.formats.yolo import CLASS_LISTS

    if names & ({"data.yaml", "data.yml", "obj.data"} | CLASS_LISTS) and any(p.rglob("*.txt")):
        return "yolo", "a folder with a YOLO class list (data.yaml, classes.txt or obj.names)"
    from labelgate.io.sources import KINDS

    if any(f.suffix.lower() in KINDS for f in p.rglob("*") if f.is_file()):
        return "table", "a folder holding label tables (Parquet, CSV or JSONL)"
    from labelgate.formats.masks import looks_like_masks

    masks = looks_like_masks(p)
    if masks is not None and not (p / "Annotations").is_dir():
        return "masks", masks
    if any(p.rglob("*.xml")):
        return "voc", "a folder of Pascal VOC XML files"
    from labelgate.formats.imagefolder import looks_like_imagefolder

    if looks_like_imagefolder(p):
        return "imagefolder", "a folder whose subfolders hold images (torchvision's ImageFolder)"
    return "table", "a folder of label tables"


def convert(
    paths: list[str],
    fmt: str,
    folder: Path,
    *,
    class_map: ClassMap | None,
    background: int | None,
    limit: int | None,
    source_field: str | None = None,
    task: str | None = None,
    num_classes: int | None = None,
    colour_map: Mapping[int, int] | None = None,
    cluster: Any = None,
) -> Converted | None:
    """Read ``paths`` as ``fmt`` (``auto``: detected) into rows under ``folder``; ``None`` for a
    table, which the scan reads as it is.

    Raises:
        UsageError: the format named does not fit the paths.
        InputError: the input cannot be read as its format.
    """
    if fmt not in INPUT_FORMATS:
        raise UsageError(f"--input-format must be one of {', '.join(INPUT_FORMATS)}, got {fmt!r}")
    if fmt == "auto":
        fmt, why = detect(paths, task)
    else:
        why = "--input-format " + fmt
    if fmt == "table":
        return None
    if source_field is not None and fmt != "coco":
        raise UsageError(f"--source-field names a field of COCO's images, not of {fmt}")
    if len(paths) != 1:
        raise UsageError(f"--input-format {fmt} reads one file or folder, got {len(paths)} paths")
    facts = AnnotationFacts(format=fmt, why=why, limit=limit, background=background)
    source = Path(paths[0])
    out = folder / "annotations.parquet"
    found: ClassMap | None
    rows: list[str]
    if fmt == "coco":
        from labelgate.formats.coco import read_coco

        found, rows = read_coco(source, out, facts, background, source_field), [str(out)]
    elif fmt == "yolo":
        from labelgate.formats.yolo import read_yolo

        found, rows = read_yolo(source, out, facts, background), [str(out)]
    elif fmt == "voc":
        from labelgate.formats.voc import read_voc

        found, rows = read_voc(source, out, facts, class_map, background), [str(out)]
    elif fmt == "imagefolder":
        from labelgate.formats.imagefolder import read_imagefolder

        found, rows = read_imagefolder(source, out, facts), [str(out)]
    elif fmt == "masks":
        from labelgate.formats.masks import dataset_meta, read_masks

        found, colours = dataset_meta(source)
        read_masks(
            source,
            out,
            facts,
            num_classes=num_classes if num_classes is not None else _size(found, class_map),
            colour_map=colour_map if colour_map is not None else colours,
            cluster=cluster,
        )
        rows = [str(out)]
    else:
        from labelgate.formats.hf import read_hf

        found, rows = read_hf(source, out, facts)
    return Converted(rows, facts, found, list(paths))


def _size(*maps: ClassMap | None) -> int | None:
    """K from the first class map given."""
    return next((len(m.entries) for m in maps if m is not None), None)
