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
    import pyarrow.parquet as pq

    rows = opened.images[1]
    image = np.asarray(rows.image, dtype=np.int64)
    labels = [pq.read_table(p, columns=["label"]).column("label") for p in opened.paths]
    label = np.concatenate(
        [c.to_numpy(zero_copy_only=False).astype(np.float64) for c in labels] or [np.empty(0)]
    )
    if label.size != image.size:
        return None
    per = np.bincount(image, minlength=rows.images)
    bars = np.bincount(np.minimum(per, MOST), minlength=1)  # up to the most boxes an image has
    classes = []
    usable = ~np.isnan(label)
    if usable.any():
        img, lab = image[usable], label[usable].astype(np.int64)
        for k in np.unique(lab)[:CLASSES].tolist():
            counts = np.bincount(img[lab == k])
            counts = counts[counts > 0]
            classes.append(
                {
                    "label": k,
                    "images": int(counts.size),
                    "mean": round(float(counts.mean()), 2),
                    "most": int(counts.max()),
                }
            )
    return {"images": int(rows.images), "histogram": bars.tolist(), "classes": classes}
