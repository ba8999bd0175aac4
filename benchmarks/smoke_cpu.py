"""Wall time of `labelgate smoke --device cpu` on the bundled samples, each as a user runs it.

    python benchmarks/smoke_cpu.py

Prints a Markdown table: command, wall seconds, batches processed/expected, child processes,
failed batches, exit status. Most of each run is the child's `import torch` (compare the
`init_seconds` the child reports once torch is imported).
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
from pathlib import Path

SAMPLES = Path(__file__).resolve().parent.parent / "data_samples"
CASES = [
    "clean.parquet -k 4",
    "oob_0_2_4.parquet -k 4",
    "neg1_sentinel.parquet -k 4",
    "all_ignored_batch.parquet -k 4",
    "two_sources_one_based.parquet -k 4",
    "tokens_all_ignored_batch.parquet --schema tokens.yaml",
    "coco_sparse_ids.parquet -k 80",
]


def argv(case: str) -> list[str]:
    """The arguments of one case after ``labelgate``: smoke on the CPU, the run as JSON."""
    return ["smoke", *shlex.split(case), "--device", "cpu", "--format", "json"]


def row(case: str, wall: float, stdout: str, status: int) -> str:
    """The table's row of one case from its JSON output and exit status."""
    run = json.loads(stdout)["run"]
    failed = ", ".join(f"{f['batch']} ({f['kind']})" for f in run["failures"]) or "none"
    batches = f"{run['batches_processed']}/{run['batches_expected']}"
    return f"| `labelgate smoke {case}` | {wall:.2f} | {batches} | {run['processes']} | {failed} | {status} |"


def main() -> None:
    print("| command (in data_samples/) | wall s | batches | processes | failed batches | exit |")
    print("|---|---:|---:|---:|---|---:|")
    for case in CASES:
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "labelgate", *argv(case)],
            cwd=SAMPLES,
            capture_output=True,
            text=True,
            check=False,
        )
        print(row(case, time.perf_counter() - start, done.stdout, done.returncode))


if __name__ == "__main__":
    main()
