"""The catalog entries of what a detection input carries besides its boxes: the images its
annotations name (LG041-LG043), instance masks (LG044-LG045) and keypoints (LG046-LG047, and
LG050 after the codes that came between). Part of ``labelgate.core.catalog``'s ``CATALOG``, in code
order."""

from __future__ import annotations

from labelgate.core.entry import Entry

__all__ = ["DETECTION_ENTRIES", "KEYPOINT_BOX_ENTRIES"]

DETECTION_ENTRIES: tuple[Entry, ...] = (
    Entry(
        "LG041",
        "image missing",
        "images an annotation names that are not in the images folder (`--images`, or the "
        "format's conventional place), or whose file name leaves it (`..`, an absolute name, a "
        "link pointing outside): the loader raises FileNotFoundError at that image",
        "error",
        "row",
        raised_by="reader",
    ),
    Entry(
        "LG042",
        "image undecodable",
        "image files that do not decode (truncated, not an image, an unknown format) or that "
        "claim more pixels than Pillow decodes (a decompression bomb): the loader raises at "
        "that image, often hours into training",
        "error",
        "row",
        raised_by="reader",
    ),
    Entry(
        "LG043",
        "image size differs from the annotation's",
        "images whose width and height, EXIF orientation applied, differ from what their "
        "annotation file records: detectron2 raises SizeMismatchError; boxes normalised by "
        "the recorded size land elsewhere",
        "error",
        "row",
        raised_by="reader",
    ),
    Entry(
        "LG044",
        "malformed instance mask",
        "COCO `segmentation` polygons (odd count, under 6 coordinates, not finite numbers) or RLEs "
        "(`size` not the image's, counts not covering it, undecodable), and YOLO segment rows (odd "
        "count, under 3 points), by annotation id or file:line: detectron2 drops them, pycocotools "
        "raises or decodes garbage",
        "warning",
        "row",
        shown_severity="error with --task instance, else warning",
        raised_by="reader",
    ),
    Entry(
        "LG045",
        "instance metadata disagrees with its mask",
        "a COCO annotation's `area` far from its polygon's or RLE's area, or `iscrowd` against "
        "COCO's convention (RLE for crowds, polygons otherwise)",
        "warning",
        "row",
        raised_by="reader",
    ),
    Entry(
        "LG046",
        "malformed keypoints",
        "COCO `keypoints` not 3 values per keypoint of the category, visibility outside {0, 1, 2}, "
        "non-finite coordinates, skeleton indices outside 1..len(keypoints); YOLO pose rows not "
        "5 + K x dims values for data.yaml's `kpt_shape`",
        "warning",
        "row",
        shown_severity="error with --task keypoints, else warning",
        raised_by="reader",
    ),
    Entry(
        "LG047",
        "keypoint metadata disagrees",
        "a COCO annotation's `num_keypoints` not the count of keypoints with visibility > 0, or "
        "keypoints on a crowd annotation (training skips crowds)",
        "warning",
        "row",
        raised_by="reader",
    ),
)

KEYPOINT_BOX_ENTRIES: tuple[Entry, ...] = (
    Entry(
        "LG050",
        "keypoint outside its own box",
        "labelled keypoints (v > 0) inside their image but outside their annotation's box: "
        "torchvision's and detectron2's keypoint R-CNN leave them out of the loss without a "
        "word (each keypoint's heatmap target is taken inside the roi, `valid_loc` false "
        "outside it), ultralytics pose trains them (its keypoint loss masks by visibility "
        "only); COCO's person boxes follow the visible mask, so clean data holds some: a "
        "count with the first annotations, by id and keypoint index",
        "info",
        "row",
        shown_severity="warning with --task keypoints or --framework torchvision/detectron2, "
        "else info",
        raised_by="reader",
    ),
)
