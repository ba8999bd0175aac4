"""The batch size a training log shows, so that ``triage --data`` replays the run's own batches
rather than a default's.

Two kinds of line show it. The failing step's own message, where PyTorch's loss states the
target's leading dimension: ``Expected input batch_size (32) to match target batch_size (16).``
(``aten/src/ATen/native/LossNLL.cpp``, ``nll_loss_nd_symint``, pytorch@0321fa77), ``size mismatch
(got input: [32, 4], target: [16])`` (the same file's ``nll_loss_forward`` meta function;
``LossNLL2d.cpp``'s ``check_inputs_nll_loss2d`` for masks, pytorch@0aafd810) and ``Expected target
size [8, 4], got [8, 12]`` (``nll_loss_nd_symint``). And prints before the failure: a
``batch_size=64`` or ``"train_batch_size": 64`` print (argparse namespaces, configs, Lightning's
hyperparameters), a ``--batch-size 64`` command line, the Hugging Face Trainer's summary
("Instantaneous batch size per device = 8", transformers/trainer.py's ``_inner_training_loop``)
and Lightning's warning when ``self.log`` infers the batch size of an ambiguous batch ("Trying to
infer the `batch_size` from an ambiguous collection. The batch size we found is 8. ...",
``src/lightning/pytorch/utilities/data.py:79-82``, pytorch-lightning@7f0c3436).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["Shown", "batch_sizes_in", "run_batch_size"]

_PRINTS = (
    re.compile(r"Instantaneous batch size per device = ([\d,]{1,9})"),
    re.compile(
        r"['\"]?\b(?:per_device_train_batch_size|train_batch_size|batch_size)\b['\"]?\s*[=:]\s*"
        r"(\d{1,7})\b"
    ),
    re.compile(r"--(?:per[-_]device[-_]train[-_])?batch[-_]size[ =](\d{1,7})\b"),
    # Lightning's number is the leading dimension of the batch's first tensor (extract_batch_size),
    # the batch size when that tensor is a collated field, as the DataLoader's collate makes each
    re.compile(r"The batch size we found is (\d{1,7})\b"),
)
# The failing step's messages that state the target's leading dimension. The target is the labels
# the DataLoader gave, so its count is the batch's; the input is the model's output, whose leading
# dimension a wrong view or flatten in the model changes: the mismatch these messages report. In
# "Expected input batch_size (A) to match target batch_size (B)" the batch is B, never A. A shape
# closed after one number ("target: [16]") is a 1-D target, which a target flattened over tokens or
# pixels would make N x T long: ``flat`` says so, and such a number is not read for those tasks.
_MESSAGES = (
    re.compile(r"to match target batch_size \((?P<n>\d{1,7})(?P<flat>)\)"),
    re.compile(r"\btarget: \[(?P<n>\d{1,7})(?:(?P<flat>\])|,)"),
    re.compile(r"Expected target size \[[\d, ]*\], got \[(?P<n>\d{1,7})(?:(?P<flat>\])|,)"),
)
_FLATTENED = ("tokens", "segmentation")  # tasks whose target may be flattened before the loss
_LINES = 100_000  # a log's set-up is at its start: the search ends here
_BLOCK = 2_000  # lines from a failure's first line to its exception line, at most


@dataclass(frozen=True, slots=True)
class Shown:
    """A batch size the log shows.

    Attributes:
        size: the batch size.
        line: the log's line (1-based) it was read from.
        text: what was read, as the log shows it.
        failing: read from the failing step's own message (else from a print before the failure).
        flat: the number is a 1-D target's length, which a flattened target makes N x T.
    """

    size: int
    line: int
    text: str
    failing: bool = False
    flat: bool = False


def batch_sizes_in(
    lines: Iterable[str], *, until: int | None, message: str | None = None
) -> list[Shown]:
    """The batch sizes the log shows: the failing step's (read from ``message``, the first
    failure's exception line, at or after line ``until``, where the failure starts), then the
    first one a print shows before line ``until``. A print after the failure (an evaluation
    loader's, another run's) is never read."""
    failing = _in_message(message) if message and until is not None else None
    at: int | None = None  # the message's line
    printed: Shown | None = None
    for number, line in enumerate(lines, 1):
        if until is not None and number >= until:
            if failing is None or number > until + _BLOCK:
                break
            if message is not None and message in line:
                at = number
                break
        elif number > _LINES:
            break
        elif printed is None:
            printed = _in_print(line, number)
            if printed is not None and failing is None:
                break
    found = [] if printed is None else [printed]
    if failing is not None and until is not None:
        # a line the pasting changed (an HTML entity): the failure's first line stands for it
        size, text, flat = failing
        found.insert(0, Shown(size, at or until, text, failing=True, flat=flat))
    return found


def run_batch_size(shown: list[Shown], *, task: str | None) -> tuple[Shown, Shown | None] | None:
    """The size to replay the run with, most direct first: the failing step's message (unless
    ``task`` may flatten its target and the number is a 1-D target's length), then a print before
    the failure; with the other source where it shows another size."""
    usable = [s for s in shown if not (s.flat and task in _FLATTENED)]
    if not usable:
        return None
    other = next((s for s in usable[1:] if s.size != usable[0].size), None)
    return usable[0], other


def _in_print(line: str, number: int) -> Shown | None:
    for pattern in _PRINTS:
        m = pattern.search(line)
        if m is not None and (size := int(m.group(1).replace(",", ""))) > 0:
            return Shown(size, number, m.group(0).strip())
    return None


def _in_message(message: str) -> tuple[int, str, bool] | None:
    for pattern in _MESSAGES:
        m = pattern.search(message)
        if m is not None and (size := int(m.group("n"))) > 0:
            return size, m.group(0), m.group("flat") is not None
    return None
