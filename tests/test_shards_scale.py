"""TFRecord shards past one read: one task per shard on a Dask cluster, and ``--cache DIR`` that
reads again only the shards whose bytes changed; both give the report of a plain local run."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from labelgate import Contract
from labelgate.core.report import Report
from labelgate.run.validation import run

from .test_shards import write_tfrecord

pytest.importorskip("tfrecord")

# labels per shard: a K (4) in shard 1, a -1 in shard 2, a record without the feature in 3
LABELS: list[list[Any]] = [[0, 1, 2, 3, 1], [2, 4, 0, 3], [1, -1, 2], [3, 0, 1, 2, 2]]


def shards(folder: Path, labels: list[list[Any]] = LABELS) -> Path:
    for i, values in enumerate(labels):
        write_tfrecord(folder / f"train-{i:05d}-of-{len(labels):05d}", values)
    with (folder / f"train-00003-of-{len(labels):05d}").open("ab") as f:
        f.write(_record_without_label())
    return folder


def _record_without_label() -> bytes:
    import io

    import tfrecord

    buf = io.BytesIO()
    writer = tfrecord.TFRecordWriter.__new__(tfrecord.TFRecordWriter)
    writer.file = buf
    writer.write({"image/encoded": (b"x" * 16, "byte")})
    return buf.getvalue()


def plain(report: Report) -> str:
    """The report's JSON without its environment (timings, versions) and the cache's own line."""
    doc = report.to_dict()
    for key in ("environment", "cache"):
        doc.pop(key, None)
    doc["notes"] = [n for n in doc["notes"] if not n.startswith("cache (")]
    return json.dumps(doc, indent=2, default=str)


def validate(folder: Path, **kw: Any) -> Report:
    return run([str(folder)], Contract(num_classes=4), max_examples=0, **kw).report


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    """A local cluster of threads (no worker processes to start): its scheduler's address."""
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=2,
        processes=False,  # in-process transport: nothing listens on the network
        dashboard_address=None,
    ) as cluster:
        yield str(cluster.scheduler_address)


class TestOnACluster:
    def test_one_task_per_shard_and_the_local_report(
        self, tmp_path: Path, scheduler: str, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        from labelgate.run import distributed

        folder = shards(tmp_path / "tf")
        local = validate(folder)
        tasks: list[int] = []
        real = distributed.cluster_map

        def spy(client: Any, fn: Any, items: list[Any]) -> list[Any]:
            tasks.append(len(items))
            return real(client, fn, items)

        monkeypatch.setattr(distributed, "cluster_map", spy)
        remote = validate(folder, dask=scheduler)
        assert tasks == [len(LABELS)]  # one map, one task per shard
        assert plain(remote) == plain(local)
        found = {f.code: {str(e.id) for e in f.examples} for f in remote.findings}
        assert found["LG004"] == {"train-00001-of-00004:1"}
        assert found["LG005"] == {"train-00002-of-00004:1"}
        assert found["LG031"] == {"train-00003-of-00004:5"}


class TestCache:
    def counts(self, report: Report) -> tuple[int, int, int]:
        section = report.cache
        assert section is not None
        return section["files_read"], section["files_cached"], section["entries_ignored"]

    def test_a_rerun_reads_only_the_shard_that_changed(self, tmp_path: Path) -> None:
        folder, store = shards(tmp_path / "tf"), str(tmp_path / "cache")
        first = validate(folder, cache=store)
        assert self.counts(first) == (4, 0, 0)
        assert plain(first) == plain(validate(folder))
        again = validate(folder, cache=store)
        assert self.counts(again) == (0, 4, 0)
        assert plain(again) == plain(first)
        # the same name, the same size, other bytes: a new fault in shard 0
        write_tfrecord(folder / "train-00000-of-00004", [0, 1, 9, 3, 1])
        third = validate(folder, cache=store)
        assert self.counts(third) == (1, 3, 0)
        read = [f["path"] for f in third.cache["files"] if f["from"] == "read"]  # type: ignore[index]
        assert read == ["train-00000-of-00004"]
        assert "1 tfrecord shards read, 3 from the cache" in third.notes[-1]
        assert plain(third) == plain(validate(folder))  # byte for byte, but timings and cache
        lg004 = next(f for f in third.findings if f.code == "LG004")
        assert {str(e.id) for e in lg004.examples} == {
            "train-00000-of-00004:2",
            "train-00001-of-00004:1",
        }

    def test_a_damaged_entry_is_ignored_and_its_shard_read(self, tmp_path: Path) -> None:
        folder, store = shards(tmp_path / "tf"), tmp_path / "cache"
        full = validate(folder, cache=str(store))
        entries = sorted(store.rglob("*.arrow"))
        assert len(entries) == 4
        entries[0].write_bytes(entries[0].read_bytes()[:100])
        again = validate(folder, cache=str(store))
        assert self.counts(again) == (1, 3, 1)
        assert plain(again) == plain(full)

    def test_a_cluster_and_a_cache_together(self, tmp_path: Path, scheduler: str) -> None:
        folder, store = shards(tmp_path / "tf"), str(tmp_path / "cache")
        validate(folder, cache=store)
        write_tfrecord(folder / "train-00002-of-00004", [1, 2, 2])  # the -1 fixed
        remote = validate(folder, cache=store, dask=scheduler)
        assert self.counts(remote) == (1, 3, 0)
        assert plain(remote) == plain(validate(folder))
        assert "LG005" not in {f.code for f in remote.findings}


class TestWebDataset:
    def test_a_cluster_and_a_cache_give_the_local_report(
        self, tmp_path: Path, scheduler: str
    ) -> None:
        pytest.importorskip("webdataset")
        from .test_shards import write_wds

        folder = write_wds(tmp_path / "wds", [None, 0, 1, 2, 3, 1, 4, 2, 0, "x", 1, 2, 0])
        local = validate(folder)
        assert plain(validate(folder, dask=scheduler)) == plain(local)
        store = str(tmp_path / "cache")
        assert plain(validate(folder, cache=store)) == plain(local)
        fixed = write_wds(tmp_path / "fixed", [None, 0, 1, 2, 3, 1, 0, 2, 0, "x", 1, 2, 0])
        name = "train-000001.tar"  # the K of shard 1 fixed (a tar's bytes hold its mtimes)
        (folder / name).write_bytes((fixed / name).read_bytes())
        again = validate(folder, cache=store)
        assert again.cache is not None
        assert (again.cache["files_read"], again.cache["files_cached"]) == (1, 2)
        assert plain(again) == plain(validate(folder))
        assert "LG004" not in {f.code for f in again.findings}
