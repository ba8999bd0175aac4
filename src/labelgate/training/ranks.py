"""The batches every rank trains on, and which of them (or which optimizer steps) have no usable
target: ``DistributedSampler`` and gradient accumulation replayed over per-row verdicts.

With ``DistributedSampler`` each of W ranks reads every W-th index of the (shuffled, padded)
order, so a rank can get a batch whose every target is ignored while every single-process batch
holds one: NaN on that rank, then a NaN all-reduce for all. What a NaN is depends on what the
mean loss divides by (``normalize``):

- ``batch``: each micro-batch's own usable targets (``CrossEntropyLoss(reduction='mean')``, as
  Lightning and plain PyTorch loops compute it): a micro-batch with none is 0/0;
- ``step``: the usable targets of the whole optimizer step, summed over its micro-batches and
  (``average_tokens_across_devices=True``, the default) over the ranks: transformers'
  ``num_items_in_batch`` (``Trainer._get_num_items_in_batch``, ``fixed_cross_entropy`` with
  ``reduction='sum'``). A micro-batch with none then adds 0 to the sum and is harmless; a step
  with none anywhere is 0/0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from labelgate.training.loaderorder import LoaderSpec

__all__ = ["RankBatch", "RankVerdict", "judge_ranks", "rank_batches"]

I64 = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]
SHOWN_ROWS = 8


def rank_batches(rows: int, spec: LoaderSpec, rank: int, *, epoch: int = 0) -> list[I64]:
    """The row indices of each batch rank ``rank`` reads in ``epoch``, in order (the DataLoader's
    ``drop_last`` applied)."""
    order = spec.order(rows, epoch=epoch, rank=rank)
    count = spec.batches_per_epoch(rows)
    size = spec.batch_size
    return [order[b * size : (b + 1) * size] for b in range(count)]


@dataclass(frozen=True, slots=True)
class RankBatch:
    """A batch of one rank with no usable target.

    Attributes:
        rank: the process.
        batch: the batch's index within the rank's epoch (from 0).
        step: the optimizer step it belongs to (``batch // grad_accum``).
        rows: the batch's row positions, in the order the DataLoader takes them (the first
            ``SHOWN_ROWS``).
        size: rows in the batch.
    """

    rank: int
    batch: int
    step: int
    rows: tuple[int, ...]
    size: int


@dataclass(frozen=True, slots=True)
class RankVerdict:
    """Every rank's batches of the first epoch, judged.

    Attributes:
        spec: the loader replayed.
        rows: rows in the data.
        batches: batches each rank reads per epoch.
        empty: micro-batches with no usable target and nothing that makes the loss raise.
        empty_steps: optimizer steps with no usable target on any rank in any of their
            micro-batches (NaN under either normalisation).
        padded: rows ``DistributedSampler`` repeats to pad the epoch to a multiple of W.
        cut: rows it leaves out with ``drop_last=True``.
    """

    spec: LoaderSpec
    rows: int
    batches: int
    empty: tuple[RankBatch, ...]
    empty_steps: tuple[int, ...]
    padded: int
    cut: int


def judge_ranks(live: Bools, rejected: Bools, spec: LoaderSpec, *, epoch: int = 0) -> RankVerdict:
    """Judge every rank's batches.

    Args:
        live: per row, whether it holds a usable target (of non-zero class weight, if weighted).
        rejected: per row, whether it holds a target that makes the loss raise (that batch
            crashes rather than returning NaN, and is another check's finding).
        spec: the DataLoader and sampler.
        epoch: the epoch whose order is replayed (the shuffle differs per epoch).

    Returns:
        The verdict: which micro-batches and steps have no usable target.
    """
    rows = len(live)
    per_rank = spec.per_rank(rows)
    total = per_rank * spec.world_size
    empty: list[RankBatch] = []
    step_live = np.zeros(-(-spec.batches_per_epoch(rows) // spec.grad_accum), dtype=bool)
    step_rejected = np.zeros_like(step_live)
    for rank in range(spec.world_size):
        for b, idx in enumerate(rank_batches(rows, spec, rank, epoch=epoch)):
            has_live, has_rejected = bool(live[idx].any()), bool(rejected[idx].any())
            step = b // spec.grad_accum
            step_live[step] |= has_live
            step_rejected[step] |= has_rejected
            if not has_live and not has_rejected:
                shown = tuple(int(r) for r in idx[:SHOWN_ROWS])
                empty.append(RankBatch(rank, b, step, shown, len(idx)))
    steps = tuple(int(s) for s in np.flatnonzero(~step_live & ~step_rejected))
    return RankVerdict(
        spec=spec,
        rows=rows,
        batches=spec.batches_per_epoch(rows),
        empty=tuple(empty),
        empty_steps=steps,
        padded=max(0, total - rows),
        cut=max(0, rows - total),
    )
