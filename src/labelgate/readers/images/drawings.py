"""The drawings of a report's examples placed on their images: each flagged annotation's image
file (as written) and the images folder it resolves in, found as the image checks find them
(``imagecheck.images_folder``); a mask input's examples drawn as their mask files."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from labelgate.core.drawing import Drawing
from labelgate.core.report import Example
from labelgate.readers.common.imageindex import ImageIndex, ImageRows
from labelgate.readers.images.imagecheck import images_folder

__all__ = ["Placer"]


class Placer:
    """Places the examples of one input: its format, its images (index and each row's image),
    the ``--images`` folder given, and the paths read (a mask folder is its masks' root)."""

    def __init__(
        self,
        fmt: str,
        images: tuple[ImageIndex, ImageRows | None] | None,
        given: str | None,
        inputs: Sequence[str],
    ) -> None:
        self.fmt = fmt
        self.images = images
        self.given = given
        first = Path(inputs[0]) if inputs else None
        self.masks = None if first is None else str(first if first.is_dir() else first.parent)
        self._roots: dict[Path | None, str | None] = {}

    def place(self, e: Example) -> Example:
        """``e`` with its drawing's image and images folder (unchanged where it has no
        drawing, or its row names no listed image)."""
        d = e.drawing
        if d is None and self.fmt == "masks" and e.row >= 0 and isinstance(e.id, str):
            d = Drawing("mask", image=e.id)  # a row-level finding of a mask (LG004, LG036...)
        if d is None or d.root is not None:
            return e
        if d.kind == "mask":
            return replace(e, drawing=replace(d, root=self.masks))
        if self.images is None or e.row < 0:
            return e
        index, rows = self.images
        if rows is None or e.row >= len(rows.image):
            return e
        record = index.record_at(int(rows.image[e.row]))
        if record is None or record.file is None:
            return e
        if record.origin not in self._roots:
            folder = images_folder(self.fmt, record.origin, index.records, self.given)
            self._roots[record.origin] = None if folder is None else str(folder)
        size = d.size if d.size is not None else record.size
        placed = replace(
            d, image=record.file, root=self._roots[record.origin], stem=record.stem, size=size
        )
        return replace(e, drawing=placed)
