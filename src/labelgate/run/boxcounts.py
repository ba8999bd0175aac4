"""Boxes per image of a detection input, over all classes and per class: how crowded its images
are, from the image each row names (``ImageRows``) and the labels the reader wrote. Bounded: a
histogram of at most ``MOST + 1`` bars and the first ``CLASSES`` classes."""

from __future__ import annotations

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
    from labelgate.run.rowfiles import read_rows

    rows = opened.images[1]
    image = np.asarray(rows.image, dtype=np.int64)
    labels = [read_rows(p, ["label"]).column("label") for p in opened.paths]
    # nulls (rejected rows) as NaN, read from the buffers (``to_numpy`` loads pandas)
    label = np.concatenate([_floats(c) for c in labels] or [np.empty(0)])
    if label.size != image.size:
        return None
    per = np.bincount(image, minlength=rows.images)
    bars = np.bincount(np.minimum(per, MOST), minlength=1)  # up to the most boxes an image has
    usable = ~np.isnan(label)
    classes = _per_class(image[usable], label[usable].astype(np.int64), int(rows.images))
    return {"images": int(rows.images), "histogram": bars.tolist(), "classes": classes}


def _floats(column: Any) -> Any:
    from labelgate.core.arrow import numbers, valid

    values = numbers(column, 0).astype(np.float64)
    if column.null_count:
        values[~valid(column)] = np.nan
    return values


def _per_class(image: Any, label: Any, images: int) -> list[dict[str, Any]]:
    """Per class (the first ``CLASSES``): the images holding it, and the mean and most of its
    boxes in one of them; one sort of (class, image) keys, not a pass per class."""
    if not label.size:
        return []
    keys = np.sort(label * max(images, 1) + image)
    new = np.concatenate(([True], keys[1:] != keys[:-1]))
    starts = np.flatnonzero(new)
    boxes = np.diff(np.append(starts, keys.size))  # per (class, image)
    klass = keys[starts] // max(images, 1)
    first = np.flatnonzero(np.concatenate(([True], klass[1:] != klass[:-1])))
    ends = np.append(first[1:], klass.size)
    out = []
    for a, b in zip(first[:CLASSES].tolist(), ends[:CLASSES].tolist(), strict=True):
        held = boxes[a:b]
        out.append(
            {
                "label": int(klass[a]),
                "images": int(held.size),
                "mean": round(float(held.mean()), 2),
                "most": int(held.max()),
            }
        )
    return out
