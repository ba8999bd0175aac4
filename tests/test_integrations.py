"""The training-framework callbacks with the real libraries and tiny CPU models: a bad dataset
stops the run before step 1, a clean one trains."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.frameworks import (
    WithLightning,
    WithTransformers,
    cpu_arguments,
    frameworks,
    lightning_classifier,
    lightning_trainer,
    targets_dataset,
    tiny_bert,
    token_rows,
)

# the full tier only; lightning and transformers imported by the tests, on one xdist worker
pytestmark = [pytest.mark.slow, frameworks]

torch = pytest.importorskip("torch")


class TestLightning(WithLightning):
    def fit(self, targets: list[int], **options: Any) -> tuple[Any, Any]:
        from torch.utils.data import DataLoader

        from labelgate.integrations.lightning import LabelgateCallback

        callback = LabelgateCallback(classes=3, **options)
        trainer = lightning_trainer(callback)
        trainer.fit(lightning_classifier(), DataLoader(targets_dataset(targets), batch_size=4))
        return trainer, callback

    def test_clean_dataset_trains(self) -> None:
        trainer, callback = self.fit([0, 1, 2, 0, 1, 2, 0, 1])
        assert trainer.global_step == 2
        assert callback.reports["train"].passed

    def test_bad_dataset_stops_before_the_first_step(self) -> None:
        from labelgate.integrations import LabelsRejected

        with pytest.raises(LabelsRejected, match=r"train dataset: .*LG004") as caught:
            self.fit([0, 1, 2, 3, 1, 2, 0, 1])
        assert caught.value.split == "train"
        assert caught.value.report.findings[0].code == "LG004"


class TestTransformers(WithTransformers):
    def train(self, model: Any, rows: dict[str, Any], batch: int = 2) -> Any:
        from labelgate.integrations.transformers import LabelgateTrainerCallback

        ds = self.datasets.Dataset.from_dict(rows)
        args = {"max_steps": 2, "per_device_train_batch_size": batch, "logging_strategy": "no"}
        with cpu_arguments(**args) as arguments:
            trainer = self.transformers.Trainer(
                model=model,
                args=arguments,
                train_dataset=ds,
                callbacks=[LabelgateTrainerCallback(batch_size=batch)],
            )
            trainer.train()
        return trainer

    def test_sequence_classification(self) -> None:
        from labelgate.integrations import LabelsRejected

        model = self.transformers.BertForSequenceClassification(tiny_bert(num_labels=2))
        assert self.train(model, token_rows([0, 1, 0, 1])).state.global_step == 2
        model = self.transformers.BertForSequenceClassification(tiny_bert(num_labels=2))
        with pytest.raises(LabelsRejected, match=r"LG004 .*>= K=2"):  # K from config.num_labels
            self.train(model, token_rows([0, 1, 2, 1]))

    def test_token_classification_with_minus_100(self) -> None:
        from labelgate.integrations import LabelsRejected

        rows = {"input_ids": [[1, 2, 3, 4]] * 2, "attention_mask": [[1] * 4] * 2}
        model = self.transformers.BertForTokenClassification(tiny_bert(num_labels=2))
        good = rows | {"labels": [[0, 1, -100, -100], [1, 0, 1, -100]]}
        assert self.train(model, good, batch=1).state.global_step == 2
        model = self.transformers.BertForTokenClassification(tiny_bert(num_labels=2))
        bad = rows | {"labels": [[0, 1, -100, -100], [-100, -100, -100, -100]]}
        with pytest.raises(LabelsRejected, match="LG007"):  # every token of batch 1 ignored
            self.train(model, bad, batch=1)


class TestLightningReadsTheLoader(WithLightning):
    """The callback judges the batches the real DataLoader makes, not batches of 32."""

    def fit(self, train: Any, val: Any = None, **options: Any) -> tuple[Any, Any]:
        from labelgate.integrations.lightning import LabelgateCallback

        callback = LabelgateCallback(classes=3, **options)
        trainer = lightning_trainer(callback, num_sanity_val_steps=0)
        self.trainer = trainer
        trainer.fit(lightning_classifier(validation=True), train, val)
        return trainer, callback

    data = staticmethod(targets_dataset)

    def test_all_ignored_batch_at_the_loaders_size(self) -> None:
        from torch.utils.data import DataLoader

        from labelgate.integrations import LabelsRejected

        targets = [0, 1, 2, 0, 1, 2, 0, 1] + [-100] * 8 + [0, 1] * 8  # rows 8-15: batch 1 of 8
        with pytest.raises(LabelsRejected, match=r"LG007") as caught:
            self.fit(DataLoader(self.data(targets), batch_size=8))
        assert self.trainer.global_step == 0
        (f,) = [f for f in caught.value.report.findings if f.code == "LG007"]
        assert f.batches == (1,) and f.examples[0].row == 8
        assert caught.value.report.batches["size"] == 8

    def test_clean_loader_trains(self) -> None:
        from torch.utils.data import DataLoader

        trainer, callback = self.fit(DataLoader(self.data([0, 1, 2, 0] * 8), batch_size=8))
        assert trainer.global_step == 2 and callback.reports["train"].batches["size"] == 8

    def test_seeded_random_sampler_is_replayed(self) -> None:
        from torch.utils.data import DataLoader

        targets = [0, 1, 2, 0] * 4 + [-100] * 16
        g = torch.Generator().manual_seed(7)
        loader = DataLoader(self.data(targets), batch_size=4, shuffle=True, generator=g)
        order = [
            b[1].tolist()
            for b in DataLoader(
                self.data(targets),
                batch_size=4,
                shuffle=True,
                generator=torch.Generator().manual_seed(7),
            )
        ]
        empty = [i for i, b in enumerate(order) if all(t == -100 for t in b)]
        assert empty  # the seed leaves at least one batch with no usable target
        from labelgate.integrations import LabelsRejected

        with pytest.raises(LabelsRejected) as caught:
            self.fit(loader)
        (f,) = [f for f in caught.value.report.findings if f.code == "LG007"]
        assert list(f.batches) == empty
        assert caught.value.report.contract["batching"]["shuffle_seed"] == 7

    def test_distributed_sampler_rank_with_nothing_usable(self) -> None:
        from torch.utils.data import DataLoader, DistributedSampler

        from labelgate.integrations import LabelsRejected

        targets = [i % 3 if i % 2 == 0 else -100 for i in range(16)]  # odd rows ignored
        data = self.data(targets)
        sampler = DistributedSampler(data, num_replicas=2, rank=0, shuffle=False)
        with pytest.raises(LabelsRejected, match=r"rank 1 batch 0 \(rows 1, 3, 5, 7\)"):
            self.fit(DataLoader(data, batch_size=4, sampler=sampler))
        assert self.trainer.global_step == 0

    def test_bad_val_label(self) -> None:
        from torch.utils.data import DataLoader

        from labelgate.integrations import LabelsRejected

        train = DataLoader(self.data([0, 1, 2, 0] * 4), batch_size=4)
        val = DataLoader(self.data([0, 1, 5, 0]), batch_size=2)
        with pytest.raises(LabelsRejected, match="LG004") as caught:
            self.fit(train, val)
        assert caught.value.split == "val" and self.trainer.global_step == 0

    def test_misspelt_option(self) -> None:
        from labelgate.errors import OptionError
        from labelgate.integrations.lightning import LabelgateCallback

        with pytest.raises(OptionError, match="did you mean 'ignore_index'"):
            LabelgateCallback(classes=3, ignore_idx=-1)


class TestTrainerReadsItsOwnDatasets(WithTransformers):
    def train(self, rows: dict[str, Any], eval_rows: Any = None, **args: Any) -> Any:
        from labelgate.integrations.transformers import LabelgateTrainerCallback

        tf = self.transformers
        model = tf.BertForSequenceClassification(tiny_bert(num_labels=3))
        ds = self.datasets.Dataset.from_dict(rows)
        evals = None if eval_rows is None else self.datasets.Dataset.from_dict(eval_rows)
        with cpu_arguments(max_steps=2, logging_strategy="no", **args) as arguments:
            trainer = tf.Trainer(model=model, args=arguments, train_dataset=ds, eval_dataset=evals)
            self.callback = LabelgateTrainerCallback(trainer)
            trainer.add_callback(self.callback)
            self.trainer = trainer
            trainer.train()
        return trainer

    rows = staticmethod(token_rows)

    def test_per_device_batch_size_is_read(self) -> None:
        trainer = self.train(self.rows([0, 1, 2, 0] * 4), per_device_train_batch_size=4)
        assert trainer.state.global_step == 2
        assert self.callback.reports["train"].batches["size"] == 4

    def test_bad_eval_label_stops_before_step_one(self) -> None:
        from labelgate.integrations import LabelsRejected

        with pytest.raises(LabelsRejected, match="LG004") as caught:
            self.train(
                self.rows([0, 1, 2, 0] * 2), self.rows([0, 5, 1]), per_device_train_batch_size=2
            )
        assert caught.value.split == "eval"
        assert self.trainer.state.global_step == 0
        assert caught.value.report.findings[0].examples[0].row == 1

    def test_found_without_being_given_the_trainer(self) -> None:
        from labelgate.integrations import LabelsRejected
        from labelgate.integrations.transformers import LabelgateTrainerCallback

        tf = self.transformers
        with cpu_arguments(max_steps=1, per_device_train_batch_size=2) as arguments:
            trainer = tf.Trainer(
                model=tf.BertForSequenceClassification(tiny_bert(num_labels=3)),
                args=arguments,
                train_dataset=self.datasets.Dataset.from_dict(self.rows([0, 1])),
                eval_dataset=self.datasets.Dataset.from_dict(self.rows([7])),
                callbacks=[LabelgateTrainerCallback()],
            )
            with pytest.raises(LabelsRejected, match="eval dataset"):
                trainer.train()

    def test_accumulated_step_normalised_by_num_items(self) -> None:
        # rows 4-7 (batch 1 of 4) are all ignored; with 2 accumulation steps and the Trainer's
        # num_items_in_batch the step still has usable targets: harmless, and training runs
        labels = [0, 1, 2, 0] + [-100] * 4 + [0, 1, 2, 0] * 2
        trainer = self.train(
            self.rows(labels),
            per_device_train_batch_size=4,
            gradient_accumulation_steps=2,
            train_sampling_strategy="sequential",
        )
        assert trainer.state.global_step == 2
        report = self.callback.reports["train"]
        assert report.contract["batching"]["normalize"] == "step"
        assert [f.severity for f in report.findings if f.code == "LG007"] == ["info"]
        final = trainer.state.log_history[-1]
        assert "train_loss" in final and torch.isfinite(torch.tensor(final["train_loss"]))

    def test_step_with_nothing_usable(self) -> None:
        from labelgate.integrations import LabelsRejected

        labels = [0, 1, 2, 0] * 2 + [-100] * 8
        with pytest.raises(LabelsRejected, match="optimizer step"):
            self.train(
                self.rows(labels),
                per_device_train_batch_size=4,
                gradient_accumulation_steps=2,
                train_sampling_strategy="sequential",
            )
        assert self.trainer.state.global_step == 0

    def test_misspelt_option(self) -> None:
        from labelgate.errors import OptionError
        from labelgate.integrations.transformers import LabelgateTrainerCallback

        with pytest.raises(OptionError, match="did you mean 'classes'"):
            LabelgateTrainerCallback(clases=3)
