"""What an annotation-format reader found besides the rows: the format and why, and the records that
break the format's own rules (by file and line, or by annotation id), for the checks to report."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from labelgate.core.codes import READER_CODES, Code
from labelgate.core.report import Example

__all__ = ["REJECTED", "AnnotationFacts", "Hits"]

# The count (in ``AnnotationFacts.counts``) of the rows a reader wrote without a class index: an
# annotation read that cannot be trained on (its label undeclared, empty, not an integer) is a
# row all the same, its label null, so that rows = usable + ignored + rejected holds and the
# scan counts it rejected in its source and batch; the reader's own finding names it.
REJECTED = "rejected_by_reader"

_SEEN = 100_000  # records remembered per code, to count each once


@dataclass(slots=True)
class Hits:
    """Records failing one check: how many, the first few, and what the finding should say.

    Attributes:
        count: records (rows, boxes, folders) concerned.
        examples: the first ones, named by file and line or by annotation id.
        message: what was found (the reader knows the format's words for it); each different
            message of the same check is kept (at most five) and shown in turn.
        fix: what to do, in words.
        unit: what ``count`` counts.
        details: further evidence as plain data.
        severity: the finding's severity where the reader's task decides it (``None``: the
            catalog's), e.g. a malformed mask is an error only for ``--task instance``.
    """

    count: int = 0
    examples: list[Example] = field(default_factory=list)
    message: str = ""
    fix: str = ""
    unit: str = "rows"
    details: dict[str, Any] = field(default_factory=dict)
    severity: str | None = None


@dataclass(slots=True)
class AnnotationFacts:
    """A reader's account of one annotation input.

    Attributes:
        format: ``coco``, ``yolo``, ``voc``, ``imagefolder`` or ``hf``.
        why: how the format was recognised (or that ``--input-format`` named it).
        task: ``classification`` or ``detection``.
        hits: check code -> the records failing it.
        counts: what was read (images, annotations, files, empty label files...), for the report.
        limit: examples kept per check (``None``: all).
        background: the detection background index, which no object should carry.
        notes: what the reader left out or chose, in words, for the report's notes (files
            skipped, cancelled annotations, where a class map came from).
        refused: rows written without a label on purpose (row -> the label as written): an
            annotation no framework can train on, named by its own finding (LG030), so counted
            rejected without being LG003's null labels.
        rejected_by: each rejected row (its position in the rows read) -> the code of the
            finding that names it, for fix's quarantine.
        rejected_classes: class index -> rows of that class rejected by the reader (objects
            without a numeric box) or after the reading (boxes without area, boxes of an image
            the framework drops): counted in their class.
        written: class index -> the category id as written, where a reading renumbered the
            ids (a finding's examples then show the id the user wrote).
        empty: what an input holding no annotation holds instead, in words ("no annotation in
            2 tasks"), for LG008 (or the error when no class map gives K either).
    """

    format: str
    why: str
    task: str = "classification"
    hits: dict[Code, Hits] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    limit: int | None = 20
    background: int | None = None
    notes: list[str] = field(default_factory=list)
    refused: dict[int, Any] = field(default_factory=dict)
    rejected_classes: dict[int, int] = field(default_factory=dict)
    rejected_by: dict[int, str] = field(default_factory=dict)
    written: dict[int, int] = field(default_factory=dict)
    empty: str = ""
    seen: dict[str, set[tuple[Any, Any]]] = field(default_factory=dict, repr=False, compare=False)

    def hit(
        self,
        code: Code,
        example: Example | None = None,
        *,
        message: str,
        fix: str,
        unit: str = "rows",
        count: int = 1,
    ) -> Hits:
        """Count ``count`` records failing ``code`` (the first fix stands; up to five different
        messages are kept, joined). A record is counted once per code: a COCO annotation whose
        box and polygon both pass its image's edge is one row of LG028 (records are told apart
        by id and source, for the first ``_SEEN`` of each code).

        Raises:
            ValueError: ``code`` is not one the catalog says readers raise (it would be dropped).
        """
        if code not in READER_CODES:
            raise ValueError(f"{code!r} is not a reader's code in the catalog")
        h = self.hits.get(code)
        if h is None:
            h = self.hits[code] = Hits(message=message, fix=fix, unit=unit)
            self.seen.pop(code, None)  # a finding taken away and started again counts anew
        elif message not in h.message.split("; ") and h.message.count("; ") < 4:
            h.message += "; " + message
        if count == 1 and example is not None and type(example.id) in (int, str):
            seen = self.seen.setdefault(code, set())
            record = (example.id, example.source)
            if record in seen:
                return h  # the record is counted already; its new message is kept above
            if len(seen) < _SEEN:
                seen.add(record)
        h.count += count
        if example is not None and (self.limit is None or len(h.examples) < self.limit):
            h.examples.append(example)
        return h

    def remember(self, code: Code, records: Iterable[tuple[Any, Any]]) -> None:
        """Remember ``records`` as counted under ``code`` (another share's, merged), up to the
        ``_SEEN`` a code remembers."""
        seen = self.seen.setdefault(code, set())
        seen.update(islice(records, max(0, _SEEN - len(seen))))

    def refuse(self, rows: Mapping[int, Any], code: str) -> None:
        """Rows written without a label on purpose after the read (row -> the label as
        written), each named by finding ``code``."""
        self.refused.update(rows)
        self.rejected_by.update((row, code) for row in rows)

    @property
    def rejected(self) -> int:
        """Rows written with a null label on purpose (by the reader, or by a framework's
        reading: ``refused``), each named by one of its findings."""
        return self.counts.get(REJECTED, 0) + len(self.refused)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the report's input section."""
        return {"format": self.format, "detected_because": self.why, "task": self.task} | {
            "read": dict(self.counts)
        }
