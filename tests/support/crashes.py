"""Real training runs that crash on a planted bad label, for the triage and resume tests: the
data they read, the scripts that run them in a process of their own (a real log is what the
process prints), and one run of each script per test session, shared by every test that reads
its log or its checkpoints."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

BAD_ROW = 37


def planted(tmp_path: Path, rows: int = 100, bad: dict[int, int] | None = None) -> str:
    """Labels i % 4 with ids 500 + i; row 37 holds 4 (K=4) unless told otherwise."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    labels = [i % 4 for i in range(rows)]
    for row, value in (bad if bad is not None else {BAD_ROW: 4}).items():
        labels[row] = value
    path = tmp_path / "train.parquet"
    pq.write_table(pa.table({"id": list(range(500, 500 + rows)), "label": labels}), path)
    return str(path)


def crashed_log(script: str, *args: str, cwd: Path) -> str:
    """What ``python -c script args`` prints (stdout, then stderr), run in ``cwd``: it must fail,
    the planted label crashing it."""
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
    )
    assert done.returncode != 0, "the planted label did not crash the run"
    return done.stdout + done.stderr


# A dict batch with a string field, shuffled by a seeded generator: self.log(..., on_epoch=True)
# without batch_size makes Lightning infer the batch size of an ambiguous collection and warn
# with the size it found, and prog_bar=True shows the loss in the progress bar
LIGHTNING_RUN = """
import sys, torch, lightning as L, pyarrow.parquet as pq
from torch.utils.data import DataLoader, Dataset
y = pq.read_table(sys.argv[1]).column("label").to_pylist()
class DS(Dataset):
    def __len__(self): return len(y)
    def __getitem__(self, i): return {"x": torch.randn(4), "y": torch.tensor(y[i]), "id": str(i)}
class M(L.LightningModule):
    def __init__(self):
        super().__init__(); self.net = torch.nn.Linear(4, 4)
    def training_step(self, b, i):
        loss = torch.nn.functional.cross_entropy(self.net(b["x"]), b["y"])
        self.log("train_loss", loss, on_epoch=True, prog_bar=True); return loss
    def configure_optimizers(self): return torch.optim.SGD(self.parameters(), 0.1)
g = torch.Generator().manual_seed(7)
dl = DataLoader(DS(), batch_size=8, shuffle=True, generator=g)
L.Trainer(max_epochs=2, logger=False, enable_checkpointing=False, accelerator="cpu",
          enable_model_summary=False).fit(M(), dl)
"""

# batches of 4, two accumulated per optimizer step, a checkpoint every 2 steps: row 37 is in
# micro-batch 9, the second of optimizer step 4, after checkpoint-2 and checkpoint-4
HF_RUN = """
import sys, torch, pyarrow.parquet as pq
from transformers import Trainer, TrainingArguments
labels = pq.read_table(sys.argv[1]).column("label").to_pylist()
class DS(torch.utils.data.Dataset):
    def __len__(self): return len(labels)
    def __getitem__(self, i): return {"x": torch.randn(4), "labels": torch.tensor(labels[i])}
class M(torch.nn.Module):
    def __init__(self):
        super().__init__(); self.classifier = torch.nn.Linear(4, 4)
    def forward(self, x, labels=None):
        logits = self.classifier(x)
        return {"loss": torch.nn.functional.cross_entropy(logits, labels), "logits": logits}
args = TrainingArguments(output_dir=sys.argv[2], per_device_train_batch_size=4,
    gradient_accumulation_steps=2, num_train_epochs=1, logging_steps=1, save_steps=2,
    report_to=[], train_sampling_strategy="sequential", use_cpu=True, disable_tqdm=False)
Trainer(model=M(), args=args, train_dataset=DS()).train()
"""


@dataclass(frozen=True)
class Crash:
    """A real run of one of the scripts above on ``planted`` data, shared by the tests of a
    session: the data, the folder the run was given for its output (the Hugging Face Trainer's
    checkpoints; the Lightning run writes none), and its log. A test that spoils a checkpoint
    works on a copy."""

    data: str
    out: Path
    log: Path

    def checkpoints_copy(self, folder: Path) -> Path:
        """The run's checkpoints copied to ``folder``, for a test to spoil."""
        shutil.copytree(self.out, folder)
        return folder


_RUNS = pytest.StashKey[dict[str, Crash]]()


def shared_crash(
    request: pytest.FixtureRequest, factory: pytest.TempPathFactory, script: str, framework: str
) -> Crash:
    """``script``'s run, made once per test session whichever test files import the fixture
    that asks: kept in the session's stash, as a fixture imported into two modules is run once
    for each. Skipped without ``framework``, which only the run's own process imports."""
    if importlib.util.find_spec(framework) is None:
        pytest.skip(f"{framework} is not installed")
    runs = request.config.stash.setdefault(_RUNS, {})
    if script not in runs:
        folder = factory.mktemp("crash")
        data = planted(folder)
        out = folder / "out"
        log = folder / "train.log"
        log.write_text(crashed_log(script, data, str(out), cwd=folder))
        runs[script] = Crash(data, out, log)
    return runs[script]


@pytest.fixture(scope="session")
def hf_crash(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Crash:
    """``HF_RUN``'s run: its log and its checkpoints."""
    return shared_crash(request, tmp_path_factory, HF_RUN, "transformers")


@pytest.fixture(scope="session")
def lightning_crash(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Crash:
    """``LIGHTNING_RUN``'s run: its log."""
    return shared_crash(request, tmp_path_factory, LIGHTNING_RUN, "lightning")
