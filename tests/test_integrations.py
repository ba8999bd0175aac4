"""The training-framework callbacks with the real libraries and tiny CPU models: a bad dataset
stops the run before step 1, a clean one trains."""

from __future__ import annotations

import tempfile
from typing import Any

import pytest

pytestmark = pytest.mark.slow  # subprocesses, engines or clusters: the full tier only

torch = pytest.importorskip("torch")


class TestLightning:
    L = pytest.importorskip("lightning")

    def fit(self, targets: list[int], **options: Any) -> tuple[Any, Any]:
        from torch.utils.data import DataLoader, TensorDataset

        from labelgate.integrations.lightning import LabelgateCallback

        class Model(self.L.LightningModule):  # type: ignore[name-defined,misc]
            def __init__(self) -> None:
                super().__init__()
                self.layer = torch.nn.Linear(4, 3)

            def training_step(self, batch: Any, i: int) -> Any:
                x, y = batch
                return torch.nn.functional.cross_entropy(self.layer(x), y)

            def configure_optimizers(self) -> Any:
                return torch.optim.SGD(self.parameters(), lr=0.1)

        class Data(TensorDataset):
            @property
            def targets(self) -> Any:
                return self.tensors[1]

        data = Data(torch.randn(len(targets), 4), torch.tensor(targets))
        callback = LabelgateCallback(classes=3, **options)
        trainer = self.L.Trainer(
            max_steps=2,
            callbacks=[callback],
            logger=False,
            enable_checkpointing=False,
            enable_progress_bar=False,
            enable_model_summary=False,
            accelerator="cpu",
        )
        trainer.fit(Model(), DataLoader(data, batch_size=4))
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


class TestTransformers:
    transformers = pytest.importorskip("transformers")
    datasets = pytest.importorskip("datasets")
    pytest.importorskip("accelerate")

    def train(self, model: Any, rows: dict[str, Any], batch: int = 2) -> Any:
        from labelgate.integrations.transformers import LabelgateTrainerCallback

        ds = self.datasets.Dataset.from_dict(rows)
        with tempfile.TemporaryDirectory() as out:
            args = self.transformers.TrainingArguments(
                output_dir=out,
                max_steps=2,
                per_device_train_batch_size=batch,
                report_to=[],
                use_cpu=True,
                save_strategy="no",
                logging_strategy="no",
            )
            trainer = self.transformers.Trainer(
                model=model,
                args=args,
                train_dataset=ds,
                callbacks=[LabelgateTrainerCallback(batch_size=batch)],
            )
            trainer.train()
        return trainer

    def config(self) -> Any:
        return self.transformers.BertConfig(
            vocab_size=20,
            hidden_size=8,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=16,
            max_position_embeddings=16,
            num_labels=2,
        )

    def sequence(self, labels: list[int]) -> dict[str, Any]:
        n = len(labels)
        return {"input_ids": [[1, 2, 3, 4]] * n, "attention_mask": [[1] * 4] * n, "labels": labels}

    def test_sequence_classification(self) -> None:
        from labelgate.integrations import LabelsRejected

        model = self.transformers.BertForSequenceClassification(self.config())
        assert self.train(model, self.sequence([0, 1, 0, 1])).state.global_step == 2
        model = self.transformers.BertForSequenceClassification(self.config())
        with pytest.raises(LabelsRejected, match=r"LG004 .*>= K=2"):  # K from config.num_labels
            self.train(model, self.sequence([0, 1, 2, 1]))

    def test_token_classification_with_minus_100(self) -> None:
        from labelgate.integrations import LabelsRejected

        rows = {"input_ids": [[1, 2, 3, 4]] * 2, "attention_mask": [[1] * 4] * 2}
        model = self.transformers.BertForTokenClassification(self.config())
        good = rows | {"labels": [[0, 1, -100, -100], [1, 0, 1, -100]]}
        assert self.train(model, good, batch=1).state.global_step == 2
        model = self.transformers.BertForTokenClassification(self.config())
        bad = rows | {"labels": [[0, 1, -100, -100], [-100, -100, -100, -100]]}
        with pytest.raises(LabelsRejected, match="LG007"):  # every token of batch 1 ignored
            self.train(model, bad, batch=1)
