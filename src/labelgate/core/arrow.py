"""Arrow arrays as numpy arrays without pyarrow's ``to_numpy``, which imports pandas.

Reading the buffers directly keeps a validation run free of pandas' import time, and is zero-copy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["bool_mask", "numbers", "valid"]

_NUMPY = {
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "uint8": np.uint8,
    "uint16": np.uint16,
    "uint32": np.uint32,
    "uint64": np.uint64,
    "halffloat": np.float16,
    "float": np.float32,
    "double": np.float64,
}


def _single(arr: Any) -> pa.Array:
    import pyarrow as pa

    return arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr


def _validity(arr: pa.Array) -> npt.NDArray[np.bool_]:
    """Which values of ``arr`` (one chunk, with nulls) are not null, from its bitmap
    (``pyarrow.compute.fill_null`` would import pandas for its Python fill value)."""
    bits = np.unpackbits(np.frombuffer(arr.buffers()[0], np.uint8), bitorder="little")
    return bits[arr.offset : arr.offset + len(arr)].astype(bool)


def valid(arr: pa.Array) -> npt.NDArray[np.bool_]:
    """Which values of ``arr`` are not null, from its bitmap (``is_valid`` loads pandas)."""
    arr = _single(arr)
    return _validity(arr) if arr.null_count else np.ones(len(arr), bool)


def numbers(arr: pa.Array, fill: int | float = 0) -> npt.NDArray[Any]:
    """An integer or floating Arrow array as numpy, nulls replaced by ``fill``."""
    arr = _single(arr)
    dtype = _NUMPY[str(arr.type)]
    buf = arr.buffers()[1]
    if buf is None or len(arr) == 0:
        return np.full(len(arr), fill if arr.null_count else 0, dtype)
    values = np.frombuffer(
        buf, dtype=dtype, count=len(arr), offset=arr.offset * np.dtype(dtype).itemsize
    )
    if arr.null_count:
        return np.where(_validity(arr), values, np.array(fill).astype(dtype))
    return values


def bool_mask(arr: pa.Array, *, null_as: bool = False) -> npt.NDArray[np.bool_]:
    """An Arrow boolean array as a numpy mask, nulls read as ``null_as``."""
    arr = _single(arr)
    n = len(arr)
    if n == 0:
        return np.zeros(0, bool)
    bits = np.unpackbits(np.frombuffer(arr.buffers()[1], np.uint8), bitorder="little")
    mask = bits[arr.offset : arr.offset + n].astype(bool)
    if arr.null_count:
        valid = _validity(arr)
        return (mask & valid) | (~valid if null_as else False)
    return mask


_ARROW = {
    np.dtype(np.int64): "int64",
    np.dtype(np.int32): "int32",
    np.dtype(np.uint8): "uint8",
    np.dtype(np.float64): "float64",
}


def from_numpy(values: npt.NDArray[Any]) -> pa.Array:
    """A 1-d numpy array of int64, int32, uint8, float64 or bool as an Arrow array (no copy for
    numbers); ``pa.array`` would import pandas to look for pandas objects."""
    import pyarrow as pa

    if values.dtype == np.bool_:
        packed = np.packbits(values, bitorder="little")
        return pa.Array.from_buffers(pa.bool_(), len(values), [None, pa.py_buffer(packed)])
    values = np.ascontiguousarray(values)
    typ = getattr(pa, _ARROW[values.dtype])()
    return pa.Array.from_buffers(typ, len(values), [None, pa.py_buffer(values)])
