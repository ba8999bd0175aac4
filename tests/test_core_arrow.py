"""``core.arrow``: Arrow arrays read as numpy from their buffers, nulls filled as
``pyarrow.compute.fill_null`` fills them (without its import of pandas)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import given, settings
from hypothesis import strategies as st

from labelgate.core.arrow import bool_mask, numbers

INTS = st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1))
FLOATS = st.one_of(st.none(), st.floats(allow_nan=False))


@settings(deadline=None)
@given(st.lists(INTS, max_size=40), st.integers(0, 5), st.integers(-3, 3))
def test_ints_with_nulls_are_filled_as_fill_null_fills(
    values: list[int | None], start: int, fill: int
) -> None:
    arr = pa.array(values, pa.int64()).slice(min(start, len(values)))
    assert numbers(arr, fill).tolist() == pc.fill_null(arr, fill).to_pylist()


@settings(deadline=None)
@given(st.lists(FLOATS, max_size=40), st.integers(0, 5))
def test_floats_with_nulls_are_filled_as_fill_null_fills(
    values: list[float | None], start: int
) -> None:
    arr = pa.array(values, pa.float64()).slice(min(start, len(values)))
    got = numbers(arr, np.nan)
    want = np.array(pc.fill_null(arr, np.nan).to_pylist(), dtype=np.float64)
    assert np.array_equal(got, want, equal_nan=True)


@settings(deadline=None)
@given(st.lists(st.one_of(st.none(), st.booleans()), max_size=40), st.integers(0, 9), st.booleans())
def test_booleans_with_nulls_are_read_as_null_as(
    values: list[bool | None], start: int, null_as: bool
) -> None:
    arr = pa.array(values, pa.bool_()).slice(min(start, len(values)))
    want = pc.fill_null(arr, null_as).to_pylist()
    assert bool_mask(arr, null_as=null_as).tolist() == want


def test_a_column_of_nulls_is_its_fill() -> None:
    assert numbers(pa.array([None, None], pa.int64()), 7).tolist() == [7, 7]
