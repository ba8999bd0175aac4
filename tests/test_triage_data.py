"""triage --data: the failing step read from a log, the DataLoader's batch at that step, its rows
and the verdict; the sampler replays held to torch's own samplers."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labelgate.commands.crashbatch import failing_batch, loader_spec
from labelgate.commands.logs.logstep import FailStep, read_step
from labelgate.contract import Batching, Contract
from labelgate.errors import UsageError
from labelgate.training.loaderorder import LoaderSpec, distributed_indices, epoch_order
from tests.conftest import BARE_ENV, cli_here, run_cli
from tests.support.crashes import (
    BAD_ROW,
    Crash,
    hf_crash,  # noqa: F401 - the fixture, shared
    lightning_crash,  # noqa: F401 - the fixture, shared
    planted,
)
from tests.support.frameworks import frameworks

torch = pytest.importorskip("torch")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from torch.utils.data import DataLoader, DistributedSampler  # noqa: E402


def contract(size: int, seed: int | None = None, drop_last: bool = False) -> Contract:
    return Contract(
        num_classes=4, batching=Batching(size=size, drop_last=drop_last, shuffle_seed=seed)
    )


class TestSamplerReplay:
    @settings(max_examples=60, deadline=None)
    @given(
        rows=st.integers(1, 60),
        world=st.integers(1, 5),
        shuffle=st.booleans(),
        seed=st.integers(0, 2**31),
        epoch=st.integers(0, 3),
        drop_last=st.booleans(),
        data=st.data(),
    )
    def test_distributed_sampler_exactly(
        self,
        rows: int,
        world: int,
        shuffle: bool,
        seed: int,
        epoch: int,
        drop_last: bool,
        data: st.DataObject,
    ) -> None:
        rank = data.draw(st.integers(0, world - 1))
        sampler = DistributedSampler(
            range(rows),
            num_replicas=world,
            rank=rank,
            shuffle=shuffle,
            seed=seed,
            drop_last=drop_last,
        )
        sampler.set_epoch(epoch)
        ours = distributed_indices(
            rows, world, rank, shuffle=shuffle, seed=seed, epoch=epoch, drop_last=drop_last
        )
        assert ours.tolist() == list(sampler)

    @settings(max_examples=40, deadline=None)
    @given(
        rows=st.integers(1, 50),
        size=st.integers(1, 9),
        drop_last=st.booleans(),
        seed=st.integers(0, 2**31),
        world=st.integers(1, 4),
        sampler_drop_last=st.booleans(),
        data=st.data(),
    )
    def test_every_batch_of_three_epochs_as_the_dataloader_gives_it(
        self,
        rows: int,
        size: int,
        drop_last: bool,
        seed: int,
        world: int,
        sampler_drop_last: bool,
        data: st.DataObject,
    ) -> None:
        rank = data.draw(st.integers(0, world - 1))
        spec = LoaderSpec(size, drop_last, seed, world, sampler_drop_last)
        if world == 1:
            g = torch.Generator().manual_seed(seed)
            loader = DataLoader(
                range(rows), batch_size=size, shuffle=True, generator=g, drop_last=drop_last
            )
        else:
            sampler = DistributedSampler(
                range(rows), num_replicas=world, rank=rank, seed=seed, drop_last=sampler_drop_last
            )
            loader = DataLoader(range(rows), batch_size=size, sampler=sampler, drop_last=drop_last)
        for epoch in range(3):
            if world > 1:
                sampler.set_epoch(epoch)
            real = [b.tolist() for b in loader]
            assert len(real) == spec.batches_per_epoch(rows)
            ours = [
                spec.batch_rows(rows, epoch=epoch, rank=rank, batch=b).tolist()
                for b in range(len(real))
            ]
            assert ours == real

    def test_epoch_order_moves_with_the_epoch(self) -> None:
        assert epoch_order(20, 3, 0).tolist() != epoch_order(20, 3, 1).tolist()

    def test_a_batch_past_the_epoch_and_a_bad_rank_are_usage_errors(self) -> None:
        spec = LoaderSpec(8, world_size=2)
        with pytest.raises(UsageError, match="past the epoch's 7 batches"):
            spec.batch_rows(100, epoch=0, rank=0, batch=7)
        with pytest.raises(UsageError, match="rank 2 is not in"):
            spec.batch_rows(100, epoch=0, rank=2, batch=0)
        with pytest.raises(UsageError, match="batch_size must be a positive integer"):
            LoaderSpec(0)


TRACEBACK = [
    "Traceback (most recent call last):",
    '  File "train.py", line 30, in <module>',
    "IndexError: Target 4 is out of bounds.",
]


class TestReadStep:
    def step(self, lines: list[str]) -> FailStep:
        from labelgate.commands.logs.triage import triage_lines

        t = triage_lines(lines)
        return read_step(lines, until=t.first_error["line"] if t.first_error else None, rank=t.rank)

    def test_a_plain_enumerate_loop(self) -> None:
        found = self.step([f"step {i} loss 0.5" for i in range(4)] + TRACEBACK)
        assert (found.step, found.unit, found.within_epoch, found.style) == (
            4,
            "optimizer step",
            False,
            "plain",
        )

    def test_a_plain_count_from_one_and_an_epoch(self) -> None:
        assert self.step(["epoch 2 step 3/10 loss 0.5", *TRACEBACK]).step == 3
        found = self.step(["epoch 2 step 3 loss 0.5", *TRACEBACK])
        assert (found.epoch, found.step, found.within_epoch) == (2, 4, True)

    def test_lightning_tqdm_bar_rewritten_with_carriage_returns(self) -> None:
        bar = "\r".join(
            f"Epoch 1:  {n * 10}%|███       | {n}/10 [00:01<00:01, 3.00it/s, v_num=0, train_loss=1.2]"
            for n in range(5)
        )
        found = self.step([bar, *TRACEBACK])
        assert (found.epoch, found.step, found.unit, found.per_epoch) == (1, 4, "batch", 10)
        assert found.global_step == 14

    def test_lightning_rich_bar(self) -> None:
        line = "Epoch 0/2  ━━━━━━╸            5/13 0:00:00 • 0:00:01 25.71it/s train_loss: 1.394"
        found = self.step([line, *TRACEBACK])
        assert (found.epoch, found.step, found.style) == (0, 5, "lightning")

    def test_hf_trainer_bar_and_logged_dicts(self) -> None:
        dict_line = (
            "{'loss': '1.545', 'grad_norm': '0.8455', 'learning_rate': '5e-05', 'epoch': '0.31'}"
        )
        only_dict = self.step([dict_line, *TRACEBACK])
        assert (only_dict.step, only_dict.epoch_fraction) == (None, 0.31)
        bar = " 31%|███       | 4/13 [00:00<00:00, 19.42it/s]Traceback (most recent call last):"
        found = self.step([dict_line, bar, *TRACEBACK[1:]])
        assert (found.step, found.unit, found.style) == (4, "optimizer step", "tqdm")

    def test_a_nan_loss_is_the_failure_when_it_comes_first(self) -> None:
        lines = [f"step {i} loss {0.5 if i < 3 else 'nan'}" for i in range(6)]
        found = self.step(lines)
        assert (found.step, found.cause) == (3, "nan")
        hf = self.step(["{'loss': 'nan', 'grad_norm': 'nan', 'epoch': '0.5'}"])
        assert (hf.cause, hf.epoch_fraction) == ("nan", 0.5)

    def test_the_rank_of_the_failing_line(self) -> None:
        lines = ["[rank1]: step 2 loss 0.4", "[rank1]: Traceback (most recent call last):"]
        lines += ["[rank1]: IndexError: Target 4 is out of bounds."]
        found = self.step(lines)
        assert (found.step, found.rank) == (3, 1)

    def test_no_progress_at_all(self) -> None:
        assert self.step(TRACEBACK).step is None


class TestJoin:
    def test_file_order(self, tmp_path: Path) -> None:
        data = planted(tmp_path)
        c = contract(8)
        crash = failing_batch(
            [data],
            c,
            loader_spec(c, world_size=1, grad_accum=1, sampler_drop_last=False),
            FailStep(4),
            family="index_out_of_range",
        )
        assert crash.explained
        assert crash.verdict == (
            "the failure is explained by the data: row 37 (id 537) holds 4 with K=4 (batch 4)"
        )
        assert [r["row"] for r in crash.batches[0]["rows"]] == list(range(32, 40))
        valid = failing_batch(
            [data],
            c,
            loader_spec(c, world_size=1, grad_accum=1, sampler_drop_last=False),
            FailStep(3),
            family="index_out_of_range",
        )
        assert not valid.explained
        assert valid.verdict.startswith("this batch's labels are valid for this loss")

    def test_shuffled_order_finds_the_row_where_the_dataloader_put_it(self, tmp_path: Path) -> None:
        data = planted(tmp_path)
        seed = 7
        g = torch.Generator().manual_seed(seed)
        loader = DataLoader(range(100), batch_size=8, shuffle=True, generator=g)
        where = next(i for i, b in enumerate(loader) if BAD_ROW in b.tolist())
        c = contract(8, seed)
        spec = loader_spec(c, world_size=1, grad_accum=1, sampler_drop_last=False)
        crash = failing_batch([data], c, spec, FailStep(where, "batch", 0, True))
        assert crash.explained and f"row {BAD_ROW} (id {500 + BAD_ROW}) holds 4" in crash.verdict
        # the next epoch shuffles again: a global step one epoch later lands elsewhere
        later = failing_batch([data], c, spec, FailStep(where + 13, "batch"))
        assert later.step["epoch"] == 1

    def test_world_size_two_names_the_rank(self, tmp_path: Path) -> None:
        data = planted(tmp_path)
        c = contract(8)
        spec = loader_spec(c, world_size=2, grad_accum=1, sampler_drop_last=False)
        sampler = DistributedSampler(range(100), num_replicas=2, rank=1, shuffle=False)
        batches = [b.tolist() for b in DataLoader(range(100), batch_size=8, sampler=sampler)]
        where = next(i for i, b in enumerate(batches) if BAD_ROW in b)  # row 37 is odd: rank 1
        both = failing_batch([data], c, spec, FailStep(where))
        assert [(b["rank"], b["rejected"]) for b in both.batches] == [(0, 0), (1, 1)]
        assert "rank 1, batch 2" in both.verdict
        rank0 = failing_batch([data], c, spec, FailStep(where, rank=0))
        assert not rank0.explained  # rank 0's batch at that step is clean

    def test_world_size_two_shuffled(self, tmp_path: Path) -> None:
        data = planted(tmp_path)
        c = contract(8, seed=11)
        spec = loader_spec(c, world_size=2, grad_accum=1, sampler_drop_last=False)
        for rank in (0, 1):
            sampler = DistributedSampler(range(100), num_replicas=2, rank=rank, seed=11)
            sampler.set_epoch(1)
            batches = [b.tolist() for b in DataLoader(range(100), batch_size=8, sampler=sampler)]
            hit = [i for i, b in enumerate(batches) if BAD_ROW in b]
            if hit:
                crash = failing_batch(
                    [data], c, spec, FailStep(hit[0], "batch", 1, True, rank=rank)
                )
                assert crash.explained and crash.batches[0]["rank"] == rank

    def test_grad_accumulation_judges_every_micro_batch(self, tmp_path: Path) -> None:
        data = planted(tmp_path)
        c = contract(4)
        spec = loader_spec(c, world_size=1, grad_accum=2, sampler_drop_last=False)
        crash = failing_batch([data], c, spec, FailStep(4))  # micro-batches 8 and 9
        assert [b["batch"] for b in crash.batches] == [8, 9]
        assert crash.explained and "(batch 9)" in crash.verdict

    def test_an_all_ignored_batch_is_a_nan(self, tmp_path: Path) -> None:
        data = planted(tmp_path, bad={i: -100 for i in range(8, 16)})
        c = contract(8)
        spec = loader_spec(c, world_size=1, grad_accum=1, sampler_drop_last=False)
        crash = failing_batch([data], c, spec, FailStep(1, cause="nan"))
        assert crash.explained and "no usable target" in crash.verdict

    def test_bad_labels_do_not_explain_an_out_of_memory(self, tmp_path: Path) -> None:
        data = planted(tmp_path)
        c = contract(8)
        spec = loader_spec(c, world_size=1, grad_accum=1, sampler_drop_last=False)
        crash = failing_batch([data], c, spec, FailStep(4), family="out_of_memory")
        assert not crash.explained and "does not come from labels" in crash.verdict

    def test_token_rows_name_the_refused_value(self, tmp_path: Path) -> None:
        tokens = [[i % 4, -100, (i + 1) % 4] for i in range(20)]
        tokens[13] = [1, -100, 7]
        path = tmp_path / "tokens.parquet"
        pq.write_table(pa.table({"id": list(range(20)), "labels": tokens}), path)
        c = Contract(num_classes=4, task="tokens", batching=Batching(size=4))
        spec = loader_spec(c, world_size=1, grad_accum=1, sampler_drop_last=False)
        crash = failing_batch([str(path)], c, spec, FailStep(3))
        assert crash.explained
        assert "row 13 (id 13) holds 7 with K=4 (batch 3)" in crash.verdict
        assert crash.bad[0]["label"] == [1, -100, 7]

    def test_a_rank_past_the_world_size_asks_for_it(self, tmp_path: Path) -> None:
        c = contract(8)
        spec = loader_spec(c, world_size=1, grad_accum=1, sampler_drop_last=False)
        with pytest.raises(UsageError, match="failure is on rank 1: give the run's --world-size"):
            failing_batch([planted(tmp_path)], c, spec, FailStep(2, rank=1))

    def test_no_step_asks_for_one(self, tmp_path: Path) -> None:
        c = contract(8)
        spec = loader_spec(c, world_size=1, grad_accum=1, sampler_drop_last=False)
        with pytest.raises(UsageError, match="give --step N"):
            failing_batch([planted(tmp_path)], c, spec, FailStep(None))


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``labelgate ARGS`` in a fresh process with a bare environment, for what only a process
    shows (its exit status and stderr on bad input); ``cli_here`` for what a command decides."""
    return run_cli(*args, env=BARE_ENV)


class TestCommand:
    def test_json_carries_step_rows_and_verdict(self, tmp_path: Path) -> None:
        data = planted(tmp_path)
        log = tmp_path / "train.log"
        log.write_text("\n".join([f"step {i} loss 0.5" for i in range(4)] + TRACEBACK) + "\n")
        done = cli_here(
            "triage", str(log), "--data", data, "-k", "4", "--batch-size", "8", "--format", "json"
        )
        assert done.returncode == 1, done.stderr
        doc = json.loads(done.stdout)
        assert doc["failing_step"]["step"] == 4
        assert doc["data"]["explained"] is True
        rows = doc["data"]["batches"][0]["rows"]
        assert {"row": 37, "id": 537, "label": 4, "status": "above K"} in rows
        assert set(rows[0]) == {"row", "id", "label", "status"}  # ids and labels, no content

    def test_step_and_epoch_override_the_log(self, tmp_path: Path) -> None:
        data = planted(tmp_path)
        log = tmp_path / "train.log"
        log.write_text("\n".join(TRACEBACK) + "\n")
        done = cli_here(
            "triage", str(log), "--data", data, "-k", "4", "--batch-size", "8", "--step", "4"
        )
        assert done.returncode == 1
        assert "row 37 (id 537) holds 4 with K=4" in done.stdout
        past = cli_here(
            "triage",
            str(log),
            "--data",
            data,
            "-k",
            "4",
            "--batch-size",
            "8",
            "--step",
            "99",
            "--epoch",
            "0",
        )
        assert (
            past.returncode == 2 and past.stderr.count("\n") == 1 and "Traceback" not in past.stderr
        )

    def test_a_missing_data_file_is_one_line_and_exit_2(self, tmp_path: Path) -> None:
        log = tmp_path / "train.log"
        log.write_text("\n".join(TRACEBACK) + "\n")
        done = cli(
            "triage", str(log), "--data", str(tmp_path / "nope.parquet"), "-k", "4", "--step", "0"
        )
        assert done.returncode == 2 and "Traceback" not in done.stderr


@pytest.mark.slow
@frameworks
class TestRealFrameworks:
    """Logs of real runs, each printed by a process of its own as the run crashed on row 37."""

    def shuffled_batch(self) -> int:
        """The batch of 8 in which torch's DataLoader, shuffled by a generator seeded 7, puts
        row 37 in the first epoch."""
        g = torch.Generator().manual_seed(7)
        loader = DataLoader(range(100), batch_size=8, shuffle=True, generator=g)
        return next(i for i, b in enumerate(loader) if BAD_ROW in b.tolist())

    def test_lightning_log_with_a_shuffled_loader(
        self,
        lightning_crash: Crash,  # noqa: F811
    ) -> None:
        done = cli_here(
            "triage",
            str(lightning_crash.log),
            "--data",
            lightning_crash.data,
            "-k",
            "4",
            "--batch-size",
            "8",
            "--shuffle-seed",
            "7",
            "--format",
            "json",
        )
        doc = json.loads(done.stdout)
        assert doc["family"] == "index_out_of_range"
        assert doc["failing_step"]["style"] == "lightning"
        assert doc["data"]["step"]["batches"] == [self.shuffled_batch()]
        assert doc["data"]["explained"] and "row 37 (id 537) holds 4" in doc["data"]["verdict"]

    def test_lightning_s_inferred_batch_size_is_read(
        self,
        lightning_crash: Crash,  # noqa: F811
    ) -> None:
        """The same run's log without --batch-size: the size is read from the warning in which
        Lightning says the batch size it inferred."""
        log, data = str(lightning_crash.log), lightning_crash.data
        done = cli_here(
            "triage", log, "--data", data, "-k", "4", "--shuffle-seed", "7", "--format", "json"
        )
        doc = json.loads(done.stdout)
        assert "The batch size we found is 8" in doc["batch_size_note"]
        assert doc["data"]["step"]["batches"] == [self.shuffled_batch()]
        assert doc["data"]["explained"] and "row 37 (id 537) holds 4" in doc["data"]["verdict"]

    def test_hf_trainer_log_with_gradient_accumulation(
        self,
        hf_crash: Crash,  # noqa: F811
    ) -> None:
        done = cli_here(
            "triage",
            str(hf_crash.log),
            "--data",
            hf_crash.data,
            "-k",
            "4",
            "--batch-size",
            "4",
            "--grad-accum",
            "2",
            "--format",
            "json",
        )
        doc = json.loads(done.stdout)
        assert doc["data"]["step"]["batches"] == [8, 9]  # optimizer step 4: micro-batches 8, 9
        assert doc["data"]["explained"]


def torch_message(logits: tuple[int, ...], target: tuple[int, ...], *, nll: bool = False) -> str:
    """The message PyTorch's loss raises for these shapes, as a traceback's last line shows it."""
    loss = torch.ops.aten.nll_loss_forward if nll else torch.nn.functional.cross_entropy
    args = (None, 1, -100) if nll else ()
    with pytest.raises((ValueError, RuntimeError)) as raised:
        loss(torch.randn(*logits), torch.zeros(*target, dtype=torch.long), *args)
    return f"{raised.type.__name__}: {raised.value}"


def failed_with(message: str) -> list[str]:
    return [*TRACEBACK[:2], message]


# Lightning 2.6's warning when self.log(..., on_epoch=True) infers the batch size of a dict batch
# with a string field, as a fit of 200 rows in batches of 8 printed it (line 5 of its log)
LIGHTNING_FOUND = (
    "/venv/lib/python3.11/site-packages/lightning/pytorch/utilities/data.py:79: Trying to infer "
    "the `batch_size` from an ambiguous collection. The batch size we found is 8. To avoid any "
    "miscalculations, use `self.log(..., batch_size=batch_size)`."
)


class TestBatchSizeOfTheRun:
    """A default that changes the verdict is said: without --batch-size, the size the failing
    step's message states is read, else the one a print before the failure shows (an argparse
    print, the HF Trainer's summary, Lightning's inference warning), else the default is named
    as assumed."""

    def run(
        self,
        tmp_path: Path,
        head: list[str],
        capsys: pytest.CaptureFixture[str],
        failure: list[str] = TRACEBACK,
        tail: tuple[str, ...] = (),
    ) -> Any:
        from labelgate.cli import main

        data = planted(tmp_path, rows=200)
        log = tmp_path / "train.log"
        steps = [f"step {i} loss 0.5" for i in range(4)]
        log.write_text("\n".join([*head, *steps, *failure, *tail]) + "\n")
        capsys.readouterr()
        main(["triage", str(log), "--data", data, "-k", "4", "--format", "json"])
        return json.loads(capsys.readouterr().out)

    @pytest.mark.parametrize(
        ("shown", "read"),
        [
            ("Namespace(batch_size=8, lr=0.1)", "batch_size=8"),
            (
                "  Instantaneous batch size per device = 8",
                "Instantaneous batch size per device = 8",
            ),
            ("python train.py --batch-size 8 --epochs 3", "--batch-size 8"),
            ('{"train_batch_size": 8, "seed": 1}', '"train_batch_size": 8'),
            (LIGHTNING_FOUND, "The batch size we found is 8"),
        ],
    )
    def test_the_log_s_batch_size_is_read_and_said(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], shown: str, read: str
    ) -> None:
        doc = self.run(tmp_path, ["starting", shown], capsys)
        assert doc["batch_size_note"].startswith(
            f"batch size 8: read from line 2 of the log (a print before the failure: {read})"
        )
        assert doc["data"]["explained"] is True  # row 37 in batch 4 of 8 rows

    def test_without_one_the_default_is_named_as_assumed(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        doc = self.run(tmp_path, ["starting"], capsys)
        assert doc["batch_size_note"].startswith("batch size 32: assumed")
        assert doc["data"]["explained"] is False  # batch 4 of 32 rows misses row 37: said

    def test_the_failing_message_gives_the_target_s_count_not_the_input_s(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        message = torch_message((32, 4), (8,))
        assert message == (
            "ValueError: Expected input batch_size (32) to match target batch_size (8)."
        )
        doc = self.run(tmp_path, ["starting"], capsys, failure=failed_with(message))
        assert doc["batch_size_note"].startswith(
            "batch size 8: read from line 8 of the log (the failing step's message: to match "
            "target batch_size (8))"
        )
        assert doc["data"]["step"]["batches"] == [4]
        assert [r["row"] for r in doc["data"]["batches"][0]["rows"]] == list(range(32, 40))

    @pytest.mark.parametrize(
        ("logits", "target", "nll"),
        [((32, 4), (8,), True), ((8, 4, 5, 5), (8, 32, 32), False), ((8, 4, 32), (8, 12), False)],
    )
    def test_a_shape_message_gives_the_target_s_leading_dimension(
        self,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        logits: tuple[int, ...],
        target: tuple[int, ...],
        nll: bool,
    ) -> None:
        message = torch_message(logits, target, nll=nll)
        # a shape, with another dimension than the batch's beside it
        assert message.startswith("RuntimeError: ") and "32" in message
        doc = self.run(tmp_path, ["starting"], capsys, failure=failed_with(message))
        assert doc["batch_size_note"].startswith("batch size 8: read from line 8 of the log")
        assert doc["data"]["explained"] is True

    def test_the_failing_message_wins_over_a_print_and_the_print_is_said(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        failure = failed_with(torch_message((16, 4), (8,)))
        doc = self.run(tmp_path, ["Namespace(batch_size=32)"], capsys, failure=failure)
        note = doc["batch_size_note"]
        assert note.startswith("batch size 8: read from line 8 of the log")
        assert "line 1 shows batch_size=32" in note
        # the batch of 8 holds row 37; a shape error is raised before a value is read
        assert doc["data"]["explained"] is False
        assert "row 37 (id 537) holds 4 with K=4 (batch 4)" in doc["data"]["verdict"]

    def test_a_print_after_the_failure_is_not_read(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        after = ("eval loader: batch_size=32", "Instantaneous batch size per device = 32")
        doc = self.run(tmp_path, ["batch_size=8"], capsys, tail=after)
        assert doc["batch_size_note"].startswith("batch size 8: read from line 1 of the log")
        alone = self.run(tmp_path, ["starting"], capsys, tail=after)
        assert alone["batch_size_note"].startswith("batch size 32: assumed")

    @pytest.mark.parametrize("device", [False, True])
    def test_a_message_without_a_shape_leaves_the_size_assumed(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], device: bool
    ) -> None:
        with pytest.raises(IndexError) as raised:  # CPU torch on a target of 4 with K=4
            torch.nn.functional.cross_entropy(torch.randn(8, 4), torch.full((8,), 4))
        message = (
            "RuntimeError: CUDA error: device-side assert triggered"
            if device
            else f"IndexError: {raised.value}"
        )
        doc = self.run(tmp_path, ["starting"], capsys, failure=failed_with(message))
        assert doc["family"] == "index_out_of_range"
        assert doc["batch_size_note"].startswith("batch size 32: assumed")


class TestRunBatchSize:
    def test_a_1d_target_count_is_not_read_where_the_target_may_be_flattened(self) -> None:
        from labelgate.commands.logs.logbatch import Shown, run_batch_size

        count = Shown(256, 9, "to match target batch_size (256)", failing=True, flat=True)
        printed = Shown(8, 1, "batch_size=8")
        assert run_batch_size([count, printed], task="multiclass") == (count, printed)
        assert run_batch_size([count, printed], task="tokens") == (printed, None)
        assert run_batch_size([count], task="segmentation") is None
        shape = Shown(8, 9, "target: [8,", failing=True)  # a 2-D target: its rows, by construction
        assert run_batch_size([shape], task="tokens") == (shape, None)


class TestBatchSizesIn:
    MESSAGE = "ValueError: Expected input batch_size (32) to match target batch_size (8)."

    def sizes(self, lines: list[str]) -> list[tuple[int, int, bool]]:
        from labelgate.commands.logs.logbatch import batch_sizes_in
        from labelgate.commands.logs.triage import triage_lines

        t = triage_lines(lines)
        until = t.first_error["line"] if t.first_error else None
        found = batch_sizes_in(lines, until=until, message=t.exception)
        return [(s.size, s.line, s.failing) for s in found]

    def test_a_rank_s_message_is_read_on_its_own_line(self) -> None:
        lines = [
            "[rank1]: batch_size=16",
            "[rank1]: Traceback (most recent call last):",
            '[rank1]:   File "train.py", line 30, in <module>',
            f"[rank1]: {self.MESSAGE}",
            "[rank0]: batch_size=64",
        ]
        assert self.sizes(lines) == [(8, 4, True), (16, 1, False)]

    def test_a_pasted_message_changed_by_an_entity_stands_at_the_failure_s_first_line(
        self,
    ) -> None:
        lines = ["step 0 loss 0.5", *TRACEBACK[:2], "E   " + self.MESSAGE.replace("(", "&#40;")]
        assert self.sizes(lines) == [(8, 2, True)]

    def test_no_failure_reads_the_first_print(self) -> None:
        assert self.sizes(["batch_size=16", "batch_size=64", "step 0 loss 0.5"]) == [(16, 1, False)]


REFERENCE_LOOP = Path(__file__).parent / "fixtures" / "h200_reference" / "train_loop.txt"
ASYNC_FOOTER = [
    "torch.AcceleratorError: CUDA error: device-side assert triggered",
    "CUDA kernel errors might be asynchronously reported at some other API call, so the "
    "stacktrace below might be incorrect.",
]


class TestAsynchronous:
    """The H200 recording ``train_loop.txt``: step 3's batch holds label 4 at K=4; the assert
    surfaces after ``iter 3 step done``, at step 3's ``loss.item()``; ``iter 1 loss`` is the last
    loss read back. Triage says step 4 is in progress; the data must still be blamed."""

    def data(self, tmp_path: Path, rows: int = 48) -> str:
        return planted(tmp_path, rows, {29: 4})  # row 29: batch 3 of 8 rows

    def test_the_reference_log_reads_the_last_step_known_to_have_run(self) -> None:
        lines = REFERENCE_LOOP.read_text().splitlines()
        found = read_step(lines, until=6)
        assert (found.step, found.since) == (4, 2)

    def test_since_follows_the_last_printed_loss_in_the_failing_step_s_frame(self) -> None:
        every = [f"step {i} loss 0.5" for i in range(4)]
        assert read_step([*every, *ASYNC_FOOTER], until=5).since == 4  # step 3's loss was read
        bare = [f"iter {i} step done" for i in range(4)]
        assert read_step([*bare, *ASYNC_FOOTER], until=5).since is None
        other_epoch = ["epoch 0 step 9 loss 0.5", "epoch 1 step 2 done", *ASYNC_FOOTER]
        assert read_step(other_epoch, until=3).since is None

    def test_the_bad_step_before_the_one_in_progress_is_found(self, tmp_path: Path) -> None:
        done = cli_here(
            "triage",
            str(REFERENCE_LOOP),
            "--data",
            self.data(tmp_path),
            "-k",
            "4",
            "--batch-size",
            "8",
            "--format",
            "json",
        )
        assert done.returncode == 1, done.stderr
        doc = json.loads(done.stdout)
        assert doc["step"]["asynchronous"] is True and doc["failing_step"]["step"] == 4
        data = doc["data"]
        assert data["explained"] is True
        assert [b["batch"] for b in data["batches"]] == [2, 3, 4]
        assert [w["step"] for w in data["step"]["asynchronous_window"]] == [2, 3, 4]
        assert data["bad"][0] | {"values": None} == {
            "rank": 0,
            "batch": 3,
            "row": 29,
            "id": 529,
            "label": 4,
            "status": "above K",
            "values": None,
        }
        assert "steps 2 to 4 were judged" in data["verdict"]

    def test_a_blocking_run_judges_its_own_step_alone(self, tmp_path: Path) -> None:
        blocking = tmp_path / "blocking.log"
        lines = REFERENCE_LOOP.read_text().splitlines()
        lines = [line for line in lines if "asynchronously reported" not in line]
        blocking.write_text("\n".join(lines) + "\n")
        done = cli_here(
            "triage", str(blocking), "--data", self.data(tmp_path), "-k", "4",
            "--batch-size", "8", "--format", "json",
        )  # fmt: skip
        data = json.loads(done.stdout)["data"]
        assert [b["batch"] for b in data["batches"]] == [4]  # iter 4 was running: valid
        assert data["explained"] is False and "asynchronous_window" not in data["step"]

    def test_a_window_past_the_epoch_keeps_the_steps_that_ran(self, tmp_path: Path) -> None:
        c = contract(8)
        spec = loader_spec(c, world_size=1, grad_accum=1, sampler_drop_last=False)
        where = FailStep(4, "batch", 0, True, since=2, line=5, style="lightning")
        crash = failing_batch(
            [self.data(tmp_path, rows=32)], c, spec, where, asynchronous=True
        )  # 4 batches in epoch 0: its batch 4 never began
        assert [b["batch"] for b in crash.batches] == [2, 3] and crash.explained
        with pytest.raises(UsageError, match="past the"):  # the failing step alone: as before
            failing_batch([self.data(tmp_path, rows=32)], c, spec, where)

    def test_no_loss_printed_judges_a_bounded_window_and_says_so(self, tmp_path: Path) -> None:
        from labelgate.commands.crashbatch import BACK

        c = contract(8)
        spec = loader_spec(c, world_size=1, grad_accum=1, sampler_drop_last=False)
        where = FailStep(11, line=12, style="plain")
        crash = failing_batch([planted(tmp_path)], c, spec, where, asynchronous=True)
        assert [b["batch"] for b in crash.batches] == list(range(12 - BACK, 12))
        assert crash.explained  # row 37: batch 4
        assert f"the {BACK} steps up to the failing one" in crash.verdict
        given = failing_batch(
            [planted(tmp_path)], c, spec, FailStep(11, style="given"), asynchronous=True
        )
        assert [b["batch"] for b in given.batches] == [11]  # a step the user names is judged alone
