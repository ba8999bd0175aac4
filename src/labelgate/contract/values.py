"""The contract's value tables: colours of a colour mask's classes, and value maps (Cityscapes'
labelId -> trainId among them), each checked where it is read."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from labelgate.errors import ContractError

__all__ = [
    "CITYSCAPES_IGNORE",
    "CITYSCAPES_TRAIN_IDS",
    "VALUE_TABLES",
    "cityscapes_value_map",
    "color_map",
    "value_map",
]


def color_map(value: dict[Any, Any] | list[Any] | None) -> Mapping[int, int] | None:
    """``{index: [r, g, b] or "#rrggbb"}`` (or a list of colours by index) as colour -> index.

    Raises:
        ContractError: a colour or index is malformed, or two classes share a colour.
    """
    if value is None:
        return None
    pairs = list(enumerate(value)) if isinstance(value, list) else list(value.items())
    out: dict[int, int] = {}
    for index, colour in pairs:
        key = f"color_map.{index}"
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise ContractError(f"class indices are integers 0 or more, got {index!r}", key=key)
        packed = _colour(colour, key)
        if packed in out:
            raise ContractError(
                f"colour #{packed:06x} is also class {out[packed]}: one colour, one class", key=key
            )
        out[packed] = index
    return MappingProxyType(out)


def _colour(colour: Any, key: str) -> int:
    if isinstance(colour, str) and len(colour) == 7 and colour.startswith("#"):
        try:
            return int(colour[1:], 16)
        except ValueError:
            pass
    elif (
        isinstance(colour, list)
        and len(colour) == 3
        and all(isinstance(c, int) and not isinstance(c, bool) and 0 <= c <= 255 for c in colour)
    ):
        return int((colour[0] << 16) | (colour[1] << 8) | colour[2])
    raise ContractError(f"a colour is [r, g, b] (0..255) or '#rrggbb', got {colour!r}", key=key)


VALUE_TABLES = ("cityscapes",)
# Cityscapes labelId -> trainId (cityscapesScripts' labels.py); every other id is 255 (ignore).
CITYSCAPES_TRAIN_IDS: Mapping[int, int] = MappingProxyType(
    {7: 0, 8: 1, 11: 2, 12: 3, 13: 4, 17: 5, 19: 6, 20: 7, 21: 8, 22: 9, 23: 10, 24: 11, 25: 12}
    | {26: 13, 27: 14, 28: 15, 31: 16, 32: 17, 33: 18}
)
CITYSCAPES_IGNORE = 255


def cityscapes_value_map() -> dict[int, int]:
    """The labelId -> trainId table for ids -1..33 (the unlisted ones to 255)."""
    return {i: CITYSCAPES_TRAIN_IDS.get(i, CITYSCAPES_IGNORE) for i in range(-1, 34)}


def value_map(value: dict[Any, Any] | str | None) -> Mapping[int, int | None] | None:
    """``{value: new value or "ignore"}``, or a named table (``cityscapes``: labelId -> trainId,
    every other id to 255).

    Raises:
        ContractError: a value is not an integer, or the table is unknown.
    """
    if value is None:
        return None
    if isinstance(value, str):
        if value != "cityscapes":
            raise ContractError(
                f"a named table is one of {', '.join(VALUE_TABLES)}, got {value!r}", key="value_map"
            )
        return MappingProxyType(dict(cityscapes_value_map()))
    out: dict[int, int | None] = {}
    for old, new in value.items():
        ok_old = isinstance(old, int) and not isinstance(old, bool)
        ok_new = new == "ignore" or (isinstance(new, int) and not isinstance(new, bool))
        if not ok_old or not ok_new:
            raise ContractError(
                f"a mapping of integer values to integers or 'ignore', got {old!r}: {new!r}",
                key=f"value_map.{old}",
            )
        out[old] = None if new == "ignore" else new
    return MappingProxyType(out)
