"""labelgate against its peers on the same Parquet file and the same checks: wall time, peak memory.

    python benchmarks/compare.py [--rows 1000000 10000000 100000000] [--dir /tmp/labelgate-bench]
                                 [--tools bare labelgate ...] [--repeat 3]
                                 [--id-encoding default|delta] [--gx-max-rows 10000000]
                                 [--id-order sorted|local|shuffled|string|uuid ...|all]
                                 [--class-names] [--alternate 5 [--goal 1.3] [--peak-goal 300]]

For each size it writes (once) a Parquet file: id int64, label int64 with 0.1% ignore_index (-100),
two out-of-range values and one all-ignored 32-row batch, a 3-value source string column and a
label_name string column; zstd; 1M-row groups (`--id-encoding delta` writes the id column
DELTA_BINARY_PACKED instead of pyarrow's default). `--id-order` chooses the ids as users have them:
`sorted` integers (the default), `local` integers (permuted within each 1M-row group, the groups
in order, as a shuffling shard writer leaves them), `shuffled` integers (one global permutation),
`string` paths (`img/000012345.jpg`) or `uuid` (16-byte fixed-size binary), the last two in
shuffled order; every order but `sorted` has five ids repeated. `--class-names` writes the class
map (cat, dog, bird, fish) and has labelgate check the label_name column against it.
Then it runs each tool in a fresh process:

- bare:      a pyarrow streaming scan of the label column (iter_batches + compute.min_max), the
             floor any tool that reads the labels pays;
- floor:     a pyarrow streaming decode of the four columns every tool below reads (id, label,
             source, label_name), doing nothing with them: the decode floor of the same work;
- labelgate: the full `labelgate validate FILE --classes 4` (every check that applies: ranges,
             ignore_index, the (label, name) pairs per source, duplicate ids, the batch simulation);
- labelgate (LG014 off): the same without the duplicate-id check, which reads every id;
- duckdb, polars, pandera, gx: four of the checks: value counts, the ids of the first 20
             out-of-range rows, the count of all-ignored 32-row batches, the count of rows
             repeating an earlier id.

Every tool but the two floors reports those four results and the run stops if any disagrees with
labelgate's. It prints wall time, peak RSS, and time as ratios to the bare scan and to the decode
floor in the same run.
Figures are comparable only within one run, on one machine.

`--alternate RUNS` runs only the decode floor and labelgate, RUNS times each, alternating (the
machine's load then reaches both alike), for each size and each `--id-order` given (`all`: the
five), and prints the medians of wall time, CPU time (user and system) and peak RSS, labelgate's
wall and CPU ratios to the floor, and whether they meet `--goal` (1.3) and `--peak-goal` (300 MB).
Each command runs under a fresh launcher, so its peak RSS is its own (see ``LAUNCH``).
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, NamedTuple

K, IGNORE, BATCH = 4, -100, 32
ORDERS = ("sorted", "local", "shuffled", "string", "uuid")

BARE = """
import sys, json, pyarrow.parquet as pq, pyarrow.compute as pc
lo = hi = None
for b in pq.ParquetFile(sys.argv[1]).iter_batches(columns=["label"], batch_size=65536):
    mm = pc.min_max(b.column(0)).as_py()
    lo = mm["min"] if lo is None else min(lo, mm["min"])
    hi = mm["max"] if hi is None else max(hi, mm["max"])
print(json.dumps({"min": lo, "max": hi}))
"""

FLOOR = """
import sys, json, pyarrow.parquet as pq
rows = 0
for b in pq.ParquetFile(sys.argv[1]).iter_batches(
    columns=["id", "label", "source", "label_name"], batch_size=65536
):
    rows += b.num_rows
print(json.dumps({"rows": rows}))
"""

DUCKDB = """
import sys, json, uuid, duckdb
shown = lambda v: str(uuid.UUID(bytes=v)) if isinstance(v, bytes) else v
f = sys.argv[1].replace("'", "''")
con = duckdb.connect()
con.execute("SET enable_progress_bar = false")  # it writes to stdout on long queries
rows = f"read_parquet('{f}', file_row_number=true)"
values = con.sql(f"SELECT label, count(*) FROM read_parquet('{f}') GROUP BY label").fetchall()
ids = con.sql(
    f"SELECT id FROM {rows} WHERE label <> -100 AND (label < 0 OR label >= 4) "
    "ORDER BY file_row_number LIMIT 20"
).fetchall()
nan = con.sql(
    f"SELECT count(*) FROM (SELECT file_row_number // 32 AS b FROM {rows} "
    "GROUP BY b HAVING bool_and(label = -100))"
).fetchall()[0][0]
dups = con.sql(f"SELECT count(*) - count(DISTINCT id) FROM read_parquet('{f}')").fetchall()[0][0]
print(json.dumps({"values": {str(v): n for v, n in values}, "first_ids": [shown(r[0]) for r in ids],
                  "nan_batches": nan, "duplicate_ids": dups}))
"""

POLARS = """
import sys, json, uuid, polars as pl
shown = lambda v: str(uuid.UUID(bytes=v)) if isinstance(v, bytes) else v
lf = pl.scan_parquet(sys.argv[1]).with_row_index("row")
label = pl.col("label")
values, first, nan, dups = pl.collect_all([
    lf.group_by("label").len(),
    lf.filter((label != -100) & ((label < 0) | (label >= 4))).sort("row").head(20).select("id"),
    lf.group_by(pl.col("row") // 32).agg((label == -100).all().alias("all"))
      .filter(pl.col("all")).select(pl.len()),
    lf.select(pl.len() - pl.col("id").n_unique()),
], engine="streaming")
print(json.dumps({"values": {str(v): n for v, n in zip(values["label"], values["len"])},
                  "first_ids": [shown(v) for v in first["id"].to_list()],
                  "nan_batches": nan.item(), "duplicate_ids": dups.item()}))
"""

PANDERA = """
import sys, json, uuid, warnings
import pandas as pd, pandera.pandas as pa
df = pd.read_parquet(sys.argv[1], columns=["id", "label"])
schema = pa.DataFrameSchema(
    {"label": pa.Column("int64", pa.Check(lambda s: (s == -100) | s.between(0, 3)))}
)
try:
    schema.validate(df, lazy=True)
    bad = []
except pa.errors.SchemaErrors as e:
    bad = sorted(int(i) for i in e.failure_cases["index"].dropna())
values = df["label"].value_counts()
nan = int(df["label"].eq(-100).groupby(df.index // 32).all().sum())
ids = df["id"].to_numpy()[bad[:20]].tolist()
print(json.dumps({"values": {str(v): int(n) for v, n in values.items()},
                  "first_ids": [str(uuid.UUID(bytes=i)) if isinstance(i, bytes) else i for i in ids],
                  "nan_batches": nan, "duplicate_ids": int(df["id"].duplicated().sum())}))
"""

GX = """
import sys, json, logging, uuid
import pandas as pd, great_expectations as gx
logging.disable(logging.WARNING)
df = pd.read_parquet(sys.argv[1], columns=["id", "label"])
# GX has no notion of a training batch: the batch column is prepared in pandas.
df["batch_all_ignored"] = df["label"].eq(-100).groupby(df.index // 32).transform("all")
ctx = gx.get_context(mode="ephemeral")
batch = (ctx.data_sources.add_pandas("p").add_dataframe_asset("a")
         .add_batch_definition_whole_dataframe("b").get_batch(batch_parameters={"dataframe": df}))
complete = {"result_format": "COMPLETE"}
in_range = batch.validate(gx.expectations.ExpectColumnValuesToBeInSet(
    column="label", value_set=[-100, 0, 1, 2, 3]), result_format=complete)
nan = batch.validate(gx.expectations.ExpectColumnValuesToBeInSet(
    column="batch_all_ignored", value_set=[False]), result_format=complete)
# GX 1.x returns no value counts: one expectation per value, count = rows - unexpected.
values = {}
for v in [-100, 0, 1, 2, 3] + [d["value"] for d in in_range.result["partial_unexpected_counts"]]:
    one = batch.validate(gx.expectations.ExpectColumnValuesToBeInSet(column="label", value_set=[v]),
                         result_format={"result_format": "SUMMARY"})
    values[str(int(v))] = int(one.result["element_count"] - one.result["unexpected_count"])
bad = sorted(in_range.result["unexpected_index_list"])[:20]
nan_rows = nan.result["unexpected_index_list"]
ids = df["id"].to_numpy()[bad].tolist()
print(json.dumps({"values": values,
                  "first_ids": [str(uuid.UUID(bytes=i)) if isinstance(i, bytes) else i for i in ids],
                  "nan_batches": len({int(i) // 32 for i in nan_rows}),
                  "duplicate_ids": int(df["id"].duplicated().sum())}))
"""


def make(
    path: Path,
    rows: int,
    *,
    first_id: int = 0,
    seed: int = 0,
    id_encoding: str = "default",
    id_order: str = "sorted",
) -> None:
    """The benchmark file (see the module docstring); ``first_id`` and ``seed`` make shards;
    ``id_encoding="delta"`` writes the id column DELTA_BINARY_PACKED (pyarrow's default is a
    dictionary that falls back to PLAIN)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    names = np.array(["cat", "dog", "bird", "fish"])
    sources = np.array(["web", "vendor", "archive"])
    id_type = {"string": pa.string(), "uuid": pa.binary(16)}.get(id_order, pa.int64())
    # Ids as users have them: shuffled (a global permutation), with five repeated (rows 5-9
    # repeat rows 100-104), except the sorted ids of the original benchmark.
    order = np.arange(first_id, first_id + rows, dtype=np.int64)
    if id_order == "local":
        for start in range(0, rows, 1_000_000):
            order[start : start + 1_000_000] = rng.permutation(order[start : start + 1_000_000])
    elif id_order != "sorted":
        order = rng.permutation(order)
    if id_order != "sorted":
        order[5:10] = order[100:105] if rows > 105 else order[5:10]
    schema = pa.schema(
        [
            ("id", id_type),
            ("label", pa.int64()),
            ("source", pa.string()),
            ("label_name", pa.string()),
        ]
    )
    tmp = path.with_suffix(".tmp")
    options: dict[str, Any] = {}
    if id_encoding == "delta":
        options = {
            "use_dictionary": ["source", "label_name", "label"],
            "column_encoding": {"id": "DELTA_BINARY_PACKED"},
        }
    with pq.ParquetWriter(tmp, schema, compression="zstd", **options) as w:
        for start in range(0, rows, 1_000_000):
            n = min(1_000_000, rows - start)
            label = rng.integers(0, K, n)
            named = names[label]
            label[rng.random(n) < 0.001] = IGNORE
            if start == 0 and first_id == 0:
                label[[17, 123_456 % n]] = K  # two out-of-range values
                label[64_000 % n : 64_000 % n + BATCH] = IGNORE  # one all-ignored batch
            w.write_table(
                pa.table(
                    {
                        "id": _ids(order[start : start + n], id_order),
                        "label": label,
                        "source": sources[rng.integers(0, 3, n)],
                        "label_name": named,
                    },
                    schema=schema,
                ),
                row_group_size=1_000_000,
            )
    tmp.rename(path)


class Measured(NamedTuple):
    """One command's run: wall seconds, CPU seconds (user and system, its worker processes
    included), peak RSS in MB of the largest of the process and its workers, stdout."""

    wall: float
    cpu: float
    rss: float
    stdout: str


def plain(text: str) -> str:
    """A JSON report less its environment (versions, the interpreter's paths)."""
    doc = json.loads(text)
    doc.pop("environment", None)
    return json.dumps(doc, indent=1)


def kept(name: str, out: str, saved: Path) -> None:
    """Stop the run unless ``out`` (a JSON report) is, less its environment, byte for byte the
    one saved in ``saved`` (the first run saves it: a later revision must give the same)."""
    import difflib

    if not saved.exists():
        saved.write_text(plain(out))
    want, got = saved.read_text(), plain(out)
    if got != want:
        diff = "\n".join(list(difflib.unified_diff(want.splitlines(), got.splitlines()))[:40])
        raise SystemExit(f"{name}: the report differs from the one saved in {saved}:\n{diff}")


@functools.cache
def compiled() -> None:
    """labelgate's modules compiled to bytecode once, as pip compiles them when it installs the
    wheel: a run from a source tree where bytecode is not written (PYTHONDONTWRITEBYTECODE)
    would otherwise compile some 60 modules again in each run (0.06 s and more)."""
    import compileall

    spec = importlib.util.find_spec("labelgate")
    if spec is not None and spec.origin is not None:
        compileall.compile_dir(Path(spec.origin).parent, quiet=1)


# A fresh, small launcher per measurement: it spawns the command and reads the usage of its
# children (the command and every worker it waited for). A child's peak RSS on Linux is the
# larger of its own and that of the process it was spawned from (the kernel carries the old
# address space's high-water mark across exec), so a command spawned by this script, once it has
# held data, would report this script's peak; spawned by the launcher, it reports its own unless
# it stays under the launcher's few MB.
LAUNCH = """
import os, resource, sys, time
start = time.perf_counter()
pid = os.posix_spawn(sys.argv[2], sys.argv[2:], os.environ)
_, status = os.waitpid(pid, 0)
wall = time.perf_counter() - start
u = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(sys.argv[1], "w") as f:
    f.write(f"{os.waitstatus_to_exitcode(status)} {wall} {u.ru_utime + u.ru_stime} {u.ru_maxrss}")
"""


def measured(argv: list[str]) -> Measured:
    """Run a command in a fresh process and measure it (exit 0 or 1, else the run stops), the
    labelgate package ``compiled`` first. Wall time is the command's, from its spawn to its
    exit; CPU time and peak RSS are its own and its workers', read by ``LAUNCH``."""
    compiled()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        with tempfile.TemporaryDirectory() as tmp:
            usage = Path(tmp) / "usage"
            launcher = [sys.executable, "-S", "-c", LAUNCH, str(usage), *argv]
            subprocess.run(launcher, stdout=out, stderr=err, check=True)
            code, wall, cpu, rss = usage.read_text().split()
        if int(code) not in (0, 1):
            err.seek(0)
            raise SystemExit(f"{argv[:4]} failed ({code}): {err.read().decode()[-2000:]}")
        out.seek(0)
        return Measured(float(wall), float(cpu), int(rss) / 1024, out.read().decode())


def run(argv: list[str]) -> tuple[float, float, str]:
    """Run a command in a fresh process: (wall seconds, peak RSS in MB of that process, stdout)."""
    m = measured(argv)
    return m.wall, m.rss, m.stdout


def from_labelgate(text: str) -> dict[str, Any]:
    """The four shared results, read from labelgate's JSON report."""
    doc = json.loads(text)
    out_of_range = sorted(
        (e["row"], e["id"])
        for f in doc["findings"]
        if f["code"] in ("LG004", "LG005")
        for e in f["examples"]
    )
    values = {str(c["index"]): c["count"] for c in doc["classes"]}
    values[str(IGNORE)] = doc["counts"]["ignored"]
    for f in doc["findings"]:
        if f["code"] in ("LG004", "LG005"):
            values.update({v: n for v, n in f["details"]["values"].items()})
    return {
        "values": values,
        "first_ids": [i for _, i in out_of_range[:20]],
        "nan_batches": doc["batches"]["no_usable"],
        "duplicate_ids": sum(f["count"] for f in doc["findings"] if f["code"] == "LG014"),
    }


def normal(result: dict[str, Any]) -> dict[str, Any]:
    return {
        "values": {v: n for v, n in sorted(result["values"].items()) if n},
        "first_ids": list(result["first_ids"]),
        "nan_batches": int(result["nan_batches"]),
        "duplicate_ids": int(result.get("duplicate_ids", 0)),
    }


PEERS = {"duckdb": "duckdb", "polars": "polars", "pandera": "pandera", "gx": "great_expectations"}


def tools(path: Path, folder: Path, *, class_names: bool = False) -> dict[str, list[str]]:
    py = sys.executable
    validate = [py, "-m", "labelgate", "validate", str(path), "--classes", str(K)]
    validate += ["--format", "json", "--no-progress"]
    if class_names:  # the label_name column checked against the class map, row by row
        names = folder / "classes.txt"
        names.write_text("cat\ndog\nbird\nfish\n")
        validate += ["--class-names", str(names)]
    no_ids = folder / "no_duplicate_id_check.yaml"
    no_ids.write_text(f'num_classes: {K}\nseverity:\n  LG014: "off"\n')
    return {
        "bare": [py, "-c", BARE, str(path)],
        "floor": [py, "-c", FLOOR, str(path)],
        "labelgate": validate,
        "labelgate-no-LG014": [*validate, "--schema", str(no_ids)],
        "duckdb": [py, "-c", DUCKDB, str(path)],
        "polars": [py, "-c", POLARS, str(path)],
        "pandera": [py, "-c", PANDERA, str(path)],
        "gx": [py, "-c", GX, str(path)],
    }


def _ids(values: Any, id_order: str) -> Any:
    """The id column for ``values`` (int64): as they are, as paths, or as 16-byte UUIDs."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if id_order == "string":
        digits = pc.utf8_lpad(pc.cast(pa.array(values), pa.string()), 9, "0")
        return pc.binary_join_element_wise("img/", digits, ".jpg", "")
    if id_order == "uuid":
        mixed = (values.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)).astype(">u8")
        raw = np.stack([mixed, mixed ^ np.uint64(0xA5A5A5A5A5A5A5A5)], axis=1).tobytes()
        return pa.FixedSizeBinaryArray.from_buffers(
            pa.binary(16), len(values), [None, pa.py_buffer(raw)]
        )
    return values


def median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def alternated(path: Path, folder: Path, runs: int, *, class_names: bool) -> dict[str, float]:
    """``runs`` runs of the decode floor and of labelgate on ``path``, alternating (floor first),
    so that a change of the machine's load reaches both alike; the medians of each one's wall
    time, CPU time and peak RSS. Every labelgate run must give the same report."""
    chosen = tools(path, folder, class_names=class_names)
    floor: list[Measured] = []
    labelgate: list[Measured] = []
    report = None
    for _ in range(runs):
        floor.append(measured(chosen["floor"]))
        labelgate.append(measured(chosen["labelgate"]))
        if report is None:
            report = plain(labelgate[-1].stdout)
        elif plain(labelgate[-1].stdout) != report:
            raise SystemExit(f"{path.name}: labelgate gave two different reports")
    return {
        f"{name} {field}": median([getattr(m, field) for m in measures])
        for name, measures in (("floor", floor), ("labelgate", labelgate))
        for field in ("wall", "cpu", "rss")
    }


def print_alternated(
    rows: int, order: str, got: dict[str, float], goal: float, peak: float
) -> None:
    """One line of ``alternated``'s medians, the ratios to the floor and whether they meet the
    goal (time at or under ``goal`` times the floor's, peak RSS at or under ``peak`` MB)."""
    wall = got["labelgate wall"] / got["floor wall"]
    cpu = got["labelgate cpu"] / got["floor cpu"]
    memory = got["labelgate rss"]
    verdict = ", ".join(
        f"{what} {'met' if ok else 'MISSED'}"
        for what, ok in (("wall", wall <= goal), ("cpu", cpu <= goal), ("peak", memory <= peak))
    )
    print(
        f"{rows:>12,} {order:<9} {got['floor wall']:>7.2f} {got['floor cpu']:>7.2f} "
        f"{got['labelgate wall']:>7.2f} {got['labelgate cpu']:>7.2f} {wall:>6.2f} {cpu:>6.2f} "
        f"{got['floor rss']:>7.0f} {memory:>7.0f}  {verdict}",
        flush=True,
    )


def main() -> None:
    if sys.argv[1:2] == ["--make"]:
        make(Path(sys.argv[2]), int(sys.argv[3]), id_encoding=sys.argv[4], id_order=sys.argv[5])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--dir", default="/tmp/labelgate-bench")
    parser.add_argument("--repeat", type=int, default=3, help="runs per tool; the best is shown")
    parser.add_argument("--tools", nargs="+", help="a subset (bare is always run)")
    parser.add_argument(
        "--id-encoding",
        choices=("default", "delta"),
        default="default",
        help="how the id column is written: pyarrow's default, or DELTA_BINARY_PACKED",
    )
    parser.add_argument(
        "--id-order",
        choices=(*ORDERS, "all"),
        nargs="+",
        default=["sorted"],
        help="the ids: sorted integers, integers shuffled within each row group (local) or "
        "globally, text paths or 16-byte UUIDs; several, or all, are run one after the other",
    )
    parser.add_argument(
        "--alternate",
        type=int,
        metavar="RUNS",
        help="run only the decode floor and labelgate, alternating, RUNS times each, and print "
        "the medians (wall, CPU, peak) and labelgate's ratios to the floor",
    )
    parser.add_argument(
        "--goal", type=float, default=1.3, help="with --alternate: the ratio to the floor to meet"
    )
    parser.add_argument(
        "--peak-goal", type=float, default=300, help="with --alternate: the peak RSS (MB) to meet"
    )
    parser.add_argument(
        "--class-names",
        action="store_true",
        help="labelgate checks the label_name column against the class map (cat, dog, bird, fish)",
    )
    parser.add_argument(
        "--gx-max-rows",
        type=int,
        default=10_000_000,
        help="skip Great Expectations above this size (it holds about 2 GB per 10M rows here)",
    )
    args = parser.parse_args()
    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    print(
        f"python {platform.python_version()}, {platform.machine()}, "
        f"{len(os.sched_getaffinity(0))} cores available"
    )
    orders = list(ORDERS) if "all" in args.id_order else list(dict.fromkeys(args.id_order))
    if args.alternate:
        print(
            f"medians of {args.alternate} runs each, alternating; goal: at or under "
            f"{args.goal}x the floor, {args.peak_goal:.0f} MB"
        )
        print(
            f"{'rows':>12} {'ids':<9} {'floor s':>7} {'cpu s':>7} {'lg s':>7} {'cpu s':>7} "
            f"{'x wall':>6} {'x cpu':>6} {'floorMB':>7} {'lg MB':>7}"
        )
    else:
        print(
            f"{'rows':>12} {'tool':<20} {'wall s':>8} {'peak MB':>8} {'x bare time':>11} "
            f"{'x bare mem':>10} {'x floor time':>12}"
        )
    for rows in args.rows:
        for order in orders:
            path = made(folder, rows, args.id_encoding, order)
            if args.alternate:
                got = alternated(path, folder, args.alternate, class_names=args.class_names)
                print_alternated(rows, order, got, args.goal, args.peak_goal)
            else:
                compared(path, folder, rows, args)


def made(folder: Path, rows: int, id_encoding: str, order: str) -> Path:
    """The benchmark file of ``rows`` rows with these ids, written first where it is missing."""
    suffix = "" if id_encoding == "default" else f"_id_{id_encoding}"
    suffix += "" if order == "sorted" else f"_{order}"
    path = folder / f"labels_{rows}{suffix}.parquet"
    if not path.exists():
        # In a child process: the data it held would otherwise stay in this process's memory.
        make_cmd = [sys.executable, __file__, "--make", str(path), str(rows), id_encoding, order]
        subprocess.run(make_cmd, check=True)
    return path


def compared(path: Path, folder: Path, rows: int, args: argparse.Namespace) -> None:
    """Every chosen tool on ``path``, best of ``args.repeat`` runs, checked to agree; a line each."""
    chosen = tools(path, folder, class_names=args.class_names)
    if args.tools:
        chosen = {n: c for n, c in chosen.items() if n in ("bare", "floor") or n in args.tools}
    if rows > args.gx_max_rows and chosen.pop("gx", None):
        print(f"{rows:>12,} gx skipped: over --gx-max-rows {args.gx_max_rows:,}")
    for name, module in PEERS.items():
        if name in chosen and importlib.util.find_spec(module) is None:
            del chosen[name]
            print(f"{rows:>12,} {name} skipped: {module} is not installed")
    results: dict[str, tuple[float, float]] = {}
    reference: dict[str, Any] | None = None
    for name, cmd in chosen.items():
        runs = [run(cmd) for _ in range(args.repeat)]
        wall, mem = min(r[0] for r in runs), min(r[1] for r in runs)
        results[name] = (wall, mem)
        if name in ("bare", "floor"):
            continue
        text = runs[0][2]
        got = normal(from_labelgate(text) if name.startswith("labelgate") else json.loads(text))
        if reference is None:
            reference = got
        elif name == "labelgate-no-LG014":  # the one tool that does not count duplicates
            if {**got, "duplicate_ids": reference["duplicate_ids"]} != reference:
                raise SystemExit(f"{name} disagrees with labelgate:\n{got}\n{reference}")
        elif got != reference:
            raise SystemExit(f"{name} disagrees with labelgate:\n{got}\n{reference}")
    base_wall, base_mem = results["bare"]
    floor_wall = results["floor"][0]
    for name, (wall, mem) in results.items():
        print(
            f"{rows:>12,} {name:<20} {wall:>8.2f} {mem:>8.0f} "
            f"{wall / base_wall:>11.2f} {mem / base_mem:>10.2f} {wall / floor_wall:>12.2f}"
        )
    if reference is not None:
        print(f"{'':>12} all tools agree: {json.dumps(reference)}")


if __name__ == "__main__":
    main()
