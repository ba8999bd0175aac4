"""What labelgate fix is told and what it reports: its options, each source's fix, the result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from labelgate.core.report import Report

if TYPE_CHECKING:
    pass

__all__ = ["IGNORE", "REASON", "ROW", "FixOptions", "FixResult", "SourceFix"]

REASON, ROW = "labelgate_reason", "labelgate_row"
IGNORE = None  # a value map's target meaning "the contract's ignore_index"
I64 = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class FixOptions:
    """What the user allows ``fix`` to do.

    Attributes:
        out: the fixed file (Parquet).
        quarantine: where rows that cannot be fixed go (Parquet), unchanged, with a reason.
        shifts: source name -> shift to add, given explicitly (``*`` for an input with no source
            column); needed for a source whose shift no name column proves.
        value_maps: value -> new value, ``None`` meaning the ignore_index (``--map-value -1=ignore``).
        drop_ignored: quarantine rows with no usable target (LG007's fix).
        in_place: allow ``out`` to be the input (written atomically).
        blank: for multi-hot targets, what a blank (null or NaN) becomes: 0, 1 or ``"ignore"``
            (``--map-value blank=0``); ``None`` leaves it (and its row is quarantined).
    """

    out: str
    quarantine: str | None = None
    shifts: dict[str, int] = field(default_factory=dict)
    value_maps: dict[int, int | None] = field(default_factory=dict)
    drop_ignored: bool = False
    in_place: bool = False
    blank: int | str | None = None


@dataclass(slots=True)
class SourceFix:
    """What happens to one source's rows."""

    name: str
    action: str
    rows: int
    shift: int | None = None
    remap: dict[str, int] | None = None
    changed: int = 0
    pending: str | None = None  # a finding that stands unaddressed: the flag that would address it
    index_remap: dict[int, int] | None = None  # given class -> class, proven by predictions
    kind: str | None = None  # the index remap's kind (permutation, swapped pair, shift by one)


@dataclass(slots=True)
class FixResult:
    """The fix log: every input row accounted for.

    Attributes:
        rows_in, rows_fixed, rows_quarantined: rows read, written to the fixed file, quarantined.
        sources: per source, the action taken and the rows it changed.
        value_maps: per value map, the targets it rewrote.
        quarantined: check code -> rows quarantined for it.
        after: the fixed file's validation report.
        remap_table: the remap table written beside the output, if any source was remapped.
        class_map: the class map written beside the output, where no file of the user's gives
            it as ``--class-names`` reads it (a map the input itself held).
    """

    rows_in: int
    rows_fixed: int
    rows_quarantined: int
    sources: list[SourceFix]
    value_maps: dict[str, int]
    quarantined: dict[str, int]
    output: str
    quarantine: str | None
    after: Report | None = None
    remap_table: str | None = None
    class_map: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The fix log as plain data."""
        return {
            "schema_version": 1,
            "rows": {
                "in": self.rows_in,
                "fixed": self.rows_fixed,
                "quarantined": self.rows_quarantined,
            },
            "output": self.output,
            "quarantine": self.quarantine,
            "remap_table": self.remap_table,
            "class_map": self.class_map,
            "sources": [
                {
                    "source": s.name,
                    "action": s.action,
                    "rows": s.rows,
                    "changed": s.changed,
                    "shift": s.shift,
                    "remap": s.remap,
                    "index_remap": None
                    if s.index_remap is None
                    else {str(g): t for g, t in sorted(s.index_remap.items())},
                }
                for s in self.sources
            ],
            "value_maps": self.value_maps,
            "quarantined": self.quarantined,
            "after": None
            if self.after is None
            else {
                "status": self.after.status,
                "findings": [
                    {"code": f.code, "severity": f.severity, "count": f.count}
                    for f in self.after.findings
                ],
            },
        }
