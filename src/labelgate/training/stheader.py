"""A ``.safetensors`` header validated in full before any of its offsets is used, as the
safetensors library validates it (huggingface/safetensors, ``safetensors/src/tensor.rs`` at
24b0b285: ``read_metadata`` :390-424, ``Metadata::validate`` :627-664, ``TensorInfo``
:799-806, ``Dtype`` and ``bitsize`` :811-892):

- 8 bytes of little-endian length, at most ``MAX_HEADER`` (``MAX_HEADER_SIZE = 100_000_000``,
  :10), then that many bytes of UTF-8 JSON (nesting bounded as every JSON labelgate reads);
- a JSON object; ``__metadata__``, where present, an object of strings; every other entry an
  object with ``dtype`` (one of ``DTYPE_BITS``), ``shape`` (integers >= 0) and ``data_offsets``
  (two integers >= 0), serde's ``usize`` each;
- sorted by their offsets, each tensor begins where the previous one ended (the first at 0), its
  end not before its start (no overlap, no gap: "invalid offset for tensor"), and spans exactly
  ``prod(shape) * bits / 8`` bytes, in whole bytes, without overflow;
- the last tensor ends where the file ends ("incomplete metadata, file not fully covered").
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass
from typing import IO, Any

from labelgate.errors import InputError
from labelgate.io.bounded import load_json

__all__ = ["DTYPE_BITS", "MAX_HEADER", "HeaderError", "Tensor", "read_header"]

MAX_HEADER = 100_000_000  # bytes: safetensors' MAX_HEADER_SIZE
USIZE = 2**64 - 1  # serde's usize on a 64-bit machine
DTYPE_BITS = {
    "BOOL": 8,
    "F4": 4,
    "F6_E2M3": 6,
    "F6_E3M2": 6,
    "U8": 8,
    "I8": 8,
    "F8_E5M2": 8,
    "F8_E4M3": 8,
    "F8_E8M0": 8,
    "F8_E4M3FNUZ": 8,
    "F8_E5M2FNUZ": 8,
    "I16": 16,
    "U16": 16,
    "F16": 16,
    "BF16": 16,
    "I32": 32,
    "U32": 32,
    "F32": 32,
    "C64": 64,
    "F64": 64,
    "I64": 64,
    "U64": 64,
}


class HeaderError(ValueError):
    """Why a safetensors header is refused (one line; a tensor named by at most 80 characters)."""


@dataclass(frozen=True, slots=True)
class Tensor:
    """One tensor of the header: its name, dtype, shape and byte range after the header."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    start: int
    stop: int


def _usize(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= USIZE


def _entry(name: str, info: Any) -> Tensor:
    shown = repr(name[:80])
    if not isinstance(info, dict):
        raise HeaderError(f"tensor {shown} is a JSON {type(info).__name__}, not an object")
    dtype, shape, offsets = info.get("dtype"), info.get("shape"), info.get("data_offsets")
    if not isinstance(dtype, str) or dtype not in DTYPE_BITS:
        raise HeaderError(f"tensor {shown} has no dtype safetensors knows")
    if not isinstance(shape, list) or not all(_usize(d) for d in shape):
        raise HeaderError(f"tensor {shown}: its shape is not a list of sizes")
    if not isinstance(offsets, list) or len(offsets) != 2 or not all(_usize(o) for o in offsets):
        raise HeaderError(f"tensor {shown}: its data_offsets are not two offsets")
    return Tensor(name, dtype, tuple(shape), offsets[0], offsets[1])


def read_header(f: IO[bytes], size: int, origin: str) -> tuple[int, list[Tensor]]:
    """Read and validate the header of the safetensors file ``f`` of ``size`` bytes.

    Returns:
        Where the tensors' bytes begin (8 + the header's length), and the tensors in offset order.

    Raises:
        HeaderError: the first thing safetensors would refuse, or a file cut short.
    """
    head = f.read(8)
    if len(head) < 8:
        raise HeaderError(f"truncated ({size} bytes, no header)")
    (length,) = struct.unpack("<Q", head)
    if length > MAX_HEADER:
        raise HeaderError(f"a header of {length:,} bytes (safetensors reads at most 100,000,000)")
    if 8 + length > size:
        raise HeaderError(f"truncated or not safetensors (header of {length:,} bytes)")
    try:
        doc = load_json(f.read(length).decode("utf-8"), origin)
    except UnicodeDecodeError:
        raise HeaderError("the safetensors header is not UTF-8") from None
    except InputError as exc:
        raise HeaderError(f"the safetensors header: {exc.reason}") from None
    except json.JSONDecodeError:
        raise HeaderError("the safetensors header is not JSON") from None
    if not isinstance(doc, dict):
        raise HeaderError(f"the safetensors header is a JSON {type(doc).__name__}, not an object")
    meta = doc.pop("__metadata__", None)
    if meta is not None and not (
        isinstance(meta, dict) and all(isinstance(v, str) for v in meta.values())
    ):
        raise HeaderError("its __metadata__ is not an object of strings")
    tensors = sorted((_entry(k, v) for k, v in doc.items()), key=lambda t: (t.start, t.stop))
    end = 0
    for t in tensors:
        if t.start != end or t.stop < t.start:
            raise HeaderError(
                f"invalid offset for tensor {t.name[:80]!r}: its bytes overlap another's, "
                "leave a gap or run backwards"
            )
        end = t.stop
        bits = math.prod(t.shape) * DTYPE_BITS[t.dtype]
        if bits > USIZE or bits % 8:
            raise HeaderError(f"tensor {t.name[:80]!r}: its size overflows or is not whole bytes")
        if t.stop - t.start != bits // 8:
            raise HeaderError(
                f"tensor {t.name[:80]!r}: {t.stop - t.start:,} bytes for a {t.dtype} tensor of "
                f"shape {list(t.shape)[:8]} ({bits // 8:,} bytes)"
            )
    data = 8 + length
    if data + end > size:
        raise HeaderError(f"truncated: {size} bytes, its header describes {data + end}")
    if data + end < size:
        raise HeaderError(
            f"{size - data - end:,} bytes past its last tensor: safetensors refuses a file its "
            "header does not fully cover"
        )
    return data, tensors
