"""Throughput of a sharded dataset: the local engine against a Dask cluster of 1 and 2 workers.

    python benchmarks/scale.py [--shards 20] [--rows-per-shard 1000000] [--dir /tmp/labelgate-scale]
                               [--id-order sorted|local|shuffled|string|uuid]

Writes (once) a directory of shards in the layout of benchmarks/compare.py (ids continue from
shard to shard), then runs `labelgate validate DIR --classes 4 --format json` in a fresh process:
on the local engine (threads), and with `--dask local[1]` and `--dask local[2]` (worker
processes, cluster start-up included). `--id-order` writes the ids as compare.py's option of that
name does (within each shard). Every run must give the same report (environment aside).
Prints wall time and rows per second. Needs labelgate[dask].
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from compare import ORDERS, make


def main() -> None:
    if sys.argv[1:2] == ["--make"]:
        path, rows, first, seed = sys.argv[2], *map(int, sys.argv[3:6])
        make(Path(path), rows, first_id=first, seed=seed, id_order=sys.argv[6])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, default=20)
    parser.add_argument("--rows-per-shard", type=int, default=1_000_000)
    parser.add_argument("--dir", default="/tmp/labelgate-scale")
    parser.add_argument("--repeat", type=int, default=3, help="runs per setting; the best is shown")
    parser.add_argument("--id-order", choices=ORDERS, default="sorted", help="see compare.py")
    args = parser.parse_args()
    suffix = "" if args.id_order == "sorted" else f"_{args.id_order}"
    folder = Path(args.dir) / f"{args.shards}x{args.rows_per_shard}{suffix}"
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(args.shards):
        shard = folder / f"part-{i:05d}.parquet"
        if not shard.exists():
            first = i * args.rows_per_shard
            cmd = [sys.executable, __file__, "--make", str(shard), str(args.rows_per_shard)]
            subprocess.run([*cmd, str(first), str(i), args.id_order], check=True)
    rows = args.shards * args.rows_per_shard
    base = [sys.executable, "-m", "labelgate", "validate", str(folder), "--classes", "4"]
    base += ["--format", "json", "--no-progress"]
    settings = {
        "local engine (threads)": base,
        "dask local[1]": [*base, "--dask", "local[1]"],
        "dask local[2]": [*base, "--dask", "local[2]"],
    }
    print(
        f"python {platform.python_version()}, {len(os.sched_getaffinity(0))} cores available; "
        f"{args.shards} shards, {rows:,} rows"
    )
    print(f"{'setting':<24} {'wall s':>8} {'M rows/s':>9}")
    reference = None
    for name, cmd in settings.items():
        best = float("inf")
        for _ in range(args.repeat):
            start = time.perf_counter()
            out = subprocess.run(cmd, capture_output=True, text=True, check=False)
            best = min(best, time.perf_counter() - start)
            if out.returncode not in (0, 1):
                raise SystemExit(f"{name} failed: {out.stderr[-2000:]}")
        doc = json.loads(out.stdout)
        doc.pop("environment")
        if reference is None:
            reference = doc
        elif doc != reference:
            raise SystemExit(f"{name}: the report differs from the local engine's")
        print(f"{name:<24} {best:>8.2f} {rows / best / 1e6:>9.1f}")
    print("all settings gave the same report")


if __name__ == "__main__":
    main()
