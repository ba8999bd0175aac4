"""Sharded datasets on a Dask cluster (real scheduler, two worker processes on 127.0.0.1) and on
an S3-compatible server on loopback: the same report as the local engine, row for row."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from labelgate import Contract
from labelgate.errors import InputError
from labelgate.run.validation import report_of

from .conftest import assert_cluster_report_is_local, cli_here, moto_s3, run_cli_without
from .support.cluster import loopback_cluster, skip_without_distributed

# subprocesses, engines or clusters: the full tier only; one worker runs them all (one cluster and one S3 server, for the module)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("distributed")]

skip_without_distributed()

NAMES = np.array(["cat", "dog", "bird", "fish"])
SHARDS = 24
EDGE_SHARD = 3  # the all-ignored batch straddles the edge between shards 2 and 3
LAST_ROW_SHARD = 7  # a bad label in this shard's last row
ONE_BASED = range(5, 10)  # shards whose "vendor" rows are stored 1-based


def _sizes() -> list[int]:
    rng = np.random.default_rng(7)
    return [int(n) for n in rng.integers(8_000, 15_000, SHARDS)]


def write_shards(folder: Path) -> dict[str, Any]:
    """About 270K rows in 24 shards of uneven row groups, with three planted faults."""
    rng = np.random.default_rng(11)
    sizes = _sizes()
    starts = np.cumsum([0, *sizes])
    edge = int(starts[EDGE_SHARD])
    assert edge % 32 != 0
    nan_batch = edge // 32
    folder.mkdir(parents=True, exist_ok=True)
    for i, n in enumerate(sizes):
        cls = rng.integers(0, 4, n)
        label = cls.copy()
        source = np.array(["web", "archive"])[rng.integers(0, 2, n)]
        if i in ONE_BASED:
            vendor = rng.random(n) < 0.5
            source[vendor] = "vendor"
            label[vendor] += 1  # 1-based: class 3 is stored as 4
        label[rng.random(n) < 0.001] = -100
        rows = np.arange(starts[i], starts[i] + n)
        label[(rows // 32) == nan_batch] = -100
        if i == LAST_ROW_SHARD:
            source[-1], label[-1] = "web", 9  # not a vendor row: the faults stay apart
        pq.write_table(
            pa.table(
                {
                    "id": pa.array(rows + 1_000_000, pa.int64()),
                    "label": pa.array(label, pa.int64()),
                    "source": pa.array(source),
                    "label_name": pa.array(NAMES[cls]),
                }
            ),
            folder / f"part-{i:03d}.parquet",
            row_group_size=int(rng.integers(1_500, 4_000)),
        )
    return {
        "rows": int(starts[-1]),
        "nan_batch": nan_batch,
        "last_row": int(starts[LAST_ROW_SHARD + 1]) - 1,
        "last_row_in_shard": sizes[LAST_ROW_SHARD] - 1,
    }


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    folder = tmp_path_factory.mktemp("sharded") / "shards"
    return folder, write_shards(folder)


# The S3 server's test credentials (conftest.moto_s3), set in the workers' environment as a
# cluster's operator would: labelgate sends none to the workers.
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "labelgate-test-key",
    "AWS_SECRET_ACCESS_KEY": "labelgate-test-secret",
    "AWS_DEFAULT_REGION": "us-east-1",
}


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    """A real scheduler and two worker processes on loopback, shared by the module's tests."""
    with loopback_cluster(env=CREDENTIALS) as address:
        yield address


@pytest.fixture(scope="module")
def local(shards: tuple[Path, dict[str, Any]]) -> Any:
    """The shards' report by the local engine (four classes), read once for the module."""
    folder, _ = shards
    return report_of([str(folder)], Contract(num_classes=4))


def plain(report: Any, *roots: str) -> dict[str, Any]:
    doc = report.to_dict()
    doc.pop("environment")
    text = json.dumps(doc, sort_keys=True)
    for root in roots:
        text = text.replace(root, "<root>")
    out: dict[str, Any] = json.loads(text)
    return out


def test_cached_cluster_runs_read_only_what_they_lack(
    shards: tuple[Path, dict[str, Any]], scheduler: str, local: Any, tmp_path: Path
) -> None:
    """--cache with --dask: the files the cache lacks are one task each on the cluster."""
    folder, _ = shards
    contract = Contract(num_classes=4)
    store = str(tmp_path / "cache")
    for read in (True, False):
        report = report_of([str(folder)], contract, dask=scheduler, cache=store)
        section = report.cache
        assert section is not None
        files = len(section["files"])
        assert (section["files_read"], section["files_cached"]) == (
            (files, 0) if read else (0, files)
        )
        doc = plain(report)
        doc.pop("cache")
        doc["notes"] = [n for n in doc["notes"] if not n.startswith("cache (")]
        assert doc == plain(local)


def test_cluster_report_equals_the_local_report(
    shards: tuple[Path, dict[str, Any]], scheduler: str, local: Any
) -> None:
    folder, facts = shards
    contract = Contract(num_classes=4)
    remote = report_of([str(folder)], contract, dask=scheduler)
    assert plain(remote) == plain(local)
    assert local.counts["rows"] == facts["rows"] > 250_000
    codes = {f.code: f for f in local.findings}
    assert facts["nan_batch"] in codes["LG007"].batches
    assert codes["LG004"].details["values"]["9"] == 1
    every = report_of([str(folder)], contract, max_examples=0, dask=scheduler)
    (lg004,) = [f for f in every.findings if f.code == "LG004"]
    last = [e for e in lg004.examples if e.value == 9]
    assert [(e.row, e.file, e.file_row) for e in last] == [
        (
            facts["last_row"],
            str(folder / f"part-{LAST_ROW_SHARD:03d}.parquet"),
            facts["last_row_in_shard"],
        )
    ]
    assert "'vendor'" in codes["LG011"].message
    assert codes["LG011"].severity == "error"  # proven by the name column


def test_local_cluster_from_the_command_line(shards: tuple[Path, dict[str, Any]]) -> None:
    folder, _ = shards
    args = ("validate", str(folder), "--classes", "4", "--format", "json")
    assert_cluster_report_is_local(*args)


@pytest.mark.parametrize("kind", ["int", "string", "uuid", "int-with-nulls"])
def test_duplicate_ids_partitioned_across_workers_equal_the_local_check(
    tmp_path: Path, scheduler: str, kind: str
) -> None:
    """LG014 on the cluster: ids keyed by map tasks, one reduce task per partition of keys; the
    same count, ids that repeat and first rows as the local engine and as a plain set. 6,000
    rows in five files of 400-row groups: the 17 row groups that 60,000 rows in 4,000-row
    groups made, so the same map tasks (TASKS_PER_WORKER per worker) and the same four
    partitions (two workers' floor), ids repeating within and across files."""
    rng = np.random.default_rng(5)
    pool = rng.integers(0, 4_000, 6_000)  # 2,890 rows repeat an earlier id
    rows = 0
    every: list[Any] = []
    for i, n in enumerate([900, 1_400, 1_100, 1_200, 1_400]):
        draw = pool[rows : rows + n]
        ids: Any
        if kind == "string":
            ids = pa.array([f"img/{d:06d}.jpg" for d in draw])
        elif kind == "uuid":
            ids = pa.array([int(d).to_bytes(16, "big") for d in draw], pa.binary(16))
        else:
            nulls = (np.arange(rows, rows + n) % 97 == 3) if kind == "int-with-nulls" else None
            ids = pa.array(draw, pa.int64(), mask=nulls)
        every += ids.to_pylist()
        table = pa.table({"id": ids, "label": np.zeros(n, np.int64)})
        pq.write_table(table, tmp_path / f"part-{i}.parquet", row_group_size=400)
        rows += n
    seen: set[Any] = set()
    repeats = []
    for row, value in enumerate(every):
        if value in seen:
            repeats.append(row)
        seen.add(value)
    contract = Contract(num_classes=1)
    local = report_of([str(tmp_path)], contract, max_examples=0)
    remote = report_of([str(tmp_path)], contract, max_examples=0, dask=scheduler)
    assert plain(remote, str(tmp_path)) == plain(local, str(tmp_path))
    (lg014,) = [f for f in remote.findings if f.code == "LG014"]
    assert [e.row for e in lg014.examples] == repeats and lg014.count == len(repeats)


def test_an_unreadable_shard_is_named(tmp_path: Path, scheduler: str) -> None:
    for i in range(3):
        pq.write_table(pa.table({"label": np.zeros(5_000, np.int64)}), tmp_path / f"p{i}.parquet")
    bad = tmp_path / "p1.parquet"
    data = bytearray(bad.read_bytes())
    for i in range(8, len(data) // 2):
        data[i] = 0xFF
    bad.write_bytes(bytes(data))
    with pytest.raises(InputError) as info:
        report_of([str(tmp_path)], Contract(num_classes=4), dask=scheduler)
    assert info.value.path == str(bad)


def test_without_dask_a_one_line_hint(tmp_path: Path) -> None:
    pq.write_table(pa.table({"label": [0, 1]}), tmp_path / "a.parquet")
    result = run_cli_without(
        ("dask", "distributed"),
        "validate",
        str(tmp_path / "a.parquet"),
        "-k",
        "2",
        "--dask",
        "local[1]",
    )
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert "pip install 'labelgate[dask]'" in result.stderr


def test_text_inputs_are_refused_on_a_cluster(tmp_path: Path, scheduler: str) -> None:
    (tmp_path / "l.csv").write_text("label\n0\n")
    result = cli_here("validate", str(tmp_path / "l.csv"), "-k", "2", "--dask", scheduler)
    assert result.returncode == 2 and "--dask" in result.stderr


# -- object storage --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def s3(shards: tuple[Path, dict[str, Any]]) -> Iterator[str]:
    """The shards uploaded to a moto S3 server on loopback; yields their URI."""
    with moto_s3("labels") as (s3fs, port):
        folder, _ = shards
        for f in sorted(folder.iterdir()):
            with s3fs.open_output_stream(f"labels/shards/{f.name}") as out:
                out.write(f.read_bytes())
        yield f"s3://labels/shards?endpoint_override=127.0.0.1:{port}&scheme=http"


def test_s3_report_equals_the_local_report(
    shards: tuple[Path, dict[str, Any]], s3: str, local: Any
) -> None:
    folder, _ = shards
    remote_report = report_of([s3], Contract(num_classes=4))
    remote = plain(remote_report, "s3://labels/shards")
    assert remote == plain(local, str(folder))
    text = json.dumps(remote_report.to_dict())
    assert "labelgate-test-secret" not in text and "labelgate-test-key" not in text
    assert "endpoint_override" not in text  # the query string never reaches a report


def test_s3_on_the_cluster(
    shards: tuple[Path, dict[str, Any]], s3: str, scheduler: str, local: Any
) -> None:
    folder, _ = shards
    # The workers read the shards with the credentials of their own environment (CREDENTIALS).
    remote = plain(report_of([s3], Contract(num_classes=4), dask=scheduler), "s3://labels/shards")
    assert remote == plain(local, str(folder))


def test_footers_of_many_shards_are_read_by_the_cluster(
    shards: tuple[Path, dict[str, Any]],
    scheduler: str,
    local: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import labelgate.run.distributed
    import labelgate.run.producers

    folder, _ = shards
    calls: list[int] = []
    real = labelgate.run.distributed.cluster_map

    def counting(client: Any, fn: Any, items: list[Any]) -> list[Any]:
        calls.append(len(items))
        return real(client, fn, items)

    monkeypatch.setattr(labelgate.run.distributed, "cluster_map", counting)
    monkeypatch.setattr(labelgate.run.producers, "FOOTERS_ON_CLUSTER", 10)
    contract = Contract(num_classes=4)
    remote = report_of([str(folder)], contract, dask=scheduler)
    assert calls == [SHARDS]
    assert plain(remote) == plain(local)


def test_repro_and_fix_on_s3_keep_the_query_string_out(
    shards: tuple[Path, dict[str, Any]], s3: str, tmp_path: Path
) -> None:
    """One shard (9,576 rows, vendor rows among them) through the same endpoint: the
    query string is one URI's whatever the number of files behind it."""
    folder, query = s3.split("?")
    shard = f"{folder}/part-{LAST_ROW_SHARD:03d}.parquet?{query}"
    bundle = tmp_path / "case"  # credentials: the s3 fixture's, in this process's environment
    result = cli_here("repro", shard, "-k", "4", "--out", str(bundle))
    assert result.returncode == 0, result.stderr
    written = "".join(p.read_text() for p in bundle.iterdir() if p.suffix in (".json", ".md"))
    assert "endpoint_override" not in written and "127.0.0.1" not in written
    assert '"part-007.parquet"' in written  # the input named, its query not
    fixed = tmp_path / "fixed.parquet"
    q = tmp_path / "rejected.parquet"
    result = cli_here("fix", shard, "-k", "4", "--out", str(fixed), "--quarantine", str(q))
    assert result.returncode in (0, 1), result.stderr  # the schema came through the endpoint
    assert fixed.exists()
