"""Counting (source, value, name) triples with one integer key per row: linear, where sorting the
rows would cost n log n."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["triples"]

I64 = npt.NDArray[np.int64]


def triples(
    sources: I64, values: I64, names: I64, n_names: int
) -> list[tuple[int, int, int, int, int]]:
    """Distinct (source, value, name) triples with their first position and count.

    One integer key per row and a bincount: linear, where sorting the rows would cost n log n.
    """
    lo = int(values.min())
    span = int(values.max()) - lo + 1
    if span > 4 * len(values) + 1024:  # scattered values: factorise them first
        uniq, values = np.unique(values, return_inverse=True)
        decode = uniq
        lo, span = 0, len(uniq)
    else:
        decode = np.arange(lo, lo + span, dtype=np.int64)
    key = (sources * span + (values - lo)) * n_names + names
    counts = np.bincount(key)
    present = np.flatnonzero(counts)
    first = np.empty(len(counts), np.int64)
    first[key[::-1]] = np.arange(len(key) - 1, -1, -1)  # the earliest write lands last
    out = []
    for k in present.tolist():
        rest, n = divmod(k, n_names)
        s, v = divmod(rest, span)
        out.append((s, int(decode[v]), n, int(first[k]), int(counts[k])))
    return out
