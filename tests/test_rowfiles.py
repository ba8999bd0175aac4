"""The run's rows files rewritten a row group at a time: the groups kept, the file replaced only
once the new one is complete, nothing left beside it on a failure."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from labelgate.run.rowfiles import rewrite_rows


def _rows(path: Path) -> Path:
    table = pa.table({"id": list(range(10)), "label": [i % 3 for i in range(10)]})
    pq.write_table(table, path, row_group_size=4)
    return path


def test_each_group_is_changed_with_its_first_row_and_the_groups_are_kept(tmp_path: Path) -> None:
    path = _rows(tmp_path / "rows.parquet")
    seen: list[tuple[int, int]] = []

    def plus_one(group: Any, first: int) -> Any:
        seen.append((first, group.num_rows))
        return group.set_column(1, "label", pc.add(group.column("label"), 1))

    rewrite_rows(str(path), plus_one)
    assert seen == [(0, 4), (4, 4), (8, 2)]
    f = pq.ParquetFile(path)
    assert f.num_row_groups == 3
    assert f.read().column("label").to_pylist() == [i % 3 + 1 for i in range(10)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.parquet"]


def test_a_failure_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    path = _rows(tmp_path / "rows.parquet")
    before = path.read_bytes()

    def fails_late(group: Any, first: int) -> Any:
        if first:
            raise RuntimeError("disk full")
        return group

    with pytest.raises(RuntimeError):
        rewrite_rows(str(path), fails_late)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.parquet"]


def test_the_rows_writer_keeps_every_integer_id_and_null(tmp_path: Path) -> None:
    """Integer ids are delta-coded: the extremes of int64 side by side (their differences wrap),
    random ids and a null come back as written."""
    import numpy as np

    from labelgate.readers.common.sink import rows_writer

    rng = np.random.default_rng(0)
    ids = [2**63 - 1, -(2**63), 0, None, -1, 2**63 - 1, *rng.integers(-(2**63), 2**63 - 1, 5_000)]
    table = pa.table(
        {
            "id": pa.array([None if i is None else int(i) for i in ids], pa.int64()),
            "label": pa.array(np.arange(len(ids)) % 5),
            "source": pa.array(["a.json"] * len(ids)),
        }
    )
    writer = rows_writer(tmp_path / "rows.parquet", table.schema)
    writer.write_table(table)
    writer.close()
    assert pq.read_table(tmp_path / "rows.parquet").equals(table)
