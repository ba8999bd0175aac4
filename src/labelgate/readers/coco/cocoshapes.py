"""The masks and keypoints of a COCO file, judged as its annotations stream by: what needs only
the annotation at once, what needs its image's size or its category's keypoint names when they
are known, and the rest, a few numbers per annotation, once the whole file is read (images and
categories may come after the annotations)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from labelgate.core.annotations import AnnotationFacts
from labelgate.core.report import Example
from labelgate.readers.common.drawn import drawn, marked, redrawn
from labelgate.readers.common.instances import Extent, check_extent, check_segmentation
from labelgate.readers.common.keypoints import (
    Stray,
    check_keypoint_count,
    check_keypoints,
    check_keypoints_in_box,
    check_skeleton,
    coco_outside_box,
    keypoint_names,
)

__all__ = ["CocoShapes", "carries_shapes"]

# what waits for an annotation's image: the image, its polygons' extent, its RLE's size, its
# keypoints' extent, its keypoints outside its box, and its example
_Sized = tuple[Any, Extent | None, tuple[int, int] | None, Extent | None, list[Stray], Example]

_DEFERRED = 1_000_000  # annotations whose image or category is not yet read, kept for the end


def carries_shapes(item: dict[str, Any]) -> bool:
    """Whether an annotation holds a mask or keypoints to judge (cheap: two key lookups)."""
    return "segmentation" in item or "keypoints" in item


@dataclass(slots=True)
class CocoShapes:
    """One COCO file's masks and keypoints; ``task`` the one the user named (its own shapes'
    faults are errors)."""

    facts: AnnotationFacts
    task: str | None = None
    names: dict[Any, int | None] = field(default_factory=dict)  # category id -> keypoint names
    sized: list[_Sized] = field(default_factory=list)
    counted: list[tuple[Any, int, Example]] = field(default_factory=list)
    skeletons: list[tuple[dict[str, Any], Example]] = field(default_factory=list)

    def category(self, item: dict[str, Any]) -> None:
        """Note a category's keypoint names, and its skeleton for ``settle`` to judge (a
        category handler adds no finding: a read that starts again forgets what it noted)."""
        cid = item.get("id")
        self.names[cid] = keypoint_names(item)
        example = Example(row=-1, id=f"category {cid}", source="categories")
        self.skeletons.append((item, example))

    def forget(self) -> None:
        """Forget what was noted: the file is read again from its start."""
        self.names.clear()
        self.sized.clear()
        self.counted.clear()
        self.skeletons.clear()

    def worker(self, facts: AnnotationFacts) -> CocoShapes:
        """A copy for judging a share of the annotations into ``facts``: the keypoint names
        known so far, nothing waiting."""
        return CocoShapes(facts, self.task, dict(self.names))

    def adopt(self, other: CocoShapes, shift: Callable[[Example], Example]) -> None:
        """What waits in a share's copy, its examples moved by ``shift`` (to the file's rows)."""
        room = max(0, _DEFERRED - len(self.sized))
        self.sized.extend((i, e, r, p, o, shift(x)) for i, e, r, p, o, x in other.sized[:room])
        room = max(0, _DEFERRED - len(self.counted))
        self.counted.extend((c, n, shift(x)) for c, n, x in other.counted[:room])

    def annotation(
        self,
        item: dict[str, Any],
        image: Any,
        images: Mapping[Any, tuple[float, float] | None],
        example: Example,
    ) -> None:
        """Judge one annotation's segmentation and keypoints."""
        marks = marked(self.facts)
        self._judge(item, image, images, example)
        redrawn(self.facts, marks, example, lambda e: _drawing(item, e, images.get(image)))

    def _judge(
        self,
        item: dict[str, Any],
        image: Any,
        images: Mapping[Any, tuple[float, float] | None],
        example: Example,
    ) -> None:
        extent = rle_size = points = None
        strays: list[Stray] = []
        if "segmentation" in item:
            extent, rle_size = check_segmentation(
                self.facts, item, example, self.task == "instance"
            )
        if "keypoints" in item:
            length, points = check_keypoints(self.facts, item, example, self.task == "keypoints")
            if points is not None:
                strays = coco_outside_box(item)
            cid = item.get("category_id")
            if length is not None:
                if cid in self.names:
                    self._count(cid, length, example)
                elif len(self.counted) < _DEFERRED:
                    self.counted.append((cid, length, example))
        if extent is None and rle_size is None and points is None:
            return
        if image in images:
            self._sized(images[image], extent, rle_size, points, strays, example)
        elif len(self.sized) < _DEFERRED:
            self.sized.append((image, extent, rle_size, points, strays, example))

    def settle(self, images: Mapping[Any, tuple[float, float] | None]) -> None:
        """What waited for the images and categories read after the annotations, and the
        categories' skeletons."""
        for item, example in self.skeletons:
            check_skeleton(self.facts, item, example, self.task == "keypoints")
        for image, extent, rle_size, points, strays, example in self.sized:
            self._sized(images.get(image), extent, rle_size, points, strays, example)
        for cid, length, example in self.counted:
            self._count(cid, length, example)
        self.sized.clear()
        self.counted.clear()
        self.skeletons.clear()

    def _count(self, cid: Any, length: int, example: Example) -> None:
        names = self.names.get(cid)
        if names is not None:
            check_keypoint_count(self.facts, length, names, example, self.task == "keypoints")

    def _sized(
        self,
        size: tuple[float, float] | None,
        extent: Extent | None,
        rle_size: tuple[int, int] | None,
        points: Extent | None,
        strays: list[Stray],
        example: Example,
    ) -> None:
        if strays:  # past the image they are LG028's, so judged with its size where known
            check_keypoints_in_box(self.facts, strays, size, example, self.task == "keypoints")
        if size is None:
            return  # an image without a size, or not listed: LG031 says so
        check_extent(self.facts, extent, rle_size, size, example, self.task == "instance")
        if points is not None:
            check_extent(
                self.facts, points, None, size, example, self.task == "keypoints", what="keypoints"
            )


def _drawing(item: dict[str, Any], example: Example, size: tuple[float, float] | None) -> Example:
    """``example`` with the drawing of its keypoints (those labelled, v > 0) or else of its first
    polygon, for the report's pictures; an RLE or a malformed list is drawn as its box, if any."""
    values = item.get("keypoints")
    if isinstance(values, list) and len(values) >= 3:
        triples = zip(values[0::3], values[1::3], values[2::3], strict=False)
        shown = [(x, y) for x, y, v in triples if isinstance(v, (int, float)) and v > 0]
        return drawn(example, "keypoints", shown, size)
    segmentation = item.get("segmentation")
    if isinstance(segmentation, list) and segmentation and isinstance(segmentation[0], list):
        flat = segmentation[0]
        return drawn(example, "polygon", zip(flat[0::2], flat[1::2], strict=False), size)
    return example
