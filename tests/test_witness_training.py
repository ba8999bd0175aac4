"""The witness in training: the Lightning and Hugging Face callbacks gather a validation loop's
logits and labels and judge them after the first evaluation (LG049)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from tests.support.frameworks import WithLightning, WithTransformers, frameworks, lightning_trainer

pytestmark = pytest.mark.slow  # the frameworks' imports and a fit: the full tier only

torch = pytest.importorskip("torch")

K = 3
PERMUTED = np.array([1, 2, 0])  # the validation labels' mapping: true class c given PERMUTED[c]


def _points(n: int, seed: int) -> tuple[Any, Any]:
    g = torch.Generator().manual_seed(seed)
    truth = torch.randint(0, K, (n,), generator=g)
    x = torch.nn.functional.one_hot(truth, K).float() * 4 + torch.randn(n, K, generator=g)
    return x, truth


@frameworks
class TestLightning(WithLightning):
    def fit(self, permuted: bool, **options: Any) -> tuple[Any, Any]:
        import lightning as L
        from torch.utils.data import DataLoader, TensorDataset

        from labelgate.integrations.lightning import WitnessCallback

        class Model(L.LightningModule):  # type: ignore[misc]
            def __init__(self) -> None:
                super().__init__()
                self.layer = torch.nn.Linear(K, K)

            def training_step(self, batch: Any, i: int) -> Any:
                x, y = batch
                return torch.nn.functional.cross_entropy(self.layer(x), y)

            def validation_step(self, batch: Any, i: int) -> Any:
                x, y = batch
                return {"logits": self.layer(x), "labels": y}

            def configure_optimizers(self) -> Any:
                return torch.optim.SGD(self.parameters(), lr=0.5)

        x, y = _points(600, 0)
        vx, vy = _points(300, 1)
        if permuted:
            vy = torch.as_tensor(PERMUTED)[vy]
        callback = WitnessCallback(classes=K, **options)
        trainer = lightning_trainer(callback, max_steps=-1, max_epochs=3, num_sanity_val_steps=0)
        trainer.fit(
            Model(),
            DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True),
            DataLoader(TensorDataset(vx, vy), batch_size=64),
        )
        return trainer, callback

    def test_permuted_validation_labels_stop_the_fit(self) -> None:
        trainer, callback = self.fit(True, stop=True)
        report = callback.witness.report
        (f,) = [f for f in report.findings if f.code == "LG049" and f.severity == "error"]
        assert f.details["remap"] == {str(int(PERMUTED[c])): c for c in range(K)}
        assert trainer.current_epoch == 1  # stopped after the first validation epoch

    def test_a_warning_by_default_and_clean_labels_pass(self) -> None:
        with pytest.warns(UserWarning, match="validation labels disagree with the model"):
            trainer, _ = self.fit(True)
        assert trainer.current_epoch == 3
        _, callback = self.fit(False)
        assert not callback.witness.faulty


@frameworks
class TestTransformers(WithTransformers):
    def test_compute_metrics_judges_and_on_evaluate_stops(self) -> None:
        from labelgate.integrations.transformers import WitnessTrainerCallback

        rng = np.random.default_rng(0)
        truth = rng.integers(0, K, 400)
        logits = np.eye(K)[truth] * 3 + rng.normal(size=(400, K))
        mine = WitnessTrainerCallback(stop=True, metrics=lambda p: {"n": len(p.label_ids)})
        model = SimpleNamespace(config=SimpleNamespace(num_labels=K))
        mine.on_train_begin(None, None, None, model=model)
        prediction = SimpleNamespace(predictions=logits, label_ids=PERMUTED[truth])
        metrics = mine.compute_metrics(prediction)
        assert metrics == {"n": 400, "labelgate_mapping_faults": 1}
        control = SimpleNamespace(should_training_stop=False)
        mine.on_evaluate(None, None, control)
        assert control.should_training_stop
