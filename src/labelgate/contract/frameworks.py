"""The conventions of the frameworks that train on detection and segmentation labels, each read in
the framework's own source (file:line@version, cited per field): the background index and whether
``num_classes`` counts it, how category ids become class indices, what happens to each bad target,
and whether images without boxes are kept.

Data only, and small functions over it: the run applies them (``labelgate.run.frameworks``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = [
    "COCO80_IDS",
    "FRAMEWORKS",
    "ULTRALYTICS_CONVERT",
    "Framework",
    "check_framework",
    "cite",
    "coco80_mapping",
    "framework_of",
]

TORCHVISION = "torchvision 0.23.0"
DETECTRON2 = "detectron2 02b5c4e2"
MMDET = "mmdet 3.3.0"
ULTRALYTICS = "ultralytics 8.4.190"
MMSEG = "mmsegmentation 1.2.2"


@dataclass(frozen=True, slots=True)
class Framework:
    """One framework's conventions.

    Attributes:
        name: the ``--framework`` value.
        task: the task it trains here (``detection`` or ``segmentation``).
        background: the background index its detection heads reserve (``None``: none).
        counts_background: whether its ``num_classes`` counts that background.
        ids: how category ids become indices: ``as-is`` (the id is the index),
            ``contiguous`` (the rank of the id among the sorted category ids), ``by-name``
            (the position of the category's name in the configured class names) or
            ``zero-based`` (the file holds indices 0..nc-1).
        bad_box: what a box without area does: ``raise`` (the training step fails), ``drop``
            (the box is left out of training) or ``drop-image`` (the image is left out).
        empty_images: what an image without boxes becomes: ``kept`` (a negative) or
            ``dropped`` (by the default configuration).
        out_of_range: what a label >= num_classes does: ``device-assert`` (IndexError on the
            CPU), ``drop-image`` or ``dropped`` (the annotation is ignored).
        severity: the default severity of the checks whose consequence the framework
            decides (the contract's own ``severity`` overrides them).
        sources: convention -> its citation in the framework's source.
    """

    name: str
    task: str
    background: int | None
    counts_background: bool
    ids: str
    bad_box: str
    empty_images: str
    out_of_range: str
    severity: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    sources: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))


def _frozen(**items: str) -> Mapping[str, str]:
    return MappingProxyType(dict(items))


FRAMEWORKS: Mapping[str, Framework] = MappingProxyType(
    {
        "torchvision": Framework(
            name="torchvision",
            task="detection",
            background=0,
            counts_background=True,
            ids="as-is",
            bad_box="raise",
            empty_images="kept",
            out_of_range="device-assert",
            severity=_frozen(LG027="error", LG029="error", LG032="error", LG050="warning"),
            sources=_frozen(
                background=f"torchvision/models/detection/faster_rcnn.py:74@{TORCHVISION} "
                "('number of output classes of the model (including the background)'); "
                f"roi_heads.py:596@{TORCHVISION} (unmatched proposals get label 0)",
                ids=f"torchvision/models/detection/roi_heads.py:646@{TORCHVISION} "
                "(target['labels'] used as they are)",
                bad_box=f"torchvision/models/detection/generalized_rcnn.py:101-111@{TORCHVISION} "
                "(boxes[:, 2:] <= boxes[:, :2] -> 'All bounding boxes should have positive "
                "height and width')",
                out_of_range=f"torchvision/models/detection/roi_heads.py:35@{TORCHVISION} "
                "(F.cross_entropy(class_logits, labels): IndexError on the CPU, a device-side "
                "assert on CUDA)",
                empty_images=f"torchvision/models/detection/roi_heads.py:578-583@{TORCHVISION} "
                "('Background image': an image without boxes, every proposal labelled 0)",
                keypoint_box=f"torchvision/models/detection/roi_heads.py:147-160@{TORCHVISION} "
                "(keypoints_to_heatmap: a keypoint outside its roi gets valid_loc false, valid = "
                "valid_loc & vis, and keypointrcnn_loss, :301-328, trains only the valid ones; "
                "the ground-truth boxes are among the rois, add_gt_proposals, :649)",
            ),
        ),
        "detectron2": Framework(
            name="detectron2",
            task="detection",
            background=None,
            counts_background=False,
            ids="contiguous",
            bad_box="drop",
            empty_images="dropped",
            out_of_range="raise",
            severity=_frozen(LG027="warning", LG050="warning"),
            sources=_frozen(
                background=f"detectron2/modeling/roi_heads/fast_rcnn.py:235-236@{DETECTRON2} "
                "(cls_score = Linear(..., num_classes + 1): the background is the extra logit, "
                "num_classes counts the object classes only)",
                ids=f"detectron2/data/datasets/coco.py:81,102-103@{DETECTRON2} "
                "(cat_ids = sorted(getCatIds()); thing_dataset_id_to_contiguous_id = "
                "{id: i for i, id in enumerate(cat_ids)})",
                out_of_range=f"detectron2/data/datasets/coco.py:211-219@{DETECTRON2} (a "
                "category_id not in the categories raises KeyError)",
                unique_ids=f"detectron2/data/datasets/coco.py:140-147@{DETECTRON2} "
                "(load_coco_json asserts the annotation ids of the images it loads are unique, "
                "unless the file's name holds 'minival': AssertionError)",
                bad_box=f"detectron2/data/detection_utils.py:489-512@{DETECTRON2} "
                "(filter_empty_instances: boxes whose width or height is <= 1e-5 are dropped), "
                f"called by dataset_mapper.py:142@{DETECTRON2}",
                empty_images=f"detectron2/config/defaults.py:128@{DETECTRON2} "
                f"(FILTER_EMPTY_ANNOTATIONS = True) -> data/build.py:46-72,277-278@{DETECTRON2} "
                "('Removed N images with no usable annotations')",
                keypoint_box=f"detectron2/structures/keypoints.py:143-156@{DETECTRON2} "
                "(_keypoints_to_heatmap: valid_loc false outside the roi, valid = valid_loc & "
                f"vis), kept by modeling/roi_heads/keypoint_head.py:64-73,87-89@{DETECTRON2} "
                "(keypoint_rcnn_loss: cross_entropy over the valid keypoints only; the ground "
                "truth is among the proposals, proposal_append_gt)",
            ),
        ),
        "mmdet": Framework(
            name="mmdet",
            task="detection",
            background=None,
            counts_background=False,
            ids="by-name",
            bad_box="drop",
            empty_images="dropped",
            out_of_range="dropped",
            severity=_frozen(LG027="warning", LG030="warning"),
            sources=_frozen(
                background=f"mmdet/models/roi_heads/bbox_heads/bbox_head.py:76-80@{MMDET} "
                "(cls_channels = num_classes + 1: the background is the extra logit)",
                ids=f"mmdet/datasets/coco.py:70-72@{MMDET} (cat_ids = get_cat_ids(cat_names="
                "metainfo['classes']); cat2label = {cat_id: i ...})",
                out_of_range=f"mmdet/datasets/coco.py:155-156@{MMDET} (an annotation whose "
                "category is not in metainfo['classes'] is skipped, silently: mmdet#9611)",
                unique_ids=f"mmdet/datasets/coco.py:57,93-96@{MMDET} (CocoDataset's "
                "ANN_ID_UNIQUE = True: load_data_list asserts the annotation ids unique)",
                bad_box=f"mmdet/datasets/coco.py:141-147@{MMDET} (a box with no area inside the "
                "image, area <= 0, or w < 1 or h < 1 is skipped)",
                empty_images=f"mmdet/datasets/coco.py:178,196@{MMDET} (filter_empty_gt) and "
                f"mmdet/.mim/configs/_base_/datasets/coco_detection.py:48@{MMDET} "
                "(filter_cfg=dict(filter_empty_gt=True, min_size=32))",
            ),
        ),
        "ultralytics": Framework(
            name="ultralytics",
            task="detection",
            background=None,
            counts_background=False,
            ids="zero-based",
            bad_box="drop",
            empty_images="kept",
            out_of_range="drop-image",
            severity=_frozen(LG004="error", LG027="warning", LG028="warning"),
            sources=_frozen(
                background=f"ultralytics/data/utils.py:486-490@{ULTRALYTICS} (classes 0..nc-1, "
                "no background index)",
                ids=f"ultralytics/data/utils.py:486-490@{ULTRALYTICS} (the class column is the "
                "index: max class < nc)",
                bad_box=f"ultralytics/data/augment.py:776-777@{ULTRALYTICS} (Mosaic clips the "
                "boxes and removes those of zero area; a negative width or height fails "
                "verify_image_label, utils.py:482, and the image is dropped: LG028)",
                corrupt=f"ultralytics/data/utils.py:480-482,513-516@{ULTRALYTICS} (a coordinate "
                "above 1.01, or below 0 beyond -0.01 or with a negative size, fails an assert: "
                "the image and its labels are ignored as corrupt, with a warning)",
                out_of_range=f"ultralytics/data/utils.py:487-490,513-516@{ULTRALYTICS} ('Label "
                "class N exceeds dataset class count': the image is ignored as corrupt)",
                empty_images=f"ultralytics/data/utils.py:500-505@{ULTRALYTICS} (an empty or missing "
                "label file: zero boxes, the image kept as a background image)",
            ),
        ),
        "mmseg": Framework(
            name="mmseg",
            task="segmentation",
            background=None,
            counts_background=False,
            ids="as-is",
            bad_box="raise",
            empty_images="kept",
            out_of_range="device-assert",
            sources=_frozen(
                reduce_zero_label=f"mmseg/datasets/transforms/loading.py:112-116@{MMSEG} "
                "(reduce_zero_label: 0 -> 255, every label minus 1, 254 -> 255)",
                ignore_index=f"mmseg/models/decode_heads/decode_head.py:101@{MMSEG} "
                "(ignore_index=255)",
                out_of_range="mmsegmentation#1180 (a device-side assert from labels past "
                "num_classes after reduce_zero_label)",
            ),
        ),
    }
)


def framework_of(name: str | None) -> Framework | None:
    """The framework named ``name`` (``None``: none named).

    Raises:
        KeyError: no framework has that name.
    """
    return None if name is None else FRAMEWORKS[name]


def check_framework(name: str | None, reduce_zero_label: bool | None) -> None:
    """Refuse a framework no entry describes, and ``reduce_zero_label`` without mmseg.

    Raises:
        ContractError: naming the key.
    """
    from labelgate.errors import ContractError

    if name is not None and name not in FRAMEWORKS:
        raise ContractError(
            f"must be one of {', '.join(FRAMEWORKS)}, got {name!r}", key="framework"
        )
    if reduce_zero_label and name != "mmseg":
        raise ContractError(
            "mmseg's transform of the masks: it needs framework mmseg (--framework mmseg)",
            key="reduce_zero_label",
        )


# COCO's 80 category ids (1..90 without the 10 the 2014 release left out): the ids ultralytics'
# coco91_to_coco80_class numbers 0..79 (ultralytics/data/converter.py:39-136@ultralytics 8.4.190).
COCO80_IDS = tuple(sorted(set(range(1, 91)) - {12, 26, 29, 30, 45, 66, 68, 69, 71, 83}))
ULTRALYTICS_CONVERT = f"ultralytics/data/converter.py:250,323@{ULTRALYTICS}"


def coco80_mapping(ids: list[int]) -> tuple[dict[int, int], bool]:
    """How ultralytics' ``convert_coco`` numbers COCO category ids (converter.py:323:
    ``cls = coco80[category_id - 1] if cls91to80 else category_id - 1``): through COCO's 80 when
    every id is one of COCO's own (the default ``cls91to80=True``), else ``category_id - 1``
    (the only setting that reads other ids). Returns the mapping and whether it is COCO's 80."""
    if set(ids) <= set(COCO80_IDS):
        return {cid: COCO80_IDS.index(cid) for cid in ids}, True
    return {cid: cid - 1 for cid in ids}, False


def cite(source: str) -> str:
    """A citation's file:line@version, without its quotation."""
    return source.split(" (")[0]
