"""Per-row verdicts for the batches of every rank: one more pass over the label column, kept
only when the contract's batching has several ranks or accumulated steps (``Batching.distributed``).

The scan sums its verdicts per single-process batch; a rank's batches take every W-th row of a
padded (or shuffled) order, so they are judged from one flag per row instead: whether the row
holds a usable target, and whether it holds one that makes the loss raise.
"""

from __future__ import annotations

import numpy as np

from labelgate.core.labels import classify
from labelgate.core.rules import Status
from labelgate.inputs.dataset import Dataset
from labelgate.training.loaderorder import LoaderSpec
from labelgate.training.ranks import RankVerdict, judge_ranks

__all__ = ["RANK_TASKS", "judge_data_ranks"]

RANK_TASKS = ("multiclass", "tokens", "segmentation")  # where a batch can have no usable target


def judge_data_ranks(data: Dataset) -> RankVerdict | None:
    """Every rank's batches of the first epoch judged, or ``None`` for a task whose batches are
    never empty of targets (soft, multilabel) or a batching of one process without accumulation.
    """
    contract, b = data.contract, data.contract.batching
    if not b.distributed or data.task not in RANK_TASKS:
        return None
    weights = None
    if contract.class_weights is not None:
        weights = np.asarray(contract.class_weights, dtype=np.float64) > 0
    live_parts: list[np.ndarray] = []
    rejected_parts: list[np.ndarray] = []
    for _, _, chunk in data.chunks([data.columns.label]):
        c = classify(
            chunk.column(data.columns.label), num_classes=data.k, ignore_index=contract.ignore_index
        )
        n = chunk.num_rows
        usable = c.status == Status.USABLE
        if weights is not None:
            usable &= weights[np.where(usable, c.values, 0)]
        bad = c.status > Status.IGNORED
        if c.row_of is None:
            live_parts.append(usable)
            rejected_parts.append(bad)
        else:
            live_parts.append(np.bincount(c.row_of[usable], minlength=n)[:n] > 0)
            rejected_parts.append(np.bincount(c.row_of[bad], minlength=n)[:n] > 0)
    empty = np.zeros(0, dtype=bool)
    live = np.concatenate(live_parts) if live_parts else empty
    rejected = np.concatenate(rejected_parts) if rejected_parts else empty
    spec = LoaderSpec(
        batch_size=b.size,
        drop_last=b.drop_last,
        shuffle_seed=b.shuffle_seed,
        world_size=b.world_size,
        sampler_drop_last=b.sampler_drop_last,
        grad_accum=b.grad_accum,
    )
    return judge_ranks(live, rejected, spec)
