"""The images of a detection input checked against its annotations: each image an annotation
names exists inside the images folder (LG041), decodes within the pixel bound (LG042) and has the
width and height its annotation file records, EXIF orientation applied (LG043).

The images folder is ``--images`` (``images:`` in the contract), else the format's conventional
place when present: COCO, the folder beside the JSON where ``file_name`` resolves (the JSON's own
folder, as Roboflow exports keep ``_annotations.coco.json`` among its images; ``images/``; or
``train2017/`` one level up for ``annotations/instances_train2017.json``); YOLO, ``images/``
beside ``labels/`` (ultralytics' ``img2label_paths``); VOC, ``JPEGImages/`` beside
``Annotations/``; a detection CSV, its own folder (keras-retinanet's default ``base_dir``,
keras_retinanet/preprocessing/csv_generator.py:138-140@7ac91dfb), ``images/`` beside it or one
level up. Where none is found, nothing is checked and a note says so.

A file name is resolved safely: an absolute name or one with a ``..`` part is refused, an empty
one (``file_name: ""``, which would name the folder itself) is LG041, and a link is followed only
when it stays inside the images folder.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable
from itertools import groupby, islice
from operator import attrgetter
from pathlib import Path, PurePosixPath, PureWindowsPath

from labelgate.core.annotations import AnnotationFacts
from labelgate.core.findings import plural
from labelgate.core.report import Example
from labelgate.readers.common.imageindex import ImageIndex, ImageRecord
from labelgate.readers.images.imagedecode import (
    CHUNK,
    LEAVES,
    LINK_LEAVES,
    MISSING,
    ClusterMap,
    Item,
    Probe,
    probe_all,
)

__all__ = ["IMAGE_SUFFIXES", "check_images", "images_folder", "resolve"]

# ultralytics' IMG_FORMATS (ultralytics/data/utils.py): the suffixes a YOLO image may have
IMAGE_SUFFIXES = (
    ".bmp",
    ".dng",
    ".jpeg",
    ".jpg",
    ".mpo",
    ".png",
    ".tif",
    ".tiff",
    ".webp",
    ".pfm",
    ".heic",
)
_PROBE = 5  # records of an annotation file tried to find its conventional images folder
# how ultralytics finds a label file's image (img2label_paths, the other way round)
_YOLO_NAMES = " (ultralytics finds a label file's image by its path, labels/ read as images/)"
# a file name that names the images folder itself ('', '.', './'): the loader would open a folder
EMPTY = "images whose file name is empty (it names the images folder, not a file)"

Progress = Callable[[int, int | None], None]


def check_images(
    index: ImageIndex,
    fmt: str,
    folder: str | None,
    facts: AnnotationFacts,
    *,
    workers: int | None = None,
    progress: Progress | None = None,
    cluster: ClusterMap | None = None,
) -> None:
    """Check every image ``index`` lists (see the module); faults go to ``facts``. The images
    are opened on ``workers`` processes, or on a Dask cluster through ``cluster``."""
    records = index.records
    unnamed = index.unnamed()
    if unnamed:  # never silently: the images no name leads to are counted
        facts.notes.append(
            f"{plural(unnamed, 'image')} not checked: the {fmt} annotations name no image file "
            f"for {'it' if unnamed == 1 else 'them'}" + (_YOLO_NAMES if fmt == "yolo" else "")
        )
    if unnamed == len(records):
        return
    given = None if folder is None else Path(folder)
    if given is not None and not given.is_dir():
        from labelgate.errors import UsageError

        raise UsageError(f"--images {folder}: no such folder")
    # each annotation file's images folder, as (the folder, its path as the prefix of a name)
    roots: dict[Path | None, tuple[str, str] | None] = {}
    items: list[Item] = []  # the probes, compact: path, images folder, recorded size
    probed: list[ImageRecord] = []  # the record of each item
    unchecked = 0
    _listing.cache_clear()  # YOLO's folder listings: this run's alone
    # a file's images one after another: its folder looked up once a run, not once an image
    named = (r for r in records if r.file is not None)  # made as walked: none kept
    for origin, run in groupby(named, key=attrgetter("origin")):
        key = None if given is not None else origin
        if key not in roots:
            own = (r for r in records if r.file is not None)
            folder_of = given if given is not None else _conventional(fmt, origin, own)
            roots[key] = None if folder_of is None else _rooted(folder_of)
        root = roots[key]
        if root is None:
            for r in run:  # a name that names no file is wrong wherever the images are
                unchecked += 1
                if r.file is not None and _names_folder(r.file):
                    _missing(facts, r, EMPTY)
            continue
        for r in run:
            path, why = _named(root, r)  # the name alone: the workers look for the file
            if path is None:
                _missing(facts, r, why)
            else:
                items.append((path, root[0], r.size))
                probed.append(r)
    if unchecked:
        facts.notes.append(
            f"{plural(unchecked, 'image')} not checked: no images folder found where the {fmt} format "
            "keeps them (--images DIR names one)"
        )
    shown = 0
    for start, found in probe_all(items, workers, cluster):
        for at, p in found:
            _judge(facts, probed[start + at], p)
        done = min(start + CHUNK, len(items))
        if progress is not None and done // 256 > shown:
            shown = done // 256
            progress(done, len(items))
    facts.counts["images_checked"] = len(items)


def _rooted(root: Path) -> tuple[str, str]:
    """``root`` as a string, and the prefix that joins a plain name to it as ``root / name``
    would (``''`` for ``.``, ``'/'`` for ``/``)."""
    return str(root), str(root / "x")[:-1]


def _named(root: tuple[str, str], r: ImageRecord) -> tuple[str | None, str]:
    """The path ``r``'s file name gives inside ``root`` (from ``_rooted``; YOLO's: the file of
    its stem with an image suffix), or ``None`` and why not: a name that leaves the folder, or
    no file of the stem. Strings, not paths: this runs once per image; a name with an empty
    or ``.`` part is normalised as ``PurePosixPath`` does."""
    assert r.file is not None
    name = r.file.replace("\\", "/") if "\\" in r.file else r.file
    parts = name.split("/")
    if name.startswith("/") or ".." in parts or (r.file[1:2] == ":" and _drive(r.file)):
        return None, LEAVES
    if _names_folder(name):
        return None, EMPTY
    if "" in parts or "." in parts:  # a//b, ./a, a/, '': as the path would read it
        path = str(Path(root[0]) / PurePosixPath(name))
    else:
        path = root[1] + name
    if not r.stem:
        return path, ""
    found = _with_suffix(path)
    return (None, MISSING) if found is None else (found, "")


def _names_folder(name: str) -> bool:
    """Whether a file name names its folder itself (``''``, ``.``, ``./``), not a file."""
    if name.strip("./\\"):  # a character of a name: some part of it is no '' or '.'
        return False
    return all(p in ("", ".") for p in name.replace("\\", "/").split("/"))


def _drive(name: str) -> bool:
    """Whether ``name`` starts with a Windows drive (``C:``), as this Python's pathlib reads
    it."""
    return bool(PureWindowsPath(name).drive)


def resolve(root: Path, r: ImageRecord) -> tuple[Path | None, str]:
    """The file of ``r`` inside ``root``, or ``None`` and why not (missing, or a name that
    leaves the folder)."""
    named, why = _named(_rooted(root), r)
    if named is None:
        return None, why
    path = Path(named)
    if not path.exists():
        return None, MISSING
    inside = root.resolve()
    real = path.resolve()
    if real != inside and inside not in real.parents:
        return None, LINK_LEAVES
    return path, ""


def _with_suffix(stem: str) -> str | None:
    """A YOLO label's image: the file beside ``stem``'s place with an image suffix (any case),
    from one listing of each folder."""
    folder, name = os.path.split(stem)
    found = _listing(folder or ".").get(name)
    return None if found is None else os.path.join(folder, found)  # noqa: PTH118


@functools.lru_cache(maxsize=64)
def _listing(folder: str) -> dict[str, str]:
    """The image files of ``folder`` by stem (the first suffix of ``IMAGE_SUFFIXES`` wins)."""
    try:
        names = os.listdir(folder)  # noqa: PTH208 - names only, for thousands of files
    except OSError:
        return {}
    rank = {s: i for i, s in enumerate(IMAGE_SUFFIXES)}
    out: dict[str, tuple[int, str]] = {}
    for n in names:
        stem, dot, suffix = n.rpartition(".")
        at = rank.get("." + suffix.lower()) if dot else None
        if at is not None and (stem not in out or at < out[stem][0]):
            out[stem] = (at, n)
    return {stem: n for stem, (_, n) in out.items()}


def images_folder(
    fmt: str, origin: Path | None, records: Iterable[ImageRecord], given: str | None
) -> Path | None:
    """The images folder of the annotation file ``origin``: ``given`` (``--images``), else the
    format's conventional place where one of its first records' files resolves."""
    return Path(given) if given is not None else _conventional(fmt, origin, records)


def _conventional(fmt: str, origin: Path | None, records: Iterable[ImageRecord]) -> Path | None:
    """The conventional images folder of the annotation file ``origin``: the first candidate
    where one of its first records' files resolves."""
    if origin is None:
        return None
    if fmt == "coco":
        up = origin.parent.parent
        split = origin.stem.split("_", 1)[-1]  # instances_train2017 -> train2017
        # beside the file (Roboflow), COCO 2017's val2017/, Datumaro's images/val/
        candidates = [origin.parent, origin.parent / "images", up / split, up / "images" / split]
        candidates.append(up / "images")
    elif fmt == "yolo":
        candidates = [origin.parent / "images"]  # origin: the labels folder
    elif fmt == "voc":
        up = origin.parent.parent  # VOC's JPEGImages/, Kaggle's images/ beside annotations/
        candidates = [up / "JPEGImages", origin.parent, up / "images"]
    elif fmt == "detcsv":  # keras-retinanet: beside the CSV; raccoon_dataset: images/ beside data/
        candidates = [origin.parent, origin.parent / "images", origin.parent.parent / "images"]
    else:
        return None
    mine = list(islice((r for r in records if r.origin == origin), _PROBE))  # stops there
    # keras-retinanet's rows may name images by absolute path (its README's own example), which
    # no folder holds: a detection CSV's folder counts only where a name resolves inside it
    strict = fmt == "detcsv"
    for c in candidates:
        whys = (resolve(c, r)[1] for r in mine)
        if c.is_dir() and any(why == "" if strict else why not in (MISSING, EMPTY) for why in whys):
            return c  # a file there (safe or not: a name leaving it is then a finding)
    return None


def _name(r: ImageRecord, value: str | None = None) -> Example:
    return Example(row=-1, id=r.name, file=r.file, value=value)


def _sizes(want: tuple[float, float], loaded: tuple[int, int], stored: tuple[int, int]) -> str:
    """The two sizes LG043 compares: the annotation's, and the image's as loaded (and as stored,
    where its EXIF orientation turns it)."""
    shown = f"{want[0]:g} x {want[1]:g} in the annotation, {loaded[0]} x {loaded[1]} loaded"
    return shown if loaded == stored else f"{shown} ({stored[0]} x {stored[1]} stored)"


def _missing(facts: AnnotationFacts, r: ImageRecord, why: str) -> None:
    facts.hit(
        "LG041",
        _name(r),
        message=why,
        fix="add the images, correct their file names, or point --images at the folder that "
        "holds them",
        unit="images",
    )


def _judge(facts: AnnotationFacts, r: ImageRecord, p: Probe) -> None:
    if p.missing is not None:
        _missing(facts, r, p.missing)
        return
    if p.error is not None:
        facts.hit(
            "LG042",
            _name(r),
            message="images that are decompression bombs (more pixels than Pillow decodes)"
            if p.bomb
            else "images that do not decode (truncated, not an image, an unknown format)",
            fix="re-export or replace these images; a loader raises at each of them",
            unit="images",
        )
        return
    if r.size is None or p.oriented is None or p.size is None:
        return
    want = r.size
    if (float(p.oriented[0]), float(p.oriented[1])) == want:
        return
    if (float(p.size[0]), float(p.size[1])) == want:
        message = (
            "images whose recorded size is that of their stored pixels, not of the image their "
            "EXIF orientation turns (detectron2 and ultralytics apply it, then compare)"
        )
    else:
        message = "images whose width and height differ from their annotation's"
    facts.hit(
        "LG043",
        _name(r, _sizes(want, p.oriented, p.size)),
        message=message,
        fix="record each image's width and height as loaded (EXIF orientation applied), or "
        "re-export the images; boxes drawn on the recorded size land elsewhere",
        unit="images",
    )
