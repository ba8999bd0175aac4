"""The bounded-memory duplicate-id pass equals a plain in-memory set, whatever the ids."""

from __future__ import annotations

import tempfile
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labelgate import Contract, Example
from labelgate.run.validation import run
from labelgate.scan.idkeys import partitions as _partitions
from labelgate.scan.ids import duplicate_ids


def plain(ids: list[Any]) -> tuple[list[int], int]:
    """Rows repeating an earlier id, and how many ids repeat (None counts as one value)."""
    seen: dict[Any, int] = {}
    rows = []
    for row, value in enumerate(ids):
        if value in seen:
            rows.append(row)
        seen[value] = seen.get(value, 0) + 1
    return rows, sum(1 for n in seen.values() if n > 1)


def column(kind: str, draws: list[int], nulls: list[bool]) -> pa.Array:
    if kind == "int":
        values: list[Any] = [d * 7919 - 50_000 for d in draws]
        typ: pa.DataType = pa.int64()
    elif kind == "uint64":
        values, typ = [2**64 - 1 - d for d in draws], pa.uint64()
    elif kind in ("string", "dictionary"):
        values, typ = [f"images/{d % 7}/{'x' * (d % 13)}{d}.jpg" for d in draws], pa.string()
    else:  # uuid, as fixed-size binary
        values, typ = [uuid.UUID(int=d * 2**70 + d).bytes for d in draws], pa.binary(16)
    values = [None if n else v for v, n in zip(values, nulls, strict=True)]
    array = pa.array(values, typ)
    return array.dictionary_encode() if kind == "dictionary" else array


@settings(max_examples=120, deadline=None)
@given(
    kind=st.sampled_from(["int", "uint64", "string", "dictionary", "uuid"]),
    draws=st.lists(st.integers(0, 60), min_size=1, max_size=300),
    null_every=st.sampled_from([0, 5, 17]),
    memory=st.sampled_from([256, 4096, 1 << 30]),  # 256 bytes: spilled into many partitions
    group=st.sampled_from([7, 64, 1000]),
)
def test_equals_a_plain_set(
    kind: str, draws: list[int], null_every: int, memory: int, group: int
) -> None:
    nulls = [null_every > 0 and i % null_every == 3 for i in range(len(draws))]
    ids = column(kind, draws, nulls)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "ids.parquet"
        pq.write_table(pa.table({"id": ids, "label": [0] * len(draws)}), path, row_group_size=group)
        done = run([str(path)], Contract(num_classes=1, id_column="id"), max_examples=0)
        found = duplicate_ids(done.dataset, "id", done.context.scan, 0, memory=memory)
    expected_rows, expected_distinct = plain(ids.to_pylist())
    assert [e.row for e in found.examples] == expected_rows
    assert found.rows == len(expected_rows) and found.distinct == expected_distinct
    shown = [Example(row=r, id=ids.to_pylist()[r]).id for r in expected_rows]  # UUIDs as text
    assert [e.id for e in found.examples] == shown


def test_a_small_budget_spills_and_a_large_one_does_not() -> None:
    assert _partitions(100_000_000, 256 << 20) > 1
    assert _partitions(1_000, 256 << 20) == 1


def test_examples_are_the_first_repeats() -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "ids.parquet"
        ids = [f"id-{i % 50}" for i in range(500)]
        pq.write_table(pa.table({"id": ids, "label": [0] * 500}), path, row_group_size=64)
        done = run([str(path)], Contract(num_classes=1, id_column="id"), max_examples=3)
        found = duplicate_ids(done.dataset, "id", done.context.scan, 3, memory=512)
    assert [e.row for e in found.examples] == [50, 51, 52]
    assert found.rows == 450 and found.distinct == 50


@settings(max_examples=40, deadline=None)
@given(
    draws=st.lists(st.integers(0, 40), min_size=1, max_size=200),
    memory=st.sampled_from([256, 1 << 30]),
)
def test_csv_ids_are_text_and_agree(draws: list[int], memory: int) -> None:
    ids = [f"{d:03d}" if d % 3 else str(d) for d in draws]  # "003" and "3" are different ids
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "ids.csv"
        path.write_text("id,label\n" + "".join(f"{i},0\n" for i in ids))
        done = run([str(path)], Contract(num_classes=1, id_column="id"), max_examples=0)
        found = duplicate_ids(done.dataset, "id", done.context.scan, 0, memory=memory)
    expected_rows, expected_distinct = plain(ids)
    assert [e.row for e in found.examples] == expected_rows
    assert found.distinct == expected_distinct


@settings(max_examples=80, deadline=None)
@given(
    kind=st.sampled_from(["int", "uint64", "string", "dictionary", "uuid"]),
    prefix=st.integers(0, 200),  # ids that strictly increase first: keyed late, or never
    draws=st.lists(st.integers(0, 60), max_size=200),
    null_every=st.sampled_from([0, 7]),
    memory=st.sampled_from([256, 1 << 30]),
    group=st.sampled_from([5, 64, 1000]),
    threads=st.sampled_from([1, 2]),
)
def test_ids_keyed_by_the_scan_workers_equal_a_plain_set(
    kind: str,
    prefix: int,
    draws: list[int],
    null_every: int,
    memory: int,
    group: int,
    threads: int,
) -> None:
    """The pieces key ids as they decode them once any meets ids that do not increase; the rows
    they did not key are read afterwards. Whatever is keyed where, the answer is the plain one."""
    from labelgate.scan.idkeys import IdKeys
    from labelgate.scan.ids import integer_ids
    from labelgate.scan.plan import Spec, plan_pieces
    from labelgate.scan.runner import run_pieces

    everything = [1000 + i for i in range(prefix)] + draws
    if not everything:
        return
    nulls = [null_every > 0 and i % null_every == 3 and i >= prefix for i in range(len(everything))]
    ids = column(kind, everything, nulls)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "ids.parquet"
        table = pa.table({"id": ids, "label": [0] * len(everything)})
        pq.write_table(table, path, row_group_size=group)
        contract = Contract(num_classes=1, id_column="id")
        done = run([str(path)], contract, max_examples=0, threads=threads)
        data = done.dataset
        metadata = [s.metadata for s in data.schemas]
        spec = Spec(num_classes=1, ignore_index=-100, batch_size=32, label="label", id="id")
        with IdKeys(len(everything), memory, integer=integer_ids(data, "id"), limit=None) as keys:
            merged = run_pieces(plan_pieces(data, metadata), spec, metadata, threads=2, keys=keys)
            fed = sum(n for _, n in keys.covered)
            found = duplicate_ids(data, "id", done.context.scan, 0, memory=memory, keyed=keys)
    expected_rows, expected_distinct = plain(ids.to_pylist())
    assert [e.row for e in found.examples] == expected_rows
    assert found.rows == len(expected_rows) and found.distinct == expected_distinct
    assert fed <= len(everything)  # the workers key each row at most once
    assert merged.ids is not None and not (merged.ids.increasing and expected_rows)
    lg014 = [f for f in done.report.findings if f.code == "LG014"]  # the whole run agrees
    assert [e.row for f in lg014 for e in f.examples] == expected_rows


def test_too_few_open_files_for_the_partitions_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import resource

    from labelgate.scan import idkeys

    monkeypatch.setattr(resource, "getrlimit", lambda _: (256, 512))
    too_many = idkeys.IdKeys(10**9, 128 << 20, integer=True, limit=20)
    with pytest.raises(OSError, match=r"needs 1088 open files and the limit is 512.*--id-memory"):
        too_many.__enter__()
    raised: list[tuple[int, int]] = []
    monkeypatch.setattr(resource, "getrlimit", lambda _: (256, 4096))
    monkeypatch.setattr(resource, "setrlimit", lambda _, limits: raised.append(limits))
    with idkeys.IdKeys(10**9, 128 << 20, integer=True, limit=20) as keys:
        assert keys.parts == 1024
    assert raised == [(1088, 4096)]


@settings(max_examples=40, deadline=None)
@given(
    kind=st.sampled_from(["int", "uint64", "string", "uuid"]),
    draws=st.lists(st.integers(0, 2_000), max_size=300),
    null_every=st.sampled_from([0, 4]),
    parts=st.sampled_from([2, 16, 1024]),
    first_row=st.integers(0, 2**40),
)
def test_pairs_split_in_one_step_equal_those_keyed_then_split(
    kind: str, draws: list[int], null_every: int, parts: int, first_row: int
) -> None:
    """The scan's workers build a large slice's partitioned pairs in one step (``split_keys``):
    the same pairs, in the same order, as keying them and splitting them apart."""
    from labelgate.scan.idkeys import hash_keys, integer_keys, keyed_pairs, split_keys, split_pairs

    integer = kind in ("int", "uint64")
    nulls = [null_every > 0 and i % null_every == 1 and not integer for i in range(len(draws))]
    ids = column(kind, draws, nulls)  # integer ids with nulls take the other path
    keys = integer_keys(ids)[0] if integer else hash_keys(ids)
    pairs, bounds = split_keys(keys, first_row, parts, hashed=not integer)
    expected, expected_bounds = split_pairs(
        keyed_pairs(ids, first_row, integer=integer)[0], parts, hashed=not integer
    )
    assert pairs.tobytes() == expected.tobytes()
    assert bounds.tolist() == expected_bounds.tolist()


@pytest.mark.parametrize("kind", ["string", "uuid", "int"])
def test_large_slices_keyed_on_two_threads_equal_a_plain_set(kind: str) -> None:
    """Slices large enough to be split in one step, in each worker's own work arrays, on two
    threads, spilled to partition files: the answer is still the plain one."""
    import numpy as np

    rows = 600_000
    draws = np.random.default_rng(3).permutation(rows)
    draws[[7, 299_999, 450_000, 599_999]] = draws[[500_000, 8, 7, 100]]
    if kind == "int":
        ids = pa.array(draws * 7919)
    else:
        ids = column(kind, draws.tolist(), [i % 100_003 == 17 for i in range(rows)])
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "ids.parquet"
        pq.write_table(pa.table({"id": ids, "label": [0] * rows}), path, row_group_size=300_000)
        contract = Contract(num_classes=1, id_column="id")
        done = run([str(path)], contract, max_examples=0, threads=2, id_memory=1 << 20)
    expected_rows, _ = plain(ids.to_pylist())
    (lg014,) = [f for f in done.report.findings if f.code == "LG014"]
    assert [e.row for e in lg014.examples] == expected_rows


def test_equal_hashes_of_several_partitions_are_confirmed_in_one_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each confirmation reads again the row groups holding its rows: the candidates of every
    partition are confirmed together, then the examples' ids read, two reads in all."""
    import labelgate.scan.ids as ids_module

    rows = 20_000
    draws = list(range(rows))
    for i in range(10):
        draws[1_000 + i] = draws[15_000 + 97 * i]  # ten ids repeated, spread over partitions
    ids = column("string", draws, [False] * rows)
    reads: list[int] = []
    real = ids_module.values_at

    def counted(wanted: list[int], data: Any, columns: list[str]) -> Any:
        reads.append(len(wanted))
        return real(wanted, data, columns)

    monkeypatch.setattr(ids_module, "values_at", counted)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "ids.parquet"
        pq.write_table(pa.table({"id": ids, "label": [0] * rows}), path, row_group_size=5_000)
        done = run([str(path)], Contract(num_classes=1, id_column="id"), max_examples=0)
        assert _partitions(rows, (1 << 20) // 2) > 1
        reads.clear()
        found = duplicate_ids(done.dataset, "id", done.context.scan, 0, memory=1 << 20)
    expected_rows, expected_distinct = plain(ids.to_pylist())
    assert [e.row for e in found.examples] == expected_rows
    assert found.distinct == expected_distinct == 10
    assert reads == [20, 10]  # the 20 rows of equal hashes, then the 10 repeats
