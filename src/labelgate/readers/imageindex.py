"""The images a detection input lists, in the dataset's order: each image's key, file name and
recorded size, and which image each box row belongs to.

Batches of a detection DataLoader are batches of images (an image with all its boxes, through a
``collate_fn``), not of boxes; images without a box are items too. The readers record each image
(``ImageIndex.add``) and name each row's image (``RowWriter.add(..., group=key)``); the run turns
that into the image of each row (``ImageIndex.rows_to_images``) for the batch plan, and the image
checks (``readers/imagecheck.py``) open the files recorded here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["ImageIndex", "ImageRecord", "ImageRows"]

I64 = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class ImageRecord:
    """One image as its annotation file records it.

    Attributes:
        key: what the rows name it by (COCO: file and image id; YOLO and VOC: the label file).
        name: how a finding names it (COCO: ``image 12``; others: the label file's path).
        file: the image file name as written, relative to the images folder (``None``: none
            written); YOLO: the label file's path under ``labels/`` without its suffix (``stem``).
        size: (width, height) as recorded, or ``None``.
        origin: the annotation file (or YOLO's ``labels`` folder) the image was listed in: the
            conventional images folder is found from it.
        stem: whether ``file`` lacks its suffix (YOLO: any image suffix).
    """

    key: Any
    name: str
    file: str | None = None
    size: tuple[float, float] | None = None
    origin: Path | None = None
    stem: bool = False


@dataclass(frozen=True, slots=True)
class ImageRows:
    """The image of each row, for batches of images.

    Attributes:
        image: per row, the position of its image in the dataset's image order.
        images: how many images (those without a box included).
        without_boxes: images that hold no box.
    """

    image: I64
    images: int
    without_boxes: int

    @property
    def pair(self) -> tuple[I64, int]:
        """(image of each row, image count): what the batch plan takes."""
        return self.image, self.images


class ImageIndex:
    """The images of one input, in the order they were listed.

    Attributes:
        records: the images, as listed (a key listed twice is kept once).
        sort: whether the dataset's order is the sorted keys (COCO: torchvision's
            ``CocoDetection`` and detectron2's ``load_coco_json`` both sort the image ids).
    """

    def __init__(self) -> None:
        self.records: list[ImageRecord] = []
        self._at: dict[Any, int] = {}
        self.sort = False

    def add(self, record: ImageRecord) -> None:
        """Record an image (the first record of a key stands)."""
        if record.key not in self._at:
            self._at[record.key] = len(self.records)
            self.records.append(record)

    def ordered(self) -> list[ImageRecord]:
        """The images in the dataset's order."""
        if not self.sort:
            return list(self.records)
        try:
            return sorted(self.records, key=lambda r: r.key)
        except TypeError:  # ids of mixed types: the listed order
            return list(self.records)

    def rows_to_images(self, groups: Sequence[Any]) -> ImageRows | None:
        """The image of each row (``groups``: each row's image key, in row order), or ``None``
        when a row names no image (a reader that records none). A key not listed is an image
        of its own, after the listed ones (the reader reports it)."""
        if not self.records or any(g is None for g in groups):
            return None
        rank = {r.key: i for i, r in enumerate(self.ordered())}
        extra: dict[Any, int] = {}
        out = np.empty(len(groups), dtype=np.int64)
        for i, g in enumerate(groups):
            at = rank.get(g)
            if at is None:
                at = extra.setdefault(g, len(rank) + len(extra))
            out[i] = at
        images = len(rank) + len(extra)
        with_boxes = len(np.unique(out)) if len(out) else 0
        return ImageRows(out, images, images - with_boxes)
