"""A PyTorch Lightning callback: validate the train and validation datasets when fitting starts,
in the batches their real dataloaders make, and stop before the first step when they fail.

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
from labelgate.integrations.gate import LabelsRejected, check_dataset, checked_options
from labelgate.integrations.loaders import read_loader

__all__ = ["LabelgateCallback", "LabelsRejected", "WitnessCallback"]


class LabelgateCallback(Callback):
    """Validate the datasets of the train and validation dataloaders on ``on_train_start``
    (after setup, before the first step); fail the fit with ``LabelsRejected``.

    Each dataset is judged in the batches its own dataloader makes: its ``batch_size`` and
    ``drop_last``, its sampler (a seeded ``RandomSampler`` replayed, a ``DistributedSampler``
    replayed for every rank, as Lightning installs one under DDP), and for the train loader the
    Trainer's ``accumulate_grad_batches``. An option given here overrides what the loader says.

    Args:
        splits: which dataloaders to check (``train``, ``val``).
        target_getter: for a Dataset without ``.targets``: a function of one item returning its
            target.
        options: as ``labelgate.validate`` takes them (``classes``, ``ignore_index``,
            ``class_names``, ``contract``...).

    Raises:
        OptionError: an option that ``labelgate.validate`` does not take.

    Attributes:
        reports: the report of each split checked.
        notes: what was read from each loader, and what could not be replayed.
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
        self.notes: dict[str, list[str]] = {}

    def on_train_start(self, trainer: Any, pl_module: Any) -> None:
        loaders = {"train": trainer.train_dataloader, "val": trainer.val_dataloaders}
        for split in self.splits:
            for i, loader in enumerate(_loaders(loaders.get(split))):
                name = split if i == 0 else f"{split}[{i}]"
                read = read_loader(loader, name)
                options = dict(read.options)
                accumulate = int(getattr(trainer, "accumulate_grad_batches", 1) or 1)
                if split == "train" and accumulate > 1:
                    options["grad_accum"] = accumulate  # Lightning divides each batch's mean
                options.update(self.options)
                self.notes[name] = read.notes
                self.reports[name] = check_dataset(loader.dataset, name, **options)


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


class WitnessCallback(Callback):
    """Collect the validation loop's outputs and labels, and judge them against each other after
    the first validation epoch (the sanity check excluded): a permuted, swapped or shifted
    mapping is LG049 (docs/witness.md). A warning by default; ``stop=True`` stops the fit.

    ``validation_step`` returns what ``collect`` reads: by default a dict with ``logits`` (or
    ``preds``) and ``labels`` (or ``y``, ``target``), else the batch's second item is the labels.

    Args:
        classes: K.
        stop: stop the fit (``trainer.should_stop``) on a mapping fault.
        collect: ``(outputs, batch) -> (logits or predicted classes, labels[, sources])``.
        options: more of ``labelgate.validate``'s options (``class_names``, ``model``...).

    Attributes:
        witness: what was collected, and ``witness.report`` once judged.
    """

    def __init__(
        self,
        classes: int,
        *,
        stop: bool = False,
        collect: Callable[[Any, Any], tuple[Any, ...]] | None = None,
        **options: Any,
    ) -> None:
        from labelgate.integrations.witness import Witness

        checked_options(options, "WitnessCallback")
        self.witness = Witness(classes, stop=stop, **options)
        self.collect = collect or _collect

    def on_validation_batch_end(
        self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, *args: Any
    ) -> None:
        if trainer.sanity_checking or self.witness.report is not None:
            return
        self.witness.add(*self.collect(outputs, batch))

    def on_validation_epoch_end(self, trainer: Any, pl_module: Any) -> None:
        if trainer.sanity_checking or self.witness.report is not None:
            return
        self.witness.judge()
        if self.witness.stop and self.witness.faulty:
            trainer.should_stop = True


def _collect(outputs: Any, batch: Any) -> tuple[Any, Any]:
    """(logits, labels) from ``validation_step``'s dict, the labels else from the batch."""
    if not isinstance(outputs, dict):
        raise TypeError(
            "WitnessCallback reads validation_step's return: a dict with 'logits' and 'labels' "
            "(or pass collect=(outputs, batch) -> (logits, labels))"
        )
    logits = next((outputs[k] for k in ("logits", "preds") if k in outputs), None)
    labels = next((outputs[k] for k in ("labels", "y", "target") if k in outputs), None)
    if labels is None and isinstance(batch, (list, tuple)) and len(batch) > 1:
        labels = batch[1]
    if logits is None or labels is None:
        raise TypeError("validation_step's dict needs 'logits' (or 'preds') and 'labels'")
    return logits, labels
