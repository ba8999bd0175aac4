"""The bitmap of integer ids finds exactly the repeated ids, and gives itself up past its budget."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import given, settings
from hypothesis import strategies as st

from labelgate import Contract
from labelgate.run.validation import run
from labelgate.scan.idbitmap import IdBitmap, packed_ids, sorted_ids
from labelgate.scan.idkeys import IdKeys
from labelgate.scan.ids import duplicate_ids
from tests.test_ids import plain


def feed(bitmap: IdBitmap, keys: np.ndarray, first: int) -> bool:
    """Add a slice as the scan's workers do: packed where dense and new, else sorted."""
    packed = packed_ids(keys)
    done = None if packed is None else bitmap.add_packed(packed, first, len(keys))
    return bitmap.add(sorted_ids(keys), first, len(keys)) if done is None else done


class TestIdBitmap:
    @settings(max_examples=150, deadline=None)
    @given(
        draws=st.lists(st.integers(-300, 300), min_size=1, max_size=400),
        spread=st.sampled_from([1, 63, 64, 1000]),
        cut=st.integers(1, 50),
        reverse=st.booleans(),
    )
    def test_finds_exactly_the_repeated_ids_whatever_the_order_of_slices(
        self, draws: list[int], spread: int, cut: int, reverse: bool
    ) -> None:
        keys = np.array(draws, np.int64) * spread
        slices = [(s, keys[s : s + cut]) for s in range(0, len(keys), cut)]
        bitmap = IdBitmap(1 << 20)
        for first, part in reversed(slices) if reverse else slices:  # workers finish in any order
            assert feed(bitmap, part, first)
        values, counts = np.unique(keys, return_counts=True)
        assert bitmap.repeated().tolist() == values[counts > 1].tolist()
        assert bitmap.repeats == len(keys) - len(values)

    @given(start=st.integers(-(2**40), 2**40), size=st.integers(1, 3_000), seed=st.integers(0, 9))
    def test_a_packed_slice_sets_the_bits_a_sorted_one_does(
        self, start: int, size: int, seed: int
    ) -> None:
        keys = np.random.default_rng(seed).permutation(np.arange(start, start + size))
        packed = packed_ids(keys)
        assert packed is not None
        ids = sorted_ids(keys)
        at = ids.words - packed.word
        assert (packed.words[at] == ids.bits).all()
        assert np.count_nonzero(packed.words) == len(ids.words)  # no other word has a bit set
        assert packed_ids(np.append(keys, keys[0])) is None  # a repeat within: sorted instead
        assert packed_ids(np.array([0, 2**20], np.int64)) is None  # too sparse to pack

    def test_the_slices_holding_repeated_ids_are_those_whose_range_holds_them(self) -> None:
        bitmap = IdBitmap(1 << 20)
        for g in range(4):  # ids shuffled within each group, groups in order
            part = np.random.default_rng(g).permutation(np.arange(g * 100, g * 100 + 100))
            if g == 2:
                part[7] = part[50]
            assert bitmap.add(sorted_ids(part), g * 100, 100)
        assert bitmap.ranges_holding(bitmap.repeated()) == [(200, 300)]

    def test_slices_added_after_the_last_repeat_hold_none_of_the_repeated_ids(self) -> None:
        rng = np.random.default_rng(5)
        ids = rng.permutation(np.arange(4_000, dtype=np.int64))  # shuffled over the whole range
        ids[1_500] = ids[10]
        bitmap = IdBitmap(1 << 20)
        for first in range(0, 4_000, 1_000):  # every slice's range holds the repeated id
            assert bitmap.add(sorted_ids(ids[first : first + 1_000]), first, 1_000)
        assert bitmap.repeated().tolist() == [ids[10]]
        assert bitmap.ranges_holding(bitmap.repeated()) == [(0, 1_000), (1_000, 2_000)]

    def test_ids_sharing_bytes_all_set_their_bits(self) -> None:
        bitmap = IdBitmap(1 << 20)
        assert bitmap.add(sorted_ids(np.arange(0, 640, 2, dtype=np.int64)), 0, 320)
        assert bitmap.add(sorted_ids(np.arange(0, 640, dtype=np.int64)), 320, 640)
        assert bitmap.repeated().tolist() == list(range(0, 640, 2))
        assert bitmap.repeats == 320

    def test_a_range_wider_than_the_budget_gives_it_up(self) -> None:
        bitmap = IdBitmap(1024)  # 8,192 ids
        assert bitmap.add(sorted_ids(np.arange(8_000, dtype=np.int64)), 0, 8_000)
        assert not bitmap.add(sorted_ids(np.array([10_000_000], np.int64)), 8_000, 1)
        assert not IdBitmap(1024).add(sorted_ids(np.array([0, 9_000], np.int64)), 0, 2)

    def test_ids_growing_down_and_at_the_ends_of_int64(self) -> None:
        bitmap = IdBitmap(1 << 20)
        top = np.iinfo(np.int64).max
        assert bitmap.add(sorted_ids(np.array([top, top - 5], np.int64)), 0, 2)
        assert bitmap.add(sorted_ids(np.array([top - 5, top - 70_000], np.int64)), 2, 2)
        assert bitmap.repeated().tolist() == [top - 5]
        low = IdBitmap(1 << 20)
        bottom = np.iinfo(np.int64).min
        assert low.add(sorted_ids(np.array([bottom + 3, bottom], np.int64)), 0, 2)
        assert low.add(sorted_ids(np.array([bottom + 3], np.int64)), 2, 1)
        assert low.repeated().tolist() == [bottom + 3]

    def test_too_many_repeats_give_it_up(self) -> None:
        bitmap = IdBitmap(1 << 16)  # at most 1,024 repeating rows
        assert bitmap.add(sorted_ids(np.zeros(1_000, np.int64)), 0, 1_000)
        assert not bitmap.add(sorted_ids(np.zeros(100, np.int64)), 1_000, 100)


def _found(ids: pa.Array, group: int, memory: int) -> tuple[list[int], int, int, bool]:
    """Duplicate rows, their count and distinct ids, by the scan's workers feeding the keys,
    and whether the bitmap held to the end."""
    from labelgate.scan.plan import Spec, plan_pieces
    from labelgate.scan.runner import run_pieces

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "ids.parquet"
        pq.write_table(pa.table({"id": ids, "label": [0] * len(ids)}), path, row_group_size=group)
        done = run([str(path)], Contract(num_classes=1, id_column="id"), max_examples=0)
        data = done.dataset
        metadata = [s.metadata for s in data.schemas]
        spec = Spec(num_classes=1, ignore_index=-100, batch_size=32, label="label", id="id")
        with IdKeys(len(ids), memory, integer=True, limit=None) as keys:
            run_pieces(plan_pieces(data, metadata), spec, metadata, threads=2, keys=keys)
            found = duplicate_ids(data, "id", done.context.scan, 0, memory=memory, keyed=keys)
            held = keys.dense is not None
    return [e.row for e in found.examples], found.rows, found.distinct, held


class TestDuplicateIds:
    def test_ids_shuffled_within_row_groups_stay_in_the_bitmap(self) -> None:
        rng = np.random.default_rng(0)
        ids = np.concatenate(
            [rng.permutation(np.arange(g, g + 1_000)) for g in range(0, 5_000, 1_000)]
        )
        ids[[10, 3_500]] = ids[[900, 3_400]]  # two repeats, each within its group
        ids[4_999] = ids[20]  # and one across groups
        values = pa.array(ids.tolist(), pa.int64())
        rows, count, distinct, held = _found(values, 1_000, 1 << 20)
        expected_rows, expected_distinct = plain(values.to_pylist())
        assert (
            held and rows == expected_rows and count == len(rows) and distinct == expected_distinct
        )

    def test_a_wide_id_after_dense_ones_gives_the_bitmap_up_and_nulls_count_once(self) -> None:
        draws: list[int | None] = [5, 3, None, 4, 3, 1, None, 2, 10**15, 5, None, 10**15 + 1]
        values = pa.array(draws, pa.int64())
        rows, count, distinct, held = _found(values, 4, 4096)
        expected_rows, expected_distinct = plain(draws)
        assert not held and rows == expected_rows
        assert count == len(expected_rows) and distinct == expected_distinct
