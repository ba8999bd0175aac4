"""A batch-size mismatch is a named case of ``other``: the loss compares the shapes before it
reads a value, so a bad label in the failing batch does not explain it."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from labelgate.commands.crashbatch import failing_batch, loader_spec
from labelgate.commands.logs.logstep import FailStep
from labelgate.commands.logs.triage import triage_lines
from labelgate.contract import Batching, Contract
from labelgate.render.triage import render_triage

MESSAGE = "ValueError: Expected input batch_size (32) to match target batch_size (8)."
LOG = [
    "epoch 0 step 3 loss 0.71",
    "Traceback (most recent call last):",
    '  File "train.py", line 40, in <module>',
    "    loss = F.cross_entropy(logits, target)",
    MESSAGE,
]


def test_the_message_of_the_oracle_is_the_one_read() -> None:
    """PyTorch raises the shape error for a batch whose target holds a value past K too."""
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError, match=r"Expected input batch_size \(32\)") as raised:
        torch.nn.functional.cross_entropy(torch.randn(32, 4), torch.tensor([0, 1, 9, 2] * 2))
    assert f"ValueError: {raised.value}" == MESSAGE


def test_the_case_is_named_with_both_sizes_and_its_first_check() -> None:
    t = triage_lines(LOG)
    assert (t.family, t.kind, t.details) == (
        "other",
        "batch_size_mismatch",
        {"input": 32, "target": 8},
    )
    assert t.checks[0].startswith("the shapes of the failing step")
    assert t.avoid.startswith("reading the batch's label values as the cause")
    text = render_triage(t, "text")
    assert "family: other (batch_size_mismatch)" in text
    assert "batch size: the model's output has 32 rows, the target 8" in text


def test_a_bad_label_in_the_batch_does_not_explain_it(tmp_path: Path) -> None:
    labels = [i % 4 for i in range(64)]
    labels[37] = 9  # in batch 4 of 8 rows
    path = tmp_path / "train.parquet"
    pq.write_table(pa.table({"id": list(range(500, 564)), "label": labels}), path)
    c = Contract(num_classes=4, batching=Batching(size=8))
    spec = loader_spec(c, world_size=1, grad_accum=1, sampler_drop_last=False)

    shapes = failing_batch(
        [str(path)], c, spec, FailStep(4), family="other", kind="batch_size_mismatch"
    )
    assert not shapes.explained
    assert shapes.verdict == (
        "the batch holds bad labels (row 37 (id 537) holds 9 with K=4 (batch 4)), but a batch size "
        "mismatch is raised before the loss reads a value: fix them, and look at the shapes too"
    )
    other = failing_batch([str(path)], c, spec, FailStep(4), family="other")
    assert other.explained  # another error of the family: the bad value may be its cause
