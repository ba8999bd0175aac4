"""Dataset roots as they are downloaded or exported: the splits a folder holds, each read as its own
source.

A root is recognised by where its annotation files lie, never by a folder's name alone:

- COCO 2017 (``annotations/instances_val2017.json`` beside ``val2017/``) and Datumaro's COCO
  (``annotations/instances_val.json`` beside ``images/val/``): one split per annotation file,
  named by the file (``instances_val2017.json`` -> ``val2017``); of the kinds of file COCO ships
  (instances, person_keypoints, panoptic, captions...) the instances are read, the others named
  in a note (keypoints annotate the same people again; captions carry no category);
- split folders each holding one export (Roboflow's ``train/ valid/ test/`` with a
  ``_annotations.coco.json`` or VOC XML files beside the images; ``<split>/Annotations/`` or
  ``<split>/annotations/`` XML; ``<split>/labels/`` YOLO files): one split per folder;
- COCO files directly in the folder: one split per file;
- ultralytics' ``labels/<split>/`` beside ``images/<split>/``: one split per labels folder.

A folder whose splits are of several formats is ``Mixed``: refused, naming each (one input is one
dataset of one format).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from labelgate.readers.common.layout import (
    first_files,
    head_lines,
    is_voc_xml,
    looks_like_coco,
    subfolders,
)

__all__ = ["Mixed", "Root", "Split", "coco_kind", "dataset_root", "source_names", "yolo_lines"]

# The kinds of COCO annotation file, in the order a root's files are preferred (a root read is one
# kind: instances and person_keypoints of one split annotate the same people twice, with the same
# ids); captions and image_info carry no category labels.
_KINDS = ("instances", "", "person_keypoints", "panoptic", "stuff")
_UNLABELLED = ("captions", "image_info")
# Folders that are a layout's own, not splits.
_NOT_SPLITS = {"annotations", "Annotations", "labels", "images", "JPEGImages", "ImageSets"}


@dataclass(frozen=True, slots=True)
class Split:
    """One split of a dataset root.

    Attributes:
        name: the split, as the report names its source (``val2017``, ``train``).
        path: what the format's reader reads for it: a COCO file, a folder of VOC XML, a YOLO
            labels folder.
        images: the folder of its images, where the layout puts one (``None``: none found).
    """

    name: str
    path: Path
    images: Path | None = None


@dataclass(frozen=True, slots=True)
class Root:
    """A folder read as the dataset it holds.

    Attributes:
        format: the reader of every split (``coco``, ``voc``, ``yolo``).
        splits: the splits, in order.
        why: what was seen, for the report.
        left_out: files of the format not read, each with why (a note of the report).
    """

    format: str
    splits: tuple[Split, ...]
    why: str
    left_out: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Mixed:
    """A folder whose splits are datasets of several formats: split -> format."""

    formats: dict[str, str]

    def __str__(self) -> str:
        each = ", ".join(f"{s}/ ({f})" for s, f in self.formats.items())
        return f"a folder holding datasets of several formats: {each}"


def coco_kind(stem: str) -> tuple[str, str]:
    """(kind, split) of a COCO annotation file's stem: ``instances_val2017`` -> (``instances``,
    ``val2017``); a plain name is its own split (``val`` -> ("", ``val``))."""
    for kind in (*_KINDS, *_UNLABELLED):
        if kind and stem.startswith(kind + "_"):
            return kind, stem[len(kind) + 1 :]
        if kind and stem == kind:
            return kind, stem
    return "", stem


def _coco_files(folder: Path, most: int = 5) -> list[Path]:
    found = []
    for f in first_files(folder, "*.json", most):
        try:
            if looks_like_coco(f):
                found.append(f)
        except OSError:
            continue
    return found


def _one_kind(files: list[Path]) -> tuple[list[Path], list[str]]:
    """The files of the kind a root reads, and the others, each with why it is left out."""
    kinds = {f: coco_kind(f.stem)[0] for f in files}
    labelled = [f for f in files if kinds[f] not in _UNLABELLED]
    chosen = next(
        ([f for f in labelled if kinds[f] == k] for k in _KINDS if k in kinds.values()), []
    )
    left = []
    for f in files:
        if f in chosen:
            continue
        if kinds[f] in _UNLABELLED:
            left.append(f"{f.name} ({kinds[f]}: no category labels)")
        else:
            left.append(
                f"{f.name} ({kinds[f] or 'another kind'}: validate it as a path of its own)"
            )
    return chosen, left


def _order(name: str) -> tuple[int, str]:
    """Splits in the order a dataset is used: train, then validation, then test, then others
    (the first split's class table is the one the others are compared with)."""
    low = name.lower()
    for rank, words in enumerate((("train",), ("val", "dev"), ("test",))):
        if low.startswith(words):
            return rank, low
    return 3, low


def _images_of(root: Path, split: str) -> Path | None:
    for folder in (root / split, root / "images" / split, root / "images"):
        if folder.is_dir():
            return folder
    return None


def _coco_root(root: Path) -> Root | None:
    """``annotations/`` holding COCO files (COCO 2017, Datumaro), or COCO files in the folder."""
    for place, label in ((root / "annotations", "annotations/"), (root, "")):
        if not place.is_dir():
            continue
        chosen, left = _one_kind(_coco_files(place, 50))
        if not chosen:
            continue
        chosen.sort(key=lambda f: _order(coco_kind(f.stem)[1]))
        splits = tuple(
            Split(coco_kind(f.stem)[1], f, _images_of(root, coco_kind(f.stem)[1])) for f in chosen
        )
        if label == "":
            names = source_names(list(chosen))
            splits = tuple(Split(n, s.path, root) for n, s in zip(names, splits, strict=True))
        shown = ", ".join(f.name for f in chosen[:3]) + (" ..." if len(chosen) > 3 else "")
        where = f"{label} holding " if label else "COCO files "
        return Root("coco", splits, f"a COCO dataset root: {where}{shown}", tuple(left))
    return None


def yolo_lines(folder: Path) -> bool:
    """Whether the first label files in ``folder`` hold YOLO rows (``class x y ...``: an integer
    then numbers), an empty file (an image without objects) counting for none."""
    seen = False
    for f in first_files(folder, "*.txt"):
        for line in head_lines(f, 3):
            fields = line.split()
            try:
                int(fields[0])
                [float(v) for v in fields[1:]]
            except ValueError:
                return False
            if len(fields) < 5:
                return False
            seen = True
    return seen


def _voc_folder(folder: Path) -> Path | None:
    """Where ``folder`` keeps VOC XML files: itself, its ``Annotations/`` or ``annotations/``."""
    for place in (folder, folder / "Annotations", folder / "annotations"):
        first = first_files(place, "*.xml", 1) if place.is_dir() else []
        if first and is_voc_xml(first[0]):
            return place
    return None


def _split_of(folder: Path) -> tuple[str, Path] | None:
    """(format, what its reader reads) of a split folder, or ``None``."""
    coco, _ = _one_kind(_coco_files(folder) or _coco_files(folder / "annotations"))
    if len(coco) == 1:
        return "coco", coco[0]
    voc = _voc_folder(folder)
    if voc is not None:
        return "voc", voc
    if (folder / "labels").is_dir() and yolo_lines(folder / "labels"):
        return "yolo", folder / "labels"
    return None


def dataset_root(path: Path) -> Root | Mixed | None:
    """The dataset ``path`` holds as a root of splits, a ``Mixed`` folder, or ``None`` (not a
    root: a format's own folder, or no dataset). Reads a bounded number of entries and bytes."""
    if not path.is_dir():
        return None
    coco = _coco_root(path)
    if coco is not None:
        return coco
    found: dict[str, tuple[str, Path]] = {}
    for folder in sorted(subfolders(path), key=lambda f: _order(f.name)):
        if folder.name in _NOT_SPLITS:
            continue
        split = _split_of(folder)
        if split is not None:
            found[folder.name] = split
    formats = {f for f, _ in found.values()}
    if len(formats) > 1:
        return Mixed({name: f for name, (f, _) in found.items()})
    if formats:
        fmt = formats.pop()
        splits = tuple(Split(n, p, path / n) for n, (_, p) in found.items())
        end = "" if fmt == "coco" else "/"
        shown = ", ".join(s.path.relative_to(path).as_posix() + end for s in splits[:3])
        return Root(fmt, splits, f"split folders, each a {fmt.upper()} export: {shown}")
    labels = path / "labels"
    if labels.is_dir():  # ultralytics: labels/<split>/ beside images/<split>/
        named = sorted(
            (f for f in subfolders(labels) if yolo_lines(f)), key=lambda f: _order(f.name)
        )
        if named:
            splits = tuple(Split(f.name, f, _images_of(path, f.name)) for f in named)
            shown = ", ".join(f"labels/{s.name}/" for s in splits[:3])
            return Root("yolo", splits, f"a YOLO labels tree ({shown}) without a class list")
    return None


def source_names(paths: list[Path]) -> list[str]:
    """Names that tell the files of one input apart: their file names, or where those repeat
    (Roboflow's ``_annotations.coco.json`` in each split), their folders' names (the splits),
    else their paths below the folder they share."""
    names = [p.name for p in paths]
    if len(set(names)) == len(names):
        return names
    parents = [p.parent.name for p in paths]
    if all(parents) and len(set(parents)) == len(parents):
        return parents
    full = [p.absolute() for p in paths]
    common = Path(os.path.commonpath(full))
    return [f.relative_to(common).as_posix() for f in full]
