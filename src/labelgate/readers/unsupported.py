"""Layouts labelgate does not read, recognised so that none is read as something it is not.

Without this reader a KITTI or Market-1501 folder (subfolders of images) would be read as an
ImageFolder tree and pass, and a colour table (``name,r,g,b``) as a label table. Its
``UnsupportedReader.detect`` claims those layouts by their whole signature (KITTI: ``label_2/``
of 15-field object lines beside ``image_2/``; never one folder's name, which an ImageFolder
class may carry), more surely than the guesses they would otherwise meet (ImageFolder, tables,
masks by their look), and its ``UnsupportedReader.read`` refuses them: "looks like X, which
labelgate does not read", with what to do instead (exit 2).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from labelgate.core.annotations import AnnotationFacts
from labelgate.errors import InputError
from labelgate.readers.base import Claim, Read, Reader, ReadOptions
from labelgate.readers.common.layout import any_file, first_files, head_lines, subfolders
from labelgate.readers.common.roots import Mixed, dataset_root
from labelgate.readers.common.sink import RowSink

__all__ = ["LAYOUTS", "Layout", "UnsupportedReader"]

_MASK_HINT = (
    "validate its class-index masks with --input-format masks (colour masks need a color_map "
    "in the contract: docs/segmentation.md)"
)


@dataclass(frozen=True, slots=True)
class Layout:
    """A dataset layout labelgate does not read: its name, its whole signature (``seen``: the
    marker found at a place, the path given or one folder below it, or ``None``) and what to do
    instead. A folder's name alone is never a signature: an ImageFolder class may be called
    ``label_2`` or ``calib``."""

    name: str
    seen: Callable[[Path], str | None]
    instead: str
    unless: Callable[[Path], bool] | None = None


def _numbers(fields: list[str]) -> bool:
    try:
        [float(f) for f in fields]
    except ValueError:
        return False
    return bool(fields)


def _lines_of(folder: Path, pattern: str, test: Callable[[str], bool]) -> str | None:
    """The first of a few files in ``folder`` whose first lines pass ``test``, as a marker."""
    if not folder.is_dir():
        return None
    for f in first_files(folder, pattern):
        lines = head_lines(f)
        if lines and test(lines[0]):
            return f"{folder.name}/{f.name}"
    return None


def _kitti_object(line: str) -> bool:
    """A KITTI object label: type, truncated, occluded, alpha, 2D box, dimensions, location,
    rotation_y (15 fields; 16 with a score), the type a word and the rest numbers."""
    fields = line.split()
    return len(fields) in (15, 16) and not _numbers(fields[:1]) and _numbers(fields[1:])


def _kitti(place: Path) -> str | None:
    """``image_2/`` beside ``label_2/`` of 15-field object labels, or beside ``calib/`` of
    projection matrices (``P0: ...``, a testing split); or KITTI raw's tracklet_labels.xml."""
    tracklets = place / "tracklet_labels.xml"
    if any("<tracklets" in line for line in head_lines(tracklets, 20)):
        return "tracklet_labels.xml"
    if not (place / "image_2").is_dir():
        return None
    return _lines_of(place / "label_2", "*.txt", _kitti_object) or _lines_of(
        place / "calib", "*.txt", lambda line: line.startswith(("P0:", "P2:"))
    )


def _dota_object(line: str) -> bool:
    """A DOTA object: four corners (8 numbers), the category, the difficulty."""
    fields = line.split()
    return len(fields) == 10 and _numbers(fields[:8]) and fields[9] in ("0", "1", "2")


def _dota(place: Path) -> str | None:
    for name in ("labelTxt", "labelTxt-v1.0", "labelTxt-v1.5"):
        folder = place / name
        for f in first_files(folder, "*.txt") if folder.is_dir() else []:
            if any(_dota_object(line) for line in head_lines(f, 3)):  # past imagesource:, gsd:
                return f"{name}/{f.name}"
    return None


def _wider(place: Path) -> str | None:
    split = place / "wider_face_split"
    if split.is_dir() and first_files(split, "wider_face_*_bbx_gt.txt", 1):
        return "wider_face_split/wider_face_*_bbx_gt.txt"
    for name in ("WIDER_train", "WIDER_val", "WIDER_test"):
        images = place / name / "images"
        if any(re.fullmatch(r"\d+--\w+", p.name) for p in subfolders(images, 5)):
            return f"{name}/images/<event>/"  # 0--Parade, 1--Handshaking...
    return None


def _mot(place: Path) -> str | None:
    if any(line == "[Sequence]" for line in head_lines(place / "seqinfo.ini", 3)):
        return "seqinfo.ini"
    gt = head_lines(place / "gt" / "gt.txt", 1)
    if gt and len(gt[0].split(",")) >= 9 and _numbers(gt[0].split(",")):
        return "gt/gt.txt"
    return None


_MARKET = re.compile(r"-?\d{1,5}_c\d+s\d+_\d+_\d+\.jpg")  # person, camera and sequence, frame


def _market(place: Path) -> str | None:
    for name in ("bounding_box_train", "bounding_box_test", "gt_bbox"):
        folder = place / name
        if folder.is_dir() and any(_MARKET.fullmatch(f.name) for f in first_files(folder, "*")):
            return f"{name}/"
    return None


def _camvid(place: Path) -> str | None:
    for split in ("train", "val", "test"):
        if (place / split).is_dir() and first_files(place / f"{split}annot", "*.png", 1):
            return f"{split}annot/"
    colours = head_lines(place / "label_colors.txt", 1)  # 64 128 64\tAnimal
    if colours and len(colours[0].split()) >= 4 and _numbers(colours[0].split()[:3]):
        return "label_colors.txt"
    return None


def _ade20k(place: Path) -> str | None:
    root = place / "ADEChallengeData2016"
    if (root / "annotations").is_dir() and (root / "images").is_dir():
        return "ADEChallengeData2016/"
    for name in ("objectInfo150.txt", "objectInfo150.csv"):
        header = head_lines(place / name, 1)
        if header and header[0].startswith("Idx"):
            return name
    scenes = head_lines(place / "sceneCategories.txt", 1)
    if scenes and scenes[0].startswith("ADE_"):
        return "sceneCategories.txt"
    return None


def _synthia(place: Path) -> str | None:
    if (place / "RGB").is_dir() and any((place / "GT" / n).is_dir() for n in ("LABELS", "COLOR")):
        return "GT/LABELS/"
    return None


def _cityscapes(place: Path) -> str | None:
    for folder, pattern in (
        ("leftImg8bit", "*_leftImg8bit.png"),
        ("gtFine", "*_gtFine_polygons.json"),
        ("gtCoarse", "*_gtCoarse_polygons.json"),
    ):
        if (place / folder).is_dir() and any_file(place / folder, pattern, lambda p: True):
            return f"{folder}/"
    return None


def _has_cityscapes_masks(root: Path) -> bool:
    return any_file(root, "*_label*Ids.png", lambda p: True, past=True)


LAYOUTS = (
    Layout(
        "KITTI",
        _kitti,
        "convert its label_2 files to COCO or YOLO (datumaro convert -if kitti) and validate that",
    ),
    Layout(
        "DOTA",
        _dota,
        "its oriented boxes (8 coordinates, class, difficulty) are not read: convert them to "
        "COCO or YOLO and validate that",
    ),
    Layout(
        "WIDER FACE",
        _wider,
        "convert its wider_face_*_bbx_gt.txt to COCO (one face category) and validate that",
    ),
    Layout("MOT", _mot, "its gt.txt rows are tracks, not classes: convert them to COCO or YOLO"),
    Layout(
        "Market-1501",
        _market,
        "its person ids (the file name's first field) are re-identification targets: build a "
        "label table (id, label) from the file names and validate that",
    ),
    Layout("CamVid", _camvid, _MASK_HINT),
    Layout(
        "ADE20K",
        _ade20k,
        _MASK_HINT + "; ADEChallengeData2016 stores 0 as 'other', 1..150 as classes",
    ),
    Layout("SYNTHIA", _synthia, _MASK_HINT),
    Layout(
        "Cityscapes (raw, without label masks)",
        _cityscapes,
        "build the label masks with cityscapesScripts (createTrainIdLabelImgs) and validate "
        "the *_labelTrainIds.png files as masks",
        unless=_has_cityscapes_masks,
    ),
)


def _marked(root: Path, layout: Layout) -> str | None:
    """The marker of ``layout`` found at ``root`` or in one of its subfolders."""
    for place in (root, *subfolders(root)):
        seen = layout.seen(place)
        if seen is not None:
            return seen if place == root else f"{place.name}/{seen}"
    return None


def _colour_table(path: Path) -> bool:
    """A CSV whose header is a colour table's: ``name`` and ``r``, ``g``, ``b`` columns."""
    try:
        with path.open("rb") as f:
            first = f.readline(4096).decode("utf-8-sig", errors="replace")
    except OSError:
        return False
    try:
        header = {c.strip().lower() for c in next(csv.reader(io.StringIO(first, newline="")), [])}
    except csv.Error:
        return False  # no CSV header at all
    return {"r", "g", "b"} <= header and bool(header & {"name", "label", "class", "class_name"})


def _recognise(path: Path) -> tuple[str, str, str] | None:
    """(what it looks like, the marker seen, what to do instead), or ``None``."""
    if path.is_file():
        if path.suffix.lower() == ".csv" and _colour_table(path):
            return (
                "a colour table (name, r, g, b)",
                path.name,
                "it maps mask colours to classes, it holds no labels: write its colours as the "
                "contract's color_map and validate the masks (docs/segmentation.md)",
            )
        if path.name == "tracklet_labels.xml" and _kitti(path.parent) == path.name:
            return "KITTI raw tracklets", path.name, LAYOUTS[0].instead
        return None
    if not path.is_dir():
        return None
    for layout in LAYOUTS:
        marker = _marked(path, layout)
        if marker is not None and not (layout.unless and layout.unless(path)):
            return layout.name, marker, layout.instead
    return None


def _mixed(path: Path) -> Mixed | None:
    """A folder whose split folders hold datasets of several formats."""
    found = dataset_root(path) if path.is_dir() else None
    return found if isinstance(found, Mixed) else None


class UnsupportedReader(Reader):
    """Layouts labelgate recognises and refuses (KITTI, DOTA, WIDER FACE, MOT, Market-1501,
    CamVid, ADE20K, SYNTHIA, raw Cityscapes, colour tables, a folder of datasets of several
    formats): never read as another format."""

    name = "unsupported"
    title = "layouts recognised and refused (KITTI, DOTA, WIDER FACE, MOT, CamVid...)"

    def detect(self, path: Path, task: str | None = None) -> Claim | None:
        mixed = _mixed(path)
        if mixed is not None:  # the formats' own readers claim no such folder
            return Claim(0.9, str(mixed))
        seen = _recognise(path)
        if seen is None:
            return None
        what, marker, _ = seen
        # Above ImageFolder (0.5), tables (0.6, 0.8) and masks by their look (0.7); below the
        # formats' own signatures (VOC 0.8 folders, YOLO 0.9, COCO 0.95).
        return Claim(0.85 if path.is_file() else 0.75, f"looks like {what} ({marker})")

    def read(
        self, paths: list[Path], sink: RowSink, facts: AnnotationFacts, options: ReadOptions
    ) -> Read:
        mixed = _mixed(paths[0])
        if mixed is not None:
            raise InputError(
                f"{mixed}: one input is one dataset of one format; validate each with its own path",
                path=str(paths[0]),
            )
        seen = _recognise(paths[0])
        if seen is None:
            raise InputError(
                "--input-format unsupported names no format: it refuses layouts labelgate "
                "does not read",
                path=str(paths[0]),
            )
        what, marker, instead = seen
        raise InputError(
            f"looks like {what} ({marker}), which labelgate does not read: {instead}",
            path=str(paths[0]),
        )
