"""The bounds of every number a contract (or a flag) gives, and the check that holds a value to
them."""

from __future__ import annotations

from labelgate.errors import ContractError

__all__ = ["INT64", "LIMITS", "bounded"]

INT64 = (-(2**63), 2**63 - 1)
# The bounds of every number a contract (or a flag) gives: K up to a vocabulary's size and more,
# counts and seeds within int64, a batch within what a DataLoader can hold.
LIMITS: dict[str, tuple[int, int]] = {
    "num_classes": (1, 10_000_000),
    "ignore_index": INT64,
    "background_index": INT64,
    "batching.size": (1, 2**31 - 1),
    "batching.shuffle_seed": (0, 2**63 - 1),
    "batching.world_size": (1, 65_536),
    "batching.grad_accum": (1, 1_048_576),
    "expected_rows": (0, 2**63 - 1),
}


def bounded(value: object, key: str, *, optional: bool = True) -> None:
    """Refuse ``value`` unless it is an integer within ``LIMITS[key]`` (``None`` if optional).

    Raises:
        ContractError: naming ``key``, the bounds and the value.
    """
    if value is None and optional:
        return
    lo, hi = LIMITS[key]
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        wanted = {1: "a positive integer", 0: "0 or a positive integer"}.get(lo)
        bounds = f"{wanted} (at most {hi:,})" if wanted else f"an integer from {lo:,} to {hi:,}"
        raise ContractError(f"must be {bounds}, got {shown}", key=key)
