"""A PyTorch Lightning callback: validate the train and validation datasets when fitting starts,
and stop before the first step when their labels fail.

    from labelgate.integrations.lightning import LabelgateCallback

    trainer = lightning.Trainer(callbacks=[LabelgateCallback(classes=10)])
    trainer.fit(model, datamodule=dm)   # raises LabelsRejected before step 1 on bad labels

Needs ``pip install 'labelgate[lightning]'``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lightning.pytorch.callbacks import Callback

from labelgate.api import ValidationReport
from labelgate.integrations import LabelsRejected, check_dataset, checked_options

__all__ = ["LabelgateCallback", "LabelsRejected"]


class LabelgateCallback(Callback):
    """Validate the datasets of the train and validation dataloaders on ``on_train_start``
    (after setup, before the first step); fail the fit with ``LabelsRejected``.

    Args:
        splits: which dataloaders to check (``train``, ``val``).
        target_getter: for a Dataset without ``.targets``: a function of one item returning its
            target.
        options: as ``labelgate.validate`` takes them (``classes``, ``ignore_index``,
            ``batch_size``, ``class_names``, ``contract``...).

    Attributes:
        reports: the report of each split checked.
    """

    def __init__(
        self,
        *,
        splits: tuple[str, ...] = ("train", "val"),
        target_getter: Callable[[Any], Any] | None = None,
        **options: Any,
    ) -> None:
        checked_options(options, "LabelgateCallback")
        self.splits = splits
        self.options = dict(options, target_getter=target_getter)
        self.reports: dict[str, ValidationReport] = {}

    def on_train_start(self, trainer: Any, pl_module: Any) -> None:
        loaders = {"train": trainer.train_dataloader, "val": trainer.val_dataloaders}
        for split in self.splits:
            for i, loader in enumerate(_loaders(loaders.get(split))):
                name = split if i == 0 else f"{split}[{i}]"
                self.reports[name] = check_dataset(loader.dataset, name, **self.options)


def _loaders(found: Any) -> list[Any]:
    """Lightning's dataloaders as a list (one, a list, a dict, or a CombinedLoader of them)."""
    if found is None:
        return []
    inner = getattr(found, "iterables", found)
    if isinstance(inner, dict):
        return [x for x in inner.values() if hasattr(x, "dataset")]
    if isinstance(inner, (list, tuple)):
        return [x for x in inner if hasattr(x, "dataset")]
    return [inner] if hasattr(inner, "dataset") else []
