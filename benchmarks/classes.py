"""labelgate with a vocabulary-sized K: is every per-class step linear?

    python benchmarks/classes.py [--classes 21841 1000000] [--rows 1000000] [--repeat 3]

For each K it writes (once) a Parquet file of ``--rows`` labels spread over 0..K-1 with a name
column, and a txt class map of K names, then times in fresh processes
``labelgate validate FILE --classes K`` with and without ``--class-names`` (the map is where a
quadratic step once hid: 75 s at K=21,841). Printed: best wall time and peak RSS of each, and
with-map / without-map, which stays near 1 when the map costs time linear in K.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from compare import run  # noqa: E402


def make(folder: Path, k: int, rows: int) -> tuple[Path, Path]:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    data, names = folder / f"classes_{k}_{rows}.parquet", folder / f"classes_{k}.txt"
    if not data.exists():
        rng = np.random.default_rng(0)
        labels = rng.integers(0, k, rows)
        table = pa.table(
            {
                "id": np.arange(rows),
                "label": labels,
                "label_name": pa.array([f"class_{v}" for v in labels.tolist()]),
            }
        )
        pq.write_table(table, data, row_group_size=1 << 20)
    if not names.exists():
        names.write_text("".join(f"class_{i}\n" for i in range(k)))
    return data, names


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--classes", type=int, nargs="+", default=[21_841, 1_000_000])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dir", default="/tmp/labelgate-bench")
    args = parser.parse_args()
    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    for k in args.classes:
        data, names = make(folder, k, args.rows)
        base = [sys.executable, "-m", "labelgate", "validate", str(data), "--classes", str(k)]
        base += ["--format", "json", "--no-progress"]
        best: dict[str, tuple[float, float]] = {}
        for _ in range(args.repeat):
            for label, argv in (("no map", base), ("map", [*base, "--class-names", str(names)])):
                wall, rss, _ = run(argv)
                old = best.get(label, (float("inf"), 0.0))
                best[label] = (min(old[0], wall), max(old[1], rss))
        (nw, nr), (mw, mr) = best["no map"], best["map"]
        print(
            f"K={k:>9,} rows={args.rows:,}: no map {nw:6.2f} s {nr:5.0f} MB | "
            f"{k:,}-name map {mw:6.2f} s {mr:5.0f} MB | map/no map {mw / nw:.2f}x"
        )


if __name__ == "__main__":
    main()
