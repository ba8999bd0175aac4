"""A folder walk that follows links, as torchvision's ImageFolder does, yet ends: each folder is
walked once (by device and inode), a link back to a folder on the way down (``up -> ..``,
``self -> .``) is counted instead of followed, and only regular files are listed (a FIFO named
``b.png`` is never handed to a reader)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["walk_files"]


def _key(path: str | Path) -> tuple[int, int]:
    st = Path(path).stat()
    return st.st_dev, st.st_ino


def walk_files(top: Path) -> tuple[list[Path], int]:
    """The regular files under ``top`` in sorted order, links followed, and how many links lead
    back to a folder already on the way (a loop that ``os.walk(followlinks=True)`` never ends).

    A folder unreadable on the way is skipped, as ``os.walk`` skips it.
    """
    real = Path(os.path.realpath(top))
    try:
        seen = {_key(p) for p in (real, *real.parents)}
    except OSError:
        return [], 0
    files: list[Path] = []
    loops = 0
    stack = [top]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir():  # a link to a folder included
                    key = _key(entry.path)
                    if key in seen:
                        loops += 1
                        continue
                    seen.add(key)
                    stack.append(Path(entry.path))
                elif entry.is_file():  # regular, or a link to a regular file
                    files.append(Path(entry.path))
            except OSError:  # a dangling link, a vanished entry
                continue
    return sorted(files), loops
