"""The label files ultralytics drops as corrupt, judged as its ``verify_image_label`` judges them
(``ultralytics/data/utils.py:476-490``, ultralytics 8.4.190): box rows hold 5 columns; a
coordinate above 1.01 (``points.max() <= 1.01``), or a value below 0 beyond -0.01 or with a negative
width or height (``lb_min >= 0 or (lb_min >= -0.01 and lb[:, 3:5].min() >= 0)``), fails an assert
and the image with all its boxes is ignored as corrupt, with a warning (lines 513-516). A NaN fails
the comparison, as in numpy. Class indices past ``nc`` are LG004's, worded by the framework.

Files of polygon rows (segments) are left to the YOLO reader: this judges box rows only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from labelgate.core.annotations import AnnotationFacts
from labelgate.core.findings import plural
from labelgate.core.report import Example
from labelgate.io.bounded import bounded_lines

__all__ = ["Dropped", "dropped_images", "flag_dropped"]

_NOT_LABELS = {"classes.txt", "obj.names", "train.txt", "valid.txt", "test.txt", "val.txt"}
_MAX_LINE = 1 << 20
CITED = "ultralytics/data/utils.py:480-482,513-516@ultralytics 8.4.190"


@dataclass(frozen=True, slots=True)
class Dropped:
    """An image ultralytics leaves out: its label file, the first failing line, why."""

    file: str
    line: int
    why: str


def _fails(values: list[float]) -> str | None:
    """Why verify_image_label refuses one box row (class cx cy w h), or ``None``."""
    points = values[1:]
    if not all(v <= 1.01 for v in points):  # NaN fails, as numpy's max() > 1.01 does
        return "a coordinate above 1.01"
    low = min(values)
    if not (low >= 0 or (low >= -0.01 and min(values[3:5]) >= 0)):
        return "a value below 0"
    return None


def dropped_images(root: Path) -> list[Dropped]:
    """The label files under ``root`` (as the YOLO reader finds them) that ultralytics drops."""
    files = sorted(p for p in root.rglob("*.txt") if p.name not in _NOT_LABELS and p.is_file())
    under_labels = [p for p in files if "labels" in p.relative_to(root).parts[:-1]]
    out: list[Dropped] = []
    for path in under_labels or files:
        rel = path.relative_to(root).as_posix()
        with path.open("rb") as f:
            for number, raw, _ in bounded_lines(f, _MAX_LINE):
                fields = raw.decode("utf-8", errors="replace").split()
                if len(fields) != 5:
                    continue  # empty, a segment or malformed: the reader's to judge
                try:
                    values = [float(v) for v in fields]
                except ValueError:
                    continue
                why = _fails(values)
                if why is not None:
                    out.append(Dropped(rel, number, why))
                    break
    return out


def flag_dropped(facts: AnnotationFacts, root: Path) -> list[str]:
    """Replace the reader's LG028 (boxes past [0, 1] beyond six decimals' printing) by the images
    ultralytics drops as corrupt, and say the boxes it keeps within its 1.01 tolerance; returns
    the label files of the images dropped (relative to ``root``)."""
    past = facts.hits.pop("LG028", None)
    dropped = dropped_images(root)
    kept = 0 if past is None else past.count
    for d in dropped:
        facts.hit(
            "LG028",
            Example(row=-1, id=f"{d.file}:{d.line}", source=d.file.split("/")[0]),
            message=f"{plural(len(dropped), 'image')} dropped as corrupt by ultralytics: a label file "
            "with "
            f"a coordinate above 1.01 or below 0 fails verify_image_label's assert, and the "
            f"image is ignored with all its boxes ({CITED})",
            fix="fix or clip the coordinates (normalised cx cy w h in [0, 1]); ultralytics "
            "prints 'ignoring corrupt image/label' once per image and trains without it",
            unit="images",
        )
    if past is not None and not dropped:
        past.message += (
            "; ultralytics keeps them: it refuses only values above 1.01 or below 0 "
            f"({CITED.split(',')[0]})"
        )
        facts.hits["LG028"] = past
    elif kept and dropped:
        facts.hits[
            "LG028"
        ].message += f"; the reader saw {plural(kept, 'box', 'boxes')} reach past [0, 1] in all"
    if dropped:
        facts.counts["images_dropped_by_ultralytics"] = len(dropped)
    return [d.file for d in dropped]
