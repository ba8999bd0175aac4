"""Shards past one read (TFRecord, the Detection API's records, WebDataset, MDS, LitData): one
task per shard on a Dask cluster, and ``--cache DIR`` that reads again only the shards whose bytes
changed; both give the report of a plain local run."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from labelgate import Contract
from labelgate.core.report import Report
from labelgate.run.validation import run

from .conftest import run_cli
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
        folder = shards(tmp_path / "tf")
        local = validate(folder)
        tasks = _spy_tasks(monkeypatch)
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


def _spy_tasks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The size of each map sent to the cluster."""
    from labelgate.run import distributed

    tasks: list[int] = []
    real = distributed.cluster_map

    def spy(client: Any, fn: Any, items: list[Any]) -> list[Any]:
        tasks.append(len(items))
        return real(client, fn, items)

    monkeypatch.setattr(distributed, "cluster_map", spy)
    return tasks


def _litdata(folder: Path, labels: list[int]) -> Path:
    """Chunks of four items written by litdata's BinaryWriter (what ``optimize`` writes with)."""
    import numpy as np

    writer = pytest.importorskip("litdata.streaming.writer").BinaryWriter(str(folder), chunk_size=4)
    for i, label in enumerate(labels):
        writer[i] = {"image": np.full((2, 3), i, dtype=np.uint8), "label": label}
    writer.done()
    writer.merge()
    return folder


# chunk 1: a K (4) and a -1; chunk 2: 1-based
LITDATA = [0, 1, 2, 3, 0, 4, -1, 3, 1, 2, 3, 4]


class TestIndexedShards:
    """MDS and LitData: the index read on the driver, each shard a task and a cache entry."""

    @pytest.mark.parametrize("fmt", ["mds", "mds-zstd", "litdata"])
    def test_one_task_per_shard_and_the_local_report(
        self, tmp_path: Path, scheduler: str, monkeypatch: pytest.MonkeyPatch, fmt: str
    ) -> None:
        from .test_mds_litdata import faulty

        if fmt == "litdata":
            folder = _litdata(tmp_path / "lit", LITDATA)
        else:
            columns = {"image": "bytes", "label": "int", "note": "str"}
            folder = faulty(tmp_path, columns, compression="zstd" if fmt == "mds-zstd" else None)
        local = validate(folder)
        tasks = _spy_tasks(monkeypatch)
        remote = validate(folder, dask=scheduler)
        assert tasks == [3]  # one map, one task per shard
        assert plain(remote) == plain(local)
        found = {f.code: [(e.row, str(e.id)) for e in f.examples] for f in remote.findings}
        first = "chunk-0-1.bin" if fmt == "litdata" else str(remote.sources[1]["source"])
        assert found["LG005"] == [(6, f"{first}:2")]
        assert {"LG004", "LG011"} <= set(found)

    def test_a_rewritten_mds_shard_is_the_one_read_again(self, tmp_path: Path) -> None:
        from .mdswrite import write_mds

        columns = {"image": "bytes", "label": "int"}

        def shards(fixed: bool) -> list[list[dict[str, Any]]]:
            labels = [[0, 1, 2, 3], [0, 1 if fixed else 4, -1, 3], [1, 2, 3, 0]]
            return [[{"image": b"x" * 8, "label": v} for v in s] for s in labels]

        folder, store = write_mds(tmp_path / "ds", columns, shards(False)), str(tmp_path / "c")
        first = validate(folder, cache=store)
        assert TestCache().counts(first) == (3, 0, 0)
        assert plain(first) == plain(validate(folder))
        assert TestCache().counts(validate(folder, cache=store)) == (0, 3, 0)
        write_mds(folder, columns, shards(True))  # shard 1 rewritten, the same size
        again = validate(folder, cache=store)
        assert again.cache is not None
        assert TestCache().counts(again) == (1, 2, 0)
        read = [f["path"] for f in again.cache["files"] if f["from"] == "read"]
        assert read == ["shard.00001.mds"]
        assert "1 mds shards read, 2 from the cache" in again.notes[-1]
        assert plain(again) == plain(validate(folder))
        assert "LG004" not in {f.code for f in again.findings}

    def test_a_rewritten_litdata_chunk_is_the_one_read_again(
        self, tmp_path: Path, scheduler: str
    ) -> None:
        folder, store = _litdata(tmp_path / "lit", LITDATA), str(tmp_path / "c")
        assert plain(validate(folder, cache=store)) == plain(validate(folder))
        fixed = _litdata(tmp_path / "fixed", [*LITDATA[:5], 1, *LITDATA[6:]])  # the K fixed
        for name in ("chunk-0-1.bin", "index.json"):
            (folder / name).write_bytes((fixed / name).read_bytes())
        again = validate(folder, cache=store, dask=scheduler)
        assert TestCache().counts(again) == (1, 2, 0)
        assert plain(again) == plain(validate(folder))
        lg004 = next(f for f in again.findings if f.code == "LG004")
        assert {str(e.id) for e in lg004.examples} == {"chunk-0-2.bin:3"}  # chunk 1's K gone

    def test_an_index_entry_changed_reads_its_shard_again(self, tmp_path: Path) -> None:
        from .test_mds_litdata import faulty

        folder, store = faulty(tmp_path, {"label": "int"}), str(tmp_path / "c")
        validate(folder, cache=store)
        index = json.loads((folder / "index.json").read_text())
        index["shards"][2]["samples"] = 3  # the shard's bytes as they were; its entry not
        (folder / "index.json").write_text(json.dumps(index))
        result = run_cli("validate", str(folder), "--classes", "4", "--cache", store)
        assert result.returncode == 2 and "the index says 3" in result.stderr


def _boxes(folder: Path, fixed: bool = False) -> Path:
    """Three Detection API shards (label map: cat 1, dog 2): a class 3 in each, and a record
    whose labels are floats in shard 1."""
    import tfrecord

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "label_map.pbtxt").write_text(
        "item {\n id: 1\n name: 'cat'\n}\nitem {\n id: 2\n name: 'dog'\n}\n"
    )
    for s in range(3):
        writer = tfrecord.TFRecordWriter(str(folder / f"train-{s:05d}-of-00003"))
        third = 2 if fixed and s == 0 else 3
        for labels, texts in (([1, 2], [b"cat", b"dog"]), ([2, third], [b"dog", b"dog"]), ([], [])):
            writer.write(
                {
                    "image/encoded": (bytes(64), "byte"),
                    "image/object/class/label": (labels, "int"),
                    "image/object/class/text": (texts, "byte"),
                }
            )
        if s == 1:
            writer.write(
                {"image/encoded": (b"x", "byte"), "image/object/class/label": ([0.5], "float")}
            )
        writer.close()
    return folder


class TestDetectionRecords:
    def boxed(self, folder: Path, **kw: Any) -> Report:
        return run([str(folder)], Contract(), max_examples=0, **kw).report

    def test_a_cluster_and_a_cache_give_the_local_report(
        self, tmp_path: Path, scheduler: str, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        folder, store = _boxes(tmp_path / "od"), str(tmp_path / "c")
        local = self.boxed(folder)
        assert local.input["annotations"]["task"] == "detection"
        found = {f.code: {str(e.id) for e in f.examples} for f in local.findings}
        assert found["LG031"] == {"train-00001-of-00003:3"}
        assert "train-00000-of-00003:1:1" in found["LG004"]
        tasks = _spy_tasks(monkeypatch)
        assert plain(self.boxed(folder, dask=scheduler)) == plain(local)
        assert tasks == [3]
        assert plain(self.boxed(folder, cache=store)) == plain(local)
        _boxes(tmp_path / "od", fixed=True)  # shard 0's class 3 now a dog: the same size
        again = self.boxed(folder, cache=store)
        assert TestCache().counts(again) == (1, 2, 0)  # shards 1 and 2: the same bytes
        assert plain(again) == plain(self.boxed(folder))


class TestMemory:
    def peak_mb(self, folder: Path) -> float:
        """The peak RSS of ``labelgate validate FOLDER`` run under the hostile-input tests' cap."""
        import os

        from .limits import start_bounded

        process = start_bounded("validate", str(folder), "--classes", "4", memory_mb=1536)
        assert process.stdout is not None and process.stderr is not None
        process.stdout.read()
        err = process.stderr.read()
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        assert process.returncode in (0, 1), err.decode()[-2000:]
        return usage.ru_maxrss / 1024

    def test_peak_memory_does_not_grow_with_the_shard_count(self, tmp_path: Path) -> None:
        rows = 24_000  # 1 KB images: 25 MB of records either way
        peaks = []
        for count in (8, 64):
            per = rows // count
            for i in range(count):
                write_tfrecord(tmp_path / f"{count}" / f"t-{i:05d}-of-{count:05d}", [i % 4] * per)
            peaks.append(self.peak_mb(tmp_path / f"{count}"))
        assert peaks[1] <= peaks[0] + 24, peaks  # 64 shards: no more than 8 hold, give or take
