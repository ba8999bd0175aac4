"""An input opened through its reader: the reader chosen, the rows it wrote into a folder the
caller owns, and what it found (facts, class map and where that map came from)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from labelgate.core.annotations import AnnotationFacts
from labelgate.readers.base import Read, ReadOptions
from labelgate.readers.common.sink import RowSink
from labelgate.readers.registry import Detected, choose

if TYPE_CHECKING:  # the image readers' types: their module loads with them
    from labelgate.readers.common.boxsizes import BoxSizes
    from labelgate.readers.common.imageindex import ImageIndex, ImageRows

__all__ = ["Opened", "open_input"]


@dataclass(frozen=True, slots=True)
class Opened:
    """An input read by its reader.

    Attributes:
        detected: the reader and why it was chosen.
        paths: what the scan reads: rows the reader wrote, or the user's own files.
        inputs: the paths the user gave.
        facts: what the reader found (``None`` for a label table, which has no format rules).
        read: the class map the format carries and where it came from.
        images: the images a reader listed (detection: each box's image; masks: each mask's
            image), and for detection the image of each row (``None``: batches of rows).
        origins: each file of ``paths`` the reader wrote -> the user's file its rows came from,
            where the reader says (``RowSink.origins``).
        sizes: the boxes' sizes per class (detection; ``None`` otherwise).
    """

    detected: Detected
    paths: list[str]
    inputs: list[str]
    facts: AnnotationFacts | None
    read: Read
    images: tuple[ImageIndex, ImageRows | None] | None = None
    origins: Mapping[str, str] = field(default_factory=dict)
    sizes: BoxSizes | None = None

    @property
    def format(self) -> str:
        """The reader's name."""
        return self.detected.reader.name

    @property
    def converted(self) -> bool:
        """Whether the scan reads rows the reader wrote, not the user's files."""
        return self.paths != self.inputs


def open_input(paths: list[str], input_format: str, folder: Path, options: ReadOptions) -> Opened:
    """Choose the reader of ``paths`` and read them into ``folder`` (which the caller owns and
    removes).

    Raises:
        UsageError: the format named is unknown or does not fit the paths.
        InputError: the input cannot be read as its format.
    """
    detected = choose(paths, input_format, options.task)
    reader = detected.reader
    if options.source_field is not None and reader.name != "coco":
        from labelgate.errors import UsageError

        rest = (
            "a table: --source-column names its source column"
            if reader.can("table")
            else f"read as {reader.name}: drop --source-field"
        )
        raise UsageError(
            f"--source-field applies to COCO inputs (a field of each image), and this input is {rest}"
        )
    if reader.can("table"):
        return Opened(detected, list(paths), list(paths), None, Read())
    facts = AnnotationFacts(
        format=reader.name,
        why=detected.why,
        task=reader.task or "classification",
        limit=options.limit,
        background=options.background,
    )
    sink = RowSink(folder)
    try:
        read = reader.read([Path(p) for p in paths], sink, facts, options)
    finally:
        sink.close()
    facts.rejected_by.update(sink.rejected())
    rows = sink.image_rows() if facts.task == "detection" else None
    images = (sink.images, rows) if rows is not None or sink.images.records else None
    sizes = sink.box_sizes() if facts.task == "detection" else None
    return Opened(detected, sink.paths, list(paths), facts, read, images, dict(sink.origins), sizes)
