"""The masks' rows as Arrow arrays built straight from their buffers.

``pa.array`` asks on every call whether its argument is a pandas object, and that question
imports pandas (pyarrow's ``_is_array_like``): a third of a second of a mask run that never uses
pandas, paid by the parent while its workers wait for it. Arrays made with
``pa.Array.from_buffers`` ask nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["mask_batch"]


def _numbers(values: npt.NDArray[Any], *, wide: bool) -> pa.Array:
    """int64 values (``wide``), or int32 offsets."""
    import pyarrow as pa

    data = np.ascontiguousarray(values, dtype=np.int64 if wide else np.int32)
    kind = pa.int64() if wide else pa.int32()
    return pa.Array.from_buffers(kind, len(data), [None, pa.py_buffer(data)])


def _flags(flags: npt.NDArray[np.bool_]) -> pa.Array:
    import pyarrow as pa

    bits = np.packbits(flags.astype(bool), bitorder="little")
    return pa.Array.from_buffers(pa.bool_(), len(flags), [None, pa.py_buffer(bits)])


def _strings(items: list[str]) -> pa.Array:
    import pyarrow as pa

    encoded = [s.encode("utf-8") for s in items]
    ends = np.fromiter((len(b) for b in encoded), np.int64, len(encoded)).cumsum()
    offsets = np.concatenate(([0], ends)).astype(np.int32)
    data = b"".join(encoded)
    return pa.Array.from_buffers(
        pa.string(), len(items), [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )


def mask_batch(
    schema: pa.Schema,
    paths: list[str],
    lengths: npt.NDArray[np.int64],
    read: npt.NDArray[np.bool_],
    values: npt.NDArray[np.int64],
    pixels: npt.NDArray[np.int64],
) -> pa.RecordBatch:
    """One batch of mask rows: id (the path), label (the distinct values), pixels (their
    counts), source (the folder); ``lengths`` holds each mask's number of values and ``read``
    whether it was read (an unread mask's label and pixels are null)."""
    import pyarrow as pa

    offsets = _numbers(np.concatenate(([0], np.cumsum(lengths))), wide=False)
    null = _flags(~read)
    return pa.RecordBatch.from_arrays(
        [
            _strings(paths),
            pa.ListArray.from_arrays(offsets, _numbers(values, wide=True), mask=null),
            pa.ListArray.from_arrays(offsets, _numbers(pixels, wide=True), mask=null),
            _strings([p.rpartition("/")[0] or "." for p in paths]),
        ],
        schema=schema,
    )
