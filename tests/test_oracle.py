"""PyTorch is the oracle: labelgate's failing batches are exactly where CPU cross_entropy fails."""

from __future__ import annotations

import math
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labelgate import Batching, Contract
from labelgate.run.validation import report_of
from tests.strategies import LabelCase, TokenCase, label_cases, token_cases

torch = pytest.importorskip("torch")
F = torch.nn.functional

ORACLE_SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def torch_verdict(
    batches: list[list[int]] | list[torch.Tensor],
    k: int,
    ignore_index: int,
    weights: list[float] | None,
) -> tuple[set[int], set[int]]:
    """(batches where cross_entropy raises, batches where it returns NaN), on the CPU."""
    raises, nan = set(), set()
    w = None if weights is None else torch.tensor(weights, dtype=torch.float32)
    for i, b in enumerate(batches):
        t = b if isinstance(b, torch.Tensor) else torch.tensor(b, dtype=torch.int64)
        x = torch.zeros(t.shape[0], k)
        try:
            loss = F.cross_entropy(x, t, weight=w, ignore_index=ignore_index, reduction="mean")
        except (IndexError, RuntimeError):
            raises.add(i)
            continue
        if math.isnan(loss.item()):
            nan.add(i)
    return raises, nan


def labelgate_verdict(path: Path, contract: Contract) -> tuple[set[int], set[int]]:
    report = report_of([str(path)], contract, max_examples=1)
    raises = set()
    nan = set()
    for f in report.findings:
        if f.code in ("LG004", "LG005"):
            raises |= set(f.batches)
        if f.code == "LG007":
            nan |= set(f.batches)
    return raises, nan


def write_labels(tmp: Path, labels: list[int] | list[list[int]], list_type: bool = False) -> Path:
    path = tmp / "labels.parquet"
    typ = pa.list_(pa.int64()) if list_type else pa.int64()
    pq.write_table(pa.table({"label": pa.array(labels, typ)}), path, row_group_size=7)
    return path


def file_order_batches(labels: list[int], size: int, drop_last: bool) -> list[list[int]]:
    batches = [labels[i : i + size] for i in range(0, len(labels), size)]
    if drop_last and batches and len(batches[-1]) < size:
        batches.pop()
    return batches


class TestMulticlassOracle:
    def check(self, case: LabelCase, tmp: Path) -> None:
        path = write_labels(tmp, case.labels)
        contract = Contract(
            num_classes=case.k,
            ignore_index=case.ignore_index,
            batching=Batching(size=case.batch_size, drop_last=case.drop_last),
            class_weights=None if case.weights is None else tuple(case.weights),
        )
        expected = torch_verdict(
            file_order_batches(case.labels, case.batch_size, case.drop_last),
            case.k,
            case.ignore_index,
            case.weights,
        )
        assert labelgate_verdict(path, contract) == expected

    @ORACLE_SETTINGS
    @given(case=label_cases())
    def test_unweighted(self, case: LabelCase, tmp_path: Path) -> None:
        self.check(case, tmp_path)

    @ORACLE_SETTINGS
    @given(case=label_cases(weighted=True))
    def test_weighted(self, case: LabelCase, tmp_path: Path) -> None:
        self.check(case, tmp_path)

    def test_hand_picked_edges(self, tmp_path: Path) -> None:
        # [0, 2, 4] with K=4: batch 0 raises; an all-ignored batch is NaN; weight-0 batch is NaN.
        case = LabelCase([0, 2, 4, -100, -100, -100, 1, 1, 1], 4, 3, -100, False, [1, 0, 1, 1])
        self.check(case, tmp_path)
        assert torch_verdict([[0, 2, 4], [-100] * 3, [1, 1, 1]], 4, -100, [1, 0, 1, 1]) == (
            {0},
            {1, 2},
        )


class TestShuffledOracle:
    @settings(
        max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
    )
    @given(case=label_cases(), seed=st.integers(min_value=0, max_value=2**31))
    def test_matches_a_real_dataloader(self, case: LabelCase, seed: int, tmp_path: Path) -> None:
        path = write_labels(tmp_path, case.labels)
        contract = Contract(
            num_classes=case.k,
            ignore_index=case.ignore_index,
            batching=Batching(size=case.batch_size, drop_last=case.drop_last, shuffle_seed=seed),
        )
        loader = torch.utils.data.DataLoader(
            torch.tensor(case.labels, dtype=torch.int64),
            batch_size=case.batch_size,
            shuffle=True,
            drop_last=case.drop_last,
            generator=torch.Generator().manual_seed(seed),
        )
        expected = torch_verdict(list(loader), case.k, case.ignore_index, None)
        assert labelgate_verdict(path, contract) == expected


class TestTokenOracle:
    @ORACLE_SETTINGS
    @given(case=token_cases())
    def test_tokens(self, case: TokenCase, tmp_path: Path) -> None:
        path = write_labels(tmp_path, case.rows, list_type=True)
        contract = Contract(
            num_classes=case.k,
            ignore_index=case.ignore_index,
            batching=Batching(size=case.batch_size),
        )
        batches = []
        for i in range(0, len(case.rows), case.batch_size):
            rows = case.rows[i : i + case.batch_size]
            width = max(len(r) for r in rows)
            padded = [r + [case.ignore_index] * (width - len(r)) for r in rows]
            batches.append(torch.tensor(padded, dtype=torch.int64).reshape(-1))
        expected = torch_verdict(batches, case.k, case.ignore_index, None)
        assert labelgate_verdict(path, contract) == expected
