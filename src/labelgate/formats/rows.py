"""Writing a reader's rows to Parquet as they come, a bounded number at a time; and the box rules."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from labelgate.annotations import AnnotationFacts
from labelgate.report import Example

if TYPE_CHECKING:
    pass

__all__ = ["RowWriter", "check_background", "check_box", "in_int64"]

_BATCH = 65_536


def in_int64(value: int) -> bool:
    """Whether an integer read from an annotation fits the int64 columns rows are written in
    (YOLO and COCO give Python integers of any size; 2**63 is no class id a loader can hold)."""
    return -(2**63) <= value < 2**63


class RowWriter:
    """Rows of (id, label, source, name) appended one by one, written in batches of 65,536."""

    def __init__(self, path: Path, *, id_type: str = "string", names: bool = False) -> None:
        import pyarrow as pa

        self.path = path
        fields = [
            ("id", pa.int64() if id_type == "int" else pa.string()),
            ("label", pa.int64()),
            ("source", pa.string()),
        ]
        self.schema = pa.schema(fields + ([("name", pa.string())] if names else []))
        self._cols: dict[str, list[Any]] = {n: [] for n in self.schema.names}
        self._writer: Any = None
        self.rows = 0

    def add(self, ident: Any, label: int | None, source: str | None, name: str | None) -> None:
        c = self._cols
        c["id"].append(ident)
        c["label"].append(label)
        c["source"].append(source)
        if "name" in c:
            c["name"].append(name)
        self.rows += 1
        if len(c["id"]) >= _BATCH:
            self._flush()

    def _flush(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if self._writer is None:
            self._writer = pq.ParquetWriter(self.path, self.schema, compression="zstd")
        table = pa.table(self._cols, schema=self.schema)
        self._writer.write_table(table)
        self._cols = {n: [] for n in self.schema.names}

    def close(self) -> None:
        """Write what is left (an empty file with the schema when no row came)."""
        self._flush()
        self._writer.close()


def check_box(
    facts: AnnotationFacts,
    box: tuple[float, float, float, float],
    size: tuple[float, float] | None,
    example: Example,
    *,
    normalised: bool = False,
) -> None:
    """Count a box (x0, y0, x1, y1) that torchvision's detection models refuse or mislearn:
    without area by torchvision's own comparison (LG027: exactly the boxes it raises on), not
    finite (LG029), outside its image or, ``normalised``, outside [0, 1] (LG028)."""
    x0, y0, x1, y1 = box
    if x1 <= x0 or y1 <= y0:  # torchvision's own test: a NaN coordinate passes it
        facts.hit(
            "LG027",
            example,
            message="boxes with zero or negative width or height",
            fix=(
                "drop or redraw them: torchvision's detection models raise 'All bounding boxes "
                "should have positive height and width' on the first batch holding one"
            ),
        )
    if not all(math.isfinite(v) for v in box):
        facts.hit(
            "LG029",
            example,
            message="box coordinates that are NaN or infinite",
            fix="drop or redraw these boxes: one non-finite coordinate makes the box loss NaN",
        )
        return
    w, h = (1.0, 1.0) if normalised else (size if size is not None else (math.inf, math.inf))
    if x0 < 0 or y0 < 0 or x1 > w or y1 > h:
        where = "outside [0, 1]" if normalised else "past their image's edges"
        facts.hit(
            "LG028",
            example,
            message=f"boxes reaching {where}",
            fix="clip them to the image, or check the coordinate convention (pixels, normalised, "
            "xywh or xyxy) of the tool that wrote them",
        )


def check_background(
    facts: AnnotationFacts, label: int, background: int | None, example: Example
) -> None:
    """Count an object labelled with the detection background index (LG032)."""
    if background is None or label != background:
        return
    facts.hit(
        "LG032",
        example,
        message=f"objects labelled {background}, the background index",
        fix=(
            "torchvision's detection models reserve the background index "
            "(FasterRCNN(num_classes=K+1), 0 the background): map the object classes to 1..K "
            "where the targets are built"
        ),
    )
