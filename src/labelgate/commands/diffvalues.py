"""What `diff` compares: values, not their spellings in one format or another.

A CSV holds every cell as text, a Parquet file as its type: ``"0"`` and ``0`` are one label, and
``"17"`` and ``17`` one id. Class maps are compared where both revisions have one; a revision
whose map comes from its data (its (label, name) pairs) says nothing of a class it has no row of.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from labelgate.checks.context import Context

__all__ = ["ClassNames", "class_names", "comparable", "same_maps"]

_INTEGER = re.compile(r"^[+-]?\d{1,18}$")
_DECIMAL = re.compile(r"^[+-]?\d{1,18}\.0*$")


def comparable(value: Any) -> Any:
    """``value`` as its type: integers written as text (``" 3"``, ``"3.0"``) and integral floats
    are ints; other text is stripped; lists are compared element by element."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        text = value.strip()
        if _INTEGER.match(text):
            return int(text)
        if _DECIMAL.match(text):
            return int(text.split(".")[0])
        return text
    if isinstance(value, list | tuple):
        return tuple(comparable(v) for v in value)
    return value


@dataclass(frozen=True, slots=True)
class ClassNames:
    """A revision's class map: index -> name, and whether it was declared (a class-names file,
    the contract, a reader's categories) or read from the data's (label, name) pairs."""

    names: dict[int, str]
    declared: bool


def class_names(ctx: Context) -> ClassNames:
    """Index -> name for a revision: its class map, else its (label, name) pairs."""
    if ctx.contract.class_map is not None:
        return ClassNames(dict(ctx.contract.class_map.name_of()), declared=True)
    return ClassNames(dict(ctx.names_seen), declared=False)


def same_maps(base: ClassNames, head: ClassNames) -> tuple[ClassNames, ClassNames]:
    """The maps to compare: a revision with none (no class map, no name column) is read through
    the other's, so a name column present on one side only is no change of the map."""
    if not head.names:
        return base, base
    if not base.names:
        return head, head
    return base, head
