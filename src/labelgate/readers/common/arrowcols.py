"""Row columns made into Arrow arrays from their buffers, as the COCO block workers send them, and
Arrow arrays read back into numpy from their buffers.

``pyarrow.array`` and ``pyarrow.table`` look for pandas the first time a process calls them and
import it (a third of a second, in every worker process); an array built from its buffers does
not (nor does ``Array.to_numpy`` import it when its buffers are read directly). Only the two
column kinds a row writer holds are made here: 64-bit integers and text, each value possibly null;
and read back: numbers of fixed width (a list's offsets too) and validity.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["bools", "ints", "numbers", "offsets", "repeated", "table", "texts", "valid"]


def _validity(missing: npt.NDArray[np.bool_]) -> tuple[Any, int]:
    """The validity bitmap of values of which ``missing`` are null (``None`` when none is), and
    the null count."""
    import pyarrow as pa

    nulls = int(missing.sum())
    if not nulls:
        return None, 0
    return pa.py_buffer(np.packbits(~missing, bitorder="little")), nulls


def ints(values: npt.NDArray[np.int64] | Sequence[int | None]) -> pa.Array:
    """64-bit integers (``None``: null) as an Arrow array.

    Raises:
        OverflowError: a value past 64 bits, as ``pyarrow.array`` raises.
        TypeError: a value that is no integer.
    """
    import pyarrow as pa

    if isinstance(values, np.ndarray):
        data, bitmap, nulls = np.ascontiguousarray(values, dtype=np.int64), None, 0
    else:
        if not set(map(type, values)) <= {int, type(None)}:
            raise TypeError("an integer column holds a value that is no integer")
        missing = np.fromiter((v is None for v in values), dtype=bool, count=len(values))
        bitmap, nulls = _validity(missing)
        data = np.array([0 if v is None else v for v in values] if nulls else values, np.int64)
    return pa.Array.from_buffers(pa.int64(), len(data), [bitmap, pa.py_buffer(data)], nulls)


def bools(values: npt.NDArray[np.bool_]) -> pa.Array:
    """Booleans (none null) as an Arrow array."""
    import pyarrow as pa

    data = pa.py_buffer(np.packbits(np.asarray(values, dtype=bool), bitorder="little"))
    return pa.Array.from_buffers(pa.bool_(), len(values), [None, data], 0)


def texts(values: Sequence[str | None]) -> pa.Array:
    """Text (``None``: null) as an Arrow string array.

    Raises:
        TypeError: a value that is no text.
    """
    import pyarrow as pa

    if not set(map(type, values)) <= {str, type(None)}:
        raise TypeError("a text column holds a value that is no text")
    encoded = [b"" if v is None else v.encode() for v in values]
    missing = np.fromiter((v is None for v in values), dtype=bool, count=len(values))
    bitmap, nulls = _validity(missing)
    offsets = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, encoded), np.int64, len(values)), out=offsets[1:])
    if offsets[-1] >= 2**31:
        raise OverflowError("a text column past 2 GiB")
    buffers = [bitmap, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(b"".join(encoded))]
    return pa.Array.from_buffers(pa.string(), len(values), buffers, nulls)


def repeated(value: str, count: int) -> pa.Array:
    """``value`` ``count`` times as an Arrow string array."""
    import pyarrow as pa

    data = value.encode()
    offsets = np.arange(count + 1, dtype=np.int64) * len(data)
    if offsets[-1] >= 2**31:
        raise OverflowError("a text column past 2 GiB")
    buffers = [None, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data * count)]
    return pa.Array.from_buffers(pa.string(), count, buffers, 0)


def table(columns: dict[str, list[Any]], schema: pa.Schema) -> pa.Table:
    """Columns of Python values (integers, text, ``None``) as a table of ``schema``, as
    ``pyarrow.table(columns, schema=schema)`` gives it."""
    import pyarrow as pa

    arrays = [
        ints(columns[f.name]) if pa.types.is_int64(f.type) else texts(columns[f.name])
        for f in schema
    ]
    return pa.Table.from_arrays(arrays, schema=schema)


def numbers(array: pa.Array, dtype: type[np.generic]) -> npt.NDArray[Any]:
    """The values of a fixed-width numeric array (a null's slot holds whatever was written
    there) as a read-only numpy view: ``array.to_numpy()`` without the pandas import."""
    width = np.dtype(dtype).itemsize
    data = array.buffers()[1]
    count = len(array)
    if data is None or not count:
        return np.zeros(0, dtype=dtype)
    return np.frombuffer(data, dtype=dtype, count=count, offset=array.offset * width)


def valid(array: pa.Array) -> npt.NDArray[np.bool_]:
    """Where ``array`` holds a value (not null)."""
    bitmap = array.buffers()[0]
    count = len(array)
    if bitmap is None or not array.null_count:
        return np.ones(count, dtype=bool)
    bits = np.unpackbits(np.frombuffer(bitmap, dtype=np.uint8), bitorder="little")
    return bits[array.offset : array.offset + count].astype(bool)


def offsets(array: pa.Array) -> npt.NDArray[np.int64]:
    """A list array's offsets (one more than its length), as 64-bit integers."""
    import pyarrow as pa

    kind = np.int64 if pa.types.is_large_list(array.type) else np.int32
    data = array.buffers()[1]
    count = len(array) + 1
    width = np.dtype(kind).itemsize
    return np.frombuffer(data, dtype=kind, count=count, offset=array.offset * width).astype(
        np.int64
    )
