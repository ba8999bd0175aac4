"""The report: findings with stable codes, counts, and the context a reader needs. Values, not output."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from labelgate.core.drawing import Drawing
from labelgate.errors import LabelError

__all__ = [
    "BATCHES_LISTED",
    "SCHEMA_VERSION",
    "Example",
    "Finding",
    "Report",
    "json_default",
    "listed",
    "shown_batches",
]

SCHEMA_VERSION = 1
# Batch indices a list of the JSON document holds unless every batch is asked for
# (``--all-batches``); its count is always given, so a trimmed list says how much it leaves out.
BATCHES_LISTED = 1000
SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


@dataclass(frozen=True, slots=True)
class Example:
    """One offending row, named by position and id, never by its other content.

    Attributes:
        row: 0-based row position in reading order (across all input files).
        id: the row's id, where an id column exists.
        batch: the batch the row lands in (``None`` when drop_last drops it, or not row-level).
        source: the row's source, where a source column exists.
        value: the offending label value as written.
        position: for token targets, the token's index within the row; for a keypoint
            finding (``unit`` ``keypoints``), the keypoint's 0-based index in its annotation.
        file, file_row: for inputs of several files, the file holding the row and the row's
            position within it.
        pixels: for a segmentation mask (a row), how many of its pixels hold ``value``.
        drawing: the annotation's shape and image, for the HTML report's pictures
            (``labelgate.core.drawing``).
    """

    row: int
    id: Any = None
    batch: int | None = None
    source: str | None = None
    value: Any = None
    position: int | None = None
    file: str | None = None
    file_row: int | None = None
    pixels: int | None = None
    drawing: Drawing | None = None

    def __post_init__(self) -> None:
        if isinstance(self.id, bytes):  # a binary id: as a UUID when it has 16 bytes, else hex
            object.__setattr__(self, "id", _binary_id(self.id))

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON; ``position`` only for token targets and keypoints."""
        out: dict[str, Any] = {
            "row": self.row,
            "id": self.id,
            "batch": self.batch,
            "source": self.source,
            "value": self.value,
        }
        if self.position is not None:
            out["position"] = self.position
        if self.pixels is not None:
            out["pixels"] = self.pixels
        if self.file is not None:
            out["file"] = self.file
            out["file_row"] = self.file_row
        if self.drawing is not None:
            out["drawing"] = self.drawing.to_dict()
        return out


def _binary_id(value: bytes) -> str:
    if len(value) == 16:
        import uuid

        return str(uuid.UUID(bytes=value))
    return value.hex()


@dataclass(frozen=True, slots=True)
class Finding:
    """A failed check.

    Attributes:
        code: the stable check code (``LG004``).
        severity: ``"error"``, ``"warning"`` or ``"info"``.
        count: how many rows (or batches, or map entries: see ``unit``) are affected.
        message: what was found, with the evidence.
        fix: what to do about it, in words.
        unit: what ``count`` counts: ``"rows"``, ``"tokens"``, ``"batches"``, ``"entries"``,
            ``"classes"``, ``"sources"``, ``"file"`` or ``"keypoints"``.
        examples: the first offending rows.
        batches: every batch index concerned, where the check is about batches, in order (the
            JSON document lists the first ``BATCHES_LISTED`` of them, and ``batch_count``).
        details: further evidence as plain data.
    """

    code: str
    severity: str
    count: int
    message: str
    fix: str = ""
    unit: str = "rows"
    examples: tuple[Example, ...] = ()
    batches: tuple[int, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self, *, all_batches: bool = False) -> dict[str, Any]:
        """Plain data for JSON: the first ``BATCHES_LISTED`` batches (every one with
        ``all_batches``) and ``batch_count``, how many there are in all."""
        return {
            "code": self.code,
            "severity": self.severity,
            "count": self.count,
            "unit": self.unit,
            "message": self.message,
            "fix": self.fix,
            "examples": [e.to_dict() for e in self.examples],
            "batches": listed(self.batches, all_batches),
            "batch_count": len(self.batches),
            "details": self.details,
        }


@dataclass(frozen=True, slots=True)
class Report:
    """The outcome of one validation.

    Attributes:
        findings: every failed check, errors first.
        counts: ``rows``, ``usable``, ``ignored``, ``rejected`` (rows = usable + ignored + rejected).
        input: paths, sizes, row counts, row groups, content hashes, label dtype.
        environment: labelgate, Python, pyarrow, numpy and torch versions, backend, code revision.
        contract: the contract actually applied, detected columns included.
        batches: the batch simulation's summary; ``failing`` holds every failing batch (the
            JSON document lists the first ``BATCHES_LISTED``, and ``failing_count``).
        sources: per-source table.
        classes: per-class table (above ``DENSE_LIMIT`` classes, those present or named).
        classes_omitted: where the class table leaves classes out, how many (``count``) and the
            first one's index (``first``); ``None`` where it lists every class.
        notes: remarks that are not findings (detected columns, dtype casts).
        strict: whether warnings fail the run.
        diff: for ``labelgate diff``, the comparison with the base revision.
        frameworks: for a detection input judged with no framework named, what each framework
            would need and do with it (``labelgate.run.readings.Reading.to_dict``).
        cache: with ``--cache``, the files read and those whose partial came from the cache
            (``labelgate.run.cache.FileCache.summary``).
        all_batches: whether the JSON document lists every batch of each batch list
            (``--all-batches``), not the first ``BATCHES_LISTED``.
    """

    findings: tuple[Finding, ...]
    counts: dict[str, int]
    input: dict[str, Any]
    environment: dict[str, Any]
    contract: dict[str, Any]
    batches: dict[str, Any]
    sources: list[dict[str, Any]]
    classes: list[dict[str, Any]]
    notes: tuple[str, ...] = ()
    classes_omitted: dict[str, int] | None = None
    strict: bool = False
    diff: dict[str, Any] | None = None
    frameworks: tuple[dict[str, Any], ...] = ()
    cache: dict[str, Any] | None = None
    all_batches: bool = False

    @property
    def failed(self) -> bool:
        """Whether any finding fails the run (errors; warnings too under ``strict``)."""
        failing = {"error", "warning"} if self.strict else {"error"}
        return any(f.severity in failing for f in self.findings)

    @property
    def status(self) -> str:
        """``"fail"`` or ``"pass"``."""
        return "fail" if self.failed else "pass"

    @property
    def passed(self) -> bool:
        """Whether training may start: no finding fails the run."""
        return not self.failed

    def raise_for_errors(self) -> None:
        """Raise ``labelgate.LabelError`` naming the first failing findings, if any.

        Raises:
            LabelError: the run fails (``failed``); its message names up to three findings, each
                with its code, count and first offending row.
        """
        failing = {"error", "warning"} if self.strict else {"error"}
        bad = [f for f in self.findings if f.severity in failing]
        if not bad:
            return
        parts = []
        for f in bad[:3]:
            where = ""
            if f.examples:
                e = f.examples[0]
                where = (
                    f" (first: row {e.row}" + (f", id {e.id!r}" if e.id is not None else "") + ")"
                )
            parts.append(f"{f.code} {f.severity}, {f.count} {f.unit}: {f.message}{where}")
        more = f"; and {len(bad) - 3} more" if len(bad) > 3 else ""
        raise LabelError("labels fail validation: " + "; ".join(parts) + more)

    def to_json(self, *, indent: int | None = 2) -> str:
        """The JSON document of ``to_dict`` (docs/report.md)."""
        import json

        return json.dumps(self.to_dict(), indent=indent, default=json_default)

    def to_dict(self) -> dict[str, Any]:
        """The report as the versioned JSON document described in docs/report.md."""
        return (
            {
                "schema_version": SCHEMA_VERSION,
                "status": self.status,
                "strict": self.strict,
                "counts": dict(self.counts),
                "findings": [f.to_dict(all_batches=self.all_batches) for f in self.findings],
                "input": self.input,
                "environment": self.environment,
                "contract": self.contract,
                "batches": self.batch_table(),
                "sources": self.sources,
                "classes": self.classes,
            }
            | ({"classes_omitted": self.classes_omitted} if self.classes_omitted else {})
            | {"notes": list(self.notes)}
            | ({"diff": self.diff} if self.diff is not None else {})
            | ({"frameworks": list(self.frameworks)} if self.frameworks else {})
            | ({"cache": self.cache} if self.cache is not None else {})
        )

    def batch_table(self) -> dict[str, Any]:
        """``batches`` as the JSON document has it: ``failing`` trimmed to its first
        ``BATCHES_LISTED`` (unless ``all_batches``), ``failing_count`` how many fail in all."""
        if "failing" not in self.batches:
            return self.batches
        failing = self.batches["failing"]
        return self.batches | {
            "failing": listed(failing, self.all_batches),
            "failing_count": self.batches.get("failing_count", len(failing)),
        }


def listed(batches: Sequence[int], all_batches: bool = False) -> list[int]:
    """The batch indices a JSON list holds: the first ``BATCHES_LISTED``, or every one."""
    return list(batches if all_batches else batches[:BATCHES_LISTED])


def shown_batches(
    batches: Sequence[int], total: int | None = None, *, limit: int = 20, mark: str = ""
) -> str:
    """``#3, #7, #9 (and 12 more)``: the first ``limit`` batches, and how many more there are of
    ``total`` (default: the list's length) in all; empty for none."""
    total = len(batches) if total is None else total
    shown = ", ".join(f"{mark}{b}" for b in batches[:limit])
    more = total - min(limit, len(batches))
    return (shown + (f" (and {more} more)" if more > 0 else "")).strip()


def json_default(value: object) -> object:
    """What JSON writes for a value it has no type for: an integer of any kind (numpy's
    ``uint64`` included) as the number, however large (JSON sets no bound; docs/report.md says
    how a reader that parses numbers into doubles keeps it), a numpy float as the float, anything
    else as its text."""
    import operator

    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        pass
    if hasattr(value, "dtype") and hasattr(value, "item"):  # a numpy scalar: float, bool
        return value.item()
    return str(value)
