"""labelgate.commands.diffrows: the array comparison of rows by id gives exactly what comparing
value by value gives, whatever the ids' and labels' encodings."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from labelgate.commands import diffrows
from labelgate.commands.diffrows import row_changes

IDS = st.integers(-3, 12)
LABELS = st.one_of(st.none(), st.integers(-2, 5))


def _spelled(values: list[Any], how: str) -> pa.Array:
    """``values`` as a column of one encoding: int64, float64, text (with signs and spaces)."""
    if how == "int":
        return pa.array(values, pa.int64())
    if how == "float":
        return pa.array([None if v is None else float(v) for v in values], pa.float64())
    return pa.array(
        [None if v is None else (f" +{v}\t" if v >= 0 else f"{v} ") for v in values], pa.string()
    )


def _batches(rows: list[tuple[int, Any]], cut: int, ids_as: str, labels_as: str) -> list[Any]:
    parts = [rows[:cut], rows[cut:]]
    return [
        (_spelled([i for i, _ in p], ids_as), _spelled([v for _, v in p], labels_as))
        for p in parts
        if p
    ]


ROWS = st.lists(st.tuples(IDS, LABELS), max_size=30)
HOW = st.sampled_from(["int", "float", "text"])


@settings(max_examples=120, deadline=None)
@given(ROWS, ROWS, st.integers(0, 30), HOW, HOW, HOW, HOW)
def test_arrays_and_values_agree(
    base: list[tuple[int, Any]],
    head: list[tuple[int, Any]],
    cut: int,
    b_ids: str,
    b_labels: str,
    h_ids: str,
    h_labels: str,
) -> None:
    b = _batches(base, cut, b_ids, b_labels)
    h = _batches(head, cut, h_ids, h_labels)
    got = row_changes(b, h, 1000)
    want = diffrows._by_values(diffrows._values(b), diffrows._values(h), 1000)
    assert diffrows._integers(b) is not None and diffrows._integers(h) is not None
    assert got == want


def test_text_that_is_no_integer_is_compared_as_text() -> None:
    b = [(pa.array(["a", "b"]), pa.array([0, 1]))]
    h = [(pa.array(["b", "c"]), pa.array([2, 1]))]
    got = row_changes(b, h, 10)
    assert (got.added, got.removed, got.changed) == (["c"], ["a"], ["b"])
    assert got.base == {"b": 1} and got.head == {"b": 2}
