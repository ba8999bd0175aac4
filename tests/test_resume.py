"""resume: every checkpoint read without running code and judged; the newest sound one named.

Checkpoints are written here by torch.save, by a real Lightning Trainer and a real Hugging Face
Trainer on tiny models, then spoiled as a crash spoils them (NaN weights, NaN optimizer state, a
file cut short, written after the failure, a head of another class count).
"""

from __future__ import annotations

import json
import math
import subprocess
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from labelgate.commands.logs.logstep import FailStep
from labelgate.commands.resume import judge_checkpoints
from labelgate.training.checkpoints import Checkpoint, find_checkpoints, read_checkpoint
from tests.conftest import BARE_ENV, cli_here, run_cli
from tests.support.checkpoints import net, save, spoiled_run, trained
from tests.support.crashes import (
    Crash,
    hf_crash,  # noqa: F401 - the fixture, shared
    planted,
)
from tests.support.frameworks import frameworks, lightning_checkpoints

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``labelgate ARGS`` in a fresh process with a bare environment, for what only a process
    shows (its exit status and stderr on bad input); ``cli_here`` for what a command decides."""
    return run_cli(*args, cwd=cwd, env=BARE_ENV)


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """A plain torch run: 100 sound, 200 NaN weight, 300 NaN in Adam's state, 400 cut short,
    450 a head of 5 classes, 600 sound but written after the failure at step 500."""
    d = tmp_path / "ckpt"
    d.mkdir()
    spoiled_run(d, (100, 200, 300, 400, 450, 600))
    return d


def by_name(result: Any) -> dict[str, Any]:
    return {Path(j.checkpoint.path).name: j for j in result.judged}


class TestTorchSave:
    def test_each_spoiled_checkpoint_is_rejected_for_its_own_reason(self, run_dir: Path) -> None:
        result = judge_checkpoints(str(run_dir), failure=FailStep(500), classes=4)
        judged = by_name(result)
        assert (
            result.chosen is not None and Path(result.chosen.checkpoint.path).name == "step-100.pt"
        )
        assert judged["step-100.pt"].sound
        assert "non-finite value(s) in weights model.0.weight" in " ".join(
            judged["step-200.pt"].problems
        )
        assert "in optimizer state optimizer.state.0.exp_avg_sq" in " ".join(
            judged["step-300.pt"].problems
        )
        assert "truncated" in " ".join(judged["step-400.pt"].problems)
        assert "predicts 5 classes, the class map has 4" in " ".join(judged["step-450.pt"].problems)
        assert "after the failure at step 500" in " ".join(judged["step-600.pt"].problems)
        assert judged["step-600.pt"].head is not None and judged["step-600.pt"].head["fits"] is True

    def test_without_a_log_the_newest_sound_one_wins(self, run_dir: Path) -> None:
        result = judge_checkpoints(str(run_dir), classes=4)
        assert Path(result.chosen.checkpoint.path).name == "step-600.pt"  # type: ignore[union-attr]
        assert any("no log given" in n for n in result.notes)

    def test_no_head_matters_only_when_a_class_map_is_given(self, tmp_path: Path) -> None:
        torch.save({"scale": torch.ones(3)}, tmp_path / "step-1.pt")  # an adapter, say
        assert judge_checkpoints(str(tmp_path)).chosen is not None
        rejected = judge_checkpoints(str(tmp_path), classes=4)
        assert rejected.chosen is None
        assert "head: no layer with a weight and a bias" in rejected.judged[0].problems[0]

    def test_cli_text_json_and_exit_status(self, run_dir: Path, tmp_path: Path) -> None:
        log = tmp_path / "train.log"
        log.write_text(
            "step 499 loss 0.3\nTraceback (most recent call last):\nRuntimeError: CUDA error: device-side assert triggered\n"
        )
        done = cli_here("resume", str(run_dir), "--log", str(log), "--classes", "4")
        assert done.returncode == 0, done.stderr
        assert f"resume from: {run_dir / 'step-100.pt'}" in done.stdout
        doc = json.loads(
            cli_here(
                "resume", str(run_dir), "--log", str(log), "-k", "4", "--format", "json"
            ).stdout
        )
        assert doc["failure"]["optimizer_step"] == 500
        assert doc["resume_from"].endswith("step-100.pt")
        assert sum(not c["sound"] for c in doc["checkpoints"]) == 5
        (run_dir / "step-100.pt").unlink()
        assert cli_here("resume", str(run_dir), "--log", str(log), "-k", "4").returncode == 1

    def test_unusable_input_is_exit_2_in_one_line(self, tmp_path: Path) -> None:
        for args in ([str(tmp_path / "missing")], [str(tmp_path)]):
            done = cli("resume", *args)
            assert done.returncode == 2 and "Traceback" not in done.stderr
            assert done.stderr.count("\n") == 1


class Payload:
    """Unpickling this calls Path.touch: code run on load."""

    def __init__(self, target: Path) -> None:
        self.target = target

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (Path.touch, (str(self.target),))  # type: ignore[return-value]


class TestUntrusted:
    @pytest.mark.parametrize("how", ["torch.save", "pickle"])
    def test_a_pickle_that_runs_code_is_refused_without_running_it(
        self, tmp_path: Path, how: str
    ) -> None:
        import pickle

        d = tmp_path / "ckpt"
        d.mkdir()
        target = tmp_path / "pwned"
        payload = {"model": net().state_dict(), "extra": Payload(target)}
        if how == "torch.save":
            torch.save(payload, d / "step-10.pt")
        else:
            (d / "step-10.pt").write_bytes(pickle.dumps(payload))
        assert not target.exists()
        done = cli_here("resume", str(d), "-k", "4")
        assert not target.exists()  # refused, not run
        assert done.returncode == 1
        assert "would run code when loaded: refused, not run" in done.stdout
        # the payload is real: an unrestricted load runs it
        if how == "pickle":
            pickle.loads((d / "step-10.pt").read_bytes())
        else:
            torch.load(d / "step-10.pt", weights_only=False)
        assert target.exists()


class TestSafetensors:
    def write(self, path: Path, tensors: dict[str, Any]) -> None:
        from safetensors.torch import save_file

        save_file(tensors, str(path))

    def test_truncated_nan_and_bf16(self, tmp_path: Path) -> None:
        d = tmp_path / "st"
        d.mkdir()
        good = {k: v.contiguous() for k, v in net().state_dict().items()}
        self.write(d / "model-step-10.safetensors", good)
        bad = dict(good)
        bad["2.bias"] = torch.tensor([0.0, float("nan"), 1.0, 2.0], dtype=torch.bfloat16)
        self.write(d / "model-step-20.safetensors", bad)
        self.write(d / "model-step-30.safetensors", good)
        whole = (d / "model-step-30.safetensors").read_bytes()
        (d / "model-step-30.safetensors").write_bytes(whole[:-10])
        result = judge_checkpoints(str(d), classes=4)
        judged = by_name(result)
        assert judged["model-step-10.safetensors"].sound
        assert (
            "1 non-finite value(s) (NaN or inf) in 2.bias"
            in judged["model-step-20.safetensors"].problems[0]
        )
        assert "truncated" in judged["model-step-30.safetensors"].problems[0]
        assert Path(result.chosen.checkpoint.path).name == "model-step-10.safetensors"  # type: ignore[union-attr]
        assert "safetensors.torch.load_file" in (result.hint or "")

    def test_memory_is_bounded_by_the_largest_tensor(self, tmp_path: Path) -> None:
        tensors = {f"layer{i}.weight": torch.randn(512, 512) for i in range(8)}  # 1 MiB each
        path = tmp_path / "big.safetensors"
        self.write(path, tensors)
        checkpoint = Checkpoint(str(path), "safetensors", None, None, (str(path),))
        tracemalloc.start()
        contents = read_checkpoint(checkpoint)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert contents.tensors == 8 and not contents.problems
        assert contents.largest == 1 << 20
        assert peak < 3 * (1 << 20), peak  # one tensor and its finite mask, not 8 MiB


class TestDiscovery:
    def test_names_of_every_framework(self, tmp_path: Path) -> None:
        (tmp_path / "lightning").mkdir()
        (tmp_path / "lightning" / "epoch=3-step=300.ckpt").write_bytes(b"")
        hf = tmp_path / "checkpoint-40"
        hf.mkdir()
        for name in ("model.safetensors", "optimizer.pt", "rng_state.pth", "training_args.bin"):
            (hf / name).write_bytes(b"")
        (tmp_path / "notes.txt").write_text("x")
        found = {Path(c.path).name: c for c in find_checkpoints(str(tmp_path))}
        assert set(found) == {"epoch=3-step=300.ckpt", "checkpoint-40"}
        assert (found["epoch=3-step=300.ckpt"].step, found["epoch=3-step=300.ckpt"].epoch) == (
            300,
            3,
        )
        assert [Path(f).name for f in found["checkpoint-40"].files] == [
            "model.safetensors",
            "optimizer.pt",
        ]


@pytest.mark.slow
@frameworks
class TestRealTrainers:
    def test_lightning_checkpoints(self, tmp_path: Path) -> None:
        pytest.importorskip("lightning")
        d = tmp_path / "ckpt"
        lightning_checkpoints(d)  # in this process: only its files are read
        names = sorted(p.name for p in d.iterdir())
        assert names == [
            "epoch=0-step=2.ckpt",
            "epoch=0-step=4.ckpt",
            "epoch=1-step=6.ckpt",
            "epoch=1-step=8.ckpt",
        ]
        c = torch.load(d / "epoch=0-step=4.ckpt", weights_only=True)
        c["optimizer_states"][0]["state"][0]["exp_avg"][0, 0] = float("nan")
        torch.save(c, d / "epoch=0-step=4.ckpt")
        whole = (d / "epoch=1-step=6.ckpt").read_bytes()
        (d / "epoch=1-step=6.ckpt").write_bytes(whole[: len(whole) - 100])
        log = tmp_path / "train.log"  # Lightning's rich bar: epoch 1, batch 3 of 4 failed: step 7
        log.write_text(
            "Epoch 1/1  ━━━━━━━━━━━━━━━━╸         3/4 0:00:00 • 0:00:01 25.71it/s\n"
            "Traceback (most recent call last):\nIndexError: Target 3 is out of bounds.\n"
        )
        done = cli_here("resume", str(d), "--log", str(log), "-k", "3", "--format", "json")
        doc = json.loads(done.stdout)
        assert done.returncode == 0
        assert doc["failure"]["optimizer_step"] == 7
        assert doc["resume_from"].endswith("epoch=0-step=2.ckpt")
        assert "ckpt_path=" in doc["how"]
        why = {Path(c["path"]).name: " ".join(c["problems"]) for c in doc["checkpoints"]}
        assert "optimizer state optimizer_states.0.state.0.exp_avg" in why["epoch=0-step=4.ckpt"]
        assert "truncated" in why["epoch=1-step=6.ckpt"]
        assert "after the failure at step 7" in why["epoch=1-step=8.ckpt"]
        wrong = cli_here("resume", str(d), "--log", str(log), "-k", "4", "--format", "json")
        assert json.loads(wrong.stdout)["resume_from"] is None  # a 3-class head for 4 classes

    def test_hf_trainer_checkpoints(
        self,
        hf_crash: Crash,  # noqa: F811
        tmp_path: Path,
    ) -> None:
        out = hf_crash.checkpoints_copy(tmp_path / "out")  # spoiled below: the run's own kept
        log = str(hf_crash.log)
        assert sorted(p.name for p in out.iterdir()) == ["checkpoint-2", "checkpoint-4"]
        result = cli_here("resume", str(out), "--log", log, "-k", "4", "--format", "json")
        doc = json.loads(result.stdout)
        assert doc["failure"]["optimizer_step"] == 4
        assert doc["resume_from"].endswith("checkpoint-4")
        assert "resume_from_checkpoint=" in doc["how"]
        # a NaN logged in the newest one's trainer_state, and a NaN weight in the older one
        state = json.loads((out / "checkpoint-4" / "trainer_state.json").read_text())
        state["log_history"][-1]["loss"] = math.nan
        (out / "checkpoint-4" / "trainer_state.json").write_text(json.dumps(state))
        from safetensors.torch import load_file, save_file

        weights = load_file(str(out / "checkpoint-2" / "model.safetensors"))
        weights["classifier.weight"][0, 0] = float("nan")
        save_file(weights, str(out / "checkpoint-2" / "model.safetensors"))
        result = cli_here("resume", str(out), "--log", log, "-k", "4", "--format", "json")
        doc = json.loads(result.stdout)
        assert result.returncode == 1 and doc["resume_from"] is None
        why = {Path(c["path"]).name: " ".join(c["problems"]) for c in doc["checkpoints"]}
        assert "logs a nan loss" in why["checkpoint-4"]
        assert "non-finite value(s) (NaN or inf) in classifier.weight" in why["checkpoint-2"]


class TestBundle:
    def test_repro_carries_the_failing_rows_and_the_checkpoint(self, tmp_path: Path) -> None:
        import pyarrow.parquet as pq

        data = planted(tmp_path)
        log = tmp_path / "train.log"
        log.write_text(
            "step 3 loss 0.5\nTraceback (most recent call last):\nIndexError: Target 4 is out of bounds.\n"
        )
        run_dir = tmp_path / "ckpt"
        run_dir.mkdir()
        model, opt = trained()
        save(run_dir / "step-2.pt", model, opt)
        save(run_dir / "step-9.pt", model, opt)  # after the failure at step 4
        out = tmp_path / "bundle"
        done = cli_here(
            "repro",
            data,
            "-k",
            "4",
            "--batch-size",
            "8",
            "--out",
            str(out),
            "--log",
            str(log),
            "--checkpoints",
            str(run_dir),
        )
        assert done.returncode == 0, done.stderr
        rows = pq.read_table(out / "failing_step.parquet")
        assert rows.column_names == ["rank", "epoch", "batch", "row", "id", "label", "status"]
        assert {"row": 37, "id": 537, "label": 4} in [
            {k: r[k] for k in ("row", "id", "label")} for r in rows.to_pylist()
        ]
        crash = json.loads((out / "crash.json").read_text())
        assert crash["crash"]["explained"] is True
        assert crash["resume"]["resume_from"] == "step-2.pt"  # a name, no folder
        assert str(tmp_path) not in (out / "crash.json").read_text()
        assert "after the failure at step 4" in " ".join(crash["resume"]["rejected"]["step-9.pt"])
        assert not (out / "step-2.pt").exists()  # named, not copied
        assert "failing_step.parquet" in (out / "README.md").read_text()
