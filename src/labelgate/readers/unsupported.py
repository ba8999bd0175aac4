"""Layouts labelgate does not read, recognised so that none is read as something it is not.

Without this reader a KITTI or Market-1501 folder (subfolders of images) would be read as an
ImageFolder tree and pass, and a colour table (``name,r,g,b``) as a label table. Its
``UnsupportedReader.detect`` claims those layouts by their own markers, more surely than
the guesses they would otherwise meet (ImageFolder, tables, masks by their look), and its
``UnsupportedReader.read`` refuses them: "looks like X, which labelgate does not read", with
what to do instead (exit 2).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from labelgate.core.annotations import AnnotationFacts
from labelgate.errors import InputError
from labelgate.readers.base import Claim, Read, Reader, ReadOptions
from labelgate.readers.layout import any_file
from labelgate.readers.sink import RowSink

__all__ = ["LAYOUTS", "Layout", "UnsupportedReader"]

_MASK_HINT = (
    "validate its class-index masks with --input-format masks (colour masks need a color_map "
    "in the contract: docs/segmentation.md)"
)


@dataclass(frozen=True, slots=True)
class Layout:
    """A dataset layout labelgate does not read: its name, the markers that identify it
    (folders or files, at the path given or one folder below it) and what to do instead."""

    name: str
    folders: tuple[str, ...]
    files: tuple[str, ...]
    instead: str
    unless: Callable[[Path], bool] | None = None


def _has_cityscapes_masks(root: Path) -> bool:
    return any_file(root, "*_label*Ids.png", lambda p: True, past=True)


LAYOUTS = (
    Layout(
        "KITTI",
        ("label_2", "image_2", "velodyne", "velodyne_points", "calib"),
        ("tracklet_labels.xml",),
        "convert its label_2 files to COCO or YOLO (datumaro convert -if kitti) and validate that",
    ),
    Layout(
        "DOTA",
        ("labelTxt", "labelTxt-v1.0", "labelTxt-v1.5"),
        (),
        "its oriented boxes (8 coordinates, class, difficulty) are not read: convert them to "
        "COCO or YOLO and validate that",
    ),
    Layout(
        "WIDER FACE",
        ("wider_face_split", "WIDER_train", "WIDER_val", "WIDER_test"),
        (),
        "convert its wider_face_*_bbx_gt.txt to COCO (one face category) and validate that",
    ),
    Layout(
        "MOT",
        (),
        ("seqinfo.ini", "gt/gt.txt"),
        "its gt.txt rows are tracks, not classes: convert them to COCO or YOLO",
    ),
    Layout(
        "Market-1501",
        ("bounding_box_train", "bounding_box_test", "gt_bbox"),
        (),
        "its person ids (the file name's first field) are re-identification targets: build a "
        "label table (id, label) from the file names and validate that",
    ),
    Layout("CamVid", ("trainannot", "valannot", "testannot"), ("label_colors.txt",), _MASK_HINT),
    Layout(
        "ADE20K",
        ("ADEChallengeData2016",),
        ("objectInfo150.txt", "objectInfo150.csv", "sceneCategories.txt"),
        _MASK_HINT + "; ADEChallengeData2016 stores 0 as 'other', 1..150 as classes",
    ),
    Layout("SYNTHIA", ("GT/LABELS", "GT/COLOR"), (), _MASK_HINT),
    Layout(
        "Cityscapes (raw, without label masks)",
        ("leftImg8bit", "gtFine", "gtCoarse"),
        (),
        "build the label masks with cityscapesScripts (createTrainIdLabelImgs) and validate "
        "the *_labelTrainIds.png files as masks",
        unless=_has_cityscapes_masks,
    ),
)


def _marked(root: Path, layout: Layout) -> str | None:
    """The marker of ``layout`` found at ``root`` or in one of its subfolders."""
    try:
        places = [root, *sorted(p for p in root.iterdir() if p.is_dir())[:50]]
    except OSError:
        return None
    for place in places:
        for folder in layout.folders:
            if (place / folder).is_dir():
                return (place / folder).relative_to(root).as_posix() + "/"
        for file in layout.files:
            if (place / file).is_file():
                return (place / file).relative_to(root).as_posix()
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
        if path.name == "tracklet_labels.xml":
            return "KITTI raw tracklets", path.name, LAYOUTS[0].instead
        return None
    if not path.is_dir():
        return None
    for layout in LAYOUTS:
        marker = _marked(path, layout)
        if marker is not None and not (layout.unless and layout.unless(path)):
            return layout.name, marker, layout.instead
    return None


class UnsupportedReader(Reader):
    """Layouts labelgate recognises and refuses (KITTI, DOTA, WIDER FACE, MOT, Market-1501,
    CamVid, ADE20K, SYNTHIA, raw Cityscapes, colour tables): never read as another format."""

    name = "unsupported"
    title = "layouts recognised and refused (KITTI, DOTA, WIDER FACE, MOT, CamVid...)"

    def detect(self, path: Path, task: str | None = None) -> Claim | None:
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
