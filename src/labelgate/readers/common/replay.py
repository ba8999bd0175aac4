"""One range's findings added to a reader's facts as if met there: how a part read elsewhere (a
block of a COCO file, a shard read on a worker or taken from the cache) joins the whole."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from labelgate.core.annotations import AnnotationFacts, Hits
from labelgate.core.codes import Code
from labelgate.core.report import Example

__all__ = ["replay", "shifted"]


def shifted(example: Example, base: int) -> Example:
    """The example with its row moved by ``base`` (a row below 0 names no row: kept)."""
    return example if example.row < 0 or not base else replace(example, row=example.row + base)


def replay(
    facts: AnnotationFacts,
    code: Code,
    hits: Hits,
    base: int = 0,
    seen: set[tuple[Any, Any]] | None = None,
) -> None:
    """Add one range's hits of ``code`` to ``facts`` as if they had been met there, its rows
    moved by ``base``: messages in their order, the first examples up to the limit, the severity
    its task gave it, the records it counted (``seen``) remembered so that none is counted
    again."""
    for message in hits.message.split("; "):
        facts.hit(code, message=message, fix=hits.fix, unit=hits.unit, count=0)
    into = facts.hits[code]
    into.count += hits.count
    for example in hits.examples:
        if facts.limit is not None and len(into.examples) >= facts.limit:
            break
        into.examples.append(shifted(example, base))
    if hits.details and not into.details:
        into.details = dict(hits.details)
    if hits.severity is not None:  # the task made it an error there (instances.hit)
        into.severity = hits.severity
    if seen:
        facts.remember(code, seen)
