"""The batch size a training log shows, so that ``triage --data`` replays the run's own batches
rather than a default's: a ``batch_size=64`` or ``"train_batch_size": 64`` print (argparse
namespaces, configs, Lightning's hyperparameters), a ``--batch-size 64`` command line, and the
Hugging Face Trainer's summary ("Instantaneous batch size per device = 8",
transformers/trainer.py's ``_inner_training_loop``)."""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["batch_size_in"]

_SHOWN = (
    re.compile(r"Instantaneous batch size per device = ([\d,]{1,9})"),
    re.compile(
        r"\b(?:per_device_train_batch_size|train_batch_size|batch_size)\b['\"]?\s*[=:]\s*(\d{1,7})\b"
    ),
    re.compile(r"--(?:per[-_]device[-_]train[-_])?batch[-_]size[ =](\d{1,7})\b"),
)
_LINES = 100_000  # a log's set-up is at its start: the search ends here


def batch_size_in(lines: Iterable[str], *, until: int | None) -> tuple[int, int] | None:
    """The first batch size the log shows before line ``until`` (1-based), and its line."""
    for number, line in enumerate(lines, 1):
        if (until is not None and number > until) or number > _LINES:
            return None
        for pattern in _SHOWN:
            m = pattern.search(line)
            if m is not None and (size := int(m.group(1).replace(",", ""))) > 0:
                return size, number
    return None
