"""Wall time and peak memory of `labelgate validate` against a bare pyarrow scan, same run, same file.

    python benchmarks/scan.py [--rows 1000000 10000000] [--dir /tmp/labelgate-bench]

For each size it writes a Parquet file (id int64, label int64 with 0.1% ignore_index and a few
out-of-range values, a 3-value source string column, a label_name string column; zstd; 1M-row
groups), then runs, each in a fresh process: the bare scan (iter_batches over the label column +
pyarrow.compute.min_max) and `labelgate validate FILE --classes 4 --format json`. It prints wall
time, peak RSS and the ratios against the bare scan. Figures are only comparable within one run.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

BARE = """
import sys, pyarrow.parquet as pq, pyarrow.compute as pc
lo, hi = None, None
for b in pq.ParquetFile(sys.argv[1]).iter_batches(columns=["label"], batch_size=65536):
    mm = pc.min_max(b.column(0)).as_py()
    lo = mm["min"] if lo is None else min(lo, mm["min"])
    hi = mm["max"] if hi is None else max(hi, mm["max"])
print(lo, hi)
"""


def make(path: Path, rows: int) -> None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    names = np.array(["cat", "dog", "bird", "fish"])
    sources = np.array(["web", "vendor", "archive"])
    with pq.ParquetWriter(
        path,
        pa.schema(
            [
                ("id", pa.int64()),
                ("label", pa.int64()),
                ("source", pa.string()),
                ("label_name", pa.string()),
            ]
        ),
        compression="zstd",
    ) as w:
        for start in range(0, rows, 1_000_000):
            n = min(1_000_000, rows - start)
            label = rng.integers(0, 4, n)
            named = names[label]
            label[rng.random(n) < 0.001] = -100
            if start == 0:
                label[[17, 123_456 % n]] = 4
            w.write_table(
                pa.table(
                    {
                        "id": np.arange(start, start + n, dtype=np.int64),
                        "label": label,
                        "source": sources[rng.integers(0, 3, n)],
                        "label_name": named,
                    }
                ),
                row_group_size=1_000_000,
            )


def measure(argv: list[str]) -> tuple[float, float]:
    """Run a command in a fresh process; (wall seconds, peak RSS in MB) of that process alone."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"{argv} failed: {proc.stderr.read().decode() if proc.stderr else ''}")
    return wall, usage.ru_maxrss / 1024


def main() -> None:
    if sys.argv[1:2] == ["--make"]:
        make(Path(sys.argv[2]), int(sys.argv[3]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--dir", default="/tmp/labelgate-bench")
    parser.add_argument("--repeat", type=int, default=3, help="runs per tool; the best is shown")
    args = parser.parse_args()
    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores")
    print(
        f"{'rows':>12} {'tool':<22} {'wall s':>8} {'peak MB':>8} {'x bare time':>11} {'x bare mem':>10}"
    )
    for rows in args.rows:
        path = folder / f"labels_{rows}.parquet"
        if not path.exists():
            # In a child process: a child forked from a parent holding the data would inherit
            # its resident memory in its peak RSS.
            subprocess.run([sys.executable, __file__, "--make", str(path), str(rows)], check=True)
        tools = {
            "bare pyarrow scan": [sys.executable, "-c", BARE, str(path)],
            "labelgate validate": [
                sys.executable,
                "-m",
                "labelgate",
                "validate",
                str(path),
                "--classes",
                "4",
                "--format",
                "json",
                "--no-progress",
            ],
        }
        results = {
            name: min(measure(cmd) for _ in range(args.repeat)) for name, cmd in tools.items()
        }
        base_wall, base_mem = results["bare pyarrow scan"]
        for name, (wall, mem) in results.items():
            print(
                f"{rows:>12,} {name:<22} {wall:>8.2f} {mem:>8.0f} {wall / base_wall:>11.2f} {mem / base_mem:>10.2f}"
            )


if __name__ == "__main__":
    main()
