"""Every rank's batches: the replay held to torch's DistributedSampler, and LG007 per rank and
per optimizer step through validate, the contract and the command line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import labelgate
from labelgate.contract import Contract
from labelgate.errors import ContractError
from labelgate.training.loaderorder import LoaderSpec
from labelgate.training.ranks import judge_ranks, rank_batches
from tests.conftest import run_cli

torch = pytest.importorskip("torch")


def torch_batches(rows: int, spec: LoaderSpec, rank: int) -> list[list[int]]:
    """What torch gives rank ``rank``: DistributedSampler's indices through a DataLoader."""
    from torch.utils.data import DataLoader, DistributedSampler

    sampler = DistributedSampler(
        range(rows),
        num_replicas=spec.world_size,
        rank=rank,
        shuffle=spec.shuffle_seed is not None,
        seed=spec.shuffle_seed or 0,
        drop_last=spec.sampler_drop_last,
    )
    loader = DataLoader(
        range(rows), batch_size=spec.batch_size, sampler=sampler, drop_last=spec.drop_last
    )
    return [b.tolist() for b in loader]


class TestOracle:
    @settings(max_examples=60, deadline=None)
    @given(
        rows=st.integers(1, 90),
        world=st.integers(2, 7),
        size=st.integers(1, 12),
        drop_last=st.booleans(),
        sampler_drop_last=st.booleans(),
        seed=st.one_of(st.none(), st.integers(0, 2**31)),
    )
    def test_per_rank_batches_are_distributed_samplers(
        self,
        rows: int,
        world: int,
        size: int,
        drop_last: bool,
        sampler_drop_last: bool,
        seed: int | None,
    ) -> None:
        if sampler_drop_last and rows < world:
            return  # torch's sampler gives every rank nothing then; so does the replay
        spec = LoaderSpec(
            batch_size=size,
            drop_last=drop_last,
            shuffle_seed=seed,
            world_size=world,
            sampler_drop_last=sampler_drop_last,
        )
        for rank in range(world):
            ours = [b.tolist() for b in rank_batches(rows, spec, rank)]
            assert ours == torch_batches(rows, spec, rank)


class TestJudge:
    def test_the_rank_whose_rows_are_all_ignored(self) -> None:
        live = np.arange(16) % 2 == 0  # odd rows have no usable target
        v = judge_ranks(live, np.zeros(16, bool), LoaderSpec(batch_size=4, world_size=2))
        assert [(b.rank, b.batch, b.rows) for b in v.empty] == [
            (1, 0, (1, 3, 5, 7)),
            (1, 1, (9, 11, 13, 15)),
        ]
        assert v.empty_steps == ()  # rank 0 has usable targets in every step

    def test_one_process_sees_no_empty_batch(self) -> None:
        live = np.arange(16) % 2 == 0
        v = judge_ranks(live, np.zeros(16, bool), LoaderSpec(batch_size=4))
        assert v.empty == ()

    def test_padding_repeats_the_head(self) -> None:
        live = np.ones(5, bool)
        v = judge_ranks(live, np.zeros(5, bool), LoaderSpec(batch_size=2, world_size=2))
        assert v.padded == 1 and v.cut == 0

    def test_a_step_empty_on_every_rank(self) -> None:
        live = np.array([True] * 8 + [False] * 8)
        spec = LoaderSpec(batch_size=2, world_size=2, grad_accum=2)
        v = judge_ranks(live, np.zeros(16, bool), spec)
        # rank r reads rows r, r+2, ...: batches 2 and 3 of each rank hold rows 8..15 only
        assert v.empty_steps == (1,)
        assert {(b.rank, b.batch) for b in v.empty} == {(0, 2), (0, 3), (1, 2), (1, 3)}

    def test_a_rejected_row_is_a_crash_not_a_nan(self) -> None:
        live = np.zeros(4, bool)
        rejected = np.array([True, False, False, False])
        v = judge_ranks(live, rejected, LoaderSpec(batch_size=2, world_size=2))
        assert [(b.rank, b.batch) for b in v.empty] == [(1, 0)]


def odd_rows_ignored(tmp_path: Path, rows: int = 16) -> str:
    import pyarrow as pa
    import pyarrow.parquet as pq

    labels = [i % 4 if i % 2 == 0 else -100 for i in range(rows)]
    path = tmp_path / "labels.parquet"
    pq.write_table(pa.table({"id": [f"r{i}" for i in range(rows)], "label": labels}), path)
    return str(path)


class TestValidate:
    def test_one_process_passes_and_two_ranks_fail(self, tmp_path: Path) -> None:
        path = odd_rows_ignored(tmp_path)
        assert labelgate.validate(path, classes=4, batch_size=4).passed
        report = labelgate.validate(path, classes=4, batch_size=4, world_size=2)
        (f,) = [f for f in report.findings if f.code == "LG007"]
        assert f.severity == "error" and f.count == 2
        assert "rank 1 batch 0 (rows 1, 3, 5, 7)" in f.message
        assert [e.id for e in f.examples] == ["r1", "r9"]
        assert f.details is not None and f.details["per_rank"][1]["rows"] == [9, 11, 13, 15]

    def test_step_normalisation_makes_an_empty_micro_batch_info(self, tmp_path: Path) -> None:
        path = odd_rows_ignored(tmp_path)
        report = labelgate.validate(
            path, classes=4, batch_size=4, world_size=2, grad_accum=2, normalize="step"
        )
        assert report.passed
        assert [f.severity for f in report.findings if f.code == "LG007"] == ["info"]

    def test_long_lists_in_details_are_capped_with_their_counts(self, tmp_path: Path) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        rows = 12_000  # every row ignored: 3,000 empty steps of 2 ranks x 2 micro-batches of 1
        path = tmp_path / "ignored.parquet"
        pq.write_table(pa.table({"id": range(rows), "label": [-100] * rows}), path)
        report = labelgate.validate(
            str(path), classes=4, batch_size=1, world_size=2, grad_accum=2, normalize="step"
        )
        steps = [f for f in report.findings if f.code == "LG007" and f.unit == "steps"]
        assert len(steps) == 1 and steps[0].details is not None
        d = steps[0].details
        assert d["step_count"] == steps[0].count == 3000 and len(d["steps"]) == 1000
        assert d["steps"] == list(range(1000)) and len(d["per_rank"]) == 1000
        assert d["per_rank_count"] == 12_000

    def test_shuffled_ranks_follow_the_sampler_seed(self, tmp_path: Path) -> None:
        path = odd_rows_ignored(tmp_path, rows=64)
        report = labelgate.validate(path, classes=4, batch_size=2, world_size=4, shuffle_seed=3)
        spec = LoaderSpec(batch_size=2, shuffle_seed=3, world_size=4)
        live = np.arange(64) % 2 == 0
        expected = judge_ranks(live, np.zeros(64, bool), spec).empty
        found = [f for f in report.findings if f.code == "LG007"]
        assert len(expected) > 0 and found[0].count == len(expected)

    def test_contract_keys(self, tmp_path: Path) -> None:
        path = tmp_path / "c.yaml"
        path.write_text(
            "batching:\n  size: 4\n  world_size: 2\n  grad_accum: 3\n  normalize: step\n"
        )
        b = Contract.from_yaml(path).batching
        assert (b.world_size, b.grad_accum, b.normalize) == (2, 3, "step")
        path.write_text("batching:\n  world_sise: 2\n")
        with pytest.raises(ContractError, match="did you mean 'world_size'"):
            Contract.from_yaml(path)
        path.write_text("batching:\n  normalize: token\n")
        with pytest.raises(ContractError, match=r"batching\.normalize"):
            Contract.from_yaml(path)

    def test_cli_names_rank_batch_and_rows(self, tmp_path: Path) -> None:
        path = odd_rows_ignored(tmp_path)
        done = run_cli(
            "validate",
            path,
            "-k",
            "4",
            "--batch-size",
            "4",
            "--world-size",
            "2",
            "--format",
            "json",
        )
        assert done.returncode == 1, done.stderr
        found = json.loads(done.stdout)
        assert found["contract"]["batching"]["world_size"] == 2
        messages = [f["message"] for f in found["findings"] if f["code"] == "LG007"]
        assert "rank 1 batch 1 (rows 9, 11, 13, 15)" in messages[0]
        single = run_cli("validate", path, "-k", "4", "--batch-size", "4")
        assert single.returncode == 0, single.stdout
