"""The simulated batches themselves: each batch's rows, ids and labels, in the order a DataLoader yields them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from labelgate.core.arrow import from_numpy, numbers
from labelgate.inputs.dataset import Dataset

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["collect_batches"]


def collect_batches(
    data: Dataset, *, only: set[int] | None = None, limit: int | None = None
) -> pa.Table:
    """Gather the rows of the batches a DataLoader would yield.

    Args:
        data: the dataset.
        only: keep these batch indices only (default: every batch).
        limit: keep batches ``0 .. limit-1`` only.

    Returns:
        A table with columns ``batch``, ``row`` (position in reading order), ``id``, ``source``
        and ``label`` (as stored), sorted by batch and, within a batch, in the order the
        DataLoader takes the rows.
    """
    import pyarrow as pa

    plan = data.plan
    cols = data.columns
    wanted = [c for c in (cols.label, cols.id, cols.source) if c is not None]
    parts: list[pa.Table] = []
    total = 0
    stop = None if limit is None or not plan.in_order else limit * plan.size
    for _, first, chunk in data.chunks(wanted):
        n = chunk.num_rows
        batch = plan.batch_of(first, n)
        keep = np.ones(n, dtype=bool)
        if only is not None:
            keep &= np.isin(batch, np.fromiter(only, np.int64, len(only)))
        if limit is not None:
            keep &= batch < limit
        total = first + n
        idx = np.flatnonzero(keep)
        if len(idx):
            rows = idx + first
            order = plan.order_of(first, n)[idx]
            parts.append(
                pa.table(
                    {
                        "batch": from_numpy(batch[idx]),
                        "row": from_numpy(rows),
                        "slot": from_numpy(order),
                        "id": chunk.column(cols.id).take(from_numpy(idx))
                        if cols.id
                        else pa.nulls(len(idx)),
                        "source": chunk.column(cols.source).take(from_numpy(idx)).cast(pa.string())
                        if cols.source
                        else pa.nulls(len(idx), pa.string()),
                        "label": chunk.column(cols.label).take(from_numpy(idx)),
                    }
                )
            )
        if stop is not None and first + n >= stop:
            break
    kept = plan.kept_batches(data.known_rows if data.known_rows is not None else total)
    if not parts:
        return pa.schema(
            [
                ("batch", pa.int64()),
                ("row", pa.int64()),
                ("id", pa.null()),
                ("source", pa.string()),
                ("label", data.label_type),
            ]
        ).empty_table()
    table = pa.concat_tables(parts, promote_options="permissive")
    b = numbers(table.column("batch").combine_chunks())
    slot = numbers(table.column("slot").combine_chunks())
    order = np.lexsort((slot, b))
    order = order[b[order] < kept]
    return table.take(from_numpy(order)).drop_columns(["slot"])
