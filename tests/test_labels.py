"""Judging one target value: every Arrow type a label column arrives in."""

from __future__ import annotations

import decimal

import numpy as np
import pyarrow as pa
import pytest

from labelgate.core.labels import Status, classify

S = Status


def judge(values: list[object], typ: pa.DataType, k: int = 4, ignore: int = -100) -> list[int]:
    return classify(pa.array(values, typ), num_classes=k, ignore_index=ignore).status.tolist()


class TestScalars:
    def test_integers(self) -> None:
        assert judge([0, 3, 4, -1, -100, None], pa.int64()) == [
            S.USABLE,
            S.USABLE,
            S.HIGH,
            S.NEGATIVE,
            S.IGNORED,
            S.NULL,
        ]

    @pytest.mark.parametrize("typ", [pa.int8(), pa.int16(), pa.int32(), pa.uint8(), pa.uint32()])
    def test_narrow_integers(self, typ: pa.DataType) -> None:
        assert judge([0, 3, 4], typ) == [S.USABLE, S.USABLE, S.HIGH]

    def test_uint64_past_int64_is_bad_type(self) -> None:
        assert judge([1, 2**63 + 5], pa.uint64()) == [S.USABLE, S.BAD_TYPE]

    def test_floats(self) -> None:
        assert judge([1.0, 2.5, float("nan"), None, float("inf"), 4.0, 1e30], pa.float64()) == [
            S.USABLE,
            S.BAD_TYPE,
            S.NULL,
            S.NULL,
            S.BAD_TYPE,
            S.HIGH,
            S.BAD_TYPE,
        ]

    def test_text(self) -> None:
        got = judge(["3", " 2 ", "3.0", "3.5", "cat", "", None, "-100", "9"], pa.string())
        assert got == [
            S.USABLE,
            S.USABLE,
            S.USABLE,
            S.BAD_TYPE,
            S.BAD_TYPE,
            S.NULL,
            S.NULL,
            S.IGNORED,
            S.HIGH,
        ]

    @pytest.mark.parametrize(
        ("values", "typ"),
        [
            ([True, False], pa.bool_()),
            ([decimal.Decimal("1")], pa.decimal128(5, 0)),
            ([b"1"], pa.binary()),
        ],
    )
    def test_not_class_indices(self, values: list[object], typ: pa.DataType) -> None:
        assert set(judge(values, typ)) == {S.BAD_TYPE}

    def test_all_null_column(self) -> None:
        assert judge([None, None], pa.null()) == [S.NULL, S.NULL]

    def test_dictionary_encoded(self) -> None:
        arr = pa.array([0, 5, 0]).dictionary_encode()
        c = classify(arr, num_classes=4, ignore_index=-100)
        assert c.status.tolist() == [S.USABLE, S.HIGH, S.USABLE]

    def test_ignore_index_is_skipped_before_the_range_check(self) -> None:
        # PyTorch: an ignore_index inside [0, K) removes that class silently.
        assert judge([0, 1, 2], pa.int64(), ignore=1) == [S.USABLE, S.IGNORED, S.USABLE]
        assert judge([255, 4], pa.int64(), ignore=255) == [S.IGNORED, S.HIGH]


class TestTokens:
    def test_rows_take_their_worst_token(self) -> None:
        arr = pa.array([[0, -100], [-100, -100], [], [1, 9], None, [None, 1]], pa.list_(pa.int64()))
        c = classify(arr, num_classes=4, ignore_index=-100)
        assert c.row_status.tolist() == [S.USABLE, S.IGNORED, S.IGNORED, S.HIGH, S.NULL, S.NULL]
        assert c.row_of is not None and c.position is not None
        assert c.row_of.tolist() == [0, 0, 1, 1, 3, 3, 5, 5]
        assert c.position.tolist() == [0, 1, 0, 1, 0, 1, 0, 1]

    def test_sliced_arrays_keep_their_offsets(self) -> None:
        arr = pa.array([[7], [0, 1], [2, 9]], pa.list_(pa.int64())).slice(1)
        c = classify(arr, num_classes=4, ignore_index=-100)
        assert c.values.tolist() == [0, 1, 2, 9]
        assert c.row_status.tolist() == [S.USABLE, S.HIGH]
        assert c.position is not None and c.position.tolist() == [0, 1, 0, 1]

    def test_large_and_fixed_size_lists(self) -> None:
        for typ in (pa.large_list(pa.int32()), pa.list_(pa.int16(), 2)):
            c = classify(pa.array([[0, 4]], typ), num_classes=4, ignore_index=-100)
            assert c.status.tolist() == [S.USABLE, S.HIGH]


def test_sliced_scalar_array() -> None:
    arr = pa.array(np.arange(10, dtype=np.int64)).slice(3, 4)
    c = classify(arr, num_classes=5, ignore_index=-100)
    assert c.values.tolist() == [3, 4, 5, 6]
    assert c.status.tolist() == [S.USABLE, S.USABLE, S.HIGH, S.HIGH]
