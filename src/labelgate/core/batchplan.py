"""Which training batch each row lands in: file order or a DataLoader's shuffled order."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from labelgate.errors import INSTALL_TORCH, UsageError

__all__ = ["BatchPlan", "shuffled_order"]

I64 = npt.NDArray[np.int64]
Ints = npt.NDArray[np.signedinteger[Any]]
CHUNK = 1 << 20  # rows whose batches are found at once where all rows are counted


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
            f"--shuffle-seed replays torch's DataLoader order and needs torch: {INSTALL_TORCH}"
        ) from None
    g = torch.Generator()
    g.manual_seed(seed)
    torch.empty((), dtype=torch.int64).random_(generator=g)
    order: I64 = torch.randperm(rows, generator=g).numpy().astype(np.int64)
    return order


@dataclass(frozen=True, slots=True)
class BatchPlan:
    """Batches of ``size`` consecutive rows in reading order (or in a shuffled order); for
    detection rows, batches of ``size`` images, each with all its boxes, as a detection
    DataLoader with a ``collate_fn`` yields them.

    Attributes:
        size: rows (or images) per batch.
        drop_last: whether an incomplete last batch is dropped.
        rows: total rows, where known before the scan (needed for shuffling).
        slot: for a shuffled plan, the position of each item (row or image) in the epoch's order.
        image: for batches of images, the image of each row (its position in the dataset's
            image order); ``None``: every row is an item.
        images: for batches of images, how many images (those without a box included).
    """

    size: int
    drop_last: bool = False
    rows: int | None = None
    slot: I64 | None = None
    image: Ints | None = None
    images: int = 0

    @classmethod
    def build(
        cls,
        size: int,
        *,
        drop_last: bool,
        rows: int | None,
        seed: int | None,
        images: tuple[Ints, int] | None = None,
    ) -> BatchPlan:
        """Make the plan; a shuffled one needs the row count up front. ``images``: the image of
        each row and the image count, for batches of images (a shuffle draws images then)."""
        image, count = (None, 0) if images is None else images
        items = rows if image is None else count
        if seed is None:
            return cls(size, drop_last, rows, None, image, count)
        if items is None:
            raise UsageError("shuffling needs the row count before the scan")
        slot = np.empty(items, dtype=np.int64)
        slot[shuffled_order(items, seed)] = np.arange(items, dtype=np.int64)
        return cls(size, drop_last, rows, slot, image, count)

    @property
    def shuffled(self) -> bool:
        """Whether rows are taken in a shuffled order."""
        return self.slot is not None

    @property
    def in_order(self) -> bool:
        """Whether the batch of each row never decreases along the rows (no shuffle, and rows
        not regrouped by image)."""
        return self.slot is None and self.image is None

    @property
    def unit(self) -> str:
        """What a batch counts: ``rows`` or ``images``."""
        return "rows" if self.image is None else "images"

    def order_of(self, first_row: int, count: int) -> I64:
        """The position in the epoch's order of the item of each row (row or image)."""
        item = np.arange(first_row, first_row + count, dtype=np.int64)
        if self.image is not None:
            item = self.image[first_row : first_row + count].astype(np.int64, copy=False)
        return item if self.slot is None else self.slot[item]

    def batch_of(self, first_row: int, count: int) -> I64:
        """Batch index of the rows ``first_row .. first_row+count-1`` (before any drop_last)."""
        return self.order_of(first_row, count) // self.size

    def items(self, rows: int) -> int:
        """What is batched: ``rows``, or the images (with or without a box)."""
        return rows if self.image is None else self.images

    def kept_batches(self, rows: int) -> int:
        """How many batches a DataLoader yields for ``rows`` rows."""
        n = self.items(rows)
        return n // self.size if self.drop_last else -(-n // self.size)

    def last_size(self, rows: int) -> int:
        """Rows (or images) in the last batch before any drop (0 when there are none)."""
        n = self.items(rows)
        if n == 0:
            return 0
        return n % self.size or self.size

    def dropped_rows(self, rows: int) -> int:
        """Rows in the batch that drop_last drops (0 without drop_last)."""
        if self.image is None:
            return rows - min(rows, self.kept_batches(rows) * self.size)
        kept = self.kept_batches(rows)
        return sum(  # a chunk at a time: no array as long as the rows
            int(np.count_nonzero(self.batch_of(at, min(CHUNK, rows - at)) >= kept))
            for at in range(0, rows, CHUNK)
        )
