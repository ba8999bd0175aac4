"""The indices of ``0..K-1`` outside a set, counted and named without building K of them."""

from __future__ import annotations

__all__ = ["absent_of"]


def absent_of(k: int, held: set[int] | frozenset[int], first: int = 10) -> tuple[int, list[int]]:
    """The indices of ``0..k-1`` not in ``held``: how many, and the first ``first`` of them.

    K is input (a flag, a contract: it may be 2**31), so this takes at most
    ``first + len(held)`` steps, never K.

    Args:
        k: the number of classes.
        held: indices to leave out (those outside ``0..k-1`` are ignored).
        first: how many of the others to name.

    Returns:
        How many indices of ``0..k-1`` are not in ``held``, and the first ``first`` of them.
    """
    inside = {i for i in held if 0 <= i < k}
    named: list[int] = []
    i = 0
    while len(named) < first and i < k:
        if i not in inside:
            named.append(i)
        i += 1
    return k - len(inside), named
