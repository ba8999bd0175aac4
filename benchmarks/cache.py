"""`labelgate diff --cache DIR` on a pull request that changed 2 shards of 200: the re-run's time
against a full diff's, in one run.

    python benchmarks/cache.py [--shards 200] [--rows 50000] [--changed 2] [--repeat 5]

Writes BASE (``--shards`` Parquet shards of ``--rows`` rows: id, label 0..9, source) and HEAD
(BASE with ``--changed`` shards relabelled in place, same rows), runs ``labelgate validate BASE --cache DIR`` once (the
base branch's run, which fills the cache) and then, ``--repeat`` times alternating so that the
machine's load reaches each alike, in fresh processes: ``labelgate diff BASE HEAD`` (the full
diff), ``labelgate diff BASE HEAD --cache DIR`` (the re-run, each time on a fresh copy of the
filled cache), and ``labelgate validate`` of one shard (the floor: the interpreter's start and
the imports, which any run pays). Printed: the medians of wall and CPU time (user + system of the
child and its workers) and peak RSS of each, the files each read and took from the cache, and
re-run / full of the medians, the goal being at most 0.1 (the CPU ratio is the figure on a
loaded machine). Every re-run's JSON report must equal the full diff's but for the cache's line
and section, or the run stops.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from compare import Measured, measured  # noqa: E402

K = 10


def write(folder: Path, shards: int, rows: int) -> None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True)
    for i in range(shards):
        rng = np.random.default_rng(i)
        table = pa.table(
            {
                "id": np.arange(i * rows, (i + 1) * rows),
                "label": rng.integers(0, K, rows),
                "source": pa.array([f"batch-{i % 7}"] * rows).dictionary_encode(),
            }
        )
        pq.write_table(table, folder / f"part-{i:05d}.parquet")


def relabel(path: Path, count: int) -> None:
    """``count`` rows of the shard get another label: same rows, other bytes."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    labels = table.column("label").to_numpy().copy()
    labels[:count] = (labels[:count] + 1) % K
    table = table.set_column(table.schema.get_field_index("label"), "label", pa.array(labels))
    assert pc.sum(pc.not_equal(table.column("label"), pq.read_table(path).column("label")))
    pq.write_table(table, path)


def labelgate(*args: str) -> list[str]:
    return [sys.executable, "-m", "labelgate", *args, "--classes", str(K), "--format", "json"]


def plain(text: str) -> str:
    doc = json.loads(text)
    doc.pop("cache", None)
    doc["notes"] = [n for n in doc["notes"] if not n.startswith("cache (")]
    return json.dumps(doc, indent=2)


def median(runs: list[Measured]) -> Measured:
    """The median of each figure over ``runs`` (stdout: the first run's)."""
    return Measured(
        statistics.median(m.wall for m in runs),
        statistics.median(m.cpu for m in runs),
        statistics.median(m.rss for m in runs),
        runs[0].stdout,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shards", type=int, default=200)
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--changed", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--goal", type=float, default=0.1, help="re-run / full diff at most")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="labelgate-cache-") as tmp:
        root = Path(tmp)
        base, head, store = root / "base", root / "head", root / "cache"
        write(base, args.shards, args.rows)
        shutil.copytree(base, head)
        step = max(1, args.shards // max(args.changed, 1))
        for i in range(args.changed):
            relabel(head / f"part-{(i * step + step // 2):05d}.parquet", 100)
        diff = labelgate("diff", str(base), str(head))
        warm = measured(labelgate("validate", str(base), "--no-progress", "--cache", str(store)))
        floor = labelgate("validate", str(base / "part-00000.parquet"))
        fulls, again, ones = [], [], []
        for i in range(args.repeat):  # alternating: the load of the moment reaches all three
            fulls.append(measured(diff))
            copy = root / f"cache-{i}"  # each re-run on a copy of the filled cache: it reads 2
            shutil.copytree(store, copy)
            again.append(measured([*diff, "--cache", str(copy)]))
            ones.append(measured(floor))
            if plain(again[-1].stdout) != plain(fulls[-1].stdout):
                sys.exit("the cached diff's report differs from the full diff's")
        full, rerun, one = median(fulls), median(again), median(ones)
        section = json.loads(rerun.stdout)["cache"]
        rows = args.shards * args.rows
        print(f"{args.shards} shards x {args.rows:,} rows ({rows:,} rows), {args.changed} changed")
        print(f"medians of {args.repeat} alternating runs")
        print("                               wall s   CPU s  peak MB")
        for what, m in (
            ("full diff (no cache)", full),
            ("validate BASE --cache (fills)", warm),
            ("diff --cache (re-run)", rerun),
            ("validate of one shard (floor)", one),
        ):
            print(f"{what:30} {m.wall:7.2f} {m.cpu:7.2f} {m.rss:8.0f}")
        print(
            f"re-run: HEAD {section['files_read']} files read, {section['files_cached']} cached; "
            f"BASE {section['base']['files_read']} read, {section['base']['files_cached']} cached"
        )
        print(
            f"re-run / full diff: {rerun.wall / full.wall:.3f} wall, {rerun.cpu / full.cpu:.3f} CPU"
        )
        for what, ratio in (("CPU", rerun.cpu / full.cpu), ("wall", rerun.wall / full.wall)):
            print(f"goal {what} <= {args.goal}: {'met' if ratio <= args.goal else 'missed'}")
        print(
            "less the floor (start-up and imports, the same for any run): "
            f"{(rerun.wall - one.wall) / (full.wall - one.wall):.3f} wall, "
            f"{(rerun.cpu - one.cpu) / (full.cpu - one.cpu):.3f} CPU"
        )


if __name__ == "__main__":
    main()
