"""labelgate's Parquet file (``pyarrow._parquet`` directly) reads what ``pq.ParquetFile`` reads."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from labelgate.io.parquet import ParquetFile, read_metadata


def test_batches_footer_and_schema_equal_pyarrows(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    table = pa.table(
        {
            "id": pa.array(range(10), pa.int64()),
            "labels": pa.array([[i, -100] for i in range(10)]),
            "meta": pa.array([{"a": i, "b": str(i)} for i in range(10)]),
            "source": pa.array(["x", "y"] * 5),
        }
    )
    pq.write_table(table, path, row_group_size=4)
    ours, theirs = (
        ParquetFile(str(path), read_dictionary=["source"]),
        pq.ParquetFile(path, read_dictionary=["source"]),
    )
    assert ours.schema_arrow == theirs.schema_arrow
    assert read_metadata(str(path)).equals(theirs.metadata)
    for columns in (["source", "labels", "id"], ["meta"], ["meta.b", "id"], None):
        for groups in ([1], [0, 2], None):
            got = list(ours.iter_batches(batch_size=3, row_groups=groups, columns=columns))
            want = list(theirs.iter_batches(batch_size=3, row_groups=groups, columns=columns))
            assert got == want, (columns, groups)
