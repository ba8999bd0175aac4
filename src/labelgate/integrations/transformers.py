"""A Hugging Face ``TrainerCallback``: validate ``train_dataset`` (and ``eval_dataset``) when
training begins, and stop before the first step when their labels fail.

    from labelgate.integrations.transformers import LabelgateTrainerCallback

    trainer = Trainer(model, args, train_dataset=ds, callbacks=[LabelgateTrainerCallback()])
    trainer.train()   # raises LabelsRejected before step 1 on bad labels

K defaults to the model's ``config.num_labels``; a label column of lists is read as token
classification (-100 padding is the ignore_index, as the Trainer's loss skips it). Needs
``transformers``.
"""

from __future__ import annotations

from typing import Any

from transformers import TrainerCallback

from labelgate.api import ValidationReport
from labelgate.integrations import LabelsRejected, check_dataset, checked_options

__all__ = ["LabelgateTrainerCallback", "LabelsRejected"]


class LabelgateTrainerCallback(TrainerCallback):
    """Validate the Trainer's datasets on ``on_train_begin``; fail with ``LabelsRejected``.

    Args:
        eval: whether to check the eval dataset too.
        options: as ``labelgate.validate`` takes them; ``classes`` defaults to the model's
            ``config.num_labels``.

    Attributes:
        reports: the report of each dataset checked.
    """

    def __init__(self, *, eval: bool = True, **options: Any) -> None:
        checked_options(options, "LabelgateTrainerCallback")
        self.check_eval = eval
        self.options = options
        self.reports: dict[str, ValidationReport] = {}

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        options = dict(self.options)
        model = kwargs.get("model")
        labels = getattr(getattr(model, "config", None), "num_labels", None)
        if "classes" not in options and "contract" not in options and labels:
            options["classes"] = int(labels)
        datasets = {"train": _dataset(kwargs.get("train_dataloader"))}
        if self.check_eval:
            datasets["eval"] = _dataset(kwargs.get("eval_dataloader"))
        for split, dataset in datasets.items():
            if dataset is not None:
                self.reports[split] = check_dataset(dataset, split, **options)


def _dataset(loader: Any) -> Any:
    return None if loader is None else getattr(loader, "dataset", None)
