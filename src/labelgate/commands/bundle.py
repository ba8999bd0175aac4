"""labelgate repro: the failing batches, the environment and a replay script, in one folder."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from labelgate.contract import Contract
from labelgate.core.environment import environment
from labelgate.core.report import BATCHES_LISTED
from labelgate.errors import UsageError
from labelgate.io.sources import shown
from labelgate.run.validation import run
from labelgate.scan.batchrows import collect_batches

__all__ = ["Bundle", "make_bundle"]

HERE = Path(__file__).resolve().parent
PROBE = """
import json, torch
out = {"torch": torch.__version__, "cuda": torch.version.cuda, "hip": torch.version.hip,
       "device": "cpu", "device_name": None}
if torch.cuda.is_available():
    out["device"] = "cuda"
    out["device_name"] = torch.cuda.get_device_name(0)
print(json.dumps(out))
"""

README = """# Repro bundle

The batches of `{input}` that fail, as `labelgate validate` found them, and what is needed to replay
them through `CrossEntropyLoss` anywhere torch and pyarrow are installed:

| file | what |
|---|---|
| `batches.parquet` | the failing batches only: `batch`, `row` (position in the input), `id`, `label`; no other column |
| `case.json` | K, ignore_index, class weights, task, batch size, and per batch what was recorded (`raises` or `nan`) |
| `environment.json` | labelgate, Python, pyarrow, torch, CUDA or HIP, device, dtype and shapes, code revision |
| `repro.py` | `python repro.py [--device cpu]`: replays each batch in a fresh process (exit 1: reproduced) |
| `replay.py` | the replay itself (from labelgate), used by `repro.py` |

Batches recorded: {batches}.

To keep this case as a regression test, copy the folder into your test data (it holds ids and labels
only) and assert that `python repro.py --device cpu` exits 0 once the data or the loader is fixed.
"""


CRASH_README = """
## The crashed run

| file | what |
|---|---|
| `failing_step.parquet` | the rows of the batch running at the failing step: `rank`, `epoch`, `batch`, `row`, `id`, `label` (as stored; as text where types mix), `status`; no other column |
| `crash.json` | the first failure, its step (as read from the log and as replayed), the verdict on that batch, and the checkpoint to resume from with why each other was rejected |
"""


def _write_crash(folder: Path, crash: dict[str, Any]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = crash.get("rows")
    if rows is not None:
        columns = ("rank", "epoch", "batch", "row", "id", "label", "status")
        table = pa.table({c: _column([r[c] for r in rows]) for c in columns})
        pq.write_table(table, folder / "failing_step.parquet")
    doc = {k: v for k, v in crash.items() if k != "rows"}
    (folder / "crash.json").write_text(json.dumps(doc, indent=2, default=str) + "\n", "utf-8")


def _column(values: list[Any]) -> Any:
    """Values as read (integers, lists of them), or as text where they mix types."""
    import pyarrow as pa

    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array([None if v is None else str(v) for v in values], pa.string())


@dataclass(frozen=True, slots=True)
class Bundle:
    """A written bundle: its folder and the batches it holds."""

    path: str
    batches: list[int]


def make_bundle(
    paths: list[str], contract: Contract, out: str, *, crash: dict[str, Any] | None = None
) -> Bundle | None:
    """Write a repro bundle of the input's failing batches into the new folder ``out``.

    Args:
        paths: the label file(s).
        contract: the contract.
        out: a new (or empty) folder.
        crash: from a crashed run (``repro --log/--checkpoints``): ``rows``, the failing step's
            rows (row, id, label, status only), written as ``failing_step.parquet``; ``crash``
            (the failure, its step, the verdict) and ``resume`` (the checkpoint to resume from,
            named, not copied), written into ``crash.json``.

    Returns:
        The bundle, or ``None`` when no batch fails (nothing is written then).

    Raises:
        UsageError: ``out`` exists and is not an empty folder.
    """
    target = Path(out)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise UsageError(f"--out {out!r} exists and is not an empty folder")
    done = run(paths, contract, max_examples=1)
    with done:
        report, data = done.report, done.dataset
        # the first BATCHES_LISTED failing batches, as the JSON report lists them: a bundle is a
        # case to replay, not a copy of the data; the README says how many fail in all
        every = report.batches["failing"]
        failing = every[:BATCHES_LISTED]
        if not failing and not crash:
            return None
        nan = {f for x in report.findings if x.code == "LG007" for f in x.batches}
        table = collect_batches(data, only=set(failing)).select(["batch", "row", "id", "label"])
        import pyarrow.parquet as pq

        sizes = {b: 0 for b in failing}
        for b in table.column("batch").to_pylist():
            sizes[b] += 1
        k = data.k
        # Names only: no folders, no user or host names, no query string (an endpoint, a key).
        inputs = [Path(shown(p)).name for p in paths]
        case = {
            "input": inputs,
            "num_classes": k,
            "ignore_index": data.contract.ignore_index,
            "class_weights": None
            if data.contract.class_weights is None
            else list(data.contract.class_weights),
            "task": data.task,
            "batch_size": data.plan.size,
            "shuffle_seed": data.contract.batching.shuffle_seed,
            "failing_batches": [
                {"batch": b, "recorded": "nan" if b in nan else "raises", "rows": sizes[b]}
                for b in failing
            ],
            "findings": sorted({f.code for f in report.findings if f.severity == "error"}),
        }
        env = {k_: v for k_, v in environment().items() if k_ != "backend"} | _torch_environment()
        env |= {
            "dtype": "int64",
            "shapes": {str(b): {"target": [n], "logits": [n, k]} for b, n in sizes.items()}
            if data.task == "multiclass"
            else {str(b): {"rows": n} for b, n in sizes.items()},
        }
        folder = Path(
            tempfile.mkdtemp(
                prefix=f".{target.name}.tmp-", dir=target.parent if str(target.parent) else Path()
            )
        )
        try:
            pq.write_table(table, folder / "batches.parquet")
            (folder / "case.json").write_text(json.dumps(case, indent=2) + "\n", encoding="utf-8")
            (folder / "environment.json").write_text(
                json.dumps(env, indent=2) + "\n", encoding="utf-8"
            )
            if crash:
                _write_crash(folder, crash)
            shutil.copyfile(HERE / "replay.py", folder / "replay.py")
            shutil.copyfile(HERE / "_repro_driver.py", folder / "repro.py")
            text = README.format(
                input=", ".join(inputs),
                batches=(", ".join(map(str, failing)) or "none")
                + (
                    f"; {len(every) - len(failing)} more batches fail in the input, left out "
                    "of this bundle"
                    if len(every) > len(failing)
                    else ""
                ),
            )
            if crash:
                text += CRASH_README
            (folder / "README.md").write_text(text, encoding="utf-8")
            if target.exists():
                target.rmdir()  # empty, checked above
            folder.rename(target)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        return Bundle(str(target), failing)


def _torch_environment() -> dict[str, Any]:
    """torch, CUDA/HIP versions and device, asked of a child process (no CUDA in this one)."""
    try:
        proc = subprocess.run(
            [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, check=False
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return {"torch": None, "torch_probe": f"failed: {exc}"}
    if proc.returncode != 0:
        last = [line for line in proc.stderr.splitlines() if line.strip()][-1:] or ["no output"]
        return {"torch": None, "torch_probe": last[0]}
    info: dict[str, Any] = json.loads(proc.stdout)
    return info
