"""The JSON report's size when one batch in ten fails, with and without --all-batches.

    python benchmarks/report_size.py [--rows 1000000 100000000] [--dir /tmp/labelgate-report-size]

Writes (once per size) a Parquet file of K=4 labels in batches of 32 where batches 0, 20, 40...
hold an out-of-range label and batches 10, 30, 50... only ignored targets, then runs `labelgate
validate FILE --classes 4 --format json` in a fresh process, with and without `--all-batches`.
Prints each document's size in bytes, the failing batches it counts and lists, and the ratio of
the full document to the default one (docs/report.md, "Batch lists").
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

SIZE = 32  # labelgate's default batch size
CHUNK = 1 << 20  # rows written at a time: a multiple of SIZE


def make(path: Path, rows: int) -> None:
    """The file described in the module docstring, written chunk by chunk."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([("label", pa.int64())])
    tmp = path.with_suffix(".tmp")
    with pq.ParquetWriter(tmp, schema, compression="zstd") as w:
        for start in range(0, rows, CHUNK):
            labels = (np.arange(start, min(rows, start + CHUNK)) % 4).astype(np.int64)
            per_batch = labels[: len(labels) // SIZE * SIZE].reshape(-1, SIZE)
            batch = np.arange(per_batch.shape[0]) + start // SIZE
            per_batch[batch % 20 == 0, 0] = 7
            per_batch[batch % 20 == 10] = -100
            w.write_table(pa.table({"label": labels}, schema=schema), row_group_size=CHUNK)
    tmp.rename(path)


def report(path: Path, *flags: str) -> str:
    argv = [sys.executable, "-m", "labelgate", "validate", str(path), "--classes", "4"]
    done = subprocess.run(
        [*argv, "--format", "json", *flags], capture_output=True, text=True, check=False
    )
    if done.returncode != 1:  # the file fails by design
        raise SystemExit(f"labelgate exited {done.returncode}: {done.stderr.strip()}")
    return done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 100_000_000])
    parser.add_argument("--dir", default="/tmp/labelgate-report-size")
    args = parser.parse_args()
    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    print("rows batches failing listed json_bytes all_batches_bytes ratio")
    for rows in args.rows:
        path = folder / f"one_in_ten_{rows}.parquet"
        if not path.exists():
            make(path, rows)
        default, full = report(path), report(path, "--all-batches")
        b = json.loads(default)["batches"]
        assert json.loads(full)["batches"]["failing_count"] == b["failing_count"]
        size, whole = len(default.encode()), len(full.encode())
        print(
            f"{rows} {b['count']} {b['failing_count']} {len(b['failing'])} {size} {whole} "
            f"{whole / size:.1f}"
        )


if __name__ == "__main__":
    main()
