"""What the HTML report needs to draw a flagged annotation: its shape, the frame its coordinates
are in, and the image (as written) it lies on. Never the image's content."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["KINDS", "MAX_POINTS", "Drawing"]

KINDS = ("box", "polygon", "keypoints", "mask")
MAX_POINTS = 64  # vertices or keypoints kept per drawing: a picture, not the annotation


@dataclass(frozen=True, slots=True)
class Drawing:
    """One annotation as a picture would draw it.

    Attributes:
        kind: ``box`` (``points``: two corners), ``polygon`` (its vertices), ``keypoints`` (the
            labelled ones) or ``mask`` (``image`` is the mask file; no points).
        points: (x, y) in the frame of ``size``, at most ``MAX_POINTS``, rounded to 0.01.
        size: the frame the coordinates are in: the image's recorded (width, height) in pixels,
            ``(1, 1)`` for YOLO's normalised coordinates, ``(100, 100)`` for Label Studio's
            percentages; ``None`` where not known.
        relative: whether ``points`` scale with the image as loaded (normalised, percent).
        image: the image's file name as the annotation writes it (relative to ``root``).
        root: the images folder the run resolved ``image`` in (``None``: none found).
        stem: whether ``image`` lacks its suffix (YOLO: any image suffix).
    """

    kind: str
    points: tuple[tuple[float, float], ...] = ()
    size: tuple[float, float] | None = None
    relative: bool = False
    image: str | None = None
    root: str | None = None
    stem: bool = False

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, not {self.kind!r}")

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON (``examples[].drawing``, docs/report.md)."""
        return {
            "kind": self.kind,
            "points": [list(p) for p in self.points],
            "size": None if self.size is None else list(self.size),
            "relative": self.relative,
            "image": self.image,
        }
