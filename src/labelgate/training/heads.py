"""The classification head of a checkpoint, found from its parameter names and shapes alone.

Works on ``name -> shape`` (a torch state dict's, or a safetensors header's), so no tensor is read
and torch is not needed. Every layer that could be a head is reported; the one chosen follows the
model family that the names reveal (layouts from torchvision's, timm's and transformers' sources,
cited in docs/resume.md):

- an R-CNN box predictor: a ``cls_score`` layer beside a ``bbox_pred`` of four times its outputs
  (torchvision's ``FastRCNNPredictor``, ``num_classes`` outputs with the background) or four times
  its outputs less one, or four (detectron2's ``FastRCNNOutputLayers``, ``num_classes + 1``), or
  torchvision's ``roi_heads.box_predictor.cls_score`` by name; never ``bbox_pred``;
- RetinaNet and FCOS: ``head.classification_head.cls_logits``, ``num_anchors * num_classes``
  outputs, the anchors read from ``head.regression_head.bbox_reg`` (``4 * num_anchors``);
- SSD and SSDlite: ``head.classification_head.module_list.<level>``, per level likewise;
- DeepLabV3 and FCN: ``classifier.4`` (``aux_classifier.4`` is the auxiliary loss's); LR-ASPP:
  ``classifier.high_classifier``;
- timm ``head.fc`` / ``head`` / ``fc`` / ``classifier``, torchvision's ``fc``, ``classifier.N``
  and ``heads.head``; Hugging Face ``classifier`` / ``classifier.out_proj`` / ``score``;
- Hugging Face ``lm_head`` (one output per vocabulary token: the K of token-level labels);
- otherwise the last layer with a weight of two or more dimensions and a bias of as many outputs
  (never a box regression layer).

Each layout is found under any prefix that ends at a dot: a ``Sequential``'s index (``1.``), a
wrapper's attribute, DDP's ``module.``, ``torch.compile``'s ``_orig_mod.``, Lightning's ``model.``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from labelgate.errors import LabelError

__all__ = ["Head", "HeadSearch", "find_head"]

Shape = Sequence[int]

# Names that can be a classification layer (the last component of a layer's prefix).
HEADISH = re.compile(
    r"(?:^|\.)(?:fc|head|heads|classifier|cls_score|cls_logits|score|logits|out_proj|"
    r"last_linear|high_classifier|low_classifier|mask_fcn_logits|module_list\.\d+(?:\.\d+)?|"
    r"(?:aux_)?classifier\.\d+|head\.fc|heads\.head|lm_head)$"
)
# Any prefix that ends at a dot, or none. A model's layers keep their own names under a wrapper:
# DDP holds the model as ``self.module`` (torch/nn/parallel/distributed.py:959@torch 2.13.0, whose
# note at :617-619 says to strip "module." before loading), torch.compile's OptimizedModule as
# ``self._orig_mod`` (torch/_dynamo/eval_frame.py:465@torch 2.13.0), a Sequential by index and a
# LightningModule by its attribute (``model.``), each one more dotted component in the keys.
ROOT = r"(?P<root>(?:.+\.)?)"
ROI = re.compile(rf"^{ROOT}roi_heads\.box_predictor\.cls_score$")
PREDICTOR = re.compile(rf"^{ROOT}cls_score$")
DENSE = re.compile(rf"^{ROOT}head\.classification_head\.cls_logits$")
SSD = re.compile(
    rf"^{ROOT}head\.classification_head\.module_list\.(?P<level>\d+)(?P<rest>(?:\.\d+)*)$"
)
SEGMENTATION = re.compile(rf"^{ROOT}classifier\.(?:4|high_classifier)$")
# Box regression layers (R-CNN's bbox_pred, RetinaNet's bbox_reg, FCOS's bbox_ctrness): never the
# classification head, whatever comes last.
REGRESSION = re.compile(r"(?:^|\.)(?:bbox_pred|bbox_reg|bbox_ctrness)$")
# Most specific first: the last layer of the first root found wins.
NAMED_ROOTS = (
    ("classifier.out_proj", "Hugging Face (RoBERTa-style classifier)"),
    ("classifier", "timm / torchvision / Hugging Face classifier"),
    ("head.fc", "timm (head.fc)"),
    ("heads.head", "torchvision ViT (heads.head)"),
    ("head", "timm (head)"),
    ("score", "Hugging Face (score, decoder models)"),
    ("fc", "timm / torchvision (fc)"),
    ("last_linear", "pretrainedmodels (last_linear)"),
    ("lm_head", "Hugging Face (lm_head, one output per vocabulary token)"),
)


@dataclass(frozen=True, slots=True)
class Head:
    """A layer that can be a classification head.

    Attributes:
        name: the layer's prefix (``roi_heads.box_predictor.cls_score``).
        outputs: the weight's first dimension.
        classes: the classes it predicts: ``outputs``, or ``outputs / anchors`` for the dense
            detection heads.
        family: the model family whose layout chose it (or ``generic``).
        background: whether the family's ``num_classes`` counts a background class.
    """

    name: str
    outputs: int
    classes: int
    family: str = "generic"
    background: bool = False


@dataclass(frozen=True, slots=True)
class HeadSearch:
    """What ``find_head`` found: the head chosen, why, and every other candidate."""

    chosen: Head
    why: str
    candidates: list[Head] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        """As JSON."""
        return {
            "head": self.chosen.name,
            "outputs": self.chosen.outputs,
            "classes": self.chosen.classes,
            "family": self.chosen.family,
            "background": self.chosen.background,
            "why": self.why,
            "candidates": [{"name": c.name, "outputs": c.outputs} for c in self.candidates],
        }


def _layers(shapes: Mapping[str, Shape]) -> dict[str, tuple[tuple[int, ...], bool]]:
    """Layer prefix -> (weight shape, has a bias of as many outputs), in the mapping's order."""
    layers: dict[str, tuple[tuple[int, ...], bool]] = {}
    for key, shape in shapes.items():
        if not key.endswith(".weight") or len(shape) < 2:
            continue
        prefix = key[: -len(".weight")]
        bias = shapes.get(f"{prefix}.bias")
        layers[prefix] = (tuple(shape), bias is not None and tuple(bias) == tuple(shape[:1]))
    return layers


def find_head(shapes: Mapping[str, Shape], *, head: str | None = None) -> HeadSearch:
    """The classification head of a state dict given as ``name -> shape``.

    Args:
        shapes: every parameter's name and shape, in the state dict's order.
        head: the head's prefix, overriding the search (its family's reading still applies).

    Returns:
        The head chosen and every candidate.

    Raises:
        LabelError: ``head`` names no layer, or no layer can be a head.
    """
    layers = _layers(shapes)
    candidates = [Head(n, w[0], w[0]) for n, (w, _) in layers.items() if HEADISH.search(n)]
    if head is not None:
        if head not in layers:
            raise LabelError(f"no head {head!r} in the checkpoint (give head= the layer's prefix)")
        return HeadSearch(_read(head, layers), "given as head=", candidates)
    for name in layers:
        family = _predictor(name, layers)
        if family is not None:
            why = f"{family} box predictor (cls_score beside bbox_pred)"
            return HeadSearch(_read(name, layers), why, candidates)
    for name, (_, has_bias) in layers.items():
        if DENSE.match(name) or (SSD.match(name) and has_bias):
            return HeadSearch(_read(name, layers), "torchvision dense detection head", candidates)
    for name, (shape, _) in layers.items():
        if SEGMENTATION.match(name) and len(shape) == 4:  # aux_classifier.4: no dot before
            return HeadSearch(_read(name, layers), "torchvision segmentation head", candidates)
    for root, family in NAMED_ROOTS:
        pattern = re.compile(rf"(?:^|\.){re.escape(root)}(?:\.\d+)?$")
        found = [n for n in layers if pattern.search(n)]  # aux_classifier: no dot before
        if found:
            name = found[-1]
            out = layers[name][0][0]
            return HeadSearch(Head(name, out, out, family), f"named {root!r}", candidates)
    biased = [n for n, (_, b) in layers.items() if b and not REGRESSION.search(n)]
    if not biased:
        raise LabelError("no layer with a weight and a bias in the checkpoint: give head=")
    name = biased[-1]
    out = layers[name][0][0]
    found_head = Head(name, out, out)
    if not any(c.name == name for c in candidates):
        candidates.append(found_head)
    return HeadSearch(found_head, "the last layer with a weight and a bias", candidates)


def _read(name: str, layers: Mapping[str, tuple[tuple[int, ...], bool]]) -> Head:
    """A layer read by its family's layout (anchors divided out of dense detection heads)."""
    shape = layers[name][0]
    outputs = shape[0]
    family = _predictor(name, layers)
    if family is not None:
        return Head(name, outputs, outputs, family, background=True)
    m = DENSE.match(name)
    if m:
        reg = layers.get(f"{m.group('root')}head.regression_head.bbox_reg")
        anchors = reg[0][0] // 4 if reg else 1
        family = "torchvision RetinaNet/FCOS"
        return Head(name, outputs, _per_anchor(name, outputs, anchors), family, background=True)
    m = SSD.match(name)
    if m:
        reg = layers.get(
            f"{m.group('root')}head.regression_head.module_list.{m.group('level')}{m.group('rest')}"
        )
        anchors = reg[0][0] // 4 if reg else 1
        return Head(
            name, outputs, _per_anchor(name, outputs, anchors), "torchvision SSD", background=True
        )
    if SEGMENTATION.match(name):
        return Head(name, outputs, outputs, "torchvision segmentation")
    return Head(name, outputs, outputs)


def _predictor(name: str, layers: Mapping[str, tuple[tuple[int, ...], bool]]) -> str | None:
    """The R-CNN family of a ``cls_score`` layer, read from its ``bbox_pred`` twin, or ``None``.

    torchvision's FastRCNNPredictor: ``cls_score = nn.Linear(in_channels, num_classes)`` and
    ``bbox_pred = nn.Linear(in_channels, num_classes * 4)``, ``num_classes`` "including
    background" (torchvision/models/detection/faster_rcnn.py:347-360@torchvision 0.23.0).
    detectron2's FastRCNNOutputLayers: ``cls_score = nn.Linear(input_size, num_classes + 1)`` and
    ``bbox_pred`` of ``num_classes * box_dim`` outputs, or ``box_dim`` class-agnostic
    (detectron2/modeling/roi_heads/fast_rcnn.py:236-239@02b5c4e2). Both heads hold one logit
    more than the objects (the background): ``background`` in the ``Head``.
    """
    m = PREDICTOR.match(name)
    if m is None:
        return None
    outputs = layers[name][0][0]
    twin = layers.get(f"{m.group('root')}bbox_pred")
    regressed = twin[0][0] if twin is not None else None
    if regressed == 4 * outputs:
        return "torchvision R-CNN"
    if outputs > 1 and regressed in (4 * (outputs - 1), 4):
        return "detectron2 R-CNN"
    return "torchvision R-CNN" if ROI.match(name) else None


def _per_anchor(name: str, outputs: int, anchors: int) -> int:
    if anchors < 1 or outputs % anchors:
        raise LabelError(
            f"{name!r} has {outputs} outputs, not a multiple of its {anchors} anchors: the "
            "regression head does not match the classification head"
        )
    return outputs // anchors
