"""Tiny CPU models and runs of Lightning and the Hugging Face Trainer, for the tests of the
training callbacks, of a model's label map and of resuming: each a few parameters, a few steps.
The frameworks are imported by the functions and fixtures, never at collection."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

# The tests that import lightning or transformers, kept on one xdist worker: one worker pays
# the imports (lightning's alone is about 4 s of CPU), not each of them.
frameworks = pytest.mark.xdist_group("frameworks")


class WithLightning:
    """A test class whose tests need lightning: imported when its first test runs, not at
    collection, and the tests skipped without it."""

    @pytest.fixture(autouse=True)
    def _lightning(self) -> None:
        pytest.importorskip("lightning")


class WithTransformers:
    """A test class whose tests use ``self.transformers`` and ``self.datasets`` (and the
    Trainer's accelerate): imported when its first test runs, not at collection, and the tests
    skipped without them."""

    transformers: Any
    datasets: Any

    @pytest.fixture(autouse=True)
    def _transformers(self) -> None:
        pytest.importorskip("accelerate")
        self.transformers = pytest.importorskip("transformers")
        self.datasets = pytest.importorskip("datasets")


def tiny_bert(**config: Any) -> Any:
    """A BERT configuration of 20 tokens, 8 hidden units and one layer (``config``: the labels'
    count or names, a problem type)."""
    import transformers

    return transformers.BertConfig(
        vocab_size=20,
        hidden_size=8,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=16,
        max_position_embeddings=16,
        **config,
    )


def token_rows(labels: list[Any]) -> dict[str, Any]:
    """One four-token row per label: the columns a Trainer's dataset holds."""
    n = len(labels)
    return {"input_ids": [[1, 2, 3, 4]] * n, "attention_mask": [[1] * 4] * n, "labels": labels}


@contextmanager
def cpu_arguments(**args: Any) -> Iterator[Any]:
    """``TrainingArguments`` on the CPU that report, save and log nothing, writing into a
    temporary folder removed afterwards (``args``: steps, batch size, accumulation...)."""
    import transformers

    with tempfile.TemporaryDirectory() as out:
        yield transformers.TrainingArguments(
            output_dir=out, report_to=[], use_cpu=True, save_strategy="no", **args
        )


def lightning_classifier(*, validation: bool = False) -> Any:
    """A linear Lightning module from four features to three classes, with cross-entropy
    (``validation``: it logs a validation loss too)."""
    import lightning
    import torch

    class Model(lightning.LightningModule):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(4, 3)

        def training_step(self, batch: Any, i: int) -> Any:
            x, y = batch
            return torch.nn.functional.cross_entropy(self.layer(x), y)

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.1)

    class Validated(Model):
        def validation_step(self, batch: Any, i: int) -> None:
            x, y = batch
            self.log("val_loss", torch.nn.functional.cross_entropy(self.layer(x), y))

    return Validated() if validation else Model()


def lightning_trainer(callback: Any, **options: Any) -> Any:
    """A CPU ``lightning.Trainer`` with ``callback`` (two steps unless ``options`` say otherwise),
    without logger, checkpoints, progress bar or model summary."""
    import lightning

    options.setdefault("max_steps", 2)
    return lightning.Trainer(
        callbacks=[callback],
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        accelerator="cpu",
        **options,
    )


def targets_dataset(targets: list[int]) -> Any:
    """A ``TensorDataset`` of random features with ``targets``, exposed as torchvision's datasets
    expose theirs (a ``targets`` attribute)."""
    import torch
    from torch.utils.data import TensorDataset

    class Data(TensorDataset):
        @property
        def targets(self) -> Any:
            return self.tensors[1]

    return Data(torch.randn(len(targets), 4), torch.tensor(targets))


def lightning_checkpoints(folder: Path) -> None:
    """A real Lightning fit in this process, for its checkpoint files only: a 4 -> 8 -> 3
    classifier with Adam, 16 rows in batches of 4 for two epochs, ``ModelCheckpoint`` keeping
    every second step in ``folder`` (steps 2, 4, 6 and 8)."""
    import lightning
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    class Model(lightning.LightningModule):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.net = torch.nn.Sequential(
                torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3)
            )

        def training_step(self, batch: Any, i: int) -> Any:
            return torch.nn.functional.cross_entropy(self.net(batch[0]), batch[1])

        def configure_optimizers(self) -> Any:
            return torch.optim.Adam(self.parameters(), 1e-2)

    data = TensorDataset(torch.randn(16, 4), torch.randint(0, 3, (16,)))
    every_second = lightning.pytorch.callbacks.ModelCheckpoint(
        dirpath=folder, every_n_train_steps=2, save_top_k=-1
    )
    lightning.Trainer(
        max_epochs=2,
        callbacks=[every_second],
        logger=False,
        accelerator="cpu",
        enable_model_summary=False,
        enable_progress_bar=False,
    ).fit(Model(), DataLoader(data, batch_size=4))
