"""Which training batch each row lands in: file order or a DataLoader's shuffled order."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from labelgate.errors import UsageError

__all__ = ["BatchPlan", "shuffled_order"]

I64 = npt.NDArray[np.int64]


def shuffled_order(rows: int, seed: int) -> I64:
    """The first epoch's row order of ``DataLoader(shuffle=True, generator=Generator().manual_seed(seed))``.

    The DataLoader's iterator draws one int64 from the generator for its worker base seed before
    its ``RandomSampler`` calls ``torch.randperm``; both are replayed here (tests hold this to a
    real DataLoader).

    Raises:
        UsageError: torch is not installed.
    """
    try:
        import torch
    except ImportError:
        raise UsageError(
            "--shuffle-seed replays torch's DataLoader order and needs torch: "
            "pip install 'labelgate[torch]'"
        ) from None
    g = torch.Generator()
    g.manual_seed(seed)
    torch.empty((), dtype=torch.int64).random_(generator=g)
    order: I64 = torch.randperm(rows, generator=g).numpy().astype(np.int64)
    return order


@dataclass(frozen=True, slots=True)
class BatchPlan:
    """Batches of ``size`` consecutive rows in reading order (or in a shuffled order).

    Attributes:
        size: rows per batch.
        drop_last: whether an incomplete last batch is dropped.
        rows: total rows, where known before the scan (needed for shuffling).
        slot: for a shuffled plan, the position of each row in the epoch's order.
    """

    size: int
    drop_last: bool = False
    rows: int | None = None
    slot: I64 | None = None

    @classmethod
    def build(cls, size: int, *, drop_last: bool, rows: int | None, seed: int | None) -> BatchPlan:
        """Make the plan; a shuffled one needs the row count up front."""
        if seed is None:
            return cls(size, drop_last, rows)
        if rows is None:
            raise UsageError("shuffling needs the row count before the scan")
        slot = np.empty(rows, dtype=np.int64)
        slot[shuffled_order(rows, seed)] = np.arange(rows, dtype=np.int64)
        return cls(size, drop_last, rows, slot)

    @property
    def shuffled(self) -> bool:
        """Whether rows are taken in a shuffled order."""
        return self.slot is not None

    def batch_of(self, first_row: int, count: int) -> I64:
        """Batch index of the rows ``first_row .. first_row+count-1`` (before any drop_last)."""
        if self.slot is None:
            return np.arange(first_row, first_row + count, dtype=np.int64) // self.size
        return self.slot[first_row : first_row + count] // self.size

    def kept_batches(self, rows: int) -> int:
        """How many batches a DataLoader yields for ``rows`` rows."""
        return rows // self.size if self.drop_last else -(-rows // self.size)

    def last_size(self, rows: int) -> int:
        """Rows in the last batch before any drop (0 when there are no rows)."""
        if rows == 0:
            return 0
        return rows % self.size or self.size
