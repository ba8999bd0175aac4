"""Guards for training code: check targets on the CPU before they move to the device.

    from labelgate.torch import check_targets, guarded_collate

    check_targets(target, num_classes=4)                      # raises labelgate.LabelError
    loader = DataLoader(ds, collate_fn=guarded_collate(num_classes=4))

A bad target on CUDA is an asynchronous device-side assert that kills the process and points at a
later line; here it is a ``ValueError`` (``labelgate.LabelError``) naming the batch, the positions
and the values, raised where the batch is made. Only this module imports torch.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from labelgate.contract.classmap import ClassMap, load_class_map
from labelgate.core.options import strict_keywords
from labelgate.core.rules import ignore_inside, masks
from labelgate.errors import INSTALL_TORCH, LabelError
from labelgate.training.heads import find_head

try:
    import torch
except ImportError:  # pragma: no cover - exercised in a subprocess without torch
    raise ImportError(f"labelgate.torch needs torch: {INSTALL_TORCH}") from None

__all__ = ["check_state_dict", "check_targets", "guarded_collate", "stamp"]

_ACCEPTED = (torch.int64, torch.uint8)  # what CrossEntropyLoss takes as class indices
SHOWN = 10


@strict_keywords
def check_targets(
    target: torch.Tensor,
    num_classes: int,
    ignore_index: int = -100,
    *,
    weights: torch.Tensor | Sequence[float] | None = None,
) -> None:
    """Raise if ``CrossEntropyLoss`` would fail, assert or return NaN on ``target``.

    Class-index targets of any shape: ``(N,)`` for one label per row, ``(N, L)`` for tokens,
    ``(N, H, W)`` for segmentation. The rules are PyTorch's: int64 (or uint8) values in
    ``[0, num_classes)`` or equal to ``ignore_index``, which must lie outside that range; with
    ``reduction='mean'`` at least one usable target, and with class weights a non-zero total weight.

    Args:
        target: the target tensor, on the CPU (on a GPU the check costs a synchronisation).
        num_classes: K, the number of logits.
        ignore_index: the value the loss skips.
        weights: the loss's class weights, if any.

    Raises:
        LabelError: naming the rule broken, the first positions and their values.
        OptionError: a keyword that is not one of these, with the closest (a ``TypeError``).
    """
    if not isinstance(target, torch.Tensor):
        raise LabelError(f"target must be a torch.Tensor, got {type(target).__name__}")
    if target.is_floating_point() or target.is_complex():
        fractional = target.is_floating_point() and bool((target != target.trunc()).any())
        why = (
            "fractional values are corrupted labels, not a dtype issue"
            if fractional
            else "cast with .long()"
        )
        raise LabelError(f"target dtype {target.dtype} is not a class index type: {why}")
    if target.dtype not in _ACCEPTED:
        raise LabelError(
            f"target dtype {target.dtype}: CrossEntropyLoss takes int64 (or uint8) class indices "
            "and raises NotImplementedError for others; cast with .long()"
        )
    if ignore_inside(num_classes, ignore_index):
        raise LabelError(
            f"ignore_index={ignore_index} lies inside [0, {num_classes}): class {ignore_index} "
            "would silently never be learned"
        )
    judged = masks(target, num_classes, ignore_index)
    bad = judged.rejected
    if bool(bad.any()):
        positions = bad.nonzero()
        count = positions.shape[0]
        shown = [
            f"{tuple(p.tolist()) if p.numel() > 1 else p.item()}: {target[tuple(p.tolist())].item()}"
            for p in positions[:SHOWN]
        ]
        more = f" and {count - SHOWN} more" if count > SHOWN else ""
        raise LabelError(
            f"{count} target(s) outside [0, {num_classes}) and not ignore_index={ignore_index} "
            f"(position: value) {', '.join(shown)}{more}"
        )
    usable = judged.usable
    if not bool(usable.any()):
        raise LabelError(
            f"no usable target: all {target.numel()} are ignore_index={ignore_index}; "
            "the mean loss is NaN"
        )
    if weights is not None:
        w = torch.as_tensor(weights, dtype=torch.float64)
        if w.shape != (num_classes,):
            raise LabelError(f"{w.numel()} class weights for {num_classes} classes")
        if float(w[target[usable].long().cpu()].sum()) == 0.0:
            raise LabelError("the usable targets all have class weight 0: the mean loss is NaN")


@strict_keywords
def guarded_collate(
    collate_fn: Callable[[list[Any]], Any] | None = None,
    *,
    num_classes: int,
    ignore_index: int = -100,
    weights: torch.Tensor | Sequence[float] | None = None,
    target: int | str | Callable[[Any], torch.Tensor] = -1,
) -> Callable[[list[Any]], Any]:
    """Wrap a DataLoader's collate function so every batch's targets are checked as it is made.

    Args:
        collate_fn: the collate function to wrap (default: ``torch.utils.data.default_collate``).
        num_classes: as for ``check_targets``.
        ignore_index: as for ``check_targets``.
        weights: as for ``check_targets``.
        target: where the target is in a collated batch: an index into a tuple or list (default
            the last element), a key into a mapping (default ``"labels"``, ``"label"`` or
            ``"target"``), or a function.

    Returns:
        A collate function that raises ``labelgate.LabelError`` naming the batch index. The
        index counts batches in the order the DataLoader yields them, with worker processes too
        (worker w of W makes batches w, w+W, w+2W...).
    """
    inner = collate_fn or torch.utils.data.default_collate
    made = [0]

    def collate(samples: list[Any]) -> Any:
        batch = inner(samples)
        info = torch.utils.data.get_worker_info()
        index = made[0] if info is None else made[0] * info.num_workers + info.id
        made[0] += 1
        tensor = _target_of(batch, target)
        try:
            check_targets(tensor, num_classes, ignore_index, weights=weights)
        except LabelError as exc:
            raise LabelError(f"batch {index}: {exc}") from None
        return batch

    return collate


def _target_of(batch: Any, where: int | str | Callable[[Any], torch.Tensor]) -> torch.Tensor:
    if callable(where):
        found = where(batch)
    elif isinstance(batch, torch.Tensor):
        found = batch
    elif isinstance(batch, Mapping):
        key = (
            where
            if isinstance(where, str)
            else next((k for k in ("labels", "label", "target") if k in batch), None)
        )
        if key is None:
            raise LabelError(
                "the batch is a mapping without 'labels': name the target's key, e.g. target='y'"
            )
        found = batch[key]
    elif isinstance(where, str):
        raise LabelError(
            f"the batch is a {type(batch).__name__}, not a mapping: give target as an index"
        )
    else:
        found = batch[where]
    if not isinstance(found, torch.Tensor):
        raise LabelError(f"the batch's target is a {type(found).__name__}, not a tensor")
    return found


_STAMP = "labelgate_class_map"
_NESTED = ("state_dict", "model_state_dict", "model", "module")


def _class_map(class_map: ClassMap | str | Sequence[str]) -> ClassMap:
    if isinstance(class_map, ClassMap):
        return class_map
    if isinstance(class_map, str):
        return load_class_map(class_map)
    return ClassMap.from_names(list(class_map))


def _state(checkpoint: Mapping[str, Any]) -> Mapping[str, Any]:
    """The state dict inside a checkpoint (Lightning's ``state_dict``, a ``model`` key...)."""
    for key in _NESTED:
        inner = checkpoint.get(key)
        if isinstance(inner, Mapping) and any(isinstance(v, torch.Tensor) for v in inner.values()):
            return inner
    return checkpoint


def stamp(state_dict: Mapping[str, Any], class_map: ClassMap | str | Sequence[str]) -> None:
    """Record the class map's fingerprint and size in ``state_dict``'s metadata (what
    ``torch.save`` keeps and ``load_state_dict`` ignores), for ``check_state_dict``."""
    found = _class_map(class_map)
    meta = getattr(state_dict, "_metadata", None)
    if meta is None:
        from collections import OrderedDict

        meta = OrderedDict()
        state_dict._metadata = meta  # type: ignore[attr-defined]
    meta.setdefault("", {})[_STAMP] = {
        "fingerprint": found.fingerprint(),
        "classes": len(found.entries),
    }


@strict_keywords
def check_state_dict(
    checkpoint: Mapping[str, Any],
    class_map: ClassMap | str | Sequence[str],
    *,
    head: str | None = None,
) -> str:
    """Before ``load_state_dict``: the classifier head's outputs against the class map, and the
    map stamped by ``stamp`` (if any) against this one, so that a class added, a trailing
    blank line read as a class, or the same count in another order is caught here, not as a
    ``size mismatch`` at load or a silently relabelled model after it.

    Args:
        checkpoint: a state dict, or a checkpoint holding one (``state_dict``, ``model``...).
        class_map: the map the model is built from now: a ClassMap, a file, or the names.
        head: the head's parameter prefix (``classifier``, ``fc``); default: the head
            ``labelgate.training.heads.find_head`` chooses for the model family the names show
            under any prefix (``1.``, DDP's ``module.``, ``_orig_mod.``, ``model.``): an R-CNN
            predictor's ``cls_score``, not ``bbox_pred``; dense detection heads counted per
            anchor; else the last layer with a weight and a bias of as many outputs. A detection
            head with a background logit (torchvision's, detectron2's R-CNN) fits a class map
            with or without the background.

    Returns:
        The head's prefix.

    Raises:
        LabelError: the head's outputs differ from the map's size, or the stamped map from this.
    """
    state = _state(checkpoint)
    found = _class_map(class_map)
    shapes = {k: tuple(v.shape) for k, v in state.items() if isinstance(v, torch.Tensor)}
    chosen = find_head(shapes, head=head).chosen
    name, outputs, classes = chosen.name, chosen.classes, len(found.entries)
    if outputs != classes and not (chosen.background and outputs == classes + 1):
        blank = found.trailing_blank_lines
        why = (
            f"; {found.origin} ends with {blank} blank line(s), which a loader splitting on "
            "newlines reads as classes"
            if blank and outputs == classes + blank
            else ""
        )
        counted = (
            f" ({chosen.family}: {chosen.outputs} outputs"
            + (f" for {chosen.outputs // outputs} anchors" if chosen.outputs != outputs else "")
            + ("; one of them is the background" if chosen.background else "")
            + ")"
            if chosen.family != "generic"
            else ""
        )
        raise LabelError(
            f"the checkpoint's head {name!r} has {outputs} outputs{counted} and the class map "
            f"{found.origin} names {classes} classes{why}: load_state_dict would fail with "
            "'size mismatch', or a rebuilt head would lose the trained one. Check the map with "
            "labelgate validate --class-names (LG009), and pin it (labelgate pin) so a change "
            "shows in labelgate diff"
        )
    meta = getattr(state, "_metadata", None) or {}
    stamped = meta.get("", {}).get(_STAMP) if isinstance(meta, Mapping) else None
    if stamped and stamped.get("fingerprint") != found.fingerprint():
        raise LabelError(
            f"the checkpoint was trained with another class map of {stamped.get('classes')} "
            f"classes ({stamped.get('fingerprint')}); {found.origin} is "
            f"{found.fingerprint()}: the same index names another class (a reordered or renamed "
            "map). Use the map the checkpoint was trained with"
        )
    return name
