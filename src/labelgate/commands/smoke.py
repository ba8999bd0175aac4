"""The smoke step: replay the simulated batches on a device, in fresh child processes."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from labelgate.core.arrow import from_numpy, numbers
from labelgate.core.labels import Status, classify, classify_soft, parse_text
from labelgate.core.report import Example
from labelgate.errors import INSTALL_TORCH, UsageError
from labelgate.inputs.dataset import Dataset
from labelgate.io.sources import typed
from labelgate.scan.batchrows import collect_batches

__all__ = ["BatchFailure", "SmokeRun", "nvidia_torch", "run_smoke"]

CPU_HINT = "a CPU pass is a hint, not a CUDA validation"
ASSERT_LINE = re.compile(r"Assertion `[^`]+` failed")
# The child runs replay.py as a file (as a repro bundle does), not as labelgate.commands.replay:
# -m would import labelgate's package first, which the replay needs none of (masks aside). runpy,
# unlike ``python replay.py``, leaves the file's folder (labelgate's commands) off sys.path.
REPLAY = Path(__file__).with_name("replay.py")
RUN_FILE = (
    "import runpy, sys; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')"
)


@dataclass(frozen=True, slots=True)
class BatchFailure:
    """One batch that failed on the device.

    Attributes:
        batch: the batch index (as in validate's examples).
        kind: ``index_out_of_range``, ``nan_loss``, ``collate`` or ``other``.
        error: the exception type and first line, or ``loss = nan``.
        device_messages: kernel assert lines the device printed (CUDA), first ones.
        examples: the batch's offending rows, the first 20 (for a NaN batch: its first rows).
        offending: how many rows of the batch are offending (``examples`` may hold fewer).
    """

    batch: int
    kind: str
    error: str
    device_messages: tuple[str, ...] = ()
    examples: tuple[Example, ...] = ()
    offending: int = 0

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        return {
            "batch": self.batch,
            "kind": self.kind,
            "error": self.error,
            "device_messages": list(self.device_messages),
            "examples": [e.to_dict() for e in self.examples],
            "offending": self.offending,
        }


@dataclass(slots=True)
class SmokeRun:
    """The outcome of replaying one file's batches.

    Attributes:
        path: the file (or files) replayed.
        expected: batches the DataLoader would yield (within ``--max-batches``).
        processed: batches that ran to a loss, or failed.
        failures: failed batches, in order.
        env: what the child reported: device, backend, versions.
        shapes: logits and target shapes and dtype of the first batch, and the largest.
        processes: child processes started (one more after each failure).
        seconds: wall time.
        incomplete: why not every batch was tried, if so.
    """

    path: str
    expected: int
    processed: int = 0
    failures: list[BatchFailure] = field(default_factory=list)
    env: dict[str, Any] = field(default_factory=dict)
    shapes: dict[str, Any] = field(default_factory=dict)
    processes: int = 0
    seconds: float = 0.0
    incomplete: str | None = None

    @property
    def clean(self) -> bool:
        """Every expected batch ran and gave a finite loss."""
        return not self.failures and self.processed == self.expected and self.incomplete is None

    @property
    def failed_batches(self) -> list[int]:
        """Indices of the failed batches."""
        return [f.batch for f in self.failures]

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        return {
            "path": self.path,
            "clean": self.clean,
            "batches_expected": self.expected,
            "batches_processed": self.processed,
            "failures": [f.to_dict() for f in self.failures],
            "environment": self.env,
            "shapes": self.shapes,
            "processes": self.processes,
            "seconds": round(self.seconds, 3),
            "incomplete": self.incomplete,
        }


def nvidia_torch() -> bool | None:
    """Whether the installed torch is an NVIDIA (not ROCm) build, without importing torch.

    Returns ``None`` when torch is not installed. Reads ``torch/version.py``, which a ROCm build
    writes with ``hip = '6.x...'``.
    """
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):  # a broken install, or torch blocked in sys.modules
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    version = Path(next(iter(spec.submodule_search_locations))) / "version.py"
    try:
        text = version.read_text(encoding="utf-8")
    except OSError:
        return True
    return re.search(r"^hip\s*(?::[^=]*)?=\s*['\"]", text, re.MULTILINE) is None


def run_smoke(
    data: Dataset,
    *,
    device: str = "auto",
    max_batches: int | None = None,
    max_failures: int = 10,
    timeout: float = 600.0,
    stop_on_error: bool = False,
    masks: str | None = None,
) -> SmokeRun:
    """Replay the dataset's batches through a tiny model and CrossEntropyLoss on ``device``.

    Each child process runs batches until one raises; the parent records it and starts a fresh
    child at the next batch (after a device-side assert the CUDA context is lost). NaN losses do
    not stop a child, nor, on the CPU, exceptions (unless ``stop_on_error``).

    Raises:
        UsageError: torch is not installed, or the device is not one of auto, cpu, cuda, cuda:N, mps.
    """
    nvidia = nvidia_torch()
    if nvidia is None:
        raise UsageError(f"the smoke step needs torch: {INSTALL_TORCH}")
    if not re.fullmatch(r"auto|cpu|mps|cuda(:\d+)?", device):
        raise UsageError(f"--device must be auto, cpu, cuda, cuda:N or mps, got {device!r}")
    started = time.perf_counter()
    table = _as_loaded(collect_batches(data, limit=max_batches), data)
    batch_ids = (
        numbers(table.column("batch").combine_chunks()) if table.num_rows else np.zeros(0, np.int64)
    )
    present = np.unique(batch_ids)
    expected = len(present)
    run = SmokeRun(path=", ".join(f.path for f in data.files), expected=expected)
    with tempfile.TemporaryDirectory(prefix="labelgate-smoke-") as tmp:
        import pyarrow.parquet as pq

        batches_path = Path(tmp) / "batches.parquet"
        kept = ["batch", "label"] + (["id"] if masks is not None else [])
        pq.write_table(table.select(kept), batches_path)
        spec = {
            "batches": str(batches_path),
            "num_classes": data.k,
            "ignore_index": data.contract.ignore_index,
            "weights": None
            if data.contract.class_weights is None
            else list(data.contract.class_weights),
            "task": data.task,
            "device": device,
            "blocking": bool(nvidia) and device not in ("cpu", "mps"),
            "start": 0,
            "stop_on_error": stop_on_error,
            "masks": masks,
            "color_map": None
            if data.contract.color_map is None
            else {str(c): i for c, i in data.contract.color_map.items()},
        }
        while True:
            spec_path = Path(tmp) / f"spec{run.processes}.json"
            spec_path.write_text(json.dumps(spec), encoding="utf-8")
            events, stderr, code = _child(spec_path, timeout)
            run.processes += 1
            last_begin = _absorb(run, events, stderr, data, table)
            if code == 0:
                break
            if events and events[-1]["event"] == "error":
                batch = events[-1]["batch"]
            elif last_begin is not None:  # died inside a batch without a Python exception
                batch = last_begin
                error = f"process died (exit status {code}): {_tail(stderr)}"
                run.failures.append(
                    BatchFailure(
                        batch,
                        _kind(error, stderr),
                        error,
                        _asserts(stderr),
                        *_offending(data, table, batch, nan=False),
                    )
                )
                run.processed += 1
            else:
                raise UsageError(f"the smoke child failed before any batch: {_tail(stderr)}")
            if not (present > batch).any():
                break  # the failed batch was the last one
            if len(run.failures) >= max_failures:
                run.incomplete = f"stopped after {max_failures} failed batches"
                break
            spec["start"] = batch + 1
    run.failures = sorted(
        (
            BatchFailure(f.batch, f.kind, f.error, (), *_offending(data, table, f.batch, nan=True))
            if f.kind == "nan_loss"
            else f
            for f in run.failures
        ),
        key=lambda f: f.batch,
    )
    run.seconds = time.perf_counter() - started
    return run


def _child(spec_path: Path, timeout: float) -> tuple[list[dict[str, Any]], str, int]:
    env = dict(os.environ)
    env.pop("CUDA_LAUNCH_BLOCKING", None)  # the child sets it itself, on NVIDIA only
    # the folder holding labelgate, whose mask loader a mask replay uses
    src = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.run(
        [sys.executable, "-c", RUN_FILE, str(REPLAY), str(spec_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )
    events = []
    for line in proc.stdout.splitlines():
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            continue  # the model's own prints, if any
    return events, proc.stderr, proc.returncode


def _absorb(
    run: SmokeRun, events: list[dict[str, Any]], stderr: str, data: Dataset, table: Any
) -> int | None:
    """Fold a child's events into the run; return the batch it began last and did not finish."""
    last_begin = None
    for e in events:
        kind = e["event"]
        if kind == "env" and not run.env:
            run.env = {k: v for k, v in e.items() if k != "event"}
        elif kind == "begin":
            last_begin = e["batch"]
        elif kind == "error":
            last_begin = None
            run.processed += 1
            error = f"{e['type']}: {e['message']}"
            offending = _offending(data, table, e["batch"], nan=False)
            run.failures.append(
                BatchFailure(e["batch"], _kind(error, stderr), error, _asserts(stderr), *offending)
            )
        elif kind == "batch":
            run.processed += 1
            last_begin = None
            shapes = {"logits": e["logits_shape"], "target": e["target_shape"], "dtype": e["dtype"]}
            run.shapes.setdefault("first", shapes)
            if e["target_shape"][0] >= run.shapes.get("largest", {"target": [0]})["target"][0]:
                run.shapes["largest"] = shapes
            if not e["finite"]:
                run.failures.append(BatchFailure(e["batch"], "nan_loss", f"loss = {e['loss']}"))
    return last_begin


def _asserts(stderr: str) -> tuple[str, ...]:
    """The first kernel assert lines the device printed."""
    return tuple([line.strip() for line in stderr.splitlines() if ASSERT_LINE.search(line)][:3])


def _kind(error: str, stderr: str) -> str:
    if (
        "out of bounds" in error
        or "t >= 0 && t < n_classes" in stderr
        or "device-side assert" in error
    ):
        return "index_out_of_range"
    if error.startswith(("TypeError", "ValueError")):
        return "collate"
    return "other"


def _offending(
    data: Dataset, table: Any, batch: int, *, nan: bool
) -> tuple[tuple[Example, ...], int]:
    """The rows of ``batch`` that explain its failure, the first 20, and how many there are: bad
    targets, or (NaN) its first rows of all of them."""
    import pyarrow as pa
    import pyarrow.compute as pc

    rows = table.filter(pc.equal(table.column("batch"), pa.scalar(batch, pa.int64())))
    if rows.num_rows == 0:
        return (), 0
    if data.task == "soft":
        judged, _ = classify_soft(
            rows.column("label"), num_classes=data.k, tolerance=data.contract.soft_tolerance
        )
    else:
        judged = classify(
            rows.column("label"), num_classes=data.k, ignore_index=data.contract.ignore_index
        )
    bad = judged.row_status >= Status.HIGH
    every = np.flatnonzero(bad) if not nan else np.arange(rows.num_rows)
    picks = every[:20] if not nan else every[:5]
    return tuple(
        Example(
            row=int(rows.column("row")[int(i)].as_py()),
            id=rows.column("id")[int(i)].as_py(),
            batch=batch,
            source=rows.column("source")[int(i)].as_py(),
            value=rows.column("label")[int(i)].as_py(),
        )
        for i in picks
    ), len(every)


def _tail(stderr: str) -> str:
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def _as_loaded(table: Any, data: Dataset) -> Any:
    """The batches' labels as a loader of the input holds them. A CSV or TSV holds every cell as
    text; read by pandas (``read_csv``), a column whose every value is an integer is one, any
    other stays text. The replay gets the same, not the file's text; integers are read from
    text as every check reads them (``parse_text``)."""
    import pyarrow as pa

    label = table.column("label")
    if typed(data.files) or not (
        pa.types.is_string(label.type) or pa.types.is_large_string(label.type)
    ):
        return table
    values, bad, empty = parse_text(label.combine_chunks())
    if bad.any():
        return table
    at = table.schema.get_field_index("label")
    column = from_numpy(values)
    if empty.any():  # empty cells are nulls, as a loader's NaN is no class
        bits = pa.py_buffer(np.packbits(~empty, bitorder="little"))
        column = pa.Array.from_buffers(pa.int64(), len(values), [bits, column.buffers()[1]])
    return table.set_column(at, "label", column)
