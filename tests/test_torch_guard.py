"""labelgate.torch: the guard raises exactly where CrossEntropyLoss would fail or give NaN."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import labelgate

torch = pytest.importorskip("torch")
from labelgate.torch import check_targets, guarded_collate  # noqa: E402
from tests.strategies import LabelCase, label_cases  # noqa: E402

F = torch.nn.functional


def torch_fails(t: torch.Tensor, k: int, ignore: int, weights: list[float] | None) -> bool:
    w = None if weights is None else torch.tensor(weights)
    try:
        loss = F.cross_entropy(
            torch.zeros(t.numel(), k), t.reshape(-1), weight=w, ignore_index=ignore
        )
    except (IndexError, RuntimeError):
        return True
    return math.isnan(loss.item())


@settings(max_examples=300, deadline=None)
@given(case=label_cases(weighted=True), weighted=st.booleans())
def test_guard_agrees_with_cross_entropy(case: LabelCase, weighted: bool) -> None:
    t = torch.tensor(case.labels, dtype=torch.int64)
    weights = case.weights if weighted else None
    try:
        check_targets(t, case.k, case.ignore_index, weights=weights)
        raised = False
    except labelgate.LabelError:
        raised = True
    assert raised == torch_fails(t, case.k, case.ignore_index, weights)


class TestMessages:
    def test_positions_and_values(self) -> None:
        with pytest.raises(labelgate.LabelError) as err:
            check_targets(torch.tensor([0, 2, 4]), 4)
        assert "1 target(s) outside [0, 4)" in str(err.value) and "2: 4" in str(err.value)
        assert isinstance(err.value, ValueError)

    def test_token_positions(self) -> None:
        t = torch.tensor([[0, 1, -100], [2, 7, -1]])
        with pytest.raises(labelgate.LabelError, match=r"2 target\(s\).*\(1, 1\): 7, \(1, 2\): -1"):
            check_targets(t, 5)

    @pytest.mark.parametrize(
        ("t", "says"),
        [
            (torch.tensor([0.0, 1.0]), "cast with .long()"),
            (torch.tensor([0.5, 1.0]), "corrupted labels"),
            (torch.tensor([0, 1], dtype=torch.int32), "int64"),
            (torch.tensor([-100, -100]), "no usable target"),
        ],
    )
    def test_rules(self, t: torch.Tensor, says: str) -> None:
        with pytest.raises(
            labelgate.LabelError, match=says.replace("(", r"\(").replace(")", r"\)")
        ):
            check_targets(t, 4)

    def test_uint8_is_accepted(self) -> None:
        check_targets(torch.tensor([0, 3], dtype=torch.uint8), 4)

    def test_ignore_index_inside_range(self) -> None:
        with pytest.raises(labelgate.LabelError, match="inside"):
            check_targets(torch.tensor([0, 1]), 4, ignore_index=0)

    def test_zero_total_weight(self) -> None:
        with pytest.raises(labelgate.LabelError, match="weight 0"):
            check_targets(torch.tensor([1, 1]), 3, weights=[1.0, 0.0, 1.0])


class TestCollate:
    def dataset(self) -> list[tuple[torch.Tensor, int]]:
        labels = [0, 1, 2, 3, 0, 1, 9, 2, 3, 0, 1, 2]  # batch 1 (size 4) holds the 9
        return [(torch.zeros(3), y) for y in labels]

    @pytest.mark.parametrize("workers", [0, 2])
    def test_names_the_batch(self, workers: int) -> None:
        loader = torch.utils.data.DataLoader(
            self.dataset(),
            batch_size=4,
            num_workers=workers,
            collate_fn=guarded_collate(num_classes=4),
        )
        seen = 0
        with pytest.raises(labelgate.LabelError, match=r"batch 1: 1 target\(s\) outside \[0, 4\)"):
            for _ in loader:
                seen += 1
        assert seen in (0, 1)

    def test_mapping_batches(self) -> None:
        collate = guarded_collate(num_classes=2)
        with pytest.raises(labelgate.LabelError, match="batch 0"):
            collate([{"x": torch.zeros(2), "labels": 0}, {"x": torch.zeros(2), "labels": 5}])
        good = collate([{"x": torch.zeros(2), "labels": 0}, {"x": torch.zeros(2), "labels": 1}])
        assert good["labels"].tolist() == [0, 1]


def test_import_without_torch_is_one_line() -> None:
    code = "import sys; sys.modules['torch'] = None\nimport labelgate.torch"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert result.returncode == 1
    assert (
        "ImportError: labelgate.torch needs torch: pip install 'labelgate[torch]'" in result.stderr
    )
