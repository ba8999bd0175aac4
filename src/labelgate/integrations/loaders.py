"""What a real DataLoader decides about its batches, read from the loader itself: batch size,
``drop_last`` and the sampler, as ``labelgate.validate``'s batching options.

torch's own classes (``torch/utils/data/sampler.py``, ``distributed.py``, ``dataloader.py``):

- ``SequentialSampler``: file order;
- ``RandomSampler``: replayed exactly when the DataLoader and its sampler share one generator
  seeded and not yet drawn from, as ``DataLoader(shuffle=True, generator=g)`` makes them (the
  iterator draws its workers' base seed from ``loader.generator`` before the sampler's
  ``randperm``); without a generator the order comes from torch's global RNG and cannot be
  replayed: the batches are judged in file order and a note says so;
- ``DistributedSampler``: ``num_replicas``, ``shuffle``, ``seed`` and ``drop_last``, replayed for
  every rank (``labelgate.training.ranks``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["LoaderBatching", "read_loader"]


@dataclass(slots=True)
class LoaderBatching:
    """A loader's batching as validate options, and what could not be replayed.

    Attributes:
        options: ``batch_size``, ``drop_last``, ``shuffle_seed``, ``world_size``,
            ``sampler_drop_last`` where the loader says them.
        notes: what was read from where, and what could not be replayed.
    """

    options: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def read_loader(loader: Any, name: str) -> LoaderBatching:
    """Read the batching of a ``torch.utils.data.DataLoader`` (anything else: nothing read)."""
    from torch.utils.data import DistributedSampler, RandomSampler, SequentialSampler

    found = LoaderBatching()
    size = getattr(loader, "batch_size", None)
    batch_sampler = getattr(loader, "batch_sampler", None)
    if size is None and batch_sampler is not None:
        size = getattr(batch_sampler, "batch_size", None)
    if isinstance(size, int) and size > 0:
        found.options["batch_size"] = size
    drop_last = getattr(loader, "drop_last", None)
    if drop_last is None and batch_sampler is not None:
        drop_last = getattr(batch_sampler, "drop_last", None)
    if isinstance(drop_last, bool):
        found.options["drop_last"] = drop_last
    sampler = getattr(loader, "sampler", None)
    if isinstance(sampler, DistributedSampler):
        found.options["world_size"] = int(sampler.num_replicas)
        found.options["sampler_drop_last"] = bool(sampler.drop_last)
        if sampler.shuffle:
            found.options["shuffle_seed"] = int(sampler.seed)
        found.notes.append(
            f"{name}: DistributedSampler(num_replicas={sampler.num_replicas}, "
            f"shuffle={sampler.shuffle}, seed={sampler.seed}, drop_last={sampler.drop_last}): "
            "every rank's batches of the first epoch judged"
        )
    elif isinstance(sampler, RandomSampler):
        generator: Any = sampler.generator
        own: Any = getattr(loader, "generator", None)
        if generator is not None and own is generator:
            seed = int(own.initial_seed())
            found.options["shuffle_seed"] = seed
            found.notes.append(
                f"{name}: RandomSampler with the loader's generator, seed {seed}: its first epoch "
                "replayed"
            )
        else:
            found.notes.append(
                f"{name}: RandomSampler without the loader's own seeded generator: its order "
                "comes from torch's global RNG and cannot be replayed; batches judged in file "
                "order (pass DataLoader(generator=torch.Generator().manual_seed(S)) to replay it)"
            )
    elif sampler is not None and not isinstance(sampler, SequentialSampler):
        found.notes.append(
            f"{name}: sampler {type(sampler).__name__} is not replayed; batches judged in file order"
        )
    return found
