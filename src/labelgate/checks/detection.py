"""What a label past K means in detection targets: torchvision's detection models count the
background in ``num_classes`` (``torchvision/models/detection/faster_rcnn.py``: "num_classes
(int): number of output classes of the model (including the background)"), so object labels run
1..N with ``num_classes = N + 1``; ``roi_heads.fastrcnn_loss`` takes them as class-index targets of
``F.cross_entropy`` over those N + 1 logits."""

from __future__ import annotations

from labelgate.checks.context import Context

__all__ = ["background_cause", "background_fix", "detection_ids_cause"]


def background_cause(ctx: Context, values: list[int]) -> str | None:
    """The cause of labels reaching K when a background index is declared: ``num_classes``
    must count the background (``None`` without a background, or no label at K)."""
    background, k = ctx.background, ctx.k
    if background is None or not values or values[0] != k:
        return None
    return (
        f"num_classes counts the background: with background index {background}, "
        f"torchvision's detection models take num_classes = object classes + 1 "
        f"(FasterRCNN: 'number of output classes of the model (including the background)'), "
        f"so objects labelled up to {values[-1]} need num_classes = {values[-1] + 1}"
    )


def background_fix(ctx: Context, values: list[int]) -> str:
    """The closing sentence of LG004 when ``background_cause`` applies."""
    return (
        f"Set num_classes (--classes) to {values[-1] + 1}, the objects' classes and the "
        f"background {ctx.background}: the background is a class of the model, not a widened "
        "head hiding a bad label."
    )


def detection_ids_cause(k: int) -> str:
    """The cause of category ids 1..K with 0 unused in a detection file, where no background
    index is declared: the detection convention, not a 1-based classification source."""
    return (
        f"the values are K={k} and class 0 is unused: detection files number their categories "
        "from 1 because torchvision's detection models keep 0 for the background "
        "(num_classes = K + 1); validate with --task detection --background 0 (K then counts "
        "the background)"
    )
