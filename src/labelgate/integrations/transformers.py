"""A Hugging Face ``TrainerCallback``: validate the Trainer's ``train_dataset`` and
``eval_dataset`` when training begins, in the batches the Trainer will make, and stop before the
first step when their labels fail.

    from labelgate.integrations.transformers import LabelgateTrainerCallback

    trainer = Trainer(model, args, train_dataset=ds, eval_dataset=val)
    trainer.add_callback(LabelgateTrainerCallback(trainer))
    trainer.train()   # raises LabelsRejected before step 1 on bad labels

What the Trainer does, read from transformers' ``trainer.py`` (5.x) and accelerate's
``data_loader.py``:

- each process's loader has ``per_device_*_batch_size`` rows per batch and
  ``dataloader_drop_last``; under several processes accelerate's ``BatchSamplerShard`` gives
  process ``r`` batches ``r, r + W, ...`` of that one sequence, so every micro-batch is a batch of
  one process's sequence, and an optimizer step is W x ``gradient_accumulation_steps``
  consecutive ones;
- where the model takes loss kwargs (``model_accepts_loss_kwargs``) or a ``compute_loss_func``
  is given, the loss is a sum divided by ``num_items_in_batch``: the labels other than -100 of
  every micro-batch of the step, gathered over the processes
  (``average_tokens_across_devices``, default True; ``Trainer._get_num_items_in_batch``). A
  micro-batch with none is then harmless, a step with none is 0/0: the batching's
  ``normalize: step``. Otherwise each micro-batch takes its own mean (``normalize: batch``).
- the train order is a ``RandomSampler`` drawn from torch's global RNG (``train_sampling_strategy
  = "sequential"`` keeps file order): it is not replayed, so the batches are judged in file
  order, which the note says.

K defaults to the model's ``config.num_labels``, and its ``id2label``, ``label2id`` and
``problem_type`` are compared by name with the data's class map (LG040); a label column of lists is read as token
classification (-100 is the ignore_index, as the Trainer's loss skips it). Needs ``transformers``.
"""

from __future__ import annotations

import warnings
from typing import Any

from transformers import Trainer, TrainerCallback

from labelgate.api import ValidationReport
from labelgate.contract.modelmap import ModelMap
from labelgate.integrations.gate import LabelsRejected, check_dataset, checked_options

__all__ = [
    "LabelgateTrainerCallback",
    "LabelsRejected",
    "WitnessTrainerCallback",
    "trainer_batching",
]


def trainer_batching(trainer: Any, split: str) -> tuple[dict[str, Any], list[str]]:
    """The batching options of ``split`` (``train`` or ``eval``) as ``trainer`` makes it, and
    notes on what is not replayed."""
    args = trainer.args
    world = max(1, int(getattr(args, "world_size", 1) or 1))
    notes: list[str] = []
    if split == "eval":
        options: dict[str, Any] = {
            "batch_size": int(args.per_device_eval_batch_size),
            "drop_last": bool(args.dataloader_drop_last),
        }
        return options, notes
    accumulate = int(args.gradient_accumulation_steps)
    by_step = bool(getattr(trainer, "model_accepts_loss_kwargs", False)) or (
        getattr(trainer, "compute_loss_func", None) is not None
    )
    options = {
        "batch_size": int(args.per_device_train_batch_size),
        "drop_last": bool(args.dataloader_drop_last),
        # accelerate deals one sequence of batches round-robin: a step is W x accumulation of it
        "grad_accum": world * accumulate,
        "normalize": "step" if by_step else "batch",
    }
    strategy = getattr(args, "train_sampling_strategy", "random")
    if strategy != "sequential":
        notes.append(
            f"train: the Trainer's {strategy} sampler draws from torch's global RNG and is not "
            "replayed; batches judged in file order"
        )
    if world > 1:
        notes.append(
            f"train: {world} processes x {accumulate} accumulation steps: a step is "
            f"{world * accumulate} consecutive batches of {options['batch_size']}"
        )
    return options, notes


class LabelgateTrainerCallback(TrainerCallback):
    """Validate the Trainer's datasets on ``on_train_begin``; fail with ``LabelsRejected``.

    Args:
        trainer: the Trainer whose ``train_dataset`` and ``eval_dataset`` are checked, in the
            batches its arguments make. Without it, the callback finds the Trainer that calls it;
            where none is found only the train dataloader's dataset is checked, with a warning.
        eval: whether to check the eval dataset too.
        options: as ``labelgate.validate`` takes them; ``classes`` defaults to the model's
            ``config.num_labels`` and ``model`` to its ``config`` (LG040); an option given here
            overrides what the Trainer says.

    Raises:
        OptionError: an option that ``labelgate.validate`` does not take.

    Attributes:
        reports: the report of each dataset checked.
        notes: what was read from the Trainer, and what could not be replayed.
    """

    def __init__(self, trainer: Any = None, *, eval: bool = True, **options: Any) -> None:
        checked_options(options, "LabelgateTrainerCallback")
        self.trainer = trainer
        self.check_eval = eval
        self.options = options
        self.reports: dict[str, ValidationReport] = {}
        self.notes: list[str] = []

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        options = dict(self.options)
        model = kwargs.get("model")
        labels = getattr(getattr(model, "config", None), "num_labels", None)
        if "classes" not in options and "contract" not in options and labels:
            options["classes"] = int(labels)
        config = getattr(model, "config", None)
        if "model" not in options and "contract" not in options and config is not None:
            # the names too, not only the count: id2label against the data's class map (LG040)
            options["model"] = ModelMap.from_config(config.to_dict(), origin="model.config")
        trainer = self.trainer or _calling_trainer()
        if trainer is None:
            warnings.warn(
                "LabelgateTrainerCallback: no Trainer given or found; only the train "
                "dataloader's dataset is checked (pass the trainer to check eval_dataset)",
                stacklevel=2,
            )
            dataset = getattr(kwargs.get("train_dataloader"), "dataset", None)
            if dataset is not None:
                self.reports["train"] = check_dataset(dataset, "train", **options)
            return
        datasets = {"train": trainer.train_dataset}
        if self.check_eval:
            datasets |= _eval_sets(trainer.eval_dataset)
        for split, dataset in datasets.items():
            if dataset is None:
                continue
            batching, notes = trainer_batching(trainer, split.split("[")[0])
            self.notes += notes
            self.reports[split] = check_dataset(dataset, split, **(batching | options))


def _eval_sets(found: Any) -> dict[str, Any]:
    """``eval_dataset``: one dataset, or a dict of named ones (the Trainer evaluates each)."""
    if isinstance(found, dict):
        return {f"eval[{name}]": ds for name, ds in found.items()}
    return {"eval": found}


def _calling_trainer() -> Trainer | None:
    """The Trainer whose training loop is calling the callbacks (a few frames up)."""
    import inspect

    frame = inspect.currentframe()
    try:
        for _ in range(12):
            frame = frame.f_back if frame is not None else None
            if frame is None:
                return None
            found = frame.f_locals.get("self")
            if isinstance(found, Trainer):
                return found
        return None
    finally:
        del frame


class WitnessTrainerCallback(TrainerCallback):
    """Judge the first evaluation's predictions against its labels (LG049, docs/witness.md): a
    warning by default, ``stop=True`` to stop training.

    The Trainer hands its callbacks metrics, not logits; the logits reach ``compute_metrics``
    (an ``EvalPrediction`` of ``predictions`` and ``label_ids``, transformers' ``trainer.py``
    ``evaluation_loop``). So this callback's ``compute_metrics`` is passed to the Trainer
    (it wraps yours, given as ``metrics``):

        witness = WitnessTrainerCallback(classes=3, stop=True)
        trainer = Trainer(model, args, eval_dataset=val, compute_metrics=witness.compute_metrics,
                          callbacks=[witness])

    Args:
        classes: K (default: the model's ``config.num_labels``, read on ``on_train_begin``).
        stop: stop training (``control.should_training_stop``) on a mapping fault.
        metrics: your own ``compute_metrics``, called as before.
        options: more of ``labelgate.validate``'s options (``class_names``, ``model``...).

    Attributes:
        witness: what was collected, and ``witness.report`` once judged.
    """

    def __init__(
        self,
        classes: int | None = None,
        *,
        stop: bool = False,
        metrics: Any = None,
        **options: Any,
    ) -> None:
        from labelgate.integrations.witness import Witness

        checked_options(options, "WitnessTrainerCallback")
        self.witness = Witness(classes or 0, stop=stop, **options)
        self.metrics = metrics

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        labels = getattr(getattr(kwargs.get("model"), "config", None), "num_labels", None)
        if not self.witness.classes and labels:
            self.witness.classes = int(labels)

    def compute_metrics(self, prediction: Any) -> dict[str, Any]:
        """The Trainer's ``compute_metrics``: judge the first evaluation, then yours."""
        found = dict(self.metrics(prediction)) if self.metrics is not None else {}
        if self.witness.report is None:
            logits = prediction.predictions
            logits = logits[0] if isinstance(logits, tuple) else logits
            self.witness.add(logits, prediction.label_ids)
            self.witness.judge()
        found["labelgate_mapping_faults"] = sum(
            f.code == "LG049" and f.severity == "error"
            for f in (self.witness.report.findings if self.witness.report is not None else ())
        )
        return found

    def on_evaluate(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.witness.stop and self.witness.faulty:
            control.should_training_stop = True
