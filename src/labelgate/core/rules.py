"""The one judge of class-index targets: PyTorch's rule, written once.

A target is **usable** when it is an integer in ``[0, K)`` other than ``ignore_index``; **ignored**
when it equals ``ignore_index`` (skipped *before* the range check, as ``cross_entropy`` does);
otherwise rejected: negative (LG005), too large (LG004), null (LG003) or not an integer (LG002).
An ``ignore_index`` inside ``[0, K)`` silently removes a real class (LG006).

``masks`` uses only ``==``, ``<``, ``>=``, ``&`` and ``~``, so the same function judges numpy
arrays (the scanners), pandas Series (the pandera engine) and torch tensors (the training guard and
the smoke replay). ``not_usable`` is the scanners' fast path for the same rule, held equal to
``judge`` by a test.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, NamedTuple, TypeVar

import numpy as np
import numpy.typing as npt

from labelgate.core.codes import Code

__all__ = [
    "Masks",
    "Status",
    "code_of",
    "failing_codes",
    "ignore_inside",
    "judge",
    "judge_one",
    "masks",
    "not_usable",
]

A = TypeVar("A")
I64 = npt.NDArray[np.int64]
U8 = npt.NDArray[np.uint8]
Bools = npt.NDArray[np.bool_]


class Status:
    """Status of one target value; higher values win when a token row is summarised."""

    USABLE = 0
    IGNORED = 1
    HIGH = 2  # >= K: LG004
    NEGATIVE = 3  # < 0 and not ignore_index: LG005
    NULL = 4  # LG003
    BAD_TYPE = 5  # not an integer: LG002
    NOT_A_DISTRIBUTION = 6  # a soft-label row that is not K probabilities summing to 1: LG015
    COUNT = 7

    CODES: ClassVar[dict[int, Code]] = {
        HIGH: "LG004",
        NEGATIVE: "LG005",
        NULL: "LG003",
        BAD_TYPE: "LG002",
        NOT_A_DISTRIBUTION: "LG015",
    }


class Masks(NamedTuple):
    """Which targets are ignored, negative (and not ignored), and too large (and not ignored)."""

    ignored: Any
    negative: Any
    high: Any

    @property
    def rejected(self) -> Any:
        """Targets that make the loss raise."""
        return self.negative | self.high

    @property
    def usable(self) -> Any:
        """Targets the loss uses."""
        return ~(self.ignored | self.negative | self.high)


def ignore_inside(num_classes: int, ignore_index: int) -> bool:
    """Whether ``ignore_index`` lies inside ``[0, K)``, where it would drop a real class (LG006)."""
    return 0 <= ignore_index < num_classes


def masks(values: A, num_classes: int, ignore_index: int) -> Masks:
    """Judge integer targets of any array type (numpy, pandas, torch) by PyTorch's rule."""
    v: Any = values
    ignored = v == ignore_index
    return Masks(ignored, ~ignored & (v < 0), ~ignored & (v >= num_classes))


def judge(values: I64, num_classes: int, ignore_index: int, *, null: Bools | None = None) -> U8:
    """A ``Status`` per int64 target (``null`` marks targets that have none)."""
    m = masks(values, num_classes, ignore_index)
    status = np.zeros(len(values), np.uint8)
    status[m.ignored] = Status.IGNORED
    status[m.negative] = Status.NEGATIVE
    status[m.high] = Status.HIGH
    if null is not None:
        status[null] = Status.NULL
    return status


def judge_one(value: int | None, num_classes: int, ignore_index: int) -> int:
    """The ``Status`` of one target (``None``: null)."""
    if value is None:
        return Status.NULL
    return int(judge(np.array([value], np.int64), num_classes, ignore_index)[0])


def code_of(value: Any, num_classes: int, ignore_index: int) -> Code | None:
    """The check code one target as a row-level engine reports it fails (``None``: it passes):
    LG003 null, LG002 not a whole number, else by ``judge``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "LG003"
    v = float(value)
    if not math.isfinite(v) or v != math.floor(v) or abs(v) >= 2.0**63:
        return "LG002"
    return failing_codes(num_classes, ignore_index).get(
        judge_one(int(v), num_classes, ignore_index)
    )


def not_usable(
    values: I64, num_classes: int, ignore_index: int, out: Bools, *, null: Bools | None = None
) -> Bools | None:
    """``judge(...) != USABLE`` in one pass, written into ``out``; ``None`` when all are usable.

    A negative value viewed as uint64 is past every K, so one comparison finds both the negative
    and the too large targets (an ignore_index outside ``[0, K)`` is among them: not usable).
    """
    bad = np.greater_equal(values.view(np.uint64), np.uint64(num_classes), out=out)
    if ignore_inside(num_classes, ignore_index):
        bad |= values == ignore_index
    if null is not None:
        bad |= null
    return bad if bad.any() else None


def failing_codes(num_classes: int, ignore_index: int) -> dict[int, Code]:
    """Status -> the check code its targets fail; ignored targets fail LG006 when ignore_index
    lies inside ``[0, K)``."""
    codes = dict(Status.CODES)
    if ignore_inside(num_classes, ignore_index):
        codes[Status.IGNORED] = "LG006"
    return codes
