"""An example made to carry the drawing of its annotation (``core.drawing``): finite points only,
at most ``MAX_POINTS`` of them, for the HTML report's pictures."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import replace

from labelgate.core.annotations import AnnotationFacts
from labelgate.core.drawing import MAX_POINTS, Drawing
from labelgate.core.report import Example

__all__ = ["drawn", "marked", "redrawn"]


def marked(facts: AnnotationFacts) -> dict[str, int]:
    """How many examples each check of ``facts`` keeps, before a record is judged."""
    return {code: len(h.examples) for code, h in facts.hits.items()}


def redrawn(
    facts: AnnotationFacts,
    marks: dict[str, int],
    example: Example,
    make: Callable[[Example], Example],
) -> None:
    """The examples kept since ``marks`` that are ``example`` (or ``example`` naming one of its
    points by ``position``: a keypoint) replaced by ``make(kept)`` (its drawing): a record's
    drawing is made only where one of its checks flags it."""
    for code, h in facts.hits.items():
        for i in range(marks.get(code, 0), len(h.examples)):
            kept = h.examples[i]
            if kept is example or (
                kept.position is not None and replace(kept, position=None) == example
            ):
                h.examples[i] = make(kept)


def _points(points: Iterable[tuple[float, float]]) -> tuple[tuple[float, float], ...]:
    out: list[tuple[float, float]] = []
    for x, y in points:
        if len(out) == MAX_POINTS:
            break
        numbers = isinstance(x, (int, float)) and isinstance(y, (int, float))
        if numbers and math.isfinite(x) and math.isfinite(y):
            out.append((round(float(x), 2), round(float(y), 2)))
    return tuple(out)


def drawn(
    example: Example,
    kind: str,
    points: Iterable[tuple[float, float]],
    size: tuple[float, float] | None = None,
    *,
    relative: bool = False,
) -> Example:
    """``example`` carrying the drawing of its annotation (finite points only, at most
    ``MAX_POINTS``); an example that has one already keeps it."""
    if example.drawing is not None:
        return example
    kept = None if size is None else (float(size[0]), float(size[1]))
    return replace(example, drawing=Drawing(kind, _points(points), kept, relative))
