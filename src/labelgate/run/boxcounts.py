"""Boxes per image of a detection input, over all classes and per class: how crowded its images
are, from the image each row names (``ImageRows``) and the labels the reader wrote. Bounded: a
histogram of at most ``MOST + 1`` bars and the first ``CLASSES`` classes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from labelgate.readers.opened import Opened

__all__ = ["CLASSES", "MOST", "boxes_per_image"]

MOST = 30  # boxes per image counted one by one; more fall in the last bar ("30+")
CLASSES = 200  # classes listed


def boxes_per_image(opened: Opened) -> dict[str, Any] | None:
    """The histogram of boxes per image (images without a box included; bar ``MOST``: that many
    or more) and, per class, the
    images holding it with their mean and largest count of its boxes; ``None`` where the rows
    name no image or the rows are the user's own files."""
    if opened.images is None or opened.images[1] is None or not opened.converted:
        return None
    rows = opened.images[1]
    per = np.bincount(rows.image, minlength=rows.images)
    bars = np.bincount(np.minimum(per, MOST), minlength=1)  # up to the most boxes an image has
    del per
    keys = _keys(opened.paths, rows.image, int(rows.images))
    if keys is None:
        return None
    classes = _per_class(keys, int(rows.images))
    return {"images": int(rows.images), "histogram": bars.tolist(), "classes": classes}


def _keys(paths: Sequence[str], image: Any, images: int) -> Any:
    """``label * images + image`` of every row with a label (a rejected row's is null), sorted:
    the labels read a row group at a time into one array of 8 bytes a row, no copy of the
    columns; ``None`` where the files hold another number of rows than ``image``."""
    import pyarrow.parquet as pq

    from labelgate.core.arrow import numbers, valid

    keys = np.empty(len(image), dtype=np.int64)
    filled = seen = 0
    for path in paths:
        with pq.ParquetFile(path) as f:
            for group in range(f.num_row_groups):
                column = f.read_row_group(group, columns=["label"]).column("label")
                count = len(column)
                if seen + count > len(image):
                    return None
                label = numbers(column, 0).astype(np.int64, copy=False)
                at = image[seen : seen + count]
                if column.null_count:
                    usable = valid(column)
                    label, at = label[usable], at[usable]
                out = keys[filled : filled + len(label)]
                np.multiply(label, max(images, 1), out=out)
                out += at
                filled += len(label)
                seen += count
    if seen != len(image):
        return None
    keys = keys[:filled]
    keys.sort()
    return keys


def _per_class(keys: Any, images: int) -> list[dict[str, Any]]:
    """Per class (the first ``CLASSES``): the images holding it, and the mean and most of its
    boxes in one of them, from the sorted ``label * images + image`` keys: each class's keys
    are one run of them, found by a binary search, not a pass per class."""
    width = max(images, 1)
    out: list[dict[str, Any]] = []
    start = 0
    while start < len(keys) and len(out) < CLASSES:
        klass = int(keys[start]) // width
        bound = (klass + 1) * width  # the first key of the next class
        end = len(keys) if bound >= 2**63 else int(np.searchsorted(keys, bound))
        held = keys[start:end]
        last = np.flatnonzero(held[1:] != held[:-1])  # each image's last box, but the last's
        boxes = np.diff(np.concatenate(([-1], last, [len(held) - 1])))  # per image
        out.append(
            {
                "label": klass,
                "images": int(boxes.size),
                "mean": round(float(boxes.mean()), 2),
                "most": int(boxes.max()),
            }
        )
        start = end
    return out
