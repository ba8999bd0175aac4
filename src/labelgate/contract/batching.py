"""The contract's batching: how a DataLoader, its sampler and the processes form the batches."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from labelgate.contract.bounds import bounded
from labelgate.errors import ContractError

__all__ = ["NORMALIZE", "Batching"]

NORMALIZE = ("batch", "step")


@dataclass(frozen=True, slots=True)
class Batching:
    """How training batches are formed, as a ``DataLoader`` would form them.

    Attributes:
        size: rows per batch.
        drop_last: whether an incomplete last batch is dropped.
        shuffle_seed: ``None`` for file order; else the seed of
            ``DataLoader(shuffle=True, generator=torch.Generator().manual_seed(seed))``, or with
            ``world_size`` above 1 of ``DistributedSampler(shuffle=True, seed=seed)``.
        world_size: processes, each reading its share through a ``DistributedSampler``.
        grad_accum: micro-batches per optimizer step.
        sampler_drop_last: ``DistributedSampler(drop_last=True)``: the data cut to a multiple of
            ``world_size`` instead of padded by repeating its first rows.
        normalize: what the mean loss divides by: ``batch`` (each micro-batch's own usable
            targets: ``CrossEntropyLoss(reduction='mean')``, Lightning) or ``step`` (the usable
            targets of the whole optimizer step on every rank: transformers'
            ``num_items_in_batch``).
    """

    size: int = 32
    drop_last: bool = False
    shuffle_seed: int | None = None
    world_size: int = 1
    grad_accum: int = 1
    sampler_drop_last: bool = False
    normalize: str = "batch"

    def __post_init__(self) -> None:
        bounded(self.size, "batching.size", optional=False)
        bounded(self.shuffle_seed, "batching.shuffle_seed")
        bounded(self.world_size, "batching.world_size", optional=False)
        bounded(self.grad_accum, "batching.grad_accum", optional=False)
        if self.normalize not in NORMALIZE:
            raise ContractError(
                f"must be one of {', '.join(NORMALIZE)}, got {self.normalize!r}",
                key="batching.normalize",
            )

    @property
    def distributed(self) -> bool:
        """Whether batches differ from one process's: several ranks, or accumulated steps."""
        return self.world_size > 1 or self.grad_accum > 1

    def to_dict(self) -> dict[str, Any]:
        """The batching as plain data, for reports."""
        return {
            "size": self.size,
            "drop_last": self.drop_last,
            "shuffle_seed": self.shuffle_seed,
            "world_size": self.world_size,
            "grad_accum": self.grad_accum,
            "sampler_drop_last": self.sampler_drop_last,
            "normalize": self.normalize,
        }
