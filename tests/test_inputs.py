"""Inputs: directories and globs read as one logical file, CSV and JSONL, streaming in chunks."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from labelgate import Batching, Contract
from labelgate.io import resolve_inputs, stream_columns
from labelgate.run.validation import report_of


def shard(path: Path, labels: list[int], start: int) -> None:
    ids = list(range(start, start + len(labels)))
    pq.write_table(pa.table({"id": ids, "label": labels, "junk": ["x" * 50] * len(labels)}), path)


class TestDirectories:
    def test_sorted_order_and_batches_across_shard_edges(self, tmp_path: Path) -> None:
        # 10 rows per shard, batches of 8: batch 1 (rows 8..15) spans shards 0 and 1 and is all
        # ignored. Shards are written out of order: reading order is sorted path order.
        shard(tmp_path / "part-002.parquet", [0] * 10, 100)
        shard(tmp_path / "part-001.parquet", [-100] * 6 + [2, 5, 3, 3], 50)
        shard(tmp_path / "part-000.parquet", [1] * 8 + [-100] * 2, 0)
        report = report_of([str(tmp_path)], Contract(num_classes=4, batching=Batching(size=8)))
        assert [f["path"].rsplit("/", 1)[1] for f in report.input["files"]] == [
            "part-000.parquet",
            "part-001.parquet",
            "part-002.parquet",
        ]
        by_code = {f.code: f for f in report.findings}
        assert by_code["LG007"].batches == (1,)
        lg004 = by_code["LG004"]
        assert [(e.row, e.id, e.batch) for e in lg004.examples] == [(17, 57, 2)]
        assert "all in file" in lg004.message and "part-001.parquet" in lg004.message

    def test_glob(self, tmp_path: Path) -> None:
        shard(tmp_path / "a.parquet", [0, 1], 0)
        shard(tmp_path / "b.parquet", [2, 3], 2)
        (tmp_path / "notes.txt").write_text("not data")
        report = report_of([str(tmp_path / "*.parquet")], Contract(num_classes=4))
        assert report.counts["rows"] == 4 and not report.failed


class TestTextFormats:
    def test_csv_with_header(self, tmp_path: Path) -> None:
        p = tmp_path / "labels.csv"
        p.write_text("id,label,text\n1,0,a\n2,3.0,b\n3,3.5,c\n4,,d\n5,cat,e\n6,7,f\n")
        report = report_of([str(p)], Contract(num_classes=4))
        codes = {f.code: f.count for f in report.findings if f.severity == "error"}
        assert codes == {"LG002": 2, "LG003": 1, "LG004": 1}
        assert report.counts == {"rows": 6, "usable": 2, "ignored": 0, "rejected": 4}
        lg002 = next(f for f in report.findings if f.code == "LG002")
        assert [(e.id, e.value) for e in lg002.examples] == [("3", "3.5"), ("5", "cat")]

    def test_jsonl(self, tmp_path: Path) -> None:
        p = tmp_path / "labels.jsonl"
        p.write_text(
            "".join(json.dumps({"id": i, "target": v}) + "\n" for i, v in enumerate([0, 1, 4]))
        )
        report = report_of([str(p)], Contract(num_classes=4))
        assert report.contract["label_column"] == "target"
        assert {f.code for f in report.findings if f.severity == "error"} == {"LG004"}


class TestStreaming:
    def test_only_needed_columns_in_chunks(self, tmp_path: Path) -> None:
        path = tmp_path / "big.parquet"
        n = 300_000
        pq.write_table(
            pa.table(
                {
                    "id": pa.array(range(n)),
                    "label": pa.array([i % 4 for i in range(n)]),
                    "payload": pa.array(["p"] * n),
                }
            ),
            path,
            row_group_size=100_000,
        )
        (file,) = resolve_inputs([str(path)])
        chunks = list(stream_columns(file, ["label"], chunk_rows=65_536))
        assert len(chunks) > 4
        assert all(c.schema.names == ["label"] for c in chunks)
        assert sum(c.num_rows for c in chunks) == n
        report = report_of([str(path)], Contract(num_classes=4))
        assert report.counts["usable"] == n and not report.failed
        assert report.input["files"][0]["row_groups"] == 3
