"""The witness at scale: 10M rows, K=1000, predictions as a predicted-class column.

    python benchmarks/witness_scale.py [--rows 10000000] [--classes 1000] [--folder /tmp/lgw]

Writes (once) DATA.parquet (label, source: four sources, one of them permuted) and PRED.parquet
(one predicted-class column, 10% of rows wrong, joined by position), then times in fresh
processes: pyarrow streaming the two columns (the floor: reading what the witness needs),
``labelgate validate DATA -k K``, and the same with ``--predictions PRED``. Printed: wall time,
CPU time and peak RSS of each; ``validate --predictions`` over the floor (the ratio the goal,
within 2 x, is judged by); and the witness's own cost (the third less the second) over the floor.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from compare import Measured, measured  # noqa: E402

READ = """
import sys, pyarrow.parquet as pq, numpy as np
total = 0
for path, column in ((sys.argv[1], "label"), (sys.argv[2], "prediction")):
    for batch in pq.ParquetFile(path, pre_buffer=False).iter_batches(65536, columns=[column]):
        total += int(np.asarray(batch.column(0)).sum() & 1)
print(total)
"""


def make(folder: Path, rows: int, k: int) -> tuple[Path, Path]:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    data, pred = folder / f"data_{rows}_{k}.parquet", folder / f"pred_{rows}_{k}.parquet"
    if data.exists() and pred.exists():
        return data, pred
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    perm = rng.permutation(k)
    with (
        pq.ParquetWriter(data, pa.schema([("label", pa.int32()), ("source", pa.string())])) as dw,
        pq.ParquetWriter(pred, pa.schema([("prediction", pa.int32())])) as pw,
    ):
        step = 1_000_000
        for start in range(0, rows, step):
            n = min(step, rows - start)
            truth = rng.integers(0, k, n).astype(np.int32)
            source = rng.integers(0, 4, n)
            given = np.where(source == 3, perm[truth], truth).astype(np.int32)
            wrong = rng.random(n) < 0.1
            predicted = np.where(wrong, rng.integers(0, k, n), truth).astype(np.int32)
            names = pa.DictionaryArray.from_arrays(
                pa.array(source.astype(np.int32)), pa.array(["a", "b", "c", "vendor"])
            )
            dw.write_table(pa.table({"label": given, "source": names.cast(pa.string())}))
            pw.write_table(pa.table({"prediction": predicted}))
    return data, pred


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--classes", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5, help="alternating runs; medians printed")
    parser.add_argument("--folder", default="/tmp/labelgate-witness-bench")
    args = parser.parse_args()
    data, pred = make(Path(args.folder), args.rows, args.classes)
    k = str(args.classes)
    py = sys.executable
    validate = [py, "-m", "labelgate", "validate", str(data), "-k", k, "--format", "json"]
    commands = {
        "floor": [py, "-c", READ, str(data), str(pred)],
        "plain": validate,
        "witness": [*validate, "--predictions", str(pred)],
    }
    runs: dict[str, list[Measured]] = {name: [] for name in commands}
    for _ in range(args.runs):  # alternating, so a slow moment of the machine hits all three
        for name, argv in commands.items():
            runs[name].append(measured(argv))

    def med(name: str, field: str) -> float:
        return statistics.median(getattr(m, field) for m in runs[name])

    print(f"{args.rows} rows, K={args.classes}, median of {args.runs} alternating runs")
    for name, label in (
        ("floor", "read label + prediction columns (pyarrow)"),
        ("plain", "labelgate validate"),
        ("witness", "labelgate validate --predictions"),
    ):
        print(
            f"{label:<42} wall {med(name, 'wall'):5.2f} s  cpu {med(name, 'cpu'):5.2f} s  "
            f"peak {max(m.rss for m in runs[name]):4.0f} MB"
        )
    for field in ("wall", "cpu"):
        total, floor = med("witness", field), med("floor", field)
        extra = total - med("plain", field)
        print(
            f"validate --predictions ({field}): {total / floor:.2f} x reading the two columns "
            f"(the goal: within 2 x); the witness's own cost: {extra:.2f} s = "
            f"{extra / floor:.2f} x"
        )
    found = [f for f in json.loads(runs["witness"][-1].stdout)["findings"] if f["code"] == "LG049"]
    shown = [(f["severity"], f["details"].get("source"), f["details"].get("kind")) for f in found]
    print(f"LG049 findings: {shown}")


if __name__ == "__main__":
    main()
