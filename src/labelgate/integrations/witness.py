"""The witness in training: a validation loop's outputs and labels collected batch by batch, then
judged as ``labelgate validate --predictions`` judges a file (LG049), by the callbacks of
``labelgate.integrations.lightning`` and ``labelgate.integrations.transformers``.

The model judging the validation labels was trained on the training labels: a source permuted in
both, whose mapping the model has learnt, is no longer seen (docs/witness.md).
"""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from labelgate.api import ValidationReport, validate

__all__ = ["Witness", "as_numpy"]


def as_numpy(value: Any) -> npt.NDArray[Any]:
    """A tensor (on any device), an array or a list, as a numpy array on the CPU."""
    if hasattr(value, "detach"):
        value = value.detach().float().cpu() if value.is_floating_point() else value.detach().cpu()
        value = value.numpy()
    return np.asarray(value)


class Witness:
    """Predicted classes and labels, gathered by batch, and their judgement.

    Args:
        classes: K.
        stop: whether a mapping fault stops training (else a warning).
        options: more of ``labelgate.validate``'s options (``class_names``, ``ignore_index``,
            ``model``...).
    """

    def __init__(self, classes: int, *, stop: bool = False, **options: Any) -> None:
        self.classes = classes
        self.stop = stop
        self.options = options
        self.predicted: list[npt.NDArray[np.int64]] = []
        self.labels: list[npt.NDArray[np.int64]] = []
        self.sources: list[Any] = []
        self.report: ValidationReport | None = None

    def add(self, outputs: Any, labels: Any, sources: Any = None) -> None:
        """One batch: the model's logits or probabilities (N x K), or its predicted classes (N),
        the labels (N), and optionally each row's source."""
        out = as_numpy(outputs)
        predicted = out.argmax(axis=-1) if out.ndim == 2 else out
        self.predicted.append(np.asarray(predicted, np.int64).ravel())
        self.labels.append(np.asarray(as_numpy(labels), np.int64).ravel())
        if sources is not None:
            self.sources.extend(str(s) for s in sources)

    def judge(self) -> ValidationReport | None:
        """Judge what was gathered (once); ``None`` when nothing was. Warns where it fails and
        ``stop`` is off."""
        if self.report is not None or not self.labels:
            return self.report
        import pyarrow as pa

        columns: dict[str, Any] = {"label": np.concatenate(self.labels)}
        if self.sources and len(self.sources) == len(columns["label"]):
            columns["source"] = pa.array(self.sources, pa.string())
        table = pa.table(columns)
        with tempfile.TemporaryDirectory(prefix="labelgate-witness-") as folder:
            path = Path(folder) / "predictions.npy"
            np.save(path, np.concatenate(self.predicted))
            report = validate(table, classes=self.classes, predictions=str(path), **self.options)
        self.report = report
        found = [f for f in report.findings if f.code == "LG049" and f.severity != "info"]
        if found and not self.stop:
            warnings.warn(
                "labelgate: the validation labels disagree with the model: "
                + "; ".join(f.message for f in found),
                stacklevel=2,
            )
        return report

    @property
    def faulty(self) -> bool:
        """Whether the judgement found a mapping fault (an LG049 error)."""
        return self.report is not None and any(
            f.code == "LG049" and f.severity == "error" for f in self.report.findings
        )
