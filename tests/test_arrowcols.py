"""Row columns built from their buffers (readers/common/arrowcols.py) equal what pyarrow builds from
the same Python values, nulls and all, and refuse what pyarrow refuses; arrays read back from
their buffers give what ``to_numpy`` gives, slices included."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from labelgate.readers.common import arrowcols

SCHEMA = pa.schema([("id", pa.int64()), ("label", pa.int64()), ("source", pa.string())])
INTS = st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1))
TEXTS = st.one_of(st.none(), st.text(max_size=8))


@given(st.lists(INTS, max_size=40))
def test_ints_are_pyarrows(values: list[int | None]) -> None:
    assert arrowcols.ints(values).equals(pa.array(values, type=pa.int64()))


@given(st.lists(st.booleans(), max_size=40))
def test_bools_are_pyarrows(values: list[bool]) -> None:
    assert arrowcols.bools(np.array(values, dtype=bool)).equals(pa.array(values, type=pa.bool_()))


@given(st.lists(TEXTS, max_size=40))
def test_texts_are_pyarrows(values: list[str | None]) -> None:
    assert arrowcols.texts(values).equals(pa.array(values, type=pa.string()))


@given(st.lists(st.tuples(INTS, INTS, TEXTS), max_size=30))
def test_tables_are_pyarrows(rows: list[tuple[int | None, int | None, str | None]]) -> None:
    columns = {name: [row[i] for row in rows] for i, name in enumerate(SCHEMA.names)}
    assert arrowcols.table(columns, SCHEMA).equals(pa.table(columns, schema=SCHEMA))


def test_numpy_ints_and_repeated_text() -> None:
    values = np.arange(5, dtype=np.int64) - 2
    assert arrowcols.ints(values).equals(pa.array(values.tolist(), type=pa.int64()))
    assert arrowcols.repeated("é", 3).equals(pa.array(["é"] * 3))
    assert arrowcols.repeated("x", 0).equals(pa.array([], type=pa.string()))


@pytest.mark.parametrize(
    ("make", "values", "error"),
    [
        (arrowcols.ints, [1, 2**63], OverflowError),
        (arrowcols.ints, [1, True], TypeError),
        (arrowcols.ints, [1, "2"], TypeError),
        (arrowcols.texts, ["a", 1], TypeError),
    ],
)
def test_what_is_refused(make: object, values: list[object], error: type[Exception]) -> None:
    with pytest.raises(error):
        make(values)  # type: ignore[operator]


@given(
    st.lists(st.one_of(st.none(), st.floats(allow_nan=False)), max_size=40),
    st.integers(0, 40),
    st.integers(0, 40),
)
def test_numbers_and_validity_read_back_as_to_numpy(
    values: list[float | None], start: int, length: int
) -> None:
    array = pa.array(values, type=pa.float64()).slice(start, length)
    present = arrowcols.valid(array)
    assert present.tolist() == array.is_valid().to_pylist()
    read = arrowcols.numbers(array, np.float64)
    assert read[present].tolist() == [v for v in array.to_pylist() if v is not None]


@given(
    st.lists(st.one_of(st.none(), st.lists(st.integers(0, 9), max_size=4)), max_size=20),
    st.integers(0, 20),
)
def test_list_offsets_read_back(values: list[list[int] | None], start: int) -> None:
    array = pa.array(values, type=pa.list_(pa.int64())).slice(start)
    bounds = arrowcols.offsets(array)
    assert len(bounds) == len(array) + 1
    lengths = [0 if v is None else len(v) for v in array.to_pylist()]
    assert np.diff(bounds).tolist() == lengths


def test_no_pandas_import() -> None:
    code = (
        "import sys, numpy as np, pyarrow as pa\n"
        "from labelgate.readers.common import arrowcols\n"
        "s = pa.schema([('id', pa.int64()), ('source', pa.string())])\n"
        "arrowcols.table({'id': [1, None], 'source': ['a', None]}, s)\n"
        "arrowcols.ints(np.arange(3)); arrowcols.repeated('a', 2)\n"
        "from collections import Counter\n"
        "from labelgate.readers.coco.cocoarrow import clear_block\n"
        "from labelgate.readers.coco.cocofast import ImageTable\n"
        'box = b\'{"id": 1, "image_id": 0, "category_id": 1, "bbox": [1, 2, 3, 4]\'\n'
        'poly = b\', "area": 6, "segmentation": [[1, 2, 4, 2, 1, 6]], "iscrowd": 0}\'\n'
        "table = ImageTable.of({0: (640.0, 480.0)})\n"
        "found = clear_block(box + poly + b', ' + box + poly, table, Counter({1: 1}), None)\n"
        "assert found is not None and found[0].mask.all()\n"
        "print('pandas' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
