"""Freed heap memory given back to the system between the parts of a large read.

glibc keeps the pages of freed objects for reuse; a reader that unpickles a worker's result
(megabytes of rows, in the executor's own thread and so its own heap arena) and drops it leaves
them behind, and the peak grows with each part. ``malloc_trim`` returns them; elsewhere
(musl, macOS, Windows) nothing is done: their allocators return pages on their own terms.
"""

from __future__ import annotations

import ctypes
import sys
from typing import Any

__all__ = ["trim_heap"]


def _glibc() -> Any:
    """The C library when it is glibc (it has ``malloc_trim``), else ``None``."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)
    except OSError:  # no C library to load: nothing to trim
        return None
    return libc if hasattr(libc, "malloc_trim") else None


_LIBC = _glibc()


def trim_heap() -> None:
    """Give freed heap pages back to the system (glibc only)."""
    if _LIBC is not None:
        _LIBC.malloc_trim(0)
