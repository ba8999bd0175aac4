"""Which rows a DataLoader gives at a given batch of a given epoch, on a given rank.

Replays torch's own samplers (``torch/utils/data/sampler.py`` and ``distributed.py``), so a step
number from a crashed run's log can be turned back into the rows of the batch it was training on:

- one process, ``shuffle=True`` with ``generator=torch.Generator().manual_seed(seed)``: every
  epoch's iterator draws one int64 from the generator (its workers' base seed) before the
  ``RandomSampler`` draws ``randperm(n)``; an epoch read to its end draws one more ``randperm(n)``
  for the (empty) remainder, which moves the generator for the next epoch;
- ``DistributedSampler(num_replicas=W, rank=r, shuffle, seed, drop_last)``: ``randperm(n)`` from a
  fresh generator seeded ``seed + epoch``, padded by repeating its head (or cut, with
  ``drop_last``) to a multiple of W, then every W-th index from ``r``.

Tests hold each replay to the real sampler and DataLoader.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from labelgate.errors import INSTALL_TORCH, UsageError

__all__ = ["LoaderSpec", "distributed_indices", "epoch_order"]

I64 = npt.NDArray[np.int64]


def _torch() -> Any:
    """torch, imported where a shuffled order is replayed."""
    try:
        import torch
    except ImportError:
        raise UsageError(f"replaying a shuffled DataLoader needs torch: {INSTALL_TORCH}") from None
    return torch


def epoch_order(rows: int, seed: int, epoch: int) -> I64:
    """The row order of epoch ``epoch`` (0-based) of
    ``DataLoader(shuffle=True, generator=torch.Generator().manual_seed(seed))``, every earlier
    epoch read to its end.

    Raises:
        UsageError: torch is not installed.
    """
    torch = _torch()
    g = torch.Generator()
    g.manual_seed(seed)
    order = None
    for e in range(epoch + 1):
        torch.empty((), dtype=torch.int64).random_(generator=g)  # the iterator's base seed
        order = torch.randperm(rows, generator=g)
        if e < epoch:
            torch.randperm(rows, generator=g)  # the empty remainder, drawn at the epoch's end
    assert order is not None
    found: I64 = order.numpy().astype(np.int64)
    return found


def distributed_indices(
    rows: int,
    world_size: int,
    rank: int,
    *,
    shuffle: bool,
    seed: int,
    epoch: int,
    drop_last: bool,
) -> I64:
    """The indices ``DistributedSampler`` gives rank ``rank`` of ``world_size`` in ``epoch``.

    Raises:
        UsageError: a rank outside ``[0, world_size)``, or shuffling without torch.
    """
    if not 0 <= rank < world_size:
        raise UsageError(f"rank {rank!r} is not in [0, {world_size}) for --world-size {world_size}")
    if drop_last and rows % world_size:
        per_rank = -(-(rows - world_size) // world_size)
    else:
        per_rank = -(-rows // world_size)
    total = per_rank * world_size
    if shuffle:
        torch = _torch()
        g = torch.Generator()
        g.manual_seed(seed + epoch)
        indices: I64 = torch.randperm(rows, generator=g).numpy().astype(np.int64)
    else:
        indices = np.arange(rows, dtype=np.int64)
    if rows == 0:
        return indices
    if not drop_last:
        padding = total - rows
        if padding:
            reps = -(-padding // rows)
            indices = np.concatenate([indices, np.tile(indices, reps)[:padding]])
    else:
        indices = indices[:total]
    picked: I64 = indices[rank:total:world_size]
    return picked


@dataclass(frozen=True, slots=True)
class LoaderSpec:
    """A DataLoader's batching, as far as it decides which rows make each batch.

    Attributes:
        batch_size: rows per batch (per rank).
        drop_last: the DataLoader's ``drop_last``.
        shuffle_seed: ``None`` for sequential order, else the seed of the loader's generator
            (one process) or of ``DistributedSampler(seed=...)`` (several).
        world_size: processes, each with a ``DistributedSampler`` when above 1.
        sampler_drop_last: ``DistributedSampler(drop_last=...)`` (default False: padding).
        grad_accum: micro-batches per optimizer step.
    """

    batch_size: int
    drop_last: bool = False
    shuffle_seed: int | None = None
    world_size: int = 1
    sampler_drop_last: bool = False
    grad_accum: int = 1

    def __post_init__(self) -> None:
        for name in ("batch_size", "world_size", "grad_accum"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise UsageError(f"{name} must be a positive integer, got {value!r}")

    def order(self, rows: int, *, epoch: int, rank: int) -> I64:
        """The row indices rank ``rank`` reads in ``epoch``, in order."""
        if self.world_size > 1:
            return distributed_indices(
                rows,
                self.world_size,
                rank,
                shuffle=self.shuffle_seed is not None,
                seed=self.shuffle_seed or 0,
                epoch=epoch,
                drop_last=self.sampler_drop_last,
            )
        if rank != 0:
            raise UsageError(f"rank {rank!r} with a world size of 1")
        if self.shuffle_seed is None:
            return np.arange(rows, dtype=np.int64)
        return epoch_order(rows, self.shuffle_seed, epoch)

    def per_rank(self, rows: int) -> int:
        """Rows each rank reads per epoch."""
        if self.world_size == 1:
            return rows
        if self.sampler_drop_last and rows % self.world_size:
            return -(-(rows - self.world_size) // self.world_size)
        return -(-rows // self.world_size)

    def batches_per_epoch(self, rows: int) -> int:
        """Batches each rank's DataLoader yields per epoch."""
        n = self.per_rank(rows)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def steps_per_epoch(self, rows: int) -> int:
        """Optimizer steps per epoch: the last one takes the micro-batches left over."""
        return -(-self.batches_per_epoch(rows) // self.grad_accum)

    def batch_rows(self, rows: int, *, epoch: int, rank: int, batch: int) -> I64:
        """The row indices of batch ``batch`` (0-based, within the epoch) on ``rank``.

        Raises:
            UsageError: the epoch has no such batch.
        """
        count = self.batches_per_epoch(rows)
        if not 0 <= batch < count:
            raise UsageError(
                f"batch {batch} is past the epoch's {count} batches of {self.batch_size} "
                f"({rows} rows, world size {self.world_size}): check --batch-size, "
                "--world-size, --grad-accum and the step"
            )
        order = self.order(rows, epoch=epoch, rank=rank)
        return order[batch * self.batch_size : (batch + 1) * self.batch_size]
