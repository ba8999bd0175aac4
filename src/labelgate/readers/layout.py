"""Looking into a folder for what a format's detection needs, a bounded number of entries at a time."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

__all__ = ["SCANNED", "any_file"]

SCANNED = 10_000  # entries a detection looks at before it answers


def any_file(root: Path, pattern: str, keep: Callable[[Path], bool], *, past: bool = False) -> bool:
    """Whether a regular file matching ``pattern`` under ``root`` passes ``keep``; after
    ``SCANNED`` entries the answer is ``past`` (a huge folder is not walked to its end)."""
    for seen, path in enumerate(root.rglob(pattern)):
        if seen > SCANNED:
            return past
        if keep(path) and path.is_file():
            return True
    return False
