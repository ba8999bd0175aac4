"""The Bloom filter of hashed ids: never misses a repeat, gives up past its budget, and the
duplicate-id check through it equals a plain set whichever path it takes."""

from __future__ import annotations

import tempfile
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labelgate import Contract
from labelgate.run.validation import run
from labelgate.scan.idbloom import HashBloom, candidate_filter, probe
from labelgate.scan.idkeys import IdKeys
from labelgate.scan.ids import duplicate_ids


def _keys(seed: int, n: int) -> np.ndarray[Any, Any]:
    return np.random.default_rng(seed).integers(-(2**63), 2**63 - 1, n, dtype=np.int64)


class TestProbe:
    def test_finds_exactly_the_hashes_repeated_within_a_slice(self) -> None:
        keys = _keys(1, 50_000)
        keys[[10, 20, 30]] = keys[5]
        keys[49_999] = keys[7]
        got = probe(keys, 16)
        assert sorted(got.within.tolist()) == sorted({int(keys[5]), int(keys[7])})

    def test_rows_of_one_word_are_all_shared(self) -> None:
        keys = _keys(2, 20_000)
        got = probe(keys, 24)
        assert got.width <= 24
        words, counts = np.unique(got.word, return_counts=True)
        crowded = np.flatnonzero(np.isin(got.word, words[counts > 1]))
        assert len(crowded) and set(crowded.tolist()) <= set(got.shared.tolist())


class TestHashBloom:
    @pytest.mark.parametrize("memory", [1 << 12, 1 << 20])
    def test_every_repeat_across_or_within_slices_is_a_candidate(self, memory: int) -> None:
        keys = _keys(3, 200_000)
        keys[150_000:150_010] = keys[100:110]  # across slices
        keys[60_001] = keys[60_000]  # within one slice
        bloom = HashBloom(len(keys), memory)
        bloom._max = len(keys)  # keep every candidate, however small the filter
        for start in range(0, len(keys), 50_000):
            part = keys[start : start + 50_000]
            assert bloom.add(probe(part, bloom.width), start, len(part))
        found = set(bloom.found().tolist())
        assert {int(k) for k in keys[100:110]} | {int(keys[60_000])} <= found
        assert bloom.spans == [(s, 50_000) for s in range(0, 200_000, 50_000)]

    def test_few_false_candidates_at_sixteen_bits_a_row(self) -> None:
        keys = _keys(4, 400_000)
        bloom = HashBloom(len(keys), 64 << 20)
        for start in range(0, len(keys), 100_000):
            bloom.add(probe(keys[start : start + 100_000], bloom.width), start, 100_000)
        assert bloom.candidates < 0.005 * len(keys)

    def test_gives_up_past_its_budget(self) -> None:
        keys = _keys(5, 10_000)
        bloom = HashBloom(len(keys), 1 << 10)  # 1,024 candidates at most
        assert bloom.add(probe(keys, bloom.width), 0, len(keys))
        assert not bloom.add(probe(keys, bloom.width), len(keys), len(keys))


def test_candidate_filter_keeps_exactly_the_candidates() -> None:
    keys = _keys(6, 100_000)
    found = np.unique(keys[::997])
    among = candidate_filter(found)
    assert among(keys).tolist() == np.flatnonzero(np.isin(keys, found)).tolist()
    assert candidate_filter(found[:0])(keys).tolist() == []


def _ids(kind: str, draws: list[int], null_every: int) -> pa.Array:
    values: list[Any]
    if kind == "uuid":
        values = [uuid.UUID(int=d * 0x9E3779B97F4A7C15 % 2**128).bytes for d in draws]
        typ: pa.DataType = pa.binary(16)
    else:
        values, typ = [f"img/{d:09d}.jpg" for d in draws], pa.string()
    return pa.array(
        [None if null_every and i % null_every == 2 else v for i, v in enumerate(values)], typ
    )


@settings(max_examples=15, deadline=None)
@given(
    kind=st.sampled_from(["string", "uuid"]),
    draws=st.lists(st.integers(0, 3_000), min_size=1, max_size=4_000),
    null_every=st.sampled_from([0, 0, 7, 500]),
    memory=st.sampled_from([1 << 10, 1 << 16, 128 << 20]),
)
def test_duplicate_ids_through_the_filter_equal_a_plain_set(
    kind: str, draws: list[int], null_every: int, memory: int
) -> None:
    """Kept or given up (a tiny budget), the filter's answer is the plain one."""
    ids = _ids(kind, draws, null_every)
    seen: dict[Any, int] = {}
    expected = []
    for row, value in enumerate(ids.to_pylist()):
        if value in seen:
            expected.append(row)
        seen[value] = seen.get(value, 0) + 1
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "ids.parquet"
        pq.write_table(pa.table({"id": ids, "label": [0] * len(ids)}), path, row_group_size=500)
        done = run([str(path)], Contract(num_classes=1, id_column="id"), max_examples=0)
        with IdKeys(len(ids), memory, integer=False, limit=None) as keys:
            found = duplicate_ids(done.dataset, "id", done.context.scan, 0, keyed=keys)
            kept = keys.hashed is not None
    assert [e.row for e in found.examples] == expected
    assert found.rows == len(expected)
    assert found.distinct == sum(1 for n in seen.values() if n > 1)
    if memory == 128 << 20:
        assert kept  # a plain file stays within the filter's budget
