"""--cache DIR: a re-run reads only the files whose key is new, and reports what a full run does."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from labelgate.api import build_contract
from labelgate.commands.diff import diff
from labelgate.contract import Contract
from labelgate.core.report import Report
from labelgate.io.contentkey import content_key
from labelgate.io.sources import InputFile
from labelgate.run import cache as cache_module
from labelgate.run.changed import pair_files
from labelgate.run.validation import report_of

from .conftest import moto_s3

SHARDS = 200
ROWS = 40  # rows per shard: the counts are what the tests assert, not the time


def shard(path: Path, index: int, *, bad: dict[int, int] | None = None, rows: int = ROWS) -> None:
    """One shard: ids continuing the previous shard's, labels 0..3, and ``bad`` (row -> label)."""
    rng = np.random.default_rng(index)
    labels = rng.integers(0, 4, rows)
    for row, value in (bad or {}).items():
        labels[row] = value
    ids = np.arange(index * ROWS, index * ROWS + rows)
    pq.write_table(pa.table({"id": ids, "label": labels}), path)


def dataset(folder: Path, shards: int = SHARDS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(shards):
        shard(folder / f"part-{i:04d}.parquet", i, bad={3: 9} if i == 17 else None)
    return folder


def contract(**options: Any) -> Contract:
    return build_contract(None, classes=4, batch_size=16, **options)


def plain(report: Report) -> str:
    """The report's JSON without what only a cached run says (its cache line and section)."""
    doc = report.to_dict()
    doc.pop("cache", None)
    doc["notes"] = [n for n in doc["notes"] if not n.startswith("cache (")]
    return json.dumps(doc, indent=2, default=str)


def counts(report: Report) -> tuple[int, int, int]:
    section = report.cache
    assert section is not None
    return section["files_read"], section["files_cached"], section["entries_ignored"]


class TestRerun:
    def test_two_changed_shards_of_200_are_the_only_files_read(self, tmp_path: Path) -> None:
        data, store = dataset(tmp_path / "data"), str(tmp_path / "cache")
        first = report_of([str(data)], contract(), cache=store)
        assert counts(first) == (SHARDS, 0, 0)
        shard(data / "part-0005.parquet", 5, bad={0: -1})  # a new fault
        shard(data / "part-0150.parquet", 150, bad={7: 2, 8: 2})
        again = report_of([str(data)], contract(), cache=store)
        assert counts(again) == (2, SHARDS - 2, 0)
        read = [f["path"] for f in again.cache["files"] if f["from"] == "read"]  # type: ignore[index]
        assert [Path(p).name for p in read] == ["part-0005.parquet", "part-0150.parquet"]
        assert (
            "cache (" in again.notes[-1] and "2 files read, 198 from the cache" in again.notes[-1]
        )
        full = report_of([str(data)], contract())
        assert plain(again) == plain(full)  # byte for byte, but for the cache's own line
        assert {f.code for f in again.findings} >= {"LG004", "LG005"}

    def test_bytes_changed_under_the_same_name_are_read_again(self, tmp_path: Path) -> None:
        data, store = dataset(tmp_path / "data", 4), str(tmp_path / "cache")
        report_of([str(data)], contract(), cache=store)
        shard(data / "part-0002.parquet", 2, bad={1: 3})  # another label, same name and rows
        assert counts(report_of([str(data)], contract(), cache=store))[:2] == (1, 3)

    def test_same_size_other_bytes_is_another_key(self, tmp_path: Path) -> None:
        path = tmp_path / "x.parquet"
        path.write_bytes(b"a" * 100)
        key = content_key(InputFile(str(path), "parquet", 100))
        path.write_bytes(b"a" * 99 + b"b")
        assert content_key(InputFile(str(path), "parquet", 100)) != key
        assert key.startswith("size:100:xxh3:")

    @pytest.mark.parametrize(
        "other",
        [{"classes": 5}, {"ignore_index": -1}, {"batch_size": 32}, {"severity": "LG012"}],
        ids=["K", "ignore_index", "batch_size", "severity"],
    )
    def test_an_entry_of_another_contract_is_never_used(
        self, tmp_path: Path, other: dict[str, Any]
    ) -> None:
        data, store = dataset(tmp_path / "data", 6), str(tmp_path / "cache")
        report_of([str(data)], contract(), cache=store)
        options: dict[str, Any] = {"classes": 4, "batch_size": 16} | other
        code = options.pop("severity", None)
        changed = build_contract(None, **options)
        if code is not None:  # only a verdict's severity: the partials are the same
            changed = replace(changed, severity={**changed.severity, code: "error"})
        again = report_of([str(data)], changed, cache=store)
        assert counts(again)[:2] == (6, 0)
        assert plain(again) == plain(report_of([str(data)], changed))

    def test_an_entry_of_another_labelgate_version_is_never_used(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        data, store = dataset(tmp_path / "data", 6), str(tmp_path / "cache")
        report_of([str(data)], contract(), cache=store)
        monkeypatch.setattr(cache_module, "__version__", "99.0.0")
        assert counts(report_of([str(data)], contract(), cache=store))[:2] == (6, 0)

    def test_rows_added_before_a_file_move_its_batches_and_it_is_read(self, tmp_path: Path) -> None:
        data, store = dataset(tmp_path / "data", 3), str(tmp_path / "cache")
        report_of([str(data)], contract(), cache=store)
        shard(data / "part-0000.parquet", 0, rows=ROWS + 1)  # batch of 16: the later files shift
        again = report_of([str(data)], contract(), cache=store)
        assert counts(again)[:2] == (3, 0)
        assert plain(again) == plain(report_of([str(data)], contract()))

    def test_a_text_input_says_the_cache_was_not_used(self, tmp_path: Path) -> None:
        csv = tmp_path / "labels.csv"
        csv.write_text("label\n0\n1\n")
        report = report_of([str(csv)], contract(), cache=str(tmp_path / "cache"))
        assert report.cache is not None and report.cache["unused"]
        assert report.notes[-1].startswith("cache (") and "not used" in report.notes[-1]

    def test_an_annotation_format_says_the_cache_was_not_used(self, tmp_path: Path) -> None:
        coco = Path(__file__).parent.parent / "data_samples" / "formats" / "coco_good.json"
        report = report_of([str(coco)], build_contract(None), cache=str(tmp_path / "cache"))
        assert report.cache is not None and report.cache["files"] == []
        assert "not used: the coco input is read whole by its reader" in report.notes[-1]

    @pytest.mark.parametrize("max_examples", [20, 0], ids=["first-20", "all"])
    def test_names_sources_and_every_example_survive_the_cache(
        self, tmp_path: Path, max_examples: int
    ) -> None:
        """Partials with a source and a name column (LG010/LG011 evidence, the (label, name)
        pairs), null labels, ignored rows, and every example kept: merged as a full run's."""
        data = tmp_path / "data"
        data.mkdir()
        names = np.array(["cat", "dog", "bird", "fish"])
        for i in range(12):
            rng = np.random.default_rng(i)
            labels = rng.integers(0, 4, ROWS)
            shown = names[labels].astype(object)
            if i % 3 == 0:
                labels = labels + 1  # a 1-based source, proven by its names
            mask = np.zeros(ROWS, bool)
            mask[[2, 5]] = i == 7
            table = pa.table(
                {
                    "id": np.arange(i * ROWS, (i + 1) * ROWS),
                    "label": pa.array(np.where(labels == 2, -100, labels), mask=mask),
                    "source": [f"vendor-{i % 3}"] * ROWS,
                    "label_name": shown.tolist(),
                }
            )
            pq.write_table(table, data / f"part-{i:04d}.parquet", row_group_size=16)
        c = contract(name_column="label_name", source_column="source")
        store = str(tmp_path / "cache")
        report_of([str(data)], c, cache=store, max_examples=max_examples)
        again = report_of([str(data)], c, cache=store, max_examples=max_examples)
        assert counts(again) == (0, 12, 0)
        full = report_of([str(data)], c, max_examples=max_examples)
        assert plain(again) == plain(full)
        assert {"LG003", "LG004", "LG011"} <= {f.code for f in full.findings}


class TestHostileEntries:
    def entries(self, store: Path) -> list[Path]:
        return sorted(store.glob("*/*.json"))

    def rerun(self, data: Path, store: Path) -> Report:
        again = report_of([str(data)], contract(), cache=str(store))
        assert plain(again) == plain(report_of([str(data)], contract()))
        return again

    @pytest.mark.parametrize(
        "damage",
        ["truncated", "garbage", "nested", "empty", "directory"],
    )
    def test_a_damaged_entry_is_ignored_and_its_file_read(
        self, tmp_path: Path, damage: str
    ) -> None:
        data, store = dataset(tmp_path / "data", 4), tmp_path / "cache"
        report_of([str(data)], contract(), cache=str(store))
        entry = self.entries(store)[0]
        text = entry.read_text()
        if damage == "truncated":
            entry.write_text(text[: len(text) // 2])
        elif damage == "garbage":
            entry.write_bytes(b"\xff\xfe\x00 not json")
        elif damage == "nested":
            entry.write_text("[" * 100_000 + "]" * 100_000)
        elif damage == "empty":
            entry.write_text("")
        else:
            entry.unlink()
            entry.mkdir()
        assert counts(self.rerun(data, store)) == (1, 3, 1)

    def test_a_forged_entry_that_hides_a_fault_is_ignored(self, tmp_path: Path) -> None:
        """The shard with the fault (label 9) claims none, with a checksum that matches."""
        data, store = dataset(tmp_path / "data", 20), tmp_path / "cache"
        report_of([str(data)], contract(), cache=str(store))
        forged = 0
        for entry in self.entries(store):
            doc = json.loads(entry.read_text())
            if "LG004" not in doc["partial"]["hits"]:
                continue
            doc["partial"]["hits"] = {}
            doc["partial"]["batch"] = [[], [], []]
            doc["checksum"] = cache_module._checksum(doc["partial"])
            entry.write_text(json.dumps(doc))
            forged += 1
        assert forged == 1
        again = self.rerun(data, store)
        assert counts(again) == (1, 19, 1)
        assert any(f.code == "LG004" for f in again.findings)

    def test_an_entry_moved_under_another_key_is_ignored(self, tmp_path: Path) -> None:
        data, store = dataset(tmp_path / "data", 4), tmp_path / "cache"
        report_of([str(data)], contract(), cache=str(store))
        a, b = self.entries(store)[:2]
        b.write_bytes(a.read_bytes())
        assert counts(self.rerun(data, store)) == (1, 3, 1)

    def test_an_entry_past_the_size_bound_is_not_read(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        data, store = dataset(tmp_path / "data", 2), tmp_path / "cache"
        report_of([str(data)], contract(), cache=str(store))
        monkeypatch.setattr(cache_module, "MAX_ENTRY_BYTES", 10)
        assert counts(self.rerun(data, store))[:2] == (2, 0)

    def test_a_cache_that_cannot_be_written_is_said_and_the_run_goes_on(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        data = dataset(tmp_path / "data", 3)

        def full(target: object, text: str) -> None:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(cache_module, "write_text_atomic", full)
        report = report_of([str(data)], contract(), cache=str(tmp_path / "cache"))
        assert report.cache is not None and report.cache["entries_not_stored"] == 3
        assert "3 partials could not be stored" in report.notes[-1]
        assert plain(report) == plain(report_of([str(data)], contract()))

    def test_a_cache_that_is_a_file_is_a_usage_error(self, tmp_path: Path) -> None:
        data = dataset(tmp_path / "data", 1)
        (tmp_path / "cache").write_text("not a folder")
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "labelgate",
                "validate",
                str(data),
                "-k",
                "4",
                "--cache",
                str(tmp_path / "cache"),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        assert out.returncode == 2, out.stderr
        assert out.stderr.startswith("labelgate: error: --cache") and "Traceback" not in out.stderr


class TestPairing:
    def test_content_first_then_name(self) -> None:
        base = [("a", "k1"), ("b", "k2"), ("c", "k3"), ("d", "k4")]
        head = [("a", "k1"), ("b2", "k2"), ("c", "k9"), ("e", "k5")]
        got = pair_files(base, head)
        assert got["unchanged"] == 1
        assert got["renamed"] == [["b", "b2"]]
        assert got["changed"] == ["c"]
        assert got["added"] == ["e"]
        assert got["removed"] == ["d"]

    def test_equal_contents_prefer_the_same_name(self) -> None:
        got = pair_files([("x", "k"), ("y", "k")], [("y", "k"), ("z", "k")])
        assert got["unchanged"] == 1 and got["renamed"] == [["x", "z"]]


class TestDiff:
    def revisions(self, tmp_path: Path) -> tuple[Path, Path]:
        base = dataset(tmp_path / "base" / "data")
        head = tmp_path / "head" / "data"
        shutil.copytree(base, head)
        shard(head / "part-0010.parquet", 10, bad={2: 1, 3: 1, 4: 1})  # relabelled rows
        shard(head / "part-0120.parquet", 120, bad={0: 7})
        (head / "part-0199.parquet").rename(head / "part-0199-renamed.parquet")
        return base, head

    def test_diff_reads_the_changed_files_and_reports_as_a_full_diff(self, tmp_path: Path) -> None:
        base, head = self.revisions(tmp_path)
        store = str(tmp_path / "cache")
        report_of([str(base)], contract(), cache=store)  # the base's run on the main branch
        cached = diff([str(base)], [str(head)], contract(), contract(), cache=store)
        section = cached.cache
        assert section is not None
        assert (section["files_read"], section["files_cached"]) == (2, SHARDS - 2)
        assert (section["base"]["files_read"], section["base"]["files_cached"]) == (0, SHARDS)
        pairing = section["pairing"]
        assert pairing["unchanged"] == SHARDS - 3
        assert pairing["renamed"] == [["part-0199.parquet", "part-0199-renamed.parquet"]]
        assert pairing["changed"] == ["part-0010.parquet", "part-0120.parquet"]
        assert pairing["added"] == pairing["removed"] == []
        full = diff([str(base)], [str(head)], contract(), contract())
        assert plain(cached) == plain(full)
        assert full.diff is not None and full.diff["rows"]["changed"] > 0

    def test_files_added_and_removed_are_paired_and_compared_by_id(self, tmp_path: Path) -> None:
        base = dataset(tmp_path / "base", 6)
        head = tmp_path / "head"
        shutil.copytree(base, head)
        (head / "part-0002.parquet").unlink()
        shard(head / "part-0009.parquet", 9)  # new ids
        store = str(tmp_path / "cache")
        cached = diff([str(base)], [str(head)], contract(), contract(), cache=store)
        pairing = cached.cache["pairing"]  # type: ignore[index]
        assert pairing["added"] == ["part-0009.parquet"]
        assert pairing["removed"] == ["part-0002.parquet"]
        assert pairing["unchanged"] == 5
        full = diff([str(base)], [str(head)], contract(), contract())
        assert plain(cached) == plain(full)
        assert full.diff is not None
        assert (full.diff["rows"]["added"], full.diff["rows"]["removed"]) == (ROWS, ROWS)

    def test_the_cli_takes_cache_for_diff_and_validate(self, tmp_path: Path) -> None:
        base = dataset(tmp_path / "base", 3)
        head = tmp_path / "head"
        shutil.copytree(base, head)
        shard(head / "part-0001.parquet", 1, bad={0: 0, 1: 0, 2: 0})
        store = str(tmp_path / "cache")

        def cli(*args: str) -> dict[str, Any]:
            out = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "labelgate",
                    *args,
                    "-k",
                    "4",
                    "--format",
                    "json",
                    "--cache",
                    store,
                ],
                capture_output=True,
                text=True,
                check=False,
            )
            assert out.returncode in (0, 1), out.stderr
            doc: dict[str, Any] = json.loads(out.stdout)
            return doc

        assert cli("validate", str(base), "--no-progress")["cache"]["files_read"] == 3
        doc = cli("diff", str(base), str(head))
        assert (doc["cache"]["files_read"], doc["cache"]["files_cached"]) == (1, 2)
        assert doc["cache"]["base"]["files_cached"] == 3
        assert "HEAD 1 files read, 2 from the cache; BASE 0 files read, 3" in doc["notes"][-1]


class TestObjectStore:
    @pytest.mark.slow  # a moto S3 server on loopback: about 5 s
    def test_an_object_is_keyed_by_its_etag_and_a_rewrite_is_read_again(
        self, tmp_path: Path
    ) -> None:
        with moto_s3("cached") as (s3, port):  # moto keeps buckets for the process: its own
            local = dataset(tmp_path / "data", 3)

            def upload(name: str) -> None:
                with s3.open_output_stream(f"cached/shards/{name}") as out:
                    out.write((local / name).read_bytes())

            for f in sorted(local.iterdir()):
                upload(f.name)
            uri = f"s3://cached/shards?endpoint_override=127.0.0.1:{port}&scheme=http"
            store = str(tmp_path / "cache")
            first = report_of([uri], contract(), cache=store)
            assert counts(first) == (3, 0, 0)
            assert all(":etag:" in f["content"] for f in first.cache["files"])  # type: ignore[index]
            shard(local / "part-0001.parquet", 1, bad={0: 5})
            upload("part-0001.parquet")
            again = report_of([uri], contract(), cache=store)
            assert counts(again) == (1, 2, 0)
            assert plain(again) == plain(report_of([uri], contract()))
